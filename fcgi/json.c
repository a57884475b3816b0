#include <stdio.h>
#include <string.h>

#include <sodium.h>

#include "core/netkey.h"
#include "core/timefmt.h"
#include "db/limits.h"
#include "fcgi/handlers.h"
#include "lib/secret.h"

struct json_object *
json_pack_status(const char *s)
{
	struct json_object *o = json_object_new_object();

	json_object_object_add(o, "status", json_object_new_string(s));
	return o;
}

void
jadd_str(struct json_object *o, const char *key, const char *s)
{
	json_object_object_add(o, key, s ? json_object_new_string(s) : NULL);
}

void
jadd_int(struct json_object *o, const char *key, int64_t v)
{
	json_object_object_add(o, key, json_object_new_int64(v));
}

void
jadd_time(struct json_object *o, const char *key, int64_t t)
{
	char buf[TIMEFMT_BUFSZ];

	if (t <= 0 || timefmt_format(t, buf) != 0) {
		json_object_object_add(o, key, NULL);
		return;
	}
	json_object_object_add(o, key, json_object_new_string(buf));
}

void
jadd_action(struct json_object *arr, const char *action, const char *endpoint, const char *desc)
{
	struct json_object *a = json_object_new_object();

	jadd_str(a, "action", action);
	jadd_str(a, "endpoint", endpoint);
	if (desc != NULL)
		jadd_str(a, "description", desc);
	json_object_array_add(arr, a);
}

void
jadd_cursor(struct json_object *o, int64_t next)
{
	char buf[32];

	if (next <= 0) {
		json_object_object_add(o, "next_cursor", NULL);
		return;
	}
	snprintf(buf, sizeof buf, "%lld", (long long)next);
	jadd_str(o, "next_cursor", buf);
}

enum h_rc
reply_page(struct req *r, const char *key, struct json_object *arr, int64_t next)
{
	struct json_object *o = json_object_new_object();

	json_object_object_add(o, key, arr);
	jadd_cursor(o, next);
	return reply_json(r, 200, o);
}

void
rate_bucket_net(const struct req *r, const char *kind, char *buf, size_t n)
{
	char net[NETKEY_BUFSZ];

	(void)netkey_of(r->ip, net);
	snprintf(buf, n, "%s:%s", kind, net);
}

void
rate_bucket_hashed(const struct req *r, const char *kind, const char *subject, char *buf,
    size_t n)
{
	unsigned char h[32];
	char hex[33];

	secret_hash(r->cfg, "rate-bucket", subject, strlen(subject), h);
	sodium_bin2hex(hex, sizeof hex, h, 16);
	snprintf(buf, n, "%s:%s", kind, hex);
}

/* The 429 of a full bucket. */
static enum db_rc
rate_refuse(struct req *r, int64_t max, const char *what, int64_t retry)
{
	reply_header(r, "Retry-After", "%lld", (long long)retry);
	reply_err(r, ARPS_E_RATE_LIMITED, "at most %lld %s per hour; retry in %lld seconds",
	    (long long)max, what, (long long)retry);
	return DB_ROLLBACK;
}

enum db_rc
rate_take_or_reply(struct req *r, const char *bucket, int64_t window, int64_t max,
    const char *what)
{
	int64_t retry;
	int allowed;
	enum db_rc rc;

	if ((rc = db_rate_take(r->db, bucket, window, max, r->now, &allowed, &retry)) != DB_OK)
		return rc;
	return allowed ? DB_OK : rate_refuse(r, max, what, retry);
}

enum db_rc
rate_take_n_or_reply(struct req *r, const char *bucket, int64_t window, int64_t max, int64_t k,
    const char *what)
{
	int64_t retry;
	int allowed;
	enum db_rc rc;

	if ((rc = db_rate_take_n(r->db, bucket, window, max, k, r->now, &allowed, &retry)) != DB_OK)
		return rc;
	return allowed ? DB_OK : rate_refuse(r, max, what, retry);
}

enum db_rc
rate_check_or_reply(struct req *r, const char *bucket, int64_t window, int64_t max,
    const char *what)
{
	int64_t retry;
	int allowed;
	enum db_rc rc;

	if ((rc = db_rate_check(r->db, bucket, window, max, r->now, &allowed, &retry)) != DB_OK)
		return rc;
	return allowed ? DB_OK : rate_refuse(r, max, what, retry);
}

