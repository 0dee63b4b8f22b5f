/* `kgate marks show|diff|lower|history|advance`: the release manager's view of the high-water
 * marks. `lower` is the only way a mark goes down: an explicit commit carrying the reason.
 * Each subcommand declares its own flags; the history is drawn by gates/history/history.c. */
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "cli/cli.h"
#include "marks/advance.h"
#include "history/history.h"
#include "marks/marks_git.h"
#include "marks/marks_ref.h"

#define MARKS_FILE_HELP "the marks file (default: $KGATE_MARKS, else " KG_MARKS_DEFAULT_PATH ")"
#define MARKS_REF_HELP                                                         \
    "read the marks file at this ref (e.g. origin/kgate-marks), not the work " \
    "tree's"
#define MARKS_BRANCH_HELP                                                                \
    "commit on this branch (default: $KGATE_MARKS_BRANCH, else " KG_MARKS_BRANCH_DEFAULT \
    "; HEAD: the checked-out branch)"

/* One subcommand: its flags (a table over its own options struct), words and runner. */
typedef struct marks_sub {
    const char *name;        /* "show" */
    const char *tail;        /* positional words of the synopsis, or NULL */
    const char *description; /* its --help prose, and its line in `kgate marks --help` */
    const kg_opt *opts;
    size_t n_opts;
    int (*run)(const struct marks_sub *sub, int argc, char **argv);
    const char *exit_codes; /* its --help footer (NULL: marks_exit_codes) */
} marks_sub;

static const char marks_exit_codes[] =
    "exit codes: 0 done, 2 usage or input error (bad flag, unreadable or malformed marks file,\n"
    "            unknown revision), 4 runtime error (libgit2, the push)\n";
static const char marks_guard_exit_codes[] =
    "exit codes: 0 the marks file is the one at --base, 1 it changed (the marks named),\n"
    "            2 usage or input error, 4 runtime error (libgit2)\n";

/* Parse a subcommand's flags into `target`; --help (printed) leaves *help set. */
static int marks_parse(const marks_sub *sub, void *target, int argc, char **argv, bool *help,
                       const char **pos, size_t max_pos, size_t *npos)
{
    char command[32];
    snprintf(command, sizeof command, "marks %s", sub->name);
    kg_opt_table table = { .opts = sub->opts,
                           .n = sub->n_opts,
                           .target = target,
                           .standalone_ok = true };
    kg_opt_cmd cmd = { .command = command,
                       .synopsis_tail = sub->tail,
                       .description = sub->description,
                       .tables = &table,
                       .n_tables = 1,
                       .exit_codes = sub->exit_codes ? sub->exit_codes : marks_exit_codes };
    return kg_opt_cmd_parse(&cmd, argc, argv, help, pos, max_pos, npos);
}

static void marks_print_line(const kg_mark *m)
{
    printf("%-24s %-40s %-14s %12.6g  +-%5.2f%%  [%.6g, %.6g] n=%-5d %s %.12s %s\n",
           m->device_class, m->case_id, m->metric, m->value, 100.0 * m->band_rel, m->ci_lo,
           m->ci_hi, m->samples, m->date ? m->date : "-", m->commit ? m->commit : "-",
           m->set_by ? m->set_by : "-");
}

/* ---- show ---------------------------------------------------------------------------------- */

typedef struct {
    const char *device, *marks_path, *marks_ref;
} show_opts;

static const kg_opt show_table[] = {
    KG_OPT_STRING_("device", "CLASS", show_opts, device,
                   "only this device class (\"NVIDIA H200/sm_90\")"),
    KG_OPT_STRING_("marks", "FILE", show_opts, marks_path, MARKS_FILE_HELP),
    KG_OPT_STRING_("marks-ref", "REF", show_opts, marks_ref, MARKS_REF_HELP),
};

/* The marks to show: at --marks-ref (path "REF:FILE @ commit"); else --marks/$KGATE_MARKS;
 * else the local marks branch when there is one; else the work tree's file. */
static int show_load(kg_marks **m, show_opts *a, kg_git **g, char *path, size_t n)
{
    kg_marks_source src;
    const char *mb = kg_marks_branch_default(NULL);
    char ref[300];
    git_oid tip;
    bool exists = false;
    a->marks_path = kg_marks_path_default(a->marks_path);
    if (!a->marks_ref && !a->marks_path && mb && kg_git_open(g, ".") == 0) {
        snprintf(ref, sizeof ref, "refs/heads/%s", mb);
        if (kg_git_tip(*g, ref, &tip, &exists) == 0 && exists)
            a->marks_ref = ref;
    }
    if (a->marks_ref) {
        int rc = kg_marks_load_ref(m, ".", a->marks_ref, a->marks_path, &src);
        if (rc == 0)
            snprintf(path, n, "%s:%s (commit %.12s)", src.ref, src.path, src.commit);
        return rc;
    }
    if (a->marks_path)
        snprintf(path, n, "%s", a->marks_path);
    else if ((*g || kg_git_open(g, ".") == 0) && (*g)->workdir)
        snprintf(path, n, "%s%s", (*g)->workdir, KG_MARKS_DEFAULT_PATH);
    else
        snprintf(path, n, "%s", KG_MARKS_DEFAULT_PATH);
    return kg_marks_load(m, path);
}

static int marks_show(const marks_sub *sub, int argc, char **argv)
{
    show_opts a = { .device = NULL, .marks_path = NULL, .marks_ref = NULL };
    int rc;
    bool help;
    kg_marks *m = NULL;
    kg_git *g = NULL;
    char path[4096];
    size_t shown = 0;
    KG_TRY(marks_parse(sub, &a, argc, argv, &help, NULL, 0, NULL));
    if (help)
        goto cleanup;
    KG_TRY(show_load(&m, &a, &g, path, sizeof path));
    printf("%-24s %-40s %-14s %12s  %-9s %s\n", "device", "case", "metric", "mark", "band",
           "run CI, samples, date, commit, set by");
    for (size_t i = 0; i < kg_marks_count(m); i++) {
        const kg_mark *mk = kg_marks_at(m, i);
        if (a.device && strcmp(a.device, mk->device_class) != 0)
            continue;
        marks_print_line(mk);
        shown++;
    }
    printf("%zu mark(s) in %s%s%s\n", shown, path, a.device ? " for " : "",
           a.device ? a.device : "");
cleanup:
    kg_marks_free(m);
    kg_git_free(g);
    return rc;
}

/* ---- diff ---------------------------------------------------------------------------------- */

typedef struct {
    const char *marks_path;
} diff_opts;

static const kg_opt diff_table[] = {
    KG_OPT_STRING_("marks", "FILE", diff_opts, marks_path, MARKS_FILE_HELP),
};

static int diff_print(const kg_marks *m1, const kg_marks *m2)
{
    int added = 0, removed = 0, changed = 0, same = 0;
    for (size_t i = 0; i < kg_marks_count(m2); i++) {
        const kg_mark *n = kg_marks_at(m2, i);
        const kg_mark *o = kg_marks_find(m1, n->device_class, n->case_id, n->metric);
        if (!o) {
            printf("+ %s [%s] %s: %.6g (band +-%.2f%%)\n", n->case_id, n->device_class, n->metric,
                   n->value, 100.0 * n->band_rel);
            added++;
        } else if (o->value != n->value || o->band_rel != n->band_rel) {
            printf("~ %s [%s] %s: %.6g -> %.6g (%+.2f%%, band +-%.2f%% -> +-%.2f%%) %s\n",
                   n->case_id, n->device_class, n->metric, o->value, n->value,
                   100.0 * (n->value / o->value - 1.0), 100.0 * o->band_rel, 100.0 * n->band_rel,
                   n->set_by ? n->set_by : "");
            changed++;
        } else {
            same++;
        }
    }
    for (size_t i = 0; i < kg_marks_count(m1); i++) {
        const kg_mark *o = kg_marks_at(m1, i);
        if (!kg_marks_find(m2, o->device_class, o->case_id, o->metric)) {
            printf("- %s [%s] %s: %.6g\n", o->case_id, o->device_class, o->metric, o->value);
            removed++;
        }
    }
    printf("%d added, %d changed, %d removed, %d unchanged\n", added, changed, removed, same);
    return added + changed + removed;
}

static int marks_diff(const marks_sub *sub, int argc, char **argv)
{
    diff_opts a = { .marks_path = NULL };
    const char *pos[2];
    size_t np;
    int rc;
    bool help;
    kg_git *g = NULL;
    char *rel = NULL;
    kg_marks *m1 = NULL, *m2 = NULL;
    git_oid c1, c2;
    KG_TRY(marks_parse(sub, &a, argc, argv, &help, pos, 2, &np));
    if (help)
        goto cleanup;
    if (np != 2) {
        rc = KG_ERR(KG_EINVAL, "marks diff: expected two revisions (e.g. HEAD~1 HEAD)");
        goto cleanup;
    }
    KG_TRY(kg_marks_repo_open(&g, &rel, kg_marks_path_default(a.marks_path)));
    KG_TRY(kg_git_rev_commit(g, pos[0], &c1));
    KG_TRY(kg_git_rev_commit(g, pos[1], &c2));
    KG_TRY(kg_marks_at_commit(&m1, g, &c1, rel));
    KG_TRY(kg_marks_at_commit(&m2, g, &c2, rel));
    char h1[GIT_OID_HEXSZ + 1], h2[GIT_OID_HEXSZ + 1];
    git_oid_tostr(h1, sizeof h1, &c1);
    git_oid_tostr(h2, sizeof h2, &c2);
    printf("marks diff %s (%.12s) -> %s (%.12s), %s\n", pos[0], h1, pos[1], h2, rel);
    diff_print(m1, m2);
cleanup:
    kg_marks_free(m1);
    kg_marks_free(m2);
    free(rel);
    kg_git_free(g);
    return rc;
}

/* ---- lower --------------------------------------------------------------------------------- */

typedef struct {
    kg_marks_git_opts git;
    const char *case_id, *device, *metric, *reason;
    double to;
    bool to_set;
} lower_opts;

static int lower_to(void *opts, const char *v)
{
    lower_opts *a = opts;
    int rc = kg_parse_double("--to", v, &a->to);
    if (rc < 0)
        return rc;
    if (!(a->to > 0))
        return KG_ERR(KG_EINVAL, "--to: expected a positive number, got '%s'", v);
    a->to_set = true;
    return 0;
}

static const kg_opt lower_table[] = {
    KG_OPT_STRING_REQUIRED_("case", "ID", lower_opts, case_id, "the case whose mark goes down"),
    KG_OPT_STRING_REQUIRED_("device", "CLASS", lower_opts, device,
                            "its device class (\"NVIDIA H200/sm_90\", see `kgate marks show`)"),
    KG_OPT_STRING_REQUIRED_("reason", "TEXT", lower_opts, reason,
                            "why: it goes into the commit message"),
    KG_OPT_STRING_("metric", "M", lower_opts, metric, "which mark, when the case has several"),
    KG_OPT_FN_("to", "VALUE", lower_to, 0, "the new mark, at most 2x worse (default: remove it)"),
    KG_OPT_STRING_("marks", "FILE", lower_opts, git.marks_path, MARKS_FILE_HELP),
    KG_OPT_STRING_("marks-branch", "BRANCH", lower_opts, git.marks_ref, MARKS_BRANCH_HELP),
    KG_OPT_STRING_("marks-ref", "REF", lower_opts, git.marks_ref,
                   "the older name of --marks-branch"),
    KG_OPT_STRING_("push", "REMOTE", lower_opts, git.push_remote, "push the commit there"),
    KG_OPT_STRING_("author", "NAME", lower_opts, git.author,
                   "commit author (default: $KGATE_GIT_AUTHOR_NAME, else kgate)"),
    KG_OPT_STRING_("email", "EMAIL", lower_opts, git.email,
                   "author email (default: $KGATE_GIT_AUTHOR_EMAIL, else kgate@localhost)"),
};

typedef struct {
    const lower_opts *a;
    double old_value;
} lower_ud;

/* Text that goes into a mark and a commit message: one line, no control characters, at most
 * 1 KiB (what the marks loader accepts). */
static int marks_text_check(const char *flag, const char *v)
{
    if (!v)
        return 0;
    if (strlen(v) > 1000)
        return KG_ERR(KG_EINVAL, "%s: at most 1000 bytes", flag);
    for (const unsigned char *p = (const unsigned char *)v; *p; p++)
        if (*p < 0x20 || *p == 0x7f || (p[0] == 0xC2 && p[1] >= 0x80 && p[1] <= 0x9F))
            return KG_ERR(KG_EINVAL,
                          "%s: contains a control character at byte %zu (one line of "
                          "text: it goes into a mark and a commit message)",
                          flag, (size_t)(p - (const unsigned char *)v));
    size_t bad = kg_utf8_bad(v, strlen(v));
    if (bad != (size_t)-1)
        return KG_ERR(KG_EINVAL,
                      "%s: not valid UTF-8 at byte %zu (it goes into a mark and a "
                      "commit message)",
                      flag, bad);
    return 0;
}

/* The one mark --case/--device/--metric name. */
static int lower_find(const kg_mark **out, const kg_marks *m, const lower_opts *a)
{
    int hits = 0;
    for (size_t i = 0; i < kg_marks_count(m); i++) {
        const kg_mark *mk = kg_marks_at(m, i);
        if (strcmp(mk->case_id, a->case_id) == 0 && strcmp(mk->device_class, a->device) == 0 &&
            (!a->metric || strcmp(mk->metric, a->metric) == 0)) {
            *out = mk;
            hits++;
        }
    }
    if (hits == 0)
        return KG_ERR(KG_ENOTFOUND,
                      "no mark for case '%s' on device '%s'%s%s (see `kgate marks "
                      "show`)",
                      a->case_id, a->device, a->metric ? " metric " : "",
                      a->metric ? a->metric : "");
    if (hits > 1)
        return KG_ERR(KG_EINVAL, "case '%s' on '%s' has %d marks: choose one with --metric",
                      a->case_id, a->device, hits);
    return 0;
}

/* How far one lowering may move a mark: a time to at most twice the mark, a rate to at least
 * half (docs/guide/release.md). */
#define LOWER_MAX_FACTOR 2.0

/* --to: put the lower value (refused when it is not lower, or more than LOWER_MAX_FACTOR
 * worse), stamped with the reason. */
static int lower_set(kg_marks *m, const lower_opts *a, const kg_mark *cur, const char *metric,
                     const char *now, char *msg, size_t cap)
{
    char setby[600];
    kg_mark mk = *cur, probe = *cur;
    probe.value = a->to;
    if (!kg_mark_better(&mk, &probe))
        return KG_ERR(KG_EINVAL,
                      "--to %g does not lower the bar of %s [%s] %s (mark %g, %s): "
                      "marks only move up through production runs",
                      a->to, a->case_id, a->device, metric, cur->value,
                      cur->direction == KG_LOWER_IS_BETTER ? "lower is better"
                                                           : "higher is better");
    /* A lowering within reason. A mark moved further than LOWER_MAX_FACTOR in one
     * step (`--to 1e30`) is no bar: remove it instead, and the next run sets a fresh one. */
    bool lower_better = cur->direction == KG_LOWER_IS_BETTER;
    double bound = lower_better ? cur->value * LOWER_MAX_FACTOR : cur->value / LOWER_MAX_FACTOR;
    if (lower_better ? a->to > bound : a->to < bound)
        return KG_ERR(KG_EINVAL,
                      "--to %g: more than %gx worse than the mark of %s [%s] %s "
                      "(mark %g, %s: at %s %g); to go further, remove the mark "
                      "(marks lower without --to) and let the next passing "
                      "production run set a fresh one",
                      a->to, LOWER_MAX_FACTOR, a->case_id, a->device, metric, cur->value,
                      lower_better ? "lower is better" : "higher is better",
                      lower_better ? "most" : "least", bound);
    double old = cur->value;
    snprintf(setby, sizeof setby, "kgate marks lower: %s", a->reason);
    mk.value = a->to;
    mk.date = (char *)now;
    mk.set_by = setby;
    int rc = kg_marks_put(m, &mk);
    if (rc < 0)
        return rc;
    snprintf(msg, cap, "kgate: lower mark %s [%s] %s: %.6g -> %.6g\n\nReason: %s\n", a->case_id,
             a->device, metric, old, a->to, a->reason);
    return 0;
}

static int lower_update(kg_marks *m, void *ud, char **message)
{
    lower_ud *u = ud;
    const lower_opts *a = u->a;
    const kg_mark *cur = NULL;
    int rc = 0;
    char *metric = NULL, *msg = NULL, *trailer = NULL, now[32];
    KG_TRY(lower_find(&cur, m, a));
    u->old_value = cur->value;
    kg_advance_now(now, sizeof now);
    /* The lowering's key and time, so no report started before it moves the mark
     * back (the replay guard, gates/marks/advance_guard.c) */
    KG_TRY(kg_advance_lowered_trailer(&trailer, cur->device_class, cur->case_id, cur->metric, now));
    size_t cap = 1024 + strlen(a->reason) + strlen(trailer);
    metric = strdup(cur->metric); /* cur does not outlive kg_marks_put/remove */
    msg = malloc(cap);
    if (!metric || !msg) {
        rc = KG_ERR(KG_ENOMEM, "out of memory");
        goto cleanup;
    }
    if (a->to_set) {
        KG_TRY(lower_set(m, a, cur, metric, now, msg, cap));
    } else {
        KG_TRY(kg_marks_remove(m, a->device, a->case_id, metric));
        snprintf(msg, cap,
                 "kgate: remove mark %s [%s] %s: %.6g -> (none)\n\nReason: %s\nThe next "
                 "passing production run records a fresh mark.\n",
                 a->case_id, a->device, metric, u->old_value, a->reason);
    }
    size_t n = strlen(msg);
    snprintf(msg + n, cap - n, "%s\n", trailer);
    *message = msg;
    msg = NULL;
    rc = 1;
cleanup:
    free(metric);
    free(msg);
    free(trailer);
    return rc;
}

static int marks_lower(const marks_sub *sub, int argc, char **argv)
{
    lower_opts a = { .git = KG_MARKS_GIT_OPTS_INIT };
    int rc;
    bool help;
    kg_marks_target *t = NULL;
    kg_marks_commit_result res;
    KG_TRY(marks_parse(sub, &a, argc, argv, &help, NULL, 0, NULL));
    if (help)
        goto cleanup;
    a.git.marks_path = kg_marks_path_default(a.git.marks_path);
    if (!a.case_id || !a.device || !a.reason || !*a.reason) {
        rc = KG_ERR(KG_EINVAL, "marks lower: --case, --device and --reason are required");
        goto cleanup;
    }
    const char *texts[][2] = { { "--case", a.case_id },      { "--device", a.device },
                               { "--reason", a.reason },     { "--metric", a.metric },
                               { "--author", a.git.author }, { "--email", a.git.email } };
    for (size_t i = 0; i < KG_ARRAY_LEN(texts); i++)
        KG_TRY(marks_text_check(texts[i][0], texts[i][1]));
    lower_ud u = { .a = &a, .old_value = 0 };
    KG_TRY(kg_marks_branch_check(a.git.marks_ref ? a.git.marks_ref : kg_env(KG_MARKS_BRANCH_ENV),
                                 a.git.marks_ref ? "--marks-branch" : KG_MARKS_BRANCH_ENV));
    a.git.marks_ref = kg_marks_branch_default(a.git.marks_ref);
    KG_TRY(kg_marks_target_open(&t, &a.git));
    KG_TRY(kg_marks_commit_update(t, &a.git, lower_update, &u, &res));
    char to[48] = "(removed)";
    if (a.to_set)
        snprintf(to, sizeof to, "%.6g", a.to);
    printf("marks: committed %.12s on %s: %s [%s] lowered from %.6g to %s%s (reason: %s)\n",
           git_oid_tostr_s(&res.commit), t->refname, a.case_id, a.device, u.old_value, to,
           res.pushed ? ", pushed" : "", a.reason);
cleanup:
    kg_marks_target_free(t);
    return rc;
}

/* ---- history ------------------------------------------------------------------------------- */

static const kg_opt history_table[] = {
    KG_OPT_STRING_REQUIRED_("case", "ID", kg_marks_history_opts, case_id, "the case to draw"),
    KG_OPT_STRING_("device", "CLASS", kg_marks_history_opts, device,
                   "only this device class (default: every one, a chart each)"),
    KG_OPT_STRING_("metric", "M", kg_marks_history_opts, metric,
                   "only this metric (default: every one)"),
    KG_OPT_STRING_REQUIRED_("out", "FILE.svg|FILE.html", kg_marks_history_opts, out,
                            "the chart (SVG), or a page with the chart and a table (HTML)"),
    KG_OPT_STRING_("marks", "FILE", kg_marks_history_opts, marks_path, MARKS_FILE_HELP),
    KG_OPT_STRING_("marks-ref", "REF", kg_marks_history_opts, marks_ref,
                   "walk the history of this ref (default: the checked-out branch)"),
    KG_OPT_STRING_("rev", "REV", kg_marks_history_opts, rev,
                   "walk the history of this revision instead"),
};

static int marks_history(const marks_sub *sub, int argc, char **argv)
{
    kg_marks_history_opts a = KG_MARKS_HISTORY_OPTS_INIT;
    kg_marks_history_result res;
    int rc;
    bool help;
    KG_TRY(marks_parse(sub, &a, argc, argv, &help, NULL, 0, NULL));
    if (help)
        goto cleanup;
    a.marks_path = kg_marks_path_default(a.marks_path);
    if (!a.case_id || !a.out) {
        rc = KG_ERR(KG_EINVAL, "marks history: --case ID and --out FILE.svg|FILE.html are "
                               "required");
        goto cleanup;
    }
    KG_TRY(kg_marks_history(&res, &a));
    printf("marks history: %zu point(s) in %zu series for %s -> %s\n", res.points, res.series,
           a.case_id, a.out);
cleanup:
    return rc;
}

/* ---- guard --------------------------------------------------------------------------------- */

typedef struct {
    const char *base, *marks_path;
} guard_opts;

static const kg_opt guard_table[] = {
    KG_OPT_STRING_REQUIRED_("base", "REF", guard_opts, base,
                            "the PR's target (e.g. origin/main): its marks file is the reference"),
    KG_OPT_STRING_("marks", "FILE", guard_opts, marks_path, MARKS_FILE_HELP),
};

/* One side that differs from the base: what changed, or why it cannot be read. */
static void guard_side(const kg_marks_guard_result *r, const char *rel, const char *side,
                       const kg_marks *m, bool present, const char *why)
{
    printf("marks guard: %s %s %s the base (%.12s):\n", rel, side,
           !present          ? "is deleted; it is at"
           : r->base_present ? "differs from"
                             : "is added; not in",
           r->base_commit);
    if (!m)
        printf("  (it does not load: %s)\n", why);
    else if (diff_print(r->base, m) == 0)
        printf("  (the same marks, the text differs)\n");
}

/* 1 (exit 1) when HEAD's or the work tree's marks file differs from the base's. */
static int marks_guard(const marks_sub *sub, int argc, char **argv)
{
    guard_opts a = { .base = NULL, .marks_path = NULL };
    int rc;
    bool help;
    kg_git *g = NULL;
    char *rel = NULL;
    kg_marks_guard_result r = { 0 };
    KG_TRY(marks_parse(sub, &a, argc, argv, &help, NULL, 0, NULL));
    if (help)
        goto cleanup;
    if (!a.base) {
        rc = KG_ERR(KG_EINVAL, "marks guard: --base REF is required (the PR's target branch, "
                               "e.g. origin/main)");
        goto cleanup;
    }
    KG_TRY(kg_marks_repo_open(&g, &rel, kg_marks_path_default(a.marks_path)));
    KG_TRY(kg_marks_guard(&r, g, a.base, rel));
    if (r.head_differs)
        guard_side(&r, rel, "at HEAD", r.head, r.head_present, r.head_why);
    if (r.work_differs && !(r.head_differs && r.work_is_head))
        guard_side(&r, rel, "in the work tree", r.work, r.work_present, r.work_why);
    if (!r.head_differs && !r.work_differs) {
        printf("marks guard: %s is as at %s (%.12s): ok\n", rel, a.base, r.base_commit);
        goto cleanup;
    }
    printf("marks guard: FAIL: this change edits %s. Marks are written only by production runs "
           "(on the marks branch, " KG_MARKS_BRANCH_DEFAULT "); restore it with `git checkout %s "
           "-- %s` (a mark goes down only through `kgate marks lower`)\n",
           rel, a.base, rel);
    rc = 1;
cleanup:
    kg_marks_guard_result_free(&r);
    free(rel);
    kg_git_free(g);
    return rc;
}

/* ---- dispatch ------------------------------------------------------------------------------ */

static const marks_sub marks_subs[] = {
    { .name = "show",
      .description = "The marks: at --marks-ref, else in --marks, else on the local "
                     "marks branch\n(kgate-marks), else in the work tree file.\n",
      .opts = show_table,
      .n_opts = KG_ARRAY_LEN(show_table),
      .run = marks_show },
    { .name = "diff",
      .tail = "REV1 REV2",
      .description = "The marks that changed between two revisions (e.g. HEAD~1 HEAD).\n",
      .opts = diff_table,
      .n_opts = KG_ARRAY_LEN(diff_table),
      .run = marks_diff },
    { .name = "lower",
      .description = "The only way down: one commit carrying the reason (without --to the mark "
                     "is\nremoved and the next production run records a fresh one).\n",
      .opts = lower_table,
      .n_opts = KG_ARRAY_LEN(lower_table),
      .run = marks_lower },
    { .name = "history",
      .description = "The mark's trend per commit with its noise bands, and who moved it.\n",
      .opts = history_table,
      .n_opts = KG_ARRAY_LEN(history_table),
      .run = marks_history },
    { .name = "guard",
      .description = "For pull requests: exit 1, naming the marks that changed, when HEAD's or "
                     "the\nwork tree's marks file differs from the one at --base (the target "
                     "branch).\n",
      .opts = guard_table,
      .n_opts = KG_ARRAY_LEN(guard_table),
      .run = marks_guard,
      .exit_codes = marks_guard_exit_codes },
};

/* Every subcommand's synopsis (generated from its table) and what it does. */
static void marks_usage(FILE *out)
{
    fputs("usage: kgate marks <subcommand> [options]   (kgate marks <subcommand> --help for "
          "its options)\n\n",
          out);
    for (size_t i = 0; i < KG_ARRAY_LEN(marks_subs); i++) {
        const marks_sub *s = &marks_subs[i];
        char command[32];
        snprintf(command, sizeof command, "marks %s", s->name);
        kg_opt_table table = { .opts = s->opts, .n = s->n_opts, .standalone_ok = true };
        kg_opt_synopsis(out, "  ", command, s->tail, &table, 1);
        for (const char *l = s->description; *l;) { /* each line indented under it */
            size_t n = strcspn(l, "\n");
            fprintf(out, "      %.*s\n", (int)n, l);
            l += n + (l[n] == '\n');
        }
    }
    fputs("  kgate marks advance --from-report REPORT.json [...]\n"
          "      Advance the marks from a production report: see `kgate marks advance --help`.\n",
          out);
    fputs("\nexit codes: 0 done, 1 guard: the marks changed; advance: not every gate passed\n"
          "            (nothing committed), 2 usage or input error, 4 runtime error (libgit2)\n",
          out);
}

int kg_cmd_marks(kg_registry *reg, int argc, char **argv)
{
    int rc;
    KG_UNUSED(reg);
    if (argc < 2) {
        marks_usage(stderr);
        return kg_cli_fail(KG_ERR(KG_EINVAL, "marks: expected a subcommand (show, diff, lower, "
                                             "history, guard, advance)"));
    }
    const char *name = argv[1];
    if (strcmp(name, "--help") == 0 || strcmp(name, "help") == 0) {
        marks_usage(stdout);
        return KG_EXIT_PASS;
    }
    if (strcmp(name, "advance") == 0)
        return kg_cmd_marks_advance(argc - 1, argv + 1);
    for (size_t i = 0; i < KG_ARRAY_LEN(marks_subs); i++)
        if (strcmp(name, marks_subs[i].name) == 0) {
            rc = marks_subs[i].run(&marks_subs[i], argc - 1, argv + 1);
            return rc < 0 ? kg_cli_fail(rc) : rc > 0 ? KG_EXIT_GATE_FAILED : KG_EXIT_PASS;
        }
    marks_usage(stderr);
    return kg_cli_fail(KG_ERR(KG_EINVAL, "marks: unknown subcommand '%s'", name));
}
