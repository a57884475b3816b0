/*
 * Declarative body decoding: a handler lists its fields once (name, type,
 * bounds, where the value goes) and sees only parsed, validated values.
 * String values point into the request's JSON and live as long as it.
 */
#ifndef ARPS_FCGI_FIELDS_H
#define ARPS_FCGI_FIELDS_H

#include <stddef.h>
#include <stdint.h>

#include "fcgi/http.h"

enum ftype {
	F_STR,		/* string, min..max code points */
	F_NAME,		/* F_STR, one line: no control character, not blank */
	F_TEXT,		/* F_STR, may span lines (tab, CR, LF): no other control
			 * character, not blank when min > 0 */
	F_INT,		/* integer, min..max */
	F_TIME,		/* ISO 8601 string -> int64 unix seconds */
	F_URL,		/* http(s) URL string */
	F_EMAIL,	/* e-mail address string */
	F_ARRAY,	/* array of min..max items -> struct json_object * (borrowed);
			 * its items are decoded by the handler (decode_item_or_reply,
			 * decode_item_str_or_reply); fcgi/mcp.c's array_items names
			 * the item table of its schema */
	F_OBJECT,	/* an object -> struct json_object * (borrowed), decoded by
			 * the handler */
};

#define F_REQUIRED	0x1
#define F_NULLABLE	0x2	/* JSON null counts as absent */

struct field {
	const char *name;
	enum ftype type;
	unsigned flags;
	int64_t min, max;
	size_t off;		/* offsetof the destination: const char *, int64_t or
				 * struct json_object * (F_ARRAY, F_OBJECT) */
};

#define NFIELDS(a) (sizeof(a) / sizeof((a)[0]))

/* A field table with its length, for a reader outside its handler's file:
 * the MCP tools' input schemas (fcgi/mcp.c, design.md §11). */
struct field_list {
	const struct field *f;
	size_t n;
};
#define FIELD_LIST(a) { (a), NFIELDS(a) }

/*
 * A field table whose "given" bits are read is written once as an X-macro
 * list of X(struct, ID, name, type, flags, min, max, member) rows:
 *	enum { STUDY_FIELDS(FIELD_INDEX) };
 *	static const struct field study_fields[] = { STUDY_FIELDS(FIELD_ROW) };
 * so ID is the row's index and FIELD_GIVEN(present, ID) its bit: the bits
 * cannot drift from the table.
 */
#define FIELD_INDEX(st, id, name, type, flags, min, max, member) id,
#define FIELD_ROW(st, id, name, type, flags, min, max, member) \
	{ name, type, flags, min, max, offsetof(struct st, member) },
#define FIELD_BIT(i)		(1u << (i))
#define FIELD_GIVEN(present, id) (((present) & FIELD_BIT(id)) != 0)

/*
 * Decode r's JSON body into out by the field table.  *present gets one bit
 * per field (FIELD_BIT(i) for fields[i]) that was given.  On any problem answers
 * 400/415/422 (the detail names the field) and returns H_REPLIED; H_OK
 * when out is filled.
 */
enum h_rc decode_body_or_reply(struct req *r, const struct field *fields, size_t n, void *out,
    unsigned *present);
/*
 * The same for one item of an F_ARRAY field: obj must be an object,
 * decoded by the item table; a refusal's detail names the item as
 * "<array>[<i>].<field>: ..." (design.md §13's row-indexed details).
 */
enum h_rc decode_item_or_reply(struct req *r, struct json_object *obj, const char *array,
    size_t i, const struct field *fields, size_t n, void *out, unsigned *present);
/* Item i of an F_ARRAY of strings: *s the string (1..max code points, no
 * control character), or a 422 "<array>[<i>]: ..." answered. */
enum h_rc decode_item_str_or_reply(struct req *r, struct json_object *arr, const char *array,
    size_t i, size_t max, const char **s);

/* `limit` and `cursor` query parameters of a list (design.md §6.15);
 * answers 422 and returns H_REPLIED on a bad value.  cursor is 0 when
 * absent. */
enum h_rc decode_page_or_reply(struct req *r, int64_t def, int64_t max, int64_t *limit,
    int64_t *cursor);

#endif
