// make demo: fill a running dev stack (make run) with something to show
// (issue 37): a researcher with funded, published studies, and an owner
// with claimed agents, some of them taking part in those studies in every
// state a participation passes through.  Everything goes through the API as
// a client would, but three steps no request can make: the operator's
// top-up (arps-admin topup), and the studies' creation moved two hours back
// (arps-fixture study-backdate, the dev stack's test fixtures) so that an
// agent of any tier, a new one included, sees them at once instead of after
// first_access_minutes.
//
// Refuses a second run (the researcher's account exists): the data is made
// once per stack; `rm -rf var` (make run's stack stopped) starts over.
//
//   ARPS_VAR=var node tools/demo.mjs      (tools/dev.sh demo, make demo)
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

const ROOT = process.env.ARPS_ROOT || path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');
const VAR = process.env.ARPS_VAR || path.join(ROOT, 'var');
const CONF = path.join(VAR, 'arps.conf');
const RESEARCHER = 'demo-researcher@example.org';
const OWNER = 'demo-owner@example.org';
const BACKDATE = 2 * 3600;
const TOPUP = 100000; // cents: $1,000.00

const die = (msg) => {
	console.error(`arps demo: ${msg}`);
	process.exit(1);
};
const conf = (key) => {
	const m = new RegExp(`^${key.replace('.', '\\.')}\\s*=\\s*(.*)$`, 'm').exec(fs.readFileSync(CONF, 'utf8'));
	return m ? m[1].trim() : null;
};
const SITE = conf('base_url') || die(`no base_url in ${CONF}`);
const API = SITE + '/api/v1';
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function call(method, p, { key, token, body } = {}) {
	const headers = {};
	if (key) headers['X-API-Key'] = key;
	if (token) headers.Authorization = `Bearer ${token}`;
	if (body !== undefined) headers['Content-Type'] = 'application/json';
	const res = await fetch(API + p, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
	const text = await res.text();
	let json = null;
	try { json = JSON.parse(text); } catch { /* not JSON */ }
	if (!res.ok) die(`${method} ${p}: ${res.status} ${text.slice(0, 300)}`);
	return json;
}

function admin(bin, ...args) {
	try {
		return execFileSync(path.join(ROOT, 'build', bin), ['--config', CONF, ...args],
			{ encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
	} catch (e) {
		die(`${bin} ${args.join(' ')}: ${(e.stderr || e.message).trim()}`);
	}
}

function accountExists(email) {
	try {
		execFileSync(path.join(ROOT, 'build/arps-admin'), ['--config', CONF, 'wallet', email],
			{ stdio: 'ignore' });
		return true;
	} catch {
		return false;
	}
}

// The newest mail to `email` in the dev stack's mail sink, newer than `since`.
async function loginCode(email, since) {
	const dir = path.join(VAR, 'mail');
	for (let i = 0; i < 100; i++) {
		const mails = fs.readdirSync(dir).filter((f) => f.endsWith('.eml') && !f.startsWith('.'))
			.map((f) => path.join(dir, f)).filter((f) => fs.statSync(f).mtimeMs >= since)
			.map((f) => fs.readFileSync(f, 'utf8')).filter((t) => t.includes(`\nTo: ${email}\n`) || t.startsWith(`To: ${email}\n`));
		for (const t of mails) {
			const m = /\b(\d{6})\b/.exec(t.slice(t.indexOf('\n\n')));
			if (m) return m[1];
		}
		await sleep(100);
	}
	die(`no login code for ${email} in ${dir} (is arps-deliver running?)`);
}

async function login(email) {
	const since = Date.now() - 1000;
	await call('POST', '/auth/email/send-code', { body: { email } });
	const code = await loginCode(email, since);
	return (await call('POST', '/auth/login', { body: { provider: 'email', email, code } })).access_token;
}

const STUDIES = [
	{ title: 'Sleep and shift work', description: 'A 15-minute survey about sleep, schedules and rest.',
	  study_url: 'https://survey.example.org/s/sleep', reward_per_participant: 500, max_participants: 10,
	  estimated_duration_minutes: 15,
	  screening_criteria: 'Healthcare workers, nurses or carers who have worked rotating or night shifts.' },
	{ title: 'Design tool habits', description: 'Which design software you use, and why. About 10 minutes.',
	  study_url: 'https://survey.example.org/s/design', reward_per_participant: 250, max_participants: 20,
	  estimated_duration_minutes: 10,
	  screening_criteria: 'Graphic designers, illustrators or anyone who uses design software at work.' },
	{ title: 'Gardening in small spaces', description: 'A diary task: one week of balcony or window gardening.',
	  study_url: 'https://survey.example.org/s/garden', reward_per_participant: 1200, max_participants: 5,
	  estimated_duration_minutes: 45,
	  screening_criteria: 'People who grow plants, herbs or vegetables at home, on a balcony or in a garden.' },
	{ title: 'Phones and older adults', description: 'A short interview about using a smartphone after 60.',
	  study_url: 'https://survey.example.org/s/phones', reward_per_participant: 800, max_participants: 8,
	  estimated_duration_minutes: 20,
	  screening_criteria: 'Adults over 60, retired people, and their carers who help them with phones.' },
];

const AGENTS = [
	{ name: 'Ada', description: 'Assistant of a retired nurse',
	  bio: 'Retired night-shift nurse in Lyon, 64; gardens on her balcony; uses an old Android phone.' },
	{ name: 'Bram', description: 'Assistant of a freelance designer',
	  bio: 'Freelance graphic designer in Rotterdam, 31; works in Figma and Affinity; grows herbs on a windowsill.' },
	{ name: 'Chidi', description: 'Assistant of a hospital porter',
	  bio: 'Hospital porter in Leeds, 45, on rotating shifts; two teenagers; walks a lot; iPhone user.' },
	{ name: 'Dana', description: 'Assistant of a retired teacher',
	  bio: 'Retired primary-school teacher in Porto, 68; allotment gardener; learning to use a smartphone.' },
];

async function main() {
	if (!fs.existsSync(CONF)) die(`no ${CONF}: start the stack first (make run)`);
	try {
		await fetch(API + '/health');
	} catch {
		die(`nothing answers at ${SITE}: start the stack first (make run)`);
	}
	if (accountExists(RESEARCHER))
		die(`already done: ${RESEARCHER} has an account on this stack (to start over, stop make run and remove ${VAR})`);

	// The researcher, funded by the operator, publishes the studies.
	const rtoken = await login(RESEARCHER);
	admin('arps-admin', 'topup', RESEARCHER, String(TOPUP));
	const studies = [];
	for (const s of STUDIES) studies.push(await call('POST', '/studies', { token: rtoken, body: s }));
	admin('tests/arps-fixture', 'study-backdate', String(BACKDATE), ...studies.map((s) => s.id));

	// The owner's agents: registered, described, claimed.
	const otoken = await login(OWNER);
	const agents = [];
	for (const a of AGENTS) {
		const r = await call('POST', '/agents/register', { body: { name: a.name, description: a.description } });
		await call('POST', '/profile/bio', { key: r.api_key, body: { bio: a.bio } });
		await call('POST', '/heartbeat', { key: r.api_key });
		await call('POST', '/auth/claim', { token: otoken, body: { claim_code: r.claim_code } });
		agents.push({ ...a, id: r.agent_id, key: r.api_key });
	}

	// Participations in every state.
	const [s1, s2, s3] = studies;
	const [ada, bram, chidi] = agents;
	const take = async (agent, study, upto) => {
		await call('POST', `/studies/${study.id}/accept`, { key: agent.key });
		if (upto === 'accepted') return;
		await call('GET', `/studies/${study.id}`, { key: agent.key }); // opening it: in_progress
		if (upto === 'in_progress') return;
		await call('POST', `/studies/${study.id}/complete`, { key: agent.key, body: {} });
	};
	const review = async (study, verdict, reason) => {
		const list = (await call('GET', `/studies/${study.id}/participants`, { token: rtoken })).participants;
		const p = list.find((x) => x.status === 'submitted');
		await call('POST', `/studies/${study.id}/participants/${p.participant_id}/${verdict}`,
			{ token: rtoken, body: { reason } });
	};
	await take(ada, s1, 'submitted');
	await review(s1, 'approve', 'Thank you, clear answers.');
	await take(bram, s1, 'submitted');
	await review(s1, 'reject', 'The answers did not match the screening.');
	await take(ada, s2, 'submitted');
	await take(bram, s3, 'in_progress');
	await take(chidi, s1, 'accepted');

	const out = [];
	out.push(`arps demo: ${SITE}/ has demo data now`);
	out.push('');
	out.push(`researcher  ${RESEARCHER}  ($${(TOPUP / 100).toFixed(2)} topped up, ${studies.length} studies published)`);
	out.push(`  console:  ${SITE}/ -> log in with ${RESEARCHER}; the code arrives in ${path.join(VAR, 'mail')}/`);
	out.push(`            (grep -l 'To: ${RESEARCHER}' ${path.join(VAR, 'mail')}/*.eml)`);
	out.push(`  curl:     TOKEN=${rtoken}`);
	out.push(`owner       ${OWNER}  (owns the agents below)`);
	out.push(`  curl:     OWNER_TOKEN=${otoken}`);
	out.push('');
	out.push(`studies (created ${BACKDATE / 3600} h ago, so every tier sees them now; a new agent too):`);
	for (const s of studies) out.push(`  ${s.id}  ${s.title}`);
	out.push('');
	out.push('agents (claimed by the owner; keys shown once):');
	const what = {
		Ada: 'approved in the first study, submitted in the second (waiting for review)',
		Bram: 'rejected in the first study, in progress in the third',
		Chidi: 'accepted the first study',
		Dana: 'free: try GET /studies/available and accept one',
	};
	for (const a of agents) out.push(`  ${a.id}  ${a.name.padEnd(6)} ${a.key}\n      ${what[a.name]}`);
	out.push('');
	out.push(`e.g. curl -s ${API}/studies/available -H 'X-API-Key: ${agents[3].key}'`);
	console.log(out.join('\n'));
}

await main();
