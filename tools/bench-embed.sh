#!/usr/bin/env bash
# The embedding benchmarks of issue 34 (design.md §15 "Cost"), run by
# tools/bench.sh under make bench as row 9 of the summary; the last part, since
# its bio clients leave arps-embed a backlog that would load any later part.
#
#  9a  ms per 60-word text on one core: build/tools/bert-bench on the
#      stack's model (model_path, the service's bge-small-en-v1.5) under
#      taskset -c 0, the median of BENCH_EMBED_RUNS runs of
#      tests/matching/bench_bio.txt as a bio (BERT query role) and as
#      criteria (passage role); the row reports the slower.  Target <= 50 ms.
#  9b  re-embedding BENCH_EMBED_N texts (default 10,000): the stack's
#      arps-embed stopped, that many unclaimed agents seeded, each with a
#      different bio of about 60 words waiting in 'processing' (arps-fixture
#      seed-bios), then build/arps-embed --once timed until the queue is
#      empty: texts/s (a model switch of N texts takes N / rate seconds).
#  9c  the API's p99 while BENCH_EMBED_CLIENTS clients (default 6) post bios
#      as fast as the limit lets them: arps-embed running again (as dev.sh
#      starts it), each client rotating over BENCH_EMBED_AGENTS agents
#      (default 1: each client is one agent, which the issue's row names;
#      20 shows a flood of 120 agents) and posting each a new, different
#      ~4,900-character bio
#      until the agent's 429 (bio_updates_per_hour), then leaving that agent
#      for its Retry-After; the agents' 10 posts an hour each queue enough
#      long texts to keep arps-embed busy through the measurement.  Meanwhile
#      wrk drives GET /api/v1/agents/me (BENCH_EMBED_CONN connections, 2 ms
#      think time each, as the sweep's row); the same wrk run without the
#      clients, right before, is the baseline.  Target: p99 with them <= 2x
#      the p99 without.  Then, apart, the same run while arps-embed alone
#      works off the backlog the clients left (no client posting).
# Every run is bounded: wrk -d, the clients' deadline, timeout on arps-embed.
# Exits non-zero when a check fails.
#
#   BENCH_EMBED_RUNS     bert-bench runs per role (default 100)
#   BENCH_EMBED_N        texts to re-embed (default 10000; e.g. 500 for a quick run)
#   BENCH_EMBED_TIMEOUT  seconds arps-embed --once may take (default 900)
#   BENCH_EMBED_CLIENTS  bio-posting clients (default 6)
#   BENCH_EMBED_AGENTS   agents each client rotates over (default 1)
#   BENCH_EMBED_CONN     wrk connections of the API load (default 8)
#   BENCH_SECONDS        length of each measured wrk run (default 10)
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
. tools/bench-lib.sh

RUNS=${BENCH_EMBED_RUNS:-100}
N=${BENCH_EMBED_N:-10000}
LIMIT=${BENCH_EMBED_TIMEOUT:-900}
NC=${BENCH_EMBED_CLIENTS:-6}
NA=${BENCH_EMBED_AGENTS:-1}
CONN=${BENCH_EMBED_CONN:-8}
DUR=${BENCH_SECONDS:-10}
[ "$NA" -ge 1 ] && [ "$NA" -le 200 ] && [ "$NC" -ge 1 ] && [ "$NC" -le 50 ] ||
    die "BENCH_EMBED_CLIENTS 1..50, BENCH_EMBED_AGENTS 1..200"
MODEL=$(sed -n 's/^model_path *= *//p' "$ARPS_CONFIG" | head -1)
PIDFILE=$ARPS_VAR/run/arps-embed.pid
FAIL=0
CLIENTS=() WRK=""
trap 'for p in "${CLIENTS[@]}" $WRK; do kill "$p" 2>/dev/null; done; true' EXIT

# The stack's arps-embed, stopped and started as the test suites do
# (tools/dev.sh embed-stop / embed-start, by its pid file under $ARPS_VAR).
embed_stop() { tools/dev.sh embed-stop; }
embed_start() { tools/dev.sh embed-start "$ARPS_CONFIG"; }
waiting() { sqlq "SELECT COUNT(*) FROM embeddings WHERE status = 'processing'"; }
secs_since() { awk -v a="$1" -v b="$(date +%s.%N)" 'BEGIN { printf "%.3f", b - a }'; }

# ---- 9a: one text on one core ----
echo "== embedding: the service model on one core, ${RUNS} runs per role =="
make -s build/tools/bert-bench
ONE=()
command -v taskset >/dev/null 2>&1 && ONE=(taskset -c 0)
"${ONE[@]}" build/tools/bert-bench "$MODEL" tests/matching/bench_bio.txt "$RUNS" | tee "$BENCH_DIR/embed-text.txt"
field() {	# field ROLE WORD: the number before "ms" after WORD, or tokens
    awk -v r="$1:" -v w="$2" '$2 == r { for (i = 3; i <= NF; i++) if ($i == w) { v = $(i + 1); sub(/,$/, "", v); print v } }' \
        "$BENCH_DIR/embed-text.txt"
}
QMS=$(field query median) PMS=$(field passage median)
[ -n "$QMS" ] && [ -n "$PMS" ] || die "cannot parse bert-bench's output"
result embed_text_words "$(wc -w <tests/matching/bench_bio.txt)"
result embed_text_query_ms "$QMS"; result embed_text_passage_ms "$PMS"
result embed_text_query_tokens "$(awk '$2 == "query:" { print $3 }' "$BENCH_DIR/embed-text.txt")"
result embed_text_passage_tokens "$(awk '$2 == "passage:" { print $3 }' "$BENCH_DIR/embed-text.txt")"
result embed_text_ms "$(awk -v a="$QMS" -v b="$PMS" 'BEGIN { print (a > b) ? a : b }')"
result embed_text_runs "$RUNS"; result embed_text_core "${ONE[*]:-no taskset}"
result embed_text_model "$(awk 'NR == 1 { print $1 }' "$BENCH_DIR/embed-text.txt")"

# ---- 9b: re-embedding N texts ----
echo
echo "== embedding: re-embed $N waiting bios with arps-embed --once =="
for i in $(seq 1 300); do [ "$(waiting)" -eq 0 ] && break; sleep 0.1; done
embed_stop
W0=$(waiting)
t0=$(date +%s.%N)
fixture seed-bios bemb01 "$N"
SEEDS=$(secs_since "$t0")
W1=$(waiting)
printf 'seeded %d unclaimed agents with bios in %.1f s; %d texts waiting (%d before)\n' "$N" "$SEEDS" "$W1" "$W0"
[ $((W1 - W0)) -eq "$N" ] || die "seeded $((W1 - W0)) waiting texts, not $N"
TIMEFORMAT='%3R %3U %3S'
s0=$(date +%s.%N)
set +e
{ time timeout "$LIMIT" build/arps-embed --config "$ARPS_CONFIG" --once 2>"$BENCH_DIR/embed-once.log"; } \
    2>"$BENCH_DIR/embed-once.time"
RC=$?
set -e
SECS=$(secs_since "$s0")
read -r _ CU CS <"$BENCH_DIR/embed-once.time" || true
READY=$(sqlq "SELECT COUNT(*) FROM embeddings WHERE subject_id LIKE 'agt\\_sbemb01%' AND status = 'ready'")
LEFT=$(waiting)
RATE=$(awk -v n="$READY" -v s="$SECS" 'BEGIN { printf "%.1f", n / s }')
CPU=$(awk -v u="${CU:-0}" -v s="${CS:-0}" -v w="$SECS" 'BEGIN { printf "%.0f", 100 * (u + s) / w }')
# texts per CPU second of arps-embed: what a core of its own would give
CRATE=$(awk -v n="$READY" -v u="${CU:-0}" -v s="${CS:-0}" 'BEGIN { if (u + s > 0) printf "%.1f", n / (u + s); else print "?" }')
result reembed_n "$N"; result reembed_secs "$SECS"; result reembed_per_s "$RATE"; result reembed_ready "$READY"
result reembed_cpu_pct "$CPU"; result reembed_per_cpu_s "$CRATE"; result reembed_seed_secs "$SEEDS"
if [ "$RC" -eq 0 ] && [ "$LEFT" -eq 0 ] && [ "$READY" -eq "$N" ]; then
    printf 're-embed: %d texts in %.1f s = %s texts/s (arps-embed CPU %s%% of one core: %s texts per CPU second); queue empty\n' \
        "$READY" "$SECS" "$RATE" "$CPU" "$CRATE"
    result reembed_done yes
else
    printf 're-embed: NOT DONE: arps-embed --once exited %d after %.1f s, %d of %d ready, %d still waiting (%s texts/s)\n' \
        "$RC" "$SECS" "$READY" "$N" "$LEFT" "$RATE"
    result reembed_done "$([ "$RC" -eq 124 ] && echo "stopped at the ${LIMIT} s limit" || echo "exit $RC, $READY of $N ready")"
    FAIL=1
fi
sed 's/^/  /' "$BENCH_DIR/embed-once.log" | tail -3

# ---- 9c: the API while clients post bios ----
echo
echo "== embedding: API latency while $NC clients post bios ($NA agents each) =="
embed_start
# Agents: client c's agent j registers from 127.0.(10 + c).(1 + j / 10)
# (10 registrations per address an hour).
for c in $(seq 1 "$NC"); do
    : >"$BENCH_DIR/embed-keys-$c.txt"
    for j in $(seq 0 $((NA - 1))); do
        register "bench-bio-$c-$j" "127.0.$((10 + c)).$((1 + j / 10))"
        echo "$AGENT_KEY" >>"$BENCH_DIR/embed-keys-$c.txt"
    done
done
# The clients: tools/bench-embed.lua under wrk, one thread and one
# connection each (so that an answer is to the thread's last request).
CLUA=$BENCH_DIR/embed-clients.lua
{ printf 'KEYS_DIR = "%s"\n' "$BENCH_DIR"; cat tools/bench-embed.lua; } >"$CLUA"

register bench-bio-load 127.0.0.5
HDR="X-API-Key: $AGENT_KEY"
URL=$ARPS_BASE_URL/api/v1/agents/me
LUA=$BENCH_DIR/embed-pace.lua
printf 'function delay() return 2 end\n' >"$LUA"
LOAD="$CONN connections, 2 ms think time each"
[ "$(curl -s -o /dev/null -w '%{http_code}' -H "$HDR" "$URL")" = 200 ] || die "GET /agents/me is not 200"
for i in $(seq 1 300); do [ "$(waiting)" -eq 0 ] && break; sleep 0.1; done
row() {	# row LABEL FILE
    wrk_parse "$2"
    printf '  %-26s %9.0f req/s  p50 %7.2f ms  p90 %7.2f ms  p99 %7.2f ms  %8d requests, non-2xx %d, socket errors %d\n' \
        "$1" "$W_RPS" "$W_P50" "$W_P90" "$W_P99" "$W_REQ" "$W_NON2XX" "$W_SOCKERR"
    if [ "$W_NON2XX" -ne 0 ] || [ "$W_SOCKERR" -ne 0 ]; then
        echo "  FAIL  the load saw non-2xx answers or socket errors"; FAIL=1
    fi
}
embed_cpu() { sed 's/^.*) //' "/proc/$(cat "$PIDFILE")/stat" | awk '{ print $12 + $13 }'; }
echo "API load: GET /api/v1/agents/me, $LOAD, wrk $BENCH_THREADS threads, ${DUR} s a run"
wrk_cmd "$BENCH_DIR/embed-warm.txt" "$CONN" 2 "$URL" "$HDR" "$LUA"
wrk_cmd "$BENCH_DIR/embed-before.txt" "$CONN" "$DUR" "$URL" "$HDR" "$LUA"
row "without the bio clients" "$BENCH_DIR/embed-before.txt"
result embedload_before_rps "$W_RPS"; result embedload_before_p50 "$W_P50"; result embedload_before_p99 "$W_P99"
BP99=$W_P99

E0=$(embed_cpu)
s0=$(date +%s.%N)
wrk_argv "$CONN" "$DUR" "$URL" "$HDR" "$LUA"
"${WRK_ARGV[@]}" >"$BENCH_DIR/embed-during.txt" 2>&1 &
WRK=$!
wrk -t"$NC" -c"$NC" -d"${DUR}s" --timeout 10s --latency -s "$CLUA" "$ARPS_BASE_URL/api/v1/profile/bio" \
    >"$BENCH_DIR/embed-clients.txt" 2>&1 &
CLIENTS=($!)
wait "$WRK" || true
WRK=""
wait "${CLIENTS[0]}" || true
CLIENTS=()
E1=$(embed_cpu)
WIN=$(secs_since "$s0")
QEND=$(waiting)
row "with the bio clients" "$BENCH_DIR/embed-during.txt"
result embedload_during_rps "$W_RPS"; result embedload_during_p50 "$W_P50"; result embedload_during_p99 "$W_P99"
DP99=$W_P99
# Apart: arps-embed working off the clients' backlog, no client posting.
if [ "$QEND" -gt 0 ]; then
    wrk_cmd "$BENCH_DIR/embed-after.txt" "$CONN" "$DUR" "$URL" "$HDR" "$LUA"
    row "arps-embed alone at work" "$BENCH_DIR/embed-after.txt"
    result embedload_after_p50 "$W_P50"; result embedload_after_p99 "$W_P99"
    result embedload_after_queue "$(waiting)"
fi
read -r OK LIM ERR < <(sed -n 's/^bio posts: \([0-9]*\) \([0-9]*\) \([0-9]*\)$/\1 \2 \3/p' "$BENCH_DIR/embed-clients.txt") ||
    die "no counts from the bio clients in $BENCH_DIR/embed-clients.txt"
PP50=$(ms "$(awk '$1 == "50%" {print $2}' "$BENCH_DIR/embed-clients.txt")")
PP99=$(ms "$(awk '$1 == "99%" {print $2}' "$BENCH_DIR/embed-clients.txt")")
ECPU=$(awk -v a="$E0" -v b="$E1" -v hz="$(getconf CLK_TCK)" -v w="$WIN" 'BEGIN { printf "%.0f", 100 * (b - a) / hz / w }')
printf '  bio posts: %d stored, %d answered 429, %d other (all answers: p50 %s ms, p99 %s ms); %d texts waiting at the end;\n' \
    "$OK" "$LIM" "$ERR" "$PP50" "$PP99" "$QEND"
printf '  arps-embed used %s%% of a core over the %.1f s\n' "$ECPU" "$WIN"
[ "$ERR" -eq 0 ] || { echo "  FAIL  bio posts answered neither 200 nor 429"; FAIL=1; }
[ "$QEND" -gt 0 ] || echo "  note: the queue emptied before the end: the embedder was not busy throughout"
result embedload_clients "$NC"; result embedload_agents "$NA"; result embedload_load "$LOAD"
result embedload_posted "$OK"; result embedload_limited "$LIM"; result embedload_errors "$ERR"
result embedload_post_p50 "$PP50"; result embedload_post_p99 "$PP99"
result embedload_queue_end "$QEND"; result embedload_embed_cpu_pct "$ECPU"
result embedload_ratio "$(awk -v a="$DP99" -v b="$BP99" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "?" }')"
exit $FAIL
