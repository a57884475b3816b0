#include <stdlib.h>
#include <string.h>

#include "core/errors.h"
#include "core/participation.h"
#include "core/study.h"
#include "db/embeddings.h"
#include "db/events.h"
#include "db/studies.h"
#include "db/sweep.h"

#define EMBED_RETRY_AGE 60	/* embeddings still processing after a minute */

static const char q_timeouts[] =
    "SELECT id FROM participations WHERE status IN ('accepted', 'in_progress')"
    " AND accepted_at <= ? ORDER BY study_id, id LIMIT ?";
static const char q_auto[] =
    "SELECT id FROM participations WHERE status = 'submitted' AND submitted_at <= ?"
    " ORDER BY study_id, id LIMIT ?";
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

/* One batch: the ids due, moved in one transaction. */
struct batch {
	struct sweep *sw;
	struct dbres *ids;
	enum part_event pev;		/* participation jobs */
	enum study_event sev;		/* study jobs */
	int study;			/* 1: a study job */
	int complete;			/* 1: db_study_complete */
	size_t moved;
};

static enum db_rc
batch_tx(struct db *db, void *arg)
{
	struct batch *b = arg;
	enum db_rc rc = DB_OK;
	size_t i;

	b->moved = 0;
	for (i = 0; i < b->ids->nrows; i++) {
		const char *id = dbres_str(b->ids, i, DB_COL_ONLY);
		enum arps_err outcome = ARPS_E_INTERNAL;

		if (b->complete)
			rc = db_study_complete(db, id, b->sw->now, &outcome);
		else if (b->study)
			rc = db_study_close(db, id, b->sev, b->sw->now, &outcome);
		else {
			struct settle_out out;

			memset(&out, 0, sizeof out);
			rc = db_participation_settle(db, id, NULL, b->pev, NULL, b->sw->now, &out);
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
		rc = db_tx(sw->db, batch_tx, &b);
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

	return drain(sw, q_timeouts, sw->now - PART_TIMEOUT_SECONDS, &t, moved, batches);
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
		rc = db_embed_pending(sw->db, sw->enc, sw->scratch, sw->now, EMBED_RETRY_AGE,
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
