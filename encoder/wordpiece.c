/* BERT WordPiece tokenizer over the model file's tables; see wordpiece.h. */
#include "encoder/wordpiece.h"

#include <string.h>

#define FNV_BASIS 2166136261u
#define FNV_PRIME 16777619u

struct wp_state {
	const struct wordpiece *w;
	int32_t *ids;
	size_t n, cap;
	size_t wlen;			/* code points of the current word */
	uint32_t word[WP_MAX_WORD];	/* its first max_word code points */
};

/* ------------------------------------------------------------ lookups */

static unsigned run_class(const struct wordpiece *w, uint32_t cp)
{
	size_t lo = 0, hi = w->n_runs;	/* runs[0] starts at 0 (wp_init) */
	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;
		if ((w->runs[mid] & 0xFFFFFFu) <= cp)
			lo = mid;
		else
			hi = mid;
	}
	return w->runs[lo] >> 24;
}

unsigned wp_class(const struct wordpiece *w, uint32_t cp)
{
	return cp < 128 ? w->ascii[cp] : run_class(w, cp);
}

/* The mapping of cp: *len code points, or NULL (then cp stays). */
static const uint32_t *map_find(const struct wordpiece *w, uint32_t cp, size_t *len)
{
	size_t lo = 0, hi = w->n_map;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		uint32_t v = w->map[2 * mid];
		if (v == cp) {
			uint32_t e = w->map[2 * mid + 1];
			*len = e & 31u;
			return w->data + (e >> 5);
		}
		if (v < cp)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

/* Id of the piece ("##" if cont) s[0..len), or -1. */
static int32_t vocab_find(const struct wordpiece *w, int cont, const uint8_t *s, size_t len)
{
	uint32_t h = FNV_BASIS;
	size_t plen = cont ? 2 : 0;
	if (cont)
		h = ((h ^ '#') * FNV_PRIME ^ '#') * FNV_PRIME;
	for (size_t i = 0; i < len; i++)
		h = (h ^ s[i]) * FNV_PRIME;
	for (uint32_t probe = 0; probe <= w->hash_mask; probe++) {
		int32_t id = w->hash[(h + probe) & w->hash_mask];
		if (id < 0)
			return -1;
		const uint8_t *p = w->bytes + w->off[id];
		if (w->off[id + 1] - w->off[id] == plen + len &&
		    (!cont || (p[0] == '#' && p[1] == '#')) && memcmp(p + plen, s, len) == 0)
			return id;
	}
	return -1;
}

/* ------------------------------------------------------------ words */

static void emit(struct wp_state *st, int32_t id)
{
	if (st->n < st->cap)
		st->ids[st->n++] = id;
}

static size_t put_utf8(uint8_t *d, uint32_t cp)
{
	if (cp < 0x80) {
		d[0] = (uint8_t)cp;
		return 1;
	}
	if (cp < 0x800) {
		d[0] = (uint8_t)(0xC0 | cp >> 6);
		d[1] = (uint8_t)(0x80 | (cp & 0x3F));
		return 2;
	}
	if (cp < 0x10000) {
		d[0] = (uint8_t)(0xE0 | cp >> 12);
		d[1] = (uint8_t)(0x80 | (cp >> 6 & 0x3F));
		d[2] = (uint8_t)(0x80 | (cp & 0x3F));
		return 3;
	}
	d[0] = (uint8_t)(0xF0 | cp >> 18);
	d[1] = (uint8_t)(0x80 | (cp >> 12 & 0x3F));
	d[2] = (uint8_t)(0x80 | (cp >> 6 & 0x3F));
	d[3] = (uint8_t)(0x80 | (cp & 0x3F));
	return 4;
}

/* WordPiece of the current word: greedy longest match first; a word too
 * long, or one a piece cannot start somewhere in, is one [UNK]. */
static void end_word(struct wp_state *st)
{
	const struct wordpiece *w = st->w;
	uint8_t buf[4 * WP_MAX_WORD];
	uint32_t at[WP_MAX_WORD + 1];	/* byte offset of each code point */
	int32_t piece[WP_MAX_WORD];
	size_t n = st->wlen, np = 0;

	st->wlen = 0;
	if (n == 0)
		return;
	if (n > w->max_word) {
		emit(st, (int32_t)w->unk);
		return;
	}
	at[0] = 0;
	for (size_t i = 0; i < n; i++)
		at[i + 1] = at[i] + (uint32_t)put_utf8(buf + at[i], st->word[i]);
	for (size_t start = 0; start < n;) {
		size_t end = n, plen = start ? 2 : 0;
		int32_t id = -1;
		while (end > start && at[end] - at[start] + plen > w->max_piece)
			end--;
		for (; end > start; end--)
			if ((id = vocab_find(w, start > 0, buf + at[start], at[end] - at[start])) >= 0)
				break;
		if (id < 0) {
			emit(st, (int32_t)w->unk);
			return;
		}
		piece[np++] = id;
		start = end;
	}
	for (size_t i = 0; i < np; i++)
		emit(st, piece[i]);
}

static void push(struct wp_state *st, uint32_t cp)
{
	if (st->wlen < st->w->max_word)
		st->word[st->wlen] = cp;
	if (st->wlen <= st->w->max_word)
		st->wlen++;
}

/* One normalized code point into the pre-tokenizer. */
static void pre(struct wp_state *st, uint32_t cp, unsigned cls)
{
	if (cls & WP_WS) {
		end_word(st);
	} else if (cls & WP_PUNCT) {
		end_word(st);
		push(st, cp);
		end_word(st);
	} else {
		push(st, cp);
	}
}

/* One code point of the raw text through the normalizer. */
static void feed(struct wp_state *st, uint32_t cp)
{
	const struct wordpiece *w = st->w;
	unsigned cls = wp_class(w, cp);
	const uint32_t *out = NULL;
	size_t len = 0;

	if ((cls & WP_ACTION) == WP_DELETE)
		return;
	if ((cls & WP_ACTION) == WP_MAP)
		out = map_find(w, cp, &len);
	if (cls & WP_CJK)
		end_word(st);
	if (out == NULL)
		pre(st, cp, cls);
	else
		for (size_t i = 0; i < len; i++)
			pre(st, out[i], wp_class(w, out[i]));
	if (cls & WP_CJK)
		end_word(st);
}

/* Length of the longest added token at s[0..len), its id in *id; 0 if none. */
static size_t added_at(const struct wordpiece *w, const uint8_t *s, size_t len, int32_t *id)
{
	size_t best = 0;
	if (!(w->added_first[s[0] >> 3] & (1u << (s[0] & 7))))
		return 0;
	for (size_t i = 0; i < w->n_added; i++) {
		const uint32_t *a = w->added + 3 * i;
		if (a[2] > best && a[2] <= len && memcmp(s, w->added_bytes + a[1], a[2]) == 0) {
			best = a[2];
			*id = (int32_t)a[0];
		}
	}
	return best;
}

static void span(struct wp_state *st, const uint8_t *s, size_t len)
{
	size_t i = 0;
	while (i < len && st->n < st->cap) {
		unsigned c = s[i];
		uint32_t cp;
		size_t k, j;
		int32_t id;

		if ((k = added_at(st->w, s + i, len - i, &id)) > 0) {
			end_word(st);
			emit(st, id);
			i += k;
			continue;
		}
		if (c < 0x80) {
			feed(st, c);
			i++;
			continue;
		} else if (c >= 0xC2 && c <= 0xDF) {
			cp = c & 0x1F; k = 1;
		} else if (c >= 0xE0 && c <= 0xEF) {
			cp = c & 0x0F; k = 2;
		} else if (c >= 0xF0 && c <= 0xF4) {
			cp = c & 0x07; k = 3;
		} else {
			feed(st, 0xFFFD);
			i++;
			continue;
		}
		for (j = 1; j <= k; j++) {
			if (i + j >= len || (s[i + j] & 0xC0) != 0x80)
				break;
			cp = (cp << 6) | (s[i + j] & 0x3F);
		}
		if (j <= k || (k == 2 && (cp < 0x800 || (cp >= 0xD800 && cp <= 0xDFFF))) ||
		    (k == 3 && (cp < 0x10000 || cp > 0x10FFFF))) {
			feed(st, 0xFFFD);
			i++;
			continue;
		}
		feed(st, cp);
		i += k + 1;
	}
}

size_t wp_tokenize(const struct wordpiece *w, const char *a, size_t alen, const char *b,
		   size_t blen, int32_t *ids, size_t cap)
{
	struct wp_state st;

	if (!w || (!a && alen) || (!b && blen) || (!ids && cap))
		return 0;
	st.w = w;
	st.ids = ids;
	st.n = 0;
	st.cap = cap;
	st.wlen = 0;
	span(&st, (const uint8_t *)a, alen);
	span(&st, (const uint8_t *)b, blen);
	end_word(&st);
	return st.n;
}

/* ------------------------------------------------------------ init */

int wp_init(struct wordpiece *w)
{
	if (!w || !w->off || !w->bytes || !w->hash || !w->runs || !w->added || w->vocab == 0 ||
	    w->unk >= w->vocab || w->max_word == 0 || w->max_word > WP_MAX_WORD ||
	    w->max_piece == 0 || w->max_piece > WP_MAX_PIECE || w->n_runs == 0 ||
	    (w->n_map && (!w->map || !w->data)))
		return -1;
	if (((w->hash_mask + 1) & w->hash_mask) != 0 || w->hash_mask < w->vocab)
		return -1;
	if (w->off[0] != 0)
		return -1;
	for (uint32_t i = 0; i < w->vocab; i++)
		if (w->off[i + 1] < w->off[i] || w->off[i + 1] - w->off[i] > w->max_piece)
			return -1;
	for (uint32_t i = 0; i <= w->hash_mask; i++)
		if (w->hash[i] < -1 || w->hash[i] >= (int32_t)w->vocab)
			return -1;
	/* runs: the first at 0, strictly increasing, valid actions */
	if ((w->runs[0] & 0xFFFFFFu) != 0)
		return -1;
	for (size_t i = 0; i < w->n_runs; i++) {
		uint32_t cls = w->runs[i] >> 24;
		if ((cls & WP_ACTION) == WP_ACTION || cls >= 32 ||
		    (i && (w->runs[i] & 0xFFFFFFu) <= (w->runs[i - 1] & 0xFFFFFFu)) ||
		    (w->runs[i] & 0xFFFFFFu) > 0x10FFFF)
			return -1;
	}
	/* mappings: sorted, in bounds, to code points that stay as they are */
	for (size_t i = 0; i < w->n_map; i++) {
		uint32_t e = w->map[2 * i + 1];
		if ((i && w->map[2 * i] <= w->map[2 * i - 2]) || (e & 31) == 0 ||
		    (e >> 5) + (e & 31) > w->n_data)
			return -1;
	}
	for (size_t i = 0; i < w->n_data; i++)
		if (w->data[i] > 0x10FFFF || (run_class(w, w->data[i]) & WP_ACTION) != WP_IDENT)
			return -1;
	memset(w->added_first, 0, sizeof w->added_first);
	for (size_t i = 0; i < w->n_added; i++) {
		const uint32_t *a = w->added + 3 * i;
		if (a[0] >= w->vocab || a[2] == 0 || a[1] > w->n_added_bytes ||
		    a[2] > w->n_added_bytes - a[1])
			return -1;
		uint8_t c = w->added_bytes[a[1]];
		w->added_first[c >> 3] |= (uint8_t)(1u << (c & 7));
	}
	for (uint32_t c = 0; c < 128; c++)
		w->ascii[c] = (uint8_t)run_class(w, c);
	return 0;
}
