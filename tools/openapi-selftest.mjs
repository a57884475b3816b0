#!/usr/bin/env node
// The check of the check: tools/openapi-check.mjs must pass on a good input
// and fail, naming the fault, on each kind of drift it exists to catch
// (run by tools/dev.sh with the contract check).
//
//   node tools/openapi-selftest.mjs [--fcgi build/arps-fcgi]
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { check } from './openapi-check.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const fcgi = path.resolve(ROOT, process.argv[2] === '--fcgi' ? process.argv[3] : 'build/arps-fcgi');
const routes = execFileSync(fcgi, ['--routes'], { encoding: 'utf8' });
const errorsH = readFileSync(path.join(ROOT, 'core/errors.h'), 'utf8');
const doc = JSON.parse(readFileSync(path.join(ROOT, 'build/openapi.json'), 'utf8'));

let failed = 0, cases = 0;
const H = (extra = '') => `HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n${extra}`;
const rec = (method, p, status, body, extra = '', ctype = 'application/json') =>
    JSON.stringify({ method, path: p, status, content_type: ctype, headers: H(extra), body });
const good = [
    rec('GET', '/api/v1/health', 200, '{"status":"ok"}'),
    rec('HEAD', '/api/v1/health', 200, ''),
    rec('GET', '/api/v1/wallet/balance', 200, '{"available_cents":100,"frozen_cents":0,"total_cents":100}'),
    rec('GET', '/api/v1/nope', 404, '{"detail":"no such endpoint: /api/v1/nope","error_code":"NOT_FOUND","status":404}'),
    rec('DELETE', '/api/v1/health', 405, '{"detail":"no","error_code":"METHOD_NOT_ALLOWED","status":405}', 'Allow: GET, HEAD\r\n'),
    rec('POST', '/api/v1/heartbeat', 429, '{"detail":"later","error_code":"RATE_LIMITED","status":429}', 'Retry-After: 600\r\n'),
    rec('GET', '/api/v1/studies/std_0000000000000000', 404, '{"detail":"no such study","error_code":"NOT_FOUND","status":404}'),
];

// Run the check; want 0 (passes) or a regular expression its report must match.
function expect(name, want, { table = routes, answers = good, errors = errorsH, d = doc } = {}) {
    const { problems } = check({ doc: d, routes: table, errors, answers: answers.join('\n') + '\n' });
    const out = problems.join('\n');
    const ok = want === 0 ? problems.length === 0 : want.test(out);
    cases++;
    if (!ok) {
        failed++;
        console.error(`openapi self-test: ${name}: expected ${want === 0 ? 'a pass' : want}, got:\n${out || '(no problem)'}`);
    }
}
const patched = (f) => { const d = structuredClone(doc); f(d); return d; };

expect('good input passes', 0);
expect('a route the document lacks', /GET \/extra \(under \/api\/v1\) is in the route table but not in the document/,
    { table: routes + 'GET /api/v1/extra key -\n' });
expect('an operation the route table lacks', /GET \/wallet\/balance is in .* but not in the route table/,
    { table: routes.replace(/^GET \/api\/v1\/wallet\/balance .*\n/m, '') });
expect('a method mismatch', /PUT \/agents\/me .*not in the document[\s\S]*PATCH \/agents\/me is in the document but not in the route table/,
    { table: routes.replace('PATCH /api/v1/agents/me', 'PUT /api/v1/agents/me') });
expect('a credential mismatch', /GET \/account: the route table says credential key, the document bearer/,
    { table: routes.replace('GET /api/v1/account bearer', 'GET /api/v1/account key') });
expect('a role mismatch', /POST \/studies: the route table says roles -, the document researcher/,
    { table: routes.replace('POST /api/v1/studies bearer researcher', 'POST /api/v1/studies bearer -') });
expect('an error code the document lacks', /error code NEW_CODE \(core\/errors.h\) is missing from ErrorCode/,
    { errors: errorsH.replace('X(ARPS_OK,', 'X(ARPS_E_NEW, 409, "NEW_CODE") \\\n\tX(ARPS_OK,') });
expect('a code under the wrong status', /Error404: STUDY_FULL is answered with 409/,
    { d: patched((x) => x.components.schemas.Error404.allOf[1].properties.error_code.enum.push('STUDY_FULL')) });
expect('an undocumented field', /GET \/wallet\/balance 200.*must NOT have additional properties/,
    { answers: [rec('GET', '/api/v1/wallet/balance', 200, '{"available_cents":1,"frozen_cents":0,"total_cents":1,"x":1}')] });
expect('a missing field', /must have required property 'total_cents'/,
    { answers: [rec('GET', '/api/v1/wallet/balance', 200, '{"available_cents":1,"frozen_cents":0}')] });
expect('a wrong type', /available_cents must be integer/,
    { answers: [rec('GET', '/api/v1/wallet/balance', 200, '{"available_cents":"1","frozen_cents":0,"total_cents":1}')] });
expect('a status the operation does not list', /status 402 is not listed for GET \/wallet\/balance/,
    { answers: [rec('GET', '/api/v1/wallet/balance', 402, '{"detail":"x","error_code":"INSUFFICIENT_SC","status":402}')] });
expect('an error code the status does not allow', /GET \/agents\/me 401.*error_code must be equal to one of the allowed values/,
    { answers: [rec('GET', '/api/v1/agents/me', 401, '{"detail":"x","error_code":"FORBIDDEN","status":401}')] });
expect('Error.status differing from the HTTP status', /status must be equal to constant/,
    { answers: [rec('GET', '/api/v1/agents/me', 401, '{"detail":"x","error_code":"UNAUTHORIZED","status":403}')] });
expect('429 without Retry-After', /required header Retry-After missing/,
    { answers: [rec('POST', '/api/v1/heartbeat', 429, '{"detail":"x","error_code":"RATE_LIMITED","status":429}')] });
expect('a replayed 429 needs no Retry-After', 0,
    { answers: [rec('POST', '/api/v1/heartbeat', 429, '{"detail":"x","error_code":"RATE_LIMITED","status":429}', 'Idempotent-Replayed: true\r\n')] });
expect('a content type that is not JSON', /Content-Type text\/html is not application\/json/,
    { answers: [rec('GET', '/api/v1/health', 200, '{"status":"ok"}', '', 'text/html')] });
expect('a body that is not JSON', /the body is not JSON/,
    { answers: [rec('GET', '/api/v1/health', 200, '{"status":')] });
expect('a body that is not UTF-8', /not valid UTF-8/,
    { answers: [JSON.stringify({ method: 'GET', path: '/api/v1/health', status: 200, content_type: 'application/json', headers: '', body: null })] });
expect('an answer on an undocumented path', /no documented path matches \/api\/v1\/secret, yet it answered 200/,
    { answers: [rec('GET', '/api/v1/secret', 200, '{}')] });
expect('an answer to an undocumented method', /DELETE is not documented on \/health, yet it answered 200/,
    { answers: [rec('DELETE', '/api/v1/health', 200, '{"status":"ok"}')] });
expect('405 without Allow', /405 without Allow/,
    { answers: [rec('DELETE', '/api/v1/health', 405, '{"detail":"no","error_code":"METHOD_NOT_ALLOWED","status":405}')] });
expect('no answers recorded', /no recorded answers/, { answers: [] });

if (failed) {
    console.error(`openapi self-test: ${failed} case(s) failed`);
    process.exit(1);
}
console.log(`openapi self-test: ${cases} cases, the check passes good input and catches each kind of drift`);
