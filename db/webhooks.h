/*
 * Webhooks (design.md §11): an owner's hooks, their signing secrets
 * (sealed with a key derived from the pepper), and the delivery rows that
 * db_events_flush queues with each event.  arps-deliver claims due rows
 * (SELECT ... FOR UPDATE SKIP LOCKED, a lease), posts them and records the
 * outcome.  Return convention: enum db_rc (db/db.h).
 */
#ifndef ARPS_DB_WEBHOOKS_H
#define ARPS_DB_WEBHOOKS_H

#include <stddef.h>
#include <stdint.h>

#include "core/errors.h"
#include "core/ids.h"
#include "db/db.h"

struct config;

#define WEBHOOK_SECRET_PREFIX	"whsec_"
#define WEBHOOK_SECRET_LEN	(6 + 64)	/* whsec_ + 64 hex */
#define WEBHOOK_SECRET_BUFSZ	(WEBHOOK_SECRET_LEN + 1)
#define WEBHOOK_MAX_PER_OWNER	10
#define WEBHOOK_GIVE_UP		(24 * 3600)	/* a delivery is retried for 24 h */
#define WEBHOOK_DISABLE_AFTER	(3 * 24 * 3600)	/* a hook failing this long is disabled */

struct webhook {
	char id[IDS_BUFSZ];
	char owner_id[IDS_BUFSZ];
	char *url;
	char *events;		/* comma-separated types */
	char status[16];	/* active, disabled */
	int64_t created_at, disabled_at;
};
void webhook_clear(struct webhook *w);
void webhooks_free(struct webhook *v, size_t n);

/*
 * Create a hook for owner (an agent or an account id) with a fresh secret
 * (written to secret, shown once), under a lock of the owner's row so that
 * concurrent creates count one after the other.  *outcome: ARPS_OK, or
 * ARPS_E_VALIDATION when the owner already has WEBHOOK_MAX_PER_OWNER
 * active hooks.
 */
enum db_rc db_webhook_create(struct db *db, const struct config *cfg, const char *owner,
    const char *url, const char *events, int64_t now, struct webhook *out,
    char secret[WEBHOOK_SECRET_BUFSZ], enum arps_err *outcome);
/* The owner's active and disabled hooks, oldest first. */
enum db_rc db_webhook_list(struct db *db, const char *owner, struct webhook **v, size_t *n);
/* One hook of the owner (not deleted): DB_NOTFOUND when none. */
enum db_rc db_webhook_get(struct db *db, const char *owner, const char *id, struct webhook *w);
/* Delete the owner's hook: its pending deliveries are dropped.  DB_NOTFOUND. */
enum db_rc db_webhook_delete(struct db *db, const char *owner, const char *id, int64_t now);

struct delivery_row {
	int64_t seq;
	char event_id[IDS_BUFSZ];
	char event_type[48];
	char state[16];		/* pending, delivered, failed */
	int64_t attempts, last_status;	/* last_status -1: no try yet */
	char *last_error;
	int64_t created_at, last_attempt_at, next_attempt_at, delivered_at;
};
void deliveries_free(struct delivery_row *v, size_t n);
/* A hook's deliveries, newest first, seq < db_cursor_bound(cursor);
 * *next is the cursor of the next page (0: none). */
enum db_rc db_webhook_deliveries(struct db *db, const char *hook_id, int64_t cursor,
    int64_t limit, struct delivery_row **v, size_t *n, int64_t *next);

/* What arps-deliver sends for one claimed delivery. */
struct delivery_job {
	int64_t seq;
	char hook_id[IDS_BUFSZ];
	char owner_id[IDS_BUFSZ];
	char event_id[IDS_BUFSZ];
	char *url;
	char *body;		/* {"id","type","created_at","data"} */
	char secret[WEBHOOK_SECRET_BUFSZ];
	int64_t attempts;	/* including this one */
	int64_t created_at;
};
void delivery_job_clear(struct delivery_job *j);

/* Claim up to max due deliveries of active hooks (lease seconds), in one
 * transaction of its own; *n of them in v[] (each delivery_job_clear). */
enum db_rc db_delivery_claim(struct db *db, const struct config *cfg, int64_t now,
    int64_t lease, struct delivery_job *v, size_t max, size_t *n);
/*
 * Record a try: delivered (status 2xx), or failed with status (0: no
 * answer) and err, due again at `next`, or given up past 24 h.  A
 * success clears the hook's failing_since; a failure sets it, and a hook
 * failing for 3 days is disabled with a webhook.disabled event.
 */
enum db_rc db_delivery_done(struct db *db, const struct delivery_job *j, int ok, int status,
    const char *err, int64_t now, int64_t next);

#endif
