/*
 * Configuration: one "key = value" file, '#' comments, every key validated
 * at start.  Found as --config PATH, else $ARPS_CONFIG, else
 * /etc/arps/arps.conf (design.md §8).
 * Convention of lib/ (design.md §2.3): 0, or -1 with the reason in the
 * caller's err buffer (or where the function says); bool for a predicate.
 */
#ifndef ARPS_LIB_CONFIG_H
#define ARPS_LIB_CONFIG_H

#include <stddef.h>
#include <stdint.h>

#define CONFIG_DEFAULT_PATH "/etc/arps/arps.conf"
#define CONFIG_MAX_IDP 8
#define CONFIG_STR 512

struct config_idp {
	char name[32];			/* lowercase provider name used in /auth/login */
	char issuer[CONFIG_STR];
	char audience[CONFIG_STR];
	char jwks[CONFIG_STR];		/* path of the provider's JWKS file */
	int link_email;			/* idp.NAME.link_email = true: a verified e-mail
					 * joins the account of that address
					 * (design.md §9.11); default false */
	/* Browser sign-in (design.md §12), optional, both or neither: the
	 * provider's authorization endpoint and the console's client id
	 * there; label is the button's text (default: the name).  Listed by
	 * GET /auth/providers only when set. */
	char authorize_url[CONFIG_STR];
	char client_id[CONFIG_STR];
	char label[CONFIG_STR];
};

#define CONFIG_DB_NODES 8	/* the most database nodes db_nodes may name */
#define CONFIG_APP_HOSTS 8	/* the most host patterns db_app_hosts may name */

struct config {
	char path[CONFIG_STR];		/* the file this came from */
	/* FastCGI pool */
	char listen[CONFIG_STR];	/* unix socket path, or "fd0" (systemd) */
	int64_t workers;
	int64_t max_requests;		/* recycle a worker after this many; 0 = never */
	int64_t shutdown_timeout;	/* seconds to let in-flight requests finish */
	int64_t request_watchdog;	/* seconds a request may run before its worker exits */
	/* a log line for every request, not only for those answered 5xx
	 * (design.md §15.2); default false: nginx's access log has each */
	int log_requests;
	/* MariaDB */
	char db_socket[CONFIG_STR];	/* unix socket; empty = TCP db_host:db_port */
	char db_host[CONFIG_STR];
	int64_t db_port;
	char db_user[CONFIG_STR];
	char db_password[CONFIG_STR];
	char db_name[CONFIG_STR];
	/* design.md §16: db_nodes = host[:port],... (db_port by default), in
	 * the order every host prefers them; empty: db_socket or db_host */
	char db_nodes[CONFIG_STR];
	size_t ndb_node;
	struct config_db_node {
		char host[128];
		int port;
	} db_node[CONFIG_DB_NODES];
	/* design.md §16: db_app_hosts = PATTERN,...: the MariaDB host
	 * patterns (an address, a name, 10.0.0.% or ADDR/MASK) that
	 * arps-admin setup-db creates arps_app and arps_migrate for, besides
	 * localhost; empty: localhost only */
	char db_app_hosts[CONFIG_STR];
	size_t napp_host;
	char app_host[CONFIG_APP_HOSTS][64];
	char migrations_dir[CONFIG_STR];
	/* secrets: 32 bytes each, given as 64 hex characters */
	unsigned char pepper[32];	/* keyed hash of API keys, tokens, codes */
	unsigned char id_secret[32];	/* HMAC of anonymous participant ids */
	/* money */
	int64_t fee_bps;
	int64_t signup_bonus_cents;
	int64_t max_study_budget_cents;
	/* matching */
	char model_path[CONFIG_STR];
	/* arps-embed: how often an empty queue is looked at again (ms) */
	int64_t embed_poll_ms;
	int64_t first_access_minutes;
	int64_t basic_max_studies;
	int64_t matched_fanout;		/* study.matched events a study, at most */
	/* exact limits (design.md §6.9), per rolling hour */
	int64_t register_per_ip_hour;
	int64_t bio_updates_per_hour;	/* POST /profile/bio per agent (design.md §1.6) */
	int64_t login_codes_per_hour;		/* send-code per address */
	/* messages (design.md §13): a researcher's recipients, an agent's replies */
	int64_t message_recipients_per_hour;
	int64_t message_replies_per_hour;
	/* design.md §9.2-9.3, per rolling hour, per client network (core/netkey.h) */
	int64_t send_code_per_network_hour;
	int64_t login_failures_per_address_hour;	/* the last one burns the code */
	int64_t login_failures_per_network_hour;
	int64_t claim_failures_per_account_hour;
	int64_t claim_failures_per_network_hour;
	/* mail (lib/mail.h), delivered by arps-deliver */
	char mail_transport[CONFIG_STR];	/* file:DIR, smtp[s]://HOST[:PORT], sendmail[:PATH] */
	char mail_from[CONFIG_STR];
	char mail_smtp_user[CONFIG_STR];	/* "" = no SMTP authentication */
	char mail_smtp_password[CONFIG_STR];
	int64_t mail_retry_min;		/* seconds before the first retry; doubles */
	int64_t mail_retry_max;		/* cap of the interval between tries */
	int64_t mail_give_up;		/* seconds after queueing: the message is dead */
	/* arps-deliver */
	int64_t deliver_poll_ms;	/* idle poll interval */
	int64_t deliver_claim_seconds;	/* a claim's lease: re-sent after this if never marked */
	int64_t deliver_timeout;	/* seconds one transport call may take (< the lease) */
	char base_url[CONFIG_STR];
	/* identity providers: idp.<name>.issuer / .audience / .jwks / .link_email,
	 * browser sign-in: .authorize_url / .client_id / .label */
	struct config_idp idp[CONFIG_MAX_IDP];
	size_t nidp;
	/* arps-admin test ... (tests/lib/fixture.h) allowed: only the dev, test and
	 * bench stacks write test_fixtures = true; default false */
	int test_fixtures;
	/* webhooks (design.md §11): loopback http targets (dev stack only),
	 * the first retry delay (doubling up to webhook_retry_max_seconds),
	 * concurrent deliveries of one arps-deliver */
	int webhooks_allow_loopback;
	int64_t webhook_retry_first_seconds;
	int64_t webhook_retry_max_seconds;
	int64_t webhook_concurrency;
	int64_t webhook_timeout_seconds;	/* one try, connect included */
};

/*
 * Pick the config path from argv ("--config PATH"), $ARPS_CONFIG or the
 * default.  Returns a pointer into argv, the environment or a literal.
 */
const char *config_path(int argc, char *argv[]);

/*
 * Read and validate the file at path into cfg (defaults first).  Returns 0,
 * or -1 with a message naming the file, line and key in err.
 */
int config_load(struct config *cfg, const char *path, char *err, size_t errsz);

/* The same on the text buf[0..len) (NUL bytes allowed), named name in the
 * messages: the fuzz harness (tests/fuzz/fuzz_config.c) reads no file. */
int config_load_buf(struct config *cfg, const char *name, const char *buf, size_t len, char *err,
    size_t errsz);

/* Look up an identity provider by name; NULL when not configured. */
const struct config_idp *config_idp(const struct config *cfg, const char *name);

#endif
