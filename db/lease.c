/* Leases with fencing tokens (db/lease.h, design.md §13.4). */
#include <stdio.h>

#include <sodium.h>

#include "db/lease.h"

/* The table is created by db_migrate before anything else (the migrations'
 * own lease needs it), like schema_version. */
static const char q_seed[] =
    "INSERT IGNORE INTO leases (name, token, holder, expires_at, beats) VALUES (?, 0, '', 0, 0)";
static const char q_take[] =
    "UPDATE leases SET token = token + 1, holder = ?, expires_at = UNIX_TIMESTAMP() + ?,"
    " beats = 0 WHERE name = ? AND expires_at <= UNIX_TIMESTAMP()";
static const char q_token[] = "SELECT token FROM leases WHERE name = ? AND holder = ?";
/* beats changes the row on every renewal: an UPDATE that sets the values a
 * row has already counts 0 affected rows. */
static const char q_renew[] =
    "UPDATE leases SET expires_at = UNIX_TIMESTAMP() + ?, beats = beats + 1"
    " WHERE name = ? AND token = ?";
static const char q_release[] =
    "UPDATE leases SET expires_at = 0 WHERE name = ? AND token = ?";

enum db_rc
db_lease_take(struct db *db, const char *name, int ttl, int64_t *token)
{
	unsigned char raw[16];
	char holder[33];
	struct dbres *res = NULL;
	uint64_t n = 0;
	enum db_rc rc;

	*token = 0;
	randombytes_buf(raw, sizeof raw);
	sodium_bin2hex(holder, sizeof holder, raw, sizeof raw);
	if ((rc = DB_Q(db, q_seed, NULL, NULL, P_STR(name))) != DB_OK)
		return rc;
	rc = DB_Q(db, q_take, NULL, &n, P_STR(holder), P_I64(ttl), P_STR(name));
	/* Two takes at once on two nodes: certification lets one commit. */
	if (rc == DB_RETRY || (rc == DB_OK && n != 1))
		return DB_OK;
	if (rc != DB_OK)
		return rc;
	if ((rc = DB_ONE(db, q_token, &res, P_STR(name), P_STR(holder))) == DB_NOTFOUND)
		return DB_OK;	/* expired and taken again at once: not ours */
	if (rc != DB_OK)
		return rc;
	*token = dbres_i64(res, 0, DB_COL_ONLY);
	dbres_free(res);
	return DB_OK;
}

enum db_rc
db_lease_renew(struct db *db, const char *name, int64_t token, int ttl, int *held)
{
	uint64_t n = 0;
	enum db_rc rc;

	*held = 0;
	if ((rc = DB_Q(db, q_renew, NULL, &n, P_I64(ttl), P_STR(name), P_I64(token))) != DB_OK)
		return rc;
	*held = n == 1;
	return DB_OK;
}

enum db_rc
db_lease_release(struct db *db, const char *name, int64_t token)
{
	return DB_Q(db, q_release, NULL, NULL, P_STR(name), P_I64(token));
}
