#!/usr/bin/env bash
# The sweep backlog benchmark (run by tools/bench.sh under make bench).
#
# Seeds BENCH_SWEEP_N (default 100,000) due participations: BENCH_SWEEP_STUDIES
# studies (default 10) created and funded through the API (reward 1 cent), then
# claimed agents, wallets and participations seeded by the fixture layer
# (arps-fixture seed-participations, as tests/api/test_sweep.c does), odd
# rows accepted 25 h ago (timeout path), even rows submitted 49 h ago
# (auto-approval path).  Then runs build/arps-sweep
# while wrk keeps GET /api/v1/agents/me going, and reports the sweep's time,
# rows/s and the API latency during the sweep against the same load before it.
# A second agent's POST /studies/{id}/accept on the first study swept, sent 2 s
# into the sweep, shows how long a write waits behind the sweep's batch.
# The sweep may take BENCH_SWEEP_TIMEOUT seconds; past them it is stopped and
# the backlog reported as not cleared (and the benchmark fails).
# Afterwards: every row moved exactly once, a second sweep moves nothing,
# arps-admin verify-ledger exits 0.  Exits non-zero when a check fails.
#
#   BENCH_SWEEP_N         rows to seed (default 100000; e.g. 2000 for a quick run)
#   BENCH_SWEEP_STUDIES   studies to spread them over (default 10, <= 10,000 rows each)
#   BENCH_SWEEP_BATCH     arps-sweep --batch (default: the sweep's own, 200)
#   BENCH_SWEEP_ROWS      1: arps-sweep --rows (row by row, the path before set-based batches)
#   BENCH_SWEEP_CONN      wrk connections for the API load (default 8)
#   BENCH_SWEEP_DELAY_MS  think time per connection between requests (default 2;
#                         0 = closed loop, as fast as the server answers)
#   BENCH_SWEEP_TIMEOUT   seconds the sweep may take before it is stopped (default 300)
#   BENCH_SECONDS         length of the "before" API run (default 10)
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
. tools/bench-lib.sh

N=${BENCH_SWEEP_N:-100000}
NS=${BENCH_SWEEP_STUDIES:-10}
CONN=${BENCH_SWEEP_CONN:-8}
DELAY=${BENCH_SWEEP_DELAY_MS:-2}
LIMIT=${BENCH_SWEEP_TIMEOUT:-300}
DUR=${BENCH_SECONDS:-10}
BATCH=${BENCH_SWEEP_BATCH:-}
ROWS=${BENCH_SWEEP_ROWS:-0}
[ "$N" -ge "$NS" ] && [ "$NS" -ge 1 ] || die "BENCH_SWEEP_N must be >= BENCH_SWEEP_STUDIES >= 1"
PER=$(( (N + NS - 1) / NS ))
[ "$PER" -le 10000 ] || die "at most 10,000 rows per study: raise BENCH_SWEEP_STUDIES"
FAIL=0
WRK="" PROBE_AGENT=none
trap '[ -n "$WRK" ] && kill "$WRK" 2>/dev/null; true' EXIT
check() {	# check DESCRIPTION GOT WANT
    if [ "$2" = "$3" ]; then
        printf '  ok    %-52s %s\n' "$1" "$2"
    else
        printf '  FAIL  %-52s got %s, want %s\n' "$1" "$2" "$3"
        FAIL=1
    fi
}

echo "== sweep backlog: $N due participations over $NS studies =="
t0=$(date +%s.%N)
# A researcher funds NS studies of reward 1 cent (slot 1 + fee 1 = 2 cents).
login bench-sweep-res
admin topup "$ACC_ID" $(( 2 * PER * NS )) >/dev/null
STUDIES=()
for i in $(seq 1 "$NS"); do
    STUDIES+=("$(create_study "$TOKEN" 1 "$PER" "Agents that answer surveys about developer tools")")
done
IDS=$(printf "'%s'," "${STUDIES[@]}"); IDS=${IDS%,}
left=$N
for i in $(seq 0 $((NS - 1))); do
    n=$(( left < PER ? left : PER )); left=$((left - n))
    tag=$(printf 'b%05x' "$i")	# agt_s + 6 chars + 9 digits, as tests/api/test_sweep.c
    # claimed agents of the researcher with wallets, occupied slots raised
    fixture seed-participations "${STUDIES[$i]}" "$tag" "$n" $((25 * 3600)) $((49 * 3600))
done
admin verify-ledger >/dev/null || die "verify-ledger fails after seeding"
ACC=$(sqlq "SELECT COUNT(*) FROM participations WHERE study_id IN ($IDS) AND status = 'accepted'")
SUB=$(sqlq "SELECT COUNT(*) FROM participations WHERE study_id IN ($IDS) AND status = 'submitted'")
printf 'seeded in %.1f s: %d accepted 25 h ago (timeouts), %d submitted 49 h ago (auto-approvals)\n' \
    "$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { print b - a }')" "$ACC" "$SUB"
[ $((ACC + SUB)) -eq "$N" ] || die "seeded $((ACC + SUB)) rows, not $N"

# The API load: one claimed agent reading itself.
register bench-sweep-agent 127.0.0.3
HDR="X-API-Key: $AGENT_KEY"
URL=$ARPS_BASE_URL/api/v1/agents/me
LUA=$BENCH_DIR/pace.lua
printf 'local d = %d\nif d > 0 then function delay() return d end end\n' "$DELAY" >"$LUA"
if [ "$DELAY" -gt 0 ]; then LOAD="$CONN connections, ${DELAY} ms think time each"; else LOAD="$CONN connections, closed loop"; fi
[ "$(curl -s -o /dev/null -w '%{http_code}' -H "$HDR" "$URL")" = 200 ] || die "GET /agents/me is not 200"

row() {	# row LABEL FILE
    wrk_parse "$2"
    printf '  %-22s %9.0f req/s  p50 %7.2f ms  p90 %7.2f ms  p99 %7.2f ms  %8d requests in %s, non-2xx %d, socket errors %d\n' \
        "$1" "$W_RPS" "$W_P50" "$W_P90" "$W_P99" "$W_REQ" "$W_SECS" "$W_NON2XX" "$W_SOCKERR"
    if [ "$W_NON2XX" -ne 0 ] || [ "$W_SOCKERR" -ne 0 ]; then
        echo "  FAIL  the load saw non-2xx answers or socket errors"; FAIL=1
    fi
}

# A write probe: a second claimed agent accepts the study the sweep settles
# first (the lowest id), 2 s into the sweep; accepting takes the study's row
# lock, which the sweep's open batch transaction holds.
register bench-sweep-probe 127.0.0.4
PROBE_AGENT=$AGENT_ID PROBE_HDR="X-API-Key: $AGENT_KEY" PROBE_CLAIM=$AGENT_CLAIM
login bench-sweep-owner
api POST /api/v1/auth/claim "{\"claim_code\":\"$PROBE_CLAIM\"}" "Authorization: Bearer $TOKEN" >/dev/null
studies_backdate 3600 "${STUDIES[@]}"	# past first access
FIRST=$(sqlq "SELECT MIN(id) FROM studies WHERE id IN ($IDS)")

echo "API load: GET /api/v1/agents/me, $LOAD, wrk $BENCH_THREADS threads"
wrk_cmd "$BENCH_DIR/sweep-warm.txt" "$CONN" 2 "$URL" "$HDR" "$LUA"
# MariaDB's view (every statement of arps is a prepared one): what one
# request of the load executes, to take it out of the sweep's figure.
status() { sqlq "SHOW GLOBAL STATUS WHERE Variable_name IN ('Com_commit', 'Com_stmt_execute')" | awk -v k="$1" '$1 == k {print $2}'; }
LX0=$(status Com_stmt_execute) LC0=$(status Com_commit)
wrk_cmd "$BENCH_DIR/sweep-before.txt" "$CONN" "$DUR" "$URL" "$HDR" "$LUA"
LX1=$(status Com_stmt_execute) LC1=$(status Com_commit)
row "before the sweep" "$BENCH_DIR/sweep-before.txt"
LXR=$(awk -v x=$((LX1 - LX0)) -v r="$W_REQ" 'BEGIN { printf "%.3f", (r > 0 ? x / r : 0) }')
LCR=$(awk -v x=$((LC1 - LC0)) -v r="$W_REQ" 'BEGIN { printf "%.3f", (r > 0 ? x / r : 0) }')
result sweep_before_rps "$W_RPS"; result sweep_before_p50 "$W_P50"; result sweep_before_p99 "$W_P99"

# During: wrk runs until the sweep ends, then SIGINT makes it stop and print
# its report for that span; wrk itself must be the background process (not a
# subshell) to get the signal.  The sweep gets LIMIT seconds: past them it is
# stopped (SIGTERM; every batch is one transaction, so a stopped sweep leaves
# whole batches) and the backlog is reported as not cleared.
count() { sqlq "SELECT COUNT(*) FROM participations WHERE study_id IN ($IDS) AND agent_id <> '$PROBE_AGENT' AND status IN ($1)"; }
wrk_argv "$CONN" "$((LIMIT + 30))" "$URL" "$HDR" "$LUA"
"${WRK_ARGV[@]}" >"$BENCH_DIR/sweep-during.txt" 2>&1 &
WRK=$!
SWEEP_ARGS=(--config "$ARPS_CONFIG")
[ -n "$BATCH" ] && SWEEP_ARGS+=(--batch "$BATCH")
[ "$ROWS" = 1 ] && SWEEP_ARGS+=(--rows)
echo "arps-sweep${BATCH:+ --batch $BATCH} started; at most ${LIMIT} s (progress every 30 s):"
EV0=$(sqlq "SELECT COUNT(*) FROM events")	# events the sweep writes with its changes
# MariaDB's view: statements and commits the server ran during the sweep
# (the API load's included: compare with its requests).
C0=$(status Com_commit) X0=$(status Com_stmt_execute)
s0=$(date +%s.%N)
timeout "$LIMIT" build/arps-sweep "${SWEEP_ARGS[@]}" 2>"$BENCH_DIR/sweep.log" &
SP=$!
( sleep 2; curl -s -o "$BENCH_DIR/probe.body" -w '%{http_code} %{time_total}' --max-time 120 -X POST \
    -H "$PROBE_HDR" "$ARPS_BASE_URL/api/v1/studies/$FIRST/accept" >"$BENCH_DIR/probe.txt" 2>&1 ) &
PROBE=$!
tick=0
while kill -0 "$SP" 2>/dev/null; do	# ends with the sweep, which timeout bounds
    sleep 1
    tick=$((tick + 1))
    if [ $((tick % 30)) -eq 0 ] && kill -0 "$SP" 2>/dev/null; then
        printf '  %4d s: %d of %d moved\n' "$tick" "$(count "'timed_out', 'approved'")" "$N"
    fi
done
set +e
wait "$SP"
SRC=$?
set -e
s1=$(date +%s.%N)
C1=$(status Com_commit) X1=$(status Com_stmt_execute)
kill -INT "$WRK" 2>/dev/null || true
wait "$WRK" || true
WRK=""
SECS=$(awk -v a="$s0" -v b="$s1" 'BEGIN { printf "%.3f", b - a }')
EVN=$(( $(sqlq "SELECT COUNT(*) FROM events") - EV0 ))
EPS=$(awk -v n="$EVN" -v s="$SECS" 'BEGIN { printf "%.0f", n / s }')
printf '  events written with the sweep'"'"'s changes: %d in %.1f s = %s events/s\n' "$EVN" "$SECS" "$EPS"
result sweep_events "$EVN"; result sweep_events_per_s "$EPS"
sed 's/^/  /' "$BENCH_DIR/sweep.log"
wait "$PROBE" || true	# curl --max-time bounds it
read -r PCODE PTIME <"$BENCH_DIR/probe.txt" || true
PERR=$(jq -r '.error_code // empty' "$BENCH_DIR/probe.body" 2>/dev/null || true)
printf '  write probe: POST /studies/{the first study swept}/accept, sent 2 s into the sweep: HTTP %s%s after %.2f s\n' \
    "${PCODE:-?}" "${PERR:+ $PERR}" "${PTIME:-0}"
result sweep_probe "HTTP ${PCODE:-?}${PERR:+ $PERR} after $(printf '%.2f' "${PTIME:-0}") s"
row "during the sweep" "$BENCH_DIR/sweep-during.txt"
result sweep_during_rps "$W_RPS"; result sweep_during_p50 "$W_P50"; result sweep_during_p99 "$W_P99"
# The server's statements and commits during the sweep less the API
# load's (as measured per request before the sweep), per row moved.
MOVED0=$(count "'timed_out', 'approved'")
# arps-sweep's own session: exact, the load not included
SST=$(sed -n 's/.*jobs ran \([0-9]*\) statements and \([0-9]*\) commits.*/\1 \2/p' "$BENCH_DIR/sweep.log" | head -1)
if [ -n "$SST" ] && [ "$MOVED0" -gt 0 ]; then
    read -r SX SC <<<"$SST"
    SPR=$(awk -v x="$SX" -v n="$MOVED0" 'BEGIN { printf "%.2f", x / n }')
    CPR=$(awk -v c="$SC" -v n="$MOVED0" 'BEGIN { printf "%.4f", c / n }')
    printf '  arps-sweep ran %d statements and %d commits: %s statements and %s commits per row moved\n' \
        "$SX" "$SC" "$SPR" "$CPR"
    result sweep_stmts_per_row "$SPR"; result sweep_commits_per_row "$CPR"
elif [ "$MOVED0" -gt 0 ]; then
    SPR=$(awk -v x=$((X1 - X0)) -v l="$LXR" -v r="$W_REQ" -v n="$MOVED0" \
        'BEGIN { s = x - l * r; if (s < 0) s = 0; printf "%.2f", s / n }')
    CPR=$(awk -v c=$((C1 - C0)) -v l="$LCR" -v r="$W_REQ" -v n="$MOVED0" \
        'BEGIN { s = c - l * r; if (s < 0) s = 0; printf "%.4f", s / n }')
    printf '  MariaDB during the sweep: %d statements executed, %d commits; the load runs %s and %s per request:\n' \
        "$((X1 - X0))" "$((C1 - C0))" "$LXR" "$LCR"
    printf '  the sweep ran about %s statements and %s commits per row moved\n' "$SPR" "$CPR"
    result sweep_stmts_per_row "$SPR"; result sweep_commits_per_row "$CPR"
fi

T=$(count "'timed_out'")
A=$(count "'approved'")
MOVED=$((T + A))
RPS=$(awk -v n="$MOVED" -v s="$SECS" 'BEGIN { printf "%.0f", n / s }')
result sweep_n "$N"; result sweep_secs "$SECS"; result sweep_rows_per_s "$RPS"; result sweep_moved "$MOVED"
result sweep_load "$LOAD"; result sweep_timeouts "$ACC"; result sweep_auto "$SUB"
if [ "$SRC" -eq 0 ]; then
    printf 'sweep: %d rows in %.2f s = %.0f rows/s\n' "$MOVED" "$SECS" "$RPS"
    result sweep_done yes
else
    ETA=$(awk -v n="$N" -v r="$RPS" 'BEGIN { if (r > 0) printf "%.0f", n / r; else print "inf" }')
    if [ "$SRC" -eq 124 ]; then
        printf 'sweep: NOT CLEARED: stopped after the %d s limit with %d of %d rows moved = %.0f rows/s (the whole backlog would take about %s s)\n' \
            "$LIMIT" "$MOVED" "$N" "$RPS" "$ETA"
    else
        printf 'sweep: FAILED: arps-sweep exited %d after %.1f s with %d of %d rows moved\n' "$SRC" "$SECS" "$MOVED" "$N"
    fi
    if [ "$SRC" -eq 124 ]; then result sweep_done "stopped at the ${LIMIT} s limit"
    else result sweep_done "arps-sweep exited $SRC"; fi
    result sweep_eta "$ETA"; result sweep_limit "$LIMIT"
    FAIL=1
fi

echo "checks:"
SEEDED="SELECT agent_id FROM participations WHERE study_id IN ($IDS) AND agent_id <> '$PROBE_AGENT'"
PIN=$(sqlq "SELECT COUNT(*) FROM participations WHERE study_id IN ($IDS) AND agent_id = '$PROBE_AGENT'")
moved() { sed -n "s/.*$1: moved \([0-9]*\) in.*/\1/p" "$2" | head -1; }
while read -r st cnt; do
    printf '        participations %-14s %s\n' "$st" "$cnt"
done < <(sqlq "SELECT status, COUNT(*) FROM participations WHERE study_id IN ($IDS) AND agent_id <> '$PROBE_AGENT'
               GROUP BY status ORDER BY status")
check "participations moved (timed_out + approved)" "$MOVED" "$N"
check "participations timed_out" "$T" "$ACC"
check "participations approved" "$A" "$SUB"
if [ "$SRC" -eq 0 ]; then
    check "sweep log: timeouts moved" "$(moved timeouts "$BENCH_DIR/sweep.log")" "$ACC"
    check "sweep log: auto_approve moved" "$(moved auto_approve "$BENCH_DIR/sweep.log")" "$SUB"
fi
# Nothing lost, and each moved row moved once: a second timeout would leave
# reputation 40, a second approval 54 and two earnings.
check "rows neither moved nor still due" \
    "$((N - MOVED - $(count "'accepted', 'submitted'")))" 0
check "seeded agents at reputation 45 (one timeout each)" \
    "$(sqlq "SELECT COUNT(*) FROM agents WHERE id IN ($SEEDED) AND reputation = 45")" "$T"
check "seeded agents at reputation 52 (one approval each)" \
    "$(sqlq "SELECT COUNT(*) FROM agents WHERE id IN ($SEEDED) AND reputation = 52")" "$A"
check "seeded agents at any other reputation than 45, 50, 52" \
    "$(sqlq "SELECT COUNT(*) FROM agents WHERE id IN ($SEEDED) AND reputation NOT IN (45, 50, 52)")" 0
check "earning transactions of the seeded studies" \
    "$(sqlq "SELECT COUNT(*) FROM transactions WHERE study_id IN ($IDS) AND type = 'earning'")" "$A"
check "agents with more than one earning" \
    "$(sqlq "SELECT COUNT(*) FROM (SELECT owner_id FROM transactions WHERE study_id IN ($IDS)
             AND type = 'earning' GROUP BY owner_id HAVING COUNT(*) > 1) t")" 0
check "cents in the seeded agents' wallets (1 per approval)" \
    "$(sqlq "SELECT COALESCE(SUM(available_cents + frozen_cents), 0) FROM wallets WHERE owner_id IN ($SEEDED)")" "$A"
check "slots occupied (a timeout frees its slot; + the probe's)" \
    "$(sqlq "SELECT SUM(occupied) FROM studies WHERE id IN ($IDS)")" "$((N - T + PIN))"
if [ "$SRC" -eq 0 ]; then
    set +e
    timeout 120 build/arps-sweep --config "$ARPS_CONFIG" 2>"$BENCH_DIR/sweep2.log"
    rc2=$?
    set -e
    check "second arps-sweep: exit status" "$rc2" 0
    check "second arps-sweep: timeouts + auto_approve moved" \
        "$(( $(moved timeouts "$BENCH_DIR/sweep2.log") + $(moved auto_approve "$BENCH_DIR/sweep2.log") ))" 0
fi
set +e
admin verify-ledger >"$BENCH_DIR/verify.txt" 2>&1
rcv=$?
set -e
check "arps-admin verify-ledger: exit status" "$rcv" 0
[ $rcv -eq 0 ] || sed 's/^/        /' "$BENCH_DIR/verify.txt"
result sweep_checks "$([ $FAIL -eq 0 ] && echo ok || echo FAILED)"
result sweep_verify "$([ $rcv -eq 0 ] && echo ok || echo FAILED)"
exit $FAIL
