#!/usr/bin/env bash
# make bench: throughput and latency of the stack, as ratios against nginx
# answering a static body on the same machine in the same run, then the
# matching benchmarks.  Needs the stack of tools/dev.sh bench (ARPS_* set).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
command -v wrk >/dev/null || { [ "$(id -u)" -eq 0 ] && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq wrk >/dev/null; }
B=$ARPS_BASE_URL
DUR=${BENCH_SECONDS:-5}
CONN=${BENCH_CONNECTIONS:-32}

# An agent and its key for the authenticated endpoints.
REG=$(curl -fsS -X POST "$B/api/v1/agents/register" -H 'Content-Type: application/json' \
      -d '{"name":"bench"}' --interface 127.0.0.2)
KEY=$(printf '%s' "$REG" | sed -n 's/.*"api_key":"\([^"]*\)".*/\1/p')

run() {	# name url [header]
    local name=$1 url=$2 hdr=${3:-}
    local out
    if [ -n "$hdr" ]; then
        out=$(wrk -t2 -c"$CONN" -d"${DUR}s" --latency -H "$hdr" "$url")
    else
        out=$(wrk -t2 -c"$CONN" -d"${DUR}s" --latency "$url")
    fi
    local rps p50 p99 non2xx
    rps=$(printf '%s\n' "$out" | awk '/Requests\/sec/ {print $2}')
    p50=$(printf '%s\n' "$out" | awk '$1=="50%" {print $2}')
    p99=$(printf '%s\n' "$out" | awk '$1=="99%" {print $2}')
    non2xx=$(printf '%s\n' "$out" | awk '/Non-2xx/ {print $4}')
    printf '%-28s %12s req/s   p50 %-9s p99 %-9s non-2xx %s\n' "$name" "$rps" "$p50" "$p99" "${non2xx:-0}" >&2
    echo "$rps"
}

echo "== HTTP throughput, ${CONN} connections, ${DUR}s each (2 cores shared with the server) =="
static=$(run "nginx static body" "$B/bench/static")
health=$(run "GET /health (FastCGI+DB)" "$B/api/v1/health")
me=$(run "GET /agents/me (auth+DB)" "$B/api/v1/agents/me" "X-API-Key: $KEY")
notfound=$(run "GET unknown path (FastCGI)" "$B/api/v1/nope")
awk -v s="$static" -v h="$health" -v m="$me" -v n="$notfound" 'BEGIN {
    printf "ratios to the static body: 404 via FastCGI %.2f, health %.2f, agents/me %.2f\n", n/s, h/s, m/s }'
echo
echo "== matching (one core) =="
make -s bench-matching
