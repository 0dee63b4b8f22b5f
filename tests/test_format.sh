#!/usr/bin/env bash
# scripts/format.sh in a scratch repository holding the tree's .clang-format: --check passes
# on formatted changes and fails (exit 1, naming the file) on a planted badly formatted changed
# line and on a badly formatted untracked source; a line left badly formatted before the change
# is not the change's (only changed lines are checked); without --check the change is fixed.
# --tree checks every source whole. Skips without clang-format. (test_tree_formatted runs
# `format.sh --check --tree` over the tree itself.)
. "$(dirname "$0")/lib.sh"
command -v clang-format >/dev/null || command -v clang-format-14 >/dev/null || skip "no clang-format"
git_isolate
R=$T/repo
scratch_repo "$R"
mkdir -p "$R/scripts" "$R/src"
cp "$SRC/.clang-format" "$R/"
cp "$SRC/scripts/format.sh" "$R/scripts/"
cat >"$R/src/a.c" <<'C'
/* Old code, badly formatted before the change: not the change's to fix. */
int old_one(int x) {   return x+1; }

static int kg_two(int a, int b)
{
    if (a > b)
        return a;
    return b;
}
C
git -C "$R" add -A && git -C "$R" commit -qm "base"
F=$R/scripts/format.sh

check "no change" 0 'no C/C\+\+/CUDA source changed' -- "$F" --check
cat >>"$R/src/a.c" <<'C'

static int kg_three(int a)
{
    int b = a * 3;
    return b;
}
C
check "a formatted change" 0 '1 file\(s\) checked, 0 need formatting' -- "$F" --check
printf '\nstatic int kg_four(int a) {return a*4;}\n' >>"$R/src/a.c"
check "a badly formatted changed line" 1 'src/a.c' -- "$F" --check
expect_grep '1 need formatting' "$T/out" "the count of files"
git -C "$R" diff --quiet -- src/a.c && bad "--check wrote the file" || ok
check "--whole also sees the old line" 1 'int old_one\(int x\) \{' -- "$F" --check --whole
check "formatting the change" 0 'formatted 1 file' -- "$F"
expect_grep '^static int kg_four\(int a\) \{ return a \* 4; \}$' "$R/src/a.c" "the changed lines formatted"
expect_grep '^int old_one\(int x\) \{   return x\+1; \}$' "$R/src/a.c" "the old line left alone"
check "after formatting" 0 '0 need formatting' -- "$F" --check
printf 'int kg_new(void) {return 0;}\n' >"$R/src/new.c"
printf 'int kg_b(void);\n' >"$R/src/b.h" && git -C "$R" add src/b.h
check "an untracked source" 1 'new.c' -- "$F" --check
check "--tree sees every source" 1 'int old_one\(int x\) \{' -- "$F" --check --tree
expect_grep '3 file\(s\) checked, 2 need formatting' "$T/out" "--tree's count (a.c, new.c; b.h clean)"
check "a named file" 1 'src/a.c' -- "$F" --check "$R/src/a.c"
check "a bad --base" 2 'no such commit' -- "$F" --check --base nope
check "an unknown flag" 2 'unknown flag --bogus' -- "$F" --bogus
finish
