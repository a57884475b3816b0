#!/bin/sh
# The check of tools/check-deps.sh can fail: objects built here with an
# arrow against the folder order, a cycle inside one folder, and a fixture
# symbol in a daemon each make it exit 1 naming the cause; the same objects
# without the fault pass.  Run by `make check` (tools/dev.sh test).
set -eu
cd "$(dirname "$0")/../.."
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
fail=0

obj() {	# obj FOLDER/NAME 'C source'
	mkdir -p "$t/$2/$(dirname "$1")"
	printf '%s\n' "$3" > "$t/src.c"
	cc -c -o "$t/$2/$1.o" "$t/src.c"
}
expect() {	# expect ROOT RC NEEDLE
	rc=0
	out=$(tools/check-deps.sh "$t/$1" 2>&1) || rc=$?
	if [ "$rc" != "$2" ] || ! printf '%s\n' "$out" | grep -q -- "$3"; then
		echo "FAIL $1: want exit $2 and '$3', got exit $rc:"; printf '%s\n' "$out"
		fail=1
	else
		echo "ok   $1: exit $rc, '$3'"
	fi
}

# A clean tree: db uses core, fcgi uses db.
for r in good order cycle fixture; do
	obj core/money "$r" 'int money_add(int a, int b) { return a + b; }'
	obj db/wallet "$r" 'int money_add(int, int); int db_wallet(int a) { return money_add(a, 1); }'
	obj fcgi/wallet "$r" 'int db_wallet(int); int h_wallet(int a) { return db_wallet(a); }'
	mkdir -p "$t/$r/tests/lib"
	obj tests/lib/fixture "$r" 'int fixture_only(void) { return 7; }'
	obj encoder/bert "$r" 'int bert_embed(int a) { return a + 1; }'
done
expect good 0 'arrows one way, no cycle'

# core/ reaching up into db/.
obj core/money order 'int db_wallet(int); int money_add(int a, int b) { return a + db_wallet(b); }'
expect order 1 'core/ uses db/, which comes after it'

# Two files of db/ needing each other.
obj db/wallet cycle 'int money_add(int, int); int db_ledger(int); int db_wallet(int a) { return money_add(db_ledger(a), 1); }'
obj db/ledger cycle 'int db_wallet(int); int db_ledger(int a) { return a > 0 ? db_wallet(a - 1) : 0; }'
expect cycle 1 'link cycle: db/ledger -> db/wallet -> db/ledger'

# A header of core/ including one of db/: no symbol shows it, the source does.
mkdir -p "$t/inc/src/core" "$t/inc/src/db"
printf '#include "db/wallet.h"\n' > "$t/inc/src/core/money.h"
printf '#include "core/money.h"\n' > "$t/inc/src/db/wallet.h"
rc=0
out=$(tools/check-deps.sh "$t/good" "$t/inc/src" 2>&1) || rc=$?
if [ $rc = 1 ] && printf '%s\n' "$out" | grep -q 'core/money.h includes db/, which comes after core/'; then
	echo "ok   include: exit 1, 'includes db/, which comes after core/'"
else
	echo "FAIL include: exit $rc:"; printf '%s\n' "$out"; fail=1
fi

# A daemon carrying a fixture's symbol.
printf 'int fixture_only(void) { return 7; }\nint main(void) { return fixture_only(); }\n' > "$t/main.c"
cc -o "$t/fixture/arps-admin" "$t/main.c"
expect fixture 1 'holds symbols of the test fixtures'

# A daemon other than arps-embed carrying an encoder symbol.
for r in encoder; do
	obj core/money "$r" 'int money_add(int a, int b) { return a + b; }'
	obj tests/lib/fixture "$r" 'int fixture_only(void) { return 7; }'
	obj encoder/bert "$r" 'int bert_embed(int a) { return a + 1; }'
done
printf 'int bert_embed(int a) { return a + 1; }\nint main(void) { return bert_embed(0); }\n' > "$t/main.c"
cc -o "$t/encoder/arps-fcgi" "$t/main.c"
expect encoder 1 'arps-fcgi holds symbols of the encoder'

exit $fail
