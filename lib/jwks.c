/* Public JWKS from PEM key files, for arps-admin jwks (design.md §6.11). */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>
#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <sodium.h>

#include "lib/jwks.h"

#define KID_MAX		255
#define RSA_MIN_BITS	2048
#define RSA_MAX_BYTES	1024

/* Never prompt: an encrypted key is an error. */
static int
no_pass(char *buf, int size, int rwflag, void *u)
{
	(void)buf;
	(void)size;
	(void)rwflag;
	(void)u;
	return -1;
}

/* Read a PEM private key, else a PEM public key, from path; NULL if neither. */
static EVP_PKEY *
pem_read(const char *path)
{
	EVP_PKEY *pkey = NULL;
	BIO *bio;

	if ((bio = BIO_new_file(path, "r")) == NULL)
		return NULL;
	pkey = PEM_read_bio_PrivateKey(bio, NULL, no_pass, NULL);
	if (pkey == NULL && BIO_reset(bio) == 0)
		pkey = PEM_read_bio_PUBKEY(bio, NULL, no_pass, NULL);
	BIO_free(bio);
	ERR_clear_error();
	return pkey;
}

/* Add key: base64url(buf) to o.  0 or -1. */
static int
add_b64(struct json_object *o, const char *key, const unsigned char *buf, size_t n)
{
	size_t sz = sodium_base64_ENCODED_LEN(n, sodium_base64_VARIANT_URLSAFE_NO_PADDING);
	char *s;
	int rc;

	if ((s = malloc(sz)) == NULL)
		return -1;
	sodium_bin2base64(s, sz, buf, n, sodium_base64_VARIANT_URLSAFE_NO_PADDING);
	rc = json_object_object_add(o, key, json_object_new_string(s));
	free(s);
	return rc;
}

/* Add key: big-endian bytes of the BIGNUM parameter name of pkey.  0 or -1. */
static int
add_bn(struct json_object *o, const char *key, const EVP_PKEY *pkey, const char *name)
{
	unsigned char buf[RSA_MAX_BYTES];
	BIGNUM *bn = NULL;
	int n, rc = -1;

	if (!EVP_PKEY_get_bn_param(pkey, name, &bn) || BN_is_zero(bn) ||
	    (n = BN_num_bytes(bn)) <= 0 || n > (int)sizeof buf ||
	    BN_bn2bin(bn, buf) != n)
		goto fail;
	rc = add_b64(o, key, buf, (size_t)n);
fail:
	BN_free(bn);
	return rc;
}

/* The public JWK of pkey with kid; NULL with a message on stderr. */
static struct json_object *
jwk_new(const EVP_PKEY *pkey, const char *path, const char *kid)
{
	unsigned char raw[32];
	struct json_object *o;
	size_t len = sizeof raw;

	if ((o = json_object_new_object()) == NULL)
		goto fail;
	if (EVP_PKEY_is_a(pkey, "RSA")) {
		if (EVP_PKEY_get_bits(pkey) < RSA_MIN_BITS) {
			fprintf(stderr, "jwks: %s: RSA key shorter than %d bits\n",
			    path, RSA_MIN_BITS);
			goto fail;
		}
		if (json_object_object_add(o, "kty", json_object_new_string("RSA")) ||
		    json_object_object_add(o, "alg", json_object_new_string("RS256")) ||
		    json_object_object_add(o, "use", json_object_new_string("sig")) ||
		    json_object_object_add(o, "kid", json_object_new_string(kid)) ||
		    add_bn(o, "n", pkey, OSSL_PKEY_PARAM_RSA_N) ||
		    add_bn(o, "e", pkey, OSSL_PKEY_PARAM_RSA_E)) {
			fprintf(stderr, "jwks: %s: cannot export the RSA key\n", path);
			goto fail;
		}
	} else if (EVP_PKEY_is_a(pkey, "ED25519")) {
		if (EVP_PKEY_get_raw_public_key(pkey, raw, &len) != 1 || len != sizeof raw ||
		    json_object_object_add(o, "kty", json_object_new_string("OKP")) ||
		    json_object_object_add(o, "crv", json_object_new_string("Ed25519")) ||
		    json_object_object_add(o, "alg", json_object_new_string("EdDSA")) ||
		    json_object_object_add(o, "use", json_object_new_string("sig")) ||
		    json_object_object_add(o, "kid", json_object_new_string(kid)) ||
		    add_b64(o, "x", raw, sizeof raw)) {
			fprintf(stderr, "jwks: %s: cannot export the Ed25519 key\n", path);
			goto fail;
		}
	} else {
		fprintf(stderr, "jwks: %s: not an RSA or Ed25519 key\n", path);
		goto fail;
	}
	return o;
fail:
	json_object_put(o);
	return NULL;
}

/* A key id: 1 to KID_MAX printable ASCII characters, no space. */
static bool
kid_valid(const char *kid)
{
	size_t i, n = strlen(kid);

	if (n == 0 || n > KID_MAX)
		return false;
	for (i = 0; i < n; i++)
		if (kid[i] < 0x21 || kid[i] > 0x7e)
			return false;
	return true;
}

int
jwks_from_pems(char *const *specs, int n, FILE *out)
{
	struct json_object *root = NULL, *keys, *k, *kv;
	EVP_PKEY *pkey = NULL;
	char *path = NULL, *kid;
	size_t j;
	int i, ret = -1;

	if (n <= 0) {
		fprintf(stderr, "jwks: no PATH=KID given\n");
		goto fail;
	}
	if ((root = json_object_new_object()) == NULL ||
	    (keys = json_object_new_array()) == NULL) {
		fprintf(stderr, "jwks: out of memory\n");
		goto fail;
	}
	if (json_object_object_add(root, "keys", keys) != 0) {
		json_object_put(keys);
		fprintf(stderr, "jwks: out of memory\n");
		goto fail;
	}
	for (i = 0; i < n; i++) {
		free(path);
		if ((path = strdup(specs[i])) == NULL) {
			fprintf(stderr, "jwks: out of memory\n");
			goto fail;
		}
		if ((kid = strrchr(path, '=')) == NULL || kid == path) {
			fprintf(stderr, "jwks: %s: expected PATH=KID\n", specs[i]);
			goto fail;
		}
		*kid++ = '\0';
		if (!kid_valid(kid)) {
			fprintf(stderr, "jwks: %s: bad key id\n", specs[i]);
			goto fail;
		}
		for (j = 0; j < json_object_array_length(keys); j++)
			if (json_object_object_get_ex(json_object_array_get_idx(keys, j),
			    "kid", &kv) && strcmp(json_object_get_string(kv), kid) == 0) {
				fprintf(stderr, "jwks: key id %s given twice\n", kid);
				goto fail;
			}
		if ((pkey = pem_read(path)) == NULL) {
			fprintf(stderr, "jwks: %s: cannot read a PEM key\n", path);
			goto fail;
		}
		if ((k = jwk_new(pkey, path, kid)) == NULL)
			goto fail;
		EVP_PKEY_free(pkey);
		pkey = NULL;
		if (json_object_array_add(keys, k) != 0) {
			json_object_put(k);
			fprintf(stderr, "jwks: out of memory\n");
			goto fail;
		}
	}
	if (fprintf(out, "%s\n", json_object_to_json_string_ext(root,
	    JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED |
	    JSON_C_TO_STRING_NOSLASHESCAPE)) < 0 || fflush(out) != 0) {
		fprintf(stderr, "jwks: write error\n");
		goto fail;
	}
	ret = 0;
fail:
	EVP_PKEY_free(pkey);
	json_object_put(root);
	free(path);
	return ret;
}
