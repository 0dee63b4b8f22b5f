/* cpu: what the driver does with the optional fields of kg_case_desc, through a fake gate
 * (no GPU, no kernel): expected failures (xfail_gate: FAIL -> XFAIL passes, PASS -> XPASS
 * fails, other gates and ERROR untouched), the verdict names and their counting fold, the
 * exit-code policy, per-case settings against the flags, tags in the selection, and the
 * registry's checks of the new fields. */
#include <string.h>
#include "driver/driver.h"
#include "core/report_keys.h"
#include "bench/bench.h"
#include "parity/parity.h"
#include "kg_test.h"

/* The fake gate's verdict for a case is its params (a kg_verdict). */
static int fake_run_case(void *st, const kg_case_desc *d, const kg_gate_env *env,
                         kg_case_result *res)
{
    KG_UNUSED(st), KG_UNUSED(env);
    if (*(const kg_verdict *)d->params == KG_VERDICT_ERROR)
        return KG_ERR(KG_ECUDA, "fake error");
    res->verdict = *(const kg_verdict *)d->params;
    snprintf(res->message, sizeof res->message, "fake %s", kg_verdict_name(res->verdict));
    return 0;
}

static const struct kg_gate fake_parity = { .name = "parity", .run_case = fake_run_case };

static int nop_setup(const kg_setup_args *a, void **s, kg_case_io *io)
{
    KG_UNUSED(a), KG_UNUSED(s), KG_UNUSED(io);
    return 0;
}
static int nop_launch(void *s, cudaStream_t st)
{
    KG_UNUSED(s), KG_UNUSED(st);
    return 0;
}
static int nop_ref(void *s, cudaStream_t st, void *h)
{
    KG_UNUSED(s), KG_UNUSED(st), KG_UNUSED(h);
    return 0;
}

static const kg_verdict V_PASS = KG_VERDICT_PASS, V_WARN = KG_VERDICT_WARN,
                        V_FAIL = KG_VERDICT_FAIL, V_ERROR = KG_VERDICT_ERROR;

#define CASE(id_, v_, gate_, why_)                                                            \
    {                                                                                         \
        .id = (id_), .op = "fake", .params = &(v_), .setup = nop_setup, .launch = nop_launch, \
        .reference = nop_ref, .xfail_gate = (gate_), .xfail_reason = (why_)                   \
    }

static const kg_verdict *row_verdict(const kg_run *run, const char *id, const char **msg)
{
    for (size_t i = 0; i < run->n_rows; i++)
        if (strcmp(run->rows[i].desc->id, id) == 0) {
            *msg = run->rows[i].res.message;
            return &run->rows[i].res.verdict;
        }
    return NULL;
}

static kg_verdict verdict_of(const kg_run *run, const char *id, const char *want_in_msg)
{
    const char *msg = "";
    const kg_verdict *v = row_verdict(run, id, &msg);
    CHECK_MSG(v != NULL, "no row for %s", id);
    if (v && want_in_msg)
        CHECK_MSG(strstr(msg, want_in_msg) != NULL, "%s: message '%s' lacks '%s'", id, msg,
                  want_in_msg);
    return v ? *v : (kg_verdict)-1;
}

/* Runs the fake gate over `cases` and returns the exit code of the run's counts. The rows
 * point into *reg: free it after the run. */
static int run_fake(kg_registry **reg_out, const kg_case_desc *cases, size_t n, kg_run *run)
{
    kg_registry *reg = NULL;
    kg_common_opts o = KG_COMMON_OPTS_INIT;
    int rc = kg_registry_new(&reg);
    *reg_out = reg;
    o.quiet = true;
    o.seed = 1;
    o.seed_set = true;
    if (rc == 0)
        rc = kg_registry_add_all(reg, cases, n);
    if (rc == 0)
        rc = kg_run_begin(run, "parity", &o, reg, NULL);
    if (rc == 0)
        rc = kg_run_gate(run, reg, &fake_parity, NULL, false);
    CHECK_MSG(rc == 0, "fake run: %s", kg_error_last());
    int n7[KG_VERDICT_N];
    kg_report_counts_full(run->rep, n7);
    return kg_exit_code_for_counts(n7);
}

static void check_xfail(void)
{
    static const kg_case_desc cases[] = {
        CASE("x/still_fails", V_FAIL, "parity", "issue 7: wrong rounding"),
        CASE("x/now_passes", V_PASS, "parity", "issue 8"),
        CASE("x/now_warns", V_WARN, "parity", "issue 9"),
        CASE("x/errors", V_ERROR, "parity", "issue 10"),
        CASE("x/other_gate", V_FAIL, "bench", "slow on purpose"),
        CASE("x/plain", V_PASS, NULL, NULL),
    };
    kg_run run;
    kg_registry *reg = NULL;
    int code = run_fake(&reg, cases, KG_ARRAY_LEN(cases), &run);
    CHECK(verdict_of(&run, "x/still_fails",
                     "expected failure (issue 7: wrong rounding): fake "
                     "FAIL") == KG_VERDICT_XFAIL);
    CHECK(verdict_of(&run, "x/now_passes", "remove xfail_gate") == KG_VERDICT_XPASS);
    CHECK(verdict_of(&run, "x/now_warns", "issue 9") == KG_VERDICT_XPASS);
    CHECK(verdict_of(&run, "x/errors", "fake error") == KG_VERDICT_ERROR);
    CHECK(verdict_of(&run, "x/other_gate", "fake FAIL") == KG_VERDICT_FAIL);
    CHECK(verdict_of(&run, "x/plain", NULL) == KG_VERDICT_PASS);
    CHECK(code == KG_EXIT_GATE_FAILED);
    /* The report spells the new verdicts; its summary counts them; the five-counter view folds
     * XFAIL into PASS and XPASS into FAIL. */
    cJSON *j = kg_report_json(run.rep), *it;
    int xfail = 0, xpass = 0;
    cJSON_ArrayForEach(it, cJSON_GetObjectItem(j, KG_RK_RESULTS)) {
        const char *v = cJSON_GetStringValue(cJSON_GetObjectItem(it, KG_RES_VERDICT));
        xfail += v && strcmp(v, KG_RV_VERDICT_XFAIL) == 0;
        xpass += v && strcmp(v, KG_RV_VERDICT_XPASS) == 0;
    }
    CHECK(xfail == 1 && xpass == 2);
    int n5[KG_VERDICT_N5];
    kg_run_counts(&run, n5);
    CHECK(n5[KG_VERDICT_PASS] == 2 && n5[KG_VERDICT_FAIL] == 3 && n5[KG_VERDICT_ERROR] == 1);
    kg_run_free(&run);
    kg_registry_free(reg);

    /* Only expected failures: the run passes. */
    static const kg_case_desc ok_cases[] = {
        CASE("y/still_fails", V_FAIL, "parity", "known"),
        CASE("y/plain", V_PASS, NULL, NULL),
    };
    CHECK(run_fake(&reg, ok_cases, KG_ARRAY_LEN(ok_cases), &run) == KG_EXIT_PASS);
    CHECK(verdict_of(&run, "y/still_fails", "known") == KG_VERDICT_XFAIL);
    kg_run_free(&run);
    kg_registry_free(reg);
}

static void check_verdicts(void)
{
    kg_verdict v;
    int c[KG_VERDICT_N] = { 0 };
    CHECK(strcmp(kg_verdict_name(KG_VERDICT_XFAIL), "XFAIL") == 0);
    CHECK(strcmp(kg_verdict_name(KG_VERDICT_XPASS), "XPASS") == 0);
    CHECK(kg_verdict_parse_full("XFAIL", &v) == 0 && v == KG_VERDICT_XFAIL);
    CHECK(kg_verdict_parse_full("XPASS", &v) == 0 && v == KG_VERDICT_XPASS);
    CHECK(kg_verdict_parse("XFAIL", &v) == 0 && v == KG_VERDICT_PASS);
    CHECK(kg_verdict_parse("XPASS", &v) == 0 && v == KG_VERDICT_FAIL);
    CHECK(kg_verdict_parse("ERROR", &v) == 0 && v == KG_VERDICT_ERROR);
    CHECK(kg_verdict_parse("xfail", &v) == KG_EPARSE);
    c[KG_VERDICT_XFAIL] = 3;
    CHECK(kg_exit_code_for_counts(c) == KG_EXIT_PASS);
    c[KG_VERDICT_SKIP] = 1;
    CHECK(kg_exit_code_for_counts(c) == KG_EXIT_NO_GPU);
    c[KG_VERDICT_XPASS] = 1;
    CHECK(kg_exit_code_for_counts(c) == KG_EXIT_GATE_FAILED);
}

static void check_registry(void)
{
    kg_registry *reg = NULL;
    CHECK(kg_registry_new(&reg) == 0);
    kg_case_desc d = CASE("z/bad_gate", V_FAIL, "parityy", "why");
    d.xfail_gate = "two words";
    CHECK(kg_registry_add(reg, &d) == KG_EINVAL);
    CHECK(strstr(kg_error_last(), "xfail_gate must be a gate's name") != NULL);
    /* A name the gate table lacks registers, and the table refuses it, naming every gate. */
    d.xfail_gate = "parityy";
    CHECK(kg_registry_add(reg, &d) == 0);
    CHECK(kg_gates_check_cases(reg) == KG_EINVAL);
    CHECK(strstr(kg_error_last(), "case 'z/bad_gate': xfail_gate 'parityy' is not a gate "
                                  "(parity, preflight, hotpath, bench, counters)") != NULL);
    kg_registry_free(reg);
    CHECK(kg_registry_new(&reg) == 0);
    d.xfail_gate = "counters"; /* every gate of the table, the fifth too */
    CHECK(kg_registry_add(reg, &d) == 0);
    CHECK(kg_gates_check_cases(reg) == 0);
    d.id = "z/bad_gate2";
    d.xfail_gate = "hotpath";
    d.xfail_reason = "";
    CHECK(kg_registry_add(reg, &d) == KG_EINVAL);
    CHECK(strstr(kg_error_last(), "needs xfail_reason") != NULL);
    d.xfail_reason = "issue 3";
    CHECK(kg_registry_add(reg, &d) == 0);
    kg_registry_free(reg);
}

/* Per-case settings: the case's where no flag was given, the flag's where one was. */
static void check_settings(void)
{
    kg_case_desc d = CASE("s/noisy", V_PASS, NULL, NULL);
    kg_bench_gate_opts g = KG_BENCH_GATE_OPTS_INIT;
    kg_bench_opts o = KG_BENCH_OPTS_INIT;
    kg_decide_opts dopt = KG_DECIDE_OPTS_INIT;
    d.bench_band_floor = 0.03;
    d.bench_budget_s = 4.0;
    kg_bench_case_settings(&o, &dopt, &g, &d);
    CHECK(o.budget_s == 4.0 && dopt.band_floor == 0.03);
    /* --budget 0.5 --band-floor 0.01 win over the case. */
    o = (kg_bench_opts)KG_BENCH_OPTS_INIT;
    dopt = (kg_decide_opts)KG_DECIDE_OPTS_INIT;
    o.budget_s = g.budget_s = 0.5;
    dopt.band_floor = g.band_floor = 0.01;
    kg_bench_case_settings(&o, &dopt, &g, &d);
    CHECK(o.budget_s == 0.5 && dopt.band_floor == 0.01);
    /* A case without settings keeps the run's defaults. */
    kg_case_desc plain = CASE("s/plain", V_PASS, NULL, NULL);
    kg_bench_gate_opts g0 = KG_BENCH_GATE_OPTS_INIT;
    o = (kg_bench_opts)KG_BENCH_OPTS_INIT;
    dopt = (kg_decide_opts)KG_DECIDE_OPTS_INIT;
    kg_bench_case_settings(&o, &dopt, &g0, &plain);
    CHECK(o.budget_s == 1.0 && dopt.band_floor == 0.005);
    /* Timeouts: --timeout over the case's, else none. */
    d.timeout_s = 30;
    CHECK(kg_case_timeout_s(&d, 0) == 30 && kg_case_timeout_s(&d, 5) == 5);
    CHECK(kg_case_timeout_s(&plain, 0) == 0);
}

/* Tags: --tag selects exactly, --filter matches ids and tags, the registry checks them. */
static void check_tags(void)
{
    kg_registry *reg = NULL;
    kg_selection sel = { 0 };
    kg_case_desc a = CASE("t/a", V_PASS, NULL, NULL), b = CASE("t/b", V_PASS, NULL, NULL),
                 c = CASE("t/c", V_PASS, NULL, NULL);
    a.tags = "slow,attention";
    b.tags = "attn";
    CHECK(kg_case_has_tag(&a, "slow") && kg_case_has_tag(&a, "attention"));
    CHECK(!kg_case_has_tag(&a, "att") && !kg_case_has_tag(&c, "slow") && !kg_case_has_tag(&a, ""));
    CHECK(kg_registry_new(&reg) == 0);
    CHECK(kg_registry_add(reg, &a) == 0 && kg_registry_add(reg, &b) == 0 &&
          kg_registry_add(reg, &c) == 0);
    CHECK(kg_select(&sel, reg, NULL, "slow") == 0 && sel.n == 1 && sel.idx[0] == 0);
    kg_selection_free(&sel);
    CHECK(kg_select(&sel, reg, NULL, "attn,slow") == 0 && sel.n == 2);
    kg_selection_free(&sel);
    CHECK(kg_select(&sel, reg, "^att", NULL) == 0 && sel.n == 2); /* tags match the regex */
    kg_selection_free(&sel);
    CHECK(kg_select(&sel, reg, "^t/c$", NULL) == 0 && sel.n == 1 && sel.idx[0] == 2);
    kg_selection_free(&sel);
    CHECK(kg_select(&sel, reg, "^t/b$", "slow") == KG_ENOTFOUND); /* both must hold */
    CHECK(strstr(kg_error_last(), "--tag 'slow' with --filter '^t/b$' matches no case"));
    kg_case_desc bad = CASE("t/bad", V_PASS, NULL, NULL);
    bad.tags = "has space";
    CHECK(kg_registry_add(reg, &bad) == KG_EINVAL && strstr(kg_error_last(), "tags"));
    bad.tags = "ok";
    bad.bench_band_floor = 1.5;
    CHECK(kg_registry_add(reg, &bad) == KG_EINVAL && strstr(kg_error_last(), "bench_band_floor"));
    bad.bench_band_floor = 0;
    bad.timeout_s = -1;
    CHECK(kg_registry_add(reg, &bad) == KG_EINVAL);
    kg_registry_free(reg);
}

/* Several outputs: each compared against its slice of the reference under its own policy
 * (or the case's), the worst named, every failure reported. */
static void check_outputs(void)
{
    static const kg_parity_policy loose = KG_PARITY_TOLERANCE_INIT(1e-2, 1e-2, 0.99);
    const kg_parity_policy tight = KG_PARITY_TOLERANCE_INIT(1e-6, 1e-6, 0.999999);
    float out_f[4] = { 1.0f, 2.0f, 3.0f, 4.0f }, mean[2] = { 2.5f, 0.5f };
    uint16_t bf[3];
    double ref[4 + 2 + 3] = { 1, 2, 3, 4, 2.5, 0.5, 1.5, -2, 0.25 };
    for (int i = 0; i < 3; i++)
        bf[i] = kg_f32_to_bf16((float)ref[6 + i]);
    unsigned char host[sizeof out_f + sizeof mean + sizeof bf];
    memcpy(host, out_f, sizeof out_f);
    memcpy(host + sizeof out_f, mean, sizeof mean);
    memcpy(host + sizeof out_f + sizeof mean, bf, sizeof bf);
    kg_output outs[3] = {
        { .name = "out", .count = 4, .dtype = KG_DTYPE_F32 },
        { .name = "mean", .count = 2, .dtype = KG_DTYPE_F32, .parity = &loose },
        { .name = "h", .count = 3, .dtype = KG_DTYPE_BF16 },
    };
    kg_parity_outputs r;
    CHECK(kg_parity_compare_outputs(&r, host, ref, KG_DTYPE_F64, outs, 3, &tight) == 0);
    CHECK(r.pass && r.n == 3 && r.out[2].n == 3 && r.out[1].pass);
    /* A 0.1% error in mean[1]: within its own loose policy, not the case's tight one. */
    mean[1] = 0.5005f;
    memcpy(host + sizeof out_f, mean, sizeof mean);
    CHECK(kg_parity_compare_outputs(&r, host, ref, KG_DTYPE_F64, outs, 3, &tight) == 0);
    CHECK(r.pass && r.worst_i == 1 && strcmp(r.name[r.worst_i], "mean") == 0);
    CHECK(r.policy[1].max_abs == loose.max_abs && r.policy[0].max_abs == tight.max_abs);
    outs[1].parity = NULL;
    CHECK(kg_parity_compare_outputs(&r, host, ref, KG_DTYPE_F64, outs, 3, &tight) == 0);
    CHECK(!r.pass && r.worst_i == 1 && !r.out[1].pass && r.out[0].pass && r.out[2].pass);
    CHECK(r.worst.max_abs == r.out[1].max_abs && r.out[1].first_bad == 1);
    /* A poisoned (NaN) element of the last output fails it, whatever the others do. */
    outs[1].parity = &loose;
    bf[2] = 0xFFFF;
    memcpy(host + sizeof out_f + sizeof mean, bf, sizeof bf);
    CHECK(kg_parity_compare_outputs(&r, host, ref, KG_DTYPE_F64, outs, 3, &tight) == 0);
    CHECK(!r.pass && r.worst_i == 2 && r.out[2].nonfinite_out == 1);
    CHECK(kg_parity_compare_outputs(&r, host, ref, KG_DTYPE_F64, outs, 0, &tight) == KG_EINVAL);
}

/* kg_output_make (no compound literal) fills every named field and zeroes the rest: the
 * case's reference dtype stands until kg_output_ref_dtype sets one. */
static void check_output_make(void)
{
    static const kg_parity_policy loose = KG_PARITY_TOLERANCE_INIT(1e-2, 1e-2, 0.99);
    float dev_stand_in[4];
    kg_output o = kg_output_make("rstd", dev_stand_in, 4, KG_DTYPE_BF16, 2, &loose);
    CHECK(strcmp(o.name, "rstd") == 0 && o.ptr == dev_stand_in && o.count == 4 &&
          o.dtype == KG_DTYPE_BF16 && o.rows == 2 && o.parity == &loose);
    CHECK(o.has_ref_dtype == 0 && kg_parity_ref_dtype(&o, KG_DTYPE_F64) == KG_DTYPE_F64);
    kg_output z = kg_output_make(NULL, NULL, 0, KG_DTYPE_F32, 0, NULL);
    CHECK(!z.name && !z.ptr && !z.count && !z.rows && !z.parity && !z.has_ref_dtype);
    o = kg_output_ref_dtype(o, KG_DTYPE_F32); /* F32 is 0: the flag, not the value, says so */
    CHECK(o.has_ref_dtype && o.ref_dtype == KG_DTYPE_F32 && o.count == 4 &&
          kg_parity_ref_dtype(&o, KG_DTYPE_F64) == KG_DTYPE_F32);
}

/* Outputs with references of different dtypes: an f64 CPU reference for one, a bitwise f32
 * one for another, a bf16 for a third; ref_host holds each in its own dtype, unpadded. */
static void check_output_ref_dtypes(void)
{
    static const kg_parity_policy tight = KG_PARITY_TOLERANCE_INIT(1e-6, 1e-6, 0.999999);
    static const kg_parity_policy bits = KG_PARITY_BITWISE_INIT;
    float out_f[3] = { 1.0f, -2.0f, 3.5f }, idx_f[2] = { 7.0f, 9.0f };
    uint16_t bf[2] = { kg_f32_to_bf16(0.25f), kg_f32_to_bf16(-4.0f) };
    double ref_f64[3] = { 1.0, -2.0, 3.5 };
    unsigned char host[sizeof out_f + sizeof idx_f + sizeof bf];
    unsigned char ref[sizeof ref_f64 + sizeof idx_f + sizeof bf];
    memcpy(host, out_f, sizeof out_f);
    memcpy(host + sizeof out_f, idx_f, sizeof idx_f);
    memcpy(host + sizeof out_f + sizeof idx_f, bf, sizeof bf);
    memcpy(ref, ref_f64, sizeof ref_f64);
    memcpy(ref + sizeof ref_f64, idx_f, sizeof idx_f);
    memcpy(ref + sizeof ref_f64 + sizeof idx_f, bf, sizeof bf);
    kg_output outs[3] = {
        kg_output_make("out", NULL, 3, KG_DTYPE_F32, 0, NULL),
        kg_output_ref_dtype(kg_output_make("idx", NULL, 2, KG_DTYPE_F32, 0, &bits), KG_DTYPE_F32),
        kg_output_ref_dtype(kg_output_make("h", NULL, 2, KG_DTYPE_BF16, 0, &bits), KG_DTYPE_BF16),
    };
    size_t bytes = 0;
    CHECK(kg_parity_ref_bytes(&bytes, outs, 3, KG_DTYPE_F64) == 0 && bytes == sizeof ref);
    kg_parity_outputs r;
    CHECK(kg_parity_compare_outputs(&r, host, ref, KG_DTYPE_F64, outs, 3, &tight) == 0);
    CHECK_MSG(r.pass && r.out[0].pass && r.out[1].pass && r.out[2].pass,
              "mixed reference dtypes: %s / %s / %s", r.out[0].reason, r.out[1].reason,
              r.out[2].reason);
    /* One bit off in the bf16 output's reference: only that output fails. */
    ref[sizeof ref - 1] ^= 0x01;
    CHECK(kg_parity_compare_outputs(&r, host, ref, KG_DTYPE_F64, outs, 3, &tight) == 0);
    CHECK(!r.pass && r.out[0].pass && r.out[1].pass && !r.out[2].pass && r.worst_i == 2);
    ref[sizeof ref - 1] ^= 0x01;
    /* Without the flags the same bytes are read as f64 throughout: misread, and bitwise on an
     * f64 reference of an f32 output is refused. */
    outs[1].has_ref_dtype = outs[2].has_ref_dtype = 0;
    CHECK(kg_parity_ref_bytes(&bytes, outs, 3, KG_DTYPE_F64) == 0 && bytes == 7 * sizeof(double));
    CHECK(kg_parity_compare_outputs(&r, host, ref, KG_DTYPE_F64, outs, 3, &tight) == KG_EINVAL);
    /* A reference dtype that is not a kg_dtype is an error, named. */
    outs[1] = kg_output_ref_dtype(outs[1], (kg_dtype)42);
    CHECK(kg_parity_ref_bytes(&bytes, outs, 3, KG_DTYPE_F64) == KG_EINVAL &&
          strstr(kg_error_last(), "idx") != NULL);
}

int main(void)
{
    check_output_make();
    check_output_ref_dtypes();
    check_outputs();
    check_settings();
    check_tags();
    check_verdicts();
    check_registry();
    check_xfail();
    return kg_test_done("test_case_api");
}
