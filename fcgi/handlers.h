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
/* fcgi/studies.c: researcher side and the study detail */
int h_study_create(struct req *);
int h_study_list(struct req *);
int h_study_get(struct req *);
int h_study_pause(struct req *);
int h_study_resume(struct req *);
int h_study_stop(struct req *);
int h_participants(struct req *);
int h_participant_approve(struct req *);
int h_participant_reject(struct req *);
/* fcgi/participation.c: agent side */
int h_available(struct req *);
int h_accept(struct req *);
int h_complete(struct req *);
int h_withdraw(struct req *);
int h_history(struct req *);
/* fcgi/wallet.c */
int h_wallet_balance(struct req *);
int h_wallet_transactions(struct req *);

/* The study URL an agent opens for its participation: study_url with
 * participant_id, study_id and participation_id appended (design.md §6.7).
 * Allocated; NULL when out of memory. */
char *participant_url(const char *url, const char *anon, const char *study_id,
    const char *prt_id);

#endif
