/* Preflight rows: the figures of one kernel on one architecture, from the runtime (GPU) or
 * the static path (cubins in the binary + the occupancy calculator), and the rules that judge
 * them, identical on both paths. */
#include <cuda.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include "preflight/preflight_rows.h"

/* cuFuncGetName (driver API, CUDA >= 12.3) is fetched through the runtime's entry-point query:
 * linking libcuda directly would stop the binary from even starting on a CI machine without
 * a driver, where the static path must run. */
typedef CUresult (*pf_cuFuncGetName)(const char **name, CUfunction hfunc);

static int pfr_func_name(const char **out, cudaFunction_t fn)
{
    int rc = 0;
    void *p = NULL;
    enum cudaDriverEntryPointQueryResult q = cudaDriverEntryPointSymbolNotFound;
    *out = NULL;
    KG_CUDA_CHECK(
        cudaGetDriverEntryPointByVersion("cuFuncGetName", &p, 12030, cudaEnableDefault, &q));
    if (q != cudaDriverEntryPointSuccess || !p) {
        rc = KG_ERR(KG_ECUDA, "cuFuncGetName is not available from this driver (needs CUDA "
                              ">= 12.3)");
        goto cleanup;
    }
    CUresult r = ((pf_cuFuncGetName)p)(out, (CUfunction)fn);
    if (r != CUDA_SUCCESS) {
        rc = KG_ERR(KG_ECUDA, "cuFuncGetName failed: CUresult %d", (int)r);
        goto cleanup;
    }
cleanup:
    return rc;
}

static void pfr_reason(kg_pf_row *r, kg_verdict v, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void pfr_reason(kg_pf_row *r, kg_verdict v, const char *fmt, ...)
{
    static const int rank[] = { [KG_VERDICT_PASS] = 0,
                                [KG_VERDICT_WARN] = 1,
                                [KG_VERDICT_SKIP] = 1,
                                [KG_VERDICT_ERROR] = 2,
                                [KG_VERDICT_FAIL] = 3 };
    size_t used = strlen(r->reasons);
    va_list ap;
    if (rank[v] > rank[r->v])
        r->v = v;
    if (used && used + 2 < sizeof r->reasons) {
        memcpy(r->reasons + used, "; ", 3);
        used += 2;
    }
    va_start(ap, fmt);
    vsnprintf(r->reasons + used, sizeof r->reasons - used, fmt, ap);
    va_end(ap);
}

/* The rules, identical on both paths. occ_known is false for a static row of an architecture
 * without occupancy limits: local memory and launch bounds are still judged, blocks/SM and the
 * baseline are not (a warning names the architecture; never an error that fails the run). */
static void pfr_judge(kg_pf_state *st, kg_pf_row *r, bool occ_known)
{
    r->allow = kg_spill_allowlist_find(&st->allow, r->kernel, r->arch);
    r->base = kg_res_baseline_find(&st->base, r->kernel, r->arch, r->block_threads,
                                   (long long)r->dynamic_smem);
    if (r->local_bytes > 0 && !r->allow)
        pfr_reason(r, KG_VERDICT_FAIL,
                   "local memory: %d B/thread (spills or a dynamically "
                   "indexed local array); not on the spill allowlist %s",
                   r->local_bytes, st->allow_path);
    else if (r->allow && r->local_bytes != r->allow->local_bytes)
        pfr_reason(r, KG_VERDICT_FAIL,
                   "local memory changed: %d B/thread, the spill allowlist "
                   "says %d B: update %s (or fix the kernel)",
                   r->local_bytes, r->allow->local_bytes, st->allow_path);
    /* The kernel's own limit (__launch_bounds__, maxThreadsPerBlock) holds on every
     * architecture: a larger block is a launch error, never a baseline question. */
    if (r->over_bounds)
        pfr_reason(r, KG_VERDICT_FAIL,
                   "launch bounds exceeded: %d threads/block launched, "
                   "the kernel allows %d (__launch_bounds__ / maxThreadsPerBlock): the launch "
                   "fails",
                   r->block_threads, r->max_threads);
    /* On the device a block that cannot launch fails. A cubin for another architecture may
     * hold a stub the case never launches there (arch-specific code behind a run-time
     * dispatch): a warning until the baseline records it with 0 blocks/SM (reviewed), a
     * failure when the baseline recorded it launching (below: a drop). */
    else if (occ_known && r->blocks_per_sm == 0 &&
             (r->runtime || !r->base || r->base->blocks_per_sm != 0))
        pfr_reason(r, r->runtime ? KG_VERDICT_FAIL : KG_VERDICT_WARN, "%s",
                   r->runtime ? "cannot launch on this device"
                              : "does not fit this architecture (fine only if the case never "
                                "launches it there)");
    if (!occ_known) {
        pfr_reason(r, KG_VERDICT_WARN, "sm_%d: no occupancy limits known; occupancy not judged",
                   r->arch);
    } else if (!r->base && !r->over_bounds) {
        pfr_reason(r, KG_VERDICT_WARN,
                   "not in the resource baseline %s: record it with "
                   "`kgate preflight --update-baseline`",
                   st->base_path);
    } else if (r->base && r->blocks_per_sm < r->base->blocks_per_sm) {
        pfr_reason(r, KG_VERDICT_FAIL, "blocks/SM dropped %d -> %d (%s)", r->base->blocks_per_sm,
                   r->blocks_per_sm, r->occ.words);
    } else if (r->base && r->regs > r->base->registers) {
        pfr_reason(r, KG_VERDICT_WARN,
                   "registers %d -> %d/thread, same occupancy step (%d "
                   "blocks/SM); %d register(s) of headroom left",
                   r->base->registers, r->regs, r->blocks_per_sm,
                   r->occ.reg_headroom < 0 ? 255 : r->occ.reg_headroom);
    }
    if (r->runtime && r->have_static && !r->agree)
        pfr_reason(r, KG_VERDICT_WARN,
                   "static and runtime paths disagree: static regs %d, "
                   "local %d B, smem %d B, %d blocks/SM",
                   r->s_regs, r->s_local, r->s_smem, r->s_blocks);
    r->has_base = r->base != NULL;
    r->base_regs = r->base ? r->base->registers : 0;
    r->base_blocks = r->base ? r->base->blocks_per_sm : 0;
    r->has_allow = r->allow != NULL;
    r->allow_local = r->allow ? r->allow->local_bytes : 0;
}

/* __launch_bounds__ forbids this block size: nothing is resident, on either path. */
static void pfr_over_bounds(kg_pf_row *r, int block_threads)
{
    r->over_bounds = true;
    r->blocks_per_sm = 0;
    r->occ.blocks_per_sm = 0;
    r->occ.active_warps = 0;
    r->occ.occupancy = 0.0;
    snprintf(r->occ.words, sizeof r->occ.words,
             "cannot launch: %d threads/block exceed the "
             "kernel's limit of %d",
             block_threads, r->max_threads);
}

int kg_pf_static_row(kg_pf_state *st, kg_pf_row *r, const kg_kernel_ref *k, int arch)
{
    int rc = 0;
    kg_arch_limits lim;
    const kg_cubin_kernel *ck = NULL;
    r->arch = arch;
    rc = kg_cubin_find_name(&ck, st->cubins, k->name, arch);
    if (rc < 0) {
        r->v = KG_VERDICT_ERROR;
        snprintf(r->reasons, sizeof r->reasons, "%s%s", kg_error_last(),
                 st->cubins->compressed_elf ? " (some cubins are compressed and could not be "
                                              "read: no libzstd.so.1, or the old LZ4 format; "
                                              "build with nvcc --compress-mode=none)"
                                            : "");
        return rc == KG_ENOMEM ? rc : 0;
    }
    snprintf(r->symbol, sizeof r->symbol, "%s", ck->symbol);
    r->regs = ck->regs;
    r->local_bytes = ck->local_bytes;
    r->static_smem = ck->static_smem;
    r->const_bytes = ck->const_bytes;
    r->max_threads = ck->max_threads ? ck->max_threads : 1024;
    r->binary_version = arch;
    /* An architecture newer (or older) than the table: a warning, not an error. blocks/SM stays
     * 0 (what a baseline file can hold); the words say it was not judged. */
    bool known = kg_arch_limits_get(&lim, arch) == 0;
    if (known) {
        KG_TRY(kg_occupancy_calc(&r->occ, &lim, k->block_threads, r->regs, (size_t)r->static_smem,
                                 k->dynamic_smem));
    } else {
        memset(&r->occ, 0, sizeof r->occ);
        snprintf(r->occ.words, sizeof r->occ.words,
                 "sm_%d: no occupancy limits known; "
                 "occupancy not judged",
                 arch);
    }
    r->blocks_per_sm = r->occ.blocks_per_sm;
    if (k->block_threads > r->max_threads)
        pfr_over_bounds(r, k->block_threads);
    pfr_judge(st, r, known);
cleanup:
    return rc;
}

int kg_pf_runtime_row(kg_pf_state *st, kg_pf_row *r, const kg_kernel_ref *k,
                      const kg_device_info *dev)
{
    int rc = 0, blocks = 0;
    struct cudaFuncAttributes a;
    cudaFunction_t fn = NULL;
    const char *mangled = NULL;
    kg_arch_limits lim;
    r->runtime = true;
    r->arch = dev->cc_major * 10 + dev->cc_minor;
    KG_CUDA_CHECK(cudaFuncGetAttributes(&a, k->func));
    /* A case launching with more than the default 48 KiB of dynamic shared memory opts in at
     * setup, which the preflight does not run: opt in here too (as the static path assumes),
     * or the occupancy query would say 0 blocks. Beyond the device's limit it stays 0. */
    if (k->dynamic_smem > (size_t)a.maxDynamicSharedSizeBytes &&
        cudaFuncSetAttribute(k->func, cudaFuncAttributeMaxDynamicSharedMemorySize,
                             (int)k->dynamic_smem) != cudaSuccess)
        (void)cudaGetLastError();
    /* Beyond maxThreadsPerBlock the occupancy query has no answer to give: the row fails on
     * the limit itself (pfr_over_bounds below). */
    if (k->block_threads <= a.maxThreadsPerBlock)
        KG_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, k->func,
                                                                    k->block_threads,
                                                                    k->dynamic_smem));
    KG_CUDA_CHECK(cudaGetFuncBySymbol(&fn, k->func));
    KG_TRY(pfr_func_name(&mangled, fn));
    snprintf(r->symbol, sizeof r->symbol, "%s", mangled ? mangled : "");
    r->regs = a.numRegs;
    r->local_bytes = (int)a.localSizeBytes;
    r->static_smem = (int)a.sharedSizeBytes;
    r->const_bytes = (int)a.constSizeBytes;
    r->max_threads = a.maxThreadsPerBlock;
    r->ptx_version = a.ptxVersion;
    r->binary_version = a.binaryVersion;
    r->blocks_per_sm = blocks;
    if (kg_arch_limits_get(&lim, r->arch) == 0) {
        /* The device's own figures override the table (they are what the runtime used). */
        lim.max_threads_sm = dev->max_threads_per_sm;
        lim.max_blocks_sm = dev->max_blocks_per_sm;
        lim.regs_sm = dev->regs_per_sm;
        lim.smem_sm = dev->max_smem_per_sm;
        KG_TRY(kg_occupancy_calc(&r->occ, &lim, k->block_threads, r->regs, (size_t)r->static_smem,
                                 k->dynamic_smem));
    } else {
        snprintf(r->occ.words, sizeof r->occ.words,
                 "%d blocks/SM (sm_%d not in the "
                 "calculator's table: no limiter analysis)",
                 blocks, r->arch);
    }
    if (k->block_threads > r->max_threads)
        pfr_over_bounds(r, k->block_threads);
    const kg_cubin_kernel *ck = st->cubins && mangled
                                    ? kg_cubin_find_symbol(st->cubins, mangled, r->arch)
                                    : NULL;
    if (ck) {
        kg_occupancy so;
        r->have_static = true;
        r->s_regs = ck->regs;
        r->s_local = ck->local_bytes;
        r->s_smem = ck->static_smem;
        r->s_blocks = -1;
        if (kg_arch_limits_get(&lim, r->arch) == 0 &&
            kg_occupancy_calc(&so, &lim, k->block_threads, ck->regs, (size_t)ck->static_smem,
                              k->dynamic_smem) == 0)
            r->s_blocks = so.blocks_per_sm;
        if (k->block_threads > (ck->max_threads ? ck->max_threads : 1024))
            r->s_blocks = 0; /* as the static row says */
        /* Without the table's limits the static path has no blocks/SM to compare (-1). */
        r->agree = r->s_regs == r->regs && r->s_local == r->local_bytes &&
                   r->s_smem == r->static_smem &&
                   (r->s_blocks < 0 || r->s_blocks == r->blocks_per_sm);
    }
    pfr_judge(st, r, true);
cleanup:
    if (rc < 0 && rc != KG_ENOMEM) {
        r->v = KG_VERDICT_ERROR;
        snprintf(r->reasons, sizeof r->reasons, "%s", kg_error_last());
        (void)cudaGetLastError();
        rc = 0;
    }
    return rc;
}
