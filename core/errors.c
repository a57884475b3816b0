#include "errors.h"

static const struct {
	int status;
	const char *code;
} errtab[ARPS_ERR__MAX] = {
#define ARPS_ERR_ROW(e, s, c) [e] = { s, c },
	ARPS_ERRORS(ARPS_ERR_ROW)
#undef ARPS_ERR_ROW
};

int
arps_err_status(enum arps_err e)
{
	if ((unsigned)e >= ARPS_ERR__MAX)
		return 500;
	return errtab[e].status;
}

const char *
arps_err_code(enum arps_err e)
{
	if ((unsigned)e >= ARPS_ERR__MAX)
		return "INTERNAL_ERROR";
	return errtab[e].code;
}
