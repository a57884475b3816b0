/* study.matched fan-out: arps-embed's index of bio vectors (see fanout.h). */
#include <stdlib.h>
#include <string.h>

#include "core/reputation.h"
#include "lib/log.h"
#include "match/engine.h"
#include "match/fanout.h"

#define FAN_CHANGED_BACK	120	/* s: a row written before a refresh may commit after it */
#define FAN_STANDING_EVERY	60	/* s between two reads of every agent's standing */
#define FAN_RELEASE_BATCH	32	/* waiting matches a transaction */
#define FAN_RELEASE_ROUNDS	32	/* transactions a call, at most */

struct fan_agent {
	char	 id[IDS_BUFSZ];
	int	 reputation;
	int	 claimed;
	int	 ready;		/* vec holds its bio vector of the model */
	unsigned char key[32];	/* the vector's key (DB_BIO_VEC_KEY_SQL) */
};

static struct {
	struct fan_agent *a;
	float	*vec;		/* cap * EMBED_DIM */
	size_t	 n, cap, live;
	uint32_t *tab;		/* open addressing: slot + 1, 0 empty */
	size_t	 tabsz;
	int	 loaded;
	int64_t	 changed_at;	/* the last refresh of the vectors (its start) */
	int64_t	 standing_at;	/* the last read of every agent's standing */
} fx;

static uint32_t
id_hash(const char *s)
{
	uint32_t h = 2166136261u;

	while (*s != '\0')
		h = (h ^ (unsigned char)*s++) * 16777619u;
	return h;
}

/* The slot of agent id, or -1. */
static long
slot_of(const char *id)
{
	size_t i;

	if (fx.tabsz == 0)
		return -1;
	for (i = id_hash(id) & (fx.tabsz - 1); fx.tab[i] != 0; i = (i + 1) & (fx.tabsz - 1))
		if (strcmp(fx.a[fx.tab[i] - 1].id, id) == 0)
			return (long)fx.tab[i] - 1;
	return -1;
}

static void
tab_put(size_t slot)
{
	size_t i;

	for (i = id_hash(fx.a[slot].id) & (fx.tabsz - 1); fx.tab[i] != 0;
	    i = (i + 1) & (fx.tabsz - 1))
		;
	fx.tab[i] = (uint32_t)slot + 1;
}

/* Room for one more slot; 0, or -1 out of memory. */
static int
grow(void)
{
	size_t cap, sz, i;
	struct fan_agent *na;
	float *nv;
	uint32_t *nt;

	if (fx.n < fx.cap && 2 * (fx.n + 1) <= fx.tabsz)
		return 0;
	cap = fx.cap ? fx.cap * 2 : 1024;
	if ((na = realloc(fx.a, cap * sizeof *na)) == NULL)
		return -1;
	fx.a = na;
	if ((nv = realloc(fx.vec, cap * EMBED_DIM * sizeof *nv)) == NULL)
		return -1;
	fx.vec = nv;
	fx.cap = cap;
	for (sz = 16; sz < 2 * cap; sz *= 2)
		;
	if ((nt = calloc(sz, sizeof *nt)) == NULL)
		return -1;
	free(fx.tab);
	fx.tab = nt;
	fx.tabsz = sz;
	for (i = 0; i < fx.n; i++)
		tab_put(i);
	return 0;
}

/* What a page's rows report back. */
struct fan_read {
	int	 oom;
	char	 last[IDS_BUFSZ];	/* the page's last agent (pages go by id) */
	char	(*fetch)[IDS_BUFSZ];	/* ready rows whose vector is not the one held */
	size_t	 nfetch, capfetch;
};

/* A row of the database into the index (a new agent gets a slot only with
 * a vector). */
static void
put_row(void *arg, const struct db_bio_row *r)
{
	struct fan_read *rd = arg;
	size_t len = strlen(r->agent);
	long s = slot_of(r->agent);
	struct fan_agent *a;

	if (len >= IDS_BUFSZ)
		return;
	memcpy(rd->last, r->agent, len + 1);
	if (r->vec == NULL && r->ready && (s < 0 || !fx.a[s].ready || r->key == NULL ||
	    memcmp(fx.a[s].key, r->key, 32) != 0)) {
		/* a changed row: its vector read apart (db_bios_of), once */
		if (rd->nfetch == rd->capfetch) {
			size_t cap = rd->capfetch ? rd->capfetch * 2 : 64;
			char (*nf)[IDS_BUFSZ] = realloc(rd->fetch, cap * sizeof *nf);

			if (nf == NULL) {
				rd->oom = 1;
				return;
			}
			rd->fetch = nf;
			rd->capfetch = cap;
		}
		memcpy(rd->fetch[rd->nfetch++], r->agent, len + 1);
	}
	if (s < 0) {
		if (r->vec == NULL)
			return;
		if (grow() != 0) {
			rd->oom = 1;
			return;
		}
		s = (long)fx.n++;
		memset(&fx.a[s], 0, sizeof fx.a[s]);
		memcpy(fx.a[s].id, r->agent, len + 1);
		tab_put((size_t)s);
	}
	a = &fx.a[s];
	a->reputation = r->reputation;
	a->claimed = r->claimed;
	if (r->vec != NULL) {
		memcpy(fx.vec + (size_t)s * EMBED_DIM, r->vec, sizeof(float) * EMBED_DIM);
		if (r->key != NULL)
			memcpy(a->key, r->key, 32);
		fx.live += !a->ready;
		a->ready = 1;
	} else if (r->ready) {
		/* the same vector as held, or one read next (fetch) */
	} else if (a->ready) {
		fx.live--;
		a->ready = 0;
	}
}

/* The standing alone (the row has no vector: keep the one held). */
static void
put_standing(void *arg, const struct db_bio_row *r)
{
	struct fan_read *rd = arg;
	size_t len = strlen(r->agent);
	long s = slot_of(r->agent);

	if (len < IDS_BUFSZ)
		memcpy(rd->last, r->agent, len + 1);
	if (s < 0)
		return;
	fx.a[s].reputation = r->reputation;
	fx.a[s].claimed = r->claimed;
}

/* Every agent's bio vector and standing, a page at a time. */
static enum db_rc
load_all(struct db *db, const struct match_fanout_cfg *c, int64_t now)
{
	struct fan_read rd = { 0, "", NULL, 0, 0 };
	char after[IDS_BUFSZ] = "";
	size_t nread, i;
	enum db_rc rc;

	for (i = 0; i < fx.n; i++)
		fx.a[i].ready = 0;
	fx.live = 0;
	do {
		if ((rc = db_bios_page(db, c->model, after, put_row, &rd, &nread)) != DB_OK)
			return rc;
		if (rd.oom)
			return DB_ERR;
		memcpy(after, rd.last, sizeof after);
	} while (nread == DB_BIOS_PAGE);
	fx.loaded = 1;
	fx.changed_at = fx.standing_at = now;
	return DB_OK;
}

/* Every agent's standing again (a claim, a suspension, a reputation). */
static enum db_rc
standing_all(struct db *db, int64_t now)
{
	struct fan_read rd = { 0, "", NULL, 0, 0 };
	char after[IDS_BUFSZ] = "";
	size_t nread;
	enum db_rc rc;

	do {
		if ((rc = db_standing_page(db, after, put_standing, &rd, &nread)) != DB_OK)
			return rc;
		memcpy(after, rd.last, sizeof after);
	} while (nread == DB_BIOS_PAGE);
	fx.standing_at = now;
	return DB_OK;
}

enum db_rc
match_fanout_refresh(struct db *db, const struct match_fanout_cfg *c, int64_t now, int full)
{
	struct fan_read rd = { 0, "", NULL, 0, 0 };
	const char **ids = NULL;
	size_t nread, i;
	enum db_rc rc;

	if (full || !fx.loaded)
		return load_all(db, c, now);
	/* the rows written since the last look (a row is written with its
	 * writer's clock and may commit a little later: FAN_CHANGED_BACK),
	 * without vectors; only a vector not held is read */
	if ((rc = db_bios_changed(db, c->model, fx.changed_at - FAN_CHANGED_BACK, put_row, &rd,
	    &nread)) != DB_OK)
		goto out;
	rc = DB_ERR;
	if (rd.oom)
		goto out;
	if (nread >= DB_BIOS_CHANGED_MAX) {	/* a burst: read everything */
		rc = load_all(db, c, now);
		goto out;
	}
	if (rd.nfetch > 0) {
		if ((ids = malloc(rd.nfetch * sizeof *ids)) == NULL)
			goto out;
		for (i = 0; i < rd.nfetch; i++)
			ids[i] = rd.fetch[i];
		rd.nfetch = 0;		/* rows with vectors add nothing to fetch */
		if ((rc = db_bios_of(db, c->model, ids, i, put_row, &rd)) != DB_OK)
			goto out;
		rc = DB_ERR;
		if (rd.oom)
			goto out;
	}
	fx.changed_at = now;
	rc = DB_OK;
	if (now - fx.standing_at >= FAN_STANDING_EVERY)
		rc = standing_all(db, now);
out:
	free(ids);
	free(rd.fetch);
	return rc;
}

size_t
match_fanout_size(void)
{
	return fx.live;
}

/* A candidate of a pick: its index slot and its score as the index knows
 * the agent's standing. */
struct fan_cand {
	double	 score;
	size_t	 slot;
};

/* The root of h[0..k) is the worst kept candidate (lowest score). */
static void
cand_sift(struct fan_cand *h, size_t k, size_t i)
{
	struct fan_cand t = h[i];
	size_t c;

	while ((c = 2 * i + 1) < k) {
		if (c + 1 < k && h[c + 1].score < h[c].score)
			c++;
		if (h[c].score >= t.score)
			break;
		h[i] = h[c];
		i = c;
	}
	h[i] = t;
}

static int
cand_desc(const void *a, const void *b)
{
	const struct fan_cand *x = a, *y = b;

	return x->score > y->score ? -1 : x->score < y->score;
}

static int
match_desc(const void *a, const void *b)
{
	const struct db_study_match *x = a, *y = b;

	if (x->score != y->score)
		return x->score > y->score ? -1 : 1;
	return strcmp(x->agent, y->agent);
}

/* The standing a confirmation read: into the index, marked seen. */
struct fan_confirm {
	unsigned char *seen;	/* by slot */
};

static void
put_confirmed(void *arg, const struct db_bio_row *r)
{
	struct fan_confirm *fc = arg;
	long s = slot_of(r->agent);

	if (s < 0)
		return;
	fx.a[s].reputation = r->reputation;
	fx.a[s].claimed = r->claimed;
	fc->seen[s] = 1;
}

enum db_rc
match_fanout_pick(struct db *db, const struct match_fanout_cfg *c, int64_t now,
    const float crit[EMBED_DIM], struct db_study_matches *sm)
{
	struct db_study_match *out = NULL;
	struct fan_cand *h = NULL;
	struct fan_confirm fc = { NULL };
	const char *ids[32];
	size_t i, k = 0, cap, at, m, kept = 0;
	enum db_rc rc;

	sm->v = NULL;
	sm->n = 0;
	sm->delay = c->first_access_minutes * 60;
	if ((rc = match_fanout_refresh(db, c, now, 0)) != DB_OK)
		return rc;
	/* twice the fan-out from the index: some drop out when confirmed */
	cap = c->fanout * 2 + 32;
	if (fx.n == 0)
		return DB_OK;
	rc = DB_ERR;
	if ((h = malloc(cap * sizeof *h)) == NULL || (fc.seen = calloc(fx.n, 1)) == NULL ||
	    (out = calloc(c->fanout, sizeof *out)) == NULL)
		goto out;
	for (i = 0; i < fx.n; i++) {
		const struct fan_agent *a = &fx.a[i];
		double sc;

		if (!a->ready || !a->claimed || !rep_may_take_part(false, a->reputation))
			continue;
		sc = match_score(match_similarity(match_dot(fx.vec + i * EMBED_DIM, crit,
		    EMBED_DIM)), rep_tier_of(a->reputation));
		if (sc < MATCH_FANOUT_MIN_SCORE)
			continue;
		if (k < cap) {
			h[k].score = sc;
			h[k++].slot = i;
			if (k == cap)
				for (m = cap / 2; m-- > 0;)
					cand_sift(h, cap, m);
		} else if (sc > h[0].score) {
			h[0].score = sc;
			h[0].slot = i;
			cand_sift(h, cap, 0);
		}
	}
	qsort(h, k, sizeof *h, cand_desc);
	/* confirmed 32 at a time, the best first, until the fan-out is full */
	for (at = 0; at < k && kept < c->fanout; at += m) {
		m = k - at < 32 ? k - at : 32;
		for (i = 0; i < m; i++)
			ids[i] = fx.a[h[at + i].slot].id;
		if ((rc = db_standing_of(db, ids, m, put_confirmed, &fc)) != DB_OK)
			goto out;
		for (i = 0; i < m && kept < c->fanout; i++) {
			size_t s = h[at + i].slot;
			const struct fan_agent *a = &fx.a[s];
			enum rep_tier tier = rep_tier_of(a->reputation);
			double sc;

			if (!fc.seen[s] || !a->claimed || !rep_may_take_part(false, a->reputation))
				continue;
			/* as ranking computes it (design.md §7) */
			sc = match_score(match_pair_similarity(fx.vec + s * EMBED_DIM, crit, NULL, NULL),
			    tier);
			if (sc < MATCH_FANOUT_MIN_SCORE)
				continue;
			memcpy(out[kept].agent, a->id, sizeof out[kept].agent);
			out[kept].score = sc;
			out[kept].at_once = tier == REP_TIER_PRIORITY;
			kept++;
		}
	}
	qsort(out, kept, sizeof *out, match_desc);
	sm->v = out;
	sm->n = kept;
	out = NULL;
	rc = DB_OK;
out:
	free(out);
	free(h);
	free(fc.seen);
	return rc;
}

/* Whether a basic agent's listing at now shows study (design.md §7: at
 * most basic_max_studies, the best). */
static enum db_rc
basic_lists(struct db *db, const struct match_fanout_cfg *c, int64_t now, const char *agent,
    const char *study, int *shown)
{
	struct match_params p = { c->first_access_minutes, c->basic_max_studies,
	    c->basic_max_studies };
	struct match_top *top = NULL;
	long s = slot_of(agent);
	size_t n = 0, i;
	enum db_rc rc;

	*shown = 0;
	if (s < 0 || !fx.a[s].ready || c->basic_max_studies == 0)
		return DB_OK;
	if ((rc = match_top(db, agent, fx.vec + (size_t)s * EMBED_DIM, REP_TIER_BASIC, now, &p,
	    NULL, &top, &n)) != DB_OK)
		return rc;
	for (i = 0; i < n; i++)
		if (strcmp(top[i].id, study) == 0)
			*shown = 1;
	match_top_free(top, n);
	return DB_OK;
}

/* One transaction's worth of due matches; *n how many were due. */
static enum db_rc
release_batch(struct db *db, const struct match_fanout_cfg *c, int64_t now, size_t *n,
    size_t *emitted)
{
	struct db_match_due *v = NULL;
	size_t i, e;
	enum db_rc rc;
	int refreshed = 0;

	*emitted = 0;
	if ((rc = db_matches_due(db, now, FAN_RELEASE_BATCH, &v, n)) != DB_OK || *n == 0)
		goto out;
	for (i = 0; i < *n; i++) {
		struct db_match_due *d = &v[i];
		enum rep_tier tier = rep_tier_of(d->reputation);

		d->emit = d->open && d->claimed && rep_may_take_part(false, d->reputation);
		if (!d->emit || tier != REP_TIER_BASIC)
			continue;
		if (!refreshed && (rc = match_fanout_refresh(db, c, now, 0)) != DB_OK)
			goto out;
		refreshed = 1;
		if ((rc = basic_lists(db, c, now, d->agent, d->study, &d->emit)) != DB_OK)
			goto out;
	}
	rc = db_matches_release(db, v, *n, now, &e);
	if (rc == DB_OK)
		*emitted = e;
out:
	free(v);
	return rc;
}

enum db_rc
match_fanout_release(struct db *db, const struct match_fanout_cfg *c, int64_t now,
    size_t *emitted)
{
	size_t n, e, round;
	enum db_rc rc;

	*emitted = 0;
	for (round = 0; round < FAN_RELEASE_ROUNDS; round++) {
		if ((rc = release_batch(db, c, now, &n, &e)) != DB_OK)
			return rc;
		*emitted += e;
		if (n < FAN_RELEASE_BATCH)
			break;
	}
	return DB_OK;
}
