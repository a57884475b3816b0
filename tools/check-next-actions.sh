#!/bin/sh
# nextActions endpoints against the route table: every "METHOD /path" that
# fcgi/ writes into an answer (a string literal, or a study endpoint built
# by endpoint() of fcgi/participation.c) must name a row of fcgi/routes.c
# (its pattern without the /api/v1 prefix, "{}" for an id).  Fails (exit 1)
# on an endpoint no route serves.
# Usage: tools/check-next-actions.sh [FCGI_DIR]   (default: fcgi)
set -eu
cd "$(dirname "$0")/.."
dir=${1:-fcgi}

exec perl -e '
use strict; use warnings;
my $dir = $ARGV[0];
my $methods = qr/GET|POST|PATCH|PUT|DELETE/;
my %routes;
open(my $fh, "<", "$dir/routes.c") or die "$dir/routes.c: $!\n";
while (<$fh>) {
	$routes{"$1 $2"} = 1 while /\{\s*"($methods)",\s*"\/api\/v1(\/[^"]*)"/g;
}
close $fh;
die "check-next-actions: no route rows in $dir/routes.c\n" unless %routes;
my ($fail, $n, $built) = (0, 0, 0);
for my $f (sort glob("$dir/*.c")) {
	next if $f =~ m{/routes\.c$};
	open(my $in, "<", $f) or die "$f: $!\n";
	local $/; my $src = <$in>; close $in;
	# Comments are not answers.
	$src =~ s{/\*.*?\*/}{ my $m = $&; $m =~ s/[^\n]//g; $m }gse;
	my @eps;
	# Every endpoint named in a string literal, e.g. "POST /profile/bio".
	while ($src =~ /"((?:\\.|[^"\\\n])*)"/g) {
		my ($s, $pos) = ($1, $-[0]);
		while ($s =~ /(?<![\w\/])($methods) (\/[a-z][a-z0-9_\/{}-]*)/g) {
			push @eps, [$1, $2, $pos];
		}
	}
	# Study endpoints built by endpoint(buf, "METHOD", id, "verb" | NULL).
	if ($src =~ /\bendpoint\(char \*buf/) {
		$src =~ /snprintf\(buf, ENDPOINT_MAX, "%s \/studies\/%s%s%s"/
		    or do { print "$f: endpoint() no longer writes \"%s /studies/%s%s%s\": update this check\n"; $fail = 1; };
	}
	while ($src =~ /\bendpoint\(\s*\w+,\s*"($methods)",\s*[^,]+,\s*(NULL|"(\w+)")\s*\)/g) {
		push @eps, [$1, "/studies/{}" . (defined $3 ? "/$3" : ""), $-[0]];
		$built++;
	}
	for my $e (@eps) {
		my ($m, $p, $pos) = @$e;
		my $line = 1 + (substr($src, 0, $pos) =~ tr/\n//);
		$n++;
		next if $routes{"$m $p"};
		print "$f:$line: nextActions endpoint \"$m $p\" names no route of $dir/routes.c\n";
		$fail = 1;
	}
}
die "check-next-actions: found no endpoint in $dir/*.c\n" unless $n;
exit 1 if $fail;
print "nextActions endpoints: ok ($n checked, $built built by endpoint())\n";
' "$dir"
