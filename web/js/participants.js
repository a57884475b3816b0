// One study's participants: review one by one or in bulk, each after a
// confirmation and each result shown; the time each took, a filter by state;
// CSV export of every page (api.md §7.4).
import { get, post, getAll } from './api.js';
import { h, clear, errorBox, loading, busy, timeEl, flash, statusBadge, confirmDialog, labelled } from './ui.js';
import { bonusSection } from './bonuses.js';
import { messageSection, showThread } from './messages.js';

import { studyDetail, studyActions, progress } from './studies.js';
import { usd } from './money.js';
import { editForm } from './edit.js';
import { resolveNames } from './who.js';
import { allGroups } from './groups.js';

// The tier is the agent's today (the API's participant item): participations
// do not record the tier at accept.
// The pseudonym is the same for one agent in all of this researcher's
// studies (design.md §13): a returning participant is recognisable.
const HEAD = ['Participant', 'Pseudonym', 'State', 'Accepted', 'Submitted', 'Time taken', 'Reviewed', 'Tier at accept', 'Reason', 'Review', 'Result'];
const STATES = ['submitted', 'approved', 'rejected', 'accepted', 'in_progress', 'screened_out', 'timed_out', 'withdrawn'];
// Who may get a bonus: a participant who submitted (api.md §7.4).
const SUBMITTED = new Set(['submitted', 'approved', 'rejected']);
export const CATEGORIES = [['no_code', 'No completion code'], ['failed_check', 'Failed a check'],
	['low_effort', 'Low effort'], ['incomplete', 'Incomplete'], ['other', 'Other']];
const CATEGORY = new Map(CATEGORIES);
const BULK = 500;

// From accept to submission: "45 s", "12 min", "1 h 05 min"; null when not submitted.
export function timeTaken(p) {
	if (!p.accepted_at || !p.submitted_at) return null;
	const sec = Math.max(0, Math.round((Date.parse(p.submitted_at) - Date.parse(p.accepted_at)) / 1000));
	if (sec < 60) return `${sec} s`;
	const min = Math.round(sec / 60);
	if (min < 60) return `${min} min`;
	return `${Math.floor(min / 60)} h ${String(min % 60).padStart(2, '0')} min`;
}

// The study's page: its full detail (the title once, as the heading), its
// progress and actions, then its participants.
export async function participantsView(root, id) {
	const title = h('h1', { id: 'study-title' }, 'Study');
	root.append(h('p', {}, h('a', { href: '#/studies' }, '← All studies')), title);
	const head = h('section', { class: 'card', id: 'study-head', 'aria-label': 'The study' }, loading());
	const editBox = h('section', { class: 'card', id: 'study-edit', 'aria-labelledby': 'edit-title', hidden: true });
	const box = h('section', { class: 'card', 'aria-labelledby': 'p-title' });
	// The thread with one participant, opened from its row.
	const threadBox = h('section', { class: 'card', id: 'thread', 'aria-labelledby': 'thread-title', hidden: true });
	root.append(head, editBox, box);
	const headMsg = h('div');
	let counts = null; // the filter's counts, once it exists
	// The edit form is rebuilt when it is closed, after a save, or when the
	// study stops being editable; never under a researcher's typing.
	function fillHead(next, saved) {
		const was = st;
		st = next;
		title.textContent = st.title;
		document.title = st.title + ' · arps console';
		clear(head, studyDetail(st), progress(st), studyActions(st, headMsg, fillHead), headMsg);
		resolveNames(head);
		const open = editBox.querySelector('details[open]');
		if (saved || !open || !was || was.status !== st.status) editForm(editBox, st, fillHead);
		if (saved) document.getElementById('edit-details').open = true;
		if (counts) counts();
	}
	let st = null;
	fillHead(await get('/studies/' + encodeURIComponent(id)));

	const reason = h('input', { type: 'text', id: 'review-reason', maxlength: 1000, placeholder: 'Shown to the agent',
		'aria-describedby': 'review-reason-error' });
	const reasonErr = h('p', { class: 'field-error', id: 'review-reason-error', role: 'alert' });
	const category = h('select', { id: 'review-category' }, h('option', { value: '' }, 'No category'),
		CATEGORIES.map(([k, l]) => h('option', { value: k }, l)));
	const all = h('input', { type: 'checkbox', id: 'select-all', 'aria-label': 'Select every participant shown' });
	const body = h('tbody');
	const msg = h('div', { id: 'participants-msg' });
	const more = h('button', { type: 'button', class: 'secondary', hidden: true }, 'Load more');
	const approveSel = h('button', { type: 'button', id: 'approve-selected' }, 'Approve selected');
	const rejectSel = h('button', { type: 'button', id: 'reject-selected', class: 'danger' }, 'Reject selected');
	const csv = h('button', { type: 'button', id: 'export-csv', class: 'secondary' }, 'Export CSV');
	// Add the selected participants to one of the researcher's groups (by pseudonym).
	const groupSel = h('select', { id: 'group-target' }, h('option', { value: '' }, 'Choose a group'));
	const toGroup = h('button', { type: 'button', id: 'add-to-group', class: 'secondary' }, 'Add selected to group');
	allGroups().then((gs) => groupSel.append(...gs.map((g) => h('option', { value: g.id }, g.name)))).catch(() => {});
	toGroup.addEventListener('click', async () => {
		const chosen = [...rows.values()].filter((e) => e.check.checked && e.p.pseudonym);
		if (!groupSel.value) { flash('Choose a group first.', 'error'); groupSel.focus(); return; }
		if (!chosen.length) { flash('Select at least one participant.', 'error'); return; }
		const name = groupSel.selectedOptions[0].textContent;
		try {
			const r = await busy(toGroup, 'Adding…', () => post(`/groups/${encodeURIComponent(groupSel.value)}/members`,
				{ members: chosen.map((e) => ({ pseudonym: e.p.pseudonym })) }));
			flash(`Added ${r.added} to "${name}"` + (r.already ? `; ${r.already} already in it.` : '.') + ` It has ${r.member_count} now.`);
		} catch (e) {
			flash(e.detail || String(e), 'error');
		}
	});
	const rows = new Map();
	let cursor = null;
	let bonus = null; // the bonus section, told when the selection changes
	const selectionChanged = () => { if (bonus) bonus.update(); };
	const filter = h('select', { id: 'state-filter' }, h('option', { value: '' }, 'All states'),
		STATES.map((k) => h('option', { value: k }, k.replace('_', ' '))));
	const shown = h('p', { class: 'hint', id: 'filter-count', 'aria-live': 'polite' });
	// The option labels carry the study's count per state; the line under
	// the table says how many of the loaded rows the filter shows.
	counts = () => {
		for (const o of filter.options) {
			if (o.value) o.textContent = `${o.value.replace('_', ' ')} (${st.stats[o.value] || 0})`;
		}
	};
	function applyFilter() {
		let n = 0;
		for (const e of rows.values()) {
			const on = !filter.value || e.p.status === filter.value;
			e.tr.hidden = !on;
			if (!on) e.check.checked = false;
			selectionChanged();
			if (on) n++;
		}
		shown.textContent = filter.value
			? `${n} ${filter.value.replace('_', ' ')} of ${rows.size} loaded` + (cursor ? '; load more for the rest.' : '.')
			: '';
	}
	filter.addEventListener('change', () => { all.checked = false; applyFilter(); });

	async function refreshHead() {
		try { fillHead(await get('/studies/' + encodeURIComponent(id))); } catch { /* the list still works */ }
	}

	function row(p) {
		const check = h('input', { type: 'checkbox', 'aria-label': 'Select ' + p.participant_id, dataset: { pid: p.participant_id } });
		check.addEventListener('change', selectionChanged);
		const result = h('td', { class: 'result', 'aria-live': 'polite' });
		const approve = h('button', { type: 'button', class: 'small', dataset: { act: 'approve' } }, 'Approve');
		const reject = h('button', { type: 'button', class: 'small danger', dataset: { act: 'reject' } }, 'Reject');
		const thread = h('button', { type: 'button', class: 'small secondary', dataset: { act: 'thread' } }, 'Messages');
		thread.addEventListener('click', () => showThread(threadBox, id, p.participant_id));
		const cells = () => [
			h('td', {}, check),
			h('td', { class: 'mono' }, p.participant_id),
			h('td', { class: 'mono pseudonym', title: 'The same agent in all your studies' }, p.pseudonym || '—'),
			h('td', {}, statusBadge(p.status)),
			h('td', {}, timeEl(p.accepted_at)),
			h('td', {}, timeEl(p.submitted_at)),
			h('td', { class: 'num time-taken', title: 'From accept to submission' }, timeTaken(p) || '—'),
			h('td', {}, timeEl(p.reviewed_at)),
			h('td', {}, p.tier),
			h('td', { class: 'reason' }, p.reason || '',
				p.category ? [' ', h('span', { class: 'badge category', dataset: { category: p.category } }, CATEGORY.get(p.category) || p.category)] : ''),
			h('td', { class: 'actions' }, p.status === 'submitted' ? [approve, ' ', reject, ' '] : '', thread),
			result,
		];
		const tr = labelled(h('tr', { id: 'p-' + p.participant_id, dataset: { status: p.status } }, cells()), ['Select', ...HEAD]);
		const entry = {
			p, check, tr,
			async review(verb) {
				const r = reason.value === '' ? {} : { reason: reason.value };
				if (verb === 'reject' && category.value) r.category = category.value;
				try {
					const np = await post(`/studies/${id}/participants/${p.participant_id}/${verb}`, r);
					const fresh = row(np);
					tr.replaceWith(fresh.tr);
					rows.set(np.participant_id, fresh);
					fresh.result.textContent = verb === 'approve' ? 'Approved' : 'Rejected';
					fresh.result.className = 'result ok';
					return true;
				} catch (e) {
					result.replaceChildren(h('span', { class: 'error', role: 'alert' }, e.detail || String(e)));
					return false;
				}
			},
			result,
		};
		// Money moves on either: a confirmation first, as for the bulk actions.
		const one = (verb, button) => button.addEventListener('click', async () => {
			if (!(await confirmDialog(...confirmText(verb, 1, p.participant_id)))) return;
			await busy(button, '…', async () => { if (await entry.review(verb)) await refreshHead(); });
		});
		one('approve', approve);
		one('reject', reject);
		return entry;
	}

	async function load(reset) {
		clear(msg);
		if (reset) { body.replaceChildren(); rows.clear(); cursor = null; msg.append(loading()); }
		const q = new URLSearchParams({ limit: '50' });
		if (cursor) q.set('cursor', cursor);
		try {
			const page = await get(`/studies/${encodeURIComponent(id)}/participants?` + q);
			clear(msg);
			for (const p of page.participants) {
				const e = row(p);
				rows.set(p.participant_id, e);
				body.append(e.tr);
			}
			if (!rows.size) msg.append(h('p', { class: 'empty' }, 'Nobody has taken part yet.'));
			cursor = page.next_cursor;
			more.hidden = !cursor;
			applyFilter();
		} catch (e) {
			clear(msg, errorBox(e));
		}
	}

	// [title, text, button] of the confirmation of a review of n participants;
	// skipped selected rows are not awaiting review and stay as they are.
	function confirmText(verb, n, pid, skipped = 0) {
		const who = pid ? pid : `${n} participant${n === 1 ? '' : 's'}`;
		const reward = st.reward_per_participant, f = st.funding.fee_cents_per_participant;
		const cat = verb === 'reject' && category.value ? ` Category: ${CATEGORY.get(category.value)}.` : '';
		const skip = skipped ? ` ${skipped} selected participant${skipped === 1 ? ' is' : 's are'} not awaiting review and stay${skipped === 1 ? 's' : ''} as ${skipped === 1 ? 'it is' : 'they are'}.` : '';
		return verb === 'approve'
			? [`Approve ${who}?`, `${n === 1 ? 'The agent is' : 'Each agent is'} paid ${usd(reward)} now` +
				(n > 1 ? ` (${usd(reward * n)} in all)` : '') + '; an approval cannot be undone.' + skip, 'Approve']
			: [`Reject ${who}?`, `${usd(reward + f)} (reward and fee) ${n === 1 ? 'returns' : 'each return'} to your wallet` +
				`; the agent${n === 1 ? '' : 's'} lose${n === 1 ? 's' : ''} reputation. A rejection cannot be undone.` + cat + skip, 'Reject'];
	}

	// Bulk review (POST /studies/{id}/participants/review): up to 500 ids a
	// request, each row's own outcome shown on its row.
	async function bulk(verb, button) {
		const checked = [...rows.values()].filter((e) => e.check.checked);
		const chosen = checked.filter((e) => e.p.status === 'submitted');
		reasonErr.textContent = '';
		reason.removeAttribute('aria-invalid');
		if (!chosen.length) { flash('Select at least one submitted participant.', 'error'); return; }
		if (verb === 'reject' && reason.value.trim() === '') {
			reasonErr.textContent = 'A reason is required to reject (the agents see it).';
			reason.setAttribute('aria-invalid', 'true');
			reason.focus();
			return;
		}
		const label = verb === 'approve' ? 'Approve' : 'Reject';
		if (!(await confirmDialog(...confirmText(verb, chosen.length, null, checked.length - chosen.length)))) return;
		await busy(button, label + '…', async () => {
			const results = new Map();
			let ok = 0;
			try {
				for (let i = 0; i < chosen.length; i += BULK) {
					const body = { action: verb, participant_ids: chosen.slice(i, i + BULK).map((e) => e.p.participant_id) };
					if (reason.value !== '') body.reason = reason.value;
					if (verb === 'reject' && category.value) body.category = category.value;
					const res = await post(`/studies/${encodeURIComponent(id)}/participants/review`, body);
					for (const r of res.results) results.set(r.participant_id, r);
					ok += res.succeeded;
				}
			} catch (e) {
				flash(e.detail || String(e), 'error');
			}
			all.checked = false;
			await load(true);
			for (const [pid, r] of results) {
				const e = rows.get(pid);
				if (!e) continue;
				if (r.error) e.result.replaceChildren(h('span', { class: 'error', role: 'alert' }, r.error.detail));
				else { e.result.textContent = verb === 'approve' ? 'Approved' : 'Rejected'; e.result.className = 'result ok'; }
			}
			if (results.size) flash(`${verb === 'approve' ? 'Approved' : 'Rejected'} ${ok} of ${chosen.length}.`, ok === chosen.length ? 'ok' : 'error');
			await refreshHead();
		});
	}

	all.addEventListener('change', () => {
		for (const e of rows.values()) if (!e.check.disabled && !e.tr.hidden) e.check.checked = all.checked;
		selectionChanged();
	});
	approveSel.addEventListener('click', () => bulk('approve', approveSel));
	rejectSel.addEventListener('click', () => bulk('reject', rejectSel));
	more.addEventListener('click', () => busy(more, 'Loading…', () => load(false)));
	csv.addEventListener('click', () => busy(csv, 'Exporting…', async () => {
		try {
			const { items } = await getAll(`/studies/${encodeURIComponent(id)}/participants`, 'participants');
			download(`participants-${id}.csv`, toCsv(items));
		} catch (e) {
			flash(e.detail || String(e), 'error');
		}
	}));

	clear(box, h('h2', { id: 'p-title' }, 'Participants'),
		h('div', { class: 'row wrap' }, h('label', { for: 'state-filter' }, 'Show'), filter),
		h('div', { class: 'row wrap' }, h('label', { for: 'review-reason' }, 'Reason'), reason,
			h('label', { for: 'review-category' }, 'Rejection category'), category),
		reasonErr,
		h('div', { class: 'row wrap' }, approveSel, rejectSel, csv),
		h('div', { class: 'row wrap' }, h('label', { for: 'group-target' }, 'Group'), groupSel, toGroup),
		h('div', { class: 'table-wrap' }, h('table', { class: 'participants' },
			h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, all),
				HEAD.map((c) => h('th', { scope: 'col' }, c)))),
			body)),
		shown, msg, more);
	counts();
	await load(true);
	const bonusBox = h('section', { class: 'card', id: 'bonuses', 'aria-labelledby': 'bonus-title' });
	const messageBox = h('section', { class: 'card', id: 'messages', 'aria-labelledby': 'message-title' });
	root.append(threadBox, messageBox, bonusBox);
	messageSection(messageBox, id, () => [...rows.values()].filter((e) => e.check.checked).map((e) => e.p.participant_id),
		(pid) => showThread(threadBox, id, pid));
	bonus = bonusSection(bonusBox, id,
		() => [...rows.values()].filter((e) => e.check.checked && SUBMITTED.has(e.p.status)).map((e) => e.p),
		async () => { await refreshHead(); });
}

const COLS = ['participant_id', 'pseudonym', 'status', 'accepted_at', 'submitted_at', 'reviewed_at', 'tier', 'reason', 'category'];

export function toCsv(items) {
	const q = (v) => {
		let t = v === null || v === undefined ? '' : String(v);
		if (/^[=+\-@\t\r]/.test(t)) t = "'" + t; // no formula injection in a spreadsheet
		return /[",\r\n]/.test(t) ? '"' + t.replace(/"/g, '""') + '"' : t;
	};
	return [COLS.join(','), ...items.map((p) => COLS.map((c) => q(p[c])).join(','))].join('\r\n') + '\r\n';
}

function download(name, text) {
	const url = URL.createObjectURL(new Blob([text], { type: 'text/csv;charset=utf-8' }));
	const a = h('a', { href: url, download: name, hidden: true });
	document.body.append(a);
	a.click();
	a.remove();
	setTimeout(() => URL.revokeObjectURL(url), 10000);
}
