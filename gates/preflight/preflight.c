/* Resource preflight gate: registers, local memory (spills, local arrays), shared memory and
 * theoretical occupancy of every __global__ a selected case launches, judged against the spill
 * allowlist and the resource baseline before any timing runs.
 *
 * Two paths. Runtime (GPU): cudaFuncGetAttributes + cudaOccupancyMaxActiveBlocksPerMultiprocessor
 * for the device's architecture. Static (no GPU, or --static): the cubins embedded in this
 * executable (cubin.c) and the occupancy calculator (occupancy.c), for every architecture the
 * binary carries. On a GPU both run and the report says whether they agree. */
#include <cuda.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "preflight/cubin.h"
#include "core/kg_core.h"
#include "preflight/occupancy.h"
#include "preflight/preflight.h"

#define DEFAULT_BASELINE "baselines/resources.json"
#define DEFAULT_ALLOWLIST "baselines/spill_allowlist.json"

/* cuFuncGetName (driver API, CUDA >= 12.3) is fetched through the runtime's entry-point query:
 * linking libcuda directly would stop the binary from even starting on a CI machine without
 * a driver, where the static path must run. */
typedef CUresult (*pf_cuFuncGetName)(const char **name, CUfunction hfunc);

static int cu_func_name(const char **out, cudaFunction_t fn)
{
    int rc = 0;
    void *p = NULL;
    enum cudaDriverEntryPointQueryResult q = cudaDriverEntryPointSymbolNotFound;
    *out = NULL;
    KG_CUDA_CHECK(cudaGetDriverEntryPointByVersion("cuFuncGetName", &p, 12030, cudaEnableDefault,
                                                   &q));
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

typedef struct {
    const char *case_id;
    const char *kernel;
    char symbol[512];
    int arch;
    bool runtime;
    int regs, local_bytes, static_smem, const_bytes, max_threads, ptx_version, binary_version;
    int block_threads;
    size_t dynamic_smem;
    kg_occupancy occ;         /* our calculator (static path; cross-check on the runtime path) */
    int blocks_per_sm;        /* what the verdict uses: runtime API or the calculator */
    kg_verdict v;
    char reasons[768];
    const kg_res_entry *base;
    const kg_spill_entry *allow;
    /* runtime rows: the static row of the same symbol and arch, if any */
    bool have_static;
    int s_regs, s_local, s_smem, s_blocks;
    bool agree;
} pf_row;

typedef struct {
    kg_res_baseline base;
    kg_spill_allowlist allow;
    const char *base_path, *allow_path;
    bool base_missing;
    kg_cubin_set *cubins;
    pf_row *rows;
    size_t n, cap;
} pf_state;

static struct {
    bool force_static;
    bool update_baseline;
} pf_opts;

static int row_push(pf_state *st, const pf_row *r)
{
    if (st->n == st->cap) {
        size_t cap = st->cap ? st->cap * 2 : 64;
        pf_row *nr = realloc(st->rows, cap * sizeof *nr);
        if (!nr)
            return KG_ERR(KG_ENOMEM, "out of memory for preflight rows");
        st->rows = nr;
        st->cap = cap;
    }
    st->rows[st->n++] = *r;
    return 0;
}

static void add_reason(pf_row *r, kg_verdict v, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void add_reason(pf_row *r, kg_verdict v, const char *fmt, ...)
{
    static const int rank[] = { [KG_VERDICT_PASS] = 0, [KG_VERDICT_WARN] = 1,
                                [KG_VERDICT_SKIP] = 1, [KG_VERDICT_ERROR] = 2,
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

/* The rules, identical on both paths. */
static void judge(pf_state *st, pf_row *r)
{
    r->allow = kg_spill_allowlist_find(&st->allow, r->kernel, r->arch);
    r->base = kg_res_baseline_find(&st->base, r->kernel, r->arch, r->block_threads,
                                   (long long)r->dynamic_smem);
    if (r->local_bytes > 0 && !r->allow)
        add_reason(r, KG_VERDICT_FAIL, "local memory: %d B/thread (spills or a dynamically "
                   "indexed local array); not on the spill allowlist %s", r->local_bytes,
                   st->allow_path);
    else if (r->allow && r->local_bytes != r->allow->local_bytes)
        add_reason(r, KG_VERDICT_FAIL, "local memory changed: %d B/thread, the spill allowlist "
                   "says %d B: update %s (or fix the kernel)", r->local_bytes,
                   r->allow->local_bytes, st->allow_path);
    /* On the device a block that cannot launch fails. A cubin for another architecture may
     * hold a stub the case never launches there (arch-specific code behind a run-time
     * dispatch): a warning until the baseline records it with 0 blocks/SM (reviewed), a
     * failure when the baseline recorded it launching (below: a drop). */
    if (r->blocks_per_sm == 0 && (r->runtime || !r->base || r->base->blocks_per_sm != 0))
        add_reason(r, r->runtime ? KG_VERDICT_FAIL : KG_VERDICT_WARN, "%s",
                   r->runtime ? "cannot launch on this device"
                              : "does not fit this architecture (fine only if the case never "
                                "launches it there)");
    if (!r->base) {
        add_reason(r, KG_VERDICT_WARN, "not in the resource baseline %s: record it with "
                   "`kgate preflight --update-baseline`", st->base_path);
    } else if (r->blocks_per_sm < r->base->blocks_per_sm) {
        add_reason(r, KG_VERDICT_FAIL, "blocks/SM dropped %d -> %d (%s)",
                   r->base->blocks_per_sm, r->blocks_per_sm, r->occ.words);
    } else if (r->regs > r->base->registers) {
        add_reason(r, KG_VERDICT_WARN, "registers %d -> %d/thread, same occupancy step (%d "
                   "blocks/SM); %d register(s) of headroom left", r->base->registers, r->regs,
                   r->blocks_per_sm, r->occ.reg_headroom < 0 ? 255 : r->occ.reg_headroom);
    }
    if (r->runtime && r->have_static && !r->agree)
        add_reason(r, KG_VERDICT_WARN, "static and runtime paths disagree: static regs %d, "
                   "local %d B, smem %d B, %d blocks/SM", r->s_regs, r->s_local, r->s_smem,
                   r->s_blocks);
}

static int static_row(pf_state *st, pf_row *r, const kg_kernel_ref *k, int arch)
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
                                              "build with nvcc --compress-mode=none)" : "");
        return rc == KG_ENOMEM ? rc : 0;
    }
    snprintf(r->symbol, sizeof r->symbol, "%s", ck->symbol);
    r->regs = ck->regs;
    r->local_bytes = ck->local_bytes;
    r->static_smem = ck->static_smem;
    r->const_bytes = ck->const_bytes;
    r->max_threads = ck->max_threads ? ck->max_threads : 1024;
    r->binary_version = arch;
    if (kg_arch_limits_get(&lim, arch) < 0) {
        r->v = KG_VERDICT_ERROR;
        snprintf(r->reasons, sizeof r->reasons, "%s", kg_error_last());
        return 0;
    }
    KG_TRY(kg_occupancy_calc(&r->occ, &lim, k->block_threads, r->regs, (size_t)r->static_smem,
                             k->dynamic_smem));
    r->blocks_per_sm = r->occ.blocks_per_sm;
    if (k->block_threads > r->max_threads) {
        r->blocks_per_sm = 0; /* __launch_bounds__ forbids this block size */
        snprintf(r->occ.words, sizeof r->occ.words, "cannot launch: %d threads/block exceed the "
                 "kernel's __launch_bounds__ of %d", k->block_threads, r->max_threads);
    }
    judge(st, r);
cleanup:
    return rc;
}

static int runtime_row(pf_state *st, pf_row *r, const kg_kernel_ref *k, const kg_device_info *dev)
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
    KG_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, k->func,
                                                                k->block_threads,
                                                                k->dynamic_smem));
    KG_CUDA_CHECK(cudaGetFuncBySymbol(&fn, k->func));
    KG_TRY(cu_func_name(&mangled, fn));
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
        KG_TRY(kg_occupancy_calc(&r->occ, &lim, k->block_threads, r->regs,
                                 (size_t)r->static_smem, k->dynamic_smem));
    } else {
        snprintf(r->occ.words, sizeof r->occ.words, "%d blocks/SM (sm_%d not in the "
                 "calculator's table: no limiter analysis)", blocks, r->arch);
    }
    const kg_cubin_kernel *ck = st->cubins && mangled
                                    ? kg_cubin_find_symbol(st->cubins, mangled, r->arch) : NULL;
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
        r->agree = r->s_regs == r->regs && r->s_local == r->local_bytes &&
                   r->s_smem == r->static_smem && r->s_blocks == r->blocks_per_sm;
    }
    judge(st, r);
cleanup:
    if (rc < 0 && rc != KG_ENOMEM) {
        r->v = KG_VERDICT_ERROR;
        snprintf(r->reasons, sizeof r->reasons, "%s", kg_error_last());
        (void)cudaGetLastError();
        rc = 0;
    }
    return rc;
}

static cJSON *row_json(const pf_row *r)
{
    char arch[16];
    cJSON *o = cJSON_CreateObject();
    if (!o)
        return NULL;
    snprintf(arch, sizeof arch, "sm_%d", r->arch);
    cJSON_AddStringToObject(o, "kernel", r->kernel);
    cJSON_AddStringToObject(o, "symbol", r->symbol);
    cJSON_AddStringToObject(o, "arch", arch);
    cJSON_AddStringToObject(o, "path", r->runtime ? "runtime" : "static");
    cJSON_AddStringToObject(o, "verdict", kg_verdict_name(r->v));
    cJSON_AddStringToObject(o, "reasons", r->reasons);
    if (r->v == KG_VERDICT_ERROR && !r->symbol[0])
        return o;
    cJSON_AddNumberToObject(o, "registers", r->regs);
    cJSON_AddNumberToObject(o, "local_bytes", r->local_bytes);
    cJSON_AddNumberToObject(o, "static_smem", r->static_smem);
    cJSON_AddNumberToObject(o, "const_bytes", r->const_bytes);
    cJSON_AddNumberToObject(o, "max_threads_per_block", r->max_threads);
    if (r->runtime) {
        cJSON_AddNumberToObject(o, "ptx_version", r->ptx_version);
        cJSON_AddNumberToObject(o, "binary_version", r->binary_version);
    }
    cJSON_AddNumberToObject(o, "block_threads", r->block_threads);
    cJSON_AddNumberToObject(o, "dynamic_smem", (double)r->dynamic_smem);
    cJSON_AddNumberToObject(o, "blocks_per_sm", r->blocks_per_sm);
    cJSON_AddNumberToObject(o, "calc_blocks_per_sm", r->occ.blocks_per_sm);
    cJSON_AddNumberToObject(o, "active_warps", r->occ.active_warps);
    cJSON_AddNumberToObject(o, "occupancy", r->occ.occupancy);
    cJSON_AddStringToObject(o, "limiter", kg_limiter_name(r->occ.limiter));
    cJSON_AddStringToObject(o, "limiter_words", r->occ.words);
    cJSON_AddNumberToObject(o, "reg_headroom", r->occ.reg_headroom);
    if (r->base) {
        cJSON *b = cJSON_AddObjectToObject(o, "baseline");
        cJSON_AddNumberToObject(b, "registers", r->base->registers);
        cJSON_AddNumberToObject(b, "blocks_per_sm", r->base->blocks_per_sm);
    } else {
        cJSON_AddNullToObject(o, "baseline");
    }
    if (r->allow)
        cJSON_AddNumberToObject(o, "allowlisted_local_bytes", r->allow->local_bytes);
    if (r->runtime) {
        cJSON *g = cJSON_AddObjectToObject(o, "static_agreement");
        cJSON_AddBoolToObject(g, "static_found", r->have_static);
        if (r->have_static) {
            cJSON_AddBoolToObject(g, "agree", r->agree);
            cJSON_AddNumberToObject(g, "static_registers", r->s_regs);
            cJSON_AddNumberToObject(g, "static_local_bytes", r->s_local);
            cJSON_AddNumberToObject(g, "static_smem", r->s_smem);
            cJSON_AddNumberToObject(g, "static_blocks_per_sm", r->s_blocks);
        }
    }
    return o;
}

static void print_row(const pf_row *r)
{
    char arch[16], occ[16];
    snprintf(arch, sizeof arch, "sm_%d", r->arch);
    snprintf(occ, sizeof occ, "%.0f%%", r->occ.occupancy * 100);
    if (r->v == KG_VERDICT_ERROR && !r->symbol[0]) {
        printf("%-36s %-30s %-6s %-5s %s %s\n", r->case_id, r->kernel, arch,
               r->runtime ? "rt" : "st", kg_verdict_name(r->v), r->reasons);
        return;
    }
    printf("%-36s %-30s %-6s %-3s %4d %6d %7d %3d %5s %-5s %s%s%s\n", r->case_id, r->kernel,
           arch, r->runtime ? "rt" : "st", r->regs, r->local_bytes, r->static_smem,
           r->blocks_per_sm, occ, kg_verdict_name(r->v), r->occ.words,
           r->reasons[0] ? " | " : "", r->reasons);
}

static int load_inputs(pf_state *st, const kg_gate_ctx *ctx)
{
    int rc = 0;
    /* Flag, then environment (e.g. the selftest pointing the defect runner at tests/data/),
     * then the default in the working directory. */
    const char *env_base = getenv("KGATE_RESOURCE_BASELINE");
    const char *env_allow = getenv("KGATE_SPILL_ALLOWLIST");
    bool base_given = ctx->resource_baseline || (env_base && *env_base);
    bool allow_given = ctx->spill_allowlist || (env_allow && *env_allow);
    st->base_path = ctx->resource_baseline ? ctx->resource_baseline
                    : (env_base && *env_base) ? env_base : DEFAULT_BASELINE;
    st->allow_path = ctx->spill_allowlist ? ctx->spill_allowlist
                     : (env_allow && *env_allow) ? env_allow : DEFAULT_ALLOWLIST;
    rc = kg_res_baseline_load(&st->base, st->base_path);
    if (rc == KG_ENOTFOUND && (!base_given || pf_opts.update_baseline)) {
        /* No file yet: every kernel WARNs "not recorded" (or --update-baseline creates it). */
        st->base_missing = true;
        rc = 0;
    }
    KG_TRY(rc);
    rc = kg_spill_allowlist_load(&st->allow, st->allow_path);
    if (rc == KG_ENOTFOUND && !allow_given)
        rc = 0; /* no default allowlist: nothing may spill */
    KG_TRY(rc);
cleanup:
    return rc;
}

static void state_free(pf_state *st)
{
    kg_res_baseline_free(&st->base);
    kg_spill_allowlist_free(&st->allow);
    kg_cubin_set_free(st->cubins);
    free(st->rows);
    memset(st, 0, sizeof *st);
}

/* Evaluate every selected case into st->rows and the report. */
static int preflight_run(pf_state *st, kg_report *rep, const kg_registry *reg,
                         const kg_selection *sel, const kg_gate_ctx *ctx)
{
    int rc = 0;
    const kg_device_info *dev = pf_opts.force_static ? NULL : ctx->dev;
    const char *exe = ctx->self_exe ? ctx->self_exe : "/proc/self/exe";
    KG_TRY(load_inputs(st, ctx));
    rc = kg_cubin_load_exe(&st->cubins, exe);
    if (rc < 0 && (!dev || rc == KG_ENOMEM))
        goto cleanup; /* the static path has nothing to read */
    if (rc < 0)       /* on a GPU the runtime path stands alone (no agreement check) */
        printf("preflight: static figures unavailable (%s): no agreement check\n",
               kg_error_last());
    rc = 0;
    cJSON *info = cJSON_CreateObject(), *archs = info ? cJSON_AddArrayToObject(info, "archs")
                                                      : NULL;
    if (archs) {
        char a[16];
        cJSON_AddStringToObject(info, "path", dev ? "runtime" : "static");
        cJSON_AddStringToObject(info, "baseline", st->base_path);
        cJSON_AddStringToObject(info, "allowlist", st->allow_path);
        for (int i = 0; st->cubins && i < st->cubins->n_archs; i++) {
            snprintf(a, sizeof a, "sm_%d", st->cubins->archs[i]);
            cJSON_AddItemToArray(archs, cJSON_CreateString(a));
        }
    }
    kg_report_set_extra(rep, "preflight", info);
    if (!ctx->quiet) {
        printf("preflight: %s path; baseline %s%s; allowlist %s\n",
               dev ? "runtime (GPU) + static agreement" : "static (cubins in the binary)",
               st->base_path, st->base_missing ? " (absent)" : "", st->allow_path);
        printf("%-36s %-30s %-6s %-3s %4s %6s %7s %3s %5s %-5s %s\n", "case", "kernel", "arch",
               "via", "regs", "local", "smem", "blk", "occ", "verd", "limiter | reasons");
    }
    for (size_t i = 0; i < sel->n; i++) {
        const kg_case_desc *d = kg_registry_get(reg, sel->idx[i]);
        size_t first = st->n;
        kg_verdict worst = KG_VERDICT_PASS;
        char msg[1024] = "";
        cJSON *fig = cJSON_CreateObject(), *list = fig ? cJSON_AddArrayToObject(fig, "kernels")
                                                       : NULL;
        if (!list) {
            cJSON_Delete(fig);
            rc = KG_ERR(KG_ENOMEM, "out of memory for the preflight report");
            goto cleanup;
        }
        cJSON_AddStringToObject(fig, "path", dev ? "runtime" : "static");
        for (int k = 0; k < d->n_kernels; k++) {
            const kg_kernel_ref *kr = &d->kernels[k];
            pf_row base = { 0 };
            base.case_id = d->id;
            base.kernel = kr->name;
            base.block_threads = kr->block_threads;
            base.dynamic_smem = kr->dynamic_smem;
            int dev_arch = dev ? dev->cc_major * 10 + dev->cc_minor : 0;
            if (dev) {
                pf_row r = base;
                if ((rc = runtime_row(st, &r, kr, dev)) < 0 || (rc = row_push(st, &r)) < 0) {
                    cJSON_Delete(fig);
                    goto cleanup;
                }
            }
            /* A kernel built for some architectures only (e.g. sm_90a code) is judged where it
             * exists; one that no cubin holds is an ERROR on every architecture. */
            int held = 0;
            for (int a = 0; st->cubins && a < st->cubins->n_archs; a++) {
                const kg_cubin_kernel *ck;
                held += kg_cubin_find_name(&ck, st->cubins, kr->name, st->cubins->archs[a]) !=
                        KG_ENOTFOUND;
            }
            for (int a = 0; st->cubins && a < st->cubins->n_archs; a++) {
                const kg_cubin_kernel *ck;
                if (st->cubins->archs[a] == dev_arch)
                    continue; /* the runtime row stands for the device's architecture */
                if (held && kg_cubin_find_name(&ck, st->cubins, kr->name,
                                               st->cubins->archs[a]) == KG_ENOTFOUND)
                    continue;
                pf_row r = base;
                if ((rc = static_row(st, &r, kr, st->cubins->archs[a])) < 0 ||
                    (rc = row_push(st, &r)) < 0) {
                    cJSON_Delete(fig);
                    goto cleanup;
                }
            }
        }
        for (size_t j = first; j < st->n; j++) {
            const pf_row *r = &st->rows[j];
            static const int rank[] = { 0, 1, 3, 1, 2 };
            if (rank[r->v] > rank[worst])
                worst = r->v;
            cJSON_AddItemToArray(list, row_json(r));
            if (r->reasons[0] && r->v != KG_VERDICT_PASS) {
                size_t u = strlen(msg);
                snprintf(msg + u, sizeof msg - u, "%s%s@sm_%d: %s", u ? "; " : "", r->kernel,
                         r->arch, r->reasons);
            }
            if (!ctx->quiet)
                print_row(r);
        }
        if (st->n == first) /* e.g. a cuBLAS case: library kernels are not ours to judge */
            snprintf(msg, sizeof msg, "no __global__ listed (kg_case_desc.kernels): nothing "
                     "to check");
        else if (!msg[0])
            snprintf(msg, sizeof msg, "%zu kernel row(s): local memory as allowed (none unless "
                     "allowlisted), occupancy at or above the baseline", st->n - first);
        if (d->expect_gate && strcmp(d->expect_gate, "preflight") == 0 && d->expect_reason)
            cJSON_AddStringToObject(fig, "expect_reason", d->expect_reason);
        KG_TRY(kg_report_add(rep, "preflight", d->id, worst, msg, fig));
    }
cleanup:
    return rc;
}

int kg_gate_preflight(kg_report *rep, const kg_registry *reg, const kg_selection *sel,
                      const kg_gate_ctx *ctx)
{
    pf_state st;
    memset(&st, 0, sizeof st);
    int rc = preflight_run(&st, rep, reg, sel, ctx);
    state_free(&st);
    return rc;
}

/* --update-baseline: record the rows just evaluated. Refused when a row failed for a reason the
 * baseline cannot accept (local memory, cannot launch) or could not be evaluated. */
static int update_baseline(pf_state *st)
{
    int rc = 0;
    for (size_t i = 0; i < st->n; i++) {
        const pf_row *r = &st->rows[i];
        bool spill = r->local_bytes > 0 && (!r->allow || r->allow->local_bytes != r->local_bytes);
        if (r->v == KG_VERDICT_ERROR || spill || (r->allow && !spill && r->local_bytes == 0) ||
            (r->runtime && r->blocks_per_sm == 0))
            return KG_ERR(KG_EREFUSED, "--update-baseline refused: %s (%s, sm_%d) %s: %s; "
                          "%s was not written", r->case_id, r->kernel, r->arch,
                          kg_verdict_name(r->v), r->reasons, st->base_path);
    }
    for (size_t i = 0; i < st->n; i++) {
        const pf_row *r = &st->rows[i];
        kg_res_entry e = { (char *)r->kernel, r->arch, r->block_threads,
                           (long long)r->dynamic_smem, r->regs, r->blocks_per_sm,
                           r->local_bytes, r->static_smem };
        KG_TRY(kg_res_baseline_put(&st->base, &e));
    }
    KG_TRY(kg_res_baseline_save(&st->base, st->base_path));
    printf("preflight: wrote %zu row(s) into %s\n", st->n, st->base_path);
cleanup:
    return rc;
}

enum { OPT_BASELINE = 0x2000, OPT_ALLOWLIST, OPT_STATIC, OPT_UPDATE };

static int preflight_opt(kg_gate_ctx *ctx, int opt, const char *arg)
{
    switch (opt) {
    case OPT_BASELINE:
        if (!arg || !*arg)
            return KG_ERR(KG_EINVAL, "--baseline: expected a file path");
        ctx->resource_baseline = arg;
        return 1;
    case OPT_ALLOWLIST:
        if (!arg || !*arg)
            return KG_ERR(KG_EINVAL, "--allowlist: expected a file path");
        ctx->spill_allowlist = arg;
        return 1;
    case OPT_STATIC: pf_opts.force_static = true; return 1;
    case OPT_UPDATE: pf_opts.update_baseline = true; return 1;
    default: return 0;
    }
}

static const char preflight_usage[] =
    "usage: kgate preflight [--filter REGEX] [--report FILE.json] [--baseline FILE]\n"
    "                       [--allowlist FILE] [--static] [--update-baseline] [--device N]\n"
    "\n"
    "Resource preflight of every __global__ each selected case launches, before any timing:\n"
    "registers/thread, local memory/thread (spills, dynamically indexed local arrays), static\n"
    "shared and constant memory, and theoretical occupancy for the case's block size and\n"
    "dynamic shared memory (blocks/SM, active warps, the limiting resource in words and the\n"
    "register headroom before the next occupancy step).\n"
    "\n"
    "  FAIL  nonzero local memory, unless the spill allowlist has the kernel/arch with that\n"
    "        exact byte count (a changed count, up or down, fails: update the allowlist);\n"
    "        blocks/SM below the resource baseline; a block that cannot launch\n"
    "  WARN  more registers than the baseline within the same occupancy step (with the\n"
    "        headroom left); a kernel not in the baseline (record it with --update-baseline)\n"
    "\n"
    "With a GPU: cudaFuncGetAttributes + cudaOccupancyMaxActiveBlocksPerMultiprocessor for the\n"
    "device's architecture, cross-checked against the static figures. Without one (or with\n"
    "--static): the static path reads the cubins embedded in this executable (every\n"
    "architecture it carries) and applies the occupancy calculator; no GPU is needed.\n"
    "\n"
    "  --baseline FILE     resource baseline (default: $KGATE_RESOURCE_BASELINE, else\n"
    "                      " DEFAULT_BASELINE " in the working directory)\n"
    "  --allowlist FILE    spill allowlist (default: $KGATE_SPILL_ALLOWLIST, else\n"
    "                      " DEFAULT_ALLOWLIST ")\n"
    "  --static            use the static path even when a GPU is present\n"
    "  --update-baseline   write the baseline (atomically) from this build's figures; refused\n"
    "                      (exit 2, nothing written) when a kernel spills unallowed, cannot\n"
    "                      launch on the device or errors\n"
    "\n"
    "exit codes: 0 pass (warnings allowed), 1 a kernel failed, 2 usage or malformed\n"
    "            baseline/allowlist (nothing is written), 4 runtime error\n";

int kg_cmd_preflight(kg_registry *reg, int argc, char **argv)
{
    static const struct option longopts[] = {
        KG_COMMON_LONGOPTS,
        { "baseline", required_argument, NULL, OPT_BASELINE },
        { "allowlist", required_argument, NULL, OPT_ALLOWLIST },
        { "static", no_argument, NULL, OPT_STATIC },
        { "update-baseline", no_argument, NULL, OPT_UPDATE },
        { 0, 0, 0, 0 }
    };
    static const kg_cmd_spec spec = { "preflight", preflight_usage, longopts, preflight_opt };
    kg_cmd_state cs;
    pf_state st;
    memset(&st, 0, sizeof st);
    memset(&pf_opts, 0, sizeof pf_opts);
    int rc = kg_cmd_begin(&cs, &spec, reg, argc, argv);
    if (rc == 0 && !cs.help_shown) {
        rc = preflight_run(&st, cs.rep, reg, &cs.sel, &cs.ctx);
        if (rc == 0 && pf_opts.update_baseline)
            rc = update_baseline(&st);
    }
    /* The static path decides without a GPU: the "no GPU" line is informational only. */
    cs.no_gpu = false;
    state_free(&st);
    return kg_cmd_end(&cs, rc);
}
