/* Preflight internals: the resource baseline (baselines/resources.json) and the spill allowlist
 * (baselines/spill_allowlist.json). Formats: docs/production-ci.md, "Resource preflight". */
#ifndef KG_PREFLIGHT_H
#define KG_PREFLIGHT_H

#include <stddef.h>
#include "core/kg_core.h"

#ifdef __cplusplus
extern "C" {
#endif

#define KG_RESOURCES_VERSION 1
#define KG_ALLOWLIST_VERSION 1

/* The gate's options (its kg_opt table is in preflight.c). */
typedef struct {
    const char *baseline;  /* --baseline FILE */
    const char *allowlist; /* --allowlist FILE */
    bool force_static;     /* --static */
    bool update_baseline;  /* --update-baseline (`kgate preflight` only) */
} kg_preflight_opts;
#define KG_PREFLIGHT_OPTS_INIT                                                               \
    {                                                                                        \
        .baseline = NULL, .allowlist = NULL, .force_static = false, .update_baseline = false \
    }

/* One baseline entry, keyed by (kernel, arch, block_threads, dynamic_smem). */
typedef struct {
    char *kernel; /* source-level name, as in kg_kernel_ref.name */
    int arch;     /* 90 */
    int block_threads;
    long long dynamic_smem;
    int registers;
    int blocks_per_sm;
    int local_bytes;
    int static_smem;
} kg_res_entry;

typedef struct {
    kg_res_entry *e;
    size_t n, cap;
} kg_res_baseline;

/* One allowlisted spiller, keyed by (kernel, arch). */
typedef struct {
    char *kernel;
    int arch;
    int local_bytes; /* the exact expected per-thread local memory */
    char *reason;
} kg_spill_entry;

typedef struct {
    kg_spill_entry *e;
    size_t n;
} kg_spill_allowlist;

/* Strict loads: a missing file is KG_ENOTFOUND; anything malformed (JSON, version, unknown or
 * missing key, wrong type, out-of-range value, duplicate key) is KG_EPARSE naming the file and
 * the entry. */
int kg_res_baseline_load(kg_res_baseline *b, const char *path);
int kg_res_baseline_parse(kg_res_baseline *b, const char *text, const char *name);
void kg_res_baseline_free(kg_res_baseline *b);
const kg_res_entry *kg_res_baseline_find(const kg_res_baseline *b, const char *kernel, int arch,
                                         int block_threads, long long dynamic_smem);
/* Insert or replace (copies the kernel name). */
int kg_res_baseline_put(kg_res_baseline *b, const kg_res_entry *e);
/* Canonical text (sorted by key) written atomically. */
int kg_res_baseline_save(const kg_res_baseline *b, const char *path);

int kg_spill_allowlist_load(kg_spill_allowlist *a, const char *path);
int kg_spill_allowlist_parse(kg_spill_allowlist *a, const char *text, const char *name);
void kg_spill_allowlist_free(kg_spill_allowlist *a);
const kg_spill_entry *kg_spill_allowlist_find(const kg_spill_allowlist *a, const char *kernel,
                                              int arch);

/* "sm_90" -> 90; KG_EPARSE otherwise. */
int kg_arch_parse(const char *s, int *arch);

#ifdef __cplusplus
}
#endif
#endif
