/* mmap loader for the embedding model file; see model.h. */
#include "lib/model.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

int model_map(const char *path, struct model *out)
{
	struct stat st;
	void *p;
	int fd, e;

	if (!path || !out) {
		errno = EINVAL;
		return -1;
	}
	memset(out, 0, sizeof *out);
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
	if (embed_init(&out->enc, p, (size_t)st.st_size) != EMBED_OK) {
		munmap(p, (size_t)st.st_size);
		memset(out, 0, sizeof *out);
		errno = EINVAL;
		return -1;
	}
	(void)madvise(p, (size_t)st.st_size, MADV_WILLNEED);
	out->base = p;
	out->len = (size_t)st.st_size;
	return 0;
}

void model_unmap(struct model *m)
{
	if (m && m->base) {
		munmap(m->base, m->len);
		memset(m, 0, sizeof *m);
	}
}
