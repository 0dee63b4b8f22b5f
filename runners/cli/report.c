/* `kgate report --from FILE`: turn any kgate report into the files CI systems read (the
 * exporters are gates/report/). Needs no GPU. */
#include <string.h>
#include "cli/cli.h"
#include "cli/cmd_opts.h"
#include "report/export.h"

/* The exporters, one row each: its flag, the option's value name and help, and the writer.
 * The options and the usage, the output checks, the calls and the messages that name the
 * flags are all made from this table: a new exporter is one row (and its writer). */
typedef struct {
    const char *flag; /* "--junit": the option is flag + 2 */
    const char *value_name, *help;
    int (*fn)(const cJSON *report, const char *path);
} report_exporter;

static const report_exporter report_exporters[] = {
    { "--junit", "OUT.xml", "JUnit XML: one testcase per case x gate (classname = gate)",
      kg_export_junit },
    { "--markdown", "OUT.md", "Markdown summary (for $GITHUB_STEP_SUMMARY or a merge-request note)",
      kg_export_markdown },
    { "--html", "OUT.html", "standalone HTML report with inline SVG charts (no network needed)",
      kg_export_html },
};
#define REPORT_N_EXPORTERS KG_ARRAY_LEN(report_exporters)

typedef struct {
    const char *from, *merge;
    const char *out[REPORT_N_EXPORTERS]; /* report_exporters[i]'s path, or NULL */
    bool verify; /* --verify-signature: the report's HMAC with $KGATE_REPORT_KEY, first */
} report_opts;

static const kg_opt report_head[] = {
    KG_OPT_STRING_REQUIRED_("from", "REPORT.json", report_opts, from,
                            "the kgate report to convert (from any command)"),
};
static const kg_opt report_tail[] = {
    KG_OPT_BOOL_("verify-signature", report_opts, verify,
                 "refuse (exit 2) unless the report is signed with $KGATE_REPORT_KEY"),
    KG_OPT_STRING_("merge", "OUT.json", report_opts, merge,
                   "merge the shard reports given after it (--shard I/N) into OUT.json"),
};

/* The exporters' options (the usage lists them between --from and the rest). */
static void report_exporter_opts(kg_opt *opts)
{
    for (size_t i = 0; i < REPORT_N_EXPORTERS; i++)
        opts[i] = (kg_opt){ .name = report_exporters[i].flag + 2,
                            .value_name = report_exporters[i].value_name,
                            .kind = KG_OPT_STRING,
                            .offset = offsetof(report_opts, out) + i * sizeof(const char *),
                            .help = report_exporters[i].help };
}

/* The outputs asked for (path NULL where not). */
static void report_outs(kg_cmd_out *outs, const report_opts *o)
{
    for (size_t i = 0; i < REPORT_N_EXPORTERS; i++)
        outs[i] = (kg_cmd_out){ .flag = report_exporters[i].flag, .path = o->out[i] };
}

/* "--junit, --markdown or --html". */
static const char *report_flag_list(char *buf, size_t n)
{
    size_t at = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < REPORT_N_EXPORTERS && at < n; i++)
        at += (size_t)snprintf(buf + at, n - at, "%s%s",
                               !i                           ? ""
                               : i + 1 < REPORT_N_EXPORTERS ? ", "
                                                            : " or ",
                               report_exporters[i].flag);
    return buf;
}

static bool report_any_out(const report_opts *o)
{
    for (size_t i = 0; i < REPORT_N_EXPORTERS; i++)
        if (o->out[i])
            return true;
    return false;
}

static const char report_description[] =
    "Convert a kgate report (from any command) into the files CI systems read.\n"
    "An output may be '-' for standard output (one of them: a run has one). Needs no GPU.\n"
    "--verify-signature checks the report's signature with $KGATE_REPORT_KEY before anything\n"
    "else (alone: only that). --merge OUT.json SHARD.json...: the reports of one run's shards\n"
    "(--shard I/N) into one: each signature verified (KGATE_REPORT_KEY), overlapping, missing or\n"
    "mismatched shards refused (exit 2), the merged report signed; exit code of its merged\n"
    "rows, as a run's.\n";
static const char report_exit_codes[] =
    "exit codes: 0 written, 2 usage or input error (bad flag, malformed report, unwritable\n"
    "            output path: checked before anything is written), 4 a write failed after that\n";

/* Standard output holds one document: two outputs given '-' would run together there. */
static int report_one_stdout(const kg_cmd_out *outs, size_t n)
{
    const char *first = kg_cmd_opts_stdout(outs, n);
    for (size_t i = 0; first && i < n; i++)
        if (outs[i].path && strcmp(outs[i].path, "-") == 0 && outs[i].flag != first)
            return KG_ERR(KG_EINVAL,
                          "report: %s - and %s -: only one output can go to standard "
                          "output; give the other a file (nothing was written)",
                          first, outs[i].flag);
    return 0;
}

/* Every check before anything is written: the output paths, then the report itself. */
static int report_convert(const report_opts *o)
{
    int rc = 0;
    cJSON *rep = NULL;
    kg_cmd_out outs[REPORT_N_EXPORTERS];
    size_t n = REPORT_N_EXPORTERS;
    report_outs(outs, o);
    KG_TRY(report_one_stdout(outs, n));
    KG_TRY(kg_cmd_opts_outputs_check("report", outs, n, o->from));
    KG_TRY(kg_report_load(&rep, o->from));
    if (o->verify) {
        KG_TRY(kg_report_json_verify(rep, kg_env(KG_REPORT_KEY_ENV), o->from));
        fprintf(stderr, "report: %s: signature verified\n", o->from);
    }
    for (size_t i = 0; i < REPORT_N_EXPORTERS; i++)
        if (o->out[i])
            KG_TRY(report_exporters[i].fn(rep, o->out[i]));
    kg_cmd_opts_outputs_wrote(outs, n);
cleanup:
    cJSON_Delete(rep);
    return rc;
}

/* --merge OUT.json SHARD...: only shard reports; without it, no positional argument. */
static int report_merge(const report_opts *o, const char *const *shards, size_t n_shards)
{
    if (o->merge && (o->from || report_any_out(o)))
        return KG_ERR(KG_EINVAL, "report: --merge takes only shard reports (convert the merged "
                                 "report afterwards with --from)");
    if (!o->merge && n_shards)
        return KG_ERR(KG_EINVAL,
                      "report: unexpected argument '%s' (shard reports follow "
                      "--merge OUT.json)",
                      shards[0]);
    return o->merge ? kg_cli_report_merge(o->merge, shards, n_shards) : 0;
}

int kg_cmd_report(kg_registry *reg, int argc, char **argv)
{
    report_opts o = { .from = NULL };
    kg_opt exporters[REPORT_N_EXPORTERS];
    report_exporter_opts(exporters);
    kg_opt_table tables[] = { KG_CMD_OPTS_TABLE(report_head, &o), KG_CMD_OPTS_TABLE(exporters, &o),
                              KG_CMD_OPTS_TABLE(report_tail, &o) };
    kg_opt_cmd cmd = { .command = "report",
                       .description = report_description,
                       .tables = tables,
                       .n_tables = KG_ARRAY_LEN(tables),
                       .exit_codes = report_exit_codes };
    int rc = 0;
    char list[128];
    const char *shards[KG_SHARD_MAX];
    size_t n_shards = 0;
    KG_UNUSED(reg);
    if ((rc = kg_cmd_opts_parse(&cmd, argc, argv, shards, KG_SHARD_MAX, &n_shards)) != 0)
        goto cleanup; /* --help (1) or a usage error */
    rc = report_merge(&o, shards, n_shards);
    if (rc < 0 || o.merge)
        return rc < 0 ? kg_cli_fail(rc) : rc;
    if (!o.from) {
        rc = kg_cmd_opts_required(&cmd, "--from REPORT.json");
        goto cleanup;
    }
    if (!report_any_out(&o) && !o.verify) {
        rc = KG_ERR(KG_EINVAL, "report: nothing to write: give %s (or --verify-signature)",
                    report_flag_list(list, sizeof list));
        goto cleanup;
    }
    KG_TRY(report_convert(&o));
cleanup:
    return rc < 0 ? kg_cli_fail(rc) : KG_EXIT_PASS;
}
