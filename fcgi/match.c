#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "db/embeddings.h"
#include "db/matching.h"
#include "fcgi/match.h"
#include "lib/config.h"
#include "lib/log.h"
#include "lib/model.h"

static struct model model;
static int mapped;
static void *scratch;

int
match_init(const struct config *cfg)
{
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
match_worker_init(void)
{
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

	if (db_embed_subject(r->db, match_encoder(), scratch, p->subject, p->text, r->now) != DB_OK)
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
 * core/match.h) and asks for both each time; a hole is forgotten only
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
	struct match_cand *cand;	/* ranking scratch, ccap entries each */
	float		*ap, *bd;	/* first pass: approximate cosine, bound */
	uint32_t	*vi;		/* first pass: the slot */
	double		*heap;		/* first pass: the best lower bounds */
	size_t		 ccap, hcap;
} ix;

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
		ix.row[ix.tab[p]] = *r;
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
	if ((rc = db_match_change_start(db, now - IX_START_BACK, &start)) != DB_OK)
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

/* Bring this worker's index up to date at now. */
static enum db_rc
ix_refresh(struct db *db, int64_t now)
{
	struct match_change *c;
	size_t i, n;
	enum db_rc rc;

	if ((ix.last == 0 || now - ix.last > IX_STALE) && (rc = ix_load(db, now)) != DB_OK) {
		ix.last = 0;
		return rc;
	}
	do {
		match_seq_expire(&ix.seq, now, IX_GAP_WAIT);
		if ((rc = db_match_changes(db, &ix.seq, &c, &n)) != DB_OK)
			return rc;
		rc = ix_apply(db, c, n);
		for (i = 0; rc == DB_OK && i < n; i++)
			match_seq_see(&ix.seq, c[i].seq, now);
		free(c);
		if (rc != DB_OK)
			return rc;
	} while (n == DB_MATCH_PAGE);
	ix.last = now;
	return DB_OK;
}

/*
 * The master must never wait on the database: it is what respawns a killed
 * worker.  Its connection gives up after PREFORK_TMO seconds, and after a
 * failed refresh it does not try again for PREFORK_BACKOFF seconds (the
 * workers forked meanwhile read what they miss themselves, design.md §9.12).
 */
#define PREFORK_TMO	1
#define PREFORK_BACKOFF	30

void
match_prefork(const struct config *cfg)
{
	static int64_t retry_at;
	struct timespec ts;
	struct db *db;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	if ((int64_t)ts.tv_sec < retry_at)
		return;
	if ((db = db_open_bounded(cfg, PREFORK_TMO)) == NULL)
		return;
	if (ix_refresh(db, (int64_t)time(NULL)) != DB_OK) {
		log_msg("match: the master's index of open studies is not ready: %s",
		    db_error(db));
		retry_at = (int64_t)ts.tv_sec + PREFORK_BACKOFF;
	}
	db_close(db);
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
 * cap, the clamps at -1 and 1) every entry is scored exactly.
 */
static size_t
ix_score(const float cbio[EMBED_DIM], int64_t now, enum rep_tier tier, int64_t first_access,
    size_t k)
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
		if ((r->deadline != 0 && r->deadline <= now) ||
		    !match_visible(tier, r->created_at, now, first_access))
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

enum db_rc
match_top(struct db *db, const char *agent_id, const float bio[EMBED_DIM], enum rep_tier tier,
    int64_t now, const struct match_params *p, struct match_top **top, size_t *n)
{
	struct match_params q = *p;
	struct match_cand *nc;
	const char **ids = NULL;
	int *ok = NULL;
	float cbio[EMBED_DIM];
	size_t i, m, k, kept, done = 0, page, got = 0;
	enum db_rc rc;

	*top = NULL;
	*n = 0;
	(void)match_centre(cbio, bio, mapped ? model.enc.mean_bio : NULL);
	if ((rc = ix_refresh(db, now)) != DB_OK)
		return rc;
	page = tier == REP_TIER_BASIC && p->basic_max_studies < p->limit ? p->basic_max_studies :
	    p->limit;
	if (page == 0 || ix.n == 0)
		return DB_OK;
	if (ix.ccap < ix.n) {
		if ((nc = realloc(ix.cand, ix.cap * sizeof *nc)) == NULL)
			return DB_ERR;
		ix.cand = nc;
		if (grow((void **)&ix.ap, ix.cap * sizeof(float)) != 0 ||
		    grow((void **)&ix.bd, ix.cap * sizeof(float)) != 0 ||
		    grow((void **)&ix.vi, ix.cap * sizeof(uint32_t)) != 0)
			return DB_ERR;
		ix.ccap = ix.cap;
	}
	if (ix.heap == NULL) {
		if ((ix.heap = malloc(IX_HEAP * sizeof *ix.heap)) == NULL)
			return DB_ERR;
		ix.hcap = IX_HEAP;
	}
	rc = DB_ERR;
	if ((*top = calloc(page, sizeof **top)) == NULL)
		goto out;
	/*
	 * The best `page` that the database confirms (a free slot, not taken
	 * part in: the index cannot know the agent's own past, and the row may
	 * have changed since the refresh): rank the best k, confirm those not
	 * confirmed yet in rank order, and when some drop out rank again with
	 * a larger k (the best k is a prefix of the best 4k: the order is total).
	 */
	for (k = page;; k *= 4) {
		m = ix_score(cbio, now, tier, p->first_access_minutes, k);
		q.limit = k;
		q.basic_max_studies = k;
		kept = match_rank(ix.cand, m, tier, now, &q);
		if (kept <= done)
			break;
		free(ids);
		free(ok);
		if ((ids = malloc((kept - done) * sizeof *ids)) == NULL ||
		    (ok = malloc((kept - done) * sizeof *ok)) == NULL)
			goto out;
		for (i = done; i < kept; i++)
			ids[i - done] = ix.row[REF_SLOT(ix.cand[i].ref)].id;
		if ((rc = db_match_recheck(db, agent_id, now, ids, kept - done, ok)) != DB_OK)
			goto out;
		rc = DB_ERR;
		for (i = done; i < kept && got < page; i++) {
			if (!ok[i - done])
				continue;
			memcpy((*top)[got].id, ids[i - done], IDS_BUFSZ);
			(*top)[got].similarity = ix.cand[i].similarity;
			(*top)[got].score = ix.cand[i].score;
			got++;
		}
		done = kept;
		if (got == page || kept < k)
			break;
	}
	*n = got;
	rc = DB_OK;
out:
	if (rc != DB_OK) {
		free(*top);
		*top = NULL;
	}
	free(ids);
	free(ok);
	return rc;
}
