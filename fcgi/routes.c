#include "fcgi/handlers.h"

/* The routing table: adding an endpoint is adding a row. */
const struct route routes[] = {
	{ "GET",  "/api/v1/health", AUTH_NONE, h_health, 0 },
};
const size_t nroutes = sizeof routes / sizeof routes[0];
