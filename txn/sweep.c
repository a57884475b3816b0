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
#include "db/batch.h"
#include "db/events.h"
#include "db/lease.h"
#include "db/studies.h"
#include "lib/secret.h"
#include "txn/lifecycle.h"
#include "txn/sweep.h"


/* One batch: the ids due, moved in one transaction. */
struct batch {
	struct sweep *sw;
	struct db_due ids;		/* the due rows (db/batch.h) */
	enum part_event pev;		/* participation jobs */
	enum study_event sev;		/* study jobs */
	int study;			/* 1: a study job */
	int complete;			/* 1: txn_study_complete */
	int renewed;			/* the lease is renewed in this transaction already */
	size_t moved;
};

enum db_rc
sweep_fence(struct db *db, struct sweep *sw)
{
	enum db_rc rc;
	int held = 0;

	if (sw->lease == 0)
		return DB_OK;
	if ((rc = db_lease_renew(db, LEASE_SWEEP, sw->lease, SWEEP_LEASE_TTL, &held)) != DB_OK)
		return rc;
	if (!held) {
		sw->fenced = 1;
		return DB_ROLLBACK;
	}
	return DB_OK;
}

/* The batch row by row, through txn/lifecycle.c. */
static enum db_rc
rows_tx(struct db *db, void *arg)
{
	struct batch *b = arg;
	enum db_rc rc = DB_OK;
	size_t i;

	b->moved = 0;
	/* the lease first: only sweeps write its row (design.md §13.2) */
	if (!b->renewed && (rc = sweep_fence(db, b->sw)) != DB_OK)
		return rc;
	for (i = 0; i < b->ids.n; i++) {
		const char *id = b->ids.id[i];
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

/* One event of the batch, queued in memory until the batch writes them. */
struct bevent {
	const char *owner;
	enum event_type type;
	char *data;
	size_t order;
	char id[IDS_BUFSZ];
	int64_t seq;
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
	const struct db_due *ids;	/* id, study_id of the due rows */
	struct bstudy *st;
	size_t nst;
	struct brow *row;
	size_t nrow;
	struct bagent *ag;
	size_t nag;
	struct bevent *evs;
	size_t nev, evcap;
	struct db_batch_wallet *w;	/* owner-id order, once each */
	size_t nw, wcap;
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
	size_t i, n = b->ids->n;
	enum db_rc rc = DB_OK;

	if ((ids = malloc(n * sizeof *ids)) == NULL ||
	    (b->st = calloc(n, sizeof *b->st)) == NULL) {
		free(ids);
		return DB_ERR;
	}
	for (i = 0; i < n; i++)
		ids[i] = b->ids->study[i];
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
each_part(void *arg, const struct db_batch_part *row)
{
	struct setb *b = arg;
	struct brow *r = &b->row[b->nrow];

	memset(r, 0, sizeof *r);
	snprintf(r->id, sizeof r->id, "%s", row->id);
	snprintf(r->agent, sizeof r->agent, "%s", row->agent_id);
	if ((r->study = study_index(b, row->study_id)) == SIZE_MAX ||
	    !part_state_from_name(row->status, &r->from))
		return DB_ERR;
	b->nrow++;
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
	size_t i, n = b->ids->n;
	enum db_rc rc;

	if ((b->row = calloc(n, sizeof *b->row)) == NULL)
		return DB_ERR;
	if ((rc = db_participations_lock(b->db, b->ids->id, n, each_part, b)) != DB_OK)
		return rc;
	/* the read's order (due time, id), as the row-by-row path moves them */
	for (i = 0; i < b->nrow; i++) {
		size_t j;

		for (j = 0; j < n && strcmp(b->ids->id[j], b->row[i].id) != 0; j++)
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
each_agent(void *arg, const struct db_batch_agent *row)
{
	struct setb *b = arg;
	struct bagent *a = &b->ag[b->nag++];

	snprintf(a->id, sizeof a->id, "%s", row->id);
	a->score = (int)row->reputation;
	a->streak = (int)row->streak;
	a->changed = 0;
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
	struct db_batch_agent *set;
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
	rc = db_agents_lock(b->db, ids, k, each_agent, b);
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
	if ((set = calloc(b->nag + 1, sizeof *set)) == NULL)
		return DB_ERR;
	for (i = k = 0; i < b->nag; i++)
		if (b->ag[i].changed) {
			set[k].id = b->ag[i].id;
			set[k].reputation = b->ag[i].score;
			set[k].streak = b->ag[i].streak;
			k++;
		}
	rc = db_agents_set_reputation(b->db, set, k);
	free(set);
	return rc;
}

static const char *const subname[LEDGER_SUB__MAX] = { "platform", "available", "frozen" };

static int
bwallet_cmp(const void *a, const void *b)
{
	return strcmp(((const struct db_batch_wallet *)a)->owner,
	    ((const struct db_batch_wallet *)b)->owner);
}

/* Level 4: the money of every row (ledger_build, as db_ledger_post):
 * postings and transactions in multi-row inserts, each wallet locked and
 * changed once, in owner-id order; then the studies' money columns. */
static enum db_rc
set_money(struct setb *b)
{
	struct db_batch_posting *pp = NULL, *po_row;
	struct db_batch_txn *tp = NULL, *t_row;
	size_t np = 0, nt = 0, i, j, k, locked = 0;
	uint64_t aff = 0;
	enum db_rc rc = DB_ERR;

	b->idscap = b->nrow * (1 + LEDGER_MAX_TXNS) + b->nev;
	if ((b->ids_buf = calloc(b->idscap + 1, sizeof *b->ids_buf)) == NULL ||
	    (pp = calloc(b->nrow * LEDGER_MAX_POSTINGS + 1, sizeof *pp)) == NULL ||
	    (tp = calloc(b->nrow * LEDGER_MAX_TXNS + 1, sizeof *tp)) == NULL ||
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
			po_row = &pp[np++];
			po_row->entry_id = entry;
			po_row->account = acct;
			po_row->sub = subname[po->sub];
			po_row->amount = po->amount;
			po_row->study_id = bs->s.id;
			po_row->event = ledger_event_name(r->pr.money);
			po_row->created_at = b->now;
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
			t_row = &tp[nt++];
			t_row->id = id;
			t_row->owner_id = party[t->party];
			t_row->type = ledger_txn_type_name(t->type);
			t_row->amount = t->amount;
			t_row->study_id = bs->s.id;
			t_row->entry_id = entry;
			t_row->description = desc ? desc : ledger_txn_type_description(t->type);
			t_row->created_at = b->now;
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
	if ((rc = db_wallets_lock(b->db, b->w, b->nw, &locked)) != DB_OK)
		goto out;
	rc = DB_ERR;
	if (locked != b->nw)
		goto out;	/* a wallet that does not exist */
	if ((rc = db_wallets_add(b->db, b->w, b->nw, &aff)) != DB_OK)
		goto out;
	rc = DB_ERR;
	if (aff != b->nw)
		goto out;
	if ((rc = db_postings_insert(b->db, pp, np)) != DB_OK ||
	    (rc = db_transactions_insert(b->db, tp, nt)) != DB_OK)
		goto out;
	for (i = 0; i < b->nst && rc == DB_OK; i++) {
		struct bstudy *bs = &b->st[i];

		if (bs->unfreeze == 0 && bs->spent == 0 && bs->refunded == 0 && bs->freed == 0)
			continue;
		rc = db_study_batch_settle(b->db, bs->s.id, bs->unfreeze, bs->spent, bs->refunded,
		    bs->freed, &aff);
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
	const char **p;
	size_t t, i, n;
	uint64_t aff = 0;
	enum db_rc rc = DB_OK;

	if ((p = calloc(b->nrow + 1, sizeof *p)) == NULL)
		return DB_ERR;
	for (t = 0; t < sizeof tos / sizeof tos[0] && rc == DB_OK; t++) {
		int review = tos[t] == PART_APPROVED || tos[t] == PART_REJECTED;

		for (i = n = 0; i < b->nrow; i++)
			if (b->row[i].ok && b->row[i].pr.to == tos[t])
				p[n++] = b->row[i].id;
		if (n == 0)
			continue;
		rc = db_participations_set_state(b->db, part_state_name(tos[t]), review, b->now, p, n,
		    &aff);
		if (rc == DB_OK && aff != n)
			rc = DB_ERR;
	}
	free(p);
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
each_head(void *arg, const struct db_batch_head_at *row)
{
	struct heads *h = arg;
	size_t j;

	if ((j = owner_index(h, row->owner)) == SIZE_MAX)
		return DB_ERR;
	h->last[j] = row->last_seq;
	h->last_us[j] = row->last_us;
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
each_hooks(void *arg, const struct db_batch_hook *row)
{
	struct hooks *hs = arg;
	struct hook *k;

	if (grow((void **)&hs->v, &hs->cap, hs->n + 1, sizeof *hs->v) != DB_OK)
		return DB_ERR;
	k = &hs->v[hs->n];
	snprintf(k->owner, sizeof k->owner, "%s", row->owner);
	snprintf(k->id, sizeof k->id, "%s", row->id);
	if (row->events == NULL || (k->events = strdup(row->events)) == NULL)
		return DB_ERR;
	hs->n++;
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
	struct db_batch_head *hp = NULL;
	struct db_batch_event *ep = NULL;
	struct db_batch_delivery *dp = NULL;
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
	    (hp = calloc(b->nev + 1, sizeof *hp)) == NULL ||
	    (ep = calloc(b->nev + 1, sizeof *ep)) == NULL)
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
		hp[i].owner = h.owner[i];
		hp[i].count = (int64_t)c;
		hp[i].last_us = us + (int64_t)c - 1;
	}
	if ((rc = db_event_heads_add(b->db, hp, h.n)) != DB_OK)
		goto out;
	for (i = 0; i < h.n; i++)
		h.last[i] = -1;
	if ((rc = db_event_heads_get(b->db, h.owner, h.n, each_head, &h)) != DB_OK)
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
		ep[i].owner = b->evs[i].owner;
		ep[i].seq = b->evs[i].seq;
		ep[i].id = b->evs[i].id;
		ep[i].type = event_type_name(b->evs[i].type);
		ep[i].data = b->evs[i].data;
		ep[i].created_at = b->now;
	}
	rc = db_events_insert(b->db, ep, b->nev);
	if (rc == DB_DUP)
		rc = DB_RETRY;	/* an id clash: run the transaction again */
	if (rc != DB_OK)
		goto out;
	/* the webhooks of the owners */
	if ((rc = db_webhooks_active_by_owner(b->db, h.owner, h.n, each_hooks, &hooks)) != DB_OK)
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
				if (grow((void **)&dp, &cap, nd + 1, sizeof *dp) != DB_OK)
					goto out;
				dp[nd].webhook_id = hooks.v[hk].id;
				dp[nd].event_id = b->evs[i].id;
				dp[nd].created_at = b->now;
				dp[nd].next_attempt_at = b->now;
				nd++;
			}
		}
	}
	rc = db_deliveries_insert(b->db, dp, nd);
out:
	free(h.owner);
	free(h.last);
	free(h.last_us);
	free(hp);
	free(ep);
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
	sb.ids = &b->ids;
	b->moved = 0;
	b->renewed = 0;
	if ((rc = sweep_fence(db, b->sw)) != DB_OK)
		return rc;
	b->renewed = 1;
	if ((rc = lock_studies(&sb)) == DB_OK && (rc = lock_parts(&sb)) == DB_OK && sb.fallback) {
		setb_clear(&sb);
		rc = rows_tx(db, b);
		b->renewed = 0;
		return rc;
	}
	b->renewed = 0;
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
drain(struct sweep *sw, enum db_rc (*select)(struct db *, int64_t, int64_t, struct db_due *),
    int64_t due_before, struct batch *tmpl, size_t *moved, size_t *batches)
{
	enum db_rc rc;

	*moved = *batches = 0;
	for (;;) {
		struct batch b = *tmpl;

		b.sw = sw;
		if ((rc = select(sw->db, due_before, (int64_t)sw->batch, &b.ids)) != DB_OK)
			return rc;
		if (b.ids.n == 0) {
			db_due_free(&b.ids);
			return DB_OK;
		}
		rc = db_tx(sw->db, b.study || sw->rows ? rows_tx : set_tx, &b);
		if (rc == DB_ROLLBACK && sw->fenced) {	/* stopped: another sweep has the lease */
			db_due_free(&b.ids);
			return rc;
		}
		(*batches)++;
		*moved += b.moved;
		if (rc != DB_OK || b.ids.n < sw->batch || b.moved == 0) {
			db_due_free(&b.ids);
			return rc;
		}
		db_due_free(&b.ids);
	}
}

static enum db_rc
job_timeouts(struct sweep *sw, size_t *moved, size_t *batches)
{
	struct batch t = { .pev = PART_EV_TIMEOUT };
	size_t m2 = 0, b2 = 0;
	enum db_rc rc;

	rc = drain(sw, db_participation_due_accepted, sw->now - PART_TIMEOUT_SECONDS, &t, moved, batches);
	if (rc == DB_OK)
		rc = drain(sw, db_participation_due_started, sw->now - PART_TIMEOUT_SECONDS, &t, &m2, &b2);
	*moved += m2;
	*batches += b2;
	return rc;
}

static enum db_rc
job_auto_approve(struct sweep *sw, size_t *moved, size_t *batches)
{
	struct batch t = { .pev = PART_EV_AUTO_APPROVE };

	return drain(sw, db_participation_due_submitted, sw->now - PART_AUTO_APPROVE_SECONDS, &t, moved, batches);
}

static enum db_rc
job_deadlines(struct sweep *sw, size_t *moved, size_t *batches)
{
	struct batch t = { .study = 1, .sev = STUDY_EV_DEADLINE };

	return drain(sw, db_study_due_deadline, sw->now, &t, moved, batches);
}

static enum db_rc
job_complete(struct sweep *sw, size_t *moved, size_t *batches)
{
	struct batch t = { .study = 1, .complete = 1 };

	return drain(sw, db_study_due_complete, 0, &t, moved, batches);
}

/* Retention (design.md §9.10): events and webhook deliveries after 30 days. */
static enum db_rc
job_events_retention(struct sweep *sw, size_t *moved, size_t *batches)
{
	uint64_t n;
	enum db_rc rc;

	*moved = *batches = 0;
	do {
		if ((rc = sweep_fence(sw->db, sw)) != DB_OK)	/* idempotent deletes: alone */
			return rc;
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
	{ "events_retention", job_events_retention },
};
const size_t sweep_njobs = sizeof sweep_jobs / sizeof sweep_jobs[0];
