/* SentencePiece tokenizer of USE Lite, see tokenize.h for the exact rules. */
#include "encoder/tokenize.h"
#include "encoder/embed.h"

#include <string.h>

#define NORM_MAX 256    /* decomposed code points held before composing */
#define SEG_MAX 1024    /* code points per word lattice */
#define SEP 0x2581u     /* SentencePiece word marker */

/* Hangul (algorithmic, Unicode ch. 3.12) */
#define H_SBASE 0xAC00u
#define H_LBASE 0x1100u
#define H_VBASE 0x1161u
#define H_TBASE 0x11A7u
#define H_LCOUNT 19u
#define H_VCOUNT 21u
#define H_TCOUNT 28u
#define H_NCOUNT (H_VCOUNT * H_TCOUNT)
#define H_SCOUNT (H_LCOUNT * H_NCOUNT)

typedef void (*cp_sink)(void *ctx, uint32_t cp);

struct norm {
	const struct embed_model *m;
	uint32_t buf[NORM_MAX];
	size_t len;
	cp_sink sink;
	void *ctx;
};

/* ------------------------------------------------------------ lookups */

static const uint32_t *pair_find(const uint32_t *tab, size_t n, uint32_t cp)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		uint32_t v = tab[2 * mid];
		if (v == cp)
			return &tab[2 * mid];
		if (v < cp)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

static unsigned ccc_rank(const struct embed_model *m, uint32_t cp)
{
	if (cp < 0x300)
		return 0;
	const uint32_t *e = pair_find(m->ccc, m->n_ccc, cp);
	return e ? e[1] : 0;
}

static int is_second(const struct embed_model *m, uint32_t cp)
{
	if (cp < 0x300)
		return 0;
	if ((cp >= H_VBASE && cp < H_VBASE + H_VCOUNT) ||
	    (cp > H_TBASE && cp < H_TBASE + H_TCOUNT))
		return 1;
	size_t lo = 0, hi = m->n_second;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (m->second[mid] == cp)
			return 1;
		if (m->second[mid] < cp)
			lo = mid + 1;
		else
			hi = mid;
	}
	return 0;
}

static uint32_t compose(const struct embed_model *m, uint32_t a, uint32_t b)
{
	if (a >= H_LBASE && a < H_LBASE + H_LCOUNT && b >= H_VBASE &&
	    b < H_VBASE + H_VCOUNT)
		return H_SBASE + ((a - H_LBASE) * H_VCOUNT + (b - H_VBASE)) * H_TCOUNT;
	if (a >= H_SBASE && a < H_SBASE + H_SCOUNT && (a - H_SBASE) % H_TCOUNT == 0 &&
	    b > H_TBASE && b < H_TBASE + H_TCOUNT)
		return a + (b - H_TBASE);
	size_t lo = 0, hi = m->n_compose;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const uint32_t *e = &m->compose[3 * mid];
		if (e[0] == a && e[1] == b)
			return e[2];
		if (e[0] < a || (e[0] == a && e[1] < b))
			lo = mid + 1;
		else
			hi = mid;
	}
	return 0;
}

/* ------------------------------------------------------------ NFKC */

static void norm_flush(struct norm *n)
{
	const struct embed_model *m = n->m;
	uint32_t *b = n->buf;
	size_t len = n->len;
	unsigned rk[NORM_MAX];

	if (len == 0)
		return;
	/* canonical ordering: stable insertion sort of non-starter runs */
	for (size_t i = 0; i < len; i++)
		rk[i] = ccc_rank(m, b[i]);
	for (size_t i = 1; i < len; i++) {
		if (rk[i] == 0)
			continue;
		size_t j = i;
		while (j > 0 && rk[j - 1] > rk[j]) {
			uint32_t tc = b[j]; b[j] = b[j - 1]; b[j - 1] = tc;
			unsigned tr = rk[j]; rk[j] = rk[j - 1]; rk[j - 1] = tr;
			j--;
		}
	}
	/* canonical composition (UAX #15 sample algorithm) */
	size_t sp = 0, out = 1;
	int have_starter = rk[0] == 0;
	unsigned last = have_starter ? 0 : 256;
	for (size_t i = 1; i < len; i++) {
		uint32_t ch = b[i];
		unsigned cc = rk[i];
		uint32_t c = have_starter ? compose(m, b[sp], ch) : 0;
		if (c && (last < cc || last == 0)) {
			b[sp] = c;
			continue;
		}
		if (cc == 0) {
			sp = out;
			have_starter = 1;
		}
		last = cc;
		rk[out] = cc;
		b[out++] = ch;
	}
	for (size_t i = 0; i < out; i++)
		n->sink(n->ctx, b[i]);
	n->len = 0;
}

static void norm_push(struct norm *n, uint32_t cp)
{
	const struct embed_model *m = n->m;
	uint32_t tmp[3];
	const uint32_t *d = &cp;
	size_t dl = 1;

	if (cp < 0x80) {
		norm_flush(n);
		n->buf[n->len++] = cp;
		return;
	}
	if (cp >= H_SBASE && cp < H_SBASE + H_SCOUNT) {
		uint32_t s = cp - H_SBASE;
		tmp[0] = H_LBASE + s / H_NCOUNT;
		tmp[1] = H_VBASE + (s % H_NCOUNT) / H_TCOUNT;
		tmp[2] = H_TBASE + s % H_TCOUNT;
		d = tmp;
		dl = tmp[2] == H_TBASE ? 2 : 3;
	} else if (cp >= 0xA0) {
		const uint32_t *e = pair_find(m->nfkd_idx, m->n_nfkd, cp);
		if (e) {
			d = m->nfkd_data + (e[1] >> 5);
			dl = e[1] & 31;
		}
	}
	if (n->len && ((ccc_rank(m, d[0]) == 0 && !is_second(m, d[0])) ||
		       n->len + dl > NORM_MAX))
		norm_flush(n);
	for (size_t i = 0; i < dl && n->len < NORM_MAX; i++)
		n->buf[n->len++] = d[i];
}

/* Decode UTF-8 (invalid sequences -> U+FFFD, one per bad byte) into the
 * normaliser. */
static void decode(struct norm *n, const char *utf8, size_t len)
{
	const unsigned char *s = (const unsigned char *)utf8;
	size_t i = 0;
	while (i < len) {
		unsigned c = s[i];
		uint32_t cp;
		size_t k;
		if (c < 0x80) {
			norm_push(n, c);
			i++;
			continue;
		} else if (c >= 0xC2 && c <= 0xDF) {
			cp = c & 0x1F; k = 1;
		} else if (c >= 0xE0 && c <= 0xEF) {
			cp = c & 0x0F; k = 2;
		} else if (c >= 0xF0 && c <= 0xF4) {
			cp = c & 0x07; k = 3;
		} else {
			norm_push(n, 0xFFFD);
			i++;
			continue;
		}
		size_t j;
		for (j = 1; j <= k; j++) {
			if (i + j >= len || (s[i + j] & 0xC0) != 0x80)
				break;
			cp = (cp << 6) | (s[i + j] & 0x3F);
		}
		if (j <= k || (k == 2 && (cp < 0x800 || (cp >= 0xD800 && cp <= 0xDFFF))) ||
		    (k == 3 && (cp < 0x10000 || cp > 0x10FFFF))) {
			norm_push(n, 0xFFFD);
			i++;
			continue;
		}
		norm_push(n, cp);
		i += k + 1;
	}
	norm_flush(n);
}

/* ------------------------------------------------------------ lattice */

struct tok {
	const struct embed_model *m;
	int started;
	uint32_t seg[SEG_MAX];
	size_t slen;
	double carry;
	double best[SEG_MAX + 1];
	int32_t words[SEG_MAX + 1];
	int32_t rev[SEG_MAX];
	int32_t one[SEG_MAX];	/* the one-code-point piece of seg[i], or -1 */
	int32_t *ids;
	size_t max, count;
	int last_unk;
};

static uint32_t fnv_step(uint32_t h, uint32_t cp)
{
	return (h ^ cp) * 0x01000193u;
}

static int32_t piece_lookup(const struct embed_model *m, uint32_t h,
			    const uint32_t *cps, size_t len)
{
	uint32_t i = h & m->hash_mask;
	for (;;) {
		int32_t id = m->hash[i];
		if (id < 0)
			return -1;
		uint32_t o = m->piece_off[id], e = m->piece_off[id + 1];
		if (e - o == len && memcmp(m->piece_cps + o, cps, len * sizeof *cps) == 0)
			return id;
		i = (i + 1) & m->hash_mask;
	}
}

static void relax(struct tok *t, size_t s, size_t e, double sc, int32_t id)
{
	double v = sc + t->best[s];
	if (t->best[e] == 0 || v >= t->best[e]) {
		t->best[e] = v;
		t->words[e] = id;
	}
}

static void emit(struct tok *t, int32_t id)
{
	if (id == 0 && t->last_unk)
		return;
	t->last_unk = id == 0;
	if (t->count < t->max)
		t->ids[t->count] = id;
	t->count++;
}

static void seg_flush(struct tok *t)
{
	const struct embed_model *m = t->m;
	size_t L = t->slen;
	if (L == 0)
		return;
	t->best[0] = t->carry;
	for (size_t e = 1; e <= L; e++) {
		t->best[e] = 0;
		t->words[e] = 0;
	}
	/* When every code point of every piece is a piece of its own
	 * (m->chars_closed, checked by embed_init), no piece holds a code
	 * point that is not one: the candidates from s stop before the first
	 * such code point, with the same result as trying them all.  A text
	 * of code points outside the vocabulary (random bytes: U+FFFD) took
	 * max_piece lookups per code point. */
	for (size_t i = 0; i < L; i++)
		t->one[i] = piece_lookup(m, fnv_step(0x811c9dc5u, t->seg[i]), t->seg + i, 1);
	for (size_t s = 0; s < L; s++) {
		uint32_t h = 0x811c9dc5u;
		int matched = 0;
		size_t lim = L - s < m->max_piece ? L - s : m->max_piece;
		for (size_t k = 1; k <= lim; k++) {
			if (m->chars_closed && t->one[s + k - 1] < 0)
				break;
			h = fnv_step(h, t->seg[s + k - 1]);
			int32_t id = k == 1 ? t->one[s] : piece_lookup(m, h, t->seg + s, k);
			if (id >= 0) {
				matched = 1;
				relax(t, s, s + k, m->scores[id], id);
			}
		}
		if (!matched)
			relax(t, s, s + 1, 0.0, 0);
	}
	size_t nr = 0, it = L;
	while (it > 0) {
		int32_t id = t->words[it];
		t->rev[nr++] = id;
		size_t pl = m->piece_off[id + 1] - m->piece_off[id];
		it = pl <= it ? it - pl : 0;
	}
	while (nr > 0)
		emit(t, t->rev[--nr]);
	t->carry = t->best[L];
	t->slen = 0;
}

static void seg_push(struct tok *t, uint32_t cp)
{
	if ((cp == SEP && t->slen > 0) || t->slen == SEG_MAX)
		seg_flush(t);
	t->seg[t->slen++] = cp;
}

static void tok_sink(void *ctx, uint32_t cp)
{
	struct tok *t = ctx;
	if (!t->started) {
		t->started = 1;
		seg_push(t, SEP);
	}
	seg_push(t, cp == 0x20 ? SEP : cp);
}

bool tokenize_chars_closed(const struct embed_model *m)
{
	for (uint32_t i = 0; i <= m->hash_mask; i++) {
		int32_t id = m->hash[i];
		if (id < 0)
			continue;
		for (uint32_t o = m->piece_off[id]; o < m->piece_off[id + 1]; o++)
			if (piece_lookup(m, fnv_step(0x811c9dc5u, m->piece_cps[o]),
					 m->piece_cps + o, 1) < 0)
				return false;
	}
	return true;
}

enum embed_status tokenize(const struct embed_model *m, const char *utf8,
	    size_t len, int32_t *ids, size_t max, size_t *n)
{
	struct tok t;
	struct norm nm;

	if (!m || (!utf8 && len) || (!ids && max) || !n)
		return EMBED_EARG;
	t.m = m;
	t.started = 0;
	t.slen = 0;
	t.carry = 0;
	t.ids = ids;
	t.max = max;
	t.count = 0;
	t.last_unk = 0;
	nm.m = m;
	nm.len = 0;
	nm.sink = tok_sink;
	nm.ctx = &t;
	decode(&nm, utf8, len);
	seg_flush(&t);
	*n = t.count;
	return EMBED_OK;
}

struct cpbuf {
	uint32_t *out;
	size_t max, n;
};

static void cp_sink_buf(void *ctx, uint32_t cp)
{
	struct cpbuf *b = ctx;
	if (b->n < b->max)
		b->out[b->n] = cp;
	b->n++;
}

size_t tokenize_nfkc(const struct embed_model *m, const char *utf8, size_t len,
		     uint32_t *out, size_t max)
{
	struct cpbuf b = { out, max, 0 };
	struct norm nm;
	nm.m = m;
	nm.len = 0;
	nm.sink = cp_sink_buf;
	nm.ctx = &b;
	decode(&nm, utf8, len);
	return b.n;
}
