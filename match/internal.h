/*
 * The matching engine's parts (design.md §9.12): what one file of match/
 * gives the others.  Nothing here is for callers outside the folder; they
 * use match/engine.h.  The files, each using only those above it (no link
 * cycle, tools/check-deps.sh):
 *
 *   model.c   the mapped encoder model, its calibration means, the
 *             worker's encoder scratch
 *   index.c   the index of open studies and its refresh from the change
 *             sequence (study_changes); the pool master's copy
 *   rank.c    scoring the index for a bio: the int8 first pass, the top k
 *   cache.c   what a worker keeps per agent: kept rankings, pasts, the
 *             texts shown, bio vectors; their limits; the fast path's
 *             confirmation from them
 *   engine.c  match_top: a page, ranked and confirmed
 *
 * Return convention inside the folder as outside: a function that reads
 * the database returns enum db_rc (db/db.h); one that only allocates
 * returns 0, or -1 out of memory; a look-up returns a pointer or NULL.
 */
#ifndef ARPS_MATCH_INTERNAL_H
#define ARPS_MATCH_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "core/ids.h"
#include "core/score.h"
#include "db/db.h"
#include "db/match.h"
#include "db/studies.h"
#include "match/engine.h"

/* --- index.c (see the comment there) --- */

#define IX_GAP_WAIT	90	/* seconds a hole is waited for */
#define IX_START_BACK	120	/* a load reads the changes from this long before it */
#define IX_STALE	1800	/* idle longer: reload (study_changes keeps 3600 s) */
#define IX_MAX		(1u << 22)	/* studies (the slot fits 24 bits of ref) */
#define IX_SEQ_MAX	((int64_t)1 << 39)	/* studies.seq below it (40 bits of ref) */
#define IX_HEAP		4096	/* k of the first pass (beyond: every entry exactly) */
#define IX_LOG		4096	/* changes an agent's ranking can catch up on */
#define IX_EMPTY	(-1)
#define IX_GONE		(-2)

/* One entry of the log of entries added or re-dated. */
struct mx_logent {
	char	 id[IDS_BUFSZ];
	int64_t	 seq;
};

struct mx_index {
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
	struct match_cand *cand;	/* ranking scratch (rank.c), ccap entries each */
	float		*ap, *bd;	/* first pass: approximate cosine, bound */
	uint32_t	*vi;		/* first pass: the slot */
	double		*heap;		/* first pass: the best lower bounds */
	size_t		 ccap, hcap;
	/* what the agents' rankings (cache.c) must catch up on */
	uint64_t	 epoch;		/* +1 at every full load */
	uint64_t	 gen;		/* +1 at every entry added or re-dated */
	struct mx_logent *log;		/* IX_LOG entries: gen % IX_LOG */
	/* +1 whenever the index loads or applies a change: the agents'
	 * pasts kept for the fast path (cache.c) are read again after it */
	uint64_t	 past_epoch;
};

/* The worker's index (the master's before a fork). */
extern struct mx_index mx_ix;

/* realloc *p to n bytes.  0, or -1 (then *p is unchanged). */
int mx_grow(void **p, size_t n);
/* The hash of a study id (the index's table, the shown texts' cache). */
size_t mx_hash(const char *id);
/* The table position of id, or where it would go; *found 1 when held
 * (then mx_ix.tab[pos] is its slot).  Only with mx_ix.tab not NULL. */
size_t mx_pos(const char *id, int *found);
/* Bring the index up to date at now; until (monotonic microseconds, 0:
 * none): stop between pages of changes once past it.  enum db_rc. */
enum db_rc mx_refresh(struct db *db, int64_t now, int64_t until);
/* Whether the index is current when the key's look-up found no change
 * pending for it (the fast path). */
int mx_current(int pending, int64_t now);

/* --- rank.c --- */

/*
 * The ranking's tie-break: match_rank orders equal scores by created_at,
 * then by ref ascending; ref packs (IX_SEQ_MAX - seq) above the slot, so
 * ties go newest seq first (the order of studies.seq DESC), and the slot
 * rides along.
 */
#define REF_SLOT_BITS	24
#define REF_SLOT(ref)	((size_t)((ref) & ((1u << REF_SLOT_BITS) - 1)))

/* The ranking scratch for mx_ix.n entries.  0 or -1. */
int mx_scratch(void);
/* The candidates that can be among the best k for tier at now into
 * mx_ix.cand, exactly scored (match_rank then orders them); the count.
 * timeless: every entry, whatever its deadline and visibility. */
size_t mx_score(const float cbio[EMBED_DIM], int64_t now, enum rep_tier tier,
    int64_t first_access, size_t k, int timeless);

/* --- cache.c --- */

#define RANK_SLOTS	32	/* agents' rankings kept, at most */
#define RANK_KEEP	256	/* entries a ranking keeps, at most */
#define PAST_SLOTS	32	/* agents' pasts kept, at most */
#define SHOWN_SLOTS	256	/* texts shown kept, at most */
#define BIO_SLOTS	32	/* bio vectors kept, at most */

/* An agent's kept ranking (see cache.c). */
struct mx_rank {
	char	 agent[IDS_BUFSZ];	/* "": a free slot */
	enum rep_tier tier;
	float	 bio[EMBED_DIM];	/* as read, before centring */
	uint64_t epoch, gen;		/* the index this list is as of */
	uint64_t used;			/* last use (the least recent is replaced) */
	struct match_kept k;		/* the list (core/score.h) */
	struct match_kent e[RANK_KEEP];
};

/* An agent's past: the studies it took part in (or may not take) and the
 * participant groups it is in (db_match_past). */
struct mx_past {
	char	 agent[IDS_BUFSZ];
	uint64_t epoch;		/* mx_ix.past_epoch when read */
	char	(*ids)[IDS_BUFSZ];	/* sorted (strcmp) */
	size_t	 n;
	uint64_t used;
};

/* The index slot of list entry x, or -1 when it left the index. */
long mx_rank_slot(struct match_kent *x);
/* The agent's list, caught up with the index: NULL only out of memory. */
struct mx_rank *mx_rank_get(const char *agent_id, const float bio[EMBED_DIM],
    enum rep_tier tier, const float cbio[EMBED_DIM]);
/* The agent's past (read unless kept since the index last applied a
 * change), or NULL (*rc set) when it cannot be read. */
const struct mx_past *mx_past_get(struct db *db, const char *agent_id, enum db_rc *rc);
/*
 * The fast path's confirmation of ids[0..n) (with their similarity and
 * score): from the index, the agent's past pa and the texts kept, reading
 * only the texts not kept (one statement a batch); the confirmed ones are
 * appended in order to top[*got..page).  enum db_rc.
 */
enum db_rc mx_confirm_kept(struct db *db, const struct mx_past *pa, int64_t now,
    const char **ids, const double *sim, const double *score, size_t n,
    struct match_top *top, size_t page, size_t *got);

#endif
