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
static void
sub_new(char *buf, size_t n, const char *tag)
{
	snprintf(buf, n, "%s-%08x%08x", tag, randombytes_random(), randombytes_random());
}

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

static void
refused(const char *token)
{
	struct resp r;

	r = login_with(PROVIDER, token);
	assert_error(&r, 401, "INVALID_TOKEN");
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

static void
unknown_provider(void **state)
{
	struct jwt_claims c;
	struct resp r;
	char sub[64], *t;

	(void)state;
	sub_new(sub, sizeof sub, "prov");
	jwt_claims_dev(&c, sub, time(NULL));
	t = dev_token("RS256", &c);
	r = login_with("nosuchidp", t);
	assert_error(&r, 422, "VALIDATION_ERROR");
	resp_free(&r);
	free(t);
}

/* --- refused: one row per forged or unusable token ----------------------- */

/* Valid dev claims for a fresh subject at now. */
static void
claims(struct jwt_claims *c, char *sub, size_t n)
{
	sub_new(sub, n, "bad");
	jwt_claims_dev(c, sub, time(NULL));
}

static char *
t_expired(void)
{
	struct jwt_claims c;
	char sub[64];

	claims(&c, sub, sizeof sub);
	c.iat = c.iat - 600;
	c.exp = time(NULL) - 61;
	return dev_token("RS256", &c);
}

static char *
t_nbf_future(void)
{
	struct jwt_claims c;
	char sub[64];

	claims(&c, sub, sizeof sub);
	c.nbf = time(NULL) + 300;
	return dev_token("RS256", &c);
}

static char *
t_iat_future(void)
{
	struct jwt_claims c;
	char sub[64];

	claims(&c, sub, sizeof sub);
	c.iat = time(NULL) + 300;
	c.exp = c.iat + 600;
	return dev_token("EdDSA", &c);
}

static char *
t_no_exp(void)
{
	struct jwt_claims c;
	char sub[64];

	claims(&c, sub, sizeof sub);
	c.exp = JWT_OMIT;
	return dev_token("RS256", &c);
}

static char *
t_wrong_issuer(void)
{
	struct jwt_claims c;
	char sub[64];

	claims(&c, sub, sizeof sub);
	c.iss = "https://evil.example";
	return dev_token("RS256", &c);
}

static char *
t_wrong_aud(void)
{
	struct jwt_claims c;
	char sub[64];

	claims(&c, sub, sizeof sub);
	c.aud = "\"arps-prod\"";
	return dev_token("RS256", &c);
}

static char *
t_wrong_aud_array(void)
{
	struct jwt_claims c;
	char sub[64];

	claims(&c, sub, sizeof sub);
	c.aud = "[\"arps-prod\",\"arps-dev2\"]";
	return dev_token("EdDSA", &c);
}

static char *
t_missing_sub(void)
{
	struct jwt_claims c;
	char sub[64];

	claims(&c, sub, sizeof sub);
	c.sub = NULL;
	return dev_token("RS256", &c);
}

static char *
t_alg_none(void)
{
	struct jwt_claims c;
	char sub[64], *p, *t;

	claims(&c, sub, sizeof sub);
	assert_non_null(p = jwt_payload(&c));
	t = jwt_compose("{\"alg\":\"none\",\"typ\":\"JWT\"}", p, NULL, 0);
	free(p);
	return t;
}

/* alg none carrying a real RS256 signature of the same payload. */
static char *
t_alg_none_signed(void)
{
	struct jwt_claims c;
	const char *hdr;
	char sub[64], *good, *t, *dot;
	size_t n;

	claims(&c, sub, sizeof sub);
	good = dev_token("RS256", &c);
	hdr = "{\"alg\":\"none\",\"kid\":\"dev-rsa\"}";
	assert_non_null(t = jwt_b64url(hdr, strlen(hdr)));
	dot = strchr(good, '.');
	n = strlen(t) + strlen(dot) + 1;
	t = realloc(t, n);
	assert_non_null(t);
	strncat(t, dot, n - strlen(t) - 1);
	free(good);
	return t;
}

/* HS256 keyed with the public JWKS text: the classic key confusion. */
static char *
t_alg_hs256(void)
{
	unsigned char mac[crypto_auth_hmacsha256_BYTES];
	crypto_auth_hmacsha256_state st;
	struct jwt_claims c;
	char sub[64], key[16384], *p, *in, *b, *t;
	size_t klen, n;
	FILE *f;

	claims(&c, sub, sizeof sub);
	assert_non_null(f = fopen(jwks_path, "r"));
	klen = fread(key, 1, sizeof key, f);
	fclose(f);
	assert_non_null(p = jwt_payload(&c));
	/* "header.payload." with an empty signature */
	in = jwt_compose("{\"alg\":\"HS256\",\"kid\":\"dev-rsa\"}", p, NULL, 0);
	assert_non_null(in);
	crypto_auth_hmacsha256_init(&st, (unsigned char *)key, klen);
	crypto_auth_hmacsha256_update(&st, (unsigned char *)in, strlen(in) - 1);
	crypto_auth_hmacsha256_final(&st, mac);
	assert_non_null(b = jwt_b64url(mac, sizeof mac));
	n = strlen(in) + strlen(b) + 1;
	assert_non_null(t = malloc(n));
	snprintf(t, n, "%s%s", in, b);
	free(p);
	free(in);
	free(b);
	return t;
}

/* A valid token whose payload is swapped for another subject's. */
static char *
t_tampered(void)
{
	struct jwt_claims c;
	char sub[64], *good, *p, *b, *t, *d1, *d2;
	size_t n;

	claims(&c, sub, sizeof sub);
	good = dev_token("RS256", &c);
	c.sub = "admin";
	assert_non_null(p = jwt_payload(&c));
	assert_non_null(b = jwt_b64url(p, strlen(p)));
	d1 = strchr(good, '.');
	d2 = strrchr(good, '.');
	n = strlen(good) + strlen(b) + 1;
	assert_non_null(t = malloc(n));
	snprintf(t, n, "%.*s.%s%s", (int)(d1 - good), good, b, d2);
	free(good);
	free(p);
	free(b);
	return t;
}

static char *
signed_by(const char *pem, const char *alg, const char *kid)
{
	struct jwt_claims c;
	char sub[64], *p, *t;

	claims(&c, sub, sizeof sub);
	assert_non_null(p = jwt_payload(&c));
	t = jwt_sign(pem, alg, kid, p);
	free(p);
	assert_non_null(t);
	return t;
}

static char *
t_other_rsa_key(void)
{
	return signed_by(other_rsa, "RS256", KID_RSA);
}

static char *
t_other_ed_key(void)
{
	return signed_by(other_ed, "EdDSA", KID_ED);
}

static char *
t_unknown_kid(void)
{
	return signed_by(rsa_pem, "RS256", "dev-rsa-2");
}

/* An Ed25519 signature under the RSA key's id. */
static char *
t_kty_mismatch(void)
{
	return signed_by(ed_pem, "EdDSA", KID_RSA);
}

/* A character outside base64url in the payload. */
static char *
t_bad_base64(void)
{
	char *t = signed_by(rsa_pem, "RS256", KID_RSA);

	strchr(t, '.')[5] = '*';
	return t;
}

/* Padding on the signature. */
static char *
t_base64_padding(void)
{
	char *t = signed_by(ed_pem, "EdDSA", KID_ED);
	size_t n = strlen(t) + 3;

	assert_non_null(t = realloc(t, n));
	strncat(t, "==", n - strlen(t) - 1);
	return t;
}

static char *
t_two_segments(void)
{
	char *t = signed_by(rsa_pem, "RS256", KID_RSA);

	*strrchr(t, '.') = '\0';
	return t;
}

static char *
t_four_segments(void)
{
	char *t = signed_by(rsa_pem, "RS256", KID_RSA);
	size_t n = strlen(t) + 8;

	assert_non_null(t = realloc(t, n));
	strncat(t, ".AAAA", n - strlen(t) - 1);
	return t;
}

/* A correctly signed token of more than 9 KiB. */
static char *
t_too_large(void)
{
	struct jwt_claims c;
	char sub[64], *p, *q, *pad, *t;
	size_t n = 7200;

	claims(&c, sub, sizeof sub);
	assert_non_null(p = jwt_payload(&c));
	assert_non_null(pad = malloc(n + 1));
	memset(pad, 'x', n);
	pad[n] = '\0';
	assert_non_null(q = malloc(strlen(p) + n + 16));
	/* p is "{...}": add a "pad" member before the closing brace */
	sprintf(q, "%.*s,\"pad\":\"%s\"}", (int)(strlen(p) - 1), p, pad);
	t = jwt_sign(rsa_pem, "RS256", KID_RSA, q);
	assert_non_null(t);
	assert_true(strlen(t) > 9 * 1024);
	free(p);
	free(q);
	free(pad);
	return t;
}

struct bad_row {
	const char *name;
	char *(*make)(void);
};

static const struct bad_row bad_rows[] = {
	{ "expired_61s_ago", t_expired },
	{ "nbf_in_future", t_nbf_future },
	{ "iat_in_future", t_iat_future },
	{ "no_exp", t_no_exp },
	{ "wrong_issuer", t_wrong_issuer },
	{ "wrong_audience", t_wrong_aud },
	{ "wrong_audience_array", t_wrong_aud_array },
	{ "missing_sub", t_missing_sub },
	{ "alg_none", t_alg_none },
	{ "alg_none_with_signature", t_alg_none_signed },
	{ "alg_hs256_keyed_with_jwks", t_alg_hs256 },
	{ "tampered_payload", t_tampered },
	{ "other_rsa_key_right_kid", t_other_rsa_key },
	{ "other_ed25519_key_right_kid", t_other_ed_key },
	{ "unknown_kid", t_unknown_kid },
	{ "kty_alg_mismatch", t_kty_mismatch },
	{ "bad_base64_char", t_bad_base64 },
	{ "base64_padding", t_base64_padding },
	{ "two_segments", t_two_segments },
	{ "four_segments", t_four_segments },
	{ "token_over_9k", t_too_large },
};
#define NBAD (sizeof bad_rows / sizeof bad_rows[0])

static void
bad_token(void **state)
{
	const struct bad_row *row = *state;
	char *t;

	t = row->make();
	assert_non_null(t);
	refused(t);
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
		cmocka_unit_test(unknown_provider),
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
