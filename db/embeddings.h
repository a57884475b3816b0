/* Embeddings of bios (subject agt_) and screening criteria (subject std_):
 * vectors computed by encoder/ (txn/embed.c), stored as float32 BLOBs. */
#ifndef ARPS_DB_EMBEDDINGS_H
#define ARPS_DB_EMBEDDINGS_H

#include <stddef.h>
#include <stdint.h>

#include "core/score.h"
#include "db/db.h"
#include "db/matched.h"

/* The key of a stored bio vector as an SQL expression of the row `e`
 * (32 bytes): its text's hash and the model that embedded it, so that a
 * worker's kept vector (match_bio_kept) is not used after a model change
 * re-embedded the same text (design.md §7.4). */
#define DB_BIO_VEC_KEY_SQL	"UNHEX(SHA2(CONCAT(e.text_hash, e.model), 256))"

/* Insert subject's row as 'processing' (no vector, no error, no attempt
 * yet) for the text whose BLAKE2b-256 is hash: the sweep computes it.
 * DB_DUP when the subject has a row. */
enum db_rc db_embedding_insert(struct db *db, const char *subject, const unsigned char hash[32],
    int64_t now);

/*
 * Store the vector of subject's text (vec, EMBED_DIM floats, ready to rank:
 * txn/embed.c centred it) as 'ready' with the model's tag, or with vec NULL
 * the row as 'failed' with error, but only while the row waits and its text
 * hash still matches this text (a newer text wins).  A study's ready
 * criteria are stored in one transaction with its study.matched (sm, NULL:
 * none; design.md §11): while the study is active, an event for each
 * match at once or already due, a study_matches row for each other.
 */
enum db_rc db_embedding_store(struct db *db, const char *subject, const char *text,
    const float *vec, const char *error, const char *model, int again, int64_t now,
    const struct db_study_matches *sm);

/* A waiting text as db_embedding_pending hands it over. */
struct db_embedding_wait {
	const char *subject, *text;
	int attempts;		/* tries so far of this text */
	int again;		/* 1: it had a vector (a model change queued it again) */
};

/*
 * At most `limit` waiting rows ('processing'): new texts before those a
 * model change queued again, bios before criteria (an agent waits for its
 * own), the newest first (the text a client is most likely waiting for;
 * a backlog drains behind it): each(arg, w) for each whose text exists (a gone one is set
 * 'failed', tagged model), stopping at its first non-DB_OK; *done counts the rows seen.
 */
enum db_rc db_embedding_pending(struct db *db, const char *model, size_t limit,
    enum db_rc (*each)(void *arg, const struct db_embedding_wait *w), void *arg, size_t *done);

/* Give up subject's waiting row while it still holds text ('failed' with
 * error, tagged model); text NULL: whatever it holds (the text is gone). */
enum db_rc db_embedding_fail(struct db *db, const char *subject, const char *text,
    const char *error, const char *model);

/* One more try of subject's text (if still its text), counted before it
 * starts. */
enum db_rc db_embedding_attempt(struct db *db, const char *subject, const char *text);

/* Put at most `limit` rows not stored by model back to 'processing'
 * (design.md §7.4: a model change re-embeds everything); *n how many. */
enum db_rc db_embedding_flip(struct db *db, const char *model, size_t limit, size_t *n);

/* The stored vector of a subject if ready: 1, 0 when none/not ready. */
int db_embedding_vector(struct db *db, const char *subject, float out[EMBED_DIM]);

#endif
