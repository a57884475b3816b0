/*
 * Matching evaluation: rank every screening criteria for every bio (all
 * candidates at once) and report top-1 accuracy and mean reciprocal rank for
 * the C encoder and for a keyword-overlap baseline (Jaccard of lowercased word
 * sets minus stopwords).  The JavaScript reference is tools/match-eval.mjs.
 *
 *   match_eval MODEL_FILE PAIRS_TSV
 */
#include <ctype.h>
#include <math.h>

#include "core/embed.h"
#include "lib/model.h"
#include "tests/matching/match_common.h"

static const char *const stop[] = {
	"a", "about", "all", "also", "am", "an", "and", "any", "are", "as", "at", "be",
	"been", "but", "by", "can", "do", "for", "from", "had", "has", "have", "he",
	"her", "his", "how", "i", "if", "in", "into", "is", "it", "its", "just", "me",
	"more", "most", "my", "no", "not", "now", "of", "on", "one", "or", "other",
	"our", "out", "over", "s", "she", "so", "some", "still", "than", "that", "the",
	"their", "them", "then", "there", "they", "this", "those", "to", "up", "us",
	"was", "we", "were", "what", "when", "which", "who", "whose", "will", "with",
	"would", "you", "your", "ve", "m", "t", "re", "ll", "d",
};

#define MAXW 256
struct wset {
	char w[MAXW][32];
	size_t n;
};

static int is_stop(const char *w)
{
	for (size_t i = 0; i < sizeof stop / sizeof *stop; i++)
		if (strcmp(stop[i], w) == 0)
			return 1;
	return 0;
}

static void words(const char *s, struct wset *ws)
{
	ws->n = 0;
	while (*s) {
		while (*s && !isalnum((unsigned char)*s))
			s++;
		char w[32];
		size_t k = 0;
		while (*s && isalnum((unsigned char)*s)) {
			if (k < sizeof w - 1)
				w[k++] = (char)tolower((unsigned char)*s);
			s++;
		}
		w[k] = 0;
		if (!k || is_stop(w))
			continue;
		size_t i;
		for (i = 0; i < ws->n; i++)
			if (strcmp(ws->w[i], w) == 0)
				break;
		if (i == ws->n && ws->n < MAXW)
			memcpy(ws->w[ws->n++], w, sizeof w);
	}
}

static double jaccard(const struct wset *a, const struct wset *b)
{
	size_t inter = 0;
	for (size_t i = 0; i < a->n; i++)
		for (size_t j = 0; j < b->n; j++)
			if (strcmp(a->w[i], b->w[j]) == 0) {
				inter++;
				break;
			}
	size_t uni = a->n + b->n - inter;
	return uni ? (double)inter / (double)uni : 0;
}

/* rank of the true criteria i for bio i: 1 + candidates scoring >= it */
static void report(const char *name, const double *sim, size_t n)
{
	size_t top1 = 0;
	double mrr = 0;
	for (size_t i = 0; i < n; i++) {
		size_t rank = 1;
		for (size_t j = 0; j < n; j++)
			if (j != i && sim[i * n + j] >= sim[i * n + i])
				rank++;
		top1 += rank == 1;
		mrr += 1.0 / (double)rank;
	}
	printf("%-22s top-1 %2zu/%zu = %.3f   MRR %.3f\n", name, top1, n,
	       (double)top1 / (double)n, mrr / (double)n);
}

int main(int argc, char **argv)
{
	struct model m;
	struct pairs p;
	if (argc != 3) {
		fprintf(stderr, "usage: %s MODEL PAIRS_TSV\n", argv[0]);
		return 2;
	}
	if (model_map(argv[1], &m) != 0) {
		perror(argv[1]);
		return 1;
	}
	if (pairs_load(argv[2], &p) != 0) {
		fprintf(stderr, "cannot read %s\n", argv[2]);
		return 1;
	}
	size_t n = p.n;
	void *scratch = malloc(embed_scratch_size(&m.enc));
	float *vb = malloc(n * EMBED_DIM * sizeof(float));
	float *vc = malloc(n * EMBED_DIM * sizeof(float));
	double *sim = malloc(n * n * sizeof(double));
	struct wset *wb = malloc(n * sizeof *wb), *wc = malloc(n * sizeof *wc);
	if (!scratch || !vb || !vc || !sim || !wb || !wc)
		return 1;
	for (size_t i = 0; i < n; i++) {
		if (embed_text(&m.enc, p.bio[i], strlen(p.bio[i]), scratch, vb + i * EMBED_DIM) ||
		    embed_text(&m.enc, p.crit[i], strlen(p.crit[i]), scratch, vc + i * EMBED_DIM))
			return 1;
		words(p.bio[i], &wb[i]);
		words(p.crit[i], &wc[i]);
	}
	printf("matching eval: %zu bios x %zu criteria (chance top-1 %.3f)\n", n, n, 1.0 / (double)n);
	for (size_t i = 0; i < n; i++)
		for (size_t j = 0; j < n; j++)
			sim[i * n + j] = embed_cosine(vb + i * EMBED_DIM, vc + j * EMBED_DIM);
	report("C encoder (USE Lite)", sim, n);
	for (size_t i = 0; i < n; i++)
		for (size_t j = 0; j < n; j++)
			sim[i * n + j] = jaccard(&wb[i], &wc[j]);
	report("keyword Jaccard", sim, n);
	model_unmap(&m);
	return 0;
}
