/* The selftest's engine: every gate of the table over the defect runner (and this runner's
 * clean cases) as child processes, the observed verdicts judged against the catalogue's
 * expectations, the detection matrix. `kgate selftest` and `kgate run` call it. */
#ifndef KG_SELFTEST_H
#define KG_SELFTEST_H

#include <stdbool.h>
#include <stddef.h>
#include "driver/driver.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Selftest: every gate over the defect runner and this runner's clean cases (selftest.c). */
int kg_selftest_defects_path(char *buf, size_t n, const char *given);
/* with_clean: also run every gate over this runner's clean cases (false alarms). `run` passes
 * false: its own gates run over the same clean cases right after, and a FAIL there blocks too. */
int kg_selftest_run(kg_report *rep, const char *defects_exe, const kg_common_opts *o,
                    const char *keep_dir, bool with_clean, int *exit_code);

#ifdef __cplusplus
}
#endif
#endif
