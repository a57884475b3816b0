/*
 * OpenID Connect ID-token verification, offline (design.md §6.11).
 *
 * A token is a compact JWS "header.payload.signature", each part strict
 * base64url without padding.  Accepted: alg RS256 (RSA PKCS#1 v1.5 with
 * SHA-256, OpenSSL 3) and EdDSA (Ed25519, libsodium); everything else,
 * including "none" and the HMAC family, is refused.  Header parameters that
 * name keys by reference or by value (jku, jwk, x5u, x5c) are refused, so
 * never followed: the key comes only from the provider's JWKS file, chosen
 * by kid.  A "crit" header is refused, since no extension is understood; so
 * is a header or payload that repeats a member name.
 * Claims: iss equal to the provider's issuer; aud (string or array) holding
 * its audience, and azp, when present, equal to it; exp required, iat
 * required, nbf optional, each with LEEWAY seconds of clock skew; sub
 * required.  The reasons written to why never quote the token.
 *
 * The JWKS file is parsed once per process and kept until its mtime, size
 * or inode changes.  Workers are single-threaded processes, so the cache
 * has no lock.
 */
#include <sys/stat.h>

#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>
#include <openssl/core_names.h>
#include <openssl/evp.h>
#include <openssl/param_build.h>
#include <sodium.h>

#include "core/validate.h"
#include "lib/oidc.h"

#define TOKEN_MAX	8192		/* bytes of the compact token */
#define HDR_MAX		1024		/* decoded header */
#define PAYLOAD_MAX	6144		/* decoded payload: 3/4 of TOKEN_MAX */
#define SIG_MAX		1024		/* RSA-8192 */
#define LEEWAY		60		/* seconds of clock skew for exp, nbf, iat */
#define JSON_DEPTH	16
#define CLAIM_MAX	255		/* iss, sub, email */

#define JWKS_FILE_MAX	(256 * 1024)
#define JWKS_KEYS_MAX	32
#define KID_MAX		255
#define RSA_MIN_BYTES	256		/* 2048-bit modulus at least */
#define RSA_MAX_BYTES	SIG_MAX
#define RSA_E_MAX	8

enum kty { KTY_RSA, KTY_ED25519 };

struct jwk {
	enum kty kty;
	char kid[KID_MAX + 1];
	int has_kid;
	char alg[16];			/* "" when the JWK does not say */
	EVP_PKEY *rsa;			/* KTY_RSA */
	unsigned char ed[crypto_sign_PUBLICKEYBYTES];	/* KTY_ED25519 */
};

struct jwks {
	char path[CONFIG_STR];
	struct timespec mtime;
	off_t size;
	ino_t ino;
	dev_t dev;
	int loaded;
	struct jwk keys[JWKS_KEYS_MAX];
	size_t nkeys;
};

/* One cache slot per configured provider (by JWKS path). */
static struct jwks cache[CONFIG_MAX_IDP];

static int
fail(char *why, size_t whysz, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Write the reason into why; always returns -1. */
static int
fail(char *why, size_t whysz, const char *fmt, ...)
{
	va_list ap;

	if (why != NULL && whysz > 0) {
		va_start(ap, fmt);
		vsnprintf(why, whysz, fmt, ap);
		va_end(ap);
	}
	return -1;
}

/* 0..63 for a base64url character, -1 otherwise. */
static int
b64val(unsigned char c)
{
	if (c >= 'A' && c <= 'Z')
		return c - 'A';
	if (c >= 'a' && c <= 'z')
		return c - 'a' + 26;
	if (c >= '0' && c <= '9')
		return c - '0' + 52;
	if (c == '-')
		return 62;
	if (c == '_')
		return 63;
	return -1;
}

/*
 * Strict base64url without padding: only the 64 characters, no '=', no
 * whitespace, a length that is not 1 mod 4, and zero bits left over.
 * Decodes n characters of s into out (at most outsz bytes).  Returns the
 * decoded length, or -1.
 */
static ssize_t
b64url_decode(const char *s, size_t n, unsigned char *out, size_t outsz)
{
	uint32_t acc = 0;
	size_t i, o = 0;
	int bits = 0, v;

	if (n % 4 == 1 || (n / 4) * 3 + (n % 4 ? n % 4 - 1 : 0) > outsz)
		return -1;
	for (i = 0; i < n; i++) {
		if ((v = b64val((unsigned char)s[i])) < 0)
			return -1;
		acc = (acc << 6) | (uint32_t)v;
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			out[o++] = (unsigned char)(acc >> bits);
			acc &= (1U << bits) - 1;
		}
	}
	if (acc != 0)		/* non-canonical: stray low bits */
		return -1;
	return (ssize_t)o;
}

/* No member name twice in one object, none holding U+0000 (design.md §9.7):
 * json-c keeps the last of two "alg" members, another JOSE parser the first. */
static bool
keys_unique(const unsigned char *buf, size_t len)
{
	size_t n = val_json_keys_scratch(len);
	void *scratch = malloc(n);
	enum val_json rc = scratch != NULL ?
	    val_json_keys((const char *)buf, len, scratch, n) : VAL_JSON_NOMEM;

	free(scratch);
	return rc == VAL_JSON_OK;
}

/*
 * Parse exactly len bytes of buf as one JSON object (strict, UTF-8
 * checked, no NUL bytes, bounded depth).  Returns the object or NULL.
 */
static struct json_object *
json_parse_obj(const unsigned char *buf, size_t len)
{
	struct json_tokener *tok;
	struct json_object *o;

	if (len == 0 || len > INT32_MAX || memchr(buf, '\0', len) != NULL)
		return NULL;
	if ((tok = json_tokener_new_ex(JSON_DEPTH)) == NULL)
		return NULL;
	json_tokener_set_flags(tok, JSON_TOKENER_STRICT | JSON_TOKENER_VALIDATE_UTF8);
	o = json_tokener_parse_ex(tok, (const char *)buf, (int)len);
	if (o != NULL && (json_tokener_get_error(tok) != json_tokener_success ||
	    json_tokener_get_parse_end(tok) != len ||
	    !json_object_is_type(o, json_type_object) || !keys_unique(buf, len))) {
		json_object_put(o);
		o = NULL;
	}
	json_tokener_free(tok);
	return o;
}

/*
 * The string member key of o: 1 with *s and *n set, 0 when absent or null,
 * -1 when present with another type or with an embedded NUL.
 */
static int
get_str(struct json_object *o, const char *key, const char **s, size_t *n)
{
	struct json_object *v;

	if (!json_object_object_get_ex(o, key, &v) || v == NULL)
		return 0;
	if (!json_object_is_type(v, json_type_string))
		return -1;
	*s = json_object_get_string(v);
	*n = (size_t)json_object_get_string_len(v);
	if (strlen(*s) != *n)
		return -1;
	return 1;
}

/* Copy a string member of at most max bytes into dst (max + 1 bytes);
 * same returns as get_str, and -1 when too long. */
static int
copy_str(struct json_object *o, const char *key, char *dst, size_t max)
{
	const char *s;
	size_t n;
	int rc;

	if ((rc = get_str(o, key, &s, &n)) != 1)
		return rc;
	if (n > max)
		return -1;
	memcpy(dst, s, n);
	dst[n] = '\0';
	return 1;
}

/*
 * A NumericDate member: 1 with *t set, 0 when absent or null, -1 for any
 * other type or a value out of range.  Fractions are truncated.
 */
static int
get_time(struct json_object *o, const char *key, int64_t *t)
{
	struct json_object *v;
	double d;

	if (!json_object_object_get_ex(o, key, &v) || v == NULL)
		return 0;
	if (json_object_is_type(v, json_type_int)) {
		*t = json_object_get_int64(v);
		/* json-c clamps larger values; treat the clamp as out of range */
		if (*t == INT64_MAX || *t == INT64_MIN)
			return -1;
		return 1;
	}
	if (json_object_is_type(v, json_type_double)) {
		d = json_object_get_double(v);
		if (!isfinite(d) || d <= -9.0e18 || d >= 9.0e18)
			return -1;
		*t = (int64_t)d;
		return 1;
	}
	return -1;
}

/* --- JWKS ---------------------------------------------------------------- */

static void
jwks_clear(struct jwks *k)
{
	size_t i;

	for (i = 0; i < k->nkeys; i++) {
		EVP_PKEY_free(k->keys[i].rsa);
		sodium_memzero(&k->keys[i], sizeof k->keys[i]);
	}
	k->nkeys = 0;
	k->loaded = 0;
}

/* Decode a base64url member into a bounded buffer; length or -1. */
static ssize_t
get_b64(struct json_object *o, const char *key, unsigned char *out, size_t outsz)
{
	const char *s;
	size_t n;

	if (get_str(o, key, &s, &n) != 1)
		return -1;
	return b64url_decode(s, n, out, outsz);
}

/* Build an RSA public key from big-endian n and e; NULL on failure. */
static EVP_PKEY *
rsa_from_ne(const unsigned char *n, size_t nlen, const unsigned char *e, size_t elen)
{
	OSSL_PARAM_BLD *bld = NULL;
	OSSL_PARAM *params = NULL;
	EVP_PKEY_CTX *ctx = NULL;
	EVP_PKEY *pkey = NULL;
	BIGNUM *bn = NULL, *be = NULL;

	if ((bn = BN_bin2bn(n, (int)nlen, NULL)) == NULL ||
	    (be = BN_bin2bn(e, (int)elen, NULL)) == NULL)
		goto fail;
	if ((bld = OSSL_PARAM_BLD_new()) == NULL ||
	    !OSSL_PARAM_BLD_push_BN(bld, OSSL_PKEY_PARAM_RSA_N, bn) ||
	    !OSSL_PARAM_BLD_push_BN(bld, OSSL_PKEY_PARAM_RSA_E, be) ||
	    (params = OSSL_PARAM_BLD_to_param(bld)) == NULL)
		goto fail;
	if ((ctx = EVP_PKEY_CTX_new_from_name(NULL, "RSA", NULL)) == NULL ||
	    EVP_PKEY_fromdata_init(ctx) <= 0 ||
	    EVP_PKEY_fromdata(ctx, &pkey, EVP_PKEY_PUBLIC_KEY, params) <= 0) {
		pkey = NULL;
		goto fail;
	}
fail:
	EVP_PKEY_CTX_free(ctx);
	OSSL_PARAM_free(params);
	OSSL_PARAM_BLD_free(bld);
	BN_free(bn);
	BN_free(be);
	return pkey;
}

/*
 * One JWK into *k.  Returns 1 when usable, 0 when it is to be skipped
 * (another key type or curve, or "use" other than "sig"), -1 when a key of
 * a supported type is malformed.
 */
static int
jwk_parse(struct json_object *o, struct jwk *k)
{
	unsigned char n[RSA_MAX_BYTES + 1], e[RSA_E_MAX + 1];
	const unsigned char *np, *ep;
	const char *kty, *crv, *use;
	ssize_t nl, el;
	size_t len;
	int rc;

	memset(k, 0, sizeof *k);
	if (!json_object_is_type(o, json_type_object) ||
	    get_str(o, "kty", &kty, &len) != 1)
		return -1;
	if ((rc = get_str(o, "use", &use, &len)) < 0)
		return -1;
	if (rc == 1 && strcmp(use, "sig") != 0)
		return 0;
	if ((rc = copy_str(o, "kid", k->kid, KID_MAX)) < 0)
		return -1;
	k->has_kid = rc == 1;
	if (copy_str(o, "alg", k->alg, sizeof k->alg - 1) < 0)
		return 0;	/* an algorithm we do not know */
	if (strcmp(kty, "RSA") == 0) {
		if (k->alg[0] != '\0' && strcmp(k->alg, "RS256") != 0)
			return 0;
		if ((nl = get_b64(o, "n", n, sizeof n)) < 0 ||
		    (el = get_b64(o, "e", e, sizeof e)) < 0)
			return -1;
		for (np = n; nl > 0 && *np == 0; np++, nl--)
			;
		for (ep = e; el > 0 && *ep == 0; ep++, el--)
			;
		if (nl < RSA_MIN_BYTES || nl > RSA_MAX_BYTES || (np[nl - 1] & 1) == 0)
			return -1;
		/* e odd and at least 3 */
		if (el == 0 || el > RSA_E_MAX || (ep[el - 1] & 1) == 0 ||
		    (el == 1 && ep[0] < 3))
			return -1;
		if ((k->rsa = rsa_from_ne(np, (size_t)nl, ep, (size_t)el)) == NULL)
			return -1;
		k->kty = KTY_RSA;
		return 1;
	}
	if (strcmp(kty, "OKP") == 0) {
		if (get_str(o, "crv", &crv, &len) != 1)
			return -1;
		if (strcmp(crv, "Ed25519") != 0)
			return 0;
		if (k->alg[0] != '\0' && strcmp(k->alg, "EdDSA") != 0 &&
		    strcmp(k->alg, "Ed25519") != 0)
			return 0;
		if (get_b64(o, "x", k->ed, sizeof k->ed) != (ssize_t)sizeof k->ed)
			return -1;
		k->kty = KTY_ED25519;
		return 1;
	}
	return 0;
}

/* Read and parse the JWKS file at path into k (cleared first).  0 or -1. */
static int
jwks_load(struct jwks *k, const char *path, const struct stat *st, char *why, size_t whysz)
{
	struct json_object *root = NULL, *arr, *o;
	unsigned char *buf = NULL;
	FILE *f = NULL;
	size_t i, len, nk;
	int rc, ret = -1;

	jwks_clear(k);
	if (st->st_size <= 0 || st->st_size > JWKS_FILE_MAX) {
		fail(why, whysz, "provider key set has a bad size");
		goto fail;
	}
	if ((f = fopen(path, "re")) == NULL ||
	    (buf = malloc((size_t)st->st_size + 1)) == NULL) {
		fail(why, whysz, "provider key set unreadable");
		goto fail;
	}
	len = fread(buf, 1, (size_t)st->st_size + 1, f);
	if (ferror(f) || len == 0 || len > (size_t)st->st_size) {
		fail(why, whysz, "provider key set unreadable");
		goto fail;
	}
	if ((root = json_parse_obj(buf, len)) == NULL ||
	    !json_object_object_get_ex(root, "keys", &arr) ||
	    !json_object_is_type(arr, json_type_array)) {
		fail(why, whysz, "provider key set is not a JWKS");
		goto fail;
	}
	nk = json_object_array_length(arr);
	for (i = 0; i < nk; i++) {
		o = json_object_array_get_idx(arr, i);
		if (k->nkeys == JWKS_KEYS_MAX) {
			fail(why, whysz, "provider key set has too many keys");
			goto fail;
		}
		rc = jwk_parse(o, &k->keys[k->nkeys]);
		if (rc < 0) {
			EVP_PKEY_free(k->keys[k->nkeys].rsa);
			fail(why, whysz, "provider key set has a malformed key");
			goto fail;
		}
		if (rc == 1)
			k->nkeys++;
	}
	snprintf(k->path, sizeof k->path, "%s", path);
	k->mtime = st->st_mtim;
	k->size = st->st_size;
	k->ino = st->st_ino;
	k->dev = st->st_dev;
	k->loaded = 1;
	ret = 0;
fail:
	if (ret != 0)
		jwks_clear(k);
	json_object_put(root);
	free(buf);
	if (f != NULL)
		fclose(f);
	return ret;
}

/* The cached key set for path, (re)loaded when the file changed; NULL on
 * failure with the reason in why. */
static const struct jwks *
jwks_get(const char *path, char *why, size_t whysz)
{
	struct jwks *k = NULL;
	struct stat st;
	size_t i;

	if (path[0] == '\0' || stat(path, &st) != 0) {
		fail(why, whysz, "provider key set unavailable");
		return NULL;
	}
	for (i = 0; i < CONFIG_MAX_IDP; i++)
		if (cache[i].loaded && strcmp(cache[i].path, path) == 0) {
			k = &cache[i];
			break;
		}
	if (k != NULL && k->mtime.tv_sec == st.st_mtim.tv_sec &&
	    k->mtime.tv_nsec == st.st_mtim.tv_nsec && k->size == st.st_size &&
	    k->ino == st.st_ino && k->dev == st.st_dev)
		return k;
	if (k == NULL) {
		for (i = 0; i < CONFIG_MAX_IDP; i++)
			if (!cache[i].loaded) {
				k = &cache[i];
				break;
			}
		if (k == NULL)		/* more paths than providers: reuse */
			k = &cache[0];
	}
	if (jwks_load(k, path, &st, why, whysz) != 0)
		return NULL;
	return k;
}

/* --- verification -------------------------------------------------------- */

/*
 * The key for a token with algorithm kty (and alg name) and kid (NULL when
 * the header has none).  Without a kid the key set must hold exactly one
 * key of that type.  NULL with the reason in why.
 */
static const struct jwk *
key_pick(const struct jwks *ks, enum kty kty, const char *alg, const char *kid,
    char *why, size_t whysz)
{
	const struct jwk *k, *found = NULL;
	size_t i, nmatch = 0;
	int kid_seen = 0;

	for (i = 0; i < ks->nkeys; i++) {
		k = &ks->keys[i];
		if (kid != NULL) {
			if (!k->has_kid || strcmp(k->kid, kid) != 0)
				continue;
			kid_seen = 1;
		}
		if (k->kty != kty)
			continue;
		if (k->alg[0] != '\0' && strcmp(k->alg, alg) != 0 &&
		    !(kty == KTY_ED25519 && strcmp(k->alg, "Ed25519") == 0))
			continue;
		if (found == NULL)
			found = k;
		nmatch++;
	}
	if (kid != NULL) {
		if (found == NULL)
			fail(why, whysz, kid_seen ? "key type does not match alg" :
			    "unknown key id");
		return found;
	}
	if (nmatch != 1) {
		fail(why, whysz, nmatch == 0 ? "no key for alg" :
		    "no key id and several candidate keys");
		return NULL;
	}
	return found;
}

static bool
verify_rs256(EVP_PKEY *pkey, const unsigned char *msg, size_t mlen,
    const unsigned char *sig, size_t slen)
{
	EVP_MD_CTX *md;
	bool ok;

	if (EVP_PKEY_get_size(pkey) <= 0 || slen != (size_t)EVP_PKEY_get_size(pkey))
		return false;
	if ((md = EVP_MD_CTX_new()) == NULL)
		return false;
	ok = EVP_DigestVerifyInit(md, NULL, EVP_sha256(), NULL, pkey) == 1 &&
	    EVP_DigestVerify(md, sig, slen, msg, mlen) == 1;
	EVP_MD_CTX_free(md);
	return ok;
}

static bool
verify_ed25519(const unsigned char pk[crypto_sign_PUBLICKEYBYTES],
    const unsigned char *msg, size_t mlen, const unsigned char *sig, size_t slen)
{
	if (slen != crypto_sign_BYTES)
		return false;
	return crypto_sign_verify_detached(sig, msg, mlen, pk) == 0;
}

/* 1 when the aud claim (string or array of strings) holds want, 0 when
 * not, -1 when malformed. */
static int
aud_has(struct json_object *p, const char *want)
{
	struct json_object *v, *e;
	const char *s;
	size_t i, n;
	int hit = 0;

	if (!json_object_object_get_ex(p, "aud", &v) || v == NULL)
		return -1;
	if (json_object_is_type(v, json_type_string)) {
		s = json_object_get_string(v);
		return strlen(s) == (size_t)json_object_get_string_len(v) &&
		    strcmp(s, want) == 0;
	}
	if (!json_object_is_type(v, json_type_array))
		return -1;
	if ((n = json_object_array_length(v)) == 0)
		return -1;
	for (i = 0; i < n; i++) {
		e = json_object_array_get_idx(v, i);
		if (e == NULL || !json_object_is_type(e, json_type_string))
			return -1;
		s = json_object_get_string(e);
		if (strlen(s) == (size_t)json_object_get_string_len(e) &&
		    strcmp(s, want) == 0)
			hit = 1;
	}
	return hit;
}

/* Check the payload's claims for idp at now and fill c.  0 or -1. */
static int
claims_check(struct json_object *p, const struct config_idp *idp, int64_t now,
    struct oidc_claims *c, char *why, size_t whysz)
{
	struct json_object *v;
	const char *s;
	size_t n;
	int rc;

	if (copy_str(p, "iss", c->iss, CLAIM_MAX) != 1)
		return fail(why, whysz, "iss missing or malformed");
	if (strcmp(c->iss, idp->issuer) != 0)
		return fail(why, whysz, "wrong issuer");
	if ((rc = aud_has(p, idp->audience)) < 0)
		return fail(why, whysz, "aud missing or malformed");
	if (rc == 0)
		return fail(why, whysz, "wrong audience");
	if ((rc = get_str(p, "azp", &s, &n)) < 0 ||
	    (rc == 1 && strcmp(s, idp->audience) != 0))
		return fail(why, whysz, "wrong authorized party");
	if (get_time(p, "exp", &c->exp) != 1)
		return fail(why, whysz, "exp missing or malformed");
	if (c->exp <= now - LEEWAY)
		return fail(why, whysz, "token expired");
	if (get_time(p, "iat", &c->iat) != 1)
		return fail(why, whysz, "iat missing or malformed");
	if (c->iat > now + LEEWAY)
		return fail(why, whysz, "token issued in the future");
	if ((rc = get_time(p, "nbf", &c->nbf)) < 0)
		return fail(why, whysz, "nbf malformed");
	if (rc == 1 && c->nbf > now + LEEWAY)
		return fail(why, whysz, "token not yet valid");
	if (copy_str(p, "sub", c->sub, CLAIM_MAX) != 1 || c->sub[0] == '\0')
		return fail(why, whysz, "sub missing or malformed");
	if (copy_str(p, "email", c->email, CLAIM_MAX) < 0)
		return fail(why, whysz, "email malformed");
	/* design.md §9.11: only the JSON boolean true verifies an address; the
	 * string "true" (which some providers send) does not. */
	c->email_verified = 0;
	if (json_object_object_get_ex(p, "email_verified", &v) && v != NULL) {
		if (json_object_is_type(v, json_type_boolean))
			c->email_verified = json_object_get_boolean(v) ? 1 : 0;
		else if (!json_object_is_type(v, json_type_string) ||
		    (strcmp(json_object_get_string(v), "true") != 0 &&
		    strcmp(json_object_get_string(v), "false") != 0))
			return fail(why, whysz, "email_verified malformed");
	}
	if (c->email[0] == '\0')
		c->email_verified = 0;
	return 0;
}

int
oidc_verify(const struct config_idp *idp, const char *token, int64_t now,
    struct oidc_claims *out, char *why, size_t whysz)
{
	unsigned char hdr[HDR_MAX], pay[PAYLOAD_MAX], sig[SIG_MAX];
	struct json_object *h = NULL, *p = NULL, *v;
	const struct jwks *ks;
	const struct jwk *key;
	const char *d1, *d2, *alg, *kid = NULL;
	struct oidc_claims c;
	ssize_t hl, pl, sl;
	size_t tlen, i, n;
	enum kty kty;
	int rc, ok;
	int ret = -1;

	if (why != NULL && whysz > 0)
		why[0] = '\0';
	memset(&c, 0, sizeof c);
	if (idp == NULL || token == NULL) {
		fail(why, whysz, "no token");
		goto fail;
	}
	if (sodium_init() < 0) {
		fail(why, whysz, "crypto library unavailable");
		goto fail;
	}
	if ((tlen = strnlen(token, TOKEN_MAX + 1)) > TOKEN_MAX) {
		fail(why, whysz, "token too large");
		goto fail;
	}
	/* exactly three non-empty segments of base64url characters */
	d1 = d2 = NULL;
	for (i = 0; i < tlen; i++) {
		if (token[i] == '.') {
			if (d1 == NULL)
				d1 = token + i;
			else if (d2 == NULL)
				d2 = token + i;
			else {
				fail(why, whysz, "not a compact JWS");
				goto fail;
			}
		} else if (b64val((unsigned char)token[i]) < 0) {
			fail(why, whysz, "bad character in token");
			goto fail;
		}
	}
	if (d1 == NULL || d2 == NULL || d1 == token || d2 == d1 + 1 ||
	    d2 + 1 == token + tlen) {
		fail(why, whysz, "not a compact JWS");
		goto fail;
	}
	if ((hl = b64url_decode(token, (size_t)(d1 - token), hdr, sizeof hdr)) < 0 ||
	    (pl = b64url_decode(d1 + 1, (size_t)(d2 - d1 - 1), pay, sizeof pay)) < 0 ||
	    (sl = b64url_decode(d2 + 1, (size_t)(token + tlen - d2 - 1), sig, sizeof sig)) < 0) {
		fail(why, whysz, "bad base64url");
		goto fail;
	}

	/* header */
	if ((h = json_parse_obj(hdr, (size_t)hl)) == NULL) {
		fail(why, whysz, "header is not a JSON object");
		goto fail;
	}
	if (get_str(h, "alg", &alg, &n) != 1) {
		fail(why, whysz, "alg missing");
		goto fail;
	}
	if (strcmp(alg, "RS256") == 0)
		kty = KTY_RSA;
	else if (strcmp(alg, "EdDSA") == 0)
		kty = KTY_ED25519;
	else {
		fail(why, whysz, "alg not accepted");
		goto fail;
	}
	if (json_object_object_get_ex(h, "crit", &v)) {
		fail(why, whysz, "crit header not supported");
		goto fail;
	}
	if (json_object_object_get_ex(h, "jku", &v) || json_object_object_get_ex(h, "jwk", &v) ||
	    json_object_object_get_ex(h, "x5u", &v) || json_object_object_get_ex(h, "x5c", &v)) {
		fail(why, whysz, "key by reference or by value (jku, jwk, x5u, x5c) not accepted");
		goto fail;
	}
	if ((rc = get_str(h, "kid", &kid, &n)) < 0 || (rc == 1 && n > KID_MAX)) {
		fail(why, whysz, "kid malformed");
		goto fail;
	}
	if (rc == 0)
		kid = NULL;

	/* key and signature over "header.payload" */
	if ((ks = jwks_get(idp->jwks, why, whysz)) == NULL)
		goto fail;
	if ((key = key_pick(ks, kty, alg, kid, why, whysz)) == NULL)
		goto fail;
	if (kty == KTY_RSA)
		ok = verify_rs256(key->rsa, (const unsigned char *)token,
		    (size_t)(d2 - token), sig, (size_t)sl);
	else
		ok = verify_ed25519(key->ed, (const unsigned char *)token,
		    (size_t)(d2 - token), sig, (size_t)sl);
	if (!ok) {
		fail(why, whysz, "bad signature");
		goto fail;
	}

	/* claims, only once the signature holds */
	if ((p = json_parse_obj(pay, (size_t)pl)) == NULL) {
		fail(why, whysz, "payload is not a JSON object");
		goto fail;
	}
	if (claims_check(p, idp, now, &c, why, whysz) != 0)
		goto fail;
	if (out != NULL)
		*out = c;
	ret = 0;
fail:
	json_object_put(h);
	json_object_put(p);
	sodium_memzero(&c, sizeof c);
	return ret;
}
