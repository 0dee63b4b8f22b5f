/* The production step's typed path (kg_advance_from_run) against the JSON path
 * (kg_advance_parse) over the same run: a kg_run filled the way the driver fills it (typed rows
 * of every gate, the report rows from each gate's figures hook), no GPU needed. Both must give
 * the same candidates and the same all_passed decision. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "bench/bench.h"
#include "production/production.h"
#include "fake_run.h"
#include "kg_test.h"

extern const struct kg_gate kg_gate_parity; /* a row of another gate (the driver's table) */

/* A bench row as bench.c leaves it: engine summary, decision, context. */
static int g_processes = 3; /* the processes behind every bench row bench_row makes */

static kg_bench_row *bench_row(double med, double lo, double hi, size_t kept, kg_bench_decision dec)
{
    kg_bench_row *b = calloc(1, sizeof *b);
    b->r.sum.median = med;
    b->r.sum.ci_lo = lo;
    b->r.sum.ci_hi = hi;
    b->r.kept = kept; /* no per-sample arrays: taken 0 */
    b->r.have_sum = true;
    b->r.stop = "ci_converged";
    b->v.decision = dec;
    b->v.processes = g_processes;
    b->v.env_lo = med * 0.998; /* a spread of +-0.2% across the processes */
    b->v.env_hi = med * 1.002;
    b->v.run_k = 4;
    snprintf(b->v.run_power_state, sizeof b->v.run_power_state, "full-clock");
    snprintf(b->v.why, sizeof b->v.why, "test");
    b->metric = "time_us_warm";
    b->direction = KG_LOWER_IS_BETTER;
    snprintf(b->device_class, sizeof b->device_class, "GPU X/sm_90");
    b->gbps = b->tflops = b->pct_copy = b->pct_gemm = NAN;
    return b;
}

/* Every gate over both cases; bench rows a: NO_MARK, b: SAME. `bad` makes parity of b FAIL. */
static void fill(kg_run *run, const kg_device_info *dev, bool bad)
{
    static size_t idx[] = { 0, 1 };
    memset(run, 0, sizeof *run);
    run->command = "run";
    run->sel = (kg_selection){ .idx = NULL, .n = 2 };
    (void)idx;
    run->dev = *dev;
    run->env = (kg_gate_env){ .seed = 1, .dev = &run->dev, .diagnostic = false };
    kg_report_new(&run->rep, "run", false);
    kg_report_set_device(run->rep, dev);
    for (size_t g = 0; g < kg_n_gates; g++)
        for (size_t c = 0; c < 2; c++) {
            if (kg_gates[g] == &kg_gate_bench)
                add_row(run, kg_gates[g], c, KG_VERDICT_PASS,
                        c == 0 ? bench_row(10, 9.9, 10.2, 40, KG_BENCH_NO_MARK)
                               : bench_row(20, 19.9, 20.1, 30, KG_BENCH_SAME));
            else
                add_row(run, kg_gates[g], c,
                        bad && c == 1 && kg_gates[g] == &kg_gate_parity ? KG_VERDICT_FAIL
                                                                        : KG_VERDICT_PASS,
                        NULL);
        }
    cJSON *gl = cJSON_CreateArray();
    for (size_t g = 0; g < kg_n_gates; g++)
        cJSON_AddItemToArray(gl, cJSON_CreateString(kg_gates[g]->name));
    kg_report_set_extra(run->rep, "gates", gl);
}

static void compare(const kg_advance_input *t, const kg_advance_input *j)
{
    CHECK(t->certifying == j->certifying && t->all_passed == j->all_passed);
    CHECK(t->n_bench == j->n_bench && t->n_same == j->n_same && t->n_cands == j->n_cands);
    for (size_t i = 0; i < t->n_cands && i < j->n_cands; i++) {
        const kg_mark *a = &t->cands[i].cand, *b = &j->cands[i].cand;
        CHECK(strcmp(a->case_id, b->case_id) == 0 && strcmp(a->metric, b->metric) == 0);
        CHECK(strcmp(a->device_class, b->device_class) == 0);
        CHECK(a->value == b->value && a->samples == b->samples);
        CHECK(fabs(a->band_rel - b->band_rel) < 1e-12 && a->direction == b->direction);
        CHECK(strcmp(a->driver, b->driver) == 0 && strcmp(a->commit, b->commit) == 0);
        CHECK(strcmp(a->date, b->date) == 0 && strcmp(a->run_id, b->run_id) == 0);
        CHECK(a->runs == b->runs && a->env_lo == b->env_lo && a->env_hi == b->env_hi);
        CHECK(a->k == b->k && a->k == 4 && a->power_state && b->power_state &&
              strcmp(a->power_state, b->power_state) == 0);
    }
}

/* ---- run --production's combination of N processes (kg_production_case) ---------- */

static kg_mark g_mark; /* the mark of op/a; op/b has none */

static const kg_mark *t_lookup(const void *marks, const char *cls, const char *id,
                               const char *metric)
{
    (void)marks, (void)cls, (void)metric;
    return strcmp(id, "op/a") == 0 ? &g_mark : NULL;
}

/* Every gate over both cases; the bench rows combined from 3 processes of op/a at `meds_a`
 * (each decided `dec_a[i]` on its own) and of op/b (no mark). */
static void fill_combined(kg_run *run, const kg_device_info *dev, const double *meds_a,
                          const kg_bench_decision *dec_a)
{
    kg_bench_gate_opts bo = KG_BENCH_GATE_OPTS_INIT;
    bo.lookup = t_lookup;
    memset(run, 0, sizeof *run);
    run->command = "run";
    run->sel = (kg_selection){ .idx = NULL, .n = 2 };
    run->dev = *dev;
    run->env = (kg_gate_env){ .seed = 1, .dev = &run->dev, .diagnostic = false, .quiet = true };
    kg_report_new(&run->rep, "run", false);
    kg_report_set_device(run->rep, dev);
    for (size_t g = 0; g < kg_n_gates; g++) {
        if (kg_gates[g] != &kg_gate_bench) {
            for (size_t c = 0; c < 2; c++)
                add_row(run, kg_gates[g], c, KG_VERDICT_PASS, NULL);
            continue;
        }
        g_processes = 1;
        for (size_t c = 0; c < 2; c++) {
            kg_run_row rows[3];
            const kg_run_row *pr[3];
            for (int i = 0; i < 3; i++) {
                double m = c == 0 ? meds_a[i] : 20.0 + 0.01 * i;
                kg_bench_row *b = bench_row(m, m * 0.998, m * 1.002, 100,
                                            c == 0 ? dec_a[i] : KG_BENCH_NO_MARK);
                b->r.taken = 110; /* as a worker's row reaches the parent: no sample arrays */
                b->r.dropped = 10;
                rows[i] = (kg_run_row){ .gate = &kg_gate_bench,
                                        .desc = &cases[c],
                                        .res = { .verdict = KG_VERDICT_PASS, .data = b } };
                pr[i] = &rows[i];
            }
            CHECK(kg_production_case(run, &kg_gate_bench, pr, NULL, 3, &cases[c], &bo) == 0);
            cJSON *res = cJSON_GetObjectItem(kg_report_json(run->rep), "results");
            cJSON *fig = cJSON_GetObjectItem(cJSON_GetArrayItem(res, cJSON_GetArraySize(res) - 1),
                                             "figures");
            CHECK(cJSON_GetObjectItem(fig, "samples_taken") &&
                  cJSON_GetObjectItem(fig, "samples_taken")->valuedouble == 330 &&
                  cJSON_GetObjectItem(fig, "processes")->valuedouble == 3);
            CHECK(c == 1 ||
                  strcmp(cJSON_GetStringValue(
                             cJSON_GetObjectItem(cJSON_GetObjectItem(fig, "mark"), "power_state")),
                         "full-clock") == 0);
            for (int i = 0; i < 3; i++)
                kg_gate_bench.result_free(rows[i].res.data);
        }
        g_processes = 3;
    }
    cJSON *gl = cJSON_CreateArray();
    for (size_t g = 0; g < kg_n_gates; g++)
        cJSON_AddItemToArray(gl, cJSON_CreateString(kg_gates[g]->name));
    kg_report_set_extra(run->rep, "gates", gl);
}

/* The combined rows through both advance paths. Returns the typed input (caller frees). */
static kg_advance_input *combined_inputs(const kg_device_info *dev, const double *meds,
                                         const kg_bench_decision *dec)
{
    kg_run run;
    kg_advance_input *t = NULL, *j = NULL;
    fill_combined(&run, dev, meds, dec);
    CHECK(kg_advance_from_run(&t, &run, "test") == 0 && t);
    CHECK(kg_advance_parse(&j, kg_report_json(run.rep), "run.json", "test") == 0 && j);
    if (t && j)
        compare(t, j);
    CHECK(t && t->all_passed);
    if (getenv("KG_DUMP_REPORT")) /* for validating against the schema by hand */
        CHECK(kg_report_write(run.rep, getenv("KG_DUMP_REPORT")) == 0);
    kg_advance_input_free(j);
    kg_run_free(&run);
    return t;
}

/* One process's worker faulted on op/a (issue #25: production's bench processes): the row is
 * that process's ERROR, its message naming the process, its figures that process's fault;
 * the case beside it is still combined from all 3. */
static void test_production_fault(const kg_device_info *dev)
{
    kg_run run;
    kg_bench_gate_opts bo = KG_BENCH_GATE_OPTS_INIT;
    memset(&run, 0, sizeof run);
    run.command = "run";
    run.sel = (kg_selection){ .idx = NULL, .n = 2 };
    run.dev = *dev;
    run.env = (kg_gate_env){ .seed = 1, .dev = &run.dev, .diagnostic = false, .quiet = true };
    kg_report_new(&run.rep, "run", false);
    cJSON *fault = cJSON_Parse("{\"class\":\"exit\",\"exit_status\":1,\"gate\":\"bench\","
                               "\"phase\":\"setup\",\"output_tail\":[]}");
    for (size_t c = 0; c < 2; c++) {
        kg_run_row rows[3];
        const kg_run_row *pr[3];
        const cJSON *faults[3] = { NULL, NULL, NULL };
        for (int i = 0; i < 3; i++) {
            bool dead = c == 0 && i == 1;
            rows[i] = (kg_run_row){
                .gate = &kg_gate_bench,
                .desc = &cases[c],
                .res = { .verdict = dead ? KG_VERDICT_ERROR : KG_VERDICT_PASS,
                         .data = dead ? NULL : bench_row(20, 19.9, 20.1, 30, KG_BENCH_NO_MARK) }
            };
            if (dead) {
                snprintf(rows[i].res.message, sizeof rows[i].res.message,
                         "FAULT exit: the process called exit(1) in bench (setup)");
                faults[i] = fault;
            }
            pr[i] = &rows[i];
        }
        CHECK(kg_production_case(&run, &kg_gate_bench, pr, faults, 3, &cases[c], &bo) == 0);
        for (int i = 0; i < 3; i++)
            if (rows[i].res.data)
                kg_gate_bench.result_free(rows[i].res.data);
    }
    cJSON *res = cJSON_GetObjectItem(kg_report_json(run.rep), "results");
    cJSON *a = cJSON_GetArrayItem(res, 0), *b = cJSON_GetArrayItem(res, 1);
    cJSON *f = cJSON_GetObjectItem(cJSON_GetObjectItem(a, "figures"), "fault");
    CHECK(strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(a, "verdict")), "ERROR") == 0);
    CHECK(strstr(cJSON_GetStringValue(cJSON_GetObjectItem(a, "message")),
                 "bench process 2: FAULT exit") != NULL);
    CHECK(f && strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(f, "class")), "exit") == 0 &&
          cJSON_GetObjectItem(f, "process") && cJSON_GetObjectItem(f, "process")->valuedouble == 2);
    CHECK(strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(b, "verdict")), "PASS") == 0 &&
          cJSON_GetObjectItem(cJSON_GetObjectItem(b, "figures"), "processes")->valuedouble == 3);
    cJSON_Delete(fault);
    kg_run_free(&run);
}

static void test_production_combination(const kg_device_info *dev)
{
    memset(&g_mark, 0, sizeof g_mark);
    g_mark.direction = KG_LOWER_IS_BETTER;
    g_mark.value = g_mark.run_median = 10.0;
    g_mark.ci_lo = 9.98;
    g_mark.ci_hi = 10.02;
    g_mark.band_rel = 0.003;
    g_mark.samples = 100;
    g_mark.runs = 3;
    g_mark.power_state = "full-clock";
    /* Every process IMPROVED on its own: op/a is a confirmed IMPROVED candidate, op/b a
     * NO_MARK one, each with runs 3, the envelope, k and the power state. */
    const double fast[] = { 9.50, 9.52, 9.49 };
    const kg_bench_decision all[] = { KG_BENCH_IMPROVED, KG_BENCH_IMPROVED, KG_BENCH_IMPROVED };
    kg_advance_input *t = combined_inputs(dev, fast, all);
    CHECK(t && t->n_cands == 2);
    for (size_t i = 0; t && i < t->n_cands; i++) {
        const kg_mark *c = &t->cands[i].cand;
        CHECK(c->runs == 3 && c->k == 4 && c->power_state &&
              strcmp(c->power_state, "full-clock") == 0 && c->env_lo < c->env_hi);
        CHECK(c->samples == 300); /* the samples of all 3 processes */
        if (strcmp(c->case_id, "op/a") == 0) {
            CHECK(strcmp(t->cands[i].decision, "IMPROVED") == 0);
            CHECK(c->env_lo == 9.49 && c->env_hi == 9.52 && c->run_median == 9.50);
        }
    }
    kg_advance_input_free(t);
    /* One process disagrees (SAME on its own): op/a is not IMPROVED, only op/b advances. */
    const kg_bench_decision one_off[] = { KG_BENCH_IMPROVED, KG_BENCH_SAME, KG_BENCH_IMPROVED };
    t = combined_inputs(dev, fast, one_off);
    CHECK(t && t->n_cands == 1 && strcmp(t->cands[0].cand.case_id, "op/b") == 0);
    CHECK(t && t->n_same == 1);
    kg_advance_input_free(t);
}

int main(void)
{
    kg_device_info dev = { .name = "GPU X",
                           .cc_major = 9,
                           .cc_minor = 0,
                           .driver_version = 13000,
                           .runtime_version = 13000 };
    for (int bad = 0; bad < 2; bad++) {
        kg_run run;
        kg_advance_input *t = NULL, *j = NULL;
        fill(&run, &dev, bad);
        CHECK(kg_advance_from_run(&t, &run, "test") == 0 && t);
        CHECK(kg_advance_parse(&j, kg_report_json(run.rep), "run.json", "test") == 0 && j);
        if (t && j)
            compare(t, j);
        CHECK(t && t->all_passed == !bad);
        CHECK(t && t->n_cands == 1 && t->cands[0].cand.value == 10.2); /* ci_hi, not median */
        /* runs = 3 and the spread: band = max(run band 1.5%, (3+1)/(3-1) x 0.2%) */
        CHECK(t && t->n_cands == 1 && t->cands[0].cand.runs == 3 &&
              fabs(t->cands[0].cand.band_rel - 0.015) < 1e-12);
        CHECK(!bad || (t && strstr(t->why_not, "parity op/b: FAIL")));
        kg_advance_input_free(t);
        kg_advance_input_free(j);
        kg_run_free(&run);
    }
    /* One process (a diagnostic-style row): never a candidate, on either path. */
    {
        kg_run run;
        kg_advance_input *t = NULL, *j = NULL;
        g_processes = 1;
        fill(&run, &dev, false);
        CHECK(kg_advance_from_run(&t, &run, "test") == 0 && t);
        CHECK(kg_advance_parse(&j, kg_report_json(run.rep), "run.json", "test") == 0 && j);
        if (t && j)
            compare(t, j);
        CHECK(t && t->n_cands == 0 && t->n_single == 1 && j && j->n_single == 1);
        kg_advance_input_free(t);
        kg_advance_input_free(j);
        kg_run_free(&run);
        g_processes = 3;
    }
    /* A gate that did not decide every case blocks the advance. */
    {
        kg_run run;
        kg_advance_input *t = NULL;
        fill(&run, &dev, false);
        run.sel.n = 3;
        CHECK(kg_advance_from_run(&t, &run, "test") == 0 && t && !t->all_passed);
        CHECK(t && strstr(t->why_not, "3 case(s)"));
        kg_advance_input_free(t);
        kg_run_free(&run);
    }
    test_production_combination(&dev);
    test_production_fault(&dev);
    printf("test_advance_run: %d passed, %d failed\n", kg_t_pass, kg_t_fail);
    return kg_t_fail ? 1 : 0;
}
