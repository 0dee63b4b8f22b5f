/* `kgate compare A.json B.json`: two kgate reports (from any command) matched by gate and case,
 * for diagnostic experiments: verdict changes, bench medians against both runs' noise, parity
 * error changes, cases only in one (gates/report/compare.c). Needs no GPU. */
#include <string.h>
#include "cli/cli.h"
#include "cli/cmd_opts.h"
#include "report/compare.h"

typedef struct {
    const char *json, *markdown;
} compare_opts;

static const kg_opt compare_table[] = {
    KG_OPT_STRING_("json", "OUT.json", compare_opts, json,
                   "the comparison as JSON (every matched case; schema kgate-compare/1)"),
    KG_OPT_STRING_("markdown", "OUT.md", compare_opts, markdown,
                   "the comparison as Markdown (for $GITHUB_STEP_SUMMARY or a note)"),
};

static const char compare_description[] =
    "Compare two kgate reports (from any command) for a diagnostic experiment: results are\n"
    "matched by gate and case; per gate a table of what changed (verdict A -> B; bench median\n"
    "A us, B us, change %, 'beyond' when |B - A| exceeds both runs' CI half-widths added;\n"
    "parity max_abs and rel_l2), cases only in A or only in B, and a summary line. Warns when\n"
    "the device classes or the bench modes differ. An output may be '-' for standard output.\n"
    "Certifies nothing: the production gate is `run --production` against the marks.\n";
static const char compare_exit_codes[] =
    "exit codes: 0 compared (changes or not), 2 usage or input error (bad flag, unreadable or\n"
    "            malformed report, unwritable output path: checked before anything is\n"
    "            written), 4 a write failed after that\n";

static int compare_files(const compare_opts *o, const char *fa, const char *fb)
{
    int rc = 0;
    cJSON *ra = NULL, *rb = NULL;
    kg_compare c = { 0 };
    kg_sbuf out = KG_SBUF_INIT;
    const kg_cmd_out outs[] = { { "--json", o->json }, { "--markdown", o->markdown } };
    KG_TRY(kg_cmd_opts_outputs_check("compare", outs, KG_ARRAY_LEN(outs), NULL));
    KG_TRY(kg_report_load(&ra, fa));
    KG_TRY(kg_report_load(&rb, fb));
    KG_TRY(kg_compare_build(&c, ra, fa, rb, fb));
    for (size_t i = 0; i < c.n_warnings; i++)
        fprintf(stderr, "kgate compare: warning: %s\n", c.warning[i]);
    if (!kg_cmd_opts_stdout(outs, KG_ARRAY_LEN(outs))) { /* the text, unless one of them is */
        kg_compare_text(&c, &out);
        KG_TRY(kg_sbuf_write(&out, "-"));
    }
    if (o->json)
        KG_TRY(kg_compare_write_json(&c, o->json));
    if (o->markdown)
        KG_TRY(kg_compare_write_markdown(&c, o->markdown));
    kg_cmd_opts_outputs_wrote(outs, KG_ARRAY_LEN(outs));
cleanup:
    kg_sbuf_free(&out);
    kg_compare_free(&c);
    cJSON_Delete(rb);
    cJSON_Delete(ra);
    return rc;
}

int kg_cmd_compare(kg_registry *reg, int argc, char **argv)
{
    compare_opts o = { .json = NULL };
    kg_opt_table table = KG_CMD_OPTS_TABLE(compare_table, &o);
    kg_opt_cmd cmd = { .command = "compare",
                       .synopsis_tail = "A.json B.json",
                       .description = compare_description,
                       .tables = &table,
                       .n_tables = 1,
                       .exit_codes = compare_exit_codes };
    const char *pos[3] = { NULL };
    size_t npos = 0;
    int rc = 0;
    KG_UNUSED(reg);
    if ((rc = kg_cmd_opts_parse(&cmd, argc, argv, pos, 3, &npos)) != 0)
        goto cleanup; /* --help (1) or a usage error */
    if (npos != 2) {
        kg_opt_cmd_usage(stderr, &cmd);
        rc = KG_ERR(KG_EINVAL,
                    "compare: expected two reports A.json B.json, got %zu "
                    "argument(s)",
                    npos);
        goto cleanup;
    }
    if (o.json && o.markdown && strcmp(o.json, "-") == 0 && strcmp(o.markdown, "-") == 0) {
        rc = KG_ERR(KG_EINVAL, "compare: --json and --markdown cannot both be '-'");
        goto cleanup;
    }
    KG_TRY(compare_files(&o, pos[0], pos[1]));
cleanup:
    return rc < 0 ? kg_cli_fail(rc) : KG_EXIT_PASS;
}
