/*
 * The webhook transport of arps-deliver (design.md §11): the signature,
 * the retry schedule, and one libcurl easy handle per try, aimed at an
 * address resolved and checked here (design.md §9.8) and pinned with
 * CURLOPT_RESOLVE, so a DNS answer cannot move a try to a private host
 * (an IP literal, IPv4 or IPv6, is itself the address: nothing to pin).
 */
#ifndef ARPS_DELIVER_WEBHOOK_H
#define ARPS_DELIVER_WEBHOOK_H

#include <stddef.h>
#include <stdint.h>

struct config;

#define WEBHOOK_SIG_HEX	64

/* hex HMAC-SHA256(secret, "<t>.<body>") into out (65 bytes). */
void webhook_sign(const char *secret, int64_t t, const char *body, char out[WEBHOOK_SIG_HEX + 1]);

/* The delay before the next try after `attempts` failed ones: first,
 * doubling, at most max (seconds). */
int64_t webhook_backoff(int64_t attempts, int64_t first, int64_t max);

/*
 * A prepared try: a CURL easy handle (void * here) posting body to url
 * with the Arps-Event-Id and Arps-Signature headers.  Returns NULL with
 * err set when the target is refused ("URL not allowed": not https, or an
 * address that is not public unless cfg allows loopback) or cannot be
 * resolved ("cannot resolve host").
 */
struct webhook_try;
struct webhook_try *webhook_try_new(const struct config *cfg, const char *url,
    const char *event_id, const char *secret, const char *body, int64_t now, char *err,
    size_t errsz);
void *webhook_try_handle(struct webhook_try *t);
/* After the handle finished with curl code cc: 1 when delivered (2xx);
 * *status gets the HTTP status (0: none), err the reason of a failure, one
 * of a fixed few without the transport's detail: "HTTP <status>",
 * "timeout" or "connection failed". */
int webhook_try_result(struct webhook_try *t, int cc, long *status, char *err, size_t errsz);
void webhook_try_free(struct webhook_try *t);

#endif

/*
 * The delivery pump: at most cfg->webhook_concurrency tries in flight
 * (curl multi), so a slow or hanging receiver holds one slot for at most
 * its time-out.  webhook_pump_step claims due deliveries into free slots
 * (db_delivery_claim), waits up to wait_ms for transfers, and records
 * each finished try (db_delivery_done, with the back-off).  It returns the
 * number of tries recorded, or -1 on a database error (logged).
 * webhook_pump_inflight tells how many tries are running.  With claim 0
 * (stopping) no new delivery is claimed: the tries in flight only end.
 */
struct db;
struct webhook_pump;
struct webhook_pump *webhook_pump_new(const struct config *cfg);
int webhook_pump_step(struct webhook_pump *p, struct db *db, int wait_ms, int claim);
size_t webhook_pump_inflight(const struct webhook_pump *p);
void webhook_pump_free(struct webhook_pump *p);
