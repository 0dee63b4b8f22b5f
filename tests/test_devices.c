/* --devices without a GPU (issue #27 item 5; gates/driver/pool.c): test gates that need no GPU
 * over lanes of three "GPUs" (ordinals 0, 5, 2: the workers open no device here, but each is
 * told its ordinal, which its cases report back). Every case must be recorded once, in
 * selection order, on the lane's ordinal that ran it (results[].device), with its typed
 * result; cases must overlap in time on different lanes; a fault costs its case alone (the
 * next case on that lane is decided); the console prints one header and the cases in order;
 * a KG_GATE_ONE_DEVICE gate runs every case in the first GPU's one worker; a GPU listed twice
 * gets two workers but a device-wide gate only one; the lanes' ends' report extras meet in the
 * gate's merge_extra; a lane whose worker died idle costs one
 * case and goes on; a gate that cannot begin on one GPU stops the run at once although another
 * GPU runs a hang; an interrupted pool writes a partial report; --devices is parsed strictly
 * and refused without isolation or against --device. */
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "core/report_keys.h"
#include "driver/driver.h"
#include "driver/worker_int.h"
#include "fake_cases.h"
#include "kg_test.h"

static int t_nap(void *s, cudaStream_t st)
{
    (void)s, (void)st;
    struct timespec ts = { 0, 250 * 1000 * 1000 };
    nanosleep(&ts, NULL);
    return 0;
}
static int t_exit3(void *s, cudaStream_t st)
{
    (void)s, (void)st;
    exit(3);
}

static const kg_case_desc cases[] = {
    T_CASE("d/n01", t_nap),   T_CASE("d/n02", t_nap),     T_CASE("d/n03", t_nap),
    T_CASE("d/n04", t_nap),   T_CASE("d/n05", t_nap),     T_CASE("d/n06", t_nap),
    T_CASE("d/n07", t_nap),   T_CASE("d/exit3", t_exit3), T_CASE("d/n08", t_nap),
    T_CASE("d/segv", t_segv), T_CASE("d/n09", t_nap),     T_CASE("d/hang", t_hang),
    T_CASE("d/n10", t_nap),   T_CASE("d/n11", t_nap),
};

/* What a case tells the parent: who ran it, where, when. */
typedef struct {
    int magic, device;
    pid_t pid;
    double t0, t1;
} tg_result;

static int tg_run_case(void *st, const kg_case_desc *d, const kg_gate_env *env, kg_case_result *res)
{
    (void)st;
    tg_result *t = calloc(1, sizeof *t);
    if (!t)
        return KG_ERR(KG_ENOMEM, "out of memory");
    kg_phase_set(NULL, NULL, "launch");
    t->t0 = kg_now_s();
    int rc = d->launch(NULL, NULL);
    t->t1 = kg_now_s();
    if (rc < 0) {
        free(t);
        return rc;
    }
    t->magic = 42;
    t->device = env->device;
    t->pid = getpid();
    res->verdict = KG_VERDICT_PASS;
    snprintf(res->message, sizeof res->message, "device %d", env->device);
    res->data = t;
    return 0;
}

static void tg_free(void *p) { free(p); }
static const kg_gate_column tg_cols[] = { KG_COL_CASE(-12), KG_COL_VERDICT("verdict", -7) };
#define TG_GATE                                                                          \
    .run_case = tg_run_case, .result_free = tg_free, .columns = tg_cols, .n_columns = 2, \
    .result_size = sizeof(tg_result)
static const struct kg_gate lanes_gate = { .name = "parity", TG_GATE };
static const struct kg_gate one_gate = { .name = "bench", .flags = KG_GATE_ONE_DEVICE, TG_GATE };
/* A gate whose begin fails on GPU 5 only (its options are wrong there, say). */
static int tg_begin_5(void **state, const void *opts, const kg_gate_env *env)
{
    (void)opts;
    *state = NULL;
    return env->device == 5 ? KG_ERR(KG_EINVAL, "begin refused on GPU 5") : 0;
}
static const struct kg_gate begin5_gate = { .name = "hotpath", .begin = tg_begin_5, TG_GATE };
/* A gate whose end reports how many cases its worker ran; the lanes' reports are summed. */
static int ts_begin(void **state, const void *opts, const kg_gate_env *env)
{
    (void)opts, (void)env;
    *state = calloc(1, sizeof(int));
    return *state ? 0 : KG_ERR(KG_ENOMEM, "out of memory");
}
static int ts_run_case(void *st, const kg_case_desc *d, const kg_gate_env *env, kg_case_result *res)
{
    (*(int *)st)++;
    return tg_run_case(NULL, d, env, res);
}
/* As the counters' end: a run-level record only from an end that saw its whole part. */
static int ts_end(void *state, const kg_gate_env *env, int rc)
{
    if (rc == 0) {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddNumberToObject(o, "cases", *(int *)state);
        cJSON_AddNumberToObject(o, "lanes", env->lanes);
        kg_report_set_extra(env->rep, "t_sum", o);
    }
    free(state);
    return rc;
}
static void ts_merge(const char *key, cJSON *into, const cJSON *from)
{
    cJSON *n = cJSON_GetObjectItem(into, "cases");
    if (strcmp(key, "t_sum") == 0 && n)
        cJSON_SetNumberValue(n, n->valuedouble +
                                    cJSON_GetNumberValue(cJSON_GetObjectItem(from, "cases")));
}
static const struct kg_gate sum_gate = { .name = "counters",
                                         .begin = ts_begin,
                                         .run_case = ts_run_case,
                                         .end = ts_end,
                                         .merge_extra = ts_merge,
                                         .result_free = tg_free,
                                         .columns = tg_cols,
                                         .n_columns = 2,
                                         .result_size = sizeof(tg_result) };
static const struct kg_gate wide_gate = { .name = "counters",
                                          .flags = KG_GATE_DEVICE_WIDE,
                                          TG_GATE };

static const int devs[] = { 0, 5, 2 };

static void pool_opts(kg_common_opts *co, const char *filter, double timeout_s)
{
    *co = (kg_common_opts)KG_COMMON_OPTS_INIT;
    co->filter = filter;
    co->seed_set = true;
    co->case_timeout_s = timeout_s;
    co->n_devices = 3;
    memcpy(co->devices, devs, sizeof devs);
    co->device = devs[0];
}

/* results[] of the report, by position. */
static const cJSON *row_json(kg_run *run, size_t i)
{
    return cJSON_GetArrayItem(cJSON_GetObjectItem(kg_report_json(run->rep), KG_RK_RESULTS), (int)i);
}

static const char *fault_class(const cJSON *row)
{
    return cJSON_GetStringValue(
        cJSON_GetObjectItem(cJSON_GetObjectItem(cJSON_GetObjectItem(row, KG_RES_FIGURES),
                                                KG_FIG_FAULT),
                            KG_FIG_FAULT_CLASS));
}

/* Rows in selection order, each on its lane's ordinal (report and typed result agree). */
static void check_rows(kg_run *run, size_t n, int *lanes_used, int *overlaps)
{
    CHECK_MSG(run->n_rows == n, "%zu rows, want %zu", run->n_rows, n);
    int seen[8] = { 0 };
    *overlaps = 0;
    for (size_t i = 0; i < run->n_rows && i < n; i++) {
        const kg_run_row *r = &run->rows[i];
        const cJSON *j = row_json(run, i);
        CHECK_MSG(strcmp(r->desc->id, cJSON_GetStringValue(cJSON_GetObjectItem(j, KG_RES_CASE))) ==
                      0,
                  "typed row %zu and report row disagree", i);
        const cJSON *dv = cJSON_GetObjectItem(j, KG_RES_DEVICE);
        CHECK_MSG(cJSON_IsNumber(dv), "%s: no results[].device", r->desc->id);
        const tg_result *t = r->res.data;
        if (!t)
            continue;
        CHECK_MSG(t->magic == 42 && dv && t->device == (int)dv->valuedouble,
                  "%s: ran on %d, the report says %g", r->desc->id, t->device,
                  dv ? dv->valuedouble : -1);
        for (size_t l = 0; l < 3; l++)
            seen[l] |= t->device == devs[l];
        for (size_t k = 0; k < i; k++) {
            const tg_result *u = run->rows[k].res.data;
            if (u && u->pid != t->pid && u->t0 < t->t1 && t->t0 < u->t1)
                (*overlaps)++;
        }
    }
    *lanes_used = seen[0] + seen[1] + seen[2];
}

static void test_lanes(kg_registry *reg)
{
    kg_run run;
    kg_common_opts co;
    pool_opts(&co, "^d/n", 30);
    CHECK(kg_run_begin(&run, "devices", &co, reg, NULL) == 0);
    CHECK(kg_run_gate(&run, reg, &lanes_gate, NULL, false) == 0);
    int used = 0, overlaps = 0;
    check_rows(&run, 11, &used, &overlaps);
    CHECK_MSG(used == 3, "%d of 3 lanes ran a case", used);
    CHECK_MSG(overlaps > 0, "no two cases ran at once on different lanes");
    for (size_t i = 1; i < run.n_rows; i++)
        CHECK_MSG(strcmp(run.rows[i - 1].desc->id, run.rows[i].desc->id) < 0,
                  "rows out of selection order at %zu", i);
    /* the next gate runs over the same lanes, and a ONE_DEVICE gate in one worker on GPU 0 */
    CHECK(kg_run_gate(&run, reg, &one_gate, NULL, false) == 0);
    pid_t pid = 0;
    for (size_t i = 11; i < run.n_rows; i++) {
        const tg_result *t = run.rows[i].res.data;
        CHECK_MSG(t && t->device == 0 && (!pid || t->pid == pid), "%s: bench off GPU 0's worker",
                  run.rows[i].desc->id);
        pid = t ? t->pid : pid;
        CHECK(cJSON_GetNumberValue(cJSON_GetObjectItem(row_json(&run, i), KG_RES_DEVICE)) == 0);
    }
    CHECK(run.n_rows == 22);
    kg_run_free(&run);
}

/* Each lane's end reports its part; the report holds their sum (gate->merge_extra). */
static void test_merge(kg_registry *reg)
{
    kg_run run;
    kg_common_opts co;
    pool_opts(&co, "^d/n", 30);
    CHECK(kg_run_begin(&run, "devices", &co, reg, NULL) == 0);
    CHECK(kg_run_gate(&run, reg, &sum_gate, NULL, false) == 0);
    const cJSON *t = cJSON_GetObjectItem(kg_report_json(run.rep), "t_sum");
    CHECK_MSG(cJSON_GetNumberValue(cJSON_GetObjectItem(t, "cases")) == 11,
              "the lanes' ends report %g cases in all, want 11",
              cJSON_GetNumberValue(cJSON_GetObjectItem(t, "cases")));
    CHECK(cJSON_GetNumberValue(cJSON_GetObjectItem(t, "lanes")) == 3);
    kg_run_free(&run);
    /* a lane that lost its worker: no end reports a whole-run record (as with one worker) */
    pool_opts(&co, "^d/(n|exit3)", 30);
    CHECK(kg_run_begin(&run, "devices", &co, reg, NULL) == 0);
    CHECK(kg_run_gate(&run, reg, &sum_gate, NULL, false) == 0);
    CHECK_MSG(!cJSON_GetObjectItem(kg_report_json(run.rep), "t_sum"),
              "a fault cost a lane its worker, yet the ends reported a whole-run record");
    kg_run_free(&run);
}

/* The counters' merge of its GPUs' run summaries (kg_gate_counters.merge_extra). */
static void test_counters_merge(void)
{
    const struct kg_gate *ct = kg_gate_find("counters");
    CHECK(ct && ct->merge_extra);
    if (!ct || !ct->merge_extra)
        return;
    cJSON *a = cJSON_Parse("{\"profiled_s\": 1.5, \"wall_s\": 2, \"chip\": \"GH100\", "
                           "\"passes\": 12, \"metrics\": {}, \"replay\": \"user\"}");
    cJSON *b = cJSON_Parse("{\"profiled_s\": 2.5, \"wall_s\": 3, \"chip\": \"GH100\", "
                           "\"passes\": 12, \"metrics\": {}, \"replay\": \"user\"}");
    cJSON *skipped = cJSON_Parse("{\"profiled_s\": 0, \"wall_s\": 0.5, "
                                 "\"skipped\": \"another profiler holds the device\"}");
    ct->merge_extra(KG_RK_COUNTERS, a, b);
    CHECK(cJSON_GetNumberValue(cJSON_GetObjectItem(a, KG_RK_CT_PROFILED_S)) == 4.0);
    CHECK(cJSON_GetNumberValue(cJSON_GetObjectItem(a, KG_RK_CT_WALL)) == 3.0);
    ct->merge_extra(KG_RK_COUNTERS, a, skipped); /* one GPU skipped, others profiled */
    CHECK_MSG(!cJSON_HasObjectItem(a, KG_RK_CT_SKIPPED), "'skipped' means every case SKIP");
    ct->merge_extra(KG_RK_COUNTERS, skipped, b); /* the first skipped, a later one profiled */
    CHECK(!cJSON_HasObjectItem(skipped, KG_RK_CT_SKIPPED) &&
          cJSON_HasObjectItem(skipped, KG_RK_CT_METRICS) &&
          strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(skipped, KG_RK_CT_CHIP)), "GH100") == 0);
    cJSON_Delete(a);
    cJSON_Delete(b);
    cJSON_Delete(skipped);
}

/* Distinct workers (pids) that ran rows [from, to) on GPU `dev`. */
static int workers_on(const kg_run *run, size_t from, size_t to, int dev)
{
    pid_t pids[64];
    int n = 0;
    for (size_t i = from; i < to; i++) {
        const tg_result *t = run->rows[i].res.data;
        if (!t || t->device != dev)
            continue;
        int k = 0;
        while (k < n && pids[k] != t->pid)
            k++;
        if (k == n && n < 64)
            pids[n++] = t->pid;
    }
    return n;
}

/* "--devices 0,0,3": GPU 0 has two workers; a device-wide gate uses only the first of them. */
static void test_twice(kg_registry *reg)
{
    kg_run run;
    kg_common_opts co;
    pool_opts(&co, "^d/n", 30);
    co.devices[1] = 0;
    co.devices[2] = 3;
    CHECK(kg_run_begin(&run, "devices", &co, reg, NULL) == 0);
    CHECK(kg_run_gate(&run, reg, &lanes_gate, NULL, false) == 0);
    CHECK(kg_run_gate(&run, reg, &wide_gate, NULL, false) == 0);
    CHECK_MSG(run.n_rows == 22, "%zu rows", run.n_rows);
    CHECK_MSG(workers_on(&run, 0, 11, 0) == 2, "parity: %d workers on GPU 0, want 2",
              workers_on(&run, 0, 11, 0));
    CHECK_MSG(workers_on(&run, 0, 11, 3) == 1, "parity: GPU 3 unused");
    CHECK_MSG(workers_on(&run, 11, 22, 0) == 1, "counters: %d workers counted on GPU 0, want 1",
              workers_on(&run, 11, 22, 0));
    CHECK_MSG(workers_on(&run, 11, 22, 3) == 1, "counters: GPU 3 unused");
    kg_run_free(&run);
}

static void test_faults(kg_registry *reg)
{
    kg_run run;
    kg_common_opts co;
    pool_opts(&co, "^d/", 1.5);
    CHECK(kg_run_begin(&run, "devices", &co, reg, NULL) == 0);
    CHECK(kg_run_gate(&run, reg, &lanes_gate, NULL, false) == 0);
    CHECK_MSG(run.n_rows == 14, "%zu rows", run.n_rows);
    for (size_t i = 0; i < run.n_rows; i++) {
        const kg_run_row *r = &run.rows[i];
        const char *want = strcmp(r->desc->id, "d/exit3") == 0  ? "exit"
                           : strcmp(r->desc->id, "d/segv") == 0 ? "signal"
                           : strcmp(r->desc->id, "d/hang") == 0 ? "timeout"
                                                                : NULL;
        const char *cls = fault_class(row_json(&run, i));
        if (want)
            CHECK_MSG(r->res.verdict == KG_VERDICT_ERROR && cls && strcmp(cls, want) == 0 &&
                          strstr(r->res.message, "in parity"),
                      "%s: %s '%s', want ERROR %s", r->desc->id, kg_verdict_name(r->res.verdict),
                      r->res.message, want);
        else
            CHECK_MSG(r->res.verdict == KG_VERDICT_PASS && !cls, "%s after a fault: %s",
                      r->desc->id, r->res.message);
    }
    kg_run_free(&run);
}

/* The console: one table header, then the cases in selection order. */
static void test_console(kg_registry *reg)
{
    char path[] = "/tmp/kgate-devices-out-XXXXXX";
    int fd = mkstemp(path);
    fflush(stdout);
    int saved = dup(STDOUT_FILENO);
    dup2(fd, STDOUT_FILENO);
    kg_run run;
    kg_common_opts co;
    pool_opts(&co, "^d/n0[1-6]$", 30);
    int rc = kg_run_begin(&run, "devices", &co, reg, NULL);
    if (rc == 0)
        rc = kg_run_gate(&run, reg, &lanes_gate, NULL, false);
    fflush(stdout);
    dup2(saved, STDOUT_FILENO);
    close(saved);
    CHECK(rc == 0);
    kg_run_free(&run);
    char *text = NULL;
    CHECK(kg_file_read(&text, NULL, path) == 0);
    const char *p = text ? text : "";
    int headers = 0;
    for (const char *h = p; (h = strstr(h, "verdict")); h++)
        headers++;
    CHECK_MSG(headers == 1, "%d table headers, want 1:\n%s", headers, p);
    const char *at = p;
    for (int i = 1; i <= 6; i++) {
        char id[16];
        snprintf(id, sizeof id, "d/n0%d", i);
        const char *q = strstr(at, id);
        CHECK_MSG(q != NULL, "%s is not after the cases before it:\n%s", id, p);
        at = q ? q : at;
    }
    free(text);
    close(fd);
    unlink(path);
}

/* A lane whose worker died while idle: the case sent to it is that worker's fault, the lane
 * starts a fresh one, and every case is still recorded. */
static void test_dead_idle(kg_registry *reg)
{
    kg_run run;
    kg_common_opts co;
    pool_opts(&co, "^d/n0[1-6]$", 30);
    CHECK(kg_run_begin(&run, "devices", &co, reg, NULL) == 0);
    CHECK(kg_run_gate(&run, reg, &lanes_gate, NULL, false) == 0);
    CHECK(run.lanes[1] != NULL);
    if (run.lanes[1]) {
        kill(run.lanes[1]->pid, SIGKILL);
        usleep(200 * 1000);
    }
    CHECK(kg_run_gate(&run, reg, &lanes_gate, NULL, false) == 0);
    int errors = 0;
    for (size_t i = 6; i < run.n_rows; i++)
        errors += run.rows[i].res.verdict == KG_VERDICT_ERROR;
    CHECK_MSG(run.n_rows == 12 && errors == 1, "%zu rows, %d ERROR: want 12 rows, 1 ERROR",
              run.n_rows, errors);
    kg_run_free(&run);
}

/* A gate that cannot begin on one GPU while another runs a hanging case: the run stops with
 * the begin's error at once, the hanging worker killed (not waited for). */
static void test_begin_fails(kg_registry *reg)
{
    double t0 = kg_now_s();
    pid_t pid = fork();
    if (pid == 0) {
        alarm(30);
        kg_run run;
        kg_common_opts co;
        pool_opts(&co, "^d/(hang|n10)$", 60);
        int rc = kg_run_begin(&run, "devices", &co, reg, NULL);
        if (rc == 0)
            rc = kg_run_gate(&run, reg, &begin5_gate, NULL, false);
        bool ok = rc == KG_EINVAL && strstr(kg_error_last(), "GPU 5");
        kg_run_free(&run);
        _exit(ok ? 0 : 99);
    }
    int st = 0;
    waitpid(pid, &st, 0);
    CHECK_MSG(WIFEXITED(st) && WEXITSTATUS(st) == 0,
              "a begin that fails beside a hanging case: status %d (99: not the begin's error; "
              "killed: it waited for the hang)",
              st);
    CHECK_MSG(kg_now_s() - t0 < 25, "took %.0f s", kg_now_s() - t0);
}

/* SIGTERM mid-pool: exit 4 and a partial report. */
static void test_interrupt(kg_registry *reg)
{
    char path[] = "/tmp/kgate-devices-XXXXXX", mark[64];
    int fd = mkstemp(path);
    close(fd);
    snprintf(mark, sizeof mark, "%s.hang", path);
    setenv("KG_T_MARK", mark, 1);
    pid_t pid = fork();
    if (pid == 0) {
        kg_run run;
        kg_common_opts co;
        pool_opts(&co, "^d/(n0[1-3]|hang|n1)", 60);
        co.report_path = path;
        int rc = kg_run_begin(&run, "devices", &co, reg, NULL);
        if (rc == 0)
            rc = kg_run_gate(&run, reg, &lanes_gate, NULL, false);
        int code = kg_run_finish(&run, rc);
        kg_run_free(&run);
        _exit(code);
    }
    for (int i = 0; i < 600 && access(mark, F_OK) != 0; i++) /* the hang has begun */
        usleep(100 * 1000);
    usleep(200 * 1000);
    kill(pid, SIGTERM);
    int st = 0;
    waitpid(pid, &st, 0);
    CHECK_MSG(WIFEXITED(st) && WEXITSTATUS(st) == KG_EXIT_RUNTIME, "interrupted: status %d", st);
    char *text = NULL;
    CHECK(kg_file_read(&text, NULL, path) == 0);
    cJSON *j = text ? cJSON_Parse(text) : NULL;
    CHECK_MSG(j && cJSON_IsTrue(cJSON_GetObjectItem(j, KG_RK_INCOMPLETE)), "no incomplete mark");
    CHECK(j && cJSON_GetArraySize(cJSON_GetObjectItem(j, KG_RK_RESULTS)) >= 3);
    cJSON_Delete(j);
    free(text);
    unlink(path);
    unlink(mark);
    unsetenv("KG_T_MARK");
}

static void test_refused(kg_registry *reg)
{
    kg_run run;
    kg_common_opts co;
    pool_opts(&co, "^d/n01$", 30);
    co.device = 2;
    CHECK(kg_run_begin(&run, "devices", &co, reg, NULL) == KG_EINVAL &&
          strstr(kg_error_last(), "--devices"));
    kg_run_free(&run);
    pool_opts(&co, "^d/n01$", 30);
    setenv("KGATE_ISOLATION", "0", 1);
    CHECK(kg_run_begin(&run, "devices", &co, reg, NULL) == KG_EINVAL &&
          strstr(kg_error_last(), "isolation"));
    unsetenv("KGATE_ISOLATION");
    kg_run_free(&run);
}

static void test_parse(void)
{
    int d[KG_DEVICES_MAX];
    size_t n = 0;
    CHECK(kg_devices_parse("0,1,3", d, &n) == 0 && n == 3 && d[0] == 0 && d[2] == 3);
    CHECK(kg_devices_parse("7", d, &n) == 0 && n == 1 && d[0] == 7);
    CHECK(kg_devices_parse("0,0", d, &n) == 0 && n == 2 && d[1] == 0); /* two workers, one GPU */
    const char *bad[] = { "", "0,", ",0", "0,,1", "a", "-1", "1024", "0;1", "1 ,2", "+1" };
    for (size_t i = 0; i < KG_ARRAY_LEN(bad); i++)
        CHECK_MSG(kg_devices_parse(bad[i], d, &n) == KG_EINVAL &&
                      strstr(kg_error_last(), "--devices"),
                  "'%s' accepted", bad[i]);
    char many[512] = "";
    for (int i = 0; i <= KG_DEVICES_MAX; i++)
        snprintf(many + strlen(many), sizeof many - strlen(many), "%s%d", i ? "," : "", i);
    CHECK(kg_devices_parse(many, d, &n) == KG_EINVAL);
}

int main(void)
{
    /* The lanes' ordinals (5, 3) need not exist: no worker opens a GPU here, on any machine. */
    setenv("CUDA_VISIBLE_DEVICES", "", 1);
    kg_registry *reg = NULL;
    CHECK(kg_registry_new(&reg) == 0);
    CHECK(kg_registry_add_all(reg, cases, KG_ARRAY_LEN(cases)) == 0);
    test_parse();
    test_counters_merge();
    test_lanes(reg);
    test_twice(reg);
    test_merge(reg);
    test_faults(reg);
    test_console(reg);
    test_dead_idle(reg);
    test_begin_fails(reg);
    test_interrupt(reg);
    test_refused(reg);
    kg_registry_free(reg);
    return kg_test_done("test_devices");
}
