#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

/* --- criteria vector cache (per worker) --- */

/*
 * Open addressing (linear probing) over a table twice the entry bound, so
 * it never fills.  A positive entry holds a vector in arena[slot]; a
 * negative one (slot -1) records that the study had no ready vector at
 * `checked` and is asked again only in a later second.  Entries are never
 * deleted one by one: when a request needs room, every entry it does not
 * use is dropped at once (vc_compact).
 */
struct vent {
	char	 id[IDS_BUFSZ];	/* "" when the table slot is empty */
	uint32_t gen;		/* last request that used it */
	int32_t	 slot;		/* vector index in arena, -1: none ready */
	int64_t	 checked;	/* negative: when the database said so */
};

#define VC_TABSZ	(2 * MATCH_CACHE_MAX)	/* power of two */

static struct {
	struct vent	*tab;
	size_t		 nent;		/* entries in tab */
	float		*arena;
	size_t		 count, alloc;	/* vectors held, room in arena */
	uint32_t	 gen;
} vc;

static size_t
vc_hash(const char *id)
{
	uint64_t h = 1469598103934665603ull;

	while (*id != '\0')
		h = (h ^ (unsigned char)*id++) * 1099511628211ull;
	h ^= h >> 33;		/* FNV-1a, then a 64-bit finaliser to spread it */
	h *= 0xff51afd7ed558ccdull;
	h ^= h >> 33;
	return (size_t)h & (VC_TABSZ - 1);
}

/* The table entry of id: its own, or the empty one where it would go. */
static struct vent *
vc_find(const char *id)
{
	size_t i = vc_hash(id);

	while (vc.tab[i].id[0] != '\0' && strcmp(vc.tab[i].id, id) != 0)
		i = (i + 1) & (VC_TABSZ - 1);
	return &vc.tab[i];
}

static int
vc_slot_cmp(const void *a, const void *b)
{
	const struct vent *x = a, *y = b;

	return x->slot < y->slot ? -1 : x->slot > y->slot;
}

/* Keep only the entries this request uses (gen == vc.gen), vectors
 * compacted to the front of the arena.  0, or -1 out of memory. */
static int
vc_compact(void)
{
	struct vent *keep;
	size_t i, k = 0, pos = 0;

	if ((keep = malloc((vc.nent ? vc.nent : 1) * sizeof *keep)) == NULL)
		return -1;
	for (i = 0; i < VC_TABSZ; i++)
		if (vc.tab[i].id[0] != '\0' && vc.tab[i].gen == vc.gen)
			keep[k++] = vc.tab[i];
	qsort(keep, k, sizeof *keep, vc_slot_cmp);	/* negatives first */
	memset(vc.tab, 0, VC_TABSZ * sizeof *vc.tab);
	for (i = 0; i < k; i++) {
		if (keep[i].slot >= 0) {
			if ((size_t)keep[i].slot != pos)
				memmove(vc.arena + pos * EMBED_DIM,
				    vc.arena + (size_t)keep[i].slot * EMBED_DIM,
				    EMBED_DIM * sizeof(float));
			keep[i].slot = (int32_t)pos++;
		}
		*vc_find(keep[i].id) = keep[i];
	}
	vc.nent = k;
	vc.count = pos;
	free(keep);
	return 0;
}

/* A free arena slot (growing it), or -1 when full or out of memory. */
static int32_t
vc_slot(void)
{
	size_t want;
	float *a;

	if (vc.count >= MATCH_CACHE_MAX)
		return -1;
	if (vc.count == vc.alloc) {
		want = vc.alloc ? 2 * vc.alloc : 256;
		if (want > MATCH_CACHE_MAX)
			want = MATCH_CACHE_MAX;
		if ((a = realloc(vc.arena, want * EMBED_DIM * sizeof(float))) == NULL)
			return -1;
		vc.arena = a;
		vc.alloc = want;
	}
	return (int32_t)vc.count++;
}

/* Record what the database said about id at now: vec, or NULL (none
 * ready).  0, or -1 when it could not be kept (the cache is full). */
static int
vc_put(const char *id, const float *vec, int64_t now)
{
	struct vent *e = vc_find(id);
	int32_t slot = -1;

	if (e->id[0] == '\0') {
		if (vc.nent >= MATCH_CACHE_MAX)
			return -1;
		snprintf(e->id, sizeof e->id, "%s", id);
		e->slot = -1;
		vc.nent++;
	}
	e->gen = vc.gen;
	e->checked = now;
	if (vec == NULL || e->slot >= 0)
		return 0;
	if ((slot = vc_slot()) < 0) {
		e->checked = INT64_MIN;	/* ready after all: ask again next time */
		return -1;
	}
	memcpy(vc.arena + (size_t)slot * EMBED_DIM, vec, EMBED_DIM * sizeof(float));
	e->slot = slot;
	return 0;
}

/*
 * The ready criteria vector of each study ids[i] into v[i] (NULL when it
 * has none).  Pointers stay valid until the next call; *spill holds the
 * vectors that did not fit in the cache (caller frees).
 */
static enum db_rc
vc_vectors(struct db *db, const char *const *ids, size_t n, int64_t now, const float **v,
    float **spill)
{
	const char **miss = NULL;
	size_t i, j, nmiss = 0, nnew = 0, nfound = 0;
	float *mvec = NULL;
	int *found = NULL, *kept = NULL;
	struct vent *e;
	enum db_rc rc = DB_ERR;

	*spill = NULL;
	if (vc.tab == NULL && (vc.tab = calloc(VC_TABSZ, sizeof *vc.tab)) == NULL)
		return DB_ERR;
	vc.gen++;
	if ((miss = malloc((n ? n : 1) * sizeof *miss)) == NULL)
		return DB_ERR;
	for (i = 0; i < n; i++) {
		e = vc_find(ids[i]);
		if (e->id[0] == '\0')
			nnew++;
		else
			e->gen = vc.gen;
		if (e->id[0] == '\0' || (e->slot < 0 && e->checked < now))
			miss[nmiss++] = ids[i];
	}
	if (nmiss > 0) {
		if ((mvec = malloc(nmiss * EMBED_DIM * sizeof(float))) == NULL ||
		    (found = malloc(nmiss * sizeof *found)) == NULL ||
		    (kept = calloc(nmiss, sizeof *kept)) == NULL)
			goto out;
		if ((rc = db_match_vectors(db, miss, nmiss, mvec, found)) != DB_OK)
			goto out;
		rc = DB_ERR;
		/* cached centred (design.md §7): once per load */
		for (j = 0; j < nmiss; j++)
			if (found[j])
				(void)match_centre(mvec + j * EMBED_DIM, mvec + j * EMBED_DIM,
				    mapped ? model.enc.mean_crit : NULL);
		for (j = 0; j < nmiss; j++)
			nfound += found[j] != 0;
		if ((vc.nent + nnew > MATCH_CACHE_MAX || vc.count + nfound > MATCH_CACHE_MAX) &&
		    vc_compact() != 0)
			goto out;
		for (j = 0; j < nmiss; j++)
			kept[j] = vc_put(miss[j], found[j] ? mvec + j * EMBED_DIM : NULL, now) == 0;
	}
	/* resolve: cached vectors by lookup, the others from mvec (the spill) */
	for (i = 0, j = 0; i < n; i++) {
		e = vc_find(ids[i]);
		v[i] = e->id[0] != '\0' && e->slot >= 0 ?
		    vc.arena + (size_t)e->slot * EMBED_DIM : NULL;
		if (j < nmiss && miss[j] == ids[i]) {
			if (found[j] && !kept[j])
				v[i] = mvec + j * EMBED_DIM;
			j++;
		}
	}
	rc = DB_OK;
	*spill = mvec;
	mvec = NULL;
out:
	free(mvec);
	free(found);
	free(kept);
	free(miss);
	return rc;
}

enum db_rc
match_top(struct db *db, const char *agent_id, const float bio[EMBED_DIM], enum rep_tier tier,
    int64_t now, const struct match_params *p, struct match_top **top, size_t *n)
{
	struct match_row *rows = NULL;
	struct match_cand *c = NULL;
	const char **ids = NULL;
	const float **v = NULL;
	float *spill = NULL, cbio[EMBED_DIM];
	size_t i, nrows = 0, m = 0, kept;
	enum db_rc rc;

	*top = NULL;
	*n = 0;
	(void)match_centre(cbio, bio, mapped ? model.enc.mean_bio : NULL);
	if ((rc = db_match_candidates(db, agent_id, now, &rows, &nrows)) != DB_OK || nrows == 0)
		return rc;
	rc = DB_ERR;
	if ((ids = malloc(nrows * sizeof *ids)) == NULL || (v = malloc(nrows * sizeof *v)) == NULL ||
	    (c = malloc(nrows * sizeof *c)) == NULL)
		goto out;
	for (i = 0; i < nrows; i++)
		ids[i] = rows[i].id;
	if ((rc = vc_vectors(db, ids, nrows, now, v, &spill)) != DB_OK)
		goto out;
	rc = DB_ERR;
	for (i = 0; i < nrows; i++) {
		if (v[i] == NULL)
			continue;
		c[m].ref = i;
		c[m].similarity = match_similarity(match_dot(cbio, v[i], EMBED_DIM));
		c[m].created_at = rows[i].created_at;
		c[m].score = 0;
		m++;
	}
	kept = match_rank(c, m, tier, now, p);
	if (kept > 0 && (*top = calloc(kept, sizeof **top)) == NULL)
		goto out;
	for (i = 0; i < kept; i++) {
		memcpy((*top)[i].id, rows[c[i].ref].id, IDS_BUFSZ);
		(*top)[i].similarity = c[i].similarity;
		(*top)[i].score = c[i].score;
	}
	*n = kept;
	rc = DB_OK;
out:
	free(spill);
	free(c);
	free(v);
	free(ids);
	free(rows);
	return rc;
}
