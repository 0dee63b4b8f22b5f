/* High-water marks (baselines/high_water.json): the versioned format, strict loading, canonical
 * saving, and the per-mark operations the bench gate and the production pipeline share.
 * The format is documented in baselines/high_water.schema.json and docs/production-ci.md. */
#ifndef KG_MARKS_H
#define KG_MARKS_H

#include <stdbool.h>
#include <stddef.h>
#include "core/kg_core.h"
#include "core/mark.h"

#ifdef __cplusplus
extern "C" {
#endif

#define KG_MARKS_VERSION 1
/* The longest power_state label a mark may carry (kg_power_label writes at most 63 bytes). */
#define KG_MARK_MAX_STATE 63

typedef struct kg_marks kg_marks;

int kg_marks_new(kg_marks **out);
/* Load and validate everything (version, types, ranges, NaN/negative values, duplicate keys).
 * Errors are KG_EPARSE (or KG_EIO/KG_ENOTFOUND) with a message naming `name` and the entry. */
int kg_marks_load(kg_marks **out, const char *path);
int kg_marks_parse(kg_marks **out, const char *text, const char *name);
/* The one validation of a mark (loading, kg_marks_put, saving and committing all use it):
 * every string non-empty, at most 1 KiB, without control characters; metric [a-z0-9_]+, a time
 * lower_is_better; finite positive numbers, band_rel in [0, 0.999], ci_lo <= run_median <=
 * ci_hi, samples in [1, 2e9], an ISO 8601 UTC date; optional k in [1, KG_MARK_MAX_K] and
 * power_state [a-z0-9_:+.-]{1,63}. KG_EPARSE naming `name` (NULL: "(marks)"),
 * the mark and the field. */
int kg_mark_validate(const kg_mark *mk, const char *name);
/* Canonical text (sorted by key, stable formatting) so diffs are minimal; caller frees. */
int kg_marks_serialize(char **out, const kg_marks *m);
/* Atomic save: temp file, fsync, rename. */
int kg_marks_save(const kg_marks *m, const char *path);
void kg_marks_free(kg_marks *m);

size_t kg_marks_count(const kg_marks *m);
const kg_mark *kg_marks_at(const kg_marks *m, size_t i);
const kg_mark *kg_marks_find(const kg_marks *m, const char *device_class, const char *case_id,
                             const char *metric);
/* Insert or replace (deep copy of mk's strings). */
int kg_marks_put(kg_marks *m, const kg_mark *mk);
int kg_marks_remove(kg_marks *m, const char *device_class, const char *case_id, const char *metric);
/* The marks file to use: `given` (--marks), else $KGATE_MARKS (set by runners built with
 * kgate_add_runner(... MARKS file)), else NULL (the command's own default). */
const char *kg_marks_path_default(const char *given);
/* True when `cand` is strictly better than `cur` by its direction. */
bool kg_mark_better(const kg_mark *cand, const kg_mark *cur);
/* Merge one run's mark (runs == 1) into the mark of the same key (inserted when absent): the
 * envelope [env_lo, env_hi] of per-process medians grows, value becomes its centre, ci_lo/ci_hi
 * the union of the runs' intervals, and band_rel = max(run CI half-widths, (r+1)/(r-1) times
 * the envelope half-width over r runs) so the band covers the spread seen across processes.
 * k and power_state: the mark's are kept (the run's fill them in when the mark has none); a run
 * of another k or another known power state is refused with KG_ECONFLICT (nothing changes). */
int kg_marks_merge(kg_marks *m, const kg_mark *run);
/* Release the strings of a kg_mark filled by a caller-side copy (not one owned by kg_marks). */
void kg_mark_clear(kg_mark *mk);

#ifdef __cplusplus
}
#endif
#endif
