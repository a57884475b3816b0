/*
 * OpenID Connect ID-token verification, offline against a JWKS file.
 * Convention of lib/ (design.md §2.3): 0, or -1 with the reason in the
 * caller's err buffer (or where the function says); bool for a predicate.
 */
#ifndef ARPS_LIB_OIDC_H
#define ARPS_LIB_OIDC_H

#include <stddef.h>
#include <stdint.h>

#include "lib/config.h"

struct oidc_claims {
	char iss[256];
	char sub[256];
	char email[256];		/* "" when the token has none */
	int email_verified;		/* 1 only for the JSON boolean true, with a
					 * non-empty email (design.md §9.11) */
	int64_t exp, iat, nbf;		/* nbf 0 when absent */
};

/*
 * Verify a compact JWS ID token (RS256 or EdDSA, at most 8 KiB) for idp at
 * time now: signature by the key of idp->jwks chosen by kid (without a kid,
 * the only key of the token's type), iss, aud, exp, iat and nbf with 60 s
 * of leeway, sub.  Returns 0 with *out filled, or -1 with a short reason in
 * why (never the token): the caller answers ARPS_E_INVALID_TOKEN.  The key set is read once
 * per process and again when the file changes; not thread-safe.
 */
int oidc_verify(const struct config_idp *idp, const char *token, int64_t now,
    struct oidc_claims *out, char *why, size_t whysz);

#endif
