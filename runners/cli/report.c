/* `kgate report --from FILE`: turn any kgate report into the files CI systems read (the
 * exporters are gates/report/). Needs no GPU. */
#include <string.h>
#include <sys/stat.h>
#include "cli/cli.h"
#include "report/export.h"

typedef struct {
    const char *from, *junit, *markdown, *html, *merge;
    bool verify; /* --verify-signature: the report's HMAC with $KGATE_REPORT_KEY, first */
} report_opts;

static const kg_opt report_table[] = {
    KG_OPT_STRING_REQUIRED_("from", "REPORT.json", report_opts, from,
                            "the kgate report to convert (from any command)"),
    KG_OPT_STRING_("junit", "OUT.xml", report_opts, junit,
                   "JUnit XML: one testcase per case x gate (classname = gate)"),
    KG_OPT_STRING_("markdown", "OUT.md", report_opts, markdown,
                   "Markdown summary (for $GITHUB_STEP_SUMMARY or a merge-request note)"),
    KG_OPT_STRING_("html", "OUT.html", report_opts, html,
                   "standalone HTML report with inline SVG charts (no network needed)"),
    KG_OPT_BOOL_("verify-signature", report_opts, verify,
                 "refuse (exit 2) unless the report is signed with $KGATE_REPORT_KEY"),
    KG_OPT_STRING_("merge", "OUT.json", report_opts, merge,
                   "merge the shard reports given after it (--shard I/N) into OUT.json"),
};

static const char report_description[] =
    "Convert a kgate report (from any command) into the files CI systems read.\n"
    "An output may be '-' for standard output. Needs no GPU. Exit codes: 0 written, 2 bad flag,\n"
    "malformed report or unwritable output path (checked before anything is written),\n"
    "4 a write failed after those checks. --verify-signature checks the report's signature\n"
    "with $KGATE_REPORT_KEY before anything else (alone: only that).\n"
    "--merge OUT.json SHARD.json...: the reports of one run's shards (--shard I/N) into one:\n"
    "each signature verified (KGATE_REPORT_KEY), overlapping, missing or mismatched shards\n"
    "refused (exit 2), the merged report signed; exit code of its merged rows, as a run's.\n";

/* An output that is the input (same file: same device and inode, whatever the path) would be
 * overwritten by what is made of it. */
static int report_not_input(const char *out, const char *from, const char *flag)
{
    struct stat so, si;
    if (stat(out, &so) == 0 && stat(from, &si) == 0 && so.st_dev == si.st_dev &&
        so.st_ino == si.st_ino)
        return KG_ERR(KG_EINVAL, "report: %s %s is the input (--from %s): refused (it would "
                                 "overwrite its own input; nothing was written)", flag, out, from);
    return 0;
}

/* Every check before anything is written: the output paths, then the report itself. */
static int report_convert(const report_opts *o)
{
    int rc = 0;
    cJSON *rep = NULL;
    const char *outs[] = { o->junit, o->markdown, o->html };
    const char *flags[] = { "--junit", "--markdown", "--html" };
    for (size_t i = 0; i < KG_ARRAY_LEN(outs); i++)
        if (outs[i] && strcmp(outs[i], "-") != 0) {
            KG_TRY(report_not_input(outs[i], o->from, flags[i]));
            KG_TRY(kg_path_check_writable(outs[i]));
        }
    KG_TRY(kg_report_load(&rep, o->from));
    if (o->verify) {
        KG_TRY(kg_report_json_verify(rep, kg_env(KG_REPORT_KEY_ENV), o->from));
        fprintf(stderr, "report: %s: signature verified\n", o->from);
    }
    if (o->junit)
        KG_TRY(kg_export_junit(rep, o->junit));
    if (o->markdown)
        KG_TRY(kg_export_markdown(rep, o->markdown));
    if (o->html)
        KG_TRY(kg_export_html(rep, o->html));
    for (size_t i = 0; i < KG_ARRAY_LEN(outs); i++)
        if (outs[i] && strcmp(outs[i], "-") != 0)
            fprintf(stderr, "wrote %s\n", outs[i]);
cleanup:
    cJSON_Delete(rep);
    return rc;
}

int kg_cmd_report(kg_registry *reg, int argc, char **argv)
{
    report_opts o = { .from = NULL };
    kg_opt_table table = { .opts = report_table, .n = KG_ARRAY_LEN(report_table), .target = &o,
                           .standalone_ok = true };
    kg_opt_cmd cmd = { .command = "report", .description = report_description,
                       .tables = &table, .n_tables = 1 };
    bool help;
    int rc = 0;
    const char *shards[KG_SHARD_MAX];
    size_t n_shards = 0;
    KG_UNUSED(reg);
    KG_TRY(kg_opt_cmd_parse(&cmd, argc, argv, &help, shards, KG_SHARD_MAX, &n_shards));
    if (help)
        goto cleanup;
    if (o.merge && (o.from || o.junit || o.markdown || o.html))
        rc = KG_ERR(KG_EINVAL, "report: --merge takes only shard reports (convert the merged "
                               "report afterwards with --from)");
    else if (!o.merge && n_shards)
        rc = KG_ERR(KG_EINVAL, "report: unexpected argument '%s' (shard reports follow --merge "
                               "OUT.json)", shards[0]);
    else if (o.merge)
        rc = kg_cli_report_merge(o.merge, shards, n_shards);
    if (rc < 0 || o.merge)
        return rc < 0 ? kg_cli_fail(rc) : rc;
    if (!o.from) {
        kg_opt_cmd_usage(stderr, &cmd);
        rc = KG_ERR(KG_EINVAL, "report: --from REPORT.json is required");
        goto cleanup;
    }
    if (!o.junit && !o.markdown && !o.html && !o.verify) {
        rc = KG_ERR(KG_EINVAL, "report: nothing to write: give --junit, --markdown or --html "
                               "(or --verify-signature)");
        goto cleanup;
    }
    KG_TRY(report_convert(&o));
cleanup:
    return rc < 0 ? kg_cli_fail(rc) : KG_EXIT_PASS;
}
