/* Studies and participations: the column lists, row mapping, reads, and
 * the statements of the state changes.  The state changes themselves,
 * with the lock order, are in txn/lifecycle.c. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db/match.h"
#include "db/studies.h"

/* A study row (alias s), read at the STUDY_C_* positions. */
#define STUDY_COLUMNS(X, L) \
	X(STUDY_C_SEQ,			"s.seq") \
	X(STUDY_C_ID,			"s.id") \
	X(STUDY_C_RESEARCHER_ID,	"s.researcher_id") \
	X(STUDY_C_TITLE,		"s.title") \
	X(STUDY_C_DESCRIPTION,		"s.description") \
	X(STUDY_C_STUDY_URL,		"s.study_url") \
	X(STUDY_C_CRITERIA,		"s.screening_criteria") \
	X(STUDY_C_COMPLETION_CODE,	"s.completion_code") \
	X(STUDY_C_REWARD,		"s.reward_cents") \
	X(STUDY_C_FEE,			"s.fee_cents") \
	X(STUDY_C_MAX_PARTICIPANTS,	"s.max_participants") \
	X(STUDY_C_DURATION_MINUTES,	"s.duration_minutes") \
	X(STUDY_C_DEADLINE,		"s.deadline") \
	X(STUDY_C_STATE,		"s.status") \
	X(STUDY_C_OCCUPIED,		"s.occupied") \
	X(STUDY_C_FROZEN,		"s.frozen_cents") \
	X(STUDY_C_SPENT,		"s.spent_cents") \
	X(STUDY_C_REFUNDED,		"s.refunded_cents") \
	X(STUDY_C_REFUNDED_SLOTS,	"s.refunded_slots") \
	X(STUDY_C_BONUS,		"s.bonus_cents") \
	X(STUDY_C_CREATED_AT,		"s.created_at") \
	X(STUDY_C_CLOSED_AT,		"COALESCE(s.closed_at, 0)") \
	X(STUDY_C_COMPLETED_AT,		"COALESCE(s.completed_at, 0)") \
	X(STUDY_C_ELIGIBILITY,		"s.eligibility") \
	X(STUDY_C_SCREEN_OUT,		"s.screen_out_cents") \
	L(STUDY_C_SCREEN_OUT_FEE,	"s.screen_out_fee_cents")
/* The participations of the study by state (alias p, grouped by study),
 * selected after STUDY_COLUMNS by the owner's list. */
#define STUDY_COUNT_COLUMNS(X, L) \
	X(STUDY_C_N_ACCEPTED,		"COALESCE(SUM(p.status = 'accepted'), 0)") \
	X(STUDY_C_N_IN_PROGRESS,	"COALESCE(SUM(p.status = 'in_progress'), 0)") \
	X(STUDY_C_N_SUBMITTED,		"COALESCE(SUM(p.status = 'submitted'), 0)") \
	X(STUDY_C_N_APPROVED,		"COALESCE(SUM(p.status = 'approved'), 0)") \
	X(STUDY_C_N_REJECTED,		"COALESCE(SUM(p.status = 'rejected'), 0)") \
	X(STUDY_C_N_WITHDRAWN,		"COALESCE(SUM(p.status = 'withdrawn'), 0)") \
	X(STUDY_C_N_TIMED_OUT,		"COALESCE(SUM(p.status = 'timed_out'), 0)") \
	L(STUDY_C_N_SCREENED_OUT,	"COALESCE(SUM(p.status = 'screened_out'), 0)")
enum study_col {
	DB_COLS_ENUM(STUDY_COLUMNS)
	DB_COLS_ENUM(STUDY_COUNT_COLUMNS)
	STUDY_C__END
};
#define STUDY_COLS	DB_COLS_SQL(STUDY_COLUMNS)
#define COUNT_COLS	DB_COLS_SQL(STUDY_COUNT_COLUMNS)

/* A participation row (alias p), then three joined columns that each
 * query chooses (PART_SELECT), read at PART_C_REPUTATION, PART_C_TITLE and
 * PART_C_REWARD. */
#define PART_COLUMNS(X, L) \
	X(PART_C_SEQ,			"p.seq") \
	X(PART_C_ID,			"p.id") \
	X(PART_C_STUDY_ID,		"p.study_id") \
	X(PART_C_AGENT_ID,		"p.agent_id") \
	X(PART_C_PARTICIPANT_ID,	"p.participant_id") \
	X(PART_C_STATE,			"p.status") \
	X(PART_C_ACCEPTED_AT,		"p.accepted_at") \
	X(PART_C_STARTED_AT,		"COALESCE(p.started_at, 0)") \
	X(PART_C_SUBMITTED_AT,		"COALESCE(p.submitted_at, 0)") \
	X(PART_C_REVIEWED_AT,		"COALESCE(p.reviewed_at, 0)") \
	X(PART_C_ENDED_AT,		"COALESCE(p.ended_at, 0)") \
	X(PART_C_REASON,		"p.reason") \
	X(PART_C_CATEGORY,		"p.reject_category") \
	X(PART_C_ACCEPT_REP,		"COALESCE(p.accept_reputation, -1)") \
	X(PART_C_RETURN_AT,		"COALESCE(p.return_requested_at, 0)") \
	L(PART_C_RETURN_REASON,		"p.return_reason")
enum part_col {
	DB_COLS_ENUM(PART_COLUMNS)
	PART_C_REPUTATION,	/* the agent's (participant lists) */
	PART_C_TITLE,		/* the study's (history) */
	PART_C_REWARD,		/* the study's (history) */
	PART_C__END
};
#define PART_SELECT(reputation, title, reward) \
	"SELECT " DB_COLS_SQL(PART_COLUMNS) ", " reputation ", " title ", " reward
#define PART_ALONE	PART_SELECT("0", "NULL", "0")

/* (status, number of participations) of one study. */
enum count_col { COUNT_C_STATE, COUNT_C_N };

static const char q_study_get[] = "SELECT " STUDY_COLS " FROM studies s WHERE s.id = ?";
static const char q_study_lock[] =
    "SELECT " STUDY_COLS " FROM studies s WHERE s.id = ? FOR UPDATE";
static const char q_study_counts[] =
    "SELECT status, COUNT(*) FROM participations WHERE study_id = ? GROUP BY status";
static const char q_study_list[] =
    "SELECT " STUDY_COLS ", " COUNT_COLS " FROM studies s"
    " LEFT JOIN participations p ON p.study_id = s.id"
    " WHERE s.researcher_id = ? AND s.seq < ? GROUP BY s.seq ORDER BY s.seq DESC LIMIT ?";
static const char q_study_many[] =
    "SELECT " STUDY_COLS " FROM studies s WHERE s.id IN (" DB_Q32 ")";
#define STUDY_MANY_BATCH 32
/*
 * Whether the agent (the three placeholders) may take part by the
 * eligibility of study `sid` (design.md §14): in one of its include
 * groups when it names any, in none of its exclude groups, in none of its
 * excluded studies.  Each probe reads a key: study_eligibility's primary
 * key, group_members (group_id, agent_id), participations_once.
 */
#define ELIG_OK_SQL(sid) \
	"((NOT EXISTS (SELECT 1 FROM study_eligibility e WHERE e.study_id = " sid \
	" AND e.kind = 'include_group') OR EXISTS (SELECT 1 FROM study_eligibility e" \
	" JOIN group_members m ON m.group_id = e.ref_id WHERE e.study_id = " sid \
	" AND e.kind = 'include_group' AND m.agent_id = ?))" \
	" AND NOT EXISTS (SELECT 1 FROM study_eligibility e JOIN group_members m" \
	" ON m.group_id = e.ref_id WHERE e.study_id = " sid " AND e.kind = 'exclude_group'" \
	" AND m.agent_id = ?)" \
	" AND NOT EXISTS (SELECT 1 FROM study_eligibility e JOIN participations x" \
	" ON x.study_id = e.ref_id WHERE e.study_id = " sid " AND e.kind = 'exclude_study'" \
	" AND x.agent_id = ?))"
/* db_study_open_for: 30 ids, the time and the agent five times (36
 * parameters); not a study of the agent's own owner (OWN_STUDY,
 * design.md §6.7); eligible when the study has rules (design.md §14:
 * a study without them pays one column's test). */
static const char q_study_open_for[] =
    "SELECT " STUDY_COLS " FROM studies s WHERE s.id IN (" DB_Q4 ", " DB_Q4 ", " DB_Q4 ", "
    DB_Q4 ", " DB_Q4 ", " DB_Q4 ", " DB_Q4 ", ?, ?)"
    " AND s.status = 'active' AND s.occupied < s.max_participants"
    " AND (s.deadline IS NULL OR s.deadline > ?)"
    " AND NOT EXISTS (SELECT 1 FROM participations p WHERE p.study_id = s.id"
    " AND p.agent_id = ?)"
    " AND NOT EXISTS (SELECT 1 FROM agents g WHERE g.id = ? AND g.account_id = s.researcher_id)"
    " AND (s.eligibility = 0 OR " ELIG_OK_SQL("s.id") ")";
#define STUDY_OPEN_NP	(STUDY_OPEN_BATCH + 6)
static const char q_study_eligible[] =
    "SELECT s.eligibility = 0 OR " ELIG_OK_SQL("s.id") " FROM studies s WHERE s.id = ?";
#define STUDY_OPEN_BATCH DB_MATCH_RECHECK
_Static_assert(DB_MATCH_RECHECK == 30, "q_study_open_for has 30 id placeholders");

static const char q_part_get[] = PART_ALONE " FROM participations p WHERE p.id = ?";
static const char q_part_lock[] = PART_ALONE " FROM participations p WHERE p.id = ? FOR UPDATE";
static const char q_part_by_agent[] =
    PART_ALONE " FROM participations p WHERE p.study_id = ? AND p.agent_id = ?";
static const char q_part_by_anon[] =
    PART_SELECT("a.reputation", "NULL", "0") " FROM participations p"
    " JOIN agents a ON a.id = p.agent_id WHERE p.study_id = ? AND p.participant_id = ?";
/* The study row and one of its participations (the agent's, or by the
 * anonymous id), both locked by one statement: the outer join reads the
 * study first, so the locks are taken in design.md §13.2's order. */
#define STUDY_PART_LOCK(on) \
	"SELECT " STUDY_COLS ", " DB_COLS_SQL(PART_COLUMNS) ", 0, NULL, 0 FROM studies s" \
	" LEFT JOIN participations p ON p.study_id = s.id AND " on " WHERE s.id = ? FOR UPDATE"
static const char q_study_part_by_agent_lock[] = STUDY_PART_LOCK("p.agent_id = ?");
static const char q_study_part_by_anon_lock[] = STUDY_PART_LOCK("p.participant_id = ?");
/* Where the participation's columns begin in those rows. */
#define STUDY_ROW_NCOLS STUDY_C_N_ACCEPTED
static const char q_part_list[] =
    PART_SELECT("a.reputation", "NULL", "0") " FROM participations p"
    " JOIN agents a ON a.id = p.agent_id WHERE p.study_id = ? AND p.seq < ?"
    " ORDER BY p.seq DESC LIMIT ?";
static const char q_history[] =
    PART_SELECT("0", "s.title", "s.reward_cents") " FROM participations p"
    " JOIN studies s ON s.id = p.study_id WHERE p.agent_id = ? AND p.seq < ?"
    " ORDER BY p.seq DESC LIMIT ?";

/* A list cursor names one of the list's rows (db_cursor_known). */
static const char q_study_known[] = "SELECT 1 FROM studies WHERE researcher_id = ? AND seq = ?";
static const char q_part_known_study[] =
    "SELECT 1 FROM participations WHERE study_id = ? AND seq = ?";
static const char q_part_known_agent[] =
    "SELECT 1 FROM participations WHERE agent_id = ? AND seq = ?";

/* The statements of txn/lifecycle.c's state changes. */
/* Whether any participation of the study still holds its slot open to work
 * (accepted or in_progress): one probe of the (study_id, status) key. */
static const char q_study_has_active[] =
    "SELECT 1 FROM participations WHERE study_id = ? AND status IN ('accepted', 'in_progress')"
    " LIMIT 1";
static const char q_study_ins[] =
    "INSERT INTO studies (id, researcher_id, title, description, study_url, reward_cents,"
    " fee_cents, max_participants, screening_criteria, duration_minutes, deadline,"
    " completion_code, status, occupied, frozen_cents, created_at, eligibility,"
    " screen_out_cents, screen_out_fee_cents)"
    " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'active', 0, ?, ?, ?, ?, ?)";
static const char q_study_occ_inc[] =
    "UPDATE studies SET occupied = occupied + 1 WHERE id = ? AND status = 'active'"
    " AND occupied < max_participants";
/* a screen-out the researcher cannot fund again: the slot leaves the study */
static const char q_study_shrink[] =
    "UPDATE studies SET max_participants = max_participants - 1 WHERE id = ?"
    " AND max_participants > occupied";
static const char q_study_occ_dec[] =
    "UPDATE studies SET occupied = occupied - 1 WHERE id = ? AND occupied > 0";
static const char q_part_return[] =
    "UPDATE participations SET return_requested_at = ?, return_reason = ? WHERE id = ?";
static const char q_study_patch[] =
    "UPDATE studies SET title = COALESCE(?, title), description = COALESCE(?, description),"
    " deadline = COALESCE(?, deadline), max_participants = COALESCE(?, max_participants)"
    " WHERE id = ?";
static const char q_study_money[] =
    "UPDATE studies SET frozen_cents = frozen_cents - ?, spent_cents = spent_cents + ?,"
    " refunded_cents = refunded_cents + ?, refunded_slots = refunded_slots + ? WHERE id = ?";
static const char q_study_state[] =
    "UPDATE studies SET status = ?, closed_at = COALESCE(closed_at, ?),"
    " completed_at = COALESCE(completed_at, ?) WHERE id = ?";
static const char q_part_ins[] =
    "INSERT INTO participations (id, study_id, agent_id, participant_id, status, accepted_at,"
    " accept_reputation) VALUES (?, ?, ?, ?, 'accepted', ?,"
    " (SELECT reputation FROM agents WHERE id = ?))";
static const char q_part_set[] =
    "UPDATE participations SET status = ?, started_at = COALESCE(started_at, ?),"
    " submitted_at = COALESCE(?, submitted_at), reviewed_at = COALESCE(?, reviewed_at),"
    " ended_at = COALESCE(?, ended_at), reason = COALESCE(?, reason),"
    " reject_category = COALESCE(?, reject_category) WHERE id = ?";

/* --- row mapping --- */

void
db_study_clear(struct study *s)
{
	if (s == NULL)
		return;
	free(s->title);
	free(s->description);
	free(s->study_url);
	free(s->criteria);
	free(s->completion_code);
	memset(s, 0, sizeof *s);
}

void
db_participation_clear(struct participation *p)
{
	if (p == NULL)
		return;
	free(p->reason);
	free(p->return_reason);
	free(p->title);
	memset(p, 0, sizeof *p);
}

/* The clear functions as db_array_free and dbres_map call them. */
static void
study_clear_elem(void *s)
{
	db_study_clear(s);
}

static void
part_clear_elem(void *p)
{
	db_participation_clear(p);
}

void
db_studies_free(struct study *v, size_t n)
{
	db_array_free(v, n, sizeof *v, study_clear_elem);
}

void
db_participations_free(struct participation *v, size_t n)
{
	db_array_free(v, n, sizeof *v, part_clear_elem);
}

/* Fill *s from row `row` (STUDY_COLUMNS, then STUDY_COUNT_COLUMNS when
 * counts).  0, or -1 with *s cleared. */
static int
study_row(const struct dbres *res, size_t row, int counts, struct study *s)
{
	int ok = 1;

	memset(s, 0, sizeof *s);
	s->seq = dbres_i64(res, row, STUDY_C_SEQ);
	dbres_copy(s->id, sizeof s->id, res, row, STUDY_C_ID);
	dbres_copy(s->researcher_id, sizeof s->researcher_id, res, row, STUDY_C_RESEARCHER_ID);
	s->title = dbres_dup(res, row, STUDY_C_TITLE, &ok);
	s->description = dbres_dup(res, row, STUDY_C_DESCRIPTION, &ok);
	s->study_url = dbres_dup(res, row, STUDY_C_STUDY_URL, &ok);
	s->criteria = dbres_dup(res, row, STUDY_C_CRITERIA, &ok);
	s->completion_code = dbres_dup(res, row, STUDY_C_COMPLETION_CODE, &ok);
	s->needs_code = !dbres_isnull(res, row, STUDY_C_COMPLETION_CODE);
	s->reward = dbres_i64(res, row, STUDY_C_REWARD);
	s->fee = dbres_i64(res, row, STUDY_C_FEE);
	s->max_participants = dbres_i64(res, row, STUDY_C_MAX_PARTICIPANTS);
	s->duration_minutes = dbres_i64(res, row, STUDY_C_DURATION_MINUTES);
	s->has_deadline = !dbres_isnull(res, row, STUDY_C_DEADLINE);
	s->deadline = dbres_i64(res, row, STUDY_C_DEADLINE);
	if (!study_state_from_name(dbres_str(res, row, STUDY_C_STATE), &s->state))
		ok = 0;
	s->occupied = dbres_i64(res, row, STUDY_C_OCCUPIED);
	s->frozen = dbres_i64(res, row, STUDY_C_FROZEN);
	s->spent = dbres_i64(res, row, STUDY_C_SPENT);
	s->refunded = dbres_i64(res, row, STUDY_C_REFUNDED);
	s->refunded_slots = dbres_i64(res, row, STUDY_C_REFUNDED_SLOTS);
	s->bonus = dbres_i64(res, row, STUDY_C_BONUS);
	s->created_at = dbres_i64(res, row, STUDY_C_CREATED_AT);
	s->closed_at = dbres_i64(res, row, STUDY_C_CLOSED_AT);
	s->completed_at = dbres_i64(res, row, STUDY_C_COMPLETED_AT);
	s->eligibility = dbres_i64(res, row, STUDY_C_ELIGIBILITY) != 0;
	s->screen_out = dbres_i64(res, row, STUDY_C_SCREEN_OUT);
	s->screen_out_fee = dbres_i64(res, row, STUDY_C_SCREEN_OUT_FEE);
	if (counts) {
		s->counts.accepted = dbres_i64(res, row, STUDY_C_N_ACCEPTED);
		s->counts.in_progress = dbres_i64(res, row, STUDY_C_N_IN_PROGRESS);
		s->counts.submitted = dbres_i64(res, row, STUDY_C_N_SUBMITTED);
		s->counts.approved = dbres_i64(res, row, STUDY_C_N_APPROVED);
		s->counts.rejected = dbres_i64(res, row, STUDY_C_N_REJECTED);
		s->counts.withdrawn = dbres_i64(res, row, STUDY_C_N_WITHDRAWN);
		s->counts.timed_out = dbres_i64(res, row, STUDY_C_N_TIMED_OUT);
		s->counts.screened_out = dbres_i64(res, row, STUDY_C_N_SCREENED_OUT);
	}
	if (!ok)
		db_study_clear(s);
	return ok ? 0 : -1;
}

/* study_row with the counts, as dbres_map calls it. */
static int
study_row_counted(const struct dbres *res, size_t row, void *s)
{
	return study_row(res, row, 1, s);
}

static int
part_row(const struct dbres *res, size_t row, void *out)
{
	struct participation *p = out;
	int ok = 1;

	memset(p, 0, sizeof *p);
	p->seq = dbres_i64(res, row, PART_C_SEQ);
	dbres_copy(p->id, sizeof p->id, res, row, PART_C_ID);
	dbres_copy(p->study_id, sizeof p->study_id, res, row, PART_C_STUDY_ID);
	dbres_copy(p->agent_id, sizeof p->agent_id, res, row, PART_C_AGENT_ID);
	dbres_copy(p->participant_id, sizeof p->participant_id, res, row, PART_C_PARTICIPANT_ID);
	if (!part_state_from_name(dbres_str(res, row, PART_C_STATE), &p->state))
		ok = 0;
	p->accepted_at = dbres_i64(res, row, PART_C_ACCEPTED_AT);
	p->started_at = dbres_i64(res, row, PART_C_STARTED_AT);
	p->submitted_at = dbres_i64(res, row, PART_C_SUBMITTED_AT);
	p->reviewed_at = dbres_i64(res, row, PART_C_REVIEWED_AT);
	p->ended_at = dbres_i64(res, row, PART_C_ENDED_AT);
	p->reason = dbres_dup(res, row, PART_C_REASON, &ok);
	dbres_copy(p->category, sizeof p->category, res, row, PART_C_CATEGORY);
	p->return_requested_at = dbres_i64(res, row, PART_C_RETURN_AT);
	p->return_reason = dbres_dup(res, row, PART_C_RETURN_REASON, &ok);
	p->accept_reputation = (int)dbres_i64(res, row, PART_C_ACCEPT_REP);
	p->reputation = (int)dbres_i64(res, row, PART_C_REPUTATION);
	p->title = dbres_dup(res, row, PART_C_TITLE, &ok);
	p->reward = dbres_i64(res, row, PART_C_REWARD);
	if (!ok)
		db_participation_clear(p);
	return ok ? 0 : -1;
}

/* The counts of one study by state. */
static enum db_rc
study_counts(struct db *db, const char *id, struct study_counts *c)
{
	struct dbres *res = NULL;
	enum part_state st;
	enum db_rc rc;
	size_t i;

	memset(c, 0, sizeof *c);
	if ((rc = DB_Q(db, q_study_counts, &res, NULL, P_STR(id))) != DB_OK)
		return rc;
	for (i = 0; i < res->nrows; i++) {
		int64_t n = dbres_i64(res, i, COUNT_C_N);

		if (!part_state_from_name(dbres_str(res, i, COUNT_C_STATE), &st))
			continue;
		switch (st) {
		case PART_ACCEPTED:	c->accepted = n; break;
		case PART_IN_PROGRESS:	c->in_progress = n; break;
		case PART_SUBMITTED:	c->submitted = n; break;
		case PART_APPROVED:	c->approved = n; break;
		case PART_REJECTED:	c->rejected = n; break;
		case PART_WITHDRAWN:	c->withdrawn = n; break;
		case PART_TIMED_OUT:	c->timed_out = n; break;
		case PART_SCREENED_OUT:	c->screened_out = n; break;
		case PART__MAX:		break;
		}
	}
	dbres_free(res);
	return DB_OK;
}

/* --- reads --- */

/* Run a query expected to give at most one row and map its first with
 * map into out (when out is not NULL): DB_NOTFOUND when it gives none. */
static enum db_rc
read_one(struct db *db, const char *sql, const struct dbp *p, size_t np,
    int (*map)(const struct dbres *, size_t, void *), void *out, size_t size)
{
	struct dbres *res = NULL;
	enum db_rc rc;

	if (out != NULL)
		memset(out, 0, size);
	if ((rc = db_exec_one(db, sql, p, np, &res)) != DB_OK)
		return rc;
	if (out != NULL && map(res, 0, out) != 0)
		rc = DB_ERR;
	dbres_free(res);
	return rc;
}

/* study_row without the counts, as read_one calls it. */
static int
study_row_alone(const struct dbres *res, size_t row, void *s)
{
	return study_row(res, row, 0, s);
}

enum db_rc
db_study_get_row(struct db *db, const char *id, int for_update, struct study *out)
{
	return read_one(db, for_update ? q_study_lock : q_study_get, DB_ARGS(P_STR(id)),
	    study_row_alone, out, sizeof *out);
}

enum db_rc
db_study_get(struct db *db, const char *id, int for_update, struct study *out)
{
	enum db_rc rc;

	if ((rc = db_study_get_row(db, id, for_update, out)) != DB_OK)
		return rc;
	if ((rc = study_counts(db, id, &out->counts)) != DB_OK)
		db_study_clear(out);
	return rc;
}

enum db_rc
db_study_get_many(struct db *db, const char *const *ids, size_t n, struct study *out, int *found)
{
	struct dbp p[STUDY_MANY_BATCH];
	struct dbres *res = NULL;
	struct study s;
	size_t at, m, i, j;
	enum db_rc rc = DB_OK;

	memset(out, 0, n * sizeof *out);
	memset(found, 0, n * sizeof *found);
	for (at = 0; at < n && rc == DB_OK; at += m) {
		m = n - at < STUDY_MANY_BATCH ? n - at : STUDY_MANY_BATCH;
		for (i = 0; i < STUDY_MANY_BATCH; i++)
			p[i] = i < m ? P_STR(ids[at + i]) : P_NULL;
		if ((rc = db_exec(db, q_study_many, p, STUDY_MANY_BATCH, &res, NULL)) != DB_OK)
			break;
		for (i = 0; i < res->nrows && rc == DB_OK; i++) {
			if (study_row(res, i, 0, &s) != 0) {
				db_study_clear(&s);
				rc = DB_ERR;
				break;
			}
			for (j = at; j < at + m && strcmp(ids[j], s.id) != 0; j++)
				;
			if (j < at + m && !found[j]) {
				out[j] = s;
				found[j] = 1;
			} else
				db_study_clear(&s);
		}
		dbres_free(res);
		res = NULL;
	}
	if (rc != DB_OK) {
		for (i = 0; i < n; i++)
			db_study_clear(&out[i]);
		memset(found, 0, n * sizeof *found);
	}
	return rc;
}

enum db_rc
db_study_open_for(struct db *db, const char *agent_id, int64_t now, const char *const *ids,
    size_t n, struct study *out, int *found)
{
	struct dbp p[STUDY_OPEN_NP];
	struct dbres *res = NULL;
	struct study s;
	size_t at, m, i, j;
	enum db_rc rc = DB_OK;

	memset(out, 0, n * sizeof *out);
	memset(found, 0, n * sizeof *found);
	for (at = 0; at < n && rc == DB_OK; at += m) {
		m = n - at < STUDY_OPEN_BATCH ? n - at : STUDY_OPEN_BATCH;
		for (i = 0; i < STUDY_OPEN_BATCH; i++)
			p[i] = i < m ? P_STR(ids[at + i]) : P_NULL;
		p[STUDY_OPEN_BATCH] = P_I64(now);
		p[STUDY_OPEN_BATCH + 1] = P_STR(agent_id);
		for (i = STUDY_OPEN_BATCH + 2; i < STUDY_OPEN_NP; i++)
			p[i] = P_STR(agent_id);
		if ((rc = db_exec(db, q_study_open_for, p, STUDY_OPEN_NP, &res, NULL)) != DB_OK)
			break;
		for (i = 0; i < res->nrows && rc == DB_OK; i++) {
			if (study_row(res, i, 0, &s) != 0) {
				db_study_clear(&s);
				rc = DB_ERR;
				break;
			}
			for (j = at; j < at + m && strcmp(ids[j], s.id) != 0; j++)
				;
			if (j < at + m && !found[j]) {
				out[j] = s;
				found[j] = 1;
			} else
				db_study_clear(&s);
		}
		dbres_free(res);
		res = NULL;
	}
	if (rc != DB_OK) {
		for (i = 0; i < n; i++)
			db_study_clear(&out[i]);
		memset(found, 0, n * sizeof *found);
	}
	return rc;
}

/*
 * One newest-first page of `key`'s rows (seq < cursor, at most limit) by
 * sql, mapped by map into *v (elements of size bytes, released with
 * clear); *next_at gets the last kept element when there is a next page,
 * else NULL.
 */
static enum db_rc
read_page(struct db *db, const char *sql, const char *known, const char *key, int64_t cursor,
    int64_t limit,
    int (*map)(const struct dbres *, size_t, void *), void (*clear)(void *), size_t size,
    void **v, size_t *n, const void **next_at)
{
	struct dbres *res = NULL;
	enum db_rc rc;
	int more = 0;

	*v = NULL;
	*n = 0;
	*next_at = NULL;
	if ((rc = db_cursor_known(db, known, key, cursor)) != DB_OK)
		return rc;
	if ((rc = DB_Q(db, sql, &res, NULL, P_STR(key), P_I64(db_cursor_bound(cursor)),
	    P_I64(limit + 1))) != DB_OK)
		return rc;
	rc = dbres_map(res, limit, size, map, clear, v, n, &more);
	dbres_free(res);
	if (rc == DB_OK && more)
		*next_at = (const char *)*v + (*n - 1) * size;
	return rc;
}

enum db_rc
db_study_list_owner(struct db *db, const char *owner, int64_t cursor, int64_t limit,
    struct study **v, size_t *n, int64_t *next)
{
	const void *last;
	void *rows;
	enum db_rc rc;

	rc = read_page(db, q_study_list, q_study_known, owner, cursor, limit, study_row_counted,
	    study_clear_elem, sizeof **v, &rows, n, &last);
	*v = rows;
	*next = last != NULL ? ((const struct study *)last)->seq : 0;
	return rc;
}

static enum db_rc
part_list(struct db *db, const char *sql, const char *known, const char *key, int64_t cursor,
    int64_t limit, struct participation **v, size_t *n, int64_t *next)
{
	const void *last;
	void *rows;
	enum db_rc rc;

	rc = read_page(db, sql, known, key, cursor, limit, part_row, part_clear_elem, sizeof **v,
	    &rows, n, &last);
	*v = rows;
	*next = last != NULL ? ((const struct participation *)last)->seq : 0;
	return rc;
}

enum db_rc
db_participants_list(struct db *db, const char *study_id, int64_t cursor, int64_t limit,
    struct participation **v, size_t *n, int64_t *next)
{
	return part_list(db, q_part_list, q_part_known_study, study_id, cursor, limit, v, n, next);
}

enum db_rc
db_history_list(struct db *db, const char *agent_id, int64_t cursor, int64_t limit,
    struct participation **v, size_t *n, int64_t *next)
{
	return part_list(db, q_history, q_part_known_agent, agent_id, cursor, limit, v, n, next);
}

enum db_rc
db_participation_get(struct db *db, const char *prt_id, int for_update, struct participation *p)
{
	return read_one(db, for_update ? q_part_lock : q_part_get, DB_ARGS(P_STR(prt_id)),
	    part_row, p, sizeof *p);
}

enum db_rc
db_participation_by_agent(struct db *db, const char *study_id, const char *agent_id,
    struct participation *p, int *took_part)
{
	enum db_rc rc;

	*took_part = 0;
	rc = read_one(db, q_part_by_agent, DB_ARGS(P_STR(study_id), P_STR(agent_id)), part_row, p,
	    sizeof *p);
	if (rc == DB_NOTFOUND)
		return DB_OK;
	if (rc == DB_OK)
		*took_part = 1;
	return rc;
}

enum db_rc
db_participation_by_anon(struct db *db, const char *study_id, const char *participant_id,
    struct participation *p)
{
	return read_one(db, q_part_by_anon, DB_ARGS(P_STR(study_id), P_STR(participant_id)),
	    part_row, p, sizeof *p);
}

/* db_study_part_*_lock: key is the agent's id or the participant id. */
static enum db_rc
study_part_lock(struct db *db, const char *sql, const char *study_id, const char *key,
    struct study *s, struct participation *p, int *took_part)
{
	struct dbres *res = NULL, tail;
	enum db_rc rc;

	memset(s, 0, sizeof *s);
	memset(p, 0, sizeof *p);
	*took_part = 0;
	if ((rc = DB_ONE(db, sql, &res, P_STR(key), P_STR(study_id))) != DB_OK)
		return rc;
	/* The participation's columns as a row of their own. */
	tail.nrows = 1;
	tail.ncols = res->ncols - STUDY_ROW_NCOLS;
	tail.cells = res->cells + STUDY_ROW_NCOLS;
	if (res->ncols != STUDY_ROW_NCOLS + PART_C__END || study_row(res, 0, 0, s) != 0)
		rc = DB_ERR;
	else if (!dbres_isnull(&tail, 0, PART_C_ID)) {
		if (part_row(&tail, 0, p) != 0) {
			db_study_clear(s);
			rc = DB_ERR;
		} else
			*took_part = 1;
	}
	dbres_free(res);
	return rc;
}

enum db_rc
db_study_part_by_agent_lock(struct db *db, const char *study_id, const char *agent_id,
    struct study *s, struct participation *p, int *took_part)
{
	return study_part_lock(db, q_study_part_by_agent_lock, study_id, agent_id, s, p,
	    took_part);
}

enum db_rc
db_study_part_by_anon_lock(struct db *db, const char *study_id, const char *participant_id,
    struct study *s, struct participation *p, int *took_part)
{
	return study_part_lock(db, q_study_part_by_anon_lock, study_id, participant_id, s, p,
	    took_part);
}

/* --- the statements of the state changes (txn/lifecycle.c) --- */

enum db_rc
db_study_has_active(struct db *db, const char *study_id, int64_t *n)
{
	struct dbres *q = NULL;
	enum db_rc rc;

	*n = 0;
	if ((rc = DB_Q(db, q_study_has_active, &q, NULL, P_STR(study_id))) != DB_OK)
		return rc;
	*n = (int64_t)q->nrows;
	dbres_free(q);
	return DB_OK;
}

enum db_rc
db_study_insert(struct db *db, const char *id, const struct study_new *in, int64_t now)
{
	return DB_Q(db, q_study_ins, NULL, NULL, P_STR(id), P_STR(in->researcher_id),
	    P_STR(in->title), P_STR(in->description), P_STR(in->study_url), P_I64(in->plan.reward),
	    P_I64(in->plan.fee), P_I64(in->plan.max_participants), P_STR(in->criteria),
	    P_I64(in->duration_minutes), in->has_deadline ? P_I64(in->deadline) : P_NULL,
	    P_STR(in->completion_code), P_I64(in->plan.total), P_I64(now),
	    P_I64(study_new_has_elig(in)), P_I64(in->screen_out), P_I64(in->screen_out_fee));
}

int
study_new_has_elig(const struct study_new *in)
{
	size_t k;

	for (k = 0; in->elig != NULL && k < ELIG__MAX; k++)
		if (in->elig->n[k] > 0)
			return 1;
	return 0;
}

enum db_rc
db_study_eligible(struct db *db, const char *study_id, const char *agent_id, int *ok)
{
	struct dbres *res = NULL;
	enum db_rc rc;

	*ok = 0;
	if ((rc = DB_ONE(db, q_study_eligible, &res, P_STR(agent_id), P_STR(agent_id),
	    P_STR(agent_id), P_STR(study_id))) != DB_OK)
		return rc;
	*ok = dbres_i64(res, 0, DB_COL_ONLY) != 0;
	dbres_free(res);
	return DB_OK;
}

enum db_rc
db_study_occupied_inc(struct db *db, const char *id, uint64_t *affected)
{
	*affected = 0;
	return DB_Q(db, q_study_occ_inc, NULL, affected, P_STR(id));
}

enum db_rc
db_study_shrink(struct db *db, const char *id, uint64_t *affected)
{
	*affected = 0;
	return DB_Q(db, q_study_shrink, NULL, affected, P_STR(id));
}

enum db_rc
db_study_occupied_dec(struct db *db, const char *id, uint64_t *affected)
{
	*affected = 0;
	return DB_Q(db, q_study_occ_dec, NULL, affected, P_STR(id));
}

enum db_rc
db_study_money_add(struct db *db, const char *id, int64_t unfreeze, int64_t spent,
    int64_t refunded, int64_t refunded_slots, uint64_t *affected)
{
	*affected = 0;
	return DB_Q(db, q_study_money, NULL, affected, P_I64(unfreeze), P_I64(spent),
	    P_I64(refunded), P_I64(refunded_slots), P_STR(id));
}

enum db_rc
db_study_state_set(struct db *db, const char *id, enum study_state to, int64_t now)
{
	return DB_Q(db, q_study_state, NULL, NULL, P_STR(study_state_name(to)),
	    to == STUDY_AWAITING_REVIEW ? P_I64(now) : P_NULL,
	    to == STUDY_COMPLETED ? P_I64(now) : P_NULL, P_STR(id));
}

enum db_rc
db_participation_insert(struct db *db, const char *id, const char *study_id,
    const char *agent_id, const char *participant_id, int64_t accepted_at)
{
	return DB_Q(db, q_part_ins, NULL, NULL, P_STR(id), P_STR(study_id), P_STR(agent_id),
	    P_STR(participant_id), P_I64(accepted_at), P_STR(agent_id));
}

/* A time parameter, NULL when t <= 0 (keeps the column by COALESCE). */
static struct dbp
p_time(int64_t t)
{
	return t > 0 ? P_I64(t) : P_NULL;
}

enum db_rc
db_participation_state_set(struct db *db, const char *id, enum part_state to, int64_t started,
    int64_t submitted, int64_t reviewed, int64_t ended, const char *reason, const char *category)
{
	return DB_Q(db, q_part_set, NULL, NULL, P_STR(part_state_name(to)), p_time(started),
	    p_time(submitted), p_time(reviewed), p_time(ended), P_STR(reason), P_STR(category),
	    P_STR(id));
}

enum db_rc
db_participation_return(struct db *db, const char *id, const char *reason, int64_t now)
{
	return DB_Q(db, q_part_return, NULL, NULL, P_I64(now), P_STR(reason), P_STR(id));
}

enum db_rc
db_study_patch(struct db *db, const char *id, const struct study_patch *p)
{
	return DB_Q(db, q_study_patch, NULL, NULL, P_STR(p->title), P_STR(p->description),
	    p->has_deadline ? P_I64(p->deadline) : P_NULL,
	    p->max_participants > 0 ? P_I64(p->max_participants) : P_NULL, P_STR(id));
}
