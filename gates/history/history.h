/* A mark's history along the marks file's git history (`kgate marks history`): one point per
 * change of the mark, drawn as SVG (one chart per series, device class x metric: the mark as a
 * step line, its noise band shaded, the setting run's CI as a bar, who moved it under each
 * point), or as an HTML page with the same SVG and a table of the points. */
#ifndef KG_MARKS_HISTORY_H
#define KG_MARKS_HISTORY_H

#include <stddef.h>
#include "git/git.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
    const char *case_id;    /* required */
    const char *device;     /* NULL: every device class */
    const char *metric;     /* NULL: every metric */
    const char *marks_path; /* NULL: KG_MARKS_DEFAULT_PATH in the repository of the cwd */
    const char *marks_ref;  /* walk from this ref (NULL: the local marks branch, else HEAD) */
    const char *rev;        /* ... or from this revision */
    const char *out;        /* FILE.svg or FILE.html */
} kg_marks_history_opts;

#define KG_MARKS_HISTORY_OPTS_INIT                                                              \
    {                                                                                           \
        .case_id = NULL, .device = NULL, .metric = NULL, .marks_path = NULL, .marks_ref = NULL, \
        .rev = NULL, .out = NULL                                                                \
    }

typedef struct {
    size_t points; /* points drawn, over every series */
    size_t series;
} kg_marks_history_result;

/* Check `out` (a .svg or .html name, writable) before any work, walk the history, draw, and
 * write `out` atomically. KG_ENOTFOUND when the mark has no point in the history. */
int kg_marks_history(kg_marks_history_result *res, const kg_marks_history_opts *o);

/* The repository holding the marks file and the file's path relative to its work tree
 * (`marks_path` NULL: KG_MARKS_DEFAULT_PATH of the repository of the cwd). Also `marks diff`. */
int kg_marks_repo_open(kg_git **g, char **rel, const char *marks_path);

#ifdef __cplusplus
}
#endif
#endif
