/* Either kind of sentence encoder behind one interface; see encoder.h. */
#include "encoder/encoder.h"
#include "encoder/model.h"

#include <errno.h>
#include <string.h>

_Static_assert(BERT_DIM <= ENCODER_MAX_DIM, "ENCODER_MAX_DIM");

enum encoder_status encoder_open(struct encoder *e, const char *path)
{
	void *p;
	size_t len;

	if (!e) {
		errno = EINVAL;
		return ENCODER_EARG;
	}
	memset(e, 0, sizeof *e);
	if (model_file_map(path, &p, &len) != 0)
		return ENCODER_EARG;
	if (len >= 8 && memcmp(p, EMBED_MAGIC, 8) == 0 &&
	    embed_init(&e->m.use, p, len) == EMBED_OK) {
		e->kind = ENCODER_USE;
		e->dim = USE_DIM;
		e->name = "use-lite";
		e->means = e->m.use.means;
		e->mean_bio = e->m.use.mean_bio;
		e->mean_crit = e->m.use.mean_crit;
	} else if (len >= 8 && memcmp(p, BERT_MAGIC, 8) == 0 &&
		   bert_init(&e->m.bert, p, len) == BERT_OK) {
		e->kind = ENCODER_BERT;
		e->dim = BERT_DIM;
		e->name = e->m.bert.name;
		e->means = e->m.bert.means;
		e->mean_bio = e->m.bert.mean_bio;
		e->mean_crit = e->m.bert.mean_crit;
	} else {
		model_file_unmap(p, len);
		memset(e, 0, sizeof *e);
		errno = EINVAL;
		return ENCODER_EFORMAT;
	}
	e->base = p;
	e->len = len;
	return ENCODER_OK;
}

size_t encoder_scratch_size(const struct encoder *e)
{
	if (!e)
		return 0;
	switch (e->kind) {
	case ENCODER_USE:
		return embed_scratch_size(&e->m.use);
	case ENCODER_BERT:
		return bert_scratch_size(&e->m.bert);
	}
	return 0;
}

enum encoder_status encoder_embed(const struct encoder *e, int role, const char *text, size_t len,
		  void *scratch, float *out)
{
	if (!e || (role != ENCODER_BIO && role != ENCODER_CRITERIA))
		return ENCODER_EARG;
	switch (e->kind) {
	case ENCODER_USE:
		return (enum encoder_status)embed_text(&e->m.use, text, len, scratch, out);
	case ENCODER_BERT:
		return bert_embed(&e->m.bert, role == ENCODER_BIO ? BERT_QUERY : BERT_PASSAGE,
				  text, len, scratch, out) == BERT_OK ? ENCODER_OK : ENCODER_EARG;
	}
	return ENCODER_EARG;
}

enum encoder_status encoder_mean(const struct encoder *e, int role, void *scratch, char *const *texts,
		 size_t n, float *out)
{
	double acc[ENCODER_MAX_DIM] = { 0 };
	float v[ENCODER_MAX_DIM];
	enum encoder_status rc;

	if (!e || !e->dim || e->dim > ENCODER_MAX_DIM || !scratch || !texts || !out || n == 0)
		return ENCODER_EARG;
	for (size_t i = 0; i < n; i++) {
		if (!texts[i])
			return ENCODER_EARG;
		if ((rc = encoder_embed(e, role, texts[i], strlen(texts[i]), scratch, v)) != ENCODER_OK)
			return rc;
		for (size_t d = 0; d < e->dim; d++)
			acc[d] += v[d];
	}
	for (size_t d = 0; d < e->dim; d++)
		out[d] = (float)(acc[d] / (double)n);
	return ENCODER_OK;
}

void encoder_set_kernel(struct encoder *e, int kernel)
{
	if (e && e->kind == ENCODER_USE)
		e->m.use.kernel = kernel;
	else if (e && e->kind == ENCODER_BERT)
		e->m.bert.kernel = kernel;
}

void encoder_close(struct encoder *e)
{
	if (e && e->base) {
		model_file_unmap(e->base, e->len);
		memset(e, 0, sizeof *e);
	}
}
