#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <sodium.h>

#include "lib/config.h"
#include "lib/mail.h"

static const char b62[] = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

void
mail_new_id(char out[MAIL_ID_BUFSZ])
{
	size_t i, n = strlen(MAIL_ID_PREFIX);

	memcpy(out, MAIL_ID_PREFIX, n);
	for (i = n; i < MAIL_ID_LEN; i++)
		out[i] = b62[randombytes_uniform(62)];
	out[MAIL_ID_LEN] = '\0';
}

/* The sealing key: subkey 1 of the pepper in context "arpsmail". */
static void
mail_key(const struct config *cfg, unsigned char key[crypto_secretbox_KEYBYTES])
{
	crypto_kdf_derive_from_key(key, crypto_secretbox_KEYBYTES, 1, "arpsmail", cfg->pepper);
}

/* Plain text inside the box: id LF to LF subject LF body. */
int
mail_seal(const struct config *cfg, const char *id, const char *to, const char *subject,
    const char *body, unsigned char **out, size_t *outlen)
{
	unsigned char key[crypto_secretbox_KEYBYTES], *plain = NULL, *box = NULL;
	size_t il = strlen(id), tl = strlen(to), sl = strlen(subject), bl = strlen(body), pl;
	int rc = -1;

	*out = NULL;
	*outlen = 0;
	if (strpbrk(to, "\r\n") != NULL || strpbrk(subject, "\r\n") != NULL ||
	    strchr(id, '\n') != NULL || tl == 0 || tl > MAIL_ADDR_MAX || sl > MAIL_SUBJECT_MAX ||
	    bl > MAIL_BODY_MAX)
		return -1;
	pl = il + tl + sl + bl + 3;
	if ((plain = malloc(pl)) == NULL ||
	    (box = malloc(crypto_secretbox_NONCEBYTES + crypto_secretbox_MACBYTES + pl)) == NULL)
		goto fail;
	snprintf((char *)plain, pl, "%s\n%s\n%s\n", id, to, subject);
	memcpy(plain + il + tl + sl + 3, body, bl);
	mail_key(cfg, key);
	randombytes_buf(box, crypto_secretbox_NONCEBYTES);
	crypto_secretbox_easy(box + crypto_secretbox_NONCEBYTES, plain, pl, box, key);
	*out = box;
	*outlen = crypto_secretbox_NONCEBYTES + crypto_secretbox_MACBYTES + pl;
	box = NULL;
	rc = 0;
fail:
	sodium_memzero(key, sizeof key);
	if (plain != NULL) {
		sodium_memzero(plain, pl);
		free(plain);
	}
	free(box);
	return rc;
}

/* Copy the field that ends at the next LF of [*p, end) into dst[cap]. */
static int
field(const char **p, const char *end, char *dst, size_t cap)
{
	const char *nl = memchr(*p, '\n', (size_t)(end - *p));
	size_t n;

	if (nl == NULL || (n = (size_t)(nl - *p)) >= cap)
		return -1;
	memcpy(dst, *p, n);
	dst[n] = '\0';
	*p = nl + 1;
	return 0;
}

int
mail_open(const struct config *cfg, const char *id, const unsigned char *in, size_t n,
    struct mail_msg *m)
{
	unsigned char key[crypto_secretbox_KEYBYTES], *plain = NULL;
	char gotid[MAIL_ID_BUFSZ + 1];
	const char *p, *end;
	size_t pl;
	int rc = -1;

	memset(m, 0, sizeof *m);
	if (n < crypto_secretbox_NONCEBYTES + crypto_secretbox_MACBYTES)
		return -1;
	pl = n - crypto_secretbox_NONCEBYTES - crypto_secretbox_MACBYTES;
	if ((plain = malloc(pl + 1)) == NULL)
		return -1;
	mail_key(cfg, key);
	if (crypto_secretbox_open_easy(plain, in + crypto_secretbox_NONCEBYTES,
	    n - crypto_secretbox_NONCEBYTES, in, key) != 0)
		goto fail;
	p = (const char *)plain;
	end = p + pl;
	if (field(&p, end, gotid, sizeof gotid) != 0 || strcmp(gotid, id) != 0 ||
	    field(&p, end, m->to, sizeof m->to) != 0 ||
	    field(&p, end, m->subject, sizeof m->subject) != 0 ||
	    (m->body = malloc((size_t)(end - p) + 1)) == NULL)
		goto fail;
	memcpy(m->body, p, (size_t)(end - p));
	m->body[end - p] = '\0';
	snprintf(m->id, sizeof m->id, "%s", id);
	rc = 0;
fail:
	sodium_memzero(key, sizeof key);
	sodium_memzero(plain, pl);
	free(plain);
	if (rc != 0)
		mail_msg_clear(m);
	return rc;
}

void
mail_msg_clear(struct mail_msg *m)
{
	if (m == NULL)
		return;
	if (m->body != NULL) {
		sodium_memzero(m->body, strlen(m->body));
		free(m->body);
	}
	sodium_memzero(m, sizeof *m);
}

char *
mail_format(const struct config *cfg, const struct mail_msg *m, int64_t created, size_t *len)
{
	const char *at = strrchr(cfg->mail_from, '@');
	char date[64], *out;
	time_t t = (time_t)created;
	struct tm tm;
	size_t cap;
	int n;

	gmtime_r(&t, &tm);
	strftime(date, sizeof date, "%a, %d %b %Y %H:%M:%S +0000", &tm);
	cap = strlen(cfg->mail_from) * 2 + strlen(m->to) + strlen(m->subject) + strlen(m->body) + 512;
	if ((out = malloc(cap)) == NULL)
		return NULL;
	n = snprintf(out, cap, "From: %s\nTo: %s\nSubject: %s\nDate: %s\nMessage-ID: <%s@%s>\n"
	    "MIME-Version: 1.0\nContent-Type: text/plain; charset=utf-8\n"
	    "Content-Transfer-Encoding: 8bit\n\n%s\n", cfg->mail_from, m->to, m->subject, date,
	    m->id, at != NULL && at[1] != '\0' ? at + 1 : "arps.invalid", m->body);
	if (n < 0 || (size_t)n >= cap) {
		sodium_memzero(out, cap);
		free(out);
		return NULL;
	}
	*len = (size_t)n;
	return out;
}

const char *
mail_transport_invalid(const char *spec)
{
	if (strncmp(spec, "file:", 5) == 0)
		return spec[5] == '/' ? NULL : "file: needs an absolute directory";
	if (strcmp(spec, "sendmail") == 0)
		return NULL;
	if (strncmp(spec, "sendmail:", 9) == 0)
		return spec[9] == '/' ? NULL : "sendmail: needs an absolute path";
	if (strncmp(spec, "smtp://", 7) == 0 || strncmp(spec, "smtps://", 8) == 0) {
		const char *host = strstr(spec, "://") + 3;

		return *host != '\0' && strpbrk(host, "/@?#") == NULL ? NULL :
		    "smtp: expected smtp://HOST[:PORT] or smtps://HOST[:PORT]";
	}
	return "expected file:DIR, smtp://HOST[:PORT], smtps://HOST[:PORT] or sendmail[:PATH]";
}
