/* The recipe for a new gate (docs/internals/gate-interface.md), followed for a sixth gate in a
 * test build only: one `const struct kg_gate` with marks hooks, run through the driver and the
 * command layer's marks code, which never name it. --save-marks writes the marks its rows set
 * (set_by names the gate); a second run decides against them through the lookup the command
 * layer handed down: the clean case passes, the planted one (its value fell below its mark)
 * must fail. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "cli/cli.h"
#include "fake_cases.h"
#include "kg_test.h"

static int t_launch(void *s, cudaStream_t st)
{
    (void)s, (void)st;
    return 0;
}
static const kg_case_desc cases[] = { T_CASE("t/clean", t_launch), T_CASE("t/planted", t_launch) };

typedef struct {
    const char *marks_path, *save_marks;
    kg_mark_lookup_fn lookup;
    const void *marks;
} sx_opts;
static const sx_opts sx_init = { 0 };
typedef struct {
    double value;
} sx_row;

/* The measurement: 10 per case; the planted case measures 5 once SX_PLANT is set. */
static int sx_run_case(void *st, const kg_case_desc *d, const kg_gate_env *env, kg_case_result *res)
{
    const sx_opts *o = st;
    (void)env;
    sx_row *r = calloc(1, sizeof *r);
    if (!r)
        return KG_ERR(KG_ENOMEM, "sixth: out of memory");
    r->value = getenv("SX_PLANT") && strcmp(d->id, "t/planted") == 0 ? 5 : 10;
    const kg_mark *mk = o && o->lookup ? o->lookup(o->marks, "cls", d->id, "sixth_value") : NULL;
    res->verdict = mk && r->value < mk->value ? KG_VERDICT_FAIL : KG_VERDICT_PASS;
    snprintf(res->message, sizeof res->message, "%s", mk ? "against its mark" : "no mark");
    res->data = r;
    return 0;
}
static int sx_begin(void **st, const void *opts, const kg_gate_env *env)
{
    (void)env;
    *st = (void *)opts;
    return 0;
}
static void sx_slots(void *opts, kg_gate_marks_slots *out)
{
    sx_opts *o = opts;
    *out = (kg_gate_marks_slots){ .path = &o->marks_path,
                                  .save = &o->save_marks,
                                  .lookup = &o->lookup,
                                  .marks = &o->marks };
}
static size_t sx_row_marks(kg_mark *out, size_t max, const kg_case_desc *d, const void *data,
                           const kg_mark *stamp)
{
    if (max < 1)
        return 0;
    out[0] = *stamp;
    out[0].device_class = "cls";
    out[0].case_id = (char *)d->id;
    out[0].metric = "sixth_value";
    out[0].direction = KG_HIGHER_IS_BETTER;
    out[0].value = out[0].run_median = out[0].ci_lo = out[0].ci_hi = ((const sx_row *)data)->value;
    out[0].samples = out[0].runs = 1;
    return 1;
}
static const struct kg_gate_marks sx_marks = { .slots = sx_slots, .row_marks = sx_row_marks };
static const kg_gate_column sx_cols[] = { KG_COL_CASE(-20), KG_COL_VERDICT("v", -7) };
static const struct kg_gate sixth = {
    .name = "sixth",
    .flags = KG_GATE_DEVICE_WIDE,
    .opts_size = sizeof(sx_opts),
    .opts_init = &sx_init,
    .begin = sx_begin,
    .run_case = sx_run_case,
    .result_free = free,
    .columns = sx_cols,
    .n_columns = 2,
    .result_size = sizeof(sx_row),
    .marks = &sx_marks,
};

/* One `kgate sixth` as gate_cmd.c runs it: marks prepared, the gate, --save-marks. */
static void sx_run(kg_registry *reg, sx_opts *o, kg_verdict want_planted)
{
    kg_run run = { 0 };
    kg_cli_marks m = { 0 };
    kg_common_opts co = KG_COMMON_OPTS_INIT;
    co.seed_set = true;
    co.quiet = true;
    CHECK(kg_cli_marks_prepare(&m, &sixth, o) == 0);
    CHECK(kg_run_begin(&run, "sixth", &co, reg, NULL) == 0);
    CHECK(kg_run_gate(&run, reg, &sixth, o, false) == 0);
    CHECK(run.n_rows == 2);
    for (size_t i = 0; i < run.n_rows; i++) {
        bool planted = strcmp(run.rows[i].desc->id, "t/planted") == 0;
        CHECK_MSG(run.rows[i].res.verdict == (planted ? want_planted : KG_VERDICT_PASS), "%s: %s",
                  run.rows[i].desc->id, kg_verdict_name(run.rows[i].res.verdict));
    }
    run.env.dev = &run.dev; /* --save-marks needs a device: this one stands in for it */
    CHECK(kg_cli_marks_save(&m, &run, &sixth, o) == 0);
    kg_cli_marks_free(&m);
    kg_run_free(&run);
}

int main(void)
{
    kg_registry *reg = NULL;
    kg_marks *m = NULL;
    char dir[] = "/tmp/kg-sixth-XXXXXX", path[64];
    CHECK(mkdtemp(dir) != NULL);
    snprintf(path, sizeof path, "%s/marks.json", dir);
    unsetenv("KGATE_MARKS");
    setenv("KGATE_ISOLATION", "0", 1);
    CHECK(kg_registry_new(&reg) == 0);
    for (size_t i = 0; i < KG_ARRAY_LEN(cases); i++)
        CHECK(kg_registry_add(reg, &cases[i]) == 0);
    sx_opts o = sx_init;
    o.save_marks = path;
    sx_run(reg, &o, KG_VERDICT_PASS); /* no marks yet: both pass; their marks are saved */
    CHECK(kg_marks_load(&m, path) == 0);
    CHECK(m && kg_marks_count(m) == 2);
    const kg_mark *mk = m ? kg_marks_find(m, "cls", "t/clean", "sixth_value") : NULL;
    CHECK(mk && mk->value == 10 &&
          strcmp(mk->set_by, "kgate sixth --save-marks (diagnostic)") == 0);
    kg_marks_free(m);
    sx_opts o2 = sx_init;
    o2.marks_path = path;
    setenv("SX_PLANT", "1", 1);
    sx_run(reg, &o2, KG_VERDICT_FAIL); /* the planted case fell below its mark */
    unsetenv("SX_PLANT");
    sx_opts o3 = sx_init;
    o3.marks_path = path;
    sx_run(reg, &o3, KG_VERDICT_PASS); /* the clean control against the same marks */
    unlink(path);
    rmdir(dir);
    kg_registry_free(reg);
    return kg_test_done("test_sixth_gate");
}
