// Who may take part, on the create form (api.md §7.9, design.md §14):
// eligibility (include groups, exclude groups, exclude studies) and
// completion codes with actions (approve, review, reject, screen out; a group
// to add the agent to), with the screen-out payment. The first code is the
// form's "Completion code" field; one code for review alone is sent as
// completion_code, as before.
import { getAll } from './api.js';
import { h, clear, field } from './ui.js';
import { usd, parseDollars } from './money.js';
import { allGroups } from './groups.js';

const ACTIONS = [['review', 'Review (stays submitted)'], ['approve', 'Approve at once'],
	['reject', 'Reject at once (failed check)'], ['screen_out', 'Screen out (pay the screen-out amount)']];
const ACTION = new Map(ACTIONS.map(([k, l]) => [k, l.replace(/ \(.*/, '')]));
const MAX_CODES = 10;

function groupSelect(groups) {
	return h('select', {}, h('option', { value: '' }, 'No group'), groups.map((g) => h('option', { value: g.id }, g.name)));
}

// codeInput is the create form's completion_code input (its first code).
export function whoFields(codeInput) {
	let groups = [], studies = [];
	const include = h('select', { multiple: true, size: 3 });
	const exclude = h('select', { multiple: true, size: 3 });
	const excludeStudies = h('select', { multiple: true, size: 3 });
	const firstAction = h('select', {}, ACTIONS.map(([k, l]) => h('option', { value: k }, l)));
	const firstGroup = groupSelect([]);
	const screenOut = h('input', { type: 'text', inputmode: 'decimal', placeholder: '0.50', autocomplete: 'off' });
	const rowsBox = h('div', { id: 'code-rows' });
	const addBtn = h('button', { type: 'button', class: 'secondary small', id: 'add-code' }, 'Add another code');
	const rows = [{ id: 'completion_code', code: codeInput, action: firstAction, group: firstGroup }];
	let next = 1;

	function fill() {
		for (const sel of [include, exclude]) {
			const keep = new Set([...sel.selectedOptions].map((o) => o.value));
			sel.replaceChildren(...groups.map((g) => h('option', { value: g.id, selected: keep.has(g.id) }, `${g.name} (${g.member_count})`)));
		}
		const keepS = new Set([...excludeStudies.selectedOptions].map((o) => o.value));
		excludeStudies.replaceChildren(...studies.map((s) => h('option', { value: s.id, selected: keepS.has(s.id) }, s.title)));
		for (const r of rows) {
			const v = r.group.value;
			r.group.replaceChildren(h('option', { value: '' }, 'No group'), groups.map((g) => h('option', { value: g.id }, g.name)));
			r.group.value = v;
		}
	}
	// The pickers' options: the researcher's groups and studies, now and
	// after each create (a new study can then be excluded).
	async function load() {
		try {
			[groups, studies] = await Promise.all([allGroups(), getAll('/studies', 'studies', 5).then((x) => x.items)]);
			fill();
		} catch { /* the pickers stay empty; the rest of the form works */ }
	}

	function addRow() {
		if (rows.length >= MAX_CODES) return;
		const id = 'completion_code_' + next++;
		const r = { id, code: h('input', { type: 'text', maxlength: 64, autocomplete: 'off' }),
			action: h('select', {}, ACTIONS.map(([k, l]) => h('option', { value: k }, l))), group: groupSelect(groups) };
		const rm = h('button', { type: 'button', class: 'link', 'aria-label': 'Remove this code' }, 'Remove');
		r.el = h('div', { class: 'code-row row wrap align-top', dataset: { code: id } },
			field(id, `Code ${rows.length + 1}`, r.code, null), field(id + '_action', 'Action', r.action, null),
			field(id + '_group', 'Add to group', r.group, null), rm);
		rm.addEventListener('click', () => { rows.splice(rows.indexOf(r), 1); r.el.remove(); addBtn.hidden = false; });
		rows.push(r);
		rowsBox.append(r.el);
		addBtn.hidden = rows.length >= MAX_CODES;
		r.code.focus();
	}
	addBtn.addEventListener('click', addRow);

	const codesEl = h('div', { class: 'codes' },
		h('div', { class: 'row wrap align-top' },
			field('completion_code_action', 'What the first code does', firstAction, null),
			field('completion_code_group', 'Add to group', firstGroup, 'e.g. a block-list for a failed attention check')),
		rowsBox, addBtn,
		field('screen_out', 'Screen-out payment ($, optional)', screenOut, 'Paid (with its fee) to an agent screened out by a code; up to the reward; the place is freed.'));
	const eligEl = h('details', { class: 'eligibility', id: 'eligibility' },
		h('summary', {}, 'Who may take part (optional)'),
		h('p', { class: 'hint' }, 'Pick several with Ctrl or ⌘. Empty: any agent. Checked when agents list and accept, so a group change applies at once.'),
		h('div', { class: 'row wrap align-top' },
			field('elig_include', 'Only members of', include, null),
			field('elig_exclude', 'Not members of', exclude, null),
			field('elig_exclude_studies', 'Not participants of', excludeStudies, null)));

	const err = (id, text) => {
		const el = document.getElementById(id + '-error');
		const input = document.getElementById(id);
		if (el) el.textContent = text || '';
		if (input) { if (text) input.setAttribute('aria-invalid', 'true'); else input.removeAttribute('aria-invalid'); }
	};

	// Adds this part to body; returns the ids of the fields with an error
	// (the first code's own text rules are the form's).
	function collect(body, reward) {
		const bad = [];
		const used = rows.filter((r) => r.code.value !== '' || r.id !== 'completion_code');
		const elig = { include_groups: [...include.selectedOptions].map((o) => o.value),
			exclude_groups: [...exclude.selectedOptions].map((o) => o.value),
			exclude_studies: [...excludeStudies.selectedOptions].map((o) => o.value) };
		err('elig_exclude', elig.include_groups.some((g) => elig.exclude_groups.includes(g)) ? 'A group cannot be in both lists.' : null);
		if (document.getElementById('elig_exclude-error').textContent) bad.push('elig_exclude');
		if (elig.include_groups.length || elig.exclude_groups.length || elig.exclude_studies.length) body.eligibility = elig;
		const simple = used.length <= 1 && (!used.length || (used[0].action.value === 'review' && !used[0].group.value));
		const seen = new Map();
		for (const r of rows) {
			if (r.id === 'completion_code') continue;
			const v = r.code.value, n = [...v].length;
			const e = n === 0 ? 'Required (or remove the row).' : n < 4 || n > 64 ? 'From 4 to 64 characters.'
				: /[\u0000-\u001f\u007f]/u.test(v) ? 'One line, without control characters.'
					: seen.has(v) ? `The same as ${seen.get(v)}.` : null;
			if (!e) seen.set(v, 'code ' + (rows.indexOf(r) + 1));
			err(r.id, e);
			if (e) bad.push(r.id);
		}
		if (!simple) {
			const first = rows[0];
			const v = first.code.value;
			if (!v) { err('completion_code', 'Required when there are more codes or an action.'); bad.push('completion_code'); }
			else if ([...v].length < 4) { err('completion_code', 'From 4 to 64 characters.'); bad.push('completion_code'); }
			else if (seen.has(v)) { err('completion_code', `The same as ${seen.get(v)}.`); bad.push('completion_code'); }
			delete body.completion_code;
			body.completion_codes = used.map((r) => {
				const c = { code: r.code.value, action: r.action.value };
				if (r.group.value) c.add_to_group = r.group.value;
				return c;
			});
		}
		let so = null;
		if (screenOut.value.trim() !== '') {
			so = parseDollars(screenOut.value);
			so = Number.isNaN(so) ? 'A dollar amount, such as 0.50.'
				: Number.isSafeInteger(reward) && so > reward ? `At most the reward (${usd(reward)}).` : (body.screen_out_cents = so, null);
		}
		err('screen_out', typeof so === 'string' ? so : null);
		if (typeof so === 'string') bad.push('screen_out');
		return bad;
	}

	// An API refusal for this part beside its field; false when not ours.
	function apiError(e) {
		const d = e.detail || '';
		let m;
		if ((m = /^completion_codes\[(\d+)\]\.([a-z_]+): (.*)$/.exec(d))) {
			const r = rows.filter((x) => x.code.value !== '' || x.id !== 'completion_code')[Number(m[1])];
			if (r) { err(m[2] === 'code' ? r.id : r.id + (m[2] === 'action' ? '_action' : '_group'), m[3]); return true; }
		}
		if ((m = /^eligibility\.([a-z_]+)/.exec(d))) {
			err({ include_groups: 'elig_include', exclude_groups: 'elig_exclude', exclude_studies: 'elig_exclude_studies' }[m[1]] || 'elig_include', d);
			return true;
		}
		if (/^screen_out_cents: /.test(d)) { err('screen_out', d.slice(18)); return true; }
		return false;
	}

	function reset() {
		for (const r of rows.slice(1)) r.el.remove();
		rows.splice(1);
		addBtn.hidden = false;
		load();
	}
	load();
	return { codesEl, eligEl, collect, apiError, reset, ids: () => rows.map((r) => r.id) };
}

// The study detail's facts for this part: who may take part and the codes.
export function whoFacts(st, names) {
	const out = [];
	const el = st.eligibility;
	const g = (id) => h('span', { class: 'group-name', dataset: { group: id } }, names.get(id) || id);
	if (el && (el.include_groups.length || el.exclude_groups.length || el.exclude_studies.length)) {
		const parts = [];
		if (el.include_groups.length) parts.push(h('div', {}, 'Only members of ', el.include_groups.map((x, i) => [i ? ', ' : '', g(x)])));
		if (el.exclude_groups.length) parts.push(h('div', {}, 'Not members of ', el.exclude_groups.map((x, i) => [i ? ', ' : '', g(x)])));
		if (el.exclude_studies.length) parts.push(h('div', {}, 'Not participants of ', el.exclude_studies.map((x, i) =>
			[i ? ', ' : '', h('a', { href: '#/studies/' + x, class: 'study-name', dataset: { study: x } }, names.get(x) || x)])));
		out.push(['Who may take part', parts]);
	} else if (el) {
		out.push(['Who may take part', 'Any agent']);
	}
	const codes = st.completion_codes || [];
	if (codes.length > 1 || codes.some((c) => c.action !== 'review' || c.add_to_group)) {
		out.push(['Completion codes', h('ul', { class: 'plain codes-list' }, codes.map((c) => h('li', { dataset: { code: c.code } },
			h('code', { class: 'mono' }, c.code), ': ', ACTION.get(c.action) || c.action,
			c.add_to_group ? [', adds to ', g(c.add_to_group)] : null)))]);
		if (codes.some((c) => c.action === 'screen_out')) out.push(['Screen-out payment', usd(st.screen_out_cents || 0)]);
	}
	return out;
}

// Group names and study titles for the ids whoFacts showed (cached per page).
const names = new Map();
export function knownNames() { return names; }
export async function resolveNames(root) {
	const want = root.querySelectorAll('[data-group]:not(.named), [data-study].study-name:not(.named)');
	if (!want.length) return;
	try {
		const [groups, studies] = await Promise.all([allGroups(), getAll('/studies', 'studies', 5).then((x) => x.items)]);
		for (const g of groups) names.set(g.id, g.name);
		for (const s of studies) names.set(s.id, s.title);
	} catch { return; }
	for (const el of want) {
		const id = el.dataset.group || el.dataset.study;
		if (names.has(id)) { el.textContent = names.get(id); el.classList.add('named'); }
	}
}
