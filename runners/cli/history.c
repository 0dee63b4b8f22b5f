/* `kgate history append|render`: every run on record. append takes a report's bench rows
 * onto the history branch (gates/history/run_history.h); render draws them
 * (gates/history/history_render.h). */
#include <stdlib.h>
#include <string.h>
#include "cli/cli.h"
#include "core/report_keys.h"
#include "report/export.h"
#include "history/history_render.h"
#include "history/run_history.h"

typedef struct {
    const char *report, *repo, *branch, *remote, *author, *email;
    bool push;
} hist_append_opts;

static const kg_opt hist_append_table[] = {
    KG_OPT_STRING_REQUIRED_("report", "R.json", hist_append_opts, report,
                            "the report of a `kgate run` or `kgate bench` (untrusted input)"),
    KG_OPT_STRING_("repo", "DIR", hist_append_opts, repo,
                   "the repository (default: the one holding the current directory)"),
    KG_OPT_STRING_("branch", "B", hist_append_opts, branch,
                   "the history branch (default: $KGATE_HISTORY_BRANCH, else kgate-history)"),
    KG_OPT_BOOL_("push", hist_append_opts, push,
                 "push the branch (token from KGATE_GIT_TOKEN, as for the marks)"),
    KG_OPT_STRING_("remote", "REMOTE", hist_append_opts, remote,
                   "with --push: the remote (default origin)"),
    KG_OPT_STRING_("author", "NAME", hist_append_opts, author,
                   "commit author (default: $KGATE_GIT_AUTHOR_NAME, else kgate)"),
    KG_OPT_STRING_("email", "EMAIL", hist_append_opts, email,
                   "author email (default: $KGATE_GIT_AUTHOR_EMAIL, else kgate@localhost)"),
};

typedef struct {
    const char *out, *case_regex, *device, *repo, *branch, *marks_ref;
} hist_render_opts;

static const kg_opt hist_render_table[] = {
    KG_OPT_STRING_REQUIRED_("out", "DIR", hist_render_opts, out,
                            "write index.html and one SVG per (case, metric) there"),
    KG_OPT_STRING_("case", "REGEX", hist_render_opts, case_regex,
                   "only cases matching this extended regular expression"),
    KG_OPT_STRING_("device", "CLASS", hist_render_opts, device,
                   "only this device class (\"NVIDIA H200/sm_90\")"),
    KG_OPT_STRING_("repo", "DIR", hist_render_opts, repo,
                   "the repository (default: the one holding the current directory)"),
    KG_OPT_STRING_("branch", "REF", hist_render_opts, branch,
                   "the history (default: $KGATE_HISTORY_BRANCH, else kgate-history; "
                   "origin/kgate-history works)"),
    KG_OPT_STRING_("marks-ref", "REF", hist_render_opts, marks_ref,
                   "lowerings from this ref's marks log (default: the kgate-marks branch)"),
};

static const char hist_append_desc[] =
    "Append one record per bench row of the report (case, device class, metric, median, CI,\n"
    "samples, power state and k when present, commit, run id, date, mode, decision, the mark\n"
    "it was decided against) to history/<device class>.jsonl on the history branch: one\n"
    "libgit2 commit (compare-and-swap, retried); the work tree is never touched. The last 500\n"
    "records of each (device class, case, metric) are kept. A record already there (same run\n"
    "id) is not added twice.\n";
static const char hist_render_desc[] =
    "Draw the history: one trend chart per (case, metric), medians with CI whiskers, the mark\n"
    "as a step line, lowerings (from the marks branch's log) annotated, device classes in\n"
    "colours; DIR/index.html holds them all.\n";

static const char hist_exit_codes[] =
    "exit codes: 0 done, 2 usage or input error (bad flag, unreadable report or history),\n"
    "            4 runtime error (libgit2, the push, a write)\n";

static int hist_parse(const char *name, const char *desc, const kg_opt *opts, size_t n,
                      void *target, int argc, char **argv, bool *help)
{
    char command[32];
    snprintf(command, sizeof command, "history %s", name);
    kg_opt_table table = { .opts = opts, .n = n, .target = target, .standalone_ok = true };
    kg_opt_cmd cmd = { .command = command,
                       .description = desc,
                       .tables = &table,
                       .n_tables = 1,
                       .exit_codes = hist_exit_codes };
    return kg_opt_cmd_parse(&cmd, argc, argv, help, NULL, 0, NULL);
}

/* How many of `recs` the file at `ref` holds (0 when the ref or the file is absent); lines
 * that are not records count as none (the append named them). */
static int hist_held(kg_git *g, const char *ref, const char *file, const kg_history_recs *recs,
                     size_t *held)
{
    int rc = 0;
    git_oid tip, blob;
    bool exists = false;
    char *text = NULL;
    size_t len = 0;
    *held = 0;
    KG_TRY(kg_git_tip(g, ref, &tip, &exists));
    if (exists)
        KG_TRY(kg_git_file_blob_id(g, &tip, file, &blob, &exists));
    if (!exists)
        goto cleanup;
    KG_TRY(kg_git_read_file(g, &tip, file, &text, &len));
    for (size_t i = 0; i < recs->n; i++) {
        const kg_history_rec *w = &recs->v[i];
        for (const char *p = text, *end = text + len; p < end;) {
            const char *nl = memchr(p, '\n', (size_t)(end - p));
            size_t l = nl ? (size_t)(nl - p) : (size_t)(end - p);
            kg_history_rec r;
            if (l && kg_history_rec_parse(&r, p, l, file) == 0 &&
                strcmp(r.run_id, w->run_id) == 0 && strcmp(r.case_id, w->case_id) == 0 &&
                strcmp(r.metric, w->metric) == 0 && strcmp(r.device_class, w->device_class) == 0) {
                (*held)++;
                break;
            }
            p += l + 1;
        }
    }
cleanup:
    free(text);
    return rc;
}

/* Records the append did not keep and the branch lacks: older than the newest
 * KG_HISTORY_KEEP of their (class, case, metric), dropped by the cap (not "already there").
 * With a remote, its tip as fetched (refs/remotes/R/B) counts as the branch too. */
static int hist_capped(const kg_history_append_result *res, const kg_history_append_opts *o,
                       const kg_history_recs *recs, size_t *capped)
{
    int rc = 0;
    kg_git *g = NULL;
    size_t held = 0, held_remote = 0;
    char tracking[600];
    *capped = 0;
    KG_TRY(kg_git_open(&g, o->repo_dir ? o->repo_dir : "."));
    KG_TRY(hist_held(g, res->refname, res->file, recs, &held));
    if (o->remote && strncmp(res->refname, "refs/heads/", 11) == 0 &&
        snprintf(tracking, sizeof tracking, "refs/remotes/%s/%s", o->remote, res->refname + 11) <
            (int)sizeof tracking &&
        git_reference_is_valid_name(tracking))
        KG_TRY(hist_held(g, tracking, res->file, recs, &held_remote));
    if (held_remote > held)
        held = held_remote;
    *capped = recs->n > held ? recs->n - held : 0;
cleanup:
    kg_git_free(g);
    return rc;
}

static void hist_append_say(const kg_history_append_result *res, const kg_history_recs *recs,
                            const char *report, size_t capped)
{
    char cap[512] = "";
    const char *pushed = res->pushed ? " (pushed earlier commits)" : "";
    if (capped)
        snprintf(cap, sizeof cap,
                 "; %zu record(s) older than the newest %d of their (device "
                 "class, case, metric) on %s: dropped by the cap",
                 capped, KG_HISTORY_KEEP, res->refname);
    if (res->committed)
        printf("history: committed %.12s on %s: %zu record(s) in %s%s%s\n",
               git_oid_tostr_s(&res->commit), res->refname, res->added, res->file,
               res->pushed ? ", pushed" : "", cap);
    else if (capped == recs->n)
        printf("history: nothing committed from %s%s%s\n", report, cap, pushed);
    else
        printf("history: %s already holds %zu of the %zu record(s) of %s%s: nothing "
               "committed%s\n",
               res->refname, recs->n - capped, recs->n, report, cap, pushed);
}

/* "N bench rows skipped, why": a report without a GPU has SKIP rows kg_history_from_report
 * never looks at (no device: nothing to count), so they are counted here, by verdict. */
static void hist_say_unmeasured(const char *path, size_t skipped)
{
    cJSON *rep = NULL;
    size_t n = 0, n_skip = 0;
    if (kg_report_load(&rep, path) == 0) {
        const cJSON *row;
        cJSON_ArrayForEach(row, cJSON_GetObjectItemCaseSensitive(rep, KG_RK_RESULTS)) {
            const char *g = cJSON_GetStringValue(
                cJSON_GetObjectItemCaseSensitive(row, KG_RES_GATE));
            const char *v = cJSON_GetStringValue(
                cJSON_GetObjectItemCaseSensitive(row, KG_RES_VERDICT));
            if (g && strcmp(g, KG_RV_GATE_BENCH) == 0) {
                n++;
                n_skip += v && strcmp(v, "SKIP") == 0;
            }
        }
    }
    bool no_gpu = cJSON_IsString(cJSON_GetObjectItemCaseSensitive(rep, KG_RK_NO_DEVICE));
    cJSON_Delete(rep);
    if (n < skipped)
        n = skipped; /* the report could not be read again: what the loader counted */
    printf("history: %s has no measured bench row (%zu skipped%s%s): nothing recorded\n", path, n,
           n_skip ? (n_skip == n ? ", all SKIP" : ", some SKIP") : "",
           no_gpu ? ": run without a GPU" : "");
}

static int hist_append(int argc, char **argv)
{
    hist_append_opts a = { 0 };
    kg_history_append_opts o = KG_HISTORY_APPEND_OPTS_INIT;
    kg_history_append_result res;
    kg_history_recs recs = { 0 };
    size_t skipped = 0, capped = 0;
    bool help = false;
    int rc = 0;
    KG_TRY(hist_parse("append", hist_append_desc, hist_append_table,
                      KG_ARRAY_LEN(hist_append_table), &a, argc, argv, &help));
    if (help)
        goto cleanup;
    if (!a.report) {
        rc = KG_ERR(KG_EINVAL, "history append: --report R.json is required");
        goto cleanup;
    }
    if (a.remote && !a.push) {
        rc = KG_ERR(KG_EINVAL, "history append: --remote needs --push");
        goto cleanup;
    }
    o = (kg_history_append_opts){ .repo_dir = a.repo,
                                  .branch = a.branch,
                                  .remote = a.push ? (a.remote ? a.remote : "origin") : NULL,
                                  .author = a.author,
                                  .email = a.email,
                                  .max_attempts = 16 };
    KG_TRY(kg_history_from_report(&recs, a.report, &skipped));
    if (recs.n == 0) {
        hist_say_unmeasured(a.report, skipped);
        goto cleanup;
    }
    KG_TRY(kg_history_append(&res, &o, &recs));
    if (res.added < recs.n)
        KG_TRY(hist_capped(&res, &o, &recs, &capped));
    hist_append_say(&res, &recs, a.report, capped);
cleanup:
    kg_history_recs_free(&recs);
    return rc;
}

static int hist_render(int argc, char **argv)
{
    hist_render_opts a = { 0 };
    kg_history_render_result res;
    bool help = false;
    int rc = 0;
    KG_TRY(hist_parse("render", hist_render_desc, hist_render_table,
                      KG_ARRAY_LEN(hist_render_table), &a, argc, argv, &help));
    if (help)
        goto cleanup;
    if (!a.out) {
        rc = KG_ERR(KG_EINVAL, "history render: --out DIR is required");
        goto cleanup;
    }
    kg_history_render_opts o = { .repo_dir = a.repo,
                                 .branch = a.branch,
                                 .marks_ref = a.marks_ref,
                                 .out_dir = a.out,
                                 .case_regex = a.case_regex,
                                 .device = a.device };
    KG_TRY(kg_history_render(&res, &o));
    printf("history: %zu record(s), %zu chart(s) -> %s/index.html\n", res.records, res.charts,
           a.out);
cleanup:
    return rc;
}

int kg_cmd_history(kg_registry *reg, int argc, char **argv)
{
    KG_UNUSED(reg);
    static const char usage[] =
        "usage: kgate history append --report R.json [--repo DIR] [--branch B] [--push]\n"
        "       kgate history render --out DIR [--case REGEX] [--device CLASS]\n"
        "       kgate history offsets --case ID [--device CLASS] [--metric M]\n"
        "(kgate history <subcommand> --help for its options)\n";
    const char *sub = argc >= 2 ? argv[1] : NULL;
    int rc;
    if (sub && (strcmp(sub, "--help") == 0 || strcmp(sub, "help") == 0)) {
        printf("%s\n%s", usage, hist_exit_codes);
        return KG_EXIT_PASS;
    }
    if (sub && strcmp(sub, "append") == 0)
        rc = hist_append(argc - 1, argv + 1);
    else if (sub && strcmp(sub, "render") == 0)
        rc = hist_render(argc - 1, argv + 1);
    else if (sub && strcmp(sub, "offsets") == 0) /* per-GPU offsets */
        rc = kg_cmd_history_offsets(argc - 1, argv + 1);
    else {
        fputs(usage, stderr);
        rc = sub ? KG_ERR(KG_EINVAL, "history: unknown subcommand '%s'", sub)
                 : KG_ERR(KG_EINVAL, "history: expected a subcommand (append, render, offsets)");
    }
    return rc < 0 ? kg_cli_fail(rc) : KG_EXIT_PASS;
}
