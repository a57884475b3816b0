/* Studies and participations (see studies.h for the lock order and the
 * return convention). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include "core/errors.h"
#include "core/ledger.h"
#include "core/reputation.h"
#include "db/accounts.h"
#include "db/ledger.h"
#include "db/studies.h"
#include "lib/secret.h"

#define STUDY_COLS "s.seq, s.id, s.researcher_id, s.title, s.description, s.study_url,"\
	" s.screening_criteria, s.completion_code, s.reward_cents, s.fee_cents,"\
	" s.max_participants, s.duration_minutes, s.deadline, s.status, s.occupied,"\
	" s.frozen_cents, s.spent_cents, s.refunded_cents, s.refunded_slots, s.created_at,"\
	" COALESCE(s.closed_at, 0), COALESCE(s.completed_at, 0)"
#define STUDY_NCOLS 22
#define COUNT_COLS "COALESCE(SUM(p.status = 'accepted'), 0),"\
	" COALESCE(SUM(p.status = 'in_progress'), 0), COALESCE(SUM(p.status = 'submitted'), 0),"\
	" COALESCE(SUM(p.status = 'approved'), 0), COALESCE(SUM(p.status = 'rejected'), 0),"\
	" COALESCE(SUM(p.status = 'withdrawn'), 0), COALESCE(SUM(p.status = 'timed_out'), 0)"
/* 15 columns: the row, then agent reputation, study title, study reward. */
#define PART_COLS "p.seq, p.id, p.study_id, p.agent_id, p.participant_id, p.status,"\
	" p.accepted_at, COALESCE(p.started_at, 0), COALESCE(p.submitted_at, 0),"\
	" COALESCE(p.reviewed_at, 0), COALESCE(p.ended_at, 0), p.reason"

static const char q_study_get[] = "SELECT " STUDY_COLS " FROM studies s WHERE s.id = ?";
static const char q_study_lock[] =
    "SELECT " STUDY_COLS " FROM studies s WHERE s.id = ? FOR UPDATE";
static const char q_study_counts[] =
    "SELECT status, COUNT(*) FROM participations WHERE study_id = ? GROUP BY status";
/* Whether any participation of the study still holds its slot open to work
 * (accepted or in_progress): one probe of the (study_id, status) key. */
static const char q_study_has_active[] =
    "SELECT 1 FROM participations WHERE study_id = ? AND status IN ('accepted', 'in_progress')"
    " LIMIT 1";
static const char q_study_list[] =
    "SELECT " STUDY_COLS ", " COUNT_COLS " FROM studies s"
    " LEFT JOIN participations p ON p.study_id = s.id"
    " WHERE s.researcher_id = ? AND s.seq < ? GROUP BY s.seq ORDER BY s.seq DESC LIMIT ?";
#define Q4	"?, ?, ?, ?"
static const char q_study_many[] =
    "SELECT " STUDY_COLS " FROM studies s WHERE s.id IN (" Q4 ", " Q4 ", " Q4 ", " Q4 ", "
    Q4 ", " Q4 ", " Q4 ", " Q4 ")";
#define STUDY_MANY_BATCH 32
static const char q_study_ins[] =
    "INSERT INTO studies (id, researcher_id, title, description, study_url, reward_cents,"
    " fee_cents, max_participants, screening_criteria, duration_minutes, deadline,"
    " completion_code, status, occupied, frozen_cents, created_at)"
    " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'active', 0, ?, ?)";
static const char q_emb_ins[] =
    "INSERT INTO embeddings (subject_id, status, text_hash, vector, error, attempts, updated_at)"
    " VALUES (?, 'processing', ?, NULL, NULL, 0, ?)";
static const char q_study_occ_inc[] =
    "UPDATE studies SET occupied = occupied + 1 WHERE id = ? AND status = 'active'"
    " AND occupied < max_participants";
static const char q_study_occ_dec[] =
    "UPDATE studies SET occupied = occupied - 1 WHERE id = ? AND occupied > 0";
static const char q_study_money[] =
    "UPDATE studies SET frozen_cents = frozen_cents - ?, spent_cents = spent_cents + ?,"
    " refunded_cents = refunded_cents + ?, refunded_slots = refunded_slots + ? WHERE id = ?";
static const char q_study_state[] =
    "UPDATE studies SET status = ?, closed_at = COALESCE(closed_at, ?),"
    " completed_at = COALESCE(completed_at, ?) WHERE id = ?";

static const char q_part_get[] =
    "SELECT " PART_COLS ", 0, NULL, 0 FROM participations p WHERE p.id = ?";
static const char q_part_by_agent[] =
    "SELECT " PART_COLS ", 0, NULL, 0 FROM participations p"
    " WHERE p.study_id = ? AND p.agent_id = ?";
static const char q_part_by_agent_lock[] =
    "SELECT " PART_COLS ", 0, NULL, 0 FROM participations p"
    " WHERE p.study_id = ? AND p.agent_id = ? FOR UPDATE";
static const char q_part_lock[] =
    "SELECT " PART_COLS ", 0, NULL, 0 FROM participations p WHERE p.id = ? FOR UPDATE";
static const char q_part_by_anon[] =
    "SELECT " PART_COLS ", a.reputation, NULL, 0 FROM participations p"
    " JOIN agents a ON a.id = p.agent_id WHERE p.study_id = ? AND p.participant_id = ?";
static const char q_part_list[] =
    "SELECT " PART_COLS ", a.reputation, NULL, 0 FROM participations p"
    " JOIN agents a ON a.id = p.agent_id WHERE p.study_id = ? AND p.seq < ?"
    " ORDER BY p.seq DESC LIMIT ?";
static const char q_history[] =
    "SELECT " PART_COLS ", 0, s.title, s.reward_cents FROM participations p"
    " JOIN studies s ON s.id = p.study_id WHERE p.agent_id = ? AND p.seq < ?"
    " ORDER BY p.seq DESC LIMIT ?";
static const char q_part_ins[] =
    "INSERT INTO participations (id, study_id, agent_id, participant_id, status, accepted_at)"
    " VALUES (?, ?, ?, ?, 'accepted', ?)";
static const char q_part_set[] =
    "UPDATE participations SET status = ?, started_at = COALESCE(started_at, ?),"
    " submitted_at = COALESCE(?, submitted_at), reviewed_at = COALESCE(?, reviewed_at),"
    " ended_at = COALESCE(?, ended_at), reason = COALESCE(?, reason) WHERE id = ?";

/* --- row mapping --- */

static void
copy(char *dst, size_t n, const char *src)
{
	snprintf(dst, n, "%s", src ? src : "");
}

/* strdup of a cell; *ok cleared on allocation failure (NULL cell: NULL). */
static char *
dup_cell(const struct dbres *res, size_t row, size_t col, int *ok)
{
	const char *s = dbres_str(res, row, col);
	char *d;

	if (s == NULL || dbres_isnull(res, row, col))
		return NULL;
	if ((d = strdup(s)) == NULL)
		*ok = 0;
	return d;
}

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
db_studies_free(struct study *v, size_t n)
{
	size_t i;

	if (v == NULL)
		return;
	for (i = 0; i < n; i++)
		db_study_clear(&v[i]);
	free(v);
}

void
db_participation_clear(struct participation *p)
{
	if (p == NULL)
		return;
	free(p->reason);
	free(p->title);
	memset(p, 0, sizeof *p);
}

void
db_participations_free(struct participation *v, size_t n)
{
	size_t i;

	if (v == NULL)
		return;
	for (i = 0; i < n; i++)
		db_participation_clear(&v[i]);
	free(v);
}

/* Fill *s from row `row` (STUDY_COLS, then COUNT_COLS when counts). */
static int
study_row(const struct dbres *res, size_t row, int counts, struct study *s)
{
	int ok = 1;

	memset(s, 0, sizeof *s);
	s->seq = dbres_i64(res, row, 0);
	copy(s->id, sizeof s->id, dbres_str(res, row, 1));
	copy(s->researcher_id, sizeof s->researcher_id, dbres_str(res, row, 2));
	s->title = dup_cell(res, row, 3, &ok);
	s->description = dup_cell(res, row, 4, &ok);
	s->study_url = dup_cell(res, row, 5, &ok);
	s->criteria = dup_cell(res, row, 6, &ok);
	s->completion_code = dup_cell(res, row, 7, &ok);
	s->reward = dbres_i64(res, row, 8);
	s->fee = dbres_i64(res, row, 9);
	s->max_participants = dbres_i64(res, row, 10);
	s->duration_minutes = dbres_i64(res, row, 11);
	s->has_deadline = !dbres_isnull(res, row, 12);
	s->deadline = dbres_i64(res, row, 12);
	if (!study_state_from_name(dbres_str(res, row, 13), &s->state))
		ok = 0;
	s->occupied = dbres_i64(res, row, 14);
	s->frozen = dbres_i64(res, row, 15);
	s->spent = dbres_i64(res, row, 16);
	s->refunded = dbres_i64(res, row, 17);
	s->refunded_slots = dbres_i64(res, row, 18);
	s->created_at = dbres_i64(res, row, 19);
	s->closed_at = dbres_i64(res, row, 20);
	s->completed_at = dbres_i64(res, row, 21);
	if (counts) {
		s->counts.accepted = dbres_i64(res, row, STUDY_NCOLS + 0);
		s->counts.in_progress = dbres_i64(res, row, STUDY_NCOLS + 1);
		s->counts.submitted = dbres_i64(res, row, STUDY_NCOLS + 2);
		s->counts.approved = dbres_i64(res, row, STUDY_NCOLS + 3);
		s->counts.rejected = dbres_i64(res, row, STUDY_NCOLS + 4);
		s->counts.withdrawn = dbres_i64(res, row, STUDY_NCOLS + 5);
		s->counts.timed_out = dbres_i64(res, row, STUDY_NCOLS + 6);
	}
	if (!ok)
		db_study_clear(s);
	return ok ? 0 : -1;
}

static int
part_row(const struct dbres *res, size_t row, struct participation *p)
{
	int ok = 1;

	memset(p, 0, sizeof *p);
	p->seq = dbres_i64(res, row, 0);
	copy(p->id, sizeof p->id, dbres_str(res, row, 1));
	copy(p->study_id, sizeof p->study_id, dbres_str(res, row, 2));
	copy(p->agent_id, sizeof p->agent_id, dbres_str(res, row, 3));
	copy(p->participant_id, sizeof p->participant_id, dbres_str(res, row, 4));
	if (!part_state_from_name(dbres_str(res, row, 5), &p->state))
		ok = 0;
	p->accepted_at = dbres_i64(res, row, 6);
	p->started_at = dbres_i64(res, row, 7);
	p->submitted_at = dbres_i64(res, row, 8);
	p->reviewed_at = dbres_i64(res, row, 9);
	p->ended_at = dbres_i64(res, row, 10);
	p->reason = dup_cell(res, row, 11, &ok);
	p->reputation = (int)dbres_i64(res, row, 12);
	p->title = dup_cell(res, row, 13, &ok);
	p->reward = dbres_i64(res, row, 14);
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
		int64_t n = dbres_i64(res, i, 1);

		if (!part_state_from_name(dbres_str(res, i, 0), &st))
			continue;
		switch (st) {
		case PART_ACCEPTED:	c->accepted = n; break;
		case PART_IN_PROGRESS:	c->in_progress = n; break;
		case PART_SUBMITTED:	c->submitted = n; break;
		case PART_APPROVED:	c->approved = n; break;
		case PART_REJECTED:	c->rejected = n; break;
		case PART_WITHDRAWN:	c->withdrawn = n; break;
		case PART_TIMED_OUT:	c->timed_out = n; break;
		case PART__MAX:		break;
		}
	}
	dbres_free(res);
	return DB_OK;
}

/* --- reads --- */

/* The study row alone (counts left zero), locked or not. */
static enum db_rc
study_get_row(struct db *db, const char *id, int for_update, struct study *out)
{
	struct dbres *res = NULL;
	enum db_rc rc;

	memset(out, 0, sizeof *out);
	if ((rc = DB_Q(db, for_update ? q_study_lock : q_study_get, &res, NULL, P_STR(id))) != DB_OK)
		return rc;
	if (res->nrows == 0) {
		dbres_free(res);
		return DB_NOTFOUND;
	}
	rc = study_row(res, 0, 0, out) == 0 ? DB_OK : DB_ERR;
	dbres_free(res);
	return rc;
}

enum db_rc
db_study_get(struct db *db, const char *id, int for_update, struct study *out)
{
	enum db_rc rc;

	if ((rc = study_get_row(db, id, for_update, out)) != DB_OK)
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

/* Map rows of a list query into a malloc'd array; at most limit rows are
 * kept, a row beyond them sets *next to the last kept row's seq. */
static enum db_rc
study_rows(struct dbres *res, int counts, int64_t limit, struct study **v, size_t *n,
    int64_t *next)
{
	size_t i, keep = res->nrows;

	if (limit > 0 && keep > (size_t)limit)
		keep = (size_t)limit;
	*v = NULL;
	*n = 0;
	if (next != NULL)
		*next = 0;
	if (keep == 0)
		return DB_OK;
	if ((*v = calloc(keep, sizeof **v)) == NULL)
		return DB_ERR;
	for (i = 0; i < keep; i++) {
		if (study_row(res, i, counts, &(*v)[i]) != 0) {
			db_studies_free(*v, i);
			*v = NULL;
			return DB_ERR;
		}
	}
	*n = keep;
	if (next != NULL && res->nrows > keep)
		*next = (*v)[keep - 1].seq;
	return DB_OK;
}

static enum db_rc
part_rows(struct dbres *res, int64_t limit, struct participation **v, size_t *n, int64_t *next)
{
	size_t i, keep = res->nrows;

	if (limit > 0 && keep > (size_t)limit)
		keep = (size_t)limit;
	*v = NULL;
	*n = 0;
	*next = 0;
	if (keep == 0)
		return DB_OK;
	if ((*v = calloc(keep, sizeof **v)) == NULL)
		return DB_ERR;
	for (i = 0; i < keep; i++) {
		if (part_row(res, i, &(*v)[i]) != 0) {
			db_participations_free(*v, i);
			*v = NULL;
			return DB_ERR;
		}
	}
	*n = keep;
	if (res->nrows > keep)
		*next = (*v)[keep - 1].seq;
	return DB_OK;
}

static int64_t
cursor_bound(int64_t cursor)
{
	return cursor > 0 ? cursor : INT64_MAX;
}

enum db_rc
db_study_list_owner(struct db *db, const char *owner, int64_t cursor, int64_t limit,
    struct study **v, size_t *n, int64_t *next)
{
	struct dbres *res = NULL;
	enum db_rc rc;

	*v = NULL;
	*n = 0;
	*next = 0;
	if ((rc = DB_Q(db, q_study_list, &res, NULL, P_STR(owner), P_I64(cursor_bound(cursor)),
	    P_I64(limit + 1))) != DB_OK)
		return rc;
	rc = study_rows(res, 1, limit, v, n, next);
	dbres_free(res);
	return rc;
}

static enum db_rc
part_one(struct db *db, const char *sql, const struct dbp *p, size_t np,
    struct participation *out)
{
	struct dbres *res = NULL;
	enum db_rc rc;

	if (out != NULL)
		memset(out, 0, sizeof *out);
	if ((rc = db_exec(db, sql, p, np, &res, NULL)) != DB_OK)
		return rc;
	if (res->nrows == 0) {
		dbres_free(res);
		return DB_NOTFOUND;
	}
	if (out != NULL)
		rc = part_row(res, 0, out) == 0 ? DB_OK : DB_ERR;
	dbres_free(res);
	return rc;
}

enum db_rc
db_participation_by_agent(struct db *db, const char *study_id, const char *agent_id,
    int for_update, struct participation *p, int *took_part)
{
	enum db_rc rc;

	*took_part = 0;
	rc = part_one(db, for_update ? q_part_by_agent_lock : q_part_by_agent,
	    DB_ARGS(P_STR(study_id), P_STR(agent_id)), p);
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
	return part_one(db, q_part_by_anon, DB_ARGS(P_STR(study_id), P_STR(participant_id)), p);
}

static enum db_rc
part_list(struct db *db, const char *sql, const char *key, int64_t cursor, int64_t limit,
    struct participation **v, size_t *n, int64_t *next)
{
	struct dbres *res = NULL;
	enum db_rc rc;

	*v = NULL;
	*n = 0;
	*next = 0;
	if ((rc = DB_Q(db, sql, &res, NULL, P_STR(key), P_I64(cursor_bound(cursor)),
	    P_I64(limit + 1))) != DB_OK)
		return rc;
	rc = part_rows(res, limit, v, n, next);
	dbres_free(res);
	return rc;
}

enum db_rc
db_participants_list(struct db *db, const char *study_id, int64_t cursor, int64_t limit,
    struct participation **v, size_t *n, int64_t *next)
{
	return part_list(db, q_part_list, study_id, cursor, limit, v, n, next);
}

enum db_rc
db_history_list(struct db *db, const char *agent_id, int64_t cursor, int64_t limit,
    struct participation **v, size_t *n, int64_t *next)
{
	return part_list(db, q_history, agent_id, cursor, limit, v, n, next);
}

/* --- state changes --- */

/* A time parameter, NULL when t <= 0 (keeps the column by COALESCE). */
static struct dbp
p_time(int64_t t)
{
	return t > 0 ? P_I64(t) : P_NULL;
}

/* Add to a study's money columns (frozen decreases by `unfreeze`); the
 * row must exist. */
static enum db_rc
study_money(struct db *db, const char *id, int64_t unfreeze, int64_t spent, int64_t refunded,
    int64_t refunded_slots)
{
	uint64_t n = 0;
	enum db_rc rc;

	/* Nothing to change (the affected-row count would be 0). */
	if (unfreeze == 0 && spent == 0 && refunded == 0 && refunded_slots == 0)
		return DB_OK;
	rc = DB_Q(db, q_study_money, NULL, &n, P_I64(unfreeze), P_I64(spent), P_I64(refunded),
	    P_I64(refunded_slots), P_STR(id));
	return rc == DB_OK && n != 1 ? DB_ERR : rc;
}

static enum db_rc
study_set_state(struct db *db, struct study *s, enum study_state to, int64_t now)
{
	enum db_rc rc;

	rc = DB_Q(db, q_study_state, NULL, NULL, P_STR(study_state_name(to)),
	    to == STUDY_AWAITING_REVIEW ? P_I64(now) : P_NULL,
	    to == STUDY_COMPLETED ? P_I64(now) : P_NULL, P_STR(s->id));
	if (rc != DB_OK)
		return rc;
	if (to == STUDY_AWAITING_REVIEW && s->closed_at == 0)
		s->closed_at = now;
	if (to == STUDY_COMPLETED && s->completed_at == 0)
		s->completed_at = now;
	s->state = to;
	return DB_OK;
}

/* Book one study money event for the study's researcher (and agent). */
static enum db_rc
book(struct db *db, const struct study *s, const char *agent_id, enum ledger_event ev,
    int64_t slots, int64_t amount, int64_t now)
{
	const char *party[LEDGER_P__MAX] = { 0 };
	const char *desc = NULL;
	struct ledger_in li = { 0 };
	struct ledger_entry le;
	char buf[80];

	li.ev = ev;
	li.reward = s->reward;
	li.fee = s->fee;
	li.slots = slots;
	li.amount = amount;
	if (ledger_build(&li, &le) != ARPS_OK)
		return DB_ERR;
	party[LEDGER_P_RESEARCHER] = s->researcher_id;
	party[LEDGER_P_AGENT] = agent_id;
	/* Both kinds of refund are `refund` transactions: say which one. */
	if (ev == LEDGER_EV_REJECT)
		desc = "Refund of a rejected participant's slot (reward + fee)";
	else if (ev == LEDGER_EV_REFUND_UNUSED) {
		snprintf(buf, sizeof buf, "Refund of %lld unused slot%s (reward + fee each)",
		    (long long)slots, slots == 1 ? "" : "s");
		desc = buf;
	}
	return db_ledger_post(db, &le, party, s->id, ev, desc, now);
}

/* Under the study lock: move the study to awaiting_review when every slot
 * is occupied and none is accepted or in_progress (STUDY_EV_FULL). */
static enum db_rc
check_full(struct db *db, struct study *s, int64_t now)
{
	struct study_counts c;
	struct study_result res;
	struct dbres *q = NULL;
	enum db_rc rc;

	/*
	 * The occupied column counts the slots held (kept under this lock and
	 * checked by verify-ledger), so a study with a free slot is not full
	 * without counting anything; otherwise one probe tells whether a slot
	 * is still being worked.  Counting every participation of the study
	 * here, once per settled row, made a sweep of a large study quadratic.
	 */
	if (s->occupied < s->max_participants ||
	    (s->state != STUDY_ACTIVE && s->state != STUDY_PAUSED))
		return DB_OK;
	if ((rc = DB_Q(db, q_study_has_active, &q, NULL, P_STR(s->id))) != DB_OK)
		return rc;
	memset(&c, 0, sizeof c);
	c.accepted = (int64_t)q->nrows;
	c.approved = s->occupied - c.accepted;
	dbres_free(q);
	if (study_transition(s->state, STUDY_EV_FULL, s->max_participants, &c, &res) != ARPS_OK)
		return DB_OK;
	return study_set_state(db, s, res.to, now);
}

/* Apply a reputation event to the agent (locked here: after the
 * participation, before the wallets).  *delta gets the change. */
static enum db_rc
apply_rep(struct db *db, const char *agent_id, enum rep_event ev, int *delta)
{
	struct rep_state st;
	struct agent a;
	enum db_rc rc;

	*delta = 0;
	if (ev == REP_EV_NONE || ev == REP_EV_WITHDRAW)
		return DB_OK;
	if ((rc = db_agent_get(db, agent_id, 1, &a)) != DB_OK)
		return rc == DB_NOTFOUND ? DB_ERR : rc;
	st.score = a.reputation;
	st.streak = a.streak;
	if (rep_apply(&st, ev, delta) != ARPS_OK)
		return DB_ERR;
	if (st.score == a.reputation && st.streak == a.streak)
		return DB_OK;
	return db_agent_set_reputation(db, agent_id, st.score, st.streak);
}

/*
 * Persist a participation transition on locked rows: reputation (agent
 * lock), money (wallet locks), the slot, the row and its timestamps; then
 * the FULL check.  *p is updated in place.
 */
static enum db_rc
apply_part(struct db *db, struct study *s, struct participation *p,
    const struct part_result *pr, const char *reason, int64_t now, int *rep_delta)
{
	int64_t started = 0, submitted = 0, reviewed = 0, ended = 0, slot;
	enum db_rc rc;

	if ((rc = apply_rep(db, p->agent_id, pr->rep, rep_delta)) != DB_OK)
		return rc;
	if (pr->money != LEDGER_EV_NONE) {
		if ((rc = book(db, s, p->agent_id, pr->money, 0, 0, now)) != DB_OK)
			return rc;
		slot = s->reward + s->fee;
		rc = pr->money == LEDGER_EV_APPROVE ? study_money(db, s->id, slot, slot, 0, 0)
		    : study_money(db, s->id, slot, 0, slot, 0);
		if (rc != DB_OK)
			return rc;
	}
	if (!pr->changed)
		return DB_OK;
	if (part_occupies_slot(p->state) && !part_occupies_slot(pr->to)) {
		uint64_t n = 0;
		if ((rc = DB_Q(db, q_study_occ_dec, NULL, &n, P_STR(s->id))) != DB_OK)
			return rc;
		if (n != 1)
			return DB_ERR;
		s->occupied--;
	}
	switch (pr->to) {
	case PART_IN_PROGRESS:
		started = now;
		break;
	case PART_SUBMITTED:
		submitted = now;
		break;
	case PART_APPROVED:
	case PART_REJECTED:
		reviewed = ended = now;
		break;
	case PART_WITHDRAWN:
	case PART_TIMED_OUT:
		ended = now;
		break;
	default:
		break;
	}
	if ((rc = DB_Q(db, q_part_set, NULL, NULL, P_STR(part_state_name(pr->to)), p_time(started),
	    p_time(submitted), p_time(reviewed), p_time(ended), P_STR(reason), P_STR(p->id))) != DB_OK)
		return rc;
	p->state = pr->to;
	if (started && p->started_at == 0)
		p->started_at = started;
	if (submitted)
		p->submitted_at = submitted;
	if (reviewed)
		p->reviewed_at = reviewed;
	if (ended)
		p->ended_at = ended;
	if (reason != NULL && p->reason == NULL && (p->reason = strdup(reason)) == NULL)
		return DB_ERR;
	return check_full(db, s, now);
}

enum db_rc
db_study_create(struct db *db, const struct study_new *in, int64_t now, char id_out[IDS_BUFSZ],
    int *outcome)
{
	const char *party[LEDGER_P__MAX] = { 0 };
	struct ledger_in li = { 0 };
	struct ledger_entry le;
	unsigned char h[32];
	int64_t avail, frozen;
	int crc;
	enum db_rc rc;

	*outcome = ARPS_E_INTERNAL;
	id_out[0] = '\0';
	if ((rc = db_wallet_create(db, in->researcher_id)) != DB_OK ||
	    (rc = db_wallet_lock(db, in->researcher_id, &avail, &frozen)) != DB_OK)
		return rc == DB_NOTFOUND ? DB_ERR : rc;
	li.ev = LEDGER_EV_CREATE_STUDY;
	li.reward = in->plan.reward;
	li.fee = in->plan.fee;
	li.slots = in->plan.max_participants;
	li.available = avail;
	if ((crc = ledger_build(&li, &le)) != ARPS_OK) {
		*outcome = crc == ARPS_E_OVERFLOW ? ARPS_E_VALIDATION : crc;
		return DB_OK;
	}
	if (ids_new(IDS_STUDY, &secret_rng, id_out) != ARPS_OK)
		return DB_ERR;
	rc = DB_Q(db, q_study_ins, NULL, NULL, P_STR(id_out), P_STR(in->researcher_id),
	    P_STR(in->title), P_STR(in->description), P_STR(in->study_url), P_I64(in->plan.reward),
	    P_I64(in->plan.fee), P_I64(in->plan.max_participants), P_STR(in->criteria),
	    P_I64(in->duration_minutes), in->has_deadline ? P_I64(in->deadline) : P_NULL,
	    P_STR(in->completion_code), P_I64(in->plan.total), P_I64(now));
	if (rc != DB_OK)
		return rc == DB_DUP ? DB_RETRY : rc;	/* an id clash: retry afresh */
	crypto_generichash(h, sizeof h, (const unsigned char *)in->criteria, strlen(in->criteria),
	    NULL, 0);
	if ((rc = DB_Q(db, q_emb_ins, NULL, NULL, P_STR(id_out), P_BLOB(h, sizeof h),
	    P_I64(now))) != DB_OK)
		return rc;
	party[LEDGER_P_RESEARCHER] = in->researcher_id;
	if ((rc = db_ledger_post(db, &le, party, id_out, LEDGER_EV_CREATE_STUDY, NULL, now)) != DB_OK)
		return rc;
	*outcome = ARPS_OK;
	return DB_OK;
}

enum db_rc
db_study_event(struct db *db, const char *study_id, const char *owner, enum study_event ev,
    int64_t now, struct study *after, int *outcome)
{
	struct study s;
	struct study_result res;
	int64_t amount = 0;
	int crc;
	enum db_rc rc;

	*outcome = ARPS_E_INTERNAL;
	if (after != NULL)
		memset(after, 0, sizeof *after);
	if ((rc = db_study_get(db, study_id, 1, &s)) == DB_NOTFOUND ||
	    (rc == DB_OK && owner != NULL && strcmp(owner, s.researcher_id) != 0)) {
		db_study_clear(&s);
		*outcome = ARPS_E_NOT_FOUND;
		return DB_OK;
	}
	if (rc != DB_OK)
		return rc;
	crc = study_transition(s.state, ev, s.max_participants, &s.counts, &res);
	if (crc == ARPS_OK && ev == STUDY_EV_DEADLINE &&
	    !study_deadline_passed(s.has_deadline, s.deadline, now))
		crc = ARPS_E_INVALID_STATE;
	if (crc != ARPS_OK) {
		*outcome = crc;
		goto out;
	}
	switch (res.money) {
	case LEDGER_EV_REFUND_UNUSED:
		if (money_unused_refund(s.reward + s.fee, res.unused_slots, &amount) != ARPS_OK) {
			rc = DB_ERR;
			goto out;
		}
		if ((rc = book(db, &s, NULL, res.money, res.unused_slots, 0, now)) != DB_OK ||
		    (rc = study_money(db, s.id, amount, 0, amount, res.unused_slots)) != DB_OK)
			goto out;
		break;
	case LEDGER_EV_COMPLETE:
		amount = s.frozen;
		if ((rc = book(db, &s, NULL, res.money, 0, amount, now)) != DB_OK ||
		    (rc = study_money(db, s.id, amount, 0, amount, 0)) != DB_OK)
			goto out;
		break;
	default:
		break;
	}
	if ((rc = study_set_state(db, &s, res.to, now)) != DB_OK)
		goto out;
	*outcome = ARPS_OK;
out:
	if (rc == DB_OK && after != NULL) {
		db_study_clear(&s);
		return db_study_get(db, study_id, 0, after);
	}
	db_study_clear(&s);
	return rc;
}

enum db_rc
db_study_close(struct db *db, const char *study_id, enum study_event ev, int64_t now,
    int *outcome)
{
	if (ev != STUDY_EV_STOP && ev != STUDY_EV_DEADLINE && ev != STUDY_EV_FULL) {
		*outcome = ARPS_E_INTERNAL;
		return DB_ERR;
	}
	return db_study_event(db, study_id, NULL, ev, now, NULL, outcome);
}

enum db_rc
db_study_complete(struct db *db, const char *study_id, int64_t now, int *outcome)
{
	return db_study_event(db, study_id, NULL, STUDY_EV_COMPLETE, now, NULL, outcome);
}

enum db_rc
db_study_accept(struct db *db, const struct config *cfg, const char *study_id,
    const char *agent_id, int64_t now, struct study *s, struct participation *p, int *outcome)
{
	struct accept_facts f;
	struct agent_current cur;
	struct agent a;
	uint64_t n = 0;
	int took, crc;
	enum db_rc rc;

	*outcome = ARPS_E_INTERNAL;
	memset(s, 0, sizeof *s);
	memset(p, 0, sizeof *p);
	/* An active participation 24 h old is timed out first, as the sweep
	 * would, with the sweep's lock order (its study, the participation,
	 * the agent) before this study's lock.  A crossed transaction (a
	 * review of this agent's submission in this study) can deadlock with
	 * it; InnoDB picks a victim and db_tx runs it again. */
	if ((rc = db_agent_current(db, agent_id, &cur)) != DB_OK)
		return rc;
	if (cur.participation_id[0] != '\0' && part_timeout_due(cur.accepted_at, now)) {
		struct settle_out so;

		rc = db_participation_settle(db, cur.participation_id, NULL, PART_EV_TIMEOUT, NULL,
		    now, &so);
		db_participation_clear(&so.p);
		if (rc != DB_OK)
			return rc;
	}
	if ((rc = db_study_get(db, study_id, 1, s)) == DB_NOTFOUND) {
		*outcome = ARPS_E_NOT_FOUND;
		return DB_OK;
	}
	if (rc != DB_OK)
		return rc;
	if ((rc = db_agent_get(db, agent_id, 1, &a)) != DB_OK)
		return rc == DB_NOTFOUND ? DB_ERR : rc;
	if ((rc = db_agent_current(db, agent_id, &cur)) != DB_OK ||
	    (rc = db_participation_by_agent(db, study_id, agent_id, 0, NULL, &took)) != DB_OK)
		return rc;
	memset(&f, 0, sizeof f);
	f.agent_claimed = a.account_id[0] != '\0';
	f.agent_status_suspended = strcmp(a.status, "suspended") == 0;
	f.agent_reputation = a.reputation;
	f.has_active_participation = cur.participation_id[0] != '\0';
	f.already_participated = took;
	f.study_state = s->state;
	f.has_deadline = s->has_deadline;
	f.deadline = s->deadline;
	f.now = now;
	f.max_participants = s->max_participants;
	f.occupied = s->occupied;
	if ((crc = study_accept_check(&f)) != ARPS_OK) {
		*outcome = crc;
		return DB_OK;
	}
	if ((rc = DB_Q(db, q_study_occ_inc, NULL, &n, P_STR(study_id))) != DB_OK)
		return rc;
	if (n != 1) {
		*outcome = ARPS_E_STUDY_FULL;
		return DB_OK;
	}
	s->occupied++;
	if (ids_new(IDS_PARTICIPATION, &secret_rng, p->id) != ARPS_OK)
		return DB_ERR;
	copy(p->study_id, sizeof p->study_id, study_id);
	copy(p->agent_id, sizeof p->agent_id, agent_id);
	secret_anon_id(cfg, study_id, agent_id, p->participant_id);
	p->state = PART_ACCEPTED;
	p->accepted_at = now;
	rc = DB_Q(db, q_part_ins, NULL, NULL, P_STR(p->id), P_STR(study_id), P_STR(agent_id),
	    P_STR(p->participant_id), P_I64(now));
	if (rc == DB_DUP)
		return DB_RETRY;	/* unreachable under the locks; re-check afresh */
	if (rc != DB_OK)
		return rc;
	s->counts.accepted++;
	*outcome = ARPS_OK;
	return DB_OK;
}

enum db_rc
db_participation_agent_event(struct db *db, const char *study_id, const char *agent_id,
    enum part_event ev, const char *code, int64_t now, struct participation *p, int *outcome)
{
	struct part_result pr;
	struct study s;
	int took, delta, crc, code_ok;
	enum db_rc rc;

	*outcome = ARPS_E_INTERNAL;
	memset(p, 0, sizeof *p);
	if (ev != PART_EV_OPEN && ev != PART_EV_COMPLETE && ev != PART_EV_WITHDRAW)
		return DB_ERR;
	if ((rc = db_study_get(db, study_id, 1, &s)) == DB_NOTFOUND) {
		*outcome = ARPS_E_NOT_FOUND;
		return DB_OK;
	}
	if (rc != DB_OK)
		return rc;
	if ((rc = db_participation_by_agent(db, study_id, agent_id, 1, p, &took)) != DB_OK)
		goto out;
	if (!took) {
		*outcome = ARPS_E_NO_ACTIVE_PARTICIPATION;
		goto out;
	}
	/* Past its 24 h an active participation is timed out here, exactly as
	 * the sweep's next run would do it (same guard, same locks): a
	 * submission or a withdrawal then comes too late, and the agent's own
	 * look at the study shows it timed out. */
	if (part_is_active(p->state) && part_timeout_due(p->accepted_at, now)) {
		if ((crc = part_transition(p->state, PART_EV_TIMEOUT, true, &pr)) != ARPS_OK) {
			*outcome = crc;
			goto out;
		}
		if ((rc = apply_part(db, &s, p, &pr, NULL, now, &delta)) != DB_OK)
			goto out;
		*outcome = ev == PART_EV_OPEN ? ARPS_OK : ARPS_E_TIMED_OUT;
		goto out;
	}
	/* A suspended agent (by the operator, or a score under 30) takes part
	 * in no study: it cannot submit, only withdraw (interface-spec tiers). */
	if (ev == PART_EV_COMPLETE && part_is_active(p->state)) {
		struct agent a;

		if ((rc = db_agent_get(db, agent_id, 1, &a)) != DB_OK) {
			if (rc == DB_NOTFOUND)
				rc = DB_ERR;
			goto out;
		}
		if (!rep_may_take_part(strcmp(a.status, "suspended") == 0, a.reputation)) {
			*outcome = ARPS_E_AGENT_SUSPENDED;
			goto out;
		}
	}
	code_ok = s.completion_code == NULL ||
	    (code != NULL && strcmp(code, s.completion_code) == 0);
	crc = part_transition(p->state, ev, code_ok != 0, &pr);
	if (crc == ARPS_E_NO_ACTIVE_PARTICIPATION && p->state == PART_TIMED_OUT)
		crc = ARPS_E_TIMED_OUT;	/* timed out before: say so */
	if (crc == ARPS_E_INVALID_SUBMISSION) {
		rc = apply_rep(db, agent_id, pr.rep, &delta);
		*outcome = crc;
		goto out;
	}
	if (crc != ARPS_OK) {
		*outcome = crc;
		goto out;
	}
	if ((rc = apply_part(db, &s, p, &pr, NULL, now, &delta)) == DB_OK)
		*outcome = ARPS_OK;
out:
	db_study_clear(&s);
	return rc;
}

enum db_rc
db_participation_settle(struct db *db, const char *prt_id, const char *owner,
    enum part_event ev, const char *reason, int64_t now, struct settle_out *out)
{
	struct part_result pr;
	struct study s;
	int crc;
	enum db_rc rc;

	memset(out, 0, sizeof *out);
	memset(&s, 0, sizeof s);
	out->outcome = ARPS_E_INTERNAL;
	if (ev != PART_EV_APPROVE && ev != PART_EV_AUTO_APPROVE && ev != PART_EV_REJECT &&
	    ev != PART_EV_TIMEOUT)
		return DB_ERR;
	/* The study id first (unlocked: it never changes), then lock in order. */
	if ((rc = part_one(db, q_part_get, DB_ARGS(P_STR(prt_id)), &out->p)) == DB_NOTFOUND) {
		out->outcome = ARPS_E_NOT_FOUND;
		return DB_OK;
	}
	if (rc != DB_OK)
		return rc;
	if ((rc = study_get_row(db, out->p.study_id, 1, &s)) != DB_OK)
		return rc == DB_NOTFOUND ? DB_ERR : rc;
	out->study_state = s.state;
	if (owner != NULL && strcmp(owner, s.researcher_id) != 0) {
		out->outcome = ARPS_E_NOT_FOUND;
		goto out;
	}
	db_participation_clear(&out->p);
	if ((rc = part_one(db, q_part_lock, DB_ARGS(P_STR(prt_id)), &out->p)) != DB_OK) {
		if (rc == DB_NOTFOUND)
			rc = DB_ERR;
		goto out;
	}
	if ((crc = part_transition(out->p.state, ev, true, &pr)) != ARPS_OK) {
		out->outcome = crc;
		goto out;
	}
	if ((rc = apply_part(db, &s, &out->p, &pr, reason, now, &out->rep_delta)) != DB_OK)
		goto out;
	out->money = pr.money;
	out->study_state = s.state;
	out->outcome = ARPS_OK;
out:
	db_study_clear(&s);
	return rc;
}
