#!/usr/bin/env bash
# make test-production (design.md §10): the .deb, and only the .deb,
# installed on a booted Debian 12 root and driven over HTTPS from the host.
#
#   tools/test-production.sh build/arps_<version>_<arch>.deb
#
# 1. a Debian 12 root made by debootstrap, cached in var/production/root-cache
#    (the host's apt sources, apt proxy settings, CA certificates and npmrc
#    copied in, so it reaches the package archive the host reaches; an
#    /etc/hosts with localhost only: the host name does not resolve);
# 2. a fresh copy per run, booted with systemd-nspawn --boot (host network);
# 3. apt-get install of the .deb + mariadb-server + nginx inside, setup-db,
#    a throwaway CA and server certificate, nginx on 127.0.0.1:ARPS_PROD_PORT;
# 4. from the host with curl --cacert: the whole flow, a second participation
#    approved by the sweep, reload/restart under load (0 lost), kill -9 of the
#    master, arps_app refused DDL and ledger updates, a backup as arps_backup
#    restored and verified, the sweep timer, then purge.
# Every wait has a time-out; the container is always torn down (trap).
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
DEB=$(cd "$(dirname "${1:?usage: $0 PATH.deb}")" && pwd)/$(basename "$1")
PV=$ROOT/var/production
CACHE=$PV/root-cache
RUN=$PV/root-run
WORK=$PV/work
base_port=${ARPS_TEST_PORT:-18080}
HTTPS_PORT=${ARPS_PROD_PORT:-$((base_port + 3))}
HTTP_PORT=${ARPS_PROD_HTTP_PORT:-$((HTTPS_PORT + 1))}
HOST=arps-prod.test
B=https://$HOST:$HTTPS_PORT/api/v1
SUITE=production
STEP=start
PASSED=0
NSPAWN_PID=
CPID=
T0=$(date +%s)

say() { printf 'production: %s\n' "$*" >&2; }
fail() {
    say "FAILED at step '$STEP': $*"
    if [ -n "$CPID" ] && kill -0 "$CPID" 2>/dev/null; then
        say "the container's journal (arps units, last lines):"
        TMO=20 ct journalctl --no-pager -n 40 -u arps-fcgi -u arps-fcgi.socket -u arps-sweep \
            -u arps-deliver -u nginx -u mariadb >&2 || true
    fi
    echo "$SUITE: $PASSED passed, 1 failed"
    exit 1
}
ok() { PASSED=$((PASSED + 1)); say "ok  $STEP: $*"; }
step() { STEP=$1; }
secs() { echo $(( $(date +%s) - $1 )); }

# Run a command inside the booted container (its systemd's namespaces).
ct() {
    timeout "${TMO:-300}" nsenter -t "$CPID" -m -u -i -n -p -- \
        env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8 HOME=/root \
        DEBIAN_FRONTEND=noninteractive "$@"
}

# Anything mounted at or under a directory (there must be none before a copy
# or a removal: a copy of a mounted /proc fills the disk).
mounts_under() { findmnt -rn -o TARGET | awk -v d="$1" 'index($0, d) == 1'; }
unmount_under() {
    local m
    for m in $(mounts_under "$1" | sort -r); do umount -l "$m" 2>/dev/null || true; done
    [ -z "$(mounts_under "$1")" ]
}

teardown() {
    local rc=$? i
    if [ -n "$NSPAWN_PID" ] && kill -0 "$NSPAWN_PID" 2>/dev/null; then
        kill -TERM "$NSPAWN_PID" 2>/dev/null || true
        for i in $(seq 1 100); do kill -0 "$NSPAWN_PID" 2>/dev/null || break; sleep 0.2; done
        kill -KILL "$NSPAWN_PID" 2>/dev/null || true
        sleep 0.5
    fi
    if [ -d "$RUN" ]; then
        if unmount_under "$RUN"; then rm -rf "$RUN"; else say "left $RUN: still mounted"; fi
    fi
    exit $rc
}
trap teardown EXIT
trap 'exit 130' INT TERM

for c in debootstrap systemd-nspawn nsenter curl jq openssl findmnt; do
    command -v "$c" >/dev/null || fail "$c is missing (tools/dev.sh deps production)"
done
[ "$(id -u)" -eq 0 ] || fail "needs root (debootstrap, systemd-nspawn)"
[ -f "$DEB" ] || fail "no package at $DEB"
mkdir -p "$PV"

# ---------------------------------------------------------------- root cache
step "debootstrap"
if [ ! -f "$CACHE/.arps-complete" ]; then
    t=$(date +%s)
    rm -rf "$CACHE.tmp"
    say "debootstrap bookworm into $CACHE (cached for later runs; a few minutes)"
    mirror=$(sed -n 's/^URIs: *//p' /etc/apt/sources.list.d/debian.sources 2>/dev/null | head -1)
    [ -n "$mirror" ] || mirror=$(awk '$1 == "deb" {print $2; exit}' /etc/apt/sources.list 2>/dev/null)
    [ -n "$mirror" ] || mirror=http://deb.debian.org/debian
    timeout 1200 debootstrap --variant=minbase \
        --include=systemd,systemd-sysv,dbus,ca-certificates,iproute2 \
        bookworm "$CACHE.tmp" "$mirror" > "$PV/debootstrap.log" 2>&1 ||
        { tail -20 "$PV/debootstrap.log" >&2; unmount_under "$CACHE.tmp" || true; fail "debootstrap failed"; }
    unmount_under "$CACHE.tmp" || fail "debootstrap left mounts under $CACHE.tmp"
    # The archive as the host reaches it: sources, proxy settings, CAs.
    rm -f "$CACHE.tmp/etc/apt/sources.list"
    cp -a /etc/apt/sources.list* "$CACHE.tmp/etc/apt/" 2>/dev/null || true
    for f in /etc/apt/apt.conf.d/*; do
        grep -qiE 'proxy|Check-Valid|Check-Date' "$f" 2>/dev/null && cp -a "$f" "$CACHE.tmp/etc/apt/apt.conf.d/"
    done
    [ -f /etc/apt/apt.conf ] && cp -a /etc/apt/apt.conf "$CACHE.tmp/etc/apt/"
    if [ -d /usr/local/share/ca-certificates ]; then
        cp -a /usr/local/share/ca-certificates/. "$CACHE.tmp/usr/local/share/ca-certificates/"
        chroot "$CACHE.tmp" update-ca-certificates >/dev/null 2>&1 || fail "update-ca-certificates in the root"
    fi
    [ -f /etc/npmrc ] && cp -a /etc/npmrc "$CACHE.tmp/etc/npmrc"
    printf '127.0.0.1\tlocalhost\n::1\t\tlocalhost ip6-localhost ip6-loopback\n' > "$CACHE.tmp/etc/hosts"
    echo arps-prod > "$CACHE.tmp/etc/hostname"
    rm -f "$CACHE.tmp/etc/machine-id" && : > "$CACHE.tmp/etc/machine-id"
    rm -rf "$CACHE"
    mv "$CACHE.tmp" "$CACHE"
    touch "$CACHE/.arps-complete"
    ok "Debian 12 root made in $(secs "$t") s"
else
    ok "Debian 12 root from the cache ($CACHE)"
fi

# ---------------------------------------------------------------- fresh root
step "fresh root"
[ -z "$(mounts_under "$CACHE")" ] || fail "something is mounted under $CACHE"
if [ -d "$RUN" ]; then unmount_under "$RUN" || fail "old $RUN still mounted"; rm -rf "$RUN"; fi
t=$(date +%s)
cp -a --one-file-system "$CACHE" "$RUN"
rm -f "$RUN/.arps-complete"
mkdir -p "$RUN/root/pkg"
cp "$DEB" "$RUN/root/pkg/"          # only the .deb: never the source tree
ok "copied in $(secs "$t") s, only $(basename "$DEB") added"

# ---------------------------------------------------------------- boot
step "boot"
rm -rf "$WORK" && mkdir -p "$WORK"
t=$(date +%s)
setsid systemd-nspawn --register=no --keep-unit --quiet -D "$RUN" --boot \
    --machine="arps-prod-$$" </dev/null >"$WORK/console.log" 2>&1 &
NSPAWN_PID=$!
for i in $(seq 1 300); do
    CPID=$(pgrep -P "$NSPAWN_PID" 2>/dev/null | head -1 || true)
    [ -n "$CPID" ] && [ "$(cat /proc/"$CPID"/comm 2>/dev/null)" = systemd ] && break
    kill -0 "$NSPAWN_PID" 2>/dev/null || { tail -20 "$WORK/console.log" >&2; fail "systemd-nspawn exited"; }
    CPID=
    sleep 0.2
done
[ -n "$CPID" ] || fail "no systemd in the container after 60 s"
state=
for i in $(seq 1 240); do
    state=$(TMO=10 ct systemctl is-system-running 2>/dev/null || true)
    case "$state" in running|degraded) break ;; esac
    sleep 0.5
done
case "$state" in running|degraded) ;; *) tail -20 "$WORK/console.log" >&2; fail "system state '$state' after 120 s" ;; esac
[ "$(ct cat /proc/1/comm)" = systemd ] || fail "PID 1 ct the container is not systemd"
ct getent hosts arps-prod >/dev/null 2>&1 && fail "the container's host name resolves (it must not)"
ok "booted in $(secs "$t") s (systemd is PID 1, state $state, host name does not resolve)"

# ---------------------------------------------------------------- install
step "install"
t=$(date +%s)
# Services start only when this test says so (MariaDB without TCP first).
ct sh -c 'printf "#!/bin/sh\nexit 101\n" > /usr/sbin/policy-rc.d && chmod 755 /usr/sbin/policy-rc.d'
ct sh -c 'mkdir -p /etc/mysql/mariadb.conf.d && printf "[mysqld]\nskip-networking\n" > /etc/mysql/mariadb.conf.d/99-arps-test.cnf'
TMO=900 ct apt-get update -qq > "$WORK/apt.log" 2>&1 || { tail -20 "$WORK/apt.log" >&2; fail "apt-get update"; }
TMO=1200 ct apt-get install -y -q --no-install-recommends "/root/pkg/$(basename "$DEB")" \
    mariadb-server mariadb-client nginx procps >> "$WORK/apt.log" 2>&1 ||
    { tail -30 "$WORK/apt.log" >&2; fail "apt-get install of the package, mariadb-server and nginx"; }
ct rm -f /usr/sbin/policy-rc.d
ok "package + mariadb-server + nginx installed in $(secs "$t") s"

step "package contents"
for f in /usr/sbin/arps-fcgi /usr/sbin/arps-sweep /usr/bin/arps-admin /usr/share/arps/model.bin \
         /usr/share/arps/migrations/001_init.sql /lib/systemd/system/arps-fcgi.service \
         /lib/systemd/system/arps-fcgi.socket /lib/systemd/system/arps-sweep.service \
         /lib/systemd/system/arps-sweep.timer /etc/nginx/sites-available/arps \
         /etc/nginx/snippets/arps-api.inc /usr/share/arps/arps-sweep.cron \
         /usr/share/man/man8/arps-fcgi.8.gz /usr/share/man/man8/arps-sweep.8.gz \
         /usr/share/man/man1/arps-admin.1.gz; do
    ct test -e "$f" || fail "the package did not install $f"
done
[ -e "$RUN/etc/nginx/sites-enabled/arps" ] && fail "the nginx site is enabled by the package (it must not be)"
ct getent passwd arps >/dev/null || fail "no arps system user"
[ "$(ct stat -c '%U:%G %a' /etc/arps/arps.conf)" = "root:arps 640" ] || fail "/etc/arps/arps.conf is not root:arps 0640"
pepper=$(ct sed -n 's/^pepper = //p' /etc/arps/arps.conf)
[ ${#pepper} -eq 64 ] || fail "no generated pepper in /etc/arps/arps.conf"
DELIVER=0
ct test -e /lib/systemd/system/arps-deliver.service && DELIVER=1
# A reinstall never overwrites the generated config.
sum1=$(ct sha256sum /etc/arps/arps.conf)
TMO=600 ct dpkg -i "/root/pkg/$(basename "$DEB")" >> "$WORK/apt.log" 2>&1 || fail "dpkg -i again"
[ "$(ct sha256sum /etc/arps/arps.conf)" = "$sum1" ] || fail "reinstalling changed /etc/arps/arps.conf"
ok "binaries, units, nginx site (not enabled), man pages, arps user, config 0640 with fresh secrets kept on reinstall$( [ $DELIVER = 1 ] && echo ', arps-deliver')"

# ---------------------------------------------------------------- database
step "setup-db"
ct systemctl start mariadb || fail "MariaDB does not start"
ct sh -c 'arps-admin setup-db' > "$WORK/setup-db.1" 2>&1 || { cat "$WORK/setup-db.1" >&2; fail "first setup-db"; }
grep -q 'user arps_app: created' "$WORK/setup-db.1" || fail "setup-db did not create arps_app"
pw1=$(ct sed -n 's/^db_password = //p' /etc/arps/arps.conf)
ct sh -c 'arps-admin setup-db' > "$WORK/setup-db.2" 2>&1 || { cat "$WORK/setup-db.2" >&2; fail "second setup-db"; }
grep -q 'user arps_app: password kept' "$WORK/setup-db.2" || fail "second setup-db changed the password"
[ "$(ct sed -n 's/^db_password = //p' /etc/arps/arps.conf)" = "$pw1" ] || fail "second setup-db rewrote db_password"
[ "$(ct stat -c '%U %a' /etc/arps/migrate.conf)" = "root 600" ] || fail "migrate.conf is not root 0600"
ct arps-admin migrate | grep -q 'schema up to date' || fail "arps-admin migrate (as arps_migrate)"
ok "database, arps_app/arps_migrate/arps_backup created; a second run keeps the passwords; migrate as arps_migrate"

# ---------------------------------------------------------------- TLS + nginx
step "tls"
openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=arps test CA" \
    -keyout "$WORK/ca.key" -out "$WORK/ca.pem" 2>/dev/null
openssl req -newkey rsa:2048 -nodes -subj "/CN=$HOST" -keyout "$WORK/srv.key" -out "$WORK/srv.csr" 2>/dev/null
printf 'subjectAltName=DNS:%s,IP:127.0.0.1\nextendedKeyUsage=serverAuth\n' "$HOST" > "$WORK/ext.cnf"
openssl x509 -req -in "$WORK/srv.csr" -CA "$WORK/ca.pem" -CAkey "$WORK/ca.key" -CAcreateserial \
    -days 2 -extfile "$WORK/ext.cnf" -out "$WORK/srv.pem" 2>/dev/null
mkdir -p "$RUN/etc/ssl/arps-test"
cp "$WORK/srv.pem" "$RUN/etc/ssl/arps-test/fullchain.pem"
install -m 0600 "$WORK/srv.key" "$RUN/etc/ssl/arps-test/privkey.pem"
# The installed site, as INSTALL.md edits it, on this test's loopback ports.
ct sed -i -e "s|/etc/letsencrypt/live/api.example.org/|/etc/ssl/arps-test/|" \
    -e "s|api.example.org|$HOST|g" -e "s|listen 443 ssl http2;|listen 127.0.0.1:$HTTPS_PORT ssl http2;|" \
    -e '/listen \[::\]:443/d' /etc/nginx/sites-available/arps
ct sed -i -e "s|api.example.org|$HOST|g" -e "s|listen 80;|listen 127.0.0.1:$HTTP_PORT;|" \
    -e '/listen \[::\]:80/d' /etc/nginx/sites-available/arps-http
ct sh -c 'rm -f /etc/nginx/sites-enabled/default &&
    ln -s /etc/nginx/sites-available/arps /etc/nginx/sites-enabled/arps &&
    ln -s /etc/nginx/sites-available/arps-http /etc/nginx/sites-enabled/arps-http &&
    nginx -t' > "$WORK/nginx-t.log" 2>&1 || { cat "$WORK/nginx-t.log" >&2; fail "nginx -t"; }
ok "throwaway CA + certificate for $HOST, site on 127.0.0.1:$HTTPS_PORT"

# ---------------------------------------------------------------- units
step "enable"
# The file mail transport, for reading login codes (a state directory the
# unit may write; arps-deliver writes it where it runs).
ct sh -c "install -d -o arps -g arps -m 0750 /var/lib/arps/mail &&
    sed -i 's|^mail_transport = .*|mail_transport = file:/var/lib/arps/mail|;
            s|^base_url = .*|base_url = https://$HOST:$HTTPS_PORT|;
            s|^workers = .*|workers = 4|' /etc/arps/arps.conf &&
    mkdir -p /etc/systemd/system/arps-fcgi.service.d &&
    printf '[Service]\nReadWritePaths=/var/lib/arps/mail\n' > /etc/systemd/system/arps-fcgi.service.d/test-mail.conf &&
    systemctl daemon-reload"
units="arps-fcgi.socket arps-fcgi.service arps-embed.service arps-sweep.timer nginx.service"
[ $DELIVER = 1 ] && units="$units arps-deliver.service"
ct systemctl enable --now $units > "$WORK/enable.log" 2>&1 || { cat "$WORK/enable.log" >&2; fail "systemctl enable --now $units"; }
ct systemctl restart nginx || fail "nginx restart"
CURL=(curl -sS --max-time 30 --cacert "$WORK/ca.pem" --resolve "$HOST:$HTTPS_PORT:127.0.0.1")
for i in $(seq 1 100); do
    "${CURL[@]}" -f "$B/health" >/dev/null 2>&1 && break
    sleep 0.3
done
"${CURL[@]}" -f "$B/health" > "$WORK/health" 2>&1 ||
    { ct journalctl -u arps-fcgi --no-pager -n 20 >&2 || true; fail "GET /health over HTTPS: $(cat "$WORK/health")"; }
for u in $units; do ct systemctl is-active -q "$u" || fail "$u is not active"; done
ok "$units active; GET /health over HTTPS: $(cat "$WORK/health")"

step "hardening"
sec=$(ct systemd-analyze security arps-fcgi.service 2>/dev/null | sed -n 's/.*Overall exposure level for arps-fcgi.service: \([0-9.]*\).*/\1/p')
[ -n "$sec" ] || fail "systemd-analyze security printed no exposure level"
awk -v s="$sec" 'BEGIN { exit !(s <= 2.0) }' || fail "arps-fcgi.service exposure $sec > 2.0"
ok "systemd-analyze security arps-fcgi.service: exposure $sec (at most 2.0)"

# ---------------------------------------------------------------- the flow
api() {   # api METHOD PATH [JSON] [extra curl args...] -> body in $R, status in $S
    local m=$1 p=$2 d=${3:-} out body=()
    shift 3
    [ -n "$d" ] && body=(--data-binary "$d")
    out=$("${CURL[@]}" -X "$m" -w '\n%{http_code}' -H 'Content-Type: application/json' \
        "${body[@]}" "$@" "$B$p") || fail "$m $p: curl failed"
    S=${out##*$'\n'}
    R=${out%$'\n'*}
}
expect() { [ "$S" = "$1" ] || fail "$2: HTTP $S (expected $1): $R"; }
j() { jq -er "$1" <<<"$R" || fail "no $1 in: $R"; }
EMAIL=rita.$$@example.org

login_code() {   # the newest login code mailed to $1
    local i f
    for i in $(seq 1 60); do
        f=$(ct sh -c "grep -l 'To: $1' /var/lib/arps/mail/*.eml 2>/dev/null | xargs -r ls -t | head -1" || true)
        if [ -n "$f" ]; then ct grep -oE '\b[0-9]{6}\b' "$f" | head -1; return 0; fi
        sleep 0.25
    done
    return 1
}

step "register"
api POST /agents/register '{"name":"Prod Ada","description":"Assistant of a retired nurse"}'
expect 201 "register"
KEY=$(j .api_key); CLAIM=$(j .claim_code); AGT=$(j .agent_id)
ok "agent $AGT registered"

step "bio"
api POST /profile/bio '{"bio":"Retired night-shift nurse in Lyon; gardens; uses an old Android phone."}' -H "X-API-Key: $KEY"
expect 200 "bio"
ok "bio stored ($(j .embedding_status))"

step "login"
api POST /auth/email/send-code "{\"email\":\"$EMAIL\"}"
expect 202 "send-code"
CODE=$(login_code "$EMAIL") || fail "no login code mailed to $EMAIL within 15 s"
api POST /auth/login "{\"provider\":\"email\",\"email\":\"$EMAIL\",\"code\":\"$CODE\"}"
expect 200 "login"
TOK=$(j .access_token)
ok "login code mailed and accepted"

# The agent's owner is another account: an owner's agent cannot take part
# in its owner's own study (403 OWN_STUDY, docs/api.md).
step "owner login"
OWNER="owner-$EMAIL"
api POST /auth/email/send-code "{\"email\":\"$OWNER\"}"
expect 202 "owner send-code"
OCODE=$(login_code "$OWNER") || fail "no login code mailed to $OWNER within 15 s"
api POST /auth/login "{\"provider\":\"email\",\"email\":\"$OWNER\",\"code\":\"$OCODE\"}"
expect 200 "owner login"
OTOK=$(j .access_token)
ok "owner logged in"

step "claim"
api POST /auth/claim "{\"claim_code\":\"$CLAIM\"}" -H "Authorization: Bearer $OTOK"
expect 200 "claim"
[ "$(j .status)" = claimed ] || fail "claim: $R"
ok "agent claimed (signup bonus $(j .signup_bonus_cents))"

step "top-up"
ct arps-admin topup "$EMAIL" 100000 > "$WORK/topup" 2>&1 || { cat "$WORK/topup" >&2; fail "arps-admin topup"; }
ok "arps-admin topup: $(cat "$WORK/topup")"

step "study"
api POST /studies '{"title":"Garden tools","description":"A 10-minute survey about garden tools.","study_url":"https://survey.example.org/s/42","reward_per_participant":250,"max_participants":2,"screening_criteria":"People who garden.","estimated_duration_minutes":10,"completion_code":"PROD42"}' -H "Authorization: Bearer $TOK"
expect 201 "create study"
STD=$(j .id)
ok "study $STD created, $(j .funding.frozen_cents) cents frozen"

step "accept"
api POST "/studies/$STD/accept" '' -H "X-API-Key: $KEY"
expect 200 "accept"
ok "accepted ($(j .participation_id))"

step "open"
api GET "/studies/$STD" '' -H "X-API-Key: $KEY"
expect 200 "open"
[ "$(j .participation.status)" = in_progress ] || fail "open: participation is not in_progress: $R"
ok "study opened, participation in_progress"

step "complete"
api POST "/studies/$STD/complete" '{"completion_code":"PROD42"}' -H "X-API-Key: $KEY"
expect 200 "complete"
[ "$(j .status)" = submitted ] || fail "complete: $R"
ok "submitted"

step "approve"
api GET "/studies/$STD/participants" '' -H "Authorization: Bearer $TOK"
expect 200 "participants"
PID1=$(j '.participants[0].participant_id')
api POST "/studies/$STD/participants/$PID1/approve" '{"reason":"Thanks."}' -H "Authorization: Bearer $TOK"
expect 200 "approve"
[ "$(j .status)" = approved ] || fail "approve: $R"
api GET /wallet/balance '' -H "X-API-Key: $KEY"
expect 200 "agent balance"
ok "approved; agent balance $R"

step "sweep"
api POST /agents/register '{"name":"Prod Bea","description":"Second agent"}'
expect 201 "register second agent"
KEY2=$(j .api_key); CLAIM2=$(j .claim_code)
api POST /auth/claim "{\"claim_code\":\"$CLAIM2\"}" -H "Authorization: Bearer $OTOK"
expect 200 "claim second agent"
api POST "/studies/$STD/accept" '' -H "X-API-Key: $KEY2"
expect 200 "second accept"
api POST "/studies/$STD/complete" '{"completion_code":"PROD42"}' -H "X-API-Key: $KEY2"
expect 200 "second complete"
# Left unreviewed: the sweep approves it 48 h after submission.
later=$(date -u -d '+49 hours' +%Y-%m-%dT%H:%M:%SZ)
ct runuser -u arps -- arps-sweep --config /etc/arps/arps.conf --now "$later" > "$WORK/sweep.log" 2>&1 ||
    { cat "$WORK/sweep.log" >&2; fail "arps-sweep --now $later"; }
api GET "/studies/$STD" '' -H "X-API-Key: $KEY2"
expect 200 "second agent's study view"
[ "$(j .participation.status)" = approved ] || fail "the sweep did not auto-approve: $R"
ok "second participation auto-approved by arps-sweep --now $later"

# ---------------------------------------------------------------- under load
# N requests at a fixed rate (under nginx's 30 r/s flood shield) from one
# curl; prints one status per request.
load() {   # load N RATE OUTFILE
    "${CURL[@]}" --rate "$2/s" -o /dev/null -w '%{http_code}\n' "$B/health?n=[1-$1]" > "$3" 2>/dev/null || true
}
lost() { grep -cv '^200$' "$1" || true; }

step "reload and restart"
load 300 20 "$WORK/load1" &
lp=$!
sleep 3
ct systemctl reload arps-fcgi || fail "systemctl reload arps-fcgi"
sleep 3
ct systemctl restart arps-fcgi || fail "systemctl restart arps-fcgi"
sleep 2
ct systemctl reload arps-fcgi || fail "second reload"
wait $lp
n=$(wc -l < "$WORK/load1"); l=$(lost "$WORK/load1")
[ "$n" -eq 300 ] || fail "the client made $n of 300 requests"
[ "$l" -eq 0 ] || fail "requests lost during reload/restart: $l of $n ($(sort "$WORK/load1" | uniq -c | tr '\n' ' '))"
ok "requests lost during reload/restart: 0 of $n"

step "kill -9"
old=$(ct systemctl show -p MainPID --value arps-fcgi)
[ "$old" -gt 0 ] 2>/dev/null || fail "no MainPID"
load 200 20 "$WORK/load2" &
lp=$!
sleep 2
t=$(date +%s%N)
ct kill -9 "$old"
new=0
for i in $(seq 1 150); do
    new=$(ct systemctl show -p MainPID --value arps-fcgi)
    [ "$new" -gt 0 ] && [ "$new" != "$old" ] && ct systemctl is-active -q arps-fcgi && break
    sleep 0.1
done
[ "$new" -gt 0 ] && [ "$new" != "$old" ] || fail "arps-fcgi not restarted within 15 s of kill -9"
ms=$(( ($(date +%s%N) - t) / 1000000 ))
wait $lp
n=$(wc -l < "$WORK/load2"); l=$(lost "$WORK/load2")
[ "$n" -eq 200 ] || fail "the client made $n of 200 requests"
# Only requests in flight in a killed worker may fail; the rest queue on
# the socket systemd keeps open and are answered by the new pool.
[ "$l" -le 4 ] || fail "kill -9 lost $l of $n requests (more than the 4 workers had in flight)"
tail -100 "$WORK/load2" | grep -qv '^200$' && fail "requests still failing after the restart"
ok "master SIGKILLed, restarted by systemd in $ms ms (pid $old -> $new); requests lost: $l of $n (in flight in killed workers), queued ones answered"

# ---------------------------------------------------------------- privileges
step "arps_app privileges"
APW=$(ct sed -n 's/^db_password = //p' /etc/arps/arps.conf)
as_app() { ct mariadb -u arps_app "-p$APW" arps -e "$1" 2>&1; }
out=$(as_app "DROP TRIGGER ledger_no_update") && fail "DROP TRIGGER as arps_app succeeded"
grep -q 'denied' <<<"$out" || fail "DROP TRIGGER refused for another reason: $out"
out=$(as_app "UPDATE ledger_postings SET amount_cents = amount_cents + 1") && fail "UPDATE ledger_postings as arps_app succeeded"
grep -q 'denied' <<<"$out" || fail "UPDATE refused for another reason: $out"
out=$(as_app "DELETE FROM transactions") && fail "DELETE FROM transactions as arps_app succeeded"
out=$(as_app "CREATE TABLE x (a INT)") && fail "CREATE TABLE as arps_app succeeded"
[ "$(ct mariadb -N arps -e "SELECT COUNT(*) FROM information_schema.triggers WHERE trigger_schema = 'arps'")" -ge 4 ] ||
    fail "the ledger triggers are gone"
ok "as arps_app: DROP TRIGGER, UPDATE ledger_postings, DELETE transactions, CREATE TABLE all refused"

step "backup and restore"
ct sh -c 'mariadb-dump --defaults-extra-file=/etc/arps/backup.cnf --single-transaction --triggers arps > /root/arps-backup.sql' \
    2> "$WORK/dump.err" || { cat "$WORK/dump.err" >&2; fail "mariadb-dump as arps_backup"; }
ct mariadb -e 'DROP DATABASE IF EXISTS arps_restore; CREATE DATABASE arps_restore CHARACTER SET utf8mb4 COLLATE utf8mb4_bin' ||
    fail "create arps_restore"
ct sh -c 'mariadb arps_restore < /root/arps-backup.sql' || fail "restore into arps_restore"
ct sh -c 'cp /etc/arps/arps.conf /root/restore.conf && printf "db_user = root\ndb_password =\ndb_name = arps_restore\n" >> /root/restore.conf'
ct arps-admin --config /root/restore.conf verify-ledger > "$WORK/verify" 2>&1 || { cat "$WORK/verify" >&2; fail "verify-ledger on the restored copy"; }
a=$(ct mariadb -N arps -e 'SELECT COUNT(*) FROM ledger_postings')
b=$(ct mariadb -N arps_restore -e 'SELECT COUNT(*) FROM ledger_postings')
[ "$a" = "$b" ] && [ "$a" -gt 0 ] || fail "restored postings $b, original $a"
ok "dump as arps_backup restored into a fresh database: $(cat "$WORK/verify"), $b postings"

step "sweep timer"
for i in $(seq 1 90); do
    res=$(ct systemctl show -p Result --value arps-sweep.service)
    ex=$(ct systemctl show -p ExecMainExitTimestampMonotonic --value arps-sweep.service)
    [ "${ex:-0}" != 0 ] && break
    sleep 1
done
[ "${ex:-0}" != 0 ] || fail "arps-sweep.timer did not run the sweep within 90 s"
[ "$res" = success ] || { ct journalctl -u arps-sweep --no-pager -n 20 >&2 || true; fail "the timer's sweep ended with $res"; }
ok "arps-sweep.timer ran arps-sweep.service: $res"

if [ $DELIVER = 1 ]; then
    step "arps-deliver"
    ct systemctl is-active -q arps-deliver.service || fail "arps-deliver.service is not active"
    ok "arps-deliver.service active"
fi

# ---------------------------------------------------------------- upgrade
step "upgrade"
# The same package again, as an upgrade would run: postinst migrates with
# setup-db (passwords kept) and restarts the running units.
load 500 20 "$WORK/load3" &
lp=$!
sleep 2
TMO=600 ct dpkg -i "/root/pkg/$(basename "$DEB")" > "$WORK/upgrade.log" 2>&1 ||
    { tail -20 "$WORK/upgrade.log" >&2; fail "dpkg -i over the running installation"; }
wait $lp
n=$(wc -l < "$WORK/load3"); l=$(lost "$WORK/load3")
[ "$n" -eq 500 ] || fail "the client made $n of 500 requests"
[ "$l" -eq 0 ] || fail "requests lost during the upgrade: $l of $n ($(sort "$WORK/load3" | uniq -c | tr '\n' ' '))"
grep -q 'schema up to date' "$WORK/upgrade.log" || fail "postinst did not run setup-db: $(tail -5 "$WORK/upgrade.log")"
[ "$(ct sed -n 's/^db_password = //p' /etc/arps/arps.conf)" = "$APW" ] || fail "the upgrade changed db_password"
for i in $(seq 1 50); do "${CURL[@]}" -f "$B/health" >/dev/null 2>&1 && break; sleep 0.2; done
"${CURL[@]}" "$B/health" > "$WORK/health2" 2>&1 || true
"${CURL[@]}" -f "$B/health" >/dev/null 2>&1 ||
    { tail -15 "$WORK/upgrade.log" >&2; fail "GET /health after the upgrade: $(cat "$WORK/health2")"; }
ok "reinstalled over the running host under load: setup-db migrated with the passwords kept, pool restarted; requests lost: 0 of $n"

# ---------------------------------------------------------------- purge
step "purge"
TMO=600 ct apt-get purge -y -q arps > "$WORK/purge.log" 2>&1 || { tail -20 "$WORK/purge.log" >&2; fail "apt-get purge arps"; }
for u in arps-fcgi.socket arps-fcgi.service arps-embed.service arps-sweep.timer arps-deliver.service; do
    ct systemctl is-active -q "$u" && fail "$u still runs after purge"
done
ct pgrep -x arps-fcgi >/dev/null && fail "an arps-fcgi process is left after purge"
ct test -e /etc/arps && fail "/etc/arps left after purge"
ct test -e /var/lib/arps && fail "/var/lib/arps left after purge"
ct getent passwd arps >/dev/null && fail "the arps user is left after purge"
[ "$(ct mariadb -N -e "SELECT COUNT(*) FROM information_schema.schemata WHERE schema_name = 'arps'")" = 1 ] ||
    fail "purge removed the database (it must keep it)"
ok "purge stopped every unit and removed /etc/arps, /var/lib/arps and the arps user; the database stays"

STEP=done
say "all steps passed in $(secs "$T0") s"
echo "$SUITE: $PASSED passed, 0 failed"
