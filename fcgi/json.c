#include "fcgi/handlers.h"

struct json_object *
json_pack_status(const char *s)
{
	struct json_object *o = json_object_new_object();

	json_object_object_add(o, "status", json_object_new_string(s));
	return o;
}
