/*
 * The hostile-input table.  One row per hostile request, each
 * with the exact status and error_code the contract gives it (api.md §1,
 * api.md §3, api.md §4; design.md §6.1, design.md §9.7): transport, JSON,
 * field bounds, query parameters, credentials and identity-provider
 * tokens.  Every refusal must be the {detail, error_code, status} body with
 * a non-empty detail.  After the table: nothing a refused request touched
 * changed (the researcher's studies and wallet, the agent's wallet and
 * name) and verify-ledger exits 0.  Then two refusals outside the table:
 * JSON's non-finite numbers, and a body past 64 KiB on /health.
 *
 * Each row says which layer it exercises:
 *   N  raw HTTP/1.1 bytes to nginx (a socket, not libcurl: curl would fix
 *      the Content-Length, drop dot segments and refuse some headers), so
 *      the row sees what a client on the network sees;
 *   F  FastCGI straight to the pool's socket (tests/api/fcgi_client.c),
 *      for the transport faults nginx refuses or normalises itself before
 *      they reach the application (a malformed CONTENT_LENGTH, a body
 *      shorter than it, two equal credential params).
 *
 * Placeholders in paths, headers and bodies, expanded per request:
 *   {AGENT} "X-API-Key: <the agent's key>"   {RES} "Authorization: Bearer <token>"
 *   {KEY} the key   {KEYSHORT} without its last character   {KEYFLIP} the key,
 *   checksum flipped   {TOKEN} the access token   {RND} 8 random hex digits
 *   {REP:n:s} s repeated n times   {NUL} a zero byte   {TOK:kind} an ID token
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <sodium.h>

#include "core/validate.h"
#include "tests/api/fcgi_client.h"
#include "tests/api/flows.h"
#include "tests/api/jwt.h"
#include "tests/api/study_helpers.h"

enum { NO_CL = 1, NO_CT = 2, STUDY = 4, HTTP10 = 8 };

struct row {
	const char *name;
	char layer;		/* 'N' nginx, 'F' FastCGI */
	const char *method;
	const char *path;
	const char *headers;	/* N: "Name: value" lines; F: "NAME=value" params; '\n' between */
	const char *body;	/* NULL: none */
	unsigned flags;		/* NO_CL, NO_CT: the row sends its own; STUDY: body is merged
				 * into a valid study; HTTP10: the request line says HTTP/1.0 */
	long status;
	const char *code;	/* NULL: a success answer */
};

/* A valid study, field by field: a STUDY row's body replaces some. */
static const char *const study_defaults[][2] = {
	{ "title", "\"Hostile table\"" },
	{ "description", "\"A study the hostile table creates.\"" },
	{ "study_url", "\"https://survey.example.org/s/1\"" },
	{ "reward_per_participant", "1" },
	{ "max_participants", "1" },
	{ "screening_criteria", "\"Anyone.\"" },
	{ "estimated_duration_minutes", "5" },
};

#define BIO	"/api/v1/profile/bio"
#define ME	"/api/v1/agents/me"
#define STUDIES	"/api/v1/studies"
#define TXNS	"/api/v1/wallet/transactions"
#define LOGIN	"/api/v1/auth/login"
#define LOGIN_TOK(kind)	"{\"provider\":\"dev\",\"token\":\"{TOK:" kind "}\"}"
#define CT_JSON	"Content-Type: application/json"
#define U8_2	"\xc3\xa9"		/* é: 2 bytes, 1 code point */
#define U8_3	"\xe2\x82\xac"		/* €: 3 bytes */
#define U8_4	"\xf0\x9f\x98\x80"	/* 😀: 4 bytes */
#define URL_1	"\"https://survey.example.org/"	/* 27 bytes; + n + "\"" */

static const struct row rows[] = {
	/* --- transport: Content-Length forms (nginx parses them first) --- */
	{ "cl_plus_sign", 'N', "POST", BIO, "{AGENT}\nContent-Length: +12\n" CT_JSON,
	  "{\"bio\":\"ok\"}", NO_CL, 400, "BAD_REQUEST" },
	{ "cl_negative", 'N', "POST", BIO, "{AGENT}\nContent-Length: -1\n" CT_JSON,
	  "{\"bio\":\"ok\"}", NO_CL, 400, "BAD_REQUEST" },
	{ "cl_hex", 'N', "POST", BIO, "{AGENT}\nContent-Length: 0xc\n" CT_JSON,
	  "{\"bio\":\"ok\"}", NO_CL, 400, "BAD_REQUEST" },
	{ "cl_list", 'N', "POST", BIO, "{AGENT}\nContent-Length: 12, 12\n" CT_JSON,
	  "{\"bio\":\"ok\"}", NO_CL, 400, "BAD_REQUEST" },
	{ "cl_twice", 'N', "POST", BIO,
	  "{AGENT}\nContent-Length: 12\nContent-Length: 12\n" CT_JSON,
	  "{\"bio\":\"ok\"}", NO_CL, 400, "BAD_REQUEST" },
	{ "cl_and_chunked", 'N', "POST", BIO,
	  "{AGENT}\nContent-Length: 12\nTransfer-Encoding: chunked\n" CT_JSON,
	  "c\r\n{\"bio\":\"ok\"}\r\n0\r\n\r\n", NO_CL, 400, "BAD_REQUEST" },
	{ "cl_over_64k_declared", 'N', "POST", BIO,
	  "{AGENT}\nContent-Length: 65537\n" CT_JSON, "", NO_CL, 413, "PAYLOAD_TOO_LARGE" },
	{ "te_gzip", 'N', "POST", BIO, "{AGENT}\nTransfer-Encoding: gzip\n" CT_JSON,
	  "{\"bio\":\"ok\"}", NO_CL, 501, "BAD_REQUEST" },
	/* nginx 1.22 passes a PUT without a length on: the route answers first */
	{ "put_without_length", 'N', "PUT", ME, "{AGENT}\n" CT_JSON, "", NO_CL, 405,
	  "METHOD_NOT_ALLOWED" },
	{ "chunked_body_is_read", 'N', "PATCH", ME, "{AGENT}\nTransfer-Encoding: chunked\n" CT_JSON,
	  "b\r\n{\"name\":\"\"}\r\n0\r\n\r\n", NO_CL, 422, "VALIDATION_ERROR" },
	{ "body_over_64k", 'N', "POST", BIO, "{AGENT}",
	  "{\"bio\":\"{REP:65600:a}\"}", 0, 413, "PAYLOAD_TOO_LARGE" },
	/* the same faults where nginx cannot catch them: the application's check */
	{ "fcgi_cl_letters", 'F', "POST", BIO, "HTTP_X_API_KEY={KEY}\nCONTENT_LENGTH=twelve",
	  "{\"bio\":\"ok\"}", NO_CL, 400, "BAD_REQUEST" },
	{ "fcgi_cl_plus", 'F', "POST", BIO, "HTTP_X_API_KEY={KEY}\nCONTENT_LENGTH=+12",
	  "{\"bio\":\"ok\"}", NO_CL, 400, "BAD_REQUEST" },
	{ "fcgi_cl_space", 'F', "POST", BIO, "HTTP_X_API_KEY={KEY}\nCONTENT_LENGTH= 12",
	  "{\"bio\":\"ok\"}", NO_CL, 400, "BAD_REQUEST" },
	{ "fcgi_cl_20_digits", 'F', "POST", BIO,
	  "HTTP_X_API_KEY={KEY}\nCONTENT_LENGTH=18446744073709551628",
	  "{\"bio\":\"ok\"}", NO_CL, 400, "BAD_REQUEST" },
	{ "fcgi_cl_over_64k", 'F', "POST", BIO, "HTTP_X_API_KEY={KEY}\nCONTENT_LENGTH=65537",
	  "{\"bio\":\"ok\"}", NO_CL, 413, "PAYLOAD_TOO_LARGE" },
	{ "fcgi_body_shorter_than_cl", 'F', "POST", BIO,
	  "HTTP_X_API_KEY={KEY}\nCONTENT_LENGTH=40", "{\"bio\":\"ok\"}", NO_CL, 400,
	  "BAD_REQUEST" },
	{ "fcgi_body_without_cl", 'F', "POST", BIO, "HTTP_X_API_KEY={KEY}",
	  "{\"bio\":\"ok\"}", NO_CL, 400, "BAD_REQUEST" },

	/* --- transport: content types --- */
	{ "ct_text_plain", 'N', "POST", BIO, "{AGENT}\nContent-Type: text/plain",
	  "{\"bio\":\"ok\"}", NO_CT, 415, "UNSUPPORTED_MEDIA_TYPE" },
	{ "ct_form", 'N', "POST", BIO, "{AGENT}\nContent-Type: application/x-www-form-urlencoded",
	  "bio=ok", NO_CT, 415, "UNSUPPORTED_MEDIA_TYPE" },
	{ "ct_json_suffix", 'N', "POST", BIO, "{AGENT}\nContent-Type: application/jsonp",
	  "{\"bio\":\"ok\"}", NO_CT, 415, "UNSUPPORTED_MEDIA_TYPE" },
	{ "ct_json_patch", 'N', "POST", BIO,
	  "{AGENT}\nContent-Type: application/json-patch+json", "{\"bio\":\"ok\"}", NO_CT, 415,
	  "UNSUPPORTED_MEDIA_TYPE" },
	{ "ct_missing", 'N', "POST", BIO, "{AGENT}", "{\"bio\":\"ok\"}", NO_CT, 415,
	  "UNSUPPORTED_MEDIA_TYPE" },
	{ "ct_upper_case_charset", 'N', "PATCH", ME,
	  "{AGENT}\nContent-Type: APPLICATION/JSON; charset=UTF-8", "{\"name\":\"\"}", NO_CT,
	  422, "VALIDATION_ERROR" },
	{ "ct_any_for_empty_body", 'N', "PATCH", ME, "{AGENT}\nContent-Type: text/plain", "",
	  NO_CT, 200, NULL },
	/* an endpoint that reads no field refuses a body that is not JSON as
	 * one that reads fields does (design.md §6.1), before its path id */
	{ "ct_text_plain_no_fields", 'N', "POST", "/api/v1/heartbeat",
	  "{AGENT}\nContent-Type: text/plain", "hi", NO_CT, 415, "UNSUPPORTED_MEDIA_TYPE" },
	{ "ct_text_plain_accept", 'N', "POST", STUDIES "/std_AAAAAAAAAAAAAAAA/accept",
	  "{AGENT}\nContent-Type: text/plain", "junk", NO_CT, 415, "UNSUPPORTED_MEDIA_TYPE" },
	{ "invalid_json_no_fields", 'N', "POST", STUDIES "/std_AAAAAAAAAAAAAAAA/resume", "{RES}",
	  "not json", 0, 400, "INVALID_JSON" },
	{ "json_array_no_fields", 'N', "POST", STUDIES "/std_AAAAAAAAAAAAAAAA/pause", "{RES}",
	  "[]", 0, 400, "INVALID_JSON" },
	{ "empty_object_no_fields", 'N', "POST", STUDIES "/std_AAAAAAAAAAAAAAAA/pause", "{RES}",
	  "{}", 0, 404, "NOT_FOUND" },
	/* I-JSON (RFC 7493 2.1): a lone surrogate escape, in a value or a key */
	{ "lone_low_surrogate_value", 'N', "PATCH", ME, "{AGENT}", "{\"name\":\"\\udc00x\"}", 0,
	  400, "INVALID_JSON" },
	{ "surrogate_pair_value", 'N', "PATCH", ME, "{AGENT}",
	  "{\"name\":\"Agent \\ud83d\\ude00\"}", 0, 200, NULL },

	/* --- transport: paths (routed as sent, api.md §1) and methods --- */
	{ "path_escaped_slash", 'N', "GET", "/api/v1/agents%2Fme", "{AGENT}", NULL, 0, 404,
	  "NOT_FOUND" },
	{ "path_escaped_unreserved", 'N', "GET", "/api/v1/agents/%6De", "{AGENT}", NULL, 0, 200,
	  NULL },
	{ "path_double_slash", 'N', "GET", "/api/v1//agents/me", "{AGENT}", NULL, 0, 404,
	  "NOT_FOUND" },
	{ "path_trailing_slash", 'N', "GET", "/api/v1/agents/me/", "{AGENT}", NULL, 0, 404,
	  "NOT_FOUND" },
	{ "path_dot_dot", 'N', "GET", "/api/v1/studies/../health", NULL, NULL, 0, 404,
	  "NOT_FOUND" },
	{ "path_escaped_dot_dot", 'N', "GET", "/api/v1/studies/%2e%2e/health", NULL, NULL, 0,
	  404, "NOT_FOUND" },
	{ "path_escaped_nul", 'N', "GET", "/api/v1/health%00", NULL, NULL, 0, 400,
	  "BAD_REQUEST" },
	{ "path_stray_percent", 'N', "GET", "/api/v1/studies/std_%zz", "{AGENT}", NULL, 0, 400,
	  "BAD_REQUEST" },
	{ "path_upper_case", 'N', "GET", "/api/v1/HEALTH", NULL, NULL, 0, 404, "NOT_FOUND" },
	{ "path_id_64_bytes", 'N', "GET", "/api/v1/studies/std_{REP:60:a}", "{AGENT}", NULL, 0,
	  404, "NOT_FOUND" },
	{ "path_id_escaped_newline", 'N', "GET", "/api/v1/studies/std_%0aaaaaaaaaaaaaaa",
	  "{AGENT}", NULL, 0, 404, "NOT_FOUND" },
	{ "path_id_unknown", 'N', "GET", "/api/v1/studies/std_AAAAAAAAAAAAAAAA", "{AGENT}", NULL,
	  0, 404, "NOT_FOUND" },
	{ "path_v2", 'N', "GET", "/api/v2/health", NULL, NULL, 0, 404, "NOT_FOUND" },
	{ "fcgi_path_dot_dot", 'F', "GET", "/api/v1/agents/../health", NULL, NULL, 0, 404,
	  "NOT_FOUND" },
	{ "fcgi_path_double_slash", 'F', "GET", "/api/v1//health", NULL, NULL, 0, 404,
	  "NOT_FOUND" },
	{ "method_delete", 'N', "DELETE", ME, "{AGENT}", NULL, 0, 405, "METHOD_NOT_ALLOWED" },
	{ "method_post_health", 'N', "POST", "/api/v1/health", NULL, NULL, 0, 405,
	  "METHOD_NOT_ALLOWED" },
	{ "method_options", 'N', "OPTIONS", "/api/v1/health", NULL, NULL, 0, 405,
	  "METHOD_NOT_ALLOWED" },
	{ "method_unknown_word", 'N', "BREW", "/api/v1/health", NULL, NULL, 0, 405,
	  "METHOD_NOT_ALLOWED" },
	{ "method_trace", 'N', "TRACE", "/api/v1/health", NULL, NULL, 0, 405,
	  "METHOD_NOT_ALLOWED" },
	{ "method_lower_case", 'N', "get", "/api/v1/health", NULL, NULL, 0, 400, "BAD_REQUEST" },
	{ "method_head", 'N', "HEAD", "/api/v1/health", NULL, NULL, 0, 200, NULL },
	{ "http10_post", 'N', "PATCH", ME, "{AGENT}", "{\"name\":\"\"}", HTTP10, 422,
	  "VALIDATION_ERROR" },

	/* --- JSON (api.md §1, api.md §3; design.md §9.7) --- */
	{ "json_top_array", 'N', "POST", STUDIES, "{RES}", "[]", 0, 400, "INVALID_JSON" },
	{ "json_top_string", 'N', "POST", STUDIES, "{RES}", "\"study\"", 0, 400, "INVALID_JSON" },
	{ "json_top_number", 'N', "POST", STUDIES, "{RES}", "1", 0, 400, "INVALID_JSON" },
	{ "json_top_null", 'N', "POST", STUDIES, "{RES}", "null", 0, 400, "INVALID_JSON" },
	{ "json_top_null_spaced", 'N', "POST", STUDIES, "{RES}", " null ", 0, 400, "INVALID_JSON" },
	{ "json_cut_short", 'N', "PATCH", ME, "{AGENT}", "{\"name\":\"x\"", 0, 400,
	  "INVALID_JSON" },
	{ "json_depth_33", 'N', "POST", STUDIES, "{RES}",
	  "{\"a\":{REP:32:[}1{REP:32:]}}", 0, 400, "INVALID_JSON" },
	{ "json_depth_32", 'N', "POST", STUDIES, "{RES}",
	  "{\"a\":{REP:31:[}1{REP:31:]}}", 0, 422, "VALIDATION_ERROR" },
	{ "json_trailing_object", 'N', "POST", STUDIES, "{RES}", "{}{}", 0, 400, "INVALID_JSON" },
	{ "json_trailing_garbage", 'N', "POST", STUDIES, "{RES}", "{} x", 0, 400,
	  "INVALID_JSON" },
	{ "json_trailing_whitespace", 'N', "PATCH", ME, "{AGENT}", " {\"name\":\"\"} \r\n\t", 0,
	  422, "VALIDATION_ERROR" },
	{ "json_bom", 'N', "PATCH", ME, "{AGENT}", "\xef\xbb\xbf{\"name\":\"x\"}", 0, 400,
	  "INVALID_JSON" },
	{ "json_nan", 'N', "POST", STUDIES, "{RES}", "\"reward_per_participant\":NaN", STUDY, 400,
	  "INVALID_JSON" },
	{ "json_minus_infinity", 'N', "POST", STUDIES, "{RES}", "\"zz\":[-Infinity]", STUDY, 400,
	  "INVALID_JSON" },
	/* beyond the double range: not I-JSON (RFC 7493), read as Infinity */
	{ "json_number_1e400", 'N', "POST", STUDIES, "{RES}", "\"reward_per_participant\":1e400",
	  STUDY, 400, "INVALID_JSON" },
	{ "json_number_2_pow_64", 'N', "POST", STUDIES, "{RES}",
	  "\"reward_per_participant\":18446744073709551616", STUDY, 422, "VALIDATION_ERROR" },
	{ "json_number_int64_max", 'N', "POST", STUDIES, "{RES}",
	  "\"max_participants\":9223372036854775807", STUDY, 422, "VALIDATION_ERROR" },
	{ "json_number_negative", 'N', "POST", STUDIES, "{RES}", "\"reward_per_participant\":-1",
	  STUDY, 422, "VALIDATION_ERROR" },
	{ "json_number_minus_zero", 'N', "POST", STUDIES, "{RES}",
	  "\"estimated_duration_minutes\":-0", STUDY, 422, "VALIDATION_ERROR" },
	{ "json_integer_as_1_0", 'N', "POST", STUDIES, "{RES}", "\"reward_per_participant\":1.0",
	  STUDY, 422, "VALIDATION_ERROR" },
	{ "json_integer_as_1e0", 'N', "POST", STUDIES, "{RES}", "\"max_participants\":1e0",
	  STUDY, 422, "VALIDATION_ERROR" },
	{ "json_integer_as_string", 'N', "POST", STUDIES, "{RES}", "\"max_participants\":\"1\"",
	  STUDY, 422, "VALIDATION_ERROR" },
	{ "json_integer_leading_zero", 'N', "POST", STUDIES, "{RES}",
	  "\"max_participants\":01", STUDY, 400, "INVALID_JSON" },
	{ "json_lone_surrogate_escape", 'N', "PATCH", ME, "{AGENT}", "{\"name\":\"x\\ud800\"}", 0,
	  400, "INVALID_JSON" },
	{ "json_raw_surrogate_bytes", 'N', "PATCH", ME, "{AGENT}",
	  "{\"name\":\"x\xed\xa0\x80\"}", 0, 400, "INVALID_JSON" },
	{ "json_overlong_2_bytes", 'N', "PATCH", ME, "{AGENT}", "{\"name\":\"\xc0\xaf\"}", 0, 400,
	  "INVALID_JSON" },
	{ "json_overlong_3_bytes", 'N', "PATCH", ME, "{AGENT}", "{\"name\":\"\xe0\x80\xaf\"}", 0,
	  400, "INVALID_JSON" },
	{ "json_above_10ffff", 'N', "PATCH", ME, "{AGENT}",
	  "{\"name\":\"\xf4\x90\x80\x80\"}", 0, 400, "INVALID_JSON" },
	{ "json_truncated_utf8", 'N', "PATCH", ME, "{AGENT}", "{\"name\":\"\xf0\x9f\x98\"}", 0,
	  400, "INVALID_JSON" },
	{ "json_lone_continuation", 'N', "PATCH", ME, "{AGENT}", "{\"name\":\"\x80\"}", 0, 400,
	  "INVALID_JSON" },
	{ "json_raw_nul_in_string", 'N', "PATCH", ME, "{AGENT}", "{\"name\":\"a{NUL}b\"}", 0, 400,
	  "INVALID_JSON" },
	{ "json_raw_nul_after_object", 'N', "PATCH", ME, "{AGENT}", "{\"name\":\"ab\"}{NUL}", 0,
	  400, "INVALID_JSON" },
	{ "json_escaped_nul_in_value", 'N', "PATCH", ME, "{AGENT}", "{\"name\":\"a\\u0000b\"}", 0,
	  422, "VALIDATION_ERROR" },
	{ "json_escaped_nul_in_key", 'N', "PATCH", ME, "{AGENT}", "{\"name\\u0000\":\"a\"}", 0,
	  400, "INVALID_JSON" },
	{ "json_duplicate_key", 'N', "POST", STUDIES, "{RES}",
	  "\"title\":\"a\",\"title\":\"b\"", STUDY, 400, "INVALID_JSON" },
	{ "json_duplicate_key_escaped", 'N', "PATCH", ME, "{AGENT}",
	  "{\"name\":\"a\",\"n\\u0061me\":\"b\"}", 0, 400, "INVALID_JSON" },
	{ "json_duplicate_key_nested", 'N', "PATCH", ME, "{AGENT}",
	  "{\"x\":[{\"k\":1,\"k\":2}]}", 0, 400, "INVALID_JSON" },
	{ "json_single_quotes", 'N', "PATCH", ME, "{AGENT}", "{'name':'x'}", 0, 400,
	  "INVALID_JSON" },
	{ "json_unknown_field_ignored", 'N', "PATCH", ME, "{AGENT}", "{\"zz\":[1,{\"y\":null}]}",
	  0, 200, NULL },

	/* --- field bounds at and past each limit (code points, api.md §4) --- */
	{ "name_100_2byte", 'N', "PATCH", ME, "{AGENT}", "{\"name\":\"{REP:100:" U8_2 "}\"}", 0,
	  200, NULL },
	{ "name_101_2byte", 'N', "PATCH", ME, "{AGENT}", "{\"name\":\"{REP:101:" U8_2 "}\"}", 0,
	  422, "VALIDATION_ERROR" },
	{ "name_100_4byte", 'N', "PATCH", ME, "{AGENT}", "{\"name\":\"{REP:100:" U8_4 "}\"}", 0,
	  200, NULL },
	{ "name_101_4byte", 'N', "PATCH", ME, "{AGENT}", "{\"name\":\"{REP:101:" U8_4 "}\"}", 0,
	  422, "VALIDATION_ERROR" },
	{ "name_100_escaped_pairs", 'N', "PATCH", ME, "{AGENT}",
	  "{\"name\":\"{REP:100:\\ud83d\\ude00}\"}", 0, 200, NULL },
	{ "name_empty", 'N', "PATCH", ME, "{AGENT}", "{\"name\":\"\"}", 0, 422,
	  "VALIDATION_ERROR" },
	{ "name_blank", 'N', "PATCH", ME, "{AGENT}", "{\"name\":\"   \"}", 0, 422,
	  "VALIDATION_ERROR" },
	{ "name_control", 'N', "PATCH", ME, "{AGENT}", "{\"name\":\"a\\u0007b\"}", 0, 422,
	  "VALIDATION_ERROR" },
	{ "name_null", 'N', "PATCH", ME, "{AGENT}", "{\"name\":null}", 0, 422,
	  "VALIDATION_ERROR" },
	{ "description_1000_3byte", 'N', "PATCH", ME, "{AGENT}",
	  "{\"description\":\"{REP:1000:" U8_3 "}\"}", 0, 200, NULL },
	{ "description_1001_3byte", 'N', "PATCH", ME, "{AGENT}",
	  "{\"description\":\"{REP:1001:" U8_3 "}\"}", 0, 422, "VALIDATION_ERROR" },
	{ "bio_5000_2byte", 'N', "POST", BIO, "{AGENT}", "{\"bio\":\"{REP:5000:" U8_2 "}\"}", 0,
	  200, NULL },
	{ "bio_5001_2byte", 'N', "POST", BIO, "{AGENT}", "{\"bio\":\"{REP:5001:" U8_2 "}\"}", 0,
	  422, "VALIDATION_ERROR" },
	{ "bio_empty", 'N', "POST", BIO, "{AGENT}", "{\"bio\":\"\"}", 0, 422,
	  "VALIDATION_ERROR" },
	{ "title_200_2byte", 'N', "POST", STUDIES, "{RES}",
	  "\"title\":\"{REP:200:" U8_2 "}\"", STUDY, 201, NULL },
	{ "title_201_2byte", 'N', "POST", STUDIES, "{RES}",
	  "\"title\":\"{REP:201:" U8_2 "}\"", STUDY, 422, "VALIDATION_ERROR" },
	{ "description_10000_2byte", 'N', "POST", STUDIES, "{RES}",
	  "\"description\":\"{REP:10000:" U8_2 "}\"", STUDY, 201, NULL },
	{ "description_10001_2byte", 'N', "POST", STUDIES, "{RES}",
	  "\"description\":\"{REP:10001:" U8_2 "}\"", STUDY, 422, "VALIDATION_ERROR" },
	{ "criteria_5000_4byte", 'N', "POST", STUDIES, "{RES}",
	  "\"screening_criteria\":\"{REP:5000:" U8_4 "}\"", STUDY, 201, NULL },
	{ "criteria_5001_4byte", 'N', "POST", STUDIES, "{RES}",
	  "\"screening_criteria\":\"{REP:5001:" U8_4 "}\"", STUDY, 422, "VALIDATION_ERROR" },
	{ "study_url_2048_bytes", 'N', "POST", STUDIES, "{RES}",
	  "\"study_url\":" URL_1 "{REP:2021:a}\"", STUDY, 201, NULL },
	{ "study_url_2049_bytes", 'N', "POST", STUDIES, "{RES}",
	  "\"study_url\":" URL_1 "{REP:2022:a}\"", STUDY, 422, "VALIDATION_ERROR" },
	{ "study_url_brace_placeholder", 'N', "POST", STUDIES, "{RES}",
	  "\"study_url\":" URL_1 "s?pid={{PROLIFIC_PID}}\"", STUDY, 422, "VALIDATION_ERROR" },
	{ "study_url_percent_encoded", 'N', "POST", STUDIES, "{RES}",
	  "\"study_url\":" URL_1 "s?pid=%7B%7Bx%7D%7D#top\"", STUDY, 201, NULL },
	{ "completion_code_64", 'N', "POST", STUDIES, "{RES}",
	  "\"completion_code\":\"{REP:64:" U8_2 "}\"", STUDY, 201, NULL },
	{ "completion_code_65", 'N', "POST", STUDIES, "{RES}",
	  "\"completion_code\":\"{REP:65:" U8_2 "}\"", STUDY, 422, "VALIDATION_ERROR" },
	{ "reward_1000000", 'N', "POST", STUDIES, "{RES}",
	  "\"reward_per_participant\":1000000", STUDY, 201, NULL },
	{ "reward_1000001", 'N', "POST", STUDIES, "{RES}",
	  "\"reward_per_participant\":1000001", STUDY, 422, "VALIDATION_ERROR" },
	{ "reward_0", 'N', "POST", STUDIES, "{RES}", "\"reward_per_participant\":0", STUDY, 422,
	  "VALIDATION_ERROR" },
	{ "max_participants_10000", 'N', "POST", STUDIES, "{RES}", "\"max_participants\":10000",
	  STUDY, 201, NULL },
	{ "max_participants_10001", 'N', "POST", STUDIES, "{RES}", "\"max_participants\":10001",
	  STUDY, 422, "VALIDATION_ERROR" },
	{ "duration_1440", 'N', "POST", STUDIES, "{RES}", "\"estimated_duration_minutes\":1440",
	  STUDY, 201, NULL },
	{ "duration_1441", 'N', "POST", STUDIES, "{RES}", "\"estimated_duration_minutes\":1441",
	  STUDY, 422, "VALIDATION_ERROR" },
	{ "duration_0", 'N', "POST", STUDIES, "{RES}", "\"estimated_duration_minutes\":0", STUDY,
	  422, "VALIDATION_ERROR" },
	{ "title_missing_is_422", 'N', "POST", STUDIES, "{RES}",
	  "{\"description\":\"d\",\"study_url\":\"https://a.example/\",\"reward_per_participant\":1,"
	  "\"max_participants\":1,\"screening_criteria\":\"c\",\"estimated_duration_minutes\":5}",
	  0, 422, "VALIDATION_ERROR" },
	/* body fields are checked before path ids (api.md §3, order of checks) */
	{ "reason_1001_before_404", 'N', "POST",
	  "/api/v1/studies/std_AAAAAAAAAAAAAAAA/participants/anon_0000000000000000/reject",
	  "{RES}", "{\"reason\":\"{REP:1001:" U8_2 "}\"}", 0, 422, "VALIDATION_ERROR" },
	{ "reason_1000_then_404", 'N', "POST",
	  "/api/v1/studies/std_AAAAAAAAAAAAAAAA/participants/anon_0000000000000000/reject",
	  "{RES}", "{\"reason\":\"{REP:1000:" U8_2 "}\"}", 0, 404, "NOT_FOUND" },
	{ "email_255_bytes", 'N', "POST", "/api/v1/auth/email/send-code", NULL,
	  "{\"email\":\"{REP:64:a}@{REP:63:b}.{REP:63:c}.{REP:62:d}\"}", 0, 422,
	  "VALIDATION_ERROR" },
	{ "email_local_65_bytes", 'N', "POST", "/api/v1/auth/email/send-code", NULL,
	  "{\"email\":\"{REP:65:a}@example.org\"}", 0, 422, "VALIDATION_ERROR" },
	{ "email_254_bytes", 'N', "POST", "/api/v1/auth/email/send-code", NULL,
	  "{\"email\":\"{RND}{REP:56:a}@{REP:63:b}.{REP:63:c}.{REP:61:d}\"}", 0, 202, NULL },
	{ "claim_code_65", 'N', "POST", "/api/v1/auth/claim", "{RES}",
	  "{\"claim_code\":\"{REP:65:A}\"}", 0, 422, "VALIDATION_ERROR" },
	{ "claim_code_64", 'N', "POST", "/api/v1/auth/claim", "{RES}",
	  "{\"claim_code\":\"{REP:64:A}\"}", 0, 404, "NOT_FOUND" },
	{ "idem_key_256", 'N', "POST", BIO, "{AGENT}\nIdempotency-Key: {REP:256:k}",
	  "{\"bio\":\"x\"}", 0, 422, "VALIDATION_ERROR" },
	{ "idem_key_255", 'N', "POST", BIO, "{AGENT}\nIdempotency-Key: {REP:255:~}",
	  "{\"bio\":\"I design posters in Berlin.\"}", 0, 200, NULL },
	/* sent empty, a key is there and invalid, not absent */
	{ "idem_key_empty", 'N', "POST", BIO, "{AGENT}\nIdempotency-Key: ",
	  "{\"bio\":\"x\"}", 0, 422, "VALIDATION_ERROR" },
	{ "idem_key_empty_no_credential", 'N', "POST", "/api/v1/agents/register",
	  "Idempotency-Key: ", "{\"name\":\"x\"}", 0, 422, "VALIDATION_ERROR" },
	{ "idem_key_no_credential_21", 'N', "POST", "/api/v1/agents/register",
	  "Idempotency-Key: {REP:21:a}", "{\"name\":\"x\"}", 0, 422, "VALIDATION_ERROR" },
	{ "idem_key_no_credential_dot", 'N', "POST", "/api/v1/agents/register",
	  "Idempotency-Key: {REP:30:a}.", "{\"name\":\"x\"}", 0, 422, "VALIDATION_ERROR" },

	/* --- query parameters (api.md §4 page sizes, api.md §6) --- */
	{ "limit_0", 'N', "GET", TXNS "?limit=0", "{AGENT}", NULL, 0, 422, "VALIDATION_ERROR" },
	{ "limit_plus_5", 'N', "GET", TXNS "?limit=+5", "{AGENT}", NULL, 0, 422,
	  "VALIDATION_ERROR" },
	{ "limit_escaped_plus_5", 'N', "GET", TXNS "?limit=%2B5", "{AGENT}", NULL, 0, 422,
	  "VALIDATION_ERROR" },
	{ "limit_05", 'N', "GET", TXNS "?limit=05", "{AGENT}", NULL, 0, 422, "VALIDATION_ERROR" },
	{ "limit_negative", 'N', "GET", TXNS "?limit=-1", "{AGENT}", NULL, 0, 422,
	  "VALIDATION_ERROR" },
	{ "limit_empty", 'N', "GET", TXNS "?limit=", "{AGENT}", NULL, 0, 422,
	  "VALIDATION_ERROR" },
	{ "limit_200", 'N', "GET", TXNS "?limit=200", "{AGENT}", NULL, 0, 200, NULL },
	{ "limit_201", 'N', "GET", TXNS "?limit=201", "{AGENT}", NULL, 0, 422,
	  "VALIDATION_ERROR" },
	{ "limit_huge", 'N', "GET", TXNS "?limit=18446744073709551617", "{AGENT}", NULL, 0, 422,
	  "VALIDATION_ERROR" },
	{ "limit_repeated", 'N', "GET", TXNS "?limit=5&limit=6", "{AGENT}", NULL, 0, 422,
	  "VALIDATION_ERROR" },
	{ "limit_available_101", 'N', "GET", "/api/v1/studies/available?limit=101", "{AGENT}",
	  NULL, 0, 422, "VALIDATION_ERROR" },
	{ "limit_available_100", 'N', "GET", "/api/v1/studies/available?limit=100", "{AGENT}",
	  NULL, 0, 200, NULL },
	{ "cursor_zero", 'N', "GET", TXNS "?cursor=0", "{AGENT}", NULL, 0, 422,
	  "VALIDATION_ERROR" },
	{ "cursor_letters", 'N', "GET", STUDIES "?cursor=abc", "{RES}", NULL, 0, 422,
	  "VALIDATION_ERROR" },
	/* a number this list never handed out (design.md §6.1: a bad cursor) */
	{ "cursor_unknown_studies", 'N', "GET", STUDIES "?cursor=999999999", "{RES}", NULL, 0,
	  422, "VALIDATION_ERROR" },
	{ "cursor_unknown_transactions", 'N', "GET", TXNS "?cursor=999999999", "{AGENT}", NULL, 0,
	  422, "VALIDATION_ERROR" },
	{ "cursor_unknown_history", 'N', "GET", "/api/v1/studies/history?cursor=999999999",
	  "{AGENT}", NULL, 0, 422, "VALIDATION_ERROR" },
	{ "cursor_64_bytes", 'N', "GET", STUDIES "?cursor={REP:64:1}", "{RES}", NULL, 0, 422,
	  "VALIDATION_ERROR" },
	{ "type_upper_case", 'N', "GET", TXNS "?type=EARNING", "{AGENT}", NULL, 0, 422,
	  "VALIDATION_ERROR" },
	{ "type_empty", 'N', "GET", TXNS "?type=", "{AGENT}", NULL, 0, 422, "VALIDATION_ERROR" },
	{ "type_repeated", 'N', "GET", TXNS "?type=earning&type=refund", "{AGENT}", NULL, 0, 422,
	  "VALIDATION_ERROR" },
	{ "type_escaped", 'N', "GET", TXNS "?type=%65arning&limit=%35", "{AGENT}", NULL, 0, 200,
	  NULL },
	{ "query_unknown_ignored", 'N', "GET", TXNS "?zz=1&limit=1", "{AGENT}", NULL, 0, 200,
	  NULL },

	/* --- credentials (api.md §2) --- */
	{ "key_flipped_checksum", 'N', "GET", ME, "X-API-Key: {KEYFLIP}", NULL, 0, 401,
	  "UNAUTHORIZED" },
	{ "key_base64_padding", 'N', "GET", ME, "X-API-Key: {KEY}=", NULL, 0, 401,
	  "UNAUTHORIZED" },
	{ "key_truncated", 'N', "GET", ME, "X-API-Key: {KEYSHORT}", NULL, 0, 401, "UNAUTHORIZED" },
	{ "key_prefix_upper_case", 'N', "GET", ME, "X-API-Key: ARPS_LIVE_{REP:38:A}", NULL, 0,
	  401, "UNAUTHORIZED" },
	{ "key_two_headers", 'N', "GET", ME, "X-API-Key: {KEY}\nX-API-Key: {KEY}", NULL, 0, 401,
	  "UNAUTHORIZED" },
	{ "key_two_params_fcgi", 'F', "GET", ME, "HTTP_X_API_KEY={KEY}\nHTTP_X_API_KEY={KEYFLIP}",
	  NULL, 0, 401, "UNAUTHORIZED" },
	{ "key_as_bearer_on_rest", 'N', "GET", ME, "Authorization: Bearer {KEY}", NULL, 0, 401,
	  "UNAUTHORIZED" },
	{ "key_on_bearer_route", 'N', "GET", "/api/v1/account", "{AGENT}", NULL, 0, 403,
	  "FORBIDDEN" },
	{ "key_on_researcher_route", 'N', "POST", "/api/v1/studies", "{AGENT}\n" CT_JSON, "{}", 0, 403,
	  "FORBIDDEN" },
	{ "unknown_key_on_bearer_route", 'N', "GET", "/api/v1/account", "X-API-Key: {KEYFLIP}",
	  NULL, 0, 401, "UNAUTHORIZED" },
	{ "bearer_on_key_route", 'N', "GET", ME, "{RES}", NULL, 0, 401, "UNAUTHORIZED" },
	{ "bearer_scheme_basic", 'N', "GET", "/api/v1/account", "Authorization: Basic {TOKEN}",
	  NULL, 0, 401, "UNAUTHORIZED" },
	{ "bearer_scheme_token", 'N', "GET", "/api/v1/account", "Authorization: Token {TOKEN}",
	  NULL, 0, 401, "UNAUTHORIZED" },
	{ "bearer_no_space", 'N', "GET", "/api/v1/account", "Authorization: Bearer{TOKEN}", NULL,
	  0, 401, "UNAUTHORIZED" },
	{ "bearer_lower_case_spaces", 'N', "GET", "/api/v1/account",
	  "Authorization: bEARER   {TOKEN}", NULL, 0, 200, NULL },
	{ "bearer_padding", 'N', "GET", "/api/v1/account", "Authorization: Bearer {TOKEN}=",
	  NULL, 0, 401, "UNAUTHORIZED" },
	{ "bearer_empty", 'N', "GET", "/api/v1/account", "Authorization: Bearer", NULL, 0, 401,
	  "UNAUTHORIZED" },
	/* nginx refuses a second Authorization itself; the pool refuses both */
	{ "bearer_two_headers", 'N', "GET", "/api/v1/account",
	  "Authorization: Bearer {TOKEN}\nAuthorization: Bearer {TOKEN}", NULL, 0, 400,
	  "BAD_REQUEST" },
	{ "bearer_two_params_fcgi", 'F', "GET", "/api/v1/account",
	  "HTTP_AUTHORIZATION=Bearer {TOKEN}\nHTTP_AUTHORIZATION=Bearer {TOKEN}", NULL, 0, 401,
	  "UNAUTHORIZED" },
	{ "both_bad_key_wins", 'N', "GET", "/api/v1/wallet/balance",
	  "X-API-Key: {KEYFLIP}\n{RES}", NULL, 0, 401, "UNAUTHORIZED" },
	{ "both_key_used", 'N', "GET", "/api/v1/wallet/balance", "{AGENT}\n{RES}", NULL, 0, 200,
	  NULL },
	{ "no_credential", 'N', "GET", ME, NULL, NULL, 0, 401, "UNAUTHORIZED" },

	/* --- identity-provider tokens (api.md §7.3) --- */
	{ "tok_good_rs256", 'N', "POST", LOGIN, NULL, LOGIN_TOK("good"), 0, 200, NULL },
	{ "tok_no_kid_one_key", 'N', "POST", LOGIN, NULL, LOGIN_TOK("nokid"), 0, 200, NULL },
	{ "tok_alg_none", 'N', "POST", LOGIN, NULL, LOGIN_TOK("none"), 0, 401, "INVALID_TOKEN" },
	{ "tok_alg_none_upper", 'N', "POST", LOGIN, NULL, LOGIN_TOK("NONE"), 0, 401,
	  "INVALID_TOKEN" },
	{ "tok_alg_hs256", 'N', "POST", LOGIN, NULL, LOGIN_TOK("hs256"), 0, 401,
	  "INVALID_TOKEN" },
	{ "tok_alg_rs512", 'N', "POST", LOGIN, NULL, LOGIN_TOK("rs512"), 0, 401,
	  "INVALID_TOKEN" },
	{ "tok_alg_missing", 'N', "POST", LOGIN, NULL, LOGIN_TOK("noalg"), 0, 401,
	  "INVALID_TOKEN" },
	{ "tok_alg_twice", 'N', "POST", LOGIN, NULL, LOGIN_TOK("alg2"), 0, 401,
	  "INVALID_TOKEN" },
	{ "tok_crit", 'N', "POST", LOGIN, NULL, LOGIN_TOK("crit"), 0, 401, "INVALID_TOKEN" },
	{ "tok_crit_empty", 'N', "POST", LOGIN, NULL, LOGIN_TOK("crit0"), 0, 401,
	  "INVALID_TOKEN" },
	{ "tok_jku", 'N', "POST", LOGIN, NULL, LOGIN_TOK("jku"), 0, 401, "INVALID_TOKEN" },
	{ "tok_jwk", 'N', "POST", LOGIN, NULL, LOGIN_TOK("jwk"), 0, 401, "INVALID_TOKEN" },
	{ "tok_x5c", 'N', "POST", LOGIN, NULL, LOGIN_TOK("x5c"), 0, 401, "INVALID_TOKEN" },
	{ "tok_payload_sub_twice", 'N', "POST", LOGIN, NULL, LOGIN_TOK("sub2"), 0, 401,
	  "INVALID_TOKEN" },
	{ "tok_kid_unknown", 'N', "POST", LOGIN, NULL, LOGIN_TOK("kidunknown"), 0, 401,
	  "INVALID_TOKEN" },
	{ "tok_kid_of_other_type", 'N', "POST", LOGIN, NULL, LOGIN_TOK("kided"), 0, 401,
	  "INVALID_TOKEN" },
	{ "tok_kid_number", 'N', "POST", LOGIN, NULL, LOGIN_TOK("kidnum"), 0, 401,
	  "INVALID_TOKEN" },
	{ "tok_kid_empty", 'N', "POST", LOGIN, NULL, LOGIN_TOK("kidempty"), 0, 401,
	  "INVALID_TOKEN" },
	{ "tok_header_padding", 'N', "POST", LOGIN, NULL, LOGIN_TOK("padhdr"), 0, 401,
	  "INVALID_TOKEN" },
	{ "tok_signature_padding", 'N', "POST", LOGIN, NULL, LOGIN_TOK("padsig"), 0, 401,
	  "INVALID_TOKEN" },
	{ "tok_8192_bytes", 'N', "POST", LOGIN, NULL, LOGIN_TOK("8192"), 0, 200, NULL },
	{ "tok_8193_bytes", 'N', "POST", LOGIN, NULL, LOGIN_TOK("8193"), 0, 401,
	  "INVALID_TOKEN" },
	{ "tok_32768_chars", 'N', "POST", LOGIN, NULL,
	  "{\"provider\":\"dev\",\"token\":\"{REP:32768:a}\"}", 0, 401, "INVALID_TOKEN" },
	{ "tok_32769_chars", 'N', "POST", LOGIN, NULL,
	  "{\"provider\":\"dev\",\"token\":\"{REP:32769:a}\"}", 0, 422, "VALIDATION_ERROR" },
	{ "tok_empty", 'N', "POST", LOGIN, NULL, "{\"provider\":\"dev\",\"token\":\"\"}", 0, 422,
	  "VALIDATION_ERROR" },
	{ "tok_not_string", 'N', "POST", LOGIN, NULL, "{\"provider\":\"dev\",\"token\":[]}", 0,
	  422, "VALIDATION_ERROR" },
	{ "provider_33", 'N', "POST", LOGIN, NULL,
	  "{\"provider\":\"{REP:33:d}\",\"token\":\"{TOK:good}\"}", 0, 422, "VALIDATION_ERROR" },
};
#define NROWS (sizeof rows / sizeof rows[0])

/* The Allow header the application's 405 rows must carry (api.md §1). */
static const char *const allow_of[][2] = {
	{ "put_without_length", "GET, HEAD, PATCH" },
	{ "method_delete", "GET, HEAD, PATCH" },
	{ "method_post_health", "GET, HEAD" },
	{ "method_options", "GET, HEAD" },
	{ "method_unknown_word", "GET, HEAD" },
};

/* --- the context every row shares ------------------------------------------ */

static struct test_agent agent;
static struct test_user res;
static char rsa_pem[512], ed_pem[512];
static char host[64];
static int port;
static long long res_topup = 50000000;		/* cents */
static long long created_budget;		/* the budgets the 201 rows froze */
static int created;				/* studies the 201 rows created */
static long long agent_avail0, agent_frozen0;

struct buf {
	char *p;
	size_t len, cap;
};

static void
put(struct buf *b, const void *p, size_t n)
{
	if (b->len + n + 1 > b->cap) {
		b->cap = (b->len + n + 1) * 2;
		assert_non_null(b->p = realloc(b->p, b->cap));
	}
	memcpy(b->p + b->len, p, n);
	b->len += n;
	b->p[b->len] = '\0';
}

static void
puts_(struct buf *b, const char *s)
{
	put(b, s, strlen(s));
}

/* --- identity-provider tokens ------------------------------------------------ */

static char *
cat(const char *a, const char *b)
{
	size_t n = strlen(a) + strlen(b) + 1;
	char *t = malloc(n);

	assert_non_null(t);
	snprintf(t, n, "%s%s", a, b);
	return t;
}

/* The dev claims of a fresh subject, with a "pad" claim of padn bytes. */
static char *
payload(size_t padn)
{
	struct jwt_claims c;
	unsigned char rb[8];
	char sub[40], hex[17], *p, *pad, *t;

	randombytes_buf(rb, sizeof rb);
	sodium_bin2hex(hex, sizeof hex, rb, sizeof rb);
	snprintf(sub, sizeof sub, "hostile-%s", hex);
	jwt_claims_dev(&c, sub, time(NULL));
	assert_non_null(p = jwt_payload(&c));
	if (padn == 0)
		return p;
	assert_non_null(pad = malloc(padn + 1));
	memset(pad, 'p', padn);
	pad[padn] = '\0';
	p[strlen(p) - 1] = '\0';
	t = cat(p, ",\"pad\":\"");
	free(p);
	p = cat(t, pad);
	free(t);
	t = cat(p, "\"}");
	free(p);
	free(pad);
	return t;
}

/* An RS256 token of exactly n bytes, signed with the dev key. */
static char *
token_of_size(size_t n)
{
	static const char *const hdrs[] = {
		"{\"alg\":\"RS256\",\"kid\":\"dev-rsa\"}",
		"{\"alg\":\"RS256\",\"kid\":\"dev-rsa\",\"typ\":\"JWT\"}",
		"{\"kid\":\"dev-rsa\",\"alg\":\"RS256\",\"typ\":\"JOSE\"}",
	};
	unsigned char sig[256] = { 0 };
	size_t h, padn;
	char *p, *t;

	for (h = 0; h < sizeof hdrs / sizeof hdrs[0]; h++)
		for (padn = n * 3 / 4 - 700; padn < n * 3 / 4; padn++) {
			p = payload(padn);
			t = jwt_compose(hdrs[h], p, sig, sizeof sig);	/* the size only */
			assert_non_null(t);
			if (strlen(t) == n) {
				free(t);
				t = jwt_sign_hdr(rsa_pem, hdrs[h], p);
				free(p);
				assert_non_null(t);
				assert_int_equal(strlen(t), n);
				return t;
			}
			free(t);
			free(p);
		}
	fail_msg("no token of %zu bytes", n);
	return NULL;
}

/* The token {TOK:kind} stands for (malloc'd). */
static char *
token(const char *kind)
{
	char *p = payload(0), *t = NULL, *u;
	unsigned char mac[crypto_auth_hmacsha256_BYTES];

	if (strcmp(kind, "good") == 0)
		t = jwt_sign(rsa_pem, "RS256", "dev-rsa", p);
	else if (strcmp(kind, "nokid") == 0)
		t = jwt_sign(ed_pem, "EdDSA", NULL, p);
	else if (strcmp(kind, "none") == 0)
		t = jwt_compose("{\"alg\":\"none\",\"kid\":\"dev-rsa\"}", p, NULL, 0);
	else if (strcmp(kind, "NONE") == 0)
		t = jwt_compose("{\"alg\":\"NONE\"}", p, NULL, 0);
	else if (strcmp(kind, "hs256") == 0) {
		u = jwt_compose("{\"alg\":\"HS256\",\"kid\":\"dev-rsa\"}", p, NULL, 0);
		assert_non_null(u);
		crypto_auth_hmacsha256(mac, (unsigned char *)u, strlen(u) - 1,
		    (const unsigned char *)"0123456789abcdef0123456789abcdef");
		t = jwt_compose("{\"alg\":\"HS256\",\"kid\":\"dev-rsa\"}", p, mac, sizeof mac);
		free(u);
	} else if (strcmp(kind, "rs512") == 0)	/* the header says RS512 */
		t = jwt_sign_hdr(rsa_pem, "{\"alg\":\"RS512\",\"kid\":\"dev-rsa\"}", p);
	else if (strcmp(kind, "noalg") == 0)
		t = jwt_sign_hdr(rsa_pem, "{\"kid\":\"dev-rsa\"}", p);
	else if (strcmp(kind, "alg2") == 0)
		t = jwt_sign_hdr(rsa_pem, "{\"alg\":\"none\",\"alg\":\"RS256\",\"kid\":\"dev-rsa\"}", p);
	else if (strcmp(kind, "crit") == 0)
		t = jwt_sign_hdr(rsa_pem,
		    "{\"alg\":\"RS256\",\"kid\":\"dev-rsa\",\"crit\":[\"exp\"],\"exp\":1}", p);
	else if (strcmp(kind, "crit0") == 0)
		t = jwt_sign_hdr(rsa_pem, "{\"alg\":\"RS256\",\"kid\":\"dev-rsa\",\"crit\":[]}", p);
	else if (strcmp(kind, "jku") == 0)
		t = jwt_sign_hdr(rsa_pem, "{\"alg\":\"RS256\",\"kid\":\"dev-rsa\","
		    "\"jku\":\"https://evil.example/jwks.json\"}", p);
	else if (strcmp(kind, "jwk") == 0)
		t = jwt_sign_hdr(rsa_pem, "{\"alg\":\"RS256\",\"kid\":\"dev-rsa\","
		    "\"jwk\":{\"kty\":\"oct\",\"k\":\"AAAA\"}}", p);
	else if (strcmp(kind, "x5c") == 0)
		t = jwt_sign_hdr(rsa_pem, "{\"alg\":\"RS256\",\"kid\":\"dev-rsa\","
		    "\"x5c\":[\"MIIB\"]}", p);
	else if (strcmp(kind, "sub2") == 0) {	/* {"sub":"admin", + the claims */
		u = cat("{\"sub\":\"admin\",", p + 1);
		t = jwt_sign(rsa_pem, "RS256", "dev-rsa", u);
		free(u);
	} else if (strcmp(kind, "kidunknown") == 0)
		t = jwt_sign(rsa_pem, "RS256", "dev-rsa-0", p);
	else if (strcmp(kind, "kided") == 0)	/* an RSA signature under the Ed25519 key's id */
		t = jwt_sign(rsa_pem, "RS256", "dev-ed25519", p);
	else if (strcmp(kind, "kidnum") == 0)
		t = jwt_sign_hdr(rsa_pem, "{\"alg\":\"RS256\",\"kid\":7}", p);
	else if (strcmp(kind, "kidempty") == 0)
		t = jwt_sign(rsa_pem, "RS256", "", p);
	else if (strcmp(kind, "padhdr") == 0 || strcmp(kind, "padsig") == 0) {
		u = jwt_sign(rsa_pem, "RS256", "dev-rsa", p);
		assert_non_null(u);
		if (strcmp(kind, "padsig") == 0)
			t = cat(u, "=");
		else {		/* header "=" "." payload "." sig */
			char *dot = strchr(u, '.'), *v;

			*dot = '\0';
			v = cat(u, "=.");
			t = cat(v, dot + 1);
			free(v);
		}
		free(u);
	} else if (strcmp(kind, "8192") == 0)
		t = token_of_size(8192);
	else if (strcmp(kind, "8193") == 0)
		t = token_of_size(8193);
	else
		fail_msg("unknown token kind %s", kind);
	free(p);
	assert_non_null(t);
	return t;
}

/* --- expanding a row --------------------------------------------------------- */

/* The key with its checksum's last character changed. */
static void
key_flipped(char out[APIKEY_BUFSZ])
{
	size_t n = strlen(agent.key);

	snprintf(out, APIKEY_BUFSZ, "%s", agent.key);
	out[n - 1] = out[n - 1] == 'A' ? 'B' : 'A';
}

/* s with every placeholder expanded, appended to b. */
static void
expand(struct buf *b, const char *s)
{
	char tmp[256];
	const char *end;

	while (*s != '\0') {
		if (*s != '{' || (end = strchr(s, '}')) == NULL ||
		    (strncmp(s, "{REP:", 5) != 0 && strncmp(s, "{TOK:", 5) != 0 &&
		    (size_t)(end - s) > 10)) {
			put(b, s++, 1);
			continue;
		}
		if (strncmp(s, "{AGENT}", 7) == 0)
			puts_(b, agent.hdr);
		else if (strncmp(s, "{RES}", 5) == 0)
			puts_(b, res.hdr);
		else if (strncmp(s, "{KEY}", 5) == 0)
			puts_(b, agent.key);
		else if (strncmp(s, "{KEYFLIP}", 9) == 0) {
			key_flipped(tmp);
			puts_(b, tmp);
		} else if (strncmp(s, "{TOKEN}", 7) == 0)
			puts_(b, res.token);
		else if (strncmp(s, "{KEYSHORT}", 10) == 0)
			put(b, agent.key, strlen(agent.key) - 1);
		else if (strncmp(s, "{RND}", 5) == 0) {
			unsigned char rb[4];

			randombytes_buf(rb, sizeof rb);
			sodium_bin2hex(tmp, sizeof tmp, rb, sizeof rb);
			puts_(b, tmp);
		} else if (strncmp(s, "{NUL}", 5) == 0)
			put(b, "", 1);
		else if (strncmp(s, "{REP:", 5) == 0) {
			char *colon;
			long n = strtol(s + 5, &colon, 10), i;

			assert_true(*colon == ':');
			/* the repeated text may hold '}' only as its last character */
			end = strchr(colon + 1, '}');
			if (end[1] == '}' && end == colon + 1)
				end++;
			for (i = 0; i < n; i++)
				put(b, colon + 1, (size_t)(end - colon - 1));
		} else if (strncmp(s, "{TOK:", 5) == 0) {
			char kind[32], *t;

			snprintf(kind, sizeof kind, "%.*s", (int)(end - s - 5), s + 5);
			t = token(kind);
			puts_(b, t);
			free(t);
		} else {
			put(b, s++, 1);
			continue;
		}
		s = end + 1;
	}
}

/* The body of a row: expanded, and merged into a valid study for STUDY. */
static void
row_body(struct buf *b, const struct row *row)
{
	size_t i;
	char key[64];

	if (!(row->flags & STUDY)) {
		expand(b, row->body);
		return;
	}
	puts_(b, "{");
	expand(b, row->body);
	for (i = 0; i < sizeof study_defaults / sizeof study_defaults[0]; i++) {
		snprintf(key, sizeof key, "\"%s\":", study_defaults[i][0]);
		if (strstr(row->body, key) != NULL)
			continue;
		puts_(b, ",");
		puts_(b, key);
		puts_(b, study_defaults[i][1]);
	}
	puts_(b, "}");
}

/* --- raw HTTP to nginx ------------------------------------------------------- */

/* The chunked body at p (n bytes) decoded in place; its new length. */
static size_t
dechunk(char *p, size_t n)
{
	size_t in = 0, out = 0, k;
	char *e;

	while (in < n) {
		k = strtoul(p + in, &e, 16);
		if ((e = strstr(e, "\r\n")) == NULL)
			break;
		in = (size_t)(e - p) + 2;
		if (k == 0 || in + k > n)
			break;
		memmove(p + out, p + in, k);
		out += k;
		in += k + 2;
	}
	p[out] = '\0';
	return out;
}

/* Send req (n bytes) from a fresh loopback address; read the answer to EOF. */
static struct resp
raw_http(const char *req, size_t n)
{
	struct sockaddr_in sa, src;
	struct timeval tv = { 30, 0 };
	struct resp r;
	struct buf in = { 0 };
	char ip[32], chunk[16384], *hend, *line;
	size_t off, hl;
	ssize_t got;
	int fd;

	memset(&r, 0, sizeof r);
	assert_true((fd = socket(AF_INET, SOCK_STREAM, 0)) >= 0);
	memset(&src, 0, sizeof src);
	src.sin_family = AF_INET;
	assert_int_equal(inet_pton(AF_INET, random_ip(ip), &src.sin_addr), 1);
	assert_int_equal(bind(fd, (struct sockaddr *)&src, sizeof src), 0);
	assert_int_equal(setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv), 0);
	memset(&sa, 0, sizeof sa);
	sa.sin_family = AF_INET;
	sa.sin_port = htons((uint16_t)port);
	assert_int_equal(inet_pton(AF_INET, host, &sa.sin_addr), 1);
	assert_int_equal(connect(fd, (struct sockaddr *)&sa, sizeof sa), 0);
	for (off = 0; off < n;) {
		got = write(fd, req + off, n - off);
		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0)	/* nginx may answer and close before it read all */
			break;
		off += (size_t)got;
	}
	for (;;) {
		got = read(fd, chunk, sizeof chunk);
		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0)
			break;
		put(&in, chunk, (size_t)got);
	}
	close(fd);
	if (in.p == NULL || (hend = strstr(in.p, "\r\n\r\n")) == NULL) {
		free(in.p);
		return r;
	}
	r.status = strtol(in.p + 9, NULL, 10);		/* "HTTP/1.1 200 OK" */
	line = strstr(in.p, "\r\n") + 2;
	hl = (size_t)(hend + 2 - line);
	if (hl >= sizeof r.headers)
		hl = sizeof r.headers - 1;
	memcpy(r.headers, line, hl);
	r.headers[hl] = '\0';
	r.len = in.len - (size_t)(hend + 4 - in.p);
	assert_non_null(r.body = malloc(r.len + 1));
	memcpy(r.body, hend + 4, r.len);
	r.body[r.len] = '\0';
	free(in.p);
	{
		char te[64];

		if (resp_header(&r, "Transfer-Encoding", te, sizeof te) != NULL &&
		    strcasecmp(te, "chunked") == 0)
			r.len = dechunk(r.body, r.len);
	}
	if (r.len > 0 && val_utf8(r.body, r.len, NULL))
		r.json = json_tokener_parse(r.body);
	return r;
}

static struct resp
send_nginx(const struct row *row, const struct buf *body)
{
	struct buf req = { 0 }, hdrs = { 0 };
	struct resp r;
	char line[160];

	puts_(&req, row->method);
	puts_(&req, " ");
	expand(&req, row->path);
	puts_(&req, row->flags & HTTP10 ? " HTTP/1.0\r\n" : " HTTP/1.1\r\n");
	snprintf(line, sizeof line, "Host: %s:%d\r\nConnection: close\r\n", host, port);
	puts_(&req, line);
	if (row->headers != NULL) {
		const char *s, *nl;

		expand(&hdrs, row->headers);
		for (s = hdrs.p; s != NULL && *s != '\0'; s = nl ? nl + 1 : NULL) {
			nl = strchr(s, '\n');
			put(&req, s, nl ? (size_t)(nl - s) : strlen(s));
			puts_(&req, "\r\n");
			if (nl == NULL)
				break;
		}
	}
	if (body->p != NULL && !(row->flags & NO_CL)) {
		snprintf(line, sizeof line, "Content-Length: %zu\r\n", body->len);
		puts_(&req, line);
	}
	if (body->p != NULL && body->len > 0 && !(row->flags & NO_CT))
		puts_(&req, CT_JSON "\r\n");
	puts_(&req, "\r\n");
	if (body->p != NULL)
		put(&req, body->p, body->len);
	r = raw_http(req.p, req.len);
	free(req.p);
	free(hdrs.p);
	return r;
}

static struct resp
send_fcgi(const struct row *row, const struct buf *body)
{
	struct buf path = { 0 }, hdrs = { 0 };
	const char *params[32];
	char ip[32], *q, *s, *nl;
	size_t n = 0, i;
	struct resp r;
	char *owned[32];
	size_t nowned = 0;

	expand(&path, row->path);
	q = strchr(path.p, '?');
#define PARAM(...) do {							\
		char *t_;						\
		assert_true(asprintf(&t_, __VA_ARGS__) > 0);		\
		owned[nowned++] = t_;					\
		params[n++] = t_;					\
	} while (0)
	PARAM("REQUEST_METHOD=%s", row->method);
	PARAM("REQUEST_URI=%s", path.p);
	PARAM("DOCUMENT_URI=%.*s", (int)(q ? (size_t)(q - path.p) : path.len), path.p);
	PARAM("QUERY_STRING=%s", q ? q + 1 : "");
	PARAM("SERVER_PROTOCOL=HTTP/1.1");
	PARAM("REMOTE_ADDR=127.0.0.1");
	PARAM("HTTP_X_REQUEST_ID=hostile-table");
	PARAM("HTTP_X_REAL_IP=%s", random_ip(ip));
	if (body->p != NULL && !(row->flags & NO_CL))
		PARAM("CONTENT_LENGTH=%zu", body->len);
	if (body->p != NULL && !(row->flags & NO_CT))
		PARAM("CONTENT_TYPE=application/json");
#undef PARAM
	if (row->headers != NULL) {
		expand(&hdrs, row->headers);
		for (s = hdrs.p; s != NULL; s = nl ? nl + 1 : NULL) {
			nl = strchr(s, '\n');
			if (nl != NULL)
				*nl = '\0';
			params[n++] = s;
			if (nl == NULL)
				break;
		}
	}
	params[n] = NULL;
	r = fcgi_raw(params, body->p, body->len);
	for (i = 0; i < nowned; i++)
		free(owned[i]);
	free(path.p);
	free(hdrs.p);
	return r;
}

/* --- the rows ------------------------------------------------------------------ */

/* The answer must be exactly {detail, error_code, status} with a detail. */
static void
assert_error_body(const struct row *row, const struct resp *r)
{
	struct json_object *v;

	if (r->status != row->status || r->json == NULL ||
	    !json_object_is_type(r->json, json_type_object))
		print_error("%s: %ld %s\n", row->name, r->status, r->body ? r->body : "");
	assert_int_equal(r->status, row->status);
	assert_non_null(r->json);
	assert_int_equal(json_object_object_length(r->json), 3);
	assert_true(json_object_object_get_ex(r->json, "detail", &v));
	assert_true(json_object_is_type(v, json_type_string));
	assert_true(json_object_get_string_len(v) > 0);
	/* a reason a client can read, not the JSON parser's state name */
	if (strstr(json_object_get_string(v), ": continue") != NULL ||
	    strstr(json_object_get_string(v), ": success") != NULL)
		print_error("%s: detail %s\n", row->name, json_object_get_string(v));
	assert_null(strstr(json_object_get_string(v), ": continue"));
	assert_null(strstr(json_object_get_string(v), ": success"));
	assert_true(json_object_object_get_ex(r->json, "status", &v));
	assert_true(json_object_is_type(v, json_type_int));
	assert_int_equal(json_object_get_int64(v), row->status);
	assert_true(json_object_object_get_ex(r->json, "error_code", &v));
	if (strcmp(json_object_get_string(v), row->code) != 0)
		print_error("%s: %ld %s\n", row->name, r->status, r->body);
	assert_string_equal(json_object_get_string(v), row->code);
}

static void
run_row(void **state)
{
	const struct row *row = *state;
	struct buf body = { 0 };
	struct resp r;

	if (row->body != NULL) {
		row_body(&body, row);
		if (body.p == NULL)
			put(&body, "", 0);
	}
	r = row->layer == 'F' ? send_fcgi(row, &body) : send_nginx(row, &body);
	if (row->code != NULL) {
		assert_error_body(row, &r);
		for (size_t i = 0; i < sizeof allow_of / sizeof allow_of[0]; i++) {
			char allow[128];

			if (strcmp(allow_of[i][0], row->name) != 0)
				continue;
			assert_non_null(resp_header(&r, "Allow", allow, sizeof allow));
			assert_string_equal(allow, allow_of[i][1]);
		}
	} else {
		if (r.status != row->status)
			print_error("%s: %ld %s\n", row->name, r.status, r.body ? r.body : "");
		assert_int_equal(r.status, row->status);
		if (strcmp(row->method, "HEAD") == 0)
			assert_int_equal(r.len, 0);
		else
			assert_non_null(r.json);
		if (r.status == 201 && strcmp(row->path, STUDIES) == 0) {
			struct json_object *v = jget(r.json, "funding.total_budget_cents");

			assert_non_null(v);
			created_budget += json_object_get_int64(v);
			created++;
		}
	}
	resp_free(&r);
	free(body.p);
}

/* After the table: no refused create left a study, the money moved only for
 * the 201 rows, the agent's wallet and name are as the rows left them, and
 * the ledger balances. */
static void
nothing_else_changed(void **state)
{
	long long avail, frozen, a2, f2;
	struct resp r;

	(void)state;
	r = get_as(res.hdr, "/api/v1/studies?limit=200");
	assert_int_equal(r.status, 200);
	assert_int_equal(json_object_array_length(jget(r.json, "studies")), created);
	resp_free(&r);
	admin_wallet(res.id, &avail, &frozen);
	assert_int_equal(avail, res_topup - created_budget);
	assert_int_equal(frozen, created_budget);
	admin_wallet(agent.id, &a2, &f2);
	assert_int_equal(a2, agent_avail0);
	assert_int_equal(f2, agent_frozen0);
	r = get_as(agent.hdr, "/api/v1/agents/me");
	assert_int_equal(r.status, 200);
	/* the last name a 200 row set: 100 escaped surrogate pairs, one 😀 each */
	{
		struct buf want = { 0 };

		expand(&want, "{REP:100:" U8_4 "}");
		assert_string_equal(jstr(&r, "name"), want.p);
		free(want.p);
	}
	resp_free(&r);
	assert_int_equal(admin(NULL, 0, "verify-ledger"), 0);
}

/* JSON has no NaN or Infinity: json-c's extension is refused. */
static void
non_finite_numbers(void **state)
{
	static const char *bodies[] = {
		"{\"bio\":\"I like hiking.\",\"x\":NaN}", "{\"bio\":Infinity}",
		"{\"bio\":\"ok\",\"x\":[1,{\"y\":-Infinity}]}", "{\"bio\":\"ok\",\"x\":nan}",
	};
	struct test_agent a;
	struct resp r;
	size_t i;

	(void)state;
	agent_new(&a, "Number tester");
	for (i = 0; i < sizeof bodies / sizeof bodies[0]; i++) {
		r = http_post("/api/v1/profile/bio", bodies[i], HDRS(a.hdr));
		assert_error(&r, 400, "INVALID_JSON");
		resp_free(&r);
	}
	r = http_get("/api/v1/profile/bio", HDRS(a.hdr));
	assert_int_equal(r.status, 200);
	assert_string_equal(jstr(&r, "embedding_status"), "none");
	resp_free(&r);
	r = http_post("/api/v1/profile/bio", "{\"bio\":\"I like hiking.\",\"x\":1.5e3}",
	    HDRS(a.hdr));
	assert_int_equal(r.status, 200);
	resp_free(&r);
}

static void
body_too_large_413(void **state)
{
	size_t n = 64 * 1024 + 1;
	char *big = malloc(n + 1);
	struct resp r;

	(void)state;
	memset(big, ' ', n);
	big[0] = '{';
	big[n - 1] = '}';
	big[n] = '\0';
	r = http_post("/api/v1/health", big, NULL);
	assert_error(&r, 413, "PAYLOAD_TOO_LARGE");
	resp_free(&r);
	free(big);
}

static int
group_setup(void **state)
{
	const char *var = getenv("ARPS_VAR"), *b = base_url(), *p;

	(void)state;
	if (var == NULL || strncmp(b, "http://", 7) != 0)
		return -1;
	snprintf(rsa_pem, sizeof rsa_pem, "%s/idp/dev-rsa.pem", var);
	snprintf(ed_pem, sizeof ed_pem, "%s/idp/dev-ed25519.pem", var);
	p = strchr(b + 7, ':');
	if (p == NULL)
		return -1;
	snprintf(host, sizeof host, "%.*s", (int)(p - b - 7), b + 7);
	if (strcmp(host, "localhost") == 0)
		snprintf(host, sizeof host, "127.0.0.1");
	port = atoi(p + 1);
	return 0;
}

/* The researcher (topped up) and the claimed agent every row uses. */
static void
context(void **state)
{
	struct test_user owner;

	(void)state;
	researcher(&res, res_topup);
	agent_claimed(&agent, &owner, "Hostile");
	admin_wallet(agent.id, &agent_avail0, &agent_frozen0);
}

int
main(void)
{
	struct CMUnitTest tests[NROWS + 4];
	size_t i, n = 0;

	tests[n++] = (struct CMUnitTest)cmocka_unit_test(context);
	for (i = 0; i < NROWS; i++) {
		tests[n] = (struct CMUnitTest)cmocka_unit_test_prestate(run_row,
		    (void *)(uintptr_t)&rows[i]);
		tests[n++].name = rows[i].name;
	}
	tests[n++] = (struct CMUnitTest)cmocka_unit_test(nothing_else_changed);
	tests[n++] = (struct CMUnitTest)cmocka_unit_test(non_finite_numbers);
	tests[n++] = (struct CMUnitTest)cmocka_unit_test(body_too_large_413);
	return _cmocka_run_group_tests("hostile", tests, n, group_setup, NULL);
}
