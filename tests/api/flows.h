/* Multi-step flows the API tests share: register, log in, claim, admin. */
#ifndef ARPS_TESTS_FLOWS_H
#define ARPS_TESTS_FLOWS_H

#include "core/ids.h"
#include "tests/api/client.h"
#include "tests/api/mail.h"

struct test_agent {
	char id[IDS_BUFSZ];
	char key[APIKEY_BUFSZ];
	char claim[CLAIM_BUFSZ];
	char hdr[80];		/* "X-API-Key: ..." */
};

struct test_user {
	char email[128];
	char id[IDS_BUFSZ];
	char token[TOKEN_BUFSZ];
	char hdr[80];		/* "Authorization: Bearer ..." */
};

/* A unique e-mail address for this run. */
void uniq_email(char *buf, size_t n, const char *tag);
/* Register an agent from a fresh random source address; asserts 201. */
void agent_new(struct test_agent *a, const char *name);
/* POST /auth/email/send-code for email from a random loopback address: the
 * per-network send-code limit (design.md §9.2) is not what the test is
 * about. */
struct resp send_code(const char *email);
/* A login code that is not code (the next one, six digits). */
void wrong_code(char out[8], const char *code);
/* Log in by e-mail code (creating the account); asserts 200. */
void user_login(struct test_user *u, const char *tag);
/* Claim agent a for user u; asserts 200. */
void agent_claim(struct test_agent *a, const struct test_user *u);
/* A claimed agent with a fresh owner. */
void agent_claimed(struct test_agent *a, struct test_user *owner, const char *name);
/* Run arps-admin with the stack's config; returns its exit status.  When
 * out is not NULL it gets the first line of standard output. */
int admin(char *out, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Run one `arps-fixture VERB ...` fixture (tests/lib/fixture.h); asserts it
 * exits 0.  Tests change state that no request can change only this way. */
void fixture(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Stop (0) or start again (1) the stack's arps-embed: a test that needs a
 * text left waiting stops it first. */
void embedder(int on);
/* The same fixture, its exit status returned (0 done, 1 refused, 2 usage). */
int fixture_rc(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* The same, with the first line it printed in out (empty when none). */
int fixture_out(char *out, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* The wallet balance via arps-admin: available, frozen. */
void admin_wallet(const char *owner, long long *available, long long *frozen);

#endif
