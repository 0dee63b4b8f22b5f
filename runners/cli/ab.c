/* `kgate ab A_EXE B_EXE`: same-session A/B of two runner builds. Each round runs A then B as
 * separate processes (`bench --report`) on the same GPU with the same seed, so drift in clocks
 * or temperature hits both sides of a pair alike; the per-round ratios B/A give a paired ratio
 * with a distribution-free confidence interval and a verdict. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "core/kg_core.h"
#include "core/stats.h"

#define AB_MAX_CASES 4096

typedef struct {
    char *id;
    double *a, *b; /* per-round medians (us); NaN when missing */
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

/* Read a child's report: median_us of every bench result into column `round` of side a/b. */
static int read_report(ab_table *t, const char *path, int round, bool side_a, cJSON **device)
{
    int rc = 0;
    char *text = NULL;
    size_t len = 0;
    cJSON *root = NULL;
    const cJSON *res, *it;
    KG_TRY(kg_file_read(&text, &len, path));
    root = cJSON_Parse(text);
    res = cJSON_GetObjectItemCaseSensitive(root, "results");
    if (!cJSON_IsArray(res)) {
        rc = KG_ERR(KG_EPARSE, "ab: %s is not a kgate report (no results array)", path);
        goto cleanup;
    }
    if (device && !*device) {
        const cJSON *d = cJSON_GetObjectItemCaseSensitive(root, "device");
        if (cJSON_IsObject(d))
            *device = cJSON_Duplicate(d, true);
    }
    cJSON_ArrayForEach(it, res)
    {
        const char *g = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(it, "gate"));
        const char *id = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(it, "case"));
        const cJSON *fig = cJSON_GetObjectItemCaseSensitive(it, "figures");
        const cJSON *m = cJSON_GetObjectItemCaseSensitive(fig, "median_us");
        if (!g || !id || strcmp(g, "bench") != 0 || !cJSON_IsNumber(m) || !(m->valuedouble > 0))
            continue;
        ab_case *c = table_get(t, id);
        if (!c) {
            rc = KG_ERR(KG_ENOMEM, "ab: out of memory");
            goto cleanup;
        }
        (side_a ? c->a : c->b)[round] = m->valuedouble;
    }
cleanup:
    cJSON_Delete(root);
    free(text);
    return rc;
}

static const char ab_usage[] =
    "usage: kgate ab A_EXE B_EXE [--filter REGEX] [--rounds N] [--budget SECONDS]\n"
    "                [--mode warm|cold] [--band-floor F] [--seed N] [--device N] [--report FILE]\n"
    "\n"
    "Compare two builds of runners on the same GPU: each round runs `A_EXE bench` then\n"
    "`B_EXE bench` as separate processes with the same seed (default 10 rounds). Per case, the\n"
    "ratios B/A of the rounds' medians give a paired ratio, its order-statistic 95% CI and a\n"
    "sign test. Verdict: B_FASTER when ci_hi < 1 and the median ratio < 1 - F; B_SLOWER\n"
    "(fails) when ci_lo > 1 and the median ratio > 1 + F; SAME otherwise (F = --band-floor,\n"
    "default 0.005). Each bench run gets --budget (default 0.5 s per case).\n"
    "\n"
    "exit codes: 0 B not slower, 1 B slower on a case, 2 usage error, 3 no GPU, 4 runtime error\n";

enum { AB_ROUNDS = 0x1600, AB_BUDGET, AB_MODE, AB_FLOOR };

int kg_cmd_ab(kg_registry *reg, int argc, char **argv)
{
    static const struct option longopts[] = {
        KG_COMMON_LONGOPTS,
        { "rounds", required_argument, NULL, AB_ROUNDS },
        { "budget", required_argument, NULL, AB_BUDGET },
        { "mode", required_argument, NULL, AB_MODE },
        { "band-floor", required_argument, NULL, AB_FLOOR },
        { 0, 0, 0, 0 }
    };
    int rc = 0, c, rounds = 10, code = KG_EXIT_PASS;
    const char *budget = "0.5", *mode = "warm";
    double floor_rel = 0.005, bud = 0;
    kg_common_opts co = KG_COMMON_OPTS_INIT;
    bool no_gpu = false;
    char dir[] = "/tmp/kgate-ab-XXXXXX", devs[16], seeds[32];
    bool have_dir = false;
    ab_table t = { 0 };
    kg_report *rep = NULL;
    cJSON *device_json = NULL;
    KG_UNUSED(reg);
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
        switch (c) {
        case KG_OPT_HELP: fputs(ab_usage, stdout); return KG_EXIT_PASS;
        case AB_ROUNDS: KG_TRY(kg_parse_int("--rounds", optarg, 3, 1000, &rounds)); break;
        case AB_BUDGET:
            KG_TRY(kg_parse_double("--budget", optarg, &bud));
            if (!(bud > 0 && bud <= 3600)) {
                rc = KG_ERR(KG_EINVAL, "--budget: expected seconds in (0, 3600], got '%s'", optarg);
                goto cleanup;
            }
            budget = optarg;
            break;
        case AB_MODE:
            if (strcmp(optarg, "warm") != 0 && strcmp(optarg, "cold") != 0) {
                rc = KG_ERR(KG_EINVAL, "--mode: expected warm or cold, got '%s'", optarg);
                goto cleanup;
            }
            mode = optarg;
            break;
        case AB_FLOOR:
            KG_TRY(kg_parse_double("--band-floor", optarg, &floor_rel));
            if (!(floor_rel >= 0 && floor_rel < 1)) {
                rc = KG_ERR(KG_EINVAL, "--band-floor: expected a relative tolerance in [0, 1), "
                                       "got '%s'", optarg);
                goto cleanup;
            }
            break;
        default:
            KG_TRY(kg_common_opt(&co, c, optarg)); /* --filter --seed --device --report */
            if (rc == 1) {
                rc = 0;
                break;
            }
            rc = kg_opt_unknown("ab", ab_usage, argv);
            goto cleanup;
        }
    }
    if (argc - optind != 2) {
        fputs(ab_usage, stderr);
        rc = KG_ERR(KG_EINVAL, "ab: expected two runner executables A_EXE B_EXE, got %d "
                               "argument(s)", argc - optind);
        goto cleanup;
    }
    const char *exe[2] = { argv[optind], argv[optind + 1] };
    for (int s = 0; s < 2; s++)
        if (strchr(exe[s], '/') && access(exe[s], X_OK) != 0) {
            rc = KG_ERR(KG_EINVAL, "ab: %s: not an executable file", exe[s]);
            goto cleanup;
        }
    if (co.report_path)
        KG_TRY(kg_path_check_writable(co.report_path));
    if (!co.seed_set)
        co.seed = kg_seed_fresh();
    if (!mkdtemp(dir)) {
        rc = KG_ERR(KG_EIO, "ab: cannot create a temporary directory: %s", strerror(errno));
        goto cleanup;
    }
    have_dir = true;
    t.rounds = rounds;
    KG_TRY(kg_report_new(&rep, "ab", true));
    kg_report_set_seed(rep, co.seed);
    printf("kgate ab: A=%s B=%s, %d rounds (A then B, separate processes), seed %llu\n", exe[0],
           exe[1], rounds, (unsigned long long)co.seed);
    snprintf(devs, sizeof devs, "%d", co.device);
    snprintf(seeds, sizeof seeds, "%llu", (unsigned long long)co.seed);
    for (int r = 0; r < rounds && !no_gpu; r++) {
        for (int s = 0; s < 2; s++) {
            char rp[96], lp[96];
            int ec = 0;
            snprintf(rp, sizeof rp, "%s/%c%d.json", dir, "AB"[s], r);
            snprintf(lp, sizeof lp, "%s/%c%d.log", dir, "AB"[s], r);
            char *args[16];
            int n = 0;
            args[n++] = (char *)exe[s];
            args[n++] = "bench";
            args[n++] = "--seed";
            args[n++] = seeds;
            args[n++] = "--device";
            args[n++] = devs;
            args[n++] = "--budget";
            args[n++] = (char *)budget;
            args[n++] = "--mode";
            args[n++] = (char *)mode;
            args[n++] = "--report";
            args[n++] = rp;
            if (co.filter) {
                args[n++] = "--filter";
                args[n++] = (char *)co.filter;
            }
            args[n] = NULL;
            KG_TRY(kg_run_logged(&ec, (const char *const *)args, lp, false, "ab"));
            if (ec == KG_EXIT_NO_GPU) {
                no_gpu = true;
                printf("kgate: no CUDA device available: A/B skipped\n");
                break;
            }
            if (ec != KG_EXIT_PASS && ec != KG_EXIT_GATE_FAILED) {
                log_tail(lp);
                rc = KG_ERR(ec == KG_EXIT_USAGE ? KG_EINVAL : KG_EIO,
                            "ab: round %d: %s bench exited %d (its output is above)", r + 1,
                            exe[s], ec);
                goto cleanup;
            }
            KG_TRY(read_report(&t, rp, r, s == 0, &device_json));
            printf("round %d/%d: %s done\n", r + 1, rounds, s == 0 ? "A" : "B");
            fflush(stdout);
        }
    }
    if (no_gpu) {
        kg_report_set_no_device(rep, "no CUDA device available");
        KG_TRY(kg_report_add(rep, "ab", "*", KG_VERDICT_SKIP, "no CUDA device", NULL));
        code = KG_EXIT_NO_GPU;
        goto write;
    }
    if (device_json) {
        kg_report_set_extra(rep, "device", device_json);
        device_json = NULL;
    }
    printf("%-44s %-9s %9s %9s %9s %7s %s\n", "case", "decision", "B/A", "ci_lo", "ci_hi",
           "rounds", "p_sign");
    for (size_t i = 0; i < t.n; i++) {
        ab_case *k = &t.v[i];
        double a[1000], b[1000];
        size_t m = 0;
        for (int r = 0; r < rounds; r++)
            if (isfinite(k->a[r]) && isfinite(k->b[r])) {
                a[m] = k->a[r];
                b[m++] = k->b[r];
            }
        if (m < 3) {
            KG_TRY(kg_report_add(rep, "ab", k->id, KG_VERDICT_ERROR,
                                 "fewer than 3 rounds with both A and B medians", NULL));
            continue;
        }
        kg_paired_ratio p;
        KG_TRY(kg_stats_paired_ratio(&p, a, b, m, 0.95));
        const char *dec = "SAME";
        if (p.ci_hi < 1.0 && p.median < 1.0 - floor_rel)
            dec = "B_FASTER";
        else if (p.ci_lo > 1.0 && p.median > 1.0 + floor_rel)
            dec = "B_SLOWER";
        cJSON *f = cJSON_CreateObject();
        cJSON_AddStringToObject(f, "decision", dec);
        cJSON_AddNumberToObject(f, "ratio_median", p.median);
        cJSON_AddNumberToObject(f, "ratio_ci_lo", p.ci_lo);
        cJSON_AddNumberToObject(f, "ratio_ci_hi", p.ci_hi);
        cJSON_AddNumberToObject(f, "ci_coverage", p.ci_coverage);
        cJSON_AddNumberToObject(f, "ratio_geomean", p.geomean);
        cJSON_AddNumberToObject(f, "rounds", (double)m);
        cJSON_AddNumberToObject(f, "b_slower_rounds", p.above);
        cJSON_AddNumberToObject(f, "b_faster_rounds", p.below);
        cJSON_AddNumberToObject(f, "p_sign", p.p_sign);
        cJSON_AddNumberToObject(f, "band_floor", floor_rel);
        cJSON_AddItemToObject(f, "a_median_us", cJSON_CreateDoubleArray(a, (int)m));
        cJSON_AddItemToObject(f, "b_median_us", cJSON_CreateDoubleArray(b, (int)m));
        cJSON_AddStringToObject(f, "a_exe", exe[0]);
        cJSON_AddStringToObject(f, "b_exe", exe[1]);
        char msg[256];
        snprintf(msg, sizeof msg, "%s: B/A %.4f (95%% CI %.4f..%.4f, coverage %.3f, %zu rounds, "
                 "sign test p %.3g)", dec, p.median, p.ci_lo, p.ci_hi, p.ci_coverage, m, p.p_sign);
        printf("%-44s %-9s %9.4f %9.4f %9.4f %7zu %.3g\n", k->id, dec, p.median, p.ci_lo,
               p.ci_hi, m, p.p_sign);
        KG_TRY(kg_report_add(rep, "ab", k->id, strcmp(dec, "B_SLOWER") == 0 ? KG_VERDICT_FAIL
                                                                              : KG_VERDICT_PASS,
                             msg, f));
    }
    {
        int n[5];
        kg_report_counts(rep, n);
        code = n[KG_VERDICT_FAIL] ? KG_EXIT_GATE_FAILED
               : n[KG_VERDICT_ERROR] ? KG_EXIT_RUNTIME : KG_EXIT_PASS;
        printf("ab: %d cases, %d B slower, %d errors\n", (int)t.n, n[KG_VERDICT_FAIL],
               n[KG_VERDICT_ERROR]);
    }
write:
    if (co.report_path) {
        KG_TRY(kg_report_write(rep, co.report_path));
        printf("report: %s\n", co.report_path);
    }
cleanup:
    if (have_dir) { /* our own files only: A<r>/B<r> .json/.log, then the directory */
        for (int r = 0; r < rounds; r++)
            for (int s = 0; s < 2; s++) {
                char p[96];
                snprintf(p, sizeof p, "%s/%c%d.json", dir, "AB"[s], r);
                unlink(p);
                snprintf(p, sizeof p, "%s/%c%d.log", dir, "AB"[s], r);
                unlink(p);
            }
        rmdir(dir);
    }
    cJSON_Delete(device_json);
    kg_report_free(rep);
    table_free(&t);
    return rc < 0 ? kg_cli_fail(rc) : code;
}
