/* The parity gate: poison the output (0xFF: NaN in every float dtype), launch once, compare
 * with the case's reference by its policy. One typed kg_parity_result per case. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "gate.h"
#include "parity/parity.h"
#include "parity/refcache.h"
#include "core/report_keys.h"

static const char pg_description[] =
    "Poison each case's output (0xFF: NaN in every float dtype), launch it once, and compare\n"
    "the output with the case's reference (CPU float64, cuBLAS, ...) by its policy: bitwise,\n"
    "or tolerance (max_abs, relative L2, cosine). NaN/Inf never pass. Inputs are random from\n"
    "--seed (a fresh one is printed when none is given).\n";

static cJSON *pg_num_or_null(double v)
{
    return isfinite(v) ? cJSON_CreateNumber(v) : cJSON_CreateNull();
}

/* One output's figures (the top level: the worst output's). */
static void pg_output_figures(cJSON *f, const kg_parity_result *r, const kg_parity_policy *p)
{
    cJSON_AddStringToObject(f, KG_FIG_PARITY_POLICY,
                            p->kind == KG_PARITY_BITWISE ? "bitwise" : "tolerance");
    if (p->kind == KG_PARITY_TOLERANCE) {
        cJSON_AddNumberToObject(f, KG_FIG_PARITY_LIMIT_MAX_ABS, p->max_abs);
        cJSON_AddNumberToObject(f, KG_FIG_PARITY_LIMIT_REL_L2, p->max_rel_l2);
        cJSON_AddNumberToObject(f, KG_FIG_PARITY_LIMIT_MIN_COSINE, p->min_cosine);
    }
    cJSON_AddNumberToObject(f, KG_FIG_PARITY_ELEMENTS, (double)r->n);
    /* JSON has no NaN/Inf: non-finite figures are written as null. */
    cJSON_AddItemToObject(f, KG_FIG_PARITY_MAX_ABS, pg_num_or_null(r->max_abs));
    cJSON_AddItemToObject(f, KG_FIG_PARITY_REL_L2, pg_num_or_null(r->rel_l2));
    cJSON_AddItemToObject(f, KG_FIG_PARITY_COSINE, pg_num_or_null(r->cosine));
    cJSON_AddNumberToObject(f, KG_FIG_PARITY_NONFINITE_OUT, (double)r->nonfinite_out);
    cJSON_AddNumberToObject(f, KG_FIG_PARITY_MISMATCHED, (double)r->mismatched_bytes);
    if (r->first_bad != SIZE_MAX)
        cJSON_AddNumberToObject(f, KG_FIG_PARITY_FIRST_BAD_INDEX, (double)r->first_bad);
}

/* One-output cases keep the figures they always had; several outputs add `outputs`, each
 * with its name, dtype, verdict and figures, and name the worst at the top. */
static cJSON *pg_figures(const kg_case_desc *d, const kg_case_result *res)
{
    const kg_parity_outputs *r = res->data;
    cJSON *f = cJSON_CreateObject(), *list;
    if (!f)
        return NULL;
    pg_output_figures(f, &r->worst, &r->policy[r->worst_i]);
    cJSON_AddStringToObject(f, KG_FIG_PARITY_REFERENCE, d->ref_kind ? d->ref_kind : "unspecified");
    if (r->n < 2 || !(list = cJSON_AddArrayToObject(f, KG_FIG_PARITY_OUTPUTS)))
        return f;
    cJSON_AddStringToObject(f, KG_FIG_PARITY_WORST_OUTPUT, r->name[r->worst_i]);
    for (int i = 0; i < r->n; i++) {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, KG_FIG_PARITY_OUTPUT_NAME, r->name[i]);
        cJSON_AddStringToObject(o, KG_FIG_PARITY_OUTPUT_DTYPE, kg_dtype_name(r->dtype[i]));
        cJSON_AddBoolToObject(o, KG_FIG_PARITY_OUTPUT_PASS, r->out[i].pass);
        pg_output_figures(o, &r->out[i], &r->policy[i]);
        cJSON_AddItemToArray(list, o);
    }
    return f;
}

/* The message: the worst output's figures, or every failing output's reason. */
static void pg_message(kg_case_result *res, const kg_parity_outputs *r)
{
    size_t u = 0;
    const kg_parity_result *w = &r->worst;
    if (r->pass) {
        snprintf(res->message, sizeof res->message, "%s%s%smax_abs %.3g, rel_l2 %.3g, cosine %.9f",
                 r->n > 1 ? "every output passes; worst " : "", r->n > 1 ? r->name[r->worst_i] : "",
                 r->n > 1 ? ": " : "", w->max_abs, w->rel_l2, w->cosine);
        return;
    }
    res->message[0] = '\0';
    for (int i = 0; i < r->n && u < sizeof res->message; i++)
        if (!r->out[i].pass)
            u += (size_t)snprintf(res->message + u, sizeof res->message - u, "%s%s%s%s",
                                  u ? "; " : "", r->n > 1 ? r->name[i] : "", r->n > 1 ? ": " : "",
                                  r->out[i].reason);
}

/* The case's reference: from the on-disk cache where it is large and an entry of this case,
 * seed and build passes its digest (refcache.h), else computed (and stored when it pays).
 * A production run never reads the cache, as it never reuses a selftest: the digest catches
 * a damaged file, not one forged by code that could write the directory. */
static int pg_reference(const kg_case_desc *d, kg_instance *inst, const kg_gate_env *env, void *ref,
                        size_t bytes)
{
    int rc = 0;
    kg_refcache c;
    bool hit = false, stored = false;
    KG_TRY(kg_refcache_open(&c, d->id, env->seed, &inst->io, d->ref_dtype, bytes));
    double t0 = kg_now_s();
    if (env->diagnostic)
        KG_TRY(kg_refcache_load(&c, ref, &hit));
    if (hit) {
        fprintf(stderr, "kgate: parity: %s: reference from the cache (%zu MiB in %.2f s)\n", d->id,
                bytes >> 20, kg_now_s() - t0);
        return 0;
    }
    t0 = kg_now_s();
    KG_TRY(d->reference(inst->state, inst->stream, ref));
    KG_CUDA_CHECK(cudaStreamSynchronize(inst->stream));
    KG_TRY(kg_refcache_store(&c, ref, kg_now_s() - t0, &stored));
cleanup:
    return rc;
}

/* instance, poison, launch, reference, compare; any failure of the case is returned (<0). */
static int pg_run_case(void *state, const kg_case_desc *d, const kg_gate_env *env,
                       kg_case_result *res)
{
    int rc = 0;
    kg_instance inst;
    void *out = NULL, *ref = NULL;
    bool opened = false;
    size_t ref_bytes = 0;
    kg_parity_outputs *pr = calloc(1, sizeof *pr);
    KG_UNUSED(state);
    if (!pr)
        return KG_ERR(KG_ENOMEM, "out of memory for the parity result of '%s'", d->id);
    KG_TRY(kg_instance_open(&inst, d, env->seed, env->device));
    opened = true;
    KG_TRY(kg_instance_poison(&inst));
    KG_TRY(kg_instance_run_copy(&out, &inst));
    KG_TRY(kg_parity_ref_bytes(&ref_bytes, inst.io.outputs, inst.io.n_outputs, d->ref_dtype));
    ref = malloc(ref_bytes + 1);
    if (!ref) {
        rc = KG_ERR(KG_ENOMEM, "out of memory for the reference of '%s'", d->id);
        goto cleanup;
    }
    kg_phase_set(NULL, NULL, "reference");
    KG_TRY(pg_reference(d, &inst, env, ref, ref_bytes));
    kg_phase_set(NULL, NULL, "compare"); /* the gate's own work again, not the reference's */
    KG_TRY(kg_parity_compare_outputs(pr, out, ref, d->ref_dtype, inst.io.outputs, inst.io.n_outputs,
                                     &d->parity));
    res->verdict = pr->pass ? KG_VERDICT_PASS : KG_VERDICT_FAIL;
    pg_message(res, pr);
    res->data = pr;
    pr = NULL;
cleanup:
    if (opened)
        kg_instance_close(&inst);
    free(pr);
    free(out);
    free(ref);
    return rc;
}

static void pg_cell_detail(char *b, size_t n, const kg_case_desc *d, const kg_case_result *r,
                           size_t l)
{
    const kg_parity_outputs *p = r->data;
    KG_UNUSED(d), KG_UNUSED(l);
    snprintf(b, n, "%s", p->pass ? "" : r->message);
}

static const kg_gate_column pg_columns[] = {
    KG_COL_CASE(-46),
    KG_COL_VERDICT("parity", -7),
    KG_COL_NUM(KG_FIG_PARITY_MAX_ABS, "max_abs", -10, "%.3g", kg_parity_result, max_abs),
    KG_COL_NUM(KG_FIG_PARITY_REL_L2, "rel_l2", -10, "%.3g", kg_parity_result, rel_l2),
    KG_COL_NUM(KG_FIG_PARITY_COSINE, "cosine", -12, "%.9f", kg_parity_result, cosine),
    { .header = "detail", .cell = pg_cell_detail },
};

/* Isolation: the whole kg_parity_outputs travels back, so the parent's row has the type it has
 * in-process; the output names may point into the case's io (made in setup, after the fork). */
static void pg_flatten(void *copy)
{
    kg_parity_outputs *p = copy;
    for (size_t i = 0; i < KG_ARRAY_LEN(p->name); i++)
        p->name[i] = NULL;
}

const struct kg_gate kg_gate_parity = {
    .name = "parity",
    .summary = "outputs match the reference (tolerance or bitwise)",
    .description = pg_description,
    .flags = KG_GATE_NEEDS_GPU | KG_GATE_SELFTEST_FAULTS,
    .selftest_skips = KG_GATE_SELFTEST_TWINS, /* the slow variants compute correctly */
    .run_case = pg_run_case,
    .figures = pg_figures,
    .result_free = free,
    .result_size = sizeof(kg_parity_outputs),
    .result_flatten = pg_flatten,
    .columns = pg_columns,
    .n_columns = KG_ARRAY_LEN(pg_columns),
};
