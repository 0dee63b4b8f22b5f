/* Least privilege for case code (issue #28, item 9): a case that prints its environment, run in
 * the isolation worker by a test gate (no GPU needed), sees none of the secrets kgate reads --
 * not in environ, not in /proc/self/environ (the bytes the kernel shows of the initial
 * environment), not in the parent's /proc/$PPID/environ (readable by the same user), in no
 * encoding (plain, hex, base64) -- while the parent still has them (only it
 * signs, pushes and posts). The secrets are put in this process's initial environment by
 * re-executing it, as CI does. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "driver/driver.h"
#include "fake_cases.h"
#include "kg_test.h"

extern char **environ;

static const char *const secrets[] = {
    "KGATE_REPORT_KEY", "KGATE_GIT_TOKEN", "GITHUB_TOKEN",
    "CI_JOB_TOKEN",     "GITLAB_TOKEN",    "KGATE_STATUS_TOKEN"
};
#define SECRET_VALUE "kgsecret-0123456789abcdef-feedback"

/* The case: its environment and /proc/self/environ into the dump file. */
static int t_dump(void *s, cudaStream_t st)
{
    (void)s, (void)st;
    FILE *f = fopen(getenv("KG_TEST_ENV_DUMP"), "w");
    if (!f)
        return KG_ERR(KG_EIO, "cannot write the dump");
    for (char **e = environ; *e; e++)
        fprintf(f, "%s\n", *e);
    char parent[64];
    snprintf(parent, sizeof parent, "/proc/%d/environ", (int)getppid());
    const char *blocks[] = { "/proc/self/environ", parent };
    for (size_t i = 0; i < KG_ARRAY_LEN(blocks); i++) {
        FILE *p = fopen(blocks[i], "r");
        int c;
        while (p && (c = fgetc(p)) != EOF)
            fputc(c ? c : '\n', f);
        fprintf(f, "\n%s=%s\n", i ? "KG_TEST_PARENT_READ" : "KG_TEST_SELF_READ", p ? "yes" : "no");
        if (p)
            fclose(p);
    }
    fclose(f);
    return 0;
}
static const kg_case_desc cases[] = {
    { .id = "t/env", .op = "t", .setup = t_setup, .launch = t_dump, .reference = t_ref },
};

static int tg_run_case(void *st, const kg_case_desc *d, const kg_gate_env *env, kg_case_result *res)
{
    (void)st, (void)env;
    int rc = d->launch(NULL, NULL);
    if (rc < 0)
        return rc;
    res->verdict = KG_VERDICT_PASS;
    snprintf(res->message, sizeof res->message, "dumped");
    return 0;
}
static const kg_gate_column tg_cols[] = { KG_COL_CASE(-20), KG_COL_VERDICT("v", -7) };
static const struct kg_gate test_gate = { .name = "parity",
                                          .run_case = tg_run_case,
                                          .columns = tg_cols,
                                          .n_columns = 2 };

static void hexenc(char *dst, const char *s)
{
    for (; *s; s++, dst += 2)
        sprintf(dst, "%02x", (unsigned char)*s);
}

static void b64enc(char *dst, const char *s)
{
    static const char al[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    size_t n = strlen(s), o = 0;
    for (size_t i = 0; i + 2 < n; i += 3) {
        unsigned v = ((unsigned char)s[i] << 16) | ((unsigned char)s[i + 1] << 8) |
                     (unsigned char)s[i + 2];
        for (int k = 0; k < 4; k++)
            dst[o++] = al[(v >> (18 - 6 * k)) & 63];
    }
    dst[o] = '\0';
}

int main(int argc, char **argv)
{
    (void)argc;
    if (!getenv("KGATE_REPORT_KEY")) { /* the secrets in the initial environment, as in CI */
        for (size_t i = 0; i < KG_ARRAY_LEN(secrets); i++)
            setenv(secrets[i], SECRET_VALUE, 1);
        execv("/proc/self/exe", argv);
        perror("execv");
        return 1;
    }
    char dump[] = "/tmp/kgate-child-env-XXXXXX";
    int fd = mkstemp(dump);
    CHECK(fd >= 0);
    close(fd);
    setenv("KG_TEST_ENV_DUMP", dump, 1);
    kg_registry *reg = NULL;
    kg_run run;
    kg_common_opts co = KG_COMMON_OPTS_INIT;
    co.case_timeout_s = 20;
    CHECK(kg_registry_new(&reg) == 0);
    CHECK(kg_registry_add_all(reg, cases, KG_ARRAY_LEN(cases)) == 0);
    CHECK(kg_run_begin(&run, "child-env", &co, reg, NULL) == 0);
    CHECK_MSG(run.worker != NULL, "the run is not isolated");
    CHECK(kg_run_gate(&run, reg, &test_gate, NULL, false) == 0);
    CHECK(run.n_rows == 1 && run.rows[0].res.verdict == KG_VERDICT_PASS);
    kg_run_free(&run);
    char *text = NULL;
    CHECK(kg_file_read(&text, NULL, dump) == 0);
    CHECK_MSG(text && strstr(text, "KG_TEST_ENV_DUMP="), "the case did not dump its environment");
    CHECK_MSG(text && strstr(text, "KG_TEST_PARENT_READ=yes"),
              "the case could not read its parent's "
              "/proc/PID/environ (the check would prove nothing)");
    char hex[2 * sizeof SECRET_VALUE + 1], b64[2 * sizeof SECRET_VALUE];
    hexenc(hex, SECRET_VALUE);
    b64enc(b64, SECRET_VALUE);
    const char *enc[] = { SECRET_VALUE, hex, b64 };
    for (size_t i = 0; text && i < KG_ARRAY_LEN(enc); i++)
        CHECK_MSG(!strstr(text, enc[i]), "the case saw a secret (encoding %zu)", i);
    for (size_t i = 0; text && i < KG_ARRAY_LEN(secrets); i++) {
        char name[64];
        snprintf(name, sizeof name, "\n%s=", secrets[i]);
        CHECK_MSG(!strstr(text, name), "the case has %s in its environment", secrets[i]);
        const char *v = getenv(secrets[i]);
        CHECK_MSG(v && strcmp(v, SECRET_VALUE) == 0, "the parent lost %s", secrets[i]);
    }
    free(text);
    unlink(dump);
    kg_registry_free(reg);
    printf("test_child_env: %d passed, %d failed\n", kg_t_pass, kg_t_fail);
    return kg_t_fail ? 1 : 0;
}
