#!/usr/bin/env bash
# make bench: throughput and latency of the stack as ratios against nginx
# answering a static body on the same machine in the same run (row 1), the
# ceilings of a trivial FastCGI responder (rows 2a/2b, tools/bench-ceiling.c),
# the API rows (3), the workers' memory (8), then the sweep backlog under API
# load (tools/bench-sweep.sh), then the matching benchmarks, then the
# embedding rows (9, tools/bench-embed.sh: last, since its bio clients leave
# arps-embed a backlog), then the one summary table of issue 16, also written to bench/results/latest.md
# (design.md §15).  Each part reports through `result KEY VALUE`
# (tools/bench-lib.sh); the table prints "not measured" for a row whose keys
# are absent.  Needs the fresh stack of tools/dev.sh bench (ARPS_* set).
# Loopback only; every load is bounded in time (wrk -d, timeout).
#
#   BENCH_SECONDS       length of each measured wrk run (default 10)
#   BENCH_WARMUP        unmeasured wrk run before each row (default 2)
#   BENCH_CONNECTIONS   wrk connections for the HTTP table (default 32)
#   BENCH_THREADS       wrk threads (default 2)
#   BENCH_AVAIL_STUDIES studies the /studies/available agent ranks (default 50)
#   BENCH_SKIP          words out of: http sweep write events avail matching fanout embed
#                       (skip those parts)
#   BENCH_LATEST        where the summary table goes (default bench/results/latest.md)
#   BENCH_EVENTS_*      see tools/bench-events.sh
#   BENCH_SWEEP_*       see tools/bench-sweep.sh (BENCH_SWEEP_N=2000 for a quick run)
#   BENCH_EMBED_*       see tools/bench-embed.sh (BENCH_EMBED_N=500 for a quick run)
#   BENCH_FANOUT_*      see tools/bench-fanout.sh (row 10, study.matched's fan-out)
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
. tools/bench-lib.sh

DUR=${BENCH_SECONDS:-10}
WARM=${BENCH_WARMUP:-2}
CONN=${BENCH_CONNECTIONS:-32}
NAV=${BENCH_AVAIL_STUDIES:-50}
SKIP=" ${BENCH_SKIP:-} "
B=$ARPS_BASE_URL
FAIL=()
T0=$(date +%s)
bench_tools
: >"$RESULTS"

conf() { sed -n "s/^$1 *= *//p" "$ARPS_CONFIG" | head -1; }
CPU=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)
echo "== make bench, $(date -u +%Y-%m-%dT%H:%M:%SZ) =="
echo "machine: $(nproc) cores ($CPU), $(awk '/MemTotal/ {printf "%.0f GiB", $2 / 1048576}' /proc/meminfo), $(uname -sr)"
echo "stack:   nginx $(nginx -v 2>&1 | sed 's/.*nginx\///') (2 workers), arps-fcgi $(conf workers) workers" \
     "(max_requests $(conf max_requests)), $(mariadbd --version 2>/dev/null | awk '{print $3}'); all on this machine"
echo "load:    $(wrk --version 2>&1 | head -1 | awk '{print $1, $2}'), $BENCH_THREADS threads, over loopback; client and server share the cores"
result machine "$(nproc) cores, $CPU"

http_part() {
    # Fixtures: a claimed agent with a ready bio embedding, and NAV active
    # studies (ready criteria embeddings, past first access) for it to rank.
    register bench-agent 127.0.0.2
    local key=$AGENT_KEY agent=$AGENT_ID claim=$AGENT_CLAIM i crit
    login bench-owner
    api POST /api/v1/auth/claim "{\"claim_code\":\"$claim\"}" "Authorization: Bearer $TOKEN" >/dev/null
    api POST /api/v1/profile/bio '{"bio":"I am a coding assistant that reviews C and shell code, writes tests, and answers questions about databases, networking and developer tools."}' \
        "X-API-Key: $key" >/dev/null
    login bench-res
    admin topup "$ACC_ID" $((NAV * 10 * 110)) >/dev/null
    local crits=("Agents that write C code every day" "Agents that know SQL databases well"
        "Anyone interested in developer tools" "Agents that translate between languages"
        "Agents with experience in web frontends" "Agents who summarise scientific papers"
        "Agents that help with customer support" "Agents that plan travel itineraries")
    local studies=()
    for i in $(seq 1 "$NAV"); do
        crit="${crits[$((i % ${#crits[@]}))]} (variant $i)"
        studies+=("$(create_study "$TOKEN" 100 10 "$crit")")
    done
    wait_embeddings "$agent" "${studies[@]}"
    studies_backdate 3600 "${studies[@]}"	# past first access

    local navail
    navail=$(api GET /api/v1/studies/available "" "X-API-Key: $key" | jq '.studies | length')
    [ "$navail" -ge 1 ] || die "GET /studies/available lists no study"

    echo
    echo "== HTTP: wrk $CONN connections, ${WARM} s warm-up + ${DUR} s measured per row =="
    echo "(nginx's static body is measured before and after every row; a row's ratio is its req/s over"
    echo " the mean of the two static runs around it, so drift on the shared machine cancels out)"
    ROWS=(); SR=()
    # Each target compares two rows: they run next to each other (2a by the
    # 404, 2b by /agents/me) and their ratios to the static runs around each.
    base 0
    row "ceiling: FastCGI fixed body" ceil_fixed /bench/fcgi/fixed "" 200 "trivial libfcgi responder"; base 1
    row "GET /api/v1/nope (404 via FastCGI)" notfound /api/v1/nope "" 404 "routing miss"; base 2
    row "ceiling: FastCGI + 1 PK SELECT" ceil_select "/bench/fcgi/select?id=$agent" "" 200 \
        "prepared, persistent connection"; base 3
    row "GET /api/v1/agents/me (API key + DB)" me /api/v1/agents/me "X-API-Key: $key" 200 "claimed agent"; base 4
    row "GET /api/v1/health (FastCGI + 1 query)" health /api/v1/health "" 200 "pings MariaDB"; base 5
    row "GET /api/v1/wallet/balance (API key)" balance /api/v1/wallet/balance "X-API-Key: $key" 200 "agent wallet"; base 6
    row "GET /api/v1/wallet/transactions" tx /api/v1/wallet/transactions "X-API-Key: $key" 200 "agent's first page"; base 7
    row "GET /api/v1/studies/available" available /api/v1/studies/available "X-API-Key: $key" 200 \
        "ranks $NAV studies, lists $navail"; base 8
    memory_part
    local line n=0 med
    med=$(printf '%s\n' "${SR[@]}" | sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }')
    printf '%-40s %9s %6s %8s %8s %8s %7s %7s\n' endpoint req/s ratio "p50 ms" "p90 ms" "p99 ms" non-2xx sockerr
    for line in "${ROWS[@]}"; do
        IFS='|' read -r k label rps p50 p90 p99 non2xx sockerr ok note nreq <<<"$line"
        if [ "$k" = static ]; then
            printf '%-40s %9.0f %6s %8.3f %8.3f %8.3f %7d %7d  %s (%s; %d requests)\n' "$label" "$rps" "-" \
                "$p50" "$p90" "$p99" "$non2xx" "$sockerr" "$ok" "$note" "$nreq"
            continue
        fi
        local ratio
        ratio=$(awk -v r="$rps" -v a="${SR[$n]}" -v b="${SR[$((n + 1))]}" 'BEGIN { printf "%.3f", r / ((a + b) / 2) }')
        n=$((n + 1))
        result "http_${k}_ratio" "$ratio"
        printf '%-40s %9.0f %6s %8.3f %8.3f %8.3f %7d %7d  %s (%s; %d requests)\n' "$label" "$rps" "$ratio" \
            "$p50" "$p90" "$p99" "$non2xx" "$sockerr" "$ok" "$note" "$nreq"
    done
    printf 'static body runs, req/s: %s (median %.0f, spread %s)\n' "${SR[*]}" "$med" \
        "$(printf '%s\n' "${SR[@]}" | sort -g | awk 'NR == 1 { lo = $1 } { hi = $1 } END { printf "%.0f..%.0f", lo, hi }')"
    result http_static_median "$med"; result http_static_rps "$med"
    # Row 1's latencies and errors: the static run nearest the median's rate.
    local best="" bd=""
    for line in "${ROWS[@]}"; do
        IFS='|' read -r k label rps p50 p90 p99 non2xx sockerr ok note nreq <<<"$line"
        [ "$k" = static ] || continue
        d=$(awk -v a="$rps" -v m="$med" 'BEGIN { d = a - m; print d < 0 ? -d : d }')
        if [ -z "$bd" ] || awk -v a="$d" -v b="$bd" 'BEGIN { exit !(a < b) }'; then bd=$d; best=$line; fi
    done
    IFS='|' read -r k label rps p50 p90 p99 non2xx sockerr ok note nreq <<<"$best"
    result http_static_p50 "$p50"; result http_static_p99 "$p99"
    result http_static_spread "$(printf '%s\n' "${SR[@]}" | sort -g | awk 'NR == 1 { lo = $1 } { hi = $1 } END { printf "%.0f..%.0f", lo, hi }')"
    result http_conn "$CONN"; result http_secs "$DUR"
    # http_static_errors: every static run's
    local e=0
    for line in "${ROWS[@]}"; do
        IFS='|' read -r k label rps p50 p90 p99 non2xx sockerr ok note nreq <<<"$line"
        [ "$k" = static ] && e=$((e + non2xx + sockerr))
    done
    result http_static_errors "$e"
}

# Row 8: each FastCGI worker's Private_Dirty and shared pages (Shared_Clean +
# Shared_Dirty of /proc/PID/smaps_rollup) right after the HTTP rows, max and
# mean; MariaDB's resident set.
memory_part() {
    local master pids p priv shr n=0 pmax=0 psum=0 smax=0 ssum=0
    master=$(cat "$ARPS_VAR/run/arps-fcgi.pid")
    pids=$(pgrep -P "$master" || true)
    for p in $pids; do
        read -r priv shr < <(awk '/^Private_Dirty:/ { p = $2 } /^Shared_(Clean|Dirty):/ { s += $2 }
            END { print p + 0, s + 0 }' "/proc/$p/smaps_rollup" 2>/dev/null || echo "0 0")
        [ "$priv" -gt 0 ] || continue
        n=$((n + 1)); psum=$((psum + priv)); ssum=$((ssum + shr))
        [ "$priv" -gt "$pmax" ] && pmax=$priv
        [ "$shr" -gt "$smax" ] && smax=$shr
    done
    [ "$n" -gt 0 ] || { echo "  FAIL no arps-fcgi worker under pid $master"; FAIL+=(memory); return 0; }
    local mrss
    mrss=$(awk '/^VmRSS:/ { print $2 }' "/proc/$(cat "$ARPS_VAR/run/mysqld.pid")/status")
    result mem_workers "$n"
    result mem_worker_private_kb "$pmax"; result mem_worker_private_mean_kb $((psum / n))
    result mem_worker_shared_kb "$smax"; result mem_worker_shared_mean_kb $((ssum / n))
    result mem_mariadb_rss_kb "$mrss"
    printf 'memory: %d workers, Private_Dirty max %d kB mean %d kB; shared max %d kB mean %d kB; MariaDB RSS %d kB\n' \
        "$n" "$pmax" $((psum / n)) "$smax" $((ssum / n)) "$mrss"
}

# base I: the static-body baseline run I (warmed up before the first only).
base() {
    local w=$WARM
    [ "$1" -gt 0 ] && WARM=0
    row "nginx static body, run $1" static /bench/static "" 200 "baseline"
    WARM=$w
    SR+=("$W_RPS")
}

# row LABEL KEY PATH HEADER EXPECTED_STATUS NOTE: a pre-check with curl, a
# warm-up, the measured run; non-2xx and socket errors are checked.
row() {
    local label=$1 k=$2 path=$3 hdr=$4 want=$5 note=$6 code out=$BENCH_DIR/wrk-$2.txt ok=ok
    local cargs=(-s -o /dev/null -w '%{http_code}' --max-time 5)
    [ -n "$hdr" ] && cargs+=(-H "$hdr")
    code=$(curl "${cargs[@]}" "$B$path" || true)
    [ "$code" = "$want" ] || { echo "  FAIL $path answered $code, not $want"; FAIL+=("$k:status"); }
    [ "$WARM" -gt 0 ] && wrk_cmd "$BENCH_DIR/wrk-$k-warm.txt" "$CONN" "$WARM" "$B$path" "$hdr"
    [ "$k" = static ] && out=$BENCH_DIR/wrk-static-${#SR[@]}.txt
    wrk_cmd "$out" "$CONN" "$DUR" "$B$path" "$hdr"
    wrk_parse "$out"
    if [ "$want" = 200 ]; then
        [ "$W_NON2XX" -eq 0 ] || { ok="FAIL: $W_NON2XX non-2xx"; FAIL+=("$k:non2xx"); }
    else	# the deliberate 404 row: every answer must be the 404
        [ "$W_NON2XX" -eq "$W_REQ" ] || { ok="FAIL: only $W_NON2XX of $W_REQ non-2xx"; FAIL+=("$k:404"); }
    fi
    [ "$W_SOCKERR" -eq 0 ] || { ok="FAIL: $W_SOCKERR socket errors"; FAIL+=("$k:sockerr"); }
    ROWS+=("$k|$label|$W_RPS|$W_P50|$W_P90|$W_P99|$W_NON2XX|$W_SOCKERR|$ok|$note|$W_REQ")
    printf 'bench: %-40s %.0f req/s\n' "$label" "$W_RPS" >&2
    [ "$k" = static ] && return 0
    result "http_${k}_rps" "$W_RPS"; result "http_${k}_p50" "$W_P50"; result "http_${k}_p99" "$W_P99"
    if [ "$want" = 200 ]; then result "http_${k}_errors" $((W_NON2XX + W_SOCKERR))
    else result "http_${k}_errors" $((W_REQ - W_NON2XX + W_SOCKERR)); fi
}

# The ceiling responder (rows 2a/2b) behind the bench stack's /bench/fcgi/.
CEIL=""
trap '[ -n "$CEIL" ] && kill "$CEIL" 2>/dev/null; true' EXIT
start_ceiling() {
    local i
    make -s build/bench-ceiling
    build/bench-ceiling "$ARPS_CONFIG" "$ARPS_VAR/run/ceiling.sock" 2>>"$ARPS_VAR/log/ceiling.log" &
    CEIL=$!
    for i in $(seq 1 100); do
        [ -S "$ARPS_VAR/run/ceiling.sock" ] && return 0
        sleep 0.1
    done
    die "bench-ceiling did not listen on $ARPS_VAR/run/ceiling.sock"
}

if [[ $SKIP != *" http "* ]]; then start_ceiling; http_part; fi

if [[ $SKIP != *" sweep "* ]]; then
    echo
    tools/bench-sweep.sh || FAIL+=(sweep)
fi

if [[ $SKIP != *" write "* ]]; then echo; tools/bench-write.sh || FAIL+=(write); fi

if [[ $SKIP != *" events "* ]]; then
    echo
    tools/bench-events.sh || FAIL+=(events)
fi

if [[ $SKIP != *" avail "* ]]; then echo; tools/bench-avail.sh || FAIL+=(avail); fi

if [[ $SKIP != *" matching "* ]]; then
    echo
    echo "== matching (one core) =="
    make -s bench-matching | tee "$BENCH_DIR/matching.txt" || FAIL+=(matching)
fi

if [[ $SKIP != *" fanout "* ]]; then echo; tools/bench-fanout.sh || FAIL+=(fanout); fi

if [[ $SKIP != *" embed "* ]]; then echo; tools/bench-embed.sh || FAIL+=(embed); fi

# ---- summary ----
declare -A R
while IFS='=' read -r k v; do R[$k]=$v; done <"$RESULTS"
r() { printf '%s' "${R[$1]:-?}"; }
hrow() { printf '  %-34s %6s  %7.0f req/s   p50 %6.2f ms   p99 %6.2f ms\n' "$1" "$(r "http_$2_ratio")" \
    "$(r "http_$2_rps")" "$(r "http_$2_p50")" "$(r "http_$2_p99")"; }
has() { [ -n "${R[$1]:-}" ]; }
# fge A B: A >= B (floats); fdiv A B: A / B to 3 places.
fge() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a + 0 >= b + 0) }'; }
fdiv() { awk -v a="$1" -v b="$2" 'BEGIN { if (b + 0 == 0) print "?"; else printf "%.3f", a / b }'; }
met() { if "$@"; then echo met; else echo "NOT met"; fi; }
STATIC=${R[http_static_median]:-}
# trow NO WHAT KEY TARGET VERDICT: one HTTP row of the table from http_KEY_*.
trow() {
    local no=$1 what=$2 k=http_$3 target=$4 verdict=$5 ratio=-
    if ! has "${k}_rps"; then
        printf '| %s | %s | not measured | | | | | %s | |\n' "$no" "$what" "$target"
        return 0
    fi
    [ -n "$STATIC" ] && ratio=$(fdiv "${R[${k}_rps]}" "$STATIC")
    printf '| %s | %s | %.0f | %.2f | %.2f | %s | %s | %s | %s |\n' "$no" "$what" "${R[${k}_rps]}" \
        "${R[${k}_p50]:-0}" "${R[${k}_p99]:-0}" "${R[${k}_errors]:-?}" "$ratio" "$target" "$verdict"
}
# The verdicts (empty when a key is missing).
v_2a="" v_me="" v_404="" v_a10="" v_a100="" v_w="" v_sw="" v_mem=""
# rel A B: row A's rate over row B's, each first taken over the static runs
# around it (http_*_ratio) when both have them, so drift cancels out.
rel() {
    if has "http_$1_ratio" && has "http_$2_ratio"; then fdiv "${R[http_$1_ratio]}" "${R[http_$2_ratio]}"
    else fdiv "${R[http_$1_rps]}" "${R[http_$2_rps]}"; fi
}
has http_ceil_fixed_rps && [ -n "$STATIC" ] && v_2a=$(met fge "$(fdiv "${R[http_ceil_fixed_rps]}" "$STATIC")" 0.3)
has http_me_rps && has http_ceil_select_rps &&
    v_me="$(rel me ceil_select) of 2b: $(met fge "$(rel me ceil_select)" 0.8)"
has http_notfound_rps && has http_ceil_fixed_rps &&
    v_404="$(rel notfound ceil_fixed) of 2a: $(met fge "$(rel notfound ceil_fixed)" 0.9)"
has http_avail10k_rps && has http_me_rps &&
    v_a10=$(met eval 'fge 20 "${R[http_avail10k_p99]}" && fge "$(fdiv "${R[http_avail10k_rps]}" "${R[http_me_rps]}")" 0.5')
has http_avail100k_p99 && v_a100=$(met fge 50 "${R[http_avail100k_p99]}")
has write_cycles_per_s && v_w=$(met eval 'fge "${R[write_cycles_per_s]}" 800 && [ "${R[write_errors]:-1}" = 0 ]')
has sweep_rows_per_s && v_sw=$(met eval 'fge "${R[sweep_rows_per_s]}" 5000 && fge "$(awk -v b="${R[sweep_before_p99]:-0}" "BEGIN { print 2 * b }")" "${R[sweep_during_p99]:-0}"')
has mem_worker_private_kb && v_mem=$(met fge 8192 "${R[mem_worker_private_kb]}")
v_et="" v_el=""
has embed_text_ms && v_et=$(met fge 50 "${R[embed_text_ms]}")
has embedload_during_p99 && v_el=$(met fge "$(awk -v b="${R[embedload_before_p99]:-0}" 'BEGIN { print 2 * b }')" \
    "${R[embedload_during_p99]}")

{
echo "## make bench, $(date -u +%Y-%m-%d)"
echo
echo "Machine: $(r machine), $(awk '/MemTotal/ {printf "%.0f GiB", $2 / 1048576}' /proc/meminfo), $(uname -sr)."
echo "nginx (2 workers), arps-fcgi ($(conf workers) workers, max_requests $(conf max_requests)), MariaDB and the load"
echo "generator (wrk, $BENCH_THREADS threads, loopback) all share those cores: the figures are ratios to"
echo "nginx serving a static body in the same run (row 1, the median of its runs around every row),"
echo "not a capacity figure.  HTTP rows: wrk ${R[http_conn]:-$CONN} connections, ${R[http_secs]:-$DUR} s each; a"
echo "target comparing two rows (2b, 2a) divides their ratios to the static runs around each."
echo
echo "| row | what | req/s | p50 ms | p99 ms | errors | ratio to row 1 | target | met |"
echo "|---|---|---:|---:|---:|---:|---:|---|---|"
trow 1 "nginx \`return 200\` of a fixed body" static "" ""
trow 2a "trivial FastCGI responder: fixed body" ceil_fixed ">= 0.3 of row 1" "$v_2a"
trow 2b "trivial FastCGI responder: 1 prepared PK SELECT" ceil_select "" ""
trow 3 "GET /api/v1/health" health "" ""
trow 3 "GET /api/v1/agents/me" me ">= 0.8 of row 2b" "$v_me"
trow 3 "GET /api/v1/wallet/balance" balance "" ""
trow 3 "GET /api/v1/wallet/transactions" tx "" ""
trow 3 "a 404 through FastCGI" notfound ">= 0.9 of row 2a" "$v_404"
el=""
[ "$(r avail_elig)" = 1 ] && el=", a quarter with eligibility"
trow 4 "GET /studies/available, 1,000 studies$el" avail1k "" ""
trow 4 "GET /studies/available, 10,000 studies$el" avail10k "p99 <= 20 ms, >= 0.5 of /agents/me" "$v_a10"
trow 4 "GET /studies/available, 100,000 studies$el" avail100k "p99 <= 50 ms" "$v_a100"
if has write_cycles_per_s; then
    printf '| 5 | write cycle accept -> open -> complete -> approve (innodb_flush_log_at_trx_commit=%s) | %s cycles/s | | %s | %s | | >= 800 cycles/s, 0 errors | %s |\n' \
        "$(r write_flush)" "$(r write_cycles_per_s)" "$(r write_p99)" "$(r write_errors)" "$v_w"
else
    echo "| 5 | write cycle accept -> open -> complete -> approve | not measured | | | | | >= 800 cycles/s, 0 errors | |"
fi
if has sweep_rows_per_s; then
    printf '| 6 | sweep over a %s-row backlog | %s rows/s | | %s during (%s before) | | | >= 5,000 rows/s, API p99 during <= 2x before | %s |\n' \
        "$(r sweep_n)" "$(r sweep_rows_per_s)" "$(r sweep_during_p99)" "$(r sweep_before_p99)" "$v_sw"
else
    echo "| 6 | sweep over a 100,000-row backlog | not measured | | | | | >= 5,000 rows/s, API p99 during <= 2x before | |"
fi
# Row 7 from make bench-matching's output when no part reported its keys.
if ! has match_embed60_ms && [ -f "$BENCH_DIR/matching.txt" ]; then
    R[match_embed60_ms]=$(awk '/^C encoder/ { for (i = 1; i <= NF; i++) if ($i == "ms") { print $(i - 1); exit } }' \
        "$BENCH_DIR/matching.txt")
    R[match_rank10k_ms]=$(awk '/^rank 10000 / { for (i = 1; i <= NF; i++) if ($i == "ms") { print $(i - 1); exit } }' \
        "$BENCH_DIR/matching.txt")
    [ -n "${R[match_embed60_ms]}" ] || unset 'R[match_embed60_ms]'
    [ -n "${R[match_rank10k_ms]}" ] || unset 'R[match_rank10k_ms]'
fi
if has match_embed60_ms || has match_rank10k_ms; then
    printf '| 7 | embed a 60-word bio; rank 10,000 studies (one core) | %s ms; %s ms | | | | | | |\n' \
        "$(r match_embed60_ms)" "$(r match_rank10k_ms)"
else
    echo "| 7 | embed a 60-word bio; rank 10,000 studies (one core) | not measured | | | | | | |"
fi
if has mem_worker_private_kb; then
    printf '| 8 | worker Private_Dirty max (mean) of %s; shared max (mean); MariaDB RSS | %s (%s) kB; %s (%s) kB; %s kB | | | | | private <= 8 MB, model shared | %s |\n' \
        "$(r mem_workers)" "$(r mem_worker_private_kb)" "$(r mem_worker_private_mean_kb)" "$(r mem_worker_shared_kb)" \
        "$(r mem_worker_shared_mean_kb)" "$(r mem_mariadb_rss_kb)" "$v_mem"
else
    echo "| 8 | worker private and shared memory; MariaDB RSS | not measured | | | | | private <= 8 MB, model shared | |"
fi
if has embed_text_ms; then
    printf '| 9 | embed a %s-word text, service model (%s), one core: median of %s, slower role | %s ms | | | | | <= 50 ms | %s |\n' \
        "$(r embed_text_words)" "$(r embed_text_model)" "$(r embed_text_runs)" "$(r embed_text_ms)" "$v_et"
else
    echo "| 9 | embed a 60-word text, service model, one core | not measured | | | | | <= 50 ms | |"
fi
if has reembed_per_s; then
    printf '| 9 | re-embed %s waiting bios, arps-embed --once | %s texts/s | | | | | report (a model switch of 10,000 texts: %s s) | %s |\n' \
        "$(r reembed_n)" "$(r reembed_per_s)" \
        "$(awk -v r="${R[reembed_per_s]}" 'BEGIN { if (r > 0) printf "%.0f", 10000 / r; else print "?" }')" \
        "$([ "$(r reembed_done)" = yes ] && echo "reported" || echo "NOT done: $(r reembed_done)")"
else
    echo "| 9 | re-embed 10,000 waiting texts, arps-embed --once | not measured | | | | | report texts/s | |"
fi
if has embedload_during_p99; then
    printf '| 9 | GET /agents/me while %s clients post bios (%s agents each, to the 429) and arps-embed works | %.0f req/s | %.2f | %.2f during (%.2f without) | %s | | p99 <= 2x without | %s |\n' \
        "$(r embedload_clients)" "$(r embedload_agents)" "$(r embedload_during_rps)" "$(r embedload_during_p50)" \
        "$(r embedload_during_p99)" "$(r embedload_before_p99)" "$(r embedload_errors)" "$v_el"
else
    echo "| 9 | API p99 while 6 clients post bios | not measured | | | | | p99 <= 2x without | |"
fi
if has fanout_during_p99; then
    v_fo=$(awk -v p="${R[fanout_during_p99]}" -v e="$(( ${R[fanout_events]:-0} + ${R[fanout_waiting]:-0} ))" \
        -v m="$(( ${R[fanout_studies]:-8} * ${R[fanout_n]:-200} ))" 'BEGIN { print (p < 50 && e <= m) ? "yes" : "no" }')
    printf '| 10 | GET /api/v1/health while %s studies are published over %s matching agents (matched_fanout %s) | | | %s during (%s before) | | | p99 < 50 ms, <= %s x N study.matched (%s at once + %s waiting) | %s |\n' \
        "$(r fanout_studies)" "$(r fanout_agents)" "$(r fanout_n)" "$(r fanout_during_p99)" "$(r fanout_before_p99)" \
        "$(r fanout_studies)" "$(r fanout_events)" "$(r fanout_waiting)" "$v_fo"
else
    echo "| 10 | /health while 8 studies are published over 30,000 matching agents | not measured | | | | | p99 < 50 ms, <= 8 x N study.matched | |"
fi
echo
echo "Details:"
echo
if has write_cpu_db_ms; then
    printf 'Write cycle: %s statements, %s COMMITs and %s InnoDB fsyncs a cycle; CPU a cycle: MariaDB %s ms, arps-fcgi %s ms,\n  nginx %s ms, the load driver %s ms (all on the same %s cores).\n' \
        "$(r write_stmts_per_cycle)" "$(r write_commits_per_cycle)" "$(r write_fsyncs_per_cycle)" "$(r write_cpu_db_ms)" \
        "$(r write_cpu_fcgi_ms)" "$(r write_cpu_nginx_ms)" "$(r write_cpu_driver_ms)" "$(nproc)"
fi
if [ -n "${R[sweep_secs]:-}" ]; then
    if [ "$(r sweep_done)" = yes ]; then
        printf 'Sweep backlog: %s due participations (%s timeouts + %s auto-approvals) settled in %.1f s = %s rows/s;\n' \
            "$(r sweep_n)" "$(r sweep_timeouts)" "$(r sweep_auto)" "$(r sweep_secs)" "$(r sweep_rows_per_s)"
    else
        printf 'Sweep backlog: %s due participations (%s timeouts + %s auto-approvals) NOT cleared: %s moved in %.0f s\n  = %s rows/s, so the whole backlog would take about %s s (%s);\n' \
            "$(r sweep_n)" "$(r sweep_timeouts)" "$(r sweep_auto)" "$(r sweep_moved)" "$(r sweep_secs)" \
            "$(r sweep_rows_per_s)" "$(r sweep_eta)" "$(r sweep_done)"
    fi
    printf '  meanwhile GET /api/v1/agents/me (%s): p50 %.2f -> %.2f ms, p99 %.2f -> %.2f ms, %.0f -> %.0f req/s (before -> during);\n' \
        "$(r sweep_load)" "$(r sweep_before_p50)" "$(r sweep_during_p50)" "$(r sweep_before_p99)" \
        "$(r sweep_during_p99)" "$(r sweep_before_rps)" "$(r sweep_during_rps)"
    echo "  an agent's POST /studies/{id}/accept on the study being swept, sent 2 s in: $(r sweep_probe);"
    if [ "$(r sweep_done)" = yes ]; then
        echo "  after it: every row moved exactly once, a second sweep moved none; checks $(r sweep_checks), verify-ledger $(r sweep_verify)."
    else
        echo "  after it: each row it moved had moved exactly once, none was lost; verify-ledger $(r sweep_verify)."
    fi
fi
if [ -n "${R[sweep_events]:-}" ]; then
    printf 'Events: %s written with the sweep'"'"'s changes = %s events/s.\n' "$(r sweep_events)" "$(r sweep_events_per_s)"
fi
if [ -n "${R[events_delivery_per_s]:-}" ]; then
    printf 'Webhooks: %s deliveries to a local receiver in %s s = %s deliveries/s (target 1000).\n' \
        "$(r events_deliveries)" "$(r events_delivery_secs)" "$(r events_delivery_per_s)"
fi
if [ -f "$BENCH_DIR/matching.txt" ]; then
    awk '/^C encoder/ { for (i = 1; i <= NF; i++) if ($i == "ms") c = $(i - 1) }
         /^JS reference/ { for (i = 1; i <= NF; i++) if ($i == "ms") j = $(i - 1) }
         /^rank / { n = $2; for (i = 1; i <= NF; i++) if ($i == "ms" && m == "") m = $(i - 1) }
         END { if (c != "" && j != "") printf "Matching (one core): C encoder %s ms per bio vs %s ms for the JS reference (%.1fx); ranking %s studies %s ms.\n", c, j, j / c, n, m }' \
        "$BENCH_DIR/matching.txt"
fi
if has embed_text_ms; then
    printf 'Embedding (one core, %s): a %s-word text is %s tokens as a bio (BERT query role, median %s ms) and %s as\n  criteria (passage, median %s ms), %s runs each.\n' \
        "$(r embed_text_core)" "$(r embed_text_words)" "$(r embed_text_query_tokens)" "$(r embed_text_query_ms)" \
        "$(r embed_text_passage_tokens)" "$(r embed_text_passage_ms)" "$(r embed_text_runs)"
fi
if has reembed_per_s; then
    printf 'Re-embedding: %s unclaimed agents seeded with different ~60-word bios (arps-fixture seed-bios, %s s), then\n  arps-embed --once: %s ready in %s s = %s texts/s; arps-embed (nice 10) had %s%% of one core, %s texts per CPU second.\n' \
        "$(r reembed_n)" "$(r reembed_seed_secs)" "$(r reembed_ready)" "$(r reembed_secs)" "$(r reembed_per_s)" \
        "$(r reembed_cpu_pct)" "$(r reembed_per_cpu_s)"
fi
if has embedload_during_p99; then
    printf 'Bio load: %s clients, each rotating over %s agents and posting each a new ~4,900-character bio until its 429\n  (bio_updates_per_hour), then leaving it for its Retry-After: %s stored (POST p50 %s ms, p99 %s ms), %s answered 429;\n  arps-embed at %s%% of a core, %s texts still waiting at the end.  GET /api/v1/agents/me (%s): p50 %.2f -> %.2f ms,\n  p99 %.2f -> %.2f ms (%sx), %.0f -> %.0f req/s (without -> with the clients).\n' \
        "$(r embedload_clients)" "$(r embedload_agents)" "$(r embedload_posted)" "$(r embedload_post_p50)" \
        "$(r embedload_post_p99)" "$(r embedload_limited)" "$(r embedload_embed_cpu_pct)" "$(r embedload_queue_end)" \
        "$(r embedload_load)" "$(r embedload_before_p50)" "$(r embedload_during_p50)" "$(r embedload_before_p99)" \
        "$(r embedload_during_p99)" "$(r embedload_ratio)" "$(r embedload_before_rps)" "$(r embedload_during_rps)"
    has embedload_after_p99 && printf '  Right after, arps-embed alone working off that backlog (%s texts left after): p50 %.2f ms, p99 %.2f ms.\n' \
        "$(r embedload_after_queue)" "$(r embedload_after_p50)" "$(r embedload_after_p99)"
fi
echo "Total bench time: $(( $(date +%s) - T0 )) s."
} >"$BENCH_DIR/summary.md"
echo
echo "== summary =="
cat "$BENCH_DIR/summary.md"
LATEST=${BENCH_LATEST:-$ROOT/bench/results/latest.md}
mkdir -p "$(dirname "$LATEST")"
{
    echo "# Benchmark results (issue 16)"
    echo
    echo "Written by \`make bench\` (tools/bench.sh) from one run; see docs/design.md §15."
    echo
    cat "$BENCH_DIR/summary.md"
} >"$LATEST"
echo "bench: the table is in ${LATEST#"$ROOT"/}"
if [ ${#FAIL[@]} -gt 0 ]; then
    echo "bench: FAILED checks: ${FAIL[*]}" >&2
    exit 1
fi
