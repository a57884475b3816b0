/* The mail sinks of the dev stack: arps-deliver writes each message as
 * <Message-ID>.eml in $ARPS_VAR/mail (mail_transport = dir), and the
 * delivery suites' fake sendmails into sinks of their own. */
#ifndef ARPS_TESTS_API_MAIL_H
#define ARPS_TESTS_API_MAIL_H

/* The login code of the newest mail to email in the dev mail sink that no
 * earlier call returned, waiting up to 3 s for arps-deliver to write it;
 * asserts found. */
void mail_code(const char *email, char code[8]);
/* Whether the message file at path has the line "To: email". */
int mail_is_to(const char *path, const char *email);
/* How many messages (*.eml) in dir are to email. */
int mail_count_to(const char *dir, const char *email);
/* How many entries of dir have part in their name (0 when no dir). */
int dir_count(const char *dir, const char *part);

#endif
