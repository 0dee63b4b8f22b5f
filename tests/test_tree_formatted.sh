#!/usr/bin/env bash
# The tree is kept formatted: every C, C++ and CUDA source as .clang-format writes it
# (scripts/format.sh --check --tree; `scripts/format.sh --tree` fixes it). Skips without
# clang-format (exit 77), or outside a git checkout (a source tarball).
. "$(dirname "$0")/lib.sh"
command -v clang-format >/dev/null || command -v clang-format-14 >/dev/null || skip "no clang-format"
git -C "$SRC" rev-parse --git-dir >/dev/null 2>&1 || skip "not a git checkout"
check "the tree is formatted" 0 ' 0 need formatting' -- "$SRC/scripts/format.sh" --check --tree
finish
