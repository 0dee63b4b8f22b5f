/* The counters decision (pure: no GPU, no files; tests/test_counters.c drives it). The rule is
 * in counters.h and docs/counters.md. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include "counters/counters.h"

const char *kg_ct_decision_name(kg_ct_decision d)
{
    switch (d) {
    case KG_CT_OK: return "OK";
    case KG_CT_REGRESSED: return "REGRESSED";
    case KG_CT_MODEL_WRONG: return "MODEL_WRONG";
    case KG_CT_NO_DATA: return "NO_DATA";
    }
    return "?";
}

bool kg_ct_case_uses_tensor(const kg_case_desc *d)
{
    const char *t = d ? d->tags : NULL;
    size_t n = strlen(KG_CT_TAG_TENSOR);
    while (t && *t) {
        size_t len = strcspn(t, ",");
        if (len == n && strncmp(t, KG_CT_TAG_TENSOR, n) == 0)
            return true;
        t += len;
        t += *t == ',';
    }
    return false;
}

static void ct_note(kg_ct_verdict *v, const char *fmt, ...)
{
    size_t used = strlen(v->why);
    va_list ap;
    if (used + 3 >= sizeof v->why)
        return;
    if (used)
        used += (size_t)snprintf(v->why + used, sizeof v->why - used, "; ");
    va_start(ap, fmt);
    vsnprintf(v->why + used, sizeof v->why - used, fmt, ap);
    va_end(ap);
}

static void ct_worse(kg_ct_verdict *v, kg_ct_decision d)
{
    if (d > v->decision || v->decision == KG_CT_NO_DATA)
        v->decision = d == KG_CT_NO_DATA ? v->decision : d;
}

/* measured / declared outside [1/f, f]: the declaration is wrong. */
static bool ct_off(double ratio, double f) { return isfinite(ratio) && (ratio > f || ratio < 1 / f); }

static void ct_check_bytes(kg_ct_verdict *v, const kg_ct_counts *c, const kg_ct_expect *e,
                           const kg_ct_decide_opts *o)
{
    bool small = o->l2_bytes > 0 && e->bytes_moved < o->l2_bytes;
    double meas = small ? c->l2_bytes : c->dram_bytes;
    v->bytes_ratio = NAN;
    if (!(e->bytes_moved > 0)) {
        ct_note(v, "bytes_moved not declared: not checked");
        return;
    }
    if (!isfinite(meas)) {
        ct_note(v, "%s bytes unavailable: bytes_moved not checked", small ? "L2" : "DRAM");
        return;
    }
    v->bytes_basis = small ? "l2" : "dram";
    v->bytes_ratio = meas / e->bytes_moved;
    if (ct_off(v->bytes_ratio, o->model_factor)) {
        ct_worse(v, KG_CT_MODEL_WRONG);
        ct_note(v, "declared bytes_moved %.4g but measured %s bytes %.4g (%.2fx, allowed %gx)",
                e->bytes_moved, small ? "L1<->L2 (case fits in L2)" : "DRAM", meas,
                v->bytes_ratio, o->model_factor);
    }
}

static void ct_check_flops(kg_ct_verdict *v, const kg_ct_counts *c, const kg_ct_expect *e,
                           const kg_ct_decide_opts *o)
{
    v->flops_ratio = NAN;
    if (e->uses_tensor_cores) {
        ct_note(v, "tensor-core case: flops not compared with FP-instruction counts");
        return;
    }
    if (!isfinite(c->flops) || c->flops_partial) {
        ct_note(v, "FP counters %s: flops not checked", c->flops_partial && isfinite(c->flops)
                                                            ? "incomplete" : "unavailable");
        return;
    }
    if (!(e->flops > 0)) {
        if (c->flops > 1e6 && c->flops > (e->bytes_moved > 0 ? e->bytes_moved : 0)) {
            ct_worse(v, KG_CT_MODEL_WRONG);
            ct_note(v, "flops declared 0 but %.4g FP operations measured", c->flops);
        }
        return;
    }
    v->flops_ratio = c->flops / e->flops;
    if (ct_off(v->flops_ratio, o->model_factor)) {
        ct_worse(v, KG_CT_MODEL_WRONG);
        ct_note(v, "declared flops %.4g but measured %.4g (%.2fx, allowed %gx)", e->flops,
                c->flops, v->flops_ratio, o->model_factor);
    }
}

/* A count that must not grow beyond the mark by more than the tolerance. */
static void ct_check_growth(kg_ct_verdict *v, const char *what, double now, const kg_mark *m,
                            double tol)
{
    if (!m || !isfinite(now))
        return;
    if (now > m->value * (1 + tol) + 0.5) {
        ct_worse(v, KG_CT_REGRESSED);
        ct_note(v, "%s %.6g vs mark %.6g (+%.2f%%, tolerance %.2f%%)", what, now, m->value,
                100 * (now / m->value - 1), 100 * tol);
    }
}

static void ct_check_marks(kg_ct_verdict *v, const kg_ct_counts *c, const kg_ct_expect *e,
                           const kg_ct_decide_opts *o)
{
    ct_check_growth(v, "DRAM bytes/launch", c->dram_bytes, e->m_dram, o->tolerance_rel);
    ct_check_growth(v, "instructions/launch", c->v[KG_CT_INST], e->m_inst,
                    o->tolerance_rel);
    if (isfinite(c->spill) && c->spill > 0 && (!e->m_spill || e->m_spill->value == 0)) {
        ct_worse(v, KG_CT_REGRESSED);
        ct_note(v, "%.4g local-memory (spill) requests/launch where the %s had 0", c->spill,
                e->m_spill ? "mark" : "clean build");
    }
    bool want_tensor = e->uses_tensor_cores || (e->m_tensor && e->m_tensor->value > 0);
    if (want_tensor && isfinite(c->tensor) && c->tensor == 0) {
        ct_worse(v, KG_CT_REGRESSED);
        ct_note(v, "no tensor-pipe instructions in a case that %s",
                e->uses_tensor_cores ? "declares tensor cores" : "used them at its mark");
    }
    double occ = c->v[KG_CT_OCCUPANCY];
    if (e->m_occ && c->have[KG_CT_OCCUPANCY] && occ < e->m_occ->value - o->occupancy_step) {
        ct_worse(v, KG_CT_REGRESSED);
        ct_note(v, "achieved occupancy %.1f%% vs mark %.1f%% (step %.1f points)", occ,
                e->m_occ->value, o->occupancy_step);
    }
    double sys = c->sysmem_bytes;
    if (isfinite(sys) && sys > o->sysmem_floor_bytes &&
        (!e->m_sysmem || e->m_sysmem->value <= o->sysmem_floor_bytes)) {
        ct_worse(v, KG_CT_REGRESSED);
        ct_note(v, "%.4g bytes/launch of system-memory traffic appeared", sys);
    }
}

int kg_ct_decide(kg_ct_verdict *out, const kg_ct_counts *c, const kg_ct_expect *e,
                 const kg_ct_decide_opts *o)
{
    memset(out, 0, sizeof *out);
    out->bytes_ratio = out->flops_ratio = NAN;
    if (!c || c->n_kernels == 0) {
        out->decision = KG_CT_NO_DATA;
        snprintf(out->why, sizeof out->why, "no kernel was profiled");
        return 0;
    }
    out->decision = KG_CT_OK;
    ct_check_bytes(out, c, e, o);
    ct_check_flops(out, c, e, o);
    ct_check_marks(out, c, e, o);
    if (!out->why[0])
        snprintf(out->why, sizeof out->why, "work model and counters agree");
    return 0;
}
