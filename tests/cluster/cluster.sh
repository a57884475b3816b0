#!/bin/bash
# make test-cluster (design.md §16): a Galera cluster of 3 MariaDB nodes and
# 2 app hosts (nginx, the arps-fcgi pool, arps-deliver, a sweep loop each)
# behind a balancer, each in a network namespace of its own joined by a
# bridge in another, and careful clients in a client namespace; while they
# run, one database node is SIGKILLed and rejoins, another is cut off the
# network for 20 s, one app host's pool and nginx are killed.  Then: every
# acknowledged write present exactly once, verify-ledger on every node, the
# nodes' table checksums equal, sweeps never overlapping, and the figures.
# Needs root (ip netns), mariadb-server, galera-4, nginx, rsync.  Stops by
# itself; removes its namespaces and files.  Traffic stays in the
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
for b in ip mariadbd mariadb-install-db nginx rsync curl; do
	command -v $b >/dev/null || { say "needs $b"; exit 77; }
done
[ -f /usr/lib/galera/libgalera_smm.so ] || { say "needs galera-4"; exit 77; }

NODES="db1 db2 db3"
HOSTS="app1 app2"
ALL="$NODES $HOSTS lb client"
declare -A IP=([db1]=$NET.11 [db2]=$NET.12 [db3]=$NET.13 [app1]=$NET.21 [app2]=$NET.22
	[lb]=$NET.30 [client]=$NET.40)
PIDS=() APPPIDS=() CPIDS=()

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

DBPW=$(od -An -tx1 -N16 /dev/urandom | tr -d ' \n')
sql db1 "CREATE DATABASE arps CHARACTER SET utf8mb4 COLLATE utf8mb4_bin;
CREATE USER 'arps'@'$NET.%' IDENTIFIED BY '$DBPW';
GRANT ALL PRIVILEGES ON arps.* TO 'arps'@'$NET.%';"

# --- the app hosts ---
hex32() { od -An -tx1 -N32 /dev/urandom | tr -d ' \n'; }
PEPPER=$(hex32); IDSEC=$(hex32)
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
db_user = arps
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
done
in_ns app1 build/arps-admin --config "$T/app1/arps.conf" migrate >"$T/migrate.log" 2>&1 ||
	fail "migrate: $(tail -3 "$T/migrate.log")"

declare -A POOLPID NGXPID
start_app() {
	local h=$1 d=$T/$1
	rm -f "$d/run/arps.sock"
	ip netns exec "$P$h" build/arps-fcgi --config "$d/arps.conf" </dev/null >>"$d/log/arps.log" 2>&1 &
	POOLPID[$h]=$!; PIDS+=($!)
	ip netns exec "$P$h" nginx -p "$d/nginx" -c "$d/nginx/nginx.conf" -e "$d/log/nginx-error.log" \
		-g 'daemon off;' </dev/null >/dev/null 2>&1 &
	NGXPID[$h]=$!; PIDS+=($!)
}
for h in $HOSTS; do
	start_app $h
	ip netns exec "$P$h" build/arps-deliver --config "$T/$h/arps.conf" </dev/null >>"$T/$h/log/deliver.log" 2>&1 &
	PIDS+=($!); APPPIDS+=($!)
	# The sweep timer: every 2 s here (every minute in production).  Its
	# list starts at db1 on app1 and at db2 on app2 (the pools' at db1):
	# the two hosts' sweeps meet on two nodes, where only the lease, not a
	# named lock, can keep them apart.
	first=${IP[db1]}; [ $h = app2 ] && first=${IP[db2]}
	sed "s|^db_nodes = .*|db_nodes = $first:3306,${IP[db3]}:3306|" "$T/$h/arps.conf" >"$T/$h/sweep.conf"
	( while :; do
		s=$(date +%s.%N)
		out=$(in_ns $h build/arps-sweep --config "$T/$h/sweep.conf" 2>&1) || true
		printf '%s\n' "$out" >>"$T/$h/log/sweep.log"
		case $out in *skipped*) r=skipped;; *stopped:*) r=fenced;; *events_retention*) r=ran;; *) r=failed;; esac
		echo "$h $s $(date +%s.%N) $r" >>"$T/sweep-runs.log"
		sleep 1.7
	  done ) &
	PIDS+=($!); APPPIDS+=($!)
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
in_ns lb nginx -p "$T/lb" -c "$T/lb/nginx.conf" -e "$T/lb/error.log" -g 'daemon off;' \
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
	in_ns client tests/cluster/client.sh "http://${IP[lb]}:8080" "$T/client$c.log" "c$c" \
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
say "kill app1's pool and nginx"
kill -9 "${POOLPID[app1]}" "${NGXPID[app1]}" 2>/dev/null || true
for p in $(ip netns pids "${P}app1"); do
	case "$(cat /proc/$p/comm 2>/dev/null)" in arps-fcgi|nginx) kill -9 "$p" 2>/dev/null || true;; esac
done
sleep "$PHASE"
start_app app1
sleep 5
for p in "${CPIDS[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
for p in "${CPIDS[@]}"; do wait "$p" 2>/dev/null || true; done
sleep 3	# the sweeps and deliveries in flight
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
acked=$(cat "$T"/client*.log | grep -c '^ok ' || true)
for n in $NODES; do
	wait_synced $n 30 || fail "$n not synced at the end"
done
# every acknowledged write present exactly once, on every node
cat "$T"/client*.log | awk '$1 == "ok" { print $3 }' | sort >"$T/acked.ids"
for n in $NODES; do
	sql $n "SELECT id FROM arps.agents WHERE name LIKE 'cl-%'" | sort >"$T/$n.ids"
	lost=$(comm -23 "$T/acked.ids" "$T/$n.ids" | wc -l)
	[ "$lost" = 0 ] || { say "$n: $lost acknowledged agents missing"; bad=1; }
	lostall=$((lostall + lost))
	dup=$(sql $n "SELECT COUNT(*) FROM (SELECT name FROM arps.agents WHERE name LIKE 'cl-%'
		GROUP BY name HAVING COUNT(*) > 1) d")
	[ "$dup" = 0 ] || { say "$n: $dup keys ran twice"; bad=1; }
	dupall=$((dupall + dup))
	ledger=$(ip netns exec "${P}app1" build/arps-admin --config <(sed "s|^db_nodes = .*|db_nodes = ${IP[$n]}:3306|" "$T/app1/arps.conf") verify-ledger 2>&1 | tail -1)
	case $ledger in "ledger ok"*) ledgers=$((ledgers + 1));; *) say "$n: verify-ledger: $ledger"; bad=1;; esac
	sql $n "CHECKSUM TABLE arps.agents, arps.wallets, arps.ledger_postings, arps.transactions,
		arps.idempotency_keys, arps.participations, arps.studies, arps.outbox, arps.leases" |
		awk '{print $2}' | tr '\n' ' ' >"$T/$n.sum"
done
for n in db2 db3; do
	cmp -s "$T/db1.sum" "$T/$n.sum" || { say "checksums differ: db1 $(cat "$T/db1.sum") $n $(cat "$T/$n.sum")"; bad=1; }
done
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
errors=$(awk '$1 == "gaveup" { n++ } END { print n + 0 }' "$T"/client*.log)
p99=$(awk '$1 == "ok" { print $4 }' "$T"/client*.log | sort -n |
	awk '{ a[NR] = $1 } END { i = int(NR * 0.99); if (i < 1) i = 1; print NR ? a[i] : 0 }')
sumsok=same; cmp -s "$T/db1.sum" "$T/db2.sum" && cmp -s "$T/db1.sum" "$T/db3.sum" || sumsok=DIFFERENT
say "figures: writes acknowledged $acked: lost $lostall, doubled $dupall (over 3 nodes); ledger ok on $ledgers nodes;"
say "  table checksums $sumsok on 3 nodes; clients gave up $errors;"
say "  kills 2 (db2 SIGKILL, app1 pool+nginx), cut-off 20 s (db1), failovers $failovers,"
say "  client retries $retries, p99 ${p99} ms; sweeps ran $ran (app1 $ran1, app2 $ran2), skipped $skipped,"
say "  fenced $fenced, lease spans $spans, overlapping $overlaps; wall $(( $(date +%s) - START )) s"
[ "$bad" = 0 ] || fail "see above"
say "ok"
