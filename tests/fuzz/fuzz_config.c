/*
 * libFuzzer: the configuration file parser (lib/config.c) on any bytes an
 * operator's file may hold, read from memory (config_load_buf: no file per
 * execution; make fuzz).
 *
 * Checked beyond "no crash": a refusal says why in a message naming the
 * file; an accepted file has every required key, every integer within its
 * range, every string terminated inside its buffer, every identity
 * provider named in lowercase letters and digits with its issuer,
 * audience and key set, the cross-key rules held; and reading the same
 * bytes again gives the same configuration byte for byte.
 */
#include <ctype.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/config.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FCHECK(c) do { if (!(c)) { \
	fprintf(stderr, "fuzz invariant broken: %s (line %d)\n", #c, __LINE__); abort(); } } while (0)

#define STR_OK(s) (strnlen((s), sizeof(s)) < sizeof(s))

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct config a, b;
	char err[512], err2[512];
	size_t i, j;
	int rc;

	err[0] = '\0';
	rc = config_load_buf(&a, "fuzz.conf", (const char *)data, size, err, sizeof err);
	memset(&b, 0x5a, sizeof b);
	FCHECK(config_load_buf(&b, "fuzz.conf", (const char *)data, size, err2, sizeof err2) == rc);
	if (rc != 0) {
		FCHECK(rc == -1 && strncmp(err, "config: ", 8) == 0 && strstr(err, "fuzz.conf") != NULL);
		FCHECK(strcmp(err, err2) == 0);
		return 0;
	}
	/* the struct is zeroed first: the same bytes give the same bytes */
	FCHECK(memcmp(&a, &b, sizeof a) == 0);
	FCHECK(strcmp(a.path, "fuzz.conf") == 0);
	FCHECK(STR_OK(a.listen) && a.listen[0] != '\0');
	FCHECK(STR_OK(a.db_user) && a.db_user[0] != '\0');
	FCHECK(STR_OK(a.db_name) && a.db_name[0] != '\0');
	FCHECK(STR_OK(a.db_socket) && STR_OK(a.db_host) && STR_OK(a.db_password));
	FCHECK(STR_OK(a.migrations_dir) && a.migrations_dir[0] != '\0');
	FCHECK(STR_OK(a.model_path) && STR_OK(a.base_url));
	FCHECK(STR_OK(a.mail_transport) && a.mail_transport[0] != '\0');
	FCHECK(STR_OK(a.mail_from) && strlen(a.mail_from) >= 3);
	FCHECK(STR_OK(a.mail_smtp_user) && STR_OK(a.mail_smtp_password));
	FCHECK(a.workers >= 1 && a.workers <= 256);
	FCHECK(a.max_requests >= 0 && a.max_requests <= 100000000);
	FCHECK(a.db_port >= 1 && a.db_port <= 65535);
	FCHECK(a.fee_bps >= 0 && a.fee_bps <= 10000);
	FCHECK(a.max_study_budget_cents >= 1);
	FCHECK(a.deliver_claim_seconds > a.deliver_timeout && a.deliver_timeout >= 1);
	FCHECK(a.mail_retry_max >= a.mail_retry_min && a.mail_retry_min >= 1);
	FCHECK(a.webhook_concurrency >= 1 && a.webhook_concurrency <= 1024);
	FCHECK(a.test_fixtures == 0 || a.test_fixtures == 1);
	FCHECK(a.webhooks_allow_loopback == 0 || a.webhooks_allow_loopback == 1);
	FCHECK(a.nidp <= CONFIG_MAX_IDP);
	for (i = 0; i < a.nidp; i++) {
		const struct config_idp *p = &a.idp[i];

		FCHECK(STR_OK(p->name) && p->name[0] != '\0');
		for (j = 0; p->name[j] != '\0'; j++)
			FCHECK(islower((unsigned char)p->name[j]) || isdigit((unsigned char)p->name[j]));
		FCHECK(STR_OK(p->issuer) && p->issuer[0] != '\0');
		FCHECK(STR_OK(p->audience) && p->audience[0] != '\0');
		FCHECK(STR_OK(p->jwks) && p->jwks[0] != '\0');
		FCHECK(p->link_email == 0 || p->link_email == 1);
		FCHECK(config_idp(&a, p->name) == p);
		for (j = 0; j < i; j++)
			FCHECK(strcmp(a.idp[j].name, p->name) != 0);
	}
	return 0;
}
