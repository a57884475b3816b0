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
		"refund", "manual_topup", "external_cashout", "study_payment",
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
	r = get_as(u.hdr, "/api/v1/wallet/transactions?type=bonus");
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

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(agent_wallet),
		cmocka_unit_test(account_wallet),
		cmocka_unit_test(researcher_wallet_reconciles),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
