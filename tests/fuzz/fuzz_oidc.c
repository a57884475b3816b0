/*
 * libFuzzer: the OIDC parsers (make fuzz).  The first byte picks a mode:
 *   0  the bytes are an ID token: oidc_verify against a key set of one
 *      RSA and one Ed25519 key (made at start by lib/jwks.c from fresh
 *      PEM keys);
 *   1  the bytes are a JWS header and payload (split at the first NUL; no
 *      NUL: a fixed EdDSA header), which the harness encodes and signs
 *      with the Ed25519 key, so the header rules and every claim check
 *      run past the signature;
 *   2  the bytes are a JWKS file: parsed (jwks_load) and asked for a key
 *      of each type, with and without a kid;
 *   3  the bytes are a PEM key file for arps-admin jwks (lib/jwks.c).
 *
 * Checked beyond "no crash": a refusal is -1 with a
 * reason; an accepted token has the provider's issuer, a sub, claims
 * within their buffers, exp/iat/nbf inside the leeway, email_verified only
 * with an e-mail; a key set that loads holds at most JWKS_KEYS_MAX keys of
 * known types and one that fails holds none; a PEM that converts gives one
 * JSON object {"keys": [one key with the given kid]}.
 *
 * lib/oidc.c is included here (not linked) to reach its static parsers.
 */
#include <fcntl.h>
#include <unistd.h>

#include <openssl/pem.h>

#include "lib/jwks.h"
#include "lib/oidc.c"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FCHECK(c) do { if (!(c)) { \
	fprintf(stderr, "fuzz invariant broken: %s (line %d)\n", #c, __LINE__); abort(); } } while (0)

static char g_dir[64];
static struct config_idp g_idp;
static unsigned char g_edsk[crypto_sign_SECRETKEYBYTES];
static const int64_t g_now = 1700000000;

static void
cleanup(void)
{
	static const char *const names[] = { "ed.pem", "rsa.pem", "keys.jwks", "fuzz.jwks",
	    "fuzz.pem" };
	char p[128];
	size_t i;

	for (i = 0; i < sizeof names / sizeof names[0]; i++) {
		snprintf(p, sizeof p, "%s/%s", g_dir, names[i]);
		unlink(p);
	}
	rmdir(g_dir);
}

static void
write_file(const char *path, const void *buf, size_t len)
{
	FILE *f = fopen(path, "we");

	if (f == NULL || fwrite(buf, 1, len, f) != len || fclose(f) != 0) {
		perror(path);
		abort();
	}
}

static void
write_pem(const char *path, EVP_PKEY *k)
{
	FILE *f = fopen(path, "we");

	if (f == NULL || PEM_write_PrivateKey(f, k, NULL, NULL, 0, NULL, NULL) != 1 ||
	    fclose(f) != 0)
		abort();
}

/* Keys, their PEM files and the provider's JWKS, once per process; the
 * files live in memory (/dev/shm) when it is there. */
static void
init(void)
{
	char ed[96], rsa[96], *specs[2];
	unsigned char seed[32];
	size_t slen = sizeof seed;
	unsigned char pk[crypto_sign_PUBLICKEYBYTES];
	EVP_PKEY *kr, *ke;
	FILE *f;

	if (sodium_init() < 0)
		abort();
	snprintf(g_dir, sizeof g_dir, "%s/arps-fuzz-XXXXXX",
	    access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp");
	if (mkdtemp(g_dir) == NULL)
		abort();
	atexit(cleanup);
	if ((kr = EVP_PKEY_Q_keygen(NULL, NULL, "RSA", (size_t)2048)) == NULL ||
	    (ke = EVP_PKEY_Q_keygen(NULL, NULL, "ED25519")) == NULL)
		abort();
	snprintf(rsa, sizeof rsa, "%s/rsa.pem", g_dir);
	snprintf(ed, sizeof ed, "%s/ed.pem", g_dir);
	write_pem(rsa, kr);
	write_pem(ed, ke);
	if (EVP_PKEY_get_raw_private_key(ke, seed, &slen) != 1 || slen != 32 ||
	    crypto_sign_seed_keypair(pk, g_edsk, seed) != 0)
		abort();
	EVP_PKEY_free(kr);
	EVP_PKEY_free(ke);
	snprintf(g_idp.name, sizeof g_idp.name, "fuzz");
	snprintf(g_idp.issuer, sizeof g_idp.issuer, "https://idp.example");
	snprintf(g_idp.audience, sizeof g_idp.audience, "arps");
	snprintf(g_idp.jwks, sizeof g_idp.jwks, "%s/keys.jwks", g_dir);
	strcat(rsa, "=rsa1");
	strcat(ed, "=ed1");
	specs[0] = rsa;
	specs[1] = ed;
	if ((f = fopen(g_idp.jwks, "we")) == NULL || jwks_from_pems(specs, 2, f) != 0 ||
	    fclose(f) != 0)
		abort();
}

static size_t
b64url(const unsigned char *in, size_t n, char *out, size_t outsz)
{
	sodium_bin2base64(out, outsz, in, n, sodium_base64_VARIANT_URLSAFE_NO_PADDING);
	return strlen(out);
}

static void
check_verify(const char *token)
{
	struct oidc_claims c;
	char why[128];
	int e;

	memset(&c, 0xa5, sizeof c);
	e = oidc_verify(&g_idp, token, g_now, &c, why, sizeof why);
	if (e != 0) {
		FCHECK(e == -1);
		FCHECK(why[0] != '\0' && strlen(why) < sizeof why);
		return;
	}
	FCHECK(strcmp(c.iss, g_idp.issuer) == 0);
	FCHECK(strnlen(c.sub, sizeof c.sub) < sizeof c.sub && c.sub[0] != '\0');
	FCHECK(strnlen(c.email, sizeof c.email) < sizeof c.email);
	FCHECK(c.email_verified == 0 || (c.email_verified == 1 && c.email[0] != '\0'));
	FCHECK(c.exp > g_now - LEEWAY && c.iat <= g_now + LEEWAY && c.nbf <= g_now + LEEWAY);
}

/* Mode 1: sign header.payload with the Ed25519 key. */
static void
signed_token(const uint8_t *d, size_t n)
{
	static const char defhdr[] = "{\"alg\":\"EdDSA\",\"kid\":\"ed1\",\"typ\":\"JWT\"}";
	const uint8_t *hdr = (const uint8_t *)defhdr, *pay = d, *nul;
	size_t hl = sizeof defhdr - 1, pl = n, t;
	unsigned char sig[crypto_sign_BYTES];
	char *tok;

	if ((nul = memchr(d, '\0', n)) != NULL) {
		hdr = d;
		hl = (size_t)(nul - d);
		pay = nul + 1;
		pl = n - hl - 1;
	}
	if ((tok = malloc(4 * (hl + pl + sizeof sig) / 3 + 16)) == NULL)
		return;
	t = b64url(hdr, hl, tok, 4 * hl / 3 + 4);
	tok[t++] = '.';
	t += b64url(pay, pl, tok + t, 4 * pl / 3 + 4);
	crypto_sign_detached(sig, NULL, (unsigned char *)tok, t, g_edsk);
	tok[t++] = '.';
	b64url(sig, sizeof sig, tok + t, 4 * sizeof sig / 3 + 4);
	check_verify(tok);
	free(tok);
}

/* Mode 2: the bytes as a JWKS file. */
static void
jwks_file(const uint8_t *d, size_t n)
{
	static struct jwks k;
	static const char *const kids[] = { NULL, "rsa1", "ed1", "" };
	char path[96], why[128];
	struct stat st;
	size_t i, j;
	int rc;

	snprintf(path, sizeof path, "%s/fuzz.jwks", g_dir);
	write_file(path, d, n);
	if (stat(path, &st) != 0)
		abort();
	why[0] = '\0';
	rc = jwks_load(&k, path, &st, why, sizeof why);
	if (rc != 0) {
		FCHECK(rc == -1 && why[0] != '\0' && k.nkeys == 0 && !k.loaded);
		return;
	}
	FCHECK(k.loaded && k.nkeys <= JWKS_KEYS_MAX);
	for (i = 0; i < k.nkeys; i++) {
		FCHECK(k.keys[i].kty == KTY_RSA || k.keys[i].kty == KTY_ED25519);
		FCHECK((k.keys[i].kty == KTY_RSA) == (k.keys[i].rsa != NULL));
		FCHECK(strnlen(k.keys[i].kid, sizeof k.keys[i].kid) < sizeof k.keys[i].kid);
	}
	for (j = 0; j < sizeof kids / sizeof kids[0]; j++) {
		const struct jwk *a = key_pick(&k, KTY_RSA, "RS256", kids[j], why, sizeof why);
		const struct jwk *b = key_pick(&k, KTY_ED25519, "EdDSA", kids[j], why, sizeof why);

		FCHECK(a == NULL || a->kty == KTY_RSA);
		FCHECK(b == NULL || b->kty == KTY_ED25519);
		if (kids[j] != NULL) {
			FCHECK(a == NULL || (a->has_kid && strcmp(a->kid, kids[j]) == 0));
			FCHECK(b == NULL || (b->has_kid && strcmp(b->kid, kids[j]) == 0));
		}
	}
	jwks_clear(&k);
}

/* Mode 3: the bytes as a PEM key for arps-admin jwks. */
static void
pem_file(const uint8_t *d, size_t n)
{
	char path[96], spec[128], *specs[1] = { spec }, *buf = NULL;
	size_t blen = 0;
	struct json_object *o, *keys, *kid;
	FILE *out;
	int rc, err, nul;

	snprintf(path, sizeof path, "%s/fuzz.pem", g_dir);
	write_file(path, d, n);
	snprintf(spec, sizeof spec, "%s=kid-1", path);
	if ((out = open_memstream(&buf, &blen)) == NULL)
		abort();
	/* its refusals go to stderr: not once per execution */
	fflush(stderr);
	err = dup(2);
	nul = open("/dev/null", O_WRONLY | O_CLOEXEC);
	dup2(nul, 2);
	rc = jwks_from_pems(specs, 1, out);
	dup2(err, 2);
	close(err);
	close(nul);
	fclose(out);
	if (rc != 0) {
		FCHECK(rc == -1 && blen == 0);
		free(buf);
		return;
	}
	FCHECK(blen > 0 && buf[blen - 1] == '\n');
	FCHECK((o = json_tokener_parse(buf)) != NULL);
	FCHECK(json_object_object_get_ex(o, "keys", &keys) &&
	    json_object_is_type(keys, json_type_array) && json_object_array_length(keys) == 1);
	FCHECK(json_object_object_get_ex(json_object_array_get_idx(keys, 0), "kid", &kid) &&
	    strcmp(json_object_get_string(kid), "kid-1") == 0);
	json_object_put(o);
	free(buf);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s;

	if (g_idp.jwks[0] == '\0')
		init();
	if (size < 1)
		return 0;
	switch (data[0] & 3) {
	case 0:
		if ((s = malloc(size)) == NULL)
			return 0;
		memcpy(s, data + 1, size - 1);
		s[size - 1] = '\0';
		check_verify(s);
		free(s);
		break;
	case 1:
		signed_token(data + 1, size - 1);
		break;
	case 2:
		jwks_file(data + 1, size - 1);
		break;
	case 3:
		pem_file(data + 1, size - 1);
		break;
	}
	return 0;
}
