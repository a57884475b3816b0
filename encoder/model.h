/*
 * The sentence-embedding model file (build/model/use-lite.bin, made by
 * `make model` from the pinned npm package and the calibration set):
 * mapped read-only and shared by every process that maps it.  encoder/embed.h
 * runs the encoder over the blob; core/score.h centres its vectors on the
 * file's calibration means.  Returns: model_mean enum embed_status (the
 * convention of encoder/embed.h); the file functions 0, or -1 with errno.
 */
#ifndef ARPS_ENCODER_MODEL_H
#define ARPS_ENCODER_MODEL_H

#include <stddef.h>

#include "encoder/bert.h"
#include "encoder/embed.h"

#define MODEL_DEFAULT_PATH "build/model/use-lite.bin"
#define MODEL_CALIB_BIOS "tests/matching/calibration/bios.txt"
#define MODEL_CALIB_CRITERIA "tests/matching/calibration/criteria.txt"

struct model {
	void *base;               /* mmap'd file, PROT_READ, MAP_SHARED */
	size_t len;
	struct embed_model enc;   /* pointers into base */
};

/* Map path read-only and validate it (embed_init); the file must carry the
 * calibration means (EMBED_SEC_MEANS).  0 on success; -1 with errno set on
 * I/O failure, or errno EINVAL when the file is not a valid model.  On
 * failure *out is left unmapped. */
int model_map(const char *path, struct model *out);

/* As model_map, but a file without the means is accepted too (the
 * converter's output, before tools/model-means.c appends them). */
int model_map_raw(const char *path, struct model *out);

/* Unmap; safe on a zeroed or already unmapped struct. */
void model_unmap(struct model *m);

/* A BERT model file (encoder/bert.h; build/model/<name>.bin, made by
 * mk/bert.mk), mapped read-only. */
struct bert_file {
	void *base;
	size_t len;
	struct bert_model enc;    /* pointers into base */
};

/* Map path read-only and validate it (bert_init).  0; or -1 with errno set
 * on I/O failure, EINVAL when the file is not a valid model. */
int bert_map(const char *path, struct bert_file *out);

/* Unmap; safe on a zeroed or already unmapped struct. */
void bert_unmap(struct bert_file *f);

/* Map the regular, non-empty file path read-only (MAP_SHARED): *base,
 * *len.  0, or -1 with errno set (EINVAL: not a regular file, or empty).
 * encoder/encoder.h maps through it. */
int model_file_map(const char *path, void **base, size_t *len);

/* Unmap what model_file_map mapped; base NULL is a no-op. */
void model_file_unmap(void *base, size_t len);

/* Texts of a calibration file: one per line, blank and '#' lines skipped. */
struct model_texts {
	char **t;
	size_t n;
};

/* Read path into *out.  0, or -1 with errno set (no text is an EINVAL). */
int model_texts_load(const char *path, struct model_texts *out);
void model_texts_free(struct model_texts *t);

/* The mean (not renormalised) of the encoder's vectors of texts[0..n) into
 * out: what EMBED_SEC_MEANS holds for a calibration file.  scratch is
 * embed_scratch_size(m) bytes.  EMBED_OK, or the first text's embed_text
 * error (EMBED_EEMPTY for a text with no tokens), EMBED_EARG for n == 0. */
enum embed_status model_mean(const struct embed_model *m, void *scratch,
	    char *const *texts, size_t n, float out[USE_DIM]);

#endif
