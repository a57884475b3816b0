/* ISO 8601 UTC formatting and parsing (see timefmt.h). */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "errors.h"
#include "timefmt.h"

int64_t
timefmt_days_from_civil(int64_t y, int m, int d)
{
	int64_t	 era, yoe, doy, doe;

	y -= m <= 2;
	era = (y >= 0 ? y : y - 399) / 400;
	yoe = y - era * 400;
	doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
	doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + doe - 719468;
}

void
timefmt_civil_from_days(int64_t z, int64_t *y, int *m, int *d)
{
	int64_t	 era, doe, yoe, doy, mp;

	z += 719468;
	era = (z >= 0 ? z : z - 146096) / 146097;
	doe = z - era * 146097;
	yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
	doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
	mp = (5 * doy + 2) / 153;
	*d = (int)(doy - (153 * mp + 2) / 5 + 1);
	*m = (int)(mp < 10 ? mp + 3 : mp - 9);
	*y = yoe + era * 400 + (*m <= 2);
}

int
timefmt_days_in_month(int64_t y, int m)
{
	static const int	 mdays[12] =
	    { 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31 };
	bool			 leap;

	if (m < 1 || m > 12)
		return 0;
	leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
	return mdays[m - 1] + (m == 2 && leap);
}

static void
put(char *p, int64_t v, int n)
{
	while (n-- > 0) {
		p[n] = (char)('0' + v % 10);
		v /= 10;
	}
}

enum arps_err
timefmt_format(int64_t t, char out[TIMEFMT_BUFSZ])
{
	int64_t	 days, secs, y;
	int	 m, d;

	if (out == NULL || t < TIMEFMT_MIN || t > TIMEFMT_MAX)
		return ARPS_E_VALIDATION;
	days = t / 86400;
	secs = t % 86400;
	if (secs < 0) {
		secs += 86400;
		days--;
	}
	timefmt_civil_from_days(days, &y, &m, &d);
	put(out, y, 4);
	out[4] = '-';
	put(out + 5, m, 2);
	out[7] = '-';
	put(out + 8, d, 2);
	out[10] = 'T';
	put(out + 11, secs / 3600, 2);
	out[13] = ':';
	put(out + 14, secs / 60 % 60, 2);
	out[16] = ':';
	put(out + 17, secs % 60, 2);
	out[19] = 'Z';
	out[20] = '\0';
	return ARPS_OK;
}

/* n digits at s[*i]; advances *i.  False if any is not a digit. */
static bool
digits(const char *s, size_t len, size_t *i, int n, int *v)
{
	*v = 0;
	if (len - *i < (size_t)n)
		return false;
	while (n-- > 0) {
		if (s[*i] < '0' || s[*i] > '9')
			return false;
		*v = *v * 10 + (s[(*i)++] - '0');
	}
	return true;
}

static bool
lit(const char *s, size_t len, size_t *i, char a, char b)
{
	if (*i >= len || (s[*i] != a && s[*i] != b))
		return false;
	(*i)++;
	return true;
}

enum arps_err
timefmt_parse(const char *s, size_t len, int64_t *out)
{
	size_t	 i = 0;
	int	 y, mo, d, h = 0, mi = 0, se = 0, oh = 0, om = 0, sign = 0;
	int64_t	 t;

	if (s == NULL || out == NULL)
		return ARPS_E_VALIDATION;
	if (!digits(s, len, &i, 4, &y) || !lit(s, len, &i, '-', '-') ||
	    !digits(s, len, &i, 2, &mo) || !lit(s, len, &i, '-', '-') ||
	    !digits(s, len, &i, 2, &d))
		return ARPS_E_VALIDATION;
	if (i == len)
		goto check;	/* a date alone: its midnight, UTC */
	if (!lit(s, len, &i, 'T', 't') && !lit(s, len, &i, ' ', ' '))
		return ARPS_E_VALIDATION;
	if (!digits(s, len, &i, 2, &h) || !lit(s, len, &i, ':', ':') ||
	    !digits(s, len, &i, 2, &mi))
		return ARPS_E_VALIDATION;
	if (lit(s, len, &i, ':', ':')) {
		if (!digits(s, len, &i, 2, &se))
			return ARPS_E_VALIDATION;
		if (i < len && s[i] == '.') {
			i++;
			if (i >= len || s[i] < '0' || s[i] > '9')
				return ARPS_E_VALIDATION;
			while (i < len && s[i] >= '0' && s[i] <= '9')
				i++;
		}
	}
	if (i == len)
		sign = 0;	/* no zone: UTC */
	else if (lit(s, len, &i, 'Z', 'z'))
		sign = 0;
	else if (i < len && (s[i] == '+' || s[i] == '-')) {
		sign = s[i++] == '-' ? -1 : 1;
		/* +HH:MM, +HHMM or +HH */
		if (!digits(s, len, &i, 2, &oh))
			return ARPS_E_VALIDATION;
		if (lit(s, len, &i, ':', ':')) {
			if (!digits(s, len, &i, 2, &om))
				return ARPS_E_VALIDATION;
		} else if (i < len && !digits(s, len, &i, 2, &om))
			return ARPS_E_VALIDATION;
	} else
		return ARPS_E_VALIDATION;
check:
	if (i != len)
		return ARPS_E_VALIDATION;
	if (y < 1 || d < 1 || d > timefmt_days_in_month(y, mo) ||
	    h > 23 || mi > 59 || se > 59 || oh > 23 || om > 59)
		return ARPS_E_VALIDATION;
	t = timefmt_days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + se;
	/* local = UTC + offset, so UTC = local - offset. */
	t -= (int64_t)sign * (oh * 3600 + om * 60);
	if (t < TIMEFMT_MIN || t > TIMEFMT_MAX)
		return ARPS_E_VALIDATION;
	*out = t;
	return ARPS_OK;
}
