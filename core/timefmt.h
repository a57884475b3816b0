/*
 * ISO 8601 / RFC 3339 UTC timestamps <-> int64 unix seconds, by pure
 * calendar arithmetic (proleptic Gregorian, no leap seconds, no libc time
 * functions).  Range: 0001-01-01T00:00:00Z .. 9999-12-31T23:59:59Z.
 * Convention of core/ (design.md §2.3, core/errors.h): enum arps_err, ARPS_OK
 * or the reason, or bool for a predicate; outputs written only on success.
 */
#ifndef ARPS_CORE_TIMEFMT_H
#define ARPS_CORE_TIMEFMT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "errors.h"

#define TIMEFMT_LEN	20	/* "YYYY-MM-DDTHH:MM:SSZ" */
#define TIMEFMT_BUFSZ	(TIMEFMT_LEN + 1)
#define TIMEFMT_MIN	INT64_C(-62135596800)	/* 0001-01-01T00:00:00Z */
#define TIMEFMT_MAX	INT64_C(253402300799)	/* 9999-12-31T23:59:59Z */

/* Write t as "YYYY-MM-DDTHH:MM:SSZ" (NUL-terminated) into out.  Returns
 * ARPS_OK, or ARPS_E_VALIDATION when t is outside TIMEFMT_MIN..MAX. */
enum arps_err	 timefmt_format(int64_t t, char out[TIMEFMT_BUFSZ]);
/*
 * Parse s[0..len) as ISO 8601 / RFC 3339 into *out (UTC seconds):
 * YYYY-MM-DD[(T|t| )HH:MM[:SS[.fraction]][Z|z|(+|-)HH[[:]MM]]].  A fraction
 * is truncated, an offset applied; no zone is UTC, a date alone its
 * midnight UTC.  Nothing else may follow.  Rejects impossible dates (Feb 30, Feb 29 of a
 * common year), hour 24, second 60, offsets beyond 23:59 and results
 * outside the range.  Returns ARPS_OK or ARPS_E_VALIDATION.
 */
enum arps_err	 timefmt_parse(const char *s, size_t len, int64_t *out);
/* Days since 1970-01-01 of a proleptic Gregorian date (no validation). */
int64_t		 timefmt_days_from_civil(int64_t y, int m, int d);
/* Date of a day count since 1970-01-01. */
void		 timefmt_civil_from_days(int64_t days, int64_t *y, int *m, int *d);
/* Days in month m (1..12) of year y; 0 for a bad month. */
int		 timefmt_days_in_month(int64_t y, int m);

#endif
