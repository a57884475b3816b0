#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/errors.h"
#include "core/events.h"
#include "core/ids.h"
#include "core/ledger.h"
#include "core/participation.h"
#include "core/reputation.h"
#include "core/study.h"
#include "db/embeddings.h"
#include "txn/embed.h"
#include "db/events.h"
#include "db/rows.h"
#include "db/studies.h"
#include "txn/lifecycle.h"
#include "txn/sweep.h"
#include "lib/secret.h"

#define EMBED_RETRY_AGE 60	/* embeddings still processing after a minute */

/* What a participation job reads of its due rows (the study jobs: id only). */
#define SW_COLUMNS(X, L) \
	X(SW_C_ID,	"id") \
	L(SW_C_STUDY,	"study_id")
enum sw_col { DB_COLS_ENUM(SW_COLUMNS) SW_C__END };

/*
 * The due rows in the order of their (status, time) index, so a batch's
 * read touches only the rows it returns: one status per query (an IN list
 * of two, or ordering by study, made every batch sort all the due rows).
 */
static const char q_timeouts_accepted[] =
    "SELECT " DB_COLS_SQL(SW_COLUMNS) " FROM participations WHERE status = 'accepted'"
    " AND accepted_at <= ? ORDER BY accepted_at, id LIMIT ?";
static const char q_timeouts_started[] =
    "SELECT " DB_COLS_SQL(SW_COLUMNS) " FROM participations WHERE status = 'in_progress'"
    " AND accepted_at <= ? ORDER BY accepted_at, id LIMIT ?";
static const char q_auto[] =
    "SELECT " DB_COLS_SQL(SW_COLUMNS) " FROM participations WHERE status = 'submitted'"
    " AND submitted_at <= ? ORDER BY submitted_at, id LIMIT ?";
static const char q_deadlines[] =
    "SELECT id FROM studies WHERE status IN ('active', 'paused') AND deadline IS NOT NULL"
    " AND deadline <= ? ORDER BY id LIMIT ?";
static const char q_complete[] =
    "SELECT s.id FROM studies s WHERE s.status = 'awaiting_review' AND NOT EXISTS"
    " (SELECT 1 FROM participations p WHERE p.study_id = s.id"
    "  AND p.status IN ('accepted', 'in_progress', 'submitted')) AND ? >= 0" /* no due time: drain binds one */
    " ORDER BY s.id LIMIT ?";
static const char q_lock[] = "SELECT GET_LOCK('arps_sweep', 0)";
static const char q_unlock[] = "SELECT RELEASE_LOCK('arps_sweep')";
/* This session's statements and commits so far (MariaDB's counters). */
#define SESS_COLUMNS(X, L) \
	X(SESS_C_STMTS,		"SUM(IF(VARIABLE_NAME = 'COM_STMT_EXECUTE', VARIABLE_VALUE, 0))") \
	L(SESS_C_COMMITS,	"SUM(IF(VARIABLE_NAME = 'COM_COMMIT', VARIABLE_VALUE, 0))")
enum sess_col { DB_COLS_ENUM(SESS_COLUMNS) SESS_C__END };
static const char q_session[] =
    "SELECT " DB_COLS_SQL(SESS_COLUMNS) " FROM information_schema.SESSION_STATUS"
    " WHERE VARIABLE_NAME IN ('COM_STMT_EXECUTE', 'COM_COMMIT')";
/* A set-based batch's change of one study's money and slots. */
static const char q_study_batch[] =
    "UPDATE studies SET frozen_cents = frozen_cents - ?, spent_cents = spent_cents + ?,"
    " refunded_cents = refunded_cents + ?, occupied = occupied - ? WHERE id = ? AND occupied >= ?";

/* One batch: the ids due, moved in one transaction. */
struct batch {
	struct sweep *sw;
	struct dbres *ids;
	enum part_event pev;		/* participation jobs */
	enum study_event sev;		/* study jobs */
	int study;			/* 1: a study job */
	int complete;			/* 1: txn_study_complete */
	size_t moved;
};

/* The batch row by row, through txn/lifecycle.c. */
static enum db_rc
rows_tx(struct db *db, void *arg)
{
	struct batch *b = arg;
	enum db_rc rc = DB_OK;
	size_t i;

	b->moved = 0;
	for (i = 0; i < b->ids->nrows; i++) {
		const char *id = dbres_str(b->ids, i, DB_COL_ONLY);
		enum arps_err outcome = ARPS_E_INTERNAL;

		if (b->complete)
			rc = txn_study_complete(db, id, b->sw->now, &outcome);
		else if (b->study)
			rc = txn_study_close(db, id, b->sev, b->sw->now, &outcome);
		else {
			struct settle_out out;

			memset(&out, 0, sizeof out);
			rc = txn_participation_settle(db, id, NULL, b->pev, NULL, b->sw->now, &out);
			outcome = out.outcome;
			db_participation_clear(&out.p);
		}
		if (rc != DB_OK)
			return rc;
		/* A row another sweep or a researcher moved first is refused
		 * by its state guard: not moved twice. */
		if (outcome == ARPS_OK)
			b->moved++;
	}
	return DB_OK;
}

/* --- Set-based batches of the participation jobs (design.md §1.3) --------
 *
 * A batch of due participations is moved in one transaction by a fixed
 * number of statements, not a dozen per row: lock the batch's studies
 * (each by id, in id order), its participations and agents (one SELECT
 * ... FOR UPDATE each), decide every row in memory with core's transition
 * table, reputation rules and ledger (design.md §4, design.md §5), then
 * write with multi-row statements: postings, transactions, wallet
 * balances, reputations, the rows, the studies' money and slots, and the
 * events with their numbering and webhook deliveries (design.md §11.4).
 * The locks follow the order at the top of txn/lifecycle.c (study,
 * participation, agent, wallets, event heads), each level in id order.
 * A row the API moved after the batch's read is refused by its state
 * guard under the lock, as in the row-by-row path.  A batch in which a
 * study could fill up (a row that keeps its slot in a study with every
 * slot taken) is moved row by row instead (txn_participation_settle), so
 * the FULL check stays in one place.
 */

enum shape_kind {
	SH_PART_LOCK, SH_AGENT_LOCK, SH_WALLET_LOCK, SH_HEAD_GET, SH_HOOKS,
	SH_POSTINGS, SH_TXNS, SH_WALLETS, SH_AGENTS, SH_PART_SET, SH_HEADS, SH_EVENTS,
	SH_DELIVERIES, SH__MAX
};

/* The participation columns a batch reads. */
#define BPART_COLUMNS(X, L) \
	X(BP_C_ID,		"id") \
	X(BP_C_STUDY,		"study_id") \
	X(BP_C_AGENT,		"agent_id") \
	L(BP_C_STATE,		"status")
enum bpart_col { DB_COLS_ENUM(BPART_COLUMNS) BP_C__END };
#define BAGENT_COLUMNS(X, L) \
	X(BA_C_ID,		"id") \
	X(BA_C_REPUTATION,	"reputation") \
	L(BA_C_STREAK,		"streak")
enum bagent_col { DB_COLS_ENUM(BAGENT_COLUMNS) BA_C__END };
#define BHEAD_COLUMNS(X, L) \
	X(BH_C_OWNER,		"owner_id") \
	X(BH_C_LAST,		"last_seq") \
	L(BH_C_LAST_US,		"last_us")
enum bhead_col { DB_COLS_ENUM(BHEAD_COLUMNS) BH_C__END };
#define BHOOK_COLUMNS(X, L) \
	X(BW_C_OWNER,		"owner_id") \
	X(BW_C_ID,		"id") \
	L(BW_C_EVENTS,		"events")
enum bhook_col { DB_COLS_ENUM(BHOOK_COLUMNS) BW_C__END };

static struct db_shape shapes[SH__MAX] = {
	[SH_PART_LOCK] = { "SELECT " DB_COLS_SQL(BPART_COLUMNS) " FROM participations WHERE id IN (",
	    "?", ", ", ") FOR UPDATE", 0, 1 },
	[SH_AGENT_LOCK] = { "SELECT " DB_COLS_SQL(BAGENT_COLUMNS) " FROM agents WHERE id IN (",
	    "?", ", ", ") ORDER BY id FOR UPDATE", 0, 1 },
	[SH_WALLET_LOCK] = { "SELECT owner_id FROM wallets WHERE owner_id IN (",
	    "?", ", ", ") ORDER BY owner_id FOR UPDATE", 0, 1 },
	[SH_HEAD_GET] = { "SELECT " DB_COLS_SQL(BHEAD_COLUMNS) " FROM event_heads WHERE owner_id IN (",
	    "?", ", ", ")", 0, 1 },
	[SH_HOOKS] = { "SELECT " DB_COLS_SQL(BHOOK_COLUMNS) " FROM webhooks WHERE status = 'active'"
	    " AND owner_id IN (", "?", ", ", ") ORDER BY owner_id, seq", 0, 1 },
	[SH_POSTINGS] = { "INSERT INTO ledger_postings (entry_id, account, sub, amount, study_id,"
	    " event, created_at) VALUES ", "(?, ?, ?, ?, ?, ?, ?)", ", ", "", 0, 7 },
	[SH_TXNS] = { "INSERT INTO transactions (id, owner_id, type, amount_cents, study_id,"
	    " entry_id, description, created_at) VALUES ", "(?, ?, ?, ?, ?, ?, ?, ?)", ", ", "", 0, 8 },
	[SH_WALLETS] = { "UPDATE wallets w JOIN (", "SELECT ? AS o, ? AS a, ? AS f", " UNION ALL ",
	    ") v ON w.owner_id = v.o SET w.available_cents = w.available_cents + v.a,"
	    " w.frozen_cents = w.frozen_cents + v.f", 0, 3 },
	[SH_AGENTS] = { "UPDATE agents t JOIN (", "SELECT ? AS i, ? AS r, ? AS s", " UNION ALL ",
	    ") v ON t.id = v.i SET t.reputation = v.r, t.streak = v.s", 0, 3 },
	[SH_PART_SET] = { "UPDATE participations SET status = ?, reviewed_at = COALESCE(?, reviewed_at),"
	    " ended_at = COALESCE(?, ended_at) WHERE id IN (", "?", ", ", ")", 3, 1 },
	/* as db/events.c's head: last_us the event ids' counter */
	[SH_HEADS] = { "INSERT INTO event_heads (owner_id, last_seq, last_us) VALUES ", "(?, ?, ?)",
	    ", ", " ON DUPLICATE KEY UPDATE last_seq = last_seq + VALUES(last_seq),"
	    " last_us = GREATEST(last_us + VALUES(last_seq), VALUES(last_us))", 0, 3 },
	[SH_EVENTS] = { "INSERT INTO events (owner_id, seq, id, type, data, created_at) VALUES ",
	    "(?, ?, ?, ?, ?, ?)", ", ", "", 0, 6 },
	[SH_DELIVERIES] = { "INSERT INTO webhook_deliveries (webhook_id, event_id, created_at,"
	    " next_attempt_at) VALUES ", "(?, ?, ?, ?)", ", ", "", 0, 4 },
};

/* One event of the batch, queued in memory until the batch writes them. */
struct bevent {
	const char *owner;
	enum event_type type;
	char *data;
	size_t order;
	char id[IDS_BUFSZ];
	int64_t seq;
};

struct bwallet {
	const char *owner;
	int64_t avail, frozen;
};

struct bagent {
	char id[IDS_BUFSZ];
	int score, streak, changed;
};

struct bstudy {
	struct study s;
	int64_t unfreeze, spent, refunded, freed;
	int keeps;		/* a row that changed and kept its slot */
};

struct brow {
	size_t pos;		/* in the batch's read: the order rows are moved in */
	char id[IDS_BUFSZ];
	char agent[IDS_BUFSZ];
	size_t study;		/* index into the batch's studies */
	enum part_state from;
	struct part_result pr;
	int ok;			/* moved by this batch */
};

/* Everything one set-based batch decides before writing. */
struct setb {
	struct db *db;
	int64_t now;
	enum part_event ev;
	const struct dbres *ids;	/* id, study_id of the due rows */
	struct bstudy *st;
	size_t nst;
	struct brow *row;
	size_t nrow;
	struct bagent *ag;
	size_t nag;
	struct bevent *evs;
	size_t nev, evcap;
	struct bwallet *w;
	size_t nw, wcap;
	struct dbp *p;			/* parameter scratch */
	size_t pcap;
	char (*ids_buf)[IDS_BUFSZ];	/* transaction and entry ids */
	size_t nids, idscap;
	int fallback;			/* 1: move this batch row by row */
};

static enum db_rc
grow(void **v, size_t *cap, size_t need, size_t size)
{
	size_t c = *cap ? *cap : 64;
	void *nv;

	if (need <= *cap)
		return DB_OK;
	while (c < need)
		c *= 2;
	if ((nv = realloc(*v, c * size)) == NULL)
		return DB_ERR;
	*v = nv;
	*cap = c;
	return DB_OK;
}

static struct dbp *
params(struct setb *b, size_t n)
{
	return grow((void **)&b->p, &b->pcap, n, sizeof *b->p) == DB_OK ? b->p : NULL;
}

/* A fresh id kept until the batch ends (its text is bound by address). */
static char *
new_id(struct setb *b, enum ids_kind kind)
{
	if (b->nids == b->idscap)
		return NULL;	/* sized before the first use: see set_money */
	if (ids_new(kind, &secret_rng, b->ids_buf[b->nids]) != 0)
		return NULL;
	return b->ids_buf[b->nids++];
}

static enum db_rc
bevent(struct setb *b, const char *owner, enum event_type t, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static enum db_rc
bevent(struct setb *b, const char *owner, enum event_type t, const char *fmt, ...)
{
	struct bevent *e;
	va_list ap;
	int len;

	if (grow((void **)&b->evs, &b->evcap, b->nev + 1, sizeof *b->evs) != DB_OK)
		return DB_ERR;
	e = &b->evs[b->nev];
	memset(e, 0, sizeof *e);
	e->owner = owner;
	e->type = t;
	e->order = b->nev;
	va_start(ap, fmt);
	len = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (len < 0 || (e->data = malloc((size_t)len + 1)) == NULL)
		return DB_ERR;
	va_start(ap, fmt);
	vsnprintf(e->data, (size_t)len + 1, fmt, ap);
	va_end(ap);
	b->nev++;
	return DB_OK;
}

static void
setb_clear(struct setb *b)
{
	size_t i;

	for (i = 0; i < b->nst; i++)
		db_study_clear(&b->st[i].s);
	for (i = 0; i < b->nev; i++)
		free(b->evs[i].data);
	free(b->st);
	free(b->row);
	free(b->ag);
	free(b->evs);
	free(b->w);
	free(b->p);
	free(b->ids_buf);
}

static int
str_cmp(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Level 1: the batch's studies, each locked by id, in id order. */
static enum db_rc
lock_studies(struct setb *b)
{
	const char **ids;
	size_t i, n = b->ids->nrows;
	enum db_rc rc = DB_OK;

	if ((ids = malloc(n * sizeof *ids)) == NULL ||
	    (b->st = calloc(n, sizeof *b->st)) == NULL) {
		free(ids);
		return DB_ERR;
	}
	for (i = 0; i < n; i++)
		ids[i] = dbres_str(b->ids, i, SW_C_STUDY);
	qsort(ids, n, sizeof *ids, str_cmp);
	for (i = 0; i < n && rc == DB_OK; i++) {
		if (i > 0 && strcmp(ids[i], ids[i - 1]) == 0)
			continue;
		rc = db_study_get_row(b->db, ids[i], 1, &b->st[b->nst].s);
		if (rc == DB_OK)
			b->nst++;
		else if (rc == DB_NOTFOUND)
			rc = DB_ERR;
	}
	free(ids);
	return rc;
}

static size_t
study_index(const struct setb *b, const char *id)
{
	size_t i;

	for (i = 0; i < b->nst; i++)
		if (strcmp(b->st[i].s.id, id) == 0)
			return i;
	return SIZE_MAX;
}

static enum db_rc
each_part(void *arg, const struct dbres *res)
{
	struct setb *b = arg;
	size_t i;

	for (i = 0; i < res->nrows; i++) {
		struct brow *r = &b->row[b->nrow];

		memset(r, 0, sizeof *r);
		dbres_copy(r->id, sizeof r->id, res, i, BP_C_ID);
		dbres_copy(r->agent, sizeof r->agent, res, i, BP_C_AGENT);
		if ((r->study = study_index(b, dbres_str(res, i, BP_C_STUDY))) == SIZE_MAX ||
		    !part_state_from_name(dbres_str(res, i, BP_C_STATE), &r->from))
			return DB_ERR;
		b->nrow++;
	}
	return DB_OK;
}

/* The event of a participation entering `to`; EV__MAX for none. */
static enum event_type
part_event_of(enum part_state to)
{
	switch (to) {
	case PART_APPROVED:	return EV_PART_APPROVED;
	case PART_REJECTED:	return EV_PART_REJECTED;
	case PART_TIMED_OUT:	return EV_PART_TIMED_OUT;
	case PART_WITHDRAWN:	return EV_PART_WITHDRAWN;
	default:		return EV__MAX;
	}
}

static int
row_cmp(const void *a, const void *b)
{
	const struct brow *x = a, *y = b;

	return x->pos < y->pos ? -1 : x->pos > y->pos;
}

/* Level 2: the participations, locked; each decided by its state now. */
static enum db_rc
lock_parts(struct setb *b)
{
	size_t i, n = b->ids->nrows;
	struct dbp *p;
	enum db_rc rc;

	if ((b->row = calloc(n, sizeof *b->row)) == NULL || (p = params(b, n)) == NULL)
		return DB_ERR;
	for (i = 0; i < n; i++)
		p[i] = P_STR(dbres_str(b->ids, i, SW_C_ID));
	if ((rc = db_rows_exec(b->db, &shapes[SH_PART_LOCK], NULL, p, n, each_part, b,
	    NULL)) != DB_OK)
		return rc;
	/* the read's order (due time, id), as the row-by-row path moves them */
	for (i = 0; i < b->nrow; i++) {
		size_t j;

		for (j = 0; j < n && strcmp(dbres_str(b->ids, j, SW_C_ID), b->row[i].id) != 0; j++)
			;
		b->row[i].pos = j;
	}
	qsort(b->row, b->nrow, sizeof *b->row, row_cmp);
	for (i = 0; i < b->nrow; i++) {
		struct brow *r = &b->row[i];
		struct bstudy *bs = &b->st[r->study];

		/* Moved since the batch's read: refused here, not moved twice. */
		if (part_transition(r->from, b->ev, true, &r->pr) != ARPS_OK)
			continue;
		r->ok = 1;
		/* Not a change, or one that raises an event of the researcher's
		 * (a submission): the row-by-row path says it. */
		if (!r->pr.changed || part_event_of(r->pr.to) == EV__MAX)
			b->fallback = 1;
		if (part_occupies_slot(r->from) && !part_occupies_slot(r->pr.to))
			bs->freed++;
		else
			bs->keeps = 1;
	}
	for (i = 0; i < b->nst; i++) {
		const struct bstudy *bs = &b->st[i];

		/* A study that may fill up with this batch: its FULL check
		 * runs row by row (txn/lifecycle.c). */
		if (bs->keeps && bs->s.occupied - bs->freed >= bs->s.max_participants &&
		    (bs->s.state == STUDY_ACTIVE || bs->s.state == STUDY_PAUSED))
			b->fallback = 1;
	}
	return DB_OK;
}

static size_t
agent_index(const struct setb *b, const char *id)
{
	size_t lo = 0, hi = b->nag;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		int c = strcmp(b->ag[mid].id, id);

		if (c == 0)
			return mid;
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return SIZE_MAX;
}

static enum db_rc
each_agent(void *arg, const struct dbres *res)
{
	struct setb *b = arg;
	size_t i;

	for (i = 0; i < res->nrows; i++) {
		struct bagent *a = &b->ag[b->nag++];

		dbres_copy(a->id, sizeof a->id, res, i, BA_C_ID);
		a->score = (int)dbres_i64(res, i, BA_C_REPUTATION);
		a->streak = (int)dbres_i64(res, i, BA_C_STREAK);
		a->changed = 0;
	}
	return DB_OK;
}

static int
bagent_cmp(const void *a, const void *b)
{
	return strcmp(((const struct bagent *)a)->id, ((const struct bagent *)b)->id);
}

/* Why a reputation changed, as reputation.changed's cause (as txn/lifecycle.c). */
static const char *const rep_causes[REP_EV__MAX] = {
	[REP_EV_APPROVE] = "approved",
	[REP_EV_REJECT] = "rejected",
	[REP_EV_TIMEOUT] = "timed_out",
	[REP_EV_INVALID] = "invalid_submission",
};

/* Level 3: the agents with a reputation event, locked in id order; the
 * rules applied row after row in the batch's order. */
static enum db_rc
set_reputation(struct setb *b)
{
	const char **ids;
	struct dbp *p;
	size_t i, n = 0, k;
	enum db_rc rc;

	if ((ids = malloc((b->nrow + 1) * sizeof *ids)) == NULL ||
	    (b->ag = calloc(b->nrow + 1, sizeof *b->ag)) == NULL) {
		free(ids);
		return DB_ERR;
	}
	for (i = 0; i < b->nrow; i++)
		if (b->row[i].ok && b->row[i].pr.rep != REP_EV_NONE &&
		    b->row[i].pr.rep != REP_EV_WITHDRAW)
			ids[n++] = b->row[i].agent;
	qsort(ids, n, sizeof *ids, str_cmp);
	for (i = k = 0; i < n; i++)
		if (k == 0 || strcmp(ids[i], ids[k - 1]) != 0)
			ids[k++] = ids[i];
	if ((p = params(b, k)) == NULL) {
		free(ids);
		return DB_ERR;
	}
	for (i = 0; i < k; i++)
		p[i] = P_STR(ids[i]);
	rc = db_rows_exec(b->db, &shapes[SH_AGENT_LOCK], NULL, p, k, each_agent, b, NULL);
	free(ids);
	if (rc != DB_OK)
		return rc;
	if (b->nag != k)
		return DB_ERR;	/* an agent that does not exist */
	qsort(b->ag, b->nag, sizeof *b->ag, bagent_cmp);
	for (i = 0; i < b->nrow; i++) {
		struct brow *r = &b->row[i];
		struct rep_state st;
		struct bagent *a;
		size_t j;
		int delta = 0, from;

		if (!r->ok)
			continue;
		if (part_event_of(r->pr.to) != EV__MAX &&
		    (rc = bevent(b, r->agent, part_event_of(r->pr.to),
		    "{\"study_id\":\"%s\",\"participation_id\":\"%s\",\"status\":\"%s\"}",
		    b->st[r->study].s.id, r->id, part_state_name(r->pr.to))) != DB_OK)
			return rc;
		if (r->pr.rep != REP_EV_NONE && r->pr.rep != REP_EV_WITHDRAW) {
			if ((j = agent_index(b, r->agent)) == SIZE_MAX)
				return DB_ERR;
			a = &b->ag[j];
			st.score = from = a->score;
			st.streak = a->streak;
			if (rep_apply(&st, r->pr.rep, &delta) != ARPS_OK)
				return DB_ERR;
			if (st.score != a->score || st.streak != a->streak) {
				a->score = st.score;
				a->streak = st.streak;
				a->changed = 1;
			}
			if (delta != 0 && (rc = bevent(b, r->agent, EV_REPUTATION_CHANGED,
			    "{\"from\":%d,\"to\":%d,\"cause\":\"%s\",\"study_id\":\"%s\","
			    "\"participation_id\":\"%s\"}", from, from + delta,
			    rep_causes[r->pr.rep] != NULL ? rep_causes[r->pr.rep] : "other",
			    b->st[r->study].s.id, r->id)) != DB_OK)
				return rc;
		}
		if (r->pr.money == LEDGER_EV_APPROVE && (rc = bevent(b, r->agent,
		    EV_WALLET_CREDITED, "{\"amount_cents\":%lld,\"cause\":\"earning\","
		    "\"study_id\":\"%s\",\"participation_id\":\"%s\"}",
		    (long long)b->st[r->study].s.reward, b->st[r->study].s.id, r->id)) != DB_OK)
			return rc;
	}
	if ((p = params(b, 3 * b->nag)) == NULL)
		return DB_ERR;
	for (i = k = 0; i < b->nag; i++)
		if (b->ag[i].changed) {
			p[3 * k] = P_STR(b->ag[i].id);
			p[3 * k + 1] = P_I64(b->ag[i].score);
			p[3 * k + 2] = P_I64(b->ag[i].streak);
			k++;
		}
	return db_rows_exec(b->db, &shapes[SH_AGENTS], NULL, p, k, NULL, NULL, NULL);
}

static const char *const subname[LEDGER_SUB__MAX] = { "platform", "available", "frozen" };

static int
bwallet_cmp(const void *a, const void *b)
{
	return strcmp(((const struct bwallet *)a)->owner, ((const struct bwallet *)b)->owner);
}

static enum db_rc
each_count(void *arg, const struct dbres *res)
{
	*(size_t *)arg += res->nrows;
	return DB_OK;
}

/* Level 4: the money of every row (ledger_build, as db_ledger_post):
 * postings and transactions in multi-row inserts, each wallet locked and
 * changed once, in owner-id order; then the studies' money columns. */
static enum db_rc
set_money(struct setb *b)
{
	struct dbp *pp = NULL, *tp = NULL, *p;
	size_t np = 0, nt = 0, i, j, k, locked = 0;
	uint64_t aff = 0;
	enum db_rc rc = DB_ERR;

	b->idscap = b->nrow * (1 + LEDGER_MAX_TXNS) + b->nev;
	if ((b->ids_buf = calloc(b->idscap + 1, sizeof *b->ids_buf)) == NULL ||
	    (pp = calloc(b->nrow * LEDGER_MAX_POSTINGS * 7 + 1, sizeof *pp)) == NULL ||
	    (tp = calloc(b->nrow * LEDGER_MAX_TXNS * 8 + 1, sizeof *tp)) == NULL ||
	    grow((void **)&b->w, &b->wcap, b->nrow * LEDGER_MAX_POSTINGS + 1, sizeof *b->w) != DB_OK)
		goto out;
	for (i = 0; i < b->nrow; i++) {
		struct brow *r = &b->row[i];
		struct bstudy *bs = &b->st[r->study];
		const char *party[LEDGER_P__MAX] = { 0 };
		const char *desc = NULL, *entry;
		struct ledger_in li = { 0 };
		struct ledger_entry le;
		int64_t slot = bs->s.reward + bs->s.fee;

		if (!r->ok || r->pr.money == LEDGER_EV_NONE)
			continue;
		li.ev = r->pr.money;
		li.reward = bs->s.reward;
		li.fee = bs->s.fee;
		if (ledger_build(&li, &le) != ARPS_OK || !ledger_balanced(&le))
			goto out;
		party[LEDGER_P_RESEARCHER] = bs->s.researcher_id;
		party[LEDGER_P_AGENT] = r->agent;
		if (r->pr.money == LEDGER_EV_REJECT)
			desc = "Refund of a rejected participant's slot (reward + fee)";
		if (r->pr.money == LEDGER_EV_APPROVE) {
			bs->unfreeze += slot;
			bs->spent += slot;
		} else {
			bs->unfreeze += slot;
			bs->refunded += slot;
		}
		if (le.nposting == 0 && le.ntxn == 0)
			continue;
		if ((entry = new_id(b, IDS_TRANSACTION)) == NULL)
			goto out;
		memcpy((char *)entry, "ent_", 4);
		for (j = 0; j < le.nposting; j++) {
			const struct ledger_posting *po = &le.posting[j];
			const char *acct = ledger_party_is_wallet(po->party) ? party[po->party]
			    : ledger_party_name(po->party);

			if (acct == NULL)
				goto out;
			p = pp + 7 * np++;
			p[0] = P_STR(entry);
			p[1] = P_STR(acct);
			p[2] = P_STR(subname[po->sub]);
			p[3] = P_I64(po->amount);
			p[4] = P_STR(bs->s.id);
			p[5] = P_STR(ledger_event_name(r->pr.money));
			p[6] = P_I64(b->now);
			if (!ledger_party_is_wallet(po->party))
				continue;
			b->w[b->nw].owner = acct;
			b->w[b->nw].avail = po->sub == LEDGER_SUB_AVAILABLE ? po->amount : 0;
			b->w[b->nw].frozen = po->sub == LEDGER_SUB_AVAILABLE ? 0 : po->amount;
			b->nw++;
		}
		for (j = 0; j < le.ntxn; j++) {
			const struct ledger_txn *t = &le.txn[j];
			const char *id;

			if (party[t->party] == NULL || (id = new_id(b, IDS_TRANSACTION)) == NULL)
				goto out;
			p = tp + 8 * nt++;
			p[0] = P_STR(id);
			p[1] = P_STR(party[t->party]);
			p[2] = P_STR(ledger_txn_type_name(t->type));
			p[3] = P_I64(t->amount);
			p[4] = P_STR(bs->s.id);
			p[5] = P_STR(entry);
			p[6] = P_STR(desc ? desc : ledger_txn_type_description(t->type));
			p[7] = P_I64(b->now);
		}
	}
	/* One change per wallet, in owner-id order; nothing for a zero sum
	 * (the row-by-row path changes such a wallet by 0 + 0). */
	qsort(b->w, b->nw, sizeof *b->w, bwallet_cmp);
	for (i = k = 0; i < b->nw; i++) {
		if (k > 0 && strcmp(b->w[k - 1].owner, b->w[i].owner) == 0) {
			b->w[k - 1].avail += b->w[i].avail;
			b->w[k - 1].frozen += b->w[i].frozen;
		} else
			b->w[k++] = b->w[i];
	}
	for (i = j = 0; i < k; i++)
		if (b->w[i].avail != 0 || b->w[i].frozen != 0)
			b->w[j++] = b->w[i];
	b->nw = j;
	if ((p = params(b, 3 * b->nw + 1)) == NULL)
		goto out;
	for (i = 0; i < b->nw; i++)
		p[i] = P_STR(b->w[i].owner);
	if ((rc = db_rows_exec(b->db, &shapes[SH_WALLET_LOCK], NULL, p, b->nw, each_count, &locked,
	    NULL)) != DB_OK)
		goto out;
	rc = DB_ERR;
	if (locked != b->nw)
		goto out;	/* a wallet that does not exist */
	for (i = 0; i < b->nw; i++) {
		p[3 * i] = P_STR(b->w[i].owner);
		p[3 * i + 1] = P_I64(b->w[i].avail);
		p[3 * i + 2] = P_I64(b->w[i].frozen);
	}
	if ((rc = db_rows_exec(b->db, &shapes[SH_WALLETS], NULL, p, b->nw, NULL, NULL, &aff)) != DB_OK)
		goto out;
	rc = DB_ERR;
	if (aff != b->nw)
		goto out;
	if ((rc = db_rows_exec(b->db, &shapes[SH_POSTINGS], NULL, pp, np, NULL, NULL, NULL)) != DB_OK ||
	    (rc = db_rows_exec(b->db, &shapes[SH_TXNS], NULL, tp, nt, NULL, NULL, NULL)) != DB_OK)
		goto out;
	for (i = 0; i < b->nst && rc == DB_OK; i++) {
		struct bstudy *bs = &b->st[i];

		if (bs->unfreeze == 0 && bs->spent == 0 && bs->refunded == 0 && bs->freed == 0)
			continue;
		aff = 0;
		rc = DB_Q(b->db, q_study_batch, NULL, &aff, P_I64(bs->unfreeze), P_I64(bs->spent),
		    P_I64(bs->refunded), P_I64(bs->freed), P_STR(bs->s.id), P_I64(bs->freed));
		if (rc == DB_OK && aff != 1)
			rc = DB_ERR;
		bs->s.occupied -= bs->freed;
	}
out:
	free(pp);
	free(tp);
	return rc;
}

/* The rows themselves, one UPDATE per target state. */
static enum db_rc
set_rows(struct setb *b)
{
	static const enum part_state tos[] = { PART_TIMED_OUT, PART_APPROVED, PART_REJECTED,
	    PART_WITHDRAWN };
	struct dbp head[3], *p;
	size_t t, i, n;
	uint64_t aff = 0;
	enum db_rc rc = DB_OK;

	if ((p = params(b, b->nrow + 1)) == NULL)
		return DB_ERR;
	for (t = 0; t < sizeof tos / sizeof tos[0] && rc == DB_OK; t++) {
		int review = tos[t] == PART_APPROVED || tos[t] == PART_REJECTED;

		for (i = n = 0; i < b->nrow; i++)
			if (b->row[i].ok && b->row[i].pr.to == tos[t])
				p[n++] = P_STR(b->row[i].id);
		if (n == 0)
			continue;
		head[0] = P_STR(part_state_name(tos[t]));
		head[1] = review ? P_I64(b->now) : P_NULL;
		head[2] = P_I64(b->now);
		rc = db_rows_exec(b->db, &shapes[SH_PART_SET], head, p, n, NULL, NULL, &aff);
		if (rc == DB_OK && aff != n)
			rc = DB_ERR;
	}
	return rc;
}

static int
bevent_cmp(const void *a, const void *b)
{
	const struct bevent *x = a, *y = b;
	int c = strcmp(x->owner, y->owner);

	if (c != 0)
		return c;
	return x->order < y->order ? -1 : x->order > y->order;
}

struct heads {
	struct setb *b;
	const char **owner;	/* distinct, in id order */
	int64_t *last, *last_us;
	size_t n;
	struct dbres **hooks;	/* the chunks' webhook rows */
	size_t nhooks;
};

static size_t
owner_index(const struct heads *h, const char *owner)
{
	size_t lo = 0, hi = h->n;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		int c = strcmp(h->owner[mid], owner);

		if (c == 0)
			return mid;
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return SIZE_MAX;
}

static enum db_rc
each_head(void *arg, const struct dbres *res)
{
	struct heads *h = arg;
	size_t i, j;

	for (i = 0; i < res->nrows; i++) {
		if ((j = owner_index(h, dbres_str(res, i, BH_C_OWNER))) == SIZE_MAX)
			return DB_ERR;
		h->last[j] = dbres_i64(res, i, BH_C_LAST);
		h->last_us[j] = dbres_i64(res, i, BH_C_LAST_US);
	}
	return DB_OK;
}

/* The active webhooks of the batch's owners. */
struct hooks {
	struct hook {
		char owner[IDS_BUFSZ], id[IDS_BUFSZ];
		char *events;
	} *v;
	size_t n, cap;
};

static enum db_rc
each_hooks(void *arg, const struct dbres *res)
{
	struct hooks *hs = arg;
	size_t i;
	int ok = 1;

	for (i = 0; i < res->nrows; i++) {
		struct hook *k;

		if (grow((void **)&hs->v, &hs->cap, hs->n + 1, sizeof *hs->v) != DB_OK)
			return DB_ERR;
		k = &hs->v[hs->n];
		dbres_copy(k->owner, sizeof k->owner, res, i, BW_C_OWNER);
		dbres_copy(k->id, sizeof k->id, res, i, BW_C_ID);
		if ((k->events = dbres_dup(res, i, BW_C_EVENTS, &ok)) == NULL)
			return DB_ERR;
		hs->n++;
	}
	return DB_OK;
}

static void
hooks_clear(struct hooks *hs)
{
	size_t i;

	for (i = 0; i < hs->n; i++)
		free(hs->v[i].events);
	free(hs->v);
}

/*
 * The batch's events, as db_events_flush writes a transaction's queue
 * (design.md §11.4): each owner's numbered under its event_heads row
 * (owners in id order, the last locks of the transaction), one delivery
 * for every active webhook of the owner that asks for the type; here in
 * multi-row statements.
 */
static enum db_rc
write_events(struct setb *b)
{
	struct heads h = { .b = b };
	struct dbp *p = NULL, *dp = NULL;
	struct hooks hooks = { 0 };
	size_t i, j, nd = 0, hk;
	struct timespec ts;
	int64_t us;
	enum db_rc rc = DB_ERR;

	if (b->nev == 0)
		return DB_OK;
	qsort(b->evs, b->nev, sizeof *b->evs, bevent_cmp);
	if ((h.owner = calloc(b->nev, sizeof *h.owner)) == NULL ||
	    (h.last = calloc(b->nev, sizeof *h.last)) == NULL ||
	    (h.last_us = calloc(b->nev, sizeof *h.last_us)) == NULL ||
	    (p = calloc(6 * b->nev + 1, sizeof *p)) == NULL)
		goto out;
	clock_gettime(CLOCK_REALTIME, &ts);
	us = (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
	for (i = 0; i < b->nev; i++)
		if (h.n == 0 || strcmp(h.owner[h.n - 1], b->evs[i].owner) != 0)
			h.owner[h.n++] = b->evs[i].owner;
	/* (owner, how many) for the heads; counts go in h.last for now */
	for (i = j = 0; i < h.n; i++) {
		size_t c = 0;

		while (j < b->nev && strcmp(b->evs[j].owner, h.owner[i]) == 0) {
			c++;
			j++;
		}
		p[3 * i] = P_STR(h.owner[i]);
		p[3 * i + 1] = P_I64(c);
		p[3 * i + 2] = P_I64(us + (int64_t)c - 1);
	}
	if ((rc = db_rows_exec(b->db, &shapes[SH_HEADS], NULL, p, h.n, NULL, NULL, NULL)) != DB_OK)
		goto out;
	for (i = 0; i < h.n; i++) {
		p[i] = P_STR(h.owner[i]);
		h.last[i] = -1;
	}
	if ((rc = db_rows_exec(b->db, &shapes[SH_HEAD_GET], NULL, p, h.n, each_head, &h,
	    NULL)) != DB_OK)
		goto out;
	rc = DB_ERR;
	/* number each owner's events: the last n of its head */
	for (i = j = 0; i < h.n; i++) {
		size_t first = j, c;

		while (j < b->nev && strcmp(b->evs[j].owner, h.owner[i]) == 0)
			j++;
		c = j - first;
		if (h.last[i] < (int64_t)c || h.last_us[i] < (int64_t)c)
			goto out;
		for (hk = first; hk < j; hk++) {
			int64_t k = (int64_t)(hk - first) - (int64_t)c + 1;

			b->evs[hk].seq = h.last[i] + k;
			if (ids_new_ordered(IDS_EVENT, &secret_rng, (uint64_t)(h.last_us[i] + k),
			    b->evs[hk].id) != ARPS_OK)
				goto out;
		}
	}
	for (i = 0; i < b->nev; i++) {
		struct dbp *q = p + 6 * i;

		q[0] = P_STR(b->evs[i].owner);
		q[1] = P_I64(b->evs[i].seq);
		q[2] = P_STR(b->evs[i].id);
		q[3] = P_STR(event_type_name(b->evs[i].type));
		q[4] = P_STR(b->evs[i].data);
		q[5] = P_I64(b->now);
	}
	rc = db_rows_exec(b->db, &shapes[SH_EVENTS], NULL, p, b->nev, NULL, NULL, NULL);
	if (rc == DB_DUP)
		rc = DB_RETRY;	/* an id clash: run the transaction again */
	if (rc != DB_OK)
		goto out;
	/* the webhooks of the owners */
	for (i = 0; i < h.n; i++)
		p[i] = P_STR(h.owner[i]);
	if ((rc = db_rows_exec(b->db, &shapes[SH_HOOKS], NULL, p, h.n, each_hooks, &hooks,
	    NULL)) != DB_OK)
		goto out;
	rc = DB_ERR;
	if (hooks.n > 0) {
		size_t cap = 0;

		for (i = 0; i < b->nev; i++) {
			const char *type = event_type_name(b->evs[i].type);

			for (hk = 0; hk < hooks.n; hk++) {
				if (strcmp(hooks.v[hk].owner, b->evs[i].owner) != 0 ||
				    !event_list_has(hooks.v[hk].events, type))
					continue;
				if (grow((void **)&dp, &cap, 4 * (nd + 1), sizeof *dp) != DB_OK)
					goto out;
				dp[4 * nd] = P_STR(hooks.v[hk].id);
				dp[4 * nd + 1] = P_STR(b->evs[i].id);
				dp[4 * nd + 2] = P_I64(b->now);
				dp[4 * nd + 3] = P_I64(b->now);
				nd++;
			}
		}
	}
	rc = db_rows_exec(b->db, &shapes[SH_DELIVERIES], NULL, dp, nd, NULL, NULL, NULL);
out:
	free(h.owner);
	free(h.last);
	free(h.last_us);
	free(p);
	free(dp);
	hooks_clear(&hooks);
	return rc;
}

/* The set-based batch of a participation job; b->moved the rows moved. */
static enum db_rc
set_tx(struct db *db, void *arg)
{
	struct batch *b = arg;
	struct setb sb;
	enum db_rc rc;
	size_t i;

	memset(&sb, 0, sizeof sb);
	sb.db = db;
	sb.now = b->sw->now;
	sb.ev = b->pev;
	sb.ids = b->ids;
	b->moved = 0;
	if ((rc = lock_studies(&sb)) == DB_OK && (rc = lock_parts(&sb)) == DB_OK && sb.fallback) {
		setb_clear(&sb);
		return rows_tx(db, b);
	}
	if (rc == DB_OK && (rc = set_reputation(&sb)) == DB_OK && (rc = set_money(&sb)) == DB_OK &&
	    (rc = set_rows(&sb)) == DB_OK)
		rc = write_events(&sb);
	for (i = 0; rc == DB_OK && i < sb.nrow; i++)
		b->moved += sb.row[i].ok;
	setb_clear(&sb);
	return rc;
}

/* Select due rows and move them, batch after batch, until none is left. */
static enum db_rc
drain(struct sweep *sw, const char *select, int64_t due_before, struct batch *tmpl,
    size_t *moved, size_t *batches)
{
	enum db_rc rc;

	*moved = *batches = 0;
	for (;;) {
		struct batch b = *tmpl;

		b.sw = sw;
		if ((rc = DB_Q(sw->db, select, &b.ids, NULL, P_I64(due_before),
		    P_I64(sw->batch))) != DB_OK)
			return rc;
		if (b.ids->nrows == 0) {
			dbres_free(b.ids);
			return DB_OK;
		}
		rc = db_tx(sw->db, b.study || sw->rows ? rows_tx : set_tx, &b);
		(*batches)++;
		*moved += b.moved;
		if (rc != DB_OK || b.ids->nrows < sw->batch || b.moved == 0) {
			dbres_free(b.ids);
			return rc;
		}
		dbres_free(b.ids);
	}
}

static enum db_rc
job_timeouts(struct sweep *sw, size_t *moved, size_t *batches)
{
	struct batch t = { .pev = PART_EV_TIMEOUT };
	size_t m2 = 0, b2 = 0;
	enum db_rc rc;

	rc = drain(sw, q_timeouts_accepted, sw->now - PART_TIMEOUT_SECONDS, &t, moved, batches);
	if (rc == DB_OK)
		rc = drain(sw, q_timeouts_started, sw->now - PART_TIMEOUT_SECONDS, &t, &m2, &b2);
	*moved += m2;
	*batches += b2;
	return rc;
}

static enum db_rc
job_auto_approve(struct sweep *sw, size_t *moved, size_t *batches)
{
	struct batch t = { .pev = PART_EV_AUTO_APPROVE };

	return drain(sw, q_auto, sw->now - PART_AUTO_APPROVE_SECONDS, &t, moved, batches);
}

static enum db_rc
job_deadlines(struct sweep *sw, size_t *moved, size_t *batches)
{
	struct batch t = { .study = 1, .sev = STUDY_EV_DEADLINE };

	return drain(sw, q_deadlines, sw->now, &t, moved, batches);
}

static enum db_rc
job_complete(struct sweep *sw, size_t *moved, size_t *batches)
{
	struct batch t = { .study = 1, .complete = 1 };

	return drain(sw, q_complete, 0, &t, moved, batches);
}

static enum db_rc
job_embeddings(struct sweep *sw, size_t *moved, size_t *batches)
{
	enum db_rc rc;
	size_t done;

	*moved = *batches = 0;
	if (sw->enc == NULL)
		return DB_OK;
	do {
		rc = txn_embed_pending(sw->db, sw->enc, sw->scratch, sw->now, EMBED_RETRY_AGE,
		    sw->batch, &done);
		*moved += done;
		(*batches)++;
	} while (rc == DB_OK && done == sw->batch);
	return rc;
}

/* Retention (design.md §9.10): events and webhook deliveries after 30 days. */
static enum db_rc
job_events_retention(struct sweep *sw, size_t *moved, size_t *batches)
{
	uint64_t n;
	enum db_rc rc;

	*moved = *batches = 0;
	do {
		rc = db_events_purge(sw->db, sw->now - 30 * 24 * 3600, (int64_t)sw->batch, &n);
		*moved += (size_t)n;
		(*batches)++;
	} while (rc == DB_OK && n > 0);
	return rc;
}

const struct sweep_job sweep_jobs[] = {
	{ "timeouts",     job_timeouts },
	{ "auto_approve", job_auto_approve },
	{ "deadlines",    job_deadlines },
	{ "complete",     job_complete },
	{ "embeddings",   job_embeddings },
	{ "events_retention", job_events_retention },
};
const size_t sweep_njobs = sizeof sweep_jobs / sizeof sweep_jobs[0];

enum db_rc
sweep_lock(struct db *db, int *got)
{
	struct dbres *res = NULL;
	enum db_rc rc;

	*got = 0;
	if ((rc = DB_Q0(db, q_lock, &res, NULL)) != DB_OK)
		return rc;
	*got = dbres_i64(res, 0, DB_COL_ONLY) == 1;
	dbres_free(res);
	return DB_OK;
}

void
sweep_unlock(struct db *db)
{
	struct dbres *res = NULL;

	if (DB_Q0(db, q_unlock, &res, NULL) == DB_OK)
		dbres_free(res);
}

enum db_rc
sweep_session_counts(struct db *db, int64_t *statements, int64_t *commits)
{
	struct dbres *res = NULL;
	enum db_rc rc;

	*statements = *commits = 0;
	if ((rc = DB_Q0(db, q_session, &res, NULL)) != DB_OK)
		return rc;
	*statements = dbres_i64(res, 0, SESS_C_STMTS);
	*commits = dbres_i64(res, 0, SESS_C_COMMITS);
	dbres_free(res);
	return DB_OK;
}
