#!/usr/bin/env bash
# Row 10, study.matched's fan-out (issue 36, design.md §7.5), run by
# tools/bench.sh under make bench.
#
# BENCH_FANOUT_AGENTS (default 30,000) claimed agents whose bio vector is the
# template agent's (arps-fixture seed-matchable: every one scores about 0.9
# on the studies below, the worst case; reputations 85, 60, 40 in turn), then
# BENCH_FANOUT_STUDIES (default 8) studies with the template's bio as criteria
# published at once while wrk reads GET /api/v1/health (BENCH_FANOUT_CONN
# connections, 2 ms think time each); the same wrk run right before is the
# baseline.  Checks: /health's p99 during under 50 ms, and at most
# studies x matched_fanout study.matched written or waiting (study_matches).
#
#   BENCH_FANOUT_AGENTS   claimed agents seeded (default 30000)
#   BENCH_FANOUT_STUDIES  studies published at once (default 8)
#   BENCH_FANOUT_CONN     wrk connections (default 4)
#   BENCH_SECONDS         length of the baseline wrk run (default 10)
#   BENCH_FANOUT_SECONDS  length of the wrk run the studies are published in
#                         (default 60: embedding and matching them all, at nice 10
#                         under the load, fits in it)
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
. tools/bench-lib.sh

NA=${BENCH_FANOUT_AGENTS:-30000}
NS=${BENCH_FANOUT_STUDIES:-8}
CONN=${BENCH_FANOUT_CONN:-4}
DUR=${BENCH_SECONDS:-10}
DURING=${BENCH_FANOUT_SECONDS:-60}
FAN=$(sed -n 's/^matched_fanout *= *//p' "$ARPS_CONFIG" | head -1)
FAN=${FAN:-200}
BIO="I am an assistant that repairs vintage mechanical wristwatches, collects old Swiss movements and answers questions about clockmaking tools."
FAIL=0
WRK=""
trap '[ -n "$WRK" ] && kill "$WRK" 2>/dev/null; true' EXIT
bench_tools

echo "== study.matched: $NS studies published at once over $NA matching agents (matched_fanout $FAN) =="
register bench-fanout-agent 127.0.0.7
KEY=$AGENT_KEY AGENT=$AGENT_ID CLAIM=$AGENT_CLAIM
login bench-fanout-owner
api POST /api/v1/auth/claim "{\"claim_code\":\"$CLAIM\"}" "Authorization: Bearer $TOKEN" >/dev/null
api POST /api/v1/profile/bio "{\"bio\":\"$BIO\"}" "X-API-Key: $KEY" >/dev/null
wait_embeddings "$AGENT"
t0=$(date +%s.%N)
fixture seed-matchable fanout "$NA" "$AGENT"
t1=$(date +%s.%N)
printf '  seeded %d claimed agents with ready bio vectors in %.1f s\n' "$NA" \
    "$(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }')"
login bench-fanout-res
admin topup "$ACC_ID" $(( NS * 10 * 2 )) >/dev/null
# arps-embed's index takes the seeded rows in before the measured runs
# (a study published now makes it look).
W0=$(create_study "$TOKEN" 1 1 "$BIO")
wait_embeddings "$W0"

URL=$ARPS_BASE_URL/api/v1/health
LUA=$BENCH_DIR/fanout-pace.lua
printf 'function delay() return 2 end\n' >"$LUA"
row() {	# row LABEL FILE
    wrk_parse "$2"
    printf '  %-34s %7.0f req/s  p50 %6.2f ms  p90 %6.2f ms  p99 %7.2f ms  %7d requests, non-2xx %d, socket errors %d\n' \
        "$1" "$W_RPS" "$W_P50" "$W_P90" "$W_P99" "$W_REQ" "$W_NON2XX" "$W_SOCKERR"
    if [ "$W_NON2XX" -ne 0 ] || [ "$W_SOCKERR" -ne 0 ]; then
        echo "  FAIL  the load saw non-2xx answers or socket errors"; FAIL=1
    fi
}
echo "  API load: GET /api/v1/health, $CONN connections, 2 ms think time each, ${DUR} s before, ${DURING} s with the studies"
wrk_cmd "$BENCH_DIR/fanout-before.txt" "$CONN" "$DUR" "$URL" "" "$LUA"
row "without publications" "$BENCH_DIR/fanout-before.txt"
result fanout_before_p99 "$W_P99"

wrk_argv "$CONN" "$DURING" "$URL" "" "$LUA"
"${WRK_ARGV[@]}" >"$BENCH_DIR/fanout-during.txt" 2>&1 &
WRK=$!
sleep 1
p0=$(date +%s.%N)
# at once: one curl each, each its own answer file (api() shares one)
BODY=$(jq -cn --arg c "$BIO" '{title: "Benchmark study", description: "A study created by make bench.",
    study_url: "https://survey.example.org/b", reward_per_participant: 1, max_participants: 1,
    screening_criteria: $c, estimated_duration_minutes: 10}')
PUB=()
for i in $(seq 1 "$NS"); do
    curl -sS --max-time 10 -o "$BENCH_DIR/fanout-study-$i" -H 'Content-Type: application/json' \
        -H "Authorization: Bearer $TOKEN" --data-binary "$BODY" "$ARPS_BASE_URL/api/v1/studies" &
    PUB+=($!)
done
wait "${PUB[@]}"
IDS=()
for i in $(seq 1 "$NS"); do IDS+=("$(jq -r .id "$BENCH_DIR/fanout-study-$i")"); done
[ "$(printf '%s\n' "${IDS[@]}" | sort -u | grep -c '^std_')" -eq "$NS" ] || die "not $NS studies published"
IN=$(printf "'%s'," "${IDS[@]}")
for i in $(seq 1 2400); do	# arps-embed runs at nice 10 under the load: 120 s at most
    [ "$(sqlq "SELECT COUNT(*) FROM embeddings WHERE status = 'ready' AND subject_id IN (${IN%,})")" -eq "$NS" ] && break
    sleep 0.05
done
p1=$(date +%s.%N)
wait "$WRK" || true
WRK=""
row "while $NS studies are published" "$BENCH_DIR/fanout-during.txt"
P99=$W_P99
EV=$(sqlq "SELECT COUNT(*) FROM events WHERE type = 'study.matched' AND JSON_VALUE(data, '$.study_id') IN (${IN%,})")
WAITING=$(sqlq "SELECT COUNT(*) FROM study_matches WHERE study_id IN (${IN%,})")
SECS=$(awk -v a="$p0" -v b="$p1" 'BEGIN { printf "%.2f", b - a }')
MAXEV=$(( NS * FAN ))
[ "$(sqlq "SELECT COUNT(*) FROM embeddings WHERE status = 'ready' AND subject_id IN (${IN%,})")" -eq "$NS" ] ||
    { echo "  FAIL  the studies' criteria not embedded within the run"; FAIL=1; }
grep 'study.matched:' "$ARPS_VAR/log/embed.log" | tail -n "$NS" | sed 's/^/  arps-embed: /'
printf '  %d studies published and matched in %s s: %d study.matched written at once (priority), %d waiting for first access; at most %d allowed\n' \
    "$NS" "$SECS" "$EV" "$WAITING" "$MAXEV"
result fanout_agents "$NA"; result fanout_studies "$NS"; result fanout_n "$FAN"
result fanout_during_p99 "$P99"; result fanout_events "$EV"; result fanout_waiting "$WAITING"
result fanout_secs "$SECS"
if awk -v p="$P99" 'BEGIN { exit !(p < 50) }'; then
    echo "  ok    /health p99 $P99 ms < 50 ms"
else
    echo "  FAIL  /health p99 $P99 ms >= 50 ms"; FAIL=1
fi
if [ $(( EV + WAITING )) -le "$MAXEV" ]; then
    echo "  ok    $(( EV + WAITING )) matches <= $NS x $FAN"
else
    echo "  FAIL  $(( EV + WAITING )) matches > $NS x $FAN"; FAIL=1
fi
exit $FAIL
