/*
 * Outgoing mail (design.md §1 and 9).  Workers never send: they
 * seal a message (mail_seal) and queue it in the outbox in the same
 * transaction as the request's effect (db_outbox_mail).  arps-deliver opens
 * it (mail_open), formats it (mail_format) and hands it to the configured
 * transport (mail_transmit, deliver/mail.c, linked into arps-deliver
 * only):
 *   file:DIR           one file DIR/<message id>.eml per message, written
 *                      atomically (temporary file, fsync, rename); a re-send
 *                      rewrites the same file;
 *   smtp://HOST[:PORT] SMTP to a relay through libcurl (STARTTLS when the
 *   smtps://HOST[:PORT] relay offers it; smtps: TLS from the start), with
 *                      mail_smtp_user / mail_smtp_password when set;
 *   sendmail[:PATH]    `PATH -t -i` (default /usr/sbin/sendmail), fork/exec
 *                      with a time-out.
 * Every message carries a stable Message-ID <msg_...@domain> and a Date of
 * its creation, so a re-send is the same message byte for byte.
 * Convention of lib/ (design.md §2.3): 0, or -1 with the reason in the
 * caller's err buffer (or where the function says); bool for a predicate.
 */
#ifndef ARPS_LIB_MAIL_H
#define ARPS_LIB_MAIL_H

#include <stddef.h>
#include <stdint.h>

struct config;

#define MAIL_ID_PREFIX	"msg_"
#define MAIL_ID_LEN	20		/* msg_ + 16 base62 */
#define MAIL_ID_BUFSZ	(MAIL_ID_LEN + 1)
#define MAIL_ADDR_MAX	254
#define MAIL_SUBJECT_MAX 200
#define MAIL_BODY_MAX	16384

struct mail_msg {
	char id[MAIL_ID_BUFSZ];
	char to[MAIL_ADDR_MAX + 1];
	char subject[MAIL_SUBJECT_MAX + 1];
	char *body;			/* owned; mail_msg_clear wipes and frees */
};

/* A new message id (msg_ + 16 base62 from libsodium) into out. */
void mail_new_id(char out[MAIL_ID_BUFSZ]);

/*
 * Seal to, subject and body (and the id, checked on opening) with
 * crypto_secretbox under a key derived from the pepper (crypto_kdf, context
 * "arpsmail").  to and subject must hold no CR or LF.  *out (nonce ||
 * ciphertext) is malloc'd; the caller frees it.  0 or -1.
 */
int mail_seal(const struct config *cfg, const char *id, const char *to, const char *subject,
    const char *body, unsigned char **out, size_t *outlen);

/* Open a sealed payload of message id into m (m->body malloc'd); 0, or -1
 * when it was not sealed under this pepper for this id. */
int mail_open(const struct config *cfg, const char *id, const unsigned char *in, size_t n,
    struct mail_msg *m);

/* Wipe and free what m holds (NULL allowed). */
void mail_msg_clear(struct mail_msg *m);

/*
 * The message as RFC 5322 text with LF line ends (From, To, Subject, Date of
 * `created`, Message-ID, MIME headers, body); malloc'd, *len set.  NULL on
 * allocation failure.  The caller wipes (it holds the body) and frees it.
 */
char *mail_format(const struct config *cfg, const struct mail_msg *m, int64_t created,
    size_t *len);

/* Check a mail_transport value; NULL when valid, else the reason. */
const char *mail_transport_invalid(const char *spec);

/*
 * Hand one formatted message to the configured transport, waiting at most
 * cfg->deliver_timeout seconds.  0 once the transport accepted it (file
 * renamed into place, relay answered 250 to DATA, sendmail exited 0), else
 * -1 with the reason in err.  arps-deliver only (deliver/mail.c).
 */
int mail_transmit(const struct config *cfg, const struct mail_msg *m, const char *text,
    size_t len, char *err, size_t errsz);

#endif
