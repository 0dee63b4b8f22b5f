/* One PR/MR comment per pipeline (comment.c): the regressions, failures, errors and faults of
 * every report given (one per GPU of the matrix) in one Markdown body, created or updated in
 * place on GitHub (issues comments API) or GitLab (merge request notes API). The body carries
 * the hidden marker KG_COMMENT_MARKER, by which the next run finds the comment to update.
 * `kgate ab` reports (command "ab") add the A/B table, and make the marks' regressions of the
 * other reports informational (a pull request's bench verdict is its A/B); every report adds
 * its rows to the collapsed table of every case's change.
 * The command `kgate comment` (runners/cli/comment.c) parses the flags into kg_comment_opts. */
#ifndef KG_REPORT_COMMENT_H
#define KG_REPORT_COMMENT_H

#include <stdbool.h>
#include <stddef.h>
#include "core/kg_core.h"
#include "report/export.h"
#include "report/status.h"

#ifdef __cplusplus
extern "C" {
#endif

#define KG_COMMENT_MARKER "<!-- kgate-comment -->"

typedef struct {
    const char *const *report_paths; /* named in the body's footer and in messages */
    size_t n_reports;
    const char *report_url;         /* the HTML report's link; NULL: the CI run or job page */
    const char *const *report_urls; /* or each report's own link (n_reports entries, NULL
                                       * for none): the GPU's outputs (artifact, job artifacts) */
    bool dry_run;                   /* print the body and the requests (token redacted) */
    bool verbose;
    kg_status_platform plat;
    double timeout_s, connect_timeout_s; /* per request attempt */
    int retries;
} kg_comment_opts;

#define KG_COMMENT_OPTS_INIT                                                                    \
    {                                                                                           \
        .report_paths = NULL, .n_reports = 0, .report_url = NULL, .report_urls = NULL,          \
        .dry_run = false, .verbose = false, .plat = KG_STATUS_PLATFORM_AUTO, .timeout_s = 30.0, \
        .connect_timeout_s = 10.0, .retries = 3                                                 \
    }

/* The comment's Markdown (marker first) from `n` loaded reports into *out. */
int kg_comment_body(kg_sbuf *out, const cJSON *const *reports, size_t n, const kg_comment_opts *o);

/* Create or update the one kgate comment of the PR/MR from the environment. KG_EINVAL for a
 * bad environment (no PR/MR number, no token), KG_EHTTP for a failed request. */
int kg_comment_post(const cJSON *const *reports, size_t n, const kg_comment_opts *o);

#ifdef __cplusplus
}
#endif
#endif
