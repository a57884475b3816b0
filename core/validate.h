/*
 * Validation of client-supplied values, and the API's field bounds.
 * Functions returning enum arps_err answer ARPS_OK or ARPS_E_VALIDATION (the
 * fcgi layer names the field in `detail`).  Strings are (pointer, byte
 * length) and are validated as given: nothing is trimmed or rewritten.
 * Convention of core/ (design.md §2.3, core/errors.h): enum arps_err, ARPS_OK
 * or the reason, or bool for a predicate; outputs written only on success.
 */
#ifndef ARPS_CORE_VALIDATE_H
#define ARPS_CORE_VALIDATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "errors.h"

/*
 * Field bounds decided for the API (the spec shows none).  String bounds
 * count Unicode code points (characters), not bytes; every string must be
 * valid UTF-8 without NUL.  Integers are inclusive ranges.
 */
#define VAL_AGENT_NAME_MIN		1
#define VAL_AGENT_NAME_MAX		100
#define VAL_AGENT_DESC_MIN		0
#define VAL_AGENT_DESC_MAX		1000
#define VAL_BIO_MIN			1
#define VAL_BIO_MAX			5000
#define VAL_STUDY_TITLE_MIN		1
#define VAL_STUDY_TITLE_MAX		200
#define VAL_STUDY_DESC_MIN		1
#define VAL_STUDY_DESC_MAX		10000
#define VAL_SCREENING_MIN		1
#define VAL_SCREENING_MAX		5000
#define VAL_COMPLETION_CODE_MIN		1
#define VAL_COMPLETION_CODE_MAX		64
#define VAL_REASON_MIN			0
#define VAL_REASON_MAX			1000
#define VAL_REWARD_MIN			1		/* cents */
#define VAL_REWARD_MAX			1000000		/* cents: 10,000 USD */
#define VAL_MAX_PARTICIPANTS_MIN	1
#define VAL_MAX_PARTICIPANTS_MAX	10000
#define VAL_DURATION_MIN		1		/* minutes */
#define VAL_DURATION_MAX		1440
#define VAL_URL_MAX			2048		/* bytes */
#define VAL_EMAIL_MAX			254		/* bytes */
#define VAL_EMAIL_LOCAL_MAX		64		/* bytes */
#define VAL_TOKEN_MAX			8192		/* provider token, bytes */
#define VAL_PROVIDER_MAX		32		/* provider name, bytes */
#define VAL_LIST_LIMIT_MIN		1
#define VAL_LIST_LIMIT_MAX		200		/* design.md §6.15 lists, default 50 */
#define VAL_LIST_LIMIT_DEFAULT		50
#define VAL_AVAILABLE_LIMIT_MAX		100		/* design.md §6.6, default 20 */
#define VAL_AVAILABLE_LIMIT_DEFAULT	20
/* The available list's cursor is the position after its page: at most
 * this deep (a ranking, not an archive: each page ranks offset + limit). */
#define VAL_AVAILABLE_OFFSET_MAX	1000

/* True when s[0..len) is valid UTF-8 (no overlongs, no surrogates, nothing
 * above U+10FFFF) with no NUL byte; *nchars, if not NULL, gets the number
 * of code points (set only on success). */
bool	 val_utf8(const char *s, size_t len, size_t *nchars);
/* Replace every byte of the NUL-terminated s that does not start a valid
 * UTF-8 sequence with '?', in place; returns the new length. */
size_t	 val_utf8_sanitize(char *s);
/* A human-readable text field: val_string, no control character (C0 or
 * DEL; multiline allows tab, CR and LF), and, when minc > 0, not blank
 * (some character other than space, tab, CR, LF). */
enum arps_err	 val_text(const char *s, size_t len, size_t minc, size_t maxc,
	    bool multiline);
/* Valid UTF-8, no NUL, and minc <= code points <= maxc. */
enum arps_err	 val_string(const char *s, size_t len, size_t minc, size_t maxc);
/* Valid UTF-8, no NUL, and minb <= bytes <= maxb. */
enum arps_err	 val_string_bytes(const char *s, size_t len, size_t minb, size_t maxb);
/* lo <= v <= hi. */
enum arps_err	 val_int_range(int64_t v, int64_t lo, int64_t hi);
/* Parse s[0..len) as an optional '-' then 1..19 decimal digits (no spaces,
 * no '+', no leading zeros except "0") into *out, within lo..hi; *out set
 * only on success.  For query parameters such as `limit`. */
enum arps_err	 val_parse_int64(const char *s, size_t len, int64_t lo, int64_t hi,
	    int64_t *out);
/* Absolute URL: scheme http or https (any case), "://", a host (DNS name,
 * IPv4 or [IPv6]), optional :port 1..65535, then optional path/query/
 * fragment of RFC 3986's characters (unreserved, sub-delimiters, ":@/?",
 * '%' before two hex digits, one '#'); no userinfo; at most VAL_URL_MAX
 * bytes. */
enum arps_err	 val_url(const char *s, size_t len);
/* The value of a hex digit, or -1. */
int	 val_hexval(int c);
/* Parse an IPv4 address in canonical dotted-quad form (decimal, no
 * leading zero), exactly len bytes, into out[4]; false otherwise. */
bool	 val_ipv4_parse(const char *s, size_t len, unsigned char out[4]);
/* Parse an IPv6 address (RFC 4291 2.2: groups, one "::", an optional
 * trailing dotted quad), exactly len bytes, into out[16]; false otherwise. */
bool	 val_ipv6_parse(const char *s, size_t len, unsigned char out[16]);
/*
 * A URL the service may send a browser or its own requests to
 * (design.md §9.8): val_url, and a host that is a DNS name other than localhost (and
 * *.localhost), or a public IP literal: no loopback, private, shared,
 * link-local, unique-local, site-local, unspecified, documentation,
 * multicast or reserved address, also when an IPv6 address embeds an IPv4
 * one (mapped, compatible, NAT64, 6to4).  A host whose last label is a
 * number (decimal, 0x hex) is read as IPv4 and must be a canonical dotted
 * quad ("2130706433", "127.1", "0x7f.1", "0177.0.0.1" are refused).
 * VAL_URL_HTTPS_ONLY refuses http; VAL_URL_LOOPBACK lets a loopback host
 * through (and with it plain http): webhooks in the dev stack.
 * VAL_URL_STORED skips val_url's character rule for the path, query and
 * fragment (any printable ASCII), every host rule kept: the deliverer's
 * check of a webhook URL taken in before that rule existed.
 */
#define VAL_URL_HTTPS_ONLY	0x1
#define VAL_URL_LOOPBACK	0x2
#define VAL_URL_STORED		0x4
enum arps_err	 val_public_url(const char *s, size_t len, unsigned flags);
/* Pragmatic e-mail: local@domain, at most 254 bytes, local 1..64 bytes of
 * atext and non-adjacent, non-edge dots; domain of >= 2 dot-separated
 * labels of [A-Za-z0-9-] 1..63 bytes, no edge hyphen. ASCII only. */
enum arps_err	 val_email(const char *s, size_t len);
/*
 * The object keys of the JSON text s[0..len) (design.md §9.7, RFC 7493
 * I-JSON): VAL_JSON_OK when no object repeats a key (compared after
 * decoding escapes, at any depth) and no key holds U+0000;
 * VAL_JSON_DUP_KEY, VAL_JSON_NUL_KEY, VAL_JSON_SURROGATE (a string, key or
 * value, with a "\\uD800"-"\\uDFFF" escape that is not half of a pair: RFC
 * 7493 2.1), VAL_JSON_BAD for a text that is not
 * JSON, VAL_JSON_NOMEM when scratch (the caller's block, aligned for
 * size_t) is smaller than val_json_keys_scratch(len) bytes.  For a text
 * json-c has accepted: json-c keeps the last of two equal keys and cuts a
 * key at its NUL.  Allocates nothing; O(n log n) in the number of keys.
 */
enum val_json { VAL_JSON_OK, VAL_JSON_DUP_KEY, VAL_JSON_NUL_KEY, VAL_JSON_BAD, VAL_JSON_NOMEM,
	VAL_JSON_SURROGATE };
size_t	 val_json_keys_scratch(size_t len);
enum val_json	 val_json_keys(const char *s, size_t len, void *scratch, size_t scratchsz);
/* ISO 8601 timestamp (see timefmt_parse) into *out. */
enum arps_err	 val_iso8601(const char *s, size_t len, int64_t *out);

#endif
