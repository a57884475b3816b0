#!/bin/bash
# make test-cluster (design.md §16): a Galera cluster of 3 MariaDB nodes and
# 2 app hosts (nginx, the arps-fcgi pool, arps-deliver, a sweep loop each)
# behind a balancer, each in a network namespace of its own joined by a
# bridge in another, and careful clients in a client namespace; while they
# run, one database node is SIGKILLed and rejoins, another is cut off the
# network for 20 s, one app host's pool, nginx and arps-deliver are killed.
# The clients (tests/cluster/client.sh) move money: researchers log in,
# are topped up, create studies that agents accept and complete, approve
# and reject; every third study is left to the sweep, its participations
# backdated past the 24 h limit and the 48 h auto-approval during the run;
# agents and researchers register webhooks to a receiver on each app host
# (127.0.0.1:9099 there, an nginx that logs each Arps-Event-Id).
# Then: every acknowledged write present exactly once, verify-ledger on
# every node, the nodes' table checksums equal, every due row swept exactly
# once by the sweeps (both hosts' ran, never overlapping), every event due a
# webhook received, and the figures.  The database users come from
# arps-admin setup-db with db_app_hosts naming the cluster's network.
# Needs root (ip netns), mariadb-server, galera-4, nginx, rsync, curl, jq.
# Stops by itself; removes its namespaces and files.  Traffic stays in the
# namespaces (the root namespace reaches only the nodes' unix sockets).
# Env: ARPS_CLUSTER_SECONDS (workload seconds per phase, default 25),
# ARPS_CLUSTER_CLIENTS (default 4), ARPS_CLUSTER_KEEP=1 keeps the files.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT"
P=arpsc$$			# namespace prefix, unique to this run
NET=10.231.$(( $$ % 200 + 20 ))
PHASE=${ARPS_CLUSTER_SECONDS:-25}
NCLIENT=${ARPS_CLUSTER_CLIENTS:-4}
T=$(mktemp -d /tmp/arps-cluster.XXXXXX)
chmod 755 "$T"
START=$(date +%s)
say() { printf 'cluster: %s\n' "$*" >&2; }
fail() { say "FAILED: $*"; exit 1; }
[ "$(id -u)" = 0 ] || { say "needs root (network namespaces)"; exit 77; }
for b in ip mariadbd mariadb-install-db nginx rsync curl jq; do
	command -v $b >/dev/null || { say "needs $b"; exit 77; }
done
[ -f /usr/lib/galera/libgalera_smm.so ] || { say "needs galera-4"; exit 77; }

NODES="db1 db2 db3"
HOSTS="app1 app2"
ALL="$NODES $HOSTS lb client"
declare -A IP=([db1]=$NET.11 [db2]=$NET.12 [db3]=$NET.13 [app1]=$NET.21 [app2]=$NET.22
	[lb]=$NET.30 [client]=$NET.40)
PIDS=() APPPIDS=() CPIDS=() SWPIDS=()

cleanup() {
	local rc=$? n p
	trap - EXIT INT TERM
	for p in "${PIDS[@]}"; do kill -9 "$p" 2>/dev/null || true; done
	for n in $ALL br; do
		# whatever still runs in a namespace of ours goes with it
		for p in $(ip netns pids "$P$n" 2>/dev/null); do kill -9 "$p" 2>/dev/null || true; done
	done
	wait 2>/dev/null || true
	for n in $ALL br; do ip netns del "$P$n" 2>/dev/null || true; done
	if [ "${ARPS_CLUSTER_KEEP:-0}" = 1 ] || [ $rc -ne 0 ]; then
		say "files kept in $T"
	else
		rm -rf "$T"
	fi
	exit $rc
}
trap cleanup EXIT INT TERM

# (a function runs in a subshell when sent to the background, so $! would
# name the subshell: background jobs call ip netns exec, which execs)
in_ns() { local n=$1; shift; ip netns exec "$P$n" "$@"; }

# --- the network: a bridge in its own namespace, one veth a namespace ---
ip netns add "${P}br"
ip -n "${P}br" link add br0 type bridge
ip -n "${P}br" link set br0 up
ip -n "${P}br" link set lo up
for n in $ALL; do
	ip netns add "$P$n"
	ip -n "$P$n" link set lo up
	ip link add "x$n$$" netns "${P}br" type veth peer name eth0 netns "$P$n"
	ip -n "${P}br" link set "x$n$$" master br0 up
	ip -n "$P$n" addr add "${IP[$n]}/24" dev eth0
	ip -n "$P$n" link set eth0 up
done

# --- the Galera nodes ---
gcomm="gcomm://${IP[db1]},${IP[db2]},${IP[db3]}"
for n in $NODES; do
	mkdir -p "$T/$n"
	cat > "$T/$n.cnf" <<CNF
[mysqld]
user = mysql
datadir = $T/$n/data
socket = $T/$n/mysqld.sock
pid-file = $T/$n/mysqld.pid
log-error = $T/$n/error.log
bind-address = ${IP[$n]}
port = 3306
skip-name-resolve
performance_schema = OFF
binlog_format = ROW
default_storage_engine = InnoDB
innodb_autoinc_lock_mode = 2
innodb_buffer_pool_size = 48M
innodb_log_file_size = 16M
innodb_flush_log_at_trx_commit = 2
log_bin_trust_function_creators = 1
max_connections = 200
wsrep_on = ON
wsrep_provider = /usr/lib/galera/libgalera_smm.so
wsrep_cluster_name = arpsc
wsrep_cluster_address = $gcomm
wsrep_node_address = ${IP[$n]}
wsrep_node_name = $n
wsrep_sst_method = rsync
wsrep_provider_options = "gcache.size=64M;evs.suspect_timeout=PT2S;evs.inactive_timeout=PT4S;evs.install_timeout=PT4S;evs.keepalive_period=PT0.5S"
CNF
	mkdir -p "$T/$n/data"
	chown -R mysql:mysql "$T/$n"
done
mariadb-install-db --no-defaults --datadir="$T/db1/data" --user=mysql \
	--auth-root-authentication-method=socket --skip-test-db >"$T/db1/install.log" 2>&1 ||
	fail "mariadb-install-db: $(tail -3 "$T/db1/install.log")"
chown -R mysql:mysql "$T/db1"

declare -A DBPID
start_node() {	# start_node NODE [--wsrep-new-cluster]
	local n=$1; shift
	ip netns exec "$P$n" mariadbd --defaults-file="$T/$n.cnf" "$@" </dev/null >>"$T/$n/stdout.log" 2>&1 &
	DBPID[$n]=$!
	PIDS+=($!)
}
sql() {	# sql NODE STATEMENTS: as root over the node's unix socket
	local n=$1; shift
	mariadb --no-defaults -N -B -S "$T/$n/mysqld.sock" -u root -e "$*"
}
status() { sql "$1" "SHOW GLOBAL STATUS LIKE '$2'" 2>/dev/null | cut -f2; }
wait_synced() {	# wait_synced NODE SECONDS
	local i
	for i in $(seq 1 $(( $2 * 5 ))); do
		[ "$(status "$1" wsrep_local_state_comment)" = Synced ] &&
			[ "$(status "$1" wsrep_ready)" = ON ] && return 0
		sleep 0.2
	done
	return 1
}
t0=$(date +%s.%N)
start_node db1 --wsrep-new-cluster
wait_synced db1 60 || fail "db1 did not start: $(tail -5 "$T/db1/error.log")"
start_node db2
wait_synced db2 90 || fail "db2 did not join: $(tail -5 "$T/db2/error.log")"
start_node db3
wait_synced db3 90 || fail "db3 did not join: $(tail -5 "$T/db3/error.log")"
say "3 nodes synced in $(echo "$(date +%s.%N) - $t0" | bc | cut -c1-5) s (cluster size $(status db1 wsrep_cluster_size))"

# --- the database, its users and schema: arps-admin setup-db on db1 (over
# its unix socket, as an operator would on a node), with the app hosts'
# network in db_app_hosts; the users and grants replicate ---
hex32() { od -An -tx1 -N32 /dev/urandom | tr -d ' \n'; }
PEPPER=$(hex32); IDSEC=$(hex32)
mkdir -p "$T/setup"
cat > "$T/setup/arps.conf" <<CONF
listen = $T/setup/unused.sock
db_socket = $T/db1/mysqld.sock
db_user = arps_app
db_name = arps
db_app_hosts = $NET.%
migrations_dir = $ROOT/db/migrations
pepper = $PEPPER
id_secret = $IDSEC
CONF
build/arps-admin --config "$T/setup/arps.conf" setup-db >"$T/setup.log" 2>&1 ||
	fail "setup-db: $(tail -3 "$T/setup.log")"
grep -q "hosts: arps_app and arps_migrate also from '$NET.%'" "$T/setup.log" ||
	fail "setup-db did not create the users for $NET.%: $(cat "$T/setup.log")"
DBPW=$(sed -n 's/^db_password = //p' "$T/setup/arps.conf")
[ -n "$DBPW" ] || fail "setup-db wrote no db_password"

# --- the app hosts ---
awk '/^log_format arps /{f=1} f{print} f&&/;[[:space:]]*(#.*)?$/{exit}' nginx/arps.conf >"$T/arps-log.inc"
for h in $HOSTS; do
	d=$T/$h
	mkdir -p "$d/run" "$d/log" "$d/mail" "$d/nginx"
	cat > "$d/arps.conf" <<CONF
listen = $d/run/arps.sock
workers = 3
max_requests = 100000
shutdown_timeout = 5
db_nodes = ${IP[db1]}:3306,${IP[db2]}:3306,${IP[db3]}:3306
db_user = arps_app
db_password = $DBPW
db_name = arps
migrations_dir = $ROOT/db/migrations
pepper = $PEPPER
id_secret = $IDSEC
mail_transport = file:$d/mail
mail_from = arps@localhost
base_url = http://${IP[lb]}:8080
register_per_ip_hour = 1000000
webhooks_allow_loopback = true
webhook_timeout_seconds = 3
webhook_retry_first_seconds = 1
webhook_retry_max_seconds = 4
deliver_timeout = 5
deliver_claim_seconds = 8
CONF
	sed -e "s|@SOCKET@|$d/run/arps.sock|g" -e "s|@BURST@|100000|g" nginx/arps-api.inc >"$d/nginx/arps-api.inc"
	cat > "$d/nginx/nginx.conf" <<NGX
user root root;
worker_processes 1;
pid $d/run/nginx.pid;
error_log $d/log/nginx-error.log warn;
events { worker_connections 512; }
http {
    include $T/arps-log.inc;
    access_log $d/log/nginx-access.log arps;
    client_body_temp_path $d/nginx/body;
    fastcgi_temp_path $d/nginx/fastcgi;
    proxy_temp_path $d/nginx/proxy;
    uwsgi_temp_path $d/nginx/uwsgi;
    scgi_temp_path $d/nginx/scgi;
    default_type application/json;
    limit_req_zone \$binary_remote_addr zone=arps_api:10m rate=100000r/s;
    limit_req_status 429;
    map \$scheme \$arps_hsts { default ""; }
    server {
        listen ${IP[$h]}:8080;
        include $d/nginx/arps-api.inc;
        location / { return 404 '{"detail":"no such endpoint","error_code":"NOT_FOUND","status":404}'; }
    }
}
NGX
	# the webhook receiver: 127.0.0.1 of this host, which only its own
	# arps-deliver reaches (webhooks_allow_loopback); 200 to every POST
	mkdir -p "$d/hook"
	cat > "$d/hook/nginx.conf" <<NGX
user root root;
worker_processes 1;
pid $d/hook/nginx.pid;
error_log $d/log/hook-error.log warn;
events { worker_connections 256; }
http {
    client_body_temp_path $d/hook/body;
    proxy_temp_path $d/hook/proxy;
    fastcgi_temp_path $d/hook/fastcgi;
    uwsgi_temp_path $d/hook/uwsgi;
    scgi_temp_path $d/hook/scgi;
    log_format hook '\$msec \$http_arps_event_id \$request_uri';
    access_log $d/log/hook.log hook;
    server {
        listen 127.0.0.1:9099;
        location / { return 200 'ok'; }
    }
}
NGX
done
# arps_migrate from an app host, over TCP: the schema setup-db made is current
cp "$T/setup/migrate.conf" "$T/app1/migrate.conf"
in_ns app1 build/arps-admin --config "$T/app1/arps.conf" migrate >"$T/migrate.log" 2>&1 ||
	fail "migrate: $(tail -3 "$T/migrate.log")"
# the clients' fixtures and top-ups go to a node as arps_app, from the client
{ cat "$T/app1/arps.conf"; echo "test_fixtures = true"; } >"$T/fixture.conf"

declare -A POOLPID NGXPID DELPID HOOKPID
start_app() {
	local h=$1 d=$T/$1
	rm -f "$d/run/arps.sock"
	ip netns exec "$P$h" build/arps-fcgi --config "$d/arps.conf" </dev/null >>"$d/log/arps.log" 2>&1 &
	POOLPID[$h]=$!; PIDS+=($!)
	ip netns exec "$P$h" nginx -p "$d/nginx" -c "$d/nginx/nginx.conf" -e "$d/log/nginx-error.log" \
		-g 'daemon off;' </dev/null >/dev/null 2>&1 &
	NGXPID[$h]=$!; PIDS+=($!)
}
start_deliver() {
	ip netns exec "$P$1" build/arps-deliver --config "$T/$1/arps.conf" </dev/null >>"$T/$1/log/deliver.log" 2>&1 &
	DELPID[$1]=$!; PIDS+=($!); APPPIDS+=($!)
}
for h in $HOSTS; do
	start_app $h
	start_deliver $h
	ip netns exec "$P$h" nginx -p "$T/$h/hook" -c "$T/$h/hook/nginx.conf" -e "$T/$h/log/hook-error.log" \
		-g 'daemon off;' </dev/null >/dev/null 2>&1 &
	HOOKPID[$h]=$!; PIDS+=($!)
	# The sweep timer: every 2 s here (every minute in production).  Its
	# list starts at db1 on app1 and at db2 on app2 (the pools' at db1):
	# the two hosts' sweeps meet on two nodes, where only the lease, not a
	# named lock, can keep them apart.
	first=${IP[db1]}; [ $h = app2 ] && first=${IP[db2]}
	sed "s|^db_nodes = .*|db_nodes = $first:3306,${IP[db3]}:3306|" "$T/$h/arps.conf" >"$T/$h/sweep.conf"
	( while [ ! -e "$T/sweeps.stop" ]; do
		s=$(date +%s.%N)
		out=$(in_ns $h build/arps-sweep --config "$T/$h/sweep.conf" 2>&1) || true
		printf '%s\n' "$out" >>"$T/$h/log/sweep.log"
		case $out in *skipped*) r=skipped;; *stopped:*) r=fenced;; *events_retention*) r=ran;; *) r=failed;; esac
		echo "$h $s $(date +%s.%N) $r" >>"$T/sweep-runs.log"
		sleep 1.7
	  done ) &
	PIDS+=($!); APPPIDS+=($!); SWPIDS+=($!)
done

# --- the balancer: nginx, passing to the next host on a transport error ---
mkdir -p "$T/lb"
cat > "$T/lb/nginx.conf" <<NGX
user root root;
worker_processes 1;
pid $T/lb/nginx.pid;
error_log $T/lb/error.log warn;
events { worker_connections 512; }
http {
    client_body_temp_path $T/lb/body;
    proxy_temp_path $T/lb/proxy;
    fastcgi_temp_path $T/lb/fastcgi;
    uwsgi_temp_path $T/lb/uwsgi;
    scgi_temp_path $T/lb/scgi;
    access_log off;
    upstream arps {
        server ${IP[app1]}:8080 max_fails=1 fail_timeout=5s;
        server ${IP[app2]}:8080 max_fails=1 fail_timeout=5s;
    }
    server {
        listen ${IP[lb]}:8080;
        location / {
            proxy_pass http://arps;
            proxy_connect_timeout 1s;
            proxy_read_timeout 40s;
            proxy_next_upstream error timeout http_502 http_503;
            proxy_next_upstream_tries 2;
        }
    }
}
NGX
ip netns exec "${P}lb" nginx -p "$T/lb" -c "$T/lb/nginx.conf" -e "$T/lb/error.log" -g 'daemon off;' \
	</dev/null >/dev/null 2>&1 &
PIDS+=($!)
for i in $(seq 1 100); do
	in_ns client curl -fsS "http://${IP[lb]}:8080/api/v1/health" >/dev/null 2>&1 && break
	sleep 0.2
	[ $i -lt 100 ] || fail "the stack did not answer /health"
done
say "2 app hosts and the balancer up ($(( $(date +%s) - START )) s)"

# --- careful clients: tests/cluster/client.sh, each its own log ---
for c in $(seq 1 "$NCLIENT"); do
	ip netns exec "${P}client" tests/cluster/client.sh "http://${IP[lb]}:8080" "$T/client$c.log" "c$c" "$T" \
		</dev/null 2>"$T/client$c.err" &
	CPIDS+=($!)
done
PIDS+=("${CPIDS[@]}")

# --- the faults, in turn ---
sleep "$PHASE"
say "SIGKILL db2"
kill -9 "${DBPID[db2]}"; wait "${DBPID[db2]}" 2>/dev/null || true
[ "$(cat /proc/${DBPID[db2]}/comm 2>/dev/null)" != mariadbd ] || fail "db2 survived SIGKILL"
sleep "$PHASE"
t0=$(date +%s.%N)
in_ns db2 mariadbd --defaults-file="$T/db2.cnf" --wsrep-recover >"$T/db2/recover.log" 2>&1 || true
start_node db2
wait_synced db2 120 || fail "db2 did not rejoin: $(tail -5 "$T/db2/error.log")"
say "db2 rejoined in $(echo "$(date +%s.%N) - $t0" | bc | cut -c1-5) s ($(grep -c 'IST received' "$T/db2/error.log" || true) IST)"
say "cut db1 off for 20 s"
ip -n "${P}br" link set "xdb1$$" down
sleep 20
ip -n "${P}br" link set "xdb1$$" up
t0=$(date +%s.%N)
wait_synced db1 120 || fail "db1 did not come back: $(tail -5 "$T/db1/error.log")"
say "db1 back and synced in $(echo "$(date +%s.%N) - $t0" | bc | cut -c1-5) s"
sleep "$PHASE"
say "kill app1's pool, nginx and arps-deliver"
kill -9 "${POOLPID[app1]}" "${NGXPID[app1]}" "${DELPID[app1]}" 2>/dev/null || true
for p in $(ip netns pids "${P}app1"); do
	# the receiver (an nginx too) stays: it stands for a webhook owner's host
	[ "$p" = "${HOOKPID[app1]}" ] && continue
	[ "$(awk '{ print $4 }' /proc/$p/stat 2>/dev/null)" = "${HOOKPID[app1]}" ] && continue
	case "$(cat /proc/$p/comm 2>/dev/null)" in
	arps-fcgi|arps-deliver|nginx) kill -9 "$p" 2>/dev/null || true;;
	esac
done
sleep "$PHASE"
start_app app1
start_deliver app1
sleep 5
for p in "${CPIDS[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
for p in "${CPIDS[@]}"; do wait "$p" 2>/dev/null || true; done
# the rows backdated last swept (both hosts' sweeps still run), then the
# sweeps stopped after their run, then every delivery made (app2's and
# app1's restarted arps-deliver still run)
drain() {	# drain WHAT SQL: until the count SQL gives is 0, up to 30 s
	local i left=
	for i in $(seq 1 150); do
		left=$(sql db1 "$2" 2>/dev/null || echo 1)
		[ "$left" = 0 ] && return 0
		sleep 0.2
	done
	say "$1 not drained: $left left"
}
drain "due rows" "SELECT COUNT(*) FROM arps.participations WHERE
	(status IN ('accepted','in_progress') AND accepted_at <= UNIX_TIMESTAMP() - 86400) OR
	(status = 'submitted' AND submitted_at <= UNIX_TIMESTAMP() - 172800)"
touch "$T/sweeps.stop"
for p in "${SWPIDS[@]}"; do wait "$p" 2>/dev/null || true; done
drain "deliveries" "SELECT COUNT(*) FROM arps.webhook_deliveries WHERE state = 'pending'"
# everything of the app hosts stops, then the nodes must agree
for p in "${APPPIDS[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
for h in $HOSTS; do
	for p in $(ip netns pids "$P$h"); do kill -TERM "$p" 2>/dev/null || true; done
done
sleep 2
for h in $HOSTS; do
	for p in $(ip netns pids "$P$h"); do kill -9 "$p" 2>/dev/null || true; done
done
for i in $(seq 1 50); do
	c1=$(status db1 wsrep_last_committed); c2=$(status db2 wsrep_last_committed)
	c3=$(status db3 wsrep_last_committed)
	[ -n "$c1" ] && [ "$c1" = "$c2" ] && [ "$c2" = "$c3" ] && break
	sleep 0.2
done

# --- the checks ---
bad=0 lostall=0 dupall=0 ledgers=0
for n in $NODES; do
	wait_synced $n 30 || fail "$n not synced at the end"
done
acked=$(cat "$T"/client*.log | grep -c '^ok ' || true)
# what each acknowledged write (and each row backdated for the sweep) must
# have left: KIND ID, each found exactly once
cat "$T"/client*.log | awk '
	$1 == "ok" && $2 == "login"    { print "account " $4 }
	$1 == "ok" && $2 == "topup"    { print "topup " $4 }
	$1 == "ok" && $2 == "webhook"  { print "webhook " $4 }
	$1 == "ok" && $2 == "study"    { print "study " $4; print "freeze " $4 }
	$1 == "ok" && $2 == "agent"    { print "agent " $4 }
	$1 == "ok" && $2 == "claim"    { print "claim " $4 }
	$1 == "ok" && $2 == "accept"   { print "accept " $4; print "accepted " $4 }
	$1 == "ok" && $2 == "complete" { print "submitted " $4 }
	$1 == "ok" && $2 == "approve"  { print "approved " $4; print "earning " $4 }
	$1 == "ok" && $2 == "reject"   { print "rejected " $4 }
	$1 == "due" && $2 == "auto"    { print "approved " $3; print "earning " $3 }
	$1 == "due" && $2 == "timeout" { print "timed_out " $3 }' | sort -u >"$T/expected"
ev() {	# ev KIND TYPE [CAUSE]: KIND PARTICIPATION COUNT of the events of TYPE
	echo "UNION ALL SELECT '$1', JSON_VALUE(data, '\$.participation_id'), COUNT(*) FROM arps.events
		WHERE type = '$2' ${3:+AND JSON_VALUE(data, '\$.cause') = '$3'} GROUP BY 2"
}
facts="SELECT 'account', id, 1 FROM arps.accounts
	UNION ALL SELECT 'topup', owner_id, COUNT(*) FROM arps.transactions WHERE type = 'manual_topup' GROUP BY owner_id
	UNION ALL SELECT 'webhook', id, 1 FROM arps.webhooks
	UNION ALL SELECT 'study', id, 1 FROM arps.studies
	UNION ALL SELECT 'title', title, COUNT(*) FROM arps.studies GROUP BY title
	UNION ALL SELECT 'freeze', study_id, COUNT(*) FROM arps.transactions WHERE type = 'study_freeze' GROUP BY study_id
	UNION ALL SELECT 'agent', id, 1 FROM arps.agents
	UNION ALL SELECT 'name', name, COUNT(*) FROM arps.agents GROUP BY name
	UNION ALL SELECT 'claim', owner_id, COUNT(*) FROM arps.transactions WHERE type = 'signup_bonus' GROUP BY owner_id
	UNION ALL SELECT 'accept', id, 1 FROM arps.participations
	$(ev accepted participation.accepted) $(ev submitted participation.submitted)
	$(ev approved participation.approved) $(ev rejected participation.rejected)
	$(ev timed_out participation.timed_out) $(ev earning wallet.credited earning)"
for n in $NODES; do
	sql $n "$facts" | tr '\t' ' ' >"$T/$n.facts"
	awk -v node=$n 'NR == FNR { have[$1 " " $2] = 1; if ($3 > 1) print node ": doubled: " $0; next }
		!(($1 " " $2) in have) { print node ": lost: " $0 }' "$T/$n.facts" "$T/expected" >"$T/$n.diff"
	lost=$(grep -c ': lost: ' "$T/$n.diff" || true)
	dup=$(grep -c ': doubled: ' "$T/$n.diff" || true)
	[ "$lost" = 0 ] && [ "$dup" = 0 ] || { head -5 "$T/$n.diff" >&2; bad=1; }
	lostall=$((lostall + lost)) dupall=$((dupall + dup))
	ledger=$(ip netns exec "${P}app1" build/arps-admin --config <(sed "s|^db_nodes = .*|db_nodes = ${IP[$n]}:3306|" "$T/app1/arps.conf") verify-ledger 2>&1 | tail -1)
	case $ledger in "ledger ok"*) ledgers=$((ledgers + 1));; *) say "$n: verify-ledger: $ledger"; bad=1;; esac
	sql $n "CHECKSUM TABLE arps.accounts, arps.agents, arps.wallets, arps.ledger_postings, arps.transactions,
		arps.idempotency_keys, arps.participations, arps.studies, arps.outbox, arps.leases,
		arps.events, arps.webhooks, arps.webhook_deliveries" |
		awk '{print $2}' | tr '\n' ' ' >"$T/$n.sum"
done
for n in db2 db3; do
	cmp -s "$T/db1.sum" "$T/$n.sum" || { say "checksums differ: db1 $(cat "$T/db1.sum") $n $(cat "$T/$n.sum")"; bad=1; }
done
postings=$(sql db1 "SELECT COUNT(*) FROM arps.ledger_postings")
[ "$postings" -gt 0 ] || { say "no ledger rows"; bad=1; }
# every due row swept: the sweeps' own counts are the rows backdated
# (none timed out or approved on the spot), each once (above)
due_t=$(cat "$T"/client*.log | grep -c '^due timeout ' || true)
due_a=$(cat "$T"/client*.log | grep -c '^due auto ' || true)
moved() { cat "$@" | sed -n "s/.*\\b$job: moved \\([0-9]*\\) .*/\\1/p" | awk '{ n += $1 } END { print n + 0 }'; }
job=timeouts; sw_t=$(moved "$T"/app*/log/sweep.log); sw_t1=$(moved "$T/app1/log/sweep.log")
job=auto_approve; sw_a=$(moved "$T"/app*/log/sweep.log); sw_a1=$(moved "$T/app1/log/sweep.log")
[ "$due_t" -gt 0 ] && [ "$due_a" -gt 0 ] || { say "no row was made due ($due_t timeouts, $due_a auto-approvals)"; bad=1; }
[ "$sw_t" = "$due_t" ] && [ "$sw_a" = "$due_a" ] ||
	{ say "the sweeps timed out $sw_t of $due_t and auto-approved $sw_a of $due_a"; bad=1; }
# every event due a webhook (its owner's webhook lists its type and was
# there before it) queued, delivered and received by a receiver
nodeliv=$(sql db1 "SELECT COUNT(*) FROM arps.events e JOIN arps.webhooks w ON w.owner_id = e.owner_id
	AND FIND_IN_SET(e.type, w.events) AND e.created_at > w.created_at
	LEFT JOIN arps.webhook_deliveries d ON d.webhook_id = w.id AND d.event_id = e.id WHERE d.seq IS NULL")
sql db1 "SELECT event_id, state FROM arps.webhook_deliveries" | sort >"$T/deliveries"
cat "$T"/app*/log/hook.log | awk '{ print $2 }' | sort -u >"$T/received"
ndeliv=$(wc -l <"$T/deliveries")
notdelivered=$(awk '$2 != "delivered"' "$T/deliveries" | wc -l)
notreceived=$(awk '{ print $1 }' "$T/deliveries" | sort -u | comm -23 - "$T/received" | wc -l)
recv1=$(wc -l <"$T/app1/log/hook.log") recv2=$(wc -l <"$T/app2/log/hook.log")
[ "$nodeliv" = 0 ] && [ "$notdelivered" = 0 ] && [ "$notreceived" = 0 ] && [ "$ndeliv" -gt 0 ] ||
	{ say "webhooks: $nodeliv events never queued, $notdelivered not delivered, $notreceived not received of $ndeliv"; bad=1; }
[ "$recv1" -gt 0 ] && [ "$recv2" -gt 0 ] || { say "a host delivered nothing (app1 $recv1, app2 $recv2)"; bad=1; }
nevents=$(sql db1 "SELECT COUNT(*) FROM arps.events")
# the sweeps of both hosts never ran their jobs at once
ran=$(cat "$T"/app*/log/sweep.log | grep -c 'events_retention: moved' || true)
skipped=$(cat "$T"/app*/log/sweep.log | grep -c 'skipped: another sweep' || true)
fenced=$(cat "$T"/app*/log/sweep.log | grep -c 'stopped: the lease' || true)
ran1=$(grep -c 'events_retention: moved' "$T/app1/log/sweep.log" || true)
ran2=$(grep -c 'events_retention: moved' "$T/app2/log/sweep.log" || true)
[ "$ran1" -gt 0 ] && [ "$ran2" -gt 0 ] || { say "a host's sweep never ran (app1 $ran1, app2 $ran2)"; bad=1; }
# no two sweeps held the lease at once: their spans (taken to released,
# logged by each) never overlap, and no token was held twice
cat "$T"/app*/log/sweep.log | sed -n 's/.*held the lease (token \([0-9]*\)) from \([0-9.]*\) to \([0-9.]*\).*/\2 \3 \1/p' |
	sort -n >"$T/spans"
overlaps=$(awk 'NR > 1 && $1 < end { n++ } { if ($2 > end) end = $2 } END { print n + 0 }' "$T/spans")
spans=$(wc -l <"$T/spans")
dtok=$(awk '{ print $3 }' "$T/spans" | sort | uniq -d | wc -l)
[ "$overlaps" = 0 ] && [ "$dtok" = 0 ] || { say "$overlaps sweeps held the lease while another did ($dtok tokens twice)"; bad=1; }
[ "$spans" -gt 0 ] || { say "no sweep span logged"; bad=1; }
failovers=$(cat "$T"/app*/log/*.log | grep -c 'writing through node' || true)
retries=$(awk '$1 == "retry" { n++ } END { print n + 0 }' "$T"/client*.log)
errors=$(awk '$1 == "gaveup" || $1 == "refused" { n++ } END { print n + 0 }' "$T"/client*.log)
[ "$errors" = 0 ] || { say "clients gave up or were refused: $(grep -h '^gaveup\|^refused' "$T"/client*.log | head -3)"; bad=1; }
p99=$(awk '$1 == "ok" { print $5 }' "$T"/client*.log | sort -n |
	awk '{ a[NR] = $1 } END { i = int(NR * 0.99); if (i < 1) i = 1; print NR ? a[i] : 0 }')
kinds=$(cat "$T"/client*.log | awk '$1 == "ok" { n[$2]++ } END { for (k in n) printf "%s %d, ", k, n[k] }')
sumsok=same; cmp -s "$T/db1.sum" "$T/db2.sum" && cmp -s "$T/db1.sum" "$T/db3.sum" || sumsok=DIFFERENT
say "figures: writes acknowledged $acked (${kinds%, }):"
say "  lost $lostall, doubled $dupall (over 3 nodes); ledger ok on $ledgers nodes ($postings postings);"
say "  table checksums $sumsok on 3 nodes; clients gave up or refused $errors;"
say "  kills 3 (db2 SIGKILL; app1 pool+nginx, arps-deliver), cut-off 20 s (db1), failovers $failovers,"
say "  client retries $retries, p99 ${p99} ms; events $nevents;"
say "  due rows swept: timeouts $sw_t of $due_t (app1 $sw_t1), auto-approvals $sw_a of $due_a (app1 $sw_a1);"
say "  webhook deliveries $ndeliv, received $(cat "$T"/app*/log/hook.log | wc -l) (app1 $recv1, app2 $recv2), missing $notreceived;"
say "  sweeps ran $ran (app1 $ran1, app2 $ran2), skipped $skipped,"
say "  fenced $fenced, lease spans $spans, overlapping $overlaps; wall $(( $(date +%s) - START )) s"
[ "$bad" = 0 ] || fail "see above"
say "ok"
