// Participant groups (api.md §7.9, design.md §14): a researcher's own named
// sets of participants (by pseudonym), used as allow-lists and block-lists
// in studies' eligibility and by completion codes. Create, rename, delete,
// and the members: list, add (pseudonyms or study,participant lines), remove.
import { get, post, patch, del, getAll, ApiError } from './api.js';
import { h, clear, errorBox, loading, busy, timeEl, flash, confirmDialog, field, labelled } from './ui.js';

// Every group of the researcher (the create form's pickers use it too).
export async function allGroups() {
	return (await getAll('/groups', 'groups', 5)).items;
}

function nameError(v) {
	const n = [...v].length;
	if (n === 0 || v.trim() === '') return 'Required.';
	if (n > 100) return `At most 100 characters (now ${n}).`;
	return null;
}

function setError(id, text) {
	const el = document.getElementById(id + '-error');
	const input = document.getElementById(id);
	if (el) el.textContent = text || '';
	if (input) { if (text) input.setAttribute('aria-invalid', 'true'); else input.removeAttribute('aria-invalid'); }
}

// "psn_…" lines, or "std_…,anon_…" lines, to the API's member rows.
export function memberRows(text) {
	const rows = [], errors = [];
	text.split(/\r?\n/).forEach((raw, i) => {
		const l = raw.trim();
		if (!l) return;
		let m;
		if ((m = /^(psn_[0-9a-f]{16})$/.exec(l))) rows.push({ pseudonym: m[1] });
		else if ((m = /^(std_[A-Za-z0-9]{16})\s*[,;\s]\s*(anon_[0-9a-f]{16})$/.exec(l))) rows.push({ study_id: m[1], participant_id: m[2] });
		else errors.push(`Line ${i + 1}: "${l}" is neither a pseudonym (psn_…) nor a study id and participant id (std_…,anon_…).`);
	});
	if (!rows.length && !errors.length) errors.push('One pseudonym, or study id and participant id, a line.');
	if (rows.length > 500) errors.push('At most 500 a time.');
	return { rows, errors };
}

export async function groupsView(root) {
	root.append(h('h1', {}, 'Groups'),
		h('p', { class: 'hint' }, 'Your own sets of participants, recognised by pseudonym across your studies: ' +
			'name them in a study\'s eligibility (only these, or not these), or let a completion code add to one.'));
	const createBox = h('section', { class: 'card', 'aria-labelledby': 'group-create-title' });
	const listBox = h('section', { class: 'card', 'aria-labelledby': 'group-list-title' });
	root.append(createBox, listBox);
	const list = groupList(listBox);
	createForm(createBox, list.reload);
	await list.reload();
}

function createForm(box, reload) {
	const name = h('input', { type: 'text', maxlength: 100, autocomplete: 'off' });
	const desc = h('input', { type: 'text', maxlength: 1000, autocomplete: 'off' });
	const msg = h('div', { id: 'group-create-msg' });
	const button = h('button', { type: 'submit' }, 'Create group');
	const form = h('form', { novalidate: true, id: 'group-create' },
		h('div', { class: 'row wrap align-top' },
			field('group_name', 'Name', name, 'Up to 100 characters, e.g. "Failed the attention check".'),
			field('group_description', 'Description (optional)', desc, null)),
		msg, button);
	form.addEventListener('submit', async (ev) => {
		ev.preventDefault();
		clear(msg);
		const err = nameError(name.value);
		setError('group_name', err);
		if (err) { name.focus(); return; }
		try {
			const g = await busy(button, 'Creating…', () => post('/groups', desc.value.trim()
				? { name: name.value, description: desc.value } : { name: name.value }));
			form.reset();
			flash(`Group "${g.name}" created.`);
			await reload();
			const el = document.getElementById('group-' + g.id);
			if (el) el.scrollIntoView({ block: 'center' });
		} catch (e) {
			if (e instanceof ApiError && e.field === 'name') { setError('group_name', e.detail.slice(6)); name.focus(); }
			else msg.append(errorBox(e));
		}
	});
	clear(box, h('h2', { id: 'group-create-title' }, 'New group'), form);
}

function groupList(box) {
	const items = h('div', { class: 'groups', id: 'group-list' });
	const msg = h('div');
	clear(box, h('h2', { id: 'group-list-title' }, 'Your groups'), items, msg);
	async function reload() {
		clear(msg, loading());
		try {
			const groups = await allGroups();
			items.replaceChildren(...groups.map((g) => groupCard(g, reload)));
			clear(msg);
			if (!groups.length) msg.append(h('p', { class: 'empty' }, 'No groups yet.'));
		} catch (e) {
			clear(msg, errorBox(e));
		}
	}
	return { reload };
}

function groupCard(g, reload) {
	const card = h('article', { class: 'group study', id: 'group-' + g.id });
	const msg = h('div', { class: 'group-msg' });
	const membersBox = h('div', { class: 'members', hidden: true });
	const count = h('span', { class: 'member-count' }, `${g.member_count} member${g.member_count === 1 ? '' : 's'}`);
	const rename = h('button', { type: 'button', class: 'secondary small', dataset: { act: 'rename' } }, 'Rename');
	const remove = h('button', { type: 'button', class: 'danger small', dataset: { act: 'delete' } }, 'Delete');
	const members = h('button', { type: 'button', class: 'secondary small', dataset: { act: 'members' }, 'aria-expanded': 'false' }, 'Members');
	const head = h('div', {},
		h('header', { class: 'study-head' }, h('h3', {}, g.name), count),
		g.description ? h('p', { class: 'meta desc' }, g.description) : null,
		h('p', { class: 'meta' }, h('span', { class: 'mono' }, g.id), ' · created ', timeEl(g.created_at)));
	card.append(head, h('div', { class: 'row' }, members, rename, remove), msg, membersBox);

	rename.addEventListener('click', () => {
		clear(msg);
		const name = h('input', { type: 'text', maxlength: 100, value: g.name });
		const desc = h('input', { type: 'text', maxlength: 1000, value: g.description || '' });
		const save = h('button', { type: 'submit' }, 'Save');
		const cancel = h('button', { type: 'button', class: 'secondary' }, 'Cancel');
		const fid = 'rename_' + g.id;
		const form = h('form', { novalidate: true, class: 'rename-form' },
			h('div', { class: 'row wrap align-top' }, field(fid, 'Name', name, null), field(fid + '_desc', 'Description', desc, 'Empty clears it.')),
			h('div', { class: 'row' }, save, cancel));
		cancel.addEventListener('click', () => clear(msg));
		form.addEventListener('submit', async (ev) => {
			ev.preventDefault();
			const err = nameError(name.value);
			setError(fid, err);
			if (err) { name.focus(); return; }
			try {
				const ng = await busy(save, 'Saving…', () => patch('/groups/' + encodeURIComponent(g.id),
					{ name: name.value, description: desc.value.trim() ? desc.value : null }));
				flash(`Group "${ng.name}" saved.`);
				await reload();
			} catch (e) {
				form.append(errorBox(e));
			}
		});
		msg.append(form);
		name.focus();
	});
	remove.addEventListener('click', async () => {
		clear(msg);
		if (!(await confirmDialog(`Delete the group "${g.name}"?`,
			`Its ${g.member_count} member${g.member_count === 1 ? '' : 's'} leave it; a study that is open and names it keeps it from being deleted.`,
			'Delete group'))) return;
		try {
			await busy(remove, 'Deleting…', () => del('/groups/' + encodeURIComponent(g.id)));
			flash(`Group "${g.name}" deleted.`);
			await reload();
		} catch (e) {
			msg.append(errorBox(e));
		}
	});
	members.addEventListener('click', async () => {
		const open = membersBox.hidden;
		membersBox.hidden = !open;
		members.setAttribute('aria-expanded', String(open));
		if (open) await memberList(membersBox, g, (n) => { g.member_count = n; count.textContent = `${n} member${n === 1 ? '' : 's'}`; });
	});
	return card;
}

async function memberList(box, g, counted) {
	const body = h('tbody');
	const msg = h('div');
	const more = h('button', { type: 'button', class: 'secondary', hidden: true }, 'Load more');
	const text = h('textarea', { rows: 3, placeholder: 'psn_0c5d2e61a9f4b380\nstd_MizRSB9yBM4k5jl0,anon_51346da546274547' });
	const addMsg = h('div', { class: 'add-msg' });
	const add = h('button', { type: 'submit' }, 'Add members');
	const fid = 'members_' + g.id;
	const form = h('form', { novalidate: true, class: 'members-form' },
		field(fid, 'Add members', text, 'One a line: a pseudonym (psn_…, as on a study\'s participants), or a study id and a participant id.'),
		addMsg, add);
	let cursor = null;
	async function load(reset) {
		clear(msg);
		if (reset) { cursor = null; body.replaceChildren(); msg.append(loading()); }
		const q = new URLSearchParams({ limit: '50' });
		if (cursor) q.set('cursor', cursor);
		try {
			const page = await get(`/groups/${encodeURIComponent(g.id)}/members?` + q);
			clear(msg);
			for (const m of page.members) {
				const rm = h('button', { type: 'button', class: 'small danger', dataset: { remove: m.pseudonym } }, 'Remove');
				const tr = labelled(h('tr', { dataset: { member: m.pseudonym } },
					h('td', { class: 'mono' }, m.pseudonym), h('td', {}, timeEl(m.added_at)), h('td', {}, rm)), ['Pseudonym', 'Added', '']);
				rm.addEventListener('click', async () => {
					if (!(await confirmDialog(`Remove ${m.pseudonym}?`, `It leaves "${g.name}" at once: studies that name the group see the change at the next request.`, 'Remove'))) return;
					try {
						const r = await busy(rm, '…', () => del(`/groups/${encodeURIComponent(g.id)}/members/${encodeURIComponent(m.pseudonym)}`));
						tr.remove();
						counted(r.member_count);
						flash(`${m.pseudonym} removed from "${g.name}".`);
					} catch (e) {
						msg.append(errorBox(e));
					}
				});
				body.append(tr);
			}
			if (!body.children.length) msg.append(h('p', { class: 'empty' }, 'No members yet.'));
			cursor = page.next_cursor;
			more.hidden = !cursor;
		} catch (e) {
			clear(msg, errorBox(e));
		}
	}
	form.addEventListener('submit', async (ev) => {
		ev.preventDefault();
		clear(addMsg);
		const { rows, errors } = memberRows(text.value);
		if (errors.length) {
			addMsg.append(h('div', { class: 'error', role: 'alert' }, h('ul', { class: 'row-errors' }, errors.map((t) => h('li', {}, t)))));
			return;
		}
		try {
			const r = await busy(add, 'Adding…', () => post(`/groups/${encodeURIComponent(g.id)}/members`, { members: rows }));
			text.value = '';
			counted(r.member_count);
			clear(addMsg, h('p', { class: 'ok success', role: 'status' }, `Added ${r.added}` + (r.already ? `; ${r.already} already in the group.` : '.')));
			await load(true);
		} catch (e) {
			const m = /^members\[(\d+)\]/.exec(e.detail || '');
			const l = m ? text.value.split(/\r?\n/).filter((x) => x.trim())[Number(m[1])] : null;
			addMsg.append(h('div', { class: 'error', role: 'alert' }, h('ul', { class: 'row-errors' },
				h('li', {}, (l ? `"${l.trim()}": ` : '') + e.detail))));
		}
	});
	more.addEventListener('click', () => busy(more, 'Loading…', () => load(false)));
	clear(box, h('div', { class: 'table-wrap' }, h('table', { class: 'members-table' },
		h('thead', {}, h('tr', {}, ['Pseudonym', 'Added', ''].map((c) => h('th', { scope: 'col' }, c)))), body)),
	msg, more, form);
	await load(true);
}
