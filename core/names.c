/* Name tables (see names.h). */
#include <stddef.h>
#include <string.h>

#include "names.h"

static const char *
row_name(const void *tab, size_t stride, size_t off, size_t i)
{
	const char	*name;

	memcpy(&name, (const char *)tab + i * stride + off, sizeof(name));
	return name;
}

const char *
names_at(const void *tab, size_t n, size_t stride, size_t off, unsigned i)
{
	if (i >= n)
		return NULL;
	return row_name(tab, stride, off, i);
}

int
names_find(const void *tab, size_t n, size_t stride, size_t off,
    const char *name)
{
	const char	*s;
	size_t		 i;

	if (name == NULL)
		return -1;
	for (i = 0; i < n; i++)
		if ((s = row_name(tab, stride, off, i)) != NULL &&
		    strcmp(name, s) == 0)
			return (int)i;
	return -1;
}
