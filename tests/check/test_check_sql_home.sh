#!/bin/sh
# tools/check-sql-home.sh can fail: each statement or call below, outside
# db/, makes it exit 1 naming it; prose and an HTTP method name do not.
set -eu
cd "$(dirname "$0")/../.."
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
fail=0
check() {	# check RC NEEDLE 'C line'
	printf '%s\n' "$3" > "$t/x.c"
	rc=0
	out=$(tools/check-sql-home.sh "$t/x.c" 2>&1) || rc=$?
	if [ "$rc" != "$1" ] || ! printf '%s\n' "$out" | grep -qF -- "$2"; then
		echo "FAIL: $3: want exit $1 and '$2', got exit $rc: $out"; fail=1
	else
		echo "ok   exit $rc: $3"
	fi
}
check 1 'SQL outside db/' 'static const char *q = "UPDATE studies s SET a = 1 WHERE id = ?";'
check 1 'SQL outside db/' 'static const char *q = "select id from agents where id = ?";'
check 1 'SQL outside db/' 'static const char *q = "GRANT SELECT ON arps.* TO x";'
check 1 'SQL outside db/' 'static const char *q = "SELECT" " id FROM t";'
check 1 'mysql_query() outside db/' 'void f(void) { mysql_query(0, "x"); }'
check 1 'DB_Q() outside db/' 'void f(void) { DB_Q(db, q, 0, 0); }'
check 0 'sql home: ok' 'static const char *m = "DELETE"; /* SELECT x FROM y */'
check 0 'sql home: ok' 'static const char *d = "Create and publish a study; select one from the list.";'
exit $fail
