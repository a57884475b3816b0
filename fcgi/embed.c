/* fcgi/embed.h */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fcgi/embed.h"
#include "lib/log.h"
#include "match/engine.h"
#include "txn/embed.h"

struct pending {
	char subject[24];
	char text[];
};

static void
embed_after(struct req *r, void *arg)
{
	struct pending *p = arg;

	if (txn_embed_subject(r->db, match_encoder(), match_scratch(), p->subject, p->text,
	    r->now) != DB_OK)
		log_msg("match: embedding %s not stored: %s", p->subject, db_error(r->db));
	free(p);
}

void
req_embed_after(struct req *r, const char *subject, const char *text)
{
	size_t n = strlen(text);
	struct pending *p;

	if (match_encoder() == NULL || r->after != NULL)
		return;
	if ((p = malloc(sizeof *p + n + 1)) == NULL)
		return;
	snprintf(p->subject, sizeof p->subject, "%s", subject);
	memcpy(p->text, text, n + 1);
	r->after = embed_after;
	r->after_arg = p;
}
