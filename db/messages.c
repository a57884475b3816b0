/* Messages: the statements of db/messages.h. */
#include <stdlib.h>
#include <string.h>

#include "db/messages.h"
#include "db/rows.h"

static const char q_insert[] =
    "INSERT INTO messages (id, study_id, sender, reply_to, body, created_at)"
    " VALUES (?, ?, ?, ?, ?, ?)";
static struct db_shape sh_items = { "INSERT INTO message_items (message_id, participation_id,"
    " agent_id, created_at) VALUES ", "(?, ?, ?, ?)", ", ", "", 0, 4, { 0 } };
#define ITEM_NP 4

/* An item with its message, study and participant, read at the MSG_C_*
 * positions. */
#define MSG_COLUMNS(X, L) \
	X(MSG_C_SEQ,		"mi.seq") \
	X(MSG_C_ID,		"m.id") \
	X(MSG_C_STUDY,		"m.study_id") \
	X(MSG_C_TITLE,		"s.title") \
	X(MSG_C_RESEARCHER,	"s.researcher_id") \
	X(MSG_C_PRT,		"mi.participation_id") \
	X(MSG_C_ANON,		"p.participant_id") \
	X(MSG_C_AGENT,		"mi.agent_id") \
	X(MSG_C_SENDER,		"m.sender") \
	X(MSG_C_BODY,		"m.body") \
	X(MSG_C_CREATED,	"mi.created_at") \
	L(MSG_C_READ,		"mi.read_at")
enum msg_col { DB_COLS_ENUM(MSG_COLUMNS) MSG_C__END };
#define MSG_FROM \
    " FROM message_items mi JOIN messages m ON m.id = mi.message_id" \
    " JOIN studies s ON s.id = m.study_id JOIN participations p ON p.id = mi.participation_id"
static const char q_get[] =
    "SELECT " DB_COLS_SQL(MSG_COLUMNS) MSG_FROM " WHERE mi.agent_id = ? AND mi.message_id = ?";
static const char q_read[] =
    "UPDATE message_items SET read_at = ? WHERE agent_id = ? AND message_id = ?"
    " AND read_at IS NULL";
static const char q_inbox[] =
    "SELECT " DB_COLS_SQL(MSG_COLUMNS) MSG_FROM " WHERE mi.agent_id = ? AND mi.seq < ?"
    " ORDER BY mi.seq DESC LIMIT ?";
static const char q_inbox_known[] =
    "SELECT 1 FROM message_items WHERE agent_id = ? AND seq = ?";
static const char q_thread[] =
    "SELECT " DB_COLS_SQL(MSG_COLUMNS) MSG_FROM " WHERE mi.participation_id = ? AND mi.seq > ?"
    " ORDER BY mi.seq LIMIT ?";
static const char q_thread_known[] =
    "SELECT 1 FROM message_items WHERE participation_id = ? AND seq = ?";

enum db_rc
db_message_insert(struct db *db, const char *id, const char *study_id, int from_agent,
    const char *reply_to, const char *body, const struct db_message_to *to, size_t n,
    int64_t now)
{
	struct dbp *p;
	enum db_rc rc;
	size_t i;

	if (n == 0)
		return DB_ERR;
	if ((rc = DB_Q(db, q_insert, NULL, NULL, P_STR(id), P_STR(study_id),
	    P_STR(from_agent ? "agent" : "researcher"), P_STR(reply_to), P_STR(body),
	    P_I64(now))) != DB_OK)
		return rc;
	if ((p = calloc(n * ITEM_NP, sizeof *p)) == NULL)
		return DB_ERR;
	for (i = 0; i < n; i++) {
		struct dbp *r = p + i * ITEM_NP;

		r[0] = P_STR(id);
		r[1] = P_STR(to[i].prt_id);
		r[2] = P_STR(to[i].agent_id);
		r[3] = P_I64(now);
	}
	rc = db_rows_exec(db, &sh_items, NULL, p, n, NULL, NULL, NULL);
	free(p);
	return rc;
}

void
db_message_clear(struct db_message *m)
{
	if (m == NULL)
		return;
	free(m->study_title);
	free(m->body);
	memset(m, 0, sizeof *m);
}

static void
message_clear(void *e)
{
	db_message_clear(e);
}

static int
message_row(const struct dbres *res, size_t row, void *e)
{
	struct db_message *m = e;
	const char *sender;
	int ok = 1;

	memset(m, 0, sizeof *m);
	m->seq = dbres_i64(res, row, MSG_C_SEQ);
	dbres_copy(m->id, sizeof m->id, res, row, MSG_C_ID);
	dbres_copy(m->study_id, sizeof m->study_id, res, row, MSG_C_STUDY);
	m->study_title = dbres_dup(res, row, MSG_C_TITLE, &ok);
	dbres_copy(m->researcher_id, sizeof m->researcher_id, res, row, MSG_C_RESEARCHER);
	dbres_copy(m->prt_id, sizeof m->prt_id, res, row, MSG_C_PRT);
	dbres_copy(m->participant_id, sizeof m->participant_id, res, row, MSG_C_ANON);
	dbres_copy(m->agent_id, sizeof m->agent_id, res, row, MSG_C_AGENT);
	sender = dbres_str(res, row, MSG_C_SENDER);
	m->from_agent = sender != NULL && strcmp(sender, "agent") == 0;
	m->body = dbres_dup(res, row, MSG_C_BODY, &ok);
	m->created_at = dbres_i64(res, row, MSG_C_CREATED);
	m->read_at = dbres_i64(res, row, MSG_C_READ);
	if (!ok || m->body == NULL || m->study_title == NULL) {
		db_message_clear(m);
		return -1;
	}
	return 0;
}

enum db_rc
db_message_get(struct db *db, const char *agent_id, const char *message_id,
    struct db_message *m)
{
	struct dbres *res = NULL;
	enum db_rc rc;

	memset(m, 0, sizeof *m);
	if ((rc = DB_ONE(db, q_get, &res, P_STR(agent_id), P_STR(message_id))) != DB_OK)
		return rc;
	rc = message_row(res, 0, m) == 0 ? DB_OK : DB_ERR;
	dbres_free(res);
	return rc;
}

enum db_rc
db_message_mark_read(struct db *db, const char *agent_id, const char *message_id, int64_t now)
{
	return DB_Q(db, q_read, NULL, NULL, P_I64(now), P_STR(agent_id), P_STR(message_id));
}

/* One page of q (key, bound, limit + 1) after checking the cursor with known. */
static enum db_rc
message_page(struct db *db, const char *q, const char *known, const char *key, int64_t cursor,
    int64_t bound, int64_t limit, struct db_message **v, size_t *n, int64_t *next)
{
	struct dbres *res = NULL;
	void *rows = NULL;
	enum db_rc rc;
	int more = 0;

	*v = NULL;
	*n = 0;
	*next = 0;
	if ((rc = db_cursor_known(db, known, key, cursor)) != DB_OK)
		return rc;
	if ((rc = DB_Q(db, q, &res, NULL, P_STR(key), P_I64(bound), P_I64(limit + 1))) != DB_OK)
		return rc;
	rc = dbres_map(res, limit, sizeof **v, message_row, message_clear, &rows, n, &more);
	dbres_free(res);
	*v = rows;
	if (rc == DB_OK && more && *n > 0)
		*next = (*v)[*n - 1].seq;
	return rc;
}

enum db_rc
db_messages_inbox(struct db *db, const char *agent_id, int64_t cursor, int64_t limit,
    struct db_message **v, size_t *n, int64_t *next)
{
	return message_page(db, q_inbox, q_inbox_known, agent_id, cursor, db_cursor_bound(cursor),
	    limit, v, n, next);
}

enum db_rc
db_messages_thread(struct db *db, const char *prt_id, int64_t cursor, int64_t limit,
    struct db_message **v, size_t *n, int64_t *next)
{
	return message_page(db, q_thread, q_thread_known, prt_id, cursor, cursor > 0 ? cursor : 0,
	    limit, v, n, next);
}

void
db_messages_free(struct db_message *v, size_t n)
{
	db_array_free(v, n, sizeof *v, message_clear);
}
