#!/bin/sh
# Line coverage of core/ from a --coverage build (make coverage).
# Usage: tools/coverage.sh BUILD_DIR   (e.g. build/cov; objects in BUILD_DIR/core)
# Prints per-file line coverage and a total; exits 1 when the total is
# under MIN_COVERAGE percent (default 95), 2 on a usage or tool error.
# Every file of core/ counts; encoder/ (its own folder, linked into the
# unit tests uninstrumented) does not.
set -eu

bdir=${1:-}
min=${MIN_COVERAGE:-95}
if [ -z "$bdir" ] || [ ! -d "$bdir/core" ]; then
	echo "usage: $0 BUILD_DIR (with BUILD_DIR/core/*.gcno)" >&2
	exit 2
fi
command -v gcov >/dev/null 2>&1 || { echo "$0: gcov not found" >&2; exit 2; }

cd "$(dirname "$0")/.."
tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT INT TERM

status=0
for src in core/*.c; do
	base=$(basename "$src" .c)
	excluded=0
	if [ ! -f "$bdir/core/$base.gcno" ]; then
		echo "$src: no coverage notes ($bdir/core/$base.gcno)" >&2
		[ "$excluded" -eq 1 ] || status=2
		continue
	fi
	# gcov prints "File 'core/x.c'" then "Lines executed:P% of N".
	gcov -n -o "$bdir/core" "$src" 2>/dev/null | awk -v src="$src" \
	    -v ex="$excluded" '
		/^File / { f = $2; gsub(/\047/, "", f); next }
		/^Lines executed:/ && f == src {
			split($2, a, ":"); pct = a[2]; sub(/%/, "", pct)
			n = $4
			hit = int(pct * n / 100 + 0.5)
			printf "%s %d %d %d\n", src, hit, n, ex
			f = ""
		}' >>"$tmp"
	if ! grep -q "^$src " "$tmp"; then
		# Compiled but no executable lines, or never run and no data.
		echo "$src 0 0 $excluded" >>"$tmp"
	fi
done

awk -v min="$min" '
	{
		pct = $3 ? 100 * $2 / $3 : 100
		printf "%-32s %6.2f%%  %5d/%-5d%s\n", $1, pct, $2, $3, \
		    $4 ? "  (excluded)" : ""
		if (!$4) { hit += $2; all += $3 }
	}
	END {
		tot = all ? 100 * hit / all : 0
		printf "%-32s %6.2f%%  %5d/%-5d\n", "TOTAL core/", tot, hit, all
		if (tot < min) {
			printf "coverage %.2f%% is under %s%%\n", tot, min
			exit 1
		}
	}' "$tmp" || status=1
exit "$status"
