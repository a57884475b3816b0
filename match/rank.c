/* Scoring the index for a bio: the int8 first pass and the top k
 * (match/internal.h). */
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "match/internal.h"

_Static_assert(IX_MAX <= (1u << REF_SLOT_BITS), "a slot fits its bits of ref");
_Static_assert(sizeof(size_t) >= 8, "ref packs 64 bits");

/* Push v into the min-heap h[0..*n) of at most k values (the k largest). */
static void
heap_keep(double *h, size_t *n, size_t k, double v)
{
	size_t i, c;
	double t;

	if (*n < k) {
		for (i = (*n)++; i > 0 && h[(i - 1) / 2] > v; i = (i - 1) / 2)
			h[i] = h[(i - 1) / 2];
		h[i] = v;
		return;
	}
	if (v <= h[0])
		return;
	for (i = 0; (c = 2 * i + 1) < *n; i = c) {
		if (c + 1 < *n && h[c + 1] < h[c])
			c++;
		if (h[c] >= v)
			break;
		t = h[c];
		h[i] = t;
	}
	h[i] = v;
}

/*
 * The candidates that can be among the best k for tier at now into
 * mx_ix.cand, exactly scored; the count.  First pass: every entry open at now
 * (deadline) and visible to the tier gets its approximate cosine from the
 * int8 forms and a bound on its error (match_q8_bound); L is the k-th
 * largest lower bound.  An entry whose upper bound is under L has k
 * entries with a strictly higher cosine, so a strictly lower match score,
 * and cannot be among the best k: only the others are scored with
 * match_dot on the floats, so match_rank's result is exactly that of
 * scoring every entry.  Where the score is flat in the cosine (the 0.9999
 * cap, the clamps at -1 and 1) every entry is scored exactly.  timeless:
 * every entry, whatever its deadline and visibility (an agent's ranking,
 * below).
 */
size_t
mx_score(const float cbio[EMBED_DIM], int64_t now, enum rep_tier tier, int64_t first_access,
    size_t k, int timeless)
{
	const struct match_row *r;
	struct match_cand *c = mx_ix.cand;
	int8_t qb[EMBED_DIM];
	float sb, eb, mb;
	double lim = -INFINITY;
	size_t i, j, nv = 0, nh = 0, m = 0;

	match_quant(qb, cbio, &sb, &eb, &mb);
	for (i = 0; i < mx_ix.n; i++) {
		r = &mx_ix.row[i];
		if (!timeless && ((r->deadline != 0 && r->deadline <= now) ||
		    !match_visible(tier, r->created_at, now, first_access)))
			continue;
		mx_ix.ap[nv] = sb * mx_ix.qs[i] *
		    (float)match_dot_i8(qb, mx_ix.q + i * EMBED_DIM, EMBED_DIM);
		mx_ix.bd[nv] = (float)(match_q8_bound(eb, mb, mx_ix.qe[i], mx_ix.qm[i]) * (1 + 1e-6));
		mx_ix.vi[nv] = (uint32_t)i;
		if (k <= mx_ix.hcap)
			heap_keep(mx_ix.heap, &nh, k, (double)mx_ix.ap[nv] - mx_ix.bd[nv]);
		nv++;
	}
	if (k <= mx_ix.hcap && nv > k) {
		lim = mx_ix.heap[0];
		if (lim <= -1 || lim + 1e-3 >= 1 ||
		    match_score(match_similarity(lim), tier) >= MATCH_SCORE_CAP)
			lim = -INFINITY;
	}
	for (j = 0; j < nv; j++) {
		if ((double)mx_ix.ap[j] + mx_ix.bd[j] < lim)
			continue;
		i = mx_ix.vi[j];
		c[m].ref = ((size_t)(IX_SEQ_MAX - mx_ix.row[i].seq) << REF_SLOT_BITS) | i;
		c[m].similarity = match_similarity(match_dot(cbio, mx_ix.vec + i * EMBED_DIM,
		    EMBED_DIM));
		c[m].created_at = mx_ix.row[i].created_at;
		c[m].score = 0;
		m++;
	}
	return m;
}

int
mx_scratch(void)
{
	struct match_cand *nc;

	if (mx_ix.ccap < mx_ix.n) {
		if ((nc = realloc(mx_ix.cand, mx_ix.cap * sizeof *nc)) == NULL)
			return -1;
		mx_ix.cand = nc;
		if (mx_grow((void **)&mx_ix.ap, mx_ix.cap * sizeof(float)) != 0 ||
		    mx_grow((void **)&mx_ix.bd, mx_ix.cap * sizeof(float)) != 0 ||
		    mx_grow((void **)&mx_ix.vi, mx_ix.cap * sizeof(uint32_t)) != 0)
			return -1;
		mx_ix.ccap = mx_ix.cap;
	}
	if (mx_ix.heap == NULL) {
		if ((mx_ix.heap = malloc(IX_HEAP * sizeof *mx_ix.heap)) == NULL)
			return -1;
		mx_ix.hcap = IX_HEAP;
	}
	return 0;
}
