/* The launch-configuration check: every observed launch of a kernel the case declares
 * (kg_case_desc.kernels) must use a block size and dynamic shared memory one of that kernel's
 * declarations states, since the preflight's occupancy and the bench's roofline are computed
 * from the declaration. The CUPTI watch records what was launched (kg_cw_launch); the case's
 * kernels are resolved to the handles a launch can carry before the observation. */
#ifndef KG_HP_LAUNCH_CONFIG_H
#define KG_HP_LAUNCH_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include "hotpath/cupti_watch.h"
#include "kgate/kgate.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A declaration and the handles of its kernel: the host stub (cudaLaunchKernel), the
 * cudaKernel_t (CUDA 13's <<<>>>), the CUfunction (driver launches); NULL where the lookup
 * failed (resolved = false: that declaration cannot be matched, a note). */
#define KG_HP_LC_HANDLES 3
typedef struct {
    const char *name;
    const void *handle[KG_HP_LC_HANDLES];
    unsigned threads;
    size_t smem;
    bool resolved;
} kg_hp_lc_decl;

/* One observed configuration of a declared kernel. */
typedef struct {
    int decl; /* its first declaration (index into the case's kernels) */
    unsigned threads;
    size_t smem;
    unsigned long count;
    bool match; /* some declaration of that kernel states this configuration */
} kg_hp_lc_row;

#define KG_HP_LC_MAX_ROWS KG_CW_MAX_LAUNCHES
typedef struct {
    bool done;
    kg_hp_lc_row rows[KG_HP_LC_MAX_ROWS];
    size_t n_rows;
    unsigned long undeclared; /* launches of kernels the case does not declare (cuBLAS) */
    unsigned long dropped;    /* launches past the watch's table: not judged */
    int mismatched;           /* rows with no matching declaration */
    char fail[512];           /* "kernel 'X' launched with ...; kernels[] declares ..." */
    char note[256];           /* unresolvable declarations, declared kernels not launched */
    bool pass;
} kg_hp_launch_config;

/* Pure: decide the observed launches `obs` against the declarations. */
void kg_hp_launch_config_decide(const kg_hp_lc_decl *decls, size_t n, const kg_cw_launch *obs,
                                size_t m, kg_hp_launch_config *out);
/* The handles of a declared kernel (cudaGetKernel, cudaGetFuncBySymbol); a failed lookup leaves
 * it unresolved (no error: the decision notes it). Never under observation. */
void kg_hp_lc_resolve(kg_hp_lc_decl *out, const kg_kernel_ref *k);

#ifdef __cplusplus
}
#endif
#endif
