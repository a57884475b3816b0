/* Wallet endpoints: balance and transactions, for agents and accounts. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "tests/api/study_helpers.h"

static void
agent_wallet(void **state)
{
	struct test_agent a;
	struct test_user owner;
	struct resp r;
	long long avail, frozen;

	(void)state;
	agent_new(&a, "saver");
	balance_of(a.hdr, &avail, &frozen);
	assert_int_equal(avail, 0);
	assert_int_equal(frozen, 0);
	r = get_as(a.hdr, "/api/v1/wallet/transactions");
	assert_int_equal(r.status, 200);
	assert_int_equal(json_object_array_length(jget(r.json, "transactions")), 0);
	assert_null(jget(r.json, "next_cursor"));
	resp_free(&r);
	user_login(&owner, "owner");
	agent_claim(&a, &owner);
	balance_of(a.hdr, &avail, &frozen);
	assert_int_equal(avail, 100);
	assert_int_equal(frozen, 0);
	r = get_as(a.hdr, "/api/v1/wallet/transactions");
	assert_int_equal(r.status, 200);
	assert_int_equal(json_object_array_length(jget(r.json, "transactions")), 1);
	assert_true(ids_valid(IDS_TRANSACTION, jgets(&r, "transactions.0.id")));
	assert_string_equal(jgets(&r, "transactions.0.type"), "signup_bonus");
	assert_int_equal(jgeti(&r, "transactions.0.amount_cents"), 100);
	assert_null(jget(r.json, "transactions.0.study_id"));
	assert_true(strlen(jgets(&r, "transactions.0.description")) > 0);
	assert_int_equal(strlen(jgets(&r, "transactions.0.created_at")), 20);
	resp_free(&r);
	/* the owner's wallet is its own: the bonus is the agent's */
	balance_of(owner.hdr, &avail, &frozen);
	assert_int_equal(avail, 0);
}

static void
account_wallet(void **state)
{
	static const char *const types[] = {
		"signup_bonus", "study_freeze", "platform_fee", "study_unfreeze", "earning",
		"refund", "manual_topup", "external_cashout", "study_payment", "cashout_request",
		"cashout_refund", "bonus_payment", "bonus",
	};
	struct test_user u;
	char cur[64], s[IDS_BUFSZ];
	struct resp r;
	long long avail, frozen;
	size_t i;

	(void)state;
	researcher(&u, 5000);
	assert_int_equal(admin(NULL, 0, "cashout %s 1000", u.id), 0);
	assert_int_equal(admin(NULL, 0, "cashout %s 999999", u.id), 1);
	study_new(&u, s, 100, 10, NULL);	/* 1100 frozen */
	balance_of(u.hdr, &avail, &frozen);
	assert_int_equal(avail, 5000 - 1000 - 1100);
	assert_int_equal(frozen, 1100);
	/* every type is a valid filter */
	for (i = 0; i < sizeof types / sizeof types[0]; i++) {
		r = get_as(u.hdr, "/api/v1/wallet/transactions?type=%s", types[i]);
		assert_int_equal(r.status, 200);
		resp_free(&r);
	}
	r = get_as(u.hdr, "/api/v1/wallet/transactions?type=external_cashout");
	assert_int_equal(json_object_array_length(jget(r.json, "transactions")), 1);
	assert_int_equal(jgeti(&r, "transactions.0.amount_cents"), -1000);
	resp_free(&r);
	r = get_as(u.hdr, "/api/v1/wallet/transactions?type=study_freeze");
	assert_int_equal(json_object_array_length(jget(r.json, "transactions")), 1);
	assert_int_equal(jgeti(&r, "transactions.0.amount_cents"), -1100);
	assert_string_equal(jgets(&r, "transactions.0.study_id"), s);
	resp_free(&r);
	r = get_as(u.hdr, "/api/v1/wallet/transactions?type=earning");
	assert_int_equal(json_object_array_length(jget(r.json, "transactions")), 0);
	resp_free(&r);
	/* pages of one, newest first: fee, freeze, cashout, top-up */
	{
		static const char *const order[] = { "platform_fee", "study_freeze",
		    "external_cashout", "manual_topup" };
		cur[0] = '\0';
		for (i = 0; i < 4; i++) {
			r = cur[0] ? get_as(u.hdr, "/api/v1/wallet/transactions?limit=1&cursor=%s", cur)
			    : get_as(u.hdr, "/api/v1/wallet/transactions?limit=1");
			assert_int_equal(r.status, 200);
			assert_int_equal(json_object_array_length(jget(r.json, "transactions")), 1);
			assert_string_equal(jgets(&r, "transactions.0.type"), order[i]);
			if (i < 3) {
				snprintf(cur, sizeof cur, "%s", jstr(&r, "next_cursor"));
				assert_true(cur[0] != '\0');
			} else
				assert_null(jget(r.json, "next_cursor"));
			resp_free(&r);
		}
	}
	r = get_as(u.hdr, "/api/v1/wallet/transactions?type=bonuses");
	assert_error(&r, 422, "VALIDATION_ERROR");
	resp_free(&r);
	r = get_as(u.hdr, "/api/v1/wallet/transactions?type=");
	assert_error(&r, 422, "VALIDATION_ERROR");
	resp_free(&r);
	r = get_as(u.hdr, "/api/v1/wallet/transactions?type=Refund");
	assert_error(&r, 422, "VALIDATION_ERROR");
	resp_free(&r);
	r = get_as(u.hdr, "/api/v1/wallet/transactions?limit=0");
	assert_error(&r, 422, "VALIDATION_ERROR");
	resp_free(&r);
	r = get_as(u.hdr, "/api/v1/wallet/transactions?limit=201");
	assert_error(&r, 422, "VALIDATION_ERROR");
	resp_free(&r);
	r = get_as(u.hdr, "/api/v1/wallet/transactions?cursor=-5");
	assert_error(&r, 422, "VALIDATION_ERROR");
	resp_free(&r);
	/* present but too long, or with a NUL: refused, not ignored */
	r = get_as(u.hdr, "/api/v1/wallet/transactions?limit=1111111111111111111111111111111111111111111111111111111111111111111111");
	assert_error(&r, 422, "VALIDATION_ERROR");
	resp_free(&r);
	r = get_as(u.hdr, "/api/v1/wallet/transactions?limit=1%%00");
	assert_error(&r, 422, "VALIDATION_ERROR");
	resp_free(&r);
	r = get_as(u.hdr, "/api/v1/wallet/transactions?cursor=");
	assert_error(&r, 422, "VALIDATION_ERROR");
	resp_free(&r);
	r = get_as(u.hdr, "/api/v1/wallet/transactions?type");
	assert_error(&r, 422, "VALIDATION_ERROR");
	resp_free(&r);
	r = get_as(NULL, "/api/v1/wallet/balance");
	assert_error(&r, 401, "UNAUTHORIZED");
	resp_free(&r);
	r = get_as("X-API-Key: arps_live_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
	    "/api/v1/wallet/transactions");
	assert_error(&r, 401, "UNAUTHORIZED");
	resp_free(&r);
	r = post_as(u.hdr, NULL, "/api/v1/wallet/balance");
	assert_error(&r, 405, "METHOD_NOT_ALLOWED");
	resp_free(&r);
}

/* The sums of a wallet's listed rows: those that move its available
 * balance (all but platform_fee and study_payment), and those that move its
 * total (docs/api.md §9). */
static void
rows_sums(const char *hdr, long long *avail, long long *total, long long *payments)
{
	static const char *const not_avail[] = { "platform_fee", "study_payment" };
	static const char *const total_types[] = { "signup_bonus", "earning", "manual_topup",
	    "external_cashout", "study_payment", "cashout_request", "cashout_refund" };
	struct json_object *v, *t;
	struct resp r = get_as(hdr, "/api/v1/wallet/transactions?limit=200");
	size_t i, k;

	assert_int_equal(r.status, 200);
	assert_null(jget(r.json, "next_cursor"));
	*avail = *total = *payments = 0;
	v = jget(r.json, "transactions");
	for (i = 0; i < json_object_array_length(v); i++) {
		const char *type;
		long long amt;
		int av = 1, tot = 0;

		t = json_object_array_get_idx(v, i);
		type = json_object_get_string(jget(t, "type"));
		amt = (long long)json_object_get_int64(jget(t, "amount_cents"));
		for (k = 0; k < sizeof not_avail / sizeof not_avail[0]; k++)
			av &= strcmp(type, not_avail[k]) != 0;
		for (k = 0; k < sizeof total_types / sizeof total_types[0]; k++)
			tot |= strcmp(type, total_types[k]) == 0;
		if (av)
			*avail += amt;
		if (tot)
			*total += amt;
		if (strcmp(type, "study_payment") == 0)
			*payments += amt;
	}
	resp_free(&r);
}

/* Every change of a wallet's total has a row on that wallet: an approval
 * books study_payment on the researcher's side (issue 37). */
static void
researcher_wallet_reconciles(void **state)
{
	struct test_user u, o1, o2;
	struct test_agent a, b;
	char s[IDS_BUFSZ], pid[32];
	long long avail, frozen, rav, rtot, pay;
	struct resp r;

	(void)state;
	researcher(&u, 10000);
	agent_claimed(&a, &o1, "paid");
	agent_claimed(&b, &o2, "rejected");
	study_new(&u, s, 500, 3, NULL);	/* slot 550, 1650 frozen */
	assert_int_equal(study_post(a.hdr, s, "accept", NULL), 200);
	assert_int_equal(study_post(a.hdr, s, "complete", NULL), 200);
	newest_participant(&u, s, pid);
	r = post_as(u.hdr, NULL, "/api/v1/studies/%s/participants/%s/approve", s, pid);
	assert_int_equal(r.status, 200);
	resp_free(&r);
	assert_int_equal(study_post(b.hdr, s, "accept", NULL), 200);
	assert_int_equal(study_post(b.hdr, s, "complete", NULL), 200);
	newest_participant(&u, s, pid);
	r = post_as(u.hdr, NULL, "/api/v1/studies/%s/participants/%s/reject", s, pid);
	assert_int_equal(r.status, 200);
	resp_free(&r);
	/* the approval is on the researcher's side: -(reward + fee), the study's */
	r = get_as(u.hdr, "/api/v1/wallet/transactions?type=study_payment");
	assert_int_equal(r.status, 200);
	assert_int_equal(json_object_array_length(jget(r.json, "transactions")), 1);
	assert_int_equal(jgeti(&r, "transactions.0.amount_cents"), -550);
	assert_string_equal(jgets(&r, "transactions.0.study_id"), s);
	assert_true(strlen(jgets(&r, "transactions.0.description")) > 0);
	resp_free(&r);
	balance_of(u.hdr, &avail, &frozen);
	assert_int_equal(avail, 10000 - 1650 + 550);	/* the rejection's refund */
	assert_int_equal(frozen, 550);			/* the third slot */
	rows_sums(u.hdr, &rav, &rtot, &pay);
	assert_int_equal(rav, avail);
	assert_int_equal(rtot, avail + frozen);
	assert_int_equal(pay, -550);
	/* stopped: the unused slot comes back; still reconciled */
	assert_int_equal(study_post(u.hdr, s, "stop", NULL), 200);
	balance_of(u.hdr, &avail, &frozen);
	assert_int_equal(frozen, 0);
	rows_sums(u.hdr, &rav, &rtot, &pay);
	assert_int_equal(rav, avail);
	assert_int_equal(rtot, avail + frozen);
	assert_int_equal(rtot, 10000 - 550);
	/* the agent's side is unchanged: earning only */
	rows_sums(a.hdr, &rav, &rtot, &pay);
	balance_of(a.hdr, &avail, &frozen);
	assert_int_equal(rav, avail);
	assert_int_equal(rtot, avail + frozen);
	assert_int_equal(pay, 0);
}

/* Cash-out requests: POST /wallet/cashouts (an account, or for one of its
 * agents) holds the money until arps-admin cashout-paid or cashout-refuse
 * settles it, once (docs/api.md §7.6 and api.md §9). */
static void
cashouts(void **state)
{
	struct test_user u, o, other;
	struct test_agent a;
	char kh[96], id1[IDS_BUFSZ], id2[IDS_BUFSZ], id3[IDS_BUFSZ], buf[64], out[512];
	long long avail, frozen, rav, rtot, pay;
	struct resp r;

	(void)state;
	researcher(&u, 5000);
	snprintf(kh, sizeof kh, "Idempotency-Key: cot-%s", u.id);
	r = http_req("POST", "/api/v1/wallet/cashouts", "{\"amount_cents\":1200}",
	    HDRS(u.hdr, kh), NULL);
	assert_int_equal(r.status, 201);
	snprintf(id1, sizeof id1, "%s", jstr(&r, "id"));
	assert_true(ids_valid(IDS_CASHOUT, id1));
	assert_string_equal(jstr(&r, "status"), "requested");
	assert_string_equal(jstr(&r, "wallet_id"), u.id);
	assert_int_equal(jint(&r, "amount_cents"), 1200);
	assert_null(jget(r.json, "settled_at"));
	resp_free(&r);
	/* the same key replays: one request, one debit */
	r = http_req("POST", "/api/v1/wallet/cashouts", "{\"amount_cents\":1200}",
	    HDRS(u.hdr, kh), NULL);
	assert_int_equal(r.status, 201);
	assert_string_equal(jstr(&r, "id"), id1);
	assert_non_null(resp_header(&r, "Idempotent-Replayed", buf, sizeof buf));
	resp_free(&r);
	balance_of(u.hdr, &avail, &frozen);
	assert_int_equal(avail, 5000 - 1200);
	assert_int_equal(frozen, 0);
	r = get_as(u.hdr, "/api/v1/wallet/transactions?type=cashout_request");
	assert_int_equal(json_object_array_length(jget(r.json, "transactions")), 1);
	assert_int_equal(jgeti(&r, "transactions.0.amount_cents"), -1200);
	resp_free(&r);
	/* more than available, nothing, a bad amount; agents cannot ask */
	r = post_as(u.hdr, "{\"amount_cents\":3801}", "/api/v1/wallet/cashouts");
	assert_error(&r, 402, "INSUFFICIENT_FUNDS");
	resp_free(&r);
	r = post_as(u.hdr, "{\"amount_cents\":0}", "/api/v1/wallet/cashouts");
	assert_error(&r, 422, "VALIDATION_ERROR");
	resp_free(&r);
	r = post_as(u.hdr, "{}", "/api/v1/wallet/cashouts");
	assert_error(&r, 422, "VALIDATION_ERROR");
	resp_free(&r);
	/* an owner cashes out its agent's earnings; another account cannot */
	agent_claimed(&a, &o, "earner");	/* 100 signup bonus */
	user_login(&other, "other");
	{
		char body[128];

		snprintf(body, sizeof body, "{\"amount_cents\":60,\"agent_id\":\"%s\"}", a.id);
		r = post_as(other.hdr, body, "/api/v1/wallet/cashouts");
		assert_error(&r, 404, "NOT_FOUND");
		resp_free(&r);
		r = post_as(a.hdr, body, "/api/v1/wallet/cashouts");
		assert_error(&r, 403, "FORBIDDEN");
		resp_free(&r);
		r = post_as(o.hdr, body, "/api/v1/wallet/cashouts");
		assert_int_equal(r.status, 201);
		assert_string_equal(jstr(&r, "wallet_id"), a.id);
		snprintf(id3, sizeof id3, "%s", jstr(&r, "id"));
		resp_free(&r);
	}
	balance_of(a.hdr, &avail, &frozen);
	assert_int_equal(avail, 40);
	r = get_as(o.hdr, "/api/v1/wallet/cashouts");
	assert_int_equal(r.status, 200);
	assert_int_equal(json_object_array_length(jget(r.json, "cashouts")), 1);
	assert_string_equal(jgets(&r, "cashouts.0.id"), id3);
	resp_free(&r);
	/* paid outside: once */
	assert_int_equal(admin(out, sizeof out, "cashout-paid %s BANK-REF-1", id1), 0);
	assert_int_equal(admin(NULL, 0, "cashout-paid %s BANK-REF-2", id1), 1);
	assert_int_equal(admin(NULL, 0, "cashout-refuse %s too-late", id1), 1);
	assert_int_equal(admin(NULL, 0, "cashout-paid cot_0000000000000000 X"), 1);
	balance_of(u.hdr, &avail, &frozen);
	assert_int_equal(avail, 3800);	/* paying moves nothing of the wallet */
	/* refused: the money returns, once */
	r = post_as(u.hdr, "{\"amount_cents\":500}", "/api/v1/wallet/cashouts");
	assert_int_equal(r.status, 201);
	snprintf(id2, sizeof id2, "%s", jstr(&r, "id"));
	resp_free(&r);
	balance_of(u.hdr, &avail, &frozen);
	assert_int_equal(avail, 3300);
	assert_int_equal(admin(NULL, 0, "cashout-refuse %s 'account details do not match'", id2), 0);
	assert_int_equal(admin(NULL, 0, "cashout-refuse %s again", id2), 1);
	assert_int_equal(admin(NULL, 0, "cashout-paid %s REF", id2), 1);
	balance_of(u.hdr, &avail, &frozen);
	assert_int_equal(avail, 3800);
	r = get_as(u.hdr, "/api/v1/wallet/transactions?type=cashout_refund");
	assert_int_equal(json_object_array_length(jget(r.json, "transactions")), 1);
	assert_int_equal(jgeti(&r, "transactions.0.amount_cents"), 500);
	resp_free(&r);
	/* listed to the requester, newest first, with how each was settled */
	r = get_as(u.hdr, "/api/v1/wallet/cashouts");
	assert_int_equal(r.status, 200);
	assert_int_equal(json_object_array_length(jget(r.json, "cashouts")), 2);
	assert_string_equal(jgets(&r, "cashouts.0.id"), id2);
	assert_string_equal(jgets(&r, "cashouts.0.status"), "refused");
	assert_string_equal(jgets(&r, "cashouts.0.reason"), "account details do not match");
	assert_null(jget(r.json, "cashouts.0.reference"));
	assert_string_equal(jgets(&r, "cashouts.1.id"), id1);
	assert_string_equal(jgets(&r, "cashouts.1.status"), "paid");
	assert_string_equal(jgets(&r, "cashouts.1.reference"), "BANK-REF-1");
	assert_non_null(jget(r.json, "cashouts.1.settled_at"));
	resp_free(&r);
	r = get_as(u.hdr, "/api/v1/wallet/cashouts?limit=1");
	assert_int_equal(json_object_array_length(jget(r.json, "cashouts")), 1);
	assert_non_null(jget(r.json, "next_cursor"));
	resp_free(&r);
	/* the wallet reconciles from its rows; the ledger holds */
	rows_sums(u.hdr, &rav, &rtot, &pay);
	balance_of(u.hdr, &avail, &frozen);
	assert_int_equal(rav, avail);
	assert_int_equal(rtot, avail + frozen);
	assert_int_equal(admin(NULL, 0, "verify-ledger"), 0);
	assert_int_equal(admin(NULL, 0, "cashout-refuse %s no", id3), 0);
	balance_of(a.hdr, &avail, &frozen);
	assert_int_equal(avail, 100);
	assert_int_equal(admin(NULL, 0, "verify-ledger"), 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(agent_wallet),
		cmocka_unit_test(account_wallet),
		cmocka_unit_test(researcher_wallet_reconciles),
		cmocka_unit_test(cashouts),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
