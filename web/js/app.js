// The console's shell: a hash router over the views (design.md §12).
import { session, setUnauthorizedHandler, post } from './api.js';
import { h, clear, errorBox, flash } from './ui.js';
import { loginView } from './login.js';
import { overviewView } from './overview.js';
import { walletView } from './wallet.js';
import { studiesView } from './studies.js';
import { participantsView } from './participants.js';
import { agentsView } from './agents.js';
import { groupsView } from './groups.js';

const main = document.getElementById('main');
let renderSeq = 0;

const routes = [
	[/^#\/overview$/, 'overview', () => overviewView],
	[/^#\/wallet$/, 'wallet', () => walletView],
	[/^#\/studies$/, 'studies', () => studiesView],
	[/^#\/studies\/([A-Za-z0-9_]{1,63})$/, 'studies', (m) => (root) => participantsView(root, m[1])],
	[/^#\/agents$/, 'agents', () => agentsView],
	[/^#\/groups$/, 'groups', () => groupsView],
];

function chrome(loggedIn) {
	document.getElementById('nav').hidden = !loggedIn;
	document.getElementById('who').hidden = !loggedIn;
	document.getElementById('who-email').textContent = loggedIn ? session.email : '';
}

async function render(focus = false) {
	const seq = ++renderSeq;
	const root = h('div', { class: 'view' });
	clear(main, root);
	if (!session.token) {
		chrome(false);
		document.title = 'Log in · arps console';
		// After login: the page asked for, else the overview (one render either way).
		return loginView(root, () => {
			if (!location.hash || location.hash === '#/') location.hash = '#/overview';
			else render();
		});
	}
	chrome(true);
	const hash = !location.hash || location.hash === '#/' ? '#/overview' : location.hash;
	let view = null, name = null;
	for (const [re, n, make] of routes) {
		const m = re.exec(hash);
		if (m) { view = make(m); name = n; break; }
	}
	for (const a of document.querySelectorAll('#nav a')) {
		if (a.dataset.view === name) a.setAttribute('aria-current', 'page');
		else a.removeAttribute('aria-current');
	}
	if (!view) {
		root.append(h('h1', {}, 'Not found'), h('p', { class: 'error', role: 'alert' }, 'There is no page at ' + hash + '.'),
			h('p', {}, h('a', { href: '#/overview' }, 'Go to the overview')));
		return;
	}
	document.title = name[0].toUpperCase() + name.slice(1) + ' · arps console';
	try {
		// Each view puts its heading first, before its first request: focus
		// goes there (tabindex=-1, no outline), not around the whole page.
		const running = view(root);
		if (focus) {
			const h1 = root.querySelector('h1');
			if (h1) { h1.tabIndex = -1; h1.focus({ preventScroll: true }); }
		}
		await running;
	} catch (e) {
		if (seq === renderSeq) root.append(errorBox(e));
	}
}

setUnauthorizedHandler((err) => {
	session.clear();
	render().then(() => flash(err.detail + ' Please log in again.', 'error'));
});

document.getElementById('logout').addEventListener('click', async () => {
	try {
		await post('/auth/logout');
	} catch (e) {
		// The token is dropped either way; say why the server refused.
		flash(e.detail, 'error');
	}
	session.clear();
	history.replaceState(null, '', location.pathname); // no hashchange: the flash below stays
	await render();
	flash('You are logged out.');
});

window.addEventListener('hashchange', () => {
	document.getElementById('flash').replaceChildren();
	render(true);
});
// Another tab logged in or out: this tab follows (the session is shared, api.js).
window.addEventListener('storage', (ev) => {
	if (ev.key !== session.key && ev.key !== null) return;
	document.getElementById('flash').replaceChildren();
	render().then(() => { if (!session.token) flash('You are logged out (in another tab).'); });
});
window.addEventListener('unhandledrejection', (ev) => {
	const e = ev.reason;
	flash(e && e.detail ? e.detail : String(e && e.message || e), 'error');
	ev.preventDefault();
});
render();
