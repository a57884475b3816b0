#!/usr/bin/env bash
# make bench: throughput and latency of the stack as ratios against nginx
# answering a static body on the same machine in the same run, then the sweep
# backlog under API load (tools/bench-sweep.sh), then the matching benchmarks,
# then a summary.  Needs the fresh stack of tools/dev.sh bench (ARPS_* set).
# Loopback only; every load is bounded in time (wrk -d, timeout).
#
#   BENCH_SECONDS       length of each measured wrk run (default 10)
#   BENCH_WARMUP        unmeasured wrk run before each row (default 2)
#   BENCH_CONNECTIONS   wrk connections for the HTTP table (default 32)
#   BENCH_THREADS       wrk threads (default 2)
#   BENCH_AVAIL_STUDIES studies the /studies/available agent ranks (default 50)
#   BENCH_SKIP          words out of: http sweep events matching (skip those parts)
#   BENCH_EVENTS_*      see tools/bench-events.sh
#   BENCH_SWEEP_*       see tools/bench-sweep.sh (BENCH_SWEEP_N=2000 for a quick run)
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
    base 0
    row "GET /api/v1/health (FastCGI + 1 query)" health /api/v1/health "" 200 "pings MariaDB"; base 1
    row "GET /api/v1/agents/me (API key + DB)" me /api/v1/agents/me "X-API-Key: $key" 200 "claimed agent"; base 2
    row "GET /api/v1/nope (404 via FastCGI)" notfound /api/v1/nope "" 404 "routing miss"; base 3
    row "GET /api/v1/studies/available" available /api/v1/studies/available "X-API-Key: $key" 200 \
        "ranks $NAV studies, lists $navail"; base 4
    row "GET /api/v1/wallet/balance (API key)" balance /api/v1/wallet/balance "X-API-Key: $key" 200 "agent wallet"; base 5
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
    result http_static_median "$med"
    result http_static_spread "$(printf '%s\n' "${SR[@]}" | sort -g | awk 'NR == 1 { lo = $1 } { hi = $1 } END { printf "%.0f..%.0f", lo, hi }')"
    result http_conn "$CONN"; result http_secs "$DUR"
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
}

if [[ $SKIP != *" http "* ]]; then http_part; fi

if [[ $SKIP != *" sweep "* ]]; then
    echo
    tools/bench-sweep.sh || FAIL+=(sweep)
fi

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

# ---- summary ----
declare -A R
while IFS='=' read -r k v; do R[$k]=$v; done <"$RESULTS"
r() { printf '%s' "${R[$1]:-?}"; }
hrow() { printf '  %-34s %6s  %7.0f req/s   p50 %6.2f ms   p99 %6.2f ms\n' "$1" "$(r "http_$2_ratio")" \
    "$(r "http_$2_rps")" "$(r "http_$2_p50")" "$(r "http_$2_p99")"; }
echo
echo "== summary =="
echo "Measured by \`make bench\` on $(r machine), $(date -u +%Y-%m-%d); nginx, arps-fcgi ($(conf workers) workers),"
echo "MariaDB and the load generator (wrk, loopback) all share those cores, so the figures are ratios"
echo "to nginx serving a static body in the same run, not a capacity figure."
if [ -n "${R[http_static_median]:-}" ]; then
    echo "HTTP, $(r http_conn) connections, $(r http_secs) s per row; ratio = req/s over nginx's static body measured"
    echo "just before and after the row:"
    printf '  %-34s %6s  %7.0f req/s   (median of the baseline runs; spread %s)\n' "nginx static body" 1 \
        "$(r http_static_median)" "$(r http_static_spread)"
    hrow "GET /api/v1/health" health
    hrow "GET /api/v1/agents/me" me
    hrow "404 through FastCGI" notfound
    hrow "GET /api/v1/studies/available" available
    hrow "GET /api/v1/wallet/balance" balance
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
echo "Total bench time: $(( $(date +%s) - T0 )) s."
if [ ${#FAIL[@]} -gt 0 ]; then
    echo "bench: FAILED checks: ${FAIL[*]}" >&2
    exit 1
fi
