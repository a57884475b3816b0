/*
 * libFuzzer: body decoding of every endpoint (make fuzz).  One input is a
 * selector byte, a flags byte, then the body.  The selector picks a row of
 * the real routing table (fcgi/routes.c, every row: a GET with a body and
 * MCP included); the request goes to that row's path (its "{}" segments
 * filled with well-formed ids) with the row's method, through the real
 * dispatch into the real handler, which decodes the body with its own
 * field table (fuzz_edge.h: authentication admits a fixed principal, the
 * database is absent, so a body that decodes answers 503).  The flags pick
 * the Content-Type and the principal.
 *
 * The same body is decoded directly (decode_body_or_reply) with every
 * field table the handlers export and one of every field type, and what
 * decodes is checked: only the table's bits are set, a required field is
 * present, a string is valid UTF-8 without NUL and min..max code points
 * long, a name or text field has no control byte it must not, an integer
 * is within min..max.  Every answer is checked as in fuzz_edge.h.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fcgi/fields.h"
#include "fcgi/handlers.h"
#include "fcgi/mcp.h"
#include "tests/fuzz/fuzz_edge.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct all {
	const char *s, *name, *text, *url, *email;
	int64_t i, t;
};

static const struct field all_fields[] = {
	{ "s", F_STR, F_REQUIRED, 1, 100, offsetof(struct all, s) },
	{ "name", F_NAME, 0, 1, 40, offsetof(struct all, name) },
	{ "text", F_TEXT, F_NULLABLE, 0, 2000, offsetof(struct all, text) },
	{ "url", F_URL, 0, 0, 0, offsetof(struct all, url) },
	{ "email", F_EMAIL, F_NULLABLE, 0, 0, offsetof(struct all, email) },
	{ "i", F_INT, 0, -5, 1000000, offsetof(struct all, i) },
	{ "t", F_TIME, 0, 0, 0, offsetof(struct all, t) },
};
static const struct field_list fields_all = FIELD_LIST(all_fields);

static const struct field_list *const tables[] = {
	&fields_all, &fields_me_patch, &fields_bio, &fields_study, &fields_review, &fields_claim,
	&fields_complete,
};

static const char *const ctypes[] = {
	"application/json", "application/json; charset=utf-8", "text/plain", NULL,
};

/* The row's path with each "{}" filled by an id of the kind the segment
 * before it names. */
static void
route_path(const char *pat, char *out, size_t outsz)
{
	size_t o = 0;
	const char *p, *prev = pat;

	for (p = pat; *p != '\0' && o + 32 < outsz; p++) {
		if (p[0] == '{' && p[1] == '}') {
			const char *id = "std_Fuzz000000000000";

			if (strncmp(prev, "/participants/", 14) == 0)
				id = "anon_0123456789abcdef";
			else if (strncmp(prev, "/webhooks/", 10) == 0)
				id = "whk_Fuzz000000000000";
			else if (strncmp(prev, "/agents/", 8) == 0)
				id = "agt_Fuzz000000000000";
			o += (size_t)snprintf(out + o, outsz - o, "%s", id);
			p++;
			continue;
		}
		if (*p == '/')
			prev = p;
		out[o++] = *p;
	}
	out[o] = '\0';
}

/* What decoding let through holds to the table. */
static void
check_decoded(const struct field_list *t, const unsigned char *out, unsigned present)
{
	size_t i, len, nchars, j;

	FUZZ_CHECK(t->n >= 32 || (present >> t->n) == 0);
	for (i = 0; i < t->n; i++) {
		const struct field *f = &t->f[i];
		const char *s;
		int64_t v;

		if (!(present & FIELD_BIT(i))) {
			FUZZ_CHECK(!(f->flags & F_REQUIRED));
			continue;
		}
		if (f->type == F_INT || f->type == F_TIME) {
			memcpy(&v, out + f->off, sizeof v);
			if (f->type == F_INT)
				FUZZ_CHECK(v >= f->min && v <= f->max);
			continue;
		}
		memcpy(&s, out + f->off, sizeof s);
		FUZZ_CHECK(s != NULL);
		len = strlen(s);
		FUZZ_CHECK(val_utf8(s, len, &nchars));
		if (f->type == F_STR || f->type == F_NAME || f->type == F_TEXT)
			FUZZ_CHECK((int64_t)nchars >= f->min && (int64_t)nchars <= f->max);
		for (j = 0; f->type == F_NAME && j < len; j++)
			FUZZ_CHECK((unsigned char)s[j] >= 0x20 && s[j] != 0x7f);
		for (j = 0; f->type == F_TEXT && j < len; j++)
			FUZZ_CHECK(((unsigned char)s[j] >= 0x20 && s[j] != 0x7f) ||
			    s[j] == '\t' || s[j] == '\n' || s[j] == '\r');
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	unsigned char out[512];
	const struct field_list *t;
	const struct route *row;
	struct req r;
	unsigned present;
	char *body;

	if (size < 2 || size - 2 > REQ_MAX_BODY)
		return 0;
	if ((body = malloc(size - 1)) == NULL)
		return 0;
	memcpy(body, data + 2, size - 2);
	body[size - 2] = '\0';

	/* the real handler of one route */
	row = &routes[data[0] % nroutes];
	fuzz_req_init(&r);
	fuzz_who = (data[1] & 0x4) ? AUTH_BEARER : AUTH_KEY;
	r.method = row->method;
	route_path(row->pattern, r.pathbuf, sizeof r.pathbuf);
	r.path = r.pathbuf;
	r.ctype = ctypes[data[1] & 3];
	r.body = body;
	r.blen = size - 2;
	mcp_or_dispatch(&r);
	fuzz_check_params(&r);
	fuzz_check_answer(&r, row->fn == NULL);

	/* the field tables, directly */
	t = tables[data[0] % (sizeof tables / sizeof tables[0])];
	fuzz_req_init(&r);
	r.method = "POST";
	r.path = "/api/v1/x";
	r.ctype = ctypes[data[1] & 3];
	r.body = body;
	r.blen = size - 2;
	memset(out, 0, sizeof out);
	for (size_t i = 0; i < t->n; i++)
		FUZZ_CHECK(t->f[i].off + sizeof(int64_t) <= sizeof out);
	if (decode_body_or_reply(&r, t->f, t->n, out, &present) == H_OK) {
		FUZZ_CHECK(r.status == 0 && r.out == NULL);
		check_decoded(t, out, present);
		if (r.json != NULL)
			json_object_put(r.json);
	} else {
		FUZZ_CHECK(r.status == 400 || r.status == 415 || r.status == 422);
		fuzz_check_answer(&r, 0);
	}
	free(body);
	return 0;
}
