/* match_top: a page of GET /studies/available, ranked and confirmed
 * (match/engine.h, match/internal.h). */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "db/match.h"
#include "db/studies.h"
#include "lib/log.h"
#include "match/engine.h"
#include "match/internal.h"

/*
 * The self-check, a compile-time switch of the test build (make
 * test-asan: -DARPS_TEST_HOOKS): every page from an agent's kept ranking
 * or from the fast path is also ranked in full and confirmed by the
 * database, entry for entry; a difference is logged and answers DB_ERR
 * (500), so the API suites fail at once.  The code is compiled in every
 * build and dead in the daemon's.
 */
#ifdef ARPS_TEST_HOOKS
#define SELFCHECK	1
#else
#define SELFCHECK	0
#endif

/* The past of the page being built on the fast path, NULL otherwise. */
static const struct mx_past *fast_past;

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
		return mx_confirm_kept(db, fast_past, now, ids, sim, score, n, top, page, got);
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
top_from_rank(struct db *db, struct mx_rank *k, const char *agent_id, int64_t now,
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
			if ((slot = mx_rank_slot(&k->e[i])) < 0)
				continue;
			r = &mx_ix.row[slot];
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
		m = mx_score(cbio, now, tier, p->first_access_minutes, k, 0);
		q.limit = k;
		q.basic_max_studies = k;
		kept = match_rank(mx_ix.cand, m, tier, now, &q);
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
			ids[i - done] = mx_ix.row[REF_SLOT(mx_ix.cand[i].ref)].id;
			sim[i - done] = mx_ix.cand[i].similarity;
			score[i - done] = mx_ix.cand[i].score;
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

/* The self-check (SELFCHECK above): the page from the
 * agent's list is the page of a full ranking, entry for entry.  DB_OK, or
 * DB_ERR (logged) when they differ. */
static enum db_rc
check_rank(struct db *db, const char *agent_id, const float cbio[EMBED_DIM], enum rep_tier tier,
    int64_t now, const struct match_params *p, size_t page, const struct match_top *top,
    size_t got)
{
	struct match_top *full;
	const struct mx_past *fast = fast_past;
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

/* Under the self-check, a fast page that differs from the database's:
 * DB_OK when a change is pending now (the next try takes the database's
 * path), else DB_ERR (logged). */
static enum db_rc
fast_differs(struct db *db, const char *agent_id)
{
	int pending;
	enum db_rc rc;

	if ((rc = db_match_pending(db, &mx_ix.seq, &pending)) != DB_OK)
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
	struct mx_rank *k;
	float cbio[EMBED_DIM];
	size_t page, got = 0;
	int done = 0, tries;
	enum db_rc rc;

	*top = NULL;
	*n = 0;
	fast_past = NULL;
	(void)match_centre(cbio, bio, NULL);	/* stored centred (txn/embed.c) */
	if (hd != NULL && mx_current(hd->change_pending, now)) {
		if ((fast_past = mx_past_get(db, agent_id, &rc)) == NULL)
			return rc;
		/* The look-up asked for every hole and found none filled: as
		 * after a read of the sequence (mx_refresh). */
		match_seq_expire(&mx_ix.seq, now, IX_GAP_WAIT);
		mx_ix.last = now;
	} else if ((rc = mx_refresh(db, now, 0)) != DB_OK)
		return rc;
	page = tier == REP_TIER_BASIC && p->basic_max_studies < p->limit ? p->basic_max_studies :
	    p->limit;
	if (page == 0 || mx_ix.n == 0) {
		fast_past = NULL;
		return DB_OK;
	}
	if (mx_scratch() != 0 || (*top = calloc(page, sizeof **top)) == NULL) {
		fast_past = NULL;
		return DB_ERR;
	}
	/* the self-check reads the database twice: a concurrent change
	 * between the reads is told from a wrong list by a second try */
	for (tries = SELFCHECK ? 2 : 1; tries > 0; tries--) {
		if ((k = mx_rank_get(agent_id, bio, tier, cbio)) != NULL &&
		    (rc = top_from_rank(db, k, agent_id, now, p, page, *top, &got, &done)) != DB_OK)
			goto fail;
		if (!done && (rc = top_full(db, agent_id, cbio, tier, now, p, page, *top, &got)) !=
		    DB_OK)
			goto fail;
		if (!SELFCHECK || (!done && fast_past == NULL) || (rc = check_rank(db, agent_id,
		    cbio, tier, now, p, page, *top, got)) == DB_OK)
			break;
		if (tries == 1)
			goto fail;
		if (fast_past != NULL) {	/* the second try takes the database's path */
			if ((rc = fast_differs(db, agent_id)) != DB_OK)
				goto fail;
			fast_past = NULL;
			if ((rc = mx_refresh(db, now, 0)) != DB_OK)
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
