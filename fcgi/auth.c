#include "fcgi/http.h"

int
auth_resolve(struct req *r, enum auth_kind kind, unsigned roles)
{
	(void)kind;
	(void)roles;
	return reply_err(r, ARPS_E_UNAUTHORIZED, "missing or invalid credential");
}
