/*
 * Secrets and randomness for every binary (libsodium).
 * Convention of lib/ (design.md §2.3): 0, or -1 with the reason in the
 * caller's err buffer (or where the function says); bool for a predicate.
 */
#ifndef ARPS_LIB_SECRET_H
#define ARPS_LIB_SECRET_H

#include <stddef.h>

#include "core/ids.h"

struct config;

/* The process's random source for core/ (randombytes_buf). */
extern const struct arps_rng secret_rng;

/* Initialise libsodium; 0 or -1. */
int secret_init(void);

/*
 * Keyed BLAKE2b-256 of a secret (API key, access token, claim code, login
 * code) under the server pepper, with a purpose tag for domain separation.
 * Only this hash is ever stored.
 */
void secret_hash(const struct config *cfg, const char *purpose, const char *s, size_t n,
    unsigned char out[32]);

/* anon_ + 16 hex of HMAC-SHA256(id_secret, study_id "/" agent_id). */
void secret_anon_id(const struct config *cfg, const char *study_id, const char *agent_id,
    char out[ANON_BUFSZ]);

/* psn_ + 16 hex of HMAC-SHA256(id_secret, "psn/" account_id "/" agent_id):
 * one researcher's stable name for an agent (design.md §13). */
void secret_pseudonym(const struct config *cfg, const char *account_id, const char *agent_id,
    char out[PSN_BUFSZ]);

#endif
