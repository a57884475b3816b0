#!/bin/sh
# fcgi/ link graph check: no cycle among the objects of fcgi/.
# From `nm` of build/fcgi/*.o: object A uses object B when A has an
# undefined symbol that B defines.  Fails (exit 1) on any cycle of that
# "who uses whose symbols" graph and prints it.
# Usage: tools/check-fcgi-deps.sh [OBJDIR]
#   without OBJDIR: the objects of today's fcgi/*.c under build/fcgi (a stale
#   object of a removed source is not linked, so not checked);
#   with OBJDIR: every OBJDIR/*.o.
set -eu
cd "$(dirname "$0")/.."

if [ $# -gt 0 ]; then
	set -- "$1"/*.o
else
	for c in fcgi/*.c; do
		o=build/fcgi/$(basename "$c" .c).o
		[ -e "$o" ] || { echo "check-fcgi-deps: $o missing (make all first)" >&2; exit 1; }
		set -- "$@" "$o"
	done
fi
[ -e "$1" ] || { echo "check-fcgi-deps: no objects (make all first)" >&2; exit 1; }

nm -A "$@" | perl -e '
use strict; use warnings;
my (%def, %und, %objs);
while (<STDIN>) {
	# "path/x.o:0000000000000000 T name" or "path/x.o:                 U name"
	next unless /^([^:]+\.o):\s*(?:[0-9a-fA-F]+\s+)?([A-Za-z])\s+(\S+)$/;
	my ($o, $t, $s) = ($1, $2, $3);
	$o =~ s{.*/}{}; $o =~ s{\.o$}{};
	$objs{$o} = 1;
	if ($t eq "U") { $und{$o}{$s} = 1 }
	elsif ($t =~ /[TDBRCVWG]/) { $def{$s} = $o }
}
my %g;
for my $o (keys %und) {
	for my $s (keys %{$und{$o}}) {
		my $d = $def{$s};
		$g{$o}{$d}{$s} = 1 if defined $d && $d ne $o;
	}
}
# Depth-first search; a back edge closes a cycle.
my (%state, @stack, $fail);
sub visit {
	my ($n) = @_;
	$state{$n} = 1; push @stack, $n;
	for my $m (sort keys %{$g{$n} || {}}) {
		if (($state{$m} // 0) == 1) {
			my @c = @stack[(grep { $stack[$_] eq $m } 0..$#stack)[0] .. $#stack];
			push @c, $m;
			my @why;
			for my $i (0 .. $#c - 1) {
				my @s = sort keys %{$g{$c[$i]}{$c[$i+1]}};
				push @why, "  $c[$i] -> $c[$i+1] (" . join(", ", @s[0 .. ($#s < 2 ? $#s : 2)]) . ")";
			}
			print "fcgi/ link cycle: " . join(" -> ", @c) . "\n" . join("\n", @why) . "\n";
			$fail = 1;
		} elsif (!$state{$m}) {
			visit($m);
		}
	}
	pop @stack; $state{$n} = 2;
}
visit($_) for grep { !$state{$_} } sort keys %objs;
exit 1 if $fail;
print "fcgi deps: ok (" . scalar(keys %objs) . " objects, no cycle)\n";
'

# The pool never starts a program (design.md §15.2): its binary imports none
# of the exec family, so the connection a worker accepts for a request needs
# no close-on-exec flag (fcgi/pool.c sets none: one system call a request).
# The binary's own imports only: libfcgi.so imports execl and popen for
# code arps-fcgi never calls (libfcgi's spawning of FastCGI applications).
bin=build/arps-fcgi
if [ -e "$bin" ]; then
	imports=$(nm -D "$bin") || { echo "fcgi deps: nm -D $bin failed" >&2; exit 1; }
	if printf '%s\n' "$imports" | grep -E ' U (exec[a-z]*|fexecve|system|popen|posix_spawnp?)(@|$)' >&2; then
		echo "fcgi deps: $bin can start a program: fcgi/pool.c must mark each accepted connection close-on-exec again" >&2
		exit 1
	fi
	echo "fcgi deps: $bin starts no program"
fi
