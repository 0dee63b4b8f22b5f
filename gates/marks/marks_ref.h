/* Marks the pull request cannot touch: they live on a branch only production writes
 * (KG_MARKS_BRANCH_DEFAULT), and the gates read them from a ref (`--marks-ref
 * origin/kgate-marks`) through libgit2, never from the checked-out file. Also where the marks
 * of a run came from (the report's marks_source) and `kgate marks guard` (a PR that edits the
 * marks file). */
#ifndef KG_MARKS_REF_H
#define KG_MARKS_REF_H

#include "git/git.h"
#include "marks/marks.h"

#ifdef __cplusplus
extern "C" {
#endif

#define KG_MARKS_BRANCH_DEFAULT "kgate-marks"
#define KG_MARKS_BRANCH_ENV "KGATE_MARKS_BRANCH"
#define KG_MARKS_BRANCH_HEAD "HEAD" /* --marks-branch HEAD: the checked-out branch */

/* The branch production commits marks on: `given` (--marks-branch), else $KGATE_MARKS_BRANCH,
 * else "kgate-marks". NULL for "HEAD" (the checked-out branch: kg_marks_git_opts.marks_ref). */
const char *kg_marks_branch_default(const char *given);
/* marks are committed only on a branch. `branch` (--marks-branch or
 * $KGATE_MARKS_BRANCH as given; NULL: the default) must be HEAD, refs/heads/NAME or a short
 * branch name NAME (not starting with '-', a valid refs/heads/NAME): a tag, remote-tracking
 * ref, note or any other ref is KG_EINVAL naming `flag` and what it is. */
int kg_marks_branch_check(const char *branch, const char *flag);

/* Where the marks a run decided against came from (the report's marks_source). */
typedef struct {
    const char *kind;               /* "file", "ref" or "none" */
    char path[1024];                /* the file; for a ref, the path inside its tree */
    char ref[256];                  /* kind "ref": the ref as given */
    char commit[GIT_OID_HEXSZ + 1]; /* kind "ref": the commit read */
} kg_marks_source;

void kg_marks_source_set_file(kg_marks_source *s, const char *path);
/* A new object: {kind, path[, ref, commit]}. */
cJSON *kg_marks_source_json(const kg_marks_source *s);

/* The marks in `path` (NULL: KG_MARKS_DEFAULT_PATH) at the commit `ref` names (a branch, a
 * remote-tracking ref like origin/kgate-marks, a sha) in the repository holding `repo_dir`
 * (NULL: the cwd). An unknown ref is KG_ENOTFOUND naming it and how to fetch it; a ref whose
 * tree lacks the file gives empty marks (every case NO_MARK). `src` (may be NULL) is filled. */
int kg_marks_load_ref(kg_marks **out, const char *repo_dir, const char *ref, const char *path,
                      kg_marks_source *src);

/* `kgate marks guard`: does the marks file of HEAD or of the work tree differ from the one at
 * `base` (the PR's target)? Fills the three versions (empty marks when absent) and which side
 * differs. A side that does not parse is NULL (head or work), its parser's message in
 * head_why / work_why. */
typedef struct {
    kg_marks *base, *head, *work; /* work is NULL for a bare repository */
    bool head_differs, work_differs;
    bool work_is_head; /* the work tree file is HEAD's, byte for byte */
    bool head_present, work_present, base_present;
    char base_commit[GIT_OID_HEXSZ + 1];
    char head_why[1024], work_why[1024]; /* why head / work is NULL although present */
} kg_marks_guard_result;

int kg_marks_guard(kg_marks_guard_result *r, kg_git *g, const char *base, const char *relpath);
void kg_marks_guard_result_free(kg_marks_guard_result *r);

#ifdef __cplusplus
}
#endif
#endif
