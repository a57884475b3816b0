/*
 * arps-admin: the operator CLI.  Exit 0 on success, 1 with a one-line
 * reason on a refused operation, 2 on usage errors (design.md §6.20).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "txn/admin.h"
#include "admin/setup.h"
#include "lib/jwks.h"
#include "db/db.h"
#include "lib/config.h"
#include "lib/log.h"
#include "lib/secret.h"

static struct config cfg, mcfg;

static const struct cmd {
	const char *name;
	int nargs;
	const char *usage;
	int (*fn)(struct db *, const struct config *, char **);
} cmds[] = {
	{ "setup-db",       -1, "setup-db [--rotate]  (as root: database, users, grants, migrate)", NULL },
	{ "migrate",         0, "migrate", admin_migrate },
	{ "create-account",  1, "create-account EMAIL", admin_create_account },
	{ "grant",           2, "grant EMAIL|ACC_ID researcher|participant|admin", admin_grant },
	{ "revoke",          2, "revoke EMAIL|ACC_ID researcher|participant|admin", admin_revoke },
	{ "topup",           2, "topup EMAIL|ACC_ID|AGT_ID CENTS  (US cents: 1000 = 10.00 USD)",
	    admin_topup },
	{ "cashout",         2, "cashout EMAIL|ACC_ID|AGT_ID CENTS  (US cents)", admin_cashout },
	{ "cashout-paid",    2, "cashout-paid COT_ID REFERENCE  (a requested cash-out was paid "
	    "outside)", admin_cashout_paid },
	{ "cashout-refuse",  2, "cashout-refuse COT_ID REASON  (the money returns to the wallet)",
	    admin_cashout_refuse },
	{ "wallet",          1, "wallet EMAIL|ACC_ID|AGT_ID", admin_wallet },
	{ "suspend-agent",   1, "suspend-agent AGT_ID", admin_suspend },
	{ "reinstate-agent", 1, "reinstate-agent AGT_ID", admin_reinstate },
	{ "verify-ledger",   0, "verify-ledger", admin_verify_ledger },
	{ "jwks",           -1, "jwks PEM=KID ... (public JWKS of key files, to stdout)", NULL },
};

static int
usage(void)
{
	size_t i;

	fprintf(stderr, "usage: arps-admin [--config PATH] COMMAND ...\ncommands:\n");
	for (i = 0; i < sizeof cmds / sizeof cmds[0]; i++)
		fprintf(stderr, "  %s\n", cmds[i].usage);
	return 2;
}

int
main(int argc, char *argv[])
{
	char err[1024], *args[17];
	int i, n = 0, rc;
	struct db *db;
	size_t c;

	log_init("arps-admin");
	if (secret_init() != 0) {
		fprintf(stderr, "arps-admin: libsodium failed to initialise\n");
		return 1;
	}
	for (i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--config") == 0) {
			i++;
			continue;
		}
		if (n == 16)
			return usage();
		args[n++] = argv[i];
	}
	args[n] = NULL;
	if (n == 0)
		return usage();
	for (c = 0; c < sizeof cmds / sizeof cmds[0]; c++)
		if (strcmp(cmds[c].name, args[0]) == 0)
			break;
	if (c == sizeof cmds / sizeof cmds[0] || (cmds[c].nargs >= 0 && n - 1 != cmds[c].nargs) ||
	    (cmds[c].nargs < 0 && n < 2 && cmds[c].fn == NULL && strcmp(args[0], "jwks") == 0))
		return usage();
	if (strcmp(cmds[c].name, "setup-db") == 0 &&
	    (n > 2 || (n == 2 && strcmp(args[1], "--rotate") != 0)))
		return usage();
	if (cmds[c].fn == NULL && strcmp(cmds[c].name, "jwks") == 0)	/* no database */
		return jwks_from_pems(args + 1, n - 1, stdout) == 0 ? 0 : 1;
	if (config_load(&cfg, config_path(argc, argv), err, sizeof err) != 0) {
		fprintf(stderr, "arps-admin: %s\n", err);
		return 2;
	}
	if (cmds[c].fn == NULL)		/* setup-db: connects as root itself */
		return setup_db(&cfg, n == 2);
	/* migrate runs as arps_migrate when setup-db wrote its credentials. */
	mcfg = cfg;
	if (cmds[c].fn == admin_migrate && setup_migrate_config(&cfg, &mcfg) < 0)
		return 1;
	if ((db = db_open(&mcfg)) == NULL || db_ensure(db) != DB_OK) {
		fprintf(stderr, "arps-admin: cannot connect to the database: %s\n",
		    db ? db_error(db) : "out of memory");
		db_close(db);
		return 1;
	}
	rc = cmds[c].fn(db, &mcfg, args + 1);
	db_close(db);
	return rc;
}
