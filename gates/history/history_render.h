/* `kgate history render`: the run history branch (run_history.h) drawn as trend charts
 * (trend.h): one SVG per (case, metric) and one index.html holding them all, with a table of
 * each device class's latest run; lowerings from the marks branch's log. */
#ifndef KG_HISTORY_RENDER_H
#define KG_HISTORY_RENDER_H

#include <stddef.h>
#include "history/run_history.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
    const char *repo_dir;   /* NULL: the repository of the cwd */
    const char *branch;     /* the history: a branch or any rev (NULL: $KGATE_HISTORY_BRANCH,
                               * else kgate-history; origin/kgate-history works too) */
    const char *marks_ref;  /* lowerings from this ref's marks log (NULL: the local marks
                               * branch when it exists) */
    const char *out_dir;    /* created when absent (its parent must exist) */
    const char *case_regex; /* POSIX extended regular expression over case ids, or NULL */
    const char *device;     /* one device class, or NULL */
} kg_history_render_opts;

typedef struct {
    size_t records, charts;
} kg_history_render_result;

int kg_history_render(kg_history_render_result *res, const kg_history_render_opts *o);

#ifdef __cplusplus
}
#endif
#endif
