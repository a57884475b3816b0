/* Embeddings of bios (subject agt_) and screening criteria (subject std_):
 * computed with core's encoder, stored as float32 BLOBs. */
#ifndef ARPS_DB_EMBEDDINGS_H
#define ARPS_DB_EMBEDDINGS_H

#include <stddef.h>
#include <stdint.h>

#include "core/embed.h"
#include "db/db.h"

/*
 * Embed text and store the vector for subject as 'ready' (or 'failed' with
 * the reason), but only while the stored text hash still matches this text
 * (a newer text wins).  enc may be NULL (no model): the row is left
 * 'processing' for the sweep.  scratch is embed_scratch_size(enc) bytes.
 */
enum db_rc db_embed_subject(struct db *db, const struct embed_model *enc, void *scratch,
    const char *subject, const char *text, int64_t now);

/*
 * Retry embeddings left 'processing' for at least `age` seconds, at most
 * `limit` of them; *done gets the number handled.
 */
enum db_rc db_embed_pending(struct db *db, const struct embed_model *enc, void *scratch,
    int64_t now, int64_t age, size_t limit, size_t *done);

/* The stored vector of a subject if ready: 1, 0 when none/not ready. */
int db_embedding_vector(struct db *db, const char *subject, float out[EMBED_DIM]);

#endif
