// One study's participants: review one by one or in bulk, each result shown;
// CSV export of every page (api.md §7.4).
import { get, post, getAll } from './api.js';
import { h, clear, errorBox, loading, busy, timeEl, flash, statusBadge, confirmDialog, labelled } from './ui.js';

const HEAD = ['Participant', 'State', 'Accepted', 'Submitted', 'Reviewed', 'Tier', 'Reason', 'Review', 'Result'];
import { studyDetail, studyActions, progress } from './studies.js';

// The study's page: its full detail (the title once, as the heading), its
// progress and actions, then its participants.
export async function participantsView(root, id) {
	const title = h('h1', { id: 'study-title' }, 'Study');
	root.append(h('p', {}, h('a', { href: '#/studies' }, '← All studies')), title);
	const head = h('section', { class: 'card', id: 'study-head', 'aria-label': 'The study' }, loading());
	const box = h('section', { class: 'card', 'aria-labelledby': 'p-title' });
	root.append(head, box);
	const headMsg = h('div');
	function fillHead(st) {
		title.textContent = st.title;
		document.title = st.title + ' · arps console';
		clear(head, studyDetail(st), progress(st), studyActions(st, headMsg, fillHead), headMsg);
	}
	fillHead(await get('/studies/' + encodeURIComponent(id)));

	const reason = h('input', { type: 'text', id: 'review-reason', maxlength: 1000, placeholder: 'Shown to the agent' });
	const all = h('input', { type: 'checkbox', id: 'select-all', 'aria-label': 'Select every submitted participant' });
	const body = h('tbody');
	const msg = h('div', { id: 'participants-msg' });
	const more = h('button', { type: 'button', class: 'secondary', hidden: true }, 'Load more');
	const approveSel = h('button', { type: 'button', id: 'approve-selected' }, 'Approve selected');
	const rejectSel = h('button', { type: 'button', id: 'reject-selected', class: 'danger' }, 'Reject selected');
	const csv = h('button', { type: 'button', id: 'export-csv', class: 'secondary' }, 'Export CSV');
	const rows = new Map();
	let cursor = null;

	async function refreshHead() {
		try { fillHead(await get('/studies/' + encodeURIComponent(id))); } catch { /* the list still works */ }
	}

	function row(p) {
		const check = h('input', { type: 'checkbox', 'aria-label': 'Select ' + p.participant_id, disabled: p.status !== 'submitted' });
		const result = h('td', { class: 'result', 'aria-live': 'polite' });
		const approve = h('button', { type: 'button', class: 'small', dataset: { act: 'approve' } }, 'Approve');
		const reject = h('button', { type: 'button', class: 'small danger', dataset: { act: 'reject' } }, 'Reject');
		const cells = () => [
			h('td', {}, check),
			h('td', { class: 'mono' }, p.participant_id),
			h('td', {}, statusBadge(p.status)),
			h('td', {}, timeEl(p.accepted_at)),
			h('td', {}, timeEl(p.submitted_at)),
			h('td', {}, timeEl(p.reviewed_at)),
			h('td', {}, p.tier),
			h('td', {}, p.reason || ''),
			h('td', { class: 'actions' }, p.status === 'submitted' ? [approve, ' ', reject] : ''),
			result,
		];
		const tr = labelled(h('tr', { id: 'p-' + p.participant_id, dataset: { status: p.status } }, cells()), ['Select', ...HEAD]);
		const entry = {
			p, check, tr,
			async review(verb) {
				const r = reason.value === '' ? {} : { reason: reason.value };
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
		approve.addEventListener('click', () => busy(approve, '…', async () => { if (await entry.review('approve')) await refreshHead(); }));
		reject.addEventListener('click', () => busy(reject, '…', async () => { if (await entry.review('reject')) await refreshHead(); }));
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
		} catch (e) {
			clear(msg, errorBox(e));
		}
	}

	async function bulk(verb, button) {
		const chosen = [...rows.values()].filter((e) => e.check.checked);
		if (!chosen.length) { flash('Select at least one submitted participant.', 'error'); return; }
		const label = verb === 'approve' ? 'Approve' : 'Reject';
		if (!(await confirmDialog(`${label} ${chosen.length} participant(s)?`,
			verb === 'approve' ? 'Each one is paid the reward now.' : 'Each reward and fee returns to your wallet; the agents lose reputation.', label))) return;
		await busy(button, label + '…', async () => {
			let ok = 0;
			for (const e of chosen) if (await e.review(verb)) ok++;
			flash(`${verb === 'approve' ? 'Approved' : 'Rejected'} ${ok} of ${chosen.length}.`, ok === chosen.length ? 'ok' : 'error');
			all.checked = false;
			await refreshHead();
		});
	}

	all.addEventListener('change', () => { for (const e of rows.values()) if (!e.check.disabled) e.check.checked = all.checked; });
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
		h('div', { class: 'row wrap' }, h('label', { for: 'review-reason' }, 'Reason'), reason, approveSel, rejectSel, csv),
		h('div', { class: 'table-wrap' }, h('table', { class: 'participants' },
			h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, all),
				HEAD.map((c) => h('th', { scope: 'col' }, c)))),
			body)),
		msg, more);
	await load(true);
}

const COLS = ['participant_id', 'status', 'accepted_at', 'submitted_at', 'reviewed_at', 'tier', 'reason'];

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
