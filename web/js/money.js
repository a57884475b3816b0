// Money as the server computes it (design.md §4.1): integer cents only. The
// fee rate is the server's (GET /account's fee_bps), never assumed here.

export function fee(reward, feeBps) {
	return Math.ceil((reward * feeBps) / 10000);
}

// The cost of a study before it is created: null when an input is not a
// positive integer within the documented bounds (docs/api.md §4), or the
// fee rate is not known yet.
export function studyCost(reward, max, feeBps) {
	if (!Number.isSafeInteger(reward) || !Number.isSafeInteger(max) || !Number.isSafeInteger(feeBps)) return null;
	if (reward < 1 || reward > 1000000 || max < 1 || max > 10000 || feeBps < 0 || feeBps > 10000) return null;
	const f = fee(reward, feeBps);
	return { reward, fee: f, perParticipant: reward + f, total: max * (reward + f) };
}

// "12" -> 12; anything but plain decimal digits -> NaN (counts, minutes).
export function parseWhole(s) {
	s = String(s).trim();
	return /^[0-9]{1,12}$/.test(s) ? Number(s) : NaN;
}

// A dollar amount typed by a person, to integer cents, from the decimal
// string (never through a float): "5" -> 500, "5.5" -> 550, "$1,234.56" ->
// 123456, ".25" -> 25. NaN for anything else (three decimals, "1e3", "-2").
export function parseDollars(s) {
	const m = /^\$?\s*([0-9]{1,3}(?:,[0-9]{3})+|[0-9]*)(?:\.([0-9]{0,2}))?$/.exec(String(s).trim());
	if (!m || (m[1] === '' && !m[2])) return NaN;
	const whole = m[1].replace(/,/g, '');
	if (whole.length > 12) return NaN;
	return Number(whole || '0') * 100 + Number((m[2] || '').padEnd(2, '0'));
}

// Cents as a plain decimal string for an input: 550 -> "5.50".
export function dollarsInput(cents) {
	return Math.floor(cents / 100) + '.' + String(cents % 100).padStart(2, '0');
}

export function usd(cents) {
	if (cents === null || cents === undefined || Number.isNaN(cents)) return '—';
	const neg = cents < 0;
	const a = Math.abs(cents);
	const whole = Math.floor(a / 100).toString().replace(/\B(?=(\d{3})+(?!\d))/g, ',');
	return (neg ? '−$' : '$') + whole + '.' + String(a % 100).padStart(2, '0');
}
