#!/usr/bin/env node
// JavaScript side of `make eval-matching` and `make bench-matching`.
//   node tools/match-eval.mjs eval tests/matching/pairs.tsv [BIOS_TXT CRITERIA_TXT]
//   node tools/match-eval.mjs bench TEXT_FILE ITERATIONS
// eval reports the package's own runtime (the reference the C encoder is
// tested against) with the plain cosine and, given the calibration files
// (tests/matching/calibration/), centred as the service ranks: each side
// minus its mean over the calibration texts (as this runtime embeds them),
// renormalised (design.md §7).
import fs from 'node:fs';
import { loadModel, embedText, cosine } from './use-js.mjs';

const [mode, file, iters, critFile] = process.argv.slice(2);
const m = await loadModel();

function texts(path) {
  return fs.readFileSync(path, 'utf8').split('\n').map(l => l.replace(/\r$/, ''))
    .filter(l => l && !l.startsWith('#'));
}

async function mean(list) {
  const acc = new Float64Array(512);
  for (const t of list) {
    const v = await embedText(m, t);
    for (let d = 0; d < 512; d++) acc[d] += v[d];
  }
  return Array.from(acc, x => x / list.length);
}

function centre(v, mu) {
  const c = v.map((x, d) => x - mu[d]);
  const n = Math.sqrt(c.reduce((a, x) => a + x * x, 0));
  return c.map(x => x / n);
}

function report(name, vb, vc) {
  const n = vb.length;
  let top1 = 0, mrr = 0;
  for (let i = 0; i < n; i++) {
    const s = vc.map(c => cosine(vb[i], c));
    let rank = 1;
    for (let j = 0; j < n; j++) if (j !== i && s[j] >= s[i]) rank++;
    if (rank === 1) top1++;
    mrr += 1 / rank;
  }
  if (name.length > 22) { console.log(name); name = ''; }
  console.log(`${name.padEnd(22)} top-1 ${String(top1).padStart(2)}/${n} = ${(top1 / n).toFixed(3)}   MRR ${(mrr / n).toFixed(3)}`);
}

if (mode === 'eval') {
  const pairs = fs.readFileSync(file, 'utf8').split('\n')
    .filter(l => l && !l.startsWith('#') && l.includes('\t')).map(l => l.split('\t'));
  const vb = [], vc = [];
  for (const [b, c] of pairs) { vb.push(await embedText(m, b)); vc.push(await embedText(m, c)); }
  report('JS reference (tfjs)', vb, vc);
  if (iters && critFile) {
    const mb = await mean(texts(iters)), mc = await mean(texts(critFile));
    report('JS reference, centred (its own means of the calibration set)',
      vb.map(v => centre(v, mb)), vc.map(v => centre(v, mc)));
  }
} else if (mode === 'bench') {
  const text = fs.readFileSync(file, 'utf8').trim();
  const n = Number(iters) || 50;
  for (let i = 0; i < 5; i++) await m.model.embed(text);       // warm up
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < n; i++) await m.model.embed(text);
  const ms = Number(process.hrtime.bigint() - t0) / 1e6 / n;
  console.log(`JS reference (tfjs ${m.core.getBackend()}): ${ms.toFixed(2)} ms per bio (${text.split(/\s+/).length} words, ${m.model.tokenizer.encode(text).length} tokens)`);
} else {
  console.error('usage: match-eval.mjs eval PAIRS_TSV [BIOS_TXT CRITERIA_TXT] | bench TEXT_FILE N');
  process.exit(2);
}
