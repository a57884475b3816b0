/*
 * The lifecycle of studies and participations: every state change, run
 * inside the caller's transaction (db_tx / req_tx), with its locks, its
 * money (ledger_build + db_ledger_post) and its reputation (rep_apply).
 * The statements, reads and row mapping are in db/studies.c; the
 * contracts in txn/lifecycle.h (and db/studies.h for the statements).
 *
 * Lock order.  Every transaction here takes its row locks (SELECT ... FOR
 * UPDATE, or the UPDATE itself) in this one order, and never goes back:
 *
 *   1. the study row            (db_study_get / db_study_get_row, for_update)
 *   2. the participation row    (db_participation_get, for_update; or with
 *                                its study by db_study_part_by_agent_lock /
 *                                _by_anon_lock, whose outer join reads and
 *                                locks the study first)
 *   3. the agent row            (db_agent_get, for_update: apply_rep, accept,
 *                                the suspended check of a completion)
 *   4. the wallets, in owner-id order (db_ledger_post sorts its wallet
 *      updates by owner id; platform accounts are postings only, inserts
 *      that lock no wallet row)
 *
 * One call may skip levels but never takes a lower-numbered lock after
 * a higher one, and never two rows of one level except wallets, which are
 * taken in a total order.  So two transactions that each make one such
 * call cannot wait on each other in a cycle: the one holding the higher
 * lock waits only for locks higher still.  Counting rows (the FULL
 * check's probe) and the occupied column are read or changed under the
 * study lock.  Settling by participation id reads the participation's
 * study id first without a lock (it never changes), then locks in order;
 * a review, which names the study, locks the study and then the
 * participation itself and settles with txn_participation_settle_locked.
 *
 * Two exceptions, taken on purpose, where a deadlock is possible and
 * harmless: InnoDB rolls one side back and db_tx runs that transaction
 * again from the start (DB_RETRY must reach it), so the outcome is as if
 * the two had run one after the other.
 *  - txn_study_accept first times out the agent's own participation when
 *    it is 24 h old, as the sweep would (that study, the participation,
 *    the agent, the wallets), and only then locks the study being
 *    accepted, after the agent.  A review of that participation can
 *    cross it.
 *  - A sweep batch (txn/sweep.c) makes many of these calls in one
 *    transaction, ids in (study_id, id) order, so between two rows it
 *    goes back to level 1 while holding agent and wallet locks.  A
 *    request on the same agent or researcher can cross it; the batch is
 *    then retried whole (a batch moves all its rows or none).
 *
 * txn_study_create locks only the researcher's wallet (level 4): the study
 * it inserts is new, so no other transaction can hold it.
 *
 * Row locks only, never a shared lock upgraded: a wallet is locked by
 * SELECT ... FOR UPDATE before anything else touches it
 * (db_wallet_lock_create), never by INSERT IGNORE first (that takes a
 * shared lock on an existing row, and two transactions of one owner that
 * each hold it and then ask for the exclusive lock deadlock: the 1213s of
 * concurrent creates and top-ups of one researcher).  The inserts that
 * follow (ledger postings, transactions, events, the Idempotency-Key
 * answer) go to new primary keys: at READ COMMITTED they take no gap
 * locks, and the one insert that can meet an existing key, the
 * Idempotency-Key answer, is made under the key's named lock.  Event
 * heads (INSERT ... ON DUPLICATE KEY UPDATE, an exclusive lock) are
 * written at commit, last, for owners whose wallets the transaction
 * already holds or whose rows no other order reaches.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include "core/errors.h"
#include "core/ledger.h"
#include "core/reputation.h"
#include "db/accounts.h"
#include "db/embeddings.h"
#include "db/events.h"
#include "db/groups.h"
#include "db/ledger.h"
#include "db/studies.h"
#include "db/wallet.h"
#include "lib/secret.h"
#include "txn/lifecycle.h"

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
	rc = db_study_money_add(db, id, unfreeze, spent, refunded, refunded_slots, &n);
	return rc == DB_OK && n != 1 ? DB_ERR : rc;
}

static enum db_rc
study_set_state(struct db *db, struct study *s, enum study_state to, int64_t now)
{
	enum study_state from = s->state;
	enum db_rc rc;

	rc = db_study_state_set(db, s->id, to, now);
	if (rc != DB_OK)
		return rc;
	if (to == STUDY_AWAITING_REVIEW && s->closed_at == 0)
		s->closed_at = now;
	if (to == STUDY_COMPLETED && s->completed_at == 0)
		s->completed_at = now;
	s->state = to;
	/* The researcher's events (design.md §11): the change, then what it means. */
	if (from != to && (rc = db_event(db, s->researcher_id, EV_STUDY_STATUS_CHANGED, now,
	    "{\"study_id\":\"%s\",\"from\":\"%s\",\"to\":\"%s\"}", s->id,
	    study_state_name(from), study_state_name(to))) != DB_OK)
		return rc;
	if (from != to && to == STUDY_COMPLETED)
		return db_event(db, s->researcher_id, EV_STUDY_COMPLETED, now,
		    "{\"study_id\":\"%s\"}", s->id);
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

/*
 * Book a screen-out of agent_id in s (design.md §14): the researcher's
 * wallet is locked first (acc_ ids sort before agt_ ones: the order of
 * db_ledger_post), study_screen_out_event decides whether its available
 * balance funds the freed slot again; *shrink is 1 when it does not (the
 * slot's budget settles: the caller takes the slot out of the study).
 */
static enum db_rc
book_screen_out(struct db *db, const struct study *s, const char *agent_id, int64_t now,
    int *shrink)
{
	const char *party[LEDGER_P__MAX] = { 0 };
	struct ledger_in li = { 0 };
	struct ledger_entry le;
	enum ledger_event ev;
	int64_t avail, frozen, paid, rest;
	enum db_rc rc;

	*shrink = 0;
	if ((rc = db_wallet_lock_create(db, s->researcher_id, &avail, &frozen)) != DB_OK)
		return rc == DB_NOTFOUND ? DB_ERR : rc;
	if (study_screen_out_event(s->reward, s->fee, s->screen_out, s->screen_out_fee, avail,
	    &ev) != ARPS_OK)
		return DB_ERR;
	li.ev = ev;
	li.reward = s->reward;
	li.fee = s->fee;
	li.amount = s->screen_out;
	li.amount_fee = s->screen_out_fee;
	li.available = avail;
	if (ledger_build(&li, &le) != ARPS_OK)
		return DB_ERR;
	party[LEDGER_P_RESEARCHER] = s->researcher_id;
	party[LEDGER_P_AGENT] = agent_id;
	if ((rc = db_ledger_post(db, &le, party, s->id, ev, ev == LEDGER_EV_SCREEN_OUT ?
	    "Screen-out payment (and fee): the freed place funded again" :
	    "Screen-out: the place's budget less the payment and its fee", now)) != DB_OK)
		return rc;
	paid = s->screen_out + s->screen_out_fee;
	if (ev == LEDGER_EV_SCREEN_OUT)
		return study_money(db, s->id, 0, paid, 0, 0);
	*shrink = 1;
	rest = s->reward + s->fee - paid;
	return study_money(db, s->id, s->reward + s->fee, paid, rest, 0);
}

/* Under the study lock: move the study to awaiting_review when every slot
 * is occupied and none is accepted or in_progress (STUDY_EV_FULL). */
static enum db_rc
check_full(struct db *db, struct study *s, int64_t now)
{
	struct study_counts c;
	struct study_result res;
	int64_t active;
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
	if ((rc = db_study_has_active(db, s->id, &active)) != DB_OK)
		return rc;
	memset(&c, 0, sizeof c);
	c.accepted = active;
	c.approved = s->occupied - c.accepted;
	if (study_transition(s->state, STUDY_EV_FULL, s->max_participants, &c, &res) != ARPS_OK)
		return DB_OK;
	return study_set_state(db, s, res.to, now);
}

/* Whether apply_rep reads (and locks) the agent for ev. */
static int
rep_reads_agent(enum rep_event ev)
{
	return ev != REP_EV_NONE && ev != REP_EV_WITHDRAW;
}

/* Apply a reputation event to the agent (locked here: after the
 * participation, before the wallets).  *delta gets the change, *from the
 * score before it, *to (may be NULL; set only when rep_reads_agent(ev))
 * the score after it. */
static enum db_rc
apply_rep(struct db *db, const char *agent_id, enum rep_event ev, int *delta, int *from,
    int *to)
{
	struct rep_state st;
	struct agent a;
	enum db_rc rc;

	*delta = 0;
	*from = 0;
	if (!rep_reads_agent(ev))
		return DB_OK;
	if ((rc = db_agent_get(db, agent_id, 1, &a)) != DB_OK)
		return rc == DB_NOTFOUND ? DB_ERR : rc;
	st.score = a.reputation;
	st.streak = a.streak;
	*from = a.reputation;
	if (rep_apply(&st, ev, delta) != ARPS_OK)
		return DB_ERR;
	if (to != NULL)
		*to = st.score;
	if (st.score == a.reputation && st.streak == a.streak)
		return DB_OK;
	return db_agent_set_reputation(db, agent_id, st.score, st.streak);
}

/* Why a reputation changed, as reputation.changed's cause. */
static const char *const rep_causes[REP_EV__MAX] = {
	[REP_EV_APPROVE] = "approved",
	[REP_EV_REJECT] = "rejected",
	[REP_EV_TIMEOUT] = "timed_out",
	[REP_EV_INVALID] = "invalid_submission",
};

/* The event of a participation entering `to`; EV__MAX for none. */
static enum event_type
part_event_type(enum part_state to)
{
	switch (to) {
	case PART_SUBMITTED:	return EV_PART_SUBMITTED;
	case PART_APPROVED:	return EV_PART_APPROVED;
	case PART_REJECTED:	return EV_PART_REJECTED;
	case PART_TIMED_OUT:	return EV_PART_TIMED_OUT;
	case PART_WITHDRAWN:	return EV_PART_WITHDRAWN;
	case PART_SCREENED_OUT:	return EV_PART_SCREENED_OUT;
	default:		return EV__MAX;
	}
}

/* reputation.changed for the agent of p (nothing when delta is 0). */
static enum db_rc
rep_event(struct db *db, const struct participation *p, enum rep_event ev, int from, int delta,
    int64_t now)
{
	if (delta == 0)
		return DB_OK;
	return db_event(db, p->agent_id, EV_REPUTATION_CHANGED, now,
	    "{\"from\":%d,\"to\":%d,\"cause\":\"%s\",\"study_id\":\"%s\","
	    "\"participation_id\":\"%s\"}", from, from + delta,
	    rep_causes[ev] != NULL ? rep_causes[ev] : "other", p->study_id, p->id);
}

/*
 * The events of one participation transition, in the order of
 * design.md §11: the participation's state, then the reputation, then the money; and
 * the researcher's submission.created.
 */
static enum db_rc
part_events(struct db *db, const struct study *s, const struct participation *p,
    const struct part_result *pr, int rep_from, int rep_delta, int64_t now)
{
	enum event_type t = pr->changed ? part_event_type(pr->to) : EV__MAX;
	enum db_rc rc;

	/* a rejection says its category when the researcher gave one */
	if (t == EV_PART_REJECTED && p->category[0] != '\0') {
		if ((rc = db_event(db, p->agent_id, t, now,
		    "{\"study_id\":\"%s\",\"participation_id\":\"%s\",\"status\":\"%s\","
		    "\"category\":\"%s\"}", p->study_id, p->id, part_state_name(pr->to),
		    p->category)) != DB_OK)
			return rc;
	} else if (t != EV__MAX && (rc = db_event(db, p->agent_id, t, now,
	    "{\"study_id\":\"%s\",\"participation_id\":\"%s\",\"status\":\"%s\"}",
	    p->study_id, p->id, part_state_name(pr->to))) != DB_OK)
		return rc;
	if ((rc = rep_event(db, p, pr->rep, rep_from, rep_delta, now)) != DB_OK)
		return rc;
	if (pr->money == LEDGER_EV_APPROVE && (rc = db_event(db, p->agent_id, EV_WALLET_CREDITED,
	    now, "{\"amount_cents\":%lld,\"cause\":\"earning\",\"study_id\":\"%s\","
	    "\"participation_id\":\"%s\"}", (long long)s->reward, p->study_id, p->id)) != DB_OK)
		return rc;
	if (pr->money == LEDGER_EV_SCREEN_OUT && s->screen_out > 0 && (rc = db_event(db,
	    p->agent_id, EV_WALLET_CREDITED, now, "{\"amount_cents\":%lld,\"cause\":"
	    "\"screen_out\",\"study_id\":\"%s\",\"participation_id\":\"%s\"}",
	    (long long)s->screen_out, p->study_id, p->id)) != DB_OK)
		return rc;
	if (t == EV_PART_SUBMITTED)
		return db_event(db, s->researcher_id, EV_SUBMISSION_CREATED, now,
		    "{\"study_id\":\"%s\",\"participation_id\":\"%s\","
		    "\"participant_id\":\"%s\"}", s->id, p->id, p->participant_id);
	return DB_OK;
}

/*
 * Persist a participation transition on locked rows: reputation (agent
 * lock), money (wallet locks), the slot, the row and its timestamps; then
 * the FULL check.  *p is updated in place.
 */
static enum db_rc
apply_part_full(struct db *db, struct study *s, struct participation *p,
    const struct part_result *pr, const char *reason, const char *category, int64_t now,
    int *rep_delta, int full_check)
{
	int64_t started = 0, submitted = 0, reviewed = 0, ended = 0, slot;
	int rep_from, shrink = 0;
	enum db_rc rc;

	/* p->reputation: the agent's score now, when the event read it */
	if ((rc = apply_rep(db, p->agent_id, pr->rep, rep_delta, &rep_from, &p->reputation)) !=
	    DB_OK)
		return rc;
	if (pr->money == LEDGER_EV_SCREEN_OUT) {
		if ((rc = book_screen_out(db, s, p->agent_id, now, &shrink)) != DB_OK)
			return rc;
	} else if (pr->money != LEDGER_EV_NONE) {
		if ((rc = book(db, s, p->agent_id, pr->money, 0, 0, now)) != DB_OK)
			return rc;
		slot = s->reward + s->fee;
		rc = pr->money == LEDGER_EV_APPROVE ? study_money(db, s->id, slot, slot, 0, 0)
		    : study_money(db, s->id, slot, 0, slot, 0);
		if (rc != DB_OK)
			return rc;
	}
	if (!pr->changed)
		return part_events(db, s, p, pr, rep_from, *rep_delta, now);
	if (part_occupies_slot(p->state) && !part_occupies_slot(pr->to)) {
		uint64_t n = 0;
		if ((rc = db_study_occupied_dec(db, s->id, &n)) != DB_OK)
			return rc;
		if (n != 1)
			return DB_ERR;
		s->occupied--;
	}
	if (shrink) {	/* the screen-out's place is not funded again: it leaves */
		uint64_t n = 0;
		if ((rc = db_study_shrink(db, s->id, &n)) != DB_OK)
			return rc;
		if (n != 1)
			return DB_ERR;
		s->max_participants--;
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
	case PART_SCREENED_OUT:
		reviewed = ended = now;
		break;
	case PART_WITHDRAWN:
	case PART_TIMED_OUT:
		ended = now;
		break;
	default:
		break;
	}
	if ((rc = db_participation_state_set(db, p->id, pr->to, started, submitted, reviewed, ended,
	    reason, category)) != DB_OK)
		return rc;
	if (category != NULL)
		snprintf(p->category, sizeof p->category, "%s", category);
	p->state = pr->to;
	if (started && p->started_at == 0)
		p->started_at = started;
	if (submitted)
		p->submitted_at = submitted;
	if (reviewed)
		p->reviewed_at = reviewed;
	if (ended)
		p->ended_at = ended;
	if (reason != NULL) {	/* as the row's COALESCE(?, reason) */
		char *d = strdup(reason);

		if (d == NULL)
			return DB_ERR;
		free(p->reason);
		p->reason = d;
	}
	if ((rc = part_events(db, s, p, pr, rep_from, *rep_delta, now)) != DB_OK)
		return rc;
	/* A row that is still worked (accepted -> in_progress) keeps the
	 * study from being full: check_full's probe would find it. */
	if (part_is_active(p->state) || !full_check)
		return DB_OK;
	return check_full(db, s, now);
}

static enum db_rc
apply_part(struct db *db, struct study *s, struct participation *p,
    const struct part_result *pr, const char *reason, const char *category, int64_t now,
    int *rep_delta)
{
	return apply_part_full(db, s, p, pr, reason, category, now, rep_delta, 1);
}

enum db_rc
txn_study_create(struct db *db, const struct study_new *in, int64_t now, char id_out[IDS_BUFSZ],
    enum arps_err *outcome)
{
	const char *party[LEDGER_P__MAX] = { 0 };
	struct ledger_in li = { 0 };
	struct ledger_entry le;
	unsigned char h[32];
	int64_t avail, frozen;
	enum arps_err verdict;
	enum db_rc rc;

	*outcome = ARPS_E_INTERNAL;
	id_out[0] = '\0';
	if ((rc = db_wallet_lock_create(db, in->researcher_id, &avail, &frozen)) != DB_OK)
		return rc == DB_NOTFOUND ? DB_ERR : rc;
	li.ev = LEDGER_EV_CREATE_STUDY;
	li.reward = in->plan.reward;
	li.fee = in->plan.fee;
	li.slots = in->plan.max_participants;
	li.available = avail;
	if ((verdict = ledger_build(&li, &le)) != ARPS_OK) {
		*outcome = verdict == ARPS_E_OVERFLOW ? ARPS_E_VALIDATION : verdict;
		return DB_OK;
	}
	if (ids_new(IDS_STUDY, &secret_rng, id_out) != ARPS_OK)
		return DB_ERR;
	rc = db_study_insert(db, id_out, in, now);
	if (rc != DB_OK)
		return rc == DB_DUP ? DB_RETRY : rc;	/* an id clash: retry afresh */
	crypto_generichash(h, sizeof h, (const unsigned char *)in->criteria, strlen(in->criteria),
	    NULL, 0);
	if ((rc = db_embedding_insert(db, id_out, h, now)) != DB_OK)
		return rc;
	if (study_new_has_elig(in) && (rc = db_study_elig_set(db, id_out, in->elig)) != DB_OK)
		return rc;
	if ((rc = db_study_codes_insert(db, id_out, in->codes)) != DB_OK)
		return rc;
	party[LEDGER_P_RESEARCHER] = in->researcher_id;
	if ((rc = db_ledger_post(db, &le, party, id_out, LEDGER_EV_CREATE_STUDY, NULL, now)) != DB_OK)
		return rc;
	*outcome = ARPS_OK;
	return DB_OK;
}

enum db_rc
txn_study_event(struct db *db, const char *study_id, const char *owner, enum study_event ev,
    int64_t now, struct study *after, enum arps_err *outcome)
{
	struct study s;
	struct study_result res;
	int64_t amount = 0;
	enum arps_err verdict;
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
	verdict = study_transition(s.state, ev, s.max_participants, &s.counts, &res);
	if (verdict == ARPS_OK && ev == STUDY_EV_DEADLINE &&
	    !study_deadline_passed(s.has_deadline, s.deadline, now))
		verdict = ARPS_E_INVALID_STATE;
	if (verdict != ARPS_OK) {
		*outcome = verdict;
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
txn_study_close(struct db *db, const char *study_id, enum study_event ev, int64_t now,
    enum arps_err *outcome)
{
	if (ev != STUDY_EV_STOP && ev != STUDY_EV_DEADLINE && ev != STUDY_EV_FULL) {
		*outcome = ARPS_E_INTERNAL;
		return DB_ERR;
	}
	return txn_study_event(db, study_id, NULL, ev, now, NULL, outcome);
}

enum db_rc
txn_study_complete(struct db *db, const char *study_id, int64_t now, enum arps_err *outcome)
{
	return txn_study_event(db, study_id, NULL, STUDY_EV_COMPLETE, now, NULL, outcome);
}

enum db_rc
txn_study_accept(struct db *db, const struct config *cfg, const char *study_id,
    const char *agent_id, const struct agent_current *seen, int64_t now, struct study *s,
    struct participation *p, enum arps_err *outcome)
{
	struct accept_facts f;
	struct agent_current cur;
	struct agent a;
	uint64_t n = 0;
	enum arps_err verdict;
	int took;
	enum db_rc rc;

	*outcome = ARPS_E_INTERNAL;
	memset(s, 0, sizeof *s);
	memset(p, 0, sizeof *p);
	/* An active participation 24 h old is timed out first, as the sweep
	 * would, with the sweep's lock order (its study, the participation,
	 * the agent) before this study's lock.  A crossed transaction (a
	 * review of this agent's submission in this study) can deadlock with
	 * it; InnoDB picks a victim and db_tx runs it again.  What the
	 * request's authentication saw will do for that decision: a
	 * participation accepted since is not 24 h old, and the settle locks
	 * and checks the one it times out. */
	if (seen == NULL) {
		if ((rc = db_agent_current(db, agent_id, &cur)) != DB_OK)
			return rc;
		seen = &cur;
	}
	if (seen->participation_id[0] != '\0' && part_timeout_due(seen->accepted_at, now)) {
		struct settle_out so;

		rc = txn_participation_settle(db, seen->participation_id, NULL, PART_EV_TIMEOUT, NULL,
		    now, &so);
		db_participation_clear(&so.p);
		if (rc != DB_OK)
			return rc;
	}
	/* The row alone: the "full" check reads the occupied column. */
	if ((rc = db_study_get_row(db, study_id, 1, s)) == DB_NOTFOUND) {
		*outcome = ARPS_E_NOT_FOUND;
		return DB_OK;
	}
	if (rc != DB_OK)
		return rc;
	if ((rc = db_agent_get(db, agent_id, 1, &a)) != DB_OK)
		return rc == DB_NOTFOUND ? DB_ERR : rc;
	if ((rc = db_agent_current_in(db, agent_id, study_id, &cur, &took)) != DB_OK)
		return rc;
	/* An agent the study's eligibility leaves out does not see it: as an
	 * unknown study (design.md §14), read now under the study's lock. */
	if (!took && s->eligibility) {
		int ok = 0;

		if ((rc = db_study_eligible(db, study_id, agent_id, &ok)) != DB_OK)
			return rc == DB_NOTFOUND ? DB_ERR : rc;
		if (!ok) {
			*outcome = ARPS_E_NOT_FOUND;
			return DB_OK;
		}
	}
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
	f.own_study = f.agent_claimed && strcmp(a.account_id, s->researcher_id) == 0;
	if ((verdict = study_accept_check(&f)) != ARPS_OK) {
		*outcome = verdict;
		return DB_OK;
	}
	if ((rc = db_study_occupied_inc(db, study_id, &n)) != DB_OK)
		return rc;
	if (n != 1) {
		*outcome = ARPS_E_STUDY_FULL;
		return DB_OK;
	}
	s->occupied++;
	/* The last slot taken: the study is full (accepting is 409 STUDY_FULL
	 * until a slot reopens); the researcher hears it now, not when the
	 * last participant has submitted and the study closes. */
	if (s->occupied == s->max_participants &&
	    (rc = db_event(db, s->researcher_id, EV_STUDY_FULL, now,
	    "{\"study_id\":\"%s\",\"max_participants\":%lld}", s->id,
	    (long long)s->max_participants)) != DB_OK)
		return rc;
	if (ids_new(IDS_PARTICIPATION, &secret_rng, p->id) != ARPS_OK)
		return DB_ERR;
	snprintf(p->study_id, sizeof p->study_id, "%s", study_id);
	snprintf(p->agent_id, sizeof p->agent_id, "%s", agent_id);
	secret_anon_id(cfg, study_id, agent_id, p->participant_id);
	p->state = PART_ACCEPTED;
	p->accepted_at = now;
	rc = db_participation_insert(db, p->id, study_id, agent_id, p->participant_id, now);
	if (rc == DB_DUP)
		return DB_RETRY;	/* unreachable under the locks; re-check afresh */
	if (rc != DB_OK)
		return rc;
	if ((rc = db_event(db, agent_id, EV_PART_ACCEPTED, now,
	    "{\"study_id\":\"%s\",\"participation_id\":\"%s\",\"status\":\"accepted\"}",
	    study_id, p->id)) != DB_OK)
		return rc;
	*outcome = ARPS_OK;
	return DB_OK;
}

/*
 * What a completion code's row does after the submission (design.md §14):
 * its action's event on the submitted participation *p (taken over and
 * given back), then add_to_group.  Under the study's lock, as a review.
 */
static enum db_rc
code_action(struct db *db, const struct config *cfg, struct study *s, struct participation *p,
    const struct study_code *row, int64_t now)
{
	struct settle_out so;
	struct group g;
	char psn[PSN_BUFSZ];
	const char *reason = NULL, *category = NULL;
	int pev, added;
	enum db_rc rc = DB_OK;

	if (code_action_event(row->action, &pev)) {
		if (pev == PART_EV_APPROVE)
			reason = "approved by completion code";
		else if (pev == PART_EV_REJECT) {
			reason = "rejected by completion code";
			category = part_reject_cat_name(PART_CAT_FAILED_CHECK);
		} else
			reason = "screened out by completion code";
		memset(&so, 0, sizeof so);
		so.p = *p;
		memset(p, 0, sizeof *p);
		rc = txn_participation_settle_locked(db, s, (enum part_event)pev, reason, category,
		    now, &so);
		*p = so.p;
		if (rc != DB_OK)
			return rc;
		if (so.outcome != ARPS_OK)
			return DB_ERR;	/* a submitted row refuses none of them */
	}
	if (row->group[0] == '\0')
		return DB_OK;
	/* a group deleted since: nothing to add to */
	if ((rc = db_group_get(db, row->group, s->researcher_id, 1, &g)) == DB_NOTFOUND)
		return DB_OK;
	if (rc != DB_OK)
		return rc;
	db_group_clear(&g);
	secret_pseudonym(cfg, s->researcher_id, p->agent_id, psn);
	return db_group_member_add(db, row->group, p->agent_id, psn, now, &added);
}

enum db_rc
txn_participation_agent_event(struct db *db, const struct config *cfg, const char *study_id,
    const char *agent_id, enum part_event ev, const char *code, int64_t now,
    struct participation *p, struct study *s_out, enum arps_err *outcome)
{
	struct part_result pr;
	struct study_code row;
	struct study s;
	enum arps_err verdict;
	int took, delta, code_ok, from, has_row = 0;
	enum db_rc rc;

	*outcome = ARPS_E_INTERNAL;
	memset(p, 0, sizeof *p);
	if (s_out != NULL)
		memset(s_out, 0, sizeof *s_out);
	if (ev != PART_EV_OPEN && ev != PART_EV_COMPLETE && ev != PART_EV_WITHDRAW)
		return DB_ERR;
	/* The study row alone (the "full" check reads the occupied column,
	 * so no count of the study's participations: one scan per request
	 * under the study lock, growing with the study), then the agent's
	 * participation, locked in that order by one statement. */
	if ((rc = db_study_part_by_agent_lock(db, study_id, agent_id, &s, p, &took)) ==
	    DB_NOTFOUND) {
		*outcome = ARPS_E_NOT_FOUND;
		return DB_OK;
	}
	if (rc != DB_OK)
		return rc;
	if (!took) {
		*outcome = ARPS_E_NO_ACTIVE_PARTICIPATION;
		goto out;
	}
	/* Past its 24 h an active participation is timed out here, exactly as
	 * the sweep's next run would do it (same guard, same locks): a
	 * submission or a withdrawal then comes too late, and the agent's own
	 * look at the study shows it timed out. */
	if (part_is_active(p->state) && part_timeout_due(p->accepted_at, now)) {
		if ((verdict = part_transition(p->state, PART_EV_TIMEOUT, true, &pr)) != ARPS_OK) {
			*outcome = verdict;
			goto out;
		}
		if ((rc = apply_part(db, &s, p, &pr, NULL, NULL, now, &delta)) != DB_OK)
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
	/* the code's row (design.md §14): a code not in the study's list is
	 * a wrong one */
	if (ev == PART_EV_COMPLETE && s.needs_code && code != NULL && part_is_active(p->state)) {
		if ((rc = db_study_code_find(db, s.id, code, &row)) == DB_OK)
			has_row = 1;
		else if (rc != DB_NOTFOUND)
			goto out;
		rc = DB_OK;
	}
	code_ok = !s.needs_code || has_row;
	verdict = part_transition(p->state, ev, code_ok != 0, &pr);
	if (verdict == ARPS_E_NO_ACTIVE_PARTICIPATION && p->state == PART_TIMED_OUT)
		verdict = ARPS_E_TIMED_OUT;	/* timed out before: say so */
	/* No code at all where the study has one is a malformed call, not a
	 * wrong guess: refused without the -5, nothing written (design.md §5.1). */
	if (verdict == ARPS_E_INVALID_SUBMISSION && code == NULL) {
		*outcome = ARPS_E_CODE_REQUIRED;
		goto out;
	}
	if (verdict == ARPS_E_INVALID_SUBMISSION) {
		if ((rc = apply_rep(db, agent_id, pr.rep, &delta, &from, NULL)) == DB_OK)
			rc = rep_event(db, p, pr.rep, from, delta, now);
		*outcome = verdict;
		goto out;
	}
	if (verdict != ARPS_OK) {
		*outcome = verdict;
		goto out;
	}
	/* an action after the submission: the study's full check waits for
	 * it (a screen-out frees the slot) */
	if ((rc = apply_part_full(db, &s, p, &pr, NULL, NULL, now, &delta, !has_row)) != DB_OK)
		goto out;
	if (has_row && (rc = code_action(db, cfg, &s, p, &row, now)) != DB_OK)
		goto out;
	if (has_row && (rc = check_full(db, &s, now)) != DB_OK)
		goto out;
	*outcome = ARPS_OK;
out:
	if (s_out != NULL)
		*s_out = s;	/* the row as the event left it, handed over */
	else
		db_study_clear(&s);
	return rc;
}

enum db_rc
txn_participation_settle(struct db *db, const char *prt_id, const char *owner,
    enum part_event ev, const char *reason, int64_t now, struct settle_out *out)
{
	struct study s;
	enum db_rc rc;

	memset(out, 0, sizeof *out);
	memset(&s, 0, sizeof s);
	out->outcome = ARPS_E_INTERNAL;
	/* The study id first (unlocked: it never changes), then lock in order. */
	if ((rc = db_participation_get(db, prt_id, 0, &out->p)) == DB_NOTFOUND) {
		out->outcome = ARPS_E_NOT_FOUND;
		return DB_OK;
	}
	if (rc != DB_OK)
		return rc;
	if ((rc = db_study_get_row(db, out->p.study_id, 1, &s)) != DB_OK)
		return rc == DB_NOTFOUND ? DB_ERR : rc;
	out->study_state = s.state;
	if (owner != NULL && strcmp(owner, s.researcher_id) != 0) {
		out->outcome = ARPS_E_NOT_FOUND;
		goto out;
	}
	db_participation_clear(&out->p);
	if ((rc = db_participation_get(db, prt_id, 1, &out->p)) != DB_OK) {
		if (rc == DB_NOTFOUND)
			rc = DB_ERR;
		goto out;
	}
	rc = txn_participation_settle_locked(db, &s, ev, reason, NULL, now, out);
out:
	db_study_clear(&s);
	return rc;
}

enum db_rc
txn_participation_settle_locked(struct db *db, struct study *s, enum part_event ev,
    const char *reason, const char *category, int64_t now, struct settle_out *out)
{
	struct part_result pr;
	enum arps_err verdict;
	enum db_rc rc;

	out->rep_delta = 0;
	out->rep_known = 0;
	out->money = LEDGER_EV_NONE;
	out->study_state = s->state;
	out->outcome = ARPS_E_INTERNAL;
	if (ev != PART_EV_APPROVE && ev != PART_EV_AUTO_APPROVE && ev != PART_EV_REJECT &&
	    ev != PART_EV_TIMEOUT && ev != PART_EV_SCREEN_OUT)
		return DB_ERR;
	if ((verdict = part_transition(out->p.state, ev, true, &pr)) != ARPS_OK) {
		out->outcome = verdict;
		return DB_OK;
	}
	if ((rc = apply_part(db, s, &out->p, &pr, reason, category, now, &out->rep_delta)) != DB_OK)
		return rc;
	out->money = pr.money;
	out->study_state = s->state;
	out->rep_known = rep_reads_agent(pr.rep);
	out->outcome = ARPS_OK;
	return DB_OK;
}

enum db_rc
txn_review(struct db *db, const char *study_id, const char *owner, const char *participant_id,
    enum part_event ev, const char *reason, const char *category, int64_t now,
    struct settle_out *out)
{
	struct participation p;
	struct study s;
	enum db_rc rc;
	int took;

	memset(out, 0, sizeof *out);
	out->outcome = ARPS_E_INTERNAL;
	if (ev != PART_EV_APPROVE && ev != PART_EV_REJECT)
		return DB_ERR;
	if (ev != PART_EV_REJECT)
		category = NULL;
	/* The locks of a settle in their order, each row read once: the
	 * study row (not its counts), then the participation, by one
	 * statement.  Another researcher's study: as none. */
	rc = db_study_part_by_anon_lock(db, study_id, participant_id, &s, &out->p, &took);
	if (rc == DB_NOTFOUND || (rc == DB_OK && strcmp(s.researcher_id, owner) != 0)) {
		db_participation_clear(&out->p);
		db_study_clear(&s);
		out->outcome = ARPS_E_NOT_FOUND;
		return DB_OK;
	}
	if (rc != DB_OK)
		return rc;	/* nothing kept */
	if (!took) {
		db_study_clear(&s);
		out->outcome = ARPS_E_NOT_FOUND;
		out->no_participant = 1;
		return DB_OK;
	}
	rc = txn_participation_settle_locked(db, &s, ev, reason, category, now, out);
	db_study_clear(&s);
	if (rc != DB_OK || out->outcome != ARPS_OK || out->rep_known)
		return rc;
	/* The row as the settle left it, with the agent's score (the tier
	 * shown), when the settle did not read it under its lock. */
	rc = db_participation_by_anon(db, study_id, participant_id, &p);
	if (rc != DB_OK)
		return rc == DB_NOTFOUND ? DB_ERR : rc;
	db_participation_clear(&out->p);
	out->p = p;
	out->rep_known = 1;
	return DB_OK;
}

enum db_rc
txn_cashout_request(struct db *db, const char *account_id, const char *wallet_id,
    int64_t amount, int64_t now, char id_out[IDS_BUFSZ], enum arps_err *outcome)
{
	const char *party[LEDGER_P__MAX] = { 0 };
	struct ledger_in li = { 0 };
	struct ledger_entry le;
	int64_t avail, frozen;
	enum db_rc rc;

	*outcome = ARPS_E_INTERNAL;
	id_out[0] = '\0';
	if ((rc = db_wallet_lock_create(db, wallet_id, &avail, &frozen)) != DB_OK)
		return rc == DB_NOTFOUND ? DB_ERR : rc;
	li.ev = LEDGER_EV_CASHOUT_REQUEST;
	li.amount = amount;
	li.available = avail;
	if ((*outcome = ledger_build(&li, &le)) != ARPS_OK)
		return DB_OK;
	*outcome = ARPS_E_INTERNAL;
	if (ids_new(IDS_CASHOUT, &secret_rng, id_out) != 0)
		return DB_ERR;
	party[LEDGER_P_WALLET] = wallet_id;
	if ((rc = db_cashout_insert(db, id_out, account_id, wallet_id, amount, now)) != DB_OK ||
	    (rc = db_ledger_post(db, &le, party, NULL, LEDGER_EV_CASHOUT_REQUEST,
	    "Cash-out requested (pending payment by the operator)", now)) != DB_OK)
		return rc;
	*outcome = ARPS_OK;
	return DB_OK;
}

enum db_rc
txn_study_update(struct db *db, const char *study_id, const char *owner,
    const struct study_patch *p, int64_t max_budget, int64_t now, struct study *after,
    const char **why, enum arps_err *outcome)
{
	const char *party[LEDGER_P__MAX] = { 0 };
	struct ledger_in li = { 0 };
	struct ledger_entry le;
	char changed[96] = "", desc[96];
	int64_t slot, budget, avail, frozen, extra = 0;
	enum db_rc rc;

	*outcome = ARPS_E_INTERNAL;
	*why = NULL;
	memset(after, 0, sizeof *after);
	if ((rc = db_study_get_row(db, study_id, 1, after)) == DB_NOTFOUND ||
	    (rc == DB_OK && strcmp(after->researcher_id, owner) != 0)) {
		*outcome = ARPS_E_NOT_FOUND;
		return DB_OK;
	}
	if (rc != DB_OK)
		return rc;
	if (after->state != STUDY_ACTIVE && after->state != STUDY_PAUSED) {
		*outcome = ARPS_E_INVALID_STATE;
		return DB_OK;
	}
	*outcome = ARPS_E_VALIDATION;
	if (p->has_deadline && (p->deadline <= now ||
	    (after->has_deadline && p->deadline <= after->deadline) || !after->has_deadline)) {
		*why = after->has_deadline ? "deadline: can only move later (after the current "
		    "deadline and in the future)" : "deadline: the study has none; it cannot get an "
		    "earlier end";
		return DB_OK;
	}
	if (p->max_participants > 0) {
		if (p->max_participants < after->max_participants) {
			*why = "max_participants: can only grow (never fewer places than published)";
			return DB_OK;
		}
		extra = p->max_participants - after->max_participants;
		if (money_add(after->reward, after->fee, &slot) != ARPS_OK ||
		    money_mul(p->max_participants, slot, &budget) != ARPS_OK ||
		    budget > max_budget) {
			*why = "max_participants: the budget max_participants x (reward + fee) exceeds "
			    "the per-study limit";
			return DB_OK;
		}
	}
	if (extra > 0) {
		if ((rc = db_wallet_lock(db, after->researcher_id, &avail, &frozen)) != DB_OK)
			return rc == DB_NOTFOUND ? DB_ERR : rc;
		li.ev = LEDGER_EV_CREATE_STUDY;
		li.reward = after->reward;
		li.fee = after->fee;
		li.slots = extra;
		li.available = avail;
		if ((*outcome = ledger_build(&li, &le)) != ARPS_OK)
			return DB_OK;	/* INSUFFICIENT_SC, or VALIDATION/OVERFLOW */
		party[LEDGER_P_RESEARCHER] = after->researcher_id;
		snprintf(desc, sizeof desc, "Study budget frozen for %lld more place%s",
		    (long long)extra, extra == 1 ? "" : "s");
		if (money_mul(extra, slot, &budget) != ARPS_OK)
			return DB_ERR;	/* under the whole budget, checked above */
		if ((rc = db_ledger_post(db, &le, party, after->id, LEDGER_EV_CREATE_STUDY, desc,
		    now)) != DB_OK ||
		    (rc = study_money(db, after->id, -budget, 0, 0, 0)) != DB_OK)
			return rc;
	}
	if ((rc = db_study_patch(db, after->id, p)) != DB_OK)
		return rc;
	snprintf(changed, sizeof changed, "%s%s%s%s", p->title ? ",\"title\"" : "",
	    p->description ? ",\"description\"" : "", p->has_deadline ? ",\"deadline\"" : "",
	    p->max_participants > 0 ? ",\"max_participants\"" : "");
	if ((rc = db_event(db, after->researcher_id, EV_STUDY_UPDATED, now,
	    "{\"study_id\":\"%s\",\"changed\":[%s]}", after->id,
	    changed[0] ? changed + 1 : "")) != DB_OK)
		return rc;
	*outcome = ARPS_OK;
	return DB_OK;
}
