/* `kgate run --production|--diagnostic`: every gate over the selected cases into one report; in
 * production, and only when every gate passed for every case on a GPU, the marks of IMPROVED
 * and NO_MARK cases advance through one libgit2 commit. `kgate marks advance --from-report`
 * drives the same production path from a recorded report (CPU tests, release managers). */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "marks/advance.h"
#include "marks/marks_git.h"

/* The gates `run` runs, in order. A gate joins this table once its kg_gate_* exists. */
typedef struct {
    const char *name;
    kg_gate_fn fn;
} run_gate;

static const run_gate run_gates[] = {
    { "parity", kg_gate_parity },
    { "preflight", kg_gate_preflight },
    { "hotpath", kg_gate_hotpath },
    { "bench", kg_gate_bench },
};

enum {
    OPT_PRODUCTION = 0x2000,
    OPT_DIAGNOSTIC,
    OPT_MARKS,
    OPT_MARKS_REF,
    OPT_PUSH,
    OPT_AUTHOR,
    OPT_EMAIL,
    OPT_FROM_REPORT,
    OPT_QUIET,
    OPT_SKIP_SELFTEST,
    OPT_DEFECTS
};

#define MARKS_GIT_LONGOPTS                                          \
    { "marks", required_argument, NULL, OPT_MARKS },                \
    { "marks-ref", required_argument, NULL, OPT_MARKS_REF },        \
    { "push", required_argument, NULL, OPT_PUSH },                  \
    { "author", required_argument, NULL, OPT_AUTHOR },              \
    { "email", required_argument, NULL, OPT_EMAIL }

/* Handle a marks/git option; 1 handled, 0 not ours, <0 bad value. */
static int marks_git_opt(kg_marks_git_opts *o, int c, const char *arg)
{
    const char **dst = NULL;
    const char *flag = NULL;
    switch (c) {
    case OPT_MARKS: dst = &o->marks_path; flag = "--marks"; break;
    case OPT_MARKS_REF: dst = &o->marks_ref; flag = "--marks-ref"; break;
    case OPT_PUSH: dst = &o->push_remote; flag = "--push"; break;
    case OPT_AUTHOR: dst = &o->author; flag = "--author"; break;
    case OPT_EMAIL: dst = &o->email; flag = "--email"; break;
    default: return 0;
    }
    if (!arg || !*arg)
        return KG_ERR(KG_EINVAL, "%s: expected a value", flag);
    *dst = arg;
    return 1;
}

/* ---- the production step, shared by `run --production` and `marks advance` ---------------- */

typedef struct {
    const kg_advance_input *in;
    kg_mark_moves moves;
} adv_ud;

static int adv_update(kg_marks *m, void *ud, char **message)
{
    adv_ud *u = ud;
    int rc = kg_advance_apply(m, u->in, &u->moves);
    if (rc < 0 || u->moves.n == 0)
        return rc;
    KG_TRY(kg_advance_message(message, u->in, &u->moves));
    rc = (int)u->moves.n;
cleanup:
    return rc;
}

static cJSON *moves_json(const kg_mark_moves *mv)
{
    cJSON *a = cJSON_CreateArray();
    for (size_t i = 0; a && i < mv->n; i++) {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "case", mv->v[i].case_id);
        cJSON_AddStringToObject(o, "device_class", mv->v[i].device_class);
        cJSON_AddStringToObject(o, "metric", mv->v[i].metric);
        if (mv->v[i].had_old)
            cJSON_AddNumberToObject(o, "old", mv->v[i].old_value);
        else
            cJSON_AddNullToObject(o, "old");
        cJSON_AddNumberToObject(o, "new", mv->v[i].new_value);
        cJSON_AddNumberToObject(o, "band_rel", mv->v[i].band_rel);
        cJSON_AddItemToArray(a, o);
    }
    return a;
}

/* Advance the marks from a passing certifying report; *summary (may be NULL) receives what
 * happened for the report. */
static int production_advance(kg_marks_target *t, const kg_marks_git_opts *o,
                              const kg_advance_input *in, cJSON **summary)
{
    int rc = 0;
    adv_ud u = { in, { NULL, 0 } };
    kg_marks_commit_result res;
    KG_TRY(kg_marks_commit_update(t, o, adv_update, &u, &res));
    if (summary && (*summary = cJSON_CreateObject())) {
        cJSON_AddBoolToObject(*summary, "committed", res.committed);
        cJSON_AddStringToObject(*summary, "ref", t->refname);
        cJSON_AddStringToObject(*summary, "file", t->relpath);
        if (res.committed)
            cJSON_AddStringToObject(*summary, "commit", git_oid_tostr_s(&res.commit));
        cJSON_AddItemToObject(*summary, "moved", moves_json(res.committed ? &u.moves
                                                                         : &(kg_mark_moves){ 0 }));
        cJSON_AddBoolToObject(*summary, "pushed", res.pushed);
        cJSON_AddNumberToObject(*summary, "attempts", res.attempts);
    }
    if (!res.committed) {
        printf("marks: no mark moved (%d bench result(s), %d SAME, %zu candidate(s) not better "
               "than the marks at %s): nothing committed\n", in->n_bench, in->n_same,
               in->n_cands, t->refname);
        goto cleanup;
    }
    printf("marks: committed %.12s on %s (%zu mark(s) moved, %d attempt(s))%s\n",
           git_oid_tostr_s(&res.commit), t->refname, u.moves.n, res.attempts,
           res.pushed ? ", pushed" : "");
    for (size_t i = 0; i < u.moves.n; i++) {
        const kg_mark_move *m = &u.moves.v[i];
        char old[48] = "(none)";
        if (m->had_old)
            snprintf(old, sizeof old, "%.6g", m->old_value);
        printf("  %s [%s] %s: %s -> %.6g (band +-%.2f%%)\n", m->case_id, m->device_class,
               m->metric, old, m->new_value, 100.0 * m->band_rel);
    }
    if (o->push_remote && res.pushed) {
        char shown[1024];
        printf("marks: pushed %s to %s\n", t->refname,
               kg_git_remote_shown(shown, sizeof shown, o->push_remote));
    }
cleanup:
    kg_mark_moves_free(&u.moves);
    return rc;
}

/* ---- kgate run ----------------------------------------------------------------------------- */

static const char run_usage[] =
    "usage: kgate run --production|--diagnostic [--filter REGEX] [--seed N] [--device N]\n"
    "                 [--report FILE.json] [--marks FILE] [--marks-ref REF] [--push REMOTE]\n"
    "                 [--author NAME --email EMAIL] [--quiet] [--defects PATH]\n"
    "                 [--skip-selftest]\n"
    "\n"
    "Run every gate (parity, preflight, hot-path, bench) over the selected cases into one\n"
    "report. --diagnostic (the default) is non-certifying: it never writes the marks file,\n"
    "never commits, never pushes. --production commits, with libgit2, the advanced marks of\n"
    "IMPROVED and NO_MARK cases on the checked-out branch (or --marks-ref), if and only if every\n"
    "gate passed for every case on a GPU (no FAIL, ERROR or SKIP). A mark advances to the\n"
    "conservative edge of the run's interval and never goes down. --push REMOTE pushes the\n"
    "commit (token from KGATE_GIT_TOKEN). Marks file: --marks, default\n"
    "baselines/high_water.json at the root of the current repository.\n"
    "Author/committer: --author/--email, else KGATE_GIT_AUTHOR_NAME/EMAIL, else\n"
    "\"kgate <kgate@localhost>\".\n"
    "Before the gates, `kgate selftest` runs (the defect runner from --defects, $KGATE_DEFECTS or\n"
    "kgate-defects beside this runner): in production it is mandatory and any escaped defect or\n"
    "false alarm blocks the commit; a diagnostic run may --skip-selftest.\n"
    "\n"
    "exit codes: 0 all passed (and marks committed if any moved), 1 a gate failed,\n"
    "            2 usage or input error or refusal, 3 no GPU, 4 runtime error\n";

static int diag_marks_path(char *buf, size_t n, const char *given)
{
    kg_git *g = NULL;
    if (given) {
        snprintf(buf, n, "%s", given);
        return 0;
    }
    /* Outside a repository a diagnostic run still works: the path relative to the cwd. */
    if (kg_git_open(&g, ".") == 0 && g->workdir)
        snprintf(buf, n, "%s%s", g->workdir, KG_MARKS_DEFAULT_PATH);
    else
        snprintf(buf, n, "%s", KG_MARKS_DEFAULT_PATH);
    kg_git_free(g);
    return 0;
}

int kg_cmd_run(kg_registry *reg, int argc, char **argv)
{
    static const struct option longopts[] = {
        KG_COMMON_LONGOPTS,
        { "production", no_argument, NULL, OPT_PRODUCTION },
        { "diagnostic", no_argument, NULL, OPT_DIAGNOSTIC },
        { "quiet", no_argument, NULL, OPT_QUIET },
        { "skip-selftest", no_argument, NULL, OPT_SKIP_SELFTEST },
        { "defects", required_argument, NULL, OPT_DEFECTS },
        MARKS_GIT_LONGOPTS,
        { 0, 0, 0, 0 }
    };
    kg_common_opts co = KG_COMMON_OPTS_INIT;
    kg_marks_git_opts mo = KG_MARKS_GIT_OPTS_INIT;
    kg_gate_ctx ctx = KG_GATE_CTX_INIT;
    kg_selection sel = { 0 };
    kg_device_info dev;
    kg_report *rep = NULL;
    kg_marks_target *t = NULL;
    kg_advance_input *in = NULL;
    cJSON *summary = NULL;
    char marks_path[4096], tmp_marks[64] = "", exe[4096];
    int rc = 0, c, code = KG_EXIT_PASS, n[5];
    bool production = false, diagnostic = false, no_gpu = false, skip_selftest = false;
    const char *defects_opt = NULL;
    char defects[4096] = "";
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
        int h;
        if (c == KG_OPT_HELP) {
            fputs(run_usage, stdout);
            goto cleanup;
        }
        if (c == OPT_SKIP_SELFTEST) {
            skip_selftest = true;
            continue;
        }
        if (c == OPT_DEFECTS) {
            defects_opt = optarg;
            continue;
        }
        if (c == OPT_PRODUCTION || c == OPT_DIAGNOSTIC || c == OPT_QUIET) {
            production |= c == OPT_PRODUCTION;
            diagnostic |= c == OPT_DIAGNOSTIC;
            ctx.quiet |= c == OPT_QUIET;
            continue;
        }
        if ((h = kg_common_opt(&co, c, optarg)) == 0)
            h = marks_git_opt(&mo, c, optarg);
        KG_TRY(h);
        if (h == 0) {
            rc = kg_opt_unknown("run", run_usage, argv);
            goto cleanup;
        }
    }
    if (optind < argc) {
        fputs(run_usage, stderr);
        rc = KG_ERR(KG_EINVAL, "run: unexpected argument '%s'", argv[optind]);
        goto cleanup;
    }
    if (production && diagnostic) {
        rc = KG_ERR(KG_EINVAL, "run: --production and --diagnostic exclude each other");
        goto cleanup;
    }
    if (!production && (mo.push_remote || mo.marks_ref || mo.author || mo.email)) {
        rc = KG_ERR(KG_EINVAL, "run: --push, --marks-ref, --author and --email need --production "
                               "(a diagnostic run never commits or pushes)");
        goto cleanup;
    }
    if (production && skip_selftest) {
        rc = KG_ERR(KG_EINVAL, "run: --skip-selftest is for diagnostic runs only (a production "
                               "run whose selftest did not pass certifies nothing)");
        goto cleanup;
    }
    /* The selftest needs the defect runner: production insists on it; a diagnostic run without
     * one says so and goes on. */
    if (!skip_selftest) {
        rc = kg_selftest_defects_path(defects, sizeof defects, defects_opt);
        if (rc < 0 && (production || defects_opt))
            goto cleanup;
        if (rc < 0) {
            printf("kgate: %s: selftest skipped\n", kg_error_last());
            defects[0] = '\0';
        }
        rc = 0;
    }
    ctx.diagnostic = !production;
    if (production) {
        /* Every refusal before any GPU time is spent. */
        KG_TRY(kg_marks_target_open(&t, &mo));
        if (t->is_head && access(t->abspath, F_OK) == 0) {
            snprintf(marks_path, sizeof marks_path, "%s", t->abspath); /* clean: == the tip */
        } else {
            /* The bench compares against the marks at the target ref (empty when there are
             * none yet), not the work tree. */
            char *text = NULL;
            snprintf(tmp_marks, sizeof tmp_marks, "/tmp/kgate-marks-XXXXXX");
            int fd = mkstemp(tmp_marks);
            if (fd < 0) {
                tmp_marks[0] = '\0';
                rc = KG_ERR(KG_EIO, "cannot create a temporary marks file in /tmp");
                goto cleanup;
            }
            close(fd);
            KG_TRY(kg_marks_serialize(&text, t->marks));
            rc = kg_file_write_atomic(tmp_marks, text, strlen(text));
            free(text);
            KG_TRY(rc);
            snprintf(marks_path, sizeof marks_path, "%s", tmp_marks);
        }
    } else {
        mo.marks_path = kg_marks_path_default(mo.marks_path);
        diag_marks_path(marks_path, sizeof marks_path, mo.marks_path);
    }
    /* No marks file yet (a fresh repository): every case is NO_MARK. An explicit --marks must
     * exist (the bench gate says so). */
    ctx.marks_path = (mo.marks_path || tmp_marks[0] || access(marks_path, F_OK) == 0) ? marks_path
                                                                                      : NULL;
    if (kg_self_exe(exe, sizeof exe) == 0)
        ctx.self_exe = exe; /* else preflight reads /proc/self/exe itself */
    KG_TRY(kg_select(&sel, reg, co.filter));
    if (co.report_path)
        KG_TRY(kg_path_check_writable(co.report_path));
    if (!co.seed_set)
        co.seed = kg_seed_fresh();
    ctx.seed = co.seed;
    ctx.device = co.device;
    KG_TRY(kg_report_new(&rep, "run", ctx.diagnostic));
    kg_report_set_seed(rep, co.seed);
    {
        /* Outside CI (no KGATE_COMMIT/GITHUB_SHA/CI_COMMIT_SHA) the code under test is HEAD of
         * the repository we run in, when there is one (diagnostic runs too). */
        cJSON *prov = cJSON_GetObjectItemCaseSensitive(kg_report_json(rep), "provenance");
        const char *pc = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(prov, "commit"));
        git_oid head;
        bool have_head = false;
        kg_git *g = NULL;
        if (prov && pc && strcmp(pc, "unknown") == 0 &&
            (t || kg_git_open(&g, ".") == 0) &&
            kg_git_head_commit(t ? t->git : g, &head, &have_head) == 0 && have_head)
            cJSON_ReplaceItemInObjectCaseSensitive(prov, "commit",
                                                   cJSON_CreateString(git_oid_tostr_s(&head)));
        kg_git_free(g);
    }
    printf("kgate run: seed %llu (reproduce with --seed %llu), %zu case(s), %s\n",
           (unsigned long long)co.seed, (unsigned long long)co.seed, sel.n,
           production ? "PRODUCTION (certifying: marks advance if every gate passes)"
                      : "DIAGNOSTIC (non-certifying: marks are never written)");
    rc = kg_device_open(&dev, co.device);
    if (rc == KG_ENODEV) {
        printf("kgate: %s: GPU checks are skipped%s\n", kg_error_last(),
               production ? " (so this production run cannot commit)" : "");
        kg_report_set_no_device(rep, kg_error_last());
        no_gpu = true;
        rc = 0;
    } else {
        KG_TRY(rc);
        ctx.dev = &dev;
        kg_report_set_device(rep, &dev);
        printf("device %d: %s (sm_%d%d, %d SMs)\n", dev.ordinal, dev.name, dev.cc_major,
               dev.cc_minor, dev.sm_count);
    }
    if (defects[0]) {
        /* Before the gates: a run whose gates no longer catch their defects certifies nothing. */
        int st_code = 0;
        kg_common_opts st_opts = co;
        st_opts.filter = NULL; /* the whole catalogue: --filter selects the cases under test */
        if (!ctx.quiet)
            printf("\n== selftest ==\n");
        fflush(stdout);
        KG_TRY(kg_selftest_run(rep, defects, &st_opts, NULL, false, &st_code));
    }
    cJSON *gl = cJSON_CreateArray();
    for (size_t i = 0; i < KG_ARRAY_LEN(run_gates); i++) {
        cJSON_AddItemToArray(gl, cJSON_CreateString(run_gates[i].name));
        if (!ctx.quiet)
            printf("\n== %s ==\n", run_gates[i].name);
        KG_TRY(run_gates[i].fn(rep, reg, &sel, &ctx));
    }
    kg_report_set_extra(rep, KG_RK_GATES, gl);
    kg_report_counts(rep, n);
    printf("\nrun: %d passed, %d failed, %d errors, %d skipped, %d warnings\n",
           n[KG_VERDICT_PASS] + n[KG_VERDICT_WARN], n[KG_VERDICT_FAIL], n[KG_VERDICT_ERROR],
           n[KG_VERDICT_SKIP], n[KG_VERDICT_WARN]);
    code = n[KG_VERDICT_FAIL] ? KG_EXIT_GATE_FAILED
           : n[KG_VERDICT_ERROR] ? KG_EXIT_RUNTIME
           : (no_gpu || n[KG_VERDICT_SKIP]) ? KG_EXIT_NO_GPU
                                            : KG_EXIT_PASS;
    if (production) {
        KG_TRY(kg_advance_parse(&in, kg_report_json(rep), "this run", "kgate run --production"));
        if (!in->all_passed || code != KG_EXIT_PASS) {
            printf("marks: not advancing (production needs every gate passed for every case on "
                   "a GPU): %s\n", in->why_not[0] ? in->why_not : "not every gate passed");
            summary = cJSON_CreateObject();
            cJSON_AddBoolToObject(summary, "committed", false);
            cJSON_AddStringToObject(summary, "reason", in->why_not);
        } else {
            rc = production_advance(t, &mo, in, &summary);
            if (rc < 0) {
                /* The report still records the run; the exit code says the commit failed. */
                summary = cJSON_CreateObject();
                cJSON_AddBoolToObject(summary, "committed", false);
                cJSON_AddStringToObject(summary, "error", kg_error_last());
            }
        }
        kg_report_set_extra(rep, "marks_update", summary);
        summary = NULL;
    } else {
        printf("diagnostic run: NON-CERTIFYING; marks were not written, nothing was committed\n");
    }
    if (co.report_path) {
        int wrc = kg_report_write(rep, co.report_path);
        if (wrc < 0 && rc == 0)
            rc = wrc;
        else if (wrc == 0)
            printf("report: %s\n", co.report_path);
    }
cleanup:
    if (rc < 0)
        code = kg_cli_fail(rc);
    if (tmp_marks[0])
        unlink(tmp_marks);
    cJSON_Delete(summary);
    kg_advance_input_free(in);
    kg_marks_target_free(t);
    kg_report_free(rep);
    kg_selection_free(&sel);
    return code;
}

/* ---- kgate marks advance --from-report ----------------------------------------------------- */

static const char advance_usage[] =
    "usage: kgate marks advance --from-report REPORT.json [--marks FILE] [--marks-ref REF]\n"
    "                           [--push REMOTE] [--author NAME --email EMAIL]\n"
    "\n"
    "The production path from a recorded report (of `kgate run --production`): if every gate\n"
    "passed for every case on a GPU, commit the advanced marks exactly as the run would have.\n"
    "A diagnostic (non-certifying) report is refused (exit 2); a report with a FAIL, ERROR or\n"
    "SKIP commits nothing (exit 1).\n";

int kg_cmd_marks_advance(int argc, char **argv)
{
    static const struct option longopts[] = {
        { "from-report", required_argument, NULL, OPT_FROM_REPORT },
        { "help", no_argument, NULL, KG_OPT_HELP },
        MARKS_GIT_LONGOPTS,
        { 0, 0, 0, 0 }
    };
    kg_marks_git_opts mo = KG_MARKS_GIT_OPTS_INIT;
    const char *from = NULL;
    char *text = NULL;
    cJSON *root = NULL;
    kg_advance_input *in = NULL;
    kg_marks_target *t = NULL;
    int rc = 0, c, code = KG_EXIT_PASS;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
        int h;
        if (c == KG_OPT_HELP) {
            fputs(advance_usage, stdout);
            goto cleanup;
        }
        if (c == OPT_FROM_REPORT) {
            from = optarg;
            continue;
        }
        KG_TRY(h = marks_git_opt(&mo, c, optarg));
        if (h == 0) {
            rc = kg_opt_unknown("marks advance", advance_usage, argv);
            goto cleanup;
        }
    }
    if (optind < argc || !from) {
        fputs(advance_usage, stderr);
        rc = optind < argc ? KG_ERR(KG_EINVAL, "marks advance: unexpected argument '%s'",
                                    argv[optind])
                           : KG_ERR(KG_EINVAL, "marks advance: --from-report REPORT is required");
        goto cleanup;
    }
    rc = kg_file_read(&text, NULL, from);
    if (rc < 0) {
        rc = KG_ERR(KG_EINVAL, "--from-report %s: %s", from, kg_error_last());
        goto cleanup;
    }
    if (!(root = cJSON_Parse(text))) {
        rc = KG_ERR(KG_EPARSE, "%s: not valid JSON", from);
        goto cleanup;
    }
    KG_TRY(kg_advance_parse(&in, root, from, "kgate marks advance --from-report"));
    if (!in->certifying) {
        rc = KG_ERR(KG_EREFUSED, "%s: a diagnostic (non-certifying) report never advances marks; "
                                 "only `kgate run --production` reports do", from);
        goto cleanup;
    }
    KG_TRY(kg_marks_target_open(&t, &mo));
    if (!in->all_passed) {
        printf("marks: not advancing: %s: not every gate passed for every case on a GPU (%s); "
               "nothing committed\n", from, in->why_not);
        code = KG_EXIT_GATE_FAILED;
        goto cleanup;
    }
    KG_TRY(production_advance(t, &mo, in, NULL));
cleanup:
    if (rc < 0)
        code = kg_cli_fail(rc);
    kg_marks_target_free(t);
    kg_advance_input_free(in);
    cJSON_Delete(root);
    free(text);
    return code;
}
