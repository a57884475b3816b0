/* The operator's reads (arps-admin): the ledger's invariants. */
#include <stddef.h>

#include "db/admin.h"

/* Every invariant of design.md §4. */
enum check_col { CHECK_C_SUBJECT, CHECK_C_DETAIL };
static const struct check {
	const char *what;
	const char *sql;	/* rows returned are violations: (subject, detail) */
} checks[] = {
	{ "postings sum to zero",
	  "SELECT 'all', CAST(SUM(amount) AS CHAR) FROM ledger_postings HAVING SUM(amount) <> 0" },
	{ "every entry balances",
	  "SELECT entry_id, CAST(SUM(amount) AS CHAR) FROM ledger_postings GROUP BY entry_id"
	  " HAVING SUM(amount) <> 0" },
	{ "no balance is negative",
	  "SELECT owner_id, CONCAT(available_cents, '/', frozen_cents) FROM wallets"
	  " WHERE available_cents < 0 OR frozen_cents < 0" },
	{ "platform accounts never go negative where they must not",
	  "SELECT account, CAST(SUM(amount) AS CHAR) FROM ledger_postings"
	  " WHERE account IN ('platform:revenue', 'platform:cashouts') GROUP BY account"
	  " HAVING SUM(amount) < 0" },
	{ "platform:cashouts holds exactly the requested cash-outs",
	  "SELECT 'platform:cashouts', CONCAT('postings ', p.s, ' requested ', c.s) FROM"
	  " (SELECT COALESCE(SUM(amount), 0) s FROM ledger_postings"
	  "  WHERE account = 'platform:cashouts') p,"
	  " (SELECT COALESCE(SUM(amount_cents), 0) s FROM cashouts WHERE status = 'requested') c"
	  " WHERE p.s <> c.s" },
	{ "every wallet equals the sum of its postings",
	  "SELECT w.owner_id, CONCAT('wallet ', w.available_cents, '/', w.frozen_cents,"
	  " ' postings ', COALESCE(p.av, 0), '/', COALESCE(p.fr, 0)) FROM wallets w LEFT JOIN"
	  " (SELECT account, SUM(IF(sub = 'available', amount, 0)) av,"
	  "  SUM(IF(sub = 'frozen', amount, 0)) fr FROM ledger_postings"
	  "  WHERE sub <> 'platform' GROUP BY account) p ON p.account = w.owner_id"
	  " WHERE w.available_cents <> COALESCE(p.av, 0) OR w.frozen_cents <> COALESCE(p.fr, 0)" },
	{ "postings name existing wallets",
	  "SELECT DISTINCT p.account, 'no wallet' FROM ledger_postings p"
	  " LEFT JOIN wallets w ON w.owner_id = p.account"
	  " WHERE p.sub <> 'platform' AND w.owner_id IS NULL" },
	{ "each study's frozen remainder equals (reward + fee) x unsettled slots",
	  "SELECT s.id, CONCAT('frozen ', s.frozen_cents, ' expected ',"
	  " IF(s.status = 'completed', 0, (s.reward_cents + s.fee_cents) *"
	  " (s.max_participants - s.refunded_slots - COALESCE(x.settled, 0))))"
	  " FROM studies s LEFT JOIN (SELECT study_id, COUNT(*) settled FROM participations"
	  " WHERE status IN ('approved', 'rejected') GROUP BY study_id) x ON x.study_id = s.id"
	  " WHERE s.frozen_cents <> IF(s.status = 'completed', 0, (s.reward_cents + s.fee_cents) *"
	  " (s.max_participants - s.refunded_slots - COALESCE(x.settled, 0)))" },
	{ "each study's frozen remainder equals its frozen postings",
	  "SELECT s.id, CONCAT('study ', s.frozen_cents, ' postings ', COALESCE(p.fr, 0))"
	  " FROM studies s LEFT JOIN (SELECT study_id, SUM(amount) fr FROM ledger_postings"
	  " WHERE sub = 'frozen' AND study_id IS NOT NULL GROUP BY study_id) p ON p.study_id = s.id"
	  " WHERE s.frozen_cents <> COALESCE(p.fr, 0)" },
	{ "each wallet's frozen balance equals its studies' remainders",
	  "SELECT w.owner_id, CONCAT('wallet ', w.frozen_cents, ' studies ', COALESCE(s.fr, 0))"
	  " FROM wallets w LEFT JOIN (SELECT researcher_id, SUM(frozen_cents) fr FROM studies"
	  " GROUP BY researcher_id) s ON s.researcher_id = w.owner_id"
	  " WHERE w.frozen_cents <> COALESCE(s.fr, 0)" },
	{ "occupied slots match the participations",
	  "SELECT s.id, CONCAT('occupied ', s.occupied, ' counted ', COALESCE(x.n, 0))"
	  " FROM studies s LEFT JOIN (SELECT study_id, COUNT(*) n FROM participations"
	  " WHERE status IN ('accepted','in_progress','submitted','approved','rejected')"
	  " GROUP BY study_id) x ON x.study_id = s.id WHERE s.occupied <> COALESCE(x.n, 0)" },
	/* bonuses (design.md §13) */
	{ "each bonus's entry moves its amount to its agent and its fee to platform:revenue",
	  "SELECT b.id, CONCAT('amount ', b.amount_cents, ' fee ', b.fee_cents, ' postings ',"
	  " COALESCE(SUM(IF(p.account = b.agent_id AND p.sub = 'available', p.amount, 0)), 0), '/',"
	  " COALESCE(SUM(IF(p.account = 'platform:revenue', p.amount, 0)), 0), '/',"
	  " COALESCE(SUM(IF(p.account = b.researcher_id AND p.sub = 'available', p.amount, 0)), 0))"
	  " FROM bonuses b LEFT JOIN ledger_postings p ON p.entry_id = b.entry_id"
	  " GROUP BY b.id, b.amount_cents, b.fee_cents HAVING"
	  " COALESCE(SUM(IF(p.account = b.agent_id AND p.sub = 'available', p.amount, 0)), 0)"
	  "  <> b.amount_cents OR"
	  " COALESCE(SUM(IF(p.account = 'platform:revenue', p.amount, 0)), 0) <> b.fee_cents OR"
	  " COALESCE(SUM(IF(p.account = b.researcher_id AND p.sub = 'available', p.amount, 0)), 0)"
	  "  <> -(b.amount_cents + b.fee_cents)" },
	{ "every bonus posting belongs to a bonus",
	  "SELECT DISTINCT p.entry_id, 'no bonus row' FROM ledger_postings p"
	  " LEFT JOIN bonuses b ON b.entry_id = p.entry_id"
	  " WHERE p.event = 'bonus' AND b.id IS NULL" },
	{ "each study's bonus_cents equals its bonuses",
	  "SELECT s.id, CONCAT('study ', s.bonus_cents, ' bonuses ', COALESCE(x.amt, 0))"
	  " FROM studies s LEFT JOIN (SELECT study_id, SUM(amount_cents) amt FROM bonuses"
	  " GROUP BY study_id) x ON x.study_id = s.id WHERE s.bonus_cents <> COALESCE(x.amt, 0)" },
	/* a screen-out of 0 cents moves nothing and posts no entry */
	{ "each screened-out participant was paid once (design.md §14)",
	  "SELECT s.id, CONCAT('screened_out ', COALESCE(x.n, 0), ' payments ', COALESCE(p.n, 0))"
	  " FROM studies s LEFT JOIN (SELECT study_id, COUNT(*) n FROM participations"
	  " WHERE status = 'screened_out' GROUP BY study_id) x ON x.study_id = s.id"
	  " LEFT JOIN (SELECT study_id, COUNT(DISTINCT entry_id) n FROM ledger_postings"
	  " WHERE event IN ('screen_out', 'screen_out_shrink') GROUP BY study_id) p"
	  " ON p.study_id = s.id"
	  " WHERE IF(s.screen_out_cents > 0, COALESCE(x.n, 0), 0) <> COALESCE(p.n, 0)" },
	{ "every transaction belongs to a posted entry",
	  "SELECT t.id, 'no postings' FROM transactions t LEFT JOIN (SELECT DISTINCT entry_id"
	  " FROM ledger_postings) p ON p.entry_id = t.entry_id WHERE p.entry_id IS NULL" },
};

enum db_rc
db_ledger_verify(struct db *db, void (*each)(void *arg, const char *what, const char *subject,
    const char *detail), void *arg, size_t *ninvariants)
{
	struct dbres *res = NULL;
	enum db_rc rc;
	size_t i, j;

	*ninvariants = sizeof checks / sizeof checks[0];
	for (i = 0; i < sizeof checks / sizeof checks[0]; i++) {
		if ((rc = DB_Q0(db, checks[i].sql, &res, NULL)) != DB_OK)
			return rc;
		for (j = 0; j < res->nrows; j++)
			each(arg, checks[i].what, dbres_str(res, j, CHECK_C_SUBJECT),
			    dbres_str(res, j, CHECK_C_DETAIL));
		dbres_free(res);
	}
	return DB_OK;
}
