/*
 * One sentence encoder, whichever kind its model file holds (issue 34):
 * USE Lite ("ARPSUSE1", encoder/embed.h, 512-dim) or a BERT encoder
 * ("ARPSBRT1", encoder/bert.h, 384-dim), chosen by the file's magic.
 *
 * A caller names the role of a text, not the model's prefixes: a bio is
 * the BERT query, screening criteria the passage (encoder/bert.h); USE
 * Lite has no roles.  Every vector is unit length, e->dim floats.
 *
 * Pure except encoder_open / encoder_close, which map and unmap the file
 * (encoder/model.c).  Returns: enum encoder_status (the convention of
 * encoder/embed.h: 0 or the reason).
 */
#ifndef ARPS_ENCODER_ENCODER_H
#define ARPS_ENCODER_ENCODER_H

#include <stddef.h>

#include "encoder/bert.h"
#include "encoder/embed.h"

#define ENCODER_MAX_DIM	USE_DIM	/* the longest vector of any kind */

enum encoder_status {	/* the values of enum embed_status */
	ENCODER_OK = EMBED_OK,
	ENCODER_EFORMAT = EMBED_EFORMAT,	/* not a valid model file */
	ENCODER_EEMPTY = EMBED_EEMPTY,	/* USE Lite: a text with no token
					 * (out is all zero) */
	ENCODER_EARG = EMBED_EARG,	/* bad argument */
};

enum encoder_kind { ENCODER_USE = 1, ENCODER_BERT = 2 };

enum encoder_role {
	ENCODER_BIO = 0,	/* a bio: BERT's query role */
	ENCODER_CRITERIA = 1,	/* screening criteria: BERT's passage role */
};

struct encoder {
	int kind;			/* enum encoder_kind */
	unsigned dim;			/* USE_DIM or BERT_DIM */
	const char *name;		/* "use-lite" or the BERT file's name */
	/* calibration means of the file (EMBED_SEC_MEANS, BERT_SEC_MEANS):
	 * dim floats each, not unit length; all three NULL when it has none */
	const struct embed_means_hdr *means;
	const float *mean_bio, *mean_crit;
	union {
		struct embed_model use;	/* kind ENCODER_USE */
		struct bert_model bert;	/* kind ENCODER_BERT */
	} m;
	void *base;			/* the mapping */
	size_t len;
};

/* Map path read-only and validate it as the kind its first eight bytes
 * name; a file without means is accepted (mean_bio = mean_crit = NULL).
 * ENCODER_OK; ENCODER_EFORMAT with errno EINVAL for a file of neither
 * kind or an invalid one; ENCODER_EARG with errno set when it cannot be
 * mapped (ENOENT, ...).  On failure *e is zeroed. */
enum encoder_status encoder_open(struct encoder *e, const char *path);

/* Bytes of scratch encoder_embed needs. */
size_t encoder_scratch_size(const struct encoder *e);

/* Embed UTF-8 text[0..len) as role (enum encoder_role) into out[e->dim],
 * unit length.  ENCODER_OK; ENCODER_EEMPTY (USE Lite, no token: out all
 * zero); ENCODER_EARG (NULL, bad role). */
enum encoder_status encoder_embed(const struct encoder *e, int role, const char *text, size_t len,
		  void *scratch, float *out);

/* The mean (not renormalised) of the vectors of texts[0..n) as role into
 * out[e->dim]: what a means section holds for a calibration file.
 * ENCODER_OK, the first failing text's encoder_embed status, or
 * ENCODER_EARG for n == 0. */
enum encoder_status encoder_mean(const struct encoder *e, int role, void *scratch, char *const *texts,
		 size_t n, float *out);

/* Run on kernel (enum kern_isa) instead of the one the init picked, as
 * tools/model-means.c does with KERN_GENERIC; at most kern_detect(1). */
void encoder_set_kernel(struct encoder *e, int kernel);

/* Unmap; safe on a zeroed or already closed struct. */
void encoder_close(struct encoder *e);

#endif
