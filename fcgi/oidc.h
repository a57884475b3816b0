/* OpenID Connect ID-token verification, offline against a JWKS file. */
#ifndef ARPS_FCGI_OIDC_H
#define ARPS_FCGI_OIDC_H

#include <stddef.h>
#include <stdint.h>

#include "core/errors.h"
#include "lib/config.h"

struct oidc_claims {
	char iss[256];
	char sub[256];
	char email[256];
	int email_verified;
	int64_t exp, iat, nbf;
};

/* Verify a compact JWS ID token (RS256 or EdDSA) for idp at time now:
 * ARPS_OK with *out filled, or ARPS_E_INVALID_TOKEN with a short reason. */
enum arps_err oidc_verify(const struct config_idp *idp, const char *token, int64_t now,
    struct oidc_claims *out, char *why, size_t whysz);

#endif
