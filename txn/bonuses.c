/*
 * Bonuses (design.md §13): a batch is one transaction.  Locks, in
 * txn/lifecycle.c's order: the study row (level 1), no participation (a
 * submitted one never goes back, and a bonus does not change it), then
 * wallets (level 4) in owner-id order: the owner's account (acc_) before
 * every agent (agt_), the agents sorted, so each row's entry takes only
 * locks this transaction already holds.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/events.h"
#include "core/ids.h"
#include "core/ledger.h"
#include "db/events.h"
#include "db/ledger.h"
#include "db/studies.h"
#include "lib/secret.h"
#include "txn/bonuses.h"

/* Rows sorted by agent id (then request order), for the lock order. */
static const struct bonus_row *sort_base;

static int
by_agent(const void *a, const void *b)
{
	size_t i = *(const size_t *)a, j = *(const size_t *)b;
	int c = strcmp(sort_base[i].out.agent_id, sort_base[j].out.agent_id);

	return c != 0 ? c : (i < j ? -1 : i > j);
}

/* bonus.received for the row's agent: the reason as a JSON string. */
static enum db_rc
received(struct db *db, const struct bonus_row *b, int64_t now)
{
	char *reason;
	size_t n;
	enum db_rc rc;

	if (b->reason == NULL)
		return db_event(db, b->out.agent_id, EV_BONUS_RECEIVED, now,
		    "{\"study_id\":\"%s\",\"participation_id\":\"%s\",\"amount_cents\":%lld,"
		    "\"reason\":null}", b->out.study_id, b->out.prt_id, (long long)b->amount);
	n = strlen(b->reason) * 6 + 3;
	if ((reason = malloc(n)) == NULL)
		return DB_ERR;
	if (!event_json_str(b->reason, reason, n)) {
		free(reason);
		return DB_ERR;
	}
	rc = db_event(db, b->out.agent_id, EV_BONUS_RECEIVED, now,
	    "{\"study_id\":\"%s\",\"participation_id\":\"%s\",\"amount_cents\":%lld,"
	    "\"reason\":%s}", b->out.study_id, b->out.prt_id, (long long)b->amount, reason);
	free(reason);
	return rc;
}

enum db_rc
txn_bonus_pay(struct db *db, const char *study_id, const char *owner, int fee_bps,
    struct bonus_row *rows, size_t n, int64_t now, struct money_bonus_sum *sum,
    size_t *bad_row, enum arps_err *outcome)
{
	struct db_bonus_target *t = NULL;
	struct db_bonus *out = NULL;
	int64_t *amounts = NULL, *fees = NULL, avail, frozen;
	size_t *order = NULL, i;
	struct study s;
	enum arps_err verdict;
	enum db_rc rc;

	*outcome = ARPS_E_INTERNAL;
	*bad_row = 0;
	memset(sum, 0, sizeof *sum);
	if (n == 0 || n > MONEY_BONUS_ROWS)
		return DB_ERR;
	if ((rc = db_study_get_row(db, study_id, 1, &s)) == DB_NOTFOUND ||
	    (rc == DB_OK && strcmp(s.researcher_id, owner) != 0)) {
		db_study_clear(&s);
		*outcome = ARPS_E_NOT_FOUND;
		return DB_OK;
	}
	db_study_clear(&s);
	if (rc != DB_OK)
		return rc;
	if ((t = calloc(n, sizeof *t)) == NULL || (amounts = calloc(n, sizeof *amounts)) == NULL ||
	    (fees = calloc(n, sizeof *fees)) == NULL || (order = calloc(n, sizeof *order)) == NULL ||
	    (out = calloc(n, sizeof *out)) == NULL) {
		rc = DB_ERR;
		goto done;
	}
	for (i = 0; i < n; i++) {
		t[i].participant_id = rows[i].participant_id;
		amounts[i] = rows[i].amount;
	}
	if ((rc = db_bonus_targets(db, study_id, t, n)) != DB_OK)
		goto done;
	/* the rows in request order: the first bad one is named */
	for (i = 0; i < n; i++) {
		if (!t[i].found) {
			*outcome = ARPS_E_VALIDATION;
			*bad_row = i;
			goto done;
		}
		if (t[i].state != PART_SUBMITTED && t[i].state != PART_APPROVED &&
		    t[i].state != PART_REJECTED) {
			*outcome = ARPS_E_INVALID_STATE;
			*bad_row = i;
			goto done;
		}
	}
	if ((verdict = money_bonus_batch(amounts, n, fee_bps, fees, sum)) != ARPS_OK) {
		*outcome = ARPS_E_VALIDATION;
		goto done;
	}
	if ((rc = db_wallet_lock_create(db, owner, &avail, &frozen)) != DB_OK) {
		if (rc == DB_NOTFOUND)
			rc = DB_ERR;
		goto done;
	}
	if (avail < sum->total) {
		*outcome = ARPS_E_INSUFFICIENT_FUNDS;
		goto done;
	}
	for (i = 0; i < n; i++) {
		struct db_bonus *b = &rows[i].out;

		memset(b, 0, sizeof *b);
		snprintf(b->study_id, sizeof b->study_id, "%s", study_id);
		snprintf(b->prt_id, sizeof b->prt_id, "%s", t[i].prt_id);
		snprintf(b->participant_id, sizeof b->participant_id, "%s", t[i].participant_id);
		snprintf(b->agent_id, sizeof b->agent_id, "%s", t[i].agent_id);
		snprintf(b->researcher_id, sizeof b->researcher_id, "%s", owner);
		b->amount = rows[i].amount;
		b->fee = fees[i];
		b->reason = (char *)rows[i].reason;	/* borrowed: never freed here */
		b->created_at = now;
		if (ids_new(IDS_BONUS, &secret_rng, b->id) != ARPS_OK) {
			rc = DB_ERR;
			goto done;
		}
		order[i] = i;
	}
	sort_base = rows;
	qsort(order, n, sizeof *order, by_agent);
	/* the agents' wallets, in owner-id order (each once) */
	for (i = 0; i < n; i++) {
		const char *agent = rows[order[i]].out.agent_id;
		int64_t a, f;

		if (i > 0 && strcmp(agent, rows[order[i - 1]].out.agent_id) == 0)
			continue;
		if ((rc = db_wallet_lock_create(db, agent, &a, &f)) != DB_OK) {
			if (rc == DB_NOTFOUND)
				rc = DB_ERR;
			goto done;
		}
	}
	for (i = 0; i < n; i++) {
		struct bonus_row *r = &rows[order[i]];
		const char *party[LEDGER_P__MAX] = { 0 };
		struct ledger_in li = { 0 };
		struct ledger_entry le;

		li.ev = LEDGER_EV_BONUS;
		li.amount = r->amount;
		li.fee = r->out.fee;
		li.available = avail;
		if (ledger_build(&li, &le) != ARPS_OK) {
			rc = DB_ERR;	/* the sum was checked: cannot happen */
			goto done;
		}
		party[LEDGER_P_RESEARCHER] = owner;
		party[LEDGER_P_AGENT] = r->out.agent_id;
		if ((rc = db_ledger_post_entry(db, &le, party, study_id, LEDGER_EV_BONUS, NULL,
		    now, r->out.entry_id)) != DB_OK)
			goto done;
		avail -= r->amount + r->out.fee;
		if ((rc = received(db, r, now)) != DB_OK)
			goto done;
	}
	for (i = 0; i < n; i++)
		out[i] = rows[i].out;
	if ((rc = db_bonuses_insert(db, out, n)) != DB_OK ||
	    (rc = db_study_bonus_add(db, study_id, sum->amount)) != DB_OK)
		goto done;
	if ((rc = db_event(db, owner, EV_WALLET_DEBITED, now,
	    "{\"amount_cents\":%lld,\"cause\":\"bonus_payment\",\"study_id\":\"%s\","
	    "\"bonuses\":%zu}", (long long)sum->total, study_id, n)) != DB_OK)
		goto done;
	*outcome = ARPS_OK;
done:
	free(t);
	free(amounts);
	free(fees);
	free(order);
	free(out);	/* shallow copies: the reasons stay the caller's */
	return rc;
}
