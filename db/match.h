/*
 * Reads of GET /studies/available (design.md §6.6, design.md §7, design.md §9.12):
 * the agent's bio vector, the open studies for a worker's index (a full
 * load, then the change sequence), criteria vectors by study id, and the
 * re-check of the few listed.  The
 * full study rows of the few listed come from db_study_get_many
 * (db/studies.h).  Return convention: enum db_rc (db/db.h).
 */
#ifndef ARPS_DB_MATCH_H
#define ARPS_DB_MATCH_H

#include <stddef.h>
#include <stdint.h>

#include "encoder/embed.h"
#include "core/ids.h"
#include "core/score.h"
#include "db/db.h"

/* Ids per batched IN (...) read (a fixed statement, prepared once). */
#define DB_MATCH_BATCH		32
/* Rows per page of db_match_load and db_match_changes. */
#define DB_MATCH_PAGE		2000
/* ids db_study_open_for confirms per statement (db/studies.c) */
#define DB_MATCH_RECHECK	30

enum db_bio_state {
	DB_BIO_NONE,		/* never set */
	DB_BIO_PROCESSING,	/* embedding not computed yet */
	DB_BIO_READY,		/* vector filled */
	DB_BIO_FAILED,		/* the encoder refused the text */
};

/* An open study as the per-worker index keeps it (match/index.c). */
struct match_row {
	char	 id[IDS_BUFSZ];
	unsigned char elig;	/* the study has eligibility rules (design.md §14): a
				 * listing asks the database for this one; in the
				 * padding after id, so the row is no larger */
	int64_t	 seq;		/* studies.seq: ties of equal score, newest first */
	int64_t	 created_at;
	int64_t	 deadline;	/* 0: none */
	int64_t	 occupied, max_participants;	/* slots held, and of the study */
	int64_t	 vtag;		/* CRC32 of the vector's model tag: another one, after a
				 * model change, replaces the vector (design.md §15) */
};

/* One row of the change sequence (008_study_changes.sql) with the study's
 * state as the same statement read it. */
struct match_change {
	int64_t		 seq;	/* study_changes.seq */
	int		 open;	/* active, a free slot, a ready criteria vector */
	struct match_row row;	/* id always; the rest when open */
};

/* The state of agent_id's bio embedding; vec and its key (the text's hash
 * and the model, DB_BIO_VEC_KEY_SQL) filled when DB_BIO_READY. */
enum db_rc db_match_bio(struct db *, const char *agent_id, enum db_bio_state *state,
    float vec[EMBED_DIM], unsigned char hash[32]);

/*
 * One page of the open studies (active, a free slot, a ready criteria
 * vector; the deadline is the reader's business) with studies.seq above
 * `after`, in seq order, at most DB_MATCH_PAGE: rows into *v (malloc'd,
 * caller frees) and their raw vectors into *vec (malloc'd, n * EMBED_DIM).
 * *nread rows were read (a full page: ask again after *last, the seq of the
 * last row read, kept or not).
 */
enum db_rc db_match_load(struct db *, int64_t after, struct match_row **v, float **vec,
    size_t *n, int64_t *last, size_t *nread);

/*
 * Where a full load starts reading the change sequence: the number of the
 * newest change written more than `back` seconds ago by the database's own
 * clock, which writes changed_at (0 when none).  Every change with
 * a number up to it was handed out before then, so (with transactions
 * bounded in time, design.md §9.5) committed long before a load that
 * starts a while later; see match/index.c.
 */
enum db_rc db_match_change_start(struct db *, int64_t back, int64_t *seq);

/*
 * The changes numbered above `after` and above s->hw or inside one of its
 * holes, in number order, at most DB_MATCH_PAGE, each with the study's
 * state read by the same statement.  A reader pages with `after` (0, then
 * the last number of the page before): merged holes may hold numbers
 * already seen, which come back on every read until the hole is forgotten,
 * so paging by what was seen alone could read the same page forever.  *v
 * malloc'd (caller frees).
 */
enum db_rc db_match_changes(struct db *, const struct match_seq *s, int64_t after,
    struct match_change **v, size_t *n);

/*
 * Ready criteria vectors of ids[0..n), read DB_MATCH_BATCH ids per query:
 * vec + i * EMBED_DIM gets study ids[i]'s vector and found[i] = 1, or
 * found[i] = 0 when it has none (not ready, unknown id).
 */
enum db_rc db_match_vectors(struct db *, const char *const *ids, size_t n, float *vec,
    int *found);

/*
 * The studies agent_id has (or had) a participation in, its owner's own
 * open studies (it may take none of them) and the participant groups it
 * is in (ids' prefixes keep studies and groups apart): *ids malloc'd
 * (caller frees), *n of them, sorted by strcmp.
 */
enum db_rc db_match_past(struct db *, const char *agent_id, char (**ids)[IDS_BUFSZ], size_t *n);

/* What a reader at s reads of study_changes c: above hw (the first
 * placeholder) or inside one of MATCH_GAPS_MAX holes (a pair each, NULL
 * when unused); db_match_pending_params fills them. */
#define DB_MATCH_GAP1_SQL	" OR c.seq BETWEEN ? AND ?"
#define DB_MATCH_GAP4_SQL	DB_MATCH_GAP1_SQL DB_MATCH_GAP1_SQL DB_MATCH_GAP1_SQL \
				DB_MATCH_GAP1_SQL
#define DB_MATCH_UNREAD_SQL	"(c.seq > ?" DB_MATCH_GAP4_SQL DB_MATCH_GAP4_SQL ")"
_Static_assert(MATCH_GAPS_MAX == 8, "DB_MATCH_UNREAD_SQL has 8 BETWEEN pairs");
/*
 * Whether the change sequence holds a row a reader at s would read (above
 * s->hw or inside one of its holes; db_match_changes with after 0): an SQL
 * expression of DB_MATCH_PENDING_NP placeholders, which
 * db_match_pending_params fills from s.  The key's look-up of GET
 * /studies/available selects it (db_agent_by_key_heads).
 */
#define DB_MATCH_PENDING_SQL \
	"EXISTS(SELECT 1 FROM study_changes c WHERE " DB_MATCH_UNREAD_SQL ")"
#define DB_MATCH_PENDING_NP	(1 + 2 * MATCH_GAPS_MAX)
/* The same for a reader without holes (s->ngap 0), one placeholder: half
 * the optimiser's work of the whole form. */
#define DB_MATCH_PENDING1_SQL \
	"EXISTS(SELECT 1 FROM study_changes c WHERE c.seq > ?)"
void db_match_pending_params(struct dbp p[DB_MATCH_PENDING_NP], const struct match_seq *s);

/* The head of db_agent_by_key_heads, read now (the test build's
 * self-check, match/engine.c): whether a change is pending for a reader
 * at s. */
enum db_rc db_match_pending(struct db *, const struct match_seq *s, int *pending);

#endif
