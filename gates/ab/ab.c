/* The ab gate (`kgate ab A_EXE B_EXE`, runners/cli/ab_cmd.c): same-session A/B of two runner builds. Each round runs A then B as
 * separate processes (`bench --report`) on the same GPU with the same seed, so drift in clocks
 * or temperature hits both sides of a pair alike; the per-round ratios B/A give a paired ratio
 * with a distribution-free confidence interval and a verdict. `ab` is a gate of its own (not in
 * the table `run` runs): begin runs the rounds, run_case decides one case, through the driver. */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "ab/ab.h"
#include "bench/bench.h"
#include "core/stats.h"
#include "core/report_keys.h"

#define AB_MAX_CASES 4096

typedef struct {
    char *id;
    double *a, *b; /* per-round medians (us); NaN when missing */
    char *err;     /* the first round whose bench row cannot be trusted (ERROR, or a figure
                      * above the report's own ceilings): the case is ERROR with it */
} ab_case;

typedef struct {
    ab_case *v;
    size_t n;
    int rounds;
} ab_table;

static void table_free(ab_table *t)
{
    for (size_t i = 0; i < t->n; i++) {
        free(t->v[i].id);
        free(t->v[i].a);
        free(t->v[i].b);
        free(t->v[i].err);
    }
    free(t->v);
    memset(t, 0, sizeof *t);
}

static ab_case *table_get(ab_table *t, const char *id)
{
    for (size_t i = 0; i < t->n; i++)
        if (strcmp(t->v[i].id, id) == 0)
            return &t->v[i];
    if (t->n == AB_MAX_CASES)
        return NULL;
    ab_case *nv = realloc(t->v, (t->n + 1) * sizeof *nv);
    if (!nv)
        return NULL;
    t->v = nv;
    ab_case *c = &t->v[t->n];
    c->err = NULL;
    c->id = strdup(id);
    c->a = malloc((size_t)t->rounds * sizeof *c->a);
    c->b = malloc((size_t)t->rounds * sizeof *c->b);
    if (!c->id || !c->a || !c->b) {
        free(c->id);
        free(c->a);
        free(c->b);
        return NULL;
    }
    for (int r = 0; r < t->rounds; r++)
        c->a[r] = c->b[r] = NAN;
    t->n++;
    return c;
}

/* Print the last lines of a child's log (its own error message). */
static void log_tail(const char *path)
{
    char *text = NULL;
    size_t len = 0;
    if (kg_file_read(&text, &len, path) < 0)
        return;
    size_t start = len > 1500 ? len - 1500 : 0;
    fprintf(stderr, "---- %s (tail) ----\n%s\n----\n", path, text + start);
    free(text);
}

static double ab_num(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsNumber(v) ? v->valuedouble : NAN;
}

/* Half the range of a ceiling's samples over their median (0 when absent). */
static double ab_ceil_spread(const cJSON *ceil)
{
    const cJSON *x;
    double lo = INFINITY, hi = -INFINITY, med = ab_num(ceil, KG_RK_CEIL_MEDIAN);
    cJSON_ArrayForEach(x, cJSON_GetObjectItemCaseSensitive(ceil, KG_RK_CEIL_SAMPLES))
        if (cJSON_IsNumber(x)) {
            lo = fmin(lo, x->valuedouble);
            hi = fmax(hi, x->valuedouble);
        }
    return med > 0 && hi >= lo ? (hi - lo) / (2 * med) : 0;
}

/* The report's own ceilings, as bench checks its rows against them: a runner
 * build without that check may still report a figure that cannot be true. */
static void ab_ceilings(kg_ceiling_obs *co, double *l2, const cJSON *root)
{
    const cJSON
        *ce = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(root, KG_RK_BENCH),
                                               KG_RK_BENCH_CEILINGS);
    const cJSON *det = cJSON_GetObjectItemCaseSensitive(ce, KG_RK_CEIL_DETAIL);
    const cJSON *gemm = cJSON_GetObjectItemCaseSensitive(det, KG_RK_CEIL_GEMM);
    const cJSON *gps = cJSON_GetObjectItemCaseSensitive(gemm, KG_RK_CEIL_POWER_STATE);
    double mx = ab_num(gps, KG_FIG_POWER_MAX_MHZ), md = ab_num(gps, KG_FIG_POWER_SM_MEDIAN);
    memset(co, 0, sizeof *co);
    co->copy_gbps = ab_num(ce, KG_RK_CEIL_COPY_GBPS);
    co->gemm_tflops = ab_num(ce, KG_RK_CEIL_GEMM_TFLOPS);
    co->copy_spread_rel = ab_ceil_spread(cJSON_GetObjectItemCaseSensitive(det, KG_RK_CEIL_COPY));
    co->gemm_spread_rel = ab_ceil_spread(gemm);
    co->gemm_clock_scale = mx > 0 && md > 0 ? mx / md : 1.0;
    *l2 = ab_num(cJSON_GetObjectItemCaseSensitive(root, KG_RK_DEVICE), KG_RK_DEVICE_L2);
}

/* Why round `round`'s row of this side cannot be compared ("" when it can). */
static void ab_row_error(char *why, size_t n, const cJSON *it, const cJSON *fig, kg_ceiling_obs co,
                         double l2)
{
    const char *v = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(it, KG_RES_VERDICT));
    const char *msg = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(it, KG_RES_MESSAGE));
    char cw[480];
    why[0] = '\0';
    if (v && strcmp(v, "ERROR") == 0) {
        snprintf(why, n, "bench ERROR: %s", msg ? msg : "(no message)");
        return;
    }
    co.gbps = ab_num(fig, KG_FIG_GBPS);
    co.tflops = ab_num(fig, KG_FIG_TFLOPS);
    co.ci_rel = ab_num(fig, KG_FIG_CI_REL_WIDTH) / 2;
    co.dram = l2 > 0 && ab_num(fig, KG_FIG_BYTES_MOVED) >= 2 * l2;
    if (kg_bench_ceiling_exceeded(cw, sizeof cw, &co))
        snprintf(why, n, "%s", cw);
}

/* Read a child's report: median_us of every bench result into column `round` of side a/b; a
 * row that cannot be trusted (ab_row_error) is kept as the case's error instead. */
static int read_report(ab_table *t, const char *path, int round, bool side_a, cJSON **device)
{
    int rc = 0;
    cJSON *root = NULL;
    const cJSON *res, *it;
    KG_TRY(kg_json_load(&root, path)); /* strict: no duplicate key, nothing trailing */
    res = cJSON_GetObjectItemCaseSensitive(root, KG_RK_RESULTS);
    if (!cJSON_IsArray(res)) {
        rc = KG_ERR(KG_EPARSE, "ab: %s is not a kgate report (no results array)", path);
        goto cleanup;
    }
    if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(root, KG_RK_INCOMPLETE))) {
        rc = KG_ERR(KG_EPARSE, "ab: %s is incomplete (its run was interrupted)", path);
        goto cleanup;
    }
    if (device && !*device) {
        const cJSON *d = cJSON_GetObjectItemCaseSensitive(root, KG_RK_DEVICE);
        if (cJSON_IsObject(d))
            *device = cJSON_Duplicate(d, true);
    }
    kg_ceiling_obs co;
    double l2 = 0;
    ab_ceilings(&co, &l2, root);
    cJSON_ArrayForEach(it, res) {
        char why[600];
        const char *g = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(it, KG_RES_GATE));
        const char *id = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(it, KG_RES_CASE));
        const cJSON *fig = cJSON_GetObjectItemCaseSensitive(it, KG_RES_FIGURES);
        /* the measured times: a capped row's median_us may be clock-normalised in one round
         * and measured in another */
        const cJSON *m = cJSON_GetObjectItemCaseSensitive(fig, KG_FIG_RAW_MEDIAN);
        if (!cJSON_IsNumber(m))
            m = cJSON_GetObjectItemCaseSensitive(fig, KG_FIG_MEDIAN);
        if (!g || !id || strcmp(g, KG_RV_GATE_BENCH) != 0)
            continue;
        ab_row_error(why, sizeof why, it, fig, co, l2);
        if (!why[0] && (!cJSON_IsNumber(m) || !(m->valuedouble > 0)))
            continue;
        ab_case *c = table_get(t, id);
        if (!c) {
            rc = KG_ERR(KG_ENOMEM, "ab: out of memory");
            goto cleanup;
        }
        if (!why[0]) {
            (side_a ? c->a : c->b)[round] = m->valuedouble;
        } else if (!c->err) {
            char e[700];
            snprintf(e, sizeof e, "round %d, %s: %s", round + 1, side_a ? "A" : "B", why);
            if (!(c->err = strdup(e))) {
                rc = KG_ERR(KG_ENOMEM, "ab: out of memory");
                goto cleanup;
            }
        }
    }
cleanup:
    cJSON_Delete(root);
    return rc;
}

typedef kg_ab_opts ab_opts;

typedef struct kg_ab_state {
    ab_table t;
    bool no_gpu; /* the runners said so (exit 3): every case SKIP */
    char dir[32];
    bool have_dir;
    int rounds;
    const ab_opts *o;
    char stopped_at[256]; /* interrupted (SIGINT/SIGTERM): where; "" when not */
} ab_state;

/* One case's paired comparison. */
typedef struct {
    kg_paired_ratio p;
    const char *decision; /* SAME, B_FASTER, B_SLOWER */
    double a[1000], b[1000];
    size_t m;
    double band_floor;
    const char *exe[2];
} ab_row;

static int ab_opt_budget(void *opts, const char *v)
{
    int rc = 0;
    double bud = 0;
    KG_TRY(kg_parse_double("--budget", v, &bud));
    if (!(bud > 0 && bud <= 3600))
        return KG_ERR(KG_EINVAL, "--budget: expected seconds in (0, 3600], got '%s'", v);
    ((ab_opts *)opts)->budget = v;
cleanup:
    return rc;
}

static int ab_opt_mode(void *opts, const char *v)
{
    if (strcmp(v, "warm") != 0 && strcmp(v, "cold") != 0)
        return KG_ERR(KG_EINVAL, "--mode: expected warm or cold, got '%s'", v);
    ((ab_opts *)opts)->mode = v;
    return 0;
}

static int ab_opt_floor(void *opts, const char *v)
{
    int rc = 0;
    double f = 0;
    KG_TRY(kg_parse_double("--band-floor", v, &f));
    if (!(f >= 0 && f < 1))
        return KG_ERR(KG_EINVAL,
                      "--band-floor: expected a relative tolerance in [0, 1), got "
                      "'%s'",
                      v);
    ((ab_opts *)opts)->band_floor = f;
cleanup:
    return rc;
}

static const kg_opt ab_opt_table[] = {
    KG_OPT_INT_("rounds", "N", ab_opts, rounds, 3, 1000, "A-then-B rounds (default 10)"),
    KG_OPT_FN_("budget", "SECONDS", ab_opt_budget, 0, "bench budget per case (default 0.5)"),
    KG_OPT_FN_("mode", "warm|cold", ab_opt_mode, 0, "bench mode (default warm)"),
    KG_OPT_FN_("band-floor", "F", ab_opt_floor, 0, "relative floor of a verdict (default 0.005)"),
};

static const char ab_description[] =
    "Compare two builds of runners on the same GPU: each round runs `A_EXE bench` then\n"
    "`B_EXE bench` as separate processes with the same seed (default 10 rounds). Per case (the\n"
    "cases of this runner that --filter selects), the ratios B/A of the rounds' medians give a\n"
    "paired ratio, its order-statistic 95% CI and a sign test. Verdict: B_FASTER when ci_hi < 1\n"
    "and the median ratio < 1 - F; B_SLOWER (fails) when ci_lo > 1 and the median ratio > 1 + F;\n"
    "SAME otherwise (F = --band-floor, default 0.005). Each bench run gets --budget (default\n"
    "0.5 s per case). A case whose bench row is ERROR in any round, or whose figures pass that\n"
    "report's own measured ceilings (bench's check), is ERROR with the reason, never a ratio.\n";

/* One side of one round: `EXE bench` into <dir>/<A|B><r>.json. */
static int ab_side(ab_state *st, const ab_opts *o, const kg_gate_env *env, const char *filter,
                   int r, int s)
{
    int rc = 0, ec = 0, n = 0;
    char rp[96], lp[96], devs[16], seeds[32], cto[32];
    const char *args[24];
    snprintf(rp, sizeof rp, "%s/%c%d.json", st->dir, "AB"[s], r);
    snprintf(lp, sizeof lp, "%s/%c%d.log", st->dir, "AB"[s], r);
    snprintf(devs, sizeof devs, "%d", env->device);
    snprintf(seeds, sizeof seeds, "%llu", (unsigned long long)env->seed);
    args[n++] = o->exe[s];
    args[n++] = KG_RV_GATE_BENCH; /* the bench's command is its name, the report's gate value */
    args[n++] = "--seed";
    args[n++] = seeds;
    args[n++] = "--device";
    args[n++] = devs;
    args[n++] = "--budget";
    args[n++] = o->budget;
    args[n++] = "--mode";
    args[n++] = o->mode;
    args[n++] = "--report";
    args[n++] = rp;
    const char *flag[] = { "--filter", "--exclude", "--tag", "--case-timeout" };
    snprintf(cto, sizeof cto, "%.17g", o->case_timeout_s);
    const char *val[] = { filter, o->exclude, o->tag, o->case_timeout_s > 0 ? cto : NULL };
    for (size_t i = 0; i < sizeof flag / sizeof flag[0]; i++)
        if (val[i]) {
            args[n++] = flag[i];
            args[n++] = val[i];
        }
    args[n] = NULL;
    KG_TRY(kg_run_logged(&ec, args, lp, false, "ab"));
    if (ec == KG_EXIT_NO_GPU) {
        st->no_gpu = true;
        printf("kgate: no CUDA device available: A/B skipped\n");
        return 0;
    }
    /* 4 with a whole report is a case's ERROR (a fault, a figure that cannot be true): that
     * case is ERROR, the other cases' rounds count (a fault costs no other case its verdict) */
    if (ec != KG_EXIT_PASS && ec != KG_EXIT_GATE_FAILED && ec != KG_EXIT_RUNTIME) {
        log_tail(lp);
        return KG_ERR(ec == KG_EXIT_USAGE ? KG_EINVAL : KG_EIO,
                      "ab: round %d: %s bench exited "
                      "%d (its output is above)",
                      r + 1, o->exe[s], ec);
    }
    rc = read_report(&st->t, rp, r, s == 0, NULL);
    if (rc < 0 && ec == KG_EXIT_RUNTIME) {
        log_tail(lp);
        return KG_ERR(KG_EIO,
                      "ab: round %d: %s bench exited %d without a report ab can read "
                      "(%s; its output is above)",
                      r + 1, o->exe[s], ec, kg_error_last());
    }
    KG_TRY(rc);
    printf("round %d/%d: %s done\n", r + 1, o->rounds, s == 0 ? "A" : "B");
    fflush(stdout);
cleanup:
    return rc;
}

void kg_ab_state_free(ab_state *st)
{
    if (!st)
        return;
    if (st->have_dir) { /* our own files only: A<r>/B<r> .json/.log, then the directory */
        for (int r = 0; r < st->rounds; r++)
            for (int s = 0; s < 2; s++) {
                char p[96];
                snprintf(p, sizeof p, "%s/%c%d.json", st->dir, "AB"[s], r);
                unlink(p);
                snprintf(p, sizeof p, "%s/%c%d.log", st->dir, "AB"[s], r);
                unlink(p);
            }
        rmdir(st->dir);
    }
    table_free(&st->t);
    free(st);
}

/* Every round, A then B, before any case is decided (the cases are those of the reports). */
int kg_ab_rounds(ab_state **out, const ab_opts *o, const kg_gate_env *env)
{
    int rc = 0;
    ab_state *st = calloc(1, sizeof *st);
    *out = NULL;
    if (!st)
        return KG_ERR(KG_ENOMEM, "ab: out of memory");
    snprintf(st->dir, sizeof st->dir, "/tmp/kgate-ab-XXXXXX");
    if (!mkdtemp(st->dir)) {
        rc = KG_ERR(KG_EIO, "ab: cannot create a temporary directory: %s", strerror(errno));
        goto cleanup;
    }
    st->have_dir = true;
    st->o = o;
    st->rounds = st->t.rounds = o->rounds;
    for (int r = 0; r < o->rounds && !st->no_gpu && !st->stopped_at[0]; r++)
        for (int s = 0; s < 2 && !st->no_gpu && !st->stopped_at[0]; s++) {
            /* An interrupt: the running side was killed with its group (kg_child_wait); the
             * command writes the incomplete report instead of leaving the rounds running. */
            rc = kg_interrupted() ? KG_EINTERNAL : ab_side(st, o, env, env->filter, r, s);
            if (rc < 0 && kg_interrupted()) {
                snprintf(st->stopped_at, sizeof st->stopped_at,
                         "ab: round %d/%d, %c (%s); "
                         "%d complete round(s), no case decided",
                         r + 1, o->rounds, "AB"[s], o -> exe[s], r);
                rc = 0;
            }
            KG_TRY(rc);
        }
    *out = st;
    st = NULL;
cleanup:
    kg_ab_state_free(st);
    return rc;
}

const char *kg_ab_stopped_at(const ab_state *st)
{
    return st && st->stopped_at[0] ? st->stopped_at : NULL;
}

/* The rounds ran before the driver; the gate decides from them. */
static int ab_begin(void **state, const void *opts, const kg_gate_env *env)
{
    KG_UNUSED(env);
    *state = (void *)((const ab_opts *)opts)->rounds_done;
    return 0;
}

static int ab_run_case(void *state, const kg_case_desc *d, const kg_gate_env *env,
                       kg_case_result *res)
{
    int rc = 0;
    ab_state *st = state;
    ab_row *w = calloc(1, sizeof *w);
    KG_UNUSED(env);
    const ab_opts *o = st->o;
    ab_case *k = NULL;
    if (!w)
        return KG_ERR(KG_ENOMEM, "ab: out of memory");
    if (st->no_gpu) {
        res->verdict = KG_VERDICT_SKIP;
        snprintf(res->message, sizeof res->message, "no CUDA device (the A/B runners said so)");
        free(w);
        return 0;
    }
    for (size_t i = 0; i < st->t.n && !k; i++)
        if (strcmp(st->t.v[i].id, d->id) == 0)
            k = &st->t.v[i];
    if (k && k->err) { /* never a ratio of a number that cannot be true */
        rc = KG_ERR(KG_EINVAL, "%s", k->err);
        goto cleanup;
    }
    for (int r = 0; k && r < st->rounds; r++)
        if (isfinite(k->a[r]) && isfinite(k->b[r])) {
            w->a[w->m] = k->a[r];
            w->b[w->m++] = k->b[r];
        }
    if (w->m < 3) {
        rc = KG_ERR(KG_EINVAL, "fewer than 3 rounds with both A and B medians");
        goto cleanup;
    }
    KG_TRY(kg_stats_paired_ratio(&w->p, w->a, w->b, w->m, 0.95));
    w->band_floor = o->band_floor;
    w->exe[0] = o->exe[0];
    w->exe[1] = o->exe[1];
    w->decision = KG_RV_AB_SAME;
    if (w->p.ci_hi < 1.0 && w->p.median < 1.0 - o->band_floor)
        w->decision = KG_RV_AB_B_FASTER;
    else if (w->p.ci_lo > 1.0 && w->p.median > 1.0 + o->band_floor)
        w->decision = KG_RV_AB_B_SLOWER;
    res->verdict = strcmp(w->decision, KG_RV_AB_B_SLOWER) == 0 ? KG_VERDICT_FAIL : KG_VERDICT_PASS;
    snprintf(res->message, sizeof res->message,
             "%s: B/A %.4f (95%% CI %.4f..%.4f, coverage "
             "%.3f, %zu rounds, sign test p %.3g)",
             w->decision, w->p.median, w->p.ci_lo, w->p.ci_hi, w->p.ci_coverage, w->m, w->p.p_sign);
    res->data = w;
    w = NULL;
cleanup:
    free(w);
    return rc;
}

static cJSON *ab_figures(const kg_case_desc *d, const kg_case_result *res)
{
    const ab_row *w = res->data;
    cJSON *f = cJSON_CreateObject();
    KG_UNUSED(d);
    if (!f)
        return NULL;
    cJSON_AddStringToObject(f, KG_FIG_AB_DECISION, w->decision);
    cJSON_AddNumberToObject(f, KG_FIG_AB_RATIO_MEDIAN, w->p.median);
    cJSON_AddNumberToObject(f, KG_FIG_AB_RATIO_CI_LO, w->p.ci_lo);
    cJSON_AddNumberToObject(f, KG_FIG_AB_RATIO_CI_HI, w->p.ci_hi);
    cJSON_AddNumberToObject(f, KG_FIG_AB_CI_COVERAGE, w->p.ci_coverage);
    cJSON_AddNumberToObject(f, KG_FIG_AB_RATIO_GEOMEAN, w->p.geomean);
    cJSON_AddNumberToObject(f, KG_FIG_AB_ROUNDS, (double)w->m);
    cJSON_AddNumberToObject(f, KG_FIG_AB_B_SLOWER_ROUNDS, w->p.above);
    cJSON_AddNumberToObject(f, KG_FIG_AB_B_FASTER_ROUNDS, w->p.below);
    cJSON_AddNumberToObject(f, KG_FIG_AB_P_SIGN, w->p.p_sign);
    cJSON_AddNumberToObject(f, KG_FIG_AB_BAND_FLOOR, w->band_floor);
    cJSON_AddItemToObject(f, KG_FIG_AB_A_MEDIANS, cJSON_CreateDoubleArray(w->a, (int)w->m));
    cJSON_AddItemToObject(f, KG_FIG_AB_B_MEDIANS, cJSON_CreateDoubleArray(w->b, (int)w->m));
    cJSON_AddStringToObject(f, KG_FIG_AB_A_EXE, w->exe[0]);
    cJSON_AddStringToObject(f, KG_FIG_AB_B_EXE, w->exe[1]);
    return f;
}

static int ab_end(void *state, const kg_gate_env *env, int rc)
{
    KG_UNUSED(state), KG_UNUSED(env); /* the command owns the rounds */
    return rc;
}

static void ab_cell_decision(char *b, size_t n, const kg_case_desc *d, const kg_case_result *r,
                             size_t l)
{
    KG_UNUSED(d), KG_UNUSED(l);
    snprintf(b, n, "%s", ((const ab_row *)r->data)->decision);
}

static void ab_cell_rounds(char *b, size_t n, const kg_case_desc *d, const kg_case_result *r,
                           size_t l)
{
    KG_UNUSED(d), KG_UNUSED(l);
    snprintf(b, n, "%zu", ((const ab_row *)r->data)->m);
}

static const kg_gate_column ab_columns[] = {
    KG_COL_CASE(-44),
    { .key = KG_FIG_AB_DECISION, .header = "decision", .width = -9, .cell = ab_cell_decision },
    KG_COL_NUM(KG_FIG_AB_RATIO_MEDIAN, "B/A", 9, "%.4f", ab_row, p.median),
    KG_COL_NUM(KG_FIG_AB_RATIO_CI_LO, "ci_lo", 9, "%.4f", ab_row, p.ci_lo),
    KG_COL_NUM(KG_FIG_AB_RATIO_CI_HI, "ci_hi", 9, "%.4f", ab_row, p.ci_hi),
    { .key = KG_FIG_AB_ROUNDS, .header = "rounds", .width = 7, .cell = ab_cell_rounds },
    KG_COL_NUM(KG_FIG_AB_P_SIGN, "p_sign", 0, "%.3g", ab_row, p.p_sign),
};

const ab_opts kg_ab_opts_init = { .rounds = 10,
                                  .budget = "0.5",
                                  .mode = "warm",
                                  .band_floor = 0.005 };

/* Not in the gate table: only this folder names it (kg_ab_decide runs it). */
static const struct kg_gate kg_gate_ab = {
    .name = "ab",
    .summary = "A/B two runner builds, interleaved processes: paired ratio and CI",
    .description = ab_description,
    .flags = 0, /* the runners it starts need the GPU, not this process */
    .opts = ab_opt_table,
    .n_opts = KG_ARRAY_LEN(ab_opt_table),
    .opts_size = sizeof(ab_opts),
    .opts_init = &kg_ab_opts_init,
    .begin = ab_begin,
    .run_case = ab_run_case,
    .figures = ab_figures,
    .result_free = free,
    .result_size = sizeof(ab_row),
    .end = ab_end,
    .columns = ab_columns,
    .n_columns = KG_ARRAY_LEN(ab_columns),
};

int kg_ab_check_exes(const ab_opts *o)
{
    for (int s = 0; s < 2; s++)
        if (strchr(o->exe[s], '/') && access(o->exe[s], X_OK) != 0)
            return KG_ERR(KG_EINVAL, "ab: %s: not an executable file", o->exe[s]);
    return 0;
}

/* Never called: ab decides cases from the runners' reports, it launches nothing. */
static int ab_no_setup(const kg_setup_args *a, void **state, kg_case_io *io)
{
    KG_UNUSED(a), KG_UNUSED(state), KG_UNUSED(io);
    return KG_ERR(KG_EINTERNAL, "ab: report cases are compared, never set up");
}
static int ab_no_launch(void *state, cudaStream_t s)
{
    KG_UNUSED(state), KG_UNUSED(s);
    return KG_ERR(KG_EINTERNAL, "ab: report cases are compared, never launched");
}
static int ab_no_reference(void *state, cudaStream_t s, void *ref)
{
    KG_UNUSED(state), KG_UNUSED(s), KG_UNUSED(ref);
    return KG_ERR(KG_EINTERNAL, "ab: report cases have no reference");
}

/* The cases of the A/B reports as a registry the driver can loop over (ids owned by st);
 * without a GPU, this runner's own cases (each SKIP). */
int kg_ab_registry(kg_registry **out, const ab_state *st, kg_registry *reg)
{
    int rc = 0;
    *out = NULL;
    if (st->no_gpu || st->t.n == 0)
        return 0;
    KG_TRY(kg_registry_new(out));
    for (size_t i = 0; i < st->t.n; i++) {
        kg_case_desc d = { .id = st->t.v[i].id,
                           .op = "ab",
                           .setup = ab_no_setup,
                           .launch = ab_no_launch,
                           .reference = ab_no_reference,
                           .ref_dtype = KG_DTYPE_F64,
                           .parity = KG_PARITY_BITWISE_INIT };
        KG_TRY(kg_registry_add(*out, &d));
    }
cleanup:
    KG_UNUSED(reg);
    return rc;
}

kg_opt_table kg_ab_opt_table(kg_ab_opts *o)
{
    return (kg_opt_table){ .opts = kg_gate_ab.opts, .n = kg_gate_ab.n_opts, .target = o };
}

const char *kg_ab_description(void) { return kg_gate_ab.description; }

int kg_ab_decide(kg_run *run, const kg_registry *reg, const kg_ab_opts *o)
{
    return kg_run_gate(run, reg, &kg_gate_ab, o, false);
}
