// A whole participation through the MCP endpoint, driven by the official
// TypeScript SDK client over Streamable HTTP (design.md §11).  Run by
// tests/api/test_mcp.c (sdk_participation), which prepares the stack:
//   ARPS_BASE_URL               the stack under test
//   ARPS_MCP_AGENT_KEY          a claimed agent whose bio is embedded
//   ARPS_MCP_RESEARCHER_TOKEN   the access token of the study's researcher
//   ARPS_MCP_STUDY, ARPS_MCP_CODE  an active study visible to the agent, its code
// Exits 0 when every step held, 1 with the failed step otherwise.
import assert from 'node:assert/strict';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

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

// An SDK client with one credential header.
async function connect(headers) {
	const transport = new StreamableHTTPClientTransport(url, { requestInit: { headers } });
	const client = new Client({ name: 'arps-test', version: '1.0.0' });
	await client.connect(transport);
	return { client, transport };
}

// A tool call that must succeed: its structuredContent, which must equal the text.
async function call(client, name, args = {}) {
	const res = await client.callTool({ name, arguments: args });
	assert.notEqual(res.isError, true, `${name}: ${JSON.stringify(res.structuredContent)}`);
	assert.equal(res.content[0].type, 'text');
	assert.deepEqual(JSON.parse(res.content[0].text), res.structuredContent);
	return res.structuredContent;
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

	const { tools } = await agent.listTools();
	const names = tools.map((t) => t.name);
	for (const n of ['list_available_studies', 'accept_study', 'get_study', 'complete_study',
		'get_wallet_balance', 'set_bio', 'heartbeat', 'withdraw_study', 'list_history'])
		assert.ok(names.includes(n), `tools/list lacks ${n}`);
	assert.ok(!names.includes('create_study'), 'an agent sees researcher tools');
	const accept = tools.find((t) => t.name === 'accept_study');
	assert.deepEqual(accept.inputSchema.required, ['study_id']);
	ok(`tools/list (${names.length} tools)`);

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
	const again = await agent.callTool({ name: 'accept_study',
		arguments: { study_id: study, idempotency_key: `acc-${study}` } });
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
	const refused = await agent.callTool({ name: 'complete_study',
		arguments: { study_id: study, completion_code: code } });
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
	const rnames = (await res.listTools()).tools.map((t) => t.name);
	assert.ok(rnames.includes('approve_participant') && rnames.includes('create_study'));
	assert.ok(!rnames.includes('accept_study'), 'a researcher sees agent tools');
	const list = await call(res, 'list_participants', { study_id: study });
	assert.equal(list.participants[0].status, 'approved');
	ok('a researcher lists the approved participant through its tools');
	await res.close();

	// A wrong credential is an HTTP 401 the SDK reports.
	await assert.rejects(connect({ 'X-API-Key': 'arps_live_wrong' }), /401/);
	ok('a wrong key is refused with 401');
}

main().then(() => {
	console.log(`mcp-sdk: ${steps} steps passed`);
	process.exit(0);
}, (err) => {
	console.error(`mcp-sdk: FAILED after ${steps} steps: ${err.stack || err}`);
	process.exit(1);
});
