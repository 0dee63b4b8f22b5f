/* Bench gate: time every selected case (bench_engine.c), measure the device's ceilings in the
 * same run (bench_ceiling.c), and decide each case against its high-water mark with the noise-
 * band rule (bench_decide.c). REGRESSED fails the gate; every row carries the figures that
 * produced its decision (bench_figures.c), and the report carries the full context. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "bench/bench.h"
#include "core/report_keys.h"

typedef struct {
    kg_bench_env *env;
    kg_bench_ceilings ceil;
    kg_bench_opts o;
    kg_decide_opts dopt;
    const kg_bench_gate_opts *g;
    char cls[320];
    cJSON *nvml_start;
    double w0;
    double l2_bytes; /* the device's L2: which working sets the copy ceiling bounds */
    char gpu[64];    /* this GPU's UUID: a mark set on another is judged wider */
} bg_state;

static double bg_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static const char *bg_metric(int mode) { return mode == 1 ? "time_us_cold" : "time_us_warm"; }

/* Roofline: compute-bound when the flops take longer at the GEMM ceiling than the bytes at the
 * copy ceiling. Without ceilings, an arithmetic intensity above 100 flop/byte. */
static bool bg_compute_bound(const kg_case_desc *d, const kg_bench_ceilings *c)
{
    if (!(d->flops > 0))
        return false;
    if (c->gemm_tflops > 0 && c->copy_gbps > 0)
        return d->flops / (c->gemm_tflops * 1e12) > d->bytes_moved / (c->copy_gbps * 1e9);
    return d->bytes_moved <= 0 || d->flops / d->bytes_moved > 100.0;
}

/* "a;b" from the CUPTI kernel list (for the mark's record). */
static void bg_kernel_names(const cJSON *ks, char *buf, size_t n)
{
    const cJSON *k;
    size_t used = 0;
    buf[0] = '\0';
    cJSON_ArrayForEach(k, ks) {
        const char *nm = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(k, KG_RK_TOOL_NAME));
        if (nm && used + strlen(nm) + 2 < n)
            used += (size_t)snprintf(buf + used, n - used, "%s%s", used ? ";" : "", nm);
    }
}

/* Without ceilings the cases still run; the % of ceiling figures are left out. */
static void bg_ceilings(bg_state *st, const kg_gate_env *env)
{
    if (kg_bench_measure_ceilings(&st->ceil, st->env, env->seed, &st->o) == 0)
        return;
    if (!env->quiet)
        printf("bench: ceilings not measured: %s\n", kg_error_last());
    cJSON *cd = st->ceil.detail;
    st->ceil.detail = NULL;
    kg_bench_ceilings_free(&st->ceil);
    st->ceil.detail = cd ? cd : cJSON_CreateObject();
    cJSON_AddStringToObject(st->ceil.detail, KG_RK_CEIL_ERROR, kg_error_last());
}

static int bg_begin(void **state, const void *opts, const kg_gate_env *env)
{
    int rc = 0;
    const kg_bench_gate_opts *g = opts;
    bg_state *st;
    *state = NULL;
    if (!env->dev)
        return 0; /* every case is SKIP */
    if (!(st = calloc(1, sizeof *st)))
        return KG_ERR(KG_ENOMEM, "out of memory starting the bench gate");
    st->o = (kg_bench_opts)KG_BENCH_OPTS_INIT;
    st->dopt = (kg_decide_opts)KG_DECIDE_OPTS_INIT;
    st->g = g;
    st->o.mode = g->mode;
    st->o.budget_s = g->budget_s > 0 ? g->budget_s : 1.0;
    st->o.flag_k = g->launches;
    st->o.warmup_min_s = g->warmup_min_s;
    st->o.placements = g->placements;
    if (g->band_floor > 0)
        st->dopt.band_floor = g->band_floor;
    if (g->min_mark_runs > 0)
        st->dopt.min_mark_runs = g->min_mark_runs;
    if (g->abs_floor_us > 0)
        st->dopt.abs_floor_us = g->abs_floor_us;
    kg_device_class(env->dev, st->cls, sizeof st->cls);
    snprintf(st->gpu, sizeof st->gpu, "%s", env->dev->uuid);
    st->l2_bytes = env->dev->l2_bytes > 0 ? env->dev->l2_bytes : 0;
    st->w0 = bg_now();
    *state = st; /* bg_end frees it, also after a failure here */
    KG_TRY(kg_bench_env_new(&st->env, env->dev, &st->o));
    st->nvml_start = kg_bench_env_nvml_json(st->env);
    bg_ceilings(st, env);
    if (!env->quiet)
        printf("bench: %s, mode %s, budget %.2f s/case, target CI %.2f%%, band floor %.2f%%; "
               "ceilings: copy %.0f GB/s, bf16 GEMM %.1f TFLOP/s\n",
               st->cls, st->o.mode ? "cold" : "warm", st->o.budget_s, 100 * st->o.target_ci_rel,
               100 * st->dopt.band_floor, st->ceil.copy_gbps, st->ceil.gemm_tflops);
cleanup:
    return rc;
}

void kg_bench_case_settings(kg_bench_opts *o, kg_decide_opts *dopt, const kg_bench_gate_opts *g,
                            const kg_case_desc *d)
{
    if (!(g->budget_s > 0) && d->bench_budget_s > 0)
        o->budget_s = d->bench_budget_s;
    if (!(g->band_floor > 0) && d->bench_band_floor > 0)
        dopt->band_floor = d->bench_band_floor;
}

/* The row's derived figures and context (for the table and the report). */
static void bg_derive(kg_bench_row *b, const kg_case_desc *d, const bg_state *st,
                      const kg_bench_opts *o)
{
    double sec = b->r.raw_sum.median * 1e-6; /* throughput at the clock it ran at */
    b->ci_pct = 100 * b->r.sum.ci_rel_width / 2;
    b->gbps = b->tflops = b->pct_copy = b->pct_gemm = NAN;
    if (sec > 0 && d->bytes_moved > 0) {
        b->gbps = d->bytes_moved / sec / 1e9;
        if (st->ceil.copy_gbps > 0)
            b->pct_copy = 100.0 * b->gbps / st->ceil.copy_gbps;
    }
    if (sec > 0 && d->flops > 0) {
        b->tflops = d->flops / sec / 1e12;
        if (st->ceil.gemm_tflops > 0)
            b->pct_gemm = 100.0 * b->tflops / st->ceil.gemm_tflops;
    }
    b->copy_gbps = st->ceil.copy_gbps;
    b->gemm_tflops = st->ceil.gemm_tflops;
    b->clock_floor_mhz = b->r.clock_floor_mhz; /* 0 for a row sampled without it */
    b->budget_s = o->budget_s;
    b->target_ci_rel = st->o.target_ci_rel;
    b->mode = st->o.mode;
    b->metric = bg_metric(st->o.mode);
    b->direction = KG_LOWER_IS_BETTER;
    snprintf(b->device_class, sizeof b->device_class, "%s", st->cls);
    bg_kernel_names(b->r.kernels, b->kernels, sizeof b->kernels);
}

/* Decide against the mark; the verdict and the one-line message. */
static int bg_decide(kg_bench_row *b, const kg_case_desc *d, const bg_state *st,
                     const kg_decide_opts *dopt, kg_case_result *res)
{
    int rc = 0;
    const kg_mark *mk = st->g->lookup ? st->g->lookup(st->g->marks, st->cls, d->id, b->metric)
                                      : NULL;
    kg_mark xg;
    char xnote[400];
    mk = kg_bench_mark_on_gpu(&xg, mk, st->gpu, xnote, sizeof xnote);
    kg_bench_obs obs = { b->r.sum.median,
                         b->r.sum.ci_lo,
                         b->r.sum.ci_hi,
                         b->r.kept_us,
                         b->r.kept,
                         b->compute_bound,
                         b->r.k,
                         b->r.power.probe ? b->r.decided_state : NULL,
                         .measured_median = b->r.raw_sum.median,
                         .measured_spread_rel = b->r.measured_spread_rel,
                         .energy_mj = b->r.energy.per_launch_mj,
                         .energy_spread_rel = b->r.energy.spread_rel };
    KG_TRY(kg_bench_decide(&b->v, mk, &obs, NULL, 0, dopt));
    if (mk) {
        b->have_mark = true;
        b->mark = *mk;
        b->mark.device_class = b->mark.case_id = b->mark.metric = NULL;
        b->mark.commit = b->mark.date = b->mark.run_id = NULL;
        b->mark.driver = b->mark.cuda = b->mark.set_by = b->mark.kernels = NULL;
        b->mark.gpu_uuid = b->mark.gpu_serial = NULL;
        snprintf(b->mark_kernels, sizeof b->mark_kernels, "%s", mk->kernels ? mk->kernels : "");
        /* e.g. cuBLAS picked another kernel than the mark's */
        b->kernels_changed = b->mark_kernels[0] && b->kernels[0] &&
                             strcmp(b->kernels, b->mark_kernels) != 0;
    }
    res->verdict = kg_bench_verdict_fails(&b->v) ? KG_VERDICT_FAIL : KG_VERDICT_PASS;
    if (res->verdict == KG_VERDICT_PASS && b->r.dropped * 2 > b->r.taken)
        res->verdict = KG_VERDICT_WARN;
    char blk[64] = "";
    if (b->r.block_timeouts)
        snprintf(blk, sizeof blk, "; %zu blocking-start timeouts", b->r.block_timeouts);
    char basis[96] = "", place[32] = "";
    if (b->r.clock_normalised)
        snprintf(basis, sizeof basis,
                 " clock-normalised to %.0f MHz (measured %.4g us at %.0f MHz in the replay)",
                 b->r.power.max_mhz, b->r.raw_sum.median, b->r.window_median);
    if (b->r.placements > 1 || b->r.placements_short)
        snprintf(place, sizeof place, ", %d placement(s)%s", b->r.placements,
                 b->r.placements_short ? " (short)" : "");
    snprintf(res->message, sizeof res->message,
             "%s; median %.4g us%s (CI %.4g..%.4g, n=%zu%s, %s); k=%d (%s); %s%s%s%s%s%s", b->v.why,
             b->r.sum.median, basis, b->r.sum.ci_lo, b->r.sum.ci_hi, b->r.kept, place, b->r.stop,
             b->r.k, kg_bench_k_source_name(b->r.k_source), b->r.power.label,
             b->r.power.probe && !b->r.power.steady ? " (not steady)" : "",
             b->r.power.steady && !b->r.power.held ? " (did not hold)" : "", blk,
             b->r.dropped ? "; throttled samples dropped" : "",
             b->kernels_changed ? "; kernels differ from the mark's" : "");
    if (xnote[0]) {
        size_t at = strlen(res->message);
        snprintf(res->message + at, sizeof res->message - at, "; %s", xnote);
    }
cleanup:
    return rc;
}

/* The per-sample arrays and the CUPTI/NVML records were allocated in the worker: the summary,
 * the decision and the context travel (what --save-marks and the production step read). */
static void bg_row_flatten(void *copy)
{
    kg_bench_result *r = &((kg_bench_row *)copy)->r;
    r->all_us = r->clock_mhz = r->window_mhz = r->kept_us = r->energy_mj = NULL;
    r->drop = NULL;
    r->kernels = r->nvml = NULL;
}

static void bg_row_free(void *data)
{
    kg_bench_row *b = data;
    if (b)
        kg_bench_result_free(&b->r);
    free(b);
}

/* The k the case's mark was measured with (0: no mark or none recorded). */
static int bg_mark_k(const bg_state *st, const kg_case_desc *d)
{
    const kg_mark *mk = st->g->lookup
                            ? st->g->lookup(st->g->marks, st->cls, d->id, bg_metric(st->o.mode))
                            : NULL;
    return mk && mk->k > 0 ? mk->k : 0;
}

/* A timing that cannot be true is ERROR, never a number: a replay CUPTI saw launch
 * no kernel (an empty graph already failed at capture), or figures above the measured ceilings
 * (kg_bench_ceiling_exceeded). */
static int bg_sanity(const kg_bench_row *b, const kg_case_desc *d, const bg_state *st)
{
    char why[480];
    if (b->r.replay_kernels == 0)
        return KG_ERR(KG_EINVAL,
                      "the replay launched no kernel: is the work on another stream? "
                      "(CUPTI traced one %s of %d launch(es) after sampling and saw no kernel; "
                      "the timed %.4g us per launch measured nothing)",
                      b->r.graph ? "graph replay" : "replay", b->r.k, b->r.raw_sum.median);
    kg_ceiling_obs co = { .gbps = b->gbps,
                          .tflops = b->tflops,
                          .ci_rel = b->r.raw_sum.ci_rel_width / 2,
                          .dram = st->l2_bytes > 0 && d->bytes_moved >= 2 * st->l2_bytes,
                          .copy_gbps = st->ceil.copy_gbps,
                          .copy_spread_rel = st->ceil.copy_spread_rel,
                          .gemm_tflops = st->ceil.gemm_tflops,
                          .gemm_spread_rel = st->ceil.gemm_spread_rel,
                          .gemm_clock_scale = st->ceil.gemm_clock_scale };
    if (kg_bench_ceiling_exceeded(why, sizeof why, &co))
        return KG_ERR(KG_EINVAL, "%s (median %.4g us per launch, k=%d)", why, b->r.raw_sum.median,
                      b->r.k);
    return 0;
}

static int bg_run_case(void *state, const kg_case_desc *d, const kg_gate_env *env,
                       kg_case_result *res)
{
    int rc = 0;
    bg_state *st = state;
    kg_bench_opts o;
    kg_decide_opts dopt;
    kg_bench_row *b = calloc(1, sizeof *b);
    if (!b)
        return KG_ERR(KG_ENOMEM, "out of memory for the bench result of '%s'", d->id);
    o = st->o;
    dopt = st->dopt;
    kg_bench_case_settings(&o, &dopt, st->g, d);
    o.mark_k = bg_mark_k(st, d);
    o.compute_bound = bg_compute_bound(d, &st->ceil); /* a heavy warm-up (kg_warm_rule_for) */
    /* kg_instance_open derives the per-case seed: the same inputs as parity for one --seed. */
    KG_TRY(kg_bench_time_case(&b->r, st->env, d, env->seed, env->device, &o));
    if (!b->r.have_sum) {
        rc = KG_ERR(KG_EINTERNAL, "every sample was dropped (throttled)");
        goto cleanup;
    }
    b->compute_bound = bg_compute_bound(d, &st->ceil);
    bg_derive(b, d, st, &o);
    KG_TRY(bg_sanity(b, d, st));
    KG_TRY(bg_decide(b, d, st, &dopt, res));
    res->data = b;
    b = NULL;
cleanup:
    bg_row_free(b);
    return rc;
}

static cJSON *bg_settings(const bg_state *st)
{
    cJSON *s = cJSON_CreateObject();
    cJSON_AddStringToObject(s, KG_RK_BS_MODE, st->o.mode ? "cold" : "warm");
    cJSON_AddNumberToObject(s, KG_RK_BS_BUDGET, st->o.budget_s);
    cJSON_AddNumberToObject(s, KG_RK_BS_MIN_SAMPLES, st->o.min_samples);
    cJSON_AddNumberToObject(s, KG_RK_BS_MAX_SAMPLES, st->o.max_samples);
    cJSON_AddNumberToObject(s, KG_RK_BS_TARGET_CI_REL, st->o.target_ci_rel);
    cJSON_AddNumberToObject(s, KG_RK_BS_CI_LEVEL, st->o.ci_level);
    cJSON_AddNumberToObject(s, KG_RK_BS_MIN_REPLAY_MS, st->o.min_replay_ms);
    cJSON_AddNumberToObject(s, KG_RK_BS_MIN_CLOCK_FRAC, st->o.min_clock_frac);
    cJSON_AddNumberToObject(s, KG_RK_BS_BAND_FLOOR, st->dopt.band_floor);
    cJSON_AddNumberToObject(s, KG_RK_BS_ABS_FLOOR, st->dopt.abs_floor_us);
    cJSON_AddNumberToObject(s, KG_RK_BS_MIN_MARK_RUNS, st->dopt.min_mark_runs);
    cJSON_AddStringToObject(s, KG_RK_BS_MARKS, st->g->marks_path ? st->g->marks_path : "(none)");
    return s;
}

/* The run-level record: settings, device class, ceilings, NVML before and after, wall time. */
static void bg_record(bg_state *st, const kg_gate_env *env, double wall)
{
    cJSON *b = cJSON_CreateObject();
    if (!b)
        return;
    cJSON_AddItemToObject(b, KG_RK_BENCH_SETTINGS, bg_settings(st));
    cJSON_AddStringToObject(b, KG_RK_BENCH_DEVICE_CLASS, st->cls);
    cJSON *ce = cJSON_AddObjectToObject(b, KG_RK_BENCH_CEILINGS);
    cJSON_AddNumberToObject(ce, KG_RK_CEIL_COPY_GBPS, st->ceil.copy_gbps);
    cJSON_AddNumberToObject(ce, KG_RK_CEIL_GEMM_TFLOPS, st->ceil.gemm_tflops);
    if (st->ceil.detail) {
        cJSON_AddItemToObject(ce, KG_RK_CEIL_DETAIL, st->ceil.detail);
        st->ceil.detail = NULL;
    }
    if (st->nvml_start)
        cJSON_AddItemToObject(b, KG_RK_BENCH_NVML_START, st->nvml_start);
    st->nvml_start = NULL;
    cJSON *ne = st->env ? kg_bench_env_nvml_json(st->env) : NULL;
    if (ne)
        cJSON_AddItemToObject(b, KG_RK_BENCH_NVML_END, ne);
    cJSON_AddNumberToObject(b, KG_RK_BENCH_WALL, wall);
    kg_report_set_extra(env->rep, KG_RK_BENCH, b);
}

static int bg_end(void *state, const kg_gate_env *env, int rc)
{
    bg_state *st = state;
    if (!st)
        return 0;
    double wall = bg_now() - st->w0;
    if (rc == 0) {
        bg_record(st, env, wall);
        if (!env->quiet)
            printf("bench: wall time %.1f s\n", wall);
    }
    cJSON_Delete(st->nvml_start);
    kg_bench_ceilings_free(&st->ceil);
    kg_bench_env_free(st->env);
    free(st);
    return 0;
}

static int bg_opt_mode(void *opts, const char *v)
{
    kg_bench_gate_opts *o = opts;
    if (v && strcmp(v, "warm") == 0)
        o->mode = 0;
    else if (v && strcmp(v, "cold") == 0)
        o->mode = 1;
    else
        return KG_ERR(KG_EINVAL, "--mode: expected warm or cold, got '%s'", v ? v : "");
    return 0;
}

/* A value in (lo, hi]; the messages are the ones the CLI tests check. */
static int bg_double(const char *flag, const char *v, double lo, double hi, const char *what,
                     double *out)
{
    int rc = 0;
    double x = 0;
    KG_TRY(kg_parse_double(flag, v, &x));
    if (!(x > lo && x <= hi))
        return KG_ERR(KG_EINVAL, "%s: expected %s, got '%s'", flag, what, v);
    *out = x;
cleanup:
    return rc;
}

static int bg_opt_budget(void *opts, const char *v)
{
    return bg_double("--budget", v, 0, 3600, "seconds in (0, 3600]",
                     &((kg_bench_gate_opts *)opts)->budget_s);
}

static int bg_opt_band_floor(void *opts, const char *v)
{
    return bg_double("--band-floor", v, 0, 0.999999999, "a relative tolerance in (0, 1), e.g. 0.01",
                     &((kg_bench_gate_opts *)opts)->band_floor);
}

/* Removed (the tolerance comes from the mark's measured spread): an error, so
 * a pipeline still passing it learns so instead of silently deciding differently. */
static int bg_opt_compute_floor(void *opts, const char *v)
{
    (void)opts;
    return KG_ERR(KG_EINVAL,
                  "--compute-floor %s: removed: no fixed floor for "
                  "compute-bound cases any more; the tolerance is max(--band-floor, "
                  "--abs-floor, the mark's spread across the processes that set it + "
                  "run noise): drop the flag",
                  v ? v : "");
}

static int bg_opt_min_mark_runs(void *opts, const char *v)
{
    int rc = 0;
    double x = 0;
    KG_TRY(bg_double("--min-mark-runs", v, 0, 1000, "an integer in [1, 1000]", &x));
    if (x != (int)x)
        return KG_ERR(KG_EINVAL, "--min-mark-runs: expected an integer in [1, 1000], got '%s'", v);
    ((kg_bench_gate_opts *)opts)->min_mark_runs = (int)x;
cleanup:
    return rc;
}

static int bg_opt_abs_floor(void *opts, const char *v)
{
    return bg_double("--abs-floor", v, 0, 1000, "microseconds in (0, 1000]",
                     &((kg_bench_gate_opts *)opts)->abs_floor_us);
}

static int bg_opt_launches(void *opts, const char *v)
{
    double x = 0;
    int rc = bg_double("--launches", v, 0, KG_MAX_K, "launches per replay, an integer in [1, 1024]",
                       &x);
    if (rc == 0 && x != floor(x))
        rc = KG_ERR(KG_EINVAL,
                    "--launches: expected launches per replay, an integer in "
                    "[1, 1024], got '%s'",
                    v);
    if (rc == 0)
        ((kg_bench_gate_opts *)opts)->launches = (int)x;
    return rc;
}

static int bg_opt_placements(void *opts, const char *v)
{
    double x = 0;
    int rc = bg_double("--placements", v, 0, KG_BENCH_MAX_PLACEMENTS,
                       "fresh-buffer placements, an integer in [1, 8]", &x);
    if (rc == 0 && x != floor(x))
        rc = KG_ERR(KG_EINVAL,
                    "--placements: expected fresh-buffer placements, an integer in "
                    "[1, %d], got '%s'",
                    KG_BENCH_MAX_PLACEMENTS, v);
    if (rc == 0)
        ((kg_bench_gate_opts *)opts)->placements = (int)x;
    return rc;
}

static int bg_opt_warmup_min(void *opts, const char *v)
{
    int rc = 0;
    double x = 0;
    KG_TRY(kg_parse_double("--warmup-min", v, &x));
    if (!(x >= 0 && x <= 10))
        return KG_ERR(KG_EINVAL, "--warmup-min: expected seconds in [0, 10], got '%s'", v);
    ((kg_bench_gate_opts *)opts)->warmup_min_s = x;
cleanup:
    return rc;
}

static const kg_opt bg_opts[] = {
    { .name = "marks",
      .value_name = "FILE",
      .kind = KG_OPT_STRING,
      .flags = KG_OPT_F_STANDALONE,
      .offset = offsetof(kg_bench_gate_opts, marks_path),
      .help = "high-water marks to decide against (default: $KGATE_MARKS, else none)" },
    { .name = "marks-ref",
      .value_name = "REF",
      .kind = KG_OPT_STRING,
      .flags = KG_OPT_F_STANDALONE,
      .offset = offsetof(kg_bench_gate_opts, marks_ref),
      .help = "read the marks file at REF (e.g. origin/kgate-marks), not the work tree's" },
    KG_OPT_FN_("mode", "warm|cold", bg_opt_mode, 0,
               "warm (default) or cold (L2 flushed before "
               "every sample)"),
    KG_OPT_FN_("budget", "SECONDS", bg_opt_budget, 0,
               "timing budget per case (default: the case's bench_budget_s, else 1)"),
    KG_OPT_FN_("band-floor", "F", bg_opt_band_floor, 0,
               "relative tolerance floor (default: the case's bench_band_floor, else 0.005)"),
    KG_OPT_FN_("compute-floor", "F", bg_opt_compute_floor, KG_OPT_F_HIDDEN,
               "removed: an error; the tolerance comes from the marks' spread"),
    KG_OPT_FN_("min-mark-runs", "N", bg_opt_min_mark_runs, 0,
               "a mark merged from fewer separate processes decides UNPROVEN (default 3)"),
    KG_OPT_FN_("abs-floor", "US", bg_opt_abs_floor, 0,
               "absolute floor in microseconds (default 0.4)"),
    KG_OPT_FN_("launches", "K", bg_opt_launches, KG_OPT_F_STANDALONE,
               "launches per timed replay, for experiments and the k-independence check "
               "(scripts/k-independence.sh); a mark's own k wins (default: calibrated)"),
    KG_OPT_FN_("placements", "N", bg_opt_placements, KG_OPT_F_STANDALONE,
               "fresh-buffer placements of every case, for experiments (default: 3 for a "
               "capped compute-bound case of >= 50 us a launch, else 1)"),
    KG_OPT_FN_("warmup-min", "S", bg_opt_warmup_min, KG_OPT_F_STANDALONE,
               "minimum back-to-back warm-up of every case and ceiling, for experiments "
               "(default: 0.3 s for heavy cases, else none; the cap is max(1.5, S))"),
    { .name = "save-marks",
      .value_name = "FILE",
      .kind = KG_OPT_STRING,
      .flags = KG_OPT_F_STANDALONE,
      .offset = offsetof(kg_bench_gate_opts, save_marks),
      .help = "merge this run's medians into FILE (never the committed marks)" },
};
static const kg_bench_gate_opts bg_opts_init = KG_BENCH_GATE_OPTS_INIT;

/* The watchdog: setup, ceilings on a fresh worker, warm-up and the timing budget, with room. */
static double bg_case_timeout_s(const void *opts)
{
    double b = ((const kg_bench_gate_opts *)opts)->budget_s;
    return 60.0 + 20.0 * (b > 0 ? b : 1.0);
}

static const char bg_description[] =
    "Time every selected case: warm-up, a CUDA graph of k launches (one replay >= 4 ms) timed\n"
    "with CUDA events, at least 15 samples, until the 95% CI of the median is narrower than\n"
    "0.5% or the per-case budget (default 1 s) runs out. Cold mode flushes L2 before every\n"
    "sample (one launch per sample). Samples taken below 70% of the max SM clock are dropped\n"
    "(not those of a clock-normalised row, below).\n"
    "k <= 1024: the mark's, else --launches, else calibrated down to a power of two. Every\n"
    "replay starts behind a blocking kernel the host releases once it has submitted it. Before\n"
    "sampling the case runs back-to-back until the in-kernel clock probe reads a steady SM\n"
    "clock (at least 0.3 s for heavy cases: a launch >= 50 us or compute-bound; at most 1.5 s);\n"
    "the state (full-clock, power-capped, thermal, throttled, unknown) from the probe clock is\n"
    "in each row, NVML's reasons beside it. A capped compute-bound case (>= 50 us a launch) is\n"
    "timed on 3 fresh-buffer placements and decided on clock-normalised time (time x the SM\n"
    "clock during the replay, from stamps before and after it, / max clock), with a\n"
    "placement-level interval; its measured times are reported.\n"
    "Ceilings (1 GiB device copy, 8192^3 bf16 cuBLAS GEMM) are measured in the same run.\n"
    "\n"
    "Each case is decided against its mark in --marks (device class, case, metric):\n"
    "REGRESSED (fails) when slower beyond max(floor, mark spread + run noise) and significant,\n"
    "IMPROVED when faster beyond it, SAME otherwise, NO_MARK without a mark. Floors: --band-floor\n"
    "(default 0.005), --abs-floor in us (0.4: timer and launch jitter of tiny kernels); the mark\n"
    "spread is measured across the processes that set it. A mark merged from fewer than\n"
    "--min-mark-runs (3) processes is UNPROVEN, one of another power state STATE_DIFFERS: no\n"
    "decision, not a failure. IMPROVED from one process is unconfirmed (never advances).\n"
    "--save-marks FILE merges this run's medians into FILE (for proofs and A/B; never the\n"
    "committed marks, which only `run --production` advances).\n";

/* The marks (gate.h): the slots of the options, and the mark one row sets (--save-marks). */
static void bg_marks_slots(void *opts, kg_gate_marks_slots *out)
{
    kg_bench_gate_opts *o = opts;
    *out = (kg_gate_marks_slots){ .path = &o->marks_path,
                                  .ref = &o->marks_ref,
                                  .save = &o->save_marks,
                                  .lookup = &o->lookup,
                                  .marks = &o->marks };
}

static size_t bg_row_marks(kg_mark *out, size_t max, const kg_case_desc *d, const void *data,
                           const kg_mark *stamp)
{
    const kg_bench_row *b = data;
    const kg_summary *s = &b->r.sum;
    kg_mark *mk = out;
    if (max < 1)
        return 0;
    *mk = *stamp; /* the provenance; the rest is the row's */
    mk->device_class = (char *)b->device_class;
    mk->case_id = (char *)d->id;
    mk->metric = (char *)b->metric;
    mk->direction = KG_LOWER_IS_BETTER;
    mk->value = mk->run_median = s->median;
    mk->ci_lo = s->ci_lo;
    mk->ci_hi = s->ci_hi;
    mk->band_rel = (s->ci_hi - s->ci_lo) / (2 * s->median);
    mk->samples = (int)b->r.kept;
    mk->runs = 1;
    mk->kernels = b->kernels[0] ? (char *)b->kernels : NULL;
    /* What the row was measured with: a later run against this mark reuses k, and compares
     * only within its power state. */
    mk->k = b->v.run_k;
    mk->power_state = b->v.run_power_state[0] ? (char *)b->v.run_power_state : NULL;
    /* What users pay: gated beside a replay-clock-normalised value. */
    mk->measured_median_us = b->v.run_measured;
    mk->measured_spread_rel = b->v.run_measured ? b->v.run_measured_spread : 0;
    mk->energy_per_launch_mj = b->v.run_energy;
    mk->energy_spread_rel = b->v.run_energy ? b->v.run_energy_spread : 0;
    if (b->v.processes >= 2) {
        mk->runs = b->v.processes;
        mk->env_lo = b->v.env_lo;
        mk->env_hi = b->v.env_hi;
    }
    return 1;
}

static const struct kg_gate_marks bg_marks = { .slots = bg_marks_slots, .row_marks = bg_row_marks };

const struct kg_gate kg_gate_bench = {
    .name = "bench",
    .summary = "time cases; noise-band decision against high-water marks",
    .description = bg_description,
    .flags = KG_GATE_NEEDS_GPU | KG_GATE_DEVICE_WIDE | KG_GATE_PRODUCTION_PASSES |
             KG_GATE_SELFTEST_TWINS | KG_GATE_ONE_DEVICE,
    .opts = bg_opts,
    .n_opts = KG_ARRAY_LEN(bg_opts),
    .opts_size = sizeof(kg_bench_gate_opts),
    .opts_init = &bg_opts_init,
    .begin = bg_begin,
    .run_case = bg_run_case,
    .figures = kg_bench_figures,
    .result_free = bg_row_free,
    .result_size = sizeof(kg_bench_row),
    .case_timeout_s = bg_case_timeout_s,
    .result_flatten = bg_row_flatten,
    .end = bg_end,
    .columns = kg_bench_columns,
    .n_columns = KG_BENCH_N_COLUMNS,
    .marks = &bg_marks,
    .production = &kg_bench_production,
};
