// A step chart of the available balance over time, as hand-written SVG.
import { h, s, when } from './ui.js';
import { usd } from './money.js';

// points: [{t: Date, v: cents}], oldest first. width: the pixels it is
// shown at, so that one unit is one pixel and the labels keep their size
// on a phone (a fixed 640-wide picture scaled to 330 px had 6 px text).
export function balanceChart(points, title, width = 640) {
	const W = Math.max(280, Math.round(width)), H = W < 480 ? 200 : 220, L = 70, R = 12, T = 12, B = 28;
	const svg = s('svg', { viewBox: `0 0 ${W} ${H}`, class: 'chart', role: 'img', 'aria-label': title });
	svg.append(s('title', {}, title));
	if (points.length === 0) {
		svg.append(s('text', { x: W / 2, y: H / 2, 'text-anchor': 'middle', class: 'axis' }, 'No transactions yet'));
		return svg;
	}
	const t0 = points[0].t.getTime();
	let t1 = Math.max(points[points.length - 1].t.getTime(), Date.now());
	if (t1 <= t0) t1 = t0 + 1000;
	let lo = Math.min(0, ...points.map((p) => p.v));
	let hi = Math.max(...points.map((p) => p.v));
	if (hi <= lo) hi = lo + 100;
	const x = (t) => L + ((t - t0) / (t1 - t0)) * (W - L - R);
	const y = (v) => T + (1 - (v - lo) / (hi - lo)) * (H - T - B);
	for (const v of [lo, (lo + hi) / 2, hi]) {
		const c = Math.round(v);
		svg.append(s('line', { x1: L, x2: W - R, y1: y(c), y2: y(c), class: 'grid' }));
		svg.append(s('text', { x: L - 6, y: y(c) + 4, 'text-anchor': 'end', class: 'axis' }, usd(c)));
	}
	// the first date, short on a narrow chart: "2026-11-28" rather than with the time
	const first = when(points[0].t.toISOString());
	svg.append(s('text', { x: L, y: H - 8, class: 'axis' }, W < 480 ? first.slice(0, 10) : first));
	svg.append(s('text', { x: W - R, y: H - 8, 'text-anchor': 'end', class: 'axis' }, 'now'));
	let d = `M${x(t0).toFixed(1)},${y(points[0].v).toFixed(1)}`;
	for (let i = 1; i < points.length; i++) {
		d += ` H${x(points[i].t.getTime()).toFixed(1)} V${y(points[i].v).toFixed(1)}`;
	}
	d += ` H${x(t1).toFixed(1)}`;
	svg.append(s('path', { d, class: 'line' }));
	for (const p of points) {
		svg.append(s('circle', { cx: x(p.t.getTime()).toFixed(1), cy: y(p.v).toFixed(1), r: 2.5, class: 'dot' },
			s('title', {}, `${when(p.t.toISOString())}: ${usd(p.v)}`)));
	}
	return svg;
}

// Draw into holder at its width, and again when that width changes.
export function responsiveChart(holder, draw) {
	let drawn = 0;
	const paint = () => {
		const w = holder.clientWidth;
		if (!w || Math.abs(w - drawn) < 8) return;
		drawn = w;
		holder.replaceChildren(draw(w));
	};
	paint();
	new ResizeObserver(paint).observe(holder);
}

// The available balance after each transaction, walked back from today's
// available balance (newest first in, oldest first out). platform_fee and
// study_payment move nothing of the available balance: the fee share of a
// freeze, an approval paid from the frozen budget (api.md §9).
export function balanceSeries(available, txns) {
	const pts = [];
	let v = available;
	for (const t of txns) {
		if (t.type === 'platform_fee' || t.type === 'study_payment') continue;
		pts.push({ t: new Date(t.created_at), v });
		v -= t.amount_cents;
	}
	pts.reverse();
	if (pts.length) pts.unshift({ t: new Date(pts[0].t.getTime()), v });
	return pts;
}

export function legend(items) {
	return h('ul', { class: 'legend' }, items.map(([cls, label]) =>
		h('li', {}, h('span', { class: 'swatch ' + cls, 'aria-hidden': 'true' }), label)));
}
