#!/usr/bin/env bash
# The write-cycle benchmark (issue 16 row 5; run by tools/bench.sh under make
# bench, BENCH_SKIP word `write`).
#
# BENCH_WRITE_CLIENTS claimed agents (default 32, the HTTP table's connection
# count), each on its own keep-alive connection of the C driver
# tools/bench-write.c (one thread, epoll, as wrk), run the cycle
#   accept -> open (GET /studies/{id}) -> complete -> approve (the researcher)
# one study at a time, each walking through BENCH_WRITE_STUDIES funded
# studies (a slot per agent, so none is ever full) from its own offset.
# Measured with innodb_flush_log_at_trx_commit = 1 (set for the row, the
# stack's own value restored after; reported as write_flush): every commit
# is on disk before its answer.  Figures: cycles/s, p50/p99 of one cycle (ms),
# errors (any answer not 200: must be 0); the server's statements, commits and
# fsyncs a cycle, and the CPU a cycle of MariaDB, the pool, nginx and the
# driver itself (all on the same cores).  Afterwards verify-ledger.
#
#   BENCH_WRITE_CLIENTS   agents = concurrent clients (default 32)
#   BENCH_WRITE_STUDIES   studies to walk through (default 400)
#   BENCH_WRITE_IDEM      1: an Idempotency-Key on every POST (default 0)
#   BENCH_SECONDS         measured seconds (default 10); BENCH_WARMUP (default 2)
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
. tools/bench-lib.sh

NA=${BENCH_WRITE_CLIENTS:-32}
NS=${BENCH_WRITE_STUDIES:-400}
DUR=${BENCH_SECONDS:-10}
WARM=${BENCH_WARMUP:-2}
REWARD=10
DRIVER=$BENCH_DIR/bench-write
FLUSH0=""
trap '[ -n "$FLUSH0" ] && sqlq "SET GLOBAL innodb_flush_log_at_trx_commit = $FLUSH0" >/dev/null 2>&1; true' EXIT

export BENCH_WRITE_IDEM=${BENCH_WRITE_IDEM:-0}
echo "== write cycle: $NA agents (one connection each) x accept -> open -> complete -> approve =="
cc -O2 -Wall -o "$DRIVER" tools/bench-write.c || die "cannot build the driver"

# The agents: registered from their own addresses, claimed by one owner,
# priority (no first-access delay before they may accept a new study).
login bench-write-owner
: >"$BENCH_DIR/write-agents.txt"
for i in $(seq 1 "$NA"); do
    register "bench-writer-$i" "127.0.5.$i"
    api POST /api/v1/auth/claim "{\"claim_code\":\"$AGENT_CLAIM\"}" "Authorization: Bearer $TOKEN" >/dev/null
    fixture agent-reputation "$AGENT_ID" 100
    echo "$AGENT_KEY" >>"$BENCH_DIR/write-agents.txt"
done

# The researcher and the studies: a slot per agent, completion code "OK".
login bench-write-res
admin topup "$ACC_ID" $(( NS * NA * (REWARD + 1) )) >/dev/null
body=$(jq -cn --argjson mx "$NA" --argjson rw "$REWARD" '{title: "Write cycle",
    description: "A study of the write benchmark.", study_url: "https://survey.example.org/w",
    reward_per_participant: $rw, max_participants: $mx, screening_criteria: "Any agent",
    estimated_duration_minutes: 5, completion_code: "OK"}')
: >"$BENCH_DIR/write-studies.txt"
for i in $(seq 1 "$NS"); do
    api POST /api/v1/studies "$body" "Authorization: Bearer $TOKEN" | jq -r .id >>"$BENCH_DIR/write-studies.txt"
done
[ "$(wc -l <"$BENCH_DIR/write-studies.txt")" -eq "$NS" ] || die "not every study was created"

FLUSH0=$(sqlq "SELECT @@GLOBAL.innodb_flush_log_at_trx_commit")
sqlq "SET GLOBAL innodb_flush_log_at_trx_commit = 1" >/dev/null || die "cannot set innodb_flush_log_at_trx_commit"
FLUSH=$(sqlq "SELECT @@GLOBAL.innodb_flush_log_at_trx_commit")
# The server's counters around the run: statements, commits and log
# flushes per cycle (the profile that does not depend on the machine's load).
counters() {
    sqlq "SELECT VARIABLE_NAME, VARIABLE_VALUE FROM information_schema.GLOBAL_STATUS WHERE VARIABLE_NAME IN
        ('COM_STMT_EXECUTE', 'QUESTIONS', 'COM_COMMIT', 'HANDLER_COMMIT', 'INNODB_DATA_FSYNCS')" | sort
}
# the background (arps-deliver's polls) over 2 idle seconds, subtracted
B0=$(counters); sleep 2; B1=$(counters)
C0=$(counters)
U0=$(cpu_ms)
T0=$(date +%s.%N)
out=$("$DRIVER" "$ARPS_BASE_URL" "$TOKEN" "$BENCH_DIR/write-agents.txt" "$BENCH_DIR/write-studies.txt" \
    "$WARM" "$DUR") || die "the driver failed"
C1=$(counters)
U1=$(cpu_ms)
T1=$(date +%s.%N)
sqlq "SET GLOBAL innodb_flush_log_at_trx_commit = $FLUSH0" >/dev/null
FLUSH0=""
# per cycle: the difference of each counter over all cycles the driver ran
percycle() {
    local n
    n=$(sed -n 's/.*all_cycles=\([0-9]*\).*/\1/p' <<<"$out")
    join <(echo "$B0") <(echo "$B1") | join - <(echo "$C0") | join - <(echo "$C1") |
        awk -v n="$n" -v t="$(awk -v a="$T0" -v b="$T1" 'BEGIN { print b - a }')" \
        '{ bg = ($3 - $2) / 2 * t; printf "%s %.1f\n", tolower($1), ($5 - $4 - bg) / (n > 0 ? n : 1) }'
}
PER=$(percycle)
pc() { awk -v k="$1" '$1 == k { print $2 }' <<<"$PER"; }
echo "$out" >"$BENCH_DIR/write.txt"
get() { sed -n "s/.*\b$1=\([^ ]*\).*/\1/p" <<<"$out"; }
printf '  %s cycles in %s s: %s cycles/s (%s requests/s), cycle p50 %s ms, p99 %s ms, errors %s' \
    "$(get cycles)" "$(get secs)" "$(get cycles_per_s)" "$(get req_per_s)" "$(get p50_ms)" \
    "$(get p99_ms)" "$(get errors)"
echo ", innodb_flush_log_at_trx_commit=$FLUSH, Idempotency-Key on every POST: $BENCH_WRITE_IDEM"
echo "  per cycle (4 requests, server counters): $(pc questions) statements from clients, $(pc com_stmt_execute) prepared executions, $(pc com_commit) COMMITs, $(pc handler_commit) handler commits, $(pc innodb_data_fsyncs) InnoDB fsyncs"
# CPU per cycle over the whole run (warm-up included, as all_cycles)
read -r cpu_db cpu_fcgi cpu_nginx < <(paste -d' ' <(echo "$U0") <(echo "$U1") |
    awk -v n="$(get all_cycles)" '{ n = n > 0 ? n : 1; printf "%.3f %.3f %.3f\n", ($4 - $1) / n, ($5 - $2) / n, ($6 - $3) / n }')
cpu_drv=$(awk -v c="$(get cpu_ms)" -v n="$(get all_cycles)" 'BEGIN { printf "%.3f", c / (n > 0 ? n : 1) }')
echo "  CPU per cycle: MariaDB $cpu_db ms, arps-fcgi $cpu_fcgi ms, nginx $cpu_nginx ms; the driver $cpu_drv ms"
result write_cpu_db_ms "$cpu_db"
result write_cpu_fcgi_ms "$cpu_fcgi"
result write_cpu_nginx_ms "$cpu_nginx"
result write_cpu_driver_ms "$cpu_drv"
result write_stmts_per_cycle "$(pc questions)"
result write_commits_per_cycle "$(pc com_commit)"
result write_fsyncs_per_cycle "$(pc innodb_data_fsyncs)"
[ "$(get exhausted)" = 0 ] || echo "  note: $(get exhausted) agents ran out of studies (raise BENCH_WRITE_STUDIES)"
result write_cycles_per_s "$(get cycles_per_s)"
result write_errors "$(get errors)"
result write_p50 "$(get p50_ms)"
result write_p99 "$(get p99_ms)"
result write_flush "$FLUSH"
admin verify-ledger >/dev/null || die "verify-ledger failed after the write cycle"
[ "$(get errors)" = 0 ] || die "$(get errors) errors in the write cycle"
