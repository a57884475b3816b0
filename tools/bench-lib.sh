# Helpers shared by tools/bench.sh and tools/bench-sweep.sh (sourced, not run).
# Needs ARPS_BASE_URL, ARPS_CONFIG, ARPS_VAR (set by tools/dev.sh bench).
# Everything talks to 127.0.0.0/8 only.

: "${ARPS_BASE_URL:?run through make bench}" "${ARPS_CONFIG:?}" "${ARPS_VAR:?}"
BENCH_DIR=$ARPS_VAR/bench
mkdir -p "$BENCH_DIR"
RESULTS=$BENCH_DIR/results.env	# key=value lines for the closing summary
BENCH_THREADS=${BENCH_THREADS:-2}

die() { printf 'bench: FAILED: %s\n' "$*" >&2; exit 1; }

# wrk and jq, from apt when missing (sudo when not root).
bench_tools() {
    local missing=() t sudo=""
    for t in wrk jq; do command -v "$t" >/dev/null 2>&1 || missing+=("$t"); done
    [ ${#missing[@]} -eq 0 ] && return 0
    [ "$(id -u)" -ne 0 ] && sudo=sudo
    printf 'bench: installing %s\n' "${missing[*]}" >&2
    $sudo apt-get update -qq && DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq \
        --no-install-recommends "${missing[@]}" >/dev/null || die "cannot install ${missing[*]}"
}

# A read-only query as the local superuser over the stack's socket;
# tab-separated, no header.  Writes go through arps-fixture (fixture).
sqlq() {
    mariadb --no-defaults -N -B -S "$ARPS_VAR/run/mysqld.sock" -u "$(id -un)" arps -e "$1"
}

admin() { build/arps-admin --config "$ARPS_CONFIG" "$@"; }

# cpu_ms: CPU milliseconds used so far, as "mariadb fcgi nginx": MariaDB;
# the FastCGI pool (its master, the live workers, and every worker it has
# reaped: a recycled worker's time is in its parent's cutime/cstime); the
# nginx master and workers.  Differences of two readings are a row's CPU.
cpu_ms() {
    local hz fm nm
    hz=$(getconf CLK_TCK)
    fm=$(cat "$ARPS_VAR/run/arps-fcgi.pid")
    nm=$(cat "$ARPS_VAR/run/nginx.pid")
    ticks() {	# utime + stime (+ cutime + cstime with "all") of each pid
        local p
        for p in "${@:2}"; do
            sed 's/^.*) //' "/proc/$p/stat" 2>/dev/null
        done | awk -v all="$1" '{ t += $12 + $13; if (all) t += $14 + $15 } END { print t + 0 }'
    }
    # shellcheck disable=SC2046
    echo "$(ticks 0 "$(cat "$ARPS_VAR/run/mysqld.pid")") $(ticks 1 "$fm") $(ticks 0 $(pgrep -P "$fm")) $(ticks 0 "$nm" $(pgrep -P "$nm"))" |
        awk -v hz="$hz" '{ printf "%d %d %d\n", $1 * 1000 / hz, ($2 + $3) * 1000 / hz, $4 * 1000 / hz }'
}

# fixture VERB ARGS...: one test fixture (tests/lib/fixture.h; the bench stack's
# config has test_fixtures = true), its output discarded; dies when refused.
fixture() { build/tests/arps-fixture --config "$ARPS_CONFIG" "$@" >/dev/null || die "arps-fixture $*: refused"; }

# studies_backdate SECONDS ID...: the studies created SECONDS earlier (past
# first access), ten ids per arps-admin run.
studies_backdate() {
    local s=$1
    shift
    while [ $# -gt 0 ]; do
        fixture study-backdate "$s" "${@:1:10}"
        shift $(( $# < 10 ? $# : 10 ))
    done
}

# api METHOD PATH [BODY] [HEADER] [SOURCE_IP]: the body to stdout; dies unless 2xx.
api() {
    local m=$1 p=$2 body=${3:-} hdr=${4:-} ip=${5:-127.0.0.1} out code
    local args=(-sS --max-time 10 --interface "$ip" -X "$m" -o "$BENCH_DIR/api.out" -w '%{http_code}')
    [ -n "$body" ] && args+=(-H 'Content-Type: application/json' --data-binary "$body")
    [ -n "$hdr" ] && args+=(-H "$hdr")
    code=$(curl "${args[@]}" "$ARPS_BASE_URL$p") || die "$m $p: curl failed"
    out=$(cat "$BENCH_DIR/api.out")
    case $code in 2??) ;; *) die "$m $p: HTTP $code $out" ;; esac
    printf '%s' "$out"
}

# Register an agent from source address $2; sets AGENT_ID AGENT_KEY AGENT_CLAIM.
register() {
    local r
    r=$(api POST /api/v1/agents/register "{\"name\":\"$1\",\"description\":\"benchmark agent\"}" "" "$2")
    AGENT_ID=$(jq -r .agent_id <<<"$r")
    AGENT_KEY=$(jq -r .api_key <<<"$r")
    AGENT_CLAIM=$(jq -r .claim_code <<<"$r")
}

# Log in by e-mail code as a fresh address tagged $1; sets TOKEN ACC_ID.
login() {
    local email f code="" i r
    email="$1-$(od -An -tx4 -N4 /dev/urandom | tr -d ' ')@example.org"
    api POST /api/v1/auth/email/send-code "{\"email\":\"$email\"}" >/dev/null
    for i in $(seq 1 50); do
        f=$(grep -lx "To: $email" "$ARPS_VAR"/mail/*.eml 2>/dev/null | head -1 || true)
        [ -n "$f" ] && code=$(sed -n 's/.*login code is \([0-9]\{6\}\).*/\1/p' "$f" | head -1)
        [ -n "$code" ] && break
        sleep 0.1
    done
    [ -n "$code" ] || die "no login code mailed to $email"
    r=$(api POST /api/v1/auth/login "{\"provider\":\"email\",\"email\":\"$email\",\"code\":\"$code\"}")
    TOKEN=$(jq -r .access_token <<<"$r")
    ACC_ID=$(jq -r .account.id <<<"$r")
}

# create_study TOKEN REWARD MAX CRITERIA [EXTRA]: the new study id to stdout;
# EXTRA, a JSON object, is merged into the body.
create_study() {
    local body
    body=$(jq -cn --argjson rw "$2" --argjson mx "$3" --arg c "$4" --argjson x "${5:-{\}}" '{title: "Benchmark study",
        description: "A study created by make bench.", study_url: "https://survey.example.org/b",
        reward_per_participant: $rw, max_participants: $mx, screening_criteria: $c,
        estimated_duration_minutes: 10} + $x')
    api POST /api/v1/studies "$body" "Authorization: Bearer $1" | jq -r .id
}

# wait_embeddings N ID...: until every subject's embedding is ready (10 s at most).
wait_embeddings() {
    local ids i n
    ids=$(printf "'%s'," "$@")
    for i in $(seq 1 100); do
        n=$(sqlq "SELECT COUNT(*) FROM embeddings WHERE status = 'ready' AND subject_id IN (${ids%,})")
        [ "$n" -eq $# ] && return 0
        sleep 0.1
    done
    die "embeddings not ready after 10 s ($n of $#)"
}

# A wrk latency ("812.00us", "1.55ms", "2.01s", "1.00m") in milliseconds.
ms() {
    awk -v v="$1" 'BEGIN { n = v + 0; u = v; sub(/^[0-9.]+/, "", u);
        f = (u == "us") ? 0.001 : (u == "ms") ? 1 : (u == "s") ? 1000 : (u == "m") ? 60000 : -1;
        if (f < 0) { print "nan"; exit } printf "%.3f", n * f }'
}

# Parse wrk output (file $1) into W_RPS W_REQ W_P50 W_P90 W_P99 (ms) W_NON2XX W_SOCKERR W_SECS.
wrk_parse() {
    local f=$1
    W_RPS=$(awk '/^Requests\/sec:/ {print $2}' "$f")
    W_REQ=$(awk '/ requests in / {print $1}' "$f")
    W_SECS=$(awk '/ requests in / {s = $4; sub(/,$/, "", s); print s}' "$f")
    W_P50=$(ms "$(awk '$1 == "50%" {print $2}' "$f")")
    W_P90=$(ms "$(awk '$1 == "90%" {print $2}' "$f")")
    W_P99=$(ms "$(awk '$1 == "99%" {print $2}' "$f")")
    W_NON2XX=$(awk '/Non-2xx or 3xx responses:/ {print $NF}' "$f")
    W_NON2XX=${W_NON2XX:-0}
    # "Socket errors: connect 0, read 3, write 0, timeout 0"
    W_SOCKERR=$(awk '/Socket errors:/ {gsub(/,/, ""); print $4 + $6 + $8 + $10}' "$f")
    W_SOCKERR=${W_SOCKERR:-0}
    [ -n "$W_RPS" ] && [ -n "$W_REQ" ] && [ "$W_P99" != nan ] || die "cannot parse wrk output $f"
}

# wrk_argv CONNS SECONDS URL [HEADER] [LUA]: the wrk command line into WRK_ARGV.
wrk_argv() {
    local c=$1 d=$2 url=$3 hdr=${4:-} lua=${5:-}
    WRK_ARGV=(wrk -t"$BENCH_THREADS" -c"$c" -d"${d}s" --timeout 5s --latency)
    [ -n "$hdr" ] && WRK_ARGV+=(-H "$hdr")
    [ -n "$lua" ] && WRK_ARGV+=(-s "$lua")
    WRK_ARGV+=("$url")
}

# wrk_cmd OUT CONNS SECONDS URL [HEADER] [LUA]: run wrk, its report into OUT.
wrk_cmd() {
    local out=$1
    shift
    wrk_argv "$@"
    "${WRK_ARGV[@]}" >"$out" 2>&1
}

# result KEY VALUE: remember a figure for the summary.
result() { printf '%s=%s\n' "$1" "$2" >>"$RESULTS"; }
