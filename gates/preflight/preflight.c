/* Resource preflight gate: registers, local memory (spills, local arrays), shared memory and
 * theoretical occupancy of every __global__ a selected case launches, judged against the spill
 * allowlist and the resource baseline before any timing runs.
 *
 * Two paths. Runtime (GPU): cudaFuncGetAttributes + cudaOccupancyMaxActiveBlocksPerMultiprocessor
 * for the device's architecture. Static (no GPU, or --static): the cubins embedded in this
 * executable (cubin.c) and the occupancy calculator (occupancy.c), for every architecture the
 * binary carries. On a GPU both run and the report says whether they agree. Rows are measured
 * and judged in preflight_rows.c and printed by preflight_figures.c. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "preflight/preflight_rows.h"
#include "core/report_keys.h"

#define DEFAULT_BASELINE "baselines/resources.json"
#define DEFAULT_ALLOWLIST "baselines/spill_allowlist.json"

static int pf_push(kg_pf_state *st, const kg_pf_row *r)
{
    if (st->n == st->cap) {
        size_t cap = st->cap ? st->cap * 2 : 64;
        kg_pf_row *nr = realloc(st->rows, cap * sizeof *nr);
        if (!nr)
            return KG_ERR(KG_ENOMEM, "out of memory for preflight rows");
        st->rows = nr;
        st->cap = cap;
    }
    st->rows[st->n++] = *r;
    return 0;
}

static int pf_load_inputs(kg_pf_state *st, const kg_preflight_opts *o)
{
    int rc = 0;
    /* Flag, then environment (e.g. the selftest pointing the defect runner at tests/data/),
     * then the default in the working directory. */
    const char *env_base = getenv("KGATE_RESOURCE_BASELINE");
    const char *env_allow = getenv("KGATE_SPILL_ALLOWLIST");
    bool base_given = o->baseline || (env_base && *env_base);
    bool allow_given = o->allowlist || (env_allow && *env_allow);
    st->base_path = o->baseline               ? o->baseline
                    : (env_base && *env_base) ? env_base
                                              : DEFAULT_BASELINE;
    st->allow_path = o->allowlist                ? o->allowlist
                     : (env_allow && *env_allow) ? env_allow
                                                 : DEFAULT_ALLOWLIST;
    rc = kg_res_baseline_load(&st->base, st->base_path);
    if (rc == KG_ENOTFOUND && (!base_given || o->update_baseline)) {
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

static void pf_state_free(kg_pf_state *st)
{
    if (!st)
        return;
    kg_res_baseline_free(&st->base);
    kg_spill_allowlist_free(&st->allow);
    kg_cubin_set_free(st->cubins);
    free(st->rows);
    free(st);
}

/* The run-level record: which path, which files, which architectures the binary carries. */
static void pf_report_info(const kg_pf_state *st, const kg_gate_env *env, bool runtime)
{
    char a[16];
    cJSON *info = cJSON_CreateObject(),
          *archs = info ? cJSON_AddArrayToObject(info, KG_RK_PF_ARCHS) : NULL;
    if (!archs) {
        cJSON_Delete(info);
        return;
    }
    cJSON_AddStringToObject(info, KG_RK_PF_PATH, runtime ? "runtime" : "static");
    cJSON_AddStringToObject(info, KG_RK_PF_BASELINE, st->base_path);
    cJSON_AddStringToObject(info, KG_RK_PF_ALLOWLIST, st->allow_path);
    for (int i = 0; st->cubins && i < st->cubins->n_archs; i++) {
        snprintf(a, sizeof a, "sm_%d", st->cubins->archs[i]);
        cJSON_AddItemToArray(archs, cJSON_CreateString(a));
    }
    kg_report_set_extra(env->rep, KG_RK_PREFLIGHT, info);
    if (!env->quiet)
        printf("preflight: %s path; baseline %s%s; allowlist %s\n",
               runtime ? "runtime (GPU) + static agreement" : "static (cubins in the binary)",
               st->base_path, st->base_missing ? " (absent)" : "", st->allow_path);
}

static int pf_begin(void **state, const void *opts, const kg_gate_env *env)
{
    int rc = 0;
    const kg_preflight_opts *o = opts;
    kg_pf_state *st = calloc(1, sizeof *st);
    *state = NULL;
    if (!st)
        return KG_ERR(KG_ENOMEM, "out of memory starting the preflight gate");
    st->force_static = o->force_static;
    st->update_baseline = o->update_baseline;
    bool runtime = env->dev && !o->force_static;
    KG_TRY(pf_load_inputs(st, o));
    rc = kg_cubin_load_exe(&st->cubins, env->self_exe ? env->self_exe : "/proc/self/exe");
    if (rc < 0 && (!runtime || rc == KG_ENOMEM))
        goto cleanup; /* the static path has nothing to read */
    if (rc < 0)       /* on a GPU the runtime path stands alone (no agreement check) */
        printf("preflight: static figures unavailable (%s): no agreement check\n", kg_error_last());
    rc = 0;
    pf_report_info(st, env, runtime);
    *state = st;
    st = NULL;
cleanup:
    pf_state_free(st);
    return rc;
}

/* A kernel built for some architectures only (e.g. sm_90a code) is judged where it exists; one
 * that no cubin holds is an ERROR on every architecture. */
static int pf_static_rows(kg_pf_state *st, const kg_pf_row *base, const kg_kernel_ref *kr,
                          int dev_arch)
{
    int rc = 0, held = 0;
    const kg_cubin_kernel *ck;
    for (int a = 0; st->cubins && a < st->cubins->n_archs; a++)
        held += kg_cubin_find_name(&ck, st->cubins, kr->name, st->cubins->archs[a]) != KG_ENOTFOUND;
    for (int a = 0; st->cubins && a < st->cubins->n_archs; a++) {
        int arch = st->cubins->archs[a];
        if (arch == dev_arch)
            continue; /* the runtime row stands for the device's architecture */
        if (held && kg_cubin_find_name(&ck, st->cubins, kr->name, arch) == KG_ENOTFOUND)
            continue;
        kg_pf_row r = *base;
        KG_TRY(kg_pf_static_row(st, &r, kr, arch));
        KG_TRY(pf_push(st, &r));
    }
cleanup:
    return rc;
}

static void pf_message(kg_case_result *res, const kg_pf_row *rows, size_t n)
{
    static const int rank[] = { 0, 1, 3, 1, 2 }; /* PASS WARN FAIL SKIP ERROR */
    size_t u = 0;
    res->verdict = KG_VERDICT_PASS;
    res->message[0] = '\0';
    for (size_t j = 0; j < n; j++) {
        const kg_pf_row *r = &rows[j];
        if (rank[r->v] > rank[res->verdict])
            res->verdict = r->v;
        if (r->reasons[0] && r->v != KG_VERDICT_PASS && u < sizeof res->message)
            u += (size_t)snprintf(res->message + u, sizeof res->message - u, "%s%s@sm_%d: %s",
                                  u ? "; " : "", r->kernel, r->arch, r->reasons);
    }
    if (n == 0) /* e.g. a cuBLAS case: library kernels are not ours to judge */
        snprintf(res->message, sizeof res->message,
                 "no __global__ listed "
                 "(kg_case_desc.kernels): nothing to check");
    else if (!res->message[0])
        snprintf(res->message, sizeof res->message,
                 "%zu kernel row(s): local memory as allowed "
                 "(none unless allowlisted), occupancy at or above the baseline",
                 n);
}

static int pf_run_case(void *state, const kg_case_desc *d, const kg_gate_env *env,
                       kg_case_result *res)
{
    int rc = 0;
    kg_pf_state *st = state;
    const kg_device_info *dev = st->force_static ? NULL : env->dev;
    int dev_arch = dev ? dev->cc_major * 10 + dev->cc_minor : 0;
    size_t first = st->n;
    kg_preflight_result *p = calloc(1, sizeof *p);
    if (!p)
        return KG_ERR(KG_ENOMEM, "out of memory for the preflight result of '%s'", d->id);
    p->path = dev ? "runtime" : "static";
    for (int k = 0; k < d->n_kernels; k++) {
        const kg_kernel_ref *kr = &d->kernels[k];
        kg_pf_row base = { .case_id = d->id,
                           .kernel = kr->name,
                           .block_threads = kr->block_threads,
                           .dynamic_smem = kr->dynamic_smem };
        if (dev) {
            kg_pf_row r = base;
            KG_TRY(kg_pf_runtime_row(st, &r, kr, dev));
            KG_TRY(pf_push(st, &r));
        }
        KG_TRY(pf_static_rows(st, &base, kr, dev_arch));
    }
    p->n = st->n - first;
    if (p->n && !(p->rows = malloc(p->n * sizeof *p->rows))) {
        rc = KG_ERR(KG_ENOMEM, "out of memory for the preflight result of '%s'", d->id);
        goto cleanup;
    }
    if (p->n)
        memcpy(p->rows, st->rows + first, p->n * sizeof *p->rows);
    pf_message(res, p->rows, p->n);
    res->n_lines = p->n;
    res->data = p;
    p = NULL;
cleanup:
    free(p);
    return rc;
}

/* The rows were allocated in the worker: only the verdict-level figures travel. */
static void pf_result_flatten(void *copy)
{
    kg_preflight_result *p = copy;
    p->rows = NULL;
    p->n = 0;
}

static void pf_result_free(void *data)
{
    kg_preflight_result *p = data;
    if (p)
        free(p->rows);
    free(p);
}

/* --update-baseline: record the rows just evaluated. Refused when a row failed for a reason the
 * baseline cannot accept (local memory, cannot launch) or could not be evaluated. */
static int pf_update_baseline(kg_pf_state *st)
{
    int rc = 0;
    for (size_t i = 0; i < st->n; i++) {
        const kg_pf_row *r = &st->rows[i];
        bool spill = r->local_bytes > 0 && (!r->allow || r->allow->local_bytes != r->local_bytes);
        if (r->v == KG_VERDICT_ERROR || spill || (r->allow && !spill && r->local_bytes == 0) ||
            (r->runtime && r->blocks_per_sm == 0) || r->over_bounds)
            return KG_ERR(KG_EREFUSED,
                          "--update-baseline refused: %s (%s, sm_%d) %s: %s; "
                          "%s was not written",
                          r->case_id, r->kernel, r->arch, kg_verdict_name(r->v), r->reasons,
                          st->base_path);
    }
    size_t written = 0;
    for (size_t i = 0; i < st->n; i++) {
        const kg_pf_row *r = &st->rows[i];
        kg_arch_limits lim;
        /* An architecture without known limits has no blocks/SM to record: a 0 would later
         * hide a drop. It is recorded once kgate knows it. */
        if (!r->runtime && kg_arch_limits_get(&lim, r->arch) < 0)
            continue;
        kg_res_entry e = { (char *)r->kernel, r->arch,
                           r->block_threads,  (long long)r->dynamic_smem,
                           r->regs,           r->blocks_per_sm,
                           r->local_bytes,    r->static_smem };
        KG_TRY(kg_res_baseline_put(&st->base, &e));
        written++;
    }
    KG_TRY(kg_res_baseline_save(&st->base, st->base_path));
    printf("preflight: wrote %zu row(s) into %s\n", written, st->base_path);
cleanup:
    return rc;
}

static int pf_end(void *state, const kg_gate_env *env, int rc)
{
    kg_pf_state *st = state;
    KG_UNUSED(env);
    if (st && rc == 0 && st->update_baseline)
        rc = pf_update_baseline(st);
    pf_state_free(st);
    return rc;
}

static const kg_opt pf_opts[] = {
    KG_OPT_STRING_("baseline", "FILE", kg_preflight_opts, baseline,
                   "resource baseline (default: $KGATE_RESOURCE_BASELINE, else " DEFAULT_BASELINE
                   " in the working directory)"),
    KG_OPT_STRING_("allowlist", "FILE", kg_preflight_opts, allowlist,
                   "spill allowlist (default: $KGATE_SPILL_ALLOWLIST, else " DEFAULT_ALLOWLIST ")"),
    KG_OPT_BOOL_("static", kg_preflight_opts, force_static,
                 "use the static path even when a GPU is present"),
    { .name = "update-baseline",
      .kind = KG_OPT_BOOL,
      .offset = offsetof(kg_preflight_opts, update_baseline),
      .flags = KG_OPT_F_STANDALONE,
      .help = "write the baseline (atomically) from this build's figures; refused (exit 2, "
              "nothing written) when a kernel spills unallowed, cannot launch on the device or "
              "errors" },
};
static const kg_preflight_opts pf_opts_init = KG_PREFLIGHT_OPTS_INIT;

static const char pf_description[] =
    "Resource preflight of every __global__ each selected case launches, before any timing:\n"
    "registers/thread, local memory/thread (spills, dynamically indexed local arrays), static\n"
    "shared and constant memory, and theoretical occupancy for the case's block size and\n"
    "dynamic shared memory (blocks/SM, active warps, the limiting resource in words and the\n"
    "register headroom before the next occupancy step).\n"
    "\n"
    "  FAIL  nonzero local memory, unless the spill allowlist has the kernel/arch with that\n"
    "        exact byte count (a changed count, up or down, fails: update the allowlist);\n"
    "        blocks/SM below the resource baseline; a block that cannot launch; a block\n"
    "        larger than the kernel allows (__launch_bounds__ / maxThreadsPerBlock)\n"
    "  WARN  more registers than the baseline within the same occupancy step (with the\n"
    "        headroom left); a kernel not in the baseline (record it with --update-baseline)\n"
    "\n"
    "With a GPU: cudaFuncGetAttributes + cudaOccupancyMaxActiveBlocksPerMultiprocessor for the\n"
    "device's architecture, cross-checked against the static figures. Without one (or with\n"
    "--static): the static path reads the cubins embedded in this executable (every\n"
    "architecture it carries) and applies the occupancy calculator; no GPU is needed.\n";

static bool pf_deviceless(const void *opts)
{
    return opts && ((const kg_preflight_opts *)opts)->force_static;
}

const struct kg_gate kg_gate_preflight = {
    .name = "preflight",
    .summary = "registers, spills, shared memory, occupancy (static without a GPU)",
    .description = pf_description,
    .flags = KG_GATE_MULTILINE |
             KG_GATE_ONE_DEVICE, /* --update-baseline: its end saves every row */
    .deviceless = pf_deviceless,
    .opts = pf_opts,
    .n_opts = KG_ARRAY_LEN(pf_opts),
    .opts_size = sizeof(kg_preflight_opts),
    .opts_init = &pf_opts_init,
    .begin = pf_begin,
    .run_case = pf_run_case,
    .figures = kg_pf_figures,
    .result_free = pf_result_free,
    .result_size = sizeof(kg_preflight_result),
    .result_flatten = pf_result_flatten,
    .end = pf_end,
    .columns = kg_pf_columns,
    .n_columns = KG_PF_N_COLUMNS,
};
