// Wallet: balance, a chart of the available balance, transactions by type
// with cursor paging (api.md §7.6).
import { get, getAll } from './api.js';
import { h, clear, errorBox, loading, timeEl, busy, labelled } from './ui.js';

const COLS = ['When', 'Type', 'Amount', 'Description', 'Study'];
import { usd } from './money.js';
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
	root.append(cards, chartBox, txBox);

	const bal = await get('/wallet/balance');
	clear(cards,
		stat('available', 'Available', bal.available_cents),
		stat('frozen', 'Frozen in studies', bal.frozen_cents),
		stat('total', 'Total', bal.total_cents));

	transactions(txBox);
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
	clear(box, h('h2', { id: 'tx-title' }, 'Transactions'),
		h('div', { class: 'row' }, h('label', { for: 'tx-type' }, 'Type'), select),
		h('div', { class: 'table-wrap' }, h('table', { class: 'tx' },
			h('thead', {}, h('tr', {}, COLS.map((c) => h('th', { scope: 'col' }, c)))),
			body)),
		msg, more);
	load(true);
}
