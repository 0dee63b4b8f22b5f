/* The preflight gate's internals: one row per kernel and architecture (preflight_rows.c
 * measures and judges them), shared by the gate (preflight.c) and its printer
 * (preflight_figures.c). */
#ifndef KG_PREFLIGHT_ROWS_H
#define KG_PREFLIGHT_ROWS_H

#include "gate.h"
#include "preflight/cubin.h"
#include "preflight/occupancy.h"
#include "preflight/preflight.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
    const char *case_id; /* borrowed from the case descriptor (static) */
    const char *kernel;
    char symbol[512];
    int arch;
    bool runtime;
    int regs, local_bytes, static_smem, const_bytes, max_threads, ptx_version, binary_version;
    int block_threads;
    size_t dynamic_smem;
    kg_occupancy occ;  /* our calculator (static path; cross-check on the runtime path) */
    int blocks_per_sm; /* what the verdict uses: runtime API or the calculator */
    bool over_bounds;  /* block_threads > max_threads: the launch itself fails */
    kg_verdict v;
    char reasons[768];
    const kg_res_entry *base; /* valid while the gate runs (judge, --update-baseline) */
    const kg_spill_entry *allow;
    bool has_base, has_allow; /* value copies for the report, valid after the gate ended */
    int base_regs, base_blocks, allow_local;
    /* runtime rows: the static row of the same symbol and arch, if any */
    bool have_static;
    int s_regs, s_local, s_smem, s_blocks;
    bool agree;
} kg_pf_row;

typedef struct {
    kg_res_baseline base;
    kg_spill_allowlist allow;
    const char *base_path, *allow_path;
    bool base_missing;
    kg_cubin_set *cubins;
    kg_pf_row *rows; /* every row of the run (--update-baseline) */
    size_t n, cap;
    bool force_static, update_baseline;
} kg_pf_state;

/* The preflight figures of one case: its rows (owned). */
typedef struct {
    const char *path; /* "runtime" or "static" */
    kg_pf_row *rows;
    size_t n;
} kg_preflight_result;

/* Fill r (case_id, kernel, block_threads, dynamic_smem set) on the static path for `arch` or
 * the runtime path on `dev`, and judge it. A row that could not be evaluated is ERROR in the
 * row (returns 0); only running out of memory is returned. */
int kg_pf_static_row(kg_pf_state *st, kg_pf_row *r, const kg_kernel_ref *k, int arch);
int kg_pf_runtime_row(kg_pf_state *st, kg_pf_row *r, const kg_kernel_ref *k,
                      const kg_device_info *dev);

/* preflight_figures.c */
cJSON *kg_pf_figures(const kg_case_desc *d, const kg_case_result *res);
#define KG_PF_N_COLUMNS 2
extern const kg_gate_column kg_pf_columns[KG_PF_N_COLUMNS];

#ifdef __cplusplus
}
#endif
#endif
