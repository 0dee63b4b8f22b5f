/* Declarative options (core/opt.c): every kind, both value spellings, ranges, the usage errors
 * and their messages, positionals, --help, standalone refusal, the common table, and the
 * generated usage text. */
#include <stdlib.h>
#include <string.h>
#include "core/kg_core.h"
#include "core/opt.h"
#include "kg_test.h"

typedef struct {
    bool dry, sw;
    const char *name;
    int runs;
    uint64_t big;
    double budget, ratio;
    const char *fn_value;
    int fn_calls;
    bool save;
    bool hidden;
} t_opts;

#define T_OPTS_INIT               \
    {                             \
        .runs = 10, .budget = 1.0 \
    }

static int t_fn(void *opts, const char *v)
{
    t_opts *o = opts;
    if (v && strcmp(v, "bad") == 0)
        return KG_ERR(KG_EINVAL, "--mode: expected warm or cold, got '%s'", v);
    o->fn_value = v;
    o->fn_calls++;
    return 0;
}

static const kg_opt t_table[] = {
    KG_OPT_BOOL_("dry-run", t_opts, dry, "print, send nothing"),
    KG_OPT_STRING_REQUIRED_("name", "TEXT", t_opts, name, "a name"),
    KG_OPT_INT_("runs", "N", t_opts, runs, 1, 100, "runs per case (default 10)"),
    KG_OPT_U64_("big", "N", t_opts, big, "a big number"),
    KG_OPT_DOUBLE_("budget", "S", t_opts, budget, 0, 3600, "seconds per case"),
    KG_OPT_DOUBLE_("ratio", "F", t_opts, ratio, 0, 1, "a ratio"),
    KG_OPT_FN_("mode", "warm|cold", t_fn, 0, "timing mode"),
    KG_OPT_FN_("toggle", NULL, t_fn, KG_OPT_F_SWITCH, "a switch through a function"),
    KG_OPT_BOOL_("save", t_opts, save, "only the gate's own command"),
    KG_OPT_BOOL_("internal", t_opts, hidden, "never shown"),
};

/* Patch the flags the macros cannot take (designated initializers keep the rest). */
static kg_opt t_opts_table[KG_ARRAY_LEN(t_table)];

static void t_init_table(void)
{
    memcpy(t_opts_table, t_table, sizeof t_table);
    t_opts_table[8].flags = KG_OPT_F_STANDALONE;
    t_opts_table[9].flags = KG_OPT_F_HIDDEN;
}

/* Parse a NULL-terminated argument list (argv[0] = "cmd") with the test table first and the
 * common table second. */
static int t_parse(t_opts *o, kg_common_opts *c, bool standalone_ok, bool *help, const char **pos,
                   size_t max_pos, size_t *npos, const char *const *args)
{
    char *argv[32] = { "cmd" };
    int argc = 1;
    for (; args[argc - 1]; argc++)
        argv[argc] = (char *)args[argc - 1];
    kg_opt_table tables[] = {
        { .opts = t_opts_table,
          .n = KG_ARRAY_LEN(t_opts_table),
          .target = o,
          .standalone_ok = standalone_ok },
        { .opts = kg_common_opt_table, .n = kg_n_common_opts, .target = c, .standalone_ok = true },
    };
    return kg_opt_parse(tables, 2, "cmd", argc, argv, help, pos, max_pos, npos);
}

#define ARGS(...) ((const char *const[]){ __VA_ARGS__, NULL })

static int t_run(t_opts *o, kg_common_opts *c, const char *const *args)
{
    bool help;
    size_t np;
    *o = (t_opts)T_OPTS_INIT;
    *c = (kg_common_opts)KG_COMMON_OPTS_INIT;
    return t_parse(o, c, true, &help, NULL, 0, &np, args);
}

#define CHECK_ERR(call, needle)                                                    \
    do {                                                                           \
        int rc_ = (call);                                                          \
        CHECK_MSG(rc_ == KG_EINVAL && strstr(kg_error_last(), needle),             \
                  "rc %d, message '%s', want '%s'", rc_, kg_error_last(), needle); \
    } while (0)

static void test_values(void)
{
    t_opts o;
    kg_common_opts c;
    CHECK(t_run(&o, &c,
                ARGS("--dry-run", "--name", "x", "--runs=7", "--big", "18446744073709551615",
                     "--budget", "2.5", "--mode", "cold", "--toggle")) == 0);
    CHECK(o.dry && o.name && strcmp(o.name, "x") == 0 && o.runs == 7);
    CHECK(o.big == UINT64_MAX && o.budget == 2.5);
    CHECK(o.fn_calls == 2 && o.fn_value == NULL); /* --toggle: fn with NULL, last */
    CHECK(t_run(&o, &c, ARGS("--name=a=b", "--mode=warm")) == 0);
    CHECK(strcmp(o.name, "a=b") == 0 && strcmp(o.fn_value, "warm") == 0);
    CHECK(t_run(&o, &c, ARGS("--name", "-")) == 0 && strcmp(o.name, "-") == 0);
    CHECK(t_run(&o, &c, ARGS("--dry-run")) == 0 && o.runs == 10 && o.budget == 1.0 && !o.save);
}

static void test_ranges(void)
{
    t_opts o;
    kg_common_opts c;
    CHECK(t_run(&o, &c, ARGS("--runs", "1")) == 0 && o.runs == 1);
    CHECK(t_run(&o, &c, ARGS("--runs", "100")) == 0 && o.runs == 100);
    CHECK_ERR(t_run(&o, &c, ARGS("--runs", "0")),
              "--runs: expected an integer in [1, 100], got '0'");
    CHECK_ERR(t_run(&o, &c, ARGS("--runs", "101")), "in [1, 100]");
    CHECK_ERR(t_run(&o, &c, ARGS("--runs", "5x")), "got '5x'");
    CHECK_ERR(t_run(&o, &c, ARGS("--big", "-1")),
              "--big: expected a non-negative integer, got '-1'");
    CHECK_ERR(t_run(&o, &c, ARGS("--big", "0x10")), "non-negative integer");
    CHECK_ERR(t_run(&o, &c, ARGS("--big", "18446744073709551616")), "non-negative integer");
    CHECK(t_run(&o, &c, ARGS("--budget", "3600")) == 0 && o.budget == 3600);
    CHECK_ERR(t_run(&o, &c, ARGS("--budget", "0")),
              "--budget: expected seconds in (0, 3600], got '0'");
    CHECK_ERR(t_run(&o, &c, ARGS("--budget", "3600.5")), "seconds in (0, 3600]");
    CHECK_ERR(t_run(&o, &c, ARGS("--budget", "x")), "--budget: expected a number, got 'x'");
    CHECK_ERR(t_run(&o, &c, ARGS("--budget", "inf")), "expected a number");
    CHECK_ERR(t_run(&o, &c, ARGS("--ratio", "2")), "--ratio: expected a number in (0, 1], got '2'");
    CHECK_ERR(t_run(&o, &c, ARGS("--mode", "bad")), "--mode: expected warm or cold, got 'bad'");
    CHECK_ERR(t_run(&o, &c, ARGS("--name", "")), "cmd: flag '--name' needs a value");
    CHECK_ERR(t_run(&o, &c, ARGS("--name=")), "cmd: flag '--name' needs a value");
}

static void test_usage_errors(void)
{
    t_opts o;
    kg_common_opts c;
    CHECK_ERR(t_run(&o, &c, ARGS("--bogus")), "cmd: unknown flag '--bogus'");
    CHECK_ERR(t_run(&o, &c, ARGS("--bogus=1")), "cmd: unknown flag '--bogus=1'");
    CHECK_ERR(t_run(&o, &c, ARGS("--dry")), "'--dry'"); /* no abbreviations */
    CHECK_ERR(t_run(&o, &c, ARGS("-h")), "cmd: unknown flag '-h'");
    CHECK_ERR(t_run(&o, &c, ARGS("--name")), "cmd: flag '--name' needs a value");
    CHECK_ERR(t_run(&o, &c, ARGS("--dry-run=yes")),
              "cmd: flag '--dry-run' takes no value, got '--dry-run=yes'");
    CHECK_ERR(t_run(&o, &c, ARGS("--toggle=1")), "cmd: flag '--toggle' takes no value");
    CHECK_ERR(t_run(&o, &c, ARGS("extra")), "cmd: unexpected argument 'extra'");
    /* Flags are checked first, as with getopt_long: the bad flag after the stray word wins. */
    CHECK_ERR(t_run(&o, &c, ARGS("extra", "--bogus")), "'--bogus'");
    /* A value that looks like a flag is still the value (getopt_long did the same). */
    CHECK(t_run(&o, &c, ARGS("--name", "--dry-run")) == 0 && strcmp(o.name, "--dry-run") == 0 &&
          !o.dry);
}

static void test_positional_help_standalone(void)
{
    t_opts o = T_OPTS_INIT;
    kg_common_opts c = KG_COMMON_OPTS_INIT;
    const char *pos[2] = { NULL, NULL };
    size_t np = 99;
    bool help = true;
    CHECK(t_parse(&o, &c, true, &help, pos, 2, &np, ARGS("a", "--dry-run", "b")) == 0);
    CHECK(!help && np == 2 && strcmp(pos[0], "a") == 0 && strcmp(pos[1], "b") == 0 && o.dry);
    CHECK_ERR(t_parse(&o, &c, true, &help, pos, 2, &np, ARGS("a", "b", "c")),
              "cmd: unexpected argument 'c'");
    CHECK(t_parse(&o, &c, true, &help, pos, 2, &np, ARGS("--", "--dry-run", "-")) == 0);
    CHECK(np == 2 && strcmp(pos[0], "--dry-run") == 0 && strcmp(pos[1], "-") == 0);
    CHECK(t_parse(&o, &c, true, &help, pos, 2, &np, ARGS("-")) == 0 && np == 1);
    /* --help stops at once: a bad flag after it is never looked at. */
    CHECK(t_parse(&o, &c, true, &help, pos, 0, &np, ARGS("--help", "--bogus")) == 0 && help);
    CHECK_ERR(t_parse(&o, &c, true, &help, pos, 0, &np, ARGS("--bogus", "--help")), "'--bogus'");
    o.save = false;
    CHECK(t_parse(&o, &c, true, &help, NULL, 0, NULL, ARGS("--save")) == 0 && o.save);
    o.save = false;
    CHECK_ERR(t_parse(&o, &c, false, &help, NULL, 0, NULL, ARGS("--save")),
              "cmd: '--save' is a standalone option");
    CHECK(!o.save);
    CHECK(t_parse(&o, &c, false, &help, NULL, 0, NULL, ARGS("--internal")) == 0 && o.hidden);
}

static void test_common(void)
{
    t_opts o;
    kg_common_opts c;
    CHECK(t_run(&o, &c,
                ARGS("--filter", "^axpy/", "--seed", "42", "--device", "3", "--report",
                     "r.json")) == 0);
    CHECK(strcmp(c.filter, "^axpy/") == 0 && c.seed == 42 && c.seed_set && c.device == 3);
    CHECK(strcmp(c.report_path, "r.json") == 0 && c.diagnostic);
    CHECK(t_run(&o, &c, ARGS("--filter", "")) == 0 && c.filter && !*c.filter);
    CHECK(t_run(&o, &c, ARGS("--dry-run")) == 0 && !c.seed_set && !c.filter && c.device == 0);
    CHECK_ERR(t_run(&o, &c, ARGS("--seed", "12abc")),
              "--seed: expected a non-negative integer, got '12abc'");
    CHECK(!c.seed_set);
    CHECK_ERR(t_run(&o, &c, ARGS("--seed", "-1")), "--seed: expected a non-negative integer");
    CHECK_ERR(t_run(&o, &c, ARGS("--device", "-3")),
              "--device: expected an integer in [0, 1024], got '-3'");
    CHECK_ERR(t_run(&o, &c, ARGS("--device", "1025")), "[0, 1024]");
    CHECK_ERR(t_run(&o, &c, ARGS("--report=")), "--report: expected a file path");
    CHECK_ERR(t_run(&o, &c, ARGS("--filter")), "cmd: flag '--filter' needs a value");
}

static char *t_usage(const kg_opt_table *tables, size_t n, const char *tail, const char *desc)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f)
        return NULL;
    kg_opt_usage(f, "cmd", tail, tables, n, desc);
    fclose(f);
    return buf;
}

static bool t_lines_fit(const char *s)
{
    for (const char *l = s; *l;) {
        size_t n = strcspn(l, "\n");
        if (n > 92)
            return false;
        l += n + (l[n] == '\n');
    }
    return true;
}

static void test_usage_text(void)
{
    t_opts o = T_OPTS_INIT;
    kg_common_opts c = KG_COMMON_OPTS_INIT;
    kg_opt_table tables[] = {
        { .opts = t_opts_table,
          .n = KG_ARRAY_LEN(t_opts_table),
          .target = &o,
          .standalone_ok = false },
        { .opts = kg_common_opt_table, .n = kg_n_common_opts, .target = &c, .standalone_ok = true },
    };
    char *u = t_usage(tables, 2, "A_EXE B_EXE", "Does things.\nTwo lines.\n");
    CHECK(u != NULL);
    if (!u)
        return;
    CHECK_MSG(strncmp(u, "usage: kgate cmd [--dry-run] --name TEXT [--runs N]", 51) == 0,
              "synopsis: %s", u);
    CHECK(strstr(u, "[--mode warm|cold]") && strstr(u, "[--toggle]") &&
          strstr(u, "[--filter REGEX]"));
    CHECK(strstr(u, "[--report FILE.json]") && strstr(u, " A_EXE B_EXE\n"));
    CHECK(strstr(u, "\n                 [") != NULL); /* wrapped under the first flag */
    CHECK(strstr(u, "\n\nDoes things.\nTwo lines.\n\noptions:\n") != NULL);
    CHECK(strstr(u, "\n  --dry-run ") && strstr(u, "  print, send nothing\n"));
    CHECK(strstr(u, "\n  --budget S ") && strstr(u, "seconds per case\n"));
    CHECK(strstr(u, "\n  --seed N ") && strstr(u, "\n  --device N "));
    CHECK(!strstr(u, "--save") && !strstr(u, "--internal")); /* standalone here, hidden */
    CHECK(
        strstr(u, "\n\nexit codes: 0 pass, 1 a gate failed, 2 usage or input error, 3 no GPU,\n"));
    CHECK(t_lines_fit(u));
    /* The option list is aligned: every help text starts in one column. */
    const char *a = strstr(u, "\n  --dry-run"), *b = strstr(u, "\n  --report FILE.json");
    CHECK(a && b && strstr(a, "print") - a == strstr(b, "write") - b);
    free(u);
    tables[0].standalone_ok = true;
    u = t_usage(tables, 1, NULL, NULL);
    CHECK(u && strstr(u, "[--save]") && strstr(u, "\n  --save ") && !strstr(u, "--filter"));
    CHECK(u && strstr(u, "]\n\noptions:\n"));
    free(u);
    u = t_usage(NULL, 0, "X", NULL);
    CHECK(u && strcmp(u, "usage: kgate cmd X\n\nexit codes: 0 pass, 1 a gate failed, 2 usage or "
                         "input error, 3 no GPU,\n            4 runtime error (CUDA, cuBLAS, "
                         "CUPTI, git, HTTP)\n") == 0);
    free(u);
}

int main(void)
{
    t_init_table();
    test_values();
    test_ranges();
    test_usage_errors();
    test_positional_help_standalone();
    test_common();
    test_usage_text();
    return kg_test_done("test_opt");
}
