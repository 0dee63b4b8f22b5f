/* `kgate run --production|--diagnostic`: every gate of the table over the selected cases into
 * one report (through the driver); in production, and only when every gate passed for every
 * case on a GPU, the marks of IMPROVED and NO_MARK cases advance through one libgit2 commit.
 * The production step (gates/production/production.c) advances from the typed results of the run;
 * `kgate marks advance --from-report` (marks_advance.c) drives it from a recorded report. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "cli/cli.h"
#include "marks/advance.h"
#include "marks/marks_git.h"
#include "production/production.h"
#include "core/report_keys.h"

typedef struct {
    bool production, diagnostic, quiet, skip_selftest, reuse_selftest;
    double selftest_max_age_h; /* --selftest-max-age (0: not given; RUN_CERT_MAX_AGE_H) */
    int bench_processes;       /* --bench-processes (0: not given; production default 3) */
    const char *defects;
    const char *marks_branch, *read_ref;
    kg_marks_git_opts mo;
} run_opts;

#define RUN_BENCH_PROCESSES 3 /* the default: a mark of 3 processes meets --min-mark-runs 3 */
#define RUN_CERT_MAX_AGE_H 24.0

static int run_opt_max_age(void *opts, const char *v)
{
    int rc = 0;
    double x = 0;
    KG_TRY(kg_parse_double("--selftest-max-age", v, &x));
    if (!(x > 0 && x <= 24 * 365))
        return KG_ERR(KG_EINVAL, "--selftest-max-age: expected hours in (0, 8760], got '%s'", v);
    ((run_opts *)opts)->selftest_max_age_h = x;
cleanup:
    return rc;
}

static int run_opt_bench_processes(void *opts, const char *v)
{
    int rc = 0;
    double x = 0;
    KG_TRY(kg_parse_double("--bench-processes", v, &x));
    if (!(x >= 2 && x <= KG_BENCH_MAX_PROCESSES) || x != (int)x)
        return KG_ERR(KG_EINVAL,
                      "--bench-processes: expected an integer in [2, %d] (production "
                      "never advances a mark from one process), got '%s'",
                      KG_BENCH_MAX_PROCESSES, v);
    ((run_opts *)opts)->bench_processes = (int)x;
cleanup:
    return rc;
}

static const kg_opt run_opt_table[] = {
    KG_OPT_BOOL_("production", run_opts, production,
                 "certifying: commit the advanced marks if every gate passed"),
    KG_OPT_BOOL_("diagnostic", run_opts, diagnostic, "non-certifying (the default)"),
    KG_OPT_BOOL_("quiet", run_opts, quiet, "no per-gate tables"),
    KG_OPT_STRING_("defects", "PATH", run_opts, defects, "the defect runner of the selftest"),
    KG_OPT_BOOL_("skip-selftest", run_opts, skip_selftest, "diagnostic runs only"),
    KG_OPT_BOOL_("reuse-selftest", run_opts, reuse_selftest,
                 "diagnostic: take the certificate of a passing selftest on this GPU, driver, "
                 "build and catalogue ($KGATE_CACHE_DIR) instead of a fresh selftest"),
    KG_OPT_FN_("selftest-max-age", "H", run_opt_max_age, 0,
               "--reuse-selftest: the oldest certificate taken, in hours (default 24)"),
    KG_OPT_FN_("bench-processes", "N", run_opt_bench_processes, 0,
               "--production: time the bench in N separate processes (default 3, 2..16)"),
    KG_OPT_STRING_("marks", "FILE", run_opts, mo.marks_path,
                   "marks file (default baselines/high_water.json in the repository)"),
    KG_OPT_STRING_("marks-ref", "REF", run_opts, read_ref,
                   "diagnostic: decide against the marks file at REF (e.g. origin/kgate-marks)"),
    KG_OPT_STRING_("marks-branch", "BRANCH", run_opts, marks_branch,
                   "--production: the branch marks are committed on (default $KGATE_MARKS_BRANCH, "
                   "else kgate-marks; HEAD: the checked-out branch)"),
    KG_OPT_STRING_("push", "REMOTE", run_opts, mo.push_remote, "--production: push the commit"),
    KG_OPT_STRING_("author", "NAME", run_opts, mo.author, "--production: commit author"),
    KG_OPT_STRING_("email", "EMAIL", run_opts, mo.email, "--production: commit email"),
};

static const char run_description[] =
    "Run every gate (kgate --help lists them) over the selected cases into one\n"
    "report. --diagnostic (the default) is non-certifying: it never writes the marks file,\n"
    "never commits, never pushes; --marks-ref REF decides against the marks file at REF (the\n"
    "marks branch, e.g. origin/kgate-marks) instead of the work tree's. --production commits,\n"
    "with libgit2, the advanced marks of IMPROVED and NO_MARK cases on the marks branch\n"
    "(--marks-branch, default kgate-marks; never the checked-out branch unless it is named),\n"
    "deciding against that branch's marks, if and only if every gate passed for every case\n"
    "on a GPU (no FAIL, ERROR or SKIP). A mark advances to the conservative edge of the run's\n"
    "interval and never goes down. --push REMOTE pushes the commit (token from\n"
    "KGATE_GIT_TOKEN). Marks file: --marks, default baselines/high_water.json (at the root of\n"
    "the current repository, or inside the marks branch).\n"
    "Author/committer: --author/--email, else KGATE_GIT_AUTHOR_NAME/EMAIL, else\n"
    "\"kgate <kgate@localhost>\".\n"
    "In production the bench is timed in --bench-processes N (default 3) separate processes\n"
    "(a fresh worker, a fresh CUDA context each) and each case decided from all of them: the\n"
    "median of their medians; IMPROVED only when every process was IMPROVED on its own; the\n"
    "marks it sets carry runs N, their spread, k and the power state. A diagnostic run times\n"
    "one process: its IMPROVED is unconfirmed and nothing advances.\n"
    "Before the gates, `kgate selftest` runs (the defect runner from --defects, $KGATE_DEFECTS or\n"
    "kgate-defects beside this runner): in production it is mandatory and any escaped defect or\n"
    "false alarm blocks the commit; a diagnostic run may --skip-selftest.\n";

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

/* Every gate's options struct, from its _INIT; `run` accepts their non-standalone flags. */
typedef struct {
    void *opts[8];
    kg_cli_marks marks; /* the run's one marks file, for every gate with marks hooks */
    char marks_path[4096], tmp_marks[64];
} run_gates;

/* The first gate of the table with these flags (0: with marks hooks), or -1. */
static int run_gate_with(unsigned flags)
{
    for (size_t i = 0; i < kg_n_gates; i++)
        if (flags ? (kg_gates[i]->flags & flags) == flags : kg_gates[i]->marks != NULL)
            return (int)i;
    return -1;
}

static void run_gates_free(run_gates *g)
{
    for (size_t i = 0; i < kg_n_gates; i++)
        free(g->opts[i]);
    kg_cli_marks_free(&g->marks);
    if (g->tmp_marks[0])
        unlink(g->tmp_marks);
}

static int run_parse(run_opts *ro, kg_common_opts *co, run_gates *g, int argc, char **argv,
                     bool *help)
{
    int rc = 0;
    kg_opt_table t[2 + 8];
    size_t n = 0;
    if (kg_n_gates > KG_ARRAY_LEN(g->opts))
        return KG_ERR(KG_EINTERNAL, "run: more gates than run_gates holds");
    t[n++] = (kg_opt_table){ .opts = kg_common_opt_table, .n = kg_n_common_opts, .target = co };
    t[n++] = (kg_opt_table){ .opts = run_opt_table,
                             .n = KG_ARRAY_LEN(run_opt_table),
                             .target = ro };
    for (size_t i = 0; i < kg_n_gates; i++) {
        const struct kg_gate *gt = kg_gates[i];
        if (!(g->opts[i] = calloc(1, gt->opts_size ? gt->opts_size : 1)))
            return KG_ERR(KG_ENOMEM, "out of memory parsing the options of run");
        if (gt->opts_size)
            memcpy(g->opts[i], gt->opts_init, gt->opts_size);
        if (gt->n_opts)
            t[n++] = (kg_opt_table){ .opts = gt->opts, .n = gt->n_opts, .target = g->opts[i] };
    }
    const kg_opt_cmd cmd = { .command = "run",
                             .description = run_description,
                             .tables = t,
                             .n_tables = n };
    KG_TRY(kg_opt_cmd_parse(&cmd, argc, argv, help, NULL, 0, NULL));
    co->quiet = ro->quiet;
    co->diagnostic = !ro->production;
cleanup:
    return rc;
}

static int run_check(const run_opts *ro)
{
    if (ro->production && ro->diagnostic)
        return KG_ERR(KG_EINVAL, "run: --production and --diagnostic exclude each other");
    if (!ro->production &&
        (ro->mo.push_remote || ro->marks_branch || ro->mo.author || ro->mo.email))
        return KG_ERR(KG_EINVAL, "run: --push, --marks-branch, --author and --email need "
                                 "--production (a diagnostic run never commits or pushes)");
    if (!ro->production && ro->bench_processes)
        return KG_ERR(KG_EINVAL, "run: --bench-processes needs --production (a diagnostic run "
                                 "times the bench in one process and never advances marks)");
    const char *iso = getenv("KGATE_ISOLATION");
    if (ro->production && iso && strcmp(iso, "0") == 0)
        return KG_ERR(KG_EINVAL, "run --production: KGATE_ISOLATION=0 runs every gate in this "
                                 "one process, and the bench must be timed in separate processes "
                                 "(--bench-processes): unset it");
    if (ro->production && ro->read_ref)
        return KG_ERR(KG_EINVAL, "run: --marks-ref is for diagnostic runs: --production decides "
                                 "against the marks branch it commits on (--marks-branch)");
    /* Before any GPU work, never a tag or remote-tracking ref */
    int brc = kg_marks_branch_check(ro->marks_branch ? ro->marks_branch
                                                     : kg_env(KG_MARKS_BRANCH_ENV),
                                    ro->marks_branch ? "--marks-branch" : KG_MARKS_BRANCH_ENV);
    if (ro->production && brc < 0)
        return brc;
    if (ro->production && ro->skip_selftest)
        return KG_ERR(KG_EINVAL, "run: --skip-selftest is for diagnostic runs only (a "
                                 "production run whose selftest did not pass certifies nothing)");
    if (ro->production && ro->reuse_selftest)
        return KG_ERR(KG_EINVAL, "run: --reuse-selftest is for diagnostic runs only (a "
                                 "production run always runs its selftest fresh)");
    if (ro->skip_selftest && ro->reuse_selftest)
        return KG_ERR(KG_EINVAL, "run: --skip-selftest and --reuse-selftest: one or the other");
    return 0;
}

/* The selftest needs the defect runner: production insists on it; a diagnostic run without one
 * says so and goes on (defects[0] == '\0'). */
static int run_defects(const run_opts *ro, char *defects, size_t n)
{
    defects[0] = '\0';
    if (ro->skip_selftest)
        return 0;
    int rc = kg_selftest_defects_path(defects, n, ro->defects);
    if (rc < 0 && (ro->production || ro->defects))
        return rc;
    if (rc < 0) {
        printf("kgate: %s: selftest skipped\n", kg_error_last());
        defects[0] = '\0';
    }
    return 0;
}

/* The marks the gates compare against, loaded through the first gate with marks hooks (mi; -1:
 * none): production, those at the target ref (a temporary copy unless the checked-out file is
 * the tip); diagnostic, the file in the work tree. */
static int run_marks(run_opts *ro, kg_marks_target **t, run_gates *g, int mi)
{
    int rc = 0;
    char *text = NULL;
    const char *no_ref = NULL;
    kg_gate_marks_slots sl = { .ref = &no_ref };
    if (mi >= 0)
        kg_gates[mi]->marks->slots(g->opts[mi], &sl);
    if (!ro->production && ro->read_ref) {
        if (mi < 0)
            return 0;
        *(sl.ref ? sl.ref : &no_ref) = ro->read_ref;
        *sl.path = ro->mo.marks_path; /* a path inside the ref: --marks, else the default */
        return kg_cli_marks_prepare(&g->marks, kg_gates[mi], g->opts[mi]);
    }
    if (!ro->production) {
        ro->mo.marks_path = kg_marks_path_default(ro->mo.marks_path);
        diag_marks_path(g->marks_path, sizeof g->marks_path, ro->mo.marks_path);
    } else {
        /* Every refusal before any GPU time is spent. */
        ro->mo.marks_ref = kg_marks_branch_default(ro->marks_branch);
        KG_TRY(kg_marks_target_open(t, &ro->mo));
        if ((*t)->is_head && access((*t)->abspath, F_OK) == 0) {
            snprintf(g->marks_path, sizeof g->marks_path, "%s", (*t)->abspath);
        } else {
            snprintf(g->tmp_marks, sizeof g->tmp_marks, "/tmp/kgate-marks-XXXXXX");
            int fd = mkstemp(g->tmp_marks);
            if (fd < 0) {
                g->tmp_marks[0] = '\0';
                rc = KG_ERR(KG_EIO, "cannot create a temporary marks file in /tmp");
                goto cleanup;
            }
            close(fd);
            KG_TRY(kg_marks_serialize(&text, (*t)->marks));
            KG_TRY(kg_file_write_atomic(g->tmp_marks, text, strlen(text)));
            snprintf(g->marks_path, sizeof g->marks_path, "%s", g->tmp_marks);
        }
    }
    /* No marks file yet (a fresh repository): every case is NO_MARK. An explicit --marks must
     * exist. */
    bool use = ro->mo.marks_path || g->tmp_marks[0] || access(g->marks_path, F_OK) == 0;
    if (mi >= 0)
        *sl.path = use ? g->marks_path : NULL;
    if (use && mi >= 0)
        KG_TRY(kg_cli_marks_prepare(&g->marks, kg_gates[mi], g->opts[mi]));
    if (*t && !(*t)->tip_exists && !(*t)->is_head) /* a new branch, seeded from the file */
        kg_marks_source_set_file(&g->marks.src, access((*t)->abspath ? (*t)->abspath : "", F_OK)
                                                    ? NULL
                                                    : (*t)->abspath);
    if (*t && (*t)->tip_exists && !(*t)->is_head) { /* the report names the branch, not a copy */
        kg_marks_source *s = &g->marks.src;
        s->kind = "ref";
        snprintf(s->path, sizeof s->path, "%s", (*t)->relpath);
        snprintf(s->ref, sizeof s->ref, "%s", (*t)->refname);
        git_oid_tostr(s->commit, sizeof s->commit, &(*t)->tip);
    }
cleanup:
    free(text);
    return rc;
}

/* The other gates with marks hooks decide against the marks the first one loaded. */
static void run_marks_share(run_gates *g, int mi)
{
    kg_gate_marks_slots sl;
    if (mi < 0)
        return;
    kg_gates[mi]->marks->slots(g->opts[mi], &sl);
    for (size_t i = (size_t)mi + 1; i < kg_n_gates; i++)
        kg_cli_marks_share(&g->marks, kg_gates[i], g->opts[i], *sl.path);
}

/* Outside CI (no KGATE_COMMIT/GITHUB_SHA/CI_COMMIT_SHA) the code under test is HEAD of the
 * repository we run in, when there is one (diagnostic runs too), and the report says when its
 * tracked files had uncommitted changes: the figures are then not HEAD's. */
static void run_commit(kg_run *run, kg_marks_target *t)
{
    git_oid head;
    bool have = false, changed = false;
    kg_git *g = NULL;
    if (strcmp(kg_report_commit(run->rep), "unknown") == 0 && (t || kg_git_open(&g, ".") == 0) &&
        kg_git_head_commit(t ? t->git : g, &head, &have) == 0 && have) {
        kg_report_set_commit(run->rep, git_oid_tostr_s(&head));
        if (kg_git_worktree_changed(t ? t->git : g, &changed) == 0 && changed)
            kg_report_set_local_changes(run->rep);
    }
    kg_git_free(g);
}

static int run_result_count(const kg_run *run)
{
    int n[KG_VERDICT_N], total = 0;
    kg_report_counts_full(run->rep, n);
    for (int v = 0; v < KG_VERDICT_N; v++)
        total += n[v];
    return total;
}

/* The selftest's passes as parts of the run's timing ("selftest/<runner>/<gate>"): children
 * that ran at once, so their times overlap the selftest's own. */
static void run_selftest_parts(kg_run *run)
{
    const cJSON *p;
    char name[96];
    cJSON_ArrayForEach(p, cJSON_GetObjectItem(cJSON_GetObjectItem(kg_report_json(run->rep),
                                                                  KG_RK_SELFTEST),
                                              KG_RK_ST_PASSES)) {
        snprintf(name, sizeof name, "selftest/%s",
                 cJSON_GetStringValue(cJSON_GetObjectItem(p, KG_RK_ST_PASS_NAME)));
        kg_run_part_add(run, name, cJSON_GetNumberValue(cJSON_GetObjectItem(p, KG_RK_ST_PASS_WALL)),
                        (int)cJSON_GetNumberValue(cJSON_GetObjectItem(p, KG_RK_ST_PASS_CASES)));
    }
}

/* --reuse-selftest: 1 when a valid certificate's rows are in the report (said so), else 0. */
static int run_selftest_reused(kg_run *run, const run_opts *ro, const kg_selftest_cert_key *k)
{
    char why[512] = "";
    double age_h = ro->selftest_max_age_h > 0 ? ro->selftest_max_age_h : RUN_CERT_MAX_AGE_H;
    int rc = kg_selftest_cert_reuse(run->rep, k, age_h * 3600, why, sizeof why);
    if (rc < 0)
        return rc;
    if (!run->env.quiet && rc == 1)
        printf("selftest: reused the certificate %s (same build, catalogue, driver %s and GPU; "
               "at most %.0f h old)\n",
               k->path, k->driver, age_h);
    else if (!run->env.quiet)
        printf("selftest: no certificate to reuse (%s): a fresh selftest\n", why);
    return rc;
}

/* The selftest: a valid certificate (--reuse-selftest), else fresh; a fresh one that passed on
 * a GPU leaves its certificate for later diagnostic runs. */
static int run_selftest(kg_run *run, const run_opts *ro, const char *defects)
{
    int rc = 0, st_code = 0, before = run_result_count(run);
    double t0 = kg_now_s();
    kg_common_opts st_opts = run->opts;
    kg_selftest_cert_key k;
    bool keyed = !run->no_gpu && kg_selftest_cert_key_make(&k, defects, &run->dev) == 0;
    st_opts.filter = NULL;      /* the whole catalogue: --filter selects the cases under test */
    st_opts.case_timeout_s = 0; /* --case-timeout is for those cases; the selftest has its own */
    if (!run->env.quiet)
        printf("\n== selftest ==\n");
    fflush(stdout);
    if (ro->reuse_selftest && !keyed && !run->env.quiet)
        printf("selftest: no certificate to reuse (%s): a fresh selftest\n",
               run->no_gpu ? "no GPU" : kg_error_last());
    rc = ro->reuse_selftest && keyed ? run_selftest_reused(run, ro, &k) : 0;
    if (rc == 0) {
        KG_TRY(kg_selftest_run(run->rep, defects, &st_opts, NULL, false, &st_code));
        run_selftest_parts(run);
        if (keyed && st_code == KG_EXIT_PASS &&
            kg_selftest_cert_save(run->rep, &k, run->opts.seed) < 0)
            printf("selftest: the certificate was not saved: %s\n", kg_error_last());
    }
    rc = rc < 0 ? rc : 0;
    kg_run_part_add(run, "selftest", kg_now_s() - t0, run_result_count(run) - before);
    if (!run->env.quiet)
        printf("selftest: %d rows in %.2f s\n", run_result_count(run) - before, kg_now_s() - t0);
cleanup:
    return rc;
}

/* The selftest first (a run whose gates no longer catch their defects certifies nothing), then
 * every gate of the table. */
static int run_gates_all(kg_run *run, const kg_registry *reg, run_gates *g, const run_opts *ro,
                         const char *defects, int bench_processes)
{
    int rc = 0;
    if (defects[0])
        KG_TRY(run_selftest(run, ro, defects));
    cJSON *gl = cJSON_CreateArray();
    for (size_t i = 0; i < kg_n_gates; i++) {
        cJSON_AddItemToArray(gl, cJSON_CreateString(kg_gates[i]->name));
        if ((kg_gates[i]->flags & KG_GATE_PRODUCTION_PASSES) && bench_processes >= 2 &&
            !run->no_gpu)
            KG_TRY(kg_production_passes(run, reg, kg_gates[i], g->opts[i], bench_processes));
        else
            KG_TRY(kg_run_gate(run, reg, kg_gates[i], g->opts[i], true));
    }
    kg_report_set_extra(run->rep, KG_RK_GATES, gl);
cleanup:
    return rc;
}

/* The production step: advance only from a run where every gate passed on a GPU. */
static int run_production(kg_run *run, kg_marks_target *t, const kg_marks_git_opts *mo, int code)
{
    int rc = 0;
    kg_advance_input *in = NULL;
    cJSON *summary = NULL;
    KG_TRY(kg_advance_from_run(&in, run, "kgate run --production"));
    if (run->opts.shard_count) { /* one verdict, from the merged shards */
        snprintf(in->why_not, sizeof in->why_not,
                 "shard %d/%d: a shard never commits; merge "
                 "the shards' reports (kgate report --merge) and advance from the merged report "
                 "(kgate marks advance --from-report)",
                 run->opts.shard_index, run->opts.shard_count);
        in->all_passed = false;
    }
    if (!in->all_passed || code != KG_EXIT_PASS) {
        printf("marks: not advancing (production needs every gate passed for every case on "
               "a GPU): %s\n",
               in->why_not[0] ? in->why_not : "not every gate passed");
        summary = cJSON_CreateObject();
        cJSON_AddBoolToObject(summary, KG_RK_MU_COMMITTED, false);
        cJSON_AddStringToObject(summary, KG_RK_MU_REASON, in->why_not);
    } else if ((rc = kg_cli_fleet_learn(in, t->git, &run->dev, NULL)) < 0 ||
               (rc = kg_production_advance(t, mo, in, &summary)) < 0) {
        /* The report still records the run; the exit code says the commit failed. */
        summary = cJSON_CreateObject();
        cJSON_AddBoolToObject(summary, KG_RK_MU_COMMITTED, false);
        cJSON_AddStringToObject(summary, KG_RK_MU_ERROR, kg_error_last());
    }
    kg_report_set_extra(run->rep, KG_RK_MARKS_UPDATE, summary);
cleanup:
    kg_advance_input_free(in);
    return rc;
}

int kg_cmd_run(kg_registry *reg, int argc, char **argv)
{
    run_opts ro = { .mo = KG_MARKS_GIT_OPTS_INIT };
    kg_common_opts co = KG_COMMON_OPTS_INIT;
    run_gates g = { .tmp_marks = "" };
    kg_marks_target *t = NULL;
    kg_run run = { 0 };
    char defects[4096] = "";
    bool help = false;
    int rc = 0, code = KG_EXIT_PASS, wrc, pi, mi;
    KG_TRY(run_parse(&ro, &co, &g, argc, argv, &help));
    if (help)
        goto cleanup;
    KG_TRY(run_check(&ro));
    if (ro.production && !ro.bench_processes)
        ro.bench_processes = RUN_BENCH_PROCESSES;
    if (ro.production && (pi = run_gate_with(KG_GATE_PRODUCTION_PASSES)) >= 0)
        kg_production_note(kg_gates[pi], g.opts[pi], ro.bench_processes);
    KG_TRY(run_defects(&ro, defects, sizeof defects));
    KG_TRY(run_marks(&ro, &t, &g, mi = run_gate_with(0)));
    run_marks_share(&g, mi);
    kg_cli_shard_weigh(&co, g.marks.marks); /* --shard: balanced by these marks */
    KG_TRY(kg_run_begin(&run, "run", &co, reg,
                        ro.production ? "PRODUCTION (certifying: marks advance if every gate "
                                        "passes)"
                                      : "DIAGNOSTIC (non-certifying: marks are never written)"));
    if (run.no_gpu && ro.production)
        printf("kgate: no GPU: this production run cannot commit\n");
    run_commit(&run, t);
    kg_cli_marks_source(&g.marks, &run);
    KG_TRY(run_gates_all(&run, reg, &g, &ro, defects, ro.production ? ro.bench_processes : 0));
    code = kg_run_summary(&run);
    if (ro.production)
        rc = run_production(&run, t, &ro.mo, code);
    else
        printf("diagnostic run: NON-CERTIFYING; marks were not written, nothing was committed\n");
    wrc = kg_run_write(&run);
    if (rc == 0)
        rc = wrc;
cleanup:
    if (rc < 0 && (run.incomplete || kg_interrupted()))
        (void)kg_run_write_partial(&run); /* interrupted: the results so far, marked */
    if (rc < 0)
        code = kg_cli_fail(rc);
    kg_marks_target_free(t);
    run_gates_free(&g);
    kg_run_free(&run);
    return code;
}
