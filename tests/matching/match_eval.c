/*
 * Matching evaluation (make eval-matching): for each model file given, of
 * either kind (encoder/encoder.h), rank every screening criteria of a set
 * for every bio of the same set (all candidates at once) and report top-1
 * accuracy and mean reciprocal rank on each set, as one table:
 *
 *  - plain: the cosine of the raw unit vectors;
 *  - centred: each side minus its mean over the calibration set, as this
 *    run's encoder gives it, renormalised (design.md §7; what ranking does
 *    with the means of the model file, which are the same texts' means on
 *    the generic kernel: the run prints how close they are).
 *
 * A BERT model runs in two variants: "card" embeds a bio as the query
 * and criteria as the passage, each with the file's prefix (the model
 * card's asymmetric retrieval; the service's roles, encoder/encoder.h),
 * and "sym" embeds both as the passage (no query prefix: the cards'
 * advice for a symmetric task).  The calibration bios are embedded in the
 * variant's bio role.  USE Lite has no roles.  A keyword-overlap baseline
 * (Jaccard of lowercased word sets minus stopwords) closes the table.
 *
 * With -x, a second table for each model's card variant: centred on the
 * means of each half of the calibration set (even and odd texts), on the
 * set's own means (in-sample, a ceiling, not a result), and centred with
 * the top k principal directions of the calibration set removed
 * ("all-but-the-top", Mu and Viswanath 2018; k = 1 as in SIF, k = 5 ~ d/100
 * as in the paper: tried for USE Lite and not used, docs/api.md §11).
 * No mean is ever taken from an evaluation set except that reference.
 *
 *   match_eval [-x] BIOS_TXT CRITERIA_TXT SET_TSV... -- MODEL_FILE...
 */
#include <ctype.h>
#include <math.h>
#include <unistd.h>

#include "core/score.h"
#include "encoder/encoder.h"
#include "encoder/model.h"
#include "tests/matching/match_common.h"

#define MAXSETS 8
#define DMAX ENCODER_MAX_DIM

static unsigned D;	/* the vector length of the model being measured */

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

struct score {
	size_t top1, n;
	double mrr;
};

/* rank of the true criteria i for bio i: 1 + candidates scoring >= it */
static struct score score_sims(const double *sim, size_t n)
{
	struct score s = { 0, n, 0 };
	for (size_t i = 0; i < n; i++) {
		size_t rank = 1;
		for (size_t j = 0; j < n; j++)
			if (j != i && sim[i * n + j] >= sim[i * n + i])
				rank++;
		s.top1 += rank == 1;
		s.mrr += 1.0 / (double)rank;
	}
	s.mrr /= (double)n;
	return s;
}

/* out = (raw - mean) / |raw - mean| (mean NULL: raw / |raw|; zero stays
 * zero): core's match_centre at any length. */
static void centre(float *out, const float *raw, const float *mean)
{
	double nn = 0;
	for (size_t d = 0; d < D; d++) {
		out[d] = raw[d] - (mean ? mean[d] : 0);
		nn += (double)out[d] * out[d];
	}
	for (size_t d = 0; d < D; d++)
		out[d] = nn > 1e-12 ? (float)(out[d] / sqrt(nn)) : 0;
}

/* Cosines of every bio with every criteria, each side centred on its mean
 * (NULL: none, the plain cosine). */
static void centred_sims(const float *vb, const float *vc, size_t n, const float *mb,
			 const float *mc, double *sim)
{
	float *cb = malloc(n * D * sizeof(float)), *cc = malloc(n * D * sizeof(float));
	if (!cb || !cc)
		exit(1);
	for (size_t i = 0; i < n; i++) {
		centre(cb + i * D, vb + i * D, mb);
		centre(cc + i * D, vc + i * D, mc);
	}
	for (size_t i = 0; i < n; i++)
		for (size_t j = 0; j < n; j++)
			sim[i * n + j] = match_dot(cb + i * D, cc + j * D, D);
	free(cb);
	free(cc);
}

/* The vectors of texts t[0..n) in role, n x D floats (malloc'd). */
static float *encode(const struct encoder *e, int role, void *scratch, char *const *t, size_t n)
{
	float *v = malloc(n * D * sizeof(float));
	if (!v)
		exit(1);
	for (size_t i = 0; i < n; i++) {
		int rc = encoder_embed(e, role, t[i], strlen(t[i]), scratch, v + i * D);
		if (rc != ENCODER_OK && rc != ENCODER_EEMPTY) {
			fprintf(stderr, "match_eval: %s: text %zu cannot be embedded\n", e->name, i);
			exit(1);
		}
	}
	return v;
}

/* The mean of rows first, first + step, ... of v[0..n). */
static void mean_of(const float *v, size_t n, size_t first, size_t step, float *out)
{
	double acc[DMAX] = { 0 };
	size_t k = 0;
	for (size_t i = first; i < n; i += step, k++)
		for (size_t d = 0; d < D; d++)
			acc[d] += v[i * D + d];
	for (size_t d = 0; d < D; d++)
		out[d] = (float)(acc[d] / (double)k);
}

static double cos_of(const float *a, const float *b)
{
	double ab = 0, aa = 0, bb = 0;
	for (size_t d = 0; d < D; d++) {
		ab += (double)a[d] * b[d];
		aa += (double)a[d] * a[d];
		bb += (double)b[d] * b[d];
	}
	return ab / sqrt(aa * bb);
}

/* The top k principal directions (unit rows of pc) of the calibration
 * vectors v[0..n) centred on mean: power iteration on their covariance,
 * deflating the directions already found. */
static void top_directions(const float *v, size_t n, const float *mean, int k, double *pc)
{
	double *cov = calloc((size_t)D * D, sizeof *cov);
	double x[DMAX], u[DMAX], w[DMAX];
	if (!cov)
		exit(1);
	for (size_t i = 0; i < n; i++) {
		for (size_t a = 0; a < D; a++)
			x[a] = v[i * D + a] - mean[a];
		for (size_t a = 0; a < D; a++)
			for (size_t b = 0; b < D; b++)
				cov[a * D + b] += x[a] * x[b];
	}
	for (int p = 0; p < k; p++) {
		for (size_t a = 0; a < D; a++)
			u[a] = 1.0 + 0.01 * (double)a;
		for (int it = 0; it < 500; it++) {
			double len = 0;
			for (size_t a = 0; a < D; a++) {
				w[a] = 0;
				for (size_t b = 0; b < D; b++)
					w[a] += cov[a * D + b] * u[b];
			}
			for (int q = 0; q < p; q++) {
				double d = 0;
				for (size_t a = 0; a < D; a++)
					d += w[a] * pc[(size_t)q * D + a];
				for (size_t a = 0; a < D; a++)
					w[a] -= d * pc[(size_t)q * D + a];
			}
			for (size_t a = 0; a < D; a++)
				len += w[a] * w[a];
			len = sqrt(len);
			for (size_t a = 0; a < D; a++)
				u[a] = w[a] / len;
		}
		memcpy(pc + (size_t)p * D, u, D * sizeof *u);
	}
	free(cov);
}

/* v centred on mean, minus its projection on the k directions, renormalised. */
static void strip_top(float *out, const float *v, const float *mean, const double *pc, int k)
{
	double x[DMAX], len = 0;
	for (size_t a = 0; a < D; a++)
		x[a] = v[a] - mean[a];
	for (int p = 0; p < k; p++) {
		double d = 0;
		for (size_t a = 0; a < D; a++)
			d += x[a] * pc[(size_t)p * D + a];
		for (size_t a = 0; a < D; a++)
			x[a] -= d * pc[(size_t)p * D + a];
	}
	for (size_t a = 0; a < D; a++)
		len += x[a] * x[a];
	len = sqrt(len);
	for (size_t a = 0; a < D; a++)
		out[a] = (float)(x[a] / len);
}

/* Cosines with the top k calibration directions of each side removed. */
static void stripped_sims(const float *vb, const float *vc, size_t n, const double *pb,
			  const double *pcr, const float *mb, const float *mc, int k, double *sim)
{
	float *sb = malloc(n * D * sizeof(float)), *sc = malloc(n * D * sizeof(float));
	if (!sb || !sc)
		exit(1);
	for (size_t i = 0; i < n; i++) {
		strip_top(sb + i * D, vb + i * D, mb, pb, k);
		strip_top(sc + i * D, vc + i * D, mc, pcr, k);
	}
	for (size_t i = 0; i < n; i++)
		for (size_t j = 0; j < n; j++)
			sim[i * n + j] = match_dot(sb + i * D, sc + j * D, D);
	free(sb);
	free(sc);
}

struct set {
	const char *path, *name;
	struct pairs p;
};

static struct set sets[MAXSETS];
static size_t nsets;

static void row_start(const char *model, const char *variant, const char *centring)
{
	printf("| %s | %s | %s |", model, variant, centring);
}

static void row_cell(struct score s)
{
	printf(" %zu/%zu = %.3f | %.3f |", s.top1, s.n, (double)s.top1 / (double)s.n, s.mrr);
}

/* Vectors of every set in the variant's bio role and the criteria role. */
struct setvec {
	float *vb, *vc;
};

/* -x: the card variant's further centrings, one table row each. */
static void detail_rows(const struct encoder *e, const char *vname, const float *cbv, size_t nb, const float *ccv,
			size_t nc, const float *mb, const float *mc, struct setvec *sv)
{
	float hb[2][DMAX], hc[2][DMAX];
	double *sim;
	static const int ks[] = { 1, 5 };
	double *pb = malloc(5 * (size_t)D * sizeof *pb), *pcr = malloc(5 * (size_t)D * sizeof *pcr);
	char label[64];

	if (!pb || !pcr)
		exit(1);
	for (size_t h = 0; h < 2; h++) {
		mean_of(cbv, nb, h, 2, hb[h]);
		mean_of(ccv, nc, h, 2, hc[h]);
		snprintf(label, sizeof label, "%s half of the calibration set", h ? "odd" : "even");
		row_start(e->name, vname, label);
		for (size_t s = 0; s < nsets; s++) {
			size_t n = sets[s].p.n;
			if (!(sim = malloc(n * n * sizeof *sim)))
				exit(1);
			centred_sims(sv[s].vb, sv[s].vc, n, hb[h], hc[h], sim);
			row_cell(score_sims(sim, n));
			free(sim);
		}
		printf("\n");
	}
	row_start(e->name, vname, "(reference) the set's own means, in-sample");
	for (size_t s = 0; s < nsets; s++) {
		size_t n = sets[s].p.n;
		float smb[DMAX], smc[DMAX];
		if (!(sim = malloc(n * n * sizeof *sim)))
			exit(1);
		mean_of(sv[s].vb, n, 0, 1, smb);
		mean_of(sv[s].vc, n, 0, 1, smc);
		centred_sims(sv[s].vb, sv[s].vc, n, smb, smc, sim);
		row_cell(score_sims(sim, n));
		free(sim);
	}
	printf("\n");
	top_directions(cbv, nb, mb, 5, pb);
	top_directions(ccv, nc, mc, 5, pcr);
	for (size_t q = 0; q < sizeof ks / sizeof *ks; q++) {
		snprintf(label, sizeof label, "centred, top %d direction%s removed", ks[q],
			 ks[q] > 1 ? "s" : "");
		row_start(e->name, vname, label);
		for (size_t s = 0; s < nsets; s++) {
			size_t n = sets[s].p.n;
			if (!(sim = malloc(n * n * sizeof *sim)))
				exit(1);
			stripped_sims(sv[s].vb, sv[s].vc, n, pb, pcr, mb, mc, ks[q], sim);
			row_cell(score_sims(sim, n));
			free(sim);
		}
		printf("\n");
	}
	free(pb);
	free(pcr);
}

/* One model: its variants' rows (or with detail, the card variant's
 * further rows); a note on the file's means into note. */
static void run_model(const char *path, const struct model_texts *cb, const struct model_texts *cc,
		      int detail, char *note, size_t notesz)
{
	struct encoder e;
	static const struct {
		const char *name;
		int bio_role;
	} variants[] = {
		{ "card", ENCODER_BIO },	/* bio = query, criteria = passage */
		{ "sym", ENCODER_CRITERIA },	/* both passage, no query prefix */
	};
	void *scratch;
	float mb[DMAX], mc[DMAX];
	struct setvec sv[MAXSETS];
	float *ccv;

	if (encoder_open(&e, path) != ENCODER_OK) {
		perror(path);
		exit(1);
	}
	D = e.dim;
	if (!(scratch = malloc(encoder_scratch_size(&e))))
		exit(1);
	ccv = encode(&e, ENCODER_CRITERIA, scratch, cc->t, cc->n);
	mean_of(ccv, cc->n, 0, 1, mc);
	for (size_t s = 0; s < nsets; s++)
		sv[s].vc = encode(&e, ENCODER_CRITERIA, scratch, sets[s].p.crit, sets[s].p.n);
	size_t nvar = e.kind == ENCODER_BERT ? 2 : 1;
	for (size_t v = 0; v < nvar; v++) {
		float *cbv = encode(&e, variants[v].bio_role, scratch, cb->t, cb->n);
		const char *vname = e.kind == ENCODER_BERT ? variants[v].name : "-";
		mean_of(cbv, cb->n, 0, 1, mb);
		for (size_t s = 0; s < nsets; s++)
			sv[s].vb = encode(&e, variants[v].bio_role, scratch, sets[s].p.bio,
					  sets[s].p.n);
		if (v == 0 && e.mean_bio) {
			size_t k = strlen(note);
			snprintf(note + k, notesz - k, "%s%s %.6f / %.6f", k ? ", " : "", e.name,
				 cos_of(mb, e.mean_bio), cos_of(mc, e.mean_crit));
		}
		if (detail && v == 0)
			detail_rows(&e, vname, cbv, cb->n, ccv, cc->n, mb, mc, sv);
		for (int c = 0; c < 2 && !detail; c++) {
			row_start(e.name, vname, c ? "centred" : "plain");
			for (size_t s = 0; s < nsets; s++) {
				size_t n = sets[s].p.n;
				double *sim = malloc(n * n * sizeof *sim);
				if (!sim)
					exit(1);
				centred_sims(sv[s].vb, sv[s].vc, n, c ? mb : NULL, c ? mc : NULL, sim);
				row_cell(score_sims(sim, n));
				free(sim);
			}
			printf("\n");
			fflush(stdout);
		}
		for (size_t s = 0; s < nsets; s++)
			free(sv[s].vb);
		free(cbv);
	}
	for (size_t s = 0; s < nsets; s++)
		free(sv[s].vc);
	free(ccv);
	free(scratch);
	encoder_close(&e);
}

int main(int argc, char **argv)
{
	struct model_texts cb, cc;
	int detail = 0, a = 1, first_model;
	char note[1024] = "";

	if (a < argc && strcmp(argv[a], "-x") == 0) {
		detail = 1;
		a++;
	}
	for (first_model = a; first_model < argc && strcmp(argv[first_model], "--"); first_model++)
		;
	if (first_model - a < 3 || first_model - a - 2 > MAXSETS || first_model + 1 >= argc) {
		fprintf(stderr, "usage: %s [-x] BIOS_TXT CRITERIA_TXT SET_TSV... -- MODEL...\n",
			argv[0]);
		return 2;
	}
	if (model_texts_load(argv[a], &cb) != 0 || model_texts_load(argv[a + 1], &cc) != 0) {
		fprintf(stderr, "cannot read the calibration texts\n");
		return 1;
	}
	for (int i = a + 2; i < first_model; i++) {
		struct set *s = &sets[nsets++];
		s->path = argv[i];
		s->name = strrchr(argv[i], '/') ? strrchr(argv[i], '/') + 1 : argv[i];
		if (pairs_load(s->path, &s->p) != 0) {
			fprintf(stderr, "cannot read %s\n", s->path);
			return 1;
		}
	}
	printf("matching eval: calibration set %zu bios, %zu criteria; chance top-1", cb.n, cc.n);
	for (size_t s = 0; s < nsets; s++)
		printf(" %s %.3f", sets[s].name, 1.0 / (double)sets[s].p.n);
	printf("\n\n| model | variant | %s |", detail ? "centred on" : "centring");
	for (size_t s = 0; s < nsets; s++)
		printf(" %s top-1 | MRR |", sets[s].name);
	printf("\n|---|---|---|");
	for (size_t s = 0; s < nsets; s++)
		printf("---|---|");
	printf("\n");
	fflush(stdout);
	for (int i = first_model + 1; i < argc; i++)
		run_model(argv[i], &cb, &cc, detail, note, sizeof note);
	if (!detail) {
		row_start("keyword Jaccard", "-", "-");
		for (size_t s = 0; s < nsets; s++) {
			size_t n = sets[s].p.n;
			struct wset *wb = malloc(n * sizeof *wb), *wc = malloc(n * sizeof *wc);
			double *sim = malloc(n * n * sizeof *sim);
			if (!wb || !wc || !sim)
				return 1;
			for (size_t k = 0; k < n; k++) {
				words(sets[s].p.bio[k], &wb[k]);
				words(sets[s].p.crit[k], &wc[k]);
			}
			for (size_t k = 0; k < n; k++)
				for (size_t j = 0; j < n; j++)
					sim[k * n + j] = jaccard(&wb[k], &wc[j]);
			row_cell(score_sims(sim, n));
			free(wb);
			free(wc);
			free(sim);
		}
		printf("\n");
	}
	printf("\ncard: a bio as the query, criteria as the passage, with the file's prefixes; "
	       "sym: both as the passage (no query prefix); centred: on this run's means of the "
	       "calibration set in the variant's roles.\n");
	if (note[0])
		printf("cosine of this run's card means (bio / criteria) to the model file's: %s\n",
		       note);
	model_texts_free(&cb);
	model_texts_free(&cc);
	return 0;
}
