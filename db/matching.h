/*
 * Reads of GET /studies/available (design.md §6.6, design.md §7): the agent's bio
 * vector, the light candidate set, and criteria vectors by study id.  The
 * full study rows of the few listed come from db_study_get_many
 * (db/studies.h).  Return convention: enum db_rc (db/db.h).
 */
#ifndef ARPS_DB_MATCHING_H
#define ARPS_DB_MATCHING_H

#include <stddef.h>
#include <stdint.h>

#include "core/embed.h"
#include "core/ids.h"
#include "db/db.h"

/* Upper bound of the candidate set read per request (memory bound only:
 * far above any expected number of open studies). */
#define DB_MATCH_SCAN_MAX	100000
/* Ids per batched IN (...) read (a fixed statement, prepared once). */
#define DB_MATCH_BATCH		32

enum db_bio_state {
	DB_BIO_NONE,		/* never set */
	DB_BIO_PROCESSING,	/* embedding not computed yet */
	DB_BIO_READY,		/* vector filled */
	DB_BIO_FAILED,		/* the encoder refused the text */
};

/* One study an agent could accept. */
struct match_row {
	char	 id[IDS_BUFSZ];
	int64_t	 created_at;
};

/* The state of agent_id's bio embedding; vec filled when DB_BIO_READY. */
enum db_rc db_match_bio(struct db *, const char *agent_id, enum db_bio_state *state,
    float vec[EMBED_DIM]);

/*
 * Studies agent_id could accept at now (active, a free slot, deadline not
 * passed, never taken part in), newest first, at most DB_MATCH_SCAN_MAX;
 * only id and created_at, from one covering index.  Whether a criteria
 * embedding is ready is db_match_vectors' business.  *v is malloc'd
 * (caller frees; NULL when *n is 0).
 */
enum db_rc db_match_candidates(struct db *, const char *agent_id, int64_t now,
    struct match_row **v, size_t *n);

/*
 * Ready criteria vectors of ids[0..n), read DB_MATCH_BATCH ids per query:
 * vec + i * EMBED_DIM gets study ids[i]'s vector and found[i] = 1, or
 * found[i] = 0 when it has none (not ready, unknown id).
 */
enum db_rc db_match_vectors(struct db *, const char *const *ids, size_t n, float *vec,
    int *found);

#endif
