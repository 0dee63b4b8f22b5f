/* Commit statuses from a kgate report (status.c): one status per gate, context "kgate/<gate>",
 * to GitHub or GitLab, detected from the CI environment, with the token from the environment.
 * The command `kgate status` (runners/cli/status.c) parses the flags into kg_status_opts. */
#ifndef KG_REPORT_STATUS_H
#define KG_REPORT_STATUS_H

#include <stdbool.h>
#include "core/kg_core.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
    KG_STATUS_PLATFORM_AUTO = 0, /* GITHUB_ACTIONS or GITLAB_CI from the environment */
    KG_STATUS_PLATFORM_GITHUB,
    KG_STATUS_PLATFORM_GITLAB
} kg_status_platform;

typedef struct {
    const char *report_path;    /* named in messages */
    const char *target_url;     /* NULL: the CI run or job page */
    const char *context_suffix; /* "h200/gpu1": one context per GPU of a fleet */
    bool dry_run;               /* print the requests (token redacted), send nothing */
    bool verbose;
    kg_status_platform plat;
    double timeout_s, connect_timeout_s; /* per request attempt */
    int retries;                         /* on 429, 5xx and network errors, with backoff */
} kg_status_opts;

#define KG_STATUS_OPTS_INIT                                                                \
    {                                                                                      \
        .report_path = NULL, .target_url = NULL, .context_suffix = NULL, .dry_run = false, \
        .verbose = false, .plat = KG_STATUS_PLATFORM_AUTO, .timeout_s = 30.0,              \
        .connect_timeout_s = 10.0, .retries = 3                                            \
    }

/* Post one status per gate of `report` (a loaded kgate report). KG_EINVAL for a bad
 * environment or an empty report, KG_EHTTP for a failed request (401/403/404 explained). */
int kg_status_post(const cJSON *report, const kg_status_opts *o);

/* An http(s) URL, as the API and --target-url must be. */
bool kg_status_url_ok(const char *url);

#ifdef __cplusplus
}
#endif
#endif
