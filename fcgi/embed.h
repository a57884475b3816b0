/* Embedding a bio or a study's criteria after the answer is sent. */
#ifndef ARPS_FCGI_EMBED_H
#define ARPS_FCGI_EMBED_H

#include "fcgi/http.h"

/* Schedule the embedding of text for subject (an agent's bio, a study's
 * criteria) after r's answer is sent, with the pool's encoder
 * (match_encoder); nothing when no model is mapped, when r already has
 * work scheduled or out of memory (the sweep embeds it later). */
void req_embed_after(struct req *r, const char *subject, const char *text);

#endif
