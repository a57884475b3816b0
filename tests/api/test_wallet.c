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
		"refund", "manual_topup", "external_cashout", "bonus_payment", "bonus",
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

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(agent_wallet),
		cmocka_unit_test(account_wallet),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
