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

// "12345" -> 12345; anything but plain decimal digits -> NaN.
export function parseCents(s) {
	s = String(s).trim();
	return /^[0-9]{1,12}$/.test(s) ? Number(s) : NaN;
}

export function usd(cents) {
	if (cents === null || cents === undefined || Number.isNaN(cents)) return '—';
	const neg = cents < 0;
	const a = Math.abs(cents);
	const whole = Math.floor(a / 100).toString().replace(/\B(?=(\d{3})+(?!\d))/g, ',');
	return (neg ? '−$' : '$') + whole + '.' + String(a % 100).padStart(2, '0');
}
