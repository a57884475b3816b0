#!/bin/sh
# Citation check (docs/design.md §8.2): every `design.md §N[.M]` and
# `api.md §N[.M]` in the tree names a heading that exists in docs/design.md or
# docs/api.md (`## N. Title`, `### N.M Title`), and no other form cites a
# section of them.  Fails (exit 1) on
#  - a citation of a section that does not exist;
#  - another form: `design.md 6.9`, `design.md section 8`, `design.md §6b`,
#    `design 6.19`, `section 4 of design.md`, or a bare `§6.9` outside the two
#    documents (where it cites the document itself and is checked likewise).
# Usage: tools/check-citations.sh [FILE...]   (default: every file git tracks,
# and the untracked ones it does not ignore)
set -eu
cd "$(dirname "$0")/.."

if [ $# -eq 0 ]; then
	if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
		files=$(git ls-files --cached --others --exclude-standard)
	else
		files=$(find . -type f ! -path './build/*' ! -path './var/*' ! -path './.git/*' |
		    sed 's|^\./||')
	fi
	set -- $(printf '%s\n' "$files" | grep -v -e '^tools/fix-citations\.sh$' \
	    -e '^tools/check-citations\.sh$' -e '^tests/fuzz/seeds/')
fi

exec perl -CSD -Mutf8 -e '
use strict; use warnings;
my %doc = (design => "docs/design.md", api => "docs/api.md");
my %have;
for my $d (keys %doc) {
	open(my $fh, "<:encoding(UTF-8)", $doc{$d}) or die "$doc{$d}: $!\n";
	while (<$fh>) {
		$have{$d}{$1} = 1 if /^#{2,6}\s+(\d+(?:\.\d+)?)(?:\.|\s|$)/;
	}
	close $fh;
}
my $num = qr/\d+(?:\.\d+)?/;
my @other = (
	qr/\b(?:design|api)\.md,?\s+(?:sections?\s+|sec\.\s*|§\s+)\d\S*/i,
	qr/\b(?:design|api)\.md,?\s+\d\S*/i,
	qr/\b(?:design|api)\.md §\d+(?:\.\d+)?[A-Za-z]\w*/,
	qr/\b(?:design|api)\.md §\d+(?:\.\d+){2,}/,
	qr/\bdesign,?\s+(?:sections?\s+)?§?\d[\d.]*\b/i,
	qr/\b(?:sections?|§)\s*\d[\d.]*\s+(?:of|in)\s+(?:the\s+)?(?:design|api)\b/i,
);
my ($fail, $n) = (0, 0);
for my $f (@ARGV) {
	next unless -f $f && -T $f;
	my $self = (grep { $doc{$_} eq $f } keys %doc)[0];
	open(my $fh, "<:encoding(UTF-8)", $f) or die "$f: $!\n";
	while (my $line = <$fh>) {
		my $ln = $.;
		my $bad = sub { print "$f:$ln: $_[0]\n"; $fail = 1; };
		# The one form: a citation of a heading that exists.
		while ($line =~ /\b(design|api)\.md §($num)(?![\w.]*\w)/g) {
			$n++;
			$bad->("$1.md §$2: no such section in $doc{$1}")
			    unless $have{$1}{$2};
		}
		for my $re (@other) {
			$bad->("cite as design.md §N[.M] or api.md §N[.M]: $&")
			    while $line =~ /$re/g;
		}
		# A bare § (not right after design.md / api.md).
		while ($line =~ /(?<!design\.md )(?<!api\.md )§\s*(\S*)/g) {
			my $what = $1;
			if (!defined $self) {
				$bad->("bare §$what: cite as design.md §N[.M] or api.md §N[.M]");
			} elsif ($what =~ /^($num)(?![\w.]*\w)/) {
				$n++;
				$bad->("§$1: no such section in $f") unless $have{$self}{$1};
			}
		}
	}
	close $fh;
}
print "citations: ok ($n checked)\n" unless $fail;
exit $fail;
' "$@"
