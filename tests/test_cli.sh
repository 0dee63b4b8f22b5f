#!/usr/bin/env bash
# CLI contract: usage errors exit 2 with a message naming the flag, nothing half-written;
# without a GPU a gate says so in one line and exits 3 with a report of SKIPs.
. "$(dirname "$0")/lib.sh"
KG=$1 LR=${2:-}
check "no command" 2 "usage:" -- "$KG"
check "unknown command" 2 "unknown command 'bogus'" -- "$KG" bogus
check "--help" 0 "usage:" -- "$KG" --help
check "--version" 0 "kgate [0-9]" -- "$KG" --version
check "list" 0 "case\(s\)" -- "$KG" list
# The runner reaches the driver only through entry points: it must start (list, the static
# preflight) where no driver is installed, so libcuda is never a dependency of the binary.
if command -v ldd >/dev/null 2>&1; then
    ldd "$KG" | grep -q 'libcuda\.so' && bad "$KG links libcuda: $(ldd "$KG" | grep libcuda)" || ok
fi
check "list filter" 0 "^axpy/" -- "$KG" list --filter '^axpy/'
check "list bad filter" 2 "matches no case" -- "$KG" list --filter 'no-such-case'
# Tags: --tag selects exactly, --filter matches a tag too, nothing else comes along.
check "list --tag" 0 "^gemm_bf16/" -- "$KG" list --tag compute
grep -vE '^(gemm_bf16/|case |[0-9]+ case)' "$T/out" && bad "list --tag compute lists a case without the tag"
check "list --filter on a tag" 0 "^gemm_bf16/" -- "$KG" list --filter '^tensor-core$'
check "list --tag with --filter" 0 "^1 case" -- "$KG" list --tag compute --filter 'm=1,n=1,'
check "list --tag none" 2 "--tag 'nope' matches no case" -- "$KG" list --tag nope
check "list --json tags" 0 "" -- "$KG" list --tag compute --json "$T/tags.json"
expect_jq '[.cases[] | .tags == "compute,tensor-core"] | all' "$T/tags.json" "list --json lacks the tags"
# The summary counts each result once: a WARN is not also a pass, and the counts add up.
check "preflight summary" 0 "" -- "$KG" preflight --static --filter '^axpy/' --report "$T/pfsum.json"
if line=$(grep -E '^preflight: [0-9]+ cases?: ' "$T/out"); then
    sum=$(sed -E 's/^preflight: [0-9]+ cases?: //; s/[^0-9 ]//g' <<<"$line" | tr -s ' ' '\n' | awk '{s += $1} END {print s}')
    tot=$(sed -E 's/^preflight: ([0-9]+) .*/\1/' <<<"$line")
    # per case, from the report (the console prints a row per kernel and architecture)
    npass=$(jq '[.results[] | select(.gate == "preflight" and .verdict == "PASS")] | length' "$T/pfsum.json")
    nwarn=$(jq '[.results[] | select(.gate == "preflight" and .verdict == "WARN")] | length' "$T/pfsum.json")
    [ "$sum" = "$tot" ] && [ "$tot" = $((npass + nwarn)) ] &&
        grep -qE ": $npass passed, $nwarn warnings, 0 failed, " <<<"$line" && ok ||
        bad "preflight summary does not add up ($sum of $tot; rows: $npass PASS, $nwarn WARN): $line"
else bad "preflight: no 'N cases: ...' summary"; cat "$T/out"; fi
# The static preflight needs no device and nothing random: no seed, no "no CUDA device" line.
expect_grep '^kgate preflight: [0-9]+ case\(s\), static \(no GPU needed\)$' "$T/out" "preflight --static: no 'static' banner"
grep -iE 'seed|no CUDA device' "$T/out" "$T/err" && bad "preflight --static prints a seed or 'no CUDA device'" || ok
# Each command's help ends with its own exit codes, not the gates' where they differ.
for c in "list" "report" "compare" "status" "comment" "history" "history append" "marks" "marks show" "marks guard"; do
    check "$c --help" 0 "" -- "$KG" $c --help
    grep -qE '^exit codes: ' "$T/out" && ! grep -q '1 a gate failed' "$T/out" && ok ||
        bad "$c --help: no exit-code footer of its own"
done
check "marks guard --help codes" 0 "^exit codes: 0 the marks file is the one at --base, 1 it changed" -- "$KG" marks guard --help
check "ab --help codes" 0 "^exit codes: 0 B not slower, 1 B slower" -- "$KG" ab --help
check "selftest --help codes" 0 "^exit codes: 0 every defect caught" -- "$KG" selftest --help
[ "$(grep -c '^exit codes:' "$T/out")" -eq 1 ] && ok || bad "selftest --help: its exit codes twice"
check "parity --help codes" 0 "^exit codes: 0 pass, 1 a gate failed, 2 usage or input error, 3 no GPU" -- "$KG" parity --help
# Colour (https://no-color.org): verdict words coloured on a terminal, never in a pipe or with
# NO_COLOR set; --color always|never (per command or before it) overrides both.
ESC=$(printf '\033')
PF=(preflight --static --filter '^axpy/')
check "no colour in a pipe" 0 "" -- "$KG" "${PF[@]}"
grep -q "$ESC" "$T/out" && bad "colour escapes in a pipe" || ok
check "--color always" 0 "" -- "$KG" "${PF[@]}" --color always
grep -qE "$ESC\[(32mPASS|33mWARN)$ESC\[0m" "$T/out" && ok || bad "--color always: no coloured verdict"
check "kgate --color=always CMD" 0 "" -- "$KG" --color=always "${PF[@]}"
grep -q "$ESC\[" "$T/out" && ok || bad "kgate --color=always CMD: no colour"
check "--color bogus" 2 "^kgate: --color: expected auto, always or never, got 'bogus'$" -- "$KG" "${PF[@]}" --color bogus
on_tty() { script -qec "$(printf '%q ' "$@")" /dev/null </dev/null; } # a pseudo-terminal
if command -v script >/dev/null 2>&1; then
    check "a terminal: colour" 0 "" -- on_tty "$KG" "${PF[@]}"
    grep -qE "$ESC\[(32mPASS|33mWARN)" "$T/out" && ok || bad "on a terminal: no coloured verdict"
    check "a terminal, NO_COLOR" 0 "" -- on_tty env NO_COLOR=1 "$KG" "${PF[@]}"
    grep -q "$ESC\[[0-9;]*m" "$T/out" && bad "NO_COLOR=1 on a terminal: colour" || ok
    check "a terminal, --color never" 0 "" -- on_tty "$KG" --color never "${PF[@]}"
    grep -q "$ESC\[[0-9;]*m" "$T/out" && bad "--color never on a terminal: colour" || ok
fi
# Outside CI the commit under test is HEAD of the repository kgate runs in, and uncommitted
# changes to its tracked files are said (untracked files, the report itself, are not).
git_isolate
scratch_repo "$T/wt"
wt_run() { (cd "$T/wt" && env -u GITHUB_SHA -u CI_COMMIT_SHA -u KGATE_COMMIT CUDA_VISIBLE_DEVICES= \
    "$KG" run --diagnostic --skip-selftest --filter '^axpy/n=1/' --report "$1" >/dev/null 2>&1); }
head=$(git -C "$T/wt" rev-parse HEAD)
wt_run "$T/wt/clean.json"
expect_jq ".provenance.commit == \"$head\" and (.provenance | has(\"local_changes\") | not)" \
    "$T/wt/clean.json" "a clean work tree: not HEAD, or local changes said"
echo edit >>"$T/wt/README"
wt_run "$T/wt/dirty.json"
expect_jq ".provenance.commit == \"$head\" and .provenance.local_changes == true" "$T/wt/dirty.json" \
    "an edited tracked file: local changes not said"
"$KG" report --from "$T/wt/dirty.json" --markdown - 2>/dev/null | grep -qF "\` + local changes" && ok \
    || bad "the summary does not say local changes"
# Without a GPU each gate that needs one says so under its header; the summary says what its
# results are (computed from the report, not written in).
check "run, no GPU" 3 "" -- env CUDA_VISIBLE_DEVICES= "$KG" run --diagnostic --skip-selftest --filter '^axpy/' --report "$T/run.json"
for g in parity hotpath bench counters; do
    grep -A1 "^== $g ==$" "$T/out" | grep -qE "^$g: every case SKIP \([0-9]+\): this gate needs a GPU" && ok ||
        bad "run without a GPU: nothing under '== $g =='"
done
[ "$(grep -c 'no CUDA device' "$T/out")" -eq 1 ] && ok || bad "run without a GPU: 'no CUDA device' not said once"
ncase=$(jq '[.results[] | select(.gate == "parity")] | length' "$T/run.json")
ngate=$(jq '[.results[].gate] | unique | length' "$T/run.json")
nres=$(jq '.results | length' "$T/run.json")
expect_grep "^run: $nres results = $ncase cases x $ngate gates: " "$T/out" "run: the summary does not say what its results are"
# Standard output holds one document: two outputs given '-' are refused before anything.
check "report two '-'" 2 "^kgate: report: --markdown - and --html -: only one output can go to standard output" \
    -- "$KG" report --from "$T/pfsum.json" --markdown - --html -
[ -s "$T/out" ] && bad "report --markdown - --html -: wrote to stdout" || ok
check "report one '-'" 0 "" -- "$KG" report --from "$T/pfsum.json" --markdown - --html "$T/pf.html"
expect_grep '^## kgate ' "$T/out" "report --markdown -: no Markdown on stdout"
# "-" is standard output for every output flag (as report and compare take it): no file named
# "-", and stdout is the JSON alone where the command writes nothing else there.
mkdir -p "$T/dash"
check -C "$T/dash" "list --json -" 0 "" -- "$KG" list --tag compute --json -
[ -e "$T/dash/-" ] && bad "list --json - created a file named '-'" || ok
expect_jq '.schema == "kgate-catalogue/1" and (.cases | length) > 0' "$T/out" "list --json -: stdout is not the catalogue"
check -C "$T/dash" "preflight --static --report -" 0 "" -- "$KG" preflight --static --filter '^axpy/' --report -
[ -e "$T/dash/-" ] && bad "preflight --report - created a file named '-'" || ok
expect_jq '.results | length > 0' "$T/out" "preflight --report -: stdout is not the report alone"
expect_grep '^kgate preflight: ' "$T/err" "preflight --report -: the table is not on stderr"
# Every command with a report and a console table: stdout is the report alone, the table on
# stderr (they were mixed: `--report - | jq` failed). Without a GPU (fast, the same path).
for c in parity hotpath bench counters "run --diagnostic --skip-selftest" \
         "selftest --filter ^defect/preflight/" "ab $KG $KG --rounds 3"; do
    # shellcheck disable=SC2086 # the command's words
    CUDA_VISIBLE_DEVICES= run timeout 300 "$KG" $c --filter '^(axpy/n=4097/|defect/preflight/)' --seed 3 --report -
    # (the selftest's rows are the preflight defects, all judged from the cubins: exit 0)
    want=3; [[ $c == selftest* ]] && want=0
    [ "$rc" -eq "$want" ] && jq -e '.results | length > 0' "$T/out" >/dev/null && [ -s "$T/err" ] && ok \
        || { bad "$c --report -: exit $rc (want $want), or stdout is not the report alone"; head -c 300 "$T/out"; }
done
# list's columns: every row's six cells (split on spaces outside quotes) start exactly under
# their headers, with ids of any length; a text cell with spaces or quotes is one quoted cell.
list_aligned() { # list_aligned FILE (a `list` output)
    awk 'function cells(s, st,    i, c, q, prev, n) {
             n = 0; q = 0; prev = " "
             for (i = 1; i <= length(s); i++) {
                 c = substr(s, i, 1)
                 if (!q && c != " " && prev == " ") st[++n] = i
                 if (q && c == "\\") { i++; prev = "x"; continue }
                 if (c == "\"") q = !q
                 prev = q ? "x" : c
             }
             return n
         }
         NR == 1 { p[1] = 1; p[2] = index($0, " ref ") + 1; p[3] = index($0, " parity ") + 1
                   p[4] = index($0, " MB moved ") + 1; p[5] = index($0, " GFLOP ") + 1
                   p[6] = index($0, " kernels") + 1; next }
         /^[0-9]+ case\(s\)$/ { next }
         { n = cells($0, st); ok = n == 6
           for (k = 1; ok && k <= 6; k++) ok = st[k] == p[k]
           if (!ok) { print "misaligned (" n " cells): " $0; bad = 1 } }
         END { exit bad }' "$1"
}
check "list (columns)" 0 "" -- "$KG" list
list_aligned "$T/out" && ok || bad "list: a row's columns do not start under the headers"
if [ -n "$LR" ]; then
    check "list long ids" 0 "^4 case" -- "$LR" list
    list_aligned "$T/out" && ok || bad "list with long ids: columns misaligned"
    expect_grep '^a_very_long_case_id/[^ ]*/bf16 +"cpu f64 \(first 1024 rows\)" +tolerance ' "$T/out" \
        "list: the long id's row or its quoted reference kind is wrong"
    expect_grep '^quoted/f32 +"say \\"hi\\"" +tolerance .* -$' "$T/out" "list: quotes not escaped"
    expect_grep ' "sgemm<64, 64, 8>",plain_kernel$' "$T/out" "list: a kernel name with spaces not quoted"
    expect_grep '^unset/f32 +- +tolerance' "$T/out" "list: no ref_kind is not '-'"
    check "list long ids --json" 0 "" -- "$LR" list --json "$T/lr.json"
    expect_jq '.cases[1].reference == "cpu f64 (first 1024 rows)" and .cases[0].kernels[0].name == "sgemm<64, 64, 8>"' \
        "$T/lr.json" "list --json: the reference kind or kernel name was altered"
fi
check "parity bad timeout" 2 "--case-timeout: expected seconds" -- "$KG" parity --case-timeout 0
# run takes every gate's flags (the bench's --budget, --band-floor), checked the same way.
check "run --budget" 3 "" -- "$KG" run --diagnostic --skip-selftest --budget 0.25 --band-floor 0.01 \
    --filter '^axpy/n=1/' --seed 1
check "run bad budget" 2 "--budget: expected seconds in .0, 3600., got '0'" -- "$KG" run --diagnostic --budget 0
# The selftest's certificate is for diagnostic runs; a production run always runs it fresh.
check "run --production --reuse-selftest" 2 "always runs its selftest fresh" -- "$KG" run --production --reuse-selftest
check "run --reuse-selftest --skip-selftest" 2 "one or the other" -- "$KG" run --diagnostic --reuse-selftest --skip-selftest
check "run bad max age" 2 "--selftest-max-age: expected hours" -- "$KG" run --diagnostic --reuse-selftest --selftest-max-age 0
# Without a GPU there is no certificate to take, and a fresh selftest runs (and says so).
check "run --reuse-selftest, no GPU" 3 "no certificate to reuse \\(no GPU\\)" -- "$KG" run --diagnostic --reuse-selftest --filter '^axpy/n=1/' --seed 1
# A usage error is the error and one usage line on stderr, nothing on stdout (not the whole
# help with the error scrolled away above it).
usage_err_short() { # usage_err_short CMD: $T/out and $T/err of a usage error of `kgate CMD`
    if [ ! -s "$T/out" ] && [ "$(wc -l <"$T/err")" -eq 2 ] &&
        [ "$(tail -n1 "$T/err")" = "usage: kgate $1 [options]; kgate $1 --help for more" ]; then ok
    else bad "$1: a usage error is not the message and one usage line on stderr"; cat "$T/out" "$T/err"; fi
}
for c in list parity report status selftest run ab; do
    check "$c unknown flag" 2 "^kgate: $c: unknown flag '--bogus'$" -- "$KG" $c --bogus && usage_err_short $c
done
check "marks show unknown flag" 2 "marks show: unknown flag '--bogus'" -- "$KG" marks show --bogus &&
    usage_err_short "marks show"
check "report flag without value" 2 "^kgate: report: flag '--from' needs a value$" -- "$KG" report --from &&
    usage_err_short report
check "parity --seed without value" 2 "^kgate: parity: flag '--seed' needs a value$" -- "$KG" parity --seed
# A runtime error speaks plainly; its source location ([http.c:185]) only for a debugger.
gh_down() { env -i PATH="$PATH" LD_LIBRARY_PATH="${LD_LIBRARY_PATH:-}" GITHUB_ACTIONS=true \
    GITHUB_API_URL=http://127.0.0.1:1 GITHUB_REPOSITORY=example/kernels GITHUB_REF=refs/pull/42/merge \
    GITHUB_TOKEN=x "$@"; }
H200=$SRC/tests/data/h200-run-report.json
check "comment, forge down" 4 "Couldn't connect" -- gh_down "$KG" comment --from-report "$H200" --retries 0
grep -E '\[[a-z_]+\.c:[0-9]+\]' "$T/err" && bad "a user's message shows a source location" || ok
check "--verbose: locations" 4 "\[http\.c:[0-9]+\]" -- gh_down "$KG" --verbose comment --from-report "$H200" --retries 0
check "KGATE_DEBUG=1: locations" 4 "\[http\.c:[0-9]+\]" -- gh_down KGATE_DEBUG=1 "$KG" comment --from-report "$H200" --retries 0
check "selftest missing defects" 2 "not found or not executable" -- "$KG" selftest --defects "$T/none"
check "selftest defects path too long" 2 "path too long" -- "$KG" selftest --defects "/$(printf 'a%.0s' $(seq 5000))"
check "parity --help" 0 "usage: kgate parity" -- "$KG" parity --help
check "parity unknown flag" 2 "'--bogus'" -- "$KG" parity --bogus
check "parity missing value" 2 "--filter" -- "$KG" parity --filter
check "parity filter no match" 2 "--filter 'zzz_nothing' matches no case" -- "$KG" parity --filter zzz_nothing
check "parity invalid regex" 2 "invalid regular expression" -- "$KG" parity --filter '(['
check "parity bad seed" 2 "--seed: expected a non-negative integer" -- "$KG" parity --seed 12abc
check "parity bad device" 2 "--device" -- "$KG" parity --device -3
check "parity stray arg" 2 "unexpected argument" -- "$KG" parity extra
check "parity unwritable report" 2 "cannot write there" -- "$KG" parity --report "$T/no/such/dir/r.json"
[ -e "$T/no/such/dir/r.json" ] && bad "report written under a missing dir"

# A real run: on a GPU machine it passes (0); without one, one clear line and exit 3.
run "$KG" parity --filter '^axpy/' --seed 5 --report "$T/r.json"
if [ "$rc" -eq 3 ]; then
    expect_no_gpu_line
    if grep -q '"verdict":[[:space:]]*"SKIP"' "$T/r.json" && grep -q '"no_device"' "$T/r.json" \
        && grep -q '"seed":[[:space:]]*5' "$T/r.json"; then ok
    else bad "no-GPU report lacks SKIP/no_device/seed"; cat "$T/r.json"; fi
elif [ "$rc" -eq 0 ]; then
    grep -q '"verdict":[[:space:]]*"PASS"' "$T/r.json" && ok || bad "GPU report lacks PASS"
else
    bad "parity run exit $rc"; cat "$T/out" "$T/err"
fi
finish
