/*
 * Matching (design.md §7): centring, similarity, tier weight, match
 * score, first-access visibility, and ranking of candidate studies for an
 * agent.  Pure arithmetic; ranking works in place in caller storage.
 *
 * Stored embeddings are the encoder's raw unit vectors.  Every score centres
 * them first: a bio vector minus the mean bio vector, a criteria vector minus
 * the mean criteria vector (the calibration means of the model file,
 * embed_model.mean_bio / mean_crit), each renormalised (match_centre); the
 * cosine of the two centred vectors gives the similarity.  Whatever computes
 * a score goes through match_centre (match_pair_similarity does all of it
 * for one pair; ranking centres each side once and takes match_dot).
 * Convention of core/ (design.md §2.3, core/errors.h): enum arps_err, ARPS_OK
 * or the reason, or bool for a predicate; outputs written only on success.
 */
#ifndef ARPS_CORE_SCORE_H
#define ARPS_CORE_SCORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "errors.h"

#include "ids.h"
#include "reputation.h"

/* The length of a stored embedding: the encoder's output (encoder/embed.h). */
#define EMBED_DIM			384

#define MATCH_SCORE_CAP			0.9999
#define MATCH_W_SIMILARITY		0.75
#define MATCH_W_TIER			0.25
#define MATCH_FIRST_ACCESS_DEFAULT	15	/* minutes */
#define MATCH_BASIC_MAX_DEFAULT		5

/* One candidate study; the caller fills the inputs, match_rank the rest. */
struct match_cand {
	size_t	 ref;		/* in: caller's index/handle, carried along */
	double	 similarity;	/* in: mapped similarity in [0,1] (match_similarity) */
	int64_t	 created_at;	/* in: publication time, unix seconds */
	double	 score;		/* out: match_score in [0, 0.9999] */
};

struct match_params {
	int64_t	 first_access_minutes;	/* non-priority delay, >= 0 */
	size_t	 basic_max_studies;	/* cap for basic tier */
	size_t	 limit;			/* page size cap (0: no cap) */
};

/* Centre a raw encoder vector on its side's calibration mean and renormalise:
 * out = (raw - mean) / |raw - mean| (mean NULL: out = raw / |raw|).  out may
 * be raw.  ARPS_OK; ARPS_E_VALIDATION for NULL raw/out, a non-finite value
 * or a zero result, with out all zero (its dot with anything is 0).  Never
 * allocates. */
enum arps_err	 match_centre(float out[EMBED_DIM], const float raw[EMBED_DIM],
	    const float *mean);
/* The similarity of one raw bio vector and one raw criteria vector exactly
 * as ranking computes it: match_similarity(match_dot(centred bio, centred
 * criteria)), each centred by match_centre on its mean (NULL: none).
 * Either vector zero or invalid: 0.5 (a cosine of 0). */
double	 match_pair_similarity(const float bio[EMBED_DIM], const float crit[EMBED_DIM],
	    const float *mean_bio, const float *mean_crit);
/* Cosine of a[0..n) and b[0..n) into *out, in [-1,1].  Returns ARPS_OK;
 * ARPS_E_VALIDATION for n == 0, NULL, a zero vector or a non-finite value. */
enum arps_err	 match_cosine(const float *a, const float *b, size_t n, double *out);
/* Plain float dot product of a[0..n) and b[0..n) (the cosine when both are
 * unit vectors, as the encoder's are); 0 for n == 0.  No checks: the hot
 * path of ranking. */
float	 match_dot(const float *a, const float *b, size_t n);
/* clamp((cosine + 1) / 2, 0, 1); NaN gives 0. */
double	 match_similarity(double cosine);
/* basic 0.4, standard 0.7, priority 1.0, suspended/invalid 0. */
double	 match_tier_weight(enum rep_tier tier);
/* min(0.75 * clamp(similarity,0,1) + 0.25 * tier_weight, 0.9999). */
double	 match_score(double similarity, enum rep_tier tier);
/* True when an agent of `tier` may see a study published at created_at:
 * priority at once, basic/standard from created_at + first_access_minutes,
 * suspended never. */
bool	 match_visible(enum rep_tier tier, int64_t created_at, int64_t now,
	    int64_t first_access_minutes);
/*
 * Rank c[0..n) for an agent of `tier` at `now`: drop the invisible, score
 * the rest, sort by score descending (ties: newer created_at first, then
 * lower ref), cap to basic_max_studies for basic and to limit.  Compacts
 * c in place; returns the number kept at c[0..).  Suspended: 0.
 * With a cap k < n only the best k are selected (a bounded heap inside c,
 * O(n log k)) and then sorted; the result equals a full sort's first k.
 * Never allocates.
 */
size_t	 match_rank(struct match_cand *c, size_t n, enum rep_tier tier,
	    int64_t now, const struct match_params *p);

/*
 * The change sequence reader's bookkeeping (design.md §9.12): which numbers
 * of an AUTO_INCREMENT change sequence a reader has not seen yet although a
 * higher one is visible.  Numbers are handed out when a change is written
 * but become visible when its transaction commits, so a lower number can
 * appear after a higher one was read; and a rolled-back transaction leaves
 * a hole that never fills.  A reader therefore asks for every number above
 * hw plus the holes (gap[]), and forgets a hole only when it has been open
 * `wait` seconds, longer than any transaction may last.  At most
 * MATCH_GAPS_MAX holes are kept, sorted: past that, the two closest merge
 * into one range that also covers numbers already seen (asking for those
 * again is harmless: applying a change is idempotent) and keeps the later
 * of the two times (so a hole is never forgotten early).  Never allocates.
 */
#define MATCH_GAPS_MAX	8

struct match_gap {
	int64_t	 lo, hi;	/* the numbers lo..hi, both included */
	int64_t	 seen;		/* when the reader first found them missing */
};

struct match_seq {
	int64_t		 hw;	/* highest number seen */
	size_t		 ngap;
	struct match_gap gap[MATCH_GAPS_MAX];
};

/* Start after `hw` (every number <= hw is known applied), no hole. */
void	 match_seq_init(struct match_seq *s, int64_t hw);
/* The reader got change number `seq` at `now` (rows in ascending order):
 * above hw, the numbers skipped become a hole and hw moves; inside a hole,
 * that number leaves it. */
void	 match_seq_see(struct match_seq *s, int64_t seq, int64_t now);
/* Forget the holes open for `wait` seconds or more at now. */
void	 match_seq_expire(struct match_seq *s, int64_t now, int64_t wait);

/*
 * The ranking's first pass over many vectors (design.md §9.12): an int8
 * form of each vector, q = round(v / s) with s = max|v| / 127, read four
 * times faster than the floats.  match_quant gives q, s, err = |v - s q|
 * and norm = |s q| (both rounded up).  For vectors a and c,
 * |dot(a, c) - s_a s_c dot_i8(q_a, q_c)| <= match_q8_bound(...), which
 * also covers the float rounding of match_dot and of the product, so an
 * approximate score with its bound decides which vectors can be among the
 * best and only those are scored exactly (match_dot).
 */
void	 match_quant(int8_t q[EMBED_DIM], const float v[EMBED_DIM], float *scale, float *err,
	    float *norm);
/* sum a[i] * b[i] over n int8s (exact; n <= 100000). */
int32_t	 match_dot_i8(const int8_t *a, const int8_t *b, size_t n);
/* err_a * (norm_c + err_c) + norm_a * err_c + a rounding slack. */
double	 match_q8_bound(float err_a, float norm_a, float err_c, float norm_c);
#define MATCH_Q8_SLACK	1e-4


/*
 * A kept ranking (design.md §9.12): the best `keep` entries of a set in
 * rank order (match_kept_cmp: score, then created_at, then seq, newest
 * first, the order of match_rank), with the invariant that every entry of
 * the set not in the list ranks after the list's last; `complete` when the
 * list holds the whole set.  Entries are identified by seq.  The owner
 * tells the list of each entry added or re-ranked (match_kept_drop then
 * match_kept_add); an entry that left the set may stay in the list, and
 * whoever reads it skips it.  e[] has room for keep entries.
 */
struct match_kent {
	double	 score, similarity;
	int64_t	 created_at, seq;
	uint32_t slot;			/* the owner's: where the entry was */
	char	 id[IDS_BUFSZ];
};

struct match_kept {
	struct match_kent *e;
	size_t	 n, keep;
	int	 complete;
};

/* < 0 when a ranks before b, > 0 after, 0 for the same (score, created_at, seq). */
int	 match_kept_cmp(const struct match_kent *a, const struct match_kent *b);
/* Remove the entry of seq from the list, if listed. */
void	 match_kept_drop(struct match_kept *k, int64_t seq);
/* Put x (not listed: match_kept_drop first) in its place, or leave it out
 * when it ranks after the last of an incomplete list.  True, or false when
 * the list cannot tell (incomplete and empty): rank the set afresh. */
bool	 match_kept_add(struct match_kept *k, const struct match_kent *x);

#endif
