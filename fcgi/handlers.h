/* Every handler of the routing table, one file per resource. */
#ifndef ARPS_FCGI_HANDLERS_H
#define ARPS_FCGI_HANDLERS_H

#include "fcgi/http.h"

/* {"status": s} */
struct json_object *json_pack_status(const char *s);

int h_health(struct req *);

#endif
