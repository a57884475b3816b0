/* Unit tests: core/match (centring, cosine, scores, visibility, ranking). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdbool.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "core/errors.h"
#include "core/score.h"

#define EPS	1e-9

static void
test_cosine(void **state)
{
	static const struct {
		float	 a[3], b[3];
		size_t	 n;
		int	 rc;
		double	 c;
	} rows[] = {
		{ { 1, 0, 0 }, { 1, 0, 0 }, 3, ARPS_OK, 1 },
		{ { 1, 0, 0 }, { 0, 1, 0 }, 3, ARPS_OK, 0 },
		{ { 1, 0, 0 }, { -1, 0, 0 }, 3, ARPS_OK, -1 },
		{ { 1, 1, 0 }, { 1, 0, 0 }, 3, ARPS_OK, 0.70710678118654752 },
		{ { 3, 4, 0 }, { 6, 8, 0 }, 3, ARPS_OK, 1 },
		{ { 2, 0, 0 }, { 5, 0, 0 }, 1, ARPS_OK, 1 },
		{ { 0, 0, 0 }, { 1, 0, 0 }, 3, ARPS_E_VALIDATION, 0 },
		{ { 1, 0, 0 }, { 0, 0, 0 }, 3, ARPS_E_VALIDATION, 0 },
		{ { 1, 0, 0 }, { 1, 0, 0 }, 0, ARPS_E_VALIDATION, 0 },
		{ { 1, NAN, 0 }, { 1, 0, 0 }, 3, ARPS_E_VALIDATION, 0 },
		{ { 1, 0, 0 }, { INFINITY, 0, 0 }, 3, ARPS_E_VALIDATION, 0 },
	};
	size_t	 i;
	double	 c;

	(void)state;
	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		c = 42;
		assert_int_equal(match_cosine(rows[i].a, rows[i].b, rows[i].n, &c),
		    rows[i].rc);
		if (rows[i].rc == ARPS_OK)
			assert_true(fabs(c - rows[i].c) < 1e-6);
		else
			assert_true(c == 42);
	}
	assert_int_equal(match_cosine(NULL, rows[0].b, 3, &c), ARPS_E_VALIDATION);
	assert_int_equal(match_cosine(rows[0].a, NULL, 3, &c), ARPS_E_VALIDATION);
	assert_int_equal(match_cosine(rows[0].a, rows[0].b, 3, NULL),
	    ARPS_E_VALIDATION);
}

static void
test_dot(void **state)
{
	float	 a[19], b[19];
	double	 want = 0;
	size_t	 i;

	(void)state;
	for (i = 0; i < 19; i++) {
		a[i] = (float)i * 0.25f - 2;
		b[i] = 1.5f - (float)(i % 5);
		want += (double)a[i] * b[i];
	}
	assert_true(fabs(match_dot(a, b, 19) - want) < 1e-4);	/* 16 + tail 3 */
	assert_true(fabs(match_dot(a, b, 8) - match_dot(b, a, 8)) < 1e-6);
	assert_true(match_dot(a, b, 0) == 0);
	/* unit vectors: the dot product is the cosine */
	{
		float	 u[3] = { 0.6f, 0.8f, 0 }, v[3] = { 0.8f, 0.6f, 0 };
		double	 c = 0;

		assert_int_equal(match_cosine(u, v, 3, &c), ARPS_OK);
		assert_true(fabs(match_dot(u, v, 3) - c) < 1e-6);
	}
}

/* v = a e[i] + b e[j] (+ c e[k]) over EMBED_DIM, zero elsewhere. */
static void
vec3(float v[EMBED_DIM], size_t i, float a, size_t j, float b, size_t k, float c)
{
	memset(v, 0, EMBED_DIM * sizeof(float));
	v[i] += a;
	v[j] += b;
	v[k] += c;
}

static double
norm(const float v[EMBED_DIM])
{
	double	 n = 0;
	size_t	 i;

	for (i = 0; i < EMBED_DIM; i++)
		n += (double)v[i] * v[i];
	return sqrt(n);
}

/*
 * match_centre: (raw - mean) renormalised; rows give raw and mean on three
 * axes and the expected centred vector on the same axes.
 */
static void
test_centre(void **state)
{
	static const struct {
		float	 raw[3], mean[3];
		int	 has_mean, rc;
		float	 want[3];
	} rows[] = {
		/* the shared component goes, the rest is renormalised */
		{ { 0.8f, 0.6f, 0 }, { 0.8f, 0, 0 }, 1, ARPS_OK, { 0, 1, 0 } },
		{ { 0.6f, 0.8f, 0 }, { 0.6f, 0, 0 }, 1, ARPS_OK, { 0, 1, 0 } },
		{ { 1, 0, 0 }, { 0.5f, 0.5f, 0 }, 1, ARPS_OK,
		  { 0.70710678f, -0.70710678f, 0 } },
		{ { 0, 0, 1 }, { 0, 0, 0 }, 1, ARPS_OK, { 0, 0, 1 } },
		/* no mean: only renormalised */
		{ { 3, 4, 0 }, { 0 }, 0, ARPS_OK, { 0.6f, 0.8f, 0 } },
		/* the vector is its mean: nothing left, all zero */
		{ { 0.6f, 0.8f, 0 }, { 0.6f, 0.8f, 0 }, 1, ARPS_E_VALIDATION, { 0, 0, 0 } },
		{ { 0, 0, 0 }, { 0 }, 0, ARPS_E_VALIDATION, { 0, 0, 0 } },
		{ { NAN, 1, 0 }, { 0 }, 0, ARPS_E_VALIDATION, { 0, 0, 0 } },
		{ { 1, 0, 0 }, { INFINITY, 0, 0 }, 1, ARPS_E_VALIDATION, { 0, 0, 0 } },
	};
	float	 raw[EMBED_DIM], mean[EMBED_DIM], out[EMBED_DIM];
	size_t	 i, d;

	(void)state;
	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		vec3(raw, 0, rows[i].raw[0], 7, rows[i].raw[1], EMBED_DIM - 1, rows[i].raw[2]);
		vec3(mean, 0, rows[i].mean[0], 7, rows[i].mean[1], EMBED_DIM - 1, rows[i].mean[2]);
		for (d = 0; d < EMBED_DIM; d++)
			out[d] = 42;
		assert_int_equal(match_centre(out, raw, rows[i].has_mean ? mean : NULL),
		    rows[i].rc);
		assert_true(fabs(out[0] - rows[i].want[0]) < 1e-6);
		assert_true(fabs(out[7] - rows[i].want[1]) < 1e-6);
		assert_true(fabs(out[EMBED_DIM - 1] - rows[i].want[2]) < 1e-6);
		for (d = 0; d < EMBED_DIM; d++)
			if (d != 0 && d != 7 && d != EMBED_DIM - 1)
				assert_true(out[d] == 0);
		if (rows[i].rc == ARPS_OK)
			assert_true(fabs(norm(out) - 1) < 1e-6);
		/* in place gives the same */
		assert_int_equal(match_centre(raw, raw, rows[i].has_mean ? mean : NULL),
		    rows[i].rc);
		assert_memory_equal(raw, out, sizeof out);
	}
	assert_int_equal(match_centre(NULL, raw, NULL), ARPS_E_VALIDATION);
	assert_int_equal(match_centre(out, NULL, mean), ARPS_E_VALIDATION);
	assert_true(norm(out) == 0);
}

/*
 * Two bios and two criteria that share a large common component (as real
 * ones do): plain, every pair looks alike; centred, each matches its own.
 * match_pair_similarity is match_centre on both sides, match_dot and
 * match_similarity, as ranking computes it.
 */
static void
test_pair_similarity(void **state)
{
	float	 mb[EMBED_DIM], mc[EMBED_DIM], b1[EMBED_DIM], b2[EMBED_DIM];
	float	 c1[EMBED_DIM], c2[EMBED_DIM], x[EMBED_DIM], y[EMBED_DIM];
	double	 plain_own, plain_other, own, other, cos;

	(void)state;
	/* shared axes 0 (bios) and 1 (criteria); content on axes 2 and 3 */
	vec3(mb, 0, 0.9f, 1, 0.3f, 2, 0);
	vec3(mc, 1, 0.9f, 0, 0.3f, 3, 0);
	vec3(b1, 0, 0.9f, 1, 0.3f, 2, 0.316f);
	vec3(b2, 0, 0.9f, 1, 0.3f, 3, 0.316f);
	vec3(c1, 1, 0.9f, 0, 0.3f, 2, 0.316f);
	vec3(c2, 1, 0.9f, 0, 0.3f, 3, 0.316f);
	assert_int_equal(match_cosine(b1, c1, EMBED_DIM, &plain_own), ARPS_OK);
	assert_int_equal(match_cosine(b1, c2, EMBED_DIM, &plain_other), ARPS_OK);
	assert_true(plain_other > 0.5);			/* unrelated look alike */
	own = match_pair_similarity(b1, c1, mb, mc);
	other = match_pair_similarity(b1, c2, mb, mc);
	assert_true(fabs(own - 1) < 1e-6);		/* cosine 1 */
	assert_true(fabs(other - 0.5) < 1e-6);		/* cosine 0 */
	assert_true(fabs(match_pair_similarity(b2, c2, mb, mc) - 1) < 1e-6);
	/* the same arithmetic as ranking */
	assert_int_equal(match_centre(x, b1, mb), ARPS_OK);
	assert_int_equal(match_centre(y, c2, mc), ARPS_OK);
	assert_true(match_pair_similarity(b1, c2, mb, mc) ==
	    match_similarity(match_dot(x, y, EMBED_DIM)));
	/* no means: the plain cosine of the unit vectors */
	assert_int_equal(match_cosine(b1, c1, EMBED_DIM, &cos), ARPS_OK);
	assert_true(fabs(match_pair_similarity(b1, c1, NULL, NULL) -
	    match_similarity(cos)) < 1e-6);
	/* a vector equal to its mean, or none: cosine 0 */
	assert_true(match_pair_similarity(mb, c1, mb, mc) == 0.5);
	assert_true(match_pair_similarity(NULL, c1, mb, mc) == 0.5);
}

static void
test_scores(void **state)
{
	static const struct {
		double		 cosine;
		enum rep_tier	 tier;
		double		 sim, score;
	} rows[] = {
		{ 1, REP_TIER_PRIORITY, 1, 0.9999 },
		{ 1, REP_TIER_STANDARD, 1, 0.925 },
		{ 1, REP_TIER_BASIC, 1, 0.85 },
		{ 0, REP_TIER_STANDARD, 0.5, 0.55 },
		{ 0, REP_TIER_PRIORITY, 0.5, 0.625 },
		{ -1, REP_TIER_BASIC, 0, 0.1 },
		{ -1, REP_TIER_PRIORITY, 0, 0.25 },
		{ 0.6, REP_TIER_STANDARD, 0.8, 0.775 },
		{ 2, REP_TIER_STANDARD, 1, 0.925 },		/* clamped */
		{ -3, REP_TIER_STANDARD, 0, 0.175 },		/* clamped */
		{ NAN, REP_TIER_STANDARD, 0, 0.175 },
		{ 1, REP_TIER_SUSPENDED, 1, 0.75 },
		{ 0.9999, REP_TIER_PRIORITY, 0.99995, 0.9999 },
	};
	size_t	 i;

	(void)state;
	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		double s = match_similarity(rows[i].cosine);

		assert_true(fabs(s - rows[i].sim) < EPS);
		assert_true(fabs(match_score(s, rows[i].tier) - rows[i].score) < EPS);
		assert_true(match_score(s, rows[i].tier) < 1.0);
	}
	assert_true(match_tier_weight(REP_TIER_SUSPENDED) == 0);
	assert_true(fabs(match_tier_weight(REP_TIER_BASIC) - 0.4) < EPS);
	assert_true(fabs(match_tier_weight(REP_TIER_STANDARD) - 0.7) < EPS);
	assert_true(match_tier_weight(REP_TIER_PRIORITY) == 1.0);
	assert_true(match_tier_weight(REP_TIER__MAX) == 0);
	/* similarity outside [0,1] passed straight to match_score is clamped */
	assert_true(fabs(match_score(5, REP_TIER_BASIC) - 0.85) < EPS);
	assert_true(fabs(match_score(-5, REP_TIER_BASIC) - 0.1) < EPS);
}

static void
test_visible(void **state)
{
	static const struct {
		enum rep_tier	 tier;
		int64_t		 created, now, fam;
		bool		 vis;
	} rows[] = {
		{ REP_TIER_PRIORITY, 1000, 1000, 15, true },
		{ REP_TIER_PRIORITY, 1000, 999, 15, true },
		{ REP_TIER_STANDARD, 1000, 1000, 15, false },
		{ REP_TIER_STANDARD, 1000, 1000 + 899, 15, false },
		{ REP_TIER_STANDARD, 1000, 1000 + 900, 15, true },
		{ REP_TIER_BASIC, 1000, 1000 + 899, 15, false },
		{ REP_TIER_BASIC, 1000, 1000 + 900, 15, true },
		{ REP_TIER_BASIC, 1000, 1000, 0, true },
		{ REP_TIER_BASIC, 1000, 1000, -5, true },
		{ REP_TIER_SUSPENDED, 0, 100000, 15, false },
		{ REP_TIER__MAX, 0, 100000, 15, false },
		{ REP_TIER_STANDARD, INT64_MAX - 10, INT64_MAX, 15, false },
		{ REP_TIER_STANDARD, 0, INT64_MAX, INT64_MAX, false },
	};
	size_t	 i;

	(void)state;
	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
		assert_int_equal(match_visible(rows[i].tier, rows[i].created,
		    rows[i].now, rows[i].fam), rows[i].vis);
}

#define NOW	100000

/* Eight candidates: ref, cosine-mapped similarity, created_at. */
static const struct match_cand base[] = {
	{ 0, 0.90, NOW - 3600, 0 },
	{ 1, 0.50, NOW - 3600, 0 },
	{ 2, 0.95, NOW - 60, 0 },	/* fresh: priority only */
	{ 3, 0.70, NOW - 7200, 0 },
	{ 4, 0.70, NOW - 3600, 0 },	/* ties 3: newer first */
	{ 5, 0.10, NOW - 900, 0 },	/* exactly at 15 min: visible */
	{ 6, 0.80, NOW - 899, 0 },	/* one second short */
	{ 7, 0.70, NOW - 3600, 0 },	/* ties 4 fully: lower ref first */
};

static void
test_rank(void **state)
{
	static const struct {
		enum rep_tier	 tier;
		size_t		 basic_max, limit;
		size_t		 n;
		size_t		 order[8];
	} rows[] = {
		{ REP_TIER_PRIORITY, 5, 0, 8, { 2, 0, 6, 4, 7, 3, 1, 5 } },
		{ REP_TIER_STANDARD, 5, 0, 6, { 0, 4, 7, 3, 1, 5 } },
		{ REP_TIER_STANDARD, 5, 3, 3, { 0, 4, 7 } },
		{ REP_TIER_BASIC, 5, 0, 5, { 0, 4, 7, 3, 1 } },
		{ REP_TIER_BASIC, 5, 2, 2, { 0, 4 } },
		{ REP_TIER_BASIC, 0, 0, 0, { 0 } },
		{ REP_TIER_BASIC, 100, 0, 6, { 0, 4, 7, 3, 1, 5 } },
		{ REP_TIER_SUSPENDED, 5, 0, 0, { 0 } },
		{ REP_TIER__MAX, 5, 0, 0, { 0 } },
	};
	struct match_cand	 c[8];
	struct match_params	 p;
	size_t			 i, j, n;

	(void)state;
	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		for (j = 0; j < 8; j++)
			c[j] = base[j];
		p.first_access_minutes = 15;
		p.basic_max_studies = rows[i].basic_max;
		p.limit = rows[i].limit;
		n = match_rank(c, 8, rows[i].tier, NOW, &p);
		assert_int_equal(n, rows[i].n);
		for (j = 0; j < n; j++) {
			assert_int_equal(c[j].ref, rows[i].order[j]);
			assert_true(fabs(c[j].score - match_score(
			    base[c[j].ref].similarity, rows[i].tier)) < EPS);
			if (j > 0)
				assert_true(c[j - 1].score >= c[j].score);
		}
	}
	p.first_access_minutes = 15;
	p.basic_max_studies = 5;
	p.limit = 0;
	assert_int_equal(match_rank(NULL, 8, REP_TIER_PRIORITY, NOW, &p), 0);
	assert_int_equal(match_rank(c, 8, REP_TIER_PRIORITY, NOW, NULL), 0);
	assert_int_equal(match_rank(c, 0, REP_TIER_PRIORITY, NOW, &p), 0);
}

static int
cmp_ref(const void *va, const void *vb)
{
	const struct match_cand	*a = va, *b = vb;

	if (a->score != b->score)
		return a->score > b->score ? -1 : 1;
	if (a->created_at != b->created_at)
		return a->created_at > b->created_at ? -1 : 1;
	return a->ref < b->ref ? -1 : a->ref > b->ref;
}

/* The bounded selection (limit/basic cap < n) keeps exactly the first k of
 * a full sort, over many sizes, with ties and invisible candidates. */
static void
test_rank_topk(void **state)
{
	static struct match_cand	 in[600], got[600], want[600];
	static const size_t		 limits[] = { 0, 1, 2, 3, 5, 7, 20, 100, 599, 600, 601 };
	static const enum rep_tier	 tiers[] = { REP_TIER_BASIC, REP_TIER_STANDARD,
					     REP_TIER_PRIORITY };
	struct match_params		 p;
	uint64_t			 x = 88172645463325252ull;
	size_t				 i, j, t, n, nw, k;

	(void)state;
	for (i = 0; i < 600; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		in[i].ref = i;
		in[i].similarity = (double)(x % 50) / 50;	/* many ties */
		in[i].created_at = NOW - (int64_t)(x % 1800);	/* some too fresh */
		in[i].score = 0;
	}
	p.first_access_minutes = 15;
	p.basic_max_studies = 5;
	for (t = 0; t < 3; t++)
		for (i = 0; i < sizeof(limits) / sizeof(limits[0]); i++) {
			p.limit = limits[i];
			nw = 0;
			for (j = 0; j < 600; j++)
				if (match_visible(tiers[t], in[j].created_at, NOW, 15)) {
					want[nw] = in[j];
					want[nw].score = match_score(in[j].similarity, tiers[t]);
					nw++;
				}
			qsort(want, nw, sizeof(*want), cmp_ref);
			k = nw;
			if (tiers[t] == REP_TIER_BASIC && k > 5)
				k = 5;
			if (p.limit > 0 && p.limit < k)
				k = p.limit;
			memcpy(got, in, sizeof(in));
			n = match_rank(got, 600, tiers[t], NOW, &p);
			assert_int_equal(n, k);
			for (j = 0; j < n; j++) {
				assert_int_equal(got[j].ref, want[j].ref);
				assert_true(got[j].score == want[j].score);
			}
		}
}

/* Whether number q is asked for again: above hw, or inside a hole. */
static int
seq_asks(const struct match_seq *s, int64_t q)
{
	size_t i;

	if (q > s->hw)
		return 1;
	for (i = 0; i < s->ngap; i++)
		if (q >= s->gap[i].lo && q <= s->gap[i].hi)
			return 1;
	return 0;
}

/* A change committed after a later one: 11 is read, 10 commits afterwards;
 * the reader still asks for 10 until it is seen, and gives it up only
 * after `wait` seconds (a rolled-back transaction's hole). */
static void
test_seq_late_commit(void **state)
{
	struct match_seq s;

	(void)state;
	match_seq_init(&s, 9);
	assert_true(seq_asks(&s, 10));
	match_seq_see(&s, 11, 1000);		/* 10 not visible yet */
	assert_int_equal(s.hw, 11);
	assert_int_equal(s.ngap, 1);
	assert_true(seq_asks(&s, 10));
	assert_false(seq_asks(&s, 11));
	assert_false(seq_asks(&s, 9));
	match_seq_expire(&s, 1089, 90);		/* still within the wait */
	assert_true(seq_asks(&s, 10));
	match_seq_see(&s, 10, 1089);		/* committed late: read, hole closed */
	assert_int_equal(s.ngap, 0);
	assert_false(seq_asks(&s, 10));
	assert_int_equal(s.hw, 11);

	/* a hole of three, filled from the middle, the rest rolled back */
	match_seq_see(&s, 15, 2000);
	assert_int_equal(s.ngap, 1);
	match_seq_see(&s, 13, 2001);
	assert_int_equal(s.ngap, 2);
	assert_true(seq_asks(&s, 12) && seq_asks(&s, 14));
	assert_false(seq_asks(&s, 13));
	match_seq_see(&s, 12, 2002);
	assert_int_equal(s.ngap, 1);
	assert_true(seq_asks(&s, 14));
	match_seq_expire(&s, 2089, 90);
	assert_true(seq_asks(&s, 14));
	match_seq_expire(&s, 2090, 90);		/* open 90 s: a rollback, forgotten */
	assert_false(seq_asks(&s, 14));
	assert_int_equal(s.ngap, 0);
}

/* More holes than fit: the closest merge, nothing is forgotten early, and
 * a number already seen inside a merged range is merely asked again. */
static void
test_seq_many_holes(void **state)
{
	struct match_seq s;
	int64_t q, t;
	size_t i;

	(void)state;
	match_seq_init(&s, 0);
	/* holes at 1, 3, 5, ... 39 (20 of them), seen at times 100..119 */
	for (q = 2, t = 100; q <= 40; q += 2, t++)
		match_seq_see(&s, q, t);
	assert_int_equal(s.hw, 40);
	assert_int_equal(s.ngap, MATCH_GAPS_MAX);
	for (q = 1; q <= 39; q += 2)
		assert_true(seq_asks(&s, q));
	for (i = 0; i + 1 < s.ngap; i++)
		assert_true(s.gap[i].hi < s.gap[i + 1].lo);
	/* nothing forgotten before the last hole that went into a range waited */
	match_seq_expire(&s, 100 + 89, 90);
	for (q = 1; q <= 39; q += 2)
		assert_true(seq_asks(&s, q));
	match_seq_expire(&s, 119 + 90, 90);
	assert_int_equal(s.ngap, 0);
	for (q = 1; q <= 40; q++)
		assert_false(seq_asks(&s, q));
	/* every hole filled one by one (even numbers seen again are harmless) */
	match_seq_init(&s, 0);
	for (q = 2; q <= 40; q += 2)
		match_seq_see(&s, q, 5);
	for (q = 1; q <= 40; q++)
		match_seq_see(&s, q, 6);
	for (q = 1; q <= 40; q++)
		assert_false(seq_asks(&s, q));
	assert_true(seq_asks(&s, 41));
}

/* The int8 first pass: its bound holds for random unit vectors, sparse
 * ones, a zero vector, and a vector with itself. */
static void
test_q8_bound(void **state)
{
	static float a[EMBED_DIM], c[EMBED_DIM];
	int8_t qa[EMBED_DIM], qc[EMBED_DIM];
	float sa, ea, ma, sc, ec, mc;
	double exact, approx, worst = 0;
	uint64_t x = 88172645463325252ull;
	size_t t, i;

	(void)state;
	for (t = 0; t < 2000; t++) {
		for (i = 0; i < EMBED_DIM; i++) {
			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
			a[i] = (float)((double)(x >> 11) / 9007199254740992.0 - 0.5);
			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
			c[i] = (t % 7 == 3 && i % 5 != 0) ? 0 :
			    (float)((double)(x >> 11) / 9007199254740992.0 - 0.5);
		}
		if (t % 11 == 5)
			memcpy(c, a, sizeof c);
		assert_int_equal(match_centre(a, a, NULL), ARPS_OK);
		assert_int_equal(match_centre(c, c, NULL), ARPS_OK);
		match_quant(qa, a, &sa, &ea, &ma);
		match_quant(qc, c, &sc, &ec, &mc);
		exact = match_dot(a, c, EMBED_DIM);
		approx = sa * sc * (float)match_dot_i8(qa, qc, EMBED_DIM);
		assert_true(fabs(exact - approx) <= match_q8_bound(ea, ma, ec, mc));
		if (fabs(exact - approx) > worst)
			worst = fabs(exact - approx);
		assert_true(match_q8_bound(ea, ma, ec, mc) < 0.1);	/* useful, not vacuous */
	}
	assert_true(worst > 0);
	memset(c, 0, sizeof c);
	match_quant(qc, c, &sc, &ec, &mc);
	assert_true(sc == 0);
	assert_true(match_dot_i8(qa, qc, EMBED_DIM) == 0);
	for (i = 0; i < 37; i++) {
		qa[i] = -128 + 1;
		qc[i] = -127;
	}
	assert_int_equal(match_dot_i8(qa, qc, 37), 37 * 127 * 127);
}

/*
 * A kept ranking against the set it follows: random sets with many ties
 * (few scores, few creation times), random additions, re-datings and
 * removals (told to the list as the index tells it: drop then add; a
 * removal not told at all), and after each the list read as match/cache.c
 * reads it (skipping entries gone from the set) must be exactly the best
 * of the set in match_kept_cmp order, and all of the set when complete.
 */
#define KS_MAX	64

struct kset {
	struct match_kent v[KS_MAX];
	int	 live[KS_MAX];	/* index: seq - 1 */
};

static int
kent_cmp(const void *a, const void *b)
{
	return match_kept_cmp(a, b);
}

static void
kset_random(struct kset *s, unsigned *rng, int64_t seq)
{
	struct match_kent *x = &s->v[seq - 1];

	memset(x, 0, sizeof *x);
	x->seq = seq;
	x->score = (double)(rand_r(rng) % 5) / 8;
	x->similarity = x->score;
	x->created_at = 1000 + rand_r(rng) % 3;
	s->live[seq - 1] = 1;
}

/* Rank the whole set into k (as rank_build does).  Returns 0. */
static void
kset_build(const struct kset *s, int64_t nseq, struct match_kept *k)
{
	struct match_kent all[KS_MAX];
	size_t n = 0, i;

	for (i = 0; i < (size_t)nseq; i++)
		if (s->live[i])
			all[n++] = s->v[i];
	qsort(all, n, sizeof all[0], kent_cmp);
	k->n = n < k->keep ? n : k->keep;
	memcpy(k->e, all, k->n * sizeof all[0]);
	k->complete = k->n == n;
}

static void
kset_check(const struct kset *s, int64_t nseq, const struct match_kept *k)
{
	struct match_kent all[KS_MAX], seen[KS_MAX];
	size_t n = 0, m = 0, i;

	for (i = 0; i < (size_t)nseq; i++)
		if (s->live[i])
			all[n++] = s->v[i];
	qsort(all, n, sizeof all[0], kent_cmp);
	for (i = 0; i < k->n; i++) {
		if (i > 0)
			assert_true(match_kept_cmp(&k->e[i - 1], &k->e[i]) < 0);
		if (!s->live[k->e[i].seq - 1])
			continue;	/* gone: the reader skips it */
		/* listed live entries carry the set's current key */
		assert_int_equal(match_kept_cmp(&k->e[i], &s->v[k->e[i].seq - 1]), 0);
		seen[m++] = k->e[i];
	}
	assert_true(m <= n);
	for (i = 0; i < m; i++)
		assert_int_equal(seen[i].seq, all[i].seq);
	if (k->complete)
		assert_int_equal(m, n);
}

static void
test_kept_ranking(void **state)
{
	struct match_kent e[8];
	struct match_kept k;
	struct kset s;
	unsigned rng = 12345;
	int64_t nseq, q;
	int round, op, rebuilt = 0, overflowed = 0;
	size_t keep;

	(void)state;
	for (round = 0; round < 4000; round++) {
		keep = 1 + (size_t)(round % 8);
		memset(&s, 0, sizeof s);
		nseq = (int64_t)(rand_r(&rng) % 12);
		for (q = 1; q <= nseq; q++)
			kset_random(&s, &rng, q);
		k.e = e;
		k.keep = keep;
		kset_build(&s, nseq, &k);
		kset_check(&s, nseq, &k);
		for (op = 0; op < 30; op++) {
			int was_complete = k.complete;

			switch (rand_r(&rng) % 3) {
			case 0:		/* a new entry */
				if (nseq == KS_MAX)
					continue;
				kset_random(&s, &rng, ++nseq);
				q = nseq;
				break;
			case 1:		/* an entry re-dated or re-opened */
				if (nseq == 0)
					continue;
				q = 1 + (int64_t)(rand_r(&rng) % (unsigned)nseq);
				s.live[q - 1] = 1;
				s.v[q - 1].created_at = 1000 + rand_r(&rng) % 3;
				break;
			default:	/* an entry leaves the set (the list is not told) */
				if (nseq == 0)
					continue;
				s.live[rand_r(&rng) % (unsigned)nseq] = 0;
				kset_check(&s, nseq, &k);
				continue;
			}
			match_kept_drop(&k, q);
			if (!match_kept_add(&k, &s.v[q - 1])) {
				kset_build(&s, nseq, &k);
				rebuilt++;
			} else if (was_complete && !k.complete)
				overflowed++;
			kset_check(&s, nseq, &k);
		}
	}
	/* every path was taken */
	assert_true(rebuilt > 0);
	assert_true(overflowed > 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cosine),
		cmocka_unit_test(test_dot),
		cmocka_unit_test(test_centre),
		cmocka_unit_test(test_pair_similarity),
		cmocka_unit_test(test_scores),
		cmocka_unit_test(test_visible),
		cmocka_unit_test(test_rank),
		cmocka_unit_test(test_rank_topk),
		cmocka_unit_test(test_seq_late_commit),
		cmocka_unit_test(test_seq_many_holes),
		cmocka_unit_test(test_q8_bound),
		cmocka_unit_test(test_kept_ranking),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
