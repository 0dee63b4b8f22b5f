/* Core pieces that need no GPU: registry rules, rng, atomic files, report shape. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "core/kg_core.h"
#include "kg_test.h"

static int fake_setup(const kg_setup_args *a, void **s, kg_case_io *io)
{
    (void)a;
    (void)s;
    (void)io;
    return 0;
}
static int fake_launch(void *s, cudaStream_t st)
{
    (void)s;
    (void)st;
    return 0;
}
static int fake_ref(void *s, cudaStream_t st, void *r)
{
    (void)s;
    (void)st;
    (void)r;
    return 0;
}

static void check_child_limit(void)
{
    /* A bad KGATE_CHILD_TIMEOUT never lifts a child's limit (issue #28 item 5). */
    static const char *const bad_limits[] = {
        "1e999", "inf", "nan", "-1", "0", "1e30", "x", "5\n"
    };
    for (size_t i = 0; i < KG_ARRAY_LEN(bad_limits); i++) {
        setenv("KGATE_CHILD_TIMEOUT", bad_limits[i], 1);
        CHECK_MSG(kg_child_limit_s(30) == 30, "KGATE_CHILD_TIMEOUT='%s' gave %g", bad_limits[i],
                  kg_child_limit_s(30));
        CHECK(kg_child_limit_s(0) == KG_CHILD_DEFAULT_LIMIT_S);
    }
    setenv("KGATE_CHILD_TIMEOUT", "2.5", 1);
    CHECK(kg_child_limit_s(30) == 2.5);
    unsetenv("KGATE_CHILD_TIMEOUT");
}

/* The pid a grandchild wrote into dir/name, waited for up to 10 s (0: never written). */
static pid_t t_pid_file(const char *dir, const char *name)
{
    char path[300];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    for (int i = 0; i < 1000; i++) {
        FILE *f = fopen(path, "r");
        int v = 0;
        bool got = f && fscanf(f, "%d", &v) == 1 && v > 0;
        if (f)
            fclose(f);
        if (got)
            return (pid_t)v;
        usleep(10000);
    }
    return 0;
}

/* Running, not a zombie. */
static bool t_alive(pid_t pid)
{
    char path[64], buf[512];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    FILE *f = fopen(path, "r");
    size_t n = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
    if (f)
        fclose(f);
    buf[n] = '\0';
    const char *p = strrchr(buf, ')');
    return p && p[1] == ' ' && p[2] != 'Z';
}

/* issue #28: a grandchild that double-forks into a session of its own (setsid) leaves the
 * child's process group; it must not outlive the child. A sibling that still runs keeps its
 * own such grandchild until it ends (only what the ended child left is killed). */
static void check_child_leftovers(void)
{
    char dir[] = "/tmp/kgreapXXXXXX", log[300], sa[700], sb[700];
    CHECK(mkdtemp(dir) != NULL);
    snprintf(log, sizeof log, "%s/log", dir);
    const char *escape = "( setsid sh -c 'echo $$ > %s/%s; exec sleep 1000' & ); "
                         "while [ ! -s %s/%s ]; do sleep 0.01; done; %s";
    snprintf(sa, sizeof sa, escape, dir, "ga", dir, "ga", "exit 0");
    snprintf(sb, sizeof sb, escape, dir, "gb", dir, "gb", "exec sleep 1000");
    const char *argv_a[] = { "/bin/sh", "-c", sa, NULL }, *argv_b[] = { "/bin/sh", "-c", sb, NULL };
    pid_t a = 0, b = 0;
    kg_child_status st;
    double t0 = kg_now_s();
    CHECK(kg_child_spawn(&b, argv_b, log, true, "test") == 0);
    pid_t gb = t_pid_file(dir, "gb");
    CHECK(kg_child_spawn(&a, argv_a, log, true, "test") == 0);
    CHECK(kg_child_wait(&st, a, t0, 30, "test") == 0 && st.code == 0);
    pid_t ga = t_pid_file(dir, "ga");
    CHECK(ga > 0 && gb > 0);
    CHECK_MSG(ga > 0 && !t_alive(ga), "the ended child's setsid grandchild %d still runs", ga);
    CHECK_MSG(gb > 0 && t_alive(gb), "a running sibling's grandchild %d was killed", gb);
    CHECK(kg_child_wait(&st, b, t0, 1e-9, "test") == 0 && st.timed_out);
    CHECK_MSG(gb > 0 && !t_alive(gb), "the timed-out child's setsid grandchild %d still runs", gb);
    if (ga > 0 && t_alive(ga))
        kill(ga, SIGKILL); /* not left behind by a failed check */
    if (gb > 0 && t_alive(gb))
        kill(gb, SIGKILL);
    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    CHECK(system(cmd) == 0);
}

static void check_registry(void)
{
    kg_registry *reg = NULL;
    CHECK(kg_registry_new(&reg) == 0);
    kg_case_desc d = { .id = "t/n=1/f32",
                       .op = "t",
                       .setup = fake_setup,
                       .launch = fake_launch,
                       .reference = fake_ref,
                       .parity = KG_PARITY_TOLERANCE_INIT(0, 0, 1) };
    CHECK(kg_registry_add(reg, &d) == 0);
    CHECK(kg_registry_add(reg, &d) == KG_EEXISTS);
    CHECK(strstr(kg_error_last(), "duplicate case id 't/n=1/f32'") != NULL);
    kg_case_desc bad = d;
    bad.id = "has space";
    CHECK(kg_registry_add(reg, &bad) == KG_EINVAL);
    bad.id = "x";
    bad.launch = NULL;
    CHECK(kg_registry_add(reg, &bad) == KG_EINVAL);
    bad = d;
    bad.id = "y";
    bad.batch_invariant = 1;
    CHECK(kg_registry_add(reg, &bad) == KG_EINVAL);
    CHECK(kg_registry_count(reg) == 1);

    kg_selection sel;
    CHECK(kg_select(&sel, reg, "^t/", NULL) == 0 && sel.n == 1);
    kg_selection_free(&sel);
    CHECK(kg_select(&sel, reg, "nomatch", NULL) == KG_ENOTFOUND);
    CHECK(strstr(kg_error_last(), "matches no case") != NULL);
    CHECK(kg_select(&sel, reg, "([", NULL) == KG_EINVAL);
    kg_registry_free(reg);
}

static void check_rng(void)
{
    /* rng: reproducible from the seed, different per seed, never zero */
    kg_rng r1, r2;
    float a[1000], b[1000];
    kg_rng_seed(&r1, 42, 1);
    kg_rng_seed(&r2, 42, 1);
    kg_rng_fill_f32(&r1, a, 1000, -1, 1);
    kg_rng_fill_f32(&r2, b, 1000, -1, 1);
    CHECK(memcmp(a, b, sizeof a) == 0);
    kg_rng_seed(&r2, 43, 1);
    kg_rng_fill_f32(&r2, b, 1000, -1, 1);
    CHECK(memcmp(a, b, sizeof a) != 0);
    int zeros = 0, inrange = 1;
    for (int i = 0; i < 1000; i++) {
        zeros += a[i] == 0.0f;
        inrange &= a[i] >= -1 && a[i] < 1;
    }
    CHECK(zeros == 0 && inrange);
    CHECK(kg_case_seed(1, "a") != kg_case_seed(1, "b"));
    CHECK(kg_case_seed(1, "a") == kg_case_seed(1, "a"));
}

static void check_parse(void)
{
    /* number parsing names the flag */
    uint64_t u;
    int iv;
    CHECK(kg_parse_u64("--seed", "12x", &u) == KG_EINVAL &&
          strstr(kg_error_last(), "--seed") != NULL);
    CHECK(kg_parse_u64("--seed", "-1", &u) == KG_EINVAL);
    CHECK(kg_parse_u64("--seed", "123", &u) == 0 && u == 123);
    CHECK(kg_parse_int("--device", "99999", 0, 1024, &iv) == KG_EINVAL);
    /* issue #28: strtol skips leading white space; kgate does not */
    const char *bad_int[] = { " 5", "\t5", "\n5", "+ 5", "", "5 ", "0x10" };
    for (size_t i = 0; i < sizeof bad_int / sizeof *bad_int; i++)
        CHECK_MSG(kg_parse_int("--device", bad_int[i], 0, 1024, &iv) == KG_EINVAL &&
                      strstr(kg_error_last(), "--device") != NULL,
                  "kg_parse_int accepted '%s'", bad_int[i]);
    CHECK(kg_parse_int("--device", "-3", -5, 5, &iv) == 0 && iv == -3);
    CHECK(kg_parse_int("--device", "+4", 0, 5, &iv) == 0 && iv == 4);
    /* issue #28: a figure is a finite decimal number (strtod also takes hex floats, inf, nan) */
    double dv = 0;
    const char *bad_dbl[] = { "0x1p3", "0X10",   "inf", "-inf", "infinity", "INF", "nan",
                              "NaN",   "nan(1)", " 1",  "\t1",  "1 ",       "",    ".",
                              "e5",    "1e",     "1e+", "--1",  "1e999",    "0x" };
    for (size_t i = 0; i < sizeof bad_dbl / sizeof *bad_dbl; i++)
        CHECK_MSG(kg_parse_double("--to", bad_dbl[i], &dv) == KG_EINVAL &&
                      strstr(kg_error_last(), "--to: expected a number") != NULL,
                  "kg_parse_double accepted '%s'", bad_dbl[i]);
    const char *good_dbl[] = { "1", "-2.5", "+3", ".5", "5.", "1e3", "2.5E-2", "0" };
    const double want_dbl[] = { 1, -2.5, 3, 0.5, 5, 1000, 0.025, 0 };
    for (size_t i = 0; i < sizeof good_dbl / sizeof *good_dbl; i++)
        CHECK_MSG(kg_parse_double("--to", good_dbl[i], &dv) == 0 && dv == want_dbl[i],
                  "kg_parse_double refused '%s'", good_dbl[i]);
}

static void check_files_and_report(void)
{
    /* atomic write: content lands whole, no temp file remains */
    char dir[] = "/tmp/kgtestXXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    char path[256], *txt = NULL;
    snprintf(path, sizeof path, "%s/f.json", dir);
    CHECK(kg_file_write_atomic(path, "{\"a\":1}\n", 8) == 0);
    size_t len = 0;
    CHECK(kg_file_read(&txt, &len, path) == 0 && len == 8 && strcmp(txt, "{\"a\":1}\n") == 0);
    free(txt);
    char missing[300];
    snprintf(missing, sizeof missing, "%s/nodir/f.json", dir);
    CHECK(kg_file_write_atomic(missing, "x", 1) == KG_EIO);
    CHECK(kg_path_check_writable(missing) == KG_EINVAL);
    CHECK(kg_path_check_writable(dir) == KG_EINVAL);

    /* report shape */
    kg_report *rep = NULL;
    CHECK(kg_report_new(&rep, "parity", true) == 0);
    kg_report_set_seed(rep, 7);
    CHECK(kg_report_add(rep, "parity", "t/n=1/f32", KG_VERDICT_FAIL, "why", NULL) == 0);
    CHECK(kg_report_add(rep, "parity", "t/n=2/f32", KG_VERDICT_PASS, "", NULL) == 0);
    CHECK(kg_report_write(rep, path) == 0);
    kg_report_free(rep);
    CHECK(kg_file_read(&txt, &len, path) == 0);
    cJSON *j = cJSON_Parse(txt);
    CHECK(j != NULL);
    CHECK(strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(j, "schema")), "kgate-report/1") == 0);
    CHECK(strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(j, "mode")), "diagnostic") == 0);
    CHECK(cJSON_IsFalse(cJSON_GetObjectItem(j, "certifying")));
    CHECK(cJSON_GetNumberValue(cJSON_GetObjectItem(j, "seed")) == 7);
    CHECK(cJSON_GetArraySize(cJSON_GetObjectItem(j, "results")) == 2);
    cJSON *s = cJSON_GetObjectItem(j, "summary");
    CHECK(cJSON_GetNumberValue(cJSON_GetObjectItem(s, "FAIL")) == 1 &&
          cJSON_GetNumberValue(cJSON_GetObjectItem(s, "PASS")) == 1);
    cJSON_Delete(j);
    free(txt);
    unlink(path);
    rmdir(dir);
}

int main(void)
{
    check_child_limit();
    check_child_leftovers();
    check_registry();
    check_rng();
    check_parse();
    check_files_and_report();
    return kg_test_done("test_core");
}
