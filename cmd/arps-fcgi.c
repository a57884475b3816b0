/* arps-fcgi: the FastCGI prefork pool.
 * Usage: arps-fcgi [--config PATH] | arps-fcgi --routes */
#include <stdio.h>
#include <string.h>

#include "fcgi/http.h"
#include "fcgi/pool.h"
#include "lib/config.h"
#include "lib/log.h"

static struct config cfg;	/* pool_run may reload it (SIGHUP) */

/* --routes: the routing table, one "METHOD PATTERN AUTH ROLES" line per
 * route, for tools/openapi-check.mjs to compare with docs/openapi.yaml. */
static int
print_routes(void)
{
	static const char *const auth[] = {
		[AUTH_NONE] = "none", [AUTH_KEY] = "key",
		[AUTH_BEARER] = "bearer", [AUTH_EITHER] = "either",
	};
	static const struct {
		unsigned bit;
		const char *name;
	} role[] = {
		{ ROLE_RESEARCHER, "researcher" }, { ROLE_PARTICIPANT, "participant" },
		{ ROLE_ADMIN, "admin" },
	};
	char roles[64];
	size_t i, j;

	for (i = 0; i < nroutes; i++) {
		roles[0] = '\0';
		for (j = 0; j < sizeof role / sizeof role[0]; j++)
			if (routes[i].roles & role[j].bit)
				snprintf(roles + strlen(roles), sizeof roles - strlen(roles), "%s%s",
				    roles[0] ? "," : "", role[j].name);
		printf("%s %s %s %s\n", routes[i].method, routes[i].pattern, auth[routes[i].auth],
		    roles[0] ? roles : "-");
	}
	return fflush(stdout) == 0 ? 0 : 1;
}

int
main(int argc, char *argv[])
{
	char err[1024];

	if (argc == 2 && strcmp(argv[1], "--routes") == 0)
		return print_routes();
	log_init("arps-fcgi");
	if (config_load(&cfg, config_path(argc, argv), err, sizeof err) != 0) {
		fprintf(stderr, "arps-fcgi: %s\n", err);
		return 2;
	}
	return pool_run(&cfg);
}
