/*
 * Name tables: the API name at a row of a table indexed by an enum, and the
 * row of a name.  A table is an array of `n` rows of `stride` bytes whose
 * name (a const char *) sits `off` bytes into each row; NAMES_OF() and
 * NAMES_FIELD() spell those four arguments for a plain array of names and
 * for an array of structs.  Never allocates.
 * Convention of core/ (design.md §2.3, core/errors.h): enum arps_err, ARPS_OK
 * or the reason, or bool for a predicate; outputs written only on success.
 */
#ifndef ARPS_CORE_NAMES_H
#define ARPS_CORE_NAMES_H

#include <stdbool.h>
#include <stddef.h>

/* A table of `const char *` names, n rows. */
#define NAMES_OF(tab, n)	(const void *)(tab), (n), sizeof((tab)[0]), (size_t)0
/* A table of structs whose `field` is the name, n rows. */
#define NAMES_FIELD(tab, n, field) (const void *)(tab), (n), sizeof((tab)[0]), \
	(size_t)((const char *)&(tab)[0].field - (const char *)&(tab)[0])

/* The name at row i; NULL when i >= n. */
const char	*names_at(const void *tab, size_t n, size_t stride, size_t off,
		    unsigned i);
/* The row whose name equals `name`; -1 when none does or name is NULL. */
int		 names_find(const void *tab, size_t n, size_t stride, size_t off,
		    const char *name);

/*
 * Define the accessors a header declares: `const char *fn(type v)`, the
 * name at row v (NULL when out of range), and `bool fn(const char *name,
 * type *out)`, true and *out (when out is not NULL) set to the row of name,
 * false when no row has that name.  The table arguments as above.
 */
#define NAMES_AT_FN(fn, type, ...)					\
	const char *fn(type v) { return names_at(__VA_ARGS__, (unsigned)v); }
#define NAMES_FIND_FN(fn, type, ...)					\
	bool fn(const char *name, type *out)				\
	{								\
		int i = names_find(__VA_ARGS__, name);			\
		if (i >= 0 && out != NULL)				\
			*out = (type)i;					\
		return i >= 0;						\
	}

#endif
