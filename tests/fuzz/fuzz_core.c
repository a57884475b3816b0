/* libFuzzer: every parser of client-supplied text in core/ must survive
 * any input and agree with itself (make fuzz). */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/ids.h"
#include "core/timefmt.h"
#include "core/validate.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1), buf[CLAIM_BUFSZ], out[TIMEFMT_BUFSZ];
	size_t nchars;
	int64_t t, v;

	if (s == NULL)
		return 0;
	memcpy(s, data, size);
	s[size] = '\0';
	(void)val_utf8(s, size, &nchars);
	(void)val_string(s, size, 1, 100);
	(void)val_url(s, size);
	(void)val_public_url(s, size, VAL_URL_HTTPS_ONLY | VAL_URL_LOOPBACK);
	(void)val_json_keys(s, size);
	(void)val_email(s, size);
	(void)val_parse_int64(s, size, INT64_MIN, INT64_MAX, &v);
	if (val_iso8601(s, size, &t) == 0) {
		/* what parses formats, and the formatted form parses to the same */
		int64_t back;
		if (timefmt_format(t, out) == 0 &&
		    (timefmt_parse(out, strlen(out), &back) != 0 || back != t))
			abort();
	}
	(void)apikey_check(s);
	(void)token_valid(s);
	(void)claim_code_valid(s);
	(void)claim_code_normalize(s, buf);
	(void)login_code_valid(s);
	(void)anon_id_valid(s);
	free(s);
	return 0;
}
