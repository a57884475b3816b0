// Studies: create (every field, the server's messages beside their field,
// a live cost preview) and the list with a progress picture per study
// (api.md §7.4).
import { get, post, ApiError } from './api.js';
import { h, s, clear, errorBox, loading, field, busy, timeEl, flash, confirmDialog, statusBadge } from './ui.js';
import { usd, studyCost, parseDollars, parseWhole } from './money.js';
import { legend } from './chart.js';
import { whoFields, whoFacts, knownNames } from './who.js';

const FIELDS = ['title', 'description', 'study_url', 'reward_per_participant', 'max_participants',
	'estimated_duration_minutes', 'screening_criteria', 'deadline', 'completion_code'];

export async function studiesView(root) {
	root.append(h('h1', {}, 'Studies'));
	const createBox = h('section', { class: 'card', 'aria-labelledby': 'create-title' });
	const listBox = h('section', { class: 'card', 'aria-labelledby': 'list-title' });
	root.append(createBox, listBox);
	const list = studyList(listBox);
	createForm(createBox, list.reload);
	await list.reload();
}

// The client-side checks mirror the API's field rules (docs/api.md §7.4,
// core/validate.h), so every error shows at once beside its field; the API's
// own refusal (a private host, the per-study budget) is mapped to its field.
const LIMITS = {
	title: [1, 200], description: [1, 10000], screening_criteria: [1, 5000], completion_code: [1, 64],
	reward_per_participant: [1, 1000000], max_participants: [1, 10000], estimated_duration_minutes: [1, 1440],
};
const ONE_LINE = /^[^\u0000-\u001f\u007f]*$/u;
const TEXT = /^[^\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]*$/u;

export function textError(v, f, oneLine) {
	const [lo, hi] = LIMITS[f];
	const n = [...v].length;
	if (n === 0 || v.trim() === '') return 'Required.';
	if (n < lo || n > hi) return `At most ${hi.toLocaleString('en-US')} characters (now ${n.toLocaleString('en-US')}).`;
	if (!(oneLine ? ONE_LINE : TEXT).test(v)) return oneLine ? 'One line of text, without control characters.' : 'Text without control characters.';
	return null;
}

// The body and every field's error (null when fine), from the inputs.
export function checkStudy(v, now = Date.now()) {
	const err = {}, body = {};
	for (const f of ['title', 'description', 'screening_criteria']) {
		body[f] = v[f];
		err[f] = textError(v[f], f, f === 'title');
	}
	body.study_url = v.study_url.trim();
	let u = null;
	try { u = new URL(body.study_url); } catch { u = null; }
	err.study_url = body.study_url === '' ? 'Required.'
		: !u || !/^https?:$/.test(u.protocol) || !/^https?:\/\//i.test(body.study_url) ? 'An address starting with https:// or http://.'
			: new TextEncoder().encode(body.study_url).length > 2048 ? 'At most 2,048 bytes.' : null;
	body.reward_per_participant = parseDollars(v.reward_per_participant);
	err.reward_per_participant = v.reward_per_participant.trim() === '' ? 'Required.'
		: Number.isNaN(body.reward_per_participant) ? 'A dollar amount, such as 5 or 5.50.'
			: body.reward_per_participant < 1 || body.reward_per_participant > 1000000 ? 'From $0.01 to $10,000.00.' : null;
	for (const [f, what] of [['max_participants', 'participants'], ['estimated_duration_minutes', 'minutes']]) {
		const [lo, hi] = LIMITS[f];
		body[f] = parseWhole(v[f]);
		err[f] = v[f].trim() === '' ? 'Required.'
			: Number.isNaN(body[f]) ? `A whole number of ${what}.`
				: body[f] < lo || body[f] > hi ? `From ${lo} to ${hi.toLocaleString('en-US')}.` : null;
	}
	body.deadline = null;
	err.deadline = null;
	if (v.deadline) {
		const d = new Date(v.deadline);
		if (Number.isNaN(d.getTime())) err.deadline = 'A date and time.';
		else if (d.getTime() <= now) err.deadline = 'Must be in the future.';
		else body.deadline = d.toISOString().replace(/\.\d+Z$/, 'Z');
	}
	body.completion_code = v.completion_code === '' ? null : v.completion_code;
	err.completion_code = body.completion_code === null ? null : textError(v.completion_code, 'completion_code', true);
	return { body, err };
}

// The API's detail for a field, in the form's words: "title: must be ..."
// without its field name, the reward in dollars.
export function apiFieldError(e) {
	if (e.field === 'reward_per_participant' && /between/.test(e.detail)) return 'From $0.01 to $10,000.00.';
	const t = e.detail.slice(e.field.length + 2);
	return t.charAt(0).toUpperCase() + t.slice(1) + (/[.)]$/.test(t) ? '' : '.');
}

function createForm(box, reload) {
	const inputs = {
		title: h('input', { type: 'text', maxlength: 200, autocomplete: 'off' }),
		description: h('textarea', { rows: 3, maxlength: 10000 }),
		study_url: h('input', { type: 'url', placeholder: 'https://survey.example.org/s/1', maxlength: 2048 }),
		reward_per_participant: h('input', { type: 'text', inputmode: 'decimal', placeholder: '5.00', autocomplete: 'off' }),
		max_participants: h('input', { type: 'text', inputmode: 'numeric', placeholder: '10', autocomplete: 'off' }),
		estimated_duration_minutes: h('input', { type: 'text', inputmode: 'numeric', placeholder: '15', autocomplete: 'off' }),
		screening_criteria: h('textarea', { rows: 3, maxlength: 5000 }),
		deadline: h('input', { type: 'datetime-local' }),
		completion_code: h('input', { type: 'text', maxlength: 64, autocomplete: 'off' }),
	};
	const labels = {
		title: ['Title', null],
		description: ['Description', 'What participants will do; up to 10,000 characters.'],
		study_url: ['Study URL', 'Where the agent goes; http or https.'],
		reward_per_participant: ['Reward per participant ($)', 'In dollars, $0.01 to $10,000.00; paid to each approved participant.'],
		max_participants: ['Participants', '1 to 10,000.'],
		estimated_duration_minutes: ['Estimated duration (minutes)', '1 to 1,440.'],
		screening_criteria: ['Screening criteria', 'Who should take part, in plain language; agents are matched on it.'],
		deadline: ['Deadline (optional, your local time)', null],
		completion_code: ['Completion code (optional)', 'Agents must submit it to complete.'],
	};
	const preview = h('div', { class: 'preview', id: 'cost-preview', 'aria-live': 'polite' });
	const msg = h('div', { id: 'create-msg' });
	const button = h('button', { type: 'submit' }, 'Create and fund study');
	let available = null, feeBps = null;
	get('/wallet/balance').then((b) => { available = b.available_cents; update(); }).catch(() => {});
	// The configured fee (design.md §4.1); the server's answer to the create is authoritative.
	get('/account').then((a) => { feeBps = a.fee_bps; update(); }).catch(() => {});

	function update() {
		const reward = parseDollars(inputs.reward_per_participant.value);
		const max = parseWhole(inputs.max_participants.value);
		const c = studyCost(reward, max, feeBps);
		const body = c ? h('dl', {}, [
			['Reward', usd(c.reward)],
			[`Platform fee (${(feeBps / 100).toLocaleString('en-US')}%, rounded up to the cent)`, usd(c.fee)],
			['Per participant', usd(c.perParticipant)],
			[`Frozen now (${max.toLocaleString('en-US')} × ${usd(c.perParticipant)})`, usd(c.total)],
		].map(([k, v]) => [h('dt', {}, k), h('dd', {}, v)]))
			: h('p', { class: 'hint' }, feeBps === null ? 'Loading the fee…' : 'Enter a reward and a number of participants.');
		const warn = c && available !== null && c.total > available
			? h('p', { class: 'warn' }, `This is more than your available ${usd(available)}.`)
			: (available !== null ? h('p', { class: 'hint' }, `Available: ${usd(available)}`) : null);
		clear(preview, h('h3', {}, 'Cost'), body, warn);
	}
	inputs.reward_per_participant.addEventListener('input', update);
	inputs.max_participants.addEventListener('input', update);

	const who = whoFields(inputs.completion_code);
	const form = h('form', { novalidate: true, id: 'create-study' },
		h('div', { class: 'grid2' },
			h('div', {}, FIELDS.map((f) => field(f, labels[f][0], inputs[f], labels[f][1])), who.codesEl, who.eligEl),
			preview),
		msg, button);
	form.addEventListener('submit', async (ev) => {
		ev.preventDefault();
		clear(msg);
		const values = {};
		for (const f of FIELDS) values[f] = inputs[f].value;
		const { body, err } = checkStudy(values);
		for (const f of FIELDS) setFieldError(f, err[f]);
		const bad = FIELDS.filter((f) => err[f]);
		// Eligibility and codes with actions; the first code's own text error stays.
		const badWho = who.collect(body, body.reward_per_participant).filter((f) => !bad.includes(f));
		if (bad.length || badWho.length) {
			const n = bad.length + badWho.length;
			msg.append(h('p', { class: 'error', role: 'alert' },
				n === 1 ? 'One field needs a change.' : `${n} fields need a change.`));
			document.getElementById(bad[0] || badWho[0]).focus();
			return;
		}
		// Money moves: the amount frozen is named before anything is sent.
		const c = studyCost(body.reward_per_participant, body.max_participants, feeBps);
		const frozen = c ? `${usd(c.total)} (${body.max_participants.toLocaleString('en-US')} × ${usd(c.perParticipant)}, reward and fee)`
			: 'The budget (places × (reward + fee))';
		if (!(await confirmDialog(`Create "${body.title}" and fund it?`,
			`${frozen} is frozen from your available balance now, and the study opens to agents. ` +
			'Unused places come back to your wallet when it stops.', 'Create and fund'))) return;
		try {
			const st = await busy(button, 'Creating…', () => post('/studies', body));
			form.reset();
			who.reset();
			update();
			clear(msg, h('p', { class: 'ok success', role: 'status' }, `Study "${st.title}" is created and open to agents; `,
				`${usd(st.funding.frozen_cents)} is frozen from your wallet. `,
				h('a', { href: '#/studies/' + st.id }, 'Open the study')));
			flash(`Study "${st.title}" created; ${usd(st.funding.frozen_cents)} frozen.`);
			get('/wallet/balance').then((b) => { available = b.available_cents; update(); }).catch(() => {});
			await reload();
			const card = document.getElementById('study-' + st.id);
			if (card) {
				card.classList.add('new');
				card.scrollIntoView({ block: 'center' });
				card.querySelector('h3').focus({ preventScroll: true });
			}
		} catch (e) {
			if (e instanceof ApiError && who.apiError(e)) {
				msg.append(h('p', { class: 'error', role: 'alert' }, 'One field needs a change.'));
			} else if (e instanceof ApiError && e.field && FIELDS.includes(e.field)) {
				setFieldError(e.field, apiFieldError(e));
				inputs[e.field].focus();
			} else {
				msg.append(errorBox(e));
			}
		}
	});
	clear(box, h('h2', { id: 'create-title' }, 'New study'), form);
	update();
}

export function setFieldError(f, text) {
	const el = document.getElementById(f + '-error');
	const input = document.getElementById(f);
	if (!el || !input) return;
	el.textContent = text || '';
	if (text) input.setAttribute('aria-invalid', 'true');
	else input.removeAttribute('aria-invalid');
}

function studyList(box) {
	const items = h('div', { class: 'studies', id: 'study-list' });
	const msg = h('div');
	const more = h('button', { type: 'button', class: 'secondary', hidden: true }, 'Load more');
	let cursor = null;
	clear(box, h('h2', { id: 'list-title' }, 'Your studies'), items, msg, more);

	async function load(reset) {
		clear(msg);
		if (reset) { cursor = null; msg.append(loading()); }
		const q = new URLSearchParams({ limit: '20' });
		if (cursor) q.set('cursor', cursor);
		try {
			const page = await get('/studies?' + q);
			if (reset) items.replaceChildren();
			clear(msg);
			for (const st of page.studies) items.append(studyCard(st));
			if (!items.children.length) msg.append(h('p', { class: 'empty' }, 'No studies yet.'));
			cursor = page.next_cursor;
			more.hidden = !cursor;
		} catch (e) {
			clear(msg, errorBox(e));
		}
	}
	more.addEventListener('click', () => busy(more, 'Loading…', () => load(false)));
	return { reload: () => load(true) };
}

export function studyCard(st) {
	const card = h('article', { class: 'study', id: 'study-' + st.id, 'aria-labelledby': 'title-' + st.id });
	fillCard(card, st);
	return card;
}

function fillCard(card, st) {
	const msg = h('div');
	const actions = studyActions(st, msg, (next) => fillCard(card, next));
	actions.prepend(h('a', { class: 'button secondary', href: '#/studies/' + st.id }, 'Details and participants'));
	clear(card,
		h('header', { class: 'study-head' },
			h('h3', { id: 'title-' + st.id, tabindex: '-1' }, h('a', { href: '#/studies/' + st.id }, st.title)),
			statusBadge(st.status)),
		h('p', { class: 'meta' }, `${usd(st.reward_per_participant)} × ${st.max_participants} · ${st.estimated_duration_minutes} min · created `,
			timeEl(st.created_at), st.deadline ? [' · deadline ', timeEl(st.deadline)] : null),
		progress(st), actions, msg);
}

// Pause, resume and stop, each after a confirmation; done(next) gets the
// study as the API answered.
export function studyActions(st, msg, done) {
	const actions = h('div', { class: 'row' });
	const act = (verb, label, text) => {
		const b = h('button', { type: 'button', class: verb === 'stop' ? 'danger' : 'secondary', dataset: { action: verb } }, label);
		b.addEventListener('click', async () => {
			if (!(await confirmDialog(`${label} "${st.title}"?`, text, label))) return;
			clear(msg);
			try {
				const next = await busy(b, label + '…', () => post(`/studies/${st.id}/${verb}`));
				done(next);
				flash(`"${next.title}" is now ${next.status.replace('_', ' ')}.`);
			} catch (e) {
				msg.append(errorBox(e));
			}
		});
		actions.append(b);
	};
	if (st.status === 'active') act('pause', 'Pause', 'No new agent can accept it until you resume; running participations go on.');
	if (st.status === 'paused') act('resume', 'Resume', 'Agents can accept it again.');
	if (st.status === 'active' || st.status === 'paused') {
		act('stop', 'Stop', 'Stopping is final: no new participants, and the unused slots are refunded to your wallet now.');
	}
	actions.append(cloneButton(st, msg));
	return actions;
}

// Clone (design.md §14): the same study again, funded as a create, and
// closed to this study's participants unless the clone is edited; the
// cost named is the source's places at its fee per participant.
function cloneButton(st, msg) {
	const b = h('button', { type: 'button', class: 'secondary', dataset: { action: 'clone' } }, 'Clone');
	b.addEventListener('click', async () => {
		const cost = st.max_participants * (st.reward_per_participant + st.funding.fee_cents_per_participant);
		if (!(await confirmDialog(`Clone "${st.title}"?`,
			`A new study with the same settings is published and ${usd(cost)} is frozen from your wallet. ` +
			'Agents who took part in this study cannot take part in the clone.', 'Clone'))) return;
		clear(msg);
		try {
			const next = await busy(b, 'Cloning…', () => post(`/studies/${st.id}/clone`, {}));
			flash(`"${next.title}" was published as a clone.`);
			location.hash = '#/studies/' + next.id;
		} catch (e) {
			msg.append(errorBox(e));
		}
	});
	return b;
}

// Everything the researcher set and the study's state, for its own page
// (the researcher view, docs/api.md §7.4); the title is the page's heading.
export function studyDetail(st) {
	const taken = st.max_participants - st.stats.spots_remaining;
	const who = whoFacts(st, knownNames());
	const codes = who.some(([k]) => k === 'Completion codes');
	const rows = [
		['Status', statusBadge(st.status)],
		['Reward', `${usd(st.reward_per_participant)} per participant (fee ${usd(st.funding.fee_cents_per_participant)})`],
		['Places', `${st.max_participants.toLocaleString('en-US')}: ${taken.toLocaleString('en-US')} taken, ` +
			`${st.stats.spots_remaining.toLocaleString('en-US')} left`],
		['Estimated duration', `${st.estimated_duration_minutes} min`],
		['Deadline', st.deadline ? timeEl(st.deadline) : 'None'],
		...who,
		codes ? null : ['Completion code', st.completion_code
			? ['Required: ', h('code', { class: 'mono' }, st.completion_code)]
			: 'None: agents complete without a code'],
		['Study URL', h('a', { href: st.study_url, rel: 'noopener noreferrer', target: '_blank', class: 'url' }, st.study_url)],
		['Bonuses paid', usd(st.funding.bonus_cents || 0)],
		['Created', timeEl(st.created_at)],
		st.closed_at ? ['Closed', timeEl(st.closed_at)] : null,
		st.completed_at ? ['Completed', timeEl(st.completed_at)] : null,
	].filter(Boolean);
	return h('div', { class: 'detail', id: 'study-detail' },
		h('dl', { class: 'facts' }, rows.map(([k, v]) => h('div', { dataset: { fact: k } }, h('dt', {}, k), h('dd', {}, v)))),
		h('h3', {}, 'Description'), h('p', { class: 'prose', id: 'study-description' }, st.description),
		h('h3', {}, 'Screening criteria'), h('p', { class: 'prose', id: 'study-criteria' }, st.screening_criteria));
}

const PSTATES = [['approved', 'Approved'], ['rejected', 'Rejected'], ['submitted', 'Submitted'],
	['in_progress', 'In progress'], ['accepted', 'Accepted']];

// Participants by state and money, as two stacked bars.
export function progress(st) {
	const max = st.max_participants;
	const segs = PSTATES.map(([k, label]) => [k, label, st.stats[k] || 0]);
	segs.push(['spots', 'Spots left', st.stats.spots_remaining]);
	const f = st.funding;
	const total = f.total_budget_cents || (f.frozen_cents + f.spent_cents + f.refunded_cents) || 1;
	const money = [['spent', 'Spent', f.spent_cents], ['refunded', 'Refunded', f.refunded_cents],
		['frozen', 'Frozen', f.frozen_cents]];
	const summary = segs.map(([, l, n]) => `${l} ${n}`).join(', ');
	return h('div', { class: 'progress' },
		bar(segs.map(([k, , n]) => [k, n]), max, `Participants of ${max}: ${summary}`),
		h('p', { class: 'counts' }, segs.filter(([, , n]) => n > 0).map(([k, l, n]) =>
			h('span', { class: 'count' }, h('span', { class: 'swatch ' + k, 'aria-hidden': 'true' }), `${l}: ${n}`)),
		st.stats.timed_out ? h('span', { class: 'count' }, `Timed out: ${st.stats.timed_out}`) : null,
		st.stats.withdrawn ? h('span', { class: 'count' }, `Withdrawn: ${st.stats.withdrawn}`) : null,
		st.stats.screened_out ? h('span', { class: 'count' }, `Screened out: ${st.stats.screened_out}`) : null),
		bar(money.map(([k, , n]) => [k, n]), total, 'Budget: ' + money.map(([, l, n]) => `${l} ${usd(n)}`).join(', ')),
		h('p', { class: 'counts money' }, money.map(([k, l, n]) =>
			h('span', { class: 'count', dataset: { money: k } }, h('span', { class: 'swatch ' + k, 'aria-hidden': 'true' }), `${l}: ${usd(n)}`)),
		h('span', { class: 'count' }, `Fee per participant: ${usd(f.fee_cents_per_participant)}`)));
}

function bar(parts, total, label) {
	const W = 300, H = 14;
	const svg = s('svg', { viewBox: `0 0 ${W} ${H}`, class: 'bar', role: 'img', 'aria-label': label, preserveAspectRatio: 'none' });
	svg.append(s('title', {}, label));
	svg.append(s('rect', { x: 0, y: 0, width: W, height: H, class: 'track' }));
	let x = 0;
	for (const [k, n] of parts) {
		if (!n) continue;
		const w = (n / total) * W;
		svg.append(s('rect', { x: x.toFixed(2), y: 0, width: w.toFixed(2), height: H, class: 'seg ' + k }));
		x += w;
	}
	return svg;
}

export { legend };
