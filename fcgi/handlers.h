/* Every handler of the routing table, one file per resource, and the
 * small JSON helpers they share. */
#ifndef ARPS_FCGI_HANDLERS_H
#define ARPS_FCGI_HANDLERS_H

#include <stdint.h>

#include "fcgi/http.h"

/* {"status": s} */
struct json_object *json_pack_status(const char *s);
/* Add a string (NULL: null), an integer, an ISO 8601 time (<= 0: null). */
void jadd_str(struct json_object *o, const char *key, const char *s);
void jadd_int(struct json_object *o, const char *key, int64_t v);
void jadd_time(struct json_object *o, const char *key, int64_t t);
/* Append {action, endpoint, description?} to a nextActions array. */
void jadd_action(struct json_object *arr, const char *action, const char *endpoint,
    const char *desc);
/* "next_cursor": the cursor string, or null when next <= 0. */
void jadd_cursor(struct json_object *o, int64_t next);

/* fcgi/health.c */
int h_health(struct req *);
/* fcgi/agents.c */
int h_register(struct req *);
int h_me_get(struct req *);
int h_me_patch(struct req *);
int h_bio_set(struct req *);
int h_bio_get(struct req *);
int h_heartbeat(struct req *);
/* fcgi/account.c */
int h_send_code(struct req *);
int h_login(struct req *);
int h_logout(struct req *);
int h_claim(struct req *);
int h_account(struct req *);

#endif
