/* Every handler of the routing table, one file per resource, and the
 * small JSON helpers they share. */
#ifndef ARPS_FCGI_HANDLERS_H
#define ARPS_FCGI_HANDLERS_H

#include <stdint.h>

#include "fcgi/http.h"
#include "fcgi/idem.h"
#include "fcgi/reply.h"

/* {"status": s} */
struct json_object *json_pack_status(const char *s);
/* Add a string (NULL: null), an integer, an ISO 8601 time (<= 0: null). */
void jadd_str(struct json_object *o, const char *key, const char *s);
void jadd_int(struct json_object *o, const char *key, int64_t v);
void jadd_time(struct json_object *o, const char *key, int64_t t);
/* Append {action, endpoint, description?} to a nextActions array. */
void jadd_action(struct json_object *arr, const char *action, const char *endpoint,
    const char *desc);
#include "fcgi/jb.h"
/* "next_cursor": the cursor string, or null when next <= 0. */
void jadd_cursor(struct json_object *o, int64_t next);

/* The list-page answer: 200 {key: arr, "next_cursor": ...} (takes arr). */
enum h_rc reply_page(struct req *r, const char *key, struct json_object *arr, int64_t next);
/*
 * In a req_tx callback: take one from the rate-limit bucket (at most max
 * per window seconds).  DB_OK when allowed; else answers 429 with
 * Retry-After ("at most <max> <what> per hour; ...", what names the unit,
 * e.g. "registrations per client network") and returns DB_ROLLBACK;
 * another db code on a database error.
 */
enum db_rc rate_take_or_reply(struct req *r, const char *bucket, int64_t window, int64_t max,
    const char *what);
/* rate_take_or_reply for k events at once (all or none). */
enum db_rc rate_take_n_or_reply(struct req *r, const char *bucket, int64_t window, int64_t max,
    int64_t k, const char *what);
/* The same, without taking: for limits on failures, which the caller
 * records with db_rate_add once the attempt failed (design.md §9.2). */
enum db_rc rate_check_or_reply(struct req *r, const char *bucket, int64_t window, int64_t max,
    const char *what);
/* Bucket names (at most 96 bytes): "<kind>:<the caller's client network>"
 * (core/netkey.h, design.md §9.1), and "<kind>:<keyed hash of subject>"
 * for a subject such as an e-mail address, which is never stored. */
void rate_bucket_net(const struct req *r, const char *kind, char *buf, size_t n);
void rate_bucket_hashed(const struct req *r, const char *kind, const char *subject, char *buf,
    size_t n);

/* A handler that is one event of a shared one: name(r) is fn(r, ev). */
#define HANDLER_EVENT(name, fn, ev) \
	enum h_rc name(struct req *r) { return fn(r, ev); }

/* The body field tables of the handlers below, for the MCP tools' input
 * schemas (fcgi/mcp.c): the tables the handlers decode with. */
struct field_list;
extern const struct field_list fields_me_patch, fields_bio;	/* fcgi/agents.c */
extern const struct field_list fields_study, fields_review;	/* fcgi/studies.c */
extern const struct field_list fields_reject, fields_bulk_review; /* fcgi/studies.c */
extern const struct field_list fields_study_patch;		/* fcgi/studies.c */
extern const struct field_list fields_code;			/* fcgi/studies.c */
extern const struct field_list fields_group, fields_group_patch;	/* fcgi/groups.c */
extern const struct field_list fields_members, fields_member;	/* fcgi/groups.c */
extern const struct field_list fields_claim;			/* fcgi/account.c */
extern const struct field_list fields_bonuses, fields_bonus_item; /* fcgi/bonuses.c */
extern const struct field_list fields_message_send, fields_message_reply; /* fcgi/messages.c */
extern const struct field_list fields_complete;		/* fcgi/participation.c */
extern const struct field_list fields_cashout;		/* fcgi/wallet.c */

/* fcgi/health.c */
enum h_rc h_health(struct req *);
/* fcgi/agents.c */
enum h_rc h_register(struct req *);
enum h_rc h_claim_code(struct req *);
enum h_rc h_me_get(struct req *);
enum h_rc h_me_patch(struct req *);
enum h_rc h_bio_set(struct req *);
enum h_rc h_bio_get(struct req *);
enum h_rc h_heartbeat(struct req *);
enum h_rc h_key_rotate(struct req *);
enum h_rc h_key_replace(struct req *);
/* fcgi/account.c */
enum h_rc h_send_code(struct req *);
enum h_rc h_login(struct req *);
enum h_rc h_auth_providers(struct req *);
enum h_rc h_logout(struct req *);
enum h_rc h_logout_all(struct req *);
enum h_rc h_claim(struct req *);
enum h_rc h_account(struct req *);
/* fcgi/studies.c: researcher side and the study detail */
enum h_rc h_study_create(struct req *);
enum h_rc h_study_list(struct req *);
enum h_rc h_study_get(struct req *);
enum h_rc h_study_pause(struct req *);
enum h_rc h_study_resume(struct req *);
enum h_rc h_study_stop(struct req *);
enum h_rc h_participants(struct req *);
enum h_rc h_participant_approve(struct req *);
enum h_rc h_participant_reject(struct req *);
enum h_rc h_participants_review(struct req *);
/* fcgi/bonuses.c (design.md §13) */
enum h_rc h_bonuses_pay(struct req *);
enum h_rc h_bonuses_list(struct req *);
/* fcgi/messages.c (design.md §13) */
enum h_rc h_message_send(struct req *);
enum h_rc h_message_thread(struct req *);
enum h_rc h_messages_list(struct req *);
enum h_rc h_message_read(struct req *);
enum h_rc h_message_reply(struct req *);
/* fcgi/groups.c (design.md §14) */
enum h_rc h_group_create(struct req *);
enum h_rc h_group_list(struct req *);
enum h_rc h_group_get(struct req *);
enum h_rc h_group_patch(struct req *);
enum h_rc h_group_delete(struct req *);
enum h_rc h_group_members_add(struct req *);
enum h_rc h_group_members_list(struct req *);
enum h_rc h_group_member_delete(struct req *);
/* fcgi/participation.c: agent side */
enum h_rc h_available(struct req *);
enum h_rc h_accept(struct req *);
enum h_rc h_complete(struct req *);
enum h_rc h_withdraw(struct req *);
enum h_rc h_history(struct req *);
/* fcgi/events.c: events and webhooks (design.md §11) */
enum h_rc h_events(struct req *);
enum h_rc h_reputation(struct req *);
enum h_rc h_webhook_create(struct req *);
enum h_rc h_webhook_list(struct req *);
enum h_rc h_webhook_delete(struct req *);
enum h_rc h_webhook_deliveries(struct req *);
/* fcgi/wallet.c */
enum h_rc h_wallet_balance(struct req *);
enum h_rc h_wallet_transactions(struct req *);
enum h_rc h_study_patch(struct req *);
enum h_rc h_cashout_create(struct req *);
enum h_rc h_cashout_list(struct req *);

/* The study URL an agent opens for its participation: study_url with
 * participant_id, study_id and participation_id appended (design.md §6.7).
 * Allocated; NULL when out of memory. */
char *participant_url(const char *url, const char *anon, const char *study_id,
    const char *prt_id);

#endif
