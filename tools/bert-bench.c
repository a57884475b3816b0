/*
 * Milliseconds per text of the BERT encoder (design.md §15: at most 50 ms
 * per 60-word text on one core; make bert-bench runs it under taskset).
 *
 *   bert-bench MODEL.bin TEXT_FILE [RUNS] [KERNEL]
 *
 * Embeds the whole of TEXT_FILE (one text; trailing newlines dropped) as a
 * passage and as a query, RUNS times each (default 30) after one warm-up,
 * and prints the token counts and the mean, median and best milliseconds
 * per text (make bench's row 9 reads the median, tools/bench-embed.sh).
 * KERNEL (enum kern_isa: 0 generic, 1 AVX2, 2 AVX-512, 3 AVX512_BF16)
 * replaces the one bert_init picks, for comparison (at most what the CPU
 * runs: kern_detect).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "encoder/bert.h"
#include "encoder/kernels.h"
#include "encoder/model.h"

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

int main(int argc, char **argv)
{
	struct bert_file bf;
	char text[65536];
	size_t len;
	int32_t ids[BERT_MAX_SEQ];
	float v[BERT_DIM];
	void *scratch;
	double *t;
	int runs = 30;
	FILE *f;

	if (argc < 3) {
		fprintf(stderr, "usage: %s MODEL.bin TEXT_FILE [RUNS] [KERNEL]\n", argv[0]);
		return 2;
	}
	if (argc > 3)
		runs = atoi(argv[3]);
	if (runs < 1)
		runs = 1;
	if (bert_map(argv[1], &bf) != 0) {
		perror(argv[1]);
		return 1;
	}
	if (argc > 4) {
		int k = atoi(argv[4]);
		if (k < KERN_GENERIC || k > kern_detect(bf.enc.has_bf16)) {
			fprintf(stderr, "%s: kernel %d not available here\n", argv[0], k);
			return 2;
		}
		bf.enc.kernel = k;
	}
	if ((f = fopen(argv[2], "rb")) == NULL) {
		perror(argv[2]);
		return 1;
	}
	len = fread(text, 1, sizeof text - 1, f);
	fclose(f);
	while (len && (text[len - 1] == '\n' || text[len - 1] == '\r'))
		len--;
	if ((scratch = malloc(bert_scratch_size(&bf.enc))) == NULL ||
	    (t = malloc((size_t)runs * sizeof *t)) == NULL)
		return 1;
	for (int role = BERT_PASSAGE; role >= BERT_QUERY; role--) {
		size_t n = bert_tokens(&bf.enc, role, text, len, ids);
		double best = 1e30, sum = 0, median;
		bert_embed(&bf.enc, role, text, len, scratch, v);
		for (int r = 0; r < runs; r++) {
			double t0 = now_ms();
			bert_embed(&bf.enc, role, text, len, scratch, v);
			double dt = now_ms() - t0;
			t[r] = dt;
			sum += dt;
			best = dt < best ? dt : best;
		}
		qsort(t, (size_t)runs, sizeof *t, cmp_double);
		median = runs % 2 ? t[runs / 2] : (t[runs / 2 - 1] + t[runs / 2]) / 2;
		printf("%s %s: %zu tokens, kernel %d, %d runs: mean %.2f ms, median %.2f ms,"
		       " best %.2f ms\n", bf.enc.name, role == BERT_QUERY ? "query" : "passage", n,
		       bf.enc.kernel, runs, sum / runs, median, best);
	}
	free(t);
	free(scratch);
	bert_unmap(&bf);
	return 0;
}
