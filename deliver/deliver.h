/*
 * arps-deliver's loop (design.md §1 and 11): claim the oldest due
 * outbox row, send it, mark it; when nothing is due, sleep deliver_poll_ms.
 *
 * Guarantee (docs/api.md "Mail delivery"): at least once, and exactly once
 * unless the process dies or loses the database between the transport's
 * acceptance and the mark.  Then the row is sent again once its claim
 * (deliver_claim_seconds) has expired, as the same message: same file
 * name under file:, same Message-ID and Date by SMTP and sendmail.
 * Failures retry after mail_retry_min seconds, doubling up to
 * mail_retry_max; mail_give_up seconds after queueing the row is dead.
 */
#ifndef ARPS_DELIVER_DELIVER_H
#define ARPS_DELIVER_DELIVER_H

#include <signal.h>
#include <stdint.h>

struct config;
struct db;

/* The next try after `attempts` failed claims of a row queued at created,
 * failing at now; 0 when the row is to be given up. */
int64_t deliver_next_try(const struct config *cfg, int64_t created, int64_t attempts,
    int64_t now);

/* Claim and deliver at most one due message.  1 when one was handled (sent,
 * retried or given up), 0 when nothing was due, -1 on a database error. */
int deliver_one(struct db *db, const struct config *cfg);

/* Loop until *stop is set (a signal handler sets it: the message in hand is
 * finished first).  Returns the process's exit status. */
int deliver_run(const struct config *cfg, volatile sig_atomic_t *stop);

#endif
