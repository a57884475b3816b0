/* Shared by the matching evaluation and benchmark programs (not core). */
#ifndef ARPS_TESTS_MATCHING_COMMON_H
#define ARPS_TESTS_MATCHING_COMMON_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct pairs {
	char **bio, **crit;
	size_t n;
};

/* tests/matching/pairs.tsv: "bio<TAB>criteria" per line, '#' comments. */
static inline int pairs_load(const char *path, struct pairs *p)
{
	FILE *f = fopen(path, "r");
	char *line = NULL;
	size_t cap = 0, alloc = 0;
	ssize_t r;
	if (!f)
		return -1;
	memset(p, 0, sizeof *p);
	while ((r = getline(&line, &cap, f)) > 0) {
		if (line[0] == '#' || line[0] == '\n')
			continue;
		line[strcspn(line, "\r\n")] = 0;
		char *tab = strchr(line, '\t');
		if (!tab)
			continue;
		*tab = 0;
		if (p->n == alloc) {
			alloc = alloc ? 2 * alloc : 64;
			p->bio = realloc(p->bio, alloc * sizeof *p->bio);
			p->crit = realloc(p->crit, alloc * sizeof *p->crit);
		}
		p->bio[p->n] = strdup(line);
		p->crit[p->n] = strdup(tab + 1);
		p->n++;
	}
	free(line);
	fclose(f);
	return p->n ? 0 : -1;
}

#endif
