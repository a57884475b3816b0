/*
 * The event catalogue (design.md §11): every type an owner can receive,
 * one table.  Pure: names only, no allocation.
 * Convention of core/ (design.md §2.3, core/errors.h): enum arps_err, ARPS_OK
 * or the reason, or bool for a predicate; outputs written only on success.
 */
#ifndef ARPS_CORE_EVENTS_H
#define ARPS_CORE_EVENTS_H

#include <stdbool.h>
#include <stddef.h>

/* X(enum, "api name", for agents (1), researchers' accounts (0) or both (-1):
 * a researcher's wallet is credited by an administrator's top-up) */
#define EVENT_TYPES(X) \
	X(EV_PART_ACCEPTED,	"participation.accepted",	1) \
	X(EV_PART_SUBMITTED,	"participation.submitted",	1) \
	X(EV_PART_APPROVED,	"participation.approved",	1) \
	X(EV_PART_REJECTED,	"participation.rejected",	1) \
	X(EV_PART_TIMED_OUT,	"participation.timed_out",	1) \
	X(EV_PART_WITHDRAWN,	"participation.withdrawn",	1) \
	X(EV_PART_SCREENED_OUT,	"participation.screened_out",	1) \
	X(EV_PART_RETURN_REQUESTED, "participation.return_requested", 1) \
	X(EV_REPUTATION_CHANGED, "reputation.changed",		1) \
	X(EV_WALLET_CREDITED,	"wallet.credited",		-1) \
	X(EV_STUDY_MATCHED,	"study.matched",		1) \
	X(EV_STUDY_STATUS_CHANGED, "study.status_changed",	0) \
	X(EV_STUDY_FULL,	"study.full",			0) \
	X(EV_SUBMISSION_CREATED, "submission.created",		0) \
	X(EV_STUDY_COMPLETED,	"study.completed",		0) \
	X(EV_STUDY_UPDATED,	"study.updated",		0) \
	X(EV_WEBHOOK_DISABLED,	"webhook.disabled",		-1) \
	X(EV_BONUS_RECEIVED,	"bonus.received",		1) \
	X(EV_WALLET_DEBITED,	"wallet.debited",		0) \
	X(EV_MESSAGE_RECEIVED,	"message.received",		-1)

#define EVENT_ENUM_(e, name, who) e,
enum event_type { EVENT_TYPES(EVENT_ENUM_) EV__MAX };
#undef EVENT_ENUM_

/* "participation.accepted", ...; NULL for an invalid type. */
const char	*event_type_name(enum event_type t);
/* The type of a name; false when unknown. */
bool		 event_type_from_name(const char *name, enum event_type *t);
/* Whether an owner of this kind (agent: true, account: false) receives
 * events of type t (webhook.disabled goes to both). */
bool		 event_type_for(enum event_type t, bool agent);
/* Write s as a quoted JSON string into out (n bytes with the NUL): '"',
 * '\\' and every control character escaped, other bytes as they are (s
 * is valid UTF-8 already).  False when it does not fit.  For the text an
 * event's data carries (a bonus's reason). */
bool		 event_json_str(const char *s, char *out, size_t n);
/* Whether a webhook's comma-separated list of types names type. */
bool		 event_list_has(const char *list, const char *type);

#endif
