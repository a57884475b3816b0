/*
 * The embedding queue's work (design.md §1.6 and design.md §7.4), for arps-embed: every row of
 * `embeddings` in 'processing' is a text waiting for its vector (a bio, or a
 * study's criteria); a newer text of the same subject replaces the older in
 * its row, so only the newest is ever embedded.  The encoder is given as an
 * embedder (below) so that this layer needs nothing of encoder/.
 * Return convention: enum db_rc (db/db.h).
 */
#ifndef ARPS_TXN_EMBED_H
#define ARPS_TXN_EMBED_H

#include <stddef.h>
#include <stdint.h>

#include "db/db.h"
#include "db/matched.h"

/* Which side of a match a text is: an agent's bio, or a study's criteria. */
enum embed_role { EMBED_ROLE_BIO, EMBED_ROLE_CRITERIA };

struct embedder {
	/* the model's tag, stored with every vector: a row of another tag is
	 * computed again (name and a hash of the model file, <= 63 bytes) */
	const char *model;
	/* EMBED_DIM floats for text into out; 0, or -1 with a reason */
	int (*embed)(void *ctx, enum embed_role role, const char *text, size_t len,
	    float *out, const char **why);
	void *ctx;
	/* the mean raw vector of each role (EMBED_DIM), subtracted before a
	 * vector is stored (match_centre, design.md §7), or NULL: stored raw */
	const float *mean_bio, *mean_crit;
	/* study.matched (design.md §11): the agents a new study's criteria
	 * vector (centred) is announced to, picked off any transaction
	 * (match/fanout.c); *m malloc'd (the caller frees it), *n entries,
	 * delay (seconds after publication) filled.  DB_OK or an error (the
	 * text is tried again next round).  NULL: no study.matched. */
	enum db_rc (*match)(void *ctx, struct db *db, const float *vec,
	    struct db_study_matches *sm);
};

/* A text that made the embedder fail this many times (a crash included:
 * the try is counted before it starts) is stored 'failed'. */
#define EMBED_MAX_ATTEMPTS 3

/*
 * One round: put back to 'processing' at most `limit` rows stored by
 * another model (*flipped), then embed and store at most `limit` waiting
 * texts in db_embedding_pending's order (*done).  A text changed meanwhile is not stored
 * (the row waits for the new one).
 */
enum db_rc txn_embed_round(struct db *db, const struct embedder *e, int64_t now, size_t limit,
    size_t *flipped, size_t *done);

/* Every row stored by another model back to 'processing' at once (a
 * statement a thousand rows), so that rows of two models are ranked side by
 * side only for the seconds this takes; *flipped how many.  arps-embed runs
 * it when it starts. */
enum db_rc txn_embed_flip_all(struct db *db, const struct embedder *e, size_t *flipped);

#endif
