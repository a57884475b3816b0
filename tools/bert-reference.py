#!/usr/bin/env python3
"""Reference token ids and embeddings of the BERT candidates, by an
implementation independent of encoder/bert.c: HF `tokenizers` on the
package's tokenizer.json and onnxruntime on the package's ONNX graph
(tools/bert-requirements.txt).  tests/unit/test_bert.c compares the C
encoder with what this writes (design.md §15: cosine >= 0.999).

usage: bert-reference.py NAME PKGDIR TEXTS OUTSTEM

TEXTS: UTF-8, one text a line ("\\n"-separated; a final newline adds no
text; "\\r" stays in the text).  Text i is embedded as a query when i is
even, as a passage when odd (the model card's prefix of that role, as
tools/bert-convert.py writes it into the model file).
Pipeline: prefix + text -> tokenizer (padding off, truncation to the
model's max tokens incl. [CLS]/[SEP]) -> one text a run, token types 0,
mask 1 -> mean over tokens or token 0 -> L2 normalisation.

Writes OUTSTEM.tokens ("i<TAB>role<TAB>n<TAB>ids" a line) and OUTSTEM.f16
("ARPSF16\\0", u32 n, u32 dim, then n*dim IEEE half floats, little endian).
"""
import os, struct, sys

import numpy as np

BGE_QUERY = "Represent this sentence for searching relevant passages: "
MODELS = {  # pooling, max tokens, (query prefix, passage prefix): as bert-convert.py
    "all-minilm-l6-v2": ("mean", 256, ("", "")),
    "bge-small-en-v1.5": ("cls", 512, (BGE_QUERY, "")),
    "e5-small-v2": ("mean", 512, ("query: ", "passage: ")),
}


def main():
    if len(sys.argv) != 5 or sys.argv[1] not in MODELS:
        sys.exit(__doc__)
    name, pkg, texts_path, stem = sys.argv[1:]
    pooling, max_len, prefixes = MODELS[name]
    from tokenizers import Tokenizer
    import onnxruntime as ort

    tok = Tokenizer.from_file(os.path.join(pkg, "tokenizer.json"))
    tok.no_padding()  # the MiniLM tokenizer.json pads and cuts at 128
    tok.enable_truncation(max_length=max_len)
    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    sess = ort.InferenceSession(os.path.join(pkg, "model.onnx"), so,
                                providers=["CPUExecutionProvider"])
    inputs = {i.name for i in sess.get_inputs()}

    raw = open(texts_path, encoding="utf-8", newline="").read()
    if raw.endswith("\n"):
        raw = raw[:-1]
    texts = raw.split("\n")
    vecs, lines = [], []
    for i, t in enumerate(texts):
        role = i % 2
        ids = tok.encode(prefixes[role] + t).ids
        feed = {"input_ids": np.array([ids], np.int64),
                "attention_mask": np.ones((1, len(ids)), np.int64),
                "token_type_ids": np.zeros((1, len(ids)), np.int64)}
        h = sess.run(None, {k: v for k, v in feed.items() if k in inputs})[0][0]
        e = h[0] if pooling == "cls" else h.mean(0)
        e = e / max(float(np.linalg.norm(e)), 1e-12)
        vecs.append(e.astype(np.float32))
        lines.append(f"{i}\t{'query' if role == 0 else 'passage'}\t{len(ids)}\t"
                     + " ".join(map(str, ids)) + "\n")
    E = np.stack(vecs)
    with open(stem + ".tokens", "w") as f:
        f.writelines(lines)
    with open(stem + ".f16", "wb") as f:
        f.write(b"ARPSF16\0" + struct.pack("<II", *E.shape))
        f.write(E.astype("<f2").tobytes())
    print(f"bert-reference: {name}: {len(texts)} texts -> {stem}.tokens, {stem}.f16",
          file=sys.stderr)


if __name__ == "__main__":
    main()
