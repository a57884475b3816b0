#!/usr/bin/env bash
# The webhook delivery benchmark (run by tools/bench.sh under make bench).
#
# A claimed agent with one webhook aimed at nginx's static answer on this
# stack (loopback, allowed by the dev config's webhooks_allow_loopback) gets
# BENCH_EVENTS_N wallet.credited events (arps-admin topup, run 4 at a time)
# while the stack's own arps-deliver is stopped, so that they queue; then an
# arps-deliver starts and the time until every delivery is recorded as
# delivered gives the delivery rate (target: 1,000 deliveries/s).
#
#   BENCH_EVENTS_N        events to deliver (default 2000)
#   BENCH_EVENTS_TIMEOUT  seconds arps-deliver may take (default 120)
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
. tools/bench-lib.sh

N=${BENCH_EVENTS_N:-2000}
LIMIT=${BENCH_EVENTS_TIMEOUT:-120}
PORT=$(sed -n 's/.*127\.0\.0\.1:\([0-9]*\).*/\1/p' <<<"$ARPS_BASE_URL")

echo "== webhook delivery: $N events to a local receiver =="
register bench-hooked 127.0.0.3
key=$AGENT_KEY agent=$AGENT_ID
hook=$(api POST /api/v1/webhooks "{\"url\":\"http://127.0.0.1:$PORT/bench/static\",\"events\":[\"wallet.credited\"]}" \
    "X-API-Key: $key" | jq -r .id)
tools/dev.sh deliver-stop	# the backlog queues; the run below delivers it
t0=$(date +%s.%N)
seq 1 "$N" | xargs -P 4 -I{} build/arps-admin --config "$ARPS_CONFIG" topup "$agent" 1 >/dev/null
t1=$(date +%s.%N)
Q="SELECT COUNT(*) FROM webhook_deliveries WHERE webhook_id = '$hook'"
queued=$(sqlq "$Q")
WPS=$(awk -v n="$N" -v a="$t0" -v b="$t1" 'BEGIN { printf "%.0f", n / (b - a) }')
printf '  %d events written (one arps-admin process each) in %.1f s = %s events/s; %d deliveries queued\n' \
    "$N" "$(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }')" "$WPS" "$queued"
result events_topup_per_s "$WPS"
build/arps-deliver --config "$ARPS_CONFIG" 2>>"$ARPS_VAR/log/deliver-bench.log" &
pid=$!
t0=$(date +%s.%N)
done_n=0
while :; do
    done_n=$(sqlq "$Q AND state = 'delivered'")
    [ "$done_n" -ge "$N" ] && break
    if awk -v a="$t0" -v b="$(date +%s.%N)" -v l="$LIMIT" 'BEGIN { exit !(b - a > l) }'; then
        break
    fi
    sleep 0.05
done
t1=$(date +%s.%N)
kill "$pid" 2>/dev/null || true
wait "$pid" 2>/dev/null || true
tools/dev.sh deliver-start	# the stack's own deliverer again
SECS=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }')
DPS=$(awk -v n="$done_n" -v s="$SECS" 'BEGIN { printf "%.0f", n / s }')
failed=$(sqlq "$Q AND state <> 'delivered'")
printf '  arps-deliver: %d of %d delivered in %s s = %s deliveries/s (target 1000); %d not delivered\n' \
    "$done_n" "$N" "$SECS" "$DPS" "$failed"
result events_deliveries "$done_n"; result events_delivery_secs "$SECS"; result events_delivery_per_s "$DPS"
[ "$done_n" -ge "$N" ] || die "only $done_n of $N deliveries made in $LIMIT s"
