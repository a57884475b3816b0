/* Match scoring and ranking (see match.h). */
#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "errors.h"
#include "score.h"

static const double tier_weight[REP_TIER__MAX] = {
	[REP_TIER_SUSPENDED] = 0.0,
	[REP_TIER_BASIC] = 0.4,
	[REP_TIER_STANDARD] = 0.7,
	[REP_TIER_PRIORITY] = 1.0,
};

enum arps_err
match_cosine(const float *a, const float *b, size_t n, double *out)
{
	double	 dot = 0, na = 0, nb = 0, c;
	size_t	 i;

	if (a == NULL || b == NULL || out == NULL || n == 0)
		return ARPS_E_VALIDATION;
	for (i = 0; i < n; i++) {
		if (!isfinite(a[i]) || !isfinite(b[i]))
			return ARPS_E_VALIDATION;
		dot += (double)a[i] * b[i];
		na += (double)a[i] * a[i];
		nb += (double)b[i] * b[i];
	}
	if (na == 0 || nb == 0)
		return ARPS_E_VALIDATION;
	c = dot / (sqrt(na) * sqrt(nb));
	*out = c > 1 ? 1 : c < -1 ? -1 : c;
	return ARPS_OK;
}

enum arps_err
match_centre(float out[EMBED_DIM], const float raw[EMBED_DIM], const float *mean)
{
	double	 nn = 0, d;
	float	 inv;
	size_t	 i;

	if (out == NULL)
		return ARPS_E_VALIDATION;
	for (i = 0; raw != NULL && i < EMBED_DIM; i++) {
		d = (double)raw[i] - (mean != NULL ? (double)mean[i] : 0.0);
		if (!isfinite(d))
			break;
		out[i] = (float)d;
		nn += d * d;
	}
	if (i < EMBED_DIM || !(nn > 1e-12)) {
		for (i = 0; i < EMBED_DIM; i++)
			out[i] = 0;
		return ARPS_E_VALIDATION;
	}
	inv = (float)(1.0 / sqrt(nn));
	for (i = 0; i < EMBED_DIM; i++)
		out[i] *= inv;
	return ARPS_OK;
}

double
match_pair_similarity(const float bio[EMBED_DIM], const float crit[EMBED_DIM],
    const float *mean_bio, const float *mean_crit)
{
	float	 b[EMBED_DIM], c[EMBED_DIM];

	(void)match_centre(b, bio, mean_bio);
	(void)match_centre(c, crit, mean_crit);
	return match_similarity(match_dot(b, c, EMBED_DIM));
}

float
match_dot(const float *a, const float *b, size_t n)
{
	float	 acc[8] = { 0 }, s;
	size_t	 i, j;

	/* Eight independent partial sums: no reassociation is needed for the
	 * compiler to keep them in vector registers. */
	for (i = 0; i + 8 <= n; i += 8)
		for (j = 0; j < 8; j++)
			acc[j] += a[i + j] * b[i + j];
	for (; i < n; i++)
		acc[0] += a[i] * b[i];
	s = ((acc[0] + acc[4]) + (acc[1] + acc[5])) + ((acc[2] + acc[6]) + (acc[3] + acc[7]));
	return s;
}

static double
clamp01(double v)
{
	if (isnan(v) || v < 0)
		return 0;
	return v > 1 ? 1 : v;
}

double
match_similarity(double cosine)
{
	return clamp01((cosine + 1) / 2);
}

double
match_tier_weight(enum rep_tier tier)
{
	if ((unsigned)tier >= REP_TIER__MAX)
		return 0;
	return tier_weight[tier];
}

double
match_score(double similarity, enum rep_tier tier)
{
	double	 s;

	s = MATCH_W_SIMILARITY * clamp01(similarity) +
	    MATCH_W_TIER * match_tier_weight(tier);
	return s > MATCH_SCORE_CAP ? MATCH_SCORE_CAP : s;
}

bool
match_visible(enum rep_tier tier, int64_t created_at, int64_t now,
    int64_t first_access_minutes)
{
	int64_t	 delay;

	switch (tier) {
	case REP_TIER_PRIORITY:
		return true;
	case REP_TIER_BASIC:
	case REP_TIER_STANDARD:
		break;
	default:
		return false;
	}
	if (first_access_minutes <= 0)
		return true;
	if (first_access_minutes > INT64_MAX / 60)
		return false;
	delay = first_access_minutes * 60;
	if (created_at > INT64_MAX - delay)
		return false;
	return now >= created_at + delay;
}

static int
cmp_cand(const void *va, const void *vb)
{
	const struct match_cand	*a = va, *b = vb;

	if (a->score != b->score)
		return a->score > b->score ? -1 : 1;
	if (a->created_at != b->created_at)
		return a->created_at > b->created_at ? -1 : 1;
	return a->ref < b->ref ? -1 : a->ref > b->ref;
}

/* The root of heap h[0..k) is the worst kept candidate (cmp_cand order). */
static void
heap_sift(struct match_cand *h, size_t k, size_t i)
{
	struct match_cand	 t = h[i];
	size_t			 c;

	while ((c = 2 * i + 1) < k) {
		if (c + 1 < k && cmp_cand(&h[c + 1], &h[c]) > 0)
			c++;
		if (cmp_cand(&h[c], &t) <= 0)
			break;
		h[i] = h[c];
		i = c;
	}
	h[i] = t;
}

size_t
match_rank(struct match_cand *c, size_t n, enum rep_tier tier, int64_t now,
    const struct match_params *p)
{
	struct match_cand	 x;
	size_t			 i, j, kept = 0, cap = n;

	if (c == NULL || p == NULL || tier == REP_TIER_SUSPENDED ||
	    (unsigned)tier >= REP_TIER__MAX)
		return 0;
	if (tier == REP_TIER_BASIC && p->basic_max_studies < cap)
		cap = p->basic_max_studies;
	if (p->limit > 0 && p->limit < cap)
		cap = p->limit;
	if (cap == 0)
		return 0;
	/* c[0..kept) collects the visible; once cap are kept (cap < n) it is
	 * a heap of the best cap so far, written only below the read index. */
	for (i = 0; i < n; i++) {
		if (!match_visible(tier, c[i].created_at, now,
		    p->first_access_minutes))
			continue;
		x = c[i];
		x.score = match_score(x.similarity, tier);
		if (kept < cap) {
			c[kept++] = x;
			if (kept == cap && cap < n) {
				for (j = cap / 2; j-- > 0;)
					heap_sift(c, cap, j);
			}
		} else if (cmp_cand(&x, &c[0]) < 0) {
			c[0] = x;
			heap_sift(c, cap, 0);
		}
	}
	qsort(c, kept, sizeof(*c), cmp_cand);
	return kept;
}

/* --- the change sequence reader (see match.h) --- */

void
match_seq_init(struct match_seq *s, int64_t hw)
{
	s->hw = hw;
	s->ngap = 0;
}

/* Insert gap g at position i (gap[] sorted by lo); when full (an append:
 * see match_seq_see) the two closest gaps merge first. */
static void
seq_insert(struct match_seq *s, size_t i, struct match_gap g)
{
	size_t j, best = 0;
	int64_t d, bestd = INT64_MAX;

	if (s->ngap == MATCH_GAPS_MAX) {
		for (j = 0; j + 1 < s->ngap; j++) {
			d = s->gap[j + 1].lo - s->gap[j].hi;
			if (d < bestd) {
				bestd = d;
				best = j;
			}
		}
		s->gap[best].hi = s->gap[best + 1].hi;
		if (s->gap[best + 1].seen > s->gap[best].seen)
			s->gap[best].seen = s->gap[best + 1].seen;
		for (j = best + 1; j + 1 < s->ngap; j++)
			s->gap[j] = s->gap[j + 1];
		s->ngap--;
		i = s->ngap;	/* only appends reach a full array */
	}
	for (j = s->ngap; j > i; j--)
		s->gap[j] = s->gap[j - 1];
	s->gap[i] = g;
	s->ngap++;
}

void
match_seq_see(struct match_seq *s, int64_t seq, int64_t now)
{
	struct match_gap g;
	size_t i;

	if (seq > s->hw) {
		if (seq > s->hw + 1) {
			g.lo = s->hw + 1;
			g.hi = seq - 1;
			g.seen = now;
			seq_insert(s, s->ngap, g);
		}
		s->hw = seq;
		return;
	}
	for (i = 0; i < s->ngap; i++) {
		if (seq < s->gap[i].lo || seq > s->gap[i].hi)
			continue;
		if (s->gap[i].lo == s->gap[i].hi) {
			for (; i + 1 < s->ngap; i++)
				s->gap[i] = s->gap[i + 1];
			s->ngap--;
		} else if (seq == s->gap[i].lo)
			s->gap[i].lo++;
		else if (seq == s->gap[i].hi)
			s->gap[i].hi--;
		else if (s->ngap < MATCH_GAPS_MAX) {
			g = s->gap[i];
			g.lo = seq + 1;
			s->gap[i].hi = seq - 1;
			seq_insert(s, i + 1, g);
		}	/* else: full, seq stays inside the hole (asked again, harmless) */
		return;
	}
}

void
match_seq_expire(struct match_seq *s, int64_t now, int64_t wait)
{
	size_t i, k = 0;

	for (i = 0; i < s->ngap; i++)
		if (now - s->gap[i].seen < wait)
			s->gap[k++] = s->gap[i];
	s->ngap = k;
}

/* --- the int8 first pass (see match.h) --- */

void
match_quant(int8_t q[EMBED_DIM], const float v[EMBED_DIM], float *scale, float *err,
    float *norm)
{
	double mx = 0, s, r, e = 0, m = 0, x;
	size_t i;

	for (i = 0; i < EMBED_DIM; i++)
		if (fabs((double)v[i]) > mx)
			mx = fabs((double)v[i]);
	s = mx / 127.0;
	for (i = 0; i < EMBED_DIM; i++) {
		x = s > 0 ? nearbyint((double)v[i] / s) : 0;
		if (x > 127)
			x = 127;
		if (x < -127)
			x = -127;
		q[i] = (int8_t)x;
		r = (double)v[i] - (double)(float)s * x;
		e += r * r;
		m += ((double)(float)s * x) * ((double)(float)s * x);
	}
	*scale = (float)s;
	/* rounded up, so that the bound stays a bound */
	*err = (float)(sqrt(e) * (1 + 1e-6) + 1e-9);
	*norm = (float)(sqrt(m) * (1 + 1e-6) + 1e-9);
}

int32_t
match_dot_i8(const int8_t *a, const int8_t *b, size_t n)
{
	int32_t acc[16] = { 0 }, s = 0;
	size_t i, j;

	/* sixteen independent sums of 16-bit products: vectorised as is */
	for (i = 0; i + 16 <= n; i += 16)
		for (j = 0; j < 16; j++)
			acc[j] += (int16_t)a[i + j] * (int16_t)b[i + j];
	for (; i < n; i++)
		acc[0] += a[i] * b[i];
	for (j = 0; j < 16; j++)
		s += acc[j];
	return s;
}

double
match_q8_bound(float err_a, float norm_a, float err_c, float norm_c)
{
	return (double)err_a * ((double)norm_c + err_c) + (double)norm_a * err_c + MATCH_Q8_SLACK;
}

/* --- a kept ranking (see match.h) --- */

int
match_kept_cmp(const struct match_kent *a, const struct match_kent *b)
{
	if (a->score != b->score)
		return a->score > b->score ? -1 : 1;
	if (a->created_at != b->created_at)
		return a->created_at > b->created_at ? -1 : 1;
	return a->seq > b->seq ? -1 : a->seq < b->seq;
}

void
match_kept_drop(struct match_kept *k, int64_t seq)
{
	size_t i, j;

	for (i = j = 0; i < k->n; i++)
		if (k->e[i].seq != seq)
			k->e[j++] = k->e[i];
	k->n = j;
}

bool
match_kept_add(struct match_kept *k, const struct match_kent *x)
{
	size_t p;

	if (!k->complete) {
		if (k->n == 0)
			return false;
		if (match_kept_cmp(x, &k->e[k->n - 1]) > 0)
			return true;	/* after the last: stays out */
	}
	for (p = k->n; p > 0 && match_kept_cmp(x, &k->e[p - 1]) < 0; p--)
		;
	if (k->n >= k->keep) {
		k->complete = 0;
		if (p >= k->keep)
			return true;	/* after the last of a full list */
		k->n = k->keep - 1;	/* the last drops out */
	}
	memmove(&k->e[p + 1], &k->e[p], (k->n - p) * sizeof k->e[0]);
	k->e[p] = *x;
	k->n++;
	return true;
}
