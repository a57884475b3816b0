#!/usr/bin/env bash
# Rows 4 and 7 of make bench (issue 16; run by tools/bench.sh, BENCH_SKIP
# word `avail`): GET /api/v1/studies/available over 1,000, 10,000 and
# 100,000 open one-slot studies for one priority agent, and the matching
# micro-benchmarks on one core.
#
# Studies: 8 created through the API with distinct screening criteria (the
# real encoder embeds each), then cloned by `arps-fixture studies-clone`
# (tests/lib/fixture.c: txn_study_create, frozen from the researcher's wallet, the
# template's vector copied as ready) until the open count reaches each size.
# Each size: a warm-up (every worker's index takes the new studies from the
# change sequence), GET /agents/me for reference, then wrk at
# BENCH_CONNECTIONS on the listing, with the prepared statements MariaDB
# ran per poll meanwhile.  Keys: http_avail1k_* / 10k / 100k
# (_rps _p50 _p99 _errors _studies _statements), http_availme_rps (GET /agents/me of
# the same agent before the rows), match_embed60_ms, match_rank10k_ms.
#
#   BENCH_AVAIL_SIZES   the sizes (default "1000 10000 100000")
#   BENCH_AVAIL_SETTLE  seconds after seeding before the warm-up (default 10)
#   BENCH_AVAIL_ELIG    1 (default): a quarter of the studies have eligibility
#                       (design.md §14), the ones the agent matches best: one
#                       template's clones include a group the agent is in,
#                       another's exclude a study it took part in; 0: none
#   BENCH_SECONDS, BENCH_WARMUP, BENCH_CONNECTIONS as tools/bench.sh
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
. tools/bench-lib.sh

DUR=${BENCH_SECONDS:-10}
WARM=${BENCH_WARMUP:-2}
CONN=${BENCH_CONNECTIONS:-32}
SIZES=${BENCH_AVAIL_SIZES:-1000 10000 100000}
ELIG=${BENCH_AVAIL_ELIG:-1}
B=$ARPS_BASE_URL
FAIL=0
bench_tools

echo "== GET /studies/available over N open studies (wrk $CONN connections, ${DUR} s) =="
# A claimed priority agent with a ready bio.
register bench-avail-agent 127.0.0.5
KEY=$AGENT_KEY AGENT=$AGENT_ID CLAIM=$AGENT_CLAIM
login bench-avail-owner
api POST /api/v1/auth/claim "{\"claim_code\":\"$CLAIM\"}" "Authorization: Bearer $TOKEN" >/dev/null
api POST /api/v1/profile/bio '{"bio":"I am a coding assistant that reviews C and shell code, writes tests, and answers questions about databases, networking and developer tools."}' \
    "X-API-Key: $KEY" >/dev/null
fixture agent-reputation "$AGENT" 80
HDR="X-API-Key: $KEY"

# The researcher: one-slot studies of 1 cent (slot 2 cents with the fee).
login bench-avail-res
MAXN=0
for n in $SIZES; do [ "$n" -gt "$MAXN" ] && MAXN=$n; done
admin topup "$ACC_ID" $(( 2 * (MAXN + 100) )) >/dev/null
CRITS=("Agents that write C code every day" "Agents that know SQL databases well"
    "Anyone interested in developer tools" "Agents that translate between languages"
    "Agents with experience in web frontends" "Agents who summarise scientific papers"
    "Agents that help with customer support" "Agents that plan travel itineraries")
EXTRA=()
if [ "$ELIG" = 1 ]; then
    # The agent takes part in a study S0 of this researcher and joins a
    # group by that participation; the first template (the agent's best
    # match) includes the group, the second excludes S0's participants.
    RES="Authorization: Bearer $TOKEN"
    S0=$(create_study "$TOKEN" 1 1 "Agents that write C code every day")
    wait_embeddings "$AGENT" "$S0"
    api POST "/api/v1/studies/$S0/accept" "" "$HDR" >/dev/null
    api POST "/api/v1/studies/$S0/complete" "" "$HDR" >/dev/null
    P0=$(api GET "/api/v1/studies/$S0/participants" "" "$RES" | jq -r '.participants[0].participant_id')
    G=$(api POST /api/v1/groups '{"name":"Bench wave one"}' "$RES" | jq -r .id)
    api POST "/api/v1/groups/$G/members" "{\"members\":[{\"study_id\":\"$S0\",\"participant_id\":\"$P0\"}]}" \
        "$RES" >/dev/null
    EXTRA=("{\"eligibility\":{\"include_groups\":[\"$G\"]}}"
        "{\"eligibility\":{\"exclude_studies\":[\"$S0\"]}}")
fi
TPL=()
for i in "${!CRITS[@]}"; do TPL+=("$(create_study "$TOKEN" 1 1 "${CRITS[$i]}" "${EXTRA[$i]:-}")"); done
wait_embeddings "$AGENT" "${TPL[@]}"
MINE=${#TPL[@]}	# this researcher's studies so far

open_count() {
    sqlq "SELECT COUNT(*) FROM studies s JOIN embeddings e ON e.subject_id = s.id AND e.status = 'ready'
          WHERE s.status = 'active' AND s.occupied < s.max_participants"
}

# warm: parallel requests until every worker has answered after the change
# (the first answer of each applies the new studies to its index), then
# BENCH_AVAIL_SETTLE seconds (default 10) for the pool's master to take the
# bulk of new studies into its own copy, which it reads 100 ms at a time
# (every 200 ms while behind, fcgi/pool.c): until then each worker recycled
# after max_requests starts behind and reads the rest at its first answer
# (design.md §9.12).
warm() {
    local i
    sleep "${BENCH_AVAIL_SETTLE:-10}"
    for i in 1 2 3; do
        seq 1 16 | xargs -P 8 -I{} curl -s -o /dev/null --max-time 120 -H "$HDR" \
            "$B/api/v1/studies/available" || true
    done
    [ "$WARM" -gt 0 ] && wrk_cmd "$BENCH_DIR/wrk-avail-warm.txt" "$CONN" "$WARM" "$B/api/v1/studies/available" "$HDR"
    return 0
}

# MariaDB's count of prepared statements executed (the statements a poll
# costs: 1 when nothing changed since the worker's last look, design.md §9.12).
stmts() {
    sqlq "SELECT VARIABLE_VALUE FROM information_schema.GLOBAL_STATUS WHERE VARIABLE_NAME = 'COM_STMT_EXECUTE'"
}

label() { awk -v n="$1" 'BEGIN { if (n % 1000 == 0) printf "%dk", n / 1000; else printf "%d", n }'; }

# GET /agents/me of the same agent, the reference of the targets (issue 16)
ROWS=()
wrk_cmd "$BENCH_DIR/wrk-availme.txt" "$CONN" "$DUR" "$B/api/v1/agents/me" "$HDR"
wrk_parse "$BENCH_DIR/wrk-availme.txt"
result http_availme_rps "$W_RPS"
result avail_elig "$ELIG"
ROWS+=("GET /agents/me (reference)|$W_RPS|$W_P50|$W_P99|$((W_NON2XX + W_SOCKERR))|same agent")
for n in $SIZES; do
    t0=$(date +%s.%N)
    want=$(( n - MINE ))
    if [ "$want" -gt 0 ]; then	# spread over the templates
        per=$(( want / ${#TPL[@]} )); extra=$(( want % ${#TPL[@]} ))
        for i in "${!TPL[@]}"; do
            k=$(( per + (i < extra ? 1 : 0) ))
            [ "$k" -gt 0 ] && fixture studies-clone "${TPL[$i]}" "$k"
        done
        MINE=$(( MINE + want ))
    fi
    seeded=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
    open=$(open_count)
    t0=$(date +%s.%N)
    warm
    warmed=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
    k=http_avail$(label "$n")
    body=$(curl -s --max-time 30 -H "$HDR" "$B/api/v1/studies/available")
    listed=$(jq '.studies | length' <<<"$body" 2>/dev/null || echo 0)
    [ "$listed" -eq 20 ] || { echo "  FAIL the listing has $listed studies, not 20"; FAIL=1; }
    st0=$(stmts)
    wrk_cmd "$BENCH_DIR/wrk-$k.txt" "$CONN" "$DUR" "$B/api/v1/studies/available" "$HDR"
    wrk_parse "$BENCH_DIR/wrk-$k.txt"
    st1=$(stmts)
    spp=$(awk -v a="$st0" -v b="$st1" -v n="$W_REQ" 'BEGIN { printf "%.2f", (n > 0 ? (b - a) / n : 0) }')
    result "${k}_statements" "$spp"
    err=$((W_NON2XX + W_SOCKERR))
    [ "$err" -eq 0 ] || { echo "  FAIL $k: $W_NON2XX non-2xx, $W_SOCKERR socket errors"; FAIL=1; }
    result "${k}_rps" "$W_RPS"; result "${k}_p50" "$W_P50"; result "${k}_p99" "$W_P99"
    result "${k}_errors" "$err"; result "${k}_studies" "$open"
    ROWS+=("GET /studies/available, $open open|$W_RPS|$W_P50|$W_P99|$err|seeded ${seeded} s, warm-up ${warmed} s, $spp statements a poll, eligibility $ELIG")
    printf 'bench: %-40s %.0f req/s\n' "available over $open" "$W_RPS" >&2
done
printf '%-44s %9s %8s %8s %7s  %s\n' row req/s "p50 ms" "p99 ms" errors note
for line in "${ROWS[@]}"; do
    IFS='|' read -r l rps p50 p99 err note <<<"$line"
    printf '%-44s %9.0f %8.2f %8.2f %7d  %s\n' "$l" "$rps" "$p50" "$p99" "$err" "$note"
done
admin verify-ledger >/dev/null || { echo "  FAIL verify-ledger after seeding"; FAIL=1; }

echo
echo "== matching on one core (row 7) =="
ONE=()
command -v taskset >/dev/null 2>&1 && ONE=(taskset -c 0)
make -s build/tests/matching/match_bench build/model/use-lite.bin >/dev/null
out=$("${ONE[@]}" build/tests/matching/match_bench build/model/use-lite.bin tests/matching/bench_bio.txt)
printf '%s\n' "$out" | grep -v '^result '
while read -r _ key val; do result "$key" "$val"; done < <(printf '%s\n' "$out" | grep '^result ')
printf 'embedding a %s-word bio %s ms; ranking 10,000 studies %s ms (median)\n' \
    "$(wc -w <tests/matching/bench_bio.txt)" \
    "$(printf '%s\n' "$out" | awk '$2 == "match_embed60_ms" {print $3}')" \
    "$(printf '%s\n' "$out" | awk '$2 == "match_rank10k_ms" {print $3}')"
exit "$FAIL"
