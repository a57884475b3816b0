// Messages to participants (POST /studies/{id}/messages, api.md §7.4,
// design.md §13): write to the selected participants or to all of them, and
// read the thread with one. Bodies are text: set by textContent, never markup.
import { get, post, getAll } from './api.js';
import { h, clear, errorBox, loading, busy, timeEl, flash, confirmDialog, field } from './ui.js';

const MAX_BODY = 4000, BATCH = 500;

function bodyError(v) {
	const n = [...v].length;
	if (n === 0 || v.trim() === '') return 'Write a message.';
	if (n > MAX_BODY) return `At most ${MAX_BODY.toLocaleString('en-US')} characters (now ${n.toLocaleString('en-US')}).`;
	return null;
}

// Send one text to ids, 500 a request; the number of recipients reached.
async function send(studyId, ids, body) {
	let n = 0;
	for (let i = 0; i < ids.length; i += BATCH) {
		const r = await post(`/studies/${encodeURIComponent(studyId)}/messages`, { participant_ids: ids.slice(i, i + BATCH), body });
		n += r.recipients;
	}
	return n;
}

// The compose box: to the selected participants (any state) or to all.
export function messageSection(box, studyId, selected, openThread) {
	const text = h('textarea', { rows: 3, maxlength: MAX_BODY, placeholder: 'The agents see the study, never who you are.' });
	const msg = h('div', { id: 'message-msg' });
	const toSel = h('button', { type: 'submit', id: 'message-selected' }, 'Send to selected');
	const toAll = h('button', { type: 'button', id: 'message-all', class: 'secondary' }, 'Send to all participants');
	const form = h('form', { novalidate: true, id: 'message-form' },
		field('message_body', 'Message', text, `Up to ${MAX_BODY.toLocaleString('en-US')} characters; participants in any state can be written to.`),
		msg, h('div', { class: 'row wrap' }, toSel, toAll));
	function check() {
		const e = bodyError(text.value);
		document.getElementById('message_body-error').textContent = e || '';
		if (e) { text.setAttribute('aria-invalid', 'true'); text.focus(); } else text.removeAttribute('aria-invalid');
		return !e;
	}
	async function go(ids, button) {
		clear(msg);
		try {
			const n = await busy(button, 'Sending…', () => send(studyId, ids, text.value));
			form.reset();
			clear(msg, h('p', { class: 'ok success', role: 'status' }, `Sent to ${n} participant${n === 1 ? '' : 's'}.`));
			flash(`Message sent to ${n} participant${n === 1 ? '' : 's'}.`);
			if (ids.length === 1) openThread(ids[0]);
		} catch (e) {
			msg.append(errorBox(e));
		}
	}
	form.addEventListener('submit', async (ev) => {
		ev.preventDefault();
		clear(msg);
		const ids = selected();
		if (!check()) return;
		if (!ids.length) { msg.append(h('p', { class: 'error', role: 'alert' }, 'Select at least one participant, or send to all.')); return; }
		await go(ids, toSel);
	});
	toAll.addEventListener('click', async () => {
		clear(msg);
		if (!check()) return;
		let ids;
		try {
			ids = (await busy(toAll, 'Loading…', () => getAll(`/studies/${encodeURIComponent(studyId)}/participants`, 'participants')))
				.items.map((p) => p.participant_id);
		} catch (e) { msg.append(errorBox(e)); return; }
		if (!ids.length) { msg.append(h('p', { class: 'error', role: 'alert' }, 'Nobody has taken part yet.')); return; }
		if (!(await confirmDialog(`Send to all ${ids.length} participant${ids.length === 1 ? '' : 's'}?`,
			'Every participant of this study, in any state, gets this message.', 'Send to all'))) return;
		await go(ids, toAll);
	});
	clear(box, h('h2', { id: 'message-title' }, 'Messages'), form);
}

// The thread with one participant, oldest first, and a reply box.
export async function showThread(box, studyId, pid) {
	box.hidden = false;
	const list = h('ol', { class: 'thread', id: 'thread-list' });
	const msg = h('div');
	const more = h('button', { type: 'button', class: 'secondary', hidden: true }, 'Load later messages');
	const text = h('textarea', { rows: 2, maxlength: MAX_BODY });
	const sendBtn = h('button', { type: 'submit' }, 'Send');
	const form = h('form', { novalidate: true, id: 'thread-form' }, field('thread_body', 'Write to ' + pid, text, null), sendBtn);
	let cursor = null;
	const close = h('button', { type: 'button', class: 'link', id: 'thread-close' }, 'Close');
	close.addEventListener('click', () => { box.hidden = true; box.replaceChildren(); });
	clear(box, h('div', { class: 'row spread' }, h('h2', { id: 'thread-title', tabindex: '-1' }, 'Messages with ', h('span', { class: 'mono' }, pid)), close),
		list, msg, more, form);
	async function load(reset) {
		clear(msg);
		if (reset) { cursor = null; list.replaceChildren(); msg.append(loading()); }
		const q = new URLSearchParams({ limit: '50' });
		if (cursor) q.set('cursor', cursor);
		try {
			const page = await get(`/studies/${encodeURIComponent(studyId)}/participants/${encodeURIComponent(pid)}/messages?` + q);
			clear(msg);
			for (const m of page.messages) {
				list.append(h('li', { class: 'msg msg-' + m.direction, id: 'msg-' + m.id, dataset: { direction: m.direction } },
					h('p', { class: 'msg-meta' }, m.direction === 'out' ? 'You' : 'Participant', ' · ', timeEl(m.created_at),
						m.direction === 'out' ? (m.read_at ? [' · read ', timeEl(m.read_at)] : ' · not read yet') : null),
					h('p', { class: 'prose msg-body' }, m.body)));
			}
			if (!list.children.length) msg.append(h('p', { class: 'empty' }, 'No messages with this participant yet.'));
			cursor = page.next_cursor;
			more.hidden = !cursor;
		} catch (e) {
			clear(msg, errorBox(e));
		}
	}
	more.addEventListener('click', () => busy(more, 'Loading…', () => load(false)));
	form.addEventListener('submit', async (ev) => {
		ev.preventDefault();
		const e = bodyError(text.value);
		document.getElementById('thread_body-error').textContent = e || '';
		if (e) { text.setAttribute('aria-invalid', 'true'); text.focus(); return; }
		text.removeAttribute('aria-invalid');
		try {
			await busy(sendBtn, 'Sending…', () => send(studyId, [pid], text.value));
			text.value = '';
			await load(true);
		} catch (err) {
			msg.append(errorBox(err));
		}
	});
	box.scrollIntoView({ block: 'start' });
	document.getElementById('thread-title').focus({ preventScroll: true });
	await load(true);
}
