/* The webhook transport (deliver/webhook.h). */
#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include <curl/curl.h>
#include <sodium.h>

#include "core/validate.h"
#include "db/webhooks.h"
#include "lib/config.h"
#include "lib/log.h"
#include "deliver/webhook.h"

#define RESPONSE_MAX	(64 * 1024)	/* read at most this much of an answer */

/*
 * What a failed try records as last_error, shown to the hook's owner: a
 * few fixed words, never the transport's detail, so that a webhook cannot
 * be used to tell an open port from a closed one (issue 36, api.md §7.7).
 */
#define ERR_URL		"URL not allowed"	/* the URL, or an address it resolves to */
#define ERR_RESOLVE	"cannot resolve host"
#define ERR_CONNECT	"connection failed"	/* refused, reset, no or a broken answer, TLS */
#define ERR_TIMEOUT	"timeout"
#define ERR_INTERNAL	"internal error"

struct webhook_try {
	CURL *h;
	struct curl_slist *hdrs, *resolve;
	char *body;
	size_t got;
};

void
webhook_sign(const char *secret, int64_t t, const char *body, char out[WEBHOOK_SIG_HEX + 1])
{
	crypto_auth_hmacsha256_state st;
	unsigned char mac[crypto_auth_hmacsha256_BYTES];
	char ts[32];

	snprintf(ts, sizeof ts, "%lld.", (long long)t);
	crypto_auth_hmacsha256_init(&st, (const unsigned char *)secret, strlen(secret));
	crypto_auth_hmacsha256_update(&st, (const unsigned char *)ts, strlen(ts));
	crypto_auth_hmacsha256_update(&st, (const unsigned char *)body, strlen(body));
	crypto_auth_hmacsha256_final(&st, mac);
	sodium_bin2hex(out, WEBHOOK_SIG_HEX + 1, mac, sizeof mac);
	sodium_memzero(&st, sizeof st);
}

int64_t
webhook_backoff(int64_t attempts, int64_t first, int64_t max)
{
	int64_t d = first;

	while (--attempts > 0 && d < max)
		d *= 2;
	return d < max ? d : max;
}

/* Discard the answer, stopping after RESPONSE_MAX bytes. */
static size_t
sink(char *p, size_t size, size_t n, void *arg)
{
	struct webhook_try *t = arg;

	(void)p;
	t->got += size * n;
	return t->got > RESPONSE_MAX ? 0 : size * n;
}

/* Resolve host and check the address by the URL rule of design.md §9.8
 * (a literal of it passed to val_public_url); addr gets its text, an IPv6
 * address in brackets as CURLOPT_RESOLVE takes it. */
static int
resolve_checked(const char *scheme, const char *host, unsigned flags, char *addr, size_t n,
    char *err, size_t errsz)
{
	struct addrinfo hints, *res = NULL, *ai;
	char lit[INET6_ADDRSTRLEN + 16], probe[INET6_ADDRSTRLEN + 32];

	memset(&hints, 0, sizeof hints);
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	if (getaddrinfo(host, NULL, &hints, &res) != 0) {
		snprintf(err, errsz, ERR_RESOLVE);
		return -1;
	}
	/* Every address the name gives must pass: the one pinned is the first. */
	addr[0] = '\0';
	for (ai = res; ai != NULL; ai = ai->ai_next) {
		const void *a = ai->ai_family == AF_INET ?
		    (const void *)&((struct sockaddr_in *)ai->ai_addr)->sin_addr :
		    (const void *)&((struct sockaddr_in6 *)ai->ai_addr)->sin6_addr;

		if (ai->ai_family != AF_INET && ai->ai_family != AF_INET6)
			continue;
		inet_ntop(ai->ai_family, a, lit, sizeof lit);
		snprintf(probe, sizeof probe, ai->ai_family == AF_INET ? "%s://%s/" : "%s://[%s]/",
		    scheme, lit);
		if (val_public_url(probe, strlen(probe), flags) != 0) {
			snprintf(err, errsz, ERR_URL);
			freeaddrinfo(res);
			return -1;
		}
		if (addr[0] == '\0')
			snprintf(addr, n, ai->ai_family == AF_INET ? "%s" : "[%s]", lit);
	}
	freeaddrinfo(res);
	if (addr[0] == '\0') {
		snprintf(err, errsz, ERR_RESOLVE);
		return -1;
	}
	return 0;
}

struct webhook_try *
webhook_try_new(const struct config *cfg, const char *url, const char *event_id,
    const char *secret, const char *body, int64_t now, char *err, size_t errsz)
{
	struct webhook_try *t = NULL;
	char *scheme = NULL, *host = NULL, *port = NULL;
	char addr[INET6_ADDRSTRLEN + 8], line[512], sig[WEBHOOK_SIG_HEX + 1], bare[256];
	unsigned char bin[16];
	int literal;
	/* the URL as stored: taken in by an older rule, it is still sent */
	unsigned flags = VAL_URL_HTTPS_ONLY | VAL_URL_STORED;
	CURLU *u = NULL;

	if (cfg->webhooks_allow_loopback)
		flags |= VAL_URL_LOOPBACK;
	if (val_public_url(url, strlen(url), flags) != 0) {
		snprintf(err, errsz, ERR_URL);
		return NULL;
	}
	if ((u = curl_url()) == NULL || curl_url_set(u, CURLUPART_URL, url, 0) != CURLUE_OK ||
	    curl_url_get(u, CURLUPART_SCHEME, &scheme, 0) != CURLUE_OK ||
	    curl_url_get(u, CURLUPART_HOST, &host, 0) != CURLUE_OK ||
	    curl_url_get(u, CURLUPART_PORT, &port, CURLU_DEFAULT_PORT) != CURLUE_OK) {
		snprintf(err, errsz, ERR_URL);
		goto fail;
	}
	{
		/* an IPv6 literal comes back in brackets */
		size_t hl = strlen(host);

		if (hl >= 2 && host[0] == '[' && hl < sizeof bare) {
			memcpy(bare, host + 1, hl - 2);
			bare[hl - 2] = '\0';
		} else
			snprintf(bare, sizeof bare, "%s", host);
		if (resolve_checked(scheme, bare, flags, addr, sizeof addr, err, errsz) != 0)
			goto fail;
	}
	/* An IP literal is the address connected to, checked above: nothing
	 * to pin (and CURLOPT_RESOLVE takes no bracketed host: libcurl 7.88
	 * refused "[::1]:port:[::1]" as a malformed option). */
	literal = inet_pton(AF_INET, bare, bin) == 1 || inet_pton(AF_INET6, bare, bin) == 1;
	if ((t = calloc(1, sizeof *t)) == NULL || (t->h = curl_easy_init()) == NULL ||
	    (t->body = strdup(body)) == NULL) {
		snprintf(err, errsz, ERR_INTERNAL);
		goto fail;
	}
	if (!literal) {
		snprintf(line, sizeof line, "%s:%s:%s", host, port, addr);
		if ((t->resolve = curl_slist_append(NULL, line)) == NULL) {
			snprintf(err, errsz, ERR_INTERNAL);
			goto fail;
		}
	}
	webhook_sign(secret, now, body, sig);
	t->hdrs = curl_slist_append(NULL, "Content-Type: application/json");
	snprintf(line, sizeof line, "Arps-Event-Id: %s", event_id);
	t->hdrs = curl_slist_append(t->hdrs, line);
	snprintf(line, sizeof line, "Arps-Signature: t=%lld,v1=%s", (long long)now, sig);
	t->hdrs = curl_slist_append(t->hdrs, line);
	t->hdrs = curl_slist_append(t->hdrs, "User-Agent: arps-webhooks/1");
	t->hdrs = curl_slist_append(t->hdrs, "Expect:");
	if (t->hdrs == NULL) {
		snprintf(err, errsz, ERR_INTERNAL);
		goto fail;
	}
	curl_easy_setopt(t->h, CURLOPT_URL, url);
	if (t->resolve != NULL)
		curl_easy_setopt(t->h, CURLOPT_RESOLVE, t->resolve);
	curl_easy_setopt(t->h, CURLOPT_HTTPHEADER, t->hdrs);
	curl_easy_setopt(t->h, CURLOPT_POSTFIELDS, t->body);
	curl_easy_setopt(t->h, CURLOPT_POSTFIELDSIZE, (long)strlen(t->body));
	curl_easy_setopt(t->h, CURLOPT_CONNECTTIMEOUT, (long)(cfg->webhook_timeout_seconds < 5 ?
	    cfg->webhook_timeout_seconds : 5));
	curl_easy_setopt(t->h, CURLOPT_TIMEOUT, (long)cfg->webhook_timeout_seconds);
	curl_easy_setopt(t->h, CURLOPT_FOLLOWLOCATION, 0L);
	curl_easy_setopt(t->h, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(t->h, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(t->h, CURLOPT_WRITEFUNCTION, sink);
	curl_easy_setopt(t->h, CURLOPT_WRITEDATA, t);
	curl_easy_setopt(t->h, CURLOPT_PRIVATE, t);
	curl_free(scheme);
	curl_free(host);
	curl_free(port);
	curl_url_cleanup(u);
	return t;
fail:
	webhook_try_free(t);
	curl_free(scheme);
	curl_free(host);
	curl_free(port);
	curl_url_cleanup(u);
	return NULL;
}

void *
webhook_try_handle(struct webhook_try *t)
{
	return t->h;
}

int
webhook_try_result(struct webhook_try *t, int cc, long *status, char *err, size_t errsz)
{
	*status = 0;
	err[0] = '\0';
	curl_easy_getinfo(t->h, CURLINFO_RESPONSE_CODE, status);
	if (cc != CURLE_OK && !(cc == CURLE_WRITE_ERROR && *status > 0)) {
		/* the word only: libcurl's text would tell a port scan apart */
		snprintf(err, errsz, "%s", cc == CURLE_OPERATION_TIMEDOUT ? ERR_TIMEOUT : ERR_CONNECT);
		return 0;
	}
	if (*status >= 200 && *status < 300)
		return 1;
	snprintf(err, errsz, "HTTP %ld", *status);
	return 0;
}

void
webhook_try_free(struct webhook_try *t)
{
	if (t == NULL)
		return;
	if (t->h != NULL)
		curl_easy_cleanup(t->h);
	curl_slist_free_all(t->hdrs);
	curl_slist_free_all(t->resolve);
	free(t->body);
	free(t);
}

struct slot {
	struct webhook_try *t;		/* NULL: free */
	struct delivery_job job;
};

struct webhook_pump {
	const struct config *cfg;
	CURLM *m;
	struct slot *slots;
	size_t nslots, inflight;
	struct delivery_job *claimed;	/* scratch for db_delivery_claim */
};

struct webhook_pump *
webhook_pump_new(const struct config *cfg)
{
	struct webhook_pump *p;

	if ((p = calloc(1, sizeof *p)) == NULL)
		return NULL;
	p->cfg = cfg;
	p->nslots = (size_t)cfg->webhook_concurrency;
	if ((p->m = curl_multi_init()) == NULL ||
	    (p->slots = calloc(p->nslots, sizeof *p->slots)) == NULL ||
	    (p->claimed = calloc(p->nslots, sizeof *p->claimed)) == NULL) {
		webhook_pump_free(p);
		return NULL;
	}
	curl_multi_setopt(p->m, CURLMOPT_MAX_TOTAL_CONNECTIONS, (long)p->nslots);
	return p;
}

size_t
webhook_pump_inflight(const struct webhook_pump *p)
{
	return p->inflight;
}

/* Record one try's outcome; 0 or -1 on a database error. */
static int
record(struct webhook_pump *p, struct db *db, const struct delivery_job *j, int ok, long status,
    const char *err)
{
	int64_t now = (int64_t)time(NULL);
	int64_t next = now + webhook_backoff(j->attempts, p->cfg->webhook_retry_first_seconds,
	    p->cfg->webhook_retry_max_seconds);
	enum db_rc rc;

	rc = db_delivery_done(db, j, ok, (int)status, err, now, next);
	if (rc == DB_RETRY)
		rc = db_delivery_done(db, j, ok, (int)status, err, now, next);
	if (rc != DB_OK) {
		log_msg("webhook %s event %s: cannot record the try: %s", j->hook_id, j->event_id,
		    db_error(db));
		return -1;
	}
	return 0;
}

int
webhook_pump_step(struct webhook_pump *p, struct db *db, int wait_ms, int claim)
{
	int64_t now = (int64_t)time(NULL);
	int64_t lease = p->cfg->webhook_timeout_seconds + 5;
	size_t i, k, n = 0;
	int recorded = 0, running, left, failed = 0;
	char err[256];
	CURLMsg *msg;
	enum db_rc rc;

	/* Fill the free slots (not while stopping). */
	if (claim && p->inflight < p->nslots) {
		rc = db_delivery_claim(db, p->cfg, now, lease, p->claimed, p->nslots - p->inflight,
		    &n);
		if (rc != DB_OK && rc != DB_RETRY) {
			log_msg("webhooks: cannot claim deliveries: %s", db_error(db));
			failed = 1;
		}
		for (i = 0, k = 0; i < n; i++) {
			struct delivery_job *j = &p->claimed[i];
			struct webhook_try *t;

			while (k < p->nslots && p->slots[k].t != NULL)
				k++;
			t = webhook_try_new(p->cfg, j->url, j->event_id, j->secret, j->body, now, err,
			    sizeof err);
			if (t == NULL) {
				/* A refused target is a failed try, retried like any other. */
				if (record(p, db, j, 0, 0, err) != 0)
					failed = 1;
				else
					recorded++;
				delivery_job_clear(j);
				continue;
			}
			p->slots[k].t = t;
			p->slots[k].job = *j;
			memset(j, 0, sizeof *j);
			curl_multi_add_handle(p->m, webhook_try_handle(t));
			p->inflight++;
		}
	}
	if (p->inflight == 0) {
		if (wait_ms > 0) {
			struct timespec ts = { wait_ms / 1000, (long)(wait_ms % 1000) * 1000000L };
			nanosleep(&ts, NULL);
		}
		return failed ? -1 : recorded;
	}
	curl_multi_perform(p->m, &running);
	if ((size_t)running == p->inflight)
		curl_multi_poll(p->m, NULL, 0, wait_ms, NULL);
	curl_multi_perform(p->m, &running);
	while ((msg = curl_multi_info_read(p->m, &left)) != NULL) {
		struct webhook_try *t = NULL;
		long status;
		int ok;

		if (msg->msg != CURLMSG_DONE)
			continue;
		curl_easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, (char **)&t);
		for (k = 0; k < p->nslots && p->slots[k].t != t; k++)
			;
		if (k == p->nslots)
			continue;
		ok = webhook_try_result(t, msg->data.result, &status, err, sizeof err);
		curl_multi_remove_handle(p->m, msg->easy_handle);
		if (record(p, db, &p->slots[k].job, ok, status, err) != 0)
			failed = 1;
		else
			recorded++;
		webhook_try_free(t);
		delivery_job_clear(&p->slots[k].job);
		p->slots[k].t = NULL;
		p->inflight--;
	}
	return failed ? -1 : recorded;
}

void
webhook_pump_free(struct webhook_pump *p)
{
	size_t k;

	if (p == NULL)
		return;
	for (k = 0; p->slots != NULL && k < p->nslots; k++)
		if (p->slots[k].t != NULL) {
			curl_multi_remove_handle(p->m, webhook_try_handle(p->slots[k].t));
			webhook_try_free(p->slots[k].t);
			delivery_job_clear(&p->slots[k].job);
		}
	if (p->m != NULL)
		curl_multi_cleanup(p->m);
	free(p->slots);
	free(p->claimed);
	free(p);
}
