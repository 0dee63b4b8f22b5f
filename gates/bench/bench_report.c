/* The bench's part of `marks advance --from-report` (kg_gate_production.report_candidates,
 * gate.h): a recorded report's bench row into the observation the ratchet reads
 * (kg_advance_add), as bench_passes.c's candidates hook gives it from a typed row. Its own file,
 * with no other bench code, so the report fuzzer links it alone. */
#include <math.h>
#include <string.h>
#include "bench/bench.h"
#include "core/report_keys.h"

static const char *bp_jstr(const cJSON *o, const char *k)
{
    return cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(o, k));
}

static int num_field(double *out, const cJSON *fig, const char *key, const char *name,
                     const char *case_id)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(fig, key);
    if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble))
        return KG_ERR(KG_EPARSE, "%s: bench result for '%s': figures.%s must be a finite number",
                      name, case_id, key);
    *out = v->valuedouble;
    return 0;
}

/* figures.direction (default lower). A time is lower-is-better, so a report cannot flip the
 * direction of a time mark; any other metric's direction must equal its mark's
 * (kg_advance_apply). */
static int adv_metric_dir(kg_direction *d, const char *metric, const char *dir, const char *name,
                          const char *cs)
{
    *d = KG_LOWER_IS_BETTER;
    if (dir && (strcmp(dir, KG_RV_DIR_HIGHER) == 0 || strcmp(dir, "higher") == 0))
        *d = KG_HIGHER_IS_BETTER;
    else if (dir && strcmp(dir, KG_RV_DIR_LOWER) != 0 && strcmp(dir, "lower") != 0)
        return KG_ERR(KG_EPARSE,
                      "%s: bench result for '%.200s': figures.direction '%.80s' is "
                      "neither lower_is_better nor higher_is_better",
                      name, cs, dir);
    if (strncmp(metric, "time_", 5) == 0 && *d != KG_LOWER_IS_BETTER)
        return KG_ERR(KG_EREFUSED,
                      "%s: bench result for '%.200s': figures.direction '%.80s' on "
                      "the time metric '%.80s': a time is %s (refused)",
                      name, cs, dir, metric, KG_RV_DIR_LOWER);
    return 0;
}

/* figures.processes (default 1: a report of one process), and with 2 or more the envelope
 * env_lo_us / env_hi_us; run_k and run_power_state when known. */
static int adv_processes(kg_advance_obs *o, const cJSON *fig, const char *name, const char *cs)
{
    int rc = 0;
    double d = 1;
    const cJSON *k = cJSON_GetObjectItemCaseSensitive(fig, KG_FIG_RUN_K);
    const cJSON *st = cJSON_GetObjectItemCaseSensitive(fig, KG_FIG_RUN_POWER_STATE);
    if (cJSON_GetObjectItemCaseSensitive(fig, KG_FIG_PROCESSES))
        KG_TRY(num_field(&d, fig, KG_FIG_PROCESSES, name, cs));
    if (d < 1 || d > KG_BENCH_MAX_PROCESSES || d != floor(d))
        return KG_ERR(KG_EPARSE,
                      "%s: bench result for '%s': figures.%s must be an integer in "
                      "[1, %d], got %g",
                      name, cs, KG_FIG_PROCESSES, KG_BENCH_MAX_PROCESSES, d);
    o->processes = (int)d;
    if (o->processes >= 2) {
        KG_TRY(num_field(&o->env_lo, fig, KG_FIG_ENV_LO, name, cs));
        KG_TRY(num_field(&o->env_hi, fig, KG_FIG_ENV_HI, name, cs));
    }
    if (k && (!cJSON_IsNumber(k) || k->valuedouble < 1 || k->valuedouble > KG_MARK_MAX_K ||
              k->valuedouble != floor(k->valuedouble)))
        return KG_ERR(KG_EPARSE,
                      "%s: bench result for '%s': figures.%s must be an integer in "
                      "[1, %d]",
                      name, cs, KG_FIG_RUN_K, KG_MARK_MAX_K);
    o->k = k ? (int)k->valuedouble : 0;
    if (st && !cJSON_IsString(st))
        return KG_ERR(KG_EPARSE, "%s: bench result for '%s': figures.%s must be a string", name, cs,
                      KG_FIG_RUN_POWER_STATE);
    o->power_state = st ? st->valuestring : NULL;
cleanup:
    return rc;
}

/* An optional figure of what users pay: absent or null is 0; else a finite number
 * >= 0. */
static int adv_opt_num(double *out, const cJSON *fig, const char *key, const char *name,
                       const char *cs)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(fig, key);
    *out = 0;
    if (!v || cJSON_IsNull(v))
        return 0;
    if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble) || v->valuedouble < 0)
        return KG_ERR(KG_EPARSE,
                      "%s: bench result for '%s': figures.%s must be a finite number "
                      ">= 0",
                      name, cs, key);
    *out = v->valuedouble;
    return 0;
}

static int adv_pay(kg_advance_obs *o, const cJSON *fig, const char *name, const char *cs)
{
    int rc = 0;
    KG_TRY(adv_opt_num(&o->measured_median, fig, KG_FIG_RAW_MEDIAN, name, cs));
    KG_TRY(adv_opt_num(&o->measured_spread, fig, KG_FIG_MEASURED_SPREAD, name, cs));
    KG_TRY(adv_opt_num(&o->energy_mj, fig, KG_FIG_ENERGY_PER_LAUNCH, name, cs));
    KG_TRY(adv_opt_num(&o->energy_spread, fig, KG_FIG_ENERGY_SPREAD, name, cs));
    if (!cJSON_GetObjectItemCaseSensitive(fig, KG_FIG_MEASURED_SPREAD))
        o->measured_median = 0; /* a report from before no spread, no figure */
cleanup:
    return rc;
}

/* A passing (PASS, WARN, XFAIL) row offers its one observation, whatever its decision (the
 * advance counts a SAME); only IMPROVED / NO_MARK carry the figures of a mark. A metric some
 * gate's marks own (a counter mark) is refused: that gate's to move. */
int kg_bench_report_candidates(kg_advance_obs *out, size_t max, const cJSON *res, kg_verdict v,
                               const kg_advance_obs *stamp, const char *name,
                               bool (*claimed)(const char *metric))
{
    int rc = 0;
    const char *cs = bp_jstr(res, KG_RES_CASE);
    const cJSON *fig = cJSON_GetObjectItemCaseSensitive(res, KG_RES_FIGURES);
    const char *dec = bp_jstr(fig, KG_FIG_DECISION), *dir = bp_jstr(fig, KG_FIG_DIRECTION);
    if (!max || (v != KG_VERDICT_PASS && v != KG_VERDICT_WARN && v != KG_VERDICT_XFAIL))
        return 0;
    if (!cJSON_IsObject(fig) || !dec)
        return KG_ERR(KG_EPARSE, "%s: bench result for '%s' lacks figures.%s", name, cs,
                      KG_FIG_DECISION);
    kg_advance_obs o = *stamp;
    o.case_id = cs;
    o.decision = dec;
    o.metric = bp_jstr(fig, KG_FIG_METRIC);
    o.direction = KG_LOWER_IS_BETTER;
    bool mark = strcmp(dec, KG_RV_DEC_IMPROVED) == 0 || strcmp(dec, KG_RV_DEC_NO_MARK) == 0;
    if (mark) {
        KG_TRY(adv_processes(&o, fig, name, cs));
        KG_TRY(num_field(&o.median, fig, KG_FIG_MEDIAN, name, cs));
        KG_TRY(num_field(&o.ci_lo, fig, KG_FIG_CI_LO, name, cs));
        KG_TRY(num_field(&o.ci_hi, fig, KG_FIG_CI_HI, name, cs));
        KG_TRY(num_field(&o.band, fig, KG_FIG_BAND, name, cs));
        KG_TRY(num_field(&o.samples, fig, KG_FIG_SAMPLES, name, cs));
        KG_TRY(adv_pay(&o, fig, name, cs));
    }
    if (o.metric && claimed && claimed(o.metric)) /* another gate's to move */
        return KG_ERR(KG_EPARSE,
                      "%s: bench result for '%.200s': figures.%s '%s' is a counter "
                      "mark, not a bench metric",
                      name, cs, KG_FIG_METRIC, o.metric);
    if (o.metric && mark)
        KG_TRY(adv_metric_dir(&o.direction, o.metric, dir, name, cs));
    *out = o;
    rc = 1;
cleanup:
    return rc;
}
