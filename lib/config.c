#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/validate.h"
#include "lib/config.h"
#include "lib/mail.h"

enum ctype { C_STR, C_INT, C_SECRET, C_BOOL };	/* C_BOOL: "true" or "false" into an int */

/* One row per key: where it goes, its type and its range. */
static const struct ckey {
	const char *key;
	enum ctype type;
	size_t off;
	int64_t min, max;	/* C_INT range; C_STR minimum length */
	const char *def;	/* NULL: required */
} keys[] = {
#define O(f) offsetof(struct config, f)
	{ "listen",                 C_STR,    O(listen), 1, 0, NULL },
	{ "workers",                C_INT,    O(workers), 1, 256, "4" },
	{ "max_requests",           C_INT,    O(max_requests), 0, 100000000, "10000" },
	{ "shutdown_timeout",       C_INT,    O(shutdown_timeout), 1, 3600, "30" },
	{ "request_watchdog",       C_INT,    O(request_watchdog), 2, 3600, "60" },
	{ "log_requests",           C_BOOL,   O(log_requests), 0, 0, "false" },
	{ "db_socket",              C_STR,    O(db_socket), 0, 0, "" },
	{ "db_host",                C_STR,    O(db_host), 0, 0, "127.0.0.1" },
	{ "db_port",                C_INT,    O(db_port), 1, 65535, "3306" },
	{ "db_user",                C_STR,    O(db_user), 1, 0, NULL },
	{ "db_password",            C_STR,    O(db_password), 0, 0, "" },
	{ "db_name",                C_STR,    O(db_name), 1, 0, NULL },
	{ "db_nodes",               C_STR,    O(db_nodes), 0, 0, "" },
	{ "db_app_hosts",           C_STR,    O(db_app_hosts), 0, 0, "" },
	{ "migrations_dir",         C_STR,    O(migrations_dir), 1, 0, "/usr/local/share/arps/migrations" },
	{ "pepper",                 C_SECRET, O(pepper), 0, 0, NULL },
	{ "id_secret",              C_SECRET, O(id_secret), 0, 0, NULL },
	{ "fee_bps",                C_INT,    O(fee_bps), 0, 10000, "1000" },
	{ "signup_bonus_cents",     C_INT,    O(signup_bonus_cents), 0, 100000000, "100" },
	{ "max_study_budget_cents", C_INT,    O(max_study_budget_cents), 1, 100000000000000LL, "10000000000" },
	{ "model_path",             C_STR,    O(model_path), 0, 0, "" },
	{ "embed_poll_ms",          C_INT,    O(embed_poll_ms), 10, 10000, "250" },
	{ "first_access_minutes",   C_INT,    O(first_access_minutes), 0, 10080, "15" },
	{ "basic_max_studies",      C_INT,    O(basic_max_studies), 0, 1000, "5" },
	{ "matched_fanout",         C_INT,    O(matched_fanout), 1, 100000, "200" },
	{ "register_per_ip_hour",   C_INT,    O(register_per_ip_hour), 1, 1000000, "10" },
	{ "bio_updates_per_hour",   C_INT,    O(bio_updates_per_hour), 1, 1000000, "10" },
	{ "login_codes_per_hour",   C_INT,    O(login_codes_per_hour), 1, 1000000, "5" },
	{ "message_recipients_per_hour", C_INT, O(message_recipients_per_hour), 1, 1000000, "2000" },
	{ "message_replies_per_hour", C_INT,  O(message_replies_per_hour), 1, 1000000, "30" },
	{ "send_code_per_network_hour", C_INT, O(send_code_per_network_hour), 1, 1000000, "20" },
	{ "login_failures_per_address_hour", C_INT, O(login_failures_per_address_hour), 1, 1000000,
	  "10" },
	{ "login_failures_per_network_hour", C_INT, O(login_failures_per_network_hour), 1, 1000000,
	  "30" },
	{ "claim_failures_per_account_hour", C_INT, O(claim_failures_per_account_hour), 1, 1000000,
	  "10" },
	{ "claim_failures_per_network_hour", C_INT, O(claim_failures_per_network_hour), 1, 1000000,
	  "30" },
	{ "mail_transport",         C_STR,    O(mail_transport), 1, 0, "sendmail" },
	{ "mail_from",              C_STR,    O(mail_from), 3, 0, "arps@localhost" },
	{ "mail_smtp_user",         C_STR,    O(mail_smtp_user), 0, 0, "" },
	{ "mail_smtp_password",     C_STR,    O(mail_smtp_password), 0, 0, "" },
	{ "mail_retry_min",         C_INT,    O(mail_retry_min), 1, 86400, "10" },
	{ "mail_retry_max",         C_INT,    O(mail_retry_max), 1, 86400, "300" },
	{ "mail_give_up",           C_INT,    O(mail_give_up), 1, 30 * 86400, "3600" },
	{ "deliver_poll_ms",        C_INT,    O(deliver_poll_ms), 10, 60000, "200" },
	{ "deliver_claim_seconds",  C_INT,    O(deliver_claim_seconds), 2, 86400, "120" },
	{ "deliver_timeout",        C_INT,    O(deliver_timeout), 1, 3600, "30" },
	{ "base_url",               C_STR,    O(base_url), 0, 0, "" },
	{ "test_fixtures",          C_BOOL,   O(test_fixtures), 0, 0, "false" },
	{ "webhooks_allow_loopback", C_BOOL,  O(webhooks_allow_loopback), 0, 0, "false" },
	{ "webhook_retry_first_seconds", C_INT, O(webhook_retry_first_seconds), 1, 3600, "10" },
	{ "webhook_retry_max_seconds", C_INT, O(webhook_retry_max_seconds), 1, 86400, "3600" },
	{ "webhook_concurrency",    C_INT,    O(webhook_concurrency), 1, 1024, "64" },
	{ "webhook_timeout_seconds", C_INT,   O(webhook_timeout_seconds), 1, 60, "10" },
#undef O
};
#define NKEYS (sizeof keys / sizeof keys[0])

const char *
config_path(int argc, char *argv[])
{
	const char *env;
	int i;

	for (i = 1; i < argc - 1; i++)
		if (strcmp(argv[i], "--config") == 0)
			return argv[i + 1];
	if ((env = getenv("ARPS_CONFIG")) != NULL && *env != '\0')
		return env;
	return CONFIG_DEFAULT_PATH;
}

/* Store one value; returns NULL or a reason. */
static const char *
setkey(struct config *cfg, const struct ckey *k, const char *v)
{
	char *dst = (char *)cfg + k->off;
	size_t len = strlen(v), i;
	long long n;
	char *end;

	switch (k->type) {
	case C_STR:
		if (len >= CONFIG_STR)
			return "value too long";
		if ((int64_t)len < k->min)
			return "value must not be empty";
		memcpy(dst, v, len + 1);
		return NULL;
	case C_INT:
		errno = 0;
		n = strtoll(v, &end, 10);
		if (errno != 0 || end == v || *end != '\0')
			return "not an integer";
		if (n < k->min || n > k->max)
			return "out of range";
		memcpy(dst, &(int64_t){ n }, sizeof(int64_t));
		return NULL;
	case C_BOOL:
		if (strcmp(v, "true") != 0 && strcmp(v, "false") != 0)
			return "expected true or false";
		memcpy(dst, &(int){ strcmp(v, "true") == 0 }, sizeof(int));
		return NULL;
	case C_SECRET:
		if (len != 64)
			return "must be 64 hex characters (32 bytes)";
		for (i = 0; i < 32; i++) {
			int hi = val_hexval((unsigned char)v[2 * i]);
			int lo = val_hexval((unsigned char)v[2 * i + 1]);
			if (hi < 0 || lo < 0)
				return "must be 64 hex characters (32 bytes)";
			((unsigned char *)dst)[i] = (unsigned char)(hi << 4 | lo);
		}
		return NULL;
	}
	return "bad key type";
}

#define IDP_FIELDS \
	"expected idp.<name>.issuer|audience|jwks|link_email|authorize_url|client_id|label"

/* idp.<name>.<field> = value */
static const char *
setidp(struct config *cfg, const char *key, const char *v)
{
	const char *name = key + 4, *dot = strchr(name, '.');
	struct config_idp *p = NULL;
	size_t nlen, i;
	char *dst;

	if (dot == NULL || dot == name || (nlen = (size_t)(dot - name)) >= sizeof p->name)
		return IDP_FIELDS;
	for (i = 0; i < nlen; i++)
		if (!islower((unsigned char)name[i]) && !isdigit((unsigned char)name[i]))
			return "provider name must be lowercase letters and digits";
	if (strlen(v) == 0 || strlen(v) >= CONFIG_STR)
		return "value empty or too long";
	for (i = 0; i < cfg->nidp; i++)
		if (strncmp(cfg->idp[i].name, name, nlen) == 0 && cfg->idp[i].name[nlen] == '\0')
			p = &cfg->idp[i];
	if (p == NULL) {
		if (cfg->nidp == CONFIG_MAX_IDP)
			return "too many identity providers";
		p = &cfg->idp[cfg->nidp++];
		memcpy(p->name, name, nlen);
		p->name[nlen] = '\0';
	}
	if (strcmp(dot + 1, "link_email") == 0) {
		/* design.md §9.11: join an existing account by verified e-mail */
		if (strcmp(v, "true") == 0)
			p->link_email = 1;
		else if (strcmp(v, "false") == 0)
			p->link_email = 0;
		else
			return "link_email must be true or false";
		return NULL;
	}
	if (strcmp(dot + 1, "issuer") == 0)
		dst = p->issuer;
	else if (strcmp(dot + 1, "audience") == 0)
		dst = p->audience;
	else if (strcmp(dot + 1, "jwks") == 0)
		dst = p->jwks;
	else if (strcmp(dot + 1, "authorize_url") == 0) {
		/* design.md §12: where the console sends the browser */
		if (strncmp(v, "https://", 8) != 0 && strncmp(v, "http://", 7) != 0)
			return "authorize_url must be an http:// or https:// URL";
		for (i = 0; v[i] != '\0'; i++)
			if (!isgraph((unsigned char)v[i]) || v[i] == '#')
				return "authorize_url must not hold spaces, controls or a fragment";
		dst = p->authorize_url;
	} else if (strcmp(dot + 1, "client_id") == 0)
		dst = p->client_id;
	else if (strcmp(dot + 1, "label") == 0)
		dst = p->label;
	else
		return IDP_FIELDS;
	strcpy(dst, v);
	return NULL;
}

static char *
trim(char *s)
{
	char *e;

	while (isspace((unsigned char)*s))
		s++;
	e = s + strlen(s);
	while (e > s && isspace((unsigned char)e[-1]))
		*--e = '\0';
	return s;
}

/* db_nodes into cfg->db_node: host[:port] items, comma-separated, each
 * host of [A-Za-z0-9.-] (a name or an IPv4 address); NULL or a reason. */
static const char *
parse_nodes(struct config *cfg)
{
	char buf[CONFIG_STR], *item, *next, *colon, *end;
	long port;

	cfg->ndb_node = 0;
	snprintf(buf, sizeof buf, "%s", cfg->db_nodes);
	if (buf[0] == '\0')
		return NULL;
	for (item = buf; item != NULL; item = next) {
		struct config_db_node *nd;

		if ((next = strchr(item, ',')) != NULL)
			*next++ = '\0';
		item = trim(item);
		if (*item == '\0')
			return "an empty node";
		if (cfg->ndb_node == CONFIG_DB_NODES)
			return "too many nodes (at most 8)";
		nd = &cfg->db_node[cfg->ndb_node];
		nd->port = (int)cfg->db_port;
		if ((colon = strchr(item, ':')) != NULL) {
			*colon = '\0';
			errno = 0;
			port = strtol(colon + 1, &end, 10);
			if (errno != 0 || end == colon + 1 || *end != '\0' || port < 1 || port > 65535)
				return "a port is not 1 to 65535";
			nd->port = (int)port;
		}
		if (*item == '\0' || strlen(item) >= sizeof nd->host ||
		    strspn(item, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-") !=
		    strlen(item))
			return "a host is not a name or an IPv4 address";
		snprintf(nd->host, sizeof nd->host, "%s", item);
		cfg->ndb_node++;
	}
	return NULL;
}

/* db_app_hosts into cfg->app_host: comma-separated MariaDB host patterns,
 * each of [A-Za-z0-9.%_:/-] (no quote: setup-db puts them into statements
 * that take no placeholders), not localhost (always there); NULL or a
 * reason. */
static const char *
parse_app_hosts(struct config *cfg)
{
	char buf[CONFIG_STR], *item, *next;

	cfg->napp_host = 0;
	snprintf(buf, sizeof buf, "%s", cfg->db_app_hosts);
	if (trim(buf)[0] == '\0')
		return NULL;
	for (item = buf; item != NULL; item = next) {
		if ((next = strchr(item, ',')) != NULL)
			*next++ = '\0';
		item = trim(item);
		if (*item == '\0')
			return "an empty host pattern";
		if (cfg->napp_host == CONFIG_APP_HOSTS)
			return "too many host patterns (at most 8)";
		if (strlen(item) >= sizeof cfg->app_host[0] ||
		    strspn(item, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.%_:/-") !=
		    strlen(item))
			return "a host pattern is not a name, an address, a % pattern or ADDR/MASK";
		if (strcmp(item, "localhost") == 0)
			return "localhost is always created; list the other hosts";
		snprintf(cfg->app_host[cfg->napp_host++], sizeof cfg->app_host[0], "%s", item);
	}
	return NULL;
}

/* Read the open file f (named path in messages) into cfg: defaults first,
 * then every line, then the checks across keys.  Closes f. */
static int
config_read(struct config *cfg, FILE *f, const char *path, char *err, size_t errsz)
{
	char line[2048], seen[NKEYS] = { 0 };
	const char *why;
	unsigned lineno = 0;
	size_t i;

	memset(cfg, 0, sizeof *cfg);
	snprintf(cfg->path, sizeof cfg->path, "%s", path);
	for (i = 0; i < NKEYS; i++)
		if (keys[i].def != NULL && setkey(cfg, &keys[i], keys[i].def) != NULL) {
			snprintf(err, errsz, "config: bad default for %s", keys[i].key);
			goto fail;
		}
	while (fgets(line, sizeof line, f) != NULL) {
		char *k, *v, *eq;

		lineno++;
		if (strchr(line, '\n') == NULL && !feof(f)) {
			snprintf(err, errsz, "config: %s:%u: line too long", path, lineno);
			goto fail;
		}
		k = trim(line);
		if (*k == '\0' || *k == '#')
			continue;
		if ((eq = strchr(k, '=')) == NULL) {
			snprintf(err, errsz, "config: %s:%u: expected key = value", path, lineno);
			goto fail;
		}
		*eq = '\0';
		k = trim(k);
		v = trim(eq + 1);
		if (strncmp(k, "idp.", 4) == 0) {
			if ((why = setidp(cfg, k, v)) != NULL)
				goto badkey;
			continue;
		}
		for (i = 0; i < NKEYS; i++)
			if (strcmp(keys[i].key, k) == 0)
				break;
		if (i == NKEYS) {
			why = "unknown key";
			goto badkey;
		}
		if ((why = setkey(cfg, &keys[i], v)) != NULL)
			goto badkey;
		seen[i] = 1;
		continue;
badkey:
		snprintf(err, errsz, "config: %s:%u: %s: %s", path, lineno, k, why);
		goto fail;
	}
	fclose(f);
	for (i = 0; i < NKEYS; i++)
		if (keys[i].def == NULL && !seen[i]) {
			snprintf(err, errsz, "config: %s: required key %s is missing", path, keys[i].key);
			return -1;
		}
	for (i = 0; i < cfg->nidp; i++)
		if (!cfg->idp[i].issuer[0] || !cfg->idp[i].audience[0] || !cfg->idp[i].jwks[0]) {
			snprintf(err, errsz, "config: %s: idp.%s needs issuer, audience and jwks",
			    path, cfg->idp[i].name);
			return -1;
		} else if (!cfg->idp[i].authorize_url[0] != !cfg->idp[i].client_id[0]) {
			snprintf(err, errsz, "config: %s: idp.%s: authorize_url and client_id go together",
			    path, cfg->idp[i].name);
			return -1;
		}
	if ((why = parse_nodes(cfg)) != NULL) {
		snprintf(err, errsz, "config: %s: db_nodes: %s", path, why);
		return -1;
	}
	if ((why = parse_app_hosts(cfg)) != NULL) {
		snprintf(err, errsz, "config: %s: db_app_hosts: %s", path, why);
		return -1;
	}
	if ((why = mail_transport_invalid(cfg->mail_transport)) != NULL) {
		snprintf(err, errsz, "config: %s: mail_transport: %s", path, why);
		return -1;
	}
	if (cfg->deliver_claim_seconds <= cfg->deliver_timeout) {
		snprintf(err, errsz, "config: %s: deliver_claim_seconds must exceed deliver_timeout",
		    path);
		return -1;
	}
	if (cfg->mail_retry_max < cfg->mail_retry_min) {
		snprintf(err, errsz, "config: %s: mail_retry_max must be at least mail_retry_min", path);
		return -1;
	}
	return 0;
fail:
	fclose(f);
	return -1;
}

int
config_load(struct config *cfg, const char *path, char *err, size_t errsz)
{
	FILE *f;

	if ((f = fopen(path, "re")) == NULL) {
		memset(cfg, 0, sizeof *cfg);
		snprintf(err, errsz, "config: %s: %s", path, strerror(errno));
		return -1;
	}
	return config_read(cfg, f, path, err, errsz);
}

int
config_load_buf(struct config *cfg, const char *name, const char *buf, size_t len, char *err,
    size_t errsz)
{
	static const char empty[1];
	FILE *f;

	/* fmemopen wants a non-empty buffer: an empty file reads as one NUL */
	if ((f = fmemopen((void *)(len > 0 ? buf : empty), len > 0 ? len : 1, "r")) == NULL) {
		memset(cfg, 0, sizeof *cfg);
		snprintf(err, errsz, "config: %s: %s", name, strerror(errno));
		return -1;
	}
	return config_read(cfg, f, name, err, errsz);
}

const struct config_idp *
config_idp(const struct config *cfg, const char *name)
{
	size_t i;

	for (i = 0; i < cfg->nidp; i++)
		if (strcmp(cfg->idp[i].name, name) == 0)
			return &cfg->idp[i];
	return NULL;
}
