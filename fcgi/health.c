#include "db/db.h"
#include "fcgi/handlers.h"

/* GET /api/v1/health: 200 {"status":"ok"} after a round trip to MariaDB. */
enum h_rc
h_health(struct req *r)
{
	enum db_rc rc;

	if ((rc = db_ping(r->db)) != DB_OK)
		return reply_db(r, rc);
	return reply_json(r, 200, json_pack_status("ok"));
}
