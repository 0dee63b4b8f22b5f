/* The bench decision rule (see bench.h and docs/production-ci.md "Bench decision"). Pure: the
 * production pipeline reuses it and CPU tests drive it with synthetic samples. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "bench/bench.h"
#include "core/fleet.h"
#include "core/report_keys.h"

const char *kg_bench_decision_name(kg_bench_decision d)
{
    switch (d) {
    case KG_BENCH_NO_MARK: return KG_RV_DEC_NO_MARK;
    case KG_BENCH_SAME: return KG_RV_DEC_SAME;
    case KG_BENCH_IMPROVED: return KG_RV_DEC_IMPROVED;
    case KG_BENCH_REGRESSED: return KG_RV_DEC_REGRESSED;
    case KG_BENCH_UNPROVEN: return KG_RV_DEC_UNPROVEN;
    case KG_BENCH_STATE_DIFFERS: return KG_RV_DEC_STATE_DIFFERS;
    }
    return "?";
}

bool kg_bench_decision_fails(kg_bench_decision d) { return d == KG_BENCH_REGRESSED; }

bool kg_bench_verdict_fails(const kg_bench_verdict *v)
{
    return kg_bench_decision_fails(v->decision) || v->pay_gate == KG_PAY_FAILED;
}

bool kg_bench_state_decides(bool compute_bound) { return compute_bound; }

static bool bd_known(const char *s) { return s && *s && strcmp(s, "unknown") != 0; }

const char *kg_bench_pay_gate_name(kg_bench_pay_gate g)
{
    return g == KG_PAY_FAILED      ? "failed"
           : g == KG_PAY_REGRESSED ? "regressed"
           : g == KG_PAY_WITHIN    ? "within"
                                   : "not-gated";
}

bool kg_bench_state_normalised(const char *state)
{
    size_t n = state ? strlen(state) : 0, m = strlen(KG_STATE_NORMALISED_SUFFIX);
    return n > m && strcmp(state + n - m, KG_STATE_NORMALISED_SUFFIX) == 0;
}

/* A figure of what users pay, > 0 and finite, else 0 (unknown). */
static double bd_pay(double v) { return isfinite(v) && v > 0 ? v : 0; }

/* Orient a run value against the mark so that > 0 is worse. */
static double worse_rel(kg_direction dir, double run, double mark)
{
    return dir == KG_LOWER_IS_BETTER ? run / mark - 1.0 : mark / run - 1.0;
}

/* Significance of the shift in the delta's direction: a rank test against the mark's samples
 * when both sides have them, else the run's and the mark's intervals disjoint. */
static int bd_significance(kg_bench_verdict *out, const kg_mark *mark, const kg_bench_obs *run,
                           const double *mark_samples, size_t n_mark_samples,
                           const kg_decide_opts *o)
{
    kg_direction dir = mark->direction;
    bool worse = out->delta_rel > 0;
    if (mark_samples && n_mark_samples > 0 && run->samples && run->n_samples > 0) {
        kg_mwu_result u;
        int rc = kg_stats_mann_whitney(&u, run->samples, run->n_samples, mark_samples,
                                       n_mark_samples);
        if (rc < 0)
            return rc;
        /* For times "worse" is "run tends to be greater". */
        bool run_greater_is_worse = dir == KG_LOWER_IS_BETTER;
        out->p_value = (worse == run_greater_is_worse) ? u.p_greater : u.p_less;
        out->significant = out->p_value < o->alpha;
        out->test = "mann-whitney-u";
        return 0;
    }
    /* The mark's interval [ci_lo, ci_hi] against the run's: disjoint in the delta's
     * direction. Two disjoint 95% intervals mean p < ~0.01. */
    double mlo = fmin(mark->ci_lo, mark->value), mhi = fmax(mark->ci_hi, mark->value);
    if (dir == KG_LOWER_IS_BETTER)
        out->significant = worse ? run->ci_lo > mhi : run->ci_hi < mlo;
    else
        out->significant = worse ? run->ci_hi < mlo : run->ci_lo > mhi;
    out->test = "ci-disjoint";
    return 0;
}

/* The verdict's line, and what makes it no decision at all: a mark of another power state, a
 * mark without a measured cross-process spread (the figures stay: the report shows them).
 * out->decision holds the decision so far (the rule's, or the combination's); `rule` is the
 * rule's own; `lead` (may be "") what the combination says before the rule's figures. */
static void bd_why(kg_bench_verdict *out, const kg_mark *mark, const kg_decide_opts *o,
                   kg_bench_decision rule, const char *lead)
{
    int runs = mark->runs > 0 ? mark->runs : 1;
    int min_runs = o->min_mark_runs > 0 ? o->min_mark_runs : 1;
    char pre[240] = "";
    bool differs = bd_known(mark->power_state) && out->run_power_state[0] &&
                   strcmp(mark->power_state, out->run_power_state) != 0;
    if (differs && kg_bench_state_decides(out->compute_bound)) {
        snprintf(pre, sizeof pre,
                 "STATE_DIFFERS: mark measured %.63s, this run %.63s; the rule "
                 "alone: ",
                 mark->power_state, out->run_power_state);
        out->decision = KG_BENCH_STATE_DIFFERS;
    } else if (runs < min_runs) {
        snprintf(pre, sizeof pre,
                 "UNPROVEN: mark from %d process(es), needs %d; the rule "
                 "alone: ",
                 runs, min_runs);
        out->decision = KG_BENCH_UNPROVEN;
    }
    if (differs && !kg_bench_state_decides(out->compute_bound) &&
        out->decision != KG_BENCH_UNPROVEN)
        snprintf(pre, sizeof pre,
                 "decided on time (not compute-bound: the power state does "
                 "not set it; mark measured %.63s, this run %.63s): ",
                 mark->power_state, out->run_power_state);
    snprintf(out->why, sizeof out->why,
             "%s%s%s%s: %+.2f%% vs mark %.6g (CI %+.2f%%..%+.2f%%), tolerance %.2f%% = max(floor "
             "%.2f%%, mark spread %.2f%% over %d process(es) + run noise %.2f%%), %s %s",
             pre, lead, kg_bench_decision_name(rule),
             rule == KG_BENCH_IMPROVED && out->processes <= 1 ? " (unconfirmed: one process)" : "",
             100 * out->delta_rel, mark->value, 100 * out->ci_delta_lo, 100 * out->ci_delta_hi,
             100 * out->tolerance_rel, 100 * out->floor_rel, 100 * out->mark_noise_rel, runs,
             100 * out->run_noise_rel, out->test,
             out->significant ? "significant" : "not significant");
}

/* The rule on one obs (everything but the line): NO_MARK, SAME, IMPROVED or REGRESSED. */
static int bd_rule(kg_bench_verdict *out, const kg_mark *mark, const kg_bench_obs *run,
                   const double *mark_samples, size_t n_mark_samples, const kg_decide_opts *o)
{
    int rc = 0;
    memset(out, 0, sizeof *out);
    out->p_value = NAN;
    out->test = "none";
    out->processes = 1;
    if (!run || !(run->median > 0) || !(run->ci_lo > 0) || !(run->ci_lo <= run->median) ||
        !(run->median <= run->ci_hi) || !isfinite(run->ci_hi))
        return KG_ERR(KG_EINVAL, "bench decision: need 0 < ci_lo <= median <= ci_hi (finite)");
    out->run_k = run->k > 0 ? run->k : 0;
    out->compute_bound = run->compute_bound;
    if (bd_known(run->power_state))
        snprintf(out->run_power_state, sizeof out->run_power_state, "%s", run->power_state);
    out->run_noise_rel = (run->ci_hi - run->ci_lo) / (2.0 * run->median);
    out->run_measured = bd_pay(run->measured_median);
    out->run_measured_spread = out->run_measured ? fmax(0, run->measured_spread_rel) : 0;
    out->run_energy = bd_pay(run->energy_mj);
    out->run_energy_spread = out->run_energy ? fmax(0, run->energy_spread_rel) : 0;
    out->measured_change_rel = out->energy_change_rel = NAN;
    out->measured_tol_rel = out->energy_tol_rel = NAN;
    if (!mark) {
        out->decision = KG_BENCH_NO_MARK;
        snprintf(out->why, sizeof out->why, "no mark for this device class, case and metric");
        return 0;
    }
    if (!(mark->value > 0) || !isfinite(mark->value) || !(mark->band_rel >= 0))
        return KG_ERR(KG_EINVAL, "bench decision: mark value must be > 0 and band_rel >= 0");
    kg_direction dir = mark->direction;
    out->delta_rel = worse_rel(dir, run->median, mark->value);
    double a = worse_rel(dir, run->ci_lo, mark->value), b = worse_rel(dir, run->ci_hi, mark->value);
    out->ci_delta_lo = fmin(a, b);
    out->ci_delta_hi = fmax(a, b);
    out->mark_noise_rel = mark->band_rel;
    out->floor_rel = fmax(o->band_floor, o->abs_floor_us > 0 ? o->abs_floor_us / mark->value : 0);
    out->tolerance_rel = fmax(out->floor_rel, out->mark_noise_rel + out->run_noise_rel);
    KG_TRY(bd_significance(out, mark, run, mark_samples, n_mark_samples, o));
    if (out->delta_rel > out->tolerance_rel && out->significant)
        out->decision = KG_BENCH_REGRESSED;
    else if (out->delta_rel < -out->tolerance_rel && out->significant)
        out->decision = KG_BENCH_IMPROVED;
    else
        out->decision = KG_BENCH_SAME;
cleanup:
    return rc;
}

/* A capped run against a mark of another power state (STATE_DIFFERS): the times are of
 * different clocks, but the energy per launch is what users pay in either. A code change that
 * only draws more power is what moves a row into the cap (cuBLAS 8192^3 on a cold H100: the
 * zeros twin's mark full-clock, the random inputs power-capped; on the H200 the random inputs
 * drew twice the zeros' energy per launch), so the label must not hide it. Neither band holds across states, so the energy is gated at
 * the pay floor alone (beyond it: FAILED; the thermal spread is inside it), the time not at all. */
static void bd_pay_across_states(kg_bench_verdict *out, const kg_decide_opts *o, double me,
                                 char *text, size_t n)
{
    out->pay_gate = KG_PAY_WITHIN;
    out->energy_tol_rel = o->pay_floor;
    bool hungry = out->energy_change_rel > o->pay_floor;
    if (hungry)
        out->pay_gate = KG_PAY_FAILED;
    snprintf(text, n,
             "what users pay: measured time not gated (another power state); energy per launch "
             "%+.2f%% vs mark %.4g mJ (another power state: the %.0f%% pay floor alone)%s",
             100 * out->energy_change_rel, me, 100 * o->pay_floor, hungry ? " REGRESSED" : "");
}

/* Measured time and energy per launch against the mark's (bench.h, kg_bench_pay_gate): the
 * changes always when both sides have them; the bands, and REGRESSED, only on a normalised
 * compute-bound row the rule decided. *text: what the why says of it. */
static void bd_pay_rule(kg_bench_verdict *out, const kg_mark *mark, const kg_decide_opts *o,
                        char *text, size_t n)
{
    double mm = bd_pay(mark->measured_median_us), me = bd_pay(mark->energy_per_launch_mj);
    text[0] = '\0';
    if (out->run_measured && mm)
        out->measured_change_rel = out->run_measured / mm - 1;
    if (out->run_energy && me)
        out->energy_change_rel = out->run_energy / me - 1;
    if (!out->compute_bound || !kg_bench_state_normalised(out->run_power_state))
        return;
    if (out->decision == KG_BENCH_STATE_DIFFERS && out->run_energy && me) {
        bd_pay_across_states(out, o, me, text, n);
        return;
    }
    if (out->decision == KG_BENCH_STATE_DIFFERS || out->decision == KG_BENCH_UNPROVEN) {
        snprintf(text, n, "what users pay: not gated (no decision)");
        return;
    }
    if (!mm && !me) {
        snprintf(text, n,
                 "what users pay: not gated (the mark has no measured time or energy "
                 "per launch: set before they were recorded)");
        return;
    }
    out->pay_gate = KG_PAY_WITHIN;
    bool slow = false, hungry = false;
    int u = 0;
    /* The spread of r setter processes understates the next process's (a capped GEMM's measured
     * times vary ~1.2% across processes): widened by (r+1)/(r-1), as the prediction interval of
     * one more process is wider than the range of r. */
    int r = mark->runs > 1 ? mark->runs : 2;
    double widen = (r + 1.0) / (r - 1.0);
    if (out->run_measured && mm) {
        double floor = fmax(o->band_floor, o->abs_floor_us > 0 ? o->abs_floor_us / mm : 0);
        out->measured_tol_rel = fmax(floor, widen * fmax(0, mark->measured_spread_rel) +
                                                out->run_measured_spread);
        /* significant: the run's measured interval lies above the mark's */
        out->measured_significant = out->run_measured * (1 - out->run_measured_spread) >
                                    mm * (1 + fmax(0, mark->measured_spread_rel));
        slow = out->measured_change_rel > out->measured_tol_rel && out->measured_significant;
    }
    if (out->run_energy && me) {
        out->energy_tol_rel = fmax(o->band_floor, widen * fmax(0, mark->energy_spread_rel) +
                                                      out->run_energy_spread);
        hungry = out->energy_change_rel > out->energy_tol_rel;
    }
    u = snprintf(text, n, "what users pay:");
    if (isfinite(out->measured_tol_rel))
        u += snprintf(text + u, n - (size_t)u,
                      " measured time %+.2f%% vs mark %.6g us "
                      "(tolerance %.2f%%, %s)%s",
                      100 * out->measured_change_rel, mm, 100 * out->measured_tol_rel,
                      out->measured_significant ? "significant" : "not significant",
                      slow ? " REGRESSED" : "");
    else
        u += snprintf(text + u, n - (size_t)u, " measured time not gated (%s)",
                      mm ? "this run has none" : "the mark has none");
    if (u > 0 && (size_t)u < n && isfinite(out->energy_tol_rel))
        snprintf(text + u, n - (size_t)u,
                 "; energy per launch %+.2f%% vs mark %.4g mJ "
                 "(tolerance %.2f%%)%s",
                 100 * out->energy_change_rel, me, 100 * out->energy_tol_rel,
                 hungry ? " REGRESSED" : "");
    else if (u > 0 && (size_t)u < n)
        snprintf(text + u, n - (size_t)u, "; energy per launch not gated (%s)",
                 me ? "this run has none" : "the mark has none");
    /* Beyond the band: a WARNING; beyond the pay floor too (the thermal spread the band does
     * not cover, KG_PAY_FLOOR): a failure. */
    if (slow || hungry)
        out->pay_gate = KG_PAY_REGRESSED;
    if ((slow && out->measured_change_rel > o->pay_floor) ||
        (hungry && out->energy_change_rel > o->pay_floor))
        out->pay_gate = KG_PAY_FAILED;
}

/* The pay rule after the decision's line: a REGRESSED of its own leads the line, its figures
 * follow the rule's. */
static void bd_pay_why(kg_bench_verdict *out, const kg_mark *mark, const kg_decide_opts *o)
{
    char text[320], line[sizeof out->why + sizeof text + 160];
    bd_pay_rule(out, mark, o, text, sizeof text);
    if (!text[0])
        return;
    const char *which = isfinite(out->measured_change_rel) &&
                                out->measured_change_rel > out->measured_tol_rel &&
                                out->measured_significant
                            ? (isfinite(out->energy_change_rel) &&
                                       out->energy_change_rel > out->energy_tol_rel
                                   ? "measured time and energy per launch"
                                   : "measured time")
                            : "energy per launch";
    if (out->pay_gate == KG_PAY_FAILED)
        snprintf(line, sizeof line,
                 "%s; FAIL what users pay regressed (%s) beyond the bands "
                 "and the %.0f%% pay floor: %s",
                 out->why, which, 100 * o->pay_floor, text);
    else if (out->pay_gate == KG_PAY_REGRESSED)
        snprintf(line, sizeof line,
                 "%s; WARNING what users pay regressed (%s; within the %.0f%% "
                 "pay floor, the GPU's thermal spread beyond the marks' spread: not failing): %s",
                 out->why, which, 100 * o->pay_floor, text);
    else
        snprintf(line, sizeof line, "%s; %s", out->why, text);
    size_t l = strlen(line); /* the why's size at most: the end says the least */
    if (l >= sizeof out->why)
        l = sizeof out->why - 1;
    memcpy(out->why, line, l);
    out->why[l] = '\0';
}

int kg_bench_decide(kg_bench_verdict *out, const kg_mark *mark, const kg_bench_obs *run,
                    const double *mark_samples, size_t n_mark_samples, const kg_decide_opts *o)
{
    int rc = 0;
    kg_decide_opts d0 = KG_DECIDE_OPTS_INIT;
    if (!o)
        o = &d0;
    KG_TRY(bd_rule(out, mark, run, mark_samples, n_mark_samples, o));
    if (mark) {
        bd_why(out, mark, o, out->decision, "");
        bd_pay_why(out, mark, o);
    }
cleanup:
    return rc;
}

static int bd_cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double bd_median(double *x, size_t n)
{
    qsort(x, n, sizeof *x, bd_cmp);
    return n % 2 ? x[n / 2] : 0.5 * (x[n / 2 - 1] + x[n / 2]);
}

/* "1,3": the processes whose own decision is d; returns how many. */
static int bd_which(char *buf, size_t n, const kg_bench_verdict *pv, size_t np, kg_bench_decision d)
{
    int count = 0;
    size_t used = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < np; i++)
        if (pv[i].decision == d) {
            if (used + 8 < n)
                used += (size_t)snprintf(buf + used, n - used, "%s%zu", count ? "," : "", i + 1);
            count++;
        }
    if (!count)
        snprintf(buf, n, "none");
    return count;
}

/* The combined obs: median of the medians, noise max(median noise, half the spread), the
 * processes' common k and power state. `mixed` gets why they cannot be combined (or ""). */
static int bd_comb_obs(kg_bench_obs *c, double *elo, double *ehi, const kg_bench_obs *per, size_t n,
                       char *mixed, size_t nm)
{
    double med[KG_BENCH_MAX_PROCESSES], noise[KG_BENCH_MAX_PROCESSES];
    int kmin = 0, kmax = 0;
    memset(c, 0, sizeof *c);
    mixed[0] = '\0';
    *elo = *ehi = per[0].median;
    for (size_t i = 0; i < n; i++) {
        const kg_bench_obs *p = &per[i];
        if (!(p->median > 0) || !(p->ci_lo > 0) || !(p->ci_lo <= p->median) ||
            !(p->median <= p->ci_hi) || !isfinite(p->ci_hi))
            return KG_ERR(KG_EINVAL,
                          "bench combine: process %zu: need 0 < ci_lo <= median <= "
                          "ci_hi (finite)",
                          i + 1);
        med[i] = p->median;
        noise[i] = (p->ci_hi - p->ci_lo) / (2.0 * p->median);
        *elo = fmin(*elo, p->median);
        *ehi = fmax(*ehi, p->median);
        c->compute_bound |= p->compute_bound;
        if (bd_known(p->power_state) && !c->power_state)
            c->power_state = p->power_state;
        else if (bd_known(p->power_state) && strcmp(c->power_state, p->power_state) != 0 &&
                 kg_bench_state_decides(p->compute_bound) && !mixed[0])
            snprintf(mixed, nm,
                     "STATE_DIFFERS: the processes were measured in different power "
                     "states (%.63s, %.63s)",
                     c->power_state, p->power_state);
        if (p->k > 0 && (!kmin || p->k < kmin))
            kmin = p->k;
        if (p->k > kmax)
            kmax = p->k;
    }
    /* Separate processes calibrate k afresh and may land on neighbouring powers of two: those
     * time the same figure (H200, reduce_sum n=1000: k = 128, 256, 512 within 0.66%, the fixed
     * start of a replay <= 0.4% of a launch at 4 ms replays), so the mark pins the larger. k
     * further apart is not the same measurement. */
    c->k = kmax;
    if (kmax > 2 * kmin && !mixed[0])
        snprintf(mixed, nm,
                 "UNPROVEN: the processes timed k %d and %d launches per replay (more "
                 "than a factor 2 apart): pin k (a mark's k or --launches)",
                 kmin, kmax);
    c->median = bd_median(med, n);
    double nz = fmax(bd_median(noise, n), (*ehi - *elo) / (2.0 * c->median));
    c->ci_lo = c->median * (1.0 - nz);
    c->ci_hi = c->median * (1.0 + nz);
    return 0;
}

/* One pay figure of the combination: the median of the processes' figures and a
 * spread of max(their median spread, half the range of the figures); 0 unless every process
 * has it. v[i], sp[i]: the processes' figures and spreads (sorted here). */
static void bd_comb_pay1(double *med, double *spread, double *v, double *sp, size_t n)
{
    double lo = INFINITY, hi = 0;
    *med = *spread = 0;
    for (size_t i = 0; i < n; i++) {
        if (!(v[i] > 0) || !isfinite(v[i]))
            return;
        lo = fmin(lo, v[i]);
        hi = fmax(hi, v[i]);
    }
    *med = bd_median(v, n);
    *spread = fmin(0.999, fmax(bd_median(sp, n), (hi - lo) / (2.0 * *med)));
}

/* The combined obs's measured time and energy per launch from the processes' verdicts (what
 * each process's own decision read from its obs: the production step builds the obs of the
 * processes from their decided figures alone). */
static void bd_comb_pay(kg_bench_obs *c, const kg_bench_verdict *pv, size_t n)
{
    double v[KG_BENCH_MAX_PROCESSES], sp[KG_BENCH_MAX_PROCESSES];
    for (size_t i = 0; i < n; i++) {
        v[i] = pv[i].run_measured;
        sp[i] = pv[i].run_measured_spread;
    }
    bd_comb_pay1(&c->measured_median, &c->measured_spread_rel, v, sp, n);
    for (size_t i = 0; i < n; i++) {
        v[i] = pv[i].run_energy;
        sp[i] = pv[i].run_energy_spread;
    }
    bd_comb_pay1(&c->energy_mj, &c->energy_spread_rel, v, sp, n);
}

/* Confirmation: the combination's lead text and decision from the rule's decision on the
 * combined obs and every process's own. */
static void bd_confirm(kg_bench_verdict *out, const kg_bench_verdict *pv, size_t n, char *lead,
                       size_t nl)
{
    char who[96];
    int k;
    if (out->decision == KG_BENCH_REGRESSED) {
        k = bd_which(who, sizeof who, pv, n, KG_BENCH_REGRESSED);
        snprintf(lead, nl,
                 "over %zu processes (REGRESSED on their own: %d of %zu, process(es) "
                 "%s); combined ",
                 n, k, n, who);
    } else if (out->decision == KG_BENCH_IMPROVED) {
        k = bd_which(who, sizeof who, pv, n, KG_BENCH_IMPROVED);
        if ((size_t)k == n) {
            snprintf(lead, nl, "IMPROVED, confirmed by %zu of %zu processes; combined ", n, n);
        } else {
            snprintf(lead, nl,
                     "SAME: IMPROVED unconfirmed (only %d of %zu processes IMPROVED "
                     "on their own: %s); combined ",
                     k, n, who);
            out->decision = KG_BENCH_SAME;
        }
    } else {
        snprintf(lead, nl, "over %zu processes; combined ", n);
    }
}

int kg_bench_combine(kg_bench_verdict *out, kg_bench_obs *comb, const kg_mark *mark,
                     const kg_bench_obs *per, const kg_bench_verdict *pv, size_t n,
                     const kg_decide_opts *o)
{
    int rc = 0;
    kg_decide_opts d0 = KG_DECIDE_OPTS_INIT;
    char mixed[240], lead[240] = "";
    double elo, ehi;
    if (!o)
        o = &d0;
    if (n < 1 || n > KG_BENCH_MAX_PROCESSES || !per || !pv)
        return KG_ERR(KG_EINVAL, "bench combine: %zu process(es), need 1..%d", n,
                      KG_BENCH_MAX_PROCESSES);
    if (n == 1) { /* one process: its own verdict ("unconfirmed" when IMPROVED) */
        *comb = per[0];
        if (!(comb->measured_median > 0) && !(comb->energy_mj > 0))
            bd_comb_pay(comb, pv, 1);
        return kg_bench_decide(out, mark, comb, NULL, 0, o);
    }
    KG_TRY(bd_comb_obs(comb, &elo, &ehi, per, n, mixed, sizeof mixed));
    bd_comb_pay(comb, pv, n);
    KG_TRY(bd_rule(out, mark, comb, NULL, 0, o));
    out->processes = (int)n;
    out->env_lo = elo;
    out->env_hi = ehi;
    for (size_t i = 0; i < n; i++) {
        out->proc_median[i] = per[i].median;
        out->proc_decision[i] = pv[i].decision;
    }
    kg_bench_decision rule = out->decision;
    if (mixed[0]) {
        out->decision = strncmp(mixed, "STATE", 5) == 0 ? KG_BENCH_STATE_DIFFERS
                                                        : KG_BENCH_UNPROVEN;
        snprintf(out->why, sizeof out->why, "%s; never advances", mixed);
    } else if (mark) {
        bd_confirm(out, pv, n, lead, sizeof lead);
        bd_why(out, mark, o, rule, lead);
        bd_pay_why(out, mark, o);
    } else {
        snprintf(out->why, sizeof out->why,
                 "no mark for this device class, case and metric; "
                 "%zu processes, medians %.6g..%.6g",
                 n, elo, ehi);
    }
cleanup:
    return rc;
}

/* What the run was measured with and the processes behind the decision (the production step
 * and `marks advance --from-report` read them back: they set a mark's runs, spread, k, state). */
static void bd_processes_json(cJSON *o, const kg_bench_verdict *v)
{
    int n = v->processes > 0 ? v->processes : 1;
    if (v->run_k > 0)
        cJSON_AddNumberToObject(o, KG_FIG_RUN_K, v->run_k);
    if (v->run_power_state[0])
        cJSON_AddStringToObject(o, KG_FIG_RUN_POWER_STATE, v->run_power_state);
    cJSON_AddNumberToObject(o, KG_FIG_PROCESSES, n);
    if (n < 2)
        return;
    cJSON_AddNumberToObject(o, KG_FIG_ENV_LO, v->env_lo);
    cJSON_AddNumberToObject(o, KG_FIG_ENV_HI, v->env_hi);
    cJSON *med = cJSON_AddArrayToObject(o, KG_FIG_PROC_MEDIANS);
    cJSON *dec = cJSON_AddArrayToObject(o, KG_FIG_PROC_DECISIONS);
    for (int i = 0; med && dec && i < n && i < KG_BENCH_MAX_PROCESSES; i++) {
        cJSON_AddItemToArray(med, cJSON_CreateNumber(v->proc_median[i]));
        cJSON_AddItemToArray(dec, cJSON_CreateString(kg_bench_decision_name(v->proc_decision[i])));
    }
}

/* What users pay: the run's measured spread and energy per launch; with a mark,
 * the changes against its figures, the bands in force and whether they gated the row. */
static void bd_pay_json(cJSON *o, const kg_bench_verdict *v, const kg_mark *mark)
{
    if (v->run_measured > 0)
        cJSON_AddNumberToObject(o, KG_FIG_MEASURED_SPREAD, v->run_measured_spread);
    if (v->run_energy > 0) {
        cJSON_AddNumberToObject(o, KG_FIG_ENERGY_PER_LAUNCH, v->run_energy);
        cJSON_AddNumberToObject(o, KG_FIG_ENERGY_SPREAD, v->run_energy_spread);
    }
    if (!mark)
        return;
    if (isfinite(v->measured_change_rel))
        cJSON_AddNumberToObject(o, KG_FIG_MEASURED_CHANGE, v->measured_change_rel);
    if (isfinite(v->energy_change_rel))
        cJSON_AddNumberToObject(o, KG_FIG_ENERGY_CHANGE, v->energy_change_rel);
    if (isfinite(v->measured_tol_rel)) {
        cJSON_AddNumberToObject(o, KG_FIG_MEASURED_TOL, v->measured_tol_rel);
        cJSON_AddBoolToObject(o, KG_FIG_MEASURED_SIGNIFICANT, v->measured_significant);
    }
    if (isfinite(v->energy_tol_rel))
        cJSON_AddNumberToObject(o, KG_FIG_ENERGY_TOL, v->energy_tol_rel);
    cJSON_AddStringToObject(o, KG_FIG_PAY_GATE, kg_bench_pay_gate_name(v->pay_gate));
}

/* The mark's own figures of what users pay (absent in an older mark). */
static void bd_mark_pay_json(cJSON *m, const kg_mark *mark)
{
    if (mark->measured_median_us > 0) {
        cJSON_AddNumberToObject(m, KG_FIG_MEASURED_MEDIAN, mark->measured_median_us);
        cJSON_AddNumberToObject(m, KG_FIG_MEASURED_SPREAD, mark->measured_spread_rel);
    }
    if (mark->energy_per_launch_mj > 0) {
        cJSON_AddNumberToObject(m, KG_FIG_ENERGY_PER_LAUNCH, mark->energy_per_launch_mj);
        cJSON_AddNumberToObject(m, KG_FIG_ENERGY_SPREAD, mark->energy_spread_rel);
    }
}

cJSON *kg_bench_verdict_json(const kg_bench_verdict *v, const kg_mark *mark)
{
    cJSON *o = cJSON_CreateObject();
    if (!o)
        return NULL;
    cJSON_AddStringToObject(o, KG_FIG_DECISION, kg_bench_decision_name(v->decision));
    cJSON_AddNumberToObject(o, KG_FIG_RUN_NOISE, v->run_noise_rel);
    bd_processes_json(o, v);
    bd_pay_json(o, v, mark);
    if (!mark)
        return o;
    cJSON_AddNumberToObject(o, KG_FIG_DELTA, v->delta_rel);
    cJSON_AddNumberToObject(o, KG_FIG_CI_DELTA_LO, v->ci_delta_lo);
    cJSON_AddNumberToObject(o, KG_FIG_CI_DELTA_HI, v->ci_delta_hi);
    cJSON_AddNumberToObject(o, KG_FIG_TOLERANCE, v->tolerance_rel);
    cJSON_AddNumberToObject(o, KG_FIG_FLOOR, v->floor_rel);
    cJSON_AddNumberToObject(o, KG_FIG_MARK_NOISE, v->mark_noise_rel);
    cJSON_AddBoolToObject(o, KG_FIG_SIGNIFICANT, v->significant);
    cJSON_AddStringToObject(o, KG_FIG_TEST, v->test);
    if (isfinite(v->p_value))
        cJSON_AddNumberToObject(o, KG_FIG_P_VALUE, v->p_value);
    cJSON *m = cJSON_AddObjectToObject(o, KG_FIG_MARK);
    if (m) {
        cJSON_AddNumberToObject(m, KG_FIG_MARK_VALUE, mark->value);
        cJSON_AddNumberToObject(m, KG_FIG_BAND, mark->band_rel);
        cJSON_AddNumberToObject(m, KG_FIG_MARK_CI_LO, mark->ci_lo);
        cJSON_AddNumberToObject(m, KG_FIG_MARK_CI_HI, mark->ci_hi);
        cJSON_AddNumberToObject(m, KG_FIG_SAMPLES, mark->samples);
        cJSON_AddNumberToObject(m, KG_FIG_HP_RUNS, mark->runs > 0 ? mark->runs : 1);
        cJSON_AddStringToObject(m, KG_FIG_MARK_COMMIT, mark->commit ? mark->commit : "unknown");
        cJSON_AddStringToObject(m, KG_FIG_MARK_DATE, mark->date ? mark->date : "unknown");
        cJSON_AddStringToObject(m, KG_FIG_MARK_RUN_ID, mark->run_id ? mark->run_id : "unknown");
        if (mark->kernels)
            cJSON_AddStringToObject(m, KG_FIG_KERNELS, mark->kernels);
        if (mark->k > 0)
            cJSON_AddNumberToObject(m, KG_FIG_MARK_K, mark->k);
        if (bd_known(mark->power_state))
            cJSON_AddStringToObject(m, KG_FIG_MARK_POWER_STATE, mark->power_state);
        bd_mark_pay_json(m, mark);
    }
    cJSON_AddStringToObject(o, KG_FIG_WHY, v->why);
    return o;
}

void kg_bench_decide_opts_for(kg_decide_opts *dopt, const kg_bench_gate_opts *g,
                              const kg_case_desc *d)
{
    *dopt = (kg_decide_opts)KG_DECIDE_OPTS_INIT;
    if (g->band_floor > 0)
        dopt->band_floor = g->band_floor;
    else if (d && d->bench_band_floor > 0)
        dopt->band_floor = d->bench_band_floor;
    if (g->abs_floor_us > 0)
        dopt->abs_floor_us = g->abs_floor_us;
    if (g->min_mark_runs > 0)
        dopt->min_mark_runs = g->min_mark_runs;
}

/* ---- figures no kernel can reach ---------------------------------------------------------- */

/* The limit of one figure: ceiling x scale x (1 + the row's CI + the ceiling's spread +
 * KG_CEIL_HEADROOM); true (why set) when fig is above it. */
static bool bd_above(char *why, size_t n, const char *what, const char *unit, double fig,
                     double ceil, double scale, double slack, const char *hint)
{
    if (!(ceil > 0) || !isfinite(fig))
        return false;
    double limit = ceil * scale * (1.0 + slack);
    if (!(fig > limit))
        return false;
    snprintf(why, n,
             "%.6g %s is above the measured %s ceiling %.6g %s (limit %.6g %s with the "
             "row's CI, the ceiling's spread, %.0f%% headroom%s): no kernel can be that fast; "
             "%s",
             fig, unit, what, ceil, unit, limit, unit, 100 * KG_CEIL_HEADROOM,
             scale > 1 ? " and the clock the ceiling ran below max" : "", hint);
    return true;
}

bool kg_bench_ceiling_exceeded(char *why, size_t n, const kg_ceiling_obs *o)
{
    static const char hint[] = "is the work on another stream than the one timed, or the "
                               "declared bytes_moved/flops wrong?";
    double ci = isfinite(o->ci_rel) && o->ci_rel > 0 ? o->ci_rel : 0;
    double scale = isfinite(o->gemm_clock_scale) && o->gemm_clock_scale > 1 ? o->gemm_clock_scale
                                                                            : 1.0;
    double cs = isfinite(o->copy_spread_rel) && o->copy_spread_rel > 0 ? o->copy_spread_rel : 0;
    double gs = isfinite(o->gemm_spread_rel) && o->gemm_spread_rel > 0 ? o->gemm_spread_rel : 0;
    if (why && n)
        why[0] = '\0';
    if (o->dram && bd_above(why, n, "copy", "GB/s", o->gbps, o->copy_gbps, 1.0,
                            ci + cs + KG_CEIL_HEADROOM, hint))
        return true;
    return bd_above(why, n, "bf16 GEMM", "TFLOP/s", o->tflops, o->gemm_tflops, scale,
                    ci + gs + KG_CEIL_HEADROOM, hint);
}

const kg_mark *kg_bench_mark_on_gpu(kg_mark *tmp, const kg_mark *mark, const char *gpu_uuid,
                                    char *note, size_t n)
{
    if (n)
        note[0] = '\0';
    if (!mark || !mark->gpu_uuid || !gpu_uuid || strcmp(mark->gpu_uuid, gpu_uuid) == 0)
        return mark;
    *tmp = *mark;
    tmp->band_rel = kg_fleet_xgpu_band(note, n, mark->band_rel, mark->gpu_uuid, gpu_uuid,
                                       mark->xgpu_gpus >= 2 ? mark->xgpu_spread_rel : -1,
                                       (size_t)mark->xgpu_gpus);
    return tmp;
}
