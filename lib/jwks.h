/*
 * Public JWKS from PEM key files (arps-admin jwks).
 * Convention of lib/ (design.md §2.3): 0, or -1 with the reason in the
 * caller's err buffer (or where the function says); bool for a predicate.
 */
#ifndef ARPS_LIB_JWKS_H
#define ARPS_LIB_JWKS_H

#include <stdio.h>

/*
 * Each of the n specs is "PATH=KID" (split at the last '='): a PEM private
 * or public key, RSA (at least 2048 bits) or Ed25519.  Writes one JSON
 * object {"keys": [...]} and a newline to out, holding only public parts:
 * RSA as {kty RSA, alg RS256, use sig, kid, n, e}, Ed25519 as
 * {kty OKP, crv Ed25519, alg EdDSA, use sig, kid, x}, base64url without
 * padding.  Key ids must be distinct.  Returns 0, or -1 with a message on
 * stderr and nothing written to out.  Never prompts for a passphrase.
 */
int jwks_from_pems(char *const *specs, int n, FILE *out);

#endif
