/* The driver: everything around a gate's run_case (gate.h). One case loop, one rule for a
 * case's own error, one SKIP without a GPU, one console table from the declared columns, one
 * place that adds report rows, one exit-code policy. */
#include <stdlib.h>
#include <string.h>
#include "core/report_keys.h"
#include "driver/driver.h"

int kg_exit_code_for_counts(const int counts[KG_VERDICT_N])
{
    return counts[KG_VERDICT_FAIL] || counts[KG_VERDICT_XPASS] ? KG_EXIT_GATE_FAILED
           : counts[KG_VERDICT_ERROR]                          ? KG_EXIT_RUNTIME
           : counts[KG_VERDICT_SKIP]                           ? KG_EXIT_NO_GPU
                                                               : KG_EXIT_PASS;
}

static void drv_print_device(const kg_device_info *d)
{
    printf("device %d: %s (sm_%d%d, %d SMs, %s), driver CUDA %d.%d, runtime %d.%d\n", d->ordinal,
           d->name, d->cc_major, d->cc_minor, d->sm_count, d->uuid, d->driver_version / 1000,
           (d->driver_version % 1000) / 10, d->runtime_version / 1000,
           (d->runtime_version % 1000) / 10);
}

/* The worker probes the device: this process never touches CUDA (worker.c). No GPU: the run
 * goes on, its GPU gates SKIP. --devices: a worker on each further GPU (pool.c). */
static int drv_open_devices(kg_run *run)
{
    int rc = kg_worker_start(run);
    if (rc == 1)
        rc = kg_device_open(&run->dev, run->opts.device);
    if (rc == KG_ENODEV) {
        printf("kgate: %s: GPU checks are skipped\n", kg_error_last());
        kg_report_set_no_device(run->rep, kg_error_last());
        run->no_gpu = true;
        rc = 0;
    } else if (rc == 0) {
        run->env.dev = &run->dev;
        kg_report_set_device(run->rep, &run->dev);
        drv_print_device(&run->dev);
    }
    if (rc == 0 && run->opts.n_devices > 1)
        rc = run->isolated ? kg_pool_start(run)
                           : KG_ERR(KG_EINVAL, "--devices: one worker per GPU needs case "
                                               "isolation (KGATE_ISOLATION=0 runs every case "
                                               "in this process)");
    return rc;
}

int kg_run_begin(kg_run *run, const char *command, const kg_common_opts *o, const kg_registry *reg,
                 const char *banner)
{
    int rc = 0;
    memset(run, 0, sizeof *run);
    run->began_s = kg_now_s();
    run->open_part = -1;
    run->command = command;
    run->opts = *o;
    if (o->n_devices && run->opts.device != o->devices[0]) {
        rc = KG_ERR(KG_EINVAL,
                    "--device %d and --devices %d,...: the first of --devices is the run's "
                    "device; give one of the two",
                    run->opts.device, o->devices[0]);
        goto cleanup;
    }
    KG_TRY(kg_select(&run->sel, reg, o->filter, o->tag));
    KG_TRY(kg_selection_exclude(&run->sel, reg, o->exclude));
    if (o->report_path)
        KG_TRY(kg_path_check_writable(o->report_path));
    if (o->report_path && strcmp(o->report_path, "-") == 0)
        KG_TRY(kg_stdout_for_data()); /* the tables on stderr, stdout the report alone */
    if (!run->opts.seed_set)
        run->opts.seed = kg_seed_fresh();
    KG_TRY(kg_report_new(&run->rep, command, o->diagnostic));
    kg_report_set_seed(run->rep, run->opts.seed);
    if (o->shard_count) { /* after every other selection rule: a part of what they selected */
        cJSON *shard = NULL;
        KG_TRY(kg_shard_select(&run->sel, reg, o, &shard));
        kg_report_set_extra(run->rep, KG_RK_SHARD, shard);
    }
    if (kg_self_exe(run->self_exe, sizeof run->self_exe) < 0)
        run->self_exe[0] = '\0'; /* preflight then reads /proc/self/exe itself */
    run->env = (kg_gate_env){ .seed = run->opts.seed,
                              .device = run->opts.device,
                              .dev = NULL,
                              .diagnostic = o->diagnostic,
                              .quiet = o->quiet,
                              .self_exe = run->self_exe[0] ? run->self_exe : NULL,
                              .filter = o->filter,
                              .rep = run->rep };
    if (o->no_device) { /* preflight --static: nothing random to reproduce, no GPU to find */
        printf("kgate %s: %zu case(s), static (no GPU needed)\n", command, run->sel.n);
        kg_report_set_no_device(run->rep, "not probed: the static path needs no GPU");
        return 0;
    }
    if (kg_interrupted()) { /* interrupted before the run began (ab's rounds): no worker */
        kg_report_set_no_device(run->rep, "not probed: the run was interrupted before it");
        return 0;
    }
    printf("kgate %s: seed %llu (reproduce with --seed %llu), %zu case(s)%s%s\n", command,
           (unsigned long long)run->opts.seed, (unsigned long long)run->opts.seed, run->sel.n,
           banner ? ", " : (o->diagnostic ? ", diagnostic (non-certifying)" : ""),
           banner ? banner : "");
    run->env.lanes = kg_pool_gpus(run); /* before any worker: each inherits it */
    rc = drv_open_devices(run);
cleanup:
    return rc;
}

static int drv_gate_local(kg_run *run, const kg_registry *reg, const struct kg_gate *g,
                          const void *opts)
{
    int rc = 0;
    kg_gate_session s;
    KG_TRY(kg_session_begin(&s, g, opts, &run->env, true));
    for (size_t i = 0; i < run->sel.n; i++) {
        const kg_case_desc *d = kg_registry_get(reg, run->sel.idx[i]);
        kg_case_result res;
        cJSON *fig = NULL;
        rc = kg_session_case(&s, d, &run->env, &res, &fig);
        if (rc == 0)
            rc = kg_run_record(run, g, d, &res, fig);
        else if (res.data && g->result_free)
            g->result_free(res.data);
        KG_TRY(rc);
    }
cleanup:
    rc = kg_session_end(&s, &run->env, rc);
    kg_run_part_gate(run, s.begin_s, s.end_s);
    return rc;
}

int kg_run_gate(kg_run *run, const kg_registry *reg, const struct kg_gate *g, const void *opts,
                bool heading)
{
    if (heading && !run->env.quiet)
        printf("\n== %s ==\n", g->name);
    /* Without a GPU a gate that needs one says so under its header, not nothing. */
    if (run->no_gpu && (g->flags & KG_GATE_NEEDS_GPU) && !run->env.quiet)
        printf("%s: every case SKIP (%zu): this gate needs a GPU, and none was found\n", g->name,
               run->sel.n);
    fflush(stdout);
    kg_run_part_begin(run, g->name);
    bool pool = run->isolated && run->opts.n_devices > 1 && !(g->flags & KG_GATE_ONE_DEVICE);
    int rc = pool            ? kg_pool_gate(run, reg, g, opts)
             : run->isolated ? kg_worker_gate(run, reg, g, opts)
                             : drv_gate_local(run, reg, g, opts);
    if (g->flags & KG_GATE_RETIRES_WORKER)
        (void)kg_run_fresh_worker(run); /* its state goes with the worker (gate.h) */
    kg_run_part_end(run);
    return rc;
}

int kg_run_fresh_worker(kg_run *run)
{
    if (!run->isolated)
        return 0;        /* KGATE_ISOLATION=0: one process */
    kg_worker_stop(run); /* the next case spawns a fresh worker (wk_case); none alive: no-op */
    return 1;
}

void kg_run_counts(const kg_run *run, int counts[KG_VERDICT_N5])
{
    kg_report_counts(run->rep, counts);
}

/* What a run's results are: "65 selftest rows + 31 cases x 5 gates", counted from the report's
 * rows by gate (a gate with another count is named: "parity 31 + bench 29"). */
static void drv_results_of(char *buf, size_t n, const kg_run *run)
{
    const char *name[16];
    int count[16], ng = 0;
    size_t u = 0;
    const cJSON *it;
    cJSON_ArrayForEach(it, cJSON_GetObjectItem(kg_report_json(run->rep), KG_RK_RESULTS)) {
        const char *g = cJSON_GetStringValue(cJSON_GetObjectItem(it, KG_RES_GATE));
        int k = 0;
        while (g && k < ng && strcmp(name[k], g) != 0)
            k++;
        if (!g || (k == ng && ng == 16))
            continue;
        if (k == ng)
            name[ng] = g, count[ng++] = 0;
        count[k]++;
    }
    int first = -1, gates = 0;
    bool same = true;
    buf[0] = '\0';
    for (int k = 0; k < ng; k++) {
        if (strcmp(name[k], "selftest") == 0) {
            u += (size_t)snprintf(buf + u, u < n ? n - u : 0, "%d selftest rows", count[k]);
            continue;
        }
        same &= first < 0 || count[k] == count[first];
        first = first < 0 ? k : first;
        gates++;
    }
    if (first < 0)
        return;
    if (same) {
        snprintf(buf + u, u < n ? n - u : 0, "%s%d case%s x %d gate%s", u ? " + " : "",
                 count[first], count[first] == 1 ? "" : "s", gates, gates == 1 ? "" : "s");
        return;
    }
    for (int k = 0; k < ng; k++)
        if (strcmp(name[k], "selftest") != 0)
            u += (size_t)snprintf(buf + u, u < n ? n - u : 0, "%s%s %d", u ? " + " : "", name[k],
                                  count[k]);
}

/* "N failed" in the colour of FAIL when N > 0 (core/tty.c), plain otherwise. */
static void drv_count(int n, const char *what, const char *word)
{
    printf("%s%d %s%s", n ? kg_color_begin(word) : "", n, what, n ? kg_color_end(word) : "");
}

int kg_run_summary(const kg_run *run)
{
    int n[KG_VERDICT_N];
    char of[512] = "";
    kg_report_counts_full(run->rep, n);
    int total = 0;
    for (int v = 0; v < KG_VERDICT_N; v++)
        total += n[v];
    /* Each result counted once, so the counts add up to the total ("31 cases: 1 passed, 30
     * warnings"); a run's results are what drv_results_of says ("= 65 selftest rows + 31
     * cases x 5 gates"). */
    bool cases = (size_t)total == run->sel.n;
    if (!cases)
        drv_results_of(of, sizeof of, run);
    printf("%s%s: %d %s%s%s: ", strcmp(run->command, "run") == 0 ? "\n" : "", run->command, total,
           cases ? (total == 1 ? "case" : "cases") : (total == 1 ? "result" : "results"),
           of[0] ? " = " : "", of);
    drv_count(n[KG_VERDICT_PASS], "passed", "PASS");
    printf(", ");
    drv_count(n[KG_VERDICT_WARN], "warnings", "WARN");
    printf(", ");
    drv_count(n[KG_VERDICT_FAIL], "failed", "FAIL");
    printf(", ");
    drv_count(n[KG_VERDICT_ERROR], "errors", "ERROR");
    printf(", ");
    drv_count(n[KG_VERDICT_SKIP], "skipped", "SKIP");
    if (n[KG_VERDICT_XFAIL] || n[KG_VERDICT_XPASS])
        printf(", %d expected failures (XFAIL), %d unexpected passes (XPASS)", n[KG_VERDICT_XFAIL],
               n[KG_VERDICT_XPASS]);
    printf("\n");
    return kg_exit_code_for_counts(n);
}

int kg_run_write(kg_run *run)
{
    int rc = 0;
    if (!run->opts.report_path)
        return 0;
    kg_report_set_extra(run->rep, KG_RK_TIMING, kg_run_timing_json(run));
    KG_TRY(kg_report_write(run->rep, run->opts.report_path));
    printf("report: %s\n", run->opts.report_path);
cleanup:
    return rc;
}

int kg_run_write_partial(kg_run *run)
{
    if (!(run->incomplete || kg_interrupted()) || !run->rep)
        return 0;
    kg_report_set_extra(run->rep, KG_RK_INCOMPLETE, cJSON_CreateTrue());
    return kg_run_write(run);
}

int kg_run_finish(kg_run *run, int rc)
{
    int code;
    if (rc < 0 && (run->incomplete || kg_interrupted()))
        (void)kg_run_write_partial(run);
    if (rc < 0 || !run->rep)
        return rc < 0 ? kg_cli_fail(rc) : KG_EXIT_PASS;
    code = kg_run_summary(run);
    rc = kg_run_write(run);
    return rc < 0 ? kg_cli_fail(rc) : code;
}

void kg_run_free(kg_run *run)
{
    kg_worker_stop(run);
    for (size_t i = 0; i < run->n_rows; i++)
        if (run->rows[i].res.data && run->rows[i].gate->result_free)
            run->rows[i].gate->result_free(run->rows[i].res.data);
    free(run->rows);
    kg_report_free(run->rep);
    kg_selection_free(&run->sel);
    memset(run, 0, sizeof *run);
}
