#!/usr/bin/env bash
# The dev stack (design.md §8).
#   dev.sh deps [SET]      install missing Debian packages: the dev stack's,
#                          plus SET = deb (packaging tools) or production
#                          (packaging tools + debootstrap, systemd-nspawn) or cluster
#                          (galera-4, rsync, jq: make test-cluster)
#   dev.sh run             build, start MariaDB + arps-fcgi + arps-deliver + arps-embed + nginx
#                          and the dev identity provider under var/, stay in foreground until
#                          SIGINT or SIGTERM (or make, its parent, is gone); stops them all
#   dev.sh demo            fill the running make run stack with demo data (tools/demo.mjs)
#   dev.sh stop            stop a make run stack by its pid files (ARPS_VAR, default var/)
#   dev.sh test [KIND]     KIND = all | unit | db | api | browser | schemathesis: fresh stack
#                          under var/test, run suites (browser: the console in headless
#                          chromium, tests/browser/; schemathesis: the contract fuzzer,
#                          tools/schemathesis.sh, also run by all and api)
#   dev.sh bench           benchmarks against a fresh stack
#   dev.sh test-production make test-production unless ARPS_SKIP_PRODUCTION=1
#                          outside CI (the last step of make test)
#   dev.sh db-stop|db-start|db-freeze|db-thaw   the test stack's MariaDB (ARPS_VAR):
#                          stop, start, SIGSTOP, SIGCONT
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
# The pool binary: build/asan/arps-fcgi under make test-asan.
FCGI_BIN=${ARPS_FCGI_BIN:-build/arps-fcgi}
cd "$ROOT"

PKGS="gcc make pkg-config libfcgi-dev libjson-c-dev libmariadb-dev libsodium-dev libcmocka-dev
      libcurl4-openssl-dev libssl-dev mariadb-server mariadb-client nginx openssl curl
      ca-certificates procps python3-yaml strace chromium clang libclang-rt-dev"
# `make deb` and `make test-production` (mk/deb.mk) need these as well.
DEB_PKGS="debhelper dpkg-dev lintian fakeroot"
PROD_PKGS="$DEB_PKGS jq debootstrap systemd-container debian-archive-keyring util-linux iproute2"
# `make test-cluster` (tests/cluster/cluster.sh, design.md §16).
CLUSTER_PKGS="galera-4 rsync jq iproute2"
PIDS=()

say() { printf 'arps: %s\n' "$*" >&2; }

deps() {
    local missing=() p want=$PKGS
    case "${1:-}" in
    deb) want="$PKGS $DEB_PKGS" ;;
    production) want="$PKGS $PROD_PKGS" ;;
    cluster) want="$PKGS $CLUSTER_PKGS" ;;
    esac
    for p in $want; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
    done
    command -v npm >/dev/null 2>&1 || missing+=(nodejs npm)
    [ ${#missing[@]} -eq 0 ] && return 0
    say "installing ${missing[*]}"
    local sudo=""
    [ "$(id -u)" -ne 0 ] && sudo=sudo
    # Keep apt from starting system services: the dev stack runs its own.
    local policy=0
    if [ ! -e /usr/sbin/policy-rc.d ]; then
        printf '#!/bin/sh\nexit 101\n' | $sudo tee /usr/sbin/policy-rc.d >/dev/null
        $sudo chmod 755 /usr/sbin/policy-rc.d
        policy=1
    fi
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
    [ $policy -eq 1 ] && $sudo rm -f /usr/sbin/policy-rc.d
    return 0
}

hex32() { od -An -tx1 -N32 /dev/urandom | tr -d ' \n'; }

# Write $VAR/arps.conf once, with fresh random secrets.  The secrets are the
# user's alone (issue 36, finding 8): the config and migrate.conf 0600, the
# directories of the sockets, the login mails and the identity provider's
# keys 0700, also when an older run left them open.
config() {
    mkdir -p "$VAR"/{db,run,log,mail,nginx,idp}
    chmod 0700 "$VAR/run" "$VAR/mail" "$VAR/idp"
    if [ ! -f "$VAR/arps.conf" ]; then
        (umask 077; cat > "$VAR/arps.conf.tmp") <<CONF
# arps dev configuration, written by tools/dev.sh (secrets are random per checkout)
listen = $VAR/run/arps.sock
workers = ${ARPS_WORKERS:-4}
max_requests = ${ARPS_MAX_REQUESTS:-1000}
shutdown_timeout = 10
db_socket = $VAR/run/mysqld.sock
db_user = arps_app
db_password = $(hex32)
db_name = arps
migrations_dir = $ROOT/db/migrations
pepper = $(hex32)
id_secret = $(hex32)
fee_bps = 1000
signup_bonus_cents = 100
model_path = $ROOT/build/model/arps.bin
mail_transport = file:$VAR/mail
mail_from = arps@localhost
base_url = http://127.0.0.1:$PORT
idp.dev.issuer = arps-dev-idp
idp.dev.audience = arps-dev
idp.dev.jwks = $VAR/idp/jwks.json
idp.dev.link_email = true
idp.dev2.issuer = arps-dev2-idp
idp.dev2.audience = arps-dev
idp.dev2.jwks = $VAR/idp/jwks.json
test_fixtures = true
CONF
        mv "$VAR/arps.conf.tmp" "$VAR/arps.conf"
    fi
    chmod 0600 "$VAR/arps.conf"
    # The application's MariaDB user is production's arps_app (admin/setup.c);
    # a config of an older run named the all-privilege user arps.
    sed -i 's/^db_user = arps$/db_user = arps_app/' "$VAR/arps.conf"
    # arps_migrate's credentials, beside the config as setup-db writes them:
    # `arps-admin migrate` reads them (admin/setup.c setup_migrate_config).
    if [ ! -f "$VAR/migrate.conf" ]; then
        (umask 077; printf '# arps_migrate: DDL, used only by arps-admin migrate (tools/dev.sh)\ndb_user = arps_migrate\ndb_password = %s\n' \
            "$(hex32)" > "$VAR/migrate.conf")
    fi
    chmod 0600 "$VAR/migrate.conf"
    # The key match_selfcheck is gone (the self-check is a switch of the
    # test build, make test-asan): a config written before loses it.
    sed -i '/^match_selfcheck *=/d' "$VAR/arps.conf"
    # The service's model is build/model/arps.bin (design.md §7.4); a config
    # written when it was USE Lite moves to it.
    sed -i "s|^model_path = .*/build/model/use-lite.bin\$|model_path = $ROOT/build/model/arps.bin|" "$VAR/arps.conf"
    # Webhooks to the test receiver on loopback (design.md §9.8); the short
    # retry back-off lets the delivery tests see retries in seconds.
    grep -q '^webhooks_allow_loopback' "$VAR/arps.conf" || cat >> "$VAR/arps.conf" <<CONF
webhooks_allow_loopback = true
webhook_retry_first_seconds = 1
webhook_timeout_seconds = 3
CONF
    # arps-embed looks at an empty queue every 50 ms (250 in production), so a
    # bio is ready about as soon as the encoder has run.
    grep -q '^embed_poll_ms' "$VAR/arps.conf" || echo "embed_poll_ms = 50" >> "$VAR/arps.conf"
    # Browser sign-in with `dev` (design.md §12): the console sends the browser
    # to this URL, where tests/browser/idp.mjs answers (the browser test runs
    # its own; make run starts it, start_idp). Port: the stack's + 2.
    grep -q '^idp\.dev\.authorize_url' "$VAR/arps.conf" || cat >> "$VAR/arps.conf" <<CONF
idp.dev.authorize_url = http://127.0.0.1:${ARPS_IDP_PORT:-$((PORT + 2))}/authorize
idp.dev.client_id = arps-dev
idp.dev.label = Dev identity provider
CONF
    # The dev identity provider's key pairs (design.md §6.11).
    [ -f "$VAR/idp/dev-rsa.pem" ] || (umask 077; openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 \
        -out "$VAR/idp/dev-rsa.pem" 2>/dev/null)
    [ -f "$VAR/idp/dev-ed25519.pem" ] || (umask 077; openssl genpkey -algorithm ED25519 \
        -out "$VAR/idp/dev-ed25519.pem" 2>/dev/null)
    if [ ! -f "$VAR/idp/jwks.json" ]; then
        build/arps-admin --config "$VAR/arps.conf" jwks "$VAR/idp/dev-rsa.pem=dev-rsa" \
            "$VAR/idp/dev-ed25519.pem=dev-ed25519" > "$VAR/idp/jwks.json.tmp" &&
            mv "$VAR/idp/jwks.json.tmp" "$VAR/idp/jwks.json"
    fi
    return 0
}

conf() { sed -n "s/^$1 *= *//p" "${2:-$VAR/arps.conf}" | head -1; }

start_mariadb() {
    local me sock="$VAR/run/mysqld.sock" i
    me=$(id -un)
    if [ ! -d "$VAR/db/mysql" ]; then
        say "initialising MariaDB in $VAR/db"
        # --force skips the script's look-up of the host name (a fresh host
        # whose name does not resolve, or no /etc/hosts at all, would stop
        # it: "Neither host ... nor 'localhost' could be looked up");
        # --skip-name-resolve keeps every grant on 'localhost', which the
        # unix socket always is.  Nothing here depends on the host name.
        mariadb-install-db --no-defaults --force --skip-name-resolve --datadir="$VAR/db" \
            --user="$me" --auth-root-authentication-method=socket --skip-test-db \
            >"$VAR/log/install-db.log" 2>&1 || { tail -20 "$VAR/log/install-db.log" >&2; exit 1; }
    fi
    mariadbd_bg
    PIDS+=($!)
    DB_PID=$!
    wait_mariadb
    # The users of production (admin/setup.c, db/setup.c): arps_migrate
    # holds the DDL (its password in migrate.conf), arps_app only row access
    # table by table (grant_app, after the migrations).  Tests and fixtures
    # that need more use the socket's own account ($me), as the operator's
    # root does in production.
    mariadb --no-defaults -S "$sock" -u "$me" <<SQL
CREATE DATABASE IF NOT EXISTS arps CHARACTER SET utf8mb4 COLLATE utf8mb4_bin;
-- tests/db/test_match_engine.c: a database of its own (the index it tests
-- holds every open study of its database), migrated as arps_migrate
CREATE DATABASE IF NOT EXISTS arps_match_test CHARACTER SET utf8mb4 COLLATE utf8mb4_bin;
-- an older dev stack's application user, with ALL
DROP USER IF EXISTS 'arps'@'localhost';
CREATE USER IF NOT EXISTS 'arps_migrate'@'localhost' IDENTIFIED BY '$(conf db_password "$VAR/migrate.conf")';
ALTER USER 'arps_migrate'@'localhost' IDENTIFIED BY '$(conf db_password "$VAR/migrate.conf")';
GRANT ALL PRIVILEGES ON arps.* TO 'arps_migrate'@'localhost';
GRANT ALL PRIVILEGES ON arps_match_test.* TO 'arps_migrate'@'localhost';
CREATE USER IF NOT EXISTS 'arps_app'@'localhost' IDENTIFIED BY '$(conf db_password)';
ALTER USER 'arps_app'@'localhost' IDENTIFIED BY '$(conf db_password)';
SQL
    build/arps-admin --config "$VAR/arps.conf" migrate >/dev/null
    grant_app
}

# arps_app's grants as db_setup_grant_app (db/setup.c) gives them in
# production: no global or database-wide privilege; per table SELECT,
# INSERT, UPDATE, DELETE; SELECT, INSERT on an append-only table (a
# *_no_update or *_no_delete trigger, or the two ledger tables); SELECT on
# schema_version.  Run after every migrate, before anything connects.
grant_app() {
    local me sock="$VAR/run/mysqld.sock"
    me=$(id -un)
    {
        echo "REVOKE ALL PRIVILEGES, GRANT OPTION FROM 'arps_app'@'localhost';"
        mariadb --no-defaults -N -B -S "$sock" -u "$me" <<'SQL'
SELECT CONCAT('GRANT ',
    CASE WHEN t.table_name = 'schema_version' THEN 'SELECT'
         WHEN t.table_name IN ('ledger_postings', 'transactions') OR EXISTS (
             SELECT 1 FROM information_schema.triggers g
             WHERE g.event_object_schema = t.table_schema AND g.event_object_table = t.table_name
               AND (g.trigger_name LIKE '%\_no\_update' OR g.trigger_name LIKE '%\_no\_delete'))
         THEN 'SELECT, INSERT'
         ELSE 'SELECT, INSERT, UPDATE, DELETE' END,
    ' ON `arps`.`', t.table_name, '` TO ''arps_app''@''localhost'';')
FROM information_schema.tables t
WHERE t.table_schema = 'arps' AND t.table_type = 'BASE TABLE' ORDER BY t.table_name;
SQL
    } | mariadb --no-defaults -S "$sock" -u "$me"
}

mariadbd_bg() {
    /usr/sbin/mariadbd --no-defaults --datadir="$VAR/db" --socket="$VAR/run/mysqld.sock" \
        --pid-file="$VAR/run/mysqld.pid" --skip-networking --skip-name-resolve --user="$(id -un)" \
        --log-error="$VAR/log/mariadb.log" --innodb-buffer-pool-size=256M \
        --innodb-flush-log-at-trx-commit=2 --max-connections=500 \
        --character-set-server=utf8mb4 --collation-server=utf8mb4_bin </dev/null >/dev/null 2>&1 &
}

wait_mariadb() {
    local i
    for i in $(seq 1 300); do
        mariadb-admin --no-defaults -S "$VAR/run/mysqld.sock" -u "$(id -un)" ping >/dev/null 2>&1 && return 0
        sleep 0.1
    done
    say "MariaDB failed to start:"
    tail -20 "$VAR/log/mariadb.log" >&2
    exit 1
}

# Stop the stack's MariaDB by its pid file and wait until it is gone.
stop_mariadb() {
    local p i
    [ -f "$VAR/run/mysqld.pid" ] || return 0
    p=$(cat "$VAR/run/mysqld.pid")
    kill -TERM "$p" 2>/dev/null || return 0
    for i in $(seq 1 300); do
        kill -0 "$p" 2>/dev/null || return 0
        sleep 0.1
    done
    kill -KILL "$p" 2>/dev/null || true
}

start_pool() {
    "$FCGI_BIN" --config "$VAR/arps.conf" 2>>"$VAR/log/arps.log" &
    PIDS+=($!)
    echo $! > "$VAR/run/arps-fcgi.pid"
}

# The long-running daemons beside the pool: arps-deliver (the outbox,
# design.md §1.5: writes var/mail/ in the dev stack) and arps-embed (the
# embedding queue, design.md §1.6: the only process that runs the encoder).
# start_daemon NAME [CONFIG]; stop_daemon NAME stops the one of the pid file
# (ours, or one a test restarted) and waits until it is gone: SIGTERM lets
# it finish the message or text in hand.
start_daemon() {
    build/arps-$1 --config "${2:-$VAR/arps.conf}" </dev/null >/dev/null 2>>"$VAR/log/$1.log" &
    PIDS+=($!)
    echo $! > "$VAR/run/arps-$1.pid"
}

stop_daemon() {
    local p i
    [ -f "$VAR/run/arps-$1.pid" ] || return 0
    p=$(cat "$VAR/run/arps-$1.pid")
    rm -f "$VAR/run/arps-$1.pid"
    kill -TERM "$p" 2>/dev/null || return 0
    for i in $(seq 1 300); do
        kill -0 "$p" 2>/dev/null || return 0
        sleep 0.1
    done
    kill -KILL "$p" 2>/dev/null || true
}

start_nginx() {
    sed -e "s|@SOCKET@|$VAR/run/arps.sock|g" -e "s|@BURST@|100000|g" nginx/arps-api.inc > "$VAR/nginx/arps-api.inc"
    # the request log's format: production's own lines (nginx/arps.conf), not a copy
    # (from its first line to the first that ends the directive, that line included)
    awk '/^log_format arps /{f=1} f{print} f&&/;[[:space:]]*(#.*)?$/{exit}' nginx/arps.conf > "$VAR/nginx/arps-log.inc"
    grep -q ';' "$VAR/nginx/arps-log.inc" || { say "no log_format arps in nginx/arps.conf"; return 1; }
    sed -e "s|@VAR@|$VAR|g" -e "s|@PORT@|$PORT|g" -e "s|@USER@|$(id -un) $(id -gn)|g" -e "s|@ROOT@|$ROOT|g" \
        nginx/arps-dev.conf.in > "$VAR/nginx/nginx.conf"
    nginx -p "$VAR/nginx" -c "$VAR/nginx/nginx.conf" -e "$VAR/log/nginx-error.log" -g 'daemon off;' </dev/null >/dev/null 2>&1 &
    PIDS+=($!)
    echo $! > "$VAR/run/nginx.wrapper.pid"
    local i
    for i in $(seq 1 100); do
        curl -fsS "http://127.0.0.1:$PORT/api/v1/health" >/dev/null 2>&1 && return 0
        sleep 0.1
    done
    say "the stack did not answer /api/v1/health; see $VAR/log/"
    tail -5 "$VAR/log/nginx-error.log" "$VAR/log/arps.log" >&2 || true
    return 1
}

# 0 when any of the pids is a live process.
alive() {
    local p
    for p in "$@"; do
        kill -0 "$p" 2>/dev/null && return 0
    done
    return 1
}

# Stop the stack: SIGTERM to every process of it but MariaDB at once (ours,
# and by pid file a pool, deliverer or embedder a test restarted), up to 5 s
# for them to finish what is in hand, then SIGKILL; then MariaDB.
stop_all() {
    local p f i pids=()
    for p in "${PIDS[@]}"; do
        [ "$p" = "${DB_PID:-}" ] || pids+=("$p")
    done
    PIDS=()
    if [ -n "${VAR:-}" ]; then
        for f in arps-deliver arps-embed arps-fcgi idp nginx.wrapper; do
            [ -f "$VAR/run/$f.pid" ] || continue
            pids+=("$(cat "$VAR/run/$f.pid")")
            rm -f "$VAR/run/$f.pid"
        done
    fi
    if [ ${#pids[@]} -gt 0 ]; then
        kill -TERM "${pids[@]}" 2>/dev/null || true
        for i in $(seq 1 50); do
            alive "${pids[@]}" || break
            sleep 0.1
        done
        kill -KILL "${pids[@]}" 2>/dev/null || true
        for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
    fi
    [ -z "${VAR:-}" ] || { stop_mariadb; rm -f "$VAR/run/dev.pid"; }
    [ -z "${DB_PID:-}" ] || wait "$DB_PID" 2>/dev/null || true
    DB_PID=
    return 0
}

# The dev identity provider (tests/browser/idp.mjs) where the config's
# idp.dev.authorize_url points, so the console's "Sign in with Dev identity
# provider" works under make run (design.md §12).
start_idp() {
    ARPS_VAR="$VAR" node tests/browser/idp.mjs </dev/null >>"$VAR/log/idp.log" 2>&1 &
    PIDS+=($!)
    echo $! > "$VAR/run/idp.pid"
    local i url
    url=$(conf idp.dev.authorize_url)
    for i in $(seq 1 100); do
        [ "$(curl -s -o /dev/null -w '%{http_code}' "$url" 2>/dev/null)" = 400 ] && return 0
        sleep 0.1
    done
    say "the dev identity provider did not answer at $url; see $VAR/log/idp.log"
    return 1
}

up() {
    deps
    make -s all model
    config
    start_mariadb
    start_pool
    start_daemon deliver
    start_daemon embed
    start_nginx
}

# Run each test binary of a kind; print cmocka's summaries, count tests.
PASSED=0
FAILED=0
BROKEN=()
suite() {
    local kind=$1 t out rc
    # make test-asan runs the sanitized binaries of build/asan.
    for t in "${ARPS_TEST_BIN_DIR:-build}"/tests/"$kind"/test_*; do
        [ -x "$t" ] || continue
        # ARPS_ONLY="test_agents test_accounts" runs only those binaries.
        if [ -n "${ARPS_ONLY:-}" ] && ! printf ' %s ' "$ARPS_ONLY" | grep -q " $(basename "$t") "; then
            continue
        fi
        say "suite $t"
        out=$(mktemp)
        set +e
        "$t" 2>&1 | tee "$out"
        rc=${PIPESTATUS[0]}
        set -e
        PASSED=$((PASSED + $(sed -n 's/^\[  PASSED  \] \([0-9]*\) test.*/\1/p' "$out" | awk '{s+=$1} END {print s+0}')))
        FAILED=$((FAILED + $(sed -n 's/^\[  FAILED  \] \([0-9]*\) test.*/\1/p' "$out" | awk '{s+=$1} END {print s+0}')))
        rm -f "$out"
        [ "$rc" -eq 0 ] || BROKEN+=("$t")
    done
}

# The console's browser suite (tests/browser/, design.md §12): playwright-core
# from build/browser (make browser-deps) driving /usr/bin/chromium headless;
# its cmocka-style summary is counted like the C suites'.
browser_suite() {
    local out rc
    make -s browser-deps
    say "suite tests/browser/console.test.mjs"
    out=$(mktemp)
    set +e
    node tests/browser/console.test.mjs 2>&1 | tee "$out"
    rc=${PIPESTATUS[0]}
    set -e
    PASSED=$((PASSED + $(sed -n 's/^\[  PASSED  \] \([0-9]*\) test.*/\1/p' "$out" | awk '{s+=$1} END {print s+0}')))
    FAILED=$((FAILED + $(sed -n 's/^\[  FAILED  \] \([0-9]*\) test.*/\1/p' "$out" | awk '{s+=$1} END {print s+0}')))
    rm -f "$out"
    [ "$rc" -eq 0 ] || BROKEN+=("tests/browser/console.test.mjs")
}

# Schemathesis against the stack (tools/schemathesis.sh, design.md §11.1):
# one suite, counted as one test; under ARPS_ONLY only when it names
# "schemathesis".
schemathesis_suite() {
    if [ -n "${ARPS_ONLY:-}" ] && ! printf ' %s ' "$ARPS_ONLY" | grep -q " schemathesis "; then
        return 0
    fi
    say "suite tools/schemathesis.sh"
    if tools/schemathesis.sh; then
        PASSED=$((PASSED + 1))
    else
        FAILED=$((FAILED + 1))
        BROKEN+=("schemathesis (tools/schemathesis.sh; report in $VAR/log/schemathesis/)")
    fi
}

case "${1:-run}" in
deps)
    deps "${2:-}"
    ;;
run)
    # A command started in the background by a non-interactive shell
    # (`setsid make run &` in a script) has SIGINT ignored, and bash cannot
    # trap a signal ignored on entry: start again with the default actions.
    if [ -z "${ARPS_RUN_SIGNALS:-}" ]; then
        ARPS_RUN_SIGNALS=1 exec env --default-signal=INT,TERM,HUP "$ROOT/tools/dev.sh" "$@"
    fi
    VAR=${ARPS_VAR:-$ROOT/var}
    PORT=${PORT:-8080}
    PARENT=$PPID
    SLEEPER=
    # Ctrl-C (SIGINT to the process group), SIGTERM (make forwards it) or
    # SIGHUP: everything stops, MariaDB last, within a few seconds.
    trap '[ -z "$SLEEPER" ] || kill "$SLEEPER" 2>/dev/null; stop_all; say "stopped"; exit 0' INT TERM HUP
    trap 'stop_all' EXIT
    up
    start_idp
    echo $$ > "$VAR/run/dev.pid"
    say "arps is running: the console at http://127.0.0.1:$PORT/ , the API at http://127.0.0.1:$PORT/api/v1/"
    say "sign in with an e-mail code (the mail lands in $VAR/mail/) or the Dev identity provider ($(conf idp.dev.authorize_url))"
    say "config: $VAR/arps.conf   logs: $VAR/log/   demo data: make demo   Ctrl-C stops it"
    # Until a signal, or until make (the parent) is gone without one.
    while kill -0 "$PARENT" 2>/dev/null; do
        sleep 1 &
        SLEEPER=$!
        wait "$SLEEPER" || true
        SLEEPER=
    done
    say "the parent process is gone: stopping"
    ;;
demo)
    # Demo data for a running make run stack (tools/demo.mjs; its base URL
    # is the config's).  Refuses a second run.
    VAR=${ARPS_VAR:-$ROOT/var}
    [ -f "$VAR/arps.conf" ] || { say "no $VAR/arps.conf: start the stack first (make run)"; exit 1; }
    ARPS_VAR="$VAR" ARPS_ROOT="$ROOT" node tools/demo.mjs
    ;;
stop)
    # A make run stack started elsewhere: its dev.sh stops it, or (gone
    # already) its pid files.
    VAR=${ARPS_VAR:-$ROOT/var}
    if [ -f "$VAR/run/dev.pid" ] && kill -TERM "$(cat "$VAR/run/dev.pid")" 2>/dev/null; then
        for i in $(seq 1 150); do
            kill -0 "$(cat "$VAR/run/dev.pid")" 2>/dev/null || exit 0
            sleep 0.1
        done
    fi
    stop_all
    ;;
test)
    kind=${2:-all}
    deps
    make -s all model tests openapi-deps
    [ -x tools/check-core-purity.sh ] && { tools/check-core-purity.sh || BROKEN+=("core purity"); }
    tools/check-deps.sh || BROKEN+=("dependency order of the daemons' code")
    tests/check/test_check_deps.sh >/dev/null || BROKEN+=("the dependency check's own test")
    tests/check/test_check_sql_home.sh >/dev/null || BROKEN+=("the SQL-home check's own test")
    [ -x tools/check-next-actions.sh ] && { tools/check-next-actions.sh || BROKEN+=("nextActions endpoints"); }
    tools/check-db-columns.sh || BROKEN+=("db column positions")
    tools/check-sql-home.sh || BROKEN+=("SQL outside db/")
    tools/check-citations.sh || BROKEN+=("citations of docs/design.md or docs/api.md")
    if [ "$kind" = all ]; then tools/check-nginx.sh || BROKEN+=("nginx production config"); fi
    # make run's own stack: secrets, grants, identity provider, make demo, stop on signals.
    if [ "$kind" = all ]; then
        tests/check/test_dev_stack.sh || BROKEN+=("make run's dev stack (tests/check/test_dev_stack.sh)")
    fi
    if [ "$kind" = all ] || [ "$kind" = unit ]; then suite unit; fi
    if [ "$kind" != unit ]; then
        VAR=${ARPS_TEST_VAR:-$ROOT/var/test}
        PORT=${ARPS_TEST_PORT:-18080}
        rm -rf "$VAR"
        trap 'stop_all' EXIT
        up
        export ARPS_CONFIG="$VAR/arps.conf" ARPS_BASE_URL="http://127.0.0.1:$PORT" ARPS_VAR="$VAR" ARPS_ROOT="$ROOT"
        if [ "$kind" = all ] || [ "$kind" = db ]; then suite db; fi
        if [ "$kind" = all ] || [ "$kind" = api ]; then
            # Every answer the API suites receive is recorded and checked
            # against docs/openapi.yaml, with the route table (design.md §11).
            export ARPS_RECORD_ANSWERS=${ARPS_RECORD_ANSWERS:-$VAR/log/answers.jsonl}
            : > "$ARPS_RECORD_ANSWERS"
            suite api
            say "contract: the answers against docs/openapi.yaml"
            node tools/openapi-selftest.mjs --fcgi "$FCGI_BIN" ||
                BROKEN+=("openapi check self-test (tools/openapi-selftest.mjs)")
            node tools/openapi-check.mjs --fcgi "$FCGI_BIN" --answers "$ARPS_RECORD_ANSWERS" ||
                BROKEN+=("openapi contract (tools/openapi-check.mjs)")
        fi
        if [ "$kind" = all ] || [ "$kind" = api ] || [ "$kind" = schemathesis ]; then
            schemathesis_suite
        fi
        if [ "$kind" = all ] || [ "$kind" = browser ]; then browser_suite; fi
        build/arps-admin verify-ledger || BROKEN+=("verify-ledger")
        stop_all
        # Under make test-asan: any report of a sanitizer in a worker fails the run.
        if grep -q "ERROR: AddressSanitizer\|runtime error:" "$VAR/log/arps.log"; then
            grep -m5 -A20 "ERROR: AddressSanitizer\|runtime error:" "$VAR/log/arps.log" >&2
            BROKEN+=("sanitizer report in $VAR/log/arps.log")
        fi
    fi
    echo "tests: $PASSED passed, $FAILED failed"
    if [ ${#BROKEN[@]} -gt 0 ]; then
        say "FAILED: ${BROKEN[*]}"
        exit 1
    fi
    ;;
test-production)
    # The last step of `make test`: always in CI; elsewhere it may be
    # skipped, never silently.
    if [ -z "${CI:-}" ] && [ "${ARPS_SKIP_PRODUCTION:-}" = 1 ]; then
        say "SKIPPED make test-production (ARPS_SKIP_PRODUCTION=1; CI always runs it)"
        exit 0
    fi
    deps production
    make --no-print-directory test-production
    ;;
pool-start)
    VAR=${ARPS_VAR:?}
    "$FCGI_BIN" --config "$VAR/arps.conf" </dev/null >/dev/null 2>>"$VAR/log/arps.log" &
    echo $! > "$VAR/run/arps-fcgi.pid"
    disown
    for i in $(seq 1 100); do
        [ -S "$VAR/run/arps.sock" ] && exit 0
        sleep 0.1
    done
    exit 1
    ;;
deliver-start|embed-start)
    VAR=${ARPS_VAR:?}
    start_daemon "${1%-start}" "${2:-}"
    disown
    ;;
deliver-stop|embed-stop)
    VAR=${ARPS_VAR:?}
    stop_daemon "${1%-stop}"
    ;;
db-stop)
    VAR=${ARPS_VAR:?}
    stop_mariadb
    ;;
db-start)
    VAR=${ARPS_VAR:?}
    mariadbd_bg
    disown
    wait_mariadb
    ;;
db-freeze|db-thaw)
    # A MariaDB that hangs (SIGSTOP) rather than stops (tests/api/test_faults.c).
    VAR=${ARPS_VAR:?}
    # SIGSTOP takes effect in each thread asynchronously: the freeze waits
    # until every thread of the server is stopped (state T), so the caller's
    # next request meets a server that cannot answer, and fails loudly if it
    # does not stop within 2 s.
    p=$(cat "$VAR/run/mysqld.pid")
    if [ "$1" = db-thaw ]; then kill -CONT "$p"; exit 0; fi
    kill -STOP "$p"
    for i in $(seq 1 200); do
        states=$(cat /proc/"$p"/task/*/stat 2>/dev/null | sed 's/^.*) \(.\).*$/\1/' | sort -u | tr -d '\n')
        [ "$states" = T ] && exit 0
        sleep 0.01
    done
    say "db-freeze: MariaDB ($p) did not stop: thread states '$states'"
    exit 1
    ;;
bench)
    VAR=${ARPS_TEST_VAR:-$ROOT/var/bench}
    PORT=${ARPS_BENCH_PORT:-18081}
    rm -rf "$VAR"
    trap 'stop_all' EXIT
    # The ceiling rows' responder (tools/bench-ceiling.c, started by
    # tools/bench.sh): /api/v1/'s location with its own socket.
    mkdir -p "$VAR/nginx"
    sed -n '/^location \/api\/v1\/ {/,/^}/p' nginx/arps-api.inc | sed -e 's|^location /api/v1/ {|location /bench/fcgi/ {|' \
        -e "s|@SOCKET@|$VAR/run/ceiling.sock|g" -e "s|@BURST@|100000|g" > "$VAR/nginx/bench-ceiling.inc"
    up
    export ARPS_CONFIG="$VAR/arps.conf" ARPS_BASE_URL="http://127.0.0.1:$PORT" ARPS_VAR="$VAR" PORT
    tools/bench.sh
    stop_all
    ;;
*)
    echo "usage: $0 deps|run|demo|stop|test [all|unit|db|api|browser]|bench" >&2
    exit 2
    ;;
esac
