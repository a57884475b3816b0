// DOM helpers: elements are built with textContent only (no innerHTML), so
// nothing the API returns is ever parsed as markup.

export function h(tag, attrs, ...children) {
	const el = document.createElement(tag);
	for (const [k, v] of Object.entries(attrs || {})) {
		if (v === null || v === undefined || v === false) continue;
		if (k.startsWith('on') && typeof v === 'function') el.addEventListener(k.slice(2), v);
		else if (k === 'class') el.className = v;
		else if (k === 'dataset') Object.assign(el.dataset, v);
		else if (v === true) el.setAttribute(k, '');
		else el.setAttribute(k, String(v));
	}
	append(el, children);
	return el;
}

function append(el, children) {
	for (const c of children.flat(Infinity)) {
		if (c === null || c === undefined || c === false) continue;
		el.append(c instanceof Node ? c : document.createTextNode(String(c)));
	}
}

const SVG = 'http://www.w3.org/2000/svg';
export function s(tag, attrs, ...children) {
	const el = document.createElementNS(SVG, tag);
	for (const [k, v] of Object.entries(attrs || {})) {
		if (v !== null && v !== undefined) el.setAttribute(k === 'class' ? 'class' : k, String(v));
	}
	append(el, children);
	return el;
}

export function clear(el, ...children) {
	el.replaceChildren();
	append(el, children);
	return el;
}

export function when(iso) {
	if (!iso) return '—';
	const d = new Date(iso);
	if (Number.isNaN(d.getTime())) return iso;
	return d.toISOString().replace('T', ' ').replace(/:\d\d\.\d+Z$|:\d\dZ$/, ' UTC');
}

export function timeEl(iso) {
	return iso ? h('time', { datetime: iso, title: iso }, when(iso)) : '—';
}

// An error as its detail, in an alert region.
export function errorBox(err) {
	return h('p', { class: 'error', role: 'alert' }, err && err.detail ? err.detail : String(err && err.message || err));
}

export function loading(text = 'Loading…') {
	return h('p', { class: 'loading', role: 'status', 'aria-busy': 'true' }, text);
}

let flashTimer = null;
export function flash(text, kind = 'ok') {
	const el = document.getElementById('flash');
	clear(el, h('span', { class: 'flash-' + kind }, text));
	clearTimeout(flashTimer);
	flashTimer = setTimeout(() => el.replaceChildren(), 8000);
}

// A modal confirmation (native <dialog>: focus trapped, Escape cancels).
export function confirmDialog(title, text, okLabel = 'Confirm') {
	const dlg = document.getElementById('confirm');
	document.getElementById('confirm-title').textContent = title;
	document.getElementById('confirm-text').textContent = text;
	document.getElementById('confirm-ok').textContent = okLabel;
	return new Promise((resolve) => {
		dlg.returnValue = '';
		dlg.addEventListener('close', () => resolve(dlg.returnValue === 'ok'), { once: true });
		dlg.showModal();
		document.getElementById('confirm-ok').focus();
	});
}

// Disable a button while an async action runs; show the busy label.
export async function busy(button, label, fn) {
	const old = button.textContent;
	button.disabled = true;
	button.setAttribute('aria-busy', 'true');
	if (label) button.textContent = label;
	try {
		return await fn();
	} finally {
		button.disabled = false;
		button.removeAttribute('aria-busy');
		button.textContent = old;
	}
}

export function field(id, label, input, hint) {
	input.id = id;
	input.name = input.name || id;
	const err = h('p', { class: 'field-error', id: id + '-error', role: 'alert' });
	input.setAttribute('aria-describedby', (hint ? id + '-hint ' : '') + id + '-error');
	return h('div', { class: 'field', dataset: { field: id } },
		h('label', { for: id }, label),
		input,
		hint ? h('p', { class: 'hint', id: id + '-hint' }, hint) : null,
		err);
}

export function statusBadge(status) {
	return h('span', { class: 'badge st-' + status }, status.replace('_', ' '));
}

// Each cell carries its column's name, shown before it on a phone (app.css).
export function labelled(tr, names) {
	[...tr.children].forEach((td, i) => { if (names[i]) td.dataset.label = names[i]; });
	return tr;
}
