#!/bin/sh
# The dependency order of the daemons' code (design.md §2.1), from `nm`:
# object A uses object B when A has an undefined symbol that B defines.
# Fails (exit 1), naming the symbols, when
#  - a folder uses a folder that comes after it in LAYERS (so no cycle
#    between folders can exist), or
#  - any cycle exists among the objects (files), across folders or within one.
# Also from the sources: a #include "F/..." in folder G with F after G in
# LAYERS fails too (a header can point up without leaving a symbol behind).
# Then, of the daemons built under OBJROOT:
#  - no symbol of the test fixtures (OBJROOT/tests/lib/*.o) in any of them;
#  - arps-fcgi imports none of the exec family (the pool never starts a
#    program, so a worker's accepted connection needs no close-on-exec flag:
#    fcgi/pool.c sets none, one system call a request; design.md §15.2).
# Usage: tools/check-deps.sh [OBJROOT [SRCROOT]]   (default build and .:
# OBJROOT/FOLDER/*.o, SRCROOT/FOLDER/*.[ch]; another OBJROOT alone checks
# no sources)
# tests/check/test_check_deps.sh feeds it objects with a cycle of each kind.
set -eu
cd "$(dirname "$0")/.."
root=${1:-build}
src=${2:-}
[ $# -gt 0 ] || src=.
LAYERS="core encoder lib db txn match admin deliver fcgi cmd"

set --
for d in $LAYERS; do
	for o in "$root/$d"/*.o; do
		[ -e "$o" ] && set -- "$@" "$o"
	done
done
[ $# -gt 0 ] || { echo "check-deps: no objects under $root (make all first)" >&2; exit 1; }

# Includes.
if [ -n "$src" ]; then
	bad=0
	for d in $LAYERS; do
		for f in "$src/$d"/*.c "$src/$d"/*.h; do
			[ -e "$f" ] || continue
			for inc in $(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([a-z]*\)\/.*/\1/p' "$f"); do
				ok=0
				for e in $LAYERS; do
					[ "$e" = "$inc" ] && { ok=1; break; }
					[ "$e" = "$d" ] && break
				done
				[ "$inc" = "$d" ] && ok=1
				if [ $ok = 0 ]; then
					echo "deps: $f includes $inc/, which comes after $d/ (or is no daemon folder)"
					bad=1
				fi
			done
		done
	done
	[ $bad = 0 ] || exit 1
fi

# nm to a file first: sh has no pipefail, and a failing nm must not pass.
nmout=$(mktemp)
nm -A "$@" > "$nmout" || { rm -f "$nmout"; echo "deps: nm failed" >&2; exit 1; }
LAYERS="$LAYERS" perl -e '
use strict; use warnings;
my @layers = split " ", $ENV{LAYERS};
my %rank; @rank{@layers} = 0 .. $#layers;
my (%def, %und, %objs);
while (<STDIN>) {
	# "root/dir/x.o:0000000000000000 T name" or "root/dir/x.o:                 U name"
	next unless /^([^:]+\.o):\s*(?:[0-9a-fA-F]+\s+)?([A-Za-z])\s+(\S+)$/;
	my ($p, $t, $s) = ($1, $2, $3);
	my ($d, $f) = $p =~ m{([^/]+)/([^/]+)\.o$} or next;
	my $o = "$d/$f";
	$objs{$o} = 1;
	if ($t eq "U") { $und{$o}{$s} = 1 }
	elsif ($t =~ /[TDBRCVWG]/) { $def{$s} = $o }
}
my (%g, $fail);
for my $o (sort keys %und) {
	for my $s (sort keys %{$und{$o}}) {
		my $d = $def{$s};
		next unless defined $d && $d ne $o;
		$g{$o}{$d}{$s} = 1;
	}
}
# Folder order: an edge may only point to an earlier folder or its own.
for my $o (sort keys %g) {
	my ($fo) = split m{/}, $o;
	for my $d (sort keys %{$g{$o}}) {
		my ($fd) = split m{/}, $d;
		next if $rank{$fd} <= $rank{$fo};
		my @s = sort keys %{$g{$o}{$d}};
		print "deps: $fo/ uses $fd/, which comes after it: $o -> $d (" .
		    join(", ", @s[0 .. ($#s < 2 ? $#s : 2)]) . ")\n";
		$fail = 1;
	}
}
# Files: depth-first search; a back edge closes a cycle.
my (%state, @stack);
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
			print "deps: link cycle: " . join(" -> ", @c) . "\n" . join("\n", @why) . "\n";
			$fail = 1;
		} elsif (!$state{$m}) {
			visit($m);
		}
	}
	pop @stack; $state{$n} = 2;
}
visit($_) for grep { !$state{$_} } sort keys %objs;
exit 1 if $fail;
print "deps: ok (" . scalar(keys %objs) . " objects in " . scalar(@layers) .
    " folders, arrows one way, no cycle)\n";
' < "$nmout" || { rm -f "$nmout"; exit 1; }
rm -f "$nmout"

# none_of WHAT OBJS... : no daemon but those allowed defines a symbol that
# one of OBJS defines; fails naming the symbols and the daemon.
syms=$(mktemp)
trap 'rm -f "$syms"' EXIT
none_of() {
	local what=$1 o b
	shift
	for o in "$@"; do
		[ -e "$o" ] || { echo "deps: no objects for $what (make all tests first)" >&2; exit 1; }
	done
	for o in "$@"; do
		nm --defined-only "$o"
	done | awk '$2 ~ /^[TDBR]$/ { print $3 }' | sort -u > "$syms"
	for b in arps-fcgi arps-sweep arps-deliver arps-admin; do
		[ -e "$root/$b" ] || continue
		if nm "$root/$b" | awk '$2 ~ /^[TDBR]$/ { print $3 }' | sort -u | comm -12 - "$syms" | grep . >&2; then
			echo "deps: $root/$b holds symbols of $what (above)" >&2
			exit 1
		fi
	done
}

# Fixtures stay in test builds (design.md §2.1).
none_of "the test fixtures" "$root"/tests/lib/*.o
echo "deps: no fixture symbol in the daemons"
# The encoder runs in arps-embed only (design.md §1.6): no other daemon, the
# FastCGI workers above all, holds a symbol of encoder/.
none_of "the encoder: only arps-embed runs it" "$root"/encoder/*.o
echo "deps: the encoder only in arps-embed"

# The binary's own imports only: libfcgi.so imports execl and popen for
# code arps-fcgi never calls (libfcgi's spawning of FastCGI applications).
bin=$root/arps-fcgi
if [ -e "$bin" ]; then
	imports=$(nm -D "$bin") || { echo "deps: nm -D $bin failed" >&2; exit 1; }
	if printf '%s\n' "$imports" | grep -E ' U (exec[a-z]*|fexecve|system|popen|posix_spawnp?)(@|$)' >&2; then
		echo "deps: $bin can start a program: fcgi/pool.c must mark each accepted connection close-on-exec again" >&2
		exit 1
	fi
	echo "deps: $bin starts no program"
fi
