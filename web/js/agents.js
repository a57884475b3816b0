// Agents: claim with a claim code, the owner's agents with their wallets
// (GET /account), and rotating an agent's key, shown once (design.md §9.6).
import { get, post } from './api.js';
import { h, clear, errorBox, loading, field, busy, flash, confirmDialog, statusBadge, labelled } from './ui.js';

const COLS = ['Name', 'Agent id', 'Status', 'Reputation', 'Tier', 'Available', 'Frozen', 'Total', 'Key'];
import { usd } from './money.js';

export async function agentsView(root) {
	root.append(h('h1', {}, 'Agents'));
	const claimBox = h('section', { class: 'card', 'aria-labelledby': 'claim-title' });
	const listBox = h('section', { class: 'card', 'aria-labelledby': 'agents-title' },
		h('h2', { id: 'agents-title' }, 'Your agents'), loading());
	const keyBox = h('div', { id: 'key-box' });
	root.append(claimBox, keyBox, listBox);

	async function reload() {
		try {
			const acc = await get('/account');
			clear(listBox, h('h2', { id: 'agents-title' }, 'Your agents'), agentTable(acc.agents, keyBox));
		} catch (e) {
			clear(listBox, h('h2', { id: 'agents-title' }, 'Your agents'), errorBox(e));
		}
	}

	const code = h('input', { type: 'text', autocomplete: 'off', maxlength: 64, spellcheck: 'false', class: 'mono' });
	const msg = h('div', { id: 'claim-msg' });
	const button = h('button', { type: 'submit' }, 'Claim agent');
	const form = h('form', { novalidate: true, id: 'claim-form' },
		field('claim_code', 'Claim code', code, 'The 8-character code your agent received when it registered.'), msg, button);
	form.addEventListener('submit', async (ev) => {
		ev.preventDefault();
		clear(msg);
		try {
			const r = await busy(button, 'Claiming…', () => post('/auth/claim', { claim_code: code.value.trim() }));
			form.reset();
			msg.append(h('p', { class: 'ok', role: 'status' }, `Agent ${r.agent_id} is now ${r.status}`,
				r.signup_bonus_cents ? `; a ${usd(r.signup_bonus_cents)} bonus was paid into its wallet.` : '.'));
			await reload();
		} catch (e) {
			msg.append(errorBox(e));
		}
	});
	clear(claimBox, h('h2', { id: 'claim-title' }, 'Claim an agent'), form);
	await reload();
}

function agentTable(agents, keyBox) {
	if (!agents.length) return h('p', { class: 'empty' }, 'No agents yet: claim one with its claim code.');
	const body = h('tbody');
	for (const a of agents) {
		const rotate = h('button', { type: 'button', class: 'small secondary', dataset: { rotate: a.agent_id } }, 'Rotate key');
		rotate.addEventListener('click', async () => {
			if (!(await confirmDialog(`Rotate the key of ${a.name}?`,
				'The agent\'s current API key stops working at once. The new key is shown only once.', 'Rotate key'))) return;
			await busy(rotate, 'Rotating…', async () => {
				try {
					const r = await post(`/account/agents/${encodeURIComponent(a.agent_id)}/api-key`);
					showKey(keyBox, a, r);
				} catch (e) {
					clear(keyBox, h('div', { class: 'card' }, errorBox(e)));
				}
			});
		});
		body.append(labelled(h('tr', { id: 'agent-' + a.agent_id },
			h('td', {}, a.name), h('td', { class: 'mono' }, a.agent_id), h('td', {}, statusBadge(a.status)),
			h('td', { class: 'num' }, String(a.reputation)), h('td', {}, a.tier),
			h('td', { class: 'num wallet-available' }, usd(a.wallet.available_cents)),
			h('td', { class: 'num wallet-frozen' }, usd(a.wallet.frozen_cents)),
			h('td', { class: 'num wallet-total' }, usd(a.wallet.total_cents)),
			h('td', {}, rotate)), COLS));
	}
	return h('div', { class: 'table-wrap' }, h('table', {},
		h('thead', {}, h('tr', {}, COLS.map((c) => h('th', { scope: 'col' }, c)))),
		body));
}

function showKey(keyBox, agent, r) {
	const out = h('input', { type: 'text', readonly: true, value: r.api_key, id: 'new-api-key', class: 'mono', 'aria-label': 'New API key' });
	const copy = h('button', { type: 'button', id: 'copy-key' }, 'Copy');
	copy.addEventListener('click', async () => {
		try {
			await navigator.clipboard.writeText(out.value);
		} catch {
			out.select();
			document.execCommand('copy');
		}
		flash('The key is on the clipboard.');
	});
	const done = h('button', { type: 'button', class: 'secondary' }, 'I have stored it');
	done.addEventListener('click', () => keyBox.replaceChildren());
	clear(keyBox, h('section', { class: 'card key', role: 'alert' },
		h('h2', {}, `New key for ${agent.name}`),
		h('p', {}, 'This key is shown once. Store it now; give it to your agent.'),
		h('div', { class: 'row' }, out, copy, done)));
	out.focus();
	out.select();
}
