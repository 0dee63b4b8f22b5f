/* Parity gate: poison the output, launch, compare against the case's reference by policy.
 * The comparison math (kg_parity_compare) is pure and CPU-tested; parity_gate.c runs it. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "parity/parity.h"

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

/* One slice's figures. The sums of a slice are in element order; the slices' are added in
 * slice order, so the figures depend on n alone, never on the thread count. */
typedef struct {
    size_t nonfinite_out, nonfinite_ref, mismatched_bytes, first_bad, max_abs_at;
    double max_abs, diff2, ref2, out2, dot;
} pc_part;

typedef struct {
    const void *out, *ref;
    kg_dtype od, rd;
    const kg_parity_policy *p;
    pc_part *parts;
} pc_job;

static void pc_slice(void *ctx, size_t i0, size_t i1, size_t k)
{
    const pc_job *j = ctx;
    const kg_parity_policy *p = j->p;
    size_t es = kg_dtype_size(j->od);
    pc_part *r = &j->parts[k];
    memset(r, 0, sizeof *r);
    r->first_bad = SIZE_MAX;
    for (size_t i = i0; i < i1; i++) {
        double o = kg_value_at(j->out, j->od, i), rf = kg_value_at(j->ref, j->rd, i);
        bool bad = false;
        if (!isfinite(o)) {
            r->nonfinite_out++;
            bad = true;
        }
        if (!isfinite(rf)) {
            r->nonfinite_ref++;
            bad = true;
        }
        if (p->kind == KG_PARITY_BITWISE &&
            memcmp((const char *)j->out + i * es, (const char *)j->ref + i * es, es) != 0) {
            r->mismatched_bytes++;
            bad = true;
        }
        if (isfinite(o) && isfinite(rf)) {
            double d = fabs(o - rf);
            if (d > r->max_abs) {
                r->max_abs = d;
                r->max_abs_at = i;
            }
            if (p->kind == KG_PARITY_TOLERANCE && d > p->max_abs)
                bad = true;
            r->diff2 += d * d;
            r->ref2 += rf * rf;
            r->out2 += o * o;
            r->dot += o * rf;
        }
        if (bad && r->first_bad == SIZE_MAX)
            r->first_bad = i;
    }
}

/* Up to one slice (all that a case of <= 1 M elements has) the sums are those of one serial
 * loop; a larger output is cut into 1 M-element slices over the host threads (kg_par_for). */
#define PC_SLICE ((size_t)1 << 20)

int kg_parity_compare(kg_parity_result *res, const void *out, kg_dtype od, const void *ref,
                      kg_dtype rd, size_t n, const kg_parity_policy *p)
{
    memset(res, 0, sizeof *res);
    res->n = n;
    res->first_bad = SIZE_MAX;
    if (n > 0 && (!out || !ref))
        return KG_ERR(KG_EINVAL, "parity: NULL buffer");
    if (p->kind == KG_PARITY_BITWISE && od != rd)
        return KG_ERR(KG_EINVAL,
                      "parity: bitwise policy needs the reference in the output dtype "
                      "(%s), got %s",
                      kg_dtype_name(od), kg_dtype_name(rd));
    size_t nparts = n ? (n + PC_SLICE - 1) / PC_SLICE : 0;
    pc_part one, *parts = nparts > 1 ? malloc(nparts * sizeof *parts) : &one;
    if (!parts)
        return KG_ERR(KG_ENOMEM, "parity: out of memory for %zu slices", nparts);
    pc_job job = { .out = out, .ref = ref, .od = od, .rd = rd, .p = p, .parts = parts };
    kg_par_for(n, nparts, pc_slice, &job);
    double diff2 = 0, ref2 = 0, out2 = 0, dot = 0;
    for (size_t k = 0; k < nparts; k++) { /* in slice order: the first index of a tie wins */
        const pc_part *r = &parts[k];
        res->nonfinite_out += r->nonfinite_out;
        res->nonfinite_ref += r->nonfinite_ref;
        res->mismatched_bytes += r->mismatched_bytes;
        if (res->first_bad == SIZE_MAX)
            res->first_bad = r->first_bad;
        if (r->max_abs > res->max_abs) {
            res->max_abs = r->max_abs;
            res->max_abs_at = r->max_abs_at;
        }
        diff2 += r->diff2;
        ref2 += r->ref2;
        out2 += r->out2;
        dot += r->dot;
    }
    if (parts != &one)
        free(parts);
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
        snprintf(res->reason, sizeof res->reason, "rel_l2 %.3g > %.3g", res->rel_l2, p->max_rel_l2);
    else if (p->kind == KG_PARITY_TOLERANCE && !(res->cosine >= p->min_cosine))
        snprintf(res->reason, sizeof res->reason, "cosine %.9f < %.9f", res->cosine, p->min_cosine);
    res->pass = res->reason[0] == '\0';
    return 0;
}

kg_dtype kg_parity_ref_dtype(const kg_output *o, kg_dtype case_ref_dtype)
{
    return o->has_ref_dtype ? o->ref_dtype : case_ref_dtype;
}

int kg_parity_ref_bytes(size_t *bytes, const kg_output *outs, int n, kg_dtype ref_dtype)
{
    *bytes = 0;
    for (int i = 0; i < n; i++) {
        kg_dtype rd = kg_parity_ref_dtype(&outs[i], ref_dtype);
        if (kg_dtype_size(rd) == 0)
            return KG_ERR(KG_EINVAL,
                          "parity: output %d (%s): reference dtype %d is not a "
                          "kg_dtype",
                          i, outs[i].name ? outs[i].name : "?", (int)rd);
        *bytes += outs[i].count * kg_dtype_size(rd);
    }
    return 0;
}

int kg_parity_compare_outputs(kg_parity_outputs *res, const void *out_host, const void *ref_host,
                              kg_dtype ref_dtype, const kg_output *outs, int n,
                              const kg_parity_policy *policy)
{
    int rc = 0;
    size_t oo = 0, ro = 0;
    memset(res, 0, sizeof *res);
    if (n < 1 || n > KG_MAX_OUTPUTS)
        return KG_ERR(KG_EINVAL, "parity: %d outputs (1..%d)", n, KG_MAX_OUTPUTS);
    res->n = n;
    res->pass = true;
    for (int i = 0; i < n; i++) {
        const kg_parity_policy *p = outs[i].parity ? outs[i].parity : policy;
        kg_dtype rd = kg_parity_ref_dtype(&outs[i], ref_dtype);
        KG_TRY(kg_parity_compare(&res->out[i], (const char *)out_host + oo, outs[i].dtype,
                                 (const char *)ref_host + ro, rd, outs[i].count, p));
        res->name[i] = outs[i].name;
        res->dtype[i] = outs[i].dtype;
        res->policy[i] = *p;
        oo += outs[i].count * kg_dtype_size(outs[i].dtype);
        ro += outs[i].count * kg_dtype_size(rd);
        /* The first failure stands; among passes, the one closest to its limit by rel_l2. */
        const kg_parity_result *w = &res->out[res->worst_i];
        if (res->pass && (!res->out[i].pass || !(res->out[i].rel_l2 <= w->rel_l2)))
            res->worst_i = i;
        res->pass = res->pass && res->out[i].pass;
    }
    res->worst = res->out[res->worst_i];
cleanup:
    return rc;
}
