/* The event catalogue: names of core/events.h. */
#include <string.h>

#include "core/events.h"
#include "core/names.h"

static const struct {
	const char *name;
	int who;	/* 1 agents, 0 accounts, -1 both */
} types[EV__MAX] = {
#define EVENT_ROW_(e, n, w) [e] = { n, w },
	EVENT_TYPES(EVENT_ROW_)
#undef EVENT_ROW_
};

NAMES_AT_FN(event_type_name, enum event_type, NAMES_FIELD(types, EV__MAX, name))
NAMES_FIND_FN(event_type_from_name, enum event_type, NAMES_FIELD(types, EV__MAX, name))

bool
event_type_for(enum event_type t, bool agent)
{
	if ((unsigned)t >= EV__MAX)
		return false;
	return types[t].who < 0 || (types[t].who == 1) == agent;
}

bool
event_list_has(const char *list, const char *type)
{
	size_t n = strlen(type);
	const char *p = list;

	while (p != NULL && *p != '\0') {
		if (strncmp(p, type, n) == 0 && (p[n] == ',' || p[n] == '\0'))
			return true;
		if ((p = strchr(p, ',')) != NULL)
			p++;
	}
	return false;
}

bool
event_json_str(const char *s, char *out, size_t n)
{
	static const char hex[] = "0123456789abcdef";
	size_t o = 0;
	unsigned char c;

	if (s == NULL || out == NULL || n < 3)
		return false;
	out[o++] = '"';
	for (; (c = (unsigned char)*s) != '\0'; s++) {
		if (c == '"' || c == '\\') {
			if (o + 2 >= n)
				return false;
			out[o++] = '\\';
			out[o++] = (char)c;
		} else if (c < 0x20 || c == 0x7f) {
			if (o + 6 >= n)
				return false;
			out[o++] = '\\';
			out[o++] = 'u';
			out[o++] = '0';
			out[o++] = '0';
			out[o++] = hex[c >> 4];
			out[o++] = hex[c & 15];
		} else {
			if (o + 1 >= n)
				return false;
			out[o++] = (char)c;
		}
	}
	if (o + 2 > n)
		return false;
	out[o++] = '"';
	out[o] = '\0';
	return true;
}
