/* Embedding a text and storing its vector: the encoder (encoder/) run on a
 * bio or a study's criteria, the result stored by db/embeddings.c. */
#ifndef ARPS_TXN_EMBED_H
#define ARPS_TXN_EMBED_H

#include <stddef.h>
#include <stdint.h>

#include "db/db.h"
#include "encoder/embed.h"

/*
 * Embed text and store the vector for subject as 'ready' (or 'failed' with
 * the reason), but only while the stored text hash still matches this text
 * (a newer text wins).  enc may be NULL (no model): the row is left
 * 'processing' for the sweep.  scratch is embed_scratch_size(enc) bytes.
 */
enum db_rc txn_embed_subject(struct db *db, const struct embed_model *enc, void *scratch,
    const char *subject, const char *text, int64_t now);

/*
 * Retry embeddings left 'processing' for at least `age` seconds, at most
 * `limit` of them; *done gets the number handled.
 */
enum db_rc txn_embed_pending(struct db *db, const struct embed_model *enc, void *scratch,
    int64_t now, int64_t age, size_t limit, size_t *done);

#endif
