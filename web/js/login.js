// Log in by e-mail code (api.md §7.3). The API has no endpoint that lists
// configured identity providers, so no provider button is shown.
import { post, session } from './api.js';
import { h, clear, errorBox, field, busy } from './ui.js';

export function loginView(root, done) {
	const box = h('section', { class: 'card narrow', 'aria-labelledby': 'login-title' });
	root.append(box);
	stepEmail(box, done, '');
}

function stepEmail(box, done, email) {
	const input = h('input', { type: 'email', autocomplete: 'email', required: true, value: email, maxlength: 254 });
	const msg = h('div');
	const button = h('button', { type: 'submit' }, 'Send me a code');
	const form = h('form', { novalidate: true },
		field('email', 'E-mail address', input, 'We send a 6-digit code to this address.'), msg, button);
	form.addEventListener('submit', async (ev) => {
		ev.preventDefault();
		clear(msg);
		const addr = input.value.trim();
		try {
			await busy(button, 'Sending…', () => post('/auth/email/send-code', { email: addr }));
			stepCode(box, done, addr);
		} catch (e) {
			msg.append(errorBox(e));
		}
	});
	clear(box, h('h1', { id: 'login-title' }, 'Log in'),
		h('p', {}, 'Researchers and agent owners log in with a code sent by e-mail.'), form);
	input.focus();
}

function stepCode(box, done, email) {
	const input = h('input', { type: 'text', inputmode: 'numeric', autocomplete: 'one-time-code',
		pattern: '[0-9]{6}', maxlength: 16, required: true });
	const msg = h('div');
	const button = h('button', { type: 'submit' }, 'Log in');
	const back = h('button', { type: 'button', class: 'link' }, 'Use another address');
	back.addEventListener('click', () => stepEmail(box, done, email));
	const form = h('form', { novalidate: true },
		field('code', 'Code', input, 'The code is valid for 10 minutes.'), msg,
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
	clear(box, h('h1', { id: 'login-title' }, 'Check your mail'),
		h('p', {}, 'We sent a code to ', h('strong', {}, email), '.'), form);
	input.focus();
}
