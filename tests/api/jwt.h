/* Test helper: sign OpenID Connect ID tokens (compact JWS) with OpenSSL. */
#ifndef ARPS_TESTS_JWT_H
#define ARPS_TESTS_JWT_H

#include <stddef.h>
#include <stdint.h>

#define JWT_OMIT	INT64_MIN	/* leave a time claim out */

/* The claims of a payload; NULL strings and JWT_OMIT times are left out. */
struct jwt_claims {
	const char *iss;
	const char *sub;
	const char *aud;		/* raw JSON: "\"arps-dev\"" or "[\"a\",\"b\"]" */
	const char *email;
	int email_verified;		/* -1 leaves it out, else a JSON boolean */
	int64_t exp, iat, nbf;
};

/* Claims for the dev provider (issuer arps-dev-idp, audience arps-dev):
 * iat = now, exp = now + 600, no nbf, no email. */
void jwt_claims_dev(struct jwt_claims *c, const char *sub, int64_t now);

/* The payload JSON of c; malloc'd, NULL on failure. */
char *jwt_payload(const struct jwt_claims *c);

/*
 * Sign payload_json with the PEM private key at pem_path: alg "RS256" (RSA
 * key) or "EdDSA" (Ed25519 key); the header carries kid unless it is
 * NULL.  Returns a malloc'd compact JWS, or NULL on failure (including an
 * alg that does not fit the key).
 */
char *jwt_sign(const char *pem_path, const char *alg, const char *kid,
    const char *payload_json);

/* Like jwt_sign with a header given verbatim as JSON text; the algorithm
 * follows the key (RSA: RS256, Ed25519: EdDSA). */
char *jwt_sign_hdr(const char *pem_path, const char *header_json,
    const char *payload_json);

/* base64url(header) "." base64url(payload) "." base64url(sig): a token
 * with any signature (sig may be NULL when siglen is 0).  malloc'd. */
char *jwt_compose(const char *header_json, const char *payload_json,
    const void *sig, size_t siglen);

/* base64url of n bytes without padding; malloc'd. */
char *jwt_b64url(const void *buf, size_t n);

/* Write a fresh private key to path: alg "RS256" (RSA-2048) or "EdDSA".
 * Returns 0 or -1. */
int jwt_keygen(const char *alg, const char *path);
/* A fresh subject for an ID token: tag, a dash and 16 random hex digits. */
void sub_new(char *buf, size_t n, const char *tag);

#endif
