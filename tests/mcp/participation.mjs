// A whole participation through the MCP endpoint, driven by the official
// TypeScript SDK client over Streamable HTTP (design.md §11).  Run by
// tests/api/test_mcp.c (sdk_participation), which prepares the stack:
//   ARPS_BASE_URL               the stack under test
//   ARPS_MCP_AGENT_KEY          a claimed agent whose bio is embedded
//   ARPS_MCP_RESEARCHER_TOKEN   the access token of the study's researcher
//   ARPS_MCP_STUDY, ARPS_MCP_CODE  an active study visible to the agent, its code
// Every tool result is validated against the tool's outputSchema twice: by
// the SDK client itself (its validator is wrapped to count and record each
// check) and by ajv in the JSON Schema 2020-12 dialect MCP 2025-11-25 names.
// Exits 0 when every step held, 1 with the failed step otherwise.
import assert from 'node:assert/strict';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import Ajv2020 from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';

const env = (name) => {
	const v = process.env[name];
	if (!v) throw new Error(`${name} is not set`);
	return v;
};
const base = env('ARPS_BASE_URL');
const key = env('ARPS_MCP_AGENT_KEY');
const token = env('ARPS_MCP_RESEARCHER_TOKEN');
const study = env('ARPS_MCP_STUDY');
const code = env('ARPS_MCP_CODE');
const url = new URL('/api/v1/mcp', base);

let steps = 0;
const ok = (what) => { steps++; console.log(`mcp-sdk: ok ${steps} - ${what}`); };

// The SDK's own validator, counting what it checks and keeping its verdicts.
class CountingValidator {
	constructor() { this.inner = new AjvJsonSchemaValidator(); this.checks = 0; this.failed = []; }
	getValidator(schema) {
		const v = this.inner.getValidator(schema);
		return (input) => {
			const r = v(input);
			this.checks++;
			if (!r.valid) this.failed.push(r.errorMessage);
			return r;
		};
	}
}

// Our own validators, by tool name (tools/list fills them).
const ajv = new Ajv2020({ strict: true, strictTypes: false, allErrors: true, allowUnionTypes: true });
addFormats(ajv);
const outputCheck = new Map();

// The annotations each tool must carry (api.md §18): readOnly, destructive, idempotent.
const hints = {
	get_profile: [1, 0, 1], update_profile: [0, 1, 1], set_bio: [0, 1, 1], get_bio: [1, 0, 1],
	heartbeat: [0, 0, 0], list_available_studies: [1, 0, 1], accept_study: [0, 0, 1],
	get_study: [0, 0, 1], complete_study: [0, 0, 0], withdraw_study: [0, 1, 1],
	list_history: [1, 0, 1], get_reputation: [1, 0, 1], rotate_api_key: [0, 1, 0],
	new_claim_code: [0, 1, 0], create_study: [0, 0, 0], list_studies: [1, 0, 1],
	pause_study: [0, 0, 1], resume_study: [0, 0, 1], stop_study: [0, 1, 1],
	list_participants: [1, 0, 1], approve_participant: [0, 0, 1], reject_participant: [0, 1, 1],
	update_study: [0, 1, 1],
	get_account: [1, 0, 1], claim_agent: [0, 0, 1], replace_agent_api_key: [0, 1, 0],
	get_wallet_balance: [1, 0, 1], list_wallet_transactions: [1, 0, 1], list_events: [1, 0, 1],
	review_participants: [0, 1, 1], pay_bonuses: [0, 0, 0], list_bonuses: [1, 0, 1],
	list_messages: [1, 0, 1], read_message: [0, 0, 1], reply_message: [0, 0, 0],
	send_message: [0, 0, 0], list_thread: [1, 0, 1],
	create_group: [0, 0, 0], list_groups: [1, 0, 1], get_group: [1, 0, 1], update_group: [0, 1, 1],
	delete_group: [0, 1, 1], add_group_members: [0, 0, 1], list_group_members: [1, 0, 1],
	remove_group_member: [0, 1, 1],
};

// tools/list: every tool with a title, its annotations and an object
// outputSchema that compiles; our validators are made here.
async function listTools(client) {
	const { tools } = await client.listTools();
	for (const t of tools) {
		assert.ok(t.title && t.title.length > 3, `${t.name}: no title`);
		const want = hints[t.name];
		assert.ok(want, `${t.name}: not in the annotation table`);
		const a = t.annotations;
		assert.deepEqual([a.readOnlyHint, a.destructiveHint, a.idempotentHint, a.openWorldHint],
			[!!want[0], !!want[1], !!want[2], false], `${t.name}: annotations`);
		assert.equal(t.outputSchema?.type, 'object', `${t.name}: outputSchema is not an object schema`);
		if (!outputCheck.has(t.name)) outputCheck.set(t.name, ajv.compile(t.outputSchema));
	}
	return tools;
}

// structuredContent against the tool's outputSchema, with our ajv.
function validate(name, sc) {
	const check = outputCheck.get(name);
	assert.ok(check, `${name}: no outputSchema listed`);
	assert.ok(check(sc), `${name}: structuredContent fails its outputSchema: ` +
		`${ajv.errorsText(check.errors)}\n${JSON.stringify(sc)}`);
}

// An SDK client with one credential header.
const sdkChecks = new CountingValidator();
let calls = 0;
async function connect(headers) {
	const transport = new StreamableHTTPClientTransport(url, { requestInit: { headers } });
	const client = new Client({ name: 'arps-test', version: '1.0.0' },
		{ jsonSchemaValidator: sdkChecks });
	await client.connect(transport);
	return { client, transport };
}

// Any tool call: the text is the JSON of structuredContent, which the SDK
// checked (one more check) and which our ajv passes too.
async function callAny(client, name, args = {}) {
	const before = sdkChecks.checks;
	const res = await client.callTool({ name, arguments: args });
	calls++;
	assert.equal(sdkChecks.checks, before + 1, `${name}: the SDK did not validate the result`);
	assert.equal(res.content[0].type, 'text');
	assert.deepEqual(JSON.parse(res.content[0].text), res.structuredContent);
	validate(name, res.structuredContent);
	return res;
}

// A tool call that must succeed: its structuredContent.
async function call(client, name, args = {}) {
	const res = await callAny(client, name, args);
	assert.notEqual(res.isError, true, `${name}: ${JSON.stringify(res.structuredContent)}`);
	return res.structuredContent;
}

// One raw JSON-RPC POST as the agent (no SDK): status and body.
async function raw(body, headers = {}) {
	const res = await fetch(url, {
		method: 'POST',
		headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream',
			'X-API-Key': key, ...headers },
		body: JSON.stringify(body),
	});
	return { status: res.status, body: await res.json() };
}

// A REST call as the researcher.
async function rest(method, path) {
	const res = await fetch(new URL(`/api/v1${path}`, base), {
		method, headers: { Authorization: `Bearer ${token}` },
	});
	return { status: res.status, body: await res.json() };
}

async function main() {
	// The agent, with its key as a bearer token.
	const { client: agent, transport } = await connect({ Authorization: `Bearer ${key}` });
	assert.equal(agent.getServerVersion().name, 'arps');
	assert.equal(transport.protocolVersion, '2025-11-25');
	ok('initialize (2025-11-25)');
	await agent.ping();
	ok('ping');

	const tools = await listTools(agent);
	const names = tools.map((t) => t.name);
	for (const n of ['list_available_studies', 'accept_study', 'get_study', 'complete_study',
		'get_wallet_balance', 'set_bio', 'heartbeat', 'withdraw_study', 'list_history'])
		assert.ok(names.includes(n), `tools/list lacks ${n}`);
	assert.ok(!names.includes('create_study'), 'an agent sees researcher tools');
	const accept = tools.find((t) => t.name === 'accept_study');
	assert.deepEqual(accept.inputSchema.required, ['study_id']);
	ok(`tools/list (${names.length} tools, each with a title, its annotations and an outputSchema)`);

	// The check is real: answers that break a schema are caught by both.
	assert.equal(outputCheck.get('get_wallet_balance')({ available_cents: 'ten' }), false);
	assert.equal(outputCheck.get('accept_study')({ detail: 'x', error_code: 'NO_SUCH_CODE',
		status: 409 }), false);
	const sdkBad = sdkChecks.inner.getValidator(tools.find((t) => t.name === 'heartbeat').outputSchema);
	assert.equal(sdkBad({ status: 'ok' }).valid, false);
	ok('an answer outside a tool\'s outputSchema fails validation (ajv and the SDK\'s validator)');

	// 2025-06-18 is still negotiated, and its header accepted.
	const init = await raw({ jsonrpc: '2.0', id: 1, method: 'initialize', params: {
		protocolVersion: '2025-06-18', capabilities: {},
		clientInfo: { name: 'raw', version: '1' } } });
	assert.equal(init.status, 200);
	assert.equal(init.body.result.protocolVersion, '2025-06-18');
	const ping = await raw({ jsonrpc: '2.0', id: 2, method: 'ping' },
		{ 'MCP-Protocol-Version': '2025-06-18' });
	assert.equal(ping.status, 200);
	assert.deepEqual(ping.body.result, {});
	ok('a raw initialize asking for 2025-06-18 is answered 2025-06-18');

	// The agent's reads, and a heartbeat (recorded or rate-limited: either validates).
	const me = await call(agent, 'get_profile');
	assert.equal(me.status, 'claimed');
	assert.equal((await call(agent, 'get_bio')).embedding_status, 'ready');
	await call(agent, 'get_reputation', { limit: 5 });
	await call(agent, 'list_events', { limit: 5 });
	await callAny(agent, 'heartbeat');
	const nothing = await callAny(agent, 'withdraw_study', { study_id: study });
	assert.equal(nothing.isError, true);
	ok('profile, bio, reputation, events, heartbeat and a refusal validate against their outputSchema');

	const before = await call(agent, 'get_wallet_balance');
	const avail = await call(agent, 'list_available_studies', { limit: 100 });
	const hit = avail.studies.find((s) => s.id === study);
	assert.ok(hit, `study ${study} not among ${avail.studies.length} available`);
	assert.ok(hit.match_score > 0 && hit.match_score < 1);
	ok(`list_available_studies (match_score ${hit.match_score})`);

	const acc = await call(agent, 'accept_study', { study_id: study, idempotency_key: `acc-${study}` });
	assert.equal(acc.status, 'accepted');
	assert.match(acc.study_url, /[?&]participant_id=anon_[0-9a-f]{16}/);
	// A retry with the same key replays the acceptance.
	const again = await callAny(agent, 'accept_study',
		{ study_id: study, idempotency_key: `acc-${study}` });
	assert.equal(again.structuredContent.participation_id, acc.participation_id);
	assert.equal(again._meta['arps/idempotent_replayed'], true);
	ok('accept_study (and its idempotent retry)');

	const detail = await call(agent, 'get_study', { study_id: study });
	assert.equal(detail.id, study);
	assert.equal(detail.completion_code, undefined, 'an agent sees the completion code');
	ok('get_study (opens the participation)');

	const hist = await call(agent, 'list_history', { limit: 1 });
	assert.equal(hist.participations[0].participation_id, acc.participation_id);
	assert.equal(hist.participations[0].status, 'in_progress');
	ok('list_history shows it in progress');

	const done = await call(agent, 'complete_study', { study_id: study, completion_code: code });
	assert.equal(done.status, 'submitted');
	ok('complete_study');

	// Completing again is refused: a tool error carrying the REST error body.
	const refused = await callAny(agent, 'complete_study',
		{ study_id: study, completion_code: code });
	assert.equal(refused.isError, true);
	assert.equal(refused.structuredContent.error_code, 'NO_ACTIVE_PARTICIPATION');
	assert.equal(refused.structuredContent.status, 409);
	assert.equal(typeof refused.structuredContent.detail, 'string');
	ok('a refusal is isError with {detail, error_code, status}');

	// The researcher approves over REST.
	const parts = await rest('GET', `/studies/${study}/participants`);
	assert.equal(parts.status, 200);
	const pid = parts.body.participants[0].participant_id;
	assert.equal(parts.body.participants[0].status, 'submitted');
	const appr = await rest('POST', `/studies/${study}/participants/${pid}/approve`);
	assert.equal(appr.status, 200, JSON.stringify(appr.body));
	assert.equal(appr.body.status, 'approved');
	ok('the researcher approves over REST');

	const after = await call(agent, 'get_wallet_balance');
	assert.equal(after.available_cents, before.available_cents + hit.reward_per_participant);
	const txns = await call(agent, 'list_wallet_transactions', { type: 'earning' });
	assert.equal(txns.transactions[0].amount_cents, hit.reward_per_participant);
	assert.equal(txns.transactions[0].study_id, study);
	ok(`get_wallet_balance shows the earning (+${hit.reward_per_participant} cents)`);
	await agent.close();

	// The researcher's own tools, with the access token.
	const { client: res } = await connect({ Authorization: `Bearer ${token}` });
	const rnames = (await listTools(res)).map((t) => t.name);
	assert.ok(rnames.includes('approve_participant') && rnames.includes('create_study'));
	assert.ok(!rnames.includes('accept_study'), 'a researcher sees agent tools');
	const list = await call(res, 'list_participants', { study_id: study });
	assert.equal(list.participants[0].status, 'approved');
	ok('a researcher lists the approved participant through its tools');
	const sv = await call(res, 'get_study', { study_id: study });
	assert.equal(sv.id, study);
	assert.equal(sv.completion_code, code, 'the researcher view has the completion code');
	const acct = await call(res, 'get_account');
	assert.ok(acct.roles.includes('researcher'));
	await call(res, 'list_studies', { limit: 5 });
	await call(res, 'get_wallet_balance');
	await call(res, 'list_events', { limit: 5 });
	const bad = await callAny(res, 'approve_participant', { study_id: study, participant_id: 'anon_0' });
	assert.equal(bad.isError, true);
	ok('the researcher view, account, lists and a refusal validate against their outputSchema');
	await res.close();

	// A wrong credential is an HTTP 401 the SDK reports.
	await assert.rejects(connect({ 'X-API-Key': 'arps_live_wrong' }), /401/);
	ok('a wrong key is refused with 401');

	assert.deepEqual(sdkChecks.failed, []);
	assert.equal(sdkChecks.checks, calls);
	ok(`${calls} tool results validated against their outputSchema by the SDK and by ajv`);
}

main().then(() => {
	console.log(`mcp-sdk: ${steps} steps passed`);
	process.exit(0);
}, (err) => {
	console.error(`mcp-sdk: FAILED after ${steps} steps: ${err.stack || err}`);
	process.exit(1);
});
