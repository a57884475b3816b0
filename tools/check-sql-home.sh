#!/bin/sh
# All SQL in db/ (design.md §2, style.md "SQL in one place"): fails (exit 1)
# when a .c or .h outside db/ (tests/ and tools/ aside) holds an SQL
# statement as a C string literal (one that starts with SELECT, INSERT,
# UPDATE, DELETE, REPLACE, GRANT, REVOKE, CREATE, ALTER, DROP or TRUNCATE
# and a space, or holds, in any case, INSERT INTO, DELETE FROM, REPLACE
# INTO, UPDATE ... SET or a leading SELECT ... FROM; adjacent literals of a
# line joined), or
# runs one: DB_Q, DB_Q0, DB_ONE, db_exec, db_exec_one, db_rows_exec,
# MariaDB's own mysql_* calls, or reads a result with dbres_*.
# Comments are stripped first.  Nothing else is exempt.
# Usage: tools/check-sql-home.sh [FILE...]   (default: the tree)
set -eu
cd "$(dirname "$0")/.."
if [ $# -eq 0 ]; then
	set -- $(find . -path ./.git -prune -o -path ./build -prune -o -path ./var -prune \
	    -o -path ./db -prune -o -path ./tests -prune -o -path ./tools -prune \
	    -o -path '*/node_modules' -prune -o \( -name '*.c' -o -name '*.h' \) -print | sort)
fi
exec perl -e '
use strict; use warnings;
# the first word of a statement as SQL is written here (upper case), or
# the shape of a statement in any case
my $sql = qr{^\s*(?:SELECT|INSERT|UPDATE|DELETE|REPLACE|GRANT|REVOKE|CREATE|ALTER|DROP|TRUNCATE)\s
	|(?i:\b(?:INSERT\s+(?:IGNORE\s+)?INTO|DELETE\s+FROM|REPLACE\s+INTO)\s
	|\bUPDATE\s+\w+(?:\s+\w+)?\s+SET\s
	|^\s*SELECT\s.*\bFROM\s)}x;
my $call = qr{(?:^|[^\w.>])(DB_Q0?|DB_ONE|db_exec(?:_one)?|db_rows_exec|dbres_\w+|mysql_\w+)\s*\(};
my $fail = 0;
for my $f (@ARGV) {
	open(my $fh, "<", $f) or die "$f: $!\n";
	local $/; my $src = <$fh>; close $fh;
	# Comments out (line breaks kept); string literals checked, then blanked.
	$src =~ s{ (/\*.*?\*/) | (//[^\n]*) | ("(?:\\.|[^"\\\n])*") | (\x27(?:\\.|[^\x27\\\n])*\x27) }
	    { my $m = $&; my $lit = defined $3;
	      my $nl = $m; $nl =~ s/[^\n]//g;
	      $lit ? "\x00" . $m . "\x00" : $nl }gsex;
	my $n = 0;
	for my $line (split /\n/, $src) {
		$n++;
		# adjacent literals ("SELECT" " id FROM t") are one string to C
		(my $joined = $line) =~ s/"\x00\s*\x00"//g;
		while ($joined =~ /\x00"((?:\\.|[^"\\])*)"\x00/g) {
			my $lit = $1;
			if ($lit =~ $sql) {
				print "$f:$n: SQL outside db/: \"$lit\"\n"; $fail = 1;
			}
		}
		(my $code = $line) =~ s/\x00"(?:\\.|[^"\\])*"\x00/""/g;
		next if $code =~ /^\s*#/;
		while ($code =~ /$call/g) {
			print "$f:$n: $1() outside db/\n"; $fail = 1;
		}
	}
}
print "sql home: ok (" . scalar(@ARGV) . " files outside db/)\n" unless $fail;
exit $fail;
' "$@"
