#!/usr/bin/env bash
# Format C, C++ and CUDA sources with the tree's .clang-format.
#
#   scripts/format.sh [--check] [--whole | --tree] [--base REF] [FILE ...]
#
# Without FILEs: the lines changed since REF (default: the merge base with main), committed or
# not, through clang-format-diff; untracked sources whole. --whole formats the changed files
# whole. --tree: every tracked and untracked source whole (the tree is kept formatted:
# test_tree_formatted runs `--check --tree`). FILEs: those files, whole. --check writes
# nothing: it shows what formatting would change and exits 1 when anything would. Exit codes:
# 0 nothing to change (or formatted), 1 --check found changes, 2 usage error or no
# clang-format. CLANG_FORMAT / CLANG_FORMAT_DIFF pick the binaries.
set -uo pipefail
usage() { echo "usage: scripts/format.sh [--check] [--whole | --tree] [--base REF] [FILE ...]" >&2; exit 2; }
check=0 whole=0 tree=0 base=
while [ $# -gt 0 ]; do
    case $1 in
    --check) check=1; shift ;;
    --whole) whole=1; shift ;;
    --tree) tree=1; shift ;;
    --base) [ $# -ge 2 ] || { echo "format.sh: --base needs a value (a git ref)" >&2; usage; }
            base=$2; shift 2 ;;
    -h|--help) sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    --) shift; break ;;
    -*) echo "format.sh: unknown flag $1" >&2; usage ;;
    *) break ;;
    esac
done
ROOT=$(cd "$(dirname "$0")/.." && pwd)
find_tool() { # VAR-value candidates...
    local c
    [ -n "$1" ] && { command -v "$1" >/dev/null && echo "$1"; return; }
    shift
    for c in "$@"; do command -v "$c" >/dev/null && { echo "$c"; return; }; done
}
CF=$(find_tool "${CLANG_FORMAT:-}" clang-format clang-format-14)
[ -n "$CF" ] || { echo "format.sh: clang-format not found (apt-get install clang-format, or set CLANG_FORMAT)" >&2; exit 2; }

is_source() { case $1 in *.c|*.h|*.cpp|*.hpp|*.cu|*.cuh) return 0 ;; esac; return 1; }
bad=0 n=0
whole_file() { # FILE: check or format it whole
    n=$((n + 1))
    if [ "$check" -eq 0 ]; then
        "$CF" -i --style=file "$1" || exit 2
        return
    fi
    local out
    out=$("$CF" --style=file --assume-filename="$1" <"$1") || { echo "format.sh: $CF failed on $1" >&2; exit 2; }
    if ! diff -u --label "$1" --label "$1 (formatted)" "$1" - <<<"$out"; then
        bad=$((bad + 1))
    fi
}

if [ "$tree" -eq 1 ]; then
    [ $# -eq 0 ] || { echo "format.sh: --tree takes no FILEs" >&2; usage; }
    while IFS= read -r f; do
        is_source "$f" && [ -f "$ROOT/$f" ] && whole_file "$ROOT/$f"
    done < <(git -C "$ROOT" ls-files --cached --others --exclude-standard)
elif [ $# -gt 0 ]; then
    for f in "$@"; do
        [ -f "$f" ] || { echo "format.sh: $f: no such file" >&2; exit 2; }
        whole_file "$f"
    done
else
    [ -n "$base" ] || base=$(git -C "$ROOT" merge-base HEAD main 2>/dev/null) ||
        { echo "format.sh: no merge base with main: give --base REF or name the files" >&2; exit 2; }
    git -C "$ROOT" rev-parse --verify -q "$base^{commit}" >/dev/null ||
        { echo "format.sh: --base $base: no such commit" >&2; exit 2; }
    changed=() untracked=()
    while IFS= read -r f; do
        is_source "$f" && [ -f "$ROOT/$f" ] && changed+=("$f")
    done < <(git -C "$ROOT" diff --name-only --diff-filter=d "$base" --)
    while IFS= read -r f; do
        is_source "$f" && untracked+=("$f")
    done < <(git -C "$ROOT" ls-files --others --exclude-standard)
    for f in ${untracked[@]+"${untracked[@]}"}; do whole_file "$ROOT/$f"; done
    if [ "$whole" -eq 1 ]; then
        for f in ${changed[@]+"${changed[@]}"}; do whole_file "$ROOT/$f"; done
    elif [ ${#changed[@]} -gt 0 ]; then
        CFD=$(find_tool "${CLANG_FORMAT_DIFF:-}" clang-format-diff clang-format-diff-14)
        [ -n "$CFD" ] || { echo "format.sh: clang-format-diff not found (it comes with clang-format; or use --whole)" >&2; exit 2; }
        n=$((n + ${#changed[@]}))
        patch=$(cd "$ROOT" && git diff -U0 --no-color "$base" -- "${changed[@]}" |
                "$CFD" -p1 -binary "$CF" $([ "$check" -eq 0 ] && echo -i)) ||
            { echo "format.sh: $CFD failed" >&2; exit 2; }
        if [ -n "$patch" ]; then
            printf '%s\n' "$patch"
            bad=$((bad + $(grep -c '^+++ ' <<<"$patch")))
        fi
    fi
fi
[ "$n" -gt 0 ] || { echo "format.sh: no C/C++/CUDA source changed"; exit 0; }
if [ "$check" -eq 0 ]; then
    echo "format.sh: formatted $n file(s)"
    exit 0
fi
echo "format.sh: $n file(s) checked, $bad need formatting"
[ "$bad" -eq 0 ]
