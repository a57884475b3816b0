/*
 * arps error table: every outcome the service can answer with.
 * One row per code: enum, HTTP status, error_code string.  core/ returns
 * these from rules and transitions; fcgi/ renders them as
 * {detail, error_code, status}.  ARPS_OK is 0; every other value is an error.
 *
 * The return convention of core/ (design.md §2.3): a function that can
 * refuse returns enum arps_err, ARPS_OK or the reason (which is also the
 * API's error code); a predicate returns bool; a function that computes a
 * value (a count, an index, a comparison, an HTTP status) returns it.
 * Outputs are written only on success unless the function says otherwise.
 */
#ifndef ARPS_CORE_ERRORS_H
#define ARPS_CORE_ERRORS_H

#define ARPS_ERRORS(X) \
	X(ARPS_OK,                        200, "OK") \
	X(ARPS_E_UNAUTHORIZED,            401, "UNAUTHORIZED") \
	X(ARPS_E_FORBIDDEN,               403, "FORBIDDEN") \
	X(ARPS_E_ACTIVE_PARTICIPATION,    409, "ACTIVE_PARTICIPATION_EXISTS") \
	X(ARPS_E_STUDY_NOT_ACTIVE,        400, "STUDY_NOT_ACTIVE") \
	X(ARPS_E_INSUFFICIENT_SC,         402, "INSUFFICIENT_SC") \
	X(ARPS_E_NOT_FOUND,               404, "NOT_FOUND") \
	X(ARPS_E_METHOD_NOT_ALLOWED,      405, "METHOD_NOT_ALLOWED") \
	X(ARPS_E_INVALID_JSON,            400, "INVALID_JSON") \
	X(ARPS_E_BAD_REQUEST,             400, "BAD_REQUEST") \
	X(ARPS_E_VALIDATION,              422, "VALIDATION_ERROR") \
	X(ARPS_E_PAYLOAD_TOO_LARGE,       413, "PAYLOAD_TOO_LARGE") \
	X(ARPS_E_RATE_LIMITED,            429, "RATE_LIMITED") \
	X(ARPS_E_AGENT_SUSPENDED,         403, "AGENT_SUSPENDED") \
	X(ARPS_E_AGENT_NOT_CLAIMED,       403, "AGENT_NOT_CLAIMED") \
	X(ARPS_E_ALREADY_CLAIMED,         409, "ALREADY_CLAIMED") \
	X(ARPS_E_STUDY_FULL,              409, "STUDY_FULL") \
	X(ARPS_E_NO_ACTIVE_PARTICIPATION, 409, "NO_ACTIVE_PARTICIPATION") \
	X(ARPS_E_TIMED_OUT,               409, "NO_ACTIVE_PARTICIPATION") \
	X(ARPS_E_INVALID_STATE,           409, "INVALID_STATE") \
	X(ARPS_E_INVALID_SUBMISSION,      422, "INVALID_SUBMISSION") \
	X(ARPS_E_INVALID_CODE,            401, "INVALID_CODE") \
	X(ARPS_E_INVALID_TOKEN,           401, "INVALID_TOKEN") \
	X(ARPS_E_INSUFFICIENT_FUNDS,      402, "INSUFFICIENT_FUNDS") \
	X(ARPS_E_IDEMPOTENCY_CONFLICT,    409, "IDEMPOTENCY_CONFLICT") \
	X(ARPS_E_INTERNAL,                500, "INTERNAL_ERROR") \
	X(ARPS_E_UNAVAILABLE,             503, "SERVICE_UNAVAILABLE") \
	X(ARPS_E_UNSUPPORTED_MEDIA_TYPE,  415, "UNSUPPORTED_MEDIA_TYPE") \
	X(ARPS_E_ALREADY_PARTICIPATED,    409, "ALREADY_PARTICIPATED") \
	X(ARPS_E_CODE_REQUIRED,           422, "COMPLETION_CODE_REQUIRED") \
	X(ARPS_E_OWN_STUDY,               403, "OWN_STUDY") \
	/* answered by nginx on the production site's port 80 (nginx/arps-http.conf) */ \
	X(ARPS_E_HTTPS_REQUIRED,          403, "HTTPS_REQUIRED") \
	X(ARPS_E_OVERFLOW,                422, "VALIDATION_ERROR")

enum arps_err {
#define ARPS_ERR_ENUM(e, s, c) e,
	ARPS_ERRORS(ARPS_ERR_ENUM)
#undef ARPS_ERR_ENUM
	ARPS_ERR__MAX
};

/* HTTP status of an error; 500 for an out-of-range value. */
int arps_err_status(enum arps_err e);
/* The API's error_code string; "INTERNAL_ERROR" for an out-of-range value. */
const char *arps_err_code(enum arps_err e);

#endif
