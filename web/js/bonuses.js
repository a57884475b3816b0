// Bonuses (POST/GET /studies/{id}/bonuses, api.md §7.4, design.md §13): pay
// the selected participants one amount with a reason, or a CSV of
// participant_id,amount,reason; the total with fees before a confirmation;
// one Idempotency-Key per batch, so a batch sent twice pays once.
import { get, post, newKey } from './api.js';
import { h, clear, errorBox, loading, busy, timeEl, flash, confirmDialog, labelled, field } from './ui.js';
import { usd, fee, parseDollars, parseWhole } from './money.js';

const MAX_ROWS = 500, MAX_CENTS = 100000, MAX_REASON = 500;
const COLS = ['Paid', 'Participant', 'Amount', 'Fee', 'Reason'];

// One CSV line's fields (RFC 4180 quotes; "" inside quotes is one quote).
// Returns the lines of text as arrays of fields, each with its line number.
export function parseCsv(text) {
	const rows = [];
	let row = [], cell = '', quoted = false, line = 1, start = 1, any = false;
	const end = () => { row.push(cell); if (any || row.length > 1 || row[0] !== '') rows.push({ line: start, fields: row }); row = []; cell = ''; any = false; };
	for (let i = 0; i < text.length; i++) {
		const c = text[i];
		if (quoted) {
			if (c === '"' && text[i + 1] === '"') { cell += '"'; i++; }
			else if (c === '"') quoted = false;
			else { if (c === '\n') line++; cell += c; }
		} else if (c === '"') { quoted = true; any = true; }
		else if (c === ',') { row.push(cell); cell = ''; any = true; }
		else if (c === '\n' || c === '\r') {
			if (c === '\r' && text[i + 1] === '\n') i++;
			end();
			line++;
			start = line;
		} else cell += c;
	}
	if (cell !== '' || row.length || any) end();
	return rows;
}

// CSV text to the API's rows: participant_id, amount in dollars (or cents
// under an amount_cents header), reason optional; a header line is optional.
// Returns { rows: [{line, participant_id, amount_cents, reason}], errors: [text] }.
export function csvBonuses(text) {
	const lines = parseCsv(text);
	const errors = [], rows = [];
	let cents = false;
	if (lines.length && /^participant_id$/i.test(lines[0].fields[0].trim())) {
		cents = /^amount_cents$/i.test((lines[0].fields[1] || '').trim());
		lines.shift();
	}
	const seen = new Map();
	for (const { line, fields } of lines) {
		const [pid = '', amt = '', ...rest] = fields;
		const reason = rest.join(',').trim();
		const id = pid.trim();
		const a = amt.trim();
		const v = cents ? parseWhole(a) : parseDollars(a);
		let e = null;
		if (!/^anon_[0-9a-f]{16}$/.test(id)) e = `participant_id: "${id}" is not a participant id (anon_ and 16 hex digits)`;
		else if (seen.has(id)) e = `participant_id: ${id} is on line ${seen.get(id)} too (one bonus each per batch)`;
		else if (Number.isNaN(v)) e = `amount: "${a}" is not ${cents ? 'a whole number of cents' : 'a dollar amount such as 2.50'}`;
		else if (v < 1 || v > MAX_CENTS) e = 'amount: from $0.01 to $1,000.00';
		else if ([...reason].length > MAX_REASON) e = `reason: at most ${MAX_REASON} characters`;
		if (e) errors.push(`Line ${line}: ${e}`);
		else { seen.set(id, line); rows.push({ line, participant_id: id, amount_cents: v, reason: reason || null }); }
	}
	if (!errors.length && !rows.length) errors.push('No rows: one participant_id,amount,reason a line.');
	if (rows.length > MAX_ROWS) errors.push(`${rows.length} rows: at most ${MAX_ROWS} a batch.`);
	return { rows, errors };
}

// The batch's amounts, fees (each row's, rounded up) and total.
export function batchCost(rows, feeBps) {
	let amount = 0, fees = 0;
	for (const r of rows) { amount += r.amount_cents; fees += fee(r.amount_cents, feeBps); }
	return { amount, fees, total: amount + fees };
}

// The section on the study's page. selected() gives the chosen participant
// items; paid() runs after a batch went through (the study's totals).
export function bonusSection(box, studyId, selected, paid) {
	let feeBps = null, available = null;
	const account = get('/account').then((a) => { feeBps = a.fee_bps; update(); }).catch(() => {});
	const balance = () => get('/wallet/balance').then((b) => { available = b.available_cents; update(); }).catch(() => {});
	balance();
	// The key of the batch being sent, kept while its answer is unknown (a
	// network failure, a 5xx, the first still running): the same batch sent
	// again carries it and pays once. A definitive answer ends it.
	let pending = null, sending = false;
	async function send(body, button, label) {
		const sig = JSON.stringify(body);
		if (!pending || pending.sig !== sig) pending = { sig, key: newKey() };
		try {
			const out = await busy(button, label, () => post(`/studies/${encodeURIComponent(studyId)}/bonuses`, body, pending.key));
			pending = null;
			return out;
		} catch (e) {
			if (!(e.status === 0 || e.status >= 500 || e.code === 'IDEMPOTENCY_CONFLICT')) pending = null;
			throw e;
		}
	}

	// --- one amount to the selected rows ---
	const amount = h('input', { type: 'text', inputmode: 'decimal', placeholder: '2.00', autocomplete: 'off' });
	const reason = h('input', { type: 'text', maxlength: MAX_REASON, placeholder: 'Shown to the agent', autocomplete: 'off' });
	const preview = h('p', { class: 'hint', id: 'bonus-preview', 'aria-live': 'polite' });
	const msg = h('div', { id: 'bonus-msg' });
	const payBtn = h('button', { type: 'submit', id: 'pay-bonus' }, 'Pay bonus to selected');
	function update() {
		const n = selected().length;
		const v = parseDollars(amount.value);
		if (feeBps === null) { preview.textContent = 'Loading the fee…'; return; }
		if (!n) { preview.textContent = 'Select participants who submitted (in the table above).'; return; }
		if (Number.isNaN(v) || v < 1 || v > MAX_CENTS) { preview.textContent = `${n} selected; enter an amount.`; return; }
		const c = batchCost(selected().map(() => ({ amount_cents: v })), feeBps);
		preview.textContent = `${n} × ${usd(v)} + fee ${usd(fee(v, feeBps))} each = ${usd(c.total)} ` +
			`(bonuses ${usd(c.amount)}, fees ${usd(c.fees)}; fee ${(feeBps / 100).toLocaleString('en-US')}%, rounded up to the cent)` +
			(available !== null && c.total > available ? `. More than your available ${usd(available)}.` : '.');
	}
	amount.addEventListener('input', update);
	const form = h('form', { novalidate: true, id: 'bonus-form' },
		h('div', { class: 'row wrap align-top' },
			field('bonus_amount', 'Bonus each ($)', amount, '$0.01 to $1,000.00, from your available balance.'),
			field('bonus_reason', 'Reason (optional)', reason, null)),
		preview, msg, payBtn);
	function setError(f, text, input) {
		document.getElementById(f + '-error').textContent = text || '';
		if (text) input.setAttribute('aria-invalid', 'true'); else input.removeAttribute('aria-invalid');
	}
	form.addEventListener('submit', async (ev) => {
		ev.preventDefault();
		if (sending) return;
		clear(msg);
		const chosen = selected();
		const v = parseDollars(amount.value);
		const aErr = amount.value.trim() === '' ? 'Required.' : Number.isNaN(v) ? 'A dollar amount, such as 2 or 2.50.'
			: v < 1 || v > MAX_CENTS ? 'From $0.01 to $1,000.00.' : null;
		const rErr = [...reason.value].length > MAX_REASON ? `At most ${MAX_REASON} characters.` : null;
		setError('bonus_amount', aErr, amount);
		setError('bonus_reason', rErr, reason);
		if (!chosen.length) msg.append(h('p', { class: 'error', role: 'alert' }, 'Select at least one participant who submitted.'));
		else if (chosen.length > MAX_ROWS) msg.append(h('p', { class: 'error', role: 'alert' }, `At most ${MAX_ROWS} a batch.`));
		if (aErr || rErr || !chosen.length || chosen.length > MAX_ROWS) return;
		await account;
		const rows = chosen.map((p) => ({ participant_id: p.participant_id, amount_cents: v, reason: reason.value || null }));
		await pay(rows, payBtn, msg, () => { form.reset(); update(); });
	});

	// --- a CSV ---
	const csv = h('textarea', { rows: 5, placeholder: 'participant_id,amount,reason\nanon_…,2.50,Thorough answers' });
	const file = h('input', { type: 'file', accept: '.csv,text/csv,text/plain' });
	const csvMsg = h('div', { id: 'bonus-csv-msg' });
	const csvBtn = h('button', { type: 'submit', id: 'pay-csv' }, 'Check and pay the CSV');
	file.addEventListener('change', async () => {
		const f = file.files[0];
		if (f) csv.value = await f.text();
	});
	const csvForm = h('form', { novalidate: true, id: 'bonus-csv-form' },
		field('bonus_csv', 'Bonuses as CSV: participant_id,amount,reason', csv,
			'Amounts in dollars (or an amount_cents header for cents); a header line is optional; up to 500 rows.'),
		field('bonus_file', 'Or upload a CSV file', file, null),
		csvMsg, csvBtn);
	csvForm.addEventListener('submit', async (ev) => {
		ev.preventDefault();
		if (sending) return;
		clear(csvMsg);
		const { rows, errors } = csvBonuses(csv.value);
		if (errors.length) {
			csvMsg.append(h('div', { class: 'error', role: 'alert' },
				h('p', {}, errors.length === 1 ? 'One line needs a change; nothing was paid.' : `${errors.length} lines need a change; nothing was paid.`),
				h('ul', { class: 'row-errors' }, errors.slice(0, 50).map((t) => h('li', {}, t)))));
			return;
		}
		await account;
		await pay(rows, csvBtn, csvMsg, () => { csv.value = ''; file.value = ''; }, rows.map((r) => r.line));
	});

	// Confirm, send, show: the API's row-indexed detail names the CSV line.
	// One batch at a time: a second click while one is asked or sent does nothing.
	async function pay(rows, button, out, reset, lines) {
		if (sending) return;
		sending = true;
		try { await payOnce(rows, button, out, reset, lines); } finally { sending = false; }
	}
	async function payOnce(rows, button, out, reset, lines) {
		const c = batchCost(rows, feeBps);
		const n = rows.length;
		if (!(await confirmDialog(`Pay ${n} bonus${n === 1 ? '' : 'es'}, ${usd(c.total)} in all?`,
			`${usd(c.amount)} in bonuses plus ${usd(c.fees)} in fees is taken from your available balance now and paid ` +
			`to the agent${n === 1 ? '' : 's'} at once. A bonus cannot be undone.`, `Pay ${usd(c.total)}`))) return;
		const body = { bonuses: rows.map((r) => ({ participant_id: r.participant_id, amount_cents: r.amount_cents, reason: r.reason })) };
		try {
			const res = await send(body, button, 'Paying…');
			reset();
			clear(out, h('p', { class: 'ok success', role: 'status' },
				`Paid ${res.bonuses.length} bonus${res.bonuses.length === 1 ? '' : 'es'}: ${usd(res.total_cents)} ` +
				`(${usd(res.total_cents - res.fee_cents)} and ${usd(res.fee_cents)} in fees).`));
			flash(`Paid ${res.bonuses.length} bonus${res.bonuses.length === 1 ? '' : 'es'}, ${usd(res.total_cents)}.`);
			balance();
			await list.reload();
			await paid();
		} catch (e) {
			const m = /^bonuses\[(\d+)\]\./.exec(e.detail || '');
			const at = m && lines ? `Line ${lines[Number(m[1])]}: ` : m ? `${rows[Number(m[1])] ? rows[Number(m[1])].participant_id : ''}: ` : '';
			// No answer (the network, a 5xx): the batch may have gone through;
			// sent again, it carries the same key and pays once.
			const unknown = e.status === 0 || e.status >= 500 || e.code === 'IDEMPOTENCY_CONFLICT';
			clear(out, h('div', { class: 'error', role: 'alert' },
				h('p', {}, unknown ? 'No answer yet: the batch may have been paid. Pay the same batch again: it is paid once.'
					: 'Nothing was paid.'), h('ul', { class: 'row-errors' }, h('li', {}, at + e.detail))));
		}
	}

	const listBox = h('div', { id: 'bonus-list' });
	const list = bonusList(listBox, studyId);
	clear(box, h('h2', { id: 'bonus-title' }, 'Bonuses'),
		h('h3', { class: 'sub' }, 'Pay the selected participants'), form,
		h('details', { id: 'bonus-csv-details' }, h('summary', {}, 'Pay from a CSV'), csvForm),
		h('h3', { class: 'sub' }, 'Bonuses paid'), listBox);
	update();
	list.reload();
	return { update };
}

function bonusList(box, studyId) {
	const body = h('tbody');
	const msg = h('div');
	const more = h('button', { type: 'button', class: 'secondary', hidden: true }, 'Load more');
	let cursor = null;
	async function load(reset) {
		clear(msg);
		if (reset) { cursor = null; msg.append(loading()); }
		const q = new URLSearchParams({ limit: '50' });
		if (cursor) q.set('cursor', cursor);
		try {
			const page = await get(`/studies/${encodeURIComponent(studyId)}/bonuses?` + q);
			if (reset) body.replaceChildren();
			clear(msg);
			for (const b of page.bonuses) {
				body.append(labelled(h('tr', { id: 'bonus-' + b.id },
					h('td', {}, timeEl(b.created_at)),
					h('td', { class: 'mono' }, b.participant_id),
					h('td', { class: 'num' }, usd(b.amount_cents)),
					h('td', { class: 'num' }, usd(b.fee_cents)),
					h('td', {}, b.reason || '')), COLS));
			}
			if (!body.children.length) msg.append(h('p', { class: 'empty' }, 'No bonuses paid yet.'));
			cursor = page.next_cursor;
			more.hidden = !cursor;
		} catch (e) {
			clear(msg, errorBox(e));
		}
	}
	more.addEventListener('click', () => busy(more, 'Loading…', () => load(false)));
	clear(box, h('div', { class: 'table-wrap' }, h('table', { class: 'bonuses' },
		h('thead', {}, h('tr', {}, COLS.map((c) => h('th', { scope: 'col' }, c)))), body)), msg, more);
	return { reload: () => load(true) };
}
