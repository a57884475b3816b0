/* What a worker keeps per agent, and the limits of each cache
 * (match/internal.h). */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db/groups.h"
#include "db/match.h"
#include "db/studies.h"
#include "match/engine.h"
#include "match/internal.h"

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
 * on the entries added or re-dated since (mx_ix.log): each is scored exactly
 * and goes in at its place, or, ranking after the last of an incomplete
 * list, stays out; an entry that left the index stays in the list until a
 * read finds it gone and skips it.  A list older than IX_LOG changes, or
 * than a full load, is ranked afresh.  Reading the list in order, skipping
 * what is past its deadline, not yet visible, gone or refused by the
 * database, gives exactly the page a full ranking at that instant gives;
 * when an incomplete list runs out first, the full ranking runs.
 */

/* The caches' sizes (match_set_limits); the test build's are small, so
 * that the API suites' pages overflow, drop and run out of the lists and
 * push texts out all the time, each page checked (match/engine.c). */
#ifdef ARPS_TEST_HOOKS
#define LIMITS_DEFAULT	{ RANK_SLOTS, 3, PAST_SLOTS, 8, BIO_SLOTS }
#else
#define LIMITS_DEFAULT	{ RANK_SLOTS, RANK_KEEP, PAST_SLOTS, SHOWN_SLOTS, BIO_SLOTS }
#endif
static struct match_limits lim = LIMITS_DEFAULT;
static struct match_stats stats;

static struct mx_rank *ranks;	/* RANK_SLOTS, lim.rank_slots used */
static uint64_t rank_clock;

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

/* The index slot of list entry x, or -1 when it left the index. */
long
mx_rank_slot(struct match_kent *x)
{
	size_t p;
	int found;

	if (x->slot < mx_ix.n && mx_ix.row[x->slot].seq == x->seq)
		return (long)x->slot;
	if (mx_ix.tab == NULL)
		return -1;
	p = mx_pos(x->id, &found);
	if (!found || mx_ix.row[mx_ix.tab[p]].seq != x->seq)
		return -1;
	x->slot = (uint32_t)mx_ix.tab[p];
	return (long)x->slot;
}

static void
rank_fill(struct match_kent *x, size_t slot, double similarity, enum rep_tier tier)
{
	memcpy(x->id, mx_ix.row[slot].id, IDS_BUFSZ);
	x->seq = mx_ix.row[slot].seq;
	x->created_at = mx_ix.row[slot].created_at;
	x->slot = (uint32_t)slot;
	x->similarity = similarity;
	x->score = match_score(similarity, tier);
}

/* Rank the whole index afresh for the list.  0 or -1. */
static int
rank_build(struct mx_rank *k, const float cbio[EMBED_DIM])
{
	struct match_params q = { 0, lim.rank_keep, lim.rank_keep };
	size_t m, kept, i;

	m = mx_score(cbio, 0, k->tier, 0, lim.rank_keep, 1);
	kept = match_rank(mx_ix.cand, m, k->tier, 0, &q);
	for (i = 0; i < kept; i++)
		rank_fill(&k->e[i], REF_SLOT(mx_ix.cand[i].ref), mx_ix.cand[i].similarity, k->tier);
	k->k.e = k->e;
	k->k.keep = lim.rank_keep;
	k->k.n = kept;
	k->k.complete = kept == mx_ix.n;
	k->epoch = mx_ix.epoch;
	k->gen = mx_ix.gen;
	return 0;
}

/* Catch the list up on one added or re-dated entry.  0, or -1 when the
 * list must be ranked afresh. */
static int
rank_merge(struct mx_rank *k, const struct mx_logent *l, const float cbio[EMBED_DIM])
{
	struct match_kent x;
	size_t slot, p;
	int found;

	match_kept_drop(&k->k, l->seq);	/* its old place, if listed */
	if (mx_ix.tab == NULL)
		return -1;
	p = mx_pos(l->id, &found);
	if (!found)
		return 0;	/* gone again */
	slot = (size_t)mx_ix.tab[p];
	if (mx_ix.row[slot].seq != l->seq)
		return 0;	/* a later change of it is in the log too */
	rank_fill(&x, slot, match_similarity(match_dot(cbio, mx_ix.vec + slot * EMBED_DIM,
	    EMBED_DIM)), k->tier);
	return match_kept_add(&k->k, &x) ? 0 : -1;
}


/* The agent's list, caught up with the index: NULL only out of memory. */
struct mx_rank *
mx_rank_get(const char *agent_id, const float bio[EMBED_DIM], enum rep_tier tier,
    const float cbio[EMBED_DIM])
{
	struct mx_rank *k = NULL;
	uint64_t g;
	size_t i, j;

	if (ranks == NULL && (ranks = calloc(RANK_SLOTS, sizeof *ranks)) == NULL)
		return NULL;
	for (i = 0; i < lim.rank_slots; i++)
		if (ranks[i].agent[0] != '\0' && strcmp(ranks[i].agent, agent_id) == 0) {
			k = &ranks[i];
			break;
		}
	if (k == NULL) {
		k = lru_pick(ranks, lim.rank_slots, sizeof *ranks, offsetof(struct mx_rank, used));
		if (k->agent[0] != '\0')
			stats.rank_evictions++;
		snprintf(k->agent, sizeof k->agent, "%s", agent_id);
		k->epoch = mx_ix.epoch + 1;	/* ranked afresh below */
	}
	k->used = ++rank_clock;
	if (k->tier != tier || memcmp(k->bio, bio, sizeof k->bio) != 0) {
		k->tier = tier;
		memcpy(k->bio, bio, sizeof k->bio);
		k->epoch = mx_ix.epoch + 1;
	}
	if (k->epoch == mx_ix.epoch && mx_ix.log != NULL && mx_ix.gen - k->gen <= IX_LOG) {
		for (g = k->gen + 1; g <= mx_ix.gen; g++)
			if (rank_merge(k, &mx_ix.log[g % IX_LOG], cbio) != 0)
				break;
		if (g > mx_ix.gen) {
			k->gen = mx_ix.gen;
			/* entries gone from the index leave the list; an
			 * incomplete list left empty is ranked afresh */
			for (i = j = 0; i < k->k.n; i++)
				if (mx_rank_slot(&k->e[i]) >= 0)
					k->e[j++] = k->e[i];
			k->k.n = j;
			if (j > 0 || k->k.complete) {
				stats.rank_hits++;
				return k;
			}
		}
	}
	(void)rank_build(k, cbio);
	stats.rank_builds++;
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
 * and the texts a page shows come from a small cache read by id on a miss
 * (read again after SHOWN_TTL: a researcher may edit them).  A poll where
 * nothing changed is then the key's one statement.  Otherwise (a change
 * pending, a request without the head: MCP, a key in its grace period) the
 * index is refreshed and the page confirmed by the database as before.
 * In the test build (ARPS_TEST_HOOKS) every fast page is compared with the
 * database's (match/engine.c: check_rank, fast_differs).
 */
#define SHOWN_BATCH	(lim.shown_slots / 2)	/* ids mx_confirm_kept looks at a time */

static struct mx_past *pasts;	/* PAST_SLOTS, lim.past_slots used */
static uint64_t past_clock;

/* The agent's past (read unless kept since the index last applied a
 * change), or NULL (*rc set) when it cannot be read. */
const struct mx_past *
mx_past_get(struct db *db, const char *agent_id, enum db_rc *rc)
{
	struct mx_past *pa;
	char (*ids)[IDS_BUFSZ];
	size_t i, n;

	*rc = DB_OK;
	if (pasts == NULL && (pasts = calloc(PAST_SLOTS, sizeof *pasts)) == NULL) {
		*rc = DB_ERR;
		return NULL;
	}
	for (pa = NULL, i = 0; i < lim.past_slots && pa == NULL; i++)
		if (strcmp(pasts[i].agent, agent_id) == 0)
			pa = &pasts[i];
	if (pa == NULL)
		pa = lru_pick(pasts, lim.past_slots, sizeof *pasts, offsetof(struct mx_past, used));
	if (strcmp(pa->agent, agent_id) == 0 && pa->epoch == mx_ix.past_epoch && pa->ids != NULL) {
		pa->used = ++past_clock;
		stats.past_hits++;
		return pa;
	}
	if ((*rc = db_match_past(db, agent_id, &ids, &n)) != DB_OK)
		return NULL;
	stats.past_reads++;
	if (pa->agent[0] != '\0' && strcmp(pa->agent, agent_id) != 0)
		stats.past_evictions++;
	free(pa->ids);
	snprintf(pa->agent, sizeof pa->agent, "%s", agent_id);
	pa->ids = ids;
	pa->n = n;
	pa->epoch = mx_ix.past_epoch;
	pa->used = ++past_clock;
	return pa;
}

static int
id_cmp(const void *a, const void *b)
{
	return strcmp(a, b);
}

static int
past_has(const struct mx_past *pa, const char *study_id)
{
	return bsearch(study_id, pa->ids, pa->n, sizeof *pa->ids, id_cmp) != NULL;
}

/* The texts a page shows of the studies listed lately, by the hash of the
 * id.  Reward, duration and URL never change after a study is created;
 * title and description may (PATCH /studies/{id}), so an entry is read
 * again once SHOWN_TTL seconds old (docs/api.md §7.4).  A study with
 * eligibility keeps its rules here too, read again once the index has
 * applied any change since (they change only while the study is paused,
 * and its resume is a change). */
#define SHOWN_TTL	60
static struct shown {
	uint64_t	 h;
	uint64_t	 used;
	int64_t		 at;	/* when read */
	struct study	 s;	/* s.id "": free; criteria and completion code not kept */
	uint64_t	 rules_epoch;	/* mx_ix.past_epoch + 1 when the rules were read */
	struct elig_rule *rules;
	size_t		 nrules;
} *shown;
static uint64_t shown_clock;

static void
shown_drop(struct shown *e)
{
	db_study_clear(&e->s);
	free(e->rules);
	memset(e, 0, sizeof *e);
}

static struct shown *
shown_find(const char *id, uint64_t h)
{
	size_t i;

	for (i = 0; shown != NULL && i < lim.shown_slots; i++)
		if (shown[i].h == h && shown[i].s.id[0] != '\0' && strcmp(shown[i].s.id, id) == 0)
			return &shown[i];
	return NULL;
}

/* Keep s (taken over: the caller no longer owns its strings): its entry,
 * or NULL out of memory. */
static struct shown *
shown_keep(struct study *s, int64_t now)
{
	struct shown *e;

	free(s->criteria);
	free(s->completion_code);
	s->criteria = s->completion_code = NULL;
	if (shown == NULL && (shown = calloc(SHOWN_SLOTS, sizeof *shown)) == NULL) {
		db_study_clear(s);
		return NULL;
	}
	e = lru_pick(shown, lim.shown_slots, sizeof *shown, offsetof(struct shown, used));
	if (e->s.id[0] != '\0')
		stats.shown_evictions++;
	shown_drop(e);
	e->s = *s;
	e->h = mx_hash(s->id);
	e->used = ++shown_clock;
	e->at = now;
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

/* Whether the agent of past pa may take part by e's rules (read). */
static int
rules_allow(const struct shown *e, const struct mx_past *pa)
{
	int64_t n_include = 0, in_include = 0, in_exclude = 0, took = 0;
	size_t i;

	for (i = 0; i < e->nrules; i++)
		switch (e->rules[i].kind) {
		case ELIG_INCLUDE_GROUP:
			n_include++;
			in_include += past_has(pa, e->rules[i].ref);
			break;
		case ELIG_EXCLUDE_GROUP:
			in_exclude += past_has(pa, e->rules[i].ref);
			break;
		case ELIG_EXCLUDE_STUDY:
			took += past_has(pa, e->rules[i].ref);
			break;
		default:
			break;
		}
	return elig_allows(n_include, in_include, in_exclude, took);
}

/* mx_confirm_kept for at most SHOWN_BATCH ids. */
static enum db_rc
confirm_kept_some(struct db *db, const struct mx_past *pa, int64_t now, const char **ids,
    const double *sim, const double *score, size_t n, struct match_top *top, size_t page,
    size_t *got)
{
	/* ent[i]: the text of ids[i] kept, NULL for none (or taken part in) */
	const char *miss[SHOWN_SLOTS / 2];
	struct shown *ent[SHOWN_SLOTS / 2] = { NULL };
	size_t missat[SHOWN_SLOTS / 2], i, k = 0, nr, pos, at, m;
	struct elig_rule *rules[DB_RULES_BATCH];
	size_t nrules[DB_RULES_BATCH];
	struct study *rows = NULL;
	int *found = NULL, in;
	enum db_rc rc = DB_OK;
	const struct match_row *r;

	if (n > SHOWN_SLOTS / 2)	/* n <= SHOWN_BATCH <= SHOWN_SLOTS / 2 */
		return DB_ERR;
	/* the kept ones marked used first, so that keeping the missing ones
	 * (n <= SHOWN_BATCH < lim.shown_slots) never pushes out one of these: the
	 * entries found stay valid through the whole batch */
	for (i = 0; i < n; i++) {
		if (past_has(pa, ids[i]))
			continue;
		if ((ent[i] = shown_find(ids[i], mx_hash(ids[i]))) != NULL &&
		    now - ent[i]->at >= SHOWN_TTL) {
			shown_drop(ent[i]);	/* its texts may have changed */
			ent[i] = NULL;
		}
		if (ent[i] != NULL) {
			ent[i]->used = ++shown_clock;
			stats.shown_hits++;
		} else {
			stats.shown_misses++;
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
				ent[missat[i]] = shown_keep(&rows[i], now);
	}
	/* eligibility (design.md §14), for the studies that have it: their
	 * rules kept (read in one statement a batch when not current), the
	 * agent's groups in its past.  A member added or removed is a change
	 * (020_group_changes.sql), so neither is stale on this path. */
	for (i = 0, nr = 0; i < n && mx_ix.tab != NULL; i++) {
		if (ent[i] == NULL || ent[i]->rules_epoch == mx_ix.past_epoch + 1)
			continue;
		pos = mx_pos(ids[i], &in);
		if (in && mx_ix.row[mx_ix.tab[pos]].elig) {
			missat[nr] = i;
			miss[nr++] = ids[i];
		}
	}
	for (at = 0; at < nr; at += m) {
		m = nr - at < DB_RULES_BATCH ? nr - at : DB_RULES_BATCH;
		if ((rc = db_study_rules_many(db, miss + at, m, rules, nrules)) != DB_OK)
			goto out;
		for (i = 0; i < m; i++) {
			free(ent[missat[at + i]]->rules);
			ent[missat[at + i]]->rules = rules[i];
			ent[missat[at + i]]->nrules = nrules[i];
			ent[missat[at + i]]->rules_epoch = mx_ix.past_epoch + 1;
		}
	}
	for (i = 0; i < n && *got < page; i++) {
		if (ent[i] == NULL || mx_ix.tab == NULL)
			continue;	/* taken part in, or no longer in the database */
		pos = mx_pos(ids[i], &in);
		if (!in)
			continue;	/* gone from the index */
		r = &mx_ix.row[mx_ix.tab[pos]];
		if ((r->deadline != 0 && r->deadline <= now) || r->occupied >= r->max_participants)
			continue;
		if (r->elig && !rules_allow(ent[i], pa))
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

enum db_rc
mx_confirm_kept(struct db *db, const struct mx_past *pa, int64_t now, const char **ids,
    const double *sim, const double *score, size_t n, struct match_top *top, size_t page,
    size_t *got)
{
	size_t at, m;
	enum db_rc rc = DB_OK;

	for (at = 0; at < n && *got < page && rc == DB_OK; at += m) {
		m = n - at < SHOWN_BATCH ? n - at : SHOWN_BATCH;
		rc = confirm_kept_some(db, pa, now, ids + at, sim + at, score + at, m, top, page, got);
	}
	return rc;
}

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

	for (i = 0; bios != NULL && i < lim.bio_slots; i++)
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
	for (b = NULL, i = 0; i < lim.bio_slots && b == NULL; i++)
		if (strcmp(bios[i].agent, agent_id) == 0)
			b = &bios[i];
	if (b == NULL) {
		b = lru_pick(bios, lim.bio_slots, sizeof *bios, offsetof(struct bio_kept, used));
		if (b->agent[0] != '\0')
			stats.bio_evictions++;
	}
	snprintf(b->agent, sizeof b->agent, "%s", agent_id);
	memcpy(b->hash, hash, sizeof b->hash);
	memcpy(b->vec, vec, sizeof b->vec);
	b->used = ++bio_clock;
}


int
match_set_limits(const struct match_limits *l)
{
	static const struct match_limits def = LIMITS_DEFAULT;
	size_t i;

	if (l == NULL)
		l = &def;
	if (l->rank_slots < 1 || l->rank_slots > RANK_SLOTS || l->rank_keep < 1 ||
	    l->rank_keep > RANK_KEEP || l->past_slots < 1 || l->past_slots > PAST_SLOTS ||
	    l->shown_slots < 2 || l->shown_slots > SHOWN_SLOTS || l->bio_slots < 1 ||
	    l->bio_slots > BIO_SLOTS)
		return -1;
	lim = *l;
	if (ranks != NULL)
		memset(ranks, 0, RANK_SLOTS * sizeof *ranks);
	for (i = 0; pasts != NULL && i < PAST_SLOTS; i++) {
		free(pasts[i].ids);
		memset(&pasts[i], 0, sizeof pasts[i]);
	}
	for (i = 0; shown != NULL && i < SHOWN_SLOTS; i++)
		shown_drop(&shown[i]);
	if (bios != NULL)
		memset(bios, 0, BIO_SLOTS * sizeof *bios);
	memset(&stats, 0, sizeof stats);
	return 0;
}

void
match_limits_get(struct match_limits *out)
{
	*out = lim;
}

void
match_stats_get(struct match_stats *out)
{
	*out = stats;
}
