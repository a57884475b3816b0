// The landing page after login: studies running, submissions waiting for
// review, the balance; each links to where the work is.
import { get, getAll } from './api.js';
import { h, clear, errorBox, loading, statusBadge } from './ui.js';
import { usd } from './money.js';

export async function overviewView(root) {
	root.append(h('h1', {}, 'Overview'));
	const cards = h('div', { class: 'cards', id: 'overview-cards' }, loading());
	const waitBox = h('section', { class: 'card', 'aria-labelledby': 'waiting-title' });
	const runBox = h('section', { class: 'card', 'aria-labelledby': 'running-title' });
	root.append(cards, waitBox, runBox);

	const [bal, list] = await Promise.all([get('/wallet/balance'), getAll('/studies', 'studies', 5)]);
	const studies = list.items;
	const running = studies.filter((s) => s.status === 'active');
	const paused = studies.filter((s) => s.status === 'paused');
	const waiting = studies.filter((s) => s.stats.submitted > 0);
	const submitted = waiting.reduce((n, s) => n + s.stats.submitted, 0);
	clear(cards,
		stat('running', 'Studies running', String(running.length), paused.length ? `${paused.length} paused` : null, '#/studies'),
		stat('waiting', 'Submissions waiting', String(submitted),
			waiting.length ? `in ${waiting.length} ${waiting.length === 1 ? 'study' : 'studies'}` : 'none to review', null),
		stat('balance', 'Available balance', usd(bal.available_cents), `${usd(bal.frozen_cents)} frozen in studies`, '#/wallet'));

	clear(waitBox, h('h2', { id: 'waiting-title' }, 'Waiting for your review'),
		waiting.length ? h('ul', { class: 'plain', id: 'waiting-list' }, waiting.map((s) => h('li', {},
			h('a', { href: '#/studies/' + s.id }, s.title), ' ',
			h('span', { class: 'badge st-submitted' }, `${s.stats.submitted} submitted`))))
			: h('p', { class: 'empty' }, 'Nothing waits for a review.'),
		list.complete ? null : h('p', { class: 'hint' }, 'Counted over your latest 1,000 studies.'));
	clear(runBox, h('h2', { id: 'running-title' }, 'Running studies'),
		running.length || paused.length
			? h('ul', { class: 'plain', id: 'running-list' }, [...running, ...paused].map((s) => h('li', {},
				h('a', { href: '#/studies/' + s.id }, s.title), ' ', statusBadge(s.status), ' ',
				h('span', { class: 'hint' }, `${s.max_participants - s.stats.spots_remaining} of ${s.max_participants} places taken`))))
			: h('p', { class: 'empty' }, 'No study is running.'),
		h('p', {}, h('a', { class: 'button', href: '#/studies' }, 'Create a study')));
}

function stat(id, label, value, sub, href) {
	return h('div', { class: 'stat', id: 'overview-' + id },
		h('div', { class: 'stat-label' }, label),
		h('div', { class: 'stat-value' }, href ? h('a', { href }, value) : value),
		sub ? h('div', { class: 'hint' }, sub) : null);
}
