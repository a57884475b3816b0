/*
 * Append the calibration means to the converted model (make model, step 2):
 *
 *   model-means RAW_MODEL BIOS_TXT CRITERIA_TXT OUT_MODEL
 *
 * Runs this C encoder over every text of the two calibration files
 * (tests/matching/calibration/, one text per line), averages the vectors of
 * each file and writes OUT = RAW + section EMBED_SEC_MEANS (encoder/embed.h):
 * the text counts, the SHA-256 of each file and the two means.  The means are
 * what ranking subtracts (match_centre, design.md §7), so they must be
 * the vectors the C encoder gives at run time, not the JS runtime's.
 * The encoder runs with the generic kernel, so the file does not depend on
 * the CPU that built it.  Exits 0, or 1 with a message.
 */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sodium.h>

#include "encoder/embed.h"
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
	struct model raw, check;
	struct model_texts bios = { 0 }, crit = { 0 };
	struct embed_model enc;
	struct embed_means_hdr h;
	float means[2 * USE_DIM];
	unsigned char *out = NULL;
	size_t off, len;
	void *scratch = NULL;
	char tmp[4096] = "";
	FILE *f = NULL;
	double nb = 0, nc = 0;
	int rc;

	if (argc != 5) {
		fprintf(stderr, "usage: %s RAW_MODEL BIOS_TXT CRITERIA_TXT OUT_MODEL\n", argv[0]);
		return 2;
	}
	if (sodium_init() < 0 || model_map_raw(argv[1], &raw) != 0) {
		fprintf(stderr, "model-means: cannot map %s: %s\n", argv[1], strerror(errno));
		return 1;
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
	enc = raw.enc;
	enc.kernel = EMBED_KERNEL_GENERIC;
	if ((scratch = malloc(embed_scratch_size(&enc))) == NULL)
		goto fail;
	if ((rc = model_mean(&enc, scratch, bios.t, bios.n, means)) != EMBED_OK ||
	    (rc = model_mean(&enc, scratch, crit.t, crit.n, means + USE_DIM)) != EMBED_OK) {
		fprintf(stderr, "model-means: a calibration text cannot be embedded (%d)\n", rc);
		goto fail;
	}
	for (size_t d = 0; d < USE_DIM; d++) {
		nb += (double)means[d] * means[d];
		nc += (double)means[USE_DIM + d] * means[USE_DIM + d];
	}

	/* RAW, padded to 64, then the section; its table entry and the size */
	off = (raw.len + 63) & ~(size_t)63;
	len = off + EMBED_MEANS_SIZE;
	if ((out = calloc(1, len)) == NULL)
		goto fail;
	memcpy(out, raw.base, raw.len);
	memcpy(out + off, &h, sizeof h);
	memcpy(out + off + EMBED_MEANS_HDR, means, sizeof means);
	put64(out + 64 + 16 * EMBED_SEC_MEANS, off);
	put64(out + 64 + 16 * EMBED_SEC_MEANS + 8, EMBED_MEANS_SIZE);
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
	if (model_map(tmp, &check) != 0 || check.enc.means == NULL) {
		fprintf(stderr, "model-means: %s does not read back\n", tmp);
		goto fail;
	}
	model_unmap(&check);
	if (rename(tmp, argv[4]) != 0) {
		fprintf(stderr, "model-means: rename to %s: %s\n", argv[4], strerror(errno));
		goto fail;
	}
	printf("wrote %s: means of %zu bios (length %.3f) and %zu criteria (length %.3f)\n",
	    argv[4], bios.n, sqrt(nb), crit.n, sqrt(nc));
	free(out);
	free(scratch);
	model_texts_free(&bios);
	model_texts_free(&crit);
	model_unmap(&raw);
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
	model_unmap(&raw);
	return 1;
}
