/* Case isolation without a GPU: a test gate (no GPU needed) over cases that segfault, exit(),
 * abort, hang past the watchdog, or die in the middle of their result message, each followed
 * by a clean case. Every fault must be that case's ERROR with figures.fault naming its class,
 * every clean case must PASS, and the report must hold all of them. Then a run interrupted by
 * SIGTERM must leave a complete, well-formed report marked "incomplete". */
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "core/report_keys.h"
#include "driver/driver.h"
#include "fake_cases.h"
#include "kg_test.h"

static int t_clean(void *s, cudaStream_t st)
{
    (void)s, (void)st;
    return 0;
}
static int t_exit7(void *s, cudaStream_t st)
{
    (void)s, (void)st;
    exit(7);
}
static int t_abort(void *s, cudaStream_t st)
{
    (void)s, (void)st;
    abort();
}
/* A case that leaves a helper process behind (plain fork, or fork + exec), then passes. */
static int t_fork_helper(void *s, cudaStream_t st)
{
    (void)s, (void)st;
    if (fork() == 0) {
        sleep(20);
        _exit(0);
    }
    return 0;
}
static int t_exec_helper(void *s, cudaStream_t st)
{
    (void)s, (void)st;
    if (fork() == 0) {
        execl("/bin/sleep", "sleep", "20", (char *)NULL);
        _exit(127);
    }
    return 0;
}
static int t_error(void *s, cudaStream_t st)
{
    (void)s, (void)st;
    return KG_ERR(KG_EINVAL, "an ordinary case error");
}

static const kg_case_desc cases[] = {
    T_CASE("t/pass1", t_clean),  T_CASE("t/segv", t_segv),
    T_CASE("t/pass2", t_clean),  T_CASE("t/exit7", t_exit7),
    T_CASE("t/pass3", t_clean),  T_CASE("t/abort", t_abort),
    T_CASE("t/pass4", t_clean),  T_CASE("t/hang", t_hang),
    T_CASE("t/pass5", t_clean),  T_CASE("t/cut", t_clean),
    T_CASE("t/pass6", t_clean),  T_CASE("t/error", t_error),
    T_CASE("t/pass7", t_clean),  T_CASE("t/fork_helper", t_fork_helper),
    T_CASE("t/exit7b", t_exit7), T_CASE("t/exec_helper", t_exec_helper),
    T_CASE("t/exit7c", t_exit7),
};

/* The typed result that must travel back from the worker (result_size, result_flatten). */
typedef struct {
    int magic;
    char id[32];
    void *owned;
} tg_result;

/* The test gate: run the case's launch() in the worker; it passes if launch returns. */
static int tg_run_case(void *st, const kg_case_desc *d, const kg_gate_env *env, kg_case_result *res)
{
    (void)st, (void)env;
    kg_phase_set(NULL, NULL, "launch");
    int rc = d->launch(NULL, NULL);
    if (rc < 0)
        return rc;
    res->verdict = KG_VERDICT_PASS;
    snprintf(res->message, sizeof res->message, "returned");
    tg_result *t = calloc(1, sizeof *t);
    t->magic = 42;
    t->owned = malloc(8); /* made in the worker: result_flatten must clear it */
    snprintf(t->id, sizeof t->id, "%s", d->id);
    res->data = t;
    return 0;
}

static void tg_free(void *p)
{
    if (p)
        free(((tg_result *)p)->owned);
    free(p);
}

static void tg_flatten(void *p) { ((tg_result *)p)->owned = NULL; }
static const kg_gate_column tg_cols[] = { KG_COL_CASE(-20), KG_COL_VERDICT("v", -7) };
/* What every test gate has: the case's launch in the worker, its typed result. */
#define TG_GATE                                                                          \
    .run_case = tg_run_case, .result_free = tg_free, .columns = tg_cols, .n_columns = 2, \
    .result_size = sizeof(tg_result), .result_flatten = tg_flatten
static const struct kg_gate test_gate = { .name = "parity", TG_GATE };
/* A second gate over the same cases (the run's next gate). */
static const struct kg_gate test_gate2 = { .name = "hotpath", TG_GATE };

/* A gate whose begin and end take time (outside every case), and whose end leaves its state to
 * the worker's exit (KG_GATE_RETIRES_WORKER): the sleep in its end runs only in a worker. */
static int tg_slow_begin(void **state, const void *opts, const kg_gate_env *env)
{
    (void)opts, (void)env;
    *state = NULL;
    struct timespec ts = { 0, 200 * 1000 * 1000 };
    nanosleep(&ts, NULL);
    return 0;
}
static int tg_slow_end(void *state, const kg_gate_env *env, int rc)
{
    (void)state;
    struct timespec ts = { 0, 300 * 1000 * 1000 };
    if (env->in_worker)
        nanosleep(&ts, NULL);
    return rc;
}
static const struct kg_gate test_gate_retire = { .name = "retire",
                                                 .flags = KG_GATE_RETIRES_WORKER,
                                                 .begin = tg_slow_begin,
                                                 .end = tg_slow_end,
                                                 TG_GATE };

static const kg_run_row *row_of(const kg_run *run, const char *id)
{
    for (size_t i = 0; i < run->n_rows; i++)
        if (strcmp(run->rows[i].desc->id, id) == 0)
            return &run->rows[i];
    return NULL;
}

static const char *fault_class(kg_run *run, const char *id)
{
    const cJSON *it;
    cJSON_ArrayForEach(it, cJSON_GetObjectItem(kg_report_json(run->rep), KG_RK_RESULTS))
        if (strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(it, KG_RES_CASE)), id) == 0)
            return cJSON_GetStringValue(
                cJSON_GetObjectItem(cJSON_GetObjectItem(cJSON_GetObjectItem(it, KG_RES_FIGURES),
                                                        KG_FIG_FAULT),
                                    KG_FIG_FAULT_CLASS));
    return NULL;
}

static void check_fault(kg_run *run, const char *id, const char *cls, const char *words)
{
    const kg_run_row *r = row_of(run, id);
    const char *c = fault_class(run, id);
    CHECK_MSG(r && r->res.verdict == KG_VERDICT_ERROR, "%s: want ERROR", id);
    CHECK_MSG(c && strcmp(c, cls) == 0, "%s: fault class %s, want %s", id, c ? c : "(none)", cls);
    CHECK_MSG(r && strstr(r->res.message, words), "%s: message '%s' lacks '%s'", id,
              r ? r->res.message : "", words);
}

/* Every row carries its phase seconds (the faulted ones too, from the shared page), the hung
 * case's work reaches the watchdog's limit, and the gate's part counts every case. */
static void check_timing(kg_run *run, int n)
{
    const cJSON *it;
    int timed = 0;
    double hang = -1;
    cJSON_ArrayForEach(it, cJSON_GetObjectItem(kg_report_json(run->rep), KG_RK_RESULTS)) {
        const cJSON *t = cJSON_GetObjectItem(it, KG_RES_TIMING);
        timed += t != NULL;
        if (t && strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(it, KG_RES_CASE)), "t/hang") == 0)
            hang = cJSON_GetNumberValue(cJSON_GetObjectItem(t, KG_RK_PHASE_WORK));
    }
    CHECK_MSG(timed == n, "%d of %d rows carry their timing", timed, n);
    CHECK_MSG(hang >= 1.4, "the hung case's work is %.3f s, want the watchdog's 1.5 s", hang);
    cJSON *tj = kg_run_timing_json(run);
    const cJSON *p0 = cJSON_GetArrayItem(cJSON_GetObjectItem(tj, KG_RK_TIMING_PARTS), 0);
    CHECK(p0 &&
          strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(p0, KG_RK_TIMING_NAME)), "parity") == 0);
    CHECK(p0 && cJSON_GetNumberValue(cJSON_GetObjectItem(p0, KG_RK_TIMING_CASES)) == n);
    CHECK(p0 && cJSON_GetNumberValue(cJSON_GetObjectItem(p0, KG_RK_TIMING_WALL)) >= hang);
    CHECK(cJSON_GetNumberValue(cJSON_GetObjectItem(tj, KG_RK_TIMING_TOTAL)) >=
          cJSON_GetNumberValue(cJSON_GetObjectItem(p0, KG_RK_TIMING_WALL)));
    cJSON_Delete(tj);
}

static void test_faults(kg_registry *reg)
{
    kg_run run;
    kg_common_opts co = KG_COMMON_OPTS_INIT;
    co.case_timeout_s = 1.5;
    co.seed_set = true;
    co.filter = "^t/(pass|segv|exit7$|abort|hang|cut|error)";
    setenv("KGATE_TEST_CUT_ROW", "t/cut", 1);
    CHECK(kg_run_begin(&run, "isolation", &co, reg, NULL) == 0);
    CHECK_MSG(run.worker != NULL, "the run is not isolated");
    CHECK(kg_run_gate(&run, reg, &test_gate, NULL, false) == 0);
    unsetenv("KGATE_TEST_CUT_ROW");
    CHECK(run.n_rows == 13);
    for (size_t i = 0; i < KG_ARRAY_LEN(cases); i++)
        if (strncmp(cases[i].id, "t/pass", 6) == 0) {
            const kg_run_row *r = row_of(&run, cases[i].id);
            CHECK_MSG(r && r->res.verdict == KG_VERDICT_PASS, "%s after a fault: want PASS",
                      cases[i].id);
            const tg_result *t = r ? r->res.data : NULL;
            CHECK_MSG(t && t->magic == 42 && strcmp(t->id, cases[i].id) == 0 && !t->owned,
                      "%s: the typed result did not travel back from the worker", cases[i].id);
        }
    check_fault(&run, "t/segv", "signal", "SIGSEGV");
    check_fault(&run, "t/exit7", "exit", "exit(7)");
    check_fault(&run, "t/abort", "signal", "SIGABRT");
    check_fault(&run, "t/hang", "timeout", "no result within");
    check_fault(&run, "t/cut", "exit", "FAULT exit");
    const kg_run_row *e = row_of(&run, "t/error");
    CHECK(e && e->res.verdict == KG_VERDICT_ERROR && strstr(e->res.message, "ordinary") &&
          !fault_class(&run, "t/error"));
    CHECK_MSG(strstr(row_of(&run, "t/segv")->res.message, "(launch)") != NULL,
              "the phase of the fault is not named");
    check_timing(&run, 13);
    kg_run_free(&run);
}

static double t_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

/* The last case of a gate faults, and faults again in the next gate: with no worker alive at
 * the start of that gate, its cases must still run in a fresh worker, never in this process
 * (where the case's exit() would end the run without a report). Run in a child so that the
 * fault reaching this process shows as its exit status. */
static void test_fault_after_fault(kg_registry *reg)
{
    pid_t pid = fork();
    if (pid == 0) {
        kg_run run;
        kg_common_opts co = KG_COMMON_OPTS_INIT;
        co.case_timeout_s = 10;
        co.filter = "^t/exit7$";
        int rc = kg_run_begin(&run, "isolation", &co, reg, NULL);
        if (rc == 0)
            rc = kg_run_gate(&run, reg, &test_gate, NULL, false);
        if (rc == 0)
            rc = kg_run_gate(&run, reg, &test_gate2, NULL, false);
        bool ok = rc == 0 && run.n_rows == 2 && run.rows[0].res.verdict == KG_VERDICT_ERROR &&
                  run.rows[1].res.verdict == KG_VERDICT_ERROR &&
                  strstr(run.rows[1].res.message, "FAULT exit") &&
                  strstr(run.rows[1].res.message, "in hotpath");
        kg_run_free(&run);
        _exit(ok ? 0 : 99);
    }
    int st = 0;
    waitpid(pid, &st, 0);
    CHECK_MSG(WIFEXITED(st) && WEXITSTATUS(st) == 0,
              "a fault in the gate after a faulted last case: status %d (7: it ran in the "
              "parent; 99: wrong rows)",
              WIFEXITED(st) ? WEXITSTATUS(st) : -1);
}

/* A helper process that a case leaves behind holds copies of the worker's pipes: the next
 * case's exit() must still be FAULT exit at once (the worker's pid is watched), not a
 * watchdog timeout. */
static void test_helper_outlives(kg_registry *reg)
{
    kg_run run;
    kg_common_opts co = KG_COMMON_OPTS_INIT;
    co.case_timeout_s = 8;
    co.filter = "^t/(fork_helper|exit7b|exec_helper|exit7c)$";
    CHECK(kg_run_begin(&run, "isolation", &co, reg, NULL) == 0);
    double t0 = t_now();
    CHECK(kg_run_gate(&run, reg, &test_gate, NULL, false) == 0);
    double dt = t_now() - t0;
    check_fault(&run, "t/exit7b", "exit", "exit(7)");
    check_fault(&run, "t/exit7c", "exit", "exit(7)");
    CHECK_MSG(dt < 6, "four cases took %.1f s: a death was seen only at the watchdog", dt);
    kg_run_free(&run);
}

/* A run killed by the CI runner's job timeout (SIGTERM) still writes its report. */
static void test_interrupt(kg_registry *reg)
{
    char path[] = "/tmp/kgate-isolation-XXXXXX";
    int fd = mkstemp(path);
    close(fd);
    pid_t pid = fork();
    if (pid == 0) {
        kg_run run;
        kg_common_opts co = KG_COMMON_OPTS_INIT;
        co.case_timeout_s = 60;
        co.report_path = path;
        co.filter = "^t/(pass1|hang|pass2)$";
        int rc = kg_run_begin(&run, "isolation", &co, reg, NULL);
        if (rc == 0)
            rc = kg_run_gate(&run, reg, &test_gate, NULL, false);
        int code = kg_run_finish(&run, rc);
        kg_run_free(&run);
        _exit(code);
    }
    sleep(2);
    kill(pid, SIGTERM);
    int st = 0;
    waitpid(pid, &st, 0);
    CHECK_MSG(WIFEXITED(st) && WEXITSTATUS(st) == KG_EXIT_RUNTIME, "interrupted run: status %d",
              st);
    char *text = NULL;
    CHECK(kg_file_read(&text, NULL, path) == 0);
    cJSON *j = text ? cJSON_Parse(text) : NULL;
    CHECK_MSG(j && cJSON_IsTrue(cJSON_GetObjectItem(j, KG_RK_INCOMPLETE)), "no incomplete mark");
    CHECK(j && cJSON_GetArraySize(cJSON_GetObjectItem(j, KG_RK_RESULTS)) >= 1);
    cJSON_Delete(j);
    free(text);
    unlink(path);
}

/* A gate's own begin and end are in its part (begin_s, end_s: where a fixed cost hides, as the
 * hot path's 2 s did); a KG_GATE_RETIRES_WORKER gate's worker is retired after it (and its end
 * knew it ran in one), another gate's worker stays. */
static void test_gate_begin_end(kg_registry *reg)
{
    kg_run run;
    kg_common_opts co = KG_COMMON_OPTS_INIT;
    co.filter = "^t/pass[12]$";
    CHECK(kg_run_begin(&run, "isolation", &co, reg, NULL) == 0);
    CHECK(kg_run_gate(&run, reg, &test_gate, NULL, false) == 0);
    CHECK_MSG(run.worker != NULL, "an ordinary gate's worker was retired");
    CHECK(kg_run_gate(&run, reg, &test_gate_retire, NULL, false) == 0);
    CHECK_MSG(run.worker == NULL, "the KG_GATE_RETIRES_WORKER gate's worker is still alive");
    cJSON *tj = kg_run_timing_json(&run);
    const cJSON *p1 = cJSON_GetArrayItem(cJSON_GetObjectItem(tj, KG_RK_TIMING_PARTS), 1);
    double b = cJSON_GetNumberValue(cJSON_GetObjectItem(p1, KG_RK_TIMING_BEGIN));
    double e = cJSON_GetNumberValue(cJSON_GetObjectItem(p1, KG_RK_TIMING_END));
    double w = cJSON_GetNumberValue(cJSON_GetObjectItem(p1, KG_RK_TIMING_WALL));
    CHECK_MSG(b >= 0.19 && b < 1.5, "gate begin %.3f s, want the begin's 0.2 s", b);
    CHECK_MSG(e >= 0.29 && e < 1.5, "gate end %.3f s, want the end's 0.3 s in a worker", e);
    CHECK_MSG(w >= b + e, "part wall %.3f s < begin + end %.3f s", w, b + e);
    const cJSON *p0 = cJSON_GetArrayItem(cJSON_GetObjectItem(tj, KG_RK_TIMING_PARTS), 0);
    CHECK(cJSON_GetNumberValue(cJSON_GetObjectItem(p0, KG_RK_TIMING_END)) < 0.1);
    cJSON_Delete(tj);
    /* the next gate runs in a fresh worker */
    CHECK(kg_run_gate(&run, reg, &test_gate2, NULL, false) == 0);
    CHECK(row_of(&run, "t/pass2") && run.n_rows == 6);
    kg_run_free(&run);
}

int main(void)
{
    kg_registry *reg = NULL;
    CHECK(kg_registry_new(&reg) == 0);
    CHECK(kg_registry_add_all(reg, cases, KG_ARRAY_LEN(cases)) == 0);
    test_faults(reg);
    test_fault_after_fault(reg);
    test_helper_outlives(reg);
    test_interrupt(reg);
    test_gate_begin_end(reg);
    kg_registry_free(reg);
    printf("test_isolation: %d passed, %d failed\n", kg_t_pass, kg_t_fail);
    return kg_t_fail ? 1 : 0;
}
