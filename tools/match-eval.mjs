#!/usr/bin/env node
// JavaScript side of `make eval-matching` and `make bench-matching`.
//   node tools/match-eval.mjs eval tests/matching/pairs.tsv
//   node tools/match-eval.mjs bench TEXT_FILE ITERATIONS
import fs from 'node:fs';
import { loadModel, embedText, cosine } from './use-js.mjs';

const [mode, file, iters] = process.argv.slice(2);
const m = await loadModel();
if (mode === 'eval') {
  const pairs = fs.readFileSync(file, 'utf8').split('\n')
    .filter(l => l && !l.startsWith('#') && l.includes('\t')).map(l => l.split('\t'));
  const n = pairs.length;
  const vb = [], vc = [];
  for (const [b, c] of pairs) { vb.push(await embedText(m, b)); vc.push(await embedText(m, c)); }
  let top1 = 0, mrr = 0;
  for (let i = 0; i < n; i++) {
    const s = vc.map(c => cosine(vb[i], c));
    let rank = 1;
    for (let j = 0; j < n; j++) if (j !== i && s[j] >= s[i]) rank++;
    if (rank === 1) top1++;
    mrr += 1 / rank;
  }
  console.log(`${'JS reference (tfjs)'.padEnd(22)} top-1 ${String(top1).padStart(2)}/${n} = ${(top1 / n).toFixed(3)}   MRR ${(mrr / n).toFixed(3)}`);
} else if (mode === 'bench') {
  const text = fs.readFileSync(file, 'utf8').trim();
  const n = Number(iters) || 50;
  for (let i = 0; i < 5; i++) await m.model.embed(text);       // warm up
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < n; i++) await m.model.embed(text);
  const ms = Number(process.hrtime.bigint() - t0) / 1e6 / n;
  console.log(`JS reference (tfjs ${m.core.getBackend()}): ${ms.toFixed(2)} ms per bio (${text.split(/\s+/).length} words, ${m.model.tokenizer.encode(text).length} tokens)`);
} else {
  console.error('usage: match-eval.mjs eval PAIRS_TSV | bench TEXT_FILE N');
  process.exit(2);
}
