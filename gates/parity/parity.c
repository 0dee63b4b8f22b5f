/* Parity gate: poison the output, launch, compare against the case's reference by policy. */
#include <getopt.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "core/kg_core.h"

double kg_value_at(const void *buf, kg_dtype t, size_t i)
{
    switch (t) {
    case KG_DTYPE_F32: return ((const float *)buf)[i];
    case KG_DTYPE_F64: return ((const double *)buf)[i];
    case KG_DTYPE_BF16: return kg_bf16_to_f32(((const uint16_t *)buf)[i]);
    case KG_DTYPE_F16: {
        uint16_t h = ((const uint16_t *)buf)[i];
        int e = (h >> 10) & 0x1f, m = h & 0x3ff;
        double s = (h & 0x8000) ? -1.0 : 1.0;
        if (e == 0x1f)
            return m ? NAN : s * INFINITY;
        return e ? s * ldexp(1.0 + m / 1024.0, e - 15) : s * ldexp(m / 1024.0, -14);
    }
    case KG_DTYPE_I32: return ((const int32_t *)buf)[i];
    case KG_DTYPE_U8: return ((const uint8_t *)buf)[i];
    }
    return NAN;
}

int kg_parity_compare(kg_parity_result *res, const void *out, kg_dtype od, const void *ref,
                      kg_dtype rd, size_t n, const kg_parity_policy *p)
{
    memset(res, 0, sizeof *res);
    res->n = n;
    res->first_bad = SIZE_MAX;
    if (n > 0 && (!out || !ref))
        return KG_ERR(KG_EINVAL, "parity: NULL buffer");
    if (p->kind == KG_PARITY_BITWISE && od != rd)
        return KG_ERR(KG_EINVAL, "parity: bitwise policy needs the reference in the output dtype "
                                 "(%s), got %s", kg_dtype_name(od), kg_dtype_name(rd));
    size_t es = kg_dtype_size(od);
    double diff2 = 0, ref2 = 0, out2 = 0, dot = 0;
    for (size_t i = 0; i < n; i++) {
        double o = kg_value_at(out, od, i), r = kg_value_at(ref, rd, i);
        bool bad = false;
        if (!isfinite(o)) {
            res->nonfinite_out++;
            bad = true;
        }
        if (!isfinite(r)) {
            res->nonfinite_ref++;
            bad = true;
        }
        if (p->kind == KG_PARITY_BITWISE &&
            memcmp((const char *)out + i * es, (const char *)ref + i * es, es) != 0) {
            res->mismatched_bytes++;
            bad = true;
        }
        if (isfinite(o) && isfinite(r)) {
            double d = fabs(o - r);
            if (d > res->max_abs) {
                res->max_abs = d;
                res->max_abs_at = i;
            }
            if (p->kind == KG_PARITY_TOLERANCE && d > p->max_abs)
                bad = true;
            diff2 += d * d;
            ref2 += r * r;
            out2 += o * o;
            dot += o * r;
        }
        if (bad && res->first_bad == SIZE_MAX)
            res->first_bad = i;
    }
    res->rel_l2 = ref2 > 0 ? sqrt(diff2) / sqrt(ref2) : (diff2 > 0 ? INFINITY : 0.0);
    if (ref2 > 0 && out2 > 0)
        res->cosine = dot / (sqrt(ref2) * sqrt(out2));
    else
        res->cosine = (ref2 == 0 && out2 == 0) ? 1.0 : 0.0;

    if (res->nonfinite_out)
        snprintf(res->reason, sizeof res->reason, "%zu NaN/Inf in output (first at %zu)",
                 res->nonfinite_out, res->first_bad);
    else if (res->nonfinite_ref)
        snprintf(res->reason, sizeof res->reason, "%zu NaN/Inf in reference (first at %zu)",
                 res->nonfinite_ref, res->first_bad);
    else if (p->kind == KG_PARITY_BITWISE && res->mismatched_bytes)
        snprintf(res->reason, sizeof res->reason, "%zu of %zu elements differ (first at %zu)",
                 res->mismatched_bytes, n, res->first_bad);
    else if (p->kind == KG_PARITY_TOLERANCE && res->max_abs > p->max_abs)
        snprintf(res->reason, sizeof res->reason, "max_abs %.3g > %.3g at %zu", res->max_abs,
                 p->max_abs, res->max_abs_at);
    else if (p->kind == KG_PARITY_TOLERANCE && !(res->rel_l2 <= p->max_rel_l2))
        snprintf(res->reason, sizeof res->reason, "rel_l2 %.3g > %.3g", res->rel_l2,
                 p->max_rel_l2);
    else if (p->kind == KG_PARITY_TOLERANCE && !(res->cosine >= p->min_cosine))
        snprintf(res->reason, sizeof res->reason, "cosine %.9f < %.9f", res->cosine,
                 p->min_cosine);
    res->pass = res->reason[0] == '\0';
    return 0;
}

static cJSON *parity_figures(const kg_parity_result *r, const kg_case_desc *d)
{
    cJSON *f = cJSON_CreateObject();
    cJSON_AddStringToObject(f, "policy", d->parity.kind == KG_PARITY_BITWISE ? "bitwise"
                                                                             : "tolerance");
    if (d->parity.kind == KG_PARITY_TOLERANCE) {
        cJSON_AddNumberToObject(f, "limit_max_abs", d->parity.max_abs);
        cJSON_AddNumberToObject(f, "limit_rel_l2", d->parity.max_rel_l2);
        cJSON_AddNumberToObject(f, "limit_min_cosine", d->parity.min_cosine);
    }
    cJSON_AddStringToObject(f, "reference", d->ref_kind ? d->ref_kind : "unspecified");
    cJSON_AddNumberToObject(f, "elements", (double)r->n);
    /* JSON has no NaN/Inf: non-finite figures are written as null. */
    cJSON_AddItemToObject(f, "max_abs", isfinite(r->max_abs) ? cJSON_CreateNumber(r->max_abs)
                                                              : cJSON_CreateNull());
    cJSON_AddItemToObject(f, "rel_l2", isfinite(r->rel_l2) ? cJSON_CreateNumber(r->rel_l2)
                                                            : cJSON_CreateNull());
    cJSON_AddItemToObject(f, "cosine", isfinite(r->cosine) ? cJSON_CreateNumber(r->cosine)
                                                            : cJSON_CreateNull());
    cJSON_AddNumberToObject(f, "nonfinite_out", (double)r->nonfinite_out);
    cJSON_AddNumberToObject(f, "mismatched", (double)r->mismatched_bytes);
    if (r->first_bad != SIZE_MAX)
        cJSON_AddNumberToObject(f, "first_bad_index", (double)r->first_bad);
    return f;
}

/* Run the parity check of one case. Returns <0 only for errors that are not the case's verdict
 * (the verdict itself, including CUDA errors inside the case, goes to the report). */
int kg_parity_run_case(kg_report *rep, const kg_case_desc *d, uint64_t seed, int device,
                       kg_verdict *verdict, kg_parity_result *res_out)
{
    int rc = 0;
    kg_instance inst;
    void *out = NULL, *ref = NULL;
    kg_parity_result res;
    char msg[256];
    bool opened = false;
    *verdict = KG_VERDICT_ERROR;
    KG_TRY(kg_instance_open(&inst, d, seed, device));
    opened = true;
    KG_TRY(kg_instance_poison(&inst));
    KG_TRY(kg_instance_run_copy(&out, &inst));
    size_t n = inst.io.out_count;
    ref = malloc(n * kg_dtype_size(d->ref_dtype) + 1);
    if (!ref) {
        rc = KG_ERR(KG_ENOMEM, "out of memory for the reference of '%s'", d->id);
        goto cleanup;
    }
    KG_TRY(d->reference(inst.state, inst.stream, ref));
    KG_CUDA_CHECK(cudaStreamSynchronize(inst.stream));
    KG_TRY(kg_parity_compare(&res, out, inst.io.out_dtype, ref, d->ref_dtype, n, &d->parity));
    *res_out = res;
    *verdict = res.pass ? KG_VERDICT_PASS : KG_VERDICT_FAIL;
    if (res.pass)
        snprintf(msg, sizeof msg, "max_abs %.3g, rel_l2 %.3g, cosine %.9f", res.max_abs,
                 res.rel_l2, res.cosine);
    else
        snprintf(msg, sizeof msg, "%s", res.reason);
    rc = kg_report_add(rep, "parity", d->id, *verdict, msg, parity_figures(&res, d));
cleanup:
    if (rc < 0 && rc != KG_ENOMEM && *verdict == KG_VERDICT_ERROR) {
        /* The case broke (setup, launch or reference): that is its verdict, not ours. */
        (void)kg_report_add(rep, "parity", d->id, KG_VERDICT_ERROR, kg_error_last(), NULL);
        rc = (rc == KG_ENODEV) ? rc : 0;
    }
    if (opened)
        kg_instance_close(&inst);
    free(out);
    free(ref);
    return rc;
}

int kg_gate_parity(kg_report *rep, const kg_registry *reg, const kg_selection *sel,
                   const kg_gate_ctx *ctx)
{
    int rc = 0;
    if (!ctx->dev) {
        for (size_t i = 0; i < sel->n; i++)
            KG_TRY(kg_report_add(rep, "parity", kg_registry_get(reg, sel->idx[i])->id,
                                 KG_VERDICT_SKIP, "no CUDA device", NULL));
        return 0;
    }
    if (!ctx->quiet)
        printf("%-46s %-7s %-10s %-10s %-12s %s\n", "case", "parity", "max_abs", "rel_l2",
               "cosine", "detail");
    for (size_t i = 0; i < sel->n; i++) {
        const kg_case_desc *d = kg_registry_get(reg, sel->idx[i]);
        kg_parity_result res;
        kg_verdict v;
        KG_TRY(kg_parity_run_case(rep, d, ctx->seed, ctx->device, &v, &res));
        if (ctx->quiet)
            continue;
        if (v == KG_VERDICT_ERROR)
            printf("%-46s %-7s %s\n", d->id, kg_verdict_name(v), kg_error_last());
        else
            printf("%-46s %-7s %-10.3g %-10.3g %-12.9f %s\n", d->id, kg_verdict_name(v),
                   res.max_abs, res.rel_l2, res.cosine, res.pass ? "" : res.reason);
    }
cleanup:
    return rc;
}

static const char parity_usage[] =
    "usage: kgate parity [--filter REGEX] [--seed N] [--device N] [--report FILE.json]\n"
    "\n"
    "Poison each case's output (0xFF: NaN in every float dtype), launch it once, and compare\n"
    "the output with the case's reference (CPU float64, cuBLAS, ...) by its policy: bitwise,\n"
    "or tolerance (max_abs, relative L2, cosine). NaN/Inf never pass. Inputs are random from\n"
    "--seed (a fresh one is printed when none is given).\n"
    "\n"
    "exit codes: 0 all pass, 1 a case failed, 2 usage or input error, 3 no GPU,\n"
    "            4 runtime error\n";

int kg_cmd_parity(kg_registry *reg, int argc, char **argv)
{
    static const struct option longopts[] = { KG_COMMON_LONGOPTS, { 0, 0, 0, 0 } };
    static const kg_cmd_spec spec = { "parity", parity_usage, longopts, NULL };
    kg_cmd_state st;
    int rc = kg_cmd_begin(&st, &spec, reg, argc, argv);
    if (rc == 0 && !st.help_shown)
        rc = kg_gate_parity(st.rep, reg, &st.sel, &st.ctx);
    return kg_cmd_end(&st, rc);
}
