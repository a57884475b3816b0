#!/bin/sh
# Rewrite citations of the design record into the one form the tree uses,
# `design.md §N[.M]` (docs/design.md) or `api.md §N[.M]` (docs/api.md), and
# check the result with tools/check-citations.sh.  Re-runnable: a citation
# already in that form matches no rule.  Written for issue 10 so that branches
# merged later can be run through it again; it may be deleted afterwards.
# Usage: tools/fix-citations.sh   (from anywhere inside the checkout)
set -eu
cd "$(dirname "$0")/.."

# Old text -> new text.  Order matters: the brief's `6b` (answer shapes) is
# docs/design.md §6.20; lists and ranges are spelt out one citation each.
rules='
s/(design\.md [0-9., -]*)\b6b\b/\16.20/g
s/design\.md sections? ([0-9]+(\.[0-9]+)?)\b/design.md §\1/g
s/design\.md ([0-9]+(\.[0-9]+)?)\b/design.md §\1/g
s/\(design ([0-9]+(\.[0-9]+)?)\)/(design.md §\1)/g
s#/\* §([0-9])#/* design.md §\1#g
:list
s/((design|api)\.md §[0-9]+(\.[0-9]+)?), ([0-9]+(\.[0-9]+)?)\b/\1, \2.md §\4/
s/((design|api)\.md §[0-9]+(\.[0-9]+)?) - ([0-9]+(\.[0-9]+)?)\b/\1 to \2.md §\4/
t list
'

git grep -lE 'design\.md|design [0-9]|/\* §[0-9]' -- . \
    ':!docs/design.md' ':!tools/fix-citations.sh' ':!tools/check-citations.sh' |
while IFS= read -r f; do
	sed -E -i "$rules" "$f"
done
exec tools/check-citations.sh
