/* The selftest's engine (the command is runners/cli/selftest_cmd.c): prove, on the machine at hand, that every gate still catches its planted
 * defects and passes the clean reference cases. The defect catalogue lives in a separate runner
 * (kgate-defects, never linked into the reference one), so selftest runs both runners as child
 * processes, each gate over each, and reads their JSON reports back. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <math.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include "selftest/selftest.h"
#include "core/report_keys.h"
#include "marks/marks.h"
#include "report/export.h" /* kg_report_load */

/* The gates selftest drives: the one table, in its order. The bench gate needs marks, so its
 * defects are compared against marks that selftest records first from their clean twins. */
#define ST_MAX_GATES 8
#define ST_NGATES ((int)kg_n_gates)
#define st_gates_name(g) (kg_gates[(g)]->name)

typedef struct {
    char *id;
    char *expect_gate; /* NULL for clean cases */
    char *expect_reason;
    bool informational; /* expect_reason "observe": reported, never counted */
    kg_verdict observed[ST_MAX_GATES];
    bool ran[ST_MAX_GATES];
    char *message[ST_MAX_GATES];
    double phase_s[KG_PHASE_N]; /* summed over the children's rows of the case: its row's timing */
    bool timed;
} st_row;

/* One child pass and its wall time: the child's own account (its report's timing.total_s)
 * where it wrote one, so that passes that ran at once are not charged for each other's wait. */
#define ST_MAX_PASSES 24
typedef struct {
    char name[64];
    double wall_s;
    int cases;
} st_pass;

typedef struct {
    st_row *rows;
    size_t n, cap;
    char where[192]; /* the step running now ("parity over the defect catalogue"): where an
                        interrupt stopped the selftest */
    st_pass passes[ST_MAX_PASSES];
    int n_passes;
} st_matrix;

static void st_pass_add(st_matrix *m, const char *tag, const char *what, double wall_s, int cases)
{
    if (m->n_passes == ST_MAX_PASSES)
        return;
    st_pass *p = &m->passes[m->n_passes++];
    snprintf(p->name, sizeof p->name, "%s/%s", tag, what);
    p->wall_s = wall_s > 0 ? wall_s : 0;
    p->cases = cases;
}

static cJSON *st_passes_json(const st_matrix *m)
{
    cJSON *a = cJSON_CreateArray();
    for (int i = 0; a && i < m->n_passes; i++) {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, KG_RK_ST_PASS_NAME, m->passes[i].name);
        cJSON_AddNumberToObject(o, KG_RK_ST_PASS_WALL,
                                floor(m->passes[i].wall_s * 1e3 + 0.5) / 1e3);
        cJSON_AddNumberToObject(o, KG_RK_ST_PASS_CASES, m->passes[i].cases);
        cJSON_AddItemToArray(a, o);
    }
    return a;
}

static void st_matrix_free(st_matrix *m)
{
    for (size_t i = 0; i < m->n; i++) {
        free(m->rows[i].id);
        free(m->rows[i].expect_gate);
        free(m->rows[i].expect_reason);
        for (int g = 0; g < ST_NGATES; g++)
            free(m->rows[i].message[g]);
    }
    free(m->rows);
    memset(m, 0, sizeof *m);
}

static char *st_strdup(const char *s) { return s ? strdup(s) : NULL; }

static int st_add_row(st_matrix *m, const char *id, const char *gate, const char *reason)
{
    if (m->n == m->cap) {
        size_t cap = m->cap ? m->cap * 2 : 64;
        st_row *nr = realloc(m->rows, cap * sizeof *nr);
        if (!nr)
            return KG_ERR(KG_ENOMEM, "selftest: out of memory");
        m->rows = nr;
        m->cap = cap;
    }
    st_row *r = &m->rows[m->n++];
    memset(r, 0, sizeof *r);
    r->id = st_strdup(id);
    r->expect_gate = st_strdup(gate);
    r->expect_reason = st_strdup(reason);
    r->informational = reason && strncmp(reason, "observe", 7) == 0;
    /* The row is counted already, so st_matrix_free frees whatever was copied. */
    if (!r->id || (gate && !r->expect_gate) || (reason && !r->expect_reason))
        return KG_ERR(KG_ENOMEM, "selftest: out of memory");
    return 0;
}

static int st_gate_index(const char *gate)
{
    for (int g = 0; g < ST_NGATES; g++)
        if (strcmp(st_gates_name(g), gate) == 0)
            return g;
    return -1;
}

/* The catalogue of `list --json` (not a report: kg_report_load would refuse it). */
static int st_load_json(cJSON **out, const char *path)
{
    return kg_json_load(out, path); /* strict: no duplicate key, nothing trailing */
}

/* A child row's phase seconds added to the case's (so the selftest's rows say what each
 * defect cost); a figure no child run can take (negative, not finite, over a day) is left out. */
static void st_add_timing(st_row *r, const cJSON *timing)
{
    if (!cJSON_IsObject(timing))
        return;
    for (int k = 0; k < KG_PHASE_N; k++) {
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(timing, kg_report_phase_keys[k]);
        double s = cJSON_IsNumber(v) ? v->valuedouble : NAN;
        if (isfinite(s) && s >= 0 && s < 86400) {
            r->phase_s[k] += s;
            r->timed = true;
        }
    }
}

/* Fill the matrix column of `gate` from a report. */
static void st_take_results(st_matrix *m, const cJSON *report, int g)
{
    const cJSON *it;
    cJSON_ArrayForEach(it, cJSON_GetObjectItem(report, KG_RK_RESULTS)) {
        const char *id = cJSON_GetStringValue(cJSON_GetObjectItem(it, KG_RK_ST_CASE));
        const char *gate = cJSON_GetStringValue(cJSON_GetObjectItem(it, KG_RES_GATE));
        const char *vs = cJSON_GetStringValue(cJSON_GetObjectItem(it, KG_RES_VERDICT));
        const char *msg = cJSON_GetStringValue(cJSON_GetObjectItem(it, KG_RES_MESSAGE));
        kg_verdict v;
        if (!id || !gate || strcmp(gate, st_gates_name(g)) != 0 || kg_verdict_parse(vs, &v) < 0)
            continue;
        for (size_t i = 0; i < m->n; i++)
            if (strcmp(m->rows[i].id, id) == 0) {
                st_row *r = &m->rows[i];
                /* A gate may report several rows per case: the worst verdict stands. */
                if (!r->ran[g] || v == KG_VERDICT_FAIL ||
                    (v == KG_VERDICT_ERROR && r->observed[g] != KG_VERDICT_FAIL)) {
                    r->observed[g] = v;
                    free(r->message[g]);
                    r->message[g] = st_strdup(msg);
                }
                r->ran[g] = true;
                st_add_timing(r, cJSON_GetObjectItem(it, KG_RES_TIMING));
            }
    }
}

typedef struct {
    const char *self_exe;
    const char *defects_exe;
    const char *tmpdir;
    const char *seed;
    const char *device;
    const char *filter;
    const char *exclude;      /* the fault defects, run on their own (st_run_faults) */
    const char *case_timeout; /* --case-timeout for the child runs, or NULL */
    const char *exe;          /* the runner this env runs (defects_exe or self_exe) */
    const char *tag;          /* its reports' prefix: "defects", "faults", "clean" */
} st_env;

/* The planted faults (kernels/defects/fault_defects.cu) hang or crash on purpose: they run
 * once, through parity, with a short watchdog; every other gate leaves them out. The two hangs
 * each wait the watchdog out: in one child they made it the longest of the concurrent ones
 * (9.6 s on an H100, 2026-12-07: 3 s each, the rest a fresh worker after each fault), so each
 * hang has a child of its own beside the other faults' (ST_FAULT_JOBS). */
#define ST_FAULTS "^defect/fault/"
#define ST_FAULT_TIMEOUT "3"
#define ST_FAULT_HANGS "^defect/fault/(spin_forever|host_hang)/"
static const struct {
    const char *tag, *filter, *exclude, *what;
} st_fault_jobs[] = {
    { "faults", ST_FAULTS, ST_FAULT_HANGS, "the planted faults but the hangs" },
    { "faults-spin", "^defect/fault/spin_forever/", NULL, "the planted kernel hang" },
    { "faults-hang", "^defect/fault/host_hang/", NULL, "the planted host hang" },
};

/* One child run of one gate of one runner: <tmpdir>/<tag>-<gate>.json and .log. The
 * correctness passes run as concurrent jobs (st_run_gates); bench and counters one at a time. */
typedef struct {
    pid_t pid;               /* 0: not started */
    double started, limit_s; /* kg_now_s() at the start; its time limit (st_limit_s) */
    int g;
    char header[192]; /* printed before its result is taken ("" for none) */
    char report[PATH_MAX], log[PATH_MAX];
    const char *exe;
    const char *tag; /* the env's: "defects", "faults", "clean" */
    char *exclude;   /* owned: the env's exclude joined with the scope's cases */
} st_job;

/* A child's time limit, from its work: ST_CHILD_BASE_S to start and load, plus
 * ST_CHILD_PER_CASE_S for each case of the catalogues (a bound on what one child runs: the
 * worker's own watchdog ends a hung case long before); KGATE_CHILD_TIMEOUT overrides it. A
 * child past it is killed with its process group and is the selftest's error. */
#define ST_CHILD_BASE_S 120.0
#define ST_CHILD_PER_CASE_S 30.0
#define ST_LIST_LIMIT_S 60.0
static double st_limit_s(const st_matrix *m)
{
    return kg_child_limit_s(ST_CHILD_BASE_S + ST_CHILD_PER_CASE_S * (double)m->n);
}

static int st_spawn_gate(st_job *j, const st_env *e, const char *marks, const char *budget,
                         double limit_s)
{
    const char *argv[24];
    int a = 0;
    snprintf(j->report, sizeof j->report, "%s/%s-%s.json", e->tmpdir, e->tag, st_gates_name(j->g));
    snprintf(j->log, sizeof j->log, "%s/%s-%s.log", e->tmpdir, e->tag, st_gates_name(j->g));
    j->exe = e->exe;
    j->tag = e->tag;
    argv[a++] = e->exe;
    argv[a++] = st_gates_name(j->g);
    argv[a++] = "--seed";
    argv[a++] = e->seed;
    argv[a++] = "--device";
    argv[a++] = e->device;
    argv[a++] = "--report";
    argv[a++] = j->report;
    const char *flag[] = { "--filter", "--exclude", "--case-timeout", "--marks", "--budget" };
    const char *val[] = { e->filter, j->exclude ? j->exclude : e->exclude, e->case_timeout, marks,
                          budget };
    for (int i = 0; i < 5; i++)
        if (val[i]) {
            argv[a++] = flag[i];
            argv[a++] = val[i];
        }
    argv[a] = NULL;
    j->started = kg_now_s();
    j->limit_s = limit_s;
    return kg_child_spawn(&j->pid, argv, j->log, true, "selftest");
}

/* The last non-empty line of a child's log (its own error message), "" when none. */
static void st_log_last_line(char *buf, size_t n, const char *log)
{
    char *text = NULL;
    size_t len = 0;
    buf[0] = '\0';
    if (kg_file_read(&text, &len, log) < 0)
        return;
    while (len && (text[len - 1] == '\n' || text[len - 1] == '\r'))
        text[--len] = '\0';
    char *start = strrchr(text, '\n');
    snprintf(buf, n, "%s", start ? start + 1 : text);
    free(text);
}

/* Wait for the job and take its results. A child that exits 2 refused its input (the user's
 * options): a usage error with its words. One that dies, runs past its limit or writes a
 * report that is refused is an error of the selftest itself, naming the child and why: never
 * a column of "not run" that reads like a run without a GPU. */
static int st_collect_gate(st_matrix *m, st_job *j)
{
    int rc = 0;
    kg_child_status cs;
    cJSON *rep = NULL;
    if (j->pid <= 0)
        return 0;
    kg_progress_begin("selftest: %s", m->where);
    rc = kg_child_wait(&cs, j->pid, j->started, j->limit_s, "selftest");
    kg_progress_end();
    j->pid = 0;
    if (rc < 0)
        return rc;
    if (cs.code == KG_EXIT_USAGE && !cs.timed_out && !cs.sig) { /* its words: the user's input */
        char last[512];
        st_log_last_line(last, sizeof last, j->log);
        rc = KG_ERR(KG_EINVAL, "selftest: child `%s %s` refused its input: %s (log: %s)", j->exe,
                    st_gates_name(j->g), last[0] ? last : cs.why, j->log);
        goto cleanup;
    }
    if (cs.timed_out || cs.sig || cs.code > KG_EXIT_RUNTIME) {
        rc = KG_ERR(KG_EINTERNAL, "selftest: child `%s %s` %s (log: %s)", j->exe,
                    st_gates_name(j->g), cs.why, j->log);
        goto cleanup;
    }
    if (kg_report_load(&rep, j->report) < 0) { /* checked like `kgate report --from` */
        char why[1024];
        snprintf(why, sizeof why, "%s", kg_error_last());
        rc = KG_ERR(KG_EINTERNAL,
                    "selftest: child `%s %s` exited %d, its report was refused: "
                    "%s (log: %s)",
                    j->exe, st_gates_name(j->g), cs.code, why, j->log);
        goto cleanup;
    }
    st_take_results(m, rep, j->g);
    {
        const cJSON *t = cJSON_GetObjectItem(cJSON_GetObjectItem(rep, KG_RK_TIMING),
                                             KG_RK_TIMING_TOTAL);
        st_pass_add(m, j->tag, st_gates_name(j->g),
                    cJSON_IsNumber(t) ? t->valuedouble : kg_now_s() - j->started,
                    cJSON_GetArraySize(cJSON_GetObjectItem(rep, KG_RK_RESULTS)));
    }
cleanup:
    cJSON_Delete(rep);
    return rc;
}

/* Run one gate of one runner to the end and take its results. */
static int st_run_gate(st_matrix *m, const st_env *e, int g, const char *marks, const char *budget)
{
    st_job j = { .g = g };
    int rc = st_spawn_gate(&j, e, marks, budget, st_limit_s(m));
    return rc < 0 ? rc : st_collect_gate(m, &j);
}

static int st_catalogue(st_matrix *m, const st_env *e, const char *exe, const char *tag)
{
    int rc = 0;
    kg_child_status cs;
    char cat[PATH_MAX], log[PATH_MAX];
    cJSON *j = NULL;
    snprintf(m->where, sizeof m->where, "listing the %s catalogue", tag);
    snprintf(cat, sizeof cat, "%s/%s-catalogue.json", e->tmpdir, tag);
    snprintf(log, sizeof log, "%s/%s-list.log", e->tmpdir, tag);
    /* --filter narrows the defects: a defect it leaves out is no row (not a "not run" one,
     * which reads as a run without a GPU); the runner selects as its gate runs will */
    const char *argv[] = { exe, "list", "--json", cat, NULL, NULL, NULL };
    if (e->filter) {
        argv[4] = "--filter";
        argv[5] = e->filter;
    }
    KG_TRY(kg_run_limited(&cs, argv, log, true, kg_child_limit_s(ST_LIST_LIMIT_S), "selftest"));
    if (cs.code == KG_EXIT_USAGE && !cs.timed_out && !cs.sig) { /* its words: the user's input */
        char last[512];
        st_log_last_line(last, sizeof last, log);
        rc = KG_ERR(KG_EINVAL, "selftest: child `%s list` refused its input: %s (log: %s)", exe,
                    last[0] ? last : cs.why, log);
        goto cleanup;
    }
    if (cs.code != 0 || cs.timed_out) {
        rc = KG_ERR(cs.sig || cs.timed_out ? KG_EINTERNAL : KG_EINVAL,
                    "selftest: child `%s "
                    "list` %s (log: %s)",
                    exe, cs.why, log);
        goto cleanup;
    }
    KG_TRY(st_load_json(&j, cat));
    const cJSON *c;
    cJSON_ArrayForEach(c, cJSON_GetObjectItem(j, "cases")) {
        const char *id = cJSON_GetStringValue(cJSON_GetObjectItem(c, "id"));
        const char *gate = cJSON_GetStringValue(cJSON_GetObjectItem(c, KG_RK_ST_EXPECT_GATE));
        const char *why = cJSON_GetStringValue(cJSON_GetObjectItem(c, "expect_reason"));
        if (!id)
            continue;
        if (gate && st_gate_index(gate) < 0) {
            rc = KG_ERR(KG_EPARSE, "selftest: defect '%s' expects unknown gate '%s'", id, gate);
            goto cleanup;
        }
        /* A defect that names a gate is judged on it; cases without one are clean. */
        KG_TRY(st_add_row(m, id, gate, why));
    }
cleanup:
    cJSON_Delete(j);
    return rc;
}

/* The clean twins' marks, merged from ST_TWIN_PROCESSES separate processes (--min-mark-runs
 * of the bench: a mark of fewer processes decides UNPROVEN). Every process after the first is
 * timed against the marks so far (--marks, a copy), so it reuses their k: a run of another k
 * would not merge. 1 when there is no GPU. */
#define ST_TWIN_PROCESSES 3
/* Seconds of timing per bench case in the selftest: 0.3 s is at most ~75 replays of >= 4 ms
 * (and never fewer than the bench's 15 samples), and keeps the bench column of `kgate run` to
 * ~4 short processes. */
#define ST_BENCH_BUDGET "0.3"
/* base (may be NULL) or-ed with "^<id>$" of every row pick(row, arg) takes: an ERE for --filter
 * or --exclude, or NULL (*out) when it takes none and there is no base. */
static int st_ids_regex(char **out, const st_matrix *m, const char *base,
                        bool (*pick)(const st_matrix *, const st_row *, const char *),
                        const char *arg)
{
    size_t cap = (base ? strlen(base) : 0) + 1, len = 0;
    *out = NULL;
    for (size_t i = 0; i < m->n; i++)
        if (pick(m, &m->rows[i], arg))
            cap += 2 * strlen(m->rows[i].id) + 4;
    if (cap == (base ? strlen(base) : 0) + 1)
        return 0;
    char *s = malloc(cap);
    if (!s)
        return KG_ERR(KG_ENOMEM, "selftest: out of memory");
    len = (size_t)snprintf(s, cap, "%s", base ? base : "");
    for (size_t i = 0; i < m->n; i++) {
        if (!pick(m, &m->rows[i], arg))
            continue;
        if (len)
            s[len++] = '|';
        s[len++] = '^';
        for (const char *c = m->rows[i].id; *c; c++) {
            if (strchr(".[]()*+?{}|^$\\", *c))
                s[len++] = '\\';
            s[len++] = *c;
        }
        s[len++] = '$';
    }
    s[len] = '\0';
    *out = s;
    return 0;
}

/* twins: the exact ids of the clean twins (an ERE) */
static int st_twin_marks(st_matrix *m, const st_env *e, int g, const char *twins, const char *marks,
                         int *no_gpu)
{
    int rc = 0;
    kg_child_status cs;
    char prev[PATH_MAX], log[PATH_MAX], rep[PATH_MAX];
    snprintf(prev, sizeof prev, "%s/bench-twin-marks-prev.json", e->tmpdir);
    snprintf(log, sizeof log, "%s/defects-bench-marks.log", e->tmpdir);
    snprintf(rep, sizeof rep, "%s/defects-bench-marks.json", e->tmpdir);
    *no_gpu = 0;
    double t0 = kg_now_s();
    for (int i = 0; i < ST_TWIN_PROCESSES; i++) {
        snprintf(m->where, sizeof m->where,
                 "%s: the clean twins' marks "
                 "(process %d of %d)",
                 st_gates_name(g), i + 1, ST_TWIN_PROCESSES);
        const char *argv[] = { e->defects_exe,
                               st_gates_name(g),
                               "--filter",
                               twins,
                               "--seed",
                               e->seed,
                               "--device",
                               e->device,
                               "--budget",
                               ST_BENCH_BUDGET,
                               "--save-marks",
                               marks,
                               "--report",
                               rep,
                               i ? "--marks" : NULL,
                               prev,
                               NULL };
        if (i) {
            char *text = NULL;
            size_t len = 0;
            KG_TRY(kg_file_read_limit(&text, &len, marks, KG_INPUT_MAX_BYTES));
            rc = kg_file_write_atomic(prev, text, len);
            free(text);
            KG_TRY(rc);
        }
        KG_TRY(kg_run_limited(&cs, argv, log, true, st_limit_s(m), "selftest"));
        if (cs.code == KG_EXIT_NO_GPU && !cs.sig && !cs.timed_out) {
            *no_gpu = 1; /* no GPU: the bench column stays "not run" */
            return 0;
        }
        if (cs.code != 0)
            return KG_ERR(KG_EINTERNAL,
                          "selftest: child `%s %s` setting the clean twins' "
                          "marks (process %d of %d) %s (log: %s)",
                          e->defects_exe, st_gates_name(g), i + 1, ST_TWIN_PROCESSES, cs.why, log);
    }
    st_pass_add(m, "twins", st_gates_name(g), kg_now_s() - t0, ST_TWIN_PROCESSES);
cleanup:
    return rc;
}

/* A row's clean twin: "<family>/clean" for "<family>/<variant>". */
static void st_twin_of(char *buf, size_t n, const char *id)
{
    const char *slash = strrchr(id, '/');
    snprintf(buf, n, "%.*s/clean", slash ? (int)(slash - id) : 0, id);
}

static bool st_pick_defect(const st_matrix *m, const st_row *r, const char *gate)
{
    (void)m;
    return r->expect_gate && strcmp(r->expect_gate, gate) == 0;
}

/* A clean case (in the matrix: selected) that is the twin of a defect of gate. */
static bool st_pick_twin(const st_matrix *m, const st_row *r, const char *gate)
{
    char twin[512];
    if (r->expect_gate)
        return false;
    for (size_t i = 0; i < m->n; i++) {
        if (!st_pick_defect(m, &m->rows[i], gate))
            continue;
        st_twin_of(twin, sizeof twin, m->rows[i].id);
        if (strcmp(twin, r->id) == 0)
            return true;
    }
    return false;
}

static bool st_pick_pass(const st_matrix *m, const st_row *r, const char *gate)
{
    return st_pick_defect(m, r, gate) || st_pick_twin(m, r, gate);
}

/* The twins' marks copied to every defect of gate g whose twin has one, saved to rekeyed. */
static int st_rekey_marks(const st_matrix *m, int g, const char *marks, const char *rekeyed)
{
    int rc = 0;
    kg_marks *mk = NULL;
    char twin[512];
    KG_TRY(kg_marks_load(&mk, marks));
    size_t nmarks = kg_marks_count(mk);
    for (size_t r = 0; r < m->n; r++) {
        if (!st_pick_defect(m, &m->rows[r], st_gates_name(g)))
            continue;
        st_twin_of(twin, sizeof twin, m->rows[r].id);
        for (size_t i = 0; i < nmarks; i++) {
            kg_mark copy = *kg_marks_at(mk, i);
            if (strcmp(copy.case_id, twin) != 0)
                continue;
            copy.case_id = m->rows[r].id; /* kg_marks_put deep-copies */
            KG_TRY(kg_marks_put(mk, &copy));
        }
    }
    KG_TRY(kg_marks_save(mk, rekeyed));
cleanup:
    kg_marks_free(mk);
    return rc;
}

/* The bench column. A slow variant "defect/bench/<family>/+<p>pct" is judged against the mark of
 * its clean twin "defect/bench/<family>/clean": selftest sets that mark from 3 separate
 * processes of the twin (merged, so the band carries the cross-process spread),
 * copies it to every variant's id, then benches twins and variants in a fresh process with the
 * bench's own floors. The twin must come out SAME (else a false alarm), each variant REGRESSED
 * (+1% is only observed). The pass runs the defects of the gate in the matrix (what --filter
 * selected: a planted fault of the gate too) and their twins, by id; no twin, no marks. */
static int st_run_twins(st_matrix *m, const st_env *e, int g)
{
    int rc = 0, no_gpu = 0;
    char marks[PATH_MAX], rekeyed[PATH_MAX], *twins = NULL, *pass = NULL;
    snprintf(marks, sizeof marks, "%s/bench-twin-marks.json", e->tmpdir);
    snprintf(rekeyed, sizeof rekeyed, "%s/bench-variant-marks.json", e->tmpdir);
    KG_TRY(st_ids_regex(&pass, m, NULL, st_pick_pass, st_gates_name(g)));
    KG_TRY(st_ids_regex(&twins, m, NULL, st_pick_twin, st_gates_name(g)));
    if (!pass) /* no defect of this gate selected: its column stays "not run" */
        goto cleanup;
    if (twins) {
        KG_TRY(st_twin_marks(m, e, g, twins, marks, &no_gpu));
        if (no_gpu)
            goto cleanup;
        KG_TRY(st_rekey_marks(m, g, marks, rekeyed));
    }
    st_env be = *e;
    be.filter = pass;
    snprintf(m->where, sizeof m->where, "%s over the slow variants", st_gates_name(g));
    KG_TRY(st_run_gate(m, &be, g, twins ? rekeyed : NULL, ST_BENCH_BUDGET));
cleanup:
    free(twins);
    free(pass);
    return rc;
}
int kg_selftest_defects_path(char *buf, size_t n, const char *given)
{
    int w;
    if (given) {
        w = snprintf(buf, n, "%s", given);
    } else if (getenv("KGATE_DEFECTS") && *getenv("KGATE_DEFECTS")) {
        w = snprintf(buf, n, "%s", getenv("KGATE_DEFECTS"));
    } else {
        char self[PATH_MAX];
        int rc = kg_self_exe(self, sizeof self);
        if (rc < 0)
            return rc;
        char *slash = strrchr(self, '/');
        if (slash)
            *slash = '\0';
        w = snprintf(buf, n, "%s/kgate-defects", self);
    }
    /* A cut path could name another executable. */
    if (w < 0 || (size_t)w >= n)
        return KG_ERR(KG_EINVAL, "selftest: defect runner path too long (--defects PATH or "
                                 "KGATE_DEFECTS)");
    if (access(buf, X_OK) != 0)
        return KG_ERR(KG_EINVAL,
                      "selftest: defect runner '%s' not found or not executable "
                      "(--defects PATH or KGATE_DEFECTS)",
                      buf);
    return 0;
}

typedef struct {
    int caught, escaped, false_alarms, not_run, informational;
} st_counts;

/* Judge one row: a defect on its expected gate, a clean case on every gate it ran. */
/* A defect is caught when its gate FAILs it; a planted fault (expect_reason "fault:<class>")
 * when its gate reports it as that fault: ERROR "FAULT <class>", the run going on; a case a
 * gate must refuse to judge (expect_reason "error:<text>": counts that time nothing, a hotpath
 * check that compared only poison) when that gate reports ERROR with <text> in its message. */
static bool st_caught(const st_row *r, kg_verdict o, const char *seen)
{
    const char *cls = r->expect_reason && strncmp(r->expect_reason, "fault:", 6) == 0
                          ? r->expect_reason + 6
                          : NULL;
    const char *err = r->expect_reason && strncmp(r->expect_reason, "error:", 6) == 0
                          ? r->expect_reason + 6
                          : NULL;
    char want[64];
    if (err)
        return o == KG_VERDICT_ERROR && *err && strstr(seen, err) != NULL;
    if (!cls)
        return o == KG_VERDICT_FAIL;
    snprintf(want, sizeof want, "FAULT %s", cls);
    return o == KG_VERDICT_ERROR && strstr(seen, want) != NULL;
}

static void st_judge(const st_matrix *m, st_counts *c, cJSON *rows_json, kg_report *rep)
{
    memset(c, 0, sizeof *c);
    for (size_t i = 0; i < m->n; i++) {
        const st_row *r = &m->rows[i];
        cJSON *row = cJSON_CreateObject();
        cJSON_AddStringToObject(row, KG_RK_ST_CASE, r->id);
        cJSON_AddStringToObject(row, KG_RK_ST_EXPECT_GATE, r->expect_gate ? r->expect_gate : "");
        cJSON *cells = cJSON_AddObjectToObject(row, KG_RK_ST_OBSERVED);
        for (int g = 0; g < ST_NGATES; g++)
            cJSON_AddStringToObject(cells, st_gates_name(g),
                                    r->ran[g] ? kg_verdict_name(r->observed[g]) : "-");
        const char *outcome;
        kg_verdict v = KG_VERDICT_PASS;
        char msg[2048]; /* a child's whole why: a bench row's runs past 1 KB */
        if (r->expect_gate) {
            int g = st_gate_index(r->expect_gate);
            kg_verdict o = r->observed[g];
            const char *seen = r->message[g] ? r->message[g] : "";
            if (r->informational) {
                outcome = "informational";
                c->informational++;
            } else if (!r->ran[g] || o == KG_VERDICT_SKIP) {
                outcome = "not run";
                v = KG_VERDICT_SKIP;
                c->not_run++;
            } else if (st_caught(r, o, seen)) {
                outcome = "caught";
                c->caught++;
            } else {
                outcome = "ESCAPED";
                v = KG_VERDICT_FAIL;
                c->escaped++;
            }
            snprintf(msg, sizeof msg, "%s by %s: %s%s%s", outcome, r->expect_gate,
                     r->ran[g] ? kg_verdict_name(o) : "not run", *seen ? ": " : "", seen);
        } else {
            int flagged = -1;
            for (int g = 0; g < ST_NGATES; g++)
                if (r->ran[g] &&
                    (r->observed[g] == KG_VERDICT_FAIL || r->observed[g] == KG_VERDICT_ERROR))
                    flagged = g;
            if (flagged >= 0) {
                outcome = "FALSE ALARM";
                v = KG_VERDICT_FAIL;
                c->false_alarms++;
                snprintf(msg, sizeof msg, "clean case flagged by %s: %s", st_gates_name(flagged),
                         r->message[flagged] ? r->message[flagged] : "");
            } else {
                outcome = "clean";
                snprintf(msg, sizeof msg, "clean: passed every gate it ran");
            }
        }
        cJSON_AddStringToObject(row, KG_RK_ST_OUTCOME, outcome);
        cJSON_AddItemToArray(rows_json, row);
        if (kg_report_add(rep, "selftest", r->id, v, msg, NULL) == 0 && r->timed)
            kg_report_row_timing(rep, r->phase_s);
    }
}

static void st_print(const st_matrix *m)
{
    printf("\n%-58s %-10s", "case (defects first)", "expects");
    for (int g = 0; g < ST_NGATES; g++)
        printf(" %-9s", st_gates_name(g));
    printf("\n");
    for (int pass = 0; pass < 2; pass++)
        for (size_t i = 0; i < m->n; i++) {
            const st_row *r = &m->rows[i];
            if ((pass == 0) != (r->expect_gate != NULL))
                continue;
            printf("%-58s %-10s", r->id, r->expect_gate ? r->expect_gate : "clean");
            for (int g = 0; g < ST_NGATES; g++) {
                char cell[16];
                char padded[24];
                snprintf(cell, sizeof cell, "%s%s",
                         r->ran[g] ? kg_verdict_name(r->observed[g]) : "-",
                         r->expect_gate && strcmp(r->expect_gate, st_gates_name(g)) == 0 ? "*"
                                                                                         : "");
                snprintf(padded, sizeof padded, " %-9s", cell);
                kg_color_cell(stdout, padded);
            }
            printf("\n");
        }
    printf("(* = the gate that must catch the defect)\n");
}

/* The scope of the selftest: a defect of gate X is left out of gate Y where running it there
 * proves nothing. The bench's slow variants are correct kernels that only differ in speed (their
 * clean twins still run every gate); the counters defects differ only in traffic, which the
 * hotpath does not see (each gate's selftest_skips, gate.h). Their cells stay "-" (not run) in
 * the matrix. */
static bool st_scope_skips(const st_row *r, const char *gate)
{
    const struct kg_gate *eg = kg_gate_find(r->expect_gate), *g = kg_gate_find(gate);
    return eg && g && eg != g && (eg->flags & g->selftest_skips) != 0;
}

static bool st_pick_scope(const st_matrix *m, const st_row *r, const char *gate)
{
    (void)m;
    return st_scope_skips(r, gate);
}

/* base (may be NULL) or-ed with "^<id>$" of every row the scope leaves out of gate: an ERE for
 * --exclude, or NULL (*out) when the scope leaves nothing out. */
static int st_scope_exclude(char **out, const st_matrix *m, const char *gate, const char *base)
{
    return st_ids_regex(out, m, base, st_pick_scope, gate);
}

static bool st_gate_has(int g, unsigned flag) { return (kg_gates[g]->flags & flag) != 0; }

/* The gates that time or count device-wide (the bench, the counters) need the GPU alone. */
static bool st_serial_gate(int g) { return st_gate_has(g, KG_GATE_DEVICE_WIDE); }

#define ST_MAX_JOBS (5 * ST_MAX_GATES) /* defects, clean, the faults' three */
typedef struct {
    st_job job[ST_MAX_JOBS];
    int n;
} st_jobs;

/* A job of gate g on env e, started now; header printed when its results are taken. */
static int st_job_start(st_jobs *js, const st_matrix *m, const st_env *e, int g, const char *header)
{
    int rc = 0;
    if (js->n >= ST_MAX_JOBS)
        return KG_ERR(KG_EINTERNAL, "selftest: more than %d concurrent child runs", ST_MAX_JOBS);
    st_job *j = &js->job[js->n++];
    j->g = g;
    snprintf(j->header, sizeof j->header, "%s", header);
    if (strcmp(e->tag, "defects") == 0)
        KG_TRY(st_scope_exclude(&j->exclude, m, st_gates_name(g), e->exclude));
    KG_TRY(st_spawn_gate(j, e, NULL, NULL, st_limit_s(m)));
cleanup:
    return rc;
}

/* Every correctness gate's jobs (defects, the planted faults, the clean cases), started at once. */
static int st_start_correctness(st_jobs *js, const st_matrix *m, const st_env *e,
                                const st_env *clean_env, bool with_clean)
{
    int rc = 0;
    char header[192];
    for (int g = 0; g < ST_NGATES; g++) {
        if (st_serial_gate(g))
            continue;
        snprintf(header, sizeof header, "selftest: %s over the defect catalogue%s...\n",
                 st_gates_name(g), with_clean ? " and the clean cases" : "");
        KG_TRY(st_job_start(js, m, e, g, header));
        for (size_t f = 0; !e->filter && st_gate_has(g, KG_GATE_SELFTEST_FAULTS) &&
                           f < KG_ARRAY_LEN(st_fault_jobs);
             f++) {
            st_env fe = *e;
            fe.filter = st_fault_jobs[f].filter;
            fe.exclude = st_fault_jobs[f].exclude;
            fe.case_timeout = ST_FAULT_TIMEOUT;
            fe.tag = st_fault_jobs[f].tag;
            snprintf(header, sizeof header, "selftest: %s over %s (watchdog %s s)...\n",
                     st_gates_name(g), st_fault_jobs[f].what, ST_FAULT_TIMEOUT);
            KG_TRY(st_job_start(js, m, &fe, g, header));
        }
        if (with_clean)
            KG_TRY(st_job_start(js, m, clean_env, g, ""));
    }
cleanup:
    return rc;
}

/* m->where for a job: its header without "selftest: " and "...", or "GATE over the clean
 * cases" (whose header is the defects job's). */
static void st_job_where(st_matrix *m, const st_job *j)
{
    const char *h = j->header;
    if (!*h) {
        snprintf(m->where, sizeof m->where, "%s over the clean cases", st_gates_name(j->g));
        return;
    }
    if (strncmp(h, "selftest: ", 10) == 0)
        h += 10;
    snprintf(m->where, sizeof m->where, "%.*s", (int)strcspn(h, "\n"), h);
    char *dots = strstr(m->where, "...");
    if (dots)
        *dots = '\0';
}

/* Every job waited for, in the order started; the first error stands, the rest are reaped. */
static int st_collect_all(st_matrix *m, st_jobs *js)
{
    int rc = 0;
    for (int i = 0; i < js->n; i++) {
        st_job *j = &js->job[i];
        if (rc < 0) {
            kg_child_status cs; /* after an error the rest are not waited out: killed now */
            if (j->pid > 0)
                (void)kg_child_wait(&cs, j->pid, j->started, 1e-9, "selftest");
            j->pid = 0;
        } else {
            fputs(j->header, stdout);
            fflush(stdout);
            st_job_where(m, j);
            rc = st_collect_gate(m, j);
        }
        free(j->exclude);
        j->exclude = NULL;
    }
    return rc;
}

/* Every gate of the table over the defect catalogue (the planted faults on their own, through
 * parity, with a short watchdog) and, with_clean, over this runner's clean cases. The
 * correctness gates' child runs (parity, faults, preflight, hotpath) run concurrently and are
 * taken in table order; then bench and counters, one process at a time. */
static int st_run_gates(st_matrix *m, const st_env *e, const st_env *clean_env, bool with_clean)
{
    int rc = 0;
    st_jobs js;
    memset(&js, 0, sizeof js);
    int src = st_start_correctness(&js, m, e, clean_env, with_clean);
    int crc = st_collect_all(m, &js); /* also when a start failed: nothing is left running */
    /* Not KG_TRY(src) first: it would overwrite the collect's error with src's 0. */
    KG_TRY(src < 0 ? src : crc);
    for (int g = 0; g < ST_NGATES; g++) {
        if (!st_serial_gate(g))
            continue;
        if (st_gate_has(g, KG_GATE_SELFTEST_TWINS)) {
            printf("selftest: %s over the slow variants against their clean twins' marks...\n",
                   st_gates_name(g));
            fflush(stdout);
            KG_TRY(st_run_twins(m, e, g));
            continue;
        }
        char *ex = NULL;
        printf("selftest: %s over the defect catalogue%s...\n", st_gates_name(g),
               with_clean ? " and the clean cases" : "");
        snprintf(m->where, sizeof m->where, "%s over the defect catalogue", st_gates_name(g));
        fflush(stdout);
        KG_TRY(st_scope_exclude(&ex, m, st_gates_name(g), e->exclude));
        st_env de = *e;
        de.exclude = ex ? ex : e->exclude;
        rc = st_run_gate(m, &de, g, NULL, NULL);
        free(ex);
        KG_TRY(rc);
        snprintf(m->where, sizeof m->where, "%s over the clean cases", st_gates_name(g));
        if (with_clean)
            KG_TRY(st_run_gate(m, clean_env, g, NULL, NULL));
    }
cleanup:
    return rc;
}

/* The matrix judged into the report (selftest rows and record), printed; the exit code by the
 * one policy over the selftest's own rows. */
static int st_record(const st_matrix *m, kg_report *rep)
{
    st_counts c;
    cJSON *sj = cJSON_CreateObject();
    cJSON *rows = cJSON_AddArrayToObject(sj, KG_RK_ST_MATRIX);
    st_judge(m, &c, rows, rep);
    cJSON_AddNumberToObject(sj, KG_RK_ST_CAUGHT, c.caught);
    cJSON_AddNumberToObject(sj, KG_RK_ST_ESCAPED, c.escaped);
    cJSON_AddNumberToObject(sj, KG_RK_ST_FALSE_ALARMS, c.false_alarms);
    cJSON_AddNumberToObject(sj, KG_RK_ST_NOT_RUN, c.not_run);
    cJSON_AddNumberToObject(sj, KG_RK_ST_INFORMATIONAL, c.informational);
    cJSON_AddItemToObject(sj, KG_RK_ST_PASSES, st_passes_json(m));
    kg_report_set_extra(rep, KG_RK_SELFTEST, sj);
    st_print(m);
    const char *bad = c.escaped || c.false_alarms ? kg_color_begin("ESCAPED") : "";
    printf("\n%d caught, %s%d escaped, %d false alarms%s (%d not run without a GPU, %d "
           "informational)\n",
           c.caught, bad, c.escaped, c.false_alarms, *bad ? "\033[0m" : "", c.not_run,
           c.informational);
    /* The one policy over the selftest's own rows: an escape or false alarm is FAIL, a defect
     * not run (no GPU) SKIP. */
    int counts[KG_VERDICT_N] = { 0 };
    counts[KG_VERDICT_FAIL] = c.escaped + c.false_alarms;
    counts[KG_VERDICT_SKIP] = c.not_run;
    return kg_exit_code_for_counts(counts);
}

/* Interrupted (SIGINT/SIGTERM): the children are killed already (kg_child_wait); no verdict
 * is pinned on anything. The report says where the selftest stopped. */
static int st_interrupted(kg_report *rep, const st_matrix *m)
{
    char where[256];
    snprintf(where, sizeof where, "selftest: %s", m->where[0] ? m->where : "starting");
    kg_report_set_extra(rep, KG_RK_INCOMPLETE, cJSON_CreateTrue());
    kg_report_set_extra(rep, KG_RK_STOPPED_AT, cJSON_CreateString(where));
    return KG_ERR(KG_EINTERNAL,
                  "interrupted by %s in %s: its child runs were killed; the "
                  "report is partial (incomplete)",
                  kg_interrupt_name(), where);
}

int kg_selftest_run(kg_report *rep, const char *defects_exe, const kg_common_opts *o,
                    const char *keep_dir, bool with_clean, int *exit_code)
{
    int rc = 0;
    st_matrix m = { 0 };
    char tmpl[] = "/tmp/kgate-selftest-XXXXXX", self[PATH_MAX], seed[32], dev[16], cto[32];
    const char *dir = keep_dir;
    if (kg_n_gates > ST_MAX_GATES)
        return KG_ERR(KG_EINTERNAL, "selftest: %zu gates, the matrix holds %d", kg_n_gates,
                      ST_MAX_GATES);
    KG_TRY(kg_self_exe(self, sizeof self));
    if (!dir) {
        if (!mkdtemp(tmpl))
            return KG_ERR(KG_EIO, "selftest: cannot create a temporary directory: %s",
                          strerror(errno));
        dir = tmpl;
    } else if (mkdir(dir, 0755) != 0 && errno != EEXIST) {
        return KG_ERR(KG_EINVAL, "--keep %s: cannot create: %s", dir, strerror(errno));
    }
    snprintf(seed, sizeof seed, "%llu", (unsigned long long)o->seed);
    snprintf(dev, sizeof dev, "%d", o->device);
    /* Without --filter the faults run on their own (below); with one, every run gets a
     * watchdog short enough for a fault the filter selects. --case-timeout, when given, is
     * the watchdog of every child run but the planted faults' own (ST_FAULT_TIMEOUT). */
    if (o->case_timeout_s > 0)
        snprintf(cto, sizeof cto, "%.17g", o->case_timeout_s);
    st_env e = { .self_exe = self,
                 .defects_exe = defects_exe,
                 .tmpdir = dir,
                 .seed = seed,
                 .device = dev,
                 .filter = o->filter,
                 .exclude = o->filter ? NULL : ST_FAULTS,
                 .case_timeout = o->case_timeout_s > 0 ? cto
                                 : o->filter           ? "10"
                                                       : NULL,
                 .exe = defects_exe,
                 .tag = "defects" };
    st_env clean_env = e;
    clean_env.exe = self;
    clean_env.tag = "clean";
    clean_env.filter = NULL; /* --filter narrows the defects; clean cases always all run */
    clean_env.exclude = NULL;
    clean_env.case_timeout = o->case_timeout_s > 0 ? cto : NULL;
    KG_TRY(st_catalogue(&m, &e, defects_exe, "defects"));
    if (with_clean)
        KG_TRY(st_catalogue(&m, &clean_env, self, "clean"));
    KG_TRY(st_run_gates(&m, &e, &clean_env, with_clean));
    *exit_code = st_record(&m, rep);
cleanup:
    if (rc < 0 && kg_interrupted())
        rc = st_interrupted(rep, &m);
    st_matrix_free(&m);
    if (!keep_dir && dir == tmpl) {
        char cmd[PATH_MAX + 16];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpl);
        if (system(cmd) != 0)
            fprintf(stderr, "kgate: selftest: could not remove %s\n", tmpl);
    }
    return rc;
}
