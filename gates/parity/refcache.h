/* The on-disk cache of large CPU references: a float64 reference of a big
 * case costs seconds to compute and the same bytes every run of one build, so it is kept in
 * the runner's cache directory, keyed by what it is a function of, checked by a digest before
 * use, never trusted without it. Host code only; the gate calls it around reference(). */
#ifndef KG_PARITY_REFCACHE_H
#define KG_PARITY_REFCACHE_H

#include <limits.h>
#include "core/kg_core.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Below this size a reference is never looked up or stored: recomputing costs less than the
 * file system. */
#define KG_REFCACHE_MIN_BYTES ((size_t)64 << 20)
/* Stored only when computing it took longer than this and than reading it back at
 * KG_REFCACHE_READ_BPS would: a reference that is cheap on this runner stays uncached. */
#define KG_REFCACHE_MIN_S 0.2
#define KG_REFCACHE_READ_BPS 1e9
/* The directory's bound (KGATE_REFCACHE_MAX_MB overrides): beyond it the least recently used
 * entries are removed after a store. */
#define KG_REFCACHE_MAX_MB_DEFAULT 4096

typedef struct {
    bool on; /* false: this reference is not cached (small, off, no dir) */
    char dir[PATH_MAX], path[PATH_MAX];
    unsigned char key[32]; /* SHA-256 of case id, seed, build id, outputs, reference dtype */
    size_t bytes;          /* the reference's size */
    size_t limit;          /* the directory's bound, bytes */
} kg_refcache;

/* The entry of one reference: `build` identifies the kgate build (the runner's SHA-256),
 * `io` the case's outputs as set up (counts and dtypes). c->on is false for a reference under
 * KG_REFCACHE_MIN_BYTES. */
int kg_refcache_init(kg_refcache *c, const char *dir, const char *case_id, uint64_t seed,
                     const char *build, const kg_case_io *io, kg_dtype ref_dtype, size_t bytes);
/* kg_refcache_init with the runner's cache directory (kg_cache_dir) and this process's build
 * id; off (c->on false, 0 returned) with KGATE_REFCACHE=0, without a cache directory, or when
 * the build cannot be hashed (a WARN line says so). */
int kg_refcache_open(kg_refcache *c, const char *case_id, uint64_t seed, const kg_case_io *io,
                     kg_dtype ref_dtype, size_t bytes);
/* Fill ref (c->bytes) from the entry: *hit true only when the file is whole and its digest
 * matches. A missing entry is a plain miss; a corrupt, truncated or foreign one is a WARN line
 * on stderr naming the file, is removed, and is a miss (the caller recomputes). ref's content
 * is unspecified after a miss. */
int kg_refcache_load(const kg_refcache *c, void *ref, bool *hit);
/* Store ref when it pays (compute_s, the seconds reference() took: see KG_REFCACHE_MIN_S),
 * atomically (temp + rename), then evict the least recently used entries beyond c->limit.
 * *stored says whether it was written. Failures to write are a WARN line, never an error. */
int kg_refcache_store(const kg_refcache *c, const void *ref, double compute_s, bool *stored);

#ifdef __cplusplus
}
#endif
#endif
