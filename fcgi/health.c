#include "db/db.h"
#include "fcgi/handlers.h"

/* GET /api/v1/health: 200 {"status":"ok"} after a round trip to MariaDB. */
int
h_health(struct req *r)
{
	struct dbres *res = NULL;
	int rc;

	if ((rc = DB_Q0(r->db, "SELECT 1", &res, NULL)) != DB_OK)
		return reply_db(r, rc);
	dbres_free(res);
	return reply_json(r, 200, json_pack_status("ok"));
}
