/* Test helper: sign OpenID Connect ID tokens (compact JWS) with OpenSSL. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <sodium.h>

#include "tests/api/jwt.h"

void
jwt_claims_dev(struct jwt_claims *c, const char *sub, int64_t now)
{
	memset(c, 0, sizeof *c);
	c->iss = "arps-dev-idp";
	c->sub = sub;
	c->aud = "\"arps-dev\"";
	c->email_verified = -1;
	c->iat = now;
	c->exp = now + 600;
	c->nbf = JWT_OMIT;
}

char *
jwt_payload(const struct jwt_claims *c)
{
	struct json_object *o, *aud;
	char *s = NULL;

	if ((o = json_object_new_object()) == NULL)
		return NULL;
	if (c->iss != NULL)
		json_object_object_add(o, "iss", json_object_new_string(c->iss));
	if (c->sub != NULL)
		json_object_object_add(o, "sub", json_object_new_string(c->sub));
	if (c->aud != NULL) {
		if ((aud = json_tokener_parse(c->aud)) == NULL)
			goto fail;
		json_object_object_add(o, "aud", aud);
	}
	if (c->exp != JWT_OMIT)
		json_object_object_add(o, "exp", json_object_new_int64(c->exp));
	if (c->iat != JWT_OMIT)
		json_object_object_add(o, "iat", json_object_new_int64(c->iat));
	if (c->nbf != JWT_OMIT)
		json_object_object_add(o, "nbf", json_object_new_int64(c->nbf));
	if (c->email != NULL)
		json_object_object_add(o, "email", json_object_new_string(c->email));
	if (c->email_verified >= 0)
		json_object_object_add(o, "email_verified",
		    json_object_new_boolean(c->email_verified != 0));
	s = strdup(json_object_to_json_string_ext(o,
	    JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE));
fail:
	json_object_put(o);
	return s;
}

char *
jwt_b64url(const void *buf, size_t n)
{
	size_t sz = sodium_base64_ENCODED_LEN(n, sodium_base64_VARIANT_URLSAFE_NO_PADDING);
	char *s;

	if ((s = malloc(sz)) == NULL)
		return NULL;
	sodium_bin2base64(s, sz, buf, n, sodium_base64_VARIANT_URLSAFE_NO_PADDING);
	return s;
}

/* base64url(header) "." base64url(payload), malloc'd. */
static char *
signing_input(const char *header_json, const char *payload_json)
{
	char *h = NULL, *p = NULL, *s = NULL;
	size_t n;

	if ((h = jwt_b64url(header_json, strlen(header_json))) == NULL ||
	    (p = jwt_b64url(payload_json, strlen(payload_json))) == NULL)
		goto fail;
	n = strlen(h) + strlen(p) + 2;
	if ((s = malloc(n)) != NULL)
		snprintf(s, n, "%s.%s", h, p);
fail:
	free(h);
	free(p);
	return s;
}

/* input "." base64url(sig), malloc'd. */
static char *
append_sig(const char *input, const void *sig, size_t siglen)
{
	char *b, *s;
	size_t n;

	if ((b = jwt_b64url(sig, siglen)) == NULL)
		return NULL;
	n = strlen(input) + strlen(b) + 2;
	if ((s = malloc(n)) != NULL)
		snprintf(s, n, "%s.%s", input, b);
	free(b);
	return s;
}

char *
jwt_compose(const char *header_json, const char *payload_json, const void *sig,
    size_t siglen)
{
	char *in, *s;

	if ((in = signing_input(header_json, payload_json)) == NULL)
		return NULL;
	s = append_sig(in, siglen > 0 ? sig : "", siglen);
	free(in);
	return s;
}

static EVP_PKEY *
key_read(const char *path)
{
	EVP_PKEY *pkey;
	FILE *f;

	if ((f = fopen(path, "r")) == NULL)
		return NULL;
	pkey = PEM_read_PrivateKey(f, NULL, NULL, (void *)"");
	fclose(f);
	return pkey;
}

/* Sign with pkey: RSA with SHA-256 (PKCS#1 v1.5), Ed25519 pure. */
static char *
sign_with(EVP_PKEY *pkey, const char *header_json, const char *payload_json)
{
	unsigned char *sig = NULL;
	EVP_MD_CTX *md = NULL;
	char *in = NULL, *s = NULL;
	const EVP_MD *h;
	size_t siglen = 0;

	h = EVP_PKEY_is_a(pkey, "RSA") ? EVP_sha256() : NULL;
	if ((in = signing_input(header_json, payload_json)) == NULL ||
	    (md = EVP_MD_CTX_new()) == NULL ||
	    EVP_DigestSignInit(md, NULL, h, NULL, pkey) != 1 ||
	    EVP_DigestSign(md, NULL, &siglen, (unsigned char *)in, strlen(in)) != 1 ||
	    (sig = malloc(siglen)) == NULL ||
	    EVP_DigestSign(md, sig, &siglen, (unsigned char *)in, strlen(in)) != 1)
		goto fail;
	s = append_sig(in, sig, siglen);
fail:
	EVP_MD_CTX_free(md);
	free(sig);
	free(in);
	return s;
}

char *
jwt_sign_hdr(const char *pem_path, const char *header_json, const char *payload_json)
{
	EVP_PKEY *pkey;
	char *s;

	if ((pkey = key_read(pem_path)) == NULL)
		return NULL;
	s = sign_with(pkey, header_json, payload_json);
	EVP_PKEY_free(pkey);
	return s;
}

char *
jwt_sign(const char *pem_path, const char *alg, const char *kid, const char *payload_json)
{
	struct json_object *h = NULL;
	EVP_PKEY *pkey = NULL;
	char *s = NULL;

	if ((pkey = key_read(pem_path)) == NULL)
		goto fail;
	if (!(strcmp(alg, "RS256") == 0 && EVP_PKEY_is_a(pkey, "RSA")) &&
	    !(strcmp(alg, "EdDSA") == 0 && EVP_PKEY_is_a(pkey, "ED25519")))
		goto fail;
	if ((h = json_object_new_object()) == NULL)
		goto fail;
	json_object_object_add(h, "alg", json_object_new_string(alg));
	json_object_object_add(h, "typ", json_object_new_string("JWT"));
	if (kid != NULL)
		json_object_object_add(h, "kid", json_object_new_string(kid));
	s = sign_with(pkey, json_object_to_json_string_ext(h,
	    JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE), payload_json);
fail:
	json_object_put(h);
	EVP_PKEY_free(pkey);
	return s;
}

int
jwt_keygen(const char *alg, const char *path)
{
	EVP_PKEY *pkey = NULL;
	FILE *f = NULL;
	int ret = -1;

	if (strcmp(alg, "RS256") == 0)
		pkey = EVP_PKEY_Q_keygen(NULL, NULL, "RSA", (size_t)2048);
	else if (strcmp(alg, "EdDSA") == 0)
		pkey = EVP_PKEY_Q_keygen(NULL, NULL, "ED25519");
	if (pkey == NULL || (f = fopen(path, "w")) == NULL ||
	    PEM_write_PrivateKey(f, pkey, NULL, NULL, 0, NULL, NULL) != 1)
		goto fail;
	ret = 0;
fail:
	if (f != NULL && fclose(f) != 0)
		ret = -1;
	EVP_PKEY_free(pkey);
	return ret;
}

void
sub_new(char *buf, size_t n, const char *tag)
{
	snprintf(buf, n, "%s-%08x%08x", tag, randombytes_random(), randombytes_random());
}
