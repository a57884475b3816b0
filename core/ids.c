/*
 * Identifiers, API keys, tokens and short codes (see ids.h).
 * Unbiased sampling everywhere: random bytes outside the largest multiple
 * of the alphabet size are rejected and redrawn.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "errors.h"
#include "ids.h"
#include "names.h"

static const char b62[] =
    "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
static const char b64url[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
static const char hexdig[] = "0123456789abcdef";

static const char *const prefixes[IDS__MAX] = {
	[IDS_AGENT] = "agt_",
	[IDS_STUDY] = "std_",
	[IDS_PARTICIPATION] = "prt_",
	[IDS_TRANSACTION] = "txn_",
	[IDS_ACCOUNT] = "acc_",
	[IDS_EVENT] = "evt_",
	[IDS_WEBHOOK] = "whk_",
	[IDS_BONUS] = "bon_",
	[IDS_MESSAGE] = "msg_",
	[IDS_CASHOUT] = "cot_",
	[IDS_GROUP] = "grp_",
};

/* Largest prime below 62^6: checksum values fit six base62 digits. */
#define SUM_PRIME	UINT64_C(56800235581)
#define SUM_BASE	UINT64_C(257)
#define SUM_SEED	UINT64_C(0x61727073)	/* "arps" */

static int
b62_val(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'A' && c <= 'Z')
		return c - 'A' + 10;
	if (c >= 'a' && c <= 'z')
		return c - 'a' + 36;
	return -1;
}

static bool
all_in(const char *s, size_t n, const char *alpha)
{
	size_t	 i;

	for (i = 0; i < n; i++)
		if (s[i] == '\0' || strchr(alpha, s[i]) == NULL)
			return false;
	return true;
}

/*
 * Fill out[0..n-1] with chars of alpha (size asz, <= 256) drawn without
 * bias.  Returns false only on a missing rng.
 */
static bool
rand_chars(const struct arps_rng *rng, const char *alpha, unsigned asz,
    char *out, size_t n)
{
	unsigned char	 buf[64];
	unsigned	 lim = 256 - (256 % asz);
	size_t		 got = 0, i;

	if (rng == NULL || rng->fill == NULL)
		return false;
	while (got < n) {
		rng->fill(rng->ctx, buf, sizeof(buf));
		for (i = 0; i < sizeof(buf) && got < n; i++)
			if (buf[i] < lim)
				out[got++] = alpha[buf[i] % asz];
	}
	return true;
}

NAMES_AT_FN(ids_prefix, enum ids_kind, NAMES_OF(prefixes, IDS__MAX))

enum arps_err
ids_new(enum ids_kind kind, const struct arps_rng *rng, char out[IDS_BUFSZ])
{
	if ((unsigned)kind >= IDS__MAX || out == NULL)
		return ARPS_E_INTERNAL;
	memcpy(out, prefixes[kind], IDS_PREFIX_LEN);
	if (!rand_chars(rng, b62, 62, out + IDS_PREFIX_LEN, IDS_BODY_LEN))
		return ARPS_E_INTERNAL;
	out[IDS_LEN] = '\0';
	return ARPS_OK;
}

enum arps_err
ids_new_ordered(enum ids_kind kind, const struct arps_rng *rng, uint64_t t, char out[IDS_BUFSZ])
{
	int i;

	/* 62^9 = 13537086546263552 */
	if ((unsigned)kind >= IDS__MAX || out == NULL || t >= 13537086546263552ULL)
		return ARPS_E_INTERNAL;
	memcpy(out, prefixes[kind], IDS_PREFIX_LEN);
	for (i = IDS_ORDERED_DIGITS - 1; i >= 0; i--) {
		out[IDS_PREFIX_LEN + i] = b62[t % 62];
		t /= 62;
	}
	if (!rand_chars(rng, b62, 62, out + IDS_PREFIX_LEN + IDS_ORDERED_DIGITS,
	    IDS_BODY_LEN - IDS_ORDERED_DIGITS))
		return ARPS_E_INTERNAL;
	out[IDS_LEN] = '\0';
	return ARPS_OK;
}

bool
ids_valid(enum ids_kind kind, const char *s)
{
	if ((unsigned)kind >= IDS__MAX || s == NULL)
		return false;
	if (strncmp(s, prefixes[kind], IDS_PREFIX_LEN) != 0)
		return false;
	return all_in(s + IDS_PREFIX_LEN, IDS_BODY_LEN, b62) &&
	    s[IDS_LEN] == '\0';
}

bool
ids_kind_of(const char *s, enum ids_kind *kind)
{
	unsigned	 k;

	for (k = 0; k < IDS__MAX; k++)
		if (ids_valid((enum ids_kind)k, s)) {
			if (kind != NULL)
				*kind = (enum ids_kind)k;
			return true;
		}
	return false;
}

/*
 * Polynomial hash mod a prime over the 42 bytes of prefix+body.  A single
 * substituted byte changes the sum by (b' - b) * 257^k, nonzero mod the
 * prime since 0 < |b' - b| < 256 and the prime divides neither factor.
 */
static uint64_t
apikey_sum(const char *key42)
{
	uint64_t	 h = SUM_SEED % SUM_PRIME;
	size_t		 i;

	for (i = 0; i < APIKEY_PREFIX_LEN + APIKEY_BODY_LEN; i++)
		h = (h * SUM_BASE + (unsigned char)key42[i] + 1) % SUM_PRIME;
	return h;
}

void
apikey_checksum(const char *key42, char out[APIKEY_SUM_LEN])
{
	uint64_t	 h = apikey_sum(key42);
	int		 i;

	for (i = APIKEY_SUM_LEN - 1; i >= 0; i--) {
		out[i] = b62[h % 62];
		h /= 62;
	}
}

enum arps_err
apikey_new(const struct arps_rng *rng, char out[APIKEY_BUFSZ])
{
	if (out == NULL)
		return ARPS_E_INTERNAL;
	memcpy(out, APIKEY_PREFIX, APIKEY_PREFIX_LEN);
	if (!rand_chars(rng, b62, 62, out + APIKEY_PREFIX_LEN, APIKEY_BODY_LEN))
		return ARPS_E_INTERNAL;
	apikey_checksum(out, out + APIKEY_PREFIX_LEN + APIKEY_BODY_LEN);
	out[APIKEY_LEN] = '\0';
	return ARPS_OK;
}

bool
apikey_check(const char *s)
{
	const char	*sum;
	uint64_t	 v = 0;
	size_t		 i;

	if (s == NULL || strncmp(s, APIKEY_PREFIX, APIKEY_PREFIX_LEN) != 0)
		return false;
	if (!all_in(s + APIKEY_PREFIX_LEN, APIKEY_BODY_LEN + APIKEY_SUM_LEN,
	    b62) || s[APIKEY_LEN] != '\0')
		return false;
	sum = s + APIKEY_PREFIX_LEN + APIKEY_BODY_LEN;
	for (i = 0; i < APIKEY_SUM_LEN; i++)
		v = v * 62 + (uint64_t)b62_val(sum[i]);
	return v == apikey_sum(s);
}

enum arps_err
token_new(const struct arps_rng *rng, char out[TOKEN_BUFSZ])
{
	unsigned char	 raw[33];
	size_t		 i, o = 4;
	uint32_t	 w;

	if (out == NULL || rng == NULL || rng->fill == NULL)
		return ARPS_E_INTERNAL;
	rng->fill(rng->ctx, raw, 32);
	raw[32] = 0;
	memcpy(out, TOKEN_PREFIX, 4);
	/* 10 groups of 3 bytes -> 40 chars, then 2 bytes -> 3 chars. */
	for (i = 0; i < 30; i += 3) {
		w = (uint32_t)raw[i] << 16 | (uint32_t)raw[i + 1] << 8 | raw[i + 2];
		out[o++] = b64url[w >> 18 & 63];
		out[o++] = b64url[w >> 12 & 63];
		out[o++] = b64url[w >> 6 & 63];
		out[o++] = b64url[w & 63];
	}
	w = (uint32_t)raw[30] << 16 | (uint32_t)raw[31] << 8;
	out[o++] = b64url[w >> 18 & 63];
	out[o++] = b64url[w >> 12 & 63];
	out[o++] = b64url[w >> 6 & 63];
	out[o] = '\0';
	return ARPS_OK;
}

bool
token_valid(const char *s)
{
	const char	*last;

	if (s == NULL || strncmp(s, TOKEN_PREFIX, 4) != 0)
		return false;
	if (!all_in(s + 4, TOKEN_BODY_LEN, b64url) || s[TOKEN_LEN] != '\0')
		return false;
	/* The last char carries 4 bits: its low 2 bits must be zero. */
	last = strchr(b64url, s[TOKEN_LEN - 1]);
	return ((last - b64url) & 3) == 0;
}

enum arps_err
claim_code_new(const struct arps_rng *rng, char out[CLAIM_BUFSZ])
{
	if (out == NULL || !rand_chars(rng, CLAIM_ALPHABET, 32, out, CLAIM_LEN))
		return ARPS_E_INTERNAL;
	out[CLAIM_LEN] = '\0';
	return ARPS_OK;
}

bool
claim_code_valid(const char *s)
{
	return s != NULL && all_in(s, CLAIM_LEN, CLAIM_ALPHABET) &&
	    s[CLAIM_LEN] == '\0';
}

bool
claim_code_normalize(const char *s, char out[CLAIM_BUFSZ])
{
	size_t	 i;

	if (s == NULL || out == NULL)
		return false;
	for (i = 0; i < CLAIM_LEN; i++) {
		if (s[i] == '\0')
			return false;
		out[i] = (s[i] >= 'a' && s[i] <= 'z') ? (char)(s[i] - 32) : s[i];
	}
	if (s[CLAIM_LEN] != '\0')
		return false;
	out[CLAIM_LEN] = '\0';
	return claim_code_valid(out);
}

enum arps_err
login_code_new(const struct arps_rng *rng, char out[LOGIN_CODE_BUFSZ])
{
	unsigned char	 b[4];
	uint32_t	 v;
	int		 i;

	if (out == NULL || rng == NULL || rng->fill == NULL)
		return ARPS_E_INTERNAL;
	do {
		rng->fill(rng->ctx, b, sizeof(b));
		v = (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 |
		    (uint32_t)b[2] << 8 | b[3];
	} while (v >= UINT32_C(4294000000));	/* 4294 * 10^6 */
	v %= 1000000;
	for (i = LOGIN_CODE_LEN - 1; i >= 0; i--) {
		out[i] = (char)('0' + v % 10);
		v /= 10;
	}
	out[LOGIN_CODE_LEN] = '\0';
	return ARPS_OK;
}

bool
login_code_valid(const char *s)
{
	return s != NULL && all_in(s, LOGIN_CODE_LEN, "0123456789") &&
	    s[LOGIN_CODE_LEN] == '\0';
}

void
anon_id_format(const uint8_t raw[ANON_RAW_LEN], char out[ANON_BUFSZ])
{
	size_t	 i;

	memcpy(out, ANON_PREFIX, 5);
	for (i = 0; i < ANON_RAW_LEN; i++) {
		out[5 + 2 * i] = hexdig[raw[i] >> 4];
		out[6 + 2 * i] = hexdig[raw[i] & 15];
	}
	out[ANON_LEN] = '\0';
}

bool
anon_id_valid(const char *s)
{
	return s != NULL && strncmp(s, ANON_PREFIX, 5) == 0 &&
	    all_in(s + 5, 2 * ANON_RAW_LEN, hexdig) && s[ANON_LEN] == '\0';
}

void
pseudonym_format(const uint8_t raw[ANON_RAW_LEN], char out[PSN_BUFSZ])
{
	size_t	 i;

	memcpy(out, PSN_PREFIX, 4);
	for (i = 0; i < ANON_RAW_LEN; i++) {
		out[4 + 2 * i] = hexdig[raw[i] >> 4];
		out[5 + 2 * i] = hexdig[raw[i] & 15];
	}
	out[PSN_LEN] = '\0';
}

bool
pseudonym_valid(const char *s)
{
	return s != NULL && strncmp(s, PSN_PREFIX, 4) == 0 &&
	    all_in(s + 4, 2 * ANON_RAW_LEN, hexdig) && s[PSN_LEN] == '\0';
}
