/* `kgate marks show|diff|lower|history|advance`: the release manager's view of the high-water
 * marks. `lower` is the only way a mark goes down: an explicit commit carrying the reason. */
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "marks/advance.h"
#include "report/export.h" /* kg_sbuf */
#include "marks/marks_git.h"

enum {
    MO_MARKS = 0x3000, MO_MARKS_REF, MO_PUSH, MO_AUTHOR, MO_EMAIL, MO_DEVICE, MO_CASE, MO_METRIC,
    MO_REASON, MO_TO, MO_OUT, MO_REV, MO_HELP
};

static const char marks_usage[] =
    "usage: kgate marks <subcommand> [options]\n"
    "\n"
    "  show    [--device CLASS] [--marks FILE]            the marks in the work tree file\n"
    "  diff    REV1 REV2 [--marks FILE]                   marks that changed between revisions\n"
    "  lower   --case ID --device CLASS --reason TEXT [--metric M] [--to VALUE]\n"
    "          [--marks FILE] [--marks-ref REF] [--push REMOTE] [--author NAME --email EMAIL]\n"
    "          the only way down: one commit carrying the reason (without --to the mark is\n"
    "          removed and the next production run records a fresh one)\n"
    "  history --case ID [--device CLASS] [--metric M] --out FILE.svg|FILE.html\n"
    "          [--marks FILE] [--rev REV]                 trend per commit with noise bands\n"
    "  advance --from-report REPORT.json [...]            see `kgate marks advance --help`\n";

typedef struct {
    kg_marks_git_opts git;
    const char *device, *case_id, *metric, *reason, *out, *rev;
    double to;
    bool to_set;
} marks_args;

static int parse_args(marks_args *a, int argc, char **argv, const char *sub, int max_pos,
                      const char **pos, int *npos)
{
    static const struct option longopts[] = {
        { "marks", required_argument, NULL, MO_MARKS },
        { "marks-ref", required_argument, NULL, MO_MARKS_REF },
        { "push", required_argument, NULL, MO_PUSH },
        { "author", required_argument, NULL, MO_AUTHOR },
        { "email", required_argument, NULL, MO_EMAIL },
        { "device", required_argument, NULL, MO_DEVICE },
        { "case", required_argument, NULL, MO_CASE },
        { "metric", required_argument, NULL, MO_METRIC },
        { "reason", required_argument, NULL, MO_REASON },
        { "to", required_argument, NULL, MO_TO },
        { "out", required_argument, NULL, MO_OUT },
        { "rev", required_argument, NULL, MO_REV },
        { "help", no_argument, NULL, MO_HELP },
        { 0, 0, 0, 0 }
    };
    int c, rc = 0;
    kg_marks_git_opts g0 = KG_MARKS_GIT_OPTS_INIT;
    memset(a, 0, sizeof *a);
    a->git = g0;
    *npos = 0;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
        if (c == '?' || c == ':') {
            char cmd[64];
            snprintf(cmd, sizeof cmd, "marks %s", sub);
            return kg_opt_unknown(cmd, marks_usage, argv);
        }
        if (c == MO_HELP) {
            fputs(marks_usage, stdout);
            return 1;
        }
        if (!optarg || !*optarg)
            return KG_ERR(KG_EINVAL, "marks %s: '%s' needs a value", sub, argv[optind - 1]);
        switch (c) {
        case MO_MARKS: a->git.marks_path = optarg; break;
        case MO_MARKS_REF: a->git.marks_ref = optarg; break;
        case MO_PUSH: a->git.push_remote = optarg; break;
        case MO_AUTHOR: a->git.author = optarg; break;
        case MO_EMAIL: a->git.email = optarg; break;
        case MO_DEVICE: a->device = optarg; break;
        case MO_CASE: a->case_id = optarg; break;
        case MO_METRIC: a->metric = optarg; break;
        case MO_REASON: a->reason = optarg; break;
        case MO_OUT: a->out = optarg; break;
        case MO_REV: a->rev = optarg; break;
        case MO_TO:
            KG_TRY(kg_parse_double("--to", optarg, &a->to));
            if (!(a->to > 0))
                return KG_ERR(KG_EINVAL, "--to: expected a positive number, got '%s'", optarg);
            a->to_set = true;
            break;
        }
    }
    while (optind < argc) {
        if (*npos >= max_pos)
            return KG_ERR(KG_EINVAL, "marks %s: unexpected argument '%s'", sub, argv[optind]);
        pos[(*npos)++] = argv[optind++];
    }
    /* No --marks: the runner's default ($KGATE_MARKS), as for bench and run. */
    a->git.marks_path = kg_marks_path_default(a->git.marks_path);
cleanup:
    return rc;
}

static void fmt_mark_line(const kg_mark *m)
{
    printf("%-24s %-40s %-14s %12.6g  +-%5.2f%%  [%.6g, %.6g] n=%-5d %s %.12s %s\n",
           m->device_class, m->case_id, m->metric, m->value, 100.0 * m->band_rel, m->ci_lo,
           m->ci_hi, m->samples, m->date ? m->date : "-", m->commit ? m->commit : "-",
           m->set_by ? m->set_by : "-");
}

/* ---- show ---------------------------------------------------------------------------------- */

static int marks_show(int argc, char **argv)
{
    marks_args a;
    const char *pos[1];
    int np, rc;
    kg_marks *m = NULL;
    kg_git *g = NULL;
    char path[4096];
    size_t shown = 0;
    KG_TRY(parse_args(&a, argc, argv, "show", 0, pos, &np));
    if (rc == 1)
        return 0;
    if (a.git.marks_path)
        snprintf(path, sizeof path, "%s", a.git.marks_path);
    else if (kg_git_open(&g, ".") == 0 && g->workdir)
        snprintf(path, sizeof path, "%s%s", g->workdir, KG_MARKS_DEFAULT_PATH);
    else
        snprintf(path, sizeof path, "%s", KG_MARKS_DEFAULT_PATH);
    KG_TRY(kg_marks_load(&m, path));
    printf("%-24s %-40s %-14s %12s  %-9s %s\n", "device", "case", "metric", "mark", "band",
           "run CI, samples, date, commit, set by");
    for (size_t i = 0; i < kg_marks_count(m); i++) {
        const kg_mark *mk = kg_marks_at(m, i);
        if (a.device && strcmp(a.device, mk->device_class) != 0)
            continue;
        fmt_mark_line(mk);
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

static int open_repo_rel(kg_git **g, char **rel, const char *marks_path)
{
    int rc = 0;
    char dir[4096] = ".";
    if (marks_path) {
        snprintf(dir, sizeof dir, "%s", marks_path);
        char *slash = strrchr(dir, '/');
        if (!slash)
            snprintf(dir, sizeof dir, ".");
        else
            slash[slash == dir ? 1 : 0] = '\0';
    }
    KG_TRY(kg_git_open(g, dir));
    if (marks_path && (*g)->workdir)
        KG_TRY(kg_git_relpath(*g, marks_path, rel));
    else if (!(*rel = strdup(marks_path ? marks_path : KG_MARKS_DEFAULT_PATH)))
        rc = KG_ERR(KG_ENOMEM, "out of memory");
cleanup:
    return rc;
}

static int marks_diff(int argc, char **argv)
{
    marks_args a;
    const char *pos[2];
    int np, rc;
    kg_git *g = NULL;
    char *rel = NULL;
    kg_marks *m1 = NULL, *m2 = NULL;
    git_oid c1, c2;
    int added = 0, removed = 0, changed = 0, same = 0;
    KG_TRY(parse_args(&a, argc, argv, "diff", 2, pos, &np));
    if (rc == 1)
        return 0;
    if (np != 2) {
        rc = KG_ERR(KG_EINVAL, "marks diff: expected two revisions (e.g. HEAD~1 HEAD)");
        goto cleanup;
    }
    KG_TRY(open_repo_rel(&g, &rel, a.git.marks_path));
    KG_TRY(kg_git_rev_commit(g, pos[0], &c1));
    KG_TRY(kg_git_rev_commit(g, pos[1], &c2));
    KG_TRY(kg_marks_at_commit(&m1, g, &c1, rel));
    KG_TRY(kg_marks_at_commit(&m2, g, &c2, rel));
    char h1[GIT_OID_HEXSZ + 1], h2[GIT_OID_HEXSZ + 1];
    git_oid_tostr(h1, sizeof h1, &c1);
    git_oid_tostr(h2, sizeof h2, &c2);
    printf("marks diff %s (%.12s) -> %s (%.12s), %s\n", pos[0], h1, pos[1], h2, rel);
    for (size_t i = 0; i < kg_marks_count(m2); i++) {
        const kg_mark *n = kg_marks_at(m2, i);
        const kg_mark *o = kg_marks_find(m1, n->device_class, n->case_id, n->metric);
        if (!o) {
            printf("+ %s [%s] %s: %.6g (band +-%.2f%%)\n", n->case_id, n->device_class,
                   n->metric, n->value, 100.0 * n->band_rel);
            added++;
        } else if (o->value != n->value || o->band_rel != n->band_rel) {
            printf("~ %s [%s] %s: %.6g -> %.6g (%+.2f%%, band +-%.2f%% -> +-%.2f%%) %s\n",
                   n->case_id, n->device_class, n->metric, o->value, n->value,
                   100.0 * (n->value / o->value - 1.0), 100.0 * o->band_rel,
                   100.0 * n->band_rel, n->set_by ? n->set_by : "");
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
cleanup:
    kg_marks_free(m1);
    kg_marks_free(m2);
    free(rel);
    kg_git_free(g);
    return rc;
}

/* ---- lower --------------------------------------------------------------------------------- */

typedef struct {
    const marks_args *a;
    double old_value;
} lower_ud;

static int lower_update(kg_marks *m, void *ud, char **message)
{
    lower_ud *u = ud;
    const marks_args *a = u->a;
    const kg_mark *cur = NULL;
    int rc = 0, hits = 0;
    char now[32], setby[600];
    for (size_t i = 0; i < kg_marks_count(m); i++) {
        const kg_mark *mk = kg_marks_at(m, i);
        if (strcmp(mk->case_id, a->case_id) == 0 && strcmp(mk->device_class, a->device) == 0 &&
            (!a->metric || strcmp(mk->metric, a->metric) == 0)) {
            cur = mk;
            hits++;
        }
    }
    if (hits == 0)
        return KG_ERR(KG_ENOTFOUND, "no mark for case '%s' on device '%s'%s%s (see `kgate marks "
                                    "show`)", a->case_id, a->device, a->metric ? " metric " : "",
                      a->metric ? a->metric : "");
    if (hits > 1)
        return KG_ERR(KG_EINVAL, "case '%s' on '%s' has %d marks: choose one with --metric",
                      a->case_id, a->device, hits);
    kg_mark mk = *cur;
    u->old_value = cur->value;
    char *metric = strdup(cur->metric);
    size_t cap = 1024 + strlen(a->reason);
    char *msg = malloc(cap);
    if (!metric || !msg) {
        rc = KG_ERR(KG_ENOMEM, "out of memory");
        goto cleanup;
    }
    if (a->to_set) {
        kg_mark probe = mk;
        probe.value = a->to;
        if (!kg_mark_better(&mk, &probe)) {
            rc = KG_ERR(KG_EINVAL, "--to %g does not lower the bar of %s [%s] %s (mark %g, %s): "
                                   "marks only move up through production runs",
                        a->to, a->case_id, a->device, metric, cur->value,
                        cur->direction == KG_LOWER_IS_BETTER ? "lower is better"
                                                             : "higher is better");
            goto cleanup;
        }
        time_t t = time(NULL);
        struct tm tm;
        gmtime_r(&t, &tm);
        strftime(now, sizeof now, "%Y-%m-%dT%H:%M:%SZ", &tm);
        snprintf(setby, sizeof setby, "kgate marks lower: %s", a->reason);
        mk.value = a->to;
        mk.date = now;
        mk.set_by = setby;
        KG_TRY(kg_marks_put(m, &mk));
        snprintf(msg, cap, "kgate: lower mark %s [%s] %s: %.6g -> %.6g\n\nReason: %s\n",
                 a->case_id, a->device, metric, u->old_value, a->to, a->reason);
    } else {
        KG_TRY(kg_marks_remove(m, a->device, a->case_id, metric));
        snprintf(msg, cap, "kgate: remove mark %s [%s] %s: %.6g -> (none)\n\nReason: %s\nThe next "
                 "passing production run records a fresh mark.\n", a->case_id, a->device, metric,
                 u->old_value, a->reason);
    }
    *message = msg;
    msg = NULL;
    rc = 1;
cleanup:
    free(metric);
    free(msg);
    return rc;
}

static int marks_lower(int argc, char **argv)
{
    marks_args a;
    const char *pos[1];
    int np, rc;
    kg_marks_target *t = NULL;
    kg_marks_commit_result res;
    KG_TRY(parse_args(&a, argc, argv, "lower", 0, pos, &np));
    if (rc == 1)
        return 0;
    if (!a.case_id || !a.device || !a.reason || !*a.reason) {
        rc = KG_ERR(KG_EINVAL, "marks lower: --case, --device and --reason are required");
        goto cleanup;
    }
    lower_ud u = { &a, 0 };
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

typedef struct {
    char commit[13], author[64], date[24], set_by[96], series[200];
    double value, band, ci_lo, ci_hi;
} hpoint;

typedef struct {
    const marks_args *a;
    hpoint *p;
    size_t n;
} hist_ud;

static int hist_cb(const git_oid *commit, const git_signature *author, const char *summary,
                   const char *data, size_t len, void *ud)
{
    hist_ud *h = ud;
    kg_marks *m = NULL;
    int rc = 0;
    KG_UNUSED(summary);
    KG_UNUSED(len);
    char name[64];
    snprintf(name, sizeof name, "marks at %.12s", git_oid_tostr_s(commit));
    if (kg_marks_parse(&m, data, name) < 0) /* an old malformed version: skip it, not fatal */
        return 0;
    for (size_t i = 0; i < kg_marks_count(m); i++) {
        const kg_mark *mk = kg_marks_at(m, i);
        if (strcmp(mk->case_id, h->a->case_id) != 0 ||
            (h->a->device && strcmp(mk->device_class, h->a->device) != 0) ||
            (h->a->metric && strcmp(mk->metric, h->a->metric) != 0))
            continue;
        char series[200];
        snprintf(series, sizeof series, "%s %s", mk->device_class, mk->metric);
        /* One point per change of this mark (other marks' commits are not its history). */
        const hpoint *last = NULL;
        for (size_t j = h->n; j-- > 0;)
            if (strcmp(h->p[j].series, series) == 0) {
                last = &h->p[j];
                break;
            }
        if (last && last->value == mk->value && last->band == mk->band_rel)
            continue;
        hpoint *np = realloc(h->p, (h->n + 1) * sizeof *np);
        if (!np) {
            rc = KG_ERR(KG_ENOMEM, "out of memory");
            goto cleanup;
        }
        h->p = np;
        hpoint *p = &h->p[h->n++];
        memset(p, 0, sizeof *p);
        snprintf(p->commit, sizeof p->commit, "%.12s", git_oid_tostr_s(commit));
        snprintf(p->author, sizeof p->author, "%s", author->name);
        time_t t = (time_t)author->when.time;
        struct tm tm;
        gmtime_r(&t, &tm);
        strftime(p->date, sizeof p->date, "%Y-%m-%d %H:%M", &tm);
        snprintf(p->set_by, sizeof p->set_by, "%s", mk->set_by ? mk->set_by : "");
        snprintf(p->series, sizeof p->series, "%s", series);
        p->value = mk->value;
        p->band = mk->band_rel;
        p->ci_lo = mk->ci_lo;
        p->ci_hi = mk->ci_hi;
    }
cleanup:
    kg_marks_free(m);
    return rc;
}

/* One chart per series: the mark as a step line, its noise band (value * (1 +- band_rel))
 * shaded, the setting run's CI as a bar, and who moved it under each point. */
static void draw_series(kg_sbuf *b, const hist_ud *h, const char *series, double y0)
{
    const double W = 960, H = 300, L = 80, R = 20, T = 30, B = 90;
    double lo = INFINITY, hi = -INFINITY;
    size_t cnt = 0;
    for (size_t i = 0; i < h->n; i++)
        if (strcmp(h->p[i].series, series) == 0) {
            const hpoint *p = &h->p[i];
            lo = fmin(lo, fmin(p->value * (1 - p->band), p->ci_lo));
            hi = fmax(hi, fmax(p->value * (1 + p->band), p->ci_hi));
            cnt++;
        }
    if (hi <= lo)
        hi = lo * 1.01 + 1e-9;
    double pad = (hi - lo) * 0.08;
    lo -= pad;
    hi += pad;
    double dx = cnt > 1 ? (W - L - R) / (double)(cnt - 1) : 0;
#define XP(k) (L + (cnt > 1 ? dx * (double)(k) : (W - L - R) / 2))
#define YP(v) (y0 + T + (H - T - B) * (1 - ((v)-lo) / (hi - lo)))
    kg_sbuf_printf(b, "<g><text x=\"%g\" y=\"%g\" font-size=\"14\" font-weight=\"bold\">", L, y0 + 18);
    kg_sbuf_xml(b, h->a->case_id);
    kg_sbuf_printf(b, " &#8212; ");
    kg_sbuf_xml(b, series);
    kg_sbuf_printf(b, " (mark per commit; shaded: noise band; bar: run CI)</text>\n");
    kg_sbuf_printf(b, "<rect x=\"%g\" y=\"%g\" width=\"%g\" height=\"%g\" fill=\"none\" "
                 "stroke=\"#999\"/>\n", L, y0 + T, W - L - R, H - T - B);
    for (int k = 0; k <= 4; k++) {
        double v = lo + (hi - lo) * k / 4.0;
        kg_sbuf_printf(b, "<text x=\"%g\" y=\"%g\" font-size=\"11\" text-anchor=\"end\">%.4g</text>\n",
                  L - 6, YP(v) + 4, v);
    }
    /* Band: upper edge left to right, lower edge back. */
    kg_sbuf_printf(b, "<polygon fill=\"#4a90d9\" fill-opacity=\"0.2\" stroke=\"none\" points=\"");
    size_t k = 0;
    for (size_t i = 0; i < h->n; i++)
        if (strcmp(h->p[i].series, series) == 0) {
            kg_sbuf_printf(b, "%g,%g ", XP(k), YP(h->p[i].value * (1 + h->p[i].band)));
            k++;
        }
    for (size_t i = h->n; i-- > 0;)
        if (strcmp(h->p[i].series, series) == 0) {
            k--;
            kg_sbuf_printf(b, "%g,%g ", XP(k), YP(h->p[i].value * (1 - h->p[i].band)));
        }
    kg_sbuf_printf(b, "\"/>\n<polyline fill=\"none\" stroke=\"#1f5fa8\" stroke-width=\"2\" points=\"");
    k = 0;
    for (size_t i = 0; i < h->n; i++)
        if (strcmp(h->p[i].series, series) == 0) {
            kg_sbuf_printf(b, "%g,%g ", XP(k), YP(h->p[i].value));
            k++;
        }
    kg_sbuf_printf(b, "\"/>\n");
    k = 0;
    for (size_t i = 0; i < h->n; i++) {
        const hpoint *p = &h->p[i];
        if (strcmp(p->series, series) != 0)
            continue;
        double x = XP(k);
        kg_sbuf_printf(b, "<line x1=\"%g\" y1=\"%g\" x2=\"%g\" y2=\"%g\" stroke=\"#555\"/>\n", x,
                  YP(p->ci_lo), x, YP(p->ci_hi));
        kg_sbuf_printf(b, "<circle cx=\"%g\" cy=\"%g\" r=\"4\" fill=\"#1f5fa8\"><title>", x,
                  YP(p->value));
        kg_sbuf_printf(b, "%s by ", p->commit);
        kg_sbuf_xml(b, p->author);
        kg_sbuf_printf(b, " on %s: %.6g (band +-%.2f%%, run CI [%.6g, %.6g]) ", p->date, p->value,
                  100 * p->band, p->ci_lo, p->ci_hi);
        kg_sbuf_xml(b, p->set_by);
        kg_sbuf_printf(b, "</title></circle>\n");
        kg_sbuf_printf(b, "<text font-size=\"10\" transform=\"translate(%g,%g) rotate(35)\">%.7s ", x,
                  y0 + H - B + 14, p->commit);
        kg_sbuf_xml(b, p->author);
        kg_sbuf_printf(b, "</text>\n");
        k++;
    }
    kg_sbuf_printf(b, "</g>\n");
#undef XP
#undef YP
}

static int marks_history(int argc, char **argv)
{
    marks_args a;
    const char *pos[1];
    int np, rc;
    kg_git *g = NULL;
    char *rel = NULL, *refname = NULL;
    hist_ud h = { &a, NULL, 0 };
    kg_sbuf b = KG_SBUF_INIT;
    char **series = NULL;
    size_t ns = 0;
    git_oid start;
    KG_TRY(parse_args(&a, argc, argv, "history", 0, pos, &np));
    if (rc == 1)
        return 0;
    if (!a.case_id || !a.out) {
        rc = KG_ERR(KG_EINVAL, "marks history: --case ID and --out FILE.svg|FILE.html are "
                               "required");
        goto cleanup;
    }
    size_t ol = strlen(a.out);
    bool html = ol > 5 && strcmp(a.out + ol - 5, ".html") == 0;
    if (!html && !(ol > 4 && strcmp(a.out + ol - 4, ".svg") == 0)) {
        rc = KG_ERR(KG_EINVAL, "--out %s: expected a .svg or .html file name", a.out);
        goto cleanup;
    }
    KG_TRY(kg_path_check_writable(a.out));
    KG_TRY(open_repo_rel(&g, &rel, a.git.marks_path));
    if (a.rev) {
        KG_TRY(kg_git_rev_commit(g, a.rev, &start));
    } else {
        bool is_head, exists;
        KG_TRY(kg_git_target_ref(g, a.git.marks_ref, &refname, &is_head));
        KG_TRY(kg_git_tip(g, refname, &start, &exists));
        if (!exists) {
            rc = KG_ERR(KG_ENOTFOUND, "%s has no commits", refname);
            goto cleanup;
        }
    }
    KG_TRY(kg_git_file_history(g, &start, rel, hist_cb, &h));
    if (h.n == 0) {
        rc = KG_ERR(KG_ENOTFOUND, "no mark for case '%s'%s%s in the history of %s",
                    a.case_id, a.device ? " on " : "", a.device ? a.device : "", rel);
        goto cleanup;
    }
    for (size_t i = 0; i < h.n; i++) {
        bool seen = false;
        for (size_t j = 0; j < ns; j++)
            seen |= strcmp(series[j], h.p[i].series) == 0;
        if (!seen) {
            char **nsr = realloc(series, (ns + 1) * sizeof *nsr);
            if (!nsr) {
                rc = KG_ERR(KG_ENOMEM, "out of memory");
                goto cleanup;
            }
            series = nsr;
            series[ns++] = h.p[i].series;
        }
    }
    if (html) {
        kg_sbuf_printf(&b, "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>kgate marks "
                      "history: ");
        kg_sbuf_xml(&b, a.case_id);
        kg_sbuf_printf(&b, "</title></head><body style=\"font-family:sans-serif\">\n");
    }
    kg_sbuf_printf(&b, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"960\" height=\"%zu\" "
                  "font-family=\"sans-serif\">\n", 300 * ns + 10);
    for (size_t i = 0; i < ns; i++)
        draw_series(&b, &h, series[i], 300.0 * (double)i);
    kg_sbuf_printf(&b, "</svg>\n");
    if (html) {
        kg_sbuf_printf(&b, "<table border=\"1\" cellpadding=\"4\" style=\"border-collapse:collapse\">"
                      "<tr><th>commit</th><th>date (UTC)</th><th>moved by</th><th>series</th>"
                      "<th>mark</th><th>band</th><th>run CI</th><th>set by</th></tr>\n");
        for (size_t i = 0; i < h.n; i++) {
            const hpoint *p = &h.p[i];
            kg_sbuf_printf(&b, "<tr><td>%s</td><td>%s</td><td>", p->commit, p->date);
            kg_sbuf_xml(&b, p->author);
            kg_sbuf_printf(&b, "</td><td>");
            kg_sbuf_xml(&b, p->series);
            kg_sbuf_printf(&b, "</td><td>%.6g</td><td>&#177;%.2f%%</td><td>[%.6g, %.6g]</td><td>",
                      p->value, 100 * p->band, p->ci_lo, p->ci_hi);
            kg_sbuf_xml(&b, p->set_by);
            kg_sbuf_printf(&b, "</td></tr>\n");
        }
        kg_sbuf_printf(&b, "</table></body></html>\n");
    }
    if (b.err) {
        rc = KG_ERR(KG_ENOMEM, "out of memory drawing the history");
        goto cleanup;
    }
    KG_TRY(kg_sbuf_write(&b, a.out));
    printf("marks history: %zu point(s) in %zu series for %s -> %s\n", h.n, ns, a.case_id, a.out);
cleanup:
    free(series);
    kg_sbuf_free(&b);
    free(h.p);
    free(rel);
    free(refname);
    kg_git_free(g);
    return rc;
}

/* ---- dispatch ------------------------------------------------------------------------------ */

int kg_cmd_marks(kg_registry *reg, int argc, char **argv)
{
    int rc;
    KG_UNUSED(reg);
    if (argc < 2) {
        fputs(marks_usage, stderr);
        return kg_cli_fail(KG_ERR(KG_EINVAL, "marks: expected a subcommand (show, diff, lower, "
                                             "history, advance)"));
    }
    const char *sub = argv[1];
    if (strcmp(sub, "--help") == 0 || strcmp(sub, "help") == 0) {
        fputs(marks_usage, stdout);
        return KG_EXIT_PASS;
    }
    if (strcmp(sub, "advance") == 0)
        return kg_cmd_marks_advance(argc - 1, argv + 1);
    if (strcmp(sub, "show") == 0)
        rc = marks_show(argc - 1, argv + 1);
    else if (strcmp(sub, "diff") == 0)
        rc = marks_diff(argc - 1, argv + 1);
    else if (strcmp(sub, "lower") == 0)
        rc = marks_lower(argc - 1, argv + 1);
    else if (strcmp(sub, "history") == 0)
        rc = marks_history(argc - 1, argv + 1);
    else {
        fputs(marks_usage, stderr);
        rc = KG_ERR(KG_EINVAL, "marks: unknown subcommand '%s'", sub);
    }
    return rc < 0 ? kg_cli_fail(rc) : KG_EXIT_PASS;
}
