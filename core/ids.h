/*
 * arps identifiers and secrets: generation from a caller-supplied random
 * source and pure format checks.  Nothing here allocates or does I/O;
 * outputs go to caller buffers of the *_BUFSZ sizes below (NUL included).
 * Generators return ARPS_OK, or ARPS_E_INTERNAL on a bad argument.
 * Convention of core/ (design.md §2.3, core/errors.h): enum arps_err, ARPS_OK
 * or the reason, or bool for a predicate; outputs written only on success.
 */
#ifndef ARPS_CORE_IDS_H
#define ARPS_CORE_IDS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "errors.h"

/* Randomness comes from the caller (libsodium randombytes_buf in production). */
struct arps_rng {
	void	(*fill)(void *ctx, void *buf, size_t n);
	void	 *ctx;
};

enum ids_kind {
	IDS_AGENT,		/* agt_ */
	IDS_STUDY,		/* std_ */
	IDS_PARTICIPATION,	/* prt_ */
	IDS_TRANSACTION,	/* txn_ */
	IDS_ACCOUNT,		/* acc_ */
	IDS_EVENT,		/* evt_ */
	IDS_WEBHOOK,		/* whk_ */
	IDS_BONUS,		/* bon_ */
	IDS_MESSAGE,		/* msg_ */
	IDS_CASHOUT,		/* cot_ */
	IDS_GROUP,		/* grp_ */
	IDS__MAX
};

#define IDS_PREFIX_LEN	4
#define IDS_BODY_LEN	16
#define IDS_LEN		(IDS_PREFIX_LEN + IDS_BODY_LEN)	/* 20 */
#define IDS_BUFSZ	(IDS_LEN + 1)

#define APIKEY_PREFIX	"arps_live_"
#define APIKEY_PREFIX_LEN 10
#define APIKEY_BODY_LEN	32
#define APIKEY_SUM_LEN	6
#define APIKEY_LEN	(APIKEY_PREFIX_LEN + APIKEY_BODY_LEN + APIKEY_SUM_LEN) /* 48 */
#define APIKEY_BUFSZ	(APIKEY_LEN + 1)

#define TOKEN_PREFIX	"act_"
#define TOKEN_BODY_LEN	43	/* base64url, no padding, of 32 random bytes */
#define TOKEN_LEN	(4 + TOKEN_BODY_LEN)	/* 47 */
#define TOKEN_BUFSZ	(TOKEN_LEN + 1)

#define CLAIM_ALPHABET	"ABCDEFGHJKLMNPQRSTUVWXYZ23456789" /* 32, no 0/O/1/I */
#define CLAIM_LEN	8
#define CLAIM_BUFSZ	(CLAIM_LEN + 1)

#define LOGIN_CODE_LEN	6
#define LOGIN_CODE_BUFSZ (LOGIN_CODE_LEN + 1)

#define ANON_PREFIX	"anon_"
#define ANON_RAW_LEN	8	/* bytes of HMAC the caller passes */
#define ANON_LEN	(5 + 2 * ANON_RAW_LEN)	/* 21 */
#define ANON_BUFSZ	(ANON_LEN + 1)

/* A researcher's pseudonym of an agent (design.md §13): psn_ + 16 hex. */
#define PSN_PREFIX	"psn_"
#define PSN_LEN		(4 + 2 * ANON_RAW_LEN)	/* 20 */
#define PSN_BUFSZ	(PSN_LEN + 1)

/* Prefix of a kind ("agt_", ...); NULL for an invalid kind. Static storage. */
const char	*ids_prefix(enum ids_kind kind);
/* Write a new id of `kind` (prefix + 16 unbiased base62) into out. */
enum arps_err	 ids_new(enum ids_kind kind, const struct arps_rng *rng, char out[IDS_BUFSZ]);
/* An id whose body starts with t (t < 62^9, about 1.35e16) as 9 base62
 * digits, then IDS_BODY_LEN - 9 random characters: ids of larger t sort
 * after (strcmp), whatever the random part.  For event ids in commit
 * order (t: a per-owner microsecond counter). */
#define IDS_ORDERED_DIGITS 9
enum arps_err	 ids_new_ordered(enum ids_kind kind, const struct arps_rng *rng, uint64_t t,
		    char out[IDS_BUFSZ]);
/* True when s (NUL-terminated) is exactly a well-formed id of `kind`. */
bool		 ids_valid(enum ids_kind kind, const char *s);
/* Kind of a well-formed id in *kind; false (kind untouched) if s is none. */
bool		 ids_kind_of(const char *s, enum ids_kind *kind);

/* Write a new API key: arps_live_ + 32 base62 + 6 base62 checksum. */
enum arps_err	 apikey_new(const struct arps_rng *rng, char out[APIKEY_BUFSZ]);
/* True when s has the API-key form and its checksum matches (no look-up).
 * Every single-character substitution anywhere in the 48 chars, and every
 * adjacent transposition within the first 42, is detected by construction. */
bool		 apikey_check(const char *s);
/* Write the 6-char checksum of prefix+body (first 42 chars of key) to out[6]
 * (not NUL-terminated). Exposed for tests; callers use apikey_new/check. */
void		 apikey_checksum(const char *key42, char out[APIKEY_SUM_LEN]);

/* Write a new access token: act_ + 43 base64url chars from 32 random bytes. */
enum arps_err	 token_new(const struct arps_rng *rng, char out[TOKEN_BUFSZ]);
/* True when s is act_ + 43 base64url chars in canonical (32-byte) form. */
bool		 token_valid(const char *s);

/* Write a new claim code: 8 unbiased chars of CLAIM_ALPHABET. */
enum arps_err	 claim_code_new(const struct arps_rng *rng, char out[CLAIM_BUFSZ]);
/* True when s is exactly 8 chars of CLAIM_ALPHABET (uppercase only). */
bool		 claim_code_valid(const char *s);
/* Upper-case s into out and validate it; false (out undefined) if invalid. */
bool		 claim_code_normalize(const char *s, char out[CLAIM_BUFSZ]);

/* Write a new e-mail login code: 6 unbiased decimal digits. */
enum arps_err	 login_code_new(const struct arps_rng *rng, char out[LOGIN_CODE_BUFSZ]);
/* True when s is exactly 6 ASCII decimal digits. */
bool		 login_code_valid(const char *s);

/* Write anon_ + 16 lowercase hex of raw[8] (the caller's HMAC prefix) to out. */
void		 anon_id_format(const uint8_t raw[ANON_RAW_LEN], char out[ANON_BUFSZ]);
/* True when s is anon_ + 16 lowercase hex chars. */
bool		 anon_id_valid(const char *s);
/* Write psn_ + 16 lowercase hex of raw[8] (the caller's HMAC prefix) to out. */
void		 pseudonym_format(const uint8_t raw[ANON_RAW_LEN], char out[PSN_BUFSZ]);
/* True when s is psn_ + 16 lowercase hex chars. */
bool		 pseudonym_valid(const char *s);

#endif
