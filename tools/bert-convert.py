#!/usr/bin/env python3
"""Convert a BERT sentence encoder package into the flat model file that
encoder/bert.c maps (format: encoder/bert.h; design.md §15).

usage: bert-convert.py NAME PKGDIR OUT

NAME    all-minilm-l6-v2 | bge-small-en-v1.5 | e5-small-v2 (the facts below)
PKGDIR  model.onnx (or model.safetensors) + tokenizer.json (tools/bert-fetch.sh)
OUT     the model file, e.g. build/model/bge-small-en-v1.5.bin

Runs in the pinned venv (tools/bert-requirements.txt: onnx, numpy, tokenizers,
safetensors).  Weights: the ONNX graph's initializers; the six Linear weights
of a layer are anonymous ("onnx::MatMul_<n>", stored [in,out]) and get their
role from the graph (MatMul -> Add with the named bias).  A safetensors file
(HF names, Linear [out,in]) is read too.

Tokenizer tables: probed from the HF `tokenizers` library itself, code point
by code point, so the C tokenizer follows the reference's own Unicode
tables (not Python's unicodedata): what BertNormalizer makes of each code
point (clean_text, CJK padding, NFD + drop Mn, lowercase) and whether
BertPreTokenizer splits on it (whitespace, punctuation).
"""
import json, os, re, struct, sys

import numpy as np

MAGIC = b"ARPSBRT1"
VERSION = 1
NSEC = 32
HDR = 128 + 16 * NSEC
NR = 64  # panel width of the GEMM kernels (encoder/kernels.h)

# Section indices: enum bert_section in encoder/bert.h.
SEC = dict(WORD_EMB=0, POS_EMB=1, TYPE_EMB=2, EMB_LN_G=3, EMB_LN_B=4,
           QKV_W=5, QKV_B=6, OUT_W=7, OUT_B=8, LN1_G=9, LN1_B=10,
           FF1_W=11, FF1_B=12, FF2_W=13, FF2_B=14, LN2_G=15, LN2_B=16,
           QKV_WB=17, OUT_WB=18, FF1_WB=19, FF2_WB=20,
           VOCAB_OFF=21, VOCAB_BYTES=22, VOCAB_HASH=23,
           UNI_RUNS=24, UNI_MAP=25, UNI_DATA=26,
           ADDED=27, ADDED_BYTES=28, PREFIX_QUERY=29, PREFIX_PASSAGE=30)

BGE_QUERY = "Represent this sentence for searching relevant passages: "
# Per model card (tools/bert.sha256 names the packages):
#  pooling   sentence-transformers modules / langchain4j PoolingMode
#  max       tokens incl. [CLS]/[SEP] (MiniLM: sentence-transformers' 256)
#  prefixes  the card's query / passage prefixes
MODELS = {
    "all-minilm-l6-v2": dict(pooling=0, max_tokens=256, query="", passage=""),
    "bge-small-en-v1.5": dict(pooling=1, max_tokens=512, query=BGE_QUERY, passage=""),
    "e5-small-v2": dict(pooling=0, max_tokens=512, query="query: ", passage="passage: "),
}

# class byte of a code point run (encoder/wordpiece.h WP_*)
ACT_IDENT, ACT_DELETE, ACT_MAP = 0, 1, 2
F_CJK, F_PUNCT, F_WS = 4, 8, 16


def die(msg):
    sys.exit("bert-convert: " + msg)


def load_onnx(path):
    import onnx
    from onnx import numpy_helper
    g = onnx.load(path).graph
    init = {t.name: t for t in g.initializer}
    consumers = {}
    for n in g.node:
        for i in n.input:
            consumers.setdefault(i, []).append(n)
    w = {}
    for name, t in init.items():
        if not name.startswith("onnx::"):
            w[name] = numpy_helper.to_array(t)
    for n in g.node:
        if n.op_type != "MatMul":
            continue
        ws = [i for i in n.input if i in init]
        if not ws:
            continue
        bias = None
        for c in consumers.get(n.output[0], []):
            if c.op_type == "Add":
                b = [i for i in c.input if i in init and i.endswith(".bias")]
                bias = b[0] if b else bias
        if bias is None:
            die(f"MatMul {ws[0]} has no named bias")
        role = bias[: -len(".bias")] + ".weight"
        w[role] = numpy_helper.to_array(init[ws[0]])  # [in, out]
    ops = {n.op_type for n in g.node}
    if ops & {"QuantizeLinear", "DequantizeLinear", "MatMulInteger", "DynamicQuantizeLinear"}:
        die("quantized graph")
    return w


def load_safetensors(path):
    from safetensors.numpy import load_file
    w = {}
    for k, v in load_file(path).items():
        k = k[len("bert."):] if k.startswith("bert.") else k
        if v.ndim == 2 and k.startswith("encoder.layer.") and k.endswith(".weight"):
            v = np.ascontiguousarray(v.T)  # Linear [out,in] -> [in,out]
        w[k] = v
    return w


def f32(a):
    a = np.ascontiguousarray(a, dtype="<f4")
    if not np.all(np.isfinite(a)):
        die("non-finite weight")
    return a


def panels(m):
    """[in][out] -> 64-column panels, panel p = in x 64 floats."""
    k, n = m.shape
    assert n % NR == 0
    return np.ascontiguousarray(m.reshape(k, n // NR, NR).transpose(1, 0, 2))


def bf16_panels(m):
    """[in][out] -> bf16 (round to nearest even) panels of [in/2][64][2]."""
    k, n = m.shape
    assert k % 2 == 0 and n % NR == 0
    u = np.ascontiguousarray(m, dtype="<f4").view("<u4").astype(np.uint64)
    b = ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype("<u2")
    return np.ascontiguousarray(b.reshape(k // 2, 2, n // NR, NR).transpose(2, 0, 3, 1))


def fnv1a(data, h=2166136261):
    for c in data:
        h = ((h ^ c) * 16777619) & 0xFFFFFFFF
    return h


def unicode_tables(tok):
    """Run-length classes of every code point and the normalizer's mapping,
    probed from tokenizers' BertNormalizer and BertPreTokenizer."""
    norm, pre = tok.normalizer, tok.pre_tokenizer
    cls = bytearray(0x110000)
    maps = {}
    for cp in range(0x110000):
        if 0xD800 <= cp <= 0xDFFF:
            cls[cp] = ACT_DELETE  # the C decoder reads them as U+FFFD
            continue
        c = chr(cp)
        out = norm.normalize_str(c)
        k = 0
        if out == c:
            k = ACT_IDENT
        elif out == "":
            k = ACT_DELETE
        else:
            inner = out
            if len(out) >= 3 and out[0] == " " and out[-1] == " " and c != " ":
                inner = out[1:-1]
                if " " in inner or not inner:
                    die(f"U+{cp:04X}: unexpected normalization {out!r}")
                k |= F_CJK
            if inner != c:
                k |= ACT_MAP
                maps[cp] = [ord(x) for x in inner]
        # pre-tokenizer: whitespace drops the char, punctuation isolates it
        p = [s for s, _ in pre.pre_tokenize_str("a" + c + "a")]
        if p == ["a", "a"]:
            k |= F_WS
        elif p == ["a", c, "a"]:
            k |= F_PUNCT
        elif p != ["a" + c + "a"]:
            die(f"U+{cp:04X}: unexpected pre-tokenization {p!r}")
        cls[cp] = k
    runs = []
    for cp in range(0x110000):
        if cp == 0 or cls[cp] != cls[cp - 1]:
            runs.append(cp | cls[cp] << 24)
    keys = sorted(maps)
    idx, data = [], []
    for cp in keys:
        v = maps[cp]
        if len(v) > 31:
            die(f"U+{cp:04X}: mapping longer than 31")
        idx += [cp, len(data) << 5 | len(v)]
        data += v
    # every mapped code point must itself be a plain (identity) one, so
    # that the C side need not normalise twice
    for cp in data:
        if cls[cp] & 3 != ACT_IDENT:
            die(f"mapped output U+{cp:04X} is not normalised")
    return (np.array(runs, "<u4"), np.array(idx, "<u4"), np.array(data, "<u4"),
            len(runs), len(keys))


def check_tokenizer(tj):
    n = tj["normalizer"]
    want = {"type": "BertNormalizer", "clean_text": True, "handle_chinese_chars": True,
            "lowercase": True}
    for k, v in want.items():
        if n.get(k) != v:
            die(f"normalizer {k} = {n.get(k)!r}")
    if n.get("strip_accents") not in (None, True):
        die("strip_accents false")
    if tj["pre_tokenizer"]["type"] != "BertPreTokenizer":
        die("pre_tokenizer")
    m = tj["model"]
    if m["type"] != "WordPiece" or m["continuing_subword_prefix"] != "##":
        die("model is not WordPiece with ##")
    for a in tj["added_tokens"]:
        if a["normalized"] or a["lstrip"] or a["rstrip"] or a["single_word"]:
            die(f"added token {a['content']} with options")


def main():
    if len(sys.argv) != 4:
        die(__doc__)
    name, pkg, out = sys.argv[1:]
    if name not in MODELS:
        die(f"unknown model {name}")
    cfg = MODELS[name]
    from tokenizers import Tokenizer
    tj = json.load(open(os.path.join(pkg, "tokenizer.json"), encoding="utf-8"))
    check_tokenizer(tj)
    tok = Tokenizer.from_file(os.path.join(pkg, "tokenizer.json"))

    if os.path.exists(os.path.join(pkg, "model.onnx")):
        w = load_onnx(os.path.join(pkg, "model.onnx"))
    else:
        w = load_safetensors(os.path.join(pkg, "model.safetensors"))
    L = 1 + max(int(m.group(1)) for k in w if (m := re.match(r"encoder\.layer\.(\d+)\.", k)))
    we = f32(w["embeddings.word_embeddings.weight"])
    vocab, H = we.shape
    pe = f32(w["embeddings.position_embeddings.weight"])
    max_pos = pe.shape[0]
    F = w["encoder.layer.0.intermediate.dense.weight"].shape[1]
    heads = 12
    if H != 384 or F != 1536 or max_pos < cfg["max_tokens"]:
        die(f"shape: hidden {H} ffn {F} positions {max_pos}")

    def lw(l, r):
        return f32(w[f"encoder.layer.{l}.{r}"])

    secs = {}
    qkv_w, qkv_b, out_w, ff1_w, ff2_w = [], [], [], [], []
    for l in range(L):
        q, k, v = (lw(l, f"attention.self.{r}.weight") for r in ("query", "key", "value"))
        qkv_w.append(np.concatenate([q, k, v], axis=1))
        qkv_b.append(np.concatenate([lw(l, f"attention.self.{r}.bias")
                                     for r in ("query", "key", "value")]))
        out_w.append(lw(l, "attention.output.dense.weight"))
        ff1_w.append(lw(l, "intermediate.dense.weight"))
        ff2_w.append(lw(l, "output.dense.weight"))
    for m_ in qkv_w + out_w + ff1_w + ff2_w:
        assert m_.shape[0] in (H, F) and m_.shape[1] in (H, 3 * H, F)
    secs["WORD_EMB"] = we
    secs["POS_EMB"] = pe[: cfg["max_tokens"]]
    secs["TYPE_EMB"] = f32(w["embeddings.token_type_embeddings.weight"])[0]
    secs["EMB_LN_G"] = f32(w["embeddings.LayerNorm.weight"])
    secs["EMB_LN_B"] = f32(w["embeddings.LayerNorm.bias"])
    secs["QKV_W"] = np.stack([panels(m_) for m_ in qkv_w])
    secs["QKV_B"] = np.stack(qkv_b)
    secs["OUT_W"] = np.stack([panels(m_) for m_ in out_w])
    secs["OUT_B"] = np.stack([lw(l, "attention.output.dense.bias") for l in range(L)])
    secs["LN1_G"] = np.stack([lw(l, "attention.output.LayerNorm.weight") for l in range(L)])
    secs["LN1_B"] = np.stack([lw(l, "attention.output.LayerNorm.bias") for l in range(L)])
    secs["FF1_W"] = np.stack([panels(m_) for m_ in ff1_w])
    secs["FF1_B"] = np.stack([lw(l, "intermediate.dense.bias") for l in range(L)])
    secs["FF2_W"] = np.stack([panels(m_) for m_ in ff2_w])
    secs["FF2_B"] = np.stack([lw(l, "output.dense.bias") for l in range(L)])
    secs["LN2_G"] = np.stack([lw(l, "output.LayerNorm.weight") for l in range(L)])
    secs["LN2_B"] = np.stack([lw(l, "output.LayerNorm.bias") for l in range(L)])
    secs["QKV_WB"] = np.stack([bf16_panels(m_) for m_ in qkv_w])
    secs["OUT_WB"] = np.stack([bf16_panels(m_) for m_ in out_w])
    secs["FF1_WB"] = np.stack([bf16_panels(m_) for m_ in ff1_w])
    secs["FF2_WB"] = np.stack([bf16_panels(m_) for m_ in ff2_w])

    # vocabulary in id order, UTF-8, and an FNV-1a open-addressing hash
    v = tj["model"]["vocab"]
    pieces = [None] * vocab
    for p, i in v.items():
        if i >= vocab or pieces[i] is not None:
            die(f"vocab id {i}")
        pieces[i] = p.encode("utf-8")
    if any(p is None for p in pieces):
        die("vocab has holes")
    off = [0]
    for p in pieces:
        off.append(off[-1] + len(p))
    hs = 1
    while hs < 2 * vocab:
        hs *= 2
    hashtab = np.full(hs, -1, "<i4")
    for i, p in enumerate(pieces):
        h = fnv1a(p) & (hs - 1)
        while hashtab[h] >= 0:
            h = (h + 1) & (hs - 1)
        hashtab[h] = i
    secs["VOCAB_OFF"] = np.array(off, "<u4")
    secs["VOCAB_BYTES"] = np.frombuffer(b"".join(pieces), np.uint8)
    secs["VOCAB_HASH"] = hashtab
    max_piece = max(len(p) for p in pieces)
    # The C tokenizer skips NFD's canonical reordering (encoder/wordpiece.h):
    # exact as long as no piece holds a mark with a combining class, since
    # a word holding one is then [UNK] in any order.
    import unicodedata
    if any(unicodedata.combining(c) for p in v for c in p):
        die("a vocabulary piece holds a combining mark (canonical reordering needed)")

    runs, uidx, udata, nruns, nmap = unicode_tables(tok)
    secs["UNI_RUNS"], secs["UNI_MAP"], secs["UNI_DATA"] = runs, uidx, udata

    added, abytes = [], b""
    for a in sorted(tj["added_tokens"], key=lambda a: a["id"]):
        c = a["content"].encode("utf-8")
        added += [a["id"], len(abytes), len(c)]
        abytes += c
    secs["ADDED"] = np.array(added, "<u4")
    secs["ADDED_BYTES"] = np.frombuffer(abytes, np.uint8)
    for role in ("query", "passage"):
        p = cfg[role]
        if p and not p.endswith(" "):
            die("a prefix must end in a space (it is tokenized apart from the text)")
        secs["PREFIX_" + role.upper()] = np.frombuffer(p.encode("utf-8"), np.uint8)

    def special(t):
        i = v.get(t)
        if i is None:
            die(f"no {t}")
        return i

    # header (128 bytes) + section table + 64-byte aligned sections
    table, blobs, pos = [(0, 0)] * NSEC, [], (HDR + 63) // 64 * 64
    for k, i in SEC.items():
        b = np.ascontiguousarray(secs[k]).tobytes()
        if not b:
            continue
        table[i] = (pos, len(b))
        blobs.append((pos, b))
        pos = (pos + len(b) + 63) // 64 * 64
    size = blobs[-1][0] + len(blobs[-1][1])
    nm = name.encode()
    assert len(nm) < 40
    hdr = (MAGIC + struct.pack("<IIQ", VERSION, HDR, size)
           + struct.pack("<13I", NSEC, vocab, H, L, heads, F, max_pos, cfg["max_tokens"],
                         cfg["pooling"], special("[UNK]"), special("[CLS]"), special("[SEP]"),
                         tj["model"]["max_input_chars_per_word"])
           + struct.pack("<IfI", max_piece, 1e-12, hs) + nm.ljust(40, b"\0"))
    assert len(hdr) == 128, len(hdr)
    tmp = out + ".tmp"
    os.makedirs(os.path.dirname(out) or ".", exist_ok=True)
    with open(tmp, "wb") as f:
        f.write(hdr)
        for o, s in table:
            f.write(struct.pack("<QQ", o, s))
        for o, b in blobs:
            f.write(b"\0" * (o - f.tell()))
            f.write(b)
        assert f.tell() == size
    os.replace(tmp, out)
    print(f"bert-convert: {name}: {L} layers, vocab {vocab}, max {cfg['max_tokens']} tokens, "
          f"pooling {'cls' if cfg['pooling'] else 'mean'}, {nruns} code point runs, "
          f"{nmap} mappings, {size / 1e6:.1f} MB -> {out}", file=sys.stderr)


if __name__ == "__main__":
    main()
