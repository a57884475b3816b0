/* mmap loader for the embedding model file; see model.h. */
#include "encoder/model.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

int model_file_map(const char *path, void **base, size_t *len)
{
	struct stat st;
	void *p;
	int fd, e;

	if (!path) {
		errno = EINVAL;
		return -1;
	}
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	if (fstat(fd, &st) != 0) {
		e = errno;
		close(fd);
		errno = e;
		return -1;
	}
	if (!S_ISREG(st.st_mode) || st.st_size <= 0) {
		close(fd);
		errno = EINVAL;
		return -1;
	}
	p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED, fd, 0);
	e = errno;
	close(fd);
	if (p == MAP_FAILED) {
		errno = e;
		return -1;
	}
	*base = p;
	*len = (size_t)st.st_size;
	return 0;
}

static int map_file(const char *path, struct model *out, int need_means)
{
	void *p;
	size_t len;

	if (!out) {
		errno = EINVAL;
		return -1;
	}
	memset(out, 0, sizeof *out);
	if (model_file_map(path, &p, &len) != 0)
		return -1;
	if (embed_init(&out->enc, p, len) != EMBED_OK ||
	    (need_means && out->enc.mean_bio == NULL)) {
		munmap(p, len);
		memset(out, 0, sizeof *out);
		errno = EINVAL;
		return -1;
	}
	(void)madvise(p, len, MADV_WILLNEED);
	out->base = p;
	out->len = len;
	return 0;
}

int bert_map(const char *path, struct bert_file *out)
{
	void *p;
	size_t len;

	if (!out) {
		errno = EINVAL;
		return -1;
	}
	memset(out, 0, sizeof *out);
	if (model_file_map(path, &p, &len) != 0)
		return -1;
	if (bert_init(&out->enc, p, len) != BERT_OK) {
		munmap(p, len);
		memset(out, 0, sizeof *out);
		errno = EINVAL;
		return -1;
	}
	(void)madvise(p, len, MADV_WILLNEED);
	out->base = p;
	out->len = len;
	return 0;
}

void model_file_unmap(void *base, size_t len)
{
	if (base)
		munmap(base, len);
}

void bert_unmap(struct bert_file *f)
{
	if (f && f->base) {
		munmap(f->base, f->len);
		memset(f, 0, sizeof *f);
	}
}

int model_map(const char *path, struct model *out)
{
	return map_file(path, out, 1);
}

int model_map_raw(const char *path, struct model *out)
{
	return map_file(path, out, 0);
}

void model_unmap(struct model *m)
{
	if (m && m->base) {
		munmap(m->base, m->len);
		memset(m, 0, sizeof *m);
	}
}

void model_texts_free(struct model_texts *t)
{
	if (t == NULL)
		return;
	for (size_t i = 0; i < t->n; i++)
		free(t->t[i]);
	free(t->t);
	t->t = NULL;
	t->n = 0;
}

int model_texts_load(const char *path, struct model_texts *out)
{
	FILE *f;
	char *line = NULL, **nt;
	size_t cap = 0, alloc = 0, k;
	ssize_t r;
	int e = 0;

	out->t = NULL;
	out->n = 0;
	if ((f = fopen(path, "r")) == NULL)
		return -1;
	while ((r = getline(&line, &cap, f)) > 0) {
		k = strcspn(line, "\r\n");
		line[k] = '\0';
		if (k == 0 || line[0] == '#')
			continue;
		if (out->n == alloc) {
			alloc = alloc ? 2 * alloc : 256;
			if ((nt = realloc(out->t, alloc * sizeof *nt)) == NULL) {
				e = ENOMEM;
				break;
			}
			out->t = nt;
		}
		if ((out->t[out->n] = strdup(line)) == NULL) {
			e = ENOMEM;
			break;
		}
		out->n++;
	}
	if (e == 0 && ferror(f))
		e = EIO;
	free(line);
	fclose(f);
	if (e == 0 && out->n == 0)
		e = EINVAL;
	if (e != 0) {
		model_texts_free(out);
		errno = e;
		return -1;
	}
	return 0;
}

enum embed_status model_mean(const struct embed_model *m, void *scratch,
	    char *const *texts, size_t n, float out[USE_DIM])
{
	double acc[USE_DIM] = { 0 };
	float v[USE_DIM];
	enum embed_status rc;

	if (m == NULL || scratch == NULL || texts == NULL || n == 0)
		return EMBED_EARG;
	for (size_t i = 0; i < n; i++) {
		if ((rc = embed_text(m, texts[i], strlen(texts[i]), scratch, v)) != EMBED_OK)
			return rc;
		for (size_t d = 0; d < USE_DIM; d++)
			acc[d] += v[d];
	}
	for (size_t d = 0; d < USE_DIM; d++)
		out[d] = (float)(acc[d] / (double)n);
	return EMBED_OK;
}
