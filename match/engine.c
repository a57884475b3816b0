#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "db/embeddings.h"
#include "txn/embed.h"
#include "db/match.h"
#include "match/engine.h"
#include "lib/clock.h"
#include "lib/config.h"
#include "lib/log.h"
#include "encoder/model.h"

static struct model model;
static int mapped;
static void *scratch;
static int selfcheck;	/* config match_selfcheck (test stacks) */
static size_t rank_keep;	/* see struct rank */
/* the slots of the cache of texts used (see struct shown): 256, or 8 under
 * match_selfcheck, so that the test suites' pages push texts out and are
 * confirmed in batches all the time */
#define SHOWN_SLOTS	256
static size_t shown_cap = SHOWN_SLOTS;
static void selfcheck_set(int on);

int
match_init(const struct config *cfg)
{
	selfcheck_set(cfg->match_selfcheck);
	if (cfg->model_path[0] == '\0') {
		log_msg("match: no model_path: embeddings wait for the sweep");
		return -1;
	}
	if (model_map(cfg->model_path, &model) != 0) {
		log_msg("match: cannot map model %s: embeddings wait for the sweep", cfg->model_path);
		return -1;
	}
	mapped = 1;
	return 0;
}

void
match_worker_init(const struct config *cfg)
{
	selfcheck_set(cfg->match_selfcheck);	/* a reload's value */
	if (mapped && (scratch = malloc(embed_scratch_size(&model.enc))) == NULL) {
		log_msg("match: no memory for the encoder's scratch");
		mapped = 0;
	}
}

const struct embed_model *
match_encoder(void)
{
	return mapped && scratch != NULL ? &model.enc : NULL;
}

void *
match_scratch(void)
{
	return scratch;
}

struct pending {
	char subject[24];
	char text[];
};

static void
embed_after(struct req *r, void *arg)
{
	struct pending *p = arg;

	if (txn_embed_subject(r->db, match_encoder(), scratch, p->subject, p->text, r->now) != DB_OK)
		log_msg("match: embedding %s not stored: %s", p->subject, db_error(r->db));
	free(p);
}

void
match_embed_after(struct req *r, const char *subject, const char *text)
{
	size_t n = strlen(text);
	struct pending *p;

	if (match_encoder() == NULL || r->after != NULL)
		return;
	if ((p = malloc(sizeof *p + n + 1)) == NULL)
		return;
	snprintf(p->subject, sizeof p->subject, "%s", subject);
	memcpy(p->text, text, n + 1);
	r->after = embed_after;
	r->after_arg = p;
}

/* --- the index of open studies (per worker; design.md §9.12) --- */

/*
 * Each worker keeps every open study (active, a free slot, a ready criteria
 * vector) in memory: its row (id, seq, created_at, deadline) and its
 * criteria vector, centred once (design.md §7), in one contiguous float
 * array that ranking scans.  Before each ranking the worker reads what
 * changed since its last look from the change sequence (study_changes,
 * 008_study_changes.sql, written by triggers in the transaction of every
 * change that can open or close a study) and applies it: a change row
 * carries the study's state as the same statement reads it, so applying
 * one is idempotent and the order of two changes of one study does not
 * matter, only that none is missed.
 *
 * Never missing one.  study_changes.seq is an AUTO_INCREMENT handed out
 * when the change is written, visible when its transaction commits: a
 * lower number can appear after a higher one was read.  The worker keeps
 * the highest number seen and the holes below it (struct match_seq,
 * core/score.h) and asks for both each time; a hole is forgotten only
 * after IX_GAP_WAIT seconds, longer than any transaction lasts (a
 * request's database work ends within 30 s, design.md §9.5): by then its
 * transaction either committed (and the row was read) or rolled back.
 *
 * A full load (the first request, or a worker idle longer than IX_STALE,
 * well inside the hour study_changes keeps) reads the open studies page by
 * page, then starts the change sequence at the newest change written
 * IX_START_BACK seconds before the load: every number up to it was handed
 * out that long ago, so committed before the load read anything, and every
 * later one is read (again) after the load.
 *
 * Sharing.  The pool's master refreshes its own copy before it forks each
 * worker (match_prefork), so a worker starts with the index as of its
 * birth, its pages shared copy-on-write with the master and the other
 * workers, and reads only the changes since; a page becomes private to a
 * worker when a change there moves a study in or out.  Cost: 2 KiB of
 * vector, 512 bytes of its int8 form and about 80 bytes of row and hash
 * per study, about 26 MB at 10,000 studies and 260 MB at 100,000, once
 * (shared); private to each worker: the ranking scratch (44 bytes per
 * study: 4.4 MB at 100,000) and the pages its changes touched since it
 * was forked.
 */
#define IX_GAP_WAIT	90	/* seconds a hole is waited for */
#define IX_START_BACK	120	/* a load reads the changes from this long before it */
#define IX_STALE	1800	/* idle longer: reload (study_changes keeps 3600 s) */
#define IX_MAX		(1u << 22)	/* studies (the slot fits 24 bits of ref) */
#define IX_SEQ_MAX	((int64_t)1 << 39)	/* studies.seq below it (40 bits of ref) */
#define IX_HEAP		4096	/* k of the first pass (beyond: every entry exactly) */
#define IX_EMPTY	(-1)
#define IX_GONE		(-2)

static struct {
	struct match_row *row;	/* n rows */
	float		*vec;	/* n * EMBED_DIM, centred */
	int8_t		*q;	/* n * EMBED_DIM: vec's int8 form (match_quant) */
	float		*qs, *qe, *qm;	/* its scale, err and norm */
	size_t		 n, cap;
	int32_t		*tab;	/* open addressing: a slot, IX_EMPTY or IX_GONE */
	size_t		 tabsz, used;	/* used: slots and IX_GONE marks */
	struct match_seq seq;
	int64_t		 last;	/* last refresh, 0: not loaded */
	int		 partial;	/* the last refresh stopped at its `until` */
	struct match_cand *cand;	/* ranking scratch, ccap entries each */
	float		*ap, *bd;	/* first pass: approximate cosine, bound */
	uint32_t	*vi;		/* first pass: the slot */
	double		*heap;		/* first pass: the best lower bounds */
	size_t		 ccap, hcap;
	/* what the agents' rankings (struct rank below) must catch up on */
	uint64_t	 epoch;		/* +1 at every full load */
	uint64_t	 gen;		/* +1 at every entry added or re-dated */
	struct ix_logent {
		char	 id[IDS_BUFSZ];
		int64_t	 seq;
	}		*log;		/* IX_LOG entries: gen % IX_LOG */
} ix;

#define IX_LOG	4096	/* changes an agent's ranking can catch up on */

/* +1 whenever the index loads or applies a change: the agents' pasts kept
 * for the fast path (below) are read again after it. */
static uint64_t past_epoch;

/* Note entry r as added or re-dated (it may now rank elsewhere). */
static void
ix_note(const struct match_row *r)
{
	struct ix_logent *l;

	if (ix.log == NULL && (ix.log = calloc(IX_LOG, sizeof *ix.log)) == NULL) {
		ix.epoch++;	/* no log: every ranking starts afresh */
		return;
	}
	l = &ix.log[++ix.gen % IX_LOG];
	memcpy(l->id, r->id, IDS_BUFSZ);
	l->seq = r->seq;
}

static size_t
ix_hash(const char *id)
{
	uint64_t h = 1469598103934665603ull;

	while (*id != '\0')
		h = (h ^ (unsigned char)*id++) * 1099511628211ull;
	h ^= h >> 33;		/* FNV-1a, then a 64-bit finaliser to spread it */
	h *= 0xff51afd7ed558ccdull;
	h ^= h >> 33;
	return (size_t)h;
}

/* The table position of id, or where it would go (the first IX_GONE on
 * its path, else the IX_EMPTY that ends it). */
static size_t
ix_pos(const char *id, int *found)
{
	size_t i = ix_hash(id) & (ix.tabsz - 1), gone = SIZE_MAX;

	*found = 0;
	for (;; i = (i + 1) & (ix.tabsz - 1)) {
		if (ix.tab[i] == IX_EMPTY)
			return gone != SIZE_MAX ? gone : i;
		if (ix.tab[i] == IX_GONE) {
			if (gone == SIZE_MAX)
				gone = i;
		} else if (strcmp(ix.row[ix.tab[i]].id, id) == 0) {
			*found = 1;
			return i;
		}
	}
}

/* A table of at least 4 * want positions holding every slot.  0 or -1. */
static int
ix_rehash(size_t want)
{
	size_t sz = 1024, i;
	int32_t *t;
	int found;

	while (sz < 4 * want)
		sz *= 2;
	if ((t = malloc(sz * sizeof *t)) == NULL)
		return -1;
	free(ix.tab);
	ix.tab = t;
	ix.tabsz = sz;
	for (i = 0; i < sz; i++)
		t[i] = IX_EMPTY;
	for (i = 0; i < ix.n; i++)
		t[ix_pos(ix.row[i].id, &found)] = (int32_t)i;
	ix.used = ix.n;
	return 0;
}

static void
ix_clear(void)
{
	size_t i;

	ix.n = 0;
	ix.used = 0;
	for (i = 0; i < ix.tabsz; i++)
		ix.tab[i] = IX_EMPTY;
	ix.last = 0;
}

/* realloc *p to n bytes.  0, or -1 (then *p is unchanged). */
static int
grow(void **p, size_t n)
{
	void *q = realloc(*p, n);

	if (q == NULL)
		return -1;
	*p = q;
	return 0;
}

/* Add or update study r; raw (its encoder vector) only for a new one.
 * 0, or -1 out of room. */
static int
ix_put(const struct match_row *r, const float *raw)
{
	size_t p, want;
	struct match_row *nr;
	float *nv;
	int found;

	if (ix.tab == NULL || 2 * (ix.used + 1) > ix.tabsz) {
		if (ix_rehash(ix.n + 1) != 0)
			return -1;
	}
	p = ix_pos(r->id, &found);
	if (found) {
		nr = &ix.row[ix.tab[p]];
		if (nr->created_at != r->created_at || nr->seq != r->seq) {
			*nr = *r;
			ix_note(r);
		} else
			*nr = *r;
		return 0;
	}
	if (raw == NULL || r->seq <= 0 || r->seq >= IX_SEQ_MAX)
		return -1;
	if (ix.n == ix.cap) {
		if (ix.cap >= IX_MAX)
			return -1;
		want = ix.cap ? 2 * ix.cap : 1024;
		if ((nr = realloc(ix.row, want * sizeof *nr)) == NULL)
			return -1;
		ix.row = nr;
		if ((nv = realloc(ix.vec, want * EMBED_DIM * sizeof *nv)) == NULL)
			return -1;
		ix.vec = nv;
		if (grow((void **)&ix.q, want * EMBED_DIM) != 0 ||
		    grow((void **)&ix.qs, want * sizeof(float)) != 0 ||
		    grow((void **)&ix.qe, want * sizeof(float)) != 0 ||
		    grow((void **)&ix.qm, want * sizeof(float)) != 0)
			return -1;
		ix.cap = want;
	}
	ix.row[ix.n] = *r;
	(void)match_centre(ix.vec + ix.n * EMBED_DIM, raw, mapped ? model.enc.mean_crit : NULL);
	match_quant(ix.q + ix.n * EMBED_DIM, ix.vec + ix.n * EMBED_DIM, &ix.qs[ix.n], &ix.qe[ix.n],
	    &ix.qm[ix.n]);
	if (ix.tab[p] == IX_EMPTY)
		ix.used++;
	ix.tab[p] = (int32_t)ix.n++;
	ix_note(r);
	return 0;
}

/* Remove study id (if held): the last slot moves into its place. */
static void
ix_del(const char *id)
{
	size_t p, q, slot;
	int found;

	if (ix.tab == NULL)
		return;
	p = ix_pos(id, &found);
	if (!found)
		return;
	slot = (size_t)ix.tab[p];
	ix.tab[p] = IX_GONE;
	if (slot != --ix.n) {
		q = ix_pos(ix.row[ix.n].id, &found);
		ix.row[slot] = ix.row[ix.n];
		memcpy(ix.vec + slot * EMBED_DIM, ix.vec + ix.n * EMBED_DIM,
		    EMBED_DIM * sizeof(float));
		memcpy(ix.q + slot * EMBED_DIM, ix.q + ix.n * EMBED_DIM, EMBED_DIM);
		ix.qs[slot] = ix.qs[ix.n];
		ix.qe[slot] = ix.qe[ix.n];
		ix.qm[slot] = ix.qm[ix.n];
		ix.tab[q] = (int32_t)slot;
	}
}

/* Read every open study afresh (see the comment above). */
static enum db_rc
ix_load(struct db *db, int64_t now)
{
	struct match_row *rows;
	float *vec;
	int64_t start, after = 0;
	size_t i, n, nread;
	enum db_rc rc;

	if (ix.tab != NULL)
		ix_clear();
	ix.epoch++;
	past_epoch++;
	if ((rc = db_match_change_start(db, IX_START_BACK, &start)) != DB_OK)
		return rc;
	do {
		if ((rc = db_match_load(db, after, &rows, &vec, &n, &after, &nread)) != DB_OK)
			return rc;
		for (i = 0; i < n; i++)
			if (ix_put(&rows[i], vec + i * EMBED_DIM) != 0)
				log_msg("match: study %s left out of the index (no room)", rows[i].id);
		free(rows);
		free(vec);
	} while (nread == DB_MATCH_PAGE);
	match_seq_init(&ix.seq, start);
	ix.last = now;
	return DB_OK;
}

/* Apply one page of changes: closed ones leave, open ones are updated or,
 * new to the index, added with their vectors (read in batches). */
static enum db_rc
ix_apply(struct db *db, const struct match_change *c, size_t n)
{
	const char **want = NULL;
	const struct match_row **wrow = NULL;
	float *vec = NULL;
	int *found = NULL, in;
	size_t i, k = 0;
	enum db_rc rc = DB_ERR;

	if (n > 0)
		past_epoch++;
	if ((want = malloc((n ? n : 1) * sizeof *want)) == NULL ||
	    (wrow = malloc((n ? n : 1) * sizeof *wrow)) == NULL)
		goto out;
	for (i = 0; i < n; i++) {
		if (c[i].row.id[0] == '\0')
			continue;
		if (!c[i].open) {
			ix_del(c[i].row.id);
			continue;
		}
		in = 0;
		if (ix.tab != NULL)
			(void)ix_pos(c[i].row.id, &in);
		if (in)
			(void)ix_put(&c[i].row, NULL);
		else {
			want[k] = c[i].row.id;
			wrow[k++] = &c[i].row;
		}
	}
	if (k > 0) {
		if ((vec = malloc(k * EMBED_DIM * sizeof *vec)) == NULL ||
		    (found = malloc(k * sizeof *found)) == NULL)
			goto out;
		if ((rc = db_match_vectors(db, want, k, vec, found)) != DB_OK)
			goto out;
		for (i = 0; i < k; i++)
			if (found[i] && ix_put(wrow[i], vec + i * EMBED_DIM) != 0)
				log_msg("match: study %s left out of the index (no room)", want[i]);
	}
	rc = DB_OK;
out:
	free(vec);
	free(found);
	free(wrow);
	free(want);
	return rc;
}

/* Bring this worker's index up to date at now; until (monotonic
 * microseconds, 0: none): stop between pages of changes once past it. */
static enum db_rc
ix_refresh(struct db *db, int64_t now, int64_t until)
{
	struct match_change *c;
	int64_t after = 0;
	size_t i, n;
	enum db_rc rc;

	ix.partial = 0;
	if ((ix.last == 0 || now - ix.last > IX_STALE) && (rc = ix_load(db, now)) != DB_OK) {
		ix.last = 0;
		return rc;
	}
	do {
		if ((rc = db_match_changes(db, &ix.seq, after, &c, &n)) != DB_OK)
			return rc;
		rc = ix_apply(db, c, n);
		for (i = 0; rc == DB_OK && i < n; i++)
			match_seq_see(&ix.seq, c[i].seq, now);
		if (n > 0)
			after = c[n - 1].seq;	/* every page moves on */
		free(c);
		if (rc != DB_OK)
			return rc;
		if (n == DB_MATCH_PAGE && until != 0 && clock_mono_us() > until) {
			ix.partial = 1;	/* the rest next time (ix.last unchanged) */
			return DB_OK;
		}
	} while (n == DB_MATCH_PAGE);
	/* Only now, each hole having just been asked for: one older than any
	 * transaction lasts can no longer fill. */
	match_seq_expire(&ix.seq, now, IX_GAP_WAIT);
	ix.last = now;
	return DB_OK;
}

/*
 * The master must never wait on the database: it is what reaps and
 * respawns workers.  Its connection gives up after PREFORK_TMO seconds (one
 * connect: a failed one is not tried again); after a failure it does not
 * try again for PREFORK_BACKOFF seconds; and only the first call (the
 * pool's start) may load the whole index: later ones read the changes
 * since, stopping between pages after PREFORK_BUDGET_MS, while
 * study_changes still holds them (PREFORK_CATCHUP; it keeps an hour), even
 * past IX_STALE.  A missing or older index is left to the workers, which
 * then read what they miss themselves (design.md §9.12).
 */
#define PREFORK_TMO		1
#define PREFORK_BACKOFF		30
#define PREFORK_BUDGET_MS	100
#define PREFORK_CATCHUP		3000

int
match_prefork(const struct config *cfg)
{
	static int64_t retry_at, behind_since;
	static int started;
	int64_t now = (int64_t)time(NULL), t = clock_mono_us(), last = ix.last;
	struct db *db;
	enum db_rc rc;
	int behind = 0;

	if (t < retry_at || (started && (ix.last == 0 || now - ix.last > PREFORK_CATCHUP)) ||
	    (db = db_open_bounded(cfg, PREFORK_TMO)) == NULL) {
		behind_since = 0;	/* not reading: no catch-up to time */
		return 0;
	}
	if (!db_up(db))
		rc = DB_GONE;
	else if (!started)
		rc = ix_refresh(db, now, 0);
	else {
		ix.last = now;	/* read the changes, never a whole load */
		rc = ix_refresh(db, now, t + PREFORK_BUDGET_MS * 1000);
		if (rc != DB_OK || ix.partial)
			ix.last = last;	/* not caught up: as of before */
		behind = rc == DB_OK && ix.partial;
	}
	if (rc != DB_OK) {
		log_msg("match: the master's index of open studies is not ready: %s",
		    db_error(db));
		retry_at = clock_mono_us() + (int64_t)PREFORK_BACKOFF * 1000000;
	}
	if (behind && behind_since == 0)
		behind_since = t;
	else if (!behind && behind_since != 0) {
		if (rc == DB_OK && clock_mono_us() - behind_since >= 1000000)
			log_msg("match: the master's index caught up after %.1f s (%zu open studies)",
			    (double)(clock_mono_us() - behind_since) / 1e6, ix.n);
		behind_since = 0;
	}
	started = 1;
	db_close(db);
	return behind;
}

/*
 * The ranking's tie-break: match_rank orders equal scores by created_at,
 * then by ref ascending; ref packs (IX_SEQ_MAX - seq) above the slot, so
 * ties go newest seq first (the order of studies.seq DESC), and the slot
 * rides along.
 */
#define REF_SLOT_BITS	24
#define REF_SLOT(ref)	((size_t)((ref) & ((1u << REF_SLOT_BITS) - 1)))
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
 * ix.cand, exactly scored; the count.  First pass: every entry open at now
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
static size_t
ix_score(const float cbio[EMBED_DIM], int64_t now, enum rep_tier tier, int64_t first_access,
    size_t k, int timeless)
{
	const struct match_row *r;
	struct match_cand *c = ix.cand;
	int8_t qb[EMBED_DIM];
	float sb, eb, mb;
	double lim = -INFINITY;
	size_t i, j, nv = 0, nh = 0, m = 0;

	match_quant(qb, cbio, &sb, &eb, &mb);
	for (i = 0; i < ix.n; i++) {
		r = &ix.row[i];
		if (!timeless && ((r->deadline != 0 && r->deadline <= now) ||
		    !match_visible(tier, r->created_at, now, first_access)))
			continue;
		ix.ap[nv] = sb * ix.qs[i] * (float)match_dot_i8(qb, ix.q + i * EMBED_DIM, EMBED_DIM);
		ix.bd[nv] = (float)(match_q8_bound(eb, mb, ix.qe[i], ix.qm[i]) * (1 + 1e-6));
		ix.vi[nv] = (uint32_t)i;
		if (k <= ix.hcap)
			heap_keep(ix.heap, &nh, k, (double)ix.ap[nv] - ix.bd[nv]);
		nv++;
	}
	if (k <= ix.hcap && nv > k) {
		lim = ix.heap[0];
		if (lim <= -1 || lim + 1e-3 >= 1 ||
		    match_score(match_similarity(lim), tier) >= MATCH_SCORE_CAP)
			lim = -INFINITY;
	}
	for (j = 0; j < nv; j++) {
		if ((double)ix.ap[j] + ix.bd[j] < lim)
			continue;
		i = ix.vi[j];
		c[m].ref = ((size_t)(IX_SEQ_MAX - ix.row[i].seq) << REF_SLOT_BITS) | i;
		c[m].similarity = match_similarity(match_dot(cbio, ix.vec + i * EMBED_DIM,
		    EMBED_DIM));
		c[m].created_at = ix.row[i].created_at;
		c[m].score = 0;
		m++;
	}
	return m;
}

/* The ranking scratch for ix.n entries.  0 or -1. */
static int
ix_scratch(void)
{
	struct match_cand *nc;

	if (ix.ccap < ix.n) {
		if ((nc = realloc(ix.cand, ix.cap * sizeof *nc)) == NULL)
			return -1;
		ix.cand = nc;
		if (grow((void **)&ix.ap, ix.cap * sizeof(float)) != 0 ||
		    grow((void **)&ix.bd, ix.cap * sizeof(float)) != 0 ||
		    grow((void **)&ix.vi, ix.cap * sizeof(uint32_t)) != 0)
			return -1;
		ix.ccap = ix.cap;
	}
	if (ix.heap == NULL) {
		if ((ix.heap = malloc(IX_HEAP * sizeof *ix.heap)) == NULL)
			return -1;
		ix.hcap = IX_HEAP;
	}
	return 0;
}

/*
 * An agent's ranking, kept between its requests (design.md §9.12).  An
 * agent polls the same list again and again while the open studies hardly
 * change, so each worker keeps, for the last RANK_SLOTS agents it served,
 * the best RANK_KEEP entries of the whole index for that agent's bio and
 * tier in rank order (score, then created_at, then seq, newest first: the
 * order of match_rank), without regard to deadlines and visibility, which
 * move with the clock and are applied when the list is read.  Invariant:
 * every entry of the index not in the list ranks after the list's last
 * (`complete`: the list holds every entry).  A request catches the list up
 * on the entries added or re-dated since (ix.log): each is scored exactly
 * and goes in at its place, or, ranking after the last of an incomplete
 * list, stays out; an entry that left the index stays in the list until a
 * read finds it gone and skips it.  A list older than IX_LOG changes, or
 * than a full load, is ranked afresh.  Reading the list in order, skipping
 * what is past its deadline, not yet visible, gone or refused by the
 * database, gives exactly the page a full ranking at that instant gives;
 * when an incomplete list runs out first, the full ranking runs.
 */
#define RANK_SLOTS	32
#define RANK_KEEP	256

struct rank {
	char	 agent[IDS_BUFSZ];	/* "": a free slot */
	enum rep_tier tier;
	float	 bio[EMBED_DIM];	/* as read, before centring */
	uint64_t epoch, gen;		/* the index this list is as of */
	uint64_t used;			/* last use (the least recent is replaced) */
	struct match_kept k;		/* the list (core/score.h) */
	struct match_kent e[RANK_KEEP];
};

static struct rank *ranks;	/* RANK_SLOTS */
static uint64_t rank_clock;
/* entries a list keeps: RANK_KEEP, or 3 under match_selfcheck, so the test
 * suites run lists that overflow, drop their last and run out, all checked */
static size_t rank_keep = RANK_KEEP;

static void
selfcheck_set(int on)
{
	selfcheck = on;
	rank_keep = on ? 3 : RANK_KEEP;
	shown_cap = on ? 8 : SHOWN_SLOTS;
}

/* The index slot of list entry x, or -1 when it left the index. */
static long
rank_slot(struct match_kent *x)
{
	size_t p;
	int found;

	if (x->slot < ix.n && ix.row[x->slot].seq == x->seq)
		return (long)x->slot;
	if (ix.tab == NULL)
		return -1;
	p = ix_pos(x->id, &found);
	if (!found || ix.row[ix.tab[p]].seq != x->seq)
		return -1;
	x->slot = (uint32_t)ix.tab[p];
	return (long)x->slot;
}

static void
rank_fill(struct match_kent *x, size_t slot, double similarity, enum rep_tier tier)
{
	memcpy(x->id, ix.row[slot].id, IDS_BUFSZ);
	x->seq = ix.row[slot].seq;
	x->created_at = ix.row[slot].created_at;
	x->slot = (uint32_t)slot;
	x->similarity = similarity;
	x->score = match_score(similarity, tier);
}

/* Rank the whole index afresh for the list.  0 or -1. */
static int
rank_build(struct rank *k, const float cbio[EMBED_DIM])
{
	struct match_params q = { 0, rank_keep, rank_keep };
	size_t m, kept, i;

	m = ix_score(cbio, 0, k->tier, 0, rank_keep, 1);
	kept = match_rank(ix.cand, m, k->tier, 0, &q);
	for (i = 0; i < kept; i++)
		rank_fill(&k->e[i], REF_SLOT(ix.cand[i].ref), ix.cand[i].similarity, k->tier);
	k->k.e = k->e;
	k->k.keep = rank_keep;
	k->k.n = kept;
	k->k.complete = kept == ix.n;
	k->epoch = ix.epoch;
	k->gen = ix.gen;
	return 0;
}

/* Catch the list up on one added or re-dated entry.  0, or -1 when the
 * list must be ranked afresh. */
static int
rank_merge(struct rank *k, const struct ix_logent *l, const float cbio[EMBED_DIM])
{
	struct match_kent x;
	size_t slot, p;
	int found;

	match_kept_drop(&k->k, l->seq);	/* its old place, if listed */
	if (ix.tab == NULL)
		return -1;
	p = ix_pos(l->id, &found);
	if (!found)
		return 0;	/* gone again */
	slot = (size_t)ix.tab[p];
	if (ix.row[slot].seq != l->seq)
		return 0;	/* a later change of it is in the log too */
	rank_fill(&x, slot, match_similarity(match_dot(cbio, ix.vec + slot * EMBED_DIM,
	    EMBED_DIM)), k->tier);
	return match_kept_add(&k->k, &x) ? 0 : -1;
}

/* The least recently used of n cache slots of size bytes each, whose
 * uint64_t clock is at offset off (a slot never used has 0: it goes first,
 * the lowest such first). */
static void *
lru_pick(void *slots, size_t n, size_t size, size_t off)
{
	unsigned char *p = slots, *best = slots;
	uint64_t u, bu;
	size_t i;

	memcpy(&bu, best + off, sizeof bu);
	for (i = 1; i < n; i++) {
		memcpy(&u, p + i * size + off, sizeof u);
		if (u < bu) {
			bu = u;
			best = p + i * size;
		}
	}
	return best;
}

/* The agent's list, caught up with the index: NULL only out of memory. */
static struct rank *
rank_get(const char *agent_id, const float bio[EMBED_DIM], enum rep_tier tier,
    const float cbio[EMBED_DIM])
{
	struct rank *k = NULL;
	uint64_t g;
	size_t i, j;

	if (ranks == NULL && (ranks = calloc(RANK_SLOTS, sizeof *ranks)) == NULL)
		return NULL;
	for (i = 0; i < RANK_SLOTS; i++)
		if (ranks[i].agent[0] != '\0' && strcmp(ranks[i].agent, agent_id) == 0) {
			k = &ranks[i];
			break;
		}
	if (k == NULL) {
		k = lru_pick(ranks, RANK_SLOTS, sizeof *ranks, offsetof(struct rank, used));
		snprintf(k->agent, sizeof k->agent, "%s", agent_id);
		k->epoch = ix.epoch + 1;	/* ranked afresh below */
	}
	k->used = ++rank_clock;
	if (k->tier != tier || memcmp(k->bio, bio, sizeof k->bio) != 0) {
		k->tier = tier;
		memcpy(k->bio, bio, sizeof k->bio);
		k->epoch = ix.epoch + 1;
	}
	if (k->epoch == ix.epoch && ix.log != NULL && ix.gen - k->gen <= IX_LOG) {
		for (g = k->gen + 1; g <= ix.gen; g++)
			if (rank_merge(k, &ix.log[g % IX_LOG], cbio) != 0)
				break;
		if (g > ix.gen) {
			k->gen = ix.gen;
			/* entries gone from the index leave the list; an
			 * incomplete list left empty is ranked afresh */
			for (i = j = 0; i < k->k.n; i++)
				if (rank_slot(&k->e[i]) >= 0)
					k->e[j++] = k->e[i];
			k->k.n = j;
			if (j > 0 || k->k.complete)
				return k;
		}
	}
	(void)rank_build(k, cbio);
	return k;
}

/*
 * The fast path (design.md §9.12).  The key's look-up of GET
 * /studies/available also asks (db_agent_by_key_heads) whether the change
 * sequence holds a row this worker's index would read (above its highest
 * number or inside one of its holes: the worker passes them,
 * match_seq_now).  When none is pending (and nothing is left of a partial
 * refresh), the index is the database's state of the open studies as of
 * that statement, and the page needs no read of its own: the index holds
 * each open study's slots (a change re-reads them); the agent's past is a
 * set kept per agent, valid until the index applies any change (a
 * participation is only ever inserted with its study's slot taken, in the
 * same transaction, which writes a change: so a past read before an
 * agent's new participation is dropped before any fast page can use it);
 * and the texts a page shows, which never change after a study is
 * created, come from a small cache read by id on a miss.  A poll where
 * nothing changed is then the key's one statement.  Otherwise (a change
 * pending, a request without the head: MCP, a key in its grace period) the
 * index is refreshed and the page confirmed by the database as before.
 * Under match_selfcheck every fast page is compared with the database's
 * (check_rank, fast_differs).
 */
#define PAST_SLOTS	32
#define SHOWN_BATCH	(shown_cap / 2)	/* ids confirm_kept looks at a time */

static struct past {
	char	 agent[IDS_BUFSZ];
	uint64_t epoch;		/* past_epoch when read */
	char	(*ids)[IDS_BUFSZ];	/* sorted (strcmp) */
	size_t	 n;
	uint64_t used;
} *pasts;
static uint64_t past_clock;

/* The agent's past (read unless kept since the index last applied a
 * change), or NULL (*rc set) when it cannot be read. */
static const struct past *
past_get(struct db *db, const char *agent_id, enum db_rc *rc)
{
	struct past *pa;
	char (*ids)[IDS_BUFSZ];
	size_t i, n;

	*rc = DB_OK;
	if (pasts == NULL && (pasts = calloc(PAST_SLOTS, sizeof *pasts)) == NULL) {
		*rc = DB_ERR;
		return NULL;
	}
	for (pa = NULL, i = 0; i < PAST_SLOTS && pa == NULL; i++)
		if (strcmp(pasts[i].agent, agent_id) == 0)
			pa = &pasts[i];
	if (pa == NULL)
		pa = lru_pick(pasts, PAST_SLOTS, sizeof *pasts, offsetof(struct past, used));
	if (strcmp(pa->agent, agent_id) == 0 && pa->epoch == past_epoch && pa->ids != NULL) {
		pa->used = ++past_clock;
		return pa;
	}
	if ((*rc = db_match_past(db, agent_id, &ids, &n)) != DB_OK)
		return NULL;
	free(pa->ids);
	snprintf(pa->agent, sizeof pa->agent, "%s", agent_id);
	pa->ids = ids;
	pa->n = n;
	pa->epoch = past_epoch;
	pa->used = ++past_clock;
	return pa;
}

static int
id_cmp(const void *a, const void *b)
{
	return strcmp(a, b);
}

static int
past_has(const struct past *pa, const char *study_id)
{
	return bsearch(study_id, pa->ids, pa->n, sizeof *pa->ids, id_cmp) != NULL;
}

/* The texts a page shows of the studies listed lately (title,
 * description, reward, duration and URL never change after a study is
 * created), by the hash of the id. */
static struct shown {
	uint64_t	 h;
	uint64_t	 used;
	struct study	 s;	/* s.id "": free; criteria and completion code not kept */
} *shown;
static uint64_t shown_clock;

static struct shown *
shown_find(const char *id, uint64_t h)
{
	size_t i;

	for (i = 0; shown != NULL && i < shown_cap; i++)
		if (shown[i].h == h && shown[i].s.id[0] != '\0' && strcmp(shown[i].s.id, id) == 0)
			return &shown[i];
	return NULL;
}

/* Keep s (taken over: the caller no longer owns its strings): its entry,
 * or NULL out of memory. */
static struct shown *
shown_keep(struct study *s)
{
	struct shown *e;

	free(s->criteria);
	free(s->completion_code);
	s->criteria = s->completion_code = NULL;
	if (shown == NULL && (shown = calloc(SHOWN_SLOTS, sizeof *shown)) == NULL) {
		db_study_clear(s);
		return NULL;
	}
	e = lru_pick(shown, shown_cap, sizeof *shown, offsetof(struct shown, used));
	db_study_clear(&e->s);
	e->s = *s;
	e->h = ix_hash(s->id);
	e->used = ++shown_clock;
	memset(s, 0, sizeof *s);
	return e;
}

/* out: what the page shows of e, with the slots and deadline of the
 * index's row r.  0, or -1 out of memory. */
static int
shown_copy(struct study *out, const struct study *e, const struct match_row *r)
{
	*out = *e;
	out->title = out->description = out->study_url = NULL;
	out->criteria = out->completion_code = NULL;
	out->state = STUDY_ACTIVE;
	out->occupied = r->occupied;
	out->max_participants = r->max_participants;
	out->has_deadline = r->deadline != 0;
	out->deadline = r->deadline;
	if ((out->title = strdup(e->title ? e->title : "")) == NULL ||
	    (out->description = strdup(e->description ? e->description : "")) == NULL ||
	    (out->study_url = strdup(e->study_url ? e->study_url : "")) == NULL) {
		db_study_clear(out);
		return -1;
	}
	return 0;
}

/* The past of the page being built on the fast path, NULL otherwise. */
static const struct past *fast_past;

/* confirm_kept for at most SHOWN_BATCH ids. */
static enum db_rc
confirm_kept_some(struct db *db, int64_t now, const char **ids, const double *sim,
    const double *score, size_t n, struct match_top *top, size_t page, size_t *got)
{
	/* ent[i]: the text of ids[i] kept, NULL for none (or taken part in) */
	const char *miss[SHOWN_SLOTS / 2];
	struct shown *ent[SHOWN_SLOTS / 2] = { NULL };
	size_t missat[SHOWN_SLOTS / 2], i, k = 0, pos;
	struct study *rows = NULL;
	int *found = NULL, in;
	enum db_rc rc = DB_OK;
	const struct match_row *r;

	if (n > SHOWN_SLOTS / 2)	/* n <= SHOWN_BATCH <= SHOWN_SLOTS / 2 */
		return DB_ERR;
	/* the kept ones marked used first, so that keeping the missing ones
	 * (n <= SHOWN_BATCH < shown_cap) never pushes out one of these: the
	 * entries found stay valid through the whole batch */
	for (i = 0; i < n; i++) {
		if (past_has(fast_past, ids[i]))
			continue;
		if ((ent[i] = shown_find(ids[i], ix_hash(ids[i]))) != NULL)
			ent[i]->used = ++shown_clock;
		else {
			missat[k] = i;
			miss[k++] = ids[i];
		}
	}
	if (k > 0) {
		if ((rows = calloc(k, sizeof *rows)) == NULL ||
		    (found = malloc(k * sizeof *found)) == NULL) {
			rc = DB_ERR;
			goto out;
		}
		if ((rc = db_study_get_many(db, miss, k, rows, found)) != DB_OK)
			goto out;
		for (i = 0; i < k; i++)
			if (found[i])
				ent[missat[i]] = shown_keep(&rows[i]);
	}
	for (i = 0; i < n && *got < page; i++) {
		if (ent[i] == NULL || ix.tab == NULL)
			continue;	/* taken part in, or no longer in the database */
		pos = ix_pos(ids[i], &in);
		if (!in)
			continue;	/* gone from the index */
		r = &ix.row[ix.tab[pos]];
		if ((r->deadline != 0 && r->deadline <= now) || r->occupied >= r->max_participants)
			continue;
		if (shown_copy(&top[*got].study, &ent[i]->s, r) != 0) {
			rc = DB_ERR;
			break;
		}
		memcpy(top[*got].id, ids[i], IDS_BUFSZ);
		top[*got].similarity = sim[i];
		top[*got].score = score[i];
		(*got)++;
	}
out:
	if (rows != NULL)
		for (i = 0; i < k; i++)
			db_study_clear(&rows[i]);
	free(rows);
	free(found);
	return rc;
}

/* confirm() on the fast path: from the index, the agent's past and the
 * texts kept, reading only the texts not kept (one statement a batch). */
static enum db_rc
confirm_kept(struct db *db, int64_t now, const char **ids, const double *sim,
    const double *score, size_t n, struct match_top *top, size_t page, size_t *got)
{
	size_t at, m;
	enum db_rc rc = DB_OK;

	for (at = 0; at < n && *got < page && rc == DB_OK; at += m) {
		m = n - at < SHOWN_BATCH ? n - at : SHOWN_BATCH;
		rc = confirm_kept_some(db, now, ids + at, sim + at, score + at, m, top, page, got);
	}
	return rc;
}

/*
 * Confirm ids[0..n) (a free slot, not taken part in: the index cannot know
 * the agent's own past, and a row may have changed since the refresh),
 * reading their rows, and append the confirmed ones in order to
 * top[*got..page), with their similarity and score.  On the fast path,
 * confirm_kept.
 */
static enum db_rc
confirm(struct db *db, const char *agent_id, int64_t now, const char **ids,
    const double *sim, const double *score, size_t n, struct match_top *top, size_t page,
    size_t *got)
{
	struct study *rows;
	int *ok;
	size_t i;
	enum db_rc rc = DB_ERR;

	if (n == 0)
		return DB_OK;
	if (fast_past != NULL)
		return confirm_kept(db, now, ids, sim, score, n, top, page, got);
	rows = calloc(n, sizeof *rows);
	ok = malloc(n * sizeof *ok);
	if (rows != NULL && ok != NULL &&
	    (rc = db_study_open_for(db, agent_id, now, ids, n, rows, ok)) == DB_OK)
		for (i = 0; i < n; i++) {
			if (!ok[i])
				continue;
			if (*got == page) {
				db_study_clear(&rows[i]);
				continue;
			}
			memcpy(top[*got].id, ids[i], IDS_BUFSZ);
			top[*got].similarity = sim[i];
			top[*got].score = score[i];
			top[*got].study = rows[i];
			(*got)++;
		}
	free(rows);
	free(ok);
	return rc;
}

void
match_top_free(struct match_top *top, size_t n)
{
	size_t i;

	if (top == NULL)
		return;
	for (i = 0; i < n; i++)
		db_study_clear(&top[i].study);
	free(top);
}

/*
 * The page from the agent's list: *done 1 when the list gave it (full, or
 * the list is complete), 0 when the full ranking must give it.
 */
static enum db_rc
top_from_rank(struct db *db, struct rank *k, const char *agent_id, int64_t now,
    const struct match_params *p, size_t page, struct match_top *top, size_t *got, int *done)
{
	const char *ids[RANK_KEEP];
	double sim[RANK_KEEP], score[RANK_KEEP];
	const struct match_row *r;
	size_t i = 0, m, want;
	long slot;
	enum db_rc rc;

	*done = 0;
	while (*got < page) {
		/* the page exactly, then (some dropped out) at least a
		 * statement's worth (DB_MATCH_RECHECK ids) */
		want = page - *got;
		if (i > 0 && want < DB_MATCH_RECHECK)
			want = DB_MATCH_RECHECK;
		for (m = 0; i < k->k.n && m < want; i++) {
			if ((slot = rank_slot(&k->e[i])) < 0)
				continue;
			r = &ix.row[slot];
			if ((r->deadline != 0 && r->deadline <= now) ||
			    !match_visible(k->tier, r->created_at, now, p->first_access_minutes))
				continue;
			ids[m] = k->e[i].id;
			sim[m] = k->e[i].similarity;
			score[m] = k->e[i].score;
			m++;
		}
		if (m == 0)
			break;
		if ((rc = confirm(db, agent_id, now, ids, sim, score, m, top, page, got)) != DB_OK)
			return rc;
	}
	*done = *got == page || k->k.complete;
	return DB_OK;
}

/*
 * The page by ranking every entry: the best `page` that the database
 * confirms.  Rank the best k, confirm those not confirmed yet in rank
 * order, and when some drop out rank again with a larger k (the best k is
 * a prefix of the best 4k: the order is total).
 */
static enum db_rc
top_full(struct db *db, const char *agent_id, const float cbio[EMBED_DIM], enum rep_tier tier,
    int64_t now, const struct match_params *p, size_t page, struct match_top *top, size_t *got)
{
	struct match_params q = *p;
	const char **ids = NULL;
	double *sim = NULL, *score = NULL;
	size_t i, m, k, kept, done = 0;
	enum db_rc rc = DB_OK;

	for (i = 0; i < *got; i++)	/* what a list gave before it ran out */
		db_study_clear(&top[i].study);
	memset(top, 0, *got * sizeof *top);
	*got = 0;
	for (k = page;; k *= 4) {
		m = ix_score(cbio, now, tier, p->first_access_minutes, k, 0);
		q.limit = k;
		q.basic_max_studies = k;
		kept = match_rank(ix.cand, m, tier, now, &q);
		if (kept <= done)
			break;
		free(ids);
		free(sim);
		free(score);
		sim = score = NULL;
		if ((ids = malloc((kept - done) * sizeof *ids)) == NULL ||
		    (sim = malloc((kept - done) * sizeof *sim)) == NULL ||
		    (score = malloc((kept - done) * sizeof *score)) == NULL) {
			rc = DB_ERR;
			break;
		}
		for (i = done; i < kept; i++) {
			ids[i - done] = ix.row[REF_SLOT(ix.cand[i].ref)].id;
			sim[i - done] = ix.cand[i].similarity;
			score[i - done] = ix.cand[i].score;
		}
		if ((rc = confirm(db, agent_id, now, ids, sim, score, kept - done, top, page,
		    got)) != DB_OK)
			break;
		done = kept;
		if (*got == page || kept < k)
			break;
	}
	free(ids);
	free(sim);
	free(score);
	return rc;
}

/* The test stacks' check (config match_selfcheck): the page from the
 * agent's list is the page of a full ranking, entry for entry.  DB_OK, or
 * DB_ERR (logged) when they differ. */
static enum db_rc
check_rank(struct db *db, const char *agent_id, const float cbio[EMBED_DIM], enum rep_tier tier,
    int64_t now, const struct match_params *p, size_t page, const struct match_top *top,
    size_t got)
{
	struct match_top *full;
	const struct past *fast = fast_past;
	size_t n = 0, i;
	enum db_rc rc;

	if ((full = calloc(page, sizeof *full)) == NULL)
		return DB_ERR;
	fast_past = NULL;	/* the database confirms the full ranking */
	rc = top_full(db, agent_id, cbio, tier, now, p, page, full, &n);
	fast_past = fast;
	if (rc == DB_OK) {
		for (i = 0; i < n && i < got && strcmp(full[i].id, top[i].id) == 0 &&
		    full[i].similarity == top[i].similarity && full[i].score == top[i].score &&
		    full[i].study.occupied == top[i].study.occupied &&
		    full[i].study.max_participants == top[i].study.max_participants &&
		    full[i].study.reward == top[i].study.reward &&
		    strcmp(full[i].study.title, top[i].study.title) == 0; i++)
			;
		if (n != got || i != n) {
			log_msg("match: selfcheck: agent %s: the kept ranking gave %zu studies%s, "
			    "a full one %zu; first difference at %zu (%s against %s)", agent_id, got,
			    fast != NULL ? " on the fast path" : "", n, i, i < got ? top[i].id : "-",
			    i < n ? full[i].id : "-");
			rc = DB_ERR;
		}
	}
	match_top_free(full, n);
	return rc;
}

#define BIO_SLOTS	32

static struct bio_kept {
	char	 agent[IDS_BUFSZ];
	unsigned char hash[32];
	float	 vec[EMBED_DIM];
	uint64_t used;
} *bios;
static uint64_t bio_clock;

int
match_bio_kept(const char *agent_id, const unsigned char hash[32], float vec[EMBED_DIM])
{
	size_t i;

	for (i = 0; bios != NULL && i < BIO_SLOTS; i++)
		if (bios[i].agent[0] != '\0' && strcmp(bios[i].agent, agent_id) == 0 &&
		    memcmp(bios[i].hash, hash, sizeof bios[i].hash) == 0) {
			memcpy(vec, bios[i].vec, sizeof bios[i].vec);
			bios[i].used = ++bio_clock;
			return 1;
		}
	return 0;
}

void
match_bio_keep(const char *agent_id, const unsigned char hash[32], const float vec[EMBED_DIM])
{
	struct bio_kept *b;
	size_t i;

	if (bios == NULL && (bios = calloc(BIO_SLOTS, sizeof *bios)) == NULL)
		return;
	for (b = NULL, i = 0; i < BIO_SLOTS && b == NULL; i++)
		if (strcmp(bios[i].agent, agent_id) == 0)
			b = &bios[i];
	if (b == NULL)
		b = lru_pick(bios, BIO_SLOTS, sizeof *bios, offsetof(struct bio_kept, used));
	snprintf(b->agent, sizeof b->agent, "%s", agent_id);
	memcpy(b->hash, hash, sizeof b->hash);
	memcpy(b->vec, vec, sizeof b->vec);
	b->used = ++bio_clock;
}

const struct match_seq *
match_seq_now(void)
{
	return ix.last != 0 ? &ix.seq : NULL;
}

/* Whether the index is current when the look-up found no change pending
 * for it (the fast path, see above). */
static int
ix_current(int pending, int64_t now)
{
	return ix.last != 0 && now - ix.last <= IX_STALE && !ix.partial && !pending;
}

/* Under match_selfcheck, a fast page that differs from the database's:
 * DB_OK when a change is pending now (the next try takes the database's
 * path), else DB_ERR (logged). */
static enum db_rc
fast_differs(struct db *db, const char *agent_id)
{
	int pending;
	enum db_rc rc;

	if ((rc = db_match_pending(db, &ix.seq, &pending)) != DB_OK)
		return rc;
	if (pending)
		return DB_OK;
	log_msg("match: selfcheck: agent %s: the fast path's page is not the database's, "
	    "nothing having changed", agent_id);
	return DB_ERR;
}

enum db_rc
match_top(struct db *db, const char *agent_id, const float bio[EMBED_DIM], enum rep_tier tier,
    int64_t now, const struct match_params *p, const struct match_heads *hd,
    struct match_top **top, size_t *n)
{
	struct rank *k;
	float cbio[EMBED_DIM];
	size_t page, got = 0;
	int done = 0, tries;
	enum db_rc rc;

	*top = NULL;
	*n = 0;
	fast_past = NULL;
	(void)match_centre(cbio, bio, mapped ? model.enc.mean_bio : NULL);
	if (hd != NULL && ix_current(hd->change_pending, now)) {
		if ((fast_past = past_get(db, agent_id, &rc)) == NULL)
			return rc;
		/* The look-up asked for every hole and found none filled: as
		 * after a read of the sequence (ix_refresh). */
		match_seq_expire(&ix.seq, now, IX_GAP_WAIT);
		ix.last = now;
	} else if ((rc = ix_refresh(db, now, 0)) != DB_OK)
		return rc;
	page = tier == REP_TIER_BASIC && p->basic_max_studies < p->limit ? p->basic_max_studies :
	    p->limit;
	if (page == 0 || ix.n == 0) {
		fast_past = NULL;
		return DB_OK;
	}
	if (ix_scratch() != 0 || (*top = calloc(page, sizeof **top)) == NULL) {
		fast_past = NULL;
		return DB_ERR;
	}
	/* the self-check reads the database twice: a concurrent change
	 * between the reads is told from a wrong list by a second try */
	for (tries = selfcheck ? 2 : 1; tries > 0; tries--) {
		if ((k = rank_get(agent_id, bio, tier, cbio)) != NULL &&
		    (rc = top_from_rank(db, k, agent_id, now, p, page, *top, &got, &done)) != DB_OK)
			goto fail;
		if (!done && (rc = top_full(db, agent_id, cbio, tier, now, p, page, *top, &got)) !=
		    DB_OK)
			goto fail;
		if (!selfcheck || (!done && fast_past == NULL) || (rc = check_rank(db, agent_id,
		    cbio, tier, now, p, page, *top, got)) == DB_OK)
			break;
		if (tries == 1)
			goto fail;
		if (fast_past != NULL) {	/* the second try takes the database's path */
			if ((rc = fast_differs(db, agent_id)) != DB_OK)
				goto fail;
			fast_past = NULL;
			if ((rc = ix_refresh(db, now, 0)) != DB_OK)
				goto fail;
		}
		match_top_free(*top, got);
		got = 0;
		if ((*top = calloc(page, sizeof **top)) == NULL) {
			fast_past = NULL;
			return DB_ERR;
		}
	}
	fast_past = NULL;
	*n = got;
	return DB_OK;
fail:
	fast_past = NULL;
	match_top_free(*top, got);
	*top = NULL;
	return rc;
}
