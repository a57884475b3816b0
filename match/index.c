/* The index of open studies and its refresh from the change sequence
 * (match/internal.h). */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "db/match.h"
#include "lib/clock.h"
#include "lib/config.h"
#include "lib/log.h"
#include "match/engine.h"
#include "match/internal.h"

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

struct mx_index mx_ix;

/* Note entry r as added or re-dated (it may now rank elsewhere). */
static void
ix_note(const struct match_row *r)
{
	struct mx_logent *l;

	if (mx_ix.log == NULL && (mx_ix.log = calloc(IX_LOG, sizeof *mx_ix.log)) == NULL) {
		mx_ix.epoch++;	/* no log: every ranking starts afresh */
		return;
	}
	l = &mx_ix.log[++mx_ix.gen % IX_LOG];
	memcpy(l->id, r->id, IDS_BUFSZ);
	l->seq = r->seq;
}

size_t
mx_hash(const char *id)
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
size_t
mx_pos(const char *id, int *found)
{
	size_t i = mx_hash(id) & (mx_ix.tabsz - 1), gone = SIZE_MAX;

	*found = 0;
	for (;; i = (i + 1) & (mx_ix.tabsz - 1)) {
		if (mx_ix.tab[i] == IX_EMPTY)
			return gone != SIZE_MAX ? gone : i;
		if (mx_ix.tab[i] == IX_GONE) {
			if (gone == SIZE_MAX)
				gone = i;
		} else if (strcmp(mx_ix.row[mx_ix.tab[i]].id, id) == 0) {
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
	free(mx_ix.tab);
	mx_ix.tab = t;
	mx_ix.tabsz = sz;
	for (i = 0; i < sz; i++)
		t[i] = IX_EMPTY;
	for (i = 0; i < mx_ix.n; i++)
		t[mx_pos(mx_ix.row[i].id, &found)] = (int32_t)i;
	mx_ix.used = mx_ix.n;
	return 0;
}

static void
ix_clear(void)
{
	size_t i;

	mx_ix.n = 0;
	mx_ix.used = 0;
	for (i = 0; i < mx_ix.tabsz; i++)
		mx_ix.tab[i] = IX_EMPTY;
	mx_ix.last = 0;
}

/* realloc *p to n bytes.  0, or -1 (then *p is unchanged). */
int
mx_grow(void **p, size_t n)
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

	if (mx_ix.tab == NULL || 2 * (mx_ix.used + 1) > mx_ix.tabsz) {
		if (ix_rehash(mx_ix.n + 1) != 0)
			return -1;
	}
	p = mx_pos(r->id, &found);
	if (found) {
		nr = &mx_ix.row[mx_ix.tab[p]];
		if (nr->created_at != r->created_at || nr->seq != r->seq) {
			*nr = *r;
			ix_note(r);
		} else
			*nr = *r;
		return 0;
	}
	if (raw == NULL || r->seq <= 0 || r->seq >= IX_SEQ_MAX)
		return -1;
	if (mx_ix.n == mx_ix.cap) {
		if (mx_ix.cap >= IX_MAX)
			return -1;
		want = mx_ix.cap ? 2 * mx_ix.cap : 1024;
		if ((nr = realloc(mx_ix.row, want * sizeof *nr)) == NULL)
			return -1;
		mx_ix.row = nr;
		if ((nv = realloc(mx_ix.vec, want * EMBED_DIM * sizeof *nv)) == NULL)
			return -1;
		mx_ix.vec = nv;
		if (mx_grow((void **)&mx_ix.q, want * EMBED_DIM) != 0 ||
		    mx_grow((void **)&mx_ix.qs, want * sizeof(float)) != 0 ||
		    mx_grow((void **)&mx_ix.qe, want * sizeof(float)) != 0 ||
		    mx_grow((void **)&mx_ix.qm, want * sizeof(float)) != 0)
			return -1;
		mx_ix.cap = want;
	}
	mx_ix.row[mx_ix.n] = *r;
	(void)match_centre(mx_ix.vec + mx_ix.n * EMBED_DIM, raw, NULL);	/* stored centred */
	match_quant(mx_ix.q + mx_ix.n * EMBED_DIM, mx_ix.vec + mx_ix.n * EMBED_DIM,
	    &mx_ix.qs[mx_ix.n], &mx_ix.qe[mx_ix.n], &mx_ix.qm[mx_ix.n]);
	if (mx_ix.tab[p] == IX_EMPTY)
		mx_ix.used++;
	mx_ix.tab[p] = (int32_t)mx_ix.n++;
	ix_note(r);
	return 0;
}

/* Remove study id (if held): the last slot moves into its place. */
static void
ix_del(const char *id)
{
	size_t p, q, slot;
	int found;

	if (mx_ix.tab == NULL)
		return;
	p = mx_pos(id, &found);
	if (!found)
		return;
	slot = (size_t)mx_ix.tab[p];
	mx_ix.tab[p] = IX_GONE;
	if (slot != --mx_ix.n) {
		q = mx_pos(mx_ix.row[mx_ix.n].id, &found);
		mx_ix.row[slot] = mx_ix.row[mx_ix.n];
		memcpy(mx_ix.vec + slot * EMBED_DIM, mx_ix.vec + mx_ix.n * EMBED_DIM,
		    EMBED_DIM * sizeof(float));
		memcpy(mx_ix.q + slot * EMBED_DIM, mx_ix.q + mx_ix.n * EMBED_DIM, EMBED_DIM);
		mx_ix.qs[slot] = mx_ix.qs[mx_ix.n];
		mx_ix.qe[slot] = mx_ix.qe[mx_ix.n];
		mx_ix.qm[slot] = mx_ix.qm[mx_ix.n];
		mx_ix.tab[q] = (int32_t)slot;
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

	if (mx_ix.tab != NULL)
		ix_clear();
	mx_ix.epoch++;
	mx_ix.past_epoch++;
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
	match_seq_init(&mx_ix.seq, start);
	mx_ix.last = now;
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
	size_t i, k = 0, p = 0;
	enum db_rc rc = DB_ERR;

	if (n > 0)
		mx_ix.past_epoch++;
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
		if (mx_ix.tab != NULL)
			p = mx_pos(c[i].row.id, &in);
		/* re-embedded by another model (design.md §15): the vector
		 * held is of the model before, so it is read again */
		if (in && mx_ix.row[mx_ix.tab[p]].vtag != c[i].row.vtag) {
			ix_del(c[i].row.id);
			in = 0;
		}
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
enum db_rc
mx_refresh(struct db *db, int64_t now, int64_t until)
{
	struct match_change *c;
	int64_t after = 0;
	size_t i, n;
	enum db_rc rc;

	mx_ix.partial = 0;
	if ((mx_ix.last == 0 || now - mx_ix.last > IX_STALE) && (rc = ix_load(db, now)) != DB_OK) {
		mx_ix.last = 0;
		return rc;
	}
	do {
		if ((rc = db_match_changes(db, &mx_ix.seq, after, &c, &n)) != DB_OK)
			return rc;
		rc = ix_apply(db, c, n);
		for (i = 0; rc == DB_OK && i < n; i++)
			match_seq_see(&mx_ix.seq, c[i].seq, now);
		if (n > 0)
			after = c[n - 1].seq;	/* every page moves on */
		free(c);
		if (rc != DB_OK)
			return rc;
		if (n == DB_MATCH_PAGE && until != 0 && clock_mono_us() > until) {
			mx_ix.partial = 1;	/* the rest next time (mx_ix.last unchanged) */
			return DB_OK;
		}
	} while (n == DB_MATCH_PAGE);
	/* Only now, each hole having just been asked for: one older than any
	 * transaction lasts can no longer fill. */
	match_seq_expire(&mx_ix.seq, now, IX_GAP_WAIT);
	mx_ix.last = now;
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
	int64_t now = (int64_t)time(NULL), t = clock_mono_us(), last = mx_ix.last;
	struct db *db;
	enum db_rc rc;
	int behind = 0;

	if (t < retry_at || (started && (mx_ix.last == 0 || now - mx_ix.last > PREFORK_CATCHUP)) ||
	    (db = db_open_bounded(cfg, PREFORK_TMO)) == NULL) {
		behind_since = 0;	/* not reading: no catch-up to time */
		return 0;
	}
	if (!db_up(db))
		rc = DB_GONE;
	else if (!started)
		rc = mx_refresh(db, now, 0);
	else {
		mx_ix.last = now;	/* read the changes, never a whole load */
		rc = mx_refresh(db, now, t + PREFORK_BUDGET_MS * 1000);
		if (rc != DB_OK || mx_ix.partial)
			mx_ix.last = last;	/* not caught up: as of before */
		behind = rc == DB_OK && mx_ix.partial;
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
			    (double)(clock_mono_us() - behind_since) / 1e6, mx_ix.n);
		behind_since = 0;
	}
	started = 1;
	db_close(db);
	return behind;
}

const struct match_seq *
match_seq_now(void)
{
	return mx_ix.last != 0 ? &mx_ix.seq : NULL;
}

int
mx_current(int pending, int64_t now)
{
	return mx_ix.last != 0 && now - mx_ix.last <= IX_STALE && !mx_ix.partial && !pending;
}

enum db_rc
match_index_refresh(struct db *db, int64_t now)
{
	return mx_refresh(db, now, 0);
}

void
match_index_info(struct match_index_info *out)
{
	out->n = mx_ix.n;
	out->loads = mx_ix.epoch;
	out->gen = mx_ix.gen;
	out->last = mx_ix.last;
	out->hw = mx_ix.seq.hw;
}

int
match_index_row(const char *id, struct match_row *out)
{
	size_t p;
	int found;

	if (mx_ix.tab == NULL)
		return 0;
	p = mx_pos(id, &found);
	if (found)
		*out = mx_ix.row[mx_ix.tab[p]];
	return found;
}
