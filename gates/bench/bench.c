/* Bench gate: time every selected case (bench_engine.c), measure the device's ceilings in the
 * same run (bench_ceiling.c), and decide each case against its high-water mark with the noise-
 * band rule (bench_decide.c). REGRESSED fails the gate; every row carries the figures that
 * produced its decision, and the report carries the full context of every figure. */
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "bench/bench.h"

#define BENCH_DEFAULT_BUDGET_S 1.0

static const char *metric_name(int mode) { return mode == 1 ? "time_us_cold" : "time_us_warm"; }

/* Roofline: compute-bound when the flops take longer at the GEMM ceiling than the bytes at the
 * copy ceiling. Without ceilings, an arithmetic intensity above 100 flop/byte. */
static bool is_compute_bound(const kg_case_desc *d, const kg_bench_ceilings *c)
{
    if (!(d->flops > 0))
        return false;
    if (c->gemm_tflops > 0 && c->copy_gbps > 0)
        return d->flops / (c->gemm_tflops * 1e12) > d->bytes_moved / (c->copy_gbps * 1e9);
    return d->bytes_moved <= 0 || d->flops / d->bytes_moved > 100.0;
}

static cJSON *per_sample_json(const kg_bench_result *r)
{
    cJSON *o = cJSON_CreateObject();
    cJSON *us = cJSON_AddArrayToObject(o, "time_us"), *mhz = cJSON_AddArrayToObject(o, "sm_clock_mhz");
    cJSON *dr = cJSON_AddArrayToObject(o, "dropped_index");
    for (size_t i = 0; us && mhz && dr && i < r->taken; i++) {
        cJSON_AddItemToArray(us, cJSON_CreateNumber(r->all_us[i]));
        cJSON_AddItemToArray(mhz, isfinite(r->clock_mhz[i]) ? cJSON_CreateNumber(r->clock_mhz[i])
                                                            : cJSON_CreateNull());
        if (r->drop[i])
            cJSON_AddItemToArray(dr, cJSON_CreateNumber((double)i));
    }
    return o;
}

static void add_num(cJSON *o, const char *k, double v)
{
    cJSON_AddItemToObject(o, k, isfinite(v) ? cJSON_CreateNumber(v) : cJSON_CreateNull());
}

/* The row's figures: decision first (the keys the marks pipeline reads: decision, metric,
 * direction, median_us, ci_lo_us, ci_hi_us, band_rel, samples), then everything else. */
static cJSON *case_figures(const kg_case_desc *d, kg_bench_result *r, const kg_bench_verdict *v,
                           const kg_mark *mark, const kg_bench_ceilings *c, bool compute,
                           const kg_bench_opts *o, double max_mhz)
{
    cJSON *f = kg_bench_verdict_json(v, mark);
    if (!f)
        return NULL;
    const kg_summary *s = &r->sum;
    cJSON_AddStringToObject(f, "metric", metric_name(o->mode));
    cJSON_AddStringToObject(f, "direction", "lower_is_better");
    add_num(f, "median_us", s->median);
    add_num(f, "ci_lo_us", s->ci_lo);
    add_num(f, "ci_hi_us", s->ci_hi);
    /* The run's own noise band: what a mark set from this run carries. */
    add_num(f, "band_rel", s->median > 0 ? (s->ci_hi - s->ci_lo) / (2 * s->median) : NAN);
    cJSON_AddNumberToObject(f, "samples", (double)r->kept);
    cJSON_AddStringToObject(f, "op", d->op);
    cJSON_AddStringToObject(f, "mode", o->mode == 1 ? "cold" : "warm");
    cJSON_AddNumberToObject(f, "launches_per_sample", r->k);
    cJSON_AddStringToObject(f, "timing", r->graph ? "cuda-graph replay, cuda events"
                                                  : "direct launches, cuda events");
    cJSON_AddNumberToObject(f, "samples_taken", (double)r->taken);
    cJSON_AddNumberToObject(f, "samples_dropped", (double)r->dropped);
    add_num(f, "mad_us", s->mad);
    add_num(f, "q1_us", s->q1);
    add_num(f, "q3_us", s->q3);
    add_num(f, "iqr_us", s->iqr);
    add_num(f, "min_us", s->min);
    add_num(f, "max_us", s->max);
    add_num(f, "mean_us", s->mean);
    add_num(f, "ci_level", s->ci_level);
    add_num(f, "ci_coverage", s->ci_coverage);
    add_num(f, "ci_rel_width", s->ci_rel_width);
    add_num(f, "target_ci_rel", o->target_ci_rel);
    cJSON_AddStringToObject(f, "stop_reason", r->stop ? r->stop : "none");
    add_num(f, "budget_s", o->budget_s);
    add_num(f, "elapsed_s", r->elapsed_s);
    add_num(f, "sm_clock_median_mhz", r->clock_median);
    add_num(f, "sm_clock_min_mhz", r->clock_min);
    add_num(f, "sm_clock_max_mhz", r->clock_max);
    add_num(f, "sm_clock_floor_mhz", o->min_clock_frac * max_mhz);
    cJSON_AddStringToObject(f, "bound", compute ? "compute" : "memory");
    add_num(f, "bytes_moved", d->bytes_moved);
    add_num(f, "flops", d->flops);
    double sec = s->median * 1e-6;
    if (sec > 0 && d->bytes_moved > 0) {
        add_num(f, "gbps", d->bytes_moved / sec / 1e9);
        if (c->copy_gbps > 0)
            add_num(f, "pct_copy_ceiling", 100.0 * d->bytes_moved / sec / 1e9 / c->copy_gbps);
    }
    if (sec > 0 && d->flops > 0) {
        add_num(f, "tflops", d->flops / sec / 1e12);
        if (c->gemm_tflops > 0)
            add_num(f, "pct_gemm_ceiling", 100.0 * d->flops / sec / 1e12 / c->gemm_tflops);
    }
    if (r->kernels) {
        cJSON_AddItemToObject(f, "kernels", r->kernels);
        r->kernels = NULL;
    }
    if (r->nvml) {
        cJSON_AddItemToObject(f, "nvml", r->nvml);
        r->nvml = NULL;
    }
    cJSON_AddItemToObject(f, "per_sample", per_sample_json(r));
    return f;
}

/* "a;b" from the CUPTI kernel list (for the mark's record). */
static void kernel_names(const cJSON *f, char *buf, size_t n)
{
    const cJSON *k, *ks = cJSON_GetObjectItemCaseSensitive(f, "kernels");
    size_t used = 0;
    buf[0] = '\0';
    cJSON_ArrayForEach(k, ks)
    {
        const char *nm = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(k, "name"));
        if (nm && used + strlen(nm) + 2 < n)
            used += (size_t)snprintf(buf + used, n - used, "%s%s", used ? ";" : "", nm);
    }
}

static int save_run_mark(kg_marks *save, const char *cls, const kg_case_desc *d,
                         const kg_bench_result *r, const cJSON *fig, const kg_bench_opts *o,
                         const kg_device_info *dev, cJSON *root)
{
    char date[32], drv[16], rt[16], kn[1024];
    time_t t = time(NULL);
    struct tm tm;
    const cJSON *prov = cJSON_GetObjectItemCaseSensitive(root, "provenance");
    const char *commit = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(prov, "commit"));
    gmtime_r(&t, &tm);
    strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", &tm);
    snprintf(drv, sizeof drv, "%d.%d", dev->driver_version / 1000, (dev->driver_version % 1000) / 10);
    snprintf(rt, sizeof rt, "%d.%d", dev->runtime_version / 1000, (dev->runtime_version % 1000) / 10);
    kernel_names(fig, kn, sizeof kn);
    const kg_summary *s = &r->sum;
    kg_mark mk;
    memset(&mk, 0, sizeof mk);
    mk.device_class = (char *)cls;
    mk.case_id = (char *)d->id;
    mk.metric = (char *)metric_name(o->mode);
    mk.direction = KG_LOWER_IS_BETTER;
    mk.value = s->median;
    mk.run_median = s->median;
    mk.ci_lo = s->ci_lo;
    mk.ci_hi = s->ci_hi;
    mk.band_rel = (s->ci_hi - s->ci_lo) / (2 * s->median);
    mk.samples = (int)r->kept;
    mk.runs = 1;
    mk.commit = (char *)(commit ? commit : "unknown");
    mk.date = date;
    mk.run_id = (char *)cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(root, "run_id"));
    mk.driver = drv;
    mk.cuda = rt;
    mk.set_by = "kgate bench --save-marks (diagnostic)";
    mk.kernels = kn[0] ? kn : NULL;
    return kg_marks_merge(save, &mk);
}

int kg_gate_bench(kg_report *rep, const kg_registry *reg, const kg_selection *sel,
                  const kg_gate_ctx *ctx)
{
    int rc = 0;
    kg_marks *marks = NULL, *save = NULL;
    kg_bench_env *env = NULL;
    kg_bench_ceilings ceil;
    kg_bench_opts o = KG_BENCH_OPTS_INIT;
    kg_decide_opts dopt = KG_DECIDE_OPTS_INIT;
    char cls[320];
    cJSON *nvml_start = NULL;
    struct timespec ts;
    double w0 = 0;
    memset(&ceil, 0, sizeof ceil);
    /* Input files first: a bad marks file is exit 2 whether or not there is a GPU. */
    if (ctx->marks_path)
        KG_TRY(kg_marks_load(&marks, ctx->marks_path));
    if (!ctx->dev) {
        for (size_t i = 0; i < sel->n; i++)
            KG_TRY(kg_report_add(rep, "bench", kg_registry_get(reg, sel->idx[i])->id,
                                 KG_VERDICT_SKIP, "no CUDA device", NULL));
        goto cleanup;
    }
    if (ctx->bench_save_marks) {
        rc = kg_marks_load(&save, ctx->bench_save_marks);
        if (rc == KG_ENOTFOUND)
            rc = kg_marks_new(&save);
        KG_TRY(rc);
    }
    o.mode = ctx->bench_mode;
    o.budget_s = ctx->bench_budget_s > 0 ? ctx->bench_budget_s : BENCH_DEFAULT_BUDGET_S;
    if (ctx->bench_band_floor > 0)
        dopt.band_floor = ctx->bench_band_floor;
    if (ctx->bench_compute_floor > 0)
        dopt.compute_floor = ctx->bench_compute_floor;
    if (ctx->bench_abs_floor_us > 0)
        dopt.abs_floor_us = ctx->bench_abs_floor_us;
    kg_device_class(ctx->dev, cls, sizeof cls);
    clock_gettime(CLOCK_MONOTONIC, &ts);
    w0 = ts.tv_sec + ts.tv_nsec * 1e-9;
    KG_TRY(kg_bench_env_new(&env, ctx->dev, &o));
    nvml_start = kg_bench_env_nvml_json(env);
    if (kg_bench_measure_ceilings(&ceil, env, ctx->seed, &o) < 0) {
        /* Without ceilings the cases still run; the % of ceiling figures are left out. */
        if (!ctx->quiet)
            printf("bench: ceilings not measured: %s\n", kg_error_last());
        cJSON *cd = ceil.detail;
        ceil.detail = NULL;
        kg_bench_ceilings_free(&ceil);
        ceil.detail = cd ? cd : cJSON_CreateObject();
        cJSON_AddStringToObject(ceil.detail, "error", kg_error_last());
    }
    if (!ctx->quiet) {
        printf("bench: %s, mode %s, budget %.2f s/case, target CI %.2f%%, band floor %.2f%%; "
               "ceilings: copy %.0f GB/s, bf16 GEMM %.1f TFLOP/s\n", cls,
               o.mode ? "cold" : "warm", o.budget_s, 100 * o.target_ci_rel,
               100 * dopt.band_floor, ceil.copy_gbps, ceil.gemm_tflops);
        printf("%-44s %-9s %11s %8s %5s %-12s %8s %7s %9s %8s %6s\n", "case", "decision",
               "median_us", "CI+-%", "n", "stop", "vs mark", "tol%", "GB/s", "TFLOP/s", "MHz");
    }
    for (size_t i = 0; i < sel->n; i++) {
        const kg_case_desc *d = kg_registry_get(reg, sel->idx[i]);
        kg_bench_result r;
        kg_bench_verdict v;
        /* kg_instance_open derives the per-case seed: the same inputs as parity for one --seed. */
        int crc = kg_bench_time_case(&r, env, d, ctx->seed, ctx->device, &o);
        if (crc == KG_ENOMEM) {
            rc = crc;
            kg_bench_result_free(&r);
            goto cleanup;
        }
        if (crc < 0 || !r.have_sum) {
            const char *why = crc < 0 ? kg_error_last() : "every sample was dropped (throttled)";
            KG_TRY(kg_report_add(rep, "bench", d->id, KG_VERDICT_ERROR, why, NULL));
            if (!ctx->quiet)
                printf("%-44s %-9s %s\n", d->id, "ERROR", why);
            kg_bench_result_free(&r);
            continue;
        }
        bool compute = is_compute_bound(d, &ceil);
        const kg_mark *mk = kg_marks_find(marks, cls, d->id, metric_name(o.mode));
        kg_bench_obs obs = { r.sum.median, r.sum.ci_lo, r.sum.ci_hi, r.kept_us, r.kept, compute };
        crc = kg_bench_decide(&v, mk, &obs, NULL, 0, &dopt);
        if (crc < 0) {
            KG_TRY(kg_report_add(rep, "bench", d->id, KG_VERDICT_ERROR, kg_error_last(), NULL));
            kg_bench_result_free(&r);
            continue;
        }
        cJSON *fig = case_figures(d, &r, &v, mk, &ceil, compute, &o,
                                  kg_bench_env_max_clock_mhz(env));
        kg_verdict verdict = v.decision == KG_BENCH_REGRESSED ? KG_VERDICT_FAIL : KG_VERDICT_PASS;
        char msg[512], kn[1024];
        bool kchanged = false;
        if (verdict == KG_VERDICT_PASS && r.dropped * 2 > r.taken)
            verdict = KG_VERDICT_WARN;
        if (mk && mk->kernels && fig) { /* e.g. cuBLAS picked another kernel than the mark's */
            kernel_names(fig, kn, sizeof kn);
            kchanged = kn[0] && strcmp(kn, mk->kernels) != 0;
            cJSON_AddBoolToObject(fig, "kernels_changed", kchanged);
            if (kchanged)
                cJSON_AddStringToObject(fig, "mark_kernels", mk->kernels);
        }
        snprintf(msg, sizeof msg, "%s; median %.4g us (CI %.4g..%.4g, n=%zu, %s)%s%s",
                 v.why, r.sum.median, r.sum.ci_lo, r.sum.ci_hi, r.kept, r.stop,
                 r.dropped ? "; throttled samples dropped" : "",
                 kchanged ? "; kernels differ from the mark's" : "");
        if (save && fig)
            KG_TRY(save_run_mark(save, cls, d, &r, fig, &o, ctx->dev, kg_report_json(rep)));
        if (!ctx->quiet) {
            const cJSON *g = cJSON_GetObjectItem(fig, "gbps"), *t = cJSON_GetObjectItem(fig, "tflops");
            char vs[16] = "-", tol[16] = "-";
            if (mk) {
                snprintf(vs, sizeof vs, "%+.2f%%", 100 * v.delta_rel);
                snprintf(tol, sizeof tol, "%.2f", 100 * v.tolerance_rel);
            }
            printf("%-44s %-9s %11.4f %8.3f %5zu %-12s %8s %7s %9.1f %8.2f %6.0f\n", d->id,
                   kg_bench_decision_name(v.decision), r.sum.median,
                   100 * r.sum.ci_rel_width / 2, r.kept, r.stop, vs, tol,
                   g ? g->valuedouble : 0.0, t ? t->valuedouble : 0.0, r.clock_median);
        }
        kg_bench_result_free(&r);
        KG_TRY(kg_report_add(rep, "bench", d->id, verdict, msg, fig));
    }
    clock_gettime(CLOCK_MONOTONIC, &ts);
    cJSON *b = cJSON_CreateObject();
    if (b) {
        cJSON *st = cJSON_AddObjectToObject(b, "settings");
        cJSON_AddStringToObject(st, "mode", o.mode ? "cold" : "warm");
        cJSON_AddNumberToObject(st, "budget_s", o.budget_s);
        cJSON_AddNumberToObject(st, "min_samples", o.min_samples);
        cJSON_AddNumberToObject(st, "max_samples", o.max_samples);
        cJSON_AddNumberToObject(st, "target_ci_rel", o.target_ci_rel);
        cJSON_AddNumberToObject(st, "ci_level", o.ci_level);
        cJSON_AddNumberToObject(st, "min_replay_ms", o.min_replay_ms);
        cJSON_AddNumberToObject(st, "min_clock_frac", o.min_clock_frac);
        cJSON_AddNumberToObject(st, "band_floor", dopt.band_floor);
        cJSON_AddNumberToObject(st, "abs_floor_us", dopt.abs_floor_us);
        cJSON_AddNumberToObject(st, "compute_floor", dopt.compute_floor);
        cJSON_AddStringToObject(st, "marks", ctx->marks_path ? ctx->marks_path : "(none)");
        cJSON_AddStringToObject(b, "device_class", cls);
        cJSON *ce = cJSON_AddObjectToObject(b, "ceilings");
        cJSON_AddNumberToObject(ce, "copy_gbps", ceil.copy_gbps);
        cJSON_AddNumberToObject(ce, "gemm_tflops", ceil.gemm_tflops);
        if (ceil.detail) {
            cJSON_AddItemToObject(ce, "detail", ceil.detail);
            ceil.detail = NULL;
        }
        if (nvml_start)
            cJSON_AddItemToObject(b, "nvml_start", nvml_start);
        nvml_start = NULL;
        cJSON *ne = kg_bench_env_nvml_json(env);
        if (ne)
            cJSON_AddItemToObject(b, "nvml_end", ne);
        cJSON_AddNumberToObject(b, "wall_s", ts.tv_sec + ts.tv_nsec * 1e-9 - w0);
        kg_report_set_extra(rep, "bench", b);
    }
    if (!ctx->quiet)
        printf("bench: wall time %.1f s\n", ts.tv_sec + ts.tv_nsec * 1e-9 - w0);
    if (save) {
        KG_TRY(kg_marks_save(save, ctx->bench_save_marks));
        if (!ctx->quiet)
            printf("bench: marks of this run merged into %s\n", ctx->bench_save_marks);
    }
cleanup:
    cJSON_Delete(nvml_start);
    kg_bench_ceilings_free(&ceil);
    kg_bench_env_free(env);
    kg_marks_free(marks);
    kg_marks_free(save);
    return rc;
}

/* ---- command ---------------------------------------------------------------------------- */

enum { OPT_MARKS = 0x1500, OPT_MODE, OPT_BUDGET, OPT_BAND_FLOOR, OPT_COMPUTE_FLOOR, OPT_SAVE,
       OPT_ABS_FLOOR };

static const char bench_usage[] =
    "usage: kgate bench [--filter REGEX] [--marks FILE] [--mode warm|cold] [--budget SECONDS]\n"
    "                   [--band-floor F] [--compute-floor F] [--abs-floor US]\n"
    "                   [--save-marks FILE]\n"
    "                   [--report FILE] [--seed N] [--device N]\n"
    "\n"
    "Time every selected case: warm-up, a CUDA graph of k launches (one replay >= 1 ms) timed\n"
    "with CUDA events, at least 15 samples, until the 95% CI of the median is narrower than\n"
    "0.5% or the per-case budget (default 1 s) runs out. Cold mode flushes L2 before every\n"
    "sample (one launch per sample). Samples taken below 70% of the max SM clock are dropped.\n"
    "Ceilings (1 GiB device copy, 8192^3 bf16 cuBLAS GEMM) are measured in the same run.\n"
    "\n"
    "Each case is decided against its mark in --marks (device class, case, metric):\n"
    "REGRESSED (fails) when slower beyond max(floor, mark band + run noise) and significant,\n"
    "IMPROVED when faster beyond it, SAME otherwise, NO_MARK without a mark. Floors: --band-floor\n"
    "(default 0.005), --abs-floor in us (0.4: timer and launch jitter of tiny kernels),\n"
    "--compute-floor for compute-bound cases (0.15: cross-process GEMM modes); a mark set by\n"
    "one process (runs 1) has a 0.02 floor until merged from several (cross-process spread).\n"
    "--save-marks FILE merges this run's medians into FILE (for proofs and A/B; never the\n"
    "committed marks, which only `run --production` advances).\n"
    "\n"
    "exit codes: 0 no regression, 1 a case REGRESSED, 2 usage or marks-file error, 3 no GPU,\n"
    "            4 runtime error\n";

static int bench_opt(kg_gate_ctx *ctx, int opt, const char *arg)
{
    int rc = 0;
    double v = 0;
    switch (opt) {
    case OPT_MARKS: {
        kg_marks *m = NULL;
        if (!arg || !*arg)
            return KG_ERR(KG_EINVAL, "--marks: expected a file path");
        /* Validate now, before the device is touched: a bad file is exit 2 either way. */
        KG_TRY(kg_marks_load(&m, arg));
        kg_marks_free(m);
        ctx->marks_path = arg;
        return 1;
    }
    case OPT_MODE:
        if (arg && strcmp(arg, "warm") == 0)
            ctx->bench_mode = 0;
        else if (arg && strcmp(arg, "cold") == 0)
            ctx->bench_mode = 1;
        else
            return KG_ERR(KG_EINVAL, "--mode: expected warm or cold, got '%s'", arg ? arg : "");
        return 1;
    case OPT_BUDGET:
        KG_TRY(kg_parse_double("--budget", arg, &v));
        if (!(v > 0 && v <= 3600))
            return KG_ERR(KG_EINVAL, "--budget: expected seconds in (0, 3600], got '%s'", arg);
        ctx->bench_budget_s = v;
        return 1;
    case OPT_BAND_FLOOR:
    case OPT_COMPUTE_FLOOR:
        KG_TRY(kg_parse_double(opt == OPT_BAND_FLOOR ? "--band-floor" : "--compute-floor", arg, &v));
        if (!(v > 0 && v < 1))
            return KG_ERR(KG_EINVAL, "%s: expected a relative tolerance in (0, 1), e.g. 0.01, "
                                     "got '%s'", opt == OPT_BAND_FLOOR ? "--band-floor"
                                                                       : "--compute-floor", arg);
        if (opt == OPT_BAND_FLOOR)
            ctx->bench_band_floor = v;
        else
            ctx->bench_compute_floor = v;
        return 1;
    case OPT_ABS_FLOOR:
        KG_TRY(kg_parse_double("--abs-floor", arg, &v));
        if (!(v > 0 && v <= 1000))
            return KG_ERR(KG_EINVAL, "--abs-floor: expected microseconds in (0, 1000], got '%s'",
                          arg);
        ctx->bench_abs_floor_us = v;
        return 1;
    case OPT_SAVE:
        if (!arg || !*arg)
            return KG_ERR(KG_EINVAL, "--save-marks: expected a file path");
        ctx->bench_save_marks = arg;
        return 1;
    default: return 0;
    }
cleanup:
    return rc;
}

int kg_cmd_bench(kg_registry *reg, int argc, char **argv)
{
    static const struct option longopts[] = {
        KG_COMMON_LONGOPTS,
        { "marks", required_argument, NULL, OPT_MARKS },
        { "mode", required_argument, NULL, OPT_MODE },
        { "budget", required_argument, NULL, OPT_BUDGET },
        { "band-floor", required_argument, NULL, OPT_BAND_FLOOR },
        { "compute-floor", required_argument, NULL, OPT_COMPUTE_FLOOR },
        { "save-marks", required_argument, NULL, OPT_SAVE },
        { "abs-floor", required_argument, NULL, OPT_ABS_FLOOR },
        { 0, 0, 0, 0 }
    };
    static const kg_cmd_spec spec = { "bench", bench_usage, longopts, bench_opt };
    kg_cmd_state st;
    int rc = kg_cmd_begin(&st, &spec, reg, argc, argv);
    if (rc == 0)
        st.ctx.marks_path = kg_marks_path_default(st.ctx.marks_path);
    if (rc == 0 && !st.help_shown && st.ctx.bench_save_marks) {
        if (st.ctx.marks_path && strcmp(st.ctx.marks_path, st.ctx.bench_save_marks) == 0)
            rc = KG_ERR(KG_EINVAL, "--save-marks %s: would rewrite the marks this run is "
                                   "compared against", st.ctx.bench_save_marks);
        else
            rc = kg_path_check_writable(st.ctx.bench_save_marks);
        if (rc == 0) { /* an existing file must be valid: it is merged into */
            kg_marks *m = NULL;
            rc = kg_marks_load(&m, st.ctx.bench_save_marks);
            kg_marks_free(m);
            if (rc == KG_ENOTFOUND)
                rc = 0;
        }
    }
    if (rc == 0 && !st.help_shown)
        rc = kg_gate_bench(st.rep, reg, &st.sel, &st.ctx);
    return kg_cmd_end(&st, rc);
}
