/*
 * Messages (design.md §13): a message's text (messages) and who it is
 * between (message_items: one row per participation it was sent to, or
 * from, for an agent's reply).  The agent's inbox reads its items
 * newest first, the researcher's thread one participation's oldest first;
 * both page on the item's seq.
 * Return convention: enum db_rc (db/db.h).
 */
#ifndef ARPS_DB_MESSAGES_H
#define ARPS_DB_MESSAGES_H

#include <stddef.h>
#include <stdint.h>

#include "core/ids.h"
#include "db/db.h"

/* One item: a message as one participation's side sees it. */
struct db_message {
	int64_t			 seq;			/* the item's: the cursor */
	char			 id[IDS_BUFSZ];		/* the message's msg_ id */
	char			 study_id[IDS_BUFSZ];
	char			*study_title;		/* owned */
	char			 researcher_id[IDS_BUFSZ];	/* the study's owner */
	char			 prt_id[IDS_BUFSZ];
	char			 participant_id[ANON_BUFSZ];
	char			 agent_id[IDS_BUFSZ];
	int			 from_agent;		/* sender: 1 agent, 0 researcher */
	char			*body;			/* owned */
	int64_t			 created_at;
	int64_t			 read_at;		/* 0: not read */
};

/* One recipient of a researcher's message. */
struct db_message_to {
	char			 prt_id[IDS_BUFSZ];
	char			 agent_id[IDS_BUFSZ];
};

/* Insert the message id of study_id (sender agent when from_agent;
 * reply_to NULL for a researcher's) and its items, one a recipient
 * to[0..n) (n >= 1), all created at now. */
enum db_rc db_message_insert(struct db *, const char *id, const char *study_id, int from_agent,
    const char *reply_to, const char *body, const struct db_message_to *to, size_t n,
    int64_t now);
/* The agent's item of message_id into *m (db_message_clear); DB_NOTFOUND
 * when the agent has none (another agent's, or no such message). */
enum db_rc db_message_get(struct db *, const char *agent_id, const char *message_id,
    struct db_message *m);
/* Mark the agent's item of message_id read at now, when unread. */
enum db_rc db_message_mark_read(struct db *, const char *agent_id, const char *message_id,
    int64_t now);
/* The agent's items, newest first: seq < cursor (0: from the newest), at
 * most limit; *next the next page's cursor, 0 at the end; DB_NOTFOUND for
 * a cursor this list never handed out.  *v calloc'd (db_messages_free). */
enum db_rc db_messages_inbox(struct db *, const char *agent_id, int64_t cursor, int64_t limit,
    struct db_message **v, size_t *n, int64_t *next);
/* One participation's items, oldest first: seq > cursor, at most limit;
 * otherwise as db_messages_inbox. */
enum db_rc db_messages_thread(struct db *, const char *prt_id, int64_t cursor, int64_t limit,
    struct db_message **v, size_t *n, int64_t *next);
void db_message_clear(struct db_message *m);
void db_messages_free(struct db_message *v, size_t n);

#endif
