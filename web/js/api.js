// The public API, /api/v1 only (design.md §12). The access token lives in
// localStorage: one session for every tab of the console, so a new tab needs
// no new login code (5 an address an hour, design.md §9.2); log-out ends it
// in every tab (app.js listens to the storage event).

const BASE = '/api/v1';
const KEY = 'arps.token';

export class ApiError extends Error {
	constructor(status, code, detail) {
		super(detail);
		this.status = status;
		this.code = code;
		this.detail = detail;
	}
	// "title: must be 1 to 200 characters long" names the field (docs/api.md §3).
	get field() {
		const m = /^([a-z_]+): /.exec(this.detail || '');
		return m ? m[1] : null;
	}
}

export const session = {
	key: KEY,
	get token() { return localStorage.getItem(KEY); },
	set(token, account) {
		localStorage.setItem(KEY + '.email', (account && account.email) || '');
		localStorage.setItem(KEY, token);
	},
	get email() { return localStorage.getItem(KEY + '.email') || ''; },
	clear() { localStorage.removeItem(KEY); localStorage.removeItem(KEY + '.email'); },
};

let onUnauthorized = () => {};
export function setUnauthorizedHandler(fn) { onUnauthorized = fn; }

function newKey() {
	const b = new Uint8Array(18);
	crypto.getRandomValues(b);
	return Array.from(b, (x) => x.toString(16).padStart(2, '0')).join('');
}

// One request. Every failure becomes an ApiError carrying the answer's detail;
// a mutating POST carries an Idempotency-Key, so a retry never runs twice:
// a fresh one, or idemKey when the caller keeps one for a whole batch (a
// second click on the same bonus batch replays it, design.md §13).
export async function api(method, path, body, idemKey) {
	const headers = { Accept: 'application/json' };
	const token = session.token;
	if (token) headers.Authorization = 'Bearer ' + token;
	const init = { method, headers, credentials: 'omit', cache: 'no-store' };
	if (body !== undefined) {
		headers['Content-Type'] = 'application/json';
		init.body = JSON.stringify(body);
	}
	if (method === 'POST') headers['Idempotency-Key'] = idemKey || newKey();
	let res;
	try {
		res = await fetch(BASE + path, init);
	} catch (e) {
		throw new ApiError(0, 'NETWORK', 'The service cannot be reached: ' + e.message);
	}
	let data = null;
	const text = await res.text();
	if (text) {
		try { data = JSON.parse(text); } catch { data = null; }
	}
	if (!res.ok) {
		const detail = (data && data.detail) || `HTTP ${res.status} ${res.statusText}`.trim();
		const err = new ApiError(res.status, (data && data.error_code) || 'HTTP_' + res.status, detail);
		// Only for the session's own token: a request sent before a log-out
		// (or a new log-in) and answered after it says nothing of the session.
		if (res.status === 401 && token && token === session.token && path !== '/auth/logout')
			onUnauthorized(err);
		throw err;
	}
	return data;
}

export const get = (path) => api('GET', path);
export const post = (path, body, idemKey) => api('POST', path, body, idemKey);
export const patch = (path, body) => api('PATCH', path, body);
export const del = (path) => api('DELETE', path);
export { newKey };

// Every page of a list, up to a bound (the CSV export, the balance chart).
export async function getAll(path, key, maxPages = 50) {
	const out = [];
	let cursor = null;
	for (let i = 0; i < maxPages; i++) {
		const sep = path.includes('?') ? '&' : '?';
		const page = await get(path + sep + 'limit=200' + (cursor ? '&cursor=' + encodeURIComponent(cursor) : ''));
		out.push(...page[key]);
		cursor = page.next_cursor;
		if (!cursor) return { items: out, complete: true };
	}
	return { items: out, complete: false };
}
