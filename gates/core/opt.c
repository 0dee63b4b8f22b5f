/* Declarative options (opt.h): one parser and one usage generator over the same tables, so a
 * flag, its value name, its check and its help line exist once (the model: libgit2's
 * src/cli/opt.c and cli_opt_usage_fprint). */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include "core/kg_core.h"
#include "core/opt.h"

#define OPT_COLS 92     /* usage lines wrap here */
#define OPT_HELP_COL 30 /* widest "--name VALUE" the option list aligns on */

const char kg_opt_exit_code_lines[] =
    "exit codes: 0 pass, 1 a gate failed, 2 usage or input error, 3 no GPU,\n"
    "            4 runtime error (CUDA, cuBLAS, CUPTI, git, HTTP)\n";

/* ---- parsing ------------------------------------------------------------------------------ */

typedef struct {
    const kg_opt *opt;
    const kg_opt_table *table;
} opt_hit;

static bool opt_is_switch(const kg_opt *o)
{
    return o->kind == KG_OPT_BOOL || (o->kind == KG_OPT_FN && (o->flags & KG_OPT_F_SWITCH));
}

/* The first table naming "--name" (name_len characters of it) takes it. */
static bool opt_find(opt_hit *hit, const kg_opt_table *tables, size_t n_tables, const char *name,
                     size_t name_len)
{
    for (size_t t = 0; t < n_tables; t++)
        for (size_t i = 0; i < tables[t].n; i++) {
            const kg_opt *o = &tables[t].opts[i];
            if (strlen(o->name) == name_len && strncmp(o->name, name, name_len) == 0) {
                *hit = (opt_hit){ .opt = o, .table = &tables[t] };
                return true;
            }
        }
    return false;
}

static int opt_parse_u64(const char *flag, const char *s, uint64_t *out)
{
    char *end = NULL;
    if (!s || !*s || strspn(s, "0123456789") != strlen(s))
        return KG_ERR(KG_EINVAL, "%s: expected a non-negative integer, got '%s'", flag, s ? s : "");
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || *end)
        return KG_ERR(KG_EINVAL, "%s: expected a non-negative integer, got '%s'", flag, s);
    *out = (uint64_t)v;
    return 0;
}

/* What a value name measures, for range messages ("expected seconds in (0, 3600]"). */
static const char *opt_unit_noun(const char *value_name)
{
    static const struct {
        const char *name, *noun;
    } units[] = {
        { "S", "seconds" },
        { "MS", "milliseconds" },
        { "US", "microseconds" },
    };
    for (size_t i = 0; value_name && i < KG_ARRAY_LEN(units); i++)
        if (strcmp(value_name, units[i].name) == 0)
            return units[i].noun;
    return "a number";
}

static int opt_parse_double(const kg_opt *o, const char *flag, const char *s, double *out)
{
    double v;
    int rc = kg_parse_double(flag, s, &v);
    if (rc < 0)
        return rc;
    if (!(o->lo == 0 && o->hi == 0) && !(v > o->lo && v <= o->hi))
        return KG_ERR(KG_EINVAL, "%s: expected %s in (%g, %g], got '%s'", flag,
                      opt_unit_noun(o->value_name), o->lo, o->hi, s);
    *out = v;
    return 0;
}

/* Check and store one value (NULL for a switch) into the table's target. */
static int opt_store(const opt_hit *h, const char *command, const char *value)
{
    const kg_opt *o = h->opt;
    char *field = (char *)h->table->target + o->offset;
    char flag[128];
    snprintf(flag, sizeof flag, "--%s", o->name);
    switch (o->kind) {
    case KG_OPT_BOOL: *(bool *)field = true; return 0;
    case KG_OPT_STRING:
        if (!*value)
            return KG_ERR(KG_EINVAL, "%s: flag '%s' needs a value", command, flag);
        *(const char **)field = value;
        return 0;
    case KG_OPT_INT: {
        bool whole = o->lo == 0 && o->hi == 0;
        return kg_parse_int(flag, value, whole ? INT_MIN : (int)o->lo, whole ? INT_MAX : (int)o->hi,
                            (int *)field);
    }
    case KG_OPT_U64: return opt_parse_u64(flag, value, (uint64_t *)field);
    case KG_OPT_DOUBLE: return opt_parse_double(o, flag, value, (double *)field);
    case KG_OPT_FN: {
        int rc = o->fn(h->table->target, value);
        return rc < 0 ? rc : 0;
    }
    }
    return KG_ERR(KG_EINTERNAL, "%s: option '%s' has an unknown kind %d", command, flag,
                  (int)o->kind);
}

/* A usage error names what is wrong with the flag: unknown, missing its value, or a switch
 * given one. */
static int opt_unknown(bool *usage_err, const char *command, const char *arg)
{
    *usage_err = true;
    return KG_ERR(KG_EINVAL, "%s: unknown flag '%s'", command, arg);
}

static int opt_no_value(bool *usage_err, const char *command, const char *name)
{
    *usage_err = true;
    return KG_ERR(KG_EINVAL, "%s: flag '--%s' needs a value", command, name);
}

/* One "--name[=VALUE]" at argv[*i]; consumes the next argument as its value when needed. */
static int opt_one(const kg_opt_table *tables, size_t n_tables, const char *command, int argc,
                   char **argv, int *i, bool *usage_err)
{
    const char *arg = argv[*i], *name = arg + 2, *eq = strchr(name, '=');
    size_t len = eq ? (size_t)(eq - name) : strlen(name);
    opt_hit h;
    if (!opt_find(&h, tables, n_tables, name, len))
        return opt_unknown(usage_err, command, arg);
    if (!h.table->standalone_ok && (h.opt->flags & KG_OPT_F_STANDALONE)) {
        *usage_err = true;
        return KG_ERR(KG_EINVAL,
                      "%s: '--%s' is a standalone option: only its gate's own "
                      "command takes it",
                      command, h.opt->name);
    }
    if (opt_is_switch(h.opt)) {
        if (!eq)
            return opt_store(&h, command, NULL);
        *usage_err = true;
        return KG_ERR(KG_EINVAL, "%s: flag '--%s' takes no value, got '%s'", command, h.opt->name,
                      arg);
    }
    if (eq)
        return opt_store(&h, command, eq + 1);
    if (*i + 1 >= argc)
        return opt_no_value(usage_err, command, h.opt->name);
    return opt_store(&h, command, argv[++*i]);
}

/* The parser behind kg_opt_parse; *usage_err tells a usage error from a bad value. An excess
 * positional is reported after every flag was seen, as getopt_long's callers did. */
static int opt_parse(const kg_opt_table *tables, size_t n_tables, const char *command, int argc,
                     char **argv, bool *help, const char **positional, size_t max_positional,
                     size_t *n_positional, bool *usage_err)
{
    int rc = 0;
    size_t np = 0;
    const char *excess = NULL;
    bool only_positional = false;
    *help = false;
    *usage_err = false;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        bool is_flag = !only_positional && a[0] == '-' && a[1] != '\0';
        if (!only_positional && strcmp(a, "--") == 0) {
            only_positional = true;
        } else if (is_flag && strcmp(a, "--help") == 0) {
            *help = true;
            goto cleanup;
        } else if (is_flag && a[1] == '-') {
            KG_TRY(opt_one(tables, n_tables, command, argc, argv, &i, usage_err));
        } else if (is_flag) { /* no short options */
            rc = opt_unknown(usage_err, command, a);
            goto cleanup;
        } else if (positional && np < max_positional) {
            positional[np++] = a;
        } else if (!excess) {
            excess = a;
        }
    }
    if (excess) {
        *usage_err = true;
        rc = KG_ERR(KG_EINVAL, "%s: unexpected argument '%s'", command, excess);
    }
cleanup:
    if (n_positional)
        *n_positional = np;
    return rc;
}

int kg_opt_parse(const kg_opt_table *tables, size_t n_tables, const char *command, int argc,
                 char **argv, bool *help, const char **positional, size_t max_positional,
                 size_t *n_positional)
{
    bool usage_err;
    return opt_parse(tables, n_tables, command, argc, argv, help, positional, max_positional,
                     n_positional, &usage_err);
}

int kg_opt_cmd_parse(const kg_opt_cmd *cmd, int argc, char **argv, bool *help,
                     const char **positional, size_t max_positional, size_t *n_positional)
{
    bool usage_err;
    int rc = opt_parse(cmd->tables, cmd->n_tables, cmd->command, argc, argv, help, positional,
                       max_positional, n_positional, &usage_err);
    if (rc == 0 && *help)
        kg_opt_cmd_usage(stdout, cmd);
    else if (rc < 0 && usage_err) {
        /* One line under the error (kg_cli_fail), not the whole help scrolling it away. */
        char line[256];
        snprintf(line, sizeof line, "usage: kgate %s [options]; kgate %s --help for more",
                 cmd->command, cmd->command);
        kg_cli_usage_hint(line);
    }
    return rc;
}

/* ---- usage -------------------------------------------------------------------------------- */

static bool opt_visible(const kg_opt_table *t, const kg_opt *o)
{
    return !(o->flags & KG_OPT_F_HIDDEN) && (t->standalone_ok || !(o->flags & KG_OPT_F_STANDALONE));
}

/* "--name VALUE" (or "--name" for a switch). */
static void opt_token(char *buf, size_t n, const kg_opt *o)
{
    if (o->value_name && !opt_is_switch(o))
        snprintf(buf, n, "--%s %s", o->name, o->value_name);
    else
        snprintf(buf, n, "--%s", o->name);
}

/* Put one word at *col (after a space unless the line starts at `indent`), starting a new line
 * indented to `indent` when it would pass OPT_COLS. */
static void opt_word(FILE *out, size_t *col, size_t indent, const char *w)
{
    size_t len = strlen(w);
    if (*col > indent && *col + 1 + len > OPT_COLS) {
        fprintf(out, "\n%*s", (int)indent, "");
        *col = indent;
    } else if (*col != indent) {
        fputc(' ', out);
        (*col)++;
    }
    fputs(w, out);
    *col += len;
}

void kg_opt_synopsis(FILE *out, const char *lead, const char *command, const char *synopsis_tail,
                     const kg_opt_table *tables, size_t n_tables)
{
    char w[256];
    fprintf(out, "%skgate %s", lead, command);
    /* Continuation lines start under the first flag. */
    size_t col = strlen(lead) + strlen("kgate ") + strlen(command), indent = col + 1;
    for (size_t t = 0; t < n_tables; t++)
        for (size_t i = 0; i < tables[t].n; i++) {
            const kg_opt *o = &tables[t].opts[i];
            if (!opt_visible(&tables[t], o))
                continue;
            char tok[200];
            opt_token(tok, sizeof tok, o);
            if (o->flags & KG_OPT_F_REQUIRED)
                snprintf(w, sizeof w, "%s", tok);
            else
                snprintf(w, sizeof w, "[%s]", tok);
            opt_word(out, &col, indent, w);
        }
    if (synopsis_tail && *synopsis_tail)
        opt_word(out, &col, indent, synopsis_tail);
    fputc('\n', out);
}

/* The help text of one option, word-wrapped under column `indent`. */
static void opt_help_text(FILE *out, size_t col, size_t indent, const char *help)
{
    char word[256];
    const char *p = help ? help : "";
    while (*p) {
        size_t n = strcspn(p, " ");
        snprintf(word, sizeof word, "%.*s", (int)n, p);
        if (n)
            opt_word(out, &col, indent, word);
        p += n;
        p += strspn(p, " ");
    }
    fputc('\n', out);
}

static void opt_list(FILE *out, const kg_opt_table *tables, size_t n_tables)
{
    size_t width = 0;
    char tok[200];
    for (size_t t = 0; t < n_tables; t++)
        for (size_t i = 0; i < tables[t].n; i++)
            if (opt_visible(&tables[t], &tables[t].opts[i])) {
                opt_token(tok, sizeof tok, &tables[t].opts[i]);
                size_t l = strlen(tok);
                width = l > width && l <= OPT_HELP_COL ? l : width;
            }
    size_t indent = 2 + width + 2;
    fputs("options:\n", out);
    for (size_t t = 0; t < n_tables; t++)
        for (size_t i = 0; i < tables[t].n; i++) {
            const kg_opt *o = &tables[t].opts[i];
            if (!opt_visible(&tables[t], o))
                continue;
            opt_token(tok, sizeof tok, o);
            if (strlen(tok) > width) { /* too wide to align: its help goes on the next line */
                fprintf(out, "  %s\n%*s", tok, (int)indent, "");
            } else {
                fprintf(out, "  %-*s  ", (int)width, tok);
            }
            opt_help_text(out, indent, indent, o->help);
        }
}

static void opt_usage(FILE *out, const char *command, const char *synopsis_tail,
                      const kg_opt_table *tables, size_t n_tables, const char *description,
                      const char *exit_codes)
{
    kg_opt_synopsis(out, "usage: ", command, synopsis_tail, tables, n_tables);
    if (description && *description) {
        size_t n = strlen(description);
        fprintf(out, "\n%s%s", description, description[n - 1] == '\n' ? "" : "\n");
    }
    bool any = false;
    for (size_t t = 0; t < n_tables && !any; t++)
        for (size_t i = 0; i < tables[t].n && !any; i++)
            any = opt_visible(&tables[t], &tables[t].opts[i]);
    if (any) {
        fputc('\n', out);
        opt_list(out, tables, n_tables);
    }
    fprintf(out, "\n%s", exit_codes ? exit_codes : kg_opt_exit_code_lines);
}

void kg_opt_usage(FILE *out, const char *command, const char *synopsis_tail,
                  const kg_opt_table *tables, size_t n_tables, const char *description)
{
    opt_usage(out, command, synopsis_tail, tables, n_tables, description, NULL);
}

void kg_opt_cmd_usage(FILE *out, const kg_opt_cmd *cmd)
{
    opt_usage(out, cmd->command, cmd->synopsis_tail, cmd->tables, cmd->n_tables, cmd->description,
              cmd->exit_codes);
}

/* ---- the common options ------------------------------------------------------------------- */

/* Any string, "" included: kg_common_opt took it as given (an empty regex selects all). */
static int opt_common_filter(void *opts, const char *v)
{
    ((kg_common_opts *)opts)->filter = v;
    return 0;
}

static int opt_common_seed(void *opts, const char *v)
{
    kg_common_opts *o = opts;
    int rc = kg_parse_u64("--seed", v, &o->seed);
    if (rc == 0)
        o->seed_set = true;
    return rc;
}

int kg_devices_parse(const char *v, int *devices, size_t *n)
{
    const char *p = v;
    *n = 0;
    while (p && *p) {
        char *e = NULL;
        long d = (*p >= '0' && *p <= '9') ? strtol(p, &e, 10) : -1;
        if (d < 0 || d >= 1024 || !e || (*e && *e != ',') || *n == KG_DEVICES_MAX)
            return KG_ERR(KG_EINVAL, "--devices: expected ordinals 0,1,... (at most %d), got '%s'",
                          KG_DEVICES_MAX, v);
        devices[(*n)++] = (int)d;
        p = *e ? e + 1 : e;
        if (*e && !*p)
            return KG_ERR(KG_EINVAL, "--devices: a trailing ',' in '%s'", v);
    }
    if (*n == 0)
        return KG_ERR(KG_EINVAL, "--devices: expected ordinals 0,1,..., got '%s'", v ? v : "");
    return 0;
}

static int opt_common_device(void *opts, const char *v)
{
    kg_common_opts *o = opts;
    int rc = kg_parse_int("--device", v, 0, 1024, &o->device);
    if (rc == 0)
        o->device_set = true;
    return rc;
}

/* --devices: the first listed GPU is the run's device, whatever the flags' order (kg_run_begin
 * refuses a --device that is another). */
static int opt_common_devices(void *opts, const char *v)
{
    kg_common_opts *o = opts;
    int rc = kg_devices_parse(v, o->devices, &o->n_devices);
    if (rc == 0 && !o->device_set)
        o->device = o->devices[0];
    return rc;
}

static int opt_common_report(void *opts, const char *v)
{
    if (!v || !*v)
        return KG_ERR(KG_EINVAL, "--report: expected a file path");
    ((kg_common_opts *)opts)->report_path = v;
    return 0;
}

static int opt_common_shard(void *opts, const char *v)
{
    kg_common_opts *o = opts;
    return kg_shard_parse(v, &o->shard_index, &o->shard_count);
}

/* Decided now, in the process that owns the terminal, before any worker is forked. */
static int opt_common_color(void *opts, const char *v)
{
    KG_UNUSED(opts);
    return kg_color_set("--color", v);
}

const kg_opt kg_common_opt_table[] = {
    KG_OPT_FN_("filter", "REGEX", opt_common_filter, 0,
               "select the cases whose id or a tag matches (POSIX extended regex; default: "
               "all)"),
    KG_OPT_FN_("seed", "N", opt_common_seed, 0,
               "seed of the random inputs (default: a fresh one, printed)"),
    KG_OPT_FN_("device", "N", opt_common_device, 0, "CUDA device ordinal (default 0)"),
    KG_OPT_FN_("devices", "N,M,...", opt_common_devices, 0,
               "GPUs of this host, one worker each: parity, hotpath and counters run different "
               "cases at once; the first is the run's device (bench, preflight, marks)"),
    KG_OPT_FN_("report", "FILE.json", opt_common_report, 0,
               "write the JSON report there (atomically; '-': standard output)"),
    KG_OPT_STRING_("exclude", "REGEX", kg_common_opts, exclude,
                   "leave out the cases whose id matches (after --filter)"),
    KG_OPT_DOUBLE_("case-timeout", "S", kg_common_opts, case_timeout_s, 0, 86400,
                   "the watchdog's limit for one case (default: 120 s, bench 60 s + 20 x budget)"),
    KG_OPT_STRING_("tag", "T[,U]", kg_common_opts, tag,
                   "select only the cases with one of these tags (kg_case_desc.tags)"),
    KG_OPT_FN_("shard", "I/N", opt_common_shard, 0,
               "run part I of N of the selection (needs --seed; merge: kgate report --merge)"),
    KG_OPT_FN_("color", "WHEN", opt_common_color, 0,
               "verdicts in colour: auto (default: on a terminal, unless NO_COLOR is set), "
               "always, never"),
};
const size_t kg_n_common_opts = KG_ARRAY_LEN(kg_common_opt_table);
