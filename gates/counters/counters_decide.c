/* The counters decision (pure: no GPU, no files; tests/test_counters.c drives it). The rule is
 * in counters.h and docs/counters.md. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include "counters/counters.h"
#include "core/report_keys.h"

const char *kg_ct_decision_name(kg_ct_decision d)
{
    switch (d) {
    case KG_CT_OK: return KG_RV_CT_OK;
    case KG_CT_REGRESSED: return KG_RV_CT_REGRESSED;
    case KG_CT_MODEL_WRONG: return KG_RV_CT_MODEL_WRONG;
    case KG_CT_NO_DATA: return KG_RV_CT_NO_DATA;
    case KG_CT_NO_MARK: return KG_RV_CT_NO_MARK;
    case KG_CT_INVALID: return KG_RV_CT_INVALID;
    case KG_CT_EXCESS: return KG_RV_CT_EXCESS;
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

/* How bad a decision is: a worse finding replaces a milder one (NO_DATA is never set here). */
static int ct_severity(kg_ct_decision d)
{
    switch (d) {
    case KG_CT_EXCESS: return 1;
    case KG_CT_REGRESSED: return 2;
    case KG_CT_MODEL_WRONG: return 3;
    case KG_CT_INVALID: return 4;
    default: return 0;
    }
}

static void ct_worse(kg_ct_verdict *v, kg_ct_decision d)
{
    if (ct_severity(d) > ct_severity(v->decision))
        v->decision = d;
}

/* measured / declared outside [1/f, f]: the declaration is wrong. */
static bool ct_off(double ratio, double f)
{
    return isfinite(ratio) && (ratio > f || ratio < 1 / f);
}

/* Which measured bytes bytes_moved is the compulsory traffic of (NULL: not checkable, the reason
 * noted): too small (sector granularity), compute-bound (tiled kernels re-read their inputs),
 * DRAM when it is >= 2x L2, L1<->L2 for a smaller streaming (AI < 1) kernel. */
static const char *ct_bytes_basis(kg_ct_verdict *v, const kg_ct_expect *e,
                                  const kg_ct_decide_opts *o)
{
    double ai = e->flops > 0 ? e->flops / e->bytes_moved : 0;
    double ridge = o->ridge_ai > 0 ? o->ridge_ai : KG_CT_RIDGE_DEFAULT;
    if (e->bytes_moved < o->min_bytes) {
        ct_note(v, "bytes_moved %.4g < %.4g: too small to check (32 B sectors)", e->bytes_moved,
                o->min_bytes);
        return NULL;
    }
    if (ai >= ridge) {
        ct_note(v, "declared AI %.3g FLOP/B >= ridge %.3g: compute-bound, bytes not checked", ai,
                ridge);
        return NULL;
    }
    if (!(o->l2_bytes > 0) || e->bytes_moved >= 2 * o->l2_bytes)
        return "dram";
    if (ai < 1)
        return "l2";
    ct_note(v, "bytes_moved %.4g < 2x L2 and declared AI %.3g >= 1: L2-resident, not checked",
            e->bytes_moved, ai);
    return NULL;
}

static void ct_check_bytes(kg_ct_verdict *v, const kg_ct_counts *c, const kg_ct_expect *e,
                           const kg_ct_decide_opts *o)
{
    v->bytes_ratio = NAN;
    if (!(e->bytes_moved > 0)) {
        ct_note(v, "bytes_moved not declared: not checked");
        return;
    }
    const char *basis = ct_bytes_basis(v, e, o);
    if (!basis)
        return;
    bool l2 = strcmp(basis, "l2") == 0;
    double meas = l2 ? c->l2_bytes : c->dram_bytes;
    if (!isfinite(meas)) {
        ct_note(v, "%s bytes unavailable: bytes_moved not checked", l2 ? "L2" : "DRAM");
        return;
    }
    v->bytes_basis = basis;
    v->bytes_ratio = meas / e->bytes_moved;
    if (ct_off(v->bytes_ratio, o->model_factor)) {
        ct_worse(v, KG_CT_MODEL_WRONG);
        ct_note(v, "declared bytes_moved %.4g but measured %s bytes %.4g (%.2fx, allowed %gx)",
                e->bytes_moved, l2 ? "L1<->L2 (streaming, < 2x L2)" : "DRAM", meas, v->bytes_ratio,
                o->model_factor);
    } else {
        ct_note(v, "bytes %.2fx of declared (%s)", v->bytes_ratio, basis);
    }
}

/* Traffic beyond the declaration, whatever the bound (a naive SGEMM at 4096^3 moved 8597 MB
 * of DRAM against 268 MB declared): where bytes_moved was not already checked against DRAM
 * bytes, DRAM above model_factor x bytes_moved is a FAIL when the case declares its bytes
 * binding, else a WARN with the ratio (tiled GEMMs re-read their inputs: 1.67x at 4096^3). */
static void ct_check_excess(kg_ct_verdict *v, const kg_ct_counts *c, const kg_ct_expect *e,
                            const kg_ct_decide_opts *o)
{
    v->dram_ratio = NAN;
    if (!(e->bytes_moved >= o->min_bytes) || !isfinite(c->dram_bytes) ||
        (v->bytes_basis && strcmp(v->bytes_basis, "dram") == 0))
        return;
    v->dram_ratio = c->dram_bytes / e->bytes_moved;
    if (!(v->dram_ratio > o->model_factor))
        return;
    ct_worse(v, e->bytes_binding ? KG_CT_MODEL_WRONG : KG_CT_EXCESS);
    ct_note(v, "DRAM bytes %.4g are %.2fx the declared bytes_moved %.4g (allowed %gx)%s",
            c->dram_bytes, v->dram_ratio, e->bytes_moved, o->model_factor,
            e->bytes_binding ? ", which the case declares binding"
                             : ": excess traffic (FAIL where bytes_binding is set)");
}

static void ct_check_flops(kg_ct_verdict *v, const kg_ct_counts *c, const kg_ct_expect *e,
                           const kg_ct_decide_opts *o)
{
    v->flops_ratio = NAN;
    /* mostly tensor work: whole mma tiles run, a small GEMM pads (300x200x200: 1.83x) */
    bool tensor = c->tensor_flops > 0 && c->tensor_flops >= 0.5 * c->flops;
    double floor = tensor ? o->min_tensor_flops : o->min_flops;
    if (!(e->flops > 0)) {
        if (isfinite(c->flops))
            ct_note(v, "flops not declared: not checked (%.4g measured%s)", c->flops,
                    c->flops_partial ? ", a lower bound" : "");
        return;
    }
    if (e->flops < floor) {
        ct_note(v, "flops %.4g < %.4g%s: too small to check", e->flops, floor,
                tensor ? " (tensor tiles)" : "");
        return;
    }
    if (!isfinite(c->flops) || c->flops_partial) {
        ct_note(v, "FLOP counters %s: flops not checked",
                isfinite(c->flops) ? "incomplete (or tensor instructions without an ops-path count)"
                                   : "unavailable");
        return;
    }
    v->flops_ratio = c->flops / e->flops;
    if (ct_off(v->flops_ratio, o->model_factor)) {
        ct_worse(v, KG_CT_MODEL_WRONG);
        ct_note(v, "declared flops %.4g but measured %.4g (%.2fx, allowed %gx)", e->flops, c->flops,
                v->flops_ratio, o->model_factor);
    } else {
        ct_note(v, "flops %.2fx of declared", v->flops_ratio);
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

static bool ct_no_marks(const kg_ct_expect *e)
{
    return !e->m_dram && !e->m_inst && !e->m_spill && !e->m_occ && !e->m_tensor && !e->m_sysmem;
}

/* Spills: with marks, any where the mark had 0 (a case with counter marks but no spill mark
 * had none: a 0 is stored as no mark), or growth; without marks, only material local traffic
 * (a warp's local access is up to 128 B) counts: a few spill slots are legitimate. */
static void ct_check_spill(kg_ct_verdict *v, const kg_ct_counts *c, const kg_ct_expect *e,
                           const kg_ct_decide_opts *o)
{
    if (!isfinite(c->spill) || c->spill <= 0)
        return;
    if (!ct_no_marks(e)) {
        if (!e->m_spill || e->m_spill->value == 0) {
            ct_worse(v, KG_CT_REGRESSED);
            ct_note(v, "%.4g local-memory (spill) requests/launch where the mark had 0", c->spill);
        } else {
            ct_check_growth(v, "local-memory requests/launch", c->spill, e->m_spill,
                            o->tolerance_rel);
        }
        return;
    }
    double bytes = c->spill * 128, limit = o->spill_share * e->bytes_moved;
    if (limit < o->min_bytes)
        limit = o->min_bytes;
    if (bytes > limit) {
        ct_worse(v, KG_CT_REGRESSED);
        ct_note(v,
                "%.4g local-memory (spill) requests/launch, up to %.4g B > %.4g B (%.0f%% of "
                "bytes_moved, at least %.4g)",
                c->spill, bytes, limit, 100 * o->spill_share, o->min_bytes);
    } else {
        ct_note(v, "%.4g local-memory requests/launch (no mark; below %.4g B)", c->spill, limit);
    }
}

/* System memory: a GH100 kernel shows ~0.8 MB with no host memory touched (docs/counters.md),
 * so only traffic above the floor counts; with a mark: growth beyond rel + abs too. */
static void ct_check_sysmem(kg_ct_verdict *v, const kg_ct_counts *c, const kg_ct_expect *e,
                            const kg_ct_decide_opts *o)
{
    double sys = c->sysmem_bytes, limit = o->sysmem_floor_bytes;
    if (!isfinite(sys))
        return;
    if (e->m_sysmem && e->m_sysmem->value * (1 + o->sysmem_rel) + o->sysmem_abs > limit)
        limit = e->m_sysmem->value * (1 + o->sysmem_rel) + o->sysmem_abs;
    if (sys > limit) {
        ct_worse(v, KG_CT_REGRESSED);
        ct_note(v, "%.4g bytes/launch of system-memory traffic (read %.4g, write %.4g) > %.4g%s",
                sys, c->sysmem_read_bytes, c->sysmem_write_bytes, limit,
                e->m_sysmem ? " (mark + 25% + 1 MiB)" : "");
    }
}

static bool ct_dram_gated(const kg_ct_counts *c, const kg_ct_expect *e, const kg_ct_decide_opts *o)
{
    return o->l2_bytes > 0 && e->bytes_moved >= 2 * o->l2_bytes && c->dram_bytes >= o->min_bytes;
}

static void ct_check_marks(kg_ct_verdict *v, const kg_ct_counts *c, const kg_ct_expect *e,
                           const kg_ct_decide_opts *o)
{
    /* DRAM bytes are the compulsory traffic, reproducible to ~0.04%, only where the data
     * cannot stay in L2 (>= 2x L2). Below that they depend on what the L2 held: on the H200,
     * axpy n=1048579 (12.6 MB) read 1.26, 1.35 and 1.66 MB of DRAM in three processes, and a
     * second production run flagged five such cases at a 1% tolerance. Their instruction
     * counts are still gated. */
    bool dram_gated = ct_dram_gated(c, e, o);
    if (dram_gated)
        ct_check_growth(v, "DRAM bytes/launch", c->dram_bytes, e->m_dram, o->tolerance_rel);
    ct_check_growth(v, "instructions/launch", c->v[KG_CT_INST], e->m_inst, o->tolerance_rel);
    ct_check_spill(v, c, e, o);
    bool want_tensor = e->uses_tensor_cores || (e->m_tensor && e->m_tensor->value > 0);
    if (want_tensor && !isfinite(c->tensor))
        ct_note(v, "tensor-core use not checked: no hmma/gmma instruction counter here (the "
                   "generic tensor pipe also counts HFMA2)");
    if (want_tensor && isfinite(c->tensor) && c->tensor == 0) {
        ct_worse(v, KG_CT_REGRESSED);
        ct_note(v, "no tensor-core (hmma/gmma) instruction in a case that %s",
                e->uses_tensor_cores ? "declares tensor cores" : "used them at its mark");
    }
    double occ = c->v[KG_CT_OCCUPANCY];
    if (e->m_occ && c->have[KG_CT_OCCUPANCY] && occ < e->m_occ->value - o->occupancy_step) {
        ct_worse(v, KG_CT_REGRESSED);
        ct_note(v, "achieved occupancy %.1f%% vs mark %.1f%% (step %.1f points)", occ,
                e->m_occ->value, o->occupancy_step);
    }
    ct_check_sysmem(v, c, e, o);
}

/* Set (no mark) or moved (beaten by more than the regression margin): see KG_CT_MV_*. */
static bool ct_beats(const kg_mark *m, double now, double margin_lo)
{
    return isfinite(now) && now > 0 && (!m || now < margin_lo);
}

static unsigned ct_mark_moves(const kg_ct_counts *c, const kg_ct_expect *e,
                              const kg_ct_decide_opts *o, bool dram_gated)
{
    double tol = o->tolerance_rel;
    unsigned mv = 0;
    const kg_mark *m;
    if ((m = e->m_dram), ct_beats(m, c->dram_bytes, m && dram_gated ? m->value * (1 - tol) : 0))
        mv |= KG_CT_MV_DRAM;
    if ((m = e->m_inst), ct_beats(m, c->v[KG_CT_INST], m ? m->value * (1 - tol) : 0))
        mv |= KG_CT_MV_INST;
    if ((m = e->m_spill), ct_beats(m, c->spill, m ? m->value * (1 - tol) : 0))
        mv |= KG_CT_MV_SPILL;
    if ((m = e->m_sysmem),
        ct_beats(m, c->sysmem_bytes, m ? (m->value - o->sysmem_abs) / (1 + o->sysmem_rel) : 0))
        mv |= KG_CT_MV_SYSMEM;
    /* higher is better: beyond the occupancy step, or the tolerance for tensor instructions */
    double occ = c->have[KG_CT_OCCUPANCY] ? c->v[KG_CT_OCCUPANCY] : NAN;
    if ((m = e->m_occ), isfinite(occ) && occ > 0 && (!m || occ > m->value + o->occupancy_step))
        mv |= KG_CT_MV_OCC;
    if ((m = e->m_tensor),
        isfinite(c->tensor) && c->tensor > 0 && (!m || c->tensor > m->value * (1 + tol)))
        mv |= KG_CT_MV_TENSOR;
    return mv;
}

/* Counts that time nothing or cannot be true (true: out is INVALID with the reason). */
static bool ct_invalid(kg_ct_verdict *v, const kg_ct_counts *c, const kg_ct_expect *e,
                       const kg_ct_decide_opts *o)
{
    double ns = c->have[KG_CT_DURATION] ? c->v[KG_CT_DURATION] : NAN;
    double peak = o->dram_peak_bps * o->rate_slack;
    v->decision = KG_CT_INVALID;
    if (e->launch_empty) {
        ct_note(v, "the launch enqueued nothing on kgate's stream (a stream capture of it has "
                   "no node): is the work on stream 0 or another stream?");
    } else if (c->n_kernels == 0) {
        ct_note(v, "the profiled launch ran no kernel: is the work on another stream?");
    } else if (c->have[KG_CT_INST] && c->v[KG_CT_INST] == 0) {
        ct_note(v, "the profiled kernels executed no instruction: the range timed nothing");
    } else if (peak > 0 && ns > 0 && isfinite(c->dram_bytes) &&
               c->dram_bytes / (ns * 1e-9) > peak) {
        ct_note(v,
                "DRAM %.4g B in %.4g ns is %.4g GB/s, over the device's peak %.4g GB/s (x "
                "%g): the counts cannot be true",
                c->dram_bytes, ns, c->dram_bytes / ns, o->dram_peak_bps / 1e9, o->rate_slack);
    } else if (c->have[KG_CT_DRAM_PCT] && c->v[KG_CT_DRAM_PCT] > 100 * o->rate_slack) {
        ct_note(v, "DRAM throughput %.1f%% of peak: the counts cannot be true",
                c->v[KG_CT_DRAM_PCT]);
    } else {
        v->decision = KG_CT_OK;
        return false;
    }
    return true;
}

int kg_ct_decide(kg_ct_verdict *out, const kg_ct_counts *c, const kg_ct_expect *e,
                 const kg_ct_decide_opts *o)
{
    static const kg_ct_counts none = { 0 };
    memset(out, 0, sizeof *out);
    out->bytes_ratio = out->flops_ratio = out->dram_ratio = NAN;
    if (ct_invalid(out, c ? c : &none, e, o))
        return 0;
    ct_check_bytes(out, c, e, o);
    ct_check_excess(out, c, e, o);
    ct_check_flops(out, c, e, o);
    ct_check_marks(out, c, e, o);
    out->mark_moves = ct_mark_moves(c, e, o, ct_dram_gated(c, e, o));
    if (out->decision == KG_CT_OK && ct_no_marks(e))
        out->decision = KG_CT_NO_MARK;
    if (!out->why[0])
        snprintf(out->why, sizeof out->why, "work model and counters agree");
    return 0;
}
