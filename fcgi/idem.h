/*
 * fcgi/idem.c: Idempotency-Key handling (design.md §6.16) and the request
 * transaction, which stores an owned key's answer in the same transaction
 * as the effect.  Uses only the answers (fcgi/reply.c) of fcgi/.
 */
#ifndef ARPS_FCGI_IDEM_H
#define ARPS_FCGI_IDEM_H

#include "db/db.h"
#include "fcgi/http.h"

/*
 * A req_tx callback: sets the answer and returns DB_OK to commit,
 * DB_ROLLBACK to roll back keeping its (error) answer, or another db code
 * (answered 503/500).
 */
typedef enum db_rc (*req_tx_fn)(struct req *r, void *arg);

/*
 * Run fn(r, arg) as one database transaction (retried whole on deadlock),
 * storing an owned Idempotency-Key answer in the same transaction.
 * Returns H_OK when fn's answer is set, H_REPLIED after answering an
 * infrastructure error.
 */
enum h_rc req_tx(struct req *r, req_tx_fn fn, void *arg);

/* Idempotency-Key: claim the key before the handler runs: H_OK when the
 * handler runs, H_REPLIED when the answer is already set (a replay, a conflict,
 * a bad key or a database error). */
enum h_rc idem_begin_or_reply(struct req *r);
/* After the handler: store the answer of an owned key not stored with its
 * effect (an answer below 500), or release the key. */
void idem_end(struct req *r);

#endif
