// The study's edit form (PATCH /studies/{id}, api.md §7.4): what a researcher
// may still change after publishing: title, description, a later deadline,
// more places. Every field's error at once beside it; added places show their
// cost and ask before any money is frozen.
import { get, patch, ApiError } from './api.js';
import { h, clear, errorBox, field, busy, flash, confirmDialog } from './ui.js';
import { usd, parseWhole } from './money.js';
import { textError, apiFieldError, setFieldError } from './studies.js';

const EDIT = ['title', 'description', 'deadline', 'max_participants'];
const id = (f) => 'edit_' + f;

// "2026-11-22T08:19:17Z" as a datetime-local value in the browser's time.
function localInput(iso) {
	const d = new Date(iso);
	const p = (n) => String(n).padStart(2, '0');
	return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())}T${p(d.getHours())}:${p(d.getMinutes())}`;
}

// The changed fields and every field's error (null when fine); only what
// differs from the study is sent (api.md: values are absolute).
export function checkEdit(st, v, now = Date.now()) {
	const err = {}, body = {};
	for (const f of ['title', 'description']) {
		err[f] = textError(v[f], f, f === 'title');
		if (!err[f] && v[f] !== st[f]) body[f] = v[f];
	}
	err.deadline = null;
	if (st.deadline && v.deadline && v.deadline !== localInput(st.deadline)) {
		const d = new Date(v.deadline);
		if (Number.isNaN(d.getTime())) err.deadline = 'A date and time.';
		else if (d.getTime() <= now) err.deadline = 'Must be in the future.';
		else if (d.getTime() <= Date.parse(st.deadline)) err.deadline = 'Only later than the current deadline.';
		else body.deadline = d.toISOString().replace(/\.\d+Z$/, 'Z');
	}
	const max = parseWhole(v.max_participants);
	err.max_participants = v.max_participants.trim() === '' ? 'Required.'
		: Number.isNaN(max) ? 'A whole number of participants.'
			: max < st.max_participants ? `At least ${st.max_participants.toLocaleString('en-US')}: places can be added, never removed.`
				: max > 10000 ? `From ${st.max_participants.toLocaleString('en-US')} to 10,000.` : null;
	if (!err.max_participants && max !== st.max_participants) body.max_participants = max;
	return { body, err };
}

// The form in box for study st; done(next) gets the study as the API answered.
export function editForm(box, st, done) {
	const editable = st.status === 'active' || st.status === 'paused';
	box.hidden = !editable;
	if (!editable) { box.replaceChildren(); return; }
	const inputs = {
		title: h('input', { type: 'text', maxlength: 200, autocomplete: 'off' }),
		description: h('textarea', { rows: 4, maxlength: 10000 }),
		deadline: h('input', { type: 'datetime-local' }),
		max_participants: h('input', { type: 'text', inputmode: 'numeric', autocomplete: 'off' }),
	};
	inputs.title.value = st.title;
	inputs.description.value = st.description;
	inputs.max_participants.value = String(st.max_participants);
	if (st.deadline) inputs.deadline.value = localInput(st.deadline);
	const slot = st.reward_per_participant + st.funding.fee_cents_per_participant;
	const preview = h('div', { class: 'preview', id: 'edit-cost', 'aria-live': 'polite' });
	const msg = h('div', { id: 'edit-msg' });
	const button = h('button', { type: 'submit' }, 'Save changes');
	let available = null, feeBps = null;
	get('/wallet/balance').then((b) => { available = b.available_cents; update(); }).catch(() => {});
	get('/account').then((a) => { feeBps = a.fee_bps; update(); }).catch(() => {});

	function extra() {
		const max = parseWhole(inputs.max_participants.value);
		return Number.isNaN(max) || max <= st.max_participants || max > 10000 ? 0 : max - st.max_participants;
	}
	function update() {
		const n = extra();
		const rows = [
			['Places now', st.max_participants.toLocaleString('en-US')],
			['Added places', n.toLocaleString('en-US')],
			[`Per place (reward ${usd(st.reward_per_participant)} + fee ${usd(st.funding.fee_cents_per_participant)})`, usd(slot)],
			['Frozen now', usd(n * slot)],
		];
		const feeNote = feeBps === null ? null : h('p', { class: 'hint' },
			`The fee is the study's, fixed when it was created; a new study pays ${(feeBps / 100).toLocaleString('en-US')}% today.`);
		const warn = n && available !== null && n * slot > available
			? h('p', { class: 'warn' }, `This is more than your available ${usd(available)}.`)
			: (available !== null ? h('p', { class: 'hint' }, `Available: ${usd(available)}`) : null);
		clear(preview, h('h3', {}, 'Extra cost'),
			h('dl', {}, rows.map(([k, v]) => [h('dt', {}, k), h('dd', {}, v)])), feeNote, warn);
	}
	inputs.max_participants.addEventListener('input', update);

	const hints = {
		title: ['Title', null],
		description: ['Description', 'Agents see the new text at once.'],
		deadline: ['Deadline (your local time)', st.deadline ? 'Only later than the current deadline.' : null],
		max_participants: ['Participants', `At least ${st.max_participants.toLocaleString('en-US')} (never fewer); up to 10,000.`],
	};
	const shown = EDIT.filter((f) => f !== 'deadline' || st.deadline);
	const form = h('form', { novalidate: true, id: 'edit-study' },
		h('div', { class: 'grid2' },
			h('div', {}, shown.map((f) => field(id(f), hints[f][0], inputs[f], hints[f][1])),
				st.deadline ? null : h('p', { class: 'hint', id: 'edit-no-deadline' },
					'This study has no deadline; it keeps none (a deadline could only end it earlier).')),
			preview),
		msg, button);
	form.addEventListener('submit', async (ev) => {
		ev.preventDefault();
		clear(msg);
		const values = {};
		for (const f of EDIT) values[f] = inputs[f].value;
		const { body, err } = checkEdit(st, values);
		for (const f of shown) setFieldError(id(f), err[f]);
		const bad = shown.filter((f) => err[f]);
		if (bad.length) {
			msg.append(h('p', { class: 'error', role: 'alert' },
				bad.length === 1 ? 'One field needs a change.' : `${bad.length} fields need a change.`));
			inputs[bad[0]].focus();
			return;
		}
		if (!Object.keys(body).length) {
			msg.append(h('p', { class: 'hint', role: 'status' }, 'Nothing changed.'));
			return;
		}
		const n = body.max_participants ? body.max_participants - st.max_participants : 0;
		if (n && !(await confirmDialog(`Add ${n.toLocaleString('en-US')} place${n === 1 ? '' : 's'} to "${st.title}"?`,
			`${usd(n * slot)} (${n.toLocaleString('en-US')} × ${usd(slot)}, reward and fee) is frozen from your available balance now.`,
			'Add places and save'))) return;
		try {
			const next = await busy(button, 'Saving…', () => patch('/studies/' + encodeURIComponent(st.id), body));
			const what = Object.keys(body).map((f) => f === 'max_participants' ? 'places' : f).join(', ');
			flash(`Saved: ${what}.` + (n ? ` ${usd(n * slot)} frozen for ${n} more place${n === 1 ? '' : 's'}.` : ''));
			done(next, true);
		} catch (e) {
			if (e instanceof ApiError && e.field && EDIT.includes(e.field) && shown.includes(e.field)) {
				setFieldError(id(e.field), apiFieldError(e));
				inputs[e.field].focus();
			} else {
				msg.append(errorBox(e));
			}
		}
	});
	clear(box, h('details', { id: 'edit-details' },
		h('summary', {}, h('h2', { id: 'edit-title' }, 'Edit the study')),
		h('p', { class: 'hint' }, 'The screening criteria, reward, URL and completion code stay as published: agents took part on them.'),
		form));
	update();
}
