/*
 * The outbox (db/migrations/004_outbox.sql): rows the workers queue in the
 * transaction of a request's effect, delivered by arps-deliver.  Claims are
 * short transactions (SELECT ... FOR UPDATE SKIP LOCKED), so any number of
 * deliverers can run at once and each due row goes to one of them; a claim
 * lasts `lease` seconds, after which an unmarked row is due again.
 * Return convention: enum db_rc (db/db.h).
 */
#ifndef ARPS_DB_OUTBOX_H
#define ARPS_DB_OUTBOX_H

#include <stddef.h>
#include <stdint.h>

#include "db/db.h"

struct config;

#define OUTBOX_MAIL	"mail"

struct outbox_item {
	int64_t seq;
	char id[41];
	char kind[17];
	unsigned char *payload;		/* sealed; owned */
	size_t plen;
	int64_t attempts;		/* including this claim */
	int64_t created_at;
};

/* Queue one row (inside the caller's transaction). */
enum db_rc db_outbox_put(struct db *db, const char *id, const char *kind, const char *ref,
    const void *payload, size_t n, int64_t now);

/* Seal a mail (lib/mail.h) and queue it, due at once. */
enum db_rc db_outbox_mail(struct db *db, const struct config *cfg, const char *to,
    const char *subject, const char *body, int64_t now);

/*
 * Claim the oldest due row of kind, in a transaction of its own: *got is 1
 * and it is filled in (free with outbox_item_clear), or 0 when nothing is
 * due.  An idle call is one indexed SELECT.
 */
enum db_rc db_outbox_claim(struct db *db, const char *kind, int64_t now, int64_t lease,
    struct outbox_item *it, int *got);

/* Delivered: state sent, payload cleared. */
enum db_rc db_outbox_sent(struct db *db, int64_t seq, int64_t now);
/* Failed: due again at next, with the reason. */
enum db_rc db_outbox_retry(struct db *db, int64_t seq, int64_t next, const char *err);
/* Given up: state dead, payload cleared. */
enum db_rc db_outbox_dead(struct db *db, int64_t seq, int64_t now, const char *err);

/* Wipe and free what it holds (NULL allowed). */
void outbox_item_clear(struct outbox_item *it);

#endif
