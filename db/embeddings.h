/* Embeddings of bios (subject agt_) and screening criteria (subject std_):
 * vectors computed by encoder/ (txn/embed.c), stored as float32 BLOBs. */
#ifndef ARPS_DB_EMBEDDINGS_H
#define ARPS_DB_EMBEDDINGS_H

#include <stddef.h>
#include <stdint.h>

#include "core/score.h"
#include "db/db.h"

/* Insert subject's row as 'processing' (no vector, no error, no attempt
 * yet) for the text whose BLAKE2b-256 is hash: the sweep computes it.
 * DB_DUP when the subject has a row. */
enum db_rc db_embedding_insert(struct db *db, const char *subject, const unsigned char hash[32],
    int64_t now);

/*
 * Store the vector of subject's text (vec, EMBED_DIM floats) as 'ready', or
 * with vec NULL the row as 'failed' with error, but only while the stored
 * text hash still matches this text (a newer text wins).  A study's ready
 * criteria are stored in one transaction with its study.matched events,
 * scored centred on mean_bio and mean_crit (either may be NULL).
 */
enum db_rc db_embedding_store(struct db *db, const char *subject, const char *text,
    const float *vec, const char *error, const float *mean_bio, const float *mean_crit,
    int64_t now);

/*
 * The embeddings left 'processing' for at least `age` seconds, at most
 * `limit`: each(arg, subject, text) is called for each whose text still
 * exists (a gone one is touched), stopping at its first non-DB_OK;
 * *done gets the number handed to each.
 */
enum db_rc db_embedding_pending(struct db *db, int64_t now, int64_t age, size_t limit,
    enum db_rc (*each)(void *arg, const char *subject, const char *text), void *arg,
    size_t *done);

/* The stored vector of a subject if ready: 1, 0 when none/not ready. */
int db_embedding_vector(struct db *db, const char *subject, float out[EMBED_DIM]);

#endif
