# The helpers every shell test shares. Source it first: . "$(dirname "$0")/lib.sh"
#
# It sets -u and gives the test:
#   T          a fresh temporary folder, removed at exit (KG_KEEP=1 keeps it and says where);
#              on_exit CMD adds a command to run before that (e.g. stopping a server)
#   SRC        the source tree (KG_SOURCE_DIR from CTest, else the folder above tests/)
#   pass fail  the counters; ok counts a pass, bad MSG prints "FAIL: MSG" and counts a failure,
#              die MSG prints it and exits 1 at once, finish [WORDS] prints
#              "<test>: [WORDS, ]N passed, M failed" and exits 0 only when nothing failed
#   run CMD...             run CMD, stdout in $T/out, stderr in $T/err, exit status in $rc
#   check [-C DIR] DESC CODE PATTERN -- CMD...
#                          run CMD (in DIR); a pass when it exits CODE and (PATTERN non-empty)
#                          its stdout or stderr matches the extended regex PATTERN; otherwise
#                          a failure showing both; returns 1 on failure
#   expect_rc CODE CMD...  check with no pattern, CMD itself as the description
#   expect_grep PATTERN FILE [DESC]   FILE matches the extended regex PATTERN
#   expect_jq FILTER FILE [DESC]      jq -e FILTER FILE is true (also: a bad FILTER or FILE fails)
#   expect_no_gpu_line [DESC]         the no-GPU contract of the last run: exactly one
#                          'no CUDA device' line on stdout, stderr empty
#   skip MSG               print "MSG: skipped" and exit 77 (CTest's SKIP_RETURN_CODE)
#   skip_if_no_gpu RC      skip when a kgate command exited 3 (no CUDA device)
#   git_isolate            git reads only $T/gitconfig (GIT_CONFIG_GLOBAL, no system config),
#                          with a test identity and init.defaultBranch main
#   scratch_repo DIR       (re)create DIR as a git repository with one commit (README)
#   cmake_cache VAR        VAR's value in $KG_BUILD_DIR/CMakeCache.txt (empty when unset)
#   valid_report FILE      FILE validates against baselines/report.schema.json (python3's
#                          jsonschema; a failure when it is missing)
#   fault_class_of CLASS   the figures.fault.class a planted fault class must be reported as
#                          (kernels/defects/fault_matrix.cu: illegal_address -> cuda, ...)
set -u
SRC=${KG_SOURCE_DIR:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}
KG_TEST=$(basename "$0" .sh)
T=$(mktemp -d)
pass=0 fail=0 rc=0
_kg_on_exit=()

on_exit() { _kg_on_exit+=("$*"); }
_kg_cleanup() {
    local c
    for c in ${_kg_on_exit[@]+"${_kg_on_exit[@]}"}; do eval "$c"; done
    if [ -n "${KG_KEEP:-}" ]; then echo "$KG_TEST: kept $T"; else rm -rf "$T"; fi
}
trap _kg_cleanup EXIT

ok() { pass=$((pass+1)); }
bad() { echo "FAIL: $*"; fail=$((fail+1)); }
die() { echo "FAIL: $*"; exit 1; }
finish() {
    echo "$KG_TEST: ${*:+$*, }$pass passed, $fail failed"
    [ "$fail" -eq 0 ]
    exit
}
skip() { echo "$*: skipped"; exit 77; }
skip_if_no_gpu() { [ "$1" -eq 3 ] && skip "no GPU"; return 0; }

run() { "$@" >"$T/out" 2>"$T/err"; rc=$?; }

check() {
    local dir=
    if [ "$1" = -C ]; then dir=$2; shift 2; fi
    local desc=$1 want=$2 pat=$3; shift 4
    if [ -n "$dir" ]; then run _kg_in "$dir" "$@"; else run "$@"; fi
    if [ "$rc" -ne "$want" ]; then
        bad "$desc: exit $rc, want $want"; cat "$T/out" "$T/err"; return 1
    fi
    if [ -n "$pat" ] && ! grep -qE -- "$pat" "$T/out" "$T/err"; then
        bad "$desc: output lacks /$pat/"; cat "$T/out" "$T/err"; return 1
    fi
    ok
}
_kg_in() { (cd "$1" && shift && "$@"); }
expect_rc() { local want=$1; shift; check "$*" "$want" "" -- "$@"; }
expect_grep() {
    if grep -qE -- "$1" "$2"; then ok; else bad "${3:-$2 lacks /$1/}"; return 1; fi
}
expect_jq() {
    if jq -e "$1" "$2" >/dev/null; then ok; else bad "${3:-$2: not true: $1}"; return 1; fi
}
expect_no_gpu_line() {
    if [ "$(grep -c 'no CUDA device' "$T/out")" -eq 1 ] && [ ! -s "$T/err" ]; then ok; else
        bad "${1:-no-GPU run should say so in one line, stderr empty}"; cat "$T/out" "$T/err"; return 1
    fi
}

git_isolate() {
    export GIT_CONFIG_GLOBAL=$T/gitconfig GIT_CONFIG_NOSYSTEM=1
    git config --global user.name "Test Setup"
    git config --global user.email setup@example.com
    git config --global init.defaultBranch main
}
scratch_repo() {
    rm -rf "$1"; mkdir -p "$1"; git -C "$1" init -q
    echo "scratch" >"$1/README"; git -C "$1" add README; git -C "$1" commit -qm "initial"
}

cmake_cache() { sed -n "s/^$1:[A-Z]*=//p" "${KG_BUILD_DIR:?}/CMakeCache.txt" | head -n 1; }

valid_report() {
    python3 - "$SRC/baselines/report.schema.json" "$1" <<'PY'
import json, sys, jsonschema
jsonschema.validate(json.load(open(sys.argv[2])), json.load(open(sys.argv[1])))
PY
}

fault_class_of() {
    case $1 in illegal_address|trap|assert) echo cuda;; kernel_hang|host_hang) echo timeout;;
               host_segfault|abort) echo signal;; exit) echo exit;; *) echo "?";; esac
}
