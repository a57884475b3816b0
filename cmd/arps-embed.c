/*
 * arps-embed: the embedding queue's worker (design.md §1.6, design.md §7.4).  It maps
 * the model, re-queues the vectors of another model, then in rounds embeds
 * the waiting texts (bios and study criteria, in db_embedding_pending's
 * order); with nothing waiting it looks again every `embed_poll_ms`.  The
 * FastCGI workers never run the encoder: they store a text as waiting and
 * answer.  It lowers its own priority (nice 10) under the pool's.
 * Usage: arps-embed [--config PATH] [--once].  --once: rounds until the
 * queue is empty, then exit 0 (tests, catching up).  SIGTERM or SIGINT: the
 * text in hand is finished, then exit 0.  Exit 2 on a bad configuration,
 * 1 when the model cannot be mapped or libsodium fails.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include <sodium.h>

#include "db/db.h"
#include "encoder/encoder.h"
#include "lib/config.h"
#include "lib/log.h"
#include "lib/secret.h"
#include "core/score.h"
#include "match/fanout.h"
#include "txn/embed.h"

#define ROUND_LIMIT 4		/* texts a round: a stop waits for at most these */

static struct config cfg;
static volatile sig_atomic_t stop;
static struct encoder enc;
static void *scratch;
static struct match_fanout_cfg fan;

/* study.matched of a new study (design.md §11): from the index of bio
 * vectors (match/fanout.c), before the store's transaction. */
static enum db_rc
pick(void *ctx, struct db *db, const float *vec, struct db_study_matches *sm)
{
	struct timespec t0, t1;
	enum db_rc rc;

	(void)ctx;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	rc = match_fanout_pick(db, &fan, (int64_t)time(NULL), vec, sm);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	if (rc == DB_OK)
		log_msg("study.matched: %zu agents picked of %zu indexed in %.1f ms", sm->n,
		    match_fanout_size(), (double)(t1.tv_sec - t0.tv_sec) * 1e3 +
		    (double)(t1.tv_nsec - t0.tv_nsec) / 1e6);
	return rc;
}

static void
on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static int
embed(void *ctx, enum embed_role role, const char *text, size_t len, float *out,
    const char **why)
{
	int rc;

	(void)ctx;
	rc = encoder_embed(&enc, role == EMBED_ROLE_BIO ? ENCODER_BIO : ENCODER_CRITERIA, text, len,
	    scratch, out);
	if (rc == ENCODER_EEMPTY)
		*why = "the text has no words the model knows";
	else if (rc != ENCODER_OK)
		*why = "the encoder refused the text";
	return rc == ENCODER_OK ? 0 : -1;
}

/* The model's tag: its name and the first 8 bytes of the file's BLAKE2b. */
static void
model_tag(char *out, size_t n, const char *name)
{
	unsigned char h[8];
	char hex[17];

	crypto_generichash(h, sizeof h, enc.base, enc.len, NULL, 0);
	sodium_bin2hex(hex, sizeof hex, h, sizeof h);
	snprintf(out, n, "%s/%s", name, hex);
}

int
main(int argc, char *argv[])
{
	struct embedder e = { 0 };
	struct sigaction sa;
	char err[1024], tag[64];
	struct db *db = NULL;
	int once = 0, requeued = 0, i;

	log_init("arps-embed");
	for (i = 1; i < argc; i++)
		if (strcmp(argv[i], "--once") == 0)
			once = 1;
	if (secret_init() != 0) {
		fprintf(stderr, "arps-embed: libsodium failed to initialise\n");
		return 1;
	}
	if (config_load(&cfg, config_path(argc, argv), err, sizeof err) != 0) {
		fprintf(stderr, "arps-embed: %s\n", err);
		return 2;
	}
	if (encoder_open(&enc, cfg.model_path) != ENCODER_OK) {
		fprintf(stderr, "arps-embed: cannot use the model %s: %s\n", cfg.model_path,
		    errno == EINVAL ? "not a model file" : strerror(errno));
		return 1;
	}
	/* Vectors are stored centred (design.md §7.3): the file must have means. */
	if (enc.mean_bio == NULL || enc.mean_crit == NULL) {
		fprintf(stderr, "arps-embed: the model %s has no calibration means (make model)\n",
		    cfg.model_path);
		return 1;
	}
	/* Every stored vector has the length the service ranks (core/score.h). */
	if (enc.dim != EMBED_DIM) {
		fprintf(stderr, "arps-embed: the model %s gives %u-dimensional vectors; this build"
		    " stores %d\n", cfg.model_path, enc.dim, EMBED_DIM);
		return 1;
	}
	if ((scratch = malloc(encoder_scratch_size(&enc))) == NULL) {
		fprintf(stderr, "arps-embed: out of memory\n");
		return 1;
	}
	model_tag(tag, sizeof tag, enc.name);
	e.model = tag;
	e.embed = embed;
	e.mean_bio = enc.mean_bio;
	e.mean_crit = enc.mean_crit;
	e.match = pick;
	fan.model = tag;
	fan.fanout = (size_t)cfg.matched_fanout;
	fan.first_access_minutes = cfg.first_access_minutes;
	fan.basic_max_studies = (size_t)cfg.basic_max_studies;
	/* Below the pool where no unit set it (the dev stack; the unit's
	 * Nice=10 comes first, and its system call filter refuses this). */
	(void)setpriority(PRIO_PROCESS, 0, 10);

	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_signal;	/* no SA_RESTART: the idle sleep ends at once */
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sa.sa_handler = SIG_IGN;
	sigaction(SIGPIPE, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	log_msg("embedding with %s", tag);

	while (!stop) {
		size_t flipped = 0, done = 0;
		enum db_rc rc = DB_GONE;

		if (db == NULL && (db = db_open(&cfg)) == NULL) {
			fprintf(stderr, "arps-embed: out of memory\n");
			return 1;
		}
		if (db_ensure(db) == DB_OK && !requeued) {
			/* another model's vectors out of the ranking at once */
			if ((rc = txn_embed_flip_all(db, &e, &flipped)) == DB_OK) {
				requeued = 1;
				if (flipped > 0)
					log_msg("embed: %zu vectors of another model queued again", flipped);
			}
		}
		if (requeued && db_ensure(db) == DB_OK)
			rc = txn_embed_round(db, &e, (int64_t)time(NULL), ROUND_LIMIT, &flipped, &done);
		if (rc != DB_OK)
			log_msg("embed: round failed: %s", db_error(db));
		else {
			/* the study.matched whose time has come (design.md §11) */
			size_t released = 0;

			if ((rc = match_fanout_release(db, &fan, (int64_t)time(NULL), &released)) != DB_OK)
				log_msg("embed: releasing study.matched failed: %s", db_error(db));
			if (flipped > 0)
				log_msg("embed: %zu vectors of another model queued again", flipped);
		}
		if (rc == DB_OK && done > 0)
			continue;
		if (once) {
			if (rc != DB_OK) {
				db_close(db);
				return 1;
			}
			break;
		}
		{
			struct timespec ts = { cfg.embed_poll_ms / 1000,
			    (long)(cfg.embed_poll_ms % 1000) * 1000000L };

			if (rc != DB_OK)
				ts.tv_sec = 1, ts.tv_nsec = 0;
			nanosleep(&ts, NULL);
		}
	}
	db_close(db);
	encoder_close(&enc);
	free(scratch);
	return 0;
}
