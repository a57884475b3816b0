// Log in by e-mail code (api.md §7.3), or with an identity provider listed by
// GET /auth/providers: the OpenID Connect implicit flow for an ID token
// (design.md §12), whose token goes to POST /auth/login like an API client's.
import { get, post, session, ApiError } from './api.js';
import { h, clear, errorBox, field, busy } from './ui.js';

const PENDING = 'arps.oidc';

function random() {
	const b = new Uint8Array(24);
	crypto.getRandomValues(b);
	return Array.from(b, (x) => x.toString(16).padStart(2, '0')).join('');
}

// The provider's answer, taken from the URL before the router sees it: the
// fragment (#id_token=…&state=…, or #error=…) leaves the address bar and the
// history at once. Null when this load is not a return from a provider.
function takeReturn() {
	const frag = location.hash.slice(1);
	if (!/^(id_token|error|state)=|&(id_token|error)=/.test(frag)) return null;
	history.replaceState(null, '', location.pathname);
	const params = new URLSearchParams(frag);
	let pending = null;
	try { pending = JSON.parse(sessionStorage.getItem(PENDING) || 'null'); } catch { pending = null; }
	sessionStorage.removeItem(PENDING);
	return { params, pending };
}
let returned = takeReturn();

// The claims of a JWT, unverified: only to compare the nonce (the server
// verifies the token).
function claims(jwt) {
	const part = (jwt || '').split('.')[1];
	if (!part) return null;
	try {
		const b64 = part.replace(/-/g, '+').replace(/_/g, '/');
		const bin = atob(b64 + '='.repeat((4 - b64.length % 4) % 4));
		return JSON.parse(new TextDecoder().decode(Uint8Array.from(bin, (c) => c.charCodeAt(0))));
	} catch {
		return null;
	}
}

// Check the provider's answer against what this tab sent, then log in.
async function finish({ params, pending }) {
	if (!pending || !pending.state || params.get('state') !== pending.state)
		throw new Error('The sign-in answer does not match a sign-in started in this tab (state). Please try again.');
	if (params.get('error'))
		throw new Error(`The identity provider refused the sign-in: ${params.get('error_description') || params.get('error')}`);
	const token = params.get('id_token');
	const c = claims(token);
	if (!c) throw new Error('The identity provider sent no readable ID token. Please try again.');
	if (c.nonce !== pending.nonce)
		throw new Error('The ID token was not issued for this sign-in (nonce). Please try again.');
	return post('/auth/login', { provider: pending.provider, token });
}

function start(p) {
	const state = random(), nonce = random();
	sessionStorage.setItem(PENDING, JSON.stringify({ provider: p.name, state, nonce }));
	const u = new URL(p.authorization_endpoint);
	u.searchParams.set('response_type', p.response_type);
	u.searchParams.set('client_id', p.client_id);
	u.searchParams.set('redirect_uri', location.origin + location.pathname);
	u.searchParams.set('scope', p.scope);
	u.searchParams.set('state', state);
	u.searchParams.set('nonce', nonce);
	location.assign(u.href);
}

// One button per provider; nothing when none is configured.
async function providers(box, msg) {
	let list;
	try {
		list = (await get('/auth/providers')).providers;
	} catch (e) {
		clear(msg, errorBox(e));
		return;
	}
	if (!list.length) return;
	clear(box, h('p', { class: 'or' }, 'or'), h('div', { class: 'providers' }, list.map((p) => {
		const b = h('button', { type: 'button', class: 'secondary wide', dataset: { provider: p.name } },
			'Sign in with ' + p.label);
		b.addEventListener('click', () => start(p));
		return b;
	})));
}

export function loginView(root, done) {
	const box = h('section', { class: 'card narrow', 'aria-labelledby': 'login-title' });
	const idpBox = h('div', { id: 'idp-box' });
	const idpMsg = h('div', { id: 'idp-msg' });
	root.append(box);
	stepEmail(box, done, '', idpBox, idpMsg);
	providers(idpBox, idpMsg);
	if (returned) {
		const r = returned;
		returned = null;
		idpMsg.append(h('p', { class: 'loading', role: 'status', 'aria-busy': 'true' }, 'Signing in…'));
		finish(r).then((a) => {
			session.set(a.access_token, a.account);
			done();
		}, (e) => clear(idpMsg, errorBox(e instanceof ApiError ? e : { detail: e.message })));
	}
}

function stepEmail(box, done, email, idpBox, idpMsg) {
	const input = h('input', { type: 'email', autocomplete: 'email', required: true, value: email, maxlength: 254 });
	const msg = h('div');
	const button = h('button', { type: 'submit' }, 'Send me a code');
	// A code already received (from another tab, or a curl session) is typed
	// without asking for a new one: each new code uses one of the address's
	// 5 an hour (design.md §9.2).
	const have = h('button', { type: 'button', class: 'link', id: 'have-code' }, 'I already have a code');
	const form = h('form', { novalidate: true },
		field('email', 'E-mail address', input, 'We send a 6-digit code to this address.'), msg,
		h('div', { class: 'row' }, button, have));
	const address = () => {
		const addr = input.value.trim();
		const bad = /^[^\s@]+@[^\s@]+$/.test(addr) ? '' : 'email: enter the address the code was sent to';
		document.getElementById('email-error').textContent = bad;
		if (bad) { input.setAttribute('aria-invalid', 'true'); input.focus(); } else input.removeAttribute('aria-invalid');
		return bad ? null : addr;
	};
	have.addEventListener('click', () => {
		clear(msg);
		const addr = address();
		if (addr) stepCode(box, done, addr, idpBox, idpMsg, false);
	});
	form.addEventListener('submit', async (ev) => {
		ev.preventDefault();
		clear(msg);
		const addr = address();
		if (!addr) return;
		try {
			await busy(button, 'Sending…', () => post('/auth/email/send-code', { email: addr }));
			stepCode(box, done, addr, idpBox, idpMsg, true);
		} catch (e) {
			msg.append(errorBox(e));
		}
	});
	clear(box, h('h1', { id: 'login-title' }, 'Log in'),
		h('p', {}, 'Researchers and agent owners log in with a code sent by e-mail.'), form, idpMsg, idpBox);
	input.focus();
}

function stepCode(box, done, email, idpBox, idpMsg, sent) {
	const input = h('input', { type: 'text', inputmode: 'numeric', autocomplete: 'one-time-code',
		pattern: '[0-9]{6}', maxlength: 16, required: true });
	const msg = h('div');
	const button = h('button', { type: 'submit' }, 'Log in');
	const back = h('button', { type: 'button', class: 'link' }, 'Use another address');
	back.addEventListener('click', () => stepEmail(box, done, email, idpBox, idpMsg));
	const form = h('form', { novalidate: true },
		field('code', 'Code', input, 'A code is valid for 10 minutes; only the latest one sent works.'), msg,
		h('div', { class: 'row' }, button, back));
	form.addEventListener('submit', async (ev) => {
		ev.preventDefault();
		clear(msg);
		try {
			const r = await busy(button, 'Logging in…',
				() => post('/auth/login', { provider: 'email', email, code: input.value.trim() }));
			session.set(r.access_token, r.account);
			done();
		} catch (e) {
			msg.append(errorBox(e));
			input.select();
		}
	});
	clear(box, h('h1', { id: 'login-title' }, sent ? 'Check your mail' : 'Enter your code'),
		sent ? h('p', {}, 'We sent a code to ', h('strong', {}, email), '.')
			: h('p', {}, 'The latest code sent to ', h('strong', {}, email), '.'), form);
	input.focus();
}
