/* Launch count and power state, pure (no GPU, no NVML): driven by the engine and by CPU tests.
 *
 * k: a mark's k wins (the figure a run compares with was measured at that k), else the bench
 * gate's --launches, else calibration rounded DOWN to a power of two (so nearby estimates give
 * the same k and the per-launch figure does not wander with it, issue #14); cold mode is k = 1.
 *
 * The power state: NVML polls (SM clock, clock-event reasons) every ~25 ms while the case runs
 * back-to-back. Steady: the last KG_POWER_WINDOW polls have the same reasons (the idle and
 * clock-setting bits left out) and SM clocks within KG_POWER_BAND_REL of each other. Held: every
 * poll while sampling had the steady state's reasons and a clock within the band around it. */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "bench/bench.h"

static const char *const pw_names[] = {
    "gpu_idle", "applications_clocks", "sw_power_cap", "hw_slowdown", "sync_boost",
    "sw_thermal", "hw_thermal", "hw_power_brake", "display_clocks"
};

const char *kg_power_reason_name(unsigned bit)
{
    return bit < KG_ARRAY_LEN(pw_names) ? pw_names[bit] : NULL;
}

const char *kg_bench_k_source_name(kg_k_source s)
{
    switch (s) {
    case KG_K_MARK: return "mark";
    case KG_K_FLAG: return "flag";
    case KG_K_COLD: return "cold";
    default: return "calibrated";
    }
}

int kg_bench_choose_k(kg_k_source *source, int mark_k, int flag_k, bool cold, double est_ms,
                      double min_replay_ms)
{
    if (cold) {
        *source = KG_K_COLD;
        return 1;
    }
    if (mark_k > 0) {
        *source = KG_K_MARK;
        return mark_k < KG_MAX_K ? mark_k : KG_MAX_K;
    }
    if (flag_k > 0) {
        *source = KG_K_FLAG;
        return flag_k < KG_MAX_K ? flag_k : KG_MAX_K;
    }
    *source = KG_K_CALIBRATED;
    if (!(est_ms > 0) || !(min_replay_ms > est_ms))
        return 1; /* one launch already lasts the replay (or nothing is known) */
    double want = ceil(min_replay_ms / est_ms);
    int k = 1;
    while (k < KG_MAX_K && 2.0 * k <= want)
        k *= 2;
    return k;
}

bool kg_power_steady(const kg_power_poll *p, size_t n)
{
    if (n < KG_POWER_WINDOW)
        return false;
    const kg_power_poll *w = p + n - KG_POWER_WINDOW;
    double lo = w[0].sm_mhz, hi = w[0].sm_mhz;
    for (size_t i = 0; i < KG_POWER_WINDOW; i++) {
        if (!w[i].ok || !(w[i].sm_mhz > 0))
            return false;
        if ((w[i].reasons & ~KG_POWER_IGNORED) != (w[0].reasons & ~KG_POWER_IGNORED))
            return false;
        lo = fmin(lo, w[i].sm_mhz);
        hi = fmax(hi, w[i].sm_mhz);
    }
    return hi - lo <= KG_POWER_BAND_REL * hi;
}

static size_t pw_join(char *buf, size_t n, unsigned long long r)
{
    size_t used = 0;
    buf[0] = '\0';
    for (unsigned b = 0; b < 64; b++) {
        if (!(r & (1ULL << b)))
            continue;
        const char *nm = kg_power_reason_name(b);
        char tmp[32];
        if (!nm) {
            snprintf(tmp, sizeof tmp, "bit%u", b);
            nm = tmp;
        }
        int w = snprintf(buf + used, n - used, "%s%s", used ? "+" : "", nm);
        if (w < 0 || (size_t)w >= n - used)
            break;
        used += (size_t)w;
    }
    return used;
}

void kg_power_label(char *buf, size_t n, bool have_nvml, unsigned long long reasons)
{
    const unsigned long long r = reasons & ~KG_POWER_IGNORED;
    const unsigned long long thermal = KG_POWER_SW_THERMAL | KG_POWER_HW_THERMAL;
    if (!have_nvml)
        snprintf(buf, n, "unknown");
    else if (r == 0)
        snprintf(buf, n, "full-clock");
    else if (r == KG_POWER_SW_POWER_CAP)
        snprintf(buf, n, "power-capped");
    else if ((r & thermal) && !(r & ~(thermal | KG_POWER_SW_POWER_CAP)))
        snprintf(buf, n, "thermal"); /* thermal, power cap or not: the heat is the cause */
    else {
        int w = snprintf(buf, n, "other:");
        if (w > 0 && (size_t)w < n)
            pw_join(buf + w, n - (size_t)w, r);
    }
}

void kg_power_track_begin(kg_power_track *t, kg_power_state *ps, const kg_power_poll *p,
                          size_t n)
{
    memset(t, 0, sizeof *t);
    t->ps = ps;
    ps->steady = kg_power_steady(p, n);
    ps->held = ps->steady;
    const kg_power_poll *last = n ? &p[n - 1] : NULL;
    ps->nvml = last && last->ok;
    ps->reasons = last ? last->reasons : 0;
    kg_power_label(ps->label, sizeof ps->label, ps->nvml, ps->reasons);
    /* The band: around the median of the last window (the state's own clock). */
    double w[KG_POWER_WINDOW];
    size_t m = 0;
    for (size_t i = n > KG_POWER_WINDOW ? n - KG_POWER_WINDOW : 0; i < n; i++)
        if (p[i].ok)
            w[m++] = p[i].sm_mhz;
    t->ref_mhz = m ? kg_stats_median(w, m) : NAN;
    ps->sm_min = ps->sm_median = ps->sm_max = NAN;
    ps->mem_mhz = ps->power_w = ps->temp_c = NAN;
}

void kg_power_track_add(kg_power_track *t, const kg_power_poll *p)
{
    kg_power_state *ps = t->ps;
    if (!p->ok)
        return;
    ps->polls++;
    if ((p->reasons & ~KG_POWER_IGNORED) != (ps->reasons & ~KG_POWER_IGNORED))
        ps->held = false;
    if (!(fabs(p->sm_mhz - t->ref_mhz) <= KG_POWER_BAND_REL * t->ref_mhz))
        ps->held = false;
    ps->sm_min = isfinite(ps->sm_min) ? fmin(ps->sm_min, p->sm_mhz) : p->sm_mhz;
    ps->sm_max = isfinite(ps->sm_max) ? fmax(ps->sm_max, p->sm_mhz) : p->sm_mhz;
    if (t->n < KG_POWER_MAX_POLLS)
        t->sm[t->n++] = p->sm_mhz;
    ps->mem_mhz = p->mem_mhz;
    ps->power_w = p->power_w;
    ps->temp_c = p->temp_c;
    ps->reasons_seen |= p->reasons;
}

void kg_power_track_end(kg_power_track *t)
{
    kg_power_state *ps = t->ps;
    if (t->n)
        ps->sm_median = kg_stats_median(t->sm, t->n);
    if (ps->polls == 0)
        ps->held = false; /* nothing observed while sampling: not shown to hold */
}
