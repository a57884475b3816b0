/* Configuration: every key validated, with a message naming the key. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "lib/config.h"

#define BASE "listen = /tmp/x.sock\ndb_user = u\ndb_name = n\n" \
	"pepper = 0000000000000000000000000000000000000000000000000000000000000000\n" \
	"id_secret = 1111111111111111111111111111111111111111111111111111111111111111\n"

static int
load(const char *text, struct config *cfg, char *err, size_t n)
{
	char path[] = "/tmp/arps-conf-XXXXXX";
	int fd = mkstemp(path), rc;

	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
	rc = config_load(cfg, path, err, n);
	unlink(path);
	return rc;
}

static void
good_file(void **state)
{
	static struct config cfg;
	char err[512] = "";

	(void)state;
	assert_int_equal(load(BASE "workers = 8\n# comment\n\nfee_bps = 250\n"
	    "idp.google.issuer = https://accounts.google.com\nidp.google.audience = x\n"
	    "idp.google.jwks = /etc/arps/google.json\n"
	    "idp.google.authorize_url = https://accounts.google.com/o/oauth2/v2/auth\n"
	    "idp.google.client_id = x\nidp.google.label = Google\n", &cfg, err, sizeof err), 0);
	assert_int_equal(cfg.workers, 8);
	assert_int_equal(cfg.fee_bps, 250);
	assert_int_equal(cfg.signup_bonus_cents, 100);	/* default */
	assert_int_equal(cfg.register_per_ip_hour, 10);	/* design.md §6.9 */
	assert_int_equal(cfg.login_codes_per_hour, 5);
	assert_int_equal(cfg.send_code_per_network_hour, 20);	/* design.md §9.2 */
	assert_int_equal(cfg.login_failures_per_address_hour, 10);
	assert_int_equal(cfg.login_failures_per_network_hour, 30);
	assert_int_equal(cfg.claim_failures_per_account_hour, 10);	/* design.md §9.3 */
	assert_int_equal(cfg.claim_failures_per_network_hour, 30);
	assert_int_equal(cfg.pepper[0], 0);
	assert_int_equal(cfg.id_secret[31], 0x11);
	assert_non_null(config_idp(&cfg, "google"));
	assert_null(config_idp(&cfg, "dev"));
	/* browser sign-in keys (design.md §12) */
	assert_string_equal(config_idp(&cfg, "google")->authorize_url,
	    "https://accounts.google.com/o/oauth2/v2/auth");
	assert_string_equal(config_idp(&cfg, "google")->client_id, "x");
	assert_string_equal(config_idp(&cfg, "google")->label, "Google");
}

static void
bad_files(void **state)
{
	static const struct { const char *text, *needle; } rows[] = {
		{ BASE "workers = 0\n", "workers: out of range" },
		{ BASE "workers = 9x\n", "workers: not an integer" },
		{ BASE "fee_bps = 10001\n", "fee_bps: out of range" },
		{ BASE "colour = blue\n", "colour: unknown key" },
		{ BASE "just words\n", "expected key = value" },
		{ "db_user = u\ndb_name = n\n", "required key" },
		{ BASE "pepper = abc\n", "pepper: must be 64 hex" },
		{ BASE "idp.dev.issuer = x\n", "idp.dev needs issuer, audience and jwks" },
		{ BASE "idp.Dev.issuer = x\n", "lowercase" },
#define IDP "idp.d.issuer = i\nidp.d.audience = a\nidp.d.jwks = /j\n"
		{ BASE IDP "idp.d.authorize_url = ftp://idp/auth\nidp.d.client_id = a\n",
		  "idp.d.authorize_url: authorize_url must be an http:// or https:// URL" },
		{ BASE IDP "idp.d.authorize_url = https://idp/auth#x\nidp.d.client_id = a\n",
		  "idp.d.authorize_url: authorize_url must not hold" },
		{ BASE IDP "idp.d.authorize_url = https://idp/auth\n",
		  "idp.d: authorize_url and client_id go together" },
		{ BASE IDP "idp.d.client_id = a\n", "idp.d: authorize_url and client_id go together" },
		{ BASE IDP "idp.d.colour = red\n", "idp.d.colour: expected idp.<name>.issuer" },
		{ BASE "mail_transport = smtp\n", "mail_transport" },
		{ BASE "db_port = 70000\n", "db_port: out of range" },
		{ BASE "db_nodes = a:0\n", "db_nodes: a port is not 1 to 65535" },
		{ BASE "db_nodes = a,,b\n", "db_nodes: an empty node" },
		{ BASE "db_nodes = a b:3306\n", "db_nodes: a host is not a name" },
		{ BASE "db_nodes = a,b,c,d,e,f,g,h,i\n", "db_nodes: too many nodes" },
		{ BASE "db_app_hosts = 10.0.0.%,,a\n", "db_app_hosts: an empty host pattern" },
		{ BASE "db_app_hosts = 10.0.0.'%\n", "db_app_hosts: a host pattern is not" },
		{ BASE "db_app_hosts = a b\n", "db_app_hosts: a host pattern is not" },
		{ BASE "db_app_hosts = a\\%\n", "db_app_hosts: a host pattern is not" },
		{ BASE "db_app_hosts = localhost\n", "db_app_hosts: localhost is always created" },
		{ BASE "db_app_hosts = a,b,c,d,e,f,g,h,i\n", "db_app_hosts: too many host patterns" },
		{ BASE "register_per_ip_hour = 0\n", "register_per_ip_hour: out of range" },
		{ BASE "login_codes_per_hour = -1\n", "login_codes_per_hour: out of range" },
		{ BASE "test_fixtures = yes\n", "test_fixtures: expected true or false" },
		{ BASE "test_fixtures = 1\n", "test_fixtures: expected true or false" },
	};
	static struct config cfg;
	char err[512];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof rows / sizeof rows[0]; i++) {
		err[0] = '\0';
		assert_int_equal(load(rows[i].text, &cfg, err, sizeof err), -1);
		if (strstr(err, rows[i].needle) == NULL)
			fail_msg("row %zu: '%s' does not mention '%s'", i, err, rows[i].needle);
	}
}

/* design.md §16: the node list in order, a port defaulting to db_port;
 * none by default (db_socket or db_host). */
static void
db_nodes_key(void **state)
{
	static struct config cfg;
	char err[512] = "";

	(void)state;
	assert_int_equal(load(BASE, &cfg, err, sizeof err), 0);
	assert_int_equal(cfg.ndb_node, 0);
	assert_int_equal(load(BASE "db_port = 3307\ndb_nodes = db1.example.org, 10.0.0.2:3308 ,db3\n",
	    &cfg, err, sizeof err), 0);
	assert_int_equal(cfg.ndb_node, 3);
	assert_string_equal(cfg.db_node[0].host, "db1.example.org");
	assert_int_equal(cfg.db_node[0].port, 3307);
	assert_string_equal(cfg.db_node[1].host, "10.0.0.2");
	assert_int_equal(cfg.db_node[1].port, 3308);
	assert_string_equal(cfg.db_node[2].host, "db3");
	assert_int_equal(cfg.db_node[2].port, 3307);
}

/* design.md §16: the app user's host patterns for setup-db, besides
 * localhost; none by default. */
static void
db_app_hosts_key(void **state)
{
	static struct config cfg;
	char err[512] = "";

	(void)state;
	assert_int_equal(load(BASE, &cfg, err, sizeof err), 0);
	assert_int_equal(cfg.napp_host, 0);
	assert_int_equal(load(BASE "db_app_hosts = 10.0.0.% , app1.example.org,"
	    "10.1.0.0/255.255.0.0\n", &cfg, err, sizeof err), 0);
	assert_int_equal(cfg.napp_host, 3);
	assert_string_equal(cfg.app_host[0], "10.0.0.%");
	assert_string_equal(cfg.app_host[1], "app1.example.org");
	assert_string_equal(cfg.app_host[2], "10.1.0.0/255.255.0.0");
}

/* arps-fixture is off unless a test stack's config turns it on. */
static void
fixtures_key(void **state)
{
	static struct config cfg;
	char err[512] = "";

	(void)state;
	assert_int_equal(load(BASE, &cfg, err, sizeof err), 0);
	assert_int_equal(cfg.test_fixtures, 0);
	assert_int_equal(load(BASE "test_fixtures = true\n", &cfg, err, sizeof err), 0);
	assert_int_equal(cfg.test_fixtures, 1);
	assert_int_equal(load(BASE "test_fixtures = true\ntest_fixtures = false\n", &cfg, err,
	    sizeof err), 0);
	assert_int_equal(cfg.test_fixtures, 0);
}

static void
path_order(void **state)
{
	char *argv[] = { "x", "--config", "/a.conf", NULL };

	(void)state;
	setenv("ARPS_CONFIG", "/b.conf", 1);
	assert_string_equal(config_path(3, argv), "/a.conf");
	assert_string_equal(config_path(1, argv), "/b.conf");
	unsetenv("ARPS_CONFIG");
	assert_string_equal(config_path(1, argv), "/etc/arps/arps.conf");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(good_file),
		cmocka_unit_test(bad_files),
		cmocka_unit_test(fixtures_key),
		cmocka_unit_test(db_nodes_key),
		cmocka_unit_test(db_app_hosts_key),
		cmocka_unit_test(path_order),
	};
	const char *keep = getenv("ARPS_CONFIG");
	char saved[1024] = "";
	int rc;

	if (keep)
		snprintf(saved, sizeof saved, "%s", keep);
	rc = cmocka_run_group_tests_name("config", tests, NULL, NULL);
	if (saved[0])
		setenv("ARPS_CONFIG", saved, 1);
	return rc;
}
