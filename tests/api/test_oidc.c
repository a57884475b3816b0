/* Identity-provider login (design.md §6.11): ID tokens signed with the dev
 * stack's keys under $ARPS_VAR/idp, accepted and refused, through nginx. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <curl/curl.h>
#include <sodium.h>

#include "tests/api/flows.h"
#include "tests/api/jwt.h"

#define PROVIDER	"dev"
#define KID_RSA		"dev-rsa"
#define KID_ED		"dev-ed25519"

static char rsa_pem[512], ed_pem[512], jwks_path[512];
static char other_dir[64], other_rsa[128], other_ed[128];

struct account {
	char id[IDS_BUFSZ];
	char email[256];
	char hdr[80];		/* "Authorization: Bearer act_..." */
};

/* A subject unique to this run. */

static struct resp
login_with(const char *provider, const char *token)
{
	struct resp r;
	size_t n = strlen(token) + 64;
	char *body;

	body = malloc(n);
	assert_non_null(body);
	snprintf(body, n, "{\"provider\":\"%s\",\"token\":\"%s\"}", provider, token);
	r = http_post("/api/v1/auth/login", body, NULL);
	free(body);
	return r;
}

/* Sign c with the dev key of alg (RS256 or EdDSA). */
static char *
dev_token(const char *alg, const struct jwt_claims *c)
{
	char *p, *t;

	assert_non_null(p = jwt_payload(c));
	t = jwt_sign(strcmp(alg, "RS256") == 0 ? rsa_pem : ed_pem, alg,
	    strcmp(alg, "RS256") == 0 ? KID_RSA : KID_ED, p);
	free(p);
	assert_non_null(t);
	return t;
}

/* Log in with token; asserts the 200 answer's shape and fills a. */
static void
login_ok(const char *token, struct account *a)
{
	struct json_object *acc, *roles, *v;
	struct resp r;

	r = login_with(PROVIDER, token);
	if (r.status != 200)
		print_error("login: %ld %s\n", r.status, r.body ? r.body : "");
	assert_int_equal(r.status, 200);
	assert_true(token_valid(jstr(&r, "access_token")));
	assert_string_equal(jstr(&r, "token_type"), "bearer");
	assert_true(json_object_object_get_ex(r.json, "account", &acc));
	assert_true(json_object_object_get_ex(acc, "id", &v));
	assert_true(ids_valid(IDS_ACCOUNT, json_object_get_string(v)));
	memset(a, 0, sizeof *a);
	snprintf(a->id, sizeof a->id, "%s", json_object_get_string(v));
	if (json_object_object_get_ex(acc, "email", &v) && json_object_is_type(v, json_type_string))
		snprintf(a->email, sizeof a->email, "%s", json_object_get_string(v));
	assert_true(json_object_object_get_ex(acc, "roles", &roles));
	assert_int_equal(json_object_array_length(roles), 2);
	assert_string_equal(json_object_get_string(json_object_array_get_idx(roles, 0)), "researcher");
	assert_string_equal(json_object_get_string(json_object_array_get_idx(roles, 1)), "participant");
	snprintf(a->hdr, sizeof a->hdr, "Authorization: Bearer %s", jstr(&r, "access_token"));
	resp_free(&r);
}

/* GET /account with a's token answers a's account. */
static void
account_is(const struct account *a)
{
	struct resp r;

	r = http_get("/api/v1/account", HDRS(a->hdr));
	assert_int_equal(r.status, 200);
	assert_string_equal(jstr(&r, "id"), a->id);
	resp_free(&r);
}

/* --- accepted ------------------------------------------------------------ */

static void
rs256_login(void **state)
{
	struct jwt_claims c;
	struct account a;
	char sub[64], *t;

	(void)state;
	sub_new(sub, sizeof sub, "rs");
	jwt_claims_dev(&c, sub, time(NULL));
	t = dev_token("RS256", &c);
	login_ok(t, &a);
	account_is(&a);
	free(t);
}

static void
eddsa_login(void **state)
{
	struct jwt_claims c;
	struct account a;
	char sub[64], *t;

	(void)state;
	sub_new(sub, sizeof sub, "ed");
	jwt_claims_dev(&c, sub, time(NULL));
	t = dev_token("EdDSA", &c);
	login_ok(t, &a);
	account_is(&a);
	free(t);
}

/* The same subject is the same account, whichever key signed; another
 * subject is another account. */
static void
same_sub_same_account(void **state)
{
	struct account a1, a2, a3;
	struct jwt_claims c;
	char sub[64], sub2[64], *t;

	(void)state;
	sub_new(sub, sizeof sub, "same");
	jwt_claims_dev(&c, sub, time(NULL));
	t = dev_token("RS256", &c);
	login_ok(t, &a1);
	free(t);
	t = dev_token("EdDSA", &c);
	login_ok(t, &a2);
	free(t);
	assert_string_equal(a1.id, a2.id);
	sub_new(sub2, sizeof sub2, "other");
	jwt_claims_dev(&c, sub2, time(NULL));
	t = dev_token("RS256", &c);
	login_ok(t, &a3);
	free(t);
	assert_string_not_equal(a1.id, a3.id);
	account_is(&a2);
}

/* Two subjects with the same verified e-mail share one account; the same
 * address unverified does not link. */
static void
verified_email_links(void **state)
{
	struct account a1, a2, a3;
	struct jwt_claims c;
	char email[128], sub[64], *t;

	(void)state;
	uniq_email(email, sizeof email, "oidc");
	sub_new(sub, sizeof sub, "mail1");
	jwt_claims_dev(&c, sub, time(NULL));
	c.email = email;
	c.email_verified = 1;
	t = dev_token("RS256", &c);
	login_ok(t, &a1);
	free(t);
	assert_string_equal(a1.email, email);
	sub_new(sub, sizeof sub, "mail2");
	jwt_claims_dev(&c, sub, time(NULL));
	c.email = email;
	c.email_verified = 1;
	t = dev_token("EdDSA", &c);
	login_ok(t, &a2);
	free(t);
	assert_string_equal(a1.id, a2.id);
	sub_new(sub, sizeof sub, "mail3");
	jwt_claims_dev(&c, sub, time(NULL));
	c.email = email;
	c.email_verified = 0;
	t = dev_token("RS256", &c);
	login_ok(t, &a3);
	free(t);
	assert_string_not_equal(a1.id, a3.id);
}

/* exp 30 s ago is inside the 60 s leeway. */
static void
expired_within_leeway(void **state)
{
	struct jwt_claims c;
	struct account a;
	char sub[64], *t;
	int64_t now = time(NULL);

	(void)state;
	sub_new(sub, sizeof sub, "leeway");
	jwt_claims_dev(&c, sub, now);
	c.iat = now - 600;
	c.exp = now - 30;
	t = dev_token("RS256", &c);
	login_ok(t, &a);
	free(t);
}

static void
aud_array_ok(void **state)
{
	struct jwt_claims c;
	struct account a;
	char sub[64], *t;

	(void)state;
	sub_new(sub, sizeof sub, "audarr");
	jwt_claims_dev(&c, sub, time(NULL));
	c.aud = "[\"someone-else\",\"arps-dev\"]";
	t = dev_token("EdDSA", &c);
	login_ok(t, &a);
	free(t);
}

/* --- refused: one row per forged or unusable token ----------------------- */

/* What is done to a token beyond its claims, key and kid. */
enum forge {
	F_NONE,
	F_ALG_NONE,		/* header alg none, no signature */
	F_ALG_NONE_SIGNED,	/* header alg none over a real RS256 signature */
	F_HS256_JWKS,		/* HS256 keyed with the public JWKS text: key confusion */
	F_TAMPERED,		/* payload swapped for sub "admin", signature kept */
	F_BAD_BASE64,		/* a character outside base64url in the payload */
	F_PADDING,		/* "==" after the signature */
	F_TWO_SEGMENTS,
	F_FOUR_SEGMENTS,
	F_OVER_9K,		/* a 7,200-byte claim, correctly signed: over 9 KiB */
};

enum key { K_DEV, K_OTHER };	/* the dev stack's key of alg, or a key it does not know */

/*
 * One refused login: the dev claims of a fresh subject at now, changed by
 * the row's claims (times in seconds from now, 0 keeps the dev default,
 * JWT_OMIT leaves the claim out; NULL strings keep the default), signed
 * with key and alg under kid, forged, and sent to provider; the answer must
 * be status with error_code.
 */
struct bad_row {
	const char *name;
	long status;			/* the answer expected */
	const char *error_code;
	const char *provider;		/* NULL: dev */
	struct {			/* changes to the dev claims */
		int64_t iat, exp, nbf;
		const char *iss, *aud;
		int no_sub;
	} claims;
	const char *alg;		/* RS256 or EdDSA */
	enum key key;
	const char *kid;		/* NULL: the key's own */
	enum forge forge;
};

static const struct bad_row bad_rows[] = {
	/* name, status, error_code, provider,
	 *   { iat, exp, nbf, iss, aud, no_sub }, alg, key, kid, forge */
	{ "expired_61s_ago", 401, "INVALID_TOKEN", NULL,
	  { -600, -61, 0, NULL, NULL, 0 }, "RS256", K_DEV, NULL, F_NONE },
	{ "nbf_in_future", 401, "INVALID_TOKEN", NULL,
	  { 0, 0, 300, NULL, NULL, 0 }, "RS256", K_DEV, NULL, F_NONE },
	{ "iat_in_future", 401, "INVALID_TOKEN", NULL,
	  { 300, 900, 0, NULL, NULL, 0 }, "EdDSA", K_DEV, NULL, F_NONE },
	{ "no_exp", 401, "INVALID_TOKEN", NULL,
	  { 0, JWT_OMIT, 0, NULL, NULL, 0 }, "RS256", K_DEV, NULL, F_NONE },
	{ "wrong_issuer", 401, "INVALID_TOKEN", NULL,
	  { 0, 0, 0, "https://evil.example", NULL, 0 }, "RS256", K_DEV, NULL, F_NONE },
	{ "wrong_audience", 401, "INVALID_TOKEN", NULL,
	  { 0, 0, 0, NULL, "\"arps-prod\"", 0 }, "RS256", K_DEV, NULL, F_NONE },
	{ "wrong_audience_array", 401, "INVALID_TOKEN", NULL,
	  { 0, 0, 0, NULL, "[\"arps-prod\",\"arps-dev2\"]", 0 }, "EdDSA", K_DEV, NULL, F_NONE },
	{ "missing_sub", 401, "INVALID_TOKEN", NULL,
	  { 0, 0, 0, NULL, NULL, 1 }, "RS256", K_DEV, NULL, F_NONE },
	{ "alg_none", 401, "INVALID_TOKEN", NULL,
	  { 0, 0, 0, NULL, NULL, 0 }, "RS256", K_DEV, NULL, F_ALG_NONE },
	{ "alg_none_with_signature", 401, "INVALID_TOKEN", NULL,
	  { 0, 0, 0, NULL, NULL, 0 }, "RS256", K_DEV, NULL, F_ALG_NONE_SIGNED },
	{ "alg_hs256_keyed_with_jwks", 401, "INVALID_TOKEN", NULL,
	  { 0, 0, 0, NULL, NULL, 0 }, "RS256", K_DEV, NULL, F_HS256_JWKS },
	{ "tampered_payload", 401, "INVALID_TOKEN", NULL,
	  { 0, 0, 0, NULL, NULL, 0 }, "RS256", K_DEV, NULL, F_TAMPERED },
	{ "other_rsa_key_right_kid", 401, "INVALID_TOKEN", NULL,
	  { 0, 0, 0, NULL, NULL, 0 }, "RS256", K_OTHER, NULL, F_NONE },
	{ "other_ed25519_key_right_kid", 401, "INVALID_TOKEN", NULL,
	  { 0, 0, 0, NULL, NULL, 0 }, "EdDSA", K_OTHER, NULL, F_NONE },
	{ "unknown_kid", 401, "INVALID_TOKEN", NULL,
	  { 0, 0, 0, NULL, NULL, 0 }, "RS256", K_DEV, "dev-rsa-2", F_NONE },
	/* an Ed25519 signature under the RSA key's id */
	{ "kty_alg_mismatch", 401, "INVALID_TOKEN", NULL,
	  { 0, 0, 0, NULL, NULL, 0 }, "EdDSA", K_DEV, KID_RSA, F_NONE },
	{ "bad_base64_char", 401, "INVALID_TOKEN", NULL,
	  { 0, 0, 0, NULL, NULL, 0 }, "RS256", K_DEV, NULL, F_BAD_BASE64 },
	{ "base64_padding", 401, "INVALID_TOKEN", NULL,
	  { 0, 0, 0, NULL, NULL, 0 }, "EdDSA", K_DEV, NULL, F_PADDING },
	{ "two_segments", 401, "INVALID_TOKEN", NULL,
	  { 0, 0, 0, NULL, NULL, 0 }, "RS256", K_DEV, NULL, F_TWO_SEGMENTS },
	{ "four_segments", 401, "INVALID_TOKEN", NULL,
	  { 0, 0, 0, NULL, NULL, 0 }, "RS256", K_DEV, NULL, F_FOUR_SEGMENTS },
	{ "token_over_9k", 401, "INVALID_TOKEN", NULL,
	  { 0, 0, 0, NULL, NULL, 0 }, "RS256", K_DEV, NULL, F_OVER_9K },
	/* a good token, for a provider the stack does not have */
	{ "unknown_provider", 422, "VALIDATION_ERROR", "nosuchidp",
	  { 0, 0, 0, NULL, NULL, 0 }, "RS256", K_DEV, NULL, F_NONE },
};
#define NBAD (sizeof bad_rows / sizeof bad_rows[0])

/* a b c concatenated, malloc'd. */
static char *
cat3(const char *a, const char *b, const char *c)
{
	size_t n = strlen(a) + strlen(b) + strlen(c) + 1;
	char *t = malloc(n);

	assert_non_null(t);
	snprintf(t, n, "%s%s%s", a, b, c);
	return t;
}

/* An HS256 token over payload, keyed with the dev JWKS text (malloc'd). */
static char *
hs256_with_jwks(const char *payload)
{
	unsigned char mac[crypto_auth_hmacsha256_BYTES];
	crypto_auth_hmacsha256_state st;
	char key[16384], *in, *b, *t;
	size_t klen;
	FILE *f;

	assert_non_null(f = fopen(jwks_path, "r"));
	klen = fread(key, 1, sizeof key, f);
	fclose(f);
	/* "header.payload." with an empty signature */
	in = jwt_compose("{\"alg\":\"HS256\",\"kid\":\"dev-rsa\"}", payload, NULL, 0);
	assert_non_null(in);
	crypto_auth_hmacsha256_init(&st, (unsigned char *)key, klen);
	crypto_auth_hmacsha256_update(&st, (unsigned char *)in, strlen(in) - 1);
	crypto_auth_hmacsha256_final(&st, mac);
	assert_non_null(b = jwt_b64url(mac, sizeof mac));
	t = cat3(in, b, "");
	free(in);
	free(b);
	return t;
}

/* The token of a row (malloc'd). */
static char *
bad_token_of(const struct bad_row *row)
{
	const int rsa = strcmp(row->alg, "RS256") == 0;
	const char *pem = row->key == K_OTHER ? (rsa ? other_rsa : other_ed) : (rsa ? rsa_pem : ed_pem);
	const char *kid = row->kid ? row->kid : rsa ? KID_RSA : KID_ED;
	struct jwt_claims c;
	int64_t now = time(NULL);
	static const char none_kid[] = "{\"alg\":\"none\",\"kid\":\"dev-rsa\"}";
	char sub[64], *p, *t, *u, *b, *sig;
	size_t n;

	sub_new(sub, sizeof sub, "bad");
	jwt_claims_dev(&c, sub, now);
	if (row->claims.iat != 0)
		c.iat = row->claims.iat == JWT_OMIT ? JWT_OMIT : now + row->claims.iat;
	if (row->claims.exp != 0)
		c.exp = row->claims.exp == JWT_OMIT ? JWT_OMIT : now + row->claims.exp;
	if (row->claims.nbf != 0)
		c.nbf = row->claims.nbf == JWT_OMIT ? JWT_OMIT : now + row->claims.nbf;
	if (row->claims.iss != NULL)
		c.iss = row->claims.iss;
	if (row->claims.aud != NULL)
		c.aud = row->claims.aud;
	if (row->claims.no_sub)
		c.sub = NULL;
	assert_non_null(p = jwt_payload(&c));
	if (row->forge == F_OVER_9K) {		/* "{...}" + a "pad" member */
		n = 7200;
		assert_non_null(b = malloc(n + 1));
		memset(b, 'x', n);
		b[n] = '\0';
		p[strlen(p) - 1] = '\0';
		u = cat3(p, ",\"pad\":\"", b);
		free(p);
		p = cat3(u, "\"}", "");
		free(u);
		free(b);
	}
	if (row->forge == F_ALG_NONE)
		t = jwt_compose("{\"alg\":\"none\",\"typ\":\"JWT\"}", p, NULL, 0);
	else if (row->forge == F_HS256_JWKS)
		t = hs256_with_jwks(p);
	else
		t = jwt_sign(pem, row->alg, kid, p);
	assert_non_null(t);
	switch (row->forge) {
	case F_ALG_NONE_SIGNED:		/* the signed token's ".payload.sig" */
		assert_non_null(b = jwt_b64url(none_kid, strlen(none_kid)));
		u = cat3(b, strchr(t, '.'), "");
		free(b);
		free(t);
		t = u;
		break;
	case F_TAMPERED:		/* header "." another payload ".sig" */
		free(p);
		c.sub = "admin";
		assert_non_null(p = jwt_payload(&c));
		assert_non_null(b = jwt_b64url(p, strlen(p)));
		sig = strrchr(t, '.');
		*strchr(t, '.') = '\0';
		u = cat3(t, ".", b);
		free(b);
		b = cat3(u, sig, "");
		free(u);
		free(t);
		t = b;
		break;
	case F_BAD_BASE64:
		strchr(t, '.')[5] = '*';
		break;
	case F_PADDING:
		u = cat3(t, "==", "");
		free(t);
		t = u;
		break;
	case F_TWO_SEGMENTS:
		*strrchr(t, '.') = '\0';
		break;
	case F_FOUR_SEGMENTS:
		u = cat3(t, ".AAAA", "");
		free(t);
		t = u;
		break;
	case F_OVER_9K:
		assert_true(strlen(t) > 9 * 1024);
		break;
	case F_NONE:
	case F_ALG_NONE:
	case F_HS256_JWKS:
		break;
	}
	free(p);
	return t;
}

/* One loop body for every row: build its token, log in, expect its answer. */
static void
bad_token(void **state)
{
	const struct bad_row *row = *state;
	struct resp r;
	char *t;

	t = bad_token_of(row);
	r = login_with(row->provider ? row->provider : PROVIDER, t);
	assert_error(&r, row->status, row->error_code);
	resp_free(&r);
	free(t);
}

/* --- setup --------------------------------------------------------------- */

static int
group_setup(void **state)
{
	const char *var = getenv("ARPS_VAR");

	(void)state;
	if (var == NULL) {
		fprintf(stderr, "ARPS_VAR is not set\n");
		return -1;
	}
	snprintf(rsa_pem, sizeof rsa_pem, "%s/idp/dev-rsa.pem", var);
	snprintf(ed_pem, sizeof ed_pem, "%s/idp/dev-ed25519.pem", var);
	snprintf(jwks_path, sizeof jwks_path, "%s/idp/jwks.json", var);
	snprintf(other_dir, sizeof other_dir, "/tmp/arps-oidc-XXXXXX");
	if (mkdtemp(other_dir) == NULL)
		return -1;
	snprintf(other_rsa, sizeof other_rsa, "%s/rsa.pem", other_dir);
	snprintf(other_ed, sizeof other_ed, "%s/ed25519.pem", other_dir);
	if (jwt_keygen("RS256", other_rsa) != 0 || jwt_keygen("EdDSA", other_ed) != 0)
		return -1;
	return 0;
}

static int
group_teardown(void **state)
{
	(void)state;
	unlink(other_rsa);
	unlink(other_ed);
	rmdir(other_dir);
	return 0;
}

/* GET /auth/providers (design.md §12): public; only the providers with
 * browser sign-in keys (dev, not dev2), with what the console sends. */
static void
providers_listed(void **state)
{
	struct json_object *arr = NULL, *p, *v;
	struct resp r;
	char url[128];

	(void)state;
	r = http_get("/api/v1/auth/providers", NULL);
	assert_int_equal(r.status, 200);
	assert_true(json_object_object_get_ex(r.json, "providers", &arr));
	assert_int_equal(json_object_array_length(arr), 1);
	p = json_object_array_get_idx(arr, 0);
#define FIELD(k, want) \
	do { \
		assert_true(json_object_object_get_ex(p, k, &v)); \
		assert_string_equal(json_object_get_string(v), want); \
	} while (0)
	FIELD("name", PROVIDER);
	FIELD("label", "Dev identity provider");
	FIELD("client_id", "arps-dev");
	FIELD("response_type", "id_token");
	FIELD("scope", "openid email");
	assert_true(json_object_object_get_ex(p, "authorization_endpoint", &v));
	snprintf(url, sizeof url, "%s", json_object_get_string(v));
	assert_true(strncmp(url, "http://127.0.0.1:", 17) == 0);
	assert_non_null(strstr(url, "/authorize"));
#undef FIELD
	resp_free(&r);
}

int
main(void)
{
	static const struct CMUnitTest good[] = {
		cmocka_unit_test(rs256_login),
		cmocka_unit_test(eddsa_login),
		cmocka_unit_test(same_sub_same_account),
		cmocka_unit_test(verified_email_links),
		cmocka_unit_test(expired_within_leeway),
		cmocka_unit_test(aud_array_ok),
		cmocka_unit_test(providers_listed),
	};
	struct CMUnitTest tests[sizeof good / sizeof good[0] + NBAD];
	size_t i, n = 0;

	for (i = 0; i < sizeof good / sizeof good[0]; i++)
		tests[n++] = good[i];
	for (i = 0; i < NBAD; i++) {
		tests[n] = (struct CMUnitTest)cmocka_unit_test_prestate(bad_token,
		    (void *)(uintptr_t)&bad_rows[i]);
		tests[n++].name = bad_rows[i].name;
	}
	curl_global_init(CURL_GLOBAL_DEFAULT);
	if (sodium_init() < 0)
		return 1;
	return _cmocka_run_group_tests("api_oidc", tests, n, group_setup, group_teardown);
}
