// Wallet: balance, a chart of the available balance, transactions by type
// with cursor paging (api.md §7.6).
import { get, getAll, post, ApiError } from './api.js';
import { h, clear, errorBox, loading, timeEl, busy, labelled, field, flash, confirmDialog, statusBadge } from './ui.js';
import { usd, parseDollars } from './money.js';

const COLS = ['When', 'Type', 'Amount', 'Description', 'Study'];
import { balanceChart, balanceSeries, responsiveChart } from './chart.js';

const TYPES = ['signup_bonus', 'study_freeze', 'platform_fee', 'study_unfreeze', 'earning', 'refund',
	'manual_topup', 'external_cashout', 'study_payment', 'cashout_request', 'cashout_refund',
	'bonus_payment', 'bonus'];

export async function walletView(root) {
	root.append(h('h1', {}, 'Wallet'));
	const cards = h('div', { class: 'cards' }, loading());
	const chartBox = h('section', { class: 'card', 'aria-labelledby': 'chart-title' },
		h('h2', { id: 'chart-title' }, 'Available balance over time'), loading());
	const txBox = h('section', { class: 'card', 'aria-labelledby': 'tx-title' });
	const cashBox = h('section', { class: 'card', id: 'cashouts', 'aria-labelledby': 'cashout-title' });
	root.append(cards, cashBox, chartBox, txBox);

	async function showBalance() {
		const b = await get('/wallet/balance');
		clear(cards,
			stat('available', 'Available', b.available_cents),
			stat('frozen', 'Frozen in studies', b.frozen_cents),
			stat('total', 'Total', b.total_cents));
		return b;
	}
	const bal = await showBalance();

	const tx = transactions(txBox);
	cashouts(cashBox, bal, async () => { await showBalance(); tx.reload(); });
	try {
		const all = await getAll('/wallet/transactions', 'transactions', 10);
		const holder = h('div', { class: 'chart-holder' });
		clear(chartBox, chartBox.firstChild, holder,
			all.complete ? null : h('p', { class: 'hint' }, 'Showing the latest 2,000 transactions.'));
		const series = balanceSeries(bal.available_cents, all.items);
		responsiveChart(holder, (w) => balanceChart(series, 'Available balance over time', w));
	} catch (e) {
		clear(chartBox, chartBox.firstChild, errorBox(e));
	}
}

function stat(id, label, cents) {
	return h('div', { class: 'stat', id: 'balance-' + id },
		h('div', { class: 'stat-label' }, label), h('div', { class: 'stat-value' }, usd(cents)));
}

// Study titles by id, for the Study column: the researcher's studies in one
// list request, any other id by its own GET (cached; the id when refused).
function studyTitles() {
	const cache = new Map();
	const all = getAll('/studies', 'studies', 5).then(({ items }) => {
		for (const st of items) cache.set(st.id, Promise.resolve(st.title));
	}).catch(() => {});
	return async (id) => {
		await all;
		if (!cache.has(id)) cache.set(id, get('/studies/' + encodeURIComponent(id)).then((st) => st.title, () => id));
		return cache.get(id);
	};
}


function transactions(box) {
	const title = studyTitles();
	const select = h('select', { id: 'tx-type' }, h('option', { value: '' }, 'All types'),
		TYPES.map((t) => h('option', { value: t }, t.replace(/_/g, ' '))));
	const body = h('tbody');
	const msg = h('div');
	const more = h('button', { type: 'button', class: 'secondary', hidden: true }, 'Load more');
	let cursor = null;

	async function load(reset) {
		clear(msg);
		if (reset) { body.replaceChildren(); cursor = null; msg.append(loading()); }
		const q = new URLSearchParams({ limit: '20' });
		if (select.value) q.set('type', select.value);
		if (cursor) q.set('cursor', cursor);
		try {
			const page = await get('/wallet/transactions?' + q);
			const ids = [...new Set(page.transactions.map((t) => t.study_id).filter(Boolean))];
			const names = new Map(await Promise.all(ids.map(async (i) => [i, await title(i)])));
			clear(msg);
			for (const t of page.transactions) {
				body.append(labelled(h('tr', {},
					h('td', {}, timeEl(t.created_at)),
					h('td', {}, h('span', { class: 'tx-type' }, t.type.replace(/_/g, ' '))),
					// platform_fee states the fee share of a freeze; it moves no money (design.md §4).
					t.type === 'platform_fee'
						? h('td', { class: 'num info', title: 'Included in the study freeze; not a separate charge' }, '(' + usd(t.amount_cents) + ')')
						: h('td', { class: 'num ' + (t.amount_cents < 0 ? 'neg' : 'pos') }, usd(t.amount_cents)),
					h('td', {}, t.description || ''),
					h('td', {}, t.study_id ? h('a', { href: '#/studies/' + t.study_id, title: t.study_id, class: 'study-link',
						dataset: { study: t.study_id } }, names.get(t.study_id)) : '—')), COLS));
			}
			if (!body.children.length) msg.append(h('p', { class: 'empty' }, 'No transactions.'));
			cursor = page.next_cursor;
			more.hidden = !cursor;
		} catch (e) {
			clear(msg, errorBox(e));
		}
	}
	select.addEventListener('change', () => load(true));
	more.addEventListener('click', () => busy(more, 'Loading…', () => load(false)));
	const out = { reload: () => load(true) };
	clear(box, h('h2', { id: 'tx-title' }, 'Transactions'),
		h('div', { class: 'row' }, h('label', { for: 'tx-type' }, 'Type'), select),
		h('div', { class: 'table-wrap' }, h('table', { class: 'tx' },
			h('thead', {}, h('tr', {}, COLS.map((c) => h('th', { scope: 'col' }, c)))),
			body)),
		msg, more);
	load(true);
	return out;
}

const CASH_COLS = ['Requested', 'Amount', 'From', 'State', 'Reference or reason', 'Settled'];

// Cash-out requests (api.md §7.6): an amount in dollars to exact cents, from
// the account's wallet or a claimed agent's; a confirmation naming the amount;
// the requests with their state. changed() refreshes the balance and rows.
function cashouts(box, bal, changed) {
	const amount = h('input', { type: 'text', inputmode: 'decimal', placeholder: '25.00', autocomplete: 'off' });
	const from = h('select', {}, h('option', { value: '' }, `Your wallet (available ${usd(bal.available_cents)})`));
	const names = new Map();
	const msg = h('div', { id: 'cashout-msg' });
	const button = h('button', { type: 'submit' }, 'Request cash-out');
	const body = h('tbody');
	const listMsg = h('div');
	const more = h('button', { type: 'button', class: 'secondary', hidden: true }, 'Load more');
	let cursor = null, account = null;
	const accountReady = get('/account').then((a) => {
		account = a;
		names.set(a.id, 'Your wallet');
		for (const ag of a.agents) {
			names.set(ag.agent_id, 'Agent ' + ag.name);
			from.append(h('option', { value: ag.agent_id }, `Agent ${ag.name} (available ${usd(ag.wallet.available_cents)})`));
		}
	}).catch(() => {});
	const available = () => {
		if (!from.value) return bal.available_cents;
		const ag = account && account.agents.find((x) => x.agent_id === from.value);
		return ag ? ag.wallet.available_cents : null;
	};

	const form = h('form', { novalidate: true, id: 'cashout-form' },
		h('div', { class: 'row wrap align-top' },
			field('cashout_amount', 'Amount ($)', amount, 'In dollars; it leaves the available balance now.'),
			field('cashout_wallet', 'From', from, null)),
		msg, button);
	form.addEventListener('submit', async (ev) => {
		ev.preventDefault();
		clear(msg);
		const cents = parseDollars(amount.value);
		const avail = available();
		const err = amount.value.trim() === '' ? 'Required.'
			: Number.isNaN(cents) ? 'A dollar amount, such as 25 or 25.50.'
				: cents < 1 ? 'At least $0.01.'
					: avail !== null && cents > avail ? `More than the available ${usd(avail)}.` : null;
		setError(err);
		if (err) { amount.focus(); return; }
		const ag = from.value && account ? account.agents.find((x) => x.agent_id === from.value) : null;
		const who = from.value ? 'agent ' + (ag ? ag.name : from.value) : 'your wallet';
		if (!(await confirmDialog(`Cash out ${usd(cents)}?`,
			`${usd(cents)} leaves the available balance of ${who} now and is held until the operator ` +
			'pays it to you outside arps; a refused request returns it.', `Cash out ${usd(cents)}`))) return;
		try {
			const c = await busy(button, 'Requesting…', () => post('/wallet/cashouts',
				from.value ? { amount_cents: cents, agent_id: from.value } : { amount_cents: cents }));
			form.reset();
			clear(msg, h('p', { class: 'ok success', role: 'status' },
				`Cash-out of ${usd(c.amount_cents)} requested; it is ${c.status}.`));
			flash(`Cash-out of ${usd(c.amount_cents)} requested.`);
			await changed();
			const a = await get('/account').catch(() => null);
			if (a) { account = a; refreshOptions(); }
			await load(true);
		} catch (e) {
			if (e instanceof ApiError && (e.field === 'amount_cents' || e.code === 'INSUFFICIENT_FUNDS')) {
				setError(e.code === 'INSUFFICIENT_FUNDS' && avail !== null ? `More than the available ${usd(avail)}.` : e.detail);
				amount.focus();
			} else {
				msg.append(errorBox(e));
			}
		}
	});
	function setError(text) {
		document.getElementById('cashout_amount-error').textContent = text || '';
		if (text) amount.setAttribute('aria-invalid', 'true');
		else amount.removeAttribute('aria-invalid');
	}
	async function refreshOptions() {
		const b = await get('/wallet/balance').catch(() => null);
		if (b) bal = b;
		from.options[0].textContent = `Your wallet (available ${usd(bal.available_cents)})`;
		for (const o of [...from.options].slice(1)) {
			const ag = account.agents.find((x) => x.agent_id === o.value);
			if (ag) o.textContent = `Agent ${ag.name} (available ${usd(ag.wallet.available_cents)})`;
		}
	}

	async function load(reset) {
		clear(listMsg);
		if (reset) { cursor = null; listMsg.append(loading()); }
		const q = new URLSearchParams({ limit: '20' });
		if (cursor) q.set('cursor', cursor);
		try {
			await accountReady;
			const page = await get('/wallet/cashouts?' + q);
			if (reset) body.replaceChildren();
			clear(listMsg);
			for (const c of page.cashouts) {
				body.append(labelled(h('tr', { id: 'cashout-' + c.id, dataset: { status: c.status } },
					h('td', {}, timeEl(c.created_at)),
					h('td', { class: 'num' }, usd(c.amount_cents)),
					h('td', {}, names.get(c.wallet_id) || c.wallet_id),
					h('td', {}, statusBadge(c.status)),
					h('td', {}, c.reference || c.reason || ''),
					h('td', {}, timeEl(c.settled_at))), CASH_COLS));
			}
			if (!body.children.length) listMsg.append(h('p', { class: 'empty' }, 'No cash-out requests yet.'));
			cursor = page.next_cursor;
			more.hidden = !cursor;
		} catch (e) {
			clear(listMsg, errorBox(e));
		}
	}
	more.addEventListener('click', () => busy(more, 'Loading…', () => load(false)));
	clear(box, h('h2', { id: 'cashout-title' }, 'Cash out'), form,
		h('h3', { class: 'sub' }, 'Your requests'),
		h('div', { class: 'table-wrap' }, h('table', { class: 'cashouts' },
			h('thead', {}, h('tr', {}, CASH_COLS.map((c) => h('th', { scope: 'col' }, c)))),
			body)),
		listMsg, more);
	load(true);
}
