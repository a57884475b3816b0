/* Outgoing mail: the dev transport writes one file per message under a
 * directory ("file:DIR"); production pipes to `sendmail -t -i`. */
#ifndef ARPS_LIB_MAIL_H
#define ARPS_LIB_MAIL_H

struct config;

/* Send one plain-text message; to must be a validated address (no CR/LF).
 * Returns 0 or -1 (logged). */
int mail_send(const struct config *cfg, const char *to, const char *subject, const char *body);

#endif
