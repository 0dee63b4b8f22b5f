/* Launch count and power state, pure (no GPU, no NVML): driven by the engine and by CPU tests.
 *
 * k: a mark's k wins (the figure a run compares with was measured at that k), else the bench
 * gate's --launches, else calibration rounded DOWN to a power of two (so nearby estimates give
 * the same k and the per-launch figure does not wander with it); cold mode is k = 1.
 *
 * The power state: the in-kernel clock probe is the truth, NVML is context (its reasons and
 * clocks lag the clock: docs/measurements/h200-bench.md). So the warm-up runs until the probe clock is steady
 * (kg_probe_steady), the label comes from the sampled probe clock relative to the max
 * (kg_power_label_probe: a coarse band, stable across processes), and NVML's polls are recorded
 * beside it (nvml_label, nvml_steady, nvml_held, reasons, power). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "bench/bench.h"

static const char *const pw_names[] = { "gpu_idle",    "applications_clocks", "sw_power_cap",
                                        "hw_slowdown", "sync_boost",          "sw_thermal",
                                        "hw_thermal",  "hw_power_brake",      "display_clocks" };

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
        if (w < 0 || (size_t)w >= n - used) {
            buf[used] = '\0'; /* whole names only: no "+sw_ther" at the end */
            break;
        }
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

void kg_power_track_begin(kg_power_track *t, kg_power_state *ps, const kg_power_poll *p, size_t n)
{
    memset(t, 0, sizeof *t);
    t->ps = ps;
    ps->nvml_steady = kg_power_steady(p, n);
    ps->nvml_held = ps->nvml_steady;
    const kg_power_poll *last = n ? &p[n - 1] : NULL;
    ps->nvml = last && last->ok;
    ps->reasons = last ? last->reasons : 0;
    ps->reasons_seen = 0;
    ps->nvml_near_limit = false;
    for (size_t i = 0; i < n; i++)
        if (p[i].ok) {
            ps->reasons_seen |= p[i].reasons;
            if (p[i].power_limit_w > 0 && p[i].power_w >= 0.95 * p[i].power_limit_w)
                ps->nvml_near_limit = true;
        }
    kg_power_label(ps->nvml_label, sizeof ps->nvml_label, ps->nvml, ps->reasons);
    /* The band: around the median of the last window (the state's own clock). */
    double w[KG_POWER_WINDOW];
    size_t m = 0;
    for (size_t i = n > KG_POWER_WINDOW ? n - KG_POWER_WINDOW : 0; i < n; i++)
        if (p[i].ok)
            w[m++] = p[i].sm_mhz;
    t->ref_mhz = m ? kg_stats_median(w, m) : NAN;
    ps->nvml_sm_min = ps->nvml_sm_median = ps->nvml_sm_max = NAN;
    ps->mem_mhz = ps->power_w = ps->power_limit_w = ps->temp_c = NAN;
    if (last && last->ok) {
        ps->mem_mhz = last->mem_mhz;
        ps->power_w = last->power_w;
        ps->power_limit_w = last->power_limit_w;
        ps->temp_c = last->temp_c;
    }
}

void kg_power_track_add(kg_power_track *t, const kg_power_poll *p)
{
    kg_power_state *ps = t->ps;
    if (!p->ok)
        return;
    ps->polls++;
    if ((p->reasons & ~KG_POWER_IGNORED) != (ps->reasons & ~KG_POWER_IGNORED))
        ps->nvml_held = false;
    if (!(fabs(p->sm_mhz - t->ref_mhz) <= KG_POWER_BAND_REL * t->ref_mhz))
        ps->nvml_held = false;
    ps->nvml_sm_min = isfinite(ps->nvml_sm_min) ? fmin(ps->nvml_sm_min, p->sm_mhz) : p->sm_mhz;
    ps->nvml_sm_max = isfinite(ps->nvml_sm_max) ? fmax(ps->nvml_sm_max, p->sm_mhz) : p->sm_mhz;
    if (t->n < KG_POWER_MAX_POLLS)
        t->sm[t->n++] = p->sm_mhz;
    ps->mem_mhz = p->mem_mhz;
    ps->power_w = p->power_w;
    ps->power_limit_w = p->power_limit_w;
    ps->temp_c = p->temp_c;
    ps->reasons_seen |= p->reasons;
    if (p->power_limit_w > 0 && p->power_w >= 0.95 * p->power_limit_w)
        ps->nvml_near_limit = true;
}

void kg_power_track_end(kg_power_track *t)
{
    kg_power_state *ps = t->ps;
    if (t->n)
        ps->nvml_sm_median = kg_stats_median(t->sm, t->n);
    if (ps->polls == 0)
        ps->nvml_held = false; /* nothing observed while sampling: not shown to hold */
}

/* ---- the probe ------------------------------------------------------------------------ */

kg_warm_rule kg_warm_rule_for(double max_mhz, double launch_us, bool compute_bound,
                              double override_min_s)
{
    kg_warm_rule w;
    w.max_mhz = max_mhz > 0 ? max_mhz : 0;
    w.heavy = launch_us >= KG_HEAVY_LAUNCH_US || compute_bound;
    w.min_s = override_min_s >= 0 ? override_min_s : (w.heavy ? KG_HEAVY_WARMUP_MIN_S : 0);
    w.max_s = fmax(KG_POWER_WARMUP_MAX_S, w.min_s);
    return w;
}

/* The trailing window r[j..n) spanning >= span_s with >= KG_PROBE_STEADY_N readings (j = the
 * latest such start); false when the readings do not reach back that far. */
static bool pw_window(const kg_clock_reading *r, size_t n, double span_s, size_t *j)
{
    if (n < KG_PROBE_STEADY_N)
        return false;
    for (size_t i = n - KG_PROBE_STEADY_N + 1; i-- > 0;)
        if (r[n - 1].t_s - r[i].t_s >= span_s - 1e-9) {
            *j = i;
            return true;
        }
    return false;
}

/* r[j..n) within band of its highest reading, all finite and > 0; lo: the lowest. */
static bool pw_in_band(const kg_clock_reading *r, size_t j, size_t n, double band, double *lo)
{
    double mn = INFINITY, mx = 0;
    for (size_t i = j; i < n; i++) {
        if (!(r[i].mhz > 0) || !isfinite(r[i].mhz))
            return false;
        mn = fmin(mn, r[i].mhz);
        mx = fmax(mx, r[i].mhz);
    }
    *lo = mn;
    return mx - mn <= band * mx;
}

static double pw_window_median(const kg_clock_reading *r, size_t j, size_t n)
{
    double *w = malloc((n - j) * sizeof *w);
    if (!w)
        return NAN; /* out of memory: no reference, so not held */
    for (size_t i = j; i < n; i++)
        w[i - j] = r[i].mhz;
    double m = kg_stats_median(w, n - j);
    free(w);
    return m;
}

bool kg_probe_steady(const kg_clock_reading *r, size_t n, const kg_warm_rule *w, double *ref_mhz)
{
    size_t j = 0;
    double lo = 0;
    *ref_mhz = NAN;
    if (n == 0 || r[n - 1].t_s < w->min_s - 1e-9)
        return false; /* a heavy case is never accepted before its cap could engage */
    /* at full clock: every reading within KG_PROBE_BAND_FULL of the max (the 1949 MHz plateau
     * of a recovery, 98.4% of 1980, is not the light case's own state) */
    if (pw_window(r, n, KG_PROBE_SPAN_FULL_S, &j) && pw_in_band(r, j, n, KG_PROBE_BAND_FULL, &lo) &&
        (w->max_mhz <= 0 || lo >= (1 - KG_PROBE_BAND_FULL) * w->max_mhz)) {
        *ref_mhz = pw_window_median(r, j, n);
        return true;
    }
    const double span = w->heavy ? KG_PROBE_SPAN_HEAVY_S : KG_PROBE_SPAN_LIGHT_S;
    if (w->max_mhz > 0 && pw_window(r, n, span, &j) &&
        pw_in_band(r, j, n, KG_PROBE_BAND_LOW, &lo)) {
        *ref_mhz = pw_window_median(r, j, n);
        return true;
    }
    return false;
}

bool kg_probe_warm_done(const kg_clock_reading *r, size_t n, const kg_warm_rule *w, bool *steady,
                        double *ref_mhz)
{
    *steady = kg_probe_steady(r, n, w, ref_mhz);
    return *steady || (n > 0 && r[n - 1].t_s >= w->max_s);
}

void kg_power_label_probe(char *buf, size_t n, double median_mhz, double max_mhz, bool heavy,
                          unsigned long long nvml_reasons, bool nvml_near_limit)
{
    const unsigned long long r = nvml_reasons & ~KG_POWER_IGNORED;
    if (!(median_mhz > 0) || !isfinite(median_mhz) || !(max_mhz > 0))
        snprintf(buf, n, "unknown");
    else if (median_mhz >= KG_FULL_CLOCK_FRAC * max_mhz)
        snprintf(buf, n, "full-clock");
    else if (r & (KG_POWER_SW_THERMAL | KG_POWER_HW_THERMAL))
        snprintf(buf, n, "thermal");
    else if (r & (KG_POWER_HW_SLOWDOWN | 0x80ULL /* hw_power_brake */))
        snprintf(buf, n, "throttled");
    else if ((r & KG_POWER_SW_POWER_CAP) || nvml_near_limit || heavy)
        snprintf(buf, n, "power-capped");
    else
        snprintf(buf, n, "throttled");
}

void kg_power_finish(kg_power_state *ps, const double *mhz, size_t n)
{
    double lo = INFINITY, hi = -INFINITY;
    double *c = malloc((n ? n : 1) * sizeof *c);
    size_t m = 0;
    for (size_t i = 0; i < n; i++)
        if (isfinite(mhz[i]) && mhz[i] > 0) {
            lo = fmin(lo, mhz[i]);
            hi = fmax(hi, mhz[i]);
            if (c)
                c[m++] = mhz[i];
        }
    ps->probe = m > 0;
    ps->sm_min = m ? lo : NAN;
    ps->sm_max = m ? hi : NAN;
    ps->sm_median = m ? kg_stats_median(c, m) : NAN;
    free(c);
    /* held: every sampled clock in the steady band around the warm-up's clock */
    const bool full = ps->max_mhz > 0 && ps->ref_mhz >= KG_FULL_CLOCK_FRAC * ps->max_mhz;
    const double band = (full || !(ps->max_mhz > 0)) ? KG_PROBE_BAND_FULL : KG_PROBE_BAND_LOW;
    ps->held = ps->steady && m > 0 && isfinite(ps->ref_mhz) &&
               ps->ref_mhz - lo <= band * ps->ref_mhz && hi - ps->ref_mhz <= band * ps->ref_mhz;
    kg_power_label_probe(ps->label, sizeof ps->label, ps->sm_median, ps->max_mhz, ps->heavy,
                         ps->reasons_seen, ps->nvml_near_limit);
}

/* ---- placements and clock normalisation (see bench.h) ----------------------------------- */

void kg_power_state_fold(kg_power_state *dst, const kg_power_state *src)
{
    dst->reasons_seen |= src->reasons_seen;
    dst->nvml_near_limit |= src->nvml_near_limit;
    dst->nvml_held = dst->nvml_held && src->nvml_held;
    dst->polls += src->polls;
    if (isfinite(src->nvml_sm_min))
        dst->nvml_sm_min = isfinite(dst->nvml_sm_min) ? fmin(dst->nvml_sm_min, src->nvml_sm_min)
                                                      : src->nvml_sm_min;
    if (isfinite(src->nvml_sm_max))
        dst->nvml_sm_max = isfinite(dst->nvml_sm_max) ? fmax(dst->nvml_sm_max, src->nvml_sm_max)
                                                      : src->nvml_sm_max;
    if (src->polls > 0) { /* the latest poll's figures */
        dst->mem_mhz = src->mem_mhz, dst->power_w = src->power_w, dst->temp_c = src->temp_c;
        dst->power_limit_w = src->power_limit_w;
    }
    dst->warmup_s += src->warmup_s;
    dst->warmup_readings += src->warmup_readings;
}

int kg_bench_placements_for(const kg_bench_opts *o, double launch_us, double warm_mhz,
                            double max_mhz)
{
    if (o->placements > 0)
        return o->placements < KG_BENCH_MAX_PLACEMENTS ? o->placements : KG_BENCH_MAX_PLACEMENTS;
    bool capped = max_mhz > 0 && !(warm_mhz >= KG_FULL_CLOCK_FRAC * max_mhz);
    return o->compute_bound && o->mode == 0 && launch_us >= KG_HEAVY_LAUNCH_US && capped
               ? KG_BENCH_PLACEMENTS
               : 1;
}

size_t kg_bench_placement_medians(double *pm, const double *kept, const unsigned char *drop,
                                  size_t taken, const size_t *starts, size_t n)
{
    double *tmp = malloc((taken ? taken : 1) * sizeof *tmp);
    size_t k = 0, found = 0;
    if (!tmp)
        return (size_t)-1;
    for (size_t p = 0; p < n; p++) {
        size_t end = p + 1 < n ? starts[p + 1] : taken, m = 0;
        for (size_t i = starts[p]; i < end && i < taken; i++)
            if (!drop[i])
                tmp[m++] = kept[k++];
        pm[p] = m ? kg_stats_median(tmp, m) : NAN;
        found += m > 0;
    }
    free(tmp);
    return found;
}

double kg_bench_placement_half(const double *pm, size_t n, double median)
{
    if (n < 2 || !(median > 0))
        return 0;
    double mean = 0, ss = 0;
    for (size_t i = 0; i < n; i++)
        mean += pm[i] / (double)n;
    for (size_t i = 0; i < n; i++)
        ss += (pm[i] - mean) * (pm[i] - mean);
    return KG_PLACEMENT_Z * sqrt(ss / (double)(n - 1)) / sqrt((double)n) / median;
}

size_t kg_bench_shim_bytes(uint64_t seed, int p)
{
    /* splitmix64 of (seed, p): a different size per placement, reproducible per --seed */
    uint64_t z = seed + 0x9e3779b97f4a7c15ULL * (uint64_t)(p + 1);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    z ^= z >> 31;
    return (size_t)(1 + z % 256) << 21;
}

size_t kg_bench_clock_normalise(double *normalised, const double *us, const double *window,
                                const unsigned char *drop, size_t n, double max_mhz)
{
    size_t m = 0;
    for (size_t i = 0; i < n; i++)
        if (!drop[i])
            normalised[m++] = us[i] * window[i] / max_mhz;
    return m;
}

size_t kg_bench_refloor(double *kept, unsigned char *drop, const double *us, const double *mhz,
                        size_t n, double floor_mhz)
{
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        drop[i] = isfinite(mhz[i]) && floor_mhz > 0 && mhz[i] < floor_mhz;
        if (!drop[i])
            kept[m++] = us[i];
    }
    return m;
}

double kg_clock_window_mhz(const unsigned long long *before, const unsigned long long *after,
                           size_t n_slots)
{
    double best = NAN;
    for (size_t j = 0; j < n_slots; j++) {
        const unsigned long long c0 = before[2 * j], t0 = before[2 * j + 1];
        const unsigned long long c1 = after[2 * j], t1 = after[2 * j + 1];
        if (t0 == 0 || t1 <= t0 || c1 <= c0) /* a slot no block reached (zeroed), or garbage */
            continue;
        double f = (double)(c1 - c0) * 1000.0 / (double)(t1 - t0); /* cycles per ns = GHz */
        if (f < 1e5 && !(f <= best))
            best = f;
    }
    return best;
}

/* ---- energy per launch (bench.h, kg_bench_energy_summarize) -------------------------------- */

const char *kg_energy_basis_name(kg_energy_basis b)
{
    return b == KG_ENERGY_PER_SAMPLE      ? "per-sample"
           : b == KG_ENERGY_PER_PLACEMENT ? "per-placement"
           : b == KG_ENERGY_WINDOW        ? "window"
                                          : "none";
}

/* Student's t, two-sided 95%, for df 1..10; 2.228 (df 10) beyond, which is conservative. */
static double pw_t975(size_t df)
{
    static const double t[] = { 12.706, 4.303, 3.182, 2.776, 2.571,
                                2.447,  2.365, 2.306, 2.262, 2.228 };
    return df == 0 ? INFINITY : t[(df < 10 ? df : 10) - 1];
}

/* The most power a figure may imply: margin x the enforced limit, KG_ENERGY_NO_LIMIT_W when
 * the limit is unknown. */
static double pw_cap(double limit_w, double margin)
{
    return isfinite(limit_w) && limit_w > 0 ? margin * limit_w : KG_ENERGY_NO_LIMIT_W;
}

void kg_bench_energy_window(kg_energy_summary *out, const double *t_s, const double *mj,
                            size_t n_edges, double launch_us, double limit_w)
{
    double sum = 0, sq = 0, span = 0, pmax = 0;
    size_t n = n_edges > 0 ? n_edges - 1 : 0;
    memset(out, 0, sizeof *out);
    if (n < KG_ENERGY_MIN_PERIODS || !(launch_us > 0))
        return;
    double cap = pw_cap(limit_w, KG_ENERGY_LIMIT_MARGIN);
    double pcap = pw_cap(limit_w, KG_ENERGY_PERIOD_MARGIN);
    for (size_t i = 0; i < n; i++) {
        double dt = t_s[i + 1] - t_s[i], de = mj[i + 1] - mj[i];
        if (!(dt > 0) || !(de >= 0))
            return;                /* the counter went back, or edges out of order: no figure */
        double w = de / dt * 1e-3; /* mJ/s -> W */
        sum += w;
        sq += w * w;
        span += dt;
        pmax = fmax(pmax, w);
    }
    double mean = (mj[n] - mj[0]) / span * 1e-3, pm = sum / (double)n;
    out->implied_w = mean;
    out->period_max_w = pmax;
    if (mean > cap || pmax > pcap) {
        out->implied_w = mean > cap ? mean : pmax;
        return; /* refused: the power kept for the note */
    }
    double var = (sq - sum * pm) / (double)(n - 1);
    double half = pw_t975(n - 1) * sqrt(fmax(0, var) / (double)n);
    out->basis = KG_ENERGY_WINDOW;
    out->per_launch_mj = mean * launch_us * 1e-3; /* W x us = uJ */
    out->spread_rel = fmin(0.999, fmax(half / mean, 0.25 * KG_ENERGY_POLL_S * n / span));
    out->units = n;
    out->total_mj = mj[n] - mj[0];
}

/* Per sample: each kept sample's mj / k (vals), the median and max(CI half, placement half). */
static int pw_energy_samples(kg_energy_summary *out, double *vals, size_t m,
                             const unsigned char *drop, size_t taken, const size_t *starts,
                             size_t np, double ci_level)
{
    int rc = 0;
    kg_summary s;
    double pm[KG_BENCH_MAX_PLACEMENTS], got[KG_BENCH_MAX_PLACEMENTS];
    KG_TRY(kg_stats_summarize(&s, vals, m, ci_level));
    size_t found = kg_bench_placement_medians(pm, vals, drop, taken, starts, np);
    if (found == (size_t)-1)
        return KG_ERR(KG_ENOMEM, "out of memory");
    size_t j = 0;
    for (size_t p = 0; p < np; p++)
        if (isfinite(pm[p]))
            got[j++] = pm[p];
    out->basis = KG_ENERGY_PER_SAMPLE;
    out->per_launch_mj = s.median;
    out->spread_rel = fmax((s.ci_hi - s.ci_lo) / (2 * s.median),
                           kg_bench_placement_half(got, j, s.median));
    out->units = m;
cleanup:
    return rc;
}

/* Per placement: each placement's kept deltas summed over its launches, those of at least
 * KG_ENERGY_MIN_MJ; the median and max(placement half, the counter's tick bound). */
static void pw_energy_placements(kg_energy_summary *out, const double *mj,
                                 const unsigned char *drop, size_t taken, const size_t *starts,
                                 size_t np, int k)
{
    double v[KG_BENCH_MAX_PLACEMENTS], tick = 0, total = 0;
    size_t j = 0;
    for (size_t p = 0; p < np; p++) {
        size_t end = p + 1 < np ? starts[p + 1] : taken, m = 0;
        double sum = 0;
        for (size_t i = starts[p]; i < end && i < taken; i++)
            if (!drop[i]) {
                sum += mj[i];
                tick = fmax(tick, mj[i]);
                m++;
            }
        if (m && sum >= KG_ENERGY_MIN_MJ) {
            v[j++] = sum / ((double)m * k);
            total += sum;
        }
    }
    if (!j || !(tick > 0))
        return;
    double med = kg_stats_median(v, j);
    out->basis = KG_ENERGY_PER_PLACEMENT;
    out->per_launch_mj = med;
    out->spread_rel = fmin(0.999, fmax(kg_bench_placement_half(v, j, med),
                                       KG_ENERGY_TICK_Z / sqrt(total / tick)));
    out->units = j;
}

int kg_bench_energy_summarize(kg_energy_summary *out, const double *mj, const unsigned char *drop,
                              size_t taken, const size_t *starts, size_t np, int k, double ci_level)
{
    int rc = 0;
    size_t m = 0;
    bool per_sample = true;
    double *vals = NULL;
    memset(out, 0, sizeof *out);
    if (!mj || !taken || k < 1 || np < 1 || np > KG_BENCH_MAX_PLACEMENTS)
        return 0;
    for (size_t i = 0; i < taken; i++) {
        if (drop[i])
            continue;
        if (!isfinite(mj[i]) || mj[i] < 0)
            return 0; /* a kept sample not read: no figure rather than a partial one */
        per_sample &= mj[i] >= KG_ENERGY_MIN_MJ;
        out->total_mj += mj[i];
        m++;
    }
    if (!m)
        return 0;
    if (!per_sample) {
        double total = out->total_mj;
        pw_energy_placements(out, mj, drop, taken, starts, np, k);
        out->total_mj = total;
        return 0;
    }
    if (!(vals = malloc(m * sizeof *vals)))
        return KG_ERR(KG_ENOMEM, "out of memory");
    for (size_t i = 0, j = 0; i < taken; i++)
        if (!drop[i])
            vals[j++] = mj[i] / k;
    KG_TRY(pw_energy_samples(out, vals, m, drop, taken, starts, np, ci_level));
cleanup:
    free(vals);
    return rc;
}

bool kg_bench_energy_plausible(double per_launch_mj, double measured_us, double power_limit_w,
                               double *implied_w)
{
    double w = measured_us > 0 ? per_launch_mj / measured_us * 1e3 : NAN; /* mJ/us = kW */
    double cap = pw_cap(power_limit_w, KG_ENERGY_LIMIT_MARGIN);
    *implied_w = w;
    return isfinite(w) && w > 0 && w <= cap;
}

void kg_bench_energy_note(char *buf, size_t n, int energy_rc, const kg_energy_summary *e)
{
    if (e->basis != KG_ENERGY_NONE)
        snprintf(buf, n, "%s", "");
    else if (energy_rc == KG_NVML_NO_LIBRARY)
        snprintf(buf, n,
                 "no NVML energy counter (libnvidia-ml.so.1 or "
                 "nvmlDeviceGetTotalEnergyConsumption absent): no energy per launch");
    else if (energy_rc == KG_NVML_NOT_SUPPORTED)
        snprintf(buf, n,
                 "NVML: the total-energy counter is not supported on this device "
                 "(NVML_ERROR_NOT_SUPPORTED): no energy per launch");
    else if (energy_rc == KG_NVML_IMPLAUSIBLE)
        snprintf(buf, n,
                 "NVML: the total-energy counter's deltas imply %.0f W over the timed "
                 "replays, more than the board can draw (its update period is longer than the "
                 "samples): no energy per launch",
                 e->implied_w);
    else if (energy_rc == KG_NVML_COUNTER_BACK)
        snprintf(buf, n,
                 "NVML: the total-energy counter read lower after a replay than before "
                 "it: no energy per launch");
    else if (energy_rc != 0)
        snprintf(buf, n,
                 "NVML: reading the total-energy counter failed (nvmlReturn_t %d): no "
                 "energy per launch",
                 energy_rc);
    else
        snprintf(buf, n,
                 "the timed replays drew less than %.0f mJ per placement (the counter's "
                 "resolution is 1 mJ): no energy per launch",
                 KG_ENERGY_MIN_MJ);
}
