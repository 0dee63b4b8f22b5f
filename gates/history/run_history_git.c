/* The run history on its git branch (run_history.h): append with compare-and-swap and push,
 * load every record. The branch holds history/<class>.jsonl only: it is never checked out and
 * never touches the work tree. */
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "history/run_history.h"

typedef struct {
    kg_git *g;
    const kg_history_append_opts *o;
    const kg_history_recs *recs;
    kg_history_append_result *res;
    kg_git_identity id;
    bool named; /* the skipped lines were named by an earlier attempt */
} rg_ctx;

/* Bad lines always tolerated; beyond this many they must be under half the file's lines. One
 * stray line must never stop every production job, but a branch flooded with junk is no
 * history: refused, so the flood is seen rather than silently carried on. */
#define RG_BAD_FREE 16
#define RG_BAD_SHOWN 10 /* skipped lines named one by one; the rest counted */

typedef struct {
    const char *rev, *file; /* where the text is: for the messages */
    bool quiet;             /* a retried attempt: named once already */
    size_t lines, bad;
    size_t first; /* lines before the part read (a file over the size limit) */
} rg_skips;

/* A file over KG_HISTORY_MAX_FILE is not refused (that blocked every append): only
 * its newest lines are read, the last KG_HISTORY_MAX_FILE bytes from a line's start; the
 * offset where they start, said once, s->lines and s->first set to the lines before it. */
static size_t rg_tail(const char *p, size_t len, rg_skips *s)
{
    if (len <= KG_HISTORY_MAX_FILE)
        return 0;
    size_t off = len - KG_HISTORY_MAX_FILE;
    while (off < len && p[off - 1] != '\n')
        off++;
    for (const char *q = p, *end = p + off; (q = memchr(q, '\n', (size_t)(end - q))); q++)
        s->lines++;
    s->first = s->lines;
    if (!s->quiet)
        fprintf(stderr,
                "history: %s on %s is %zu bytes, over the limit of %zu: only its newest "
                "%zu bytes are read, its first %zu line(s) left out (the branch's log "
                "keeps them)\n",
                s->file, s->rev, len, KG_HISTORY_MAX_FILE, len - off, s->first);
    return off;
}

/* One line (no newline): kept (1), skipped and named (0), or a hard error. */
static int rg_line(rg_skips *s, const char *p, size_t l, kg_history_rec *r)
{
    char where[1200];
    snprintf(where, sizeof where, "%s:%s:%zu", s->rev, s->file, s->lines);
    int rc = kg_history_rec_parse(r, p, l, where);
    if (rc != KG_EPARSE)
        return rc < 0 ? rc : 1;
    const char *branch = strncmp(s->rev, "refs/heads/", 11) == 0 ? s->rev + 11 : s->rev;
    if (++s->bad <= RG_BAD_SHOWN && !s->quiet)
        fprintf(stderr, "history: skipped %s (repair: remove line %zu of %s on branch %s)\n",
                kg_error_last(), s->lines, s->file, branch);
    return 0;
}

/* After a file: the rest of its bad lines counted, and the flood limit. */
static int rg_flood(const rg_skips *s)
{
    if (s->bad > RG_BAD_SHOWN && !s->quiet)
        fprintf(stderr, "history: ... and %zu more unreadable line(s) of %s on %s\n",
                s->bad - RG_BAD_SHOWN, s->file, s->rev);
    if (s->bad > RG_BAD_FREE && s->bad * 2 > s->lines - s->first)
        return KG_ERR(KG_EPARSE,
                      "%s on %s: %zu of %zu lines are not history records: more "
                      "than half, refused (not a stray line: find the commit that "
                      "wrote them, `git log -p %s -- %s`, and revert it)",
                      s->file, s->rev, s->bad, s->lines - s->first, s->rev, s->file);
    return 0;
}

/* The good lines of `text` (len bytes, NUL bytes and all) into *clean, each bad one skipped
 * and named; the flood limit above. *clean: NULL when text is. */
static int rg_filter(char **clean, const char *text, size_t len, rg_skips *s)
{
    int rc = 0;
    size_t n = 0;
    *clean = NULL;
    if (!text)
        return 0;
    if (!(*clean = malloc(len + 1)))
        return KG_ERR(KG_ENOMEM, "out of memory (%zu bytes of %s)", len, s->file);
    for (const char *p = text, *end = text + len; p < end;) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        size_t l = nl ? (size_t)(nl - p) : (size_t)(end - p);
        kg_history_rec r;
        s->lines++;
        int got = l ? rg_line(s, p, l, &r) : 0;
        KG_TRY(got);
        if (got) {
            memcpy(*clean + n, p, l);
            n += l;
            (*clean)[n++] = '\n';
        }
        p += l + 1;
    }
    (*clean)[n] = '\0';
    rc = rg_flood(s);
cleanup:
    if (rc < 0) {
        free(*clean);
        *clean = NULL;
    }
    return rc;
}

/* The good lines of the file at a commit (NULL when absent): a bad line is skipped and named,
 * never a stop (rg_filter). Over the size limit: its newest lines (rg_tail). */
static int rg_file_at(kg_git *g, const git_oid *c, const char *rel, char **text, rg_skips *s)
{
    int rc = 0;
    git_oid blob;
    bool exists = false;
    size_t len = 0;
    char *raw = NULL;
    *text = NULL;
    KG_TRY(kg_git_file_blob_id(g, c, rel, &blob, &exists));
    if (!exists)
        goto cleanup;
    KG_TRY(kg_git_read_file(g, c, rel, &raw, &len));
    size_t off = rg_tail(raw, len, s);
    rc = rg_filter(text, raw + off, len - off, s);
cleanup:
    free(raw);
    return rc;
}

/* The records to commit: the new ones, plus (when this attempt builds on the remote's tip
 * while the local branch went elsewhere) the local file's records the remote lacks. */
static int rg_additions(kg_history_recs *add, rg_ctx *x, const git_oid *local, bool carry)
{
    int rc = 0;
    char *text = NULL, where[700];
    rg_skips s = { .rev = x->res->refname, .file = x->res->file, .quiet = x->named };
    memset(add, 0, sizeof *add);
    if (carry) {
        KG_TRY(rg_file_at(x->g, local, x->res->file, &text, &s));
        snprintf(where, sizeof where, "%s (local %s)", x->res->file, x->res->refname);
        for (const char *p = text; p && *p;) {
            size_t l = strcspn(p, "\n");
            kg_history_rec r;
            KG_TRY(kg_history_rec_parse(&r, p, l, where)); /* filtered: every line parses */
            KG_TRY(kg_history_recs_push(add, &r));
            p += l + (p[l] == '\n');
        }
    }
    for (size_t i = 0; i < x->recs->n; i++)
        KG_TRY(kg_history_recs_push(add, &x->recs->v[i]));
cleanup:
    free(text);
    return rc;
}

/* Where an attempt builds: the local tip, or with a remote its tip unless the local branch is
 * ahead of it (an earlier push failed: push those commits now). */
static int rg_base(rg_ctx *x, git_oid *local, bool *lexists, git_oid *base, bool *bexists,
                   bool *carry, bool *ahead)
{
    int rc = 0;
    git_oid rtip;
    bool rexists = false;
    *carry = false;
    KG_TRY(kg_git_tip(x->g, x->res->refname, local, lexists));
    *ahead = x->o->remote && *lexists; /* until the remote shows it has the local tip */
    *base = *local;
    *bexists = *lexists;
    if (!x->o->remote)
        goto cleanup;
    KG_TRY(kg_git_fetch(x->g, x->o->remote, x->res->refname, &rtip, &rexists));
    if (!rexists)
        goto cleanup;
    if (*lexists) {
        int d = kg_git_is_descendant(x->g, local, &rtip);
        KG_TRY(d);
        *ahead = d == 1 && !git_oid_equal(local, &rtip);
        if (d == 1)
            goto cleanup;
    }
    *carry = *lexists;
    *base = rtip;
    *bexists = true;
cleanup:
    return rc;
}

/* One attempt: 0 done, KG_ECONFLICT lost a race (ref moved, or the push was rejected). */
static int rg_attempt(rg_ctx *x)
{
    int rc = 0;
    git_oid local, base, out;
    bool lexists, bexists, carry, ahead;
    char *text = NULL, *merged = NULL, msg[600];
    size_t added = 0;
    kg_history_recs add = { 0 };
    rg_skips s = { .rev = x->res->refname, .file = x->res->file, .quiet = x->named };
    KG_TRY(rg_base(x, &local, &lexists, &base, &bexists, &carry, &ahead));
    if (bexists)
        KG_TRY(rg_file_at(x->g, &base, x->res->file, &text, &s));
    KG_TRY(rg_additions(&add, x, &local, carry));
    x->named = true;
    KG_TRY(kg_history_merge_text(&merged, &added, text, &add, KG_HISTORY_KEEP, x->res->file));
    x->res->added = added;
    if (added == 0 && !ahead)
        goto cleanup; /* every record is there already */
    if (added > 0) {
        snprintf(msg, sizeof msg, "kgate: history: %zu record(s) of run %s (%s)\n", added,
                 x->recs->v[0].run_id, x->recs->v[0].device_class);
        KG_TRY(kg_git_commit_file(x->g, x->res->refname, lexists ? &local : NULL,
                                  bexists ? &base : NULL, x->res->file, merged, strlen(merged), msg,
                                  &x->id, &out));
        x->res->committed = true;
        x->res->commit = out;
        if (s.bad)
            fprintf(stderr,
                    "history: the commit leaves out the %zu unreadable line(s) of %s "
                    "(the branch's log keeps them)\n",
                    s.bad, x->res->file);
    }
    if (x->o->remote) {
        KG_TRY(kg_git_push(x->g, x->o->remote, x->res->refname));
        x->res->pushed = true;
    }
cleanup:
    kg_history_recs_free(&add);
    free(text);
    free(merged);
    return rc;
}

static int rg_open(rg_ctx *x, const kg_history_append_opts *o)
{
    int rc = 0;
    const char *branch = o->branch ? o->branch : kg_env(KG_HISTORY_BRANCH_ENV);
    KG_TRY(kg_git_open(&x->g, o->repo_dir ? o->repo_dir : ".")); /* initializes libgit2 */
    kg_git_identity_resolve(&x->id, o->author, o->email);
    KG_TRY(kg_git_identity_check(&x->id));
    if (!branch)
        branch = KG_HISTORY_BRANCH_DEFAULT;
    snprintf(x->res->refname, sizeof x->res->refname, "%s%s",
             strncmp(branch, "refs/", 5) == 0 ? "" : "refs/heads/", branch);
    if (strlen(branch) > 200 || !git_reference_is_valid_name(x->res->refname))
        return KG_ERR(KG_EINVAL, "--branch '%s': not a valid branch name", branch);
    for (size_t i = 1; i < x->recs->n; i++)
        if (strcmp(x->recs->v[i].device_class, x->recs->v[0].device_class) != 0)
            return KG_ERR(KG_EINVAL,
                          "history: records of two device classes ('%s', '%s') in "
                          "one append",
                          x->recs->v[0].device_class, x->recs->v[i].device_class);
    kg_history_file_of(x->res->file, sizeof x->res->file, x->recs->v[0].device_class);
cleanup:
    return rc;
}

int kg_history_append(kg_history_append_result *res, const kg_history_append_opts *o,
                      const kg_history_recs *recs)
{
    int rc = 0;
    rg_ctx x = { .o = o, .recs = recs, .res = res };
    int max = o->max_attempts > 0 ? o->max_attempts : 16;
    memset(res, 0, sizeof *res);
    if (recs->n == 0)
        return 0;
    KG_TRY(rg_open(&x, o));
    srand((unsigned)getpid() ^ (unsigned)time(NULL));
    for (int a = 1;; a++) {
        res->attempts = a;
        res->committed = res->pushed = false;
        rc = rg_attempt(&x);
        if (rc != KG_ECONFLICT)
            break;
        if (a >= max) {
            rc = KG_ERR(KG_ECONFLICT,
                        "%s kept moving: gave up after %d attempts (rerun to "
                        "retry; nothing was lost)",
                        res->refname, a);
            break;
        }
        struct timespec ts = { 0, (long)(5 + rand() % 40) * 1000000L };
        nanosleep(&ts, NULL);
    }
cleanup:
    kg_git_free(x.g);
    return rc;
}

/* ---- load ----------------------------------------------------------------------------------- */

static int rg_load_tree(kg_history_recs *out, kg_git *g, git_tree *dir, const char *rev)
{
    int rc = 0;
    char file[600];
    git_blob *blob = NULL;
    for (size_t i = 0; i < git_tree_entrycount(dir); i++) {
        const git_tree_entry *e = git_tree_entry_byindex(dir, i);
        const char *name = git_tree_entry_name(e);
        size_t n = strlen(name);
        if (git_tree_entry_type(e) != GIT_OBJECT_BLOB || n < 7 || strcmp(name + n - 6, ".jsonl"))
            continue;
        KG_GIT_CHECK(git_blob_lookup(&blob, g->repo, git_tree_entry_id(e)));
        size_t len = (size_t)git_blob_rawsize(blob);
        const char *p = git_blob_rawcontent(blob), *end = p + len;
        snprintf(file, sizeof file, KG_HISTORY_DIR "/%s", name);
        rg_skips s = { .rev = rev, .file = file };
        p += rg_tail(p, len, &s);
        while (p < end) {
            const char *nl = memchr(p, '\n', (size_t)(end - p));
            size_t l = nl ? (size_t)(nl - p) : (size_t)(end - p);
            kg_history_rec r;
            s.lines++;
            int got = l ? rg_line(&s, p, l, &r) : 0;
            KG_TRY(got);
            if (got)
                KG_TRY(kg_history_recs_push(out, &r));
            p += l + 1;
        }
        KG_TRY(rg_flood(&s));
        git_blob_free(blob);
        blob = NULL;
    }
cleanup:
    git_blob_free(blob);
    return rc;
}

int kg_history_load(kg_history_recs *out, kg_git *g, const char *rev)
{
    int rc = 0;
    git_oid c;
    git_commit *commit = NULL;
    git_tree *tree = NULL, *dir = NULL;
    git_tree_entry *e = NULL;
    memset(out, 0, sizeof *out);
    KG_TRY(kg_git_rev_commit(g, rev, &c));
    KG_GIT_CHECK(git_commit_lookup(&commit, g->repo, &c));
    KG_GIT_CHECK(git_commit_tree(&tree, commit));
    int found = git_tree_entry_bypath(&e, tree, KG_HISTORY_DIR);
    if (found == GIT_ENOTFOUND) {
        git_error_clear();
        goto cleanup; /* an empty history */
    }
    KG_GIT_CHECK_AS("git_tree_entry_bypath", found);
    KG_GIT_CHECK(git_tree_lookup(&dir, g->repo, git_tree_entry_id(e)));
    KG_TRY(rg_load_tree(out, g, dir, rev));
cleanup:
    if (rc < 0)
        kg_history_recs_free(out);
    git_tree_entry_free(e);
    git_tree_free(dir);
    git_tree_free(tree);
    git_commit_free(commit);
    return rc;
}
