/*
 * Append the calibration means to a converted model file of either kind
 * (encoder/encoder.h: make model for USE Lite, make bert-models for each
 * BERT encoder):
 *
 *   model-means RAW_MODEL BIOS_TXT CRITERIA_TXT OUT_MODEL
 *
 * Runs this C encoder over every text of the two calibration files
 * (tests/matching/calibration/, one text per line), the bios in the bio
 * role (BERT: query), the criteria in the criteria role (BERT: passage),
 * averages the vectors of each file and writes OUT = RAW + the means
 * section (EMBED_SEC_MEANS, encoder/embed.h; BERT_SEC_MEANS,
 * encoder/bert.h; same layout): the text counts, the SHA-256 of each file
 * and the two means.  The means are what ranking subtracts (match_centre,
 * design.md §7), so they must be the vectors the C encoder gives at run
 * time, not a reference runtime's.  The encoder runs with the generic
 * kernel, so the file does not depend on the CPU that built it.  A RAW
 * that already has means is refused.  Exits 0, or 1 with a message.
 */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sodium.h>

#include "encoder/encoder.h"
#include "encoder/kernels.h"
#include "encoder/model.h"

static int
file_sha256(const char *path, uint8_t out[32])
{
	crypto_hash_sha256_state st;
	unsigned char buf[65536];
	size_t n;
	FILE *f;
	int bad;

	if ((f = fopen(path, "rb")) == NULL)
		return -1;
	crypto_hash_sha256_init(&st);
	while ((n = fread(buf, 1, sizeof buf, f)) > 0)
		crypto_hash_sha256_update(&st, buf, n);
	bad = ferror(f);
	fclose(f);
	crypto_hash_sha256_final(&st, out);
	return bad ? -1 : 0;
}

static void
put64(unsigned char *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (unsigned char)(v >> (8 * i));
}

int
main(int argc, char **argv)
{
	struct encoder raw, check;
	struct model_texts bios = { 0 }, crit = { 0 };
	struct embed_means_hdr h;
	float means[2 * ENCODER_MAX_DIM];
	unsigned char *out = NULL;
	size_t off, len, dim, table, sec, size;
	void *scratch = NULL;
	char tmp[4096] = "";
	FILE *f = NULL;
	double nb = 0, nc = 0;
	int rc;

	if (argc != 5) {
		fprintf(stderr, "usage: %s RAW_MODEL BIOS_TXT CRITERIA_TXT OUT_MODEL\n", argv[0]);
		return 2;
	}
	if (sodium_init() < 0 || encoder_open(&raw, argv[1]) != ENCODER_OK) {
		fprintf(stderr, "model-means: cannot map %s: %s\n", argv[1], strerror(errno));
		return 1;
	}
	dim = raw.dim;
	if (raw.kind == ENCODER_USE) {
		table = 64;
		sec = EMBED_SEC_MEANS;
	} else {
		table = BERT_HDR;
		sec = BERT_SEC_MEANS;
	}
	size = EMBED_MEANS_HDR + 2 * dim * sizeof(float);
	if (raw.means != NULL) {
		fprintf(stderr, "model-means: %s has means already\n", argv[1]);
		goto fail;
	}
	if (model_texts_load(argv[2], &bios) != 0 || model_texts_load(argv[3], &crit) != 0) {
		fprintf(stderr, "model-means: cannot read the calibration texts: %s\n",
		    strerror(errno));
		goto fail;
	}
	memset(&h, 0, sizeof h);
	memcpy(h.magic, EMBED_MEANS_MAGIC, 8);
	h.n_bio = (uint32_t)bios.n;
	h.n_crit = (uint32_t)crit.n;
	if (file_sha256(argv[2], h.sha_bio) != 0 || file_sha256(argv[3], h.sha_crit) != 0) {
		fprintf(stderr, "model-means: cannot hash the calibration files\n");
		goto fail;
	}
	encoder_set_kernel(&raw, KERN_GENERIC);
	if ((scratch = malloc(encoder_scratch_size(&raw))) == NULL)
		goto fail;
	if ((rc = encoder_mean(&raw, ENCODER_BIO, scratch, bios.t, bios.n, means)) != 0 ||
	    (rc = encoder_mean(&raw, ENCODER_CRITERIA, scratch, crit.t, crit.n,
		means + dim)) != 0) {
		fprintf(stderr, "model-means: a calibration text cannot be embedded (%d)\n", rc);
		goto fail;
	}
	for (size_t d = 0; d < dim; d++) {
		nb += (double)means[d] * means[d];
		nc += (double)means[dim + d] * means[dim + d];
	}

	/* RAW, padded to 64, then the section; its table entry and the size */
	off = (raw.len + 63) & ~(size_t)63;
	len = off + size;
	if ((out = calloc(1, len)) == NULL)
		goto fail;
	memcpy(out, raw.base, raw.len);
	memcpy(out + off, &h, sizeof h);
	memcpy(out + off + EMBED_MEANS_HDR, means, 2 * dim * sizeof(float));
	put64(out + table + 16 * sec, off);
	put64(out + table + 16 * sec + 8, size);
	put64(out + 16, len);
	snprintf(tmp, sizeof tmp, "%s.tmp", argv[4]);
	if ((f = fopen(tmp, "wb")) == NULL || fwrite(out, 1, len, f) != len) {
		fprintf(stderr, "model-means: cannot write %s: %s\n", tmp, strerror(errno));
		goto fail;
	}
	if (fclose(f) != 0) {
		f = NULL;
		goto fail;
	}
	f = NULL;
	if (encoder_open(&check, tmp) != ENCODER_OK || check.means == NULL ||
	    check.kind != raw.kind) {
		encoder_close(&check);
		fprintf(stderr, "model-means: %s does not read back\n", tmp);
		goto fail;
	}
	encoder_close(&check);
	if (rename(tmp, argv[4]) != 0) {
		fprintf(stderr, "model-means: rename to %s: %s\n", argv[4], strerror(errno));
		goto fail;
	}
	printf("wrote %s (%s): means of %zu bios (length %.3f) and %zu criteria (length %.3f)\n",
	    argv[4], raw.name, bios.n, sqrt(nb), crit.n, sqrt(nc));
	free(out);
	free(scratch);
	model_texts_free(&bios);
	model_texts_free(&crit);
	encoder_close(&raw);
	return 0;
fail:
	if (f != NULL)
		fclose(f);
	if (tmp[0] != '\0')
		(void)unlink(tmp);
	free(out);
	free(scratch);
	model_texts_free(&bios);
	model_texts_free(&crit);
	encoder_close(&raw);
	return 1;
}
