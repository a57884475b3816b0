#!/bin/sh
# Named column positions (design.md §2.5): every dbres_* read in db/
# names its column through an X-macro list (db/db.h), never a bare number,
# so a column list and the positions it is read at cannot drift.
# Fails (exit 1) listing each numbered read.
set -eu
cd "$(dirname "$0")/.."
bad=$(grep -nE 'dbres_[a-z_]+\([^,()]+,[^,()]+, *[0-9]+ *[,)]' db/*.c db/*.h || true)
if [ -n "$bad" ]; then
	echo "db columns: read by number (name it in the column list):" >&2
	echo "$bad" >&2
	exit 1
fi
echo "db columns: ok"
