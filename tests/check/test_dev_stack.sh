#!/usr/bin/env bash
# make run's dev stack as a user meets it (issue 36 finding 8, issue 37):
#   1. its secrets are the user's alone: var/arps.conf and migrate.conf 0600,
#      the sockets' directory 0700, also when an older run left them open;
#      the application's MariaDB user holds production's row grants
#      (db/setup.c db_setup_grant_app), not ALL, and an older run's
#      all-privilege user is gone;
#   2. it starts the dev identity provider on port + 2 and prints the
#      console's URL; SIGINT to its process group (Ctrl-C) and SIGTERM to
#      make alone each end every process of it within 10 s, also when it was
#      started as `setsid make run &` from a script (SIGINT ignored on entry);
#   3. `make demo` fills it (counts read back through the API) and refuses a
#      second run.
# A stack of its own under var/check-run on a free port (ARPS_CHECK_PORT,
# default the first free one from 18210 on, the API's and port + 2).
# Exit 0 when every check passed; prints each failure.
set -uo pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
VAR=$ROOT/var/check-run
LOG=$VAR.log
FAILS=0
MAKE_PID=

say() { printf 'test_dev_stack: %s\n' "$*" >&2; }
ok() { say "ok: $*"; }
fail() { say "FAIL: $*"; FAILS=$((FAILS + 1)); }
listening() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

PORT=${ARPS_CHECK_PORT:-}
if [ -z "$PORT" ]; then
    for p in $(seq 18210 3 18400); do
        listening "$p" || listening $((p + 2)) || { PORT=$p; break; }
    done
fi
[ -n "$PORT" ] || { say "no free port"; exit 1; }
API=http://127.0.0.1:$PORT/api/v1
SQL=(mariadb --no-defaults -N -B -S "$VAR/run/mysqld.sock" -u "$(id -un)")

# The processes of make run's session (setsid: its session id is make's pid).
session() { ps -e -o pid=,sid=,args= | awk -v s="$1" '$2 == s'; }

cleanup() {
    if [ -n "$MAKE_PID" ] && [ -n "$(session "$MAKE_PID")" ]; then
        kill -KILL -- -"$MAKE_PID" 2>/dev/null
        [ -f "$VAR/run/mysqld.pid" ] && kill -KILL "$(cat "$VAR/run/mysqld.pid")" 2>/dev/null
    fi
}
trap cleanup EXIT

# start: `setsid make run &` as a script starts it (SIGINT ignored on entry).
start() {
    local i
    : > "$LOG"
    setsid env ARPS_VAR="$VAR" PORT="$PORT" make -s -C "$ROOT" run </dev/null >>"$LOG" 2>&1 &
    MAKE_PID=$!
    for i in $(seq 1 3000); do
        grep -q 'arps is running' "$LOG" && curl -fsS "$API/health" >/dev/null 2>&1 && return 0
        kill -0 "$MAKE_PID" 2>/dev/null || break
        sleep 0.1
    done
    say "make run did not come up; its output:"
    tail -30 "$LOG" >&2
    exit 1
}

# stop SIGNAL TARGET: send it, then every process of the session must be
# gone within 10 s, MariaDB included.
stop() {
    local sig=$1 target=$2 i left db
    db=$(cat "$VAR/run/mysqld.pid" 2>/dev/null)
    kill -"$sig" -- "$target"
    for i in $(seq 1 100); do
        left=$(session "$MAKE_PID")
        [ -z "$left" ] && ! { [ -n "$db" ] && kill -0 "$db" 2>/dev/null; } && break
        sleep 0.1
    done
    left=$(session "$MAKE_PID")
    if [ -z "$left" ] && ! { [ -n "$db" ] && kill -0 "$db" 2>/dev/null; }; then
        ok "SIG$sig to $target: every process gone within $((i / 10)).$((i % 10)) s"
    else
        fail "SIG$sig to $target: still running after 10 s:"$'\n'"$left"
        kill -KILL -- -"$MAKE_PID" 2>/dev/null
        [ -n "$db" ] && kill -KILL "$db" 2>/dev/null
        sleep 1
    fi
    listening "$PORT" && fail "port $PORT still answers after the stop"
    listening $((PORT + 2)) && fail "port $((PORT + 2)) (identity provider) still answers after the stop"
    MAKE_PID=
}

mode() { stat -c '%a' "$1" 2>/dev/null; }

check_secrets() {
    [ "$(mode "$VAR/arps.conf")" = 600 ] && ok "arps.conf 0600" || fail "arps.conf is $(mode "$VAR/arps.conf"), not 600"
    [ "$(mode "$VAR/migrate.conf")" = 600 ] && ok "migrate.conf 0600" ||
        fail "migrate.conf is $(mode "$VAR/migrate.conf"), not 600"
    [ "$(mode "$VAR/run")" = 700 ] && ok "socket directory 0700" || fail "$VAR/run is $(mode "$VAR/run"), not 700"
    [ "$(mode "$VAR/mail")" = 700 ] || fail "$VAR/mail (login codes) is $(mode "$VAR/mail"), not 700"
    [ "$(mode "$VAR/idp/dev-rsa.pem")" = 600 ] || fail "the identity provider's key is $(mode "$VAR/idp/dev-rsa.pem")"
    # Another user cannot reach the MariaDB socket.
    if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null; then
        if setpriv --reuid=65534 --regid=65534 --clear-groups \
            mariadb-admin --no-defaults -S "$VAR/run/mysqld.sock" -u nobody ping >/dev/null 2>&1 ||
            setpriv --reuid=65534 --regid=65534 --clear-groups test -w "$VAR/run/mysqld.sock"; then
            fail "user nobody reaches the MariaDB socket"
        else
            ok "user nobody cannot reach the MariaDB socket"
        fi
    fi
}

# The application's user: production's grants, table by table.
check_grants() {
    local user grants tables t want got n
    user=$(sed -n 's/^db_user *= *//p' "$VAR/arps.conf" | tail -1)
    [ "$user" = arps_app ] && ok "db_user is arps_app" || fail "db_user is '$user', not arps_app"
    grants=$("${SQL[@]}" -e "SHOW GRANTS FOR 'arps_app'@'localhost'" 2>&1)
    if grep -q 'ALL PRIVILEGES' <<<"$grants"; then fail "arps_app holds ALL: $(grep 'ALL' <<<"$grants")"; fi
    if grep -v '^GRANT USAGE ON \*\.\* ' <<<"$grants" | grep -q 'ON \*\.\* \|ON `arps[a-z_]*`\.\* '; then
        fail "arps_app holds a global or database-wide privilege: $grants"
    fi
    tables=$("${SQL[@]}" -e "SELECT table_name FROM information_schema.tables WHERE table_schema = 'arps'
        AND table_type = 'BASE TABLE'")
    # append-only as db/setup.c's is_append_only: the two ledger tables, or a
    # *_no_update / *_no_delete trigger a migration gave (bonuses, ...)
    appendonly=$("${SQL[@]}" -e "SELECT DISTINCT event_object_table FROM information_schema.triggers
        WHERE event_object_schema = 'arps'
          AND (trigger_name LIKE '%\\_no\\_update' OR trigger_name LIKE '%\\_no\\_delete')")
    n=0
    for t in $tables; do
        case "$t" in
        schema_version) want='SELECT' ;;
        ledger_postings | transactions) want='SELECT, INSERT' ;;
        *) want='SELECT, INSERT, UPDATE, DELETE' ;;
        esac
        grep -qx "$t" <<<"$appendonly" && want='SELECT, INSERT'
        got=$(sed -n "s/^GRANT \(.*\) ON \`arps\`\.\`$t\` TO .*/\1/p" <<<"$grants")
        [ "$got" = "$want" ] || { fail "arps_app on $t: '$got', production gives '$want'"; n=$((n + 1)); }
    done
    [ "$n" = 0 ] && ok "arps_app: production's grants on each of $(wc -w <<<"$tables") tables"
    # And the server holds it to them.
    if mariadb --no-defaults -S "$VAR/run/mysqld.sock" -u arps_app \
        -p"$(sed -n 's/^db_password *= *//p' "$VAR/arps.conf" | tail -1)" arps \
        -e 'CREATE TABLE check_run_ddl (a INT)' >/dev/null 2>&1; then
        fail "arps_app created a table"
        "${SQL[@]}" arps -e 'DROP TABLE IF EXISTS check_run_ddl'
    fi
    [ -z "$("${SQL[@]}" -e "SELECT user FROM mysql.user WHERE user = 'arps'")" ] ||
        fail "the all-privilege user arps of an older run is still there"
}

check_idp_and_urls() {
    local url code
    grep -q "http://127.0.0.1:$PORT/ " "$LOG" && ok "prints the console's URL" ||
        fail "make run does not print the console's URL http://127.0.0.1:$PORT/: $(grep -i running "$LOG")"
    grep -q "http://127.0.0.1:$PORT/api/v1/" "$LOG" || fail "make run does not print the API's URL"
    url=$(curl -fsS "$API/auth/providers" | sed -n 's/.*"authorization_endpoint":"\([^"]*\)".*/\1/p')
    [ "$url" = "http://127.0.0.1:$((PORT + 2))/authorize" ] || fail "GET /auth/providers: authorize URL '$url'"
    code=$(curl -s -o "$VAR.idp.html" -w '%{http_code}' "$url?response_type=id_token&client_id=arps-dev&scope=openid%20email&state=s&nonce=n&redirect_uri=http://127.0.0.1:$PORT/")
    if [ "$code" = 200 ] && grep -q 'Dev identity provider' "$VAR.idp.html"; then
        ok "the dev identity provider answers at $url"
    else
        fail "the dev identity provider at $url answers $code"
    fi
    rm -f "$VAR.idp.html"
}

# json KEY: the first string or number value of KEY in stdin.
json() { python3 -c 'import json,sys; d=json.load(sys.stdin); print(eval(sys.argv[1], {}, {"d": d}))' "$1"; }

check_demo() {
    local out token key studies n states i avail agent
    if ! out=$(ARPS_VAR="$VAR" make -s -C "$ROOT" demo 2>&1); then
        fail "make demo: $out"
        return
    fi
    ok "make demo ran"
    token=$(sed -n 's/^ *curl: *TOKEN=\(act_[A-Za-z0-9_-]*\).*/\1/p' <<<"$out")
    [ -n "$token" ] || { fail "make demo printed no researcher token: $out"; return; }
    grep -q 'demo-researcher@example.org' <<<"$out" || fail "make demo does not name the researcher's e-mail"
    studies=$(curl -fsS "$API/studies?limit=100" -H "Authorization: Bearer $token")
    n=$(json 'len([s for s in d["studies"] if s["status"] == "active"])' <<<"$studies")
    [ "$n" = 4 ] && ok "demo: 4 active studies" || fail "demo: $n active studies, not 4"
    states=$(for i in $(json '" ".join(s["id"] for s in d["studies"])' <<<"$studies"); do
        curl -fsS "$API/studies/$i/participants?limit=100" -H "Authorization: Bearer $token" |
            json '" ".join(p["status"] for p in d["participants"])'
    done | tr ' ' '\n' | grep -v '^$' | sort | xargs)
    [ "$states" = "accepted approved in_progress rejected submitted" ] &&
        ok "demo: participations accepted, approved, in_progress, rejected, submitted" ||
        fail "demo: participations '$states'"
    n=$(curl -fsS "$API/wallet/balance" -H "Authorization: Bearer $token" | json 'd["available_cents"] + d["frozen_cents"] > 0')
    [ "$n" = True ] || fail "demo: the researcher's wallet is empty"
    n=0
    for key in $(grep -o 'arps_live_[A-Za-z0-9_-]*' <<<"$out" | sort -u); do
        [ "$(curl -fsS "$API/agents/me" -H "X-API-Key: $key" | json 'd["status"]')" = claimed ] && n=$((n + 1))
    done
    [ "$n" = 4 ] && ok "demo: 4 claimed agents, keys printed" || fail "demo: $n claimed agents with printed keys, not 4"
    # A new agent, claimed by the demo owner, sees the demo's studies at once
    # (once its bio is embedded), not after first_access_minutes.
    agent=$(curl -fsS -X POST "$API/agents/register" -H 'Content-Type: application/json' -d '{"name":"Newcomer"}')
    key=$(json 'd["api_key"]' <<<"$agent")
    curl -fsS -X POST "$API/profile/bio" -H "X-API-Key: $key" -H 'Content-Type: application/json' \
        -d '{"bio":"Night-shift nurse who grows tomatoes on a balcony."}' >/dev/null
    curl -fsS -X POST "$API/auth/claim" -H 'Content-Type: application/json' \
        -H "Authorization: Bearer $(sed -n 's/^ *curl: *OWNER_TOKEN=\(act_[A-Za-z0-9_-]*\).*/\1/p' <<<"$out")" \
        -d "{\"claim_code\":\"$(json 'd["claim_code"]' <<<"$agent")\"}" >/dev/null
    for i in $(seq 1 300); do
        avail=$(curl -fsS "$API/studies/available" -H "X-API-Key: $key" | json 'len(d["studies"])')
        [ "$avail" -gt 0 ] 2>/dev/null && break
        sleep 0.1
    done
    [ "$avail" -ge 3 ] 2>/dev/null && ok "demo: a new standard agent sees $avail studies at once" ||
        fail "demo: a new standard agent sees $avail studies"
    if out=$(ARPS_VAR="$VAR" make -s -C "$ROOT" demo 2>&1); then
        fail "a second make demo succeeded"
    else
        grep -q 'already' <<<"$out" && ok "a second make demo refuses: $out" || fail "a second make demo: $out"
    fi
}

cd "$ROOT" || exit 1
make -s all build/tests/arps-fixture >/dev/null || exit 1
rm -rf "$VAR"
mkdir -p "$ROOT/var"
say "stack under $VAR on port $PORT"

# 1: a fresh stack; Ctrl-C reaches the whole process group.
start
check_secrets
check_grants
check_idp_and_urls
check_demo
# What an older run left: open modes, the all-privilege user arps.
"${SQL[@]}" -e "CREATE USER IF NOT EXISTS 'arps'@'localhost' IDENTIFIED BY 'old';
    GRANT ALL ON arps.* TO 'arps'@'localhost'"
stop INT -"$MAKE_PID"

# 2: the same var/ as an older run left it; SIGTERM to make alone.
chmod 0644 "$VAR/arps.conf" "$VAR/migrate.conf"
chmod 0777 "$VAR/run" "$VAR/mail"
sed -i 's/^db_user = .*/db_user = arps/' "$VAR/arps.conf"
start
check_secrets
check_grants
stop TERM "$MAKE_PID"

if [ "$FAILS" -gt 0 ]; then
    say "$FAILS check(s) failed"
    exit 1
fi
rm -rf "$VAR" "$LOG"
say "all checks passed"
