/* The hot-path gate's options and typed result: measured by hotpath.c, turned into report
 * figures and table cells by hotpath_figures.c. */
#ifndef KG_HOTPATH_H
#define KG_HOTPATH_H

#include <stdbool.h>
#include <stddef.h>
#include "gate.h"
#include "hotpath/cupti_watch.h"
#include "hotpath/um_counters.h"
#include "hotpath/launch_config.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
    int runs; /* determinism runs per case (--runs, at least 10) */
} kg_hotpath_opts;
#define KG_HOTPATH_OPTS_INIT \
    {                        \
        .runs = 10           \
    }

typedef struct {
    bool done;
    int runs, mismatched, first_run; /* first_run: 1-based, 0 = none differed */
    size_t first_byte;
    bool vacuous; /* equal runs, but every compared element still poison */
    bool pass;
} kg_hp_determinism;

typedef struct {
    bool done;
    int observed_launches;
    unsigned long api_calls;
    kg_cw_violation *v; /* copies of the watch's records (owned), then the um-migration
                           * row when the UM counters saw any */
    size_t n;
    kg_um_counts um; /* unified-memory counters over the observed launches */
    bool pass;
} kg_hp_calls;

typedef struct {
    bool done, checked;
    int max_batch, failed_batch; /* failed_batch 0 = none */
    size_t row_bytes, failed_row;
    bool vacuous; /* a batch equal to the full one, but all poison */
    bool pass;
} kg_hp_batch;

typedef struct {
    bool done;
    const char *stage; /* "ok", "capture", "instantiate", "replay", "compare" */
    char cuda_error[64];
    char detail[512];
    int replays;
    bool vacuous; /* a replay equal to the eager output, but all poison */
    bool pass;
} kg_hp_graph;

typedef struct {
    kg_hp_determinism det;
    kg_hp_calls calls;
    kg_hp_batch batch;
    kg_hp_graph graph;
    kg_hp_launch_config lc; /* the observed launches' configurations vs kernels[] */
} kg_hotpath_result;

void kg_hotpath_result_free(void *r);
/* hotpath_figures.c: the report figures, the table's cells and the failure detail. */
cJSON *kg_hotpath_figures(const kg_case_desc *d, const kg_case_result *res);
void kg_hotpath_detail(FILE *out, const kg_case_desc *d, const kg_case_result *res);
#define KG_HOTPATH_N_COLUMNS 6
extern const kg_gate_column kg_hotpath_columns[KG_HOTPATH_N_COLUMNS];

#ifdef __cplusplus
}
#endif
#endif
