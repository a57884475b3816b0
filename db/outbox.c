#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include "db/outbox.h"
#include "lib/config.h"
#include "lib/mail.h"

static const char q_put[] =
    "INSERT INTO outbox (id, kind, ref, payload, created_at, next_attempt_at)"
    " VALUES (?, ?, ?, ?, ?, ?)";
/* Idle poll: one read of the outbox_due key, no lock. */
static const char q_due[] =
    "SELECT seq FROM outbox WHERE state = 'pending' AND kind = ? AND next_attempt_at <= ?"
    " ORDER BY next_attempt_at, seq LIMIT 1";
/* The claimed row's columns and their read positions, from one list. */
#define OUTBOX_COLUMNS(X, L) \
	X(OUTBOX_C_SEQ,		"seq") \
	X(OUTBOX_C_ID,		"id") \
	X(OUTBOX_C_KIND,	"kind") \
	X(OUTBOX_C_PAYLOAD,	"payload") \
	X(OUTBOX_C_ATTEMPTS,	"attempts") \
	L(OUTBOX_C_CREATED,	"created_at")
enum { DB_COLS_ENUM(OUTBOX_COLUMNS) OUTBOX__NCOLS };
static const char q_lock[] =
    "SELECT " DB_COLS_SQL(OUTBOX_COLUMNS) " FROM outbox"
    " WHERE state = 'pending' AND kind = ? AND next_attempt_at <= ?"
    " ORDER BY next_attempt_at, seq LIMIT 1 FOR UPDATE SKIP LOCKED";
static const char q_claim[] =
    "UPDATE outbox SET attempts = attempts + 1, claimed_until = ?, next_attempt_at = ?"
    " WHERE seq = ?";
static const char q_sent[] =
    "UPDATE outbox SET state = 'sent', sent_at = ?, payload = NULL, claimed_until = NULL,"
    " last_error = NULL WHERE seq = ? AND state = 'pending'";
static const char q_retry[] =
    "UPDATE outbox SET next_attempt_at = ?, claimed_until = NULL, last_error = ?"
    " WHERE seq = ? AND state = 'pending'";
static const char q_dead[] =
    "UPDATE outbox SET state = 'dead', dead_at = ?, payload = NULL, claimed_until = NULL,"
    " last_error = ? WHERE seq = ? AND state = 'pending'";

enum db_rc
db_outbox_put(struct db *db, const char *id, const char *kind, const char *ref,
    const void *payload, size_t n, int64_t now)
{
	return DB_Q(db, q_put, NULL, NULL, P_STR(id), P_STR(kind), P_STR(ref),
	    P_BLOB(payload, n), P_I64(now), P_I64(now));
}

enum db_rc
db_outbox_mail(struct db *db, const struct config *cfg, const char *to, const char *subject,
    const char *body, int64_t now)
{
	char id[MAIL_ID_BUFSZ];
	unsigned char *sealed;
	size_t n;
	enum db_rc rc;

	mail_new_id(id);
	if (mail_seal(cfg, id, to, subject, body, &sealed, &n) != 0)
		return DB_ERR;
	rc = db_outbox_put(db, id, OUTBOX_MAIL, NULL, sealed, n, now);
	free(sealed);
	return rc;
}

struct claim {
	const char *kind;
	int64_t now, lease;
	struct outbox_item *it;
	int got;
};

static enum db_rc
claim_tx(struct db *db, void *arg)
{
	struct claim *c = arg;
	struct dbres *res = NULL;
	const void *p;
	size_t n;
	enum db_rc rc;

	c->got = 0;
	outbox_item_clear(c->it);
	if ((rc = DB_Q(db, q_lock, &res, NULL, P_STR(c->kind), P_I64(c->now))) != DB_OK)
		return rc;
	if (res->nrows == 0) {
		dbres_free(res);
		return DB_OK;
	}
	c->it->seq = dbres_i64(res, 0, OUTBOX_C_SEQ);
	snprintf(c->it->id, sizeof c->it->id, "%s", dbres_str(res, 0, OUTBOX_C_ID));
	snprintf(c->it->kind, sizeof c->it->kind, "%s", dbres_str(res, 0, OUTBOX_C_KIND));
	p = dbres_blob(res, 0, OUTBOX_C_PAYLOAD, &n);
	c->it->attempts = dbres_i64(res, 0, OUTBOX_C_ATTEMPTS) + 1;
	c->it->created_at = dbres_i64(res, 0, OUTBOX_C_CREATED);
	if ((c->it->payload = malloc(n ? n : 1)) == NULL) {
		dbres_free(res);
		return DB_ERR;
	}
	memcpy(c->it->payload, p, n);
	c->it->plen = n;
	sodium_memzero(res->cells[OUTBOX_C_PAYLOAD].p, res->cells[OUTBOX_C_PAYLOAD].len);
	dbres_free(res);
	if ((rc = DB_Q(db, q_claim, NULL, NULL, P_I64(c->now + c->lease), P_I64(c->now + c->lease),
	    P_I64(c->it->seq))) != DB_OK)
		return rc;
	c->got = 1;
	return DB_OK;
}

enum db_rc
db_outbox_claim(struct db *db, const char *kind, int64_t now, int64_t lease,
    struct outbox_item *it, int *got)
{
	struct claim c = { kind, now, lease, it, 0 };
	struct dbres *res = NULL;
	enum db_rc rc;

	*got = 0;
	memset(it, 0, sizeof *it);
	if ((rc = DB_Q(db, q_due, &res, NULL, P_STR(kind), P_I64(now))) != DB_OK)
		return rc;
	{
		size_t nrows = res->nrows;

		dbres_free(res);
		if (nrows == 0)
			return DB_OK;
	}
	if ((rc = db_tx(db, claim_tx, &c)) != DB_OK) {
		outbox_item_clear(it);
		return rc;
	}
	*got = c.got;
	return DB_OK;
}

enum db_rc
db_outbox_sent(struct db *db, int64_t seq, int64_t now)
{
	return DB_Q(db, q_sent, NULL, NULL, P_I64(now), P_I64(seq));
}

enum db_rc
db_outbox_retry(struct db *db, int64_t seq, int64_t next, const char *err)
{
	char e[256];

	snprintf(e, sizeof e, "%s", err ? err : "");
	return DB_Q(db, q_retry, NULL, NULL, P_I64(next), P_STR(e), P_I64(seq));
}

enum db_rc
db_outbox_dead(struct db *db, int64_t seq, int64_t now, const char *err)
{
	char e[256];

	snprintf(e, sizeof e, "%s", err ? err : "");
	return DB_Q(db, q_dead, NULL, NULL, P_I64(now), P_STR(e), P_I64(seq));
}

void
outbox_item_clear(struct outbox_item *it)
{
	if (it == NULL)
		return;
	if (it->payload != NULL) {
		sodium_memzero(it->payload, it->plen);
		free(it->payload);
	}
	memset(it, 0, sizeof *it);
}
