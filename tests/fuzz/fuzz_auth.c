/* The fuzz harnesses' authentication (see fuzz_edge.h): linked instead of
 * fcgi/auth.c, admits fuzz_who with the route's roles and touches no
 * database.  The real credential checks are fuzzed through fuzz_core
 * (apikey_check, token_valid) and answered by the API suites. */
#include <stdio.h>
#include <string.h>

#include "fcgi/auth.h"
#include "tests/fuzz/fuzz_edge.h"

enum auth_kind fuzz_who = AUTH_KEY;

enum h_rc
auth_resolve_or_reply(struct req *r, enum auth_kind kind, unsigned roles)
{
	enum auth_kind as = kind == AUTH_EITHER ? fuzz_who : kind;

	(void)roles;
	if (kind == AUTH_NONE)
		return H_OK;
	memset(&r->who, 0, sizeof r->who);
	r->who.kind = as;
	if (as == AUTH_KEY)
		snprintf(r->who.id, sizeof r->who.id, "agt_FuzzAgent0000000");
	else {
		snprintf(r->who.id, sizeof r->who.id, "acc_FuzzAccount00000");
		r->who.roles = ROLE_RESEARCHER | ROLE_PARTICIPANT | ROLE_ADMIN;
	}
	return H_OK;
}
