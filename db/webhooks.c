/* Webhooks and their deliveries (db/webhooks.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include "core/timefmt.h"
#include "db/events.h"
#include "db/webhooks.h"
#include "lib/config.h"
#include "lib/secret.h"

#define WEBHOOK_COLUMNS(X, L) \
	X(WH_C_ID,		"id") \
	X(WH_C_OWNER,		"owner_id") \
	X(WH_C_URL,		"url") \
	X(WH_C_EVENTS,		"events") \
	X(WH_C_STATUS,		"status") \
	X(WH_C_CREATED,		"created_at") \
	L(WH_C_DISABLED,	"disabled_at")
enum wh_col { DB_COLS_ENUM(WEBHOOK_COLUMNS) WH_C__END };

/* The owner's row, locked: creates of one owner take turns between the
 * count and the insert (an agent's hooks or an account's). */
static const char q_lock_agent[] = "SELECT id FROM agents WHERE id = ? FOR UPDATE";
static const char q_lock_account[] = "SELECT id FROM accounts WHERE id = ? FOR UPDATE";
static const char q_count[] =
    "SELECT COUNT(*) FROM webhooks WHERE owner_id = ? AND status = 'active'";
static const char q_ins[] =
    "INSERT INTO webhooks (id, owner_id, url, events, secret_sealed, status, created_at)"
    " VALUES (?, ?, ?, ?, ?, 'active', ?)";
static const char q_delivery_known[] =
    "SELECT 1 FROM webhook_deliveries WHERE webhook_id = ? AND seq = ?";
static const char q_list[] =
    "SELECT " DB_COLS_SQL(WEBHOOK_COLUMNS) " FROM webhooks WHERE owner_id = ?"
    " AND status <> 'deleted' ORDER BY seq LIMIT 100";
static const char q_get[] =
    "SELECT " DB_COLS_SQL(WEBHOOK_COLUMNS) " FROM webhooks WHERE owner_id = ? AND id = ?"
    " AND status <> 'deleted'";
static const char q_del[] =
    "UPDATE webhooks SET status = 'deleted', deleted_at = ? WHERE owner_id = ? AND id = ?"
    " AND status <> 'deleted'";
static const char q_del_pending[] =
    "UPDATE webhook_deliveries SET state = 'failed', last_error = 'webhook deleted'"
    " WHERE webhook_id = ? AND state = 'pending'";

#define DELIVERY_COLUMNS(X, L) \
	X(DL_C_SEQ,		"d.seq") \
	X(DL_C_EVENT,		"d.event_id") \
	X(DL_C_TYPE,		"COALESCE(e.type, '')") \
	X(DL_C_STATE,		"d.state") \
	X(DL_C_ATTEMPTS,	"d.attempts") \
	X(DL_C_STATUS,		"COALESCE(d.last_status, -1)") \
	X(DL_C_ERROR,		"d.last_error") \
	X(DL_C_CREATED,		"d.created_at") \
	X(DL_C_LAST,		"d.last_attempt_at") \
	X(DL_C_NEXT,		"d.next_attempt_at") \
	L(DL_C_DELIVERED,	"d.delivered_at")
enum dl_col { DB_COLS_ENUM(DELIVERY_COLUMNS) DL_C__END };
static const char q_deliveries[] =
    "SELECT " DB_COLS_SQL(DELIVERY_COLUMNS) " FROM webhook_deliveries d"
    " LEFT JOIN events e ON e.id = d.event_id"
    " WHERE d.webhook_id = ? AND d.seq < ? ORDER BY d.seq DESC LIMIT ?";

#define JOB_COLUMNS(X, L) \
	X(JOB_C_SEQ,		"d.seq") \
	X(JOB_C_HOOK,		"d.webhook_id") \
	X(JOB_C_OWNER,		"w.owner_id") \
	X(JOB_C_EVENT,		"d.event_id") \
	X(JOB_C_URL,		"w.url") \
	X(JOB_C_SEALED,		"w.secret_sealed") \
	X(JOB_C_ATTEMPTS,	"d.attempts") \
	X(JOB_C_CREATED,	"d.created_at") \
	X(JOB_C_TYPE,		"e.type") \
	X(JOB_C_DATA,		"e.data") \
	L(JOB_C_EV_CREATED,	"e.created_at")
enum job_col { DB_COLS_ENUM(JOB_COLUMNS) JOB_C__END };
static const char q_due[] =
    "SELECT d.seq FROM webhook_deliveries d WHERE d.state = 'pending' AND d.next_attempt_at <= ?"
    " ORDER BY d.next_attempt_at, d.seq LIMIT ? FOR UPDATE SKIP LOCKED";
static const char q_job[] =
    "SELECT " DB_COLS_SQL(JOB_COLUMNS) " FROM webhook_deliveries d"
    " JOIN webhooks w ON w.id = d.webhook_id JOIN events e ON e.id = d.event_id"
    " WHERE d.seq = ? AND w.status = 'active'";
static const char q_lease[] =
    "UPDATE webhook_deliveries SET next_attempt_at = ?, attempts = attempts + 1,"
    " claimed_until = ? WHERE seq = ?";
static const char q_drop[] =
    "UPDATE webhook_deliveries SET state = 'failed', last_error = ? WHERE seq = ?";
static const char q_ok[] =
    "UPDATE webhook_deliveries SET state = 'delivered', delivered_at = ?, last_attempt_at = ?,"
    " last_status = ?, last_error = NULL, claimed_until = NULL WHERE seq = ? AND state = 'pending'";
static const char q_fail[] =
    "UPDATE webhook_deliveries SET state = ?, next_attempt_at = ?, last_attempt_at = ?,"
    " last_status = ?, last_error = ?, claimed_until = NULL WHERE seq = ? AND state = 'pending'";
static const char q_hook_ok[] =
    "UPDATE webhooks SET failing_since = NULL WHERE id = ? AND failing_since IS NOT NULL";
static const char q_hook_fail[] =
    "UPDATE webhooks SET failing_since = COALESCE(failing_since, ?) WHERE id = ?";
static const char q_hook_failing[] =
    "SELECT failing_since FROM webhooks WHERE id = ? AND status = 'active' FOR UPDATE";
static const char q_hook_disable[] =
    "UPDATE webhooks SET status = 'disabled', disabled_at = ? WHERE id = ? AND status = 'active'";

/* The key that seals webhook secrets: derived from the pepper. */
static void
seal_key(const struct config *cfg, unsigned char key[crypto_secretbox_KEYBYTES])
{
	secret_hash(cfg, "webhook-secret-seal", "", 0, key);
}

void
webhook_clear(struct webhook *w)
{
	if (w == NULL)
		return;
	free(w->url);
	free(w->events);
	memset(w, 0, sizeof *w);
}

static void
webhook_clear_v(void *e)
{
	webhook_clear(e);
}

void
webhooks_free(struct webhook *v, size_t n)
{
	db_array_free(v, n, sizeof *v, webhook_clear_v);
}

static int
map_hook(const struct dbres *res, size_t row, void *elem)
{
	struct webhook *w = elem;
	int ok = 1;

	dbres_copy(w->id, sizeof w->id, res, row, WH_C_ID);
	dbres_copy(w->owner_id, sizeof w->owner_id, res, row, WH_C_OWNER);
	w->url = dbres_dup(res, row, WH_C_URL, &ok);
	w->events = dbres_dup(res, row, WH_C_EVENTS, &ok);
	dbres_copy(w->status, sizeof w->status, res, row, WH_C_STATUS);
	w->created_at = dbres_i64(res, row, WH_C_CREATED);
	w->disabled_at = dbres_i64(res, row, WH_C_DISABLED);
	if (!ok || w->url == NULL || w->events == NULL) {
		webhook_clear(w);
		return -1;
	}
	return 0;
}

enum db_rc
db_webhook_create(struct db *db, const struct config *cfg, const char *owner, const char *url,
    const char *events, int64_t now, struct webhook *out, char secret[WEBHOOK_SECRET_BUFSZ],
    enum arps_err *outcome)
{
	unsigned char raw[32], key[crypto_secretbox_KEYBYTES];
	unsigned char sealed[crypto_secretbox_NONCEBYTES + crypto_secretbox_MACBYTES +
	    WEBHOOK_SECRET_LEN];
	struct dbres *res = NULL;
	enum ids_kind kind;
	enum db_rc rc;

	*outcome = ARPS_E_INTERNAL;
	memset(out, 0, sizeof *out);
	if (!ids_kind_of(owner, &kind) || (kind != IDS_AGENT && kind != IDS_ACCOUNT))
		return DB_ERR;
	if ((rc = DB_ONE(db, kind == IDS_AGENT ? q_lock_agent : q_lock_account, &res,
	    P_STR(owner))) != DB_OK)
		return rc == DB_NOTFOUND ? DB_ERR : rc;
	dbres_free(res);
	res = NULL;
	if ((rc = DB_ONE(db, q_count, &res, P_STR(owner))) != DB_OK)
		return rc == DB_NOTFOUND ? DB_ERR : rc;
	if (dbres_i64(res, 0, DB_COL_ONLY) >= WEBHOOK_MAX_PER_OWNER) {
		dbres_free(res);
		*outcome = ARPS_E_VALIDATION;
		return DB_OK;
	}
	dbres_free(res);
	randombytes_buf(raw, sizeof raw);
	memcpy(secret, WEBHOOK_SECRET_PREFIX, 6);
	sodium_bin2hex(secret + 6, WEBHOOK_SECRET_BUFSZ - 6, raw, sizeof raw);
	sodium_memzero(raw, sizeof raw);
	seal_key(cfg, key);
	randombytes_buf(sealed, crypto_secretbox_NONCEBYTES);
	crypto_secretbox_easy(sealed + crypto_secretbox_NONCEBYTES, (const unsigned char *)secret,
	    WEBHOOK_SECRET_LEN, sealed, key);
	sodium_memzero(key, sizeof key);
	if (ids_new(IDS_WEBHOOK, &secret_rng, out->id) != ARPS_OK)
		return DB_ERR;
	rc = DB_Q(db, q_ins, NULL, NULL, P_STR(out->id), P_STR(owner), P_STR(url), P_STR(events),
	    P_BLOB(sealed, sizeof sealed), P_I64(now));
	if (rc != DB_OK)
		return rc == DB_DUP ? DB_RETRY : rc;
	snprintf(out->owner_id, sizeof out->owner_id, "%s", owner);
	if ((out->url = strdup(url)) == NULL || (out->events = strdup(events)) == NULL)
		return DB_ERR;
	snprintf(out->status, sizeof out->status, "active");
	out->created_at = now;
	*outcome = ARPS_OK;
	return DB_OK;
}

enum db_rc
db_webhook_list(struct db *db, const char *owner, struct webhook **v, size_t *n)
{
	struct dbres *res = NULL;
	int more;
	enum db_rc rc;

	*v = NULL;
	*n = 0;
	if ((rc = DB_Q(db, q_list, &res, NULL, P_STR(owner))) != DB_OK)
		return rc;
	rc = dbres_map(res, 0, sizeof **v, map_hook, webhook_clear_v, (void **)v, n, &more);
	dbres_free(res);
	return rc;
}

enum db_rc
db_webhook_get(struct db *db, const char *owner, const char *id, struct webhook *w)
{
	struct dbres *res = NULL;
	enum db_rc rc;

	memset(w, 0, sizeof *w);
	if ((rc = DB_ONE(db, q_get, &res, P_STR(owner), P_STR(id))) != DB_OK)
		return rc;
	rc = map_hook(res, 0, w) == 0 ? DB_OK : DB_ERR;
	dbres_free(res);
	return rc;
}

enum db_rc
db_webhook_delete(struct db *db, const char *owner, const char *id, int64_t now)
{
	uint64_t n = 0;
	enum db_rc rc;

	if ((rc = DB_Q(db, q_del, NULL, &n, P_I64(now), P_STR(owner), P_STR(id))) != DB_OK)
		return rc;
	if (n == 0)
		return DB_NOTFOUND;
	return DB_Q(db, q_del_pending, NULL, NULL, P_STR(id));
}

static void
delivery_clear(void *e)
{
	struct delivery_row *d = e;

	free(d->last_error);
	d->last_error = NULL;
}

void
deliveries_free(struct delivery_row *v, size_t n)
{
	db_array_free(v, n, sizeof *v, delivery_clear);
}

static int
map_delivery(const struct dbres *res, size_t row, void *elem)
{
	struct delivery_row *d = elem;
	int ok = 1;

	d->seq = dbres_i64(res, row, DL_C_SEQ);
	dbres_copy(d->event_id, sizeof d->event_id, res, row, DL_C_EVENT);
	dbres_copy(d->event_type, sizeof d->event_type, res, row, DL_C_TYPE);
	dbres_copy(d->state, sizeof d->state, res, row, DL_C_STATE);
	d->attempts = dbres_i64(res, row, DL_C_ATTEMPTS);
	d->last_status = dbres_i64(res, row, DL_C_STATUS);
	d->last_error = dbres_dup(res, row, DL_C_ERROR, &ok);
	d->created_at = dbres_i64(res, row, DL_C_CREATED);
	d->last_attempt_at = dbres_i64(res, row, DL_C_LAST);
	d->next_attempt_at = dbres_i64(res, row, DL_C_NEXT);
	d->delivered_at = dbres_i64(res, row, DL_C_DELIVERED);
	return ok ? 0 : -1;
}

enum db_rc
db_webhook_deliveries(struct db *db, const char *hook_id, int64_t cursor, int64_t limit,
    struct delivery_row **v, size_t *n, int64_t *next)
{
	struct dbres *res = NULL;
	int more = 0;
	enum db_rc rc;

	*v = NULL;
	*n = 0;
	*next = 0;
	if ((rc = db_cursor_known(db, q_delivery_known, hook_id, cursor)) != DB_OK)
		return rc;
	if ((rc = DB_Q(db, q_deliveries, &res, NULL, P_STR(hook_id), P_I64(db_cursor_bound(cursor)),
	    P_I64(limit + 1))) != DB_OK)
		return rc;
	rc = dbres_map(res, limit, sizeof **v, map_delivery, delivery_clear, (void **)v, n, &more);
	dbres_free(res);
	if (rc == DB_OK && more && *n > 0)
		*next = (*v)[*n - 1].seq;
	return rc;
}

void
delivery_job_clear(struct delivery_job *j)
{
	if (j == NULL)
		return;
	free(j->url);
	free(j->body);
	sodium_memzero(j, sizeof *j);
}

/* Fill job j from the row of delivery seq; 0, 1 when the row cannot be
 * sent (its secret does not open), -1 on allocation failure. */
static int
job_fill(const struct config *cfg, const struct dbres *res, struct delivery_job *j)
{
	unsigned char key[crypto_secretbox_KEYBYTES];
	const unsigned char *sealed;
	const char *type, *data;
	size_t slen, blen;
	char when[TIMEFMT_BUFSZ];
	int64_t t;
	int ok = 1, r;

	memset(j, 0, sizeof *j);
	j->seq = dbres_i64(res, 0, JOB_C_SEQ);
	dbres_copy(j->hook_id, sizeof j->hook_id, res, 0, JOB_C_HOOK);
	dbres_copy(j->owner_id, sizeof j->owner_id, res, 0, JOB_C_OWNER);
	dbres_copy(j->event_id, sizeof j->event_id, res, 0, JOB_C_EVENT);
	j->attempts = dbres_i64(res, 0, JOB_C_ATTEMPTS) + 1;
	j->created_at = dbres_i64(res, 0, JOB_C_CREATED);
	sealed = dbres_blob(res, 0, JOB_C_SEALED, &slen);
	if (sealed == NULL || slen != crypto_secretbox_NONCEBYTES + crypto_secretbox_MACBYTES +
	    WEBHOOK_SECRET_LEN)
		return 1;
	seal_key(cfg, key);
	r = crypto_secretbox_open_easy((unsigned char *)j->secret,
	    sealed + crypto_secretbox_NONCEBYTES, slen - crypto_secretbox_NONCEBYTES, sealed, key);
	sodium_memzero(key, sizeof key);
	if (r != 0)
		return 1;
	j->secret[WEBHOOK_SECRET_LEN] = '\0';
	if ((j->url = dbres_dup(res, 0, JOB_C_URL, &ok)) == NULL)
		return -1;
	type = dbres_str(res, 0, JOB_C_TYPE);
	data = dbres_str(res, 0, JOB_C_DATA);
	t = dbres_i64(res, 0, JOB_C_EV_CREATED);
	if (timefmt_format(t, when) != ARPS_OK)
		return 1;
	blen = strlen(j->event_id) + strlen(type ? type : "") + strlen(data ? data : "{}") + 96;
	if ((j->body = malloc(blen)) == NULL)
		return -1;
	snprintf(j->body, blen, "{\"id\":\"%s\",\"type\":\"%s\",\"created_at\":\"%s\",\"data\":%s}",
	    j->event_id, type ? type : "", when, data ? data : "{}");
	return 0;
}

enum db_rc
db_delivery_claim(struct db *db, const struct config *cfg, int64_t now, int64_t lease,
    struct delivery_job *v, size_t max, size_t *n)
{
	struct dbres *due = NULL, *res = NULL;
	size_t i;
	enum db_rc rc;
	int r;

	*n = 0;
	if ((rc = db_begin(db)) != DB_OK)
		return rc;
	if ((rc = DB_Q(db, q_due, &due, NULL, P_I64(now), P_I64(max))) != DB_OK)
		goto fail;
	for (i = 0; i < due->nrows; i++) {
		int64_t seq = dbres_i64(due, i, DB_COL_ONLY);

		if ((rc = DB_ONE(db, q_job, &res, P_I64(seq))) == DB_NOTFOUND) {
			rc = DB_Q(db, q_drop, NULL, NULL, P_STR("event or webhook gone"), P_I64(seq));
			if (rc != DB_OK)
				goto fail;
			continue;
		}
		if (rc != DB_OK)
			goto fail;
		r = job_fill(cfg, res, &v[*n]);
		dbres_free(res);
		res = NULL;
		if (r < 0) {
			rc = DB_ERR;
			goto fail;
		}
		if (r > 0) {
			delivery_job_clear(&v[*n]);
			if ((rc = DB_Q(db, q_drop, NULL, NULL, P_STR("the secret does not open"),
			    P_I64(seq))) != DB_OK)
				goto fail;
			continue;
		}
		if ((rc = DB_Q(db, q_lease, NULL, NULL, P_I64(now + lease), P_I64(now + lease),
		    P_I64(seq))) != DB_OK) {
			delivery_job_clear(&v[*n]);
			goto fail;
		}
		(*n)++;
	}
	dbres_free(due);
	return db_commit(db);
fail:
	dbres_free(due);
	dbres_free(res);
	db_rollback(db);
	for (i = 0; i < *n; i++)
		delivery_job_clear(&v[i]);
	*n = 0;
	return rc;
}

enum db_rc
db_delivery_done(struct db *db, const struct delivery_job *j, int ok, int status,
    const char *err, int64_t now, int64_t next)
{
	struct dbres *res = NULL;
	int give_up = now - j->created_at >= WEBHOOK_GIVE_UP;
	char e[256];
	enum db_rc rc;

	snprintf(e, sizeof e, "%s", err != NULL ? err : "");
	if ((rc = db_begin(db)) != DB_OK)
		return rc;
	if (ok) {
		if ((rc = DB_Q(db, q_ok, NULL, NULL, P_I64(now), P_I64(now), P_I64(status),
		    P_I64(j->seq))) != DB_OK ||
		    (rc = DB_Q(db, q_hook_ok, NULL, NULL, P_STR(j->hook_id))) != DB_OK)
			goto fail;
		return db_commit(db);
	}
	if ((rc = DB_Q(db, q_fail, NULL, NULL, P_STR(give_up ? "failed" : "pending"), P_I64(next),
	    P_I64(now), P_I64(status), P_STR(e), P_I64(j->seq))) != DB_OK ||
	    (rc = DB_Q(db, q_hook_fail, NULL, NULL, P_I64(now), P_STR(j->hook_id))) != DB_OK)
		goto fail;
	if ((rc = DB_Q(db, q_hook_failing, &res, NULL, P_STR(j->hook_id))) != DB_OK)
		goto fail;
	if (res->nrows == 1 && !dbres_isnull(res, 0, DB_COL_ONLY) &&
	    now - dbres_i64(res, 0, DB_COL_ONLY) >= WEBHOOK_DISABLE_AFTER) {
		char since[TIMEFMT_BUFSZ];

		/* a time in an event's data is a timestamp, as everywhere */
		if (timefmt_format(dbres_i64(res, 0, DB_COL_ONLY), since) != 0) {
			rc = DB_ERR;
			goto fail;
		}
		if ((rc = DB_Q(db, q_hook_disable, NULL, NULL, P_I64(now), P_STR(j->hook_id))) != DB_OK ||
		    (rc = db_event(db, j->owner_id, EV_WEBHOOK_DISABLED, now,
		    "{\"webhook_id\":\"%s\",\"failing_since\":\"%s\"}", j->hook_id, since)) != DB_OK)
			goto fail;
	}
	dbres_free(res);
	return db_commit(db);
fail:
	dbres_free(res);
	db_rollback(db);
	return rc;
}
