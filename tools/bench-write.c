/*
 * The write-cycle driver of tools/bench-write.sh (issue 16 row 5): one
 * thread per agent, each on its own keep-alive connection (libcurl), runs
 * cycles of
 *   POST /studies/{id}/accept            (the agent's key)
 *   GET  /studies/{id}                   (the agent opens it)
 *   POST /studies/{id}/complete          (with the completion code)
 *   POST /studies/{id}/participants/{participant_id}/approve  (researcher)
 * walking through the studies from its own offset, one study at a time,
 * for WARMUP seconds unmeasured and then SECONDS measured.  Every answer
 * must be 200; anything else counts as an error.  Prints one line of
 * key=value figures, the driver's own CPU time among them.
 *
 *   bench-write BASE_URL TOKEN AGENTS_FILE STUDIES_FILE WARMUP SECONDS
 *
 * AGENTS_FILE: one API key a line; STUDIES_FILE: one study id a line
 * (created by the script with completion code "OK" and a slot per agent).
 */
#include <sys/resource.h>

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <curl/curl.h>

#define MAXT	256
#define MAXS	20000
#define MAXLAT	2000000

static const char *base, *token;
static char keys[MAXT][96];
static char studies[MAXS][32];
static size_t nkeys, nstudies;
static double t_measure, t_end;
static int with_keys;	/* $BENCH_WRITE_IDEM=1: an Idempotency-Key on every POST */

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static double *lat;
static size_t nlat;
static unsigned long cycles, all_cycles, errors, requests, exhausted;

struct buf {
	char b[16384];
	size_t n;
};

static double
now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static size_t
sink(char *p, size_t size, size_t n, void *arg)
{
	struct buf *b = arg;
	size_t len = size * n, room = sizeof b->b - 1 - b->n;

	memcpy(b->b + b->n, p, len < room ? len : room);
	b->n += len < room ? len : room;
	b->b[b->n] = '\0';
	return len;
}

/* One request on the thread's connection; the HTTP status (0: transport). */
static long
req(CURL *c, struct curl_slist *h, const char *method, const char *path, const char *body,
    struct buf *out)
{
	char url[512];
	long st = 0;

	struct curl_slist *hk = NULL, *l;
	char kh[320];

	snprintf(url, sizeof url, "%s%s", base, path);
	if (with_keys && strcmp(method, "POST") == 0) {
		/* unique per request: the path (study, participant) and the agent */
		snprintf(kh, sizeof kh, "Idempotency-Key: w-%.*s-%s",
		    (int)strcspn(h->data + (h->data[0] == 'X' ? 11 : 22), " "),
		    h->data + (h->data[0] == 'X' ? 11 : 22), path);
		for (l = h; l != NULL; l = l->next)
			hk = curl_slist_append(hk, l->data);
		hk = curl_slist_append(hk, kh);
		h = hk;
	}
	out->n = 0;
	out->b[0] = '\0';
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, sink);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, out);
	if (strcmp(method, "GET") == 0) {
		curl_easy_setopt(c, CURLOPT_HTTPGET, 1L);
	} else {
		curl_easy_setopt(c, CURLOPT_POST, 1L);
		curl_easy_setopt(c, CURLOPT_POSTFIELDS, body ? body : "");
		curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE, (long)(body ? strlen(body) : 0));
	}
	if (curl_easy_perform(c) == CURLE_OK)
		curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &st);
	curl_slist_free_all(hk);
	return st;
}

static void
bad(const char *what, long st, const struct buf *b, int measured)
{
	pthread_mutex_lock(&mu);
	if (measured)
		errors++;
	if (errors <= 5 || !measured)
		fprintf(stderr, "bench-write: %s answered %ld %.300s\n", what, st, b->b);
	pthread_mutex_unlock(&mu);
}

static void *
run(void *arg)
{
	size_t ai = (size_t)(uintptr_t)arg, k, si;
	struct curl_slist *ha = NULL, *hr = NULL;
	char hdr[256], path[256], pid[64];
	CURL *c = curl_easy_init();
	struct buf *b = malloc(sizeof *b);
	const char *p;
	double t0;
	long st;
	int measured;

	if (c == NULL || b == NULL)
		return NULL;
	curl_easy_setopt(c, CURLOPT_TIMEOUT, 10L);
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	snprintf(hdr, sizeof hdr, "X-API-Key: %s", keys[ai]);
	ha = curl_slist_append(ha, hdr);
	ha = curl_slist_append(ha, "Content-Type: application/json");
	snprintf(hdr, sizeof hdr, "Authorization: Bearer %s", token);
	hr = curl_slist_append(hr, hdr);
	hr = curl_slist_append(hr, "Content-Type: application/json");
	for (k = 0; k < nstudies; k++) {
		t0 = now_s();
		if (t0 >= t_end)
			break;
		measured = t0 >= t_measure;
		si = (ai * nstudies / nkeys + k) % nstudies;
		snprintf(path, sizeof path, "/api/v1/studies/%s/accept", studies[si]);
		if ((st = req(c, ha, "POST", path, NULL, b)) != 200) {
			bad("accept", st, b, measured);
			continue;
		}
		pid[0] = '\0';
		if ((p = strstr(b->b, "participant_id=")) != NULL) {
			size_t n = strspn(p + 15, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
			    "0123456789_-");
			snprintf(pid, sizeof pid, "%.*s", (int)(n < 63 ? n : 63), p + 15);
		}
		snprintf(path, sizeof path, "/api/v1/studies/%s", studies[si]);
		if ((st = req(c, ha, "GET", path, NULL, b)) != 200)
			bad("open", st, b, measured);
		snprintf(path, sizeof path, "/api/v1/studies/%s/complete", studies[si]);
		if ((st = req(c, ha, "POST", path, "{\"completion_code\":\"OK\"}", b)) != 200) {
			bad("complete", st, b, measured);
			continue;
		}
		snprintf(path, sizeof path, "/api/v1/studies/%s/participants/%s/approve", studies[si],
		    pid);
		if ((st = req(c, hr, "POST", path, NULL, b)) != 200) {
			bad("approve", st, b, measured);
			continue;
		}
		pthread_mutex_lock(&mu);
		all_cycles++;
		pthread_mutex_unlock(&mu);
		if (measured && now_s() <= t_end) {
			pthread_mutex_lock(&mu);
			cycles++;
			requests += 4;
			if (nlat < MAXLAT)
				lat[nlat++] = now_s() - t0;
			pthread_mutex_unlock(&mu);
		}
	}
	if (k == nstudies) {
		pthread_mutex_lock(&mu);
		exhausted++;
		pthread_mutex_unlock(&mu);
	}
	curl_slist_free_all(ha);
	curl_slist_free_all(hr);
	curl_easy_cleanup(c);
	free(b);
	return NULL;
}

static int
dcmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static size_t
readlines(const char *file, char *v, size_t width, size_t max)
{
	char line[96];
	size_t n = 0;
	FILE *f = fopen(file, "r");

	if (f == NULL)
		return 0;
	while (n < max && fgets(line, sizeof line, f) != NULL) {
		line[strcspn(line, "\r\n")] = '\0';
		if (line[0] != '\0')
			snprintf(v + n++ * width, width, "%.*s", (int)width - 1, line);
	}
	fclose(f);
	return n;
}

int
main(int argc, char **argv)
{
	pthread_t t[MAXT];
	double warm, secs, start, cpu_ms;
	struct rusage ru;
	size_t i;

	if (argc != 7) {
		fprintf(stderr, "usage: bench-write BASE_URL TOKEN AGENTS_FILE STUDIES_FILE WARMUP SECONDS\n");
		return 2;
	}
	base = argv[1];
	token = argv[2];
	nkeys = readlines(argv[3], &keys[0][0], sizeof keys[0], MAXT);
	nstudies = readlines(argv[4], &studies[0][0], sizeof studies[0], MAXS);
	warm = atof(argv[5]);
	secs = atof(argv[6]);
	if (nkeys == 0 || nstudies == 0 || secs <= 0 || (lat = malloc(MAXLAT * sizeof *lat)) == NULL) {
		fprintf(stderr, "bench-write: no agents, no studies or no time\n");
		return 2;
	}
	with_keys = getenv("BENCH_WRITE_IDEM") != NULL && strcmp(getenv("BENCH_WRITE_IDEM"), "1") == 0;
	curl_global_init(CURL_GLOBAL_DEFAULT);
	start = now_s();
	t_measure = start + warm;
	t_end = t_measure + secs;
	for (i = 0; i < nkeys; i++)
		if (pthread_create(&t[i], NULL, run, (void *)(uintptr_t)i) != 0)
			return 1;
	for (i = 0; i < nkeys; i++)
		pthread_join(t[i], NULL);
	qsort(lat, nlat, sizeof *lat, dcmp);
	getrusage(RUSAGE_SELF, &ru);	/* the driver's own CPU: it shares the cores */
	cpu_ms = (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e3 +
	    (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e3;
	printf("cycles=%lu secs=%.2f cycles_per_s=%.1f req_per_s=%.1f p50_ms=%.2f p99_ms=%.2f "
	    "errors=%lu exhausted=%lu all_cycles=%lu keys=%d cpu_ms=%.0f\n", cycles, secs, cycles / secs,
	    requests / secs, nlat ? lat[nlat / 2] * 1000 : 0.0, nlat ? lat[nlat * 99 / 100] * 1000 : 0.0,
	    errors, exhausted, all_cycles, with_keys, cpu_ms);
	curl_global_cleanup();
	return 0;
}
