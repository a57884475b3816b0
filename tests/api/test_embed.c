/*
 * The embedding queue (design.md §15): arps-embed, not the pool, embeds
 * bios and criteria; POST /profile/bio is limited per agent; only the
 * newest text of a subject is embedded; a model change re-embeds every
 * vector (tagged with the model) and ranking follows it; a text that keeps
 * failing is given up.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>
#include <sodium.h>

#include "core/score.h"
#include "tests/api/study_helpers.h"

#define BEES "I keep honey bees in a cold mountain valley and harvest my own honey every " \
	"autumn from several hives."
#define CLOCKS "I repair antique mechanical clocks and pocket watches in my small workshop " \
	"and collect old clockmaking tools."
#define BEES_CRIT "Beekeepers who keep several hives and harvest their own honey."
#define CLOCKS_CRIT "People who repair mechanical clocks or watches as a trade or hobby."

/* Re-embedding every vector of the database after a model change. */
#define SWITCH_WAIT_MS	300000

/* POST /profile/bio with text; the answer (caller frees). */
static struct resp
bio_post(const struct test_agent *a, const char *text)
{
	struct json_object *o = json_object_new_object();
	struct resp r;

	json_object_object_add(o, "bio", json_object_new_string(text));
	r = post_as(a->hdr, json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN),
	    "/api/v1/profile/bio");
	json_object_put(o);
	return r;
}

/* GET /profile/bio: its embedding_status into st, its bio into bio (may be NULL). */
static void
bio_get(const struct test_agent *a, char st[16], char *bio, size_t n)
{
	struct resp r = get_as(a->hdr, "/api/v1/profile/bio");

	assert_int_equal(r.status, 200);
	snprintf(st, 16, "%s", jstr(&r, "embedding_status"));
	if (bio != NULL)
		snprintf(bio, n, "%s", jstr(&r, "bio"));
	resp_free(&r);
}

/* The stored vector of subject (any status) into v; asserts it has one. */
static void
stored_vector(const char *subject, float v[EMBED_DIM])
{
	static char hex[EMBED_DIM * 8 + 16];
	unsigned char raw[EMBED_DIM * sizeof(float)];
	size_t got = 0;

	sql_str(hex, sizeof hex, "SELECT HEX(vector) FROM embeddings WHERE subject_id = '%s'",
	    subject);
	assert_int_equal(sodium_hex2bin(raw, sizeof raw, hex, strlen(hex), NULL, &got, NULL), 0);
	assert_int_equal(got, sizeof raw);
	memcpy(v, raw, sizeof raw);
}

static double
cosine(const float *a, const float *b)
{
	double ab = 0, aa = 0, bb = 0;
	size_t i;

	for (i = 0; i < EMBED_DIM; i++) {
		ab += (double)a[i] * b[i];
		aa += (double)a[i] * a[i];
		bb += (double)b[i] * b[i];
	}
	return ab / sqrt(aa * bb);
}

/* Create a study with these criteria (priority tier sees it at once). */
static void
study_with(const struct test_user *u, const char *criteria, char id[IDS_BUFSZ])
{
	struct json_object *o = json_object_new_object();
	struct resp r;

	json_object_object_add(o, "title", json_object_new_string("Embedding queue"));
	json_object_object_add(o, "description", json_object_new_string("A short study."));
	json_object_object_add(o, "study_url",
	    json_object_new_string("https://survey.example.org/s/embed"));
	json_object_object_add(o, "reward_per_participant", json_object_new_int(1));
	json_object_object_add(o, "max_participants", json_object_new_int(5));
	json_object_object_add(o, "screening_criteria", json_object_new_string(criteria));
	json_object_object_add(o, "estimated_duration_minutes", json_object_new_int(10));
	r = post_as(u->hdr, json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN),
	    "/api/v1/studies");
	json_object_put(o);
	assert_int_equal(r.status, 201);
	snprintf(id, IDS_BUFSZ, "%s", jstr(&r, "id"));
	resp_free(&r);
}

/* The rank (0-based, -1 absent) of study in a's GET /studies/available,
 * and its match.similarity into *sim. */
static long
rank_of(const struct test_agent *a, const char *study, double *sim)
{
	struct resp r = get_as(a->hdr, "/api/v1/studies/available?limit=100");
	struct json_object *arr, *it;
	long at = -1;
	size_t i;

	assert_int_equal(r.status, 200);
	arr = jget(r.json, "studies");
	for (i = 0; arr != NULL && i < json_object_array_length(arr); i++) {
		it = json_object_array_get_idx(arr, i);
		if (strcmp(json_object_get_string(jget(it, "id")), study) == 0) {
			at = (long)i;
			if (sim != NULL)
				*sim = json_object_get_double(jget(it, "match.similarity"));
			break;
		}
	}
	resp_free(&r);
	return at;
}

/* --- 1. POST /profile/bio is limited per agent --- */

static void
bio_limit(void **state)
{
	struct test_agent a, b;
	char text[128], st[16], bio[256], ra[32], *end;
	struct resp r;
	long retry;
	int i;

	(void)state;
	agent_new(&a, "bio-limit");
	agent_new(&b, "bio-limit-other");
	for (i = 1; i <= 10; i++) {
		snprintf(text, sizeof text, "Bio number %d: I grow tomatoes on a balcony.", i);
		r = bio_post(&a, text);
		assert_int_equal(r.status, 200);
		resp_free(&r);
	}
	r = bio_post(&a, "An eleventh bio, over the limit.");
	assert_error(&r, 429, "RATE_LIMITED");
	assert_non_null(resp_header(&r, "Retry-After", ra, sizeof ra));
	retry = strtol(ra, &end, 10);
	assert_true(end != ra && *end == '\0');
	assert_in_range(retry, 1, 3600);
	assert_non_null(strstr(jstr(&r, "detail"), "at most 10 bio updates per agent per hour"));
	resp_free(&r);
	/* the refused bio changed nothing */
	bio_get(&a, st, bio, sizeof bio);
	assert_string_equal(bio, "Bio number 10: I grow tomatoes on a balcony.");
	/* another agent has its own count */
	r = bio_post(&b, "I grow peppers in a greenhouse.");
	assert_int_equal(r.status, 200);
	resp_free(&r);
}

/* --- 5. the pool never embeds: a bio waits for arps-embed --- */

static void
pool_never_embeds(void **state)
{
	struct test_agent a;
	char st[16];
	int64_t t0;

	(void)state;
	agent_new(&a, "waits");
	embedder(0);
	agent_bio_set(&a, BEES);
	t0 = now_ms();
	while (now_ms() - t0 < 2500) {
		bio_get(&a, st, NULL, 0);
		if (strcmp(st, "processing") != 0) {
			embedder(1);
			fail_msg("bio %s with arps-embed stopped", st);
		}
		sleep_ms(100);
	}
	embedder(1);
	t0 = now_ms();
	do {
		bio_get(&a, st, NULL, 0);
		if (strcmp(st, "ready") == 0)
			break;
		assert_string_equal(st, "processing");
		sleep_ms(20);
	} while (now_ms() - t0 < 10000);
	assert_string_equal(st, "ready");
	print_message("ready %lld ms after arps-embed started\n", (long long)(now_ms() - t0));
}

/* --- 2. a newer text replaces one still waiting --- */

static void
newest_text_wins(void **state)
{
	struct test_agent a, ref_a, ref_b;
	unsigned char h[32];
	char want[65], got[80];
	float va[EMBED_DIM], vb[EMBED_DIM], v[EMBED_DIM];

	(void)state;
	agent_new(&ref_a, "ref-bees");
	agent_new(&ref_b, "ref-clocks");
	agent_bio_ready(&ref_a, BEES);
	agent_bio_ready(&ref_b, CLOCKS);
	agent_new(&a, "changes-mind");
	embedder(0);
	agent_bio_set(&a, BEES);
	agent_bio_set(&a, CLOCKS);
	embedder(1);
	embedding_ready(a.id);
	/* the row holds B's hash and B's vector: one try, of B */
	crypto_generichash(h, sizeof h, (const unsigned char *)CLOCKS, strlen(CLOCKS), NULL, 0);
	sodium_bin2hex(want, sizeof want, h, sizeof h);
	sql_str(got, sizeof got, "SELECT LOWER(HEX(text_hash)) FROM embeddings WHERE"
	    " subject_id = '%s'", a.id);
	assert_string_equal(got, want);
	assert_int_equal(sql_int("SELECT attempts FROM embeddings WHERE subject_id = '%s'", a.id),
	    1);
	stored_vector(ref_a.id, va);
	stored_vector(ref_b.id, vb);
	stored_vector(a.id, v);
	print_message("cosine to B %.4f, to A %.4f\n", cosine(v, vb), cosine(v, va));
	assert_true(cosine(v, vb) > 0.999);
	assert_true(cosine(v, va) < 0.9);
}

/* --- 4. a text the encoder keeps failing on is given up --- */

static void
failing_text_gives_up(void **state)
{
	struct test_agent a;
	char st[16], err[256];

	(void)state;
	agent_new(&a, "crashes");
	embedder(0);
	agent_bio_set(&a, CLOCKS);
	/* As if arps-embed had died EMBED_MAX_ATTEMPTS (3) times on this text
	 * (each try is counted before it starts): no text makes the BERT
	 * encoder fail, so the count is what the crashes would have left. */
	fixture("embedding-attempts %s 3", a.id);
	embedder(1);
	{
		int64_t t0 = now_ms();

		do {
			bio_get(&a, st, NULL, 0);
			if (strcmp(st, "processing") != 0)
				break;
			sleep_ms(50);
		} while (now_ms() - t0 < 10000);
	}
	assert_string_equal(st, "failed");
	sql_str(err, sizeof err, "SELECT error FROM embeddings WHERE subject_id = '%s'", a.id);
	assert_string_equal(err, "the encoder failed on this text");
	/* not tried again */
	assert_int_equal(sql_int("SELECT attempts FROM embeddings WHERE subject_id = '%s'", a.id),
	    3);
	/* a new bio starts afresh */
	agent_bio_ready(&a, BEES);
	assert_int_equal(sql_int("SELECT attempts FROM embeddings WHERE subject_id = '%s'", a.id),
	    1);
}

/* --- 3. a model change re-embeds every vector --- */

static char tag0[80];		/* the stack's model tag, to restore */

/* The one model tag of every ready vector into tag, once the queue is
 * empty (asserts both within ms). */
static void
settled_tag(char *tag, size_t n, long ms)
{
	assert_true(wait_sql(0, ms, "SELECT COUNT(*) FROM embeddings WHERE status = 'processing'"));
	sql_str(tag, n, "SELECT DISTINCT model FROM embeddings WHERE status = 'ready'");
	assert_null(strchr(tag, '|'));		/* one tag */
	assert_true(strncmp(tag, "bge-small-en-v1.5/", 18) == 0);
	assert_int_equal(strlen(tag), 18 + 16);
}

/* Whether a's listing shows study s with the similarity its stored
 * vectors give ((cosine + 1) / 2, design.md §7) on EVERY_WORKER answers:
 * no worker ranks with a vector of the model before. */
#define EVERY_WORKER	24
static void
ranks_with_stored(const struct test_agent *a, const char *s)
{
	float bio[EMBED_DIM], crit[EMBED_DIM];
	double want, sim = -1;
	int i;

	stored_vector(a->id, bio);
	stored_vector(s, crit);
	want = (cosine(bio, crit) + 1) / 2;
	for (i = 0; i < EVERY_WORKER; i++) {
		assert_true(rank_of(a, s, &sim) >= 0);
		if (fabs(sim - want) > 0.002)
			fail_msg("answer %d: similarity %.4f, the stored vectors give %.4f", i + 1,
			    sim, want);
	}
}

/* Back to the stack's own arps-embed and model, every vector its again. */
static int
restore_embedder(void **state)
{
	const char *var = getenv("ARPS_VAR");

	(void)state;
	embedder(0);
	embedder(1);
	if (tag0[0] != '\0' && !wait_sql(0, SWITCH_WAIT_MS, "SELECT COUNT(*) FROM embeddings"
	    " WHERE status = 'processing'"))
		print_error("the queue is not empty after restoring the model\n");
	(void)sh("rm -f %s/model-switch.bin %s/model-switch.conf", var, var);
	return 0;
}

static void
model_switch(void **state)
{
	const char *var = getenv("ARPS_VAR");
	struct test_agent x, y;
	struct test_user u, o;
	char sb[IDS_BUFSZ], sc[IDS_BUFSZ], tag1[80], st[16], q[256];
	long long ready0;
	long rb, rc;
	int seen = 0;
	int64_t t0;

	(void)state;
	assert_non_null(var);
	settled_tag(tag0, sizeof tag0, 60000);
	researcher(&u, 100000);
	study_with(&u, BEES_CRIT, sb);
	study_with(&u, CLOCKS_CRIT, sc);
	agent_claimed(&x, &o, "switch-bees");
	agent_set_reputation(x.id, 80);
	agent_bio_ready(&x, BEES);
	agent_new(&y, "switch-late");
	agent_bio_ready(&y, CLOCKS);	/* the newest row: re-embedded last */
	embedding_ready(sb);
	embedding_ready(sc);
	rb = rank_of(&x, sb, NULL);
	rc = rank_of(&x, sc, NULL);
	assert_true(rb >= 0 && (rc < 0 || rb < rc));
	ranks_with_stored(&x, sb);
	ready0 = sql_int("SELECT COUNT(*) FROM embeddings WHERE status = 'ready'");

	/* Another model: the stack's file with its calibration means (the
	 * last 2 x 384 floats, tools/model-means.c) zeroed, so vectors are
	 * stored uncentred: valid, another hash, other vectors. */
	assert_int_equal(sh("set -e; m=$(sed -n 's/^model_path *= *//p' %s/arps.conf);"
	    " cp \"$m\" %s/model-switch.bin; n=$(stat -c %%s %s/model-switch.bin);"
	    " test \"$(tail -c 3200 %s/model-switch.bin | head -c 8)\" = ARPSMEA1;"
	    " dd if=/dev/zero of=%s/model-switch.bin bs=1 seek=$((n - 3072)) count=3072"
	    " conv=notrunc status=none;"
	    " sed 's|^model_path *=.*|model_path = %s/model-switch.bin|' %s/arps.conf"
	    " > %s/model-switch.conf", var, var, var, var, var, var, var, var), 0);
	embedder(0);
	assert_int_equal(sh("%s/tools/dev.sh embed-start %s/model-switch.conf",
	    getenv("ARPS_ROOT"), var), 0);
	/* y's bio, the newest, waits behind every other: GET /profile/bio
	 * says processing until it is embedded again */
	snprintf(q, sizeof q, "SELECT status = 'ready' AND model <> '%s' FROM embeddings"
	    " WHERE subject_id = '%s'", tag0, y.id);
	t0 = now_ms();
	for (;;) {
		bio_get(&y, st, NULL, 0);
		if (strcmp(st, "processing") == 0)
			seen = 1;
		else
			assert_string_equal(st, "ready");
		if (sql_int("%s", q) == 1)
			break;
		if (now_ms() - t0 > SWITCH_WAIT_MS)
			fail_msg("bio of %s not embedded again after %d ms", y.id, SWITCH_WAIT_MS);
	}
	assert_true(seen);
	settled_tag(tag1, sizeof tag1, SWITCH_WAIT_MS);
	print_message("%s -> %s in %lld ms\n", tag0, tag1, (long long)(now_ms() - t0));
	assert_string_not_equal(tag1, tag0);
	/* every vector ready before is ready again, of the new model */
	assert_true(sql_int("SELECT COUNT(*) FROM embeddings WHERE status = 'ready'") >= ready0);
	/* the vectors did change (uncentred), and ranking follows them */
	rb = rank_of(&x, sb, NULL);
	rc = rank_of(&x, sc, NULL);
	assert_true(rb >= 0 && (rc < 0 || rb < rc));
	ranks_with_stored(&x, sb);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(bio_limit),
		cmocka_unit_test_teardown(pool_never_embeds, restore_embedder),
		cmocka_unit_test_teardown(newest_text_wins, restore_embedder),
		cmocka_unit_test_teardown(failing_text_gives_up, restore_embedder),
		cmocka_unit_test_teardown(model_switch, restore_embedder),
	};

	if (sodium_init() < 0)
		return 1;
	return cmocka_run_group_tests_name("api_embed", tests, NULL, NULL);
}
