// A small OpenID Connect identity provider for the dev and test stacks
// (design.md §12): the authorization endpoint of the implicit flow
// (response_type=id_token). GET /authorize shows a sign-in form; its answer
// redirects back to redirect_uri with #id_token=…&state=…, an RS256 ID token
// signed with the dev stack's key var/idp/dev-rsa.pem (kid dev-rsa, issuer
// arps-dev-idp) and carrying the request's nonce.
//
// The browser test imports startIdp(); for `make run`:
//   node tests/browser/idp.mjs            (ARPS_VAR, default ./var)
// listens where var/arps.conf's idp.dev.authorize_url points.
import http from 'node:http';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const b64url = (b) => Buffer.from(b).toString('base64url');

export function signIdToken(key, claims, kid = 'dev-rsa') {
	const head = b64url(JSON.stringify({ alg: 'RS256', typ: 'JWT', kid }));
	const body = b64url(JSON.stringify(claims));
	const sig = crypto.sign('sha256', Buffer.from(head + '.' + body), key);
	return head + '.' + body + '.' + b64url(sig);
}

const esc = (s) => String(s).replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

// Start the provider on url (its authorize URL). The returned object records
// each authorization request (requests) and lets a test alter the next
// answer: tamper = 'state' (another state), 'nonce' (a token of another
// sign-in) or 'audience' (a token for another client: the service refuses it).
export function startIdp({ url, keyFile, issuer = 'arps-dev-idp', clientId = 'arps-dev' }) {
	const key = crypto.createPrivateKey(fs.readFileSync(keyFile));
	const where = new URL(url);
	const idp = { requests: [], tamper: null, server: null, close: () => new Promise((r) => idp.server.close(r)) };
	const server = http.createServer((req, res) => {
		const u = new URL(req.url, where);
		const q = u.searchParams;
		const fail = (why) => {
			res.writeHead(400, { 'Content-Type': 'text/plain; charset=utf-8' });
			res.end('bad authorization request: ' + why + '\n');
		};
		if (u.pathname === where.pathname && req.method === 'GET') {
			idp.requests.push(Object.fromEntries(q));
			if (q.get('response_type') !== 'id_token') return fail('response_type must be id_token');
			if (q.get('client_id') !== clientId) return fail('unknown client_id');
			if (!(q.get('scope') || '').split(' ').includes('openid')) return fail('scope must include openid');
			if (!q.get('nonce') || !q.get('state')) return fail('nonce and state are required');
			if (!/^https?:\/\//.test(q.get('redirect_uri') || '')) return fail('redirect_uri');
			const hidden = ['response_type', 'client_id', 'redirect_uri', 'scope', 'state', 'nonce']
				.map((k) => `<input type="hidden" name="${k}" value="${esc(q.get(k))}">`).join('');
			res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' });
			res.end(`<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Dev identity provider</title></head>
<body><h1>Dev identity provider</h1><form method="post" action="${esc(where.pathname)}/approve">${hidden}
<label for="email">E-mail address</label> <input id="email" name="email" type="email" required>
<button type="submit">Sign in</button></form></body></html>`);
			return;
		}
		if (u.pathname === where.pathname + '/approve' && req.method === 'POST') {
			let data = '';
			req.on('data', (c) => { data += c; });
			req.on('end', () => {
				const f = new URLSearchParams(data);
				const email = f.get('email') || '';
				const now = Math.floor(Date.now() / 1000);
				const claims = {
					iss: issuer, aud: idp.tamper === 'audience' ? 'someone-else' : clientId,
					sub: 'dev|' + crypto.createHash('sha256').update(email).digest('hex').slice(0, 24),
					email, email_verified: true, nonce: idp.tamper === 'nonce' ? 'replayed' : f.get('nonce'),
					iat: now, exp: now + 300,
				};
				const state = idp.tamper === 'state' ? 'x' + f.get('state') : f.get('state');
				idp.tamper = null;
				const frag = new URLSearchParams({ id_token: signIdToken(key, claims), state, token_type: 'Bearer' });
				res.writeHead(302, { Location: f.get('redirect_uri') + '#' + frag.toString() });
				res.end();
			});
			return;
		}
		if (u.pathname === '/favicon.ico') {
			res.writeHead(204);
			res.end();
			return;
		}
		res.writeHead(404, { 'Content-Type': 'text/plain' });
		res.end('not found\n');
	});
	idp.server = server;
	return new Promise((resolve, reject) => {
		server.once('error', reject);
		server.listen(Number(where.port || 80), where.hostname, () => resolve(idp));
	});
}

if (process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) {
	const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
	const v = process.env.ARPS_VAR || path.join(root, 'var');
	const conf = fs.readFileSync(path.join(v, 'arps.conf'), 'utf8');
	const m = /^idp\.dev\.authorize_url\s*=\s*(\S+)/m.exec(conf);
	if (!m) {
		console.error(`idp.mjs: no idp.dev.authorize_url in ${v}/arps.conf`);
		process.exit(2);
	}
	await startIdp({ url: m[1], keyFile: path.join(v, 'idp/dev-rsa.pem') });
	console.log(`dev identity provider at ${m[1]} (Ctrl-C stops it)`);
}
