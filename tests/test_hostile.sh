#!/usr/bin/env bash
# Hostile inputs (issue 16): malformed, forged, unsigned and oversized reports, marks files,
# baselines, allowlists and flags. Each must exit 2 with a message naming the file, field or
# flag, never crash or hang, and leave the marks file and the repository (refs, objects, index,
# HEAD) byte-identical. Prints the campaign's table.
# Usage: test_hostile.sh KGATE KG_REPORT_SIGN
. "$(dirname "$0")/lib.sh"
KG=$(realpath "$1")
SIGN=$(realpath "$2")
git_isolate
# These checks cover commits on the checked-out branch (--marks-branch HEAD); the marks
# branch (kgate-marks, the default) is test_marks_branch.sh's.
export KGATE_MARKS_BRANCH=HEAD
unset KGATE_GIT_AUTHOR_NAME KGATE_GIT_AUTHOR_EMAIL KGATE_GIT_TOKEN
export KGATE_REPORT_KEY=hostile-key-$RANDOM$RANDOM-0123456789abcdef
DEV="NVIDIA H200/sm_90"
M=baselines/high_water.json
R=$T/repo; scratch_repo "$R"; cd "$R"
HEAD0=$(git rev-parse HEAD)
tried=0 refused=0 unchanged=0 crashes=0 hangs=0 accepted=0

# The signed production report every forgery starts from: two cases, every gate, the selftest.
base() {
    jq -n --arg dev "$DEV" --arg c "$HEAD0" '
      def rows($id; $m): [{gate: "parity", case: $id, verdict: "PASS", message: "", figures: {}},
        {gate: "preflight", case: $id, verdict: "PASS", message: "", figures: {}},
        {gate: "hotpath", case: $id, verdict: "PASS", message: "", figures: {}},
        {gate: "counters", case: $id, verdict: "PASS", message: "", figures: {decision: "OK",
          why: "", device_class: "x", kernels: 1, passes: 1, metrics: {}}},
        {gate: "bench", case: $id, verdict: "PASS", message: "", figures: {decision: "NO_MARK",
          metric: "time_us_warm", median_us: $m, ci_lo_us: ($m * 0.99), ci_hi_us: ($m * 1.02),
          band_rel: 0.01, samples: 200, processes: 3, env_lo_us: $m, env_hi_us: $m}}];
      {schema: "kgate-report/1", command: "run", mode: "production", certifying: true,
       run_id: "run-h", started_at: "2026-12-01T00:00:00Z", seed: 7,
       device: {class: $dev, driver_cuda_version: "13.0", runtime_version: "13.0"},
       provenance: {commit: $c}, gates: ["parity", "preflight", "hotpath", "bench", "counters"],
       results: ([{gate: "selftest", case: "defect/x", verdict: "PASS", message: "",
                   figures: {}}] + rows("a/n=1"; 10) + rows("b/n=2"; 20))}'
}
base >"$T/good.json" && "$SIGN" "$T/good.json" || die "cannot make the base report"
check "the base report advances" 0 "committed" -- "$KG" marks advance --from-report "$T/good.json"
HEAD1=$(git rev-parse HEAD)

state() { # the repository and the marks file, hashed
    (cd "$R" && git for-each-ref --format='%(objectname) %(refname)' && cat .git/HEAD &&
     find .git/objects .git/refs .git/index -type f 2>/dev/null | LC_ALL=C sort | xargs sha1sum &&
     sha1sum "$M" 2>/dev/null) | sha1sum
}
S0=$(state)

# hostile DESC PATTERN CMD...: exit 2, PATTERN in the output, no raw ESC, nothing changed.
hostile() {
    local desc=$1 pat=$2; shift 2
    tried=$((tried+1))
    timeout 30 "$@" >"$T/out" 2>"$T/err"; local rc=$?
    [ "$rc" -eq 124 ] && hangs=$((hangs+1))
    [ "$rc" -ge 128 ] && [ "$rc" -ne 124 ] && crashes=$((crashes+1))
    [ "$rc" -eq 0 ] && accepted=$((accepted+1))
    if [ "$rc" -eq 2 ]; then refused=$((refused+1)); ok; else bad "$desc: exit $rc, want 2"; cat "$T/out" "$T/err"; fi
    if grep -qE -- "$pat" "$T/out" "$T/err"; then ok; else bad "$desc: output lacks /$pat/"; cat "$T/out" "$T/err"; fi
    if grep -q $'\x1b' "$T/out" "$T/err"; then bad "$desc: a raw ESC reached the terminal"; else ok; fi
    if [ "$(state)" = "$S0" ]; then unchanged=$((unchanged+1)); ok; else bad "$desc: the repository or the marks file changed"; fi
}
# forged DESC PATTERN JQ [resign]: the base report edited by JQ (signed again unless "nosign")
forged() {
    local desc=$1 pat=$2 f=$3 sign=${4:-sign}
    base | jq "$f" >"$T/f.json" || die "$desc: jq"
    [ "$sign" = sign ] && { "$SIGN" "$T/f.json" || die "$desc: sign"; }
    hostile "$desc" "$pat" "$KG" marks advance --from-report "$T/f.json"
}
adv() { hostile "$1" "$2" "$KG" marks advance --from-report "$3"; }
mk() { printf '%s' "$2" >"$T/$1"; echo "$T/$1"; }
ESC=$'\x1b'

# ---- authenticity: unsigned, mis-signed, tampered ------------------------------------------
forged "unsigned report" "unsigned report" '.results[4].figures.median_us = 1e-300' nosign
forged "unsigned 1e-300 mark" "unsigned report" '(.results[] | select(.gate == "bench") | .figures) |= (.median_us = 1e-300 | .ci_lo_us = 1e-300 | .ci_hi_us = 1e-300)' nosign
jq '.results[4].figures.ci_hi_us = 5' "$T/good.json" >"$T/tamper.json"
adv "tampered after signing" "signature does not match" "$T/tamper.json"
KGATE_REPORT_KEY=another-key-0123456789abcdef hostile "signed with another key" "signature does not match" "$KG" marks advance --from-report "$T/good.json"
jq '.signature.value = "00"' "$T/good.json" >"$T/sig.json"; adv "malformed signature" "'signature'" "$T/sig.json"
jq '.signature.alg = "none"' "$T/good.json" >"$T/sig2.json"; adv "signature alg none" "'signature'" "$T/sig2.json"
env -u KGATE_REPORT_KEY "$KG" marks advance --from-report "$T/good.json" >"$T/out" 2>&1; rc=$?; tried=$((tried+1))
[ "$rc" -eq 2 ] && [ "$(state)" = "$S0" ] && grep -q "KGATE_REPORT_KEY is not set" "$T/out" && { refused=$((refused+1)); unchanged=$((unchanged+1)); ok; } || { bad "no key: not refused"; cat "$T/out"; }
# `kgate report --verify-signature` (the fork relay's check, issue #27 item 6): the signed base
# passes, an edited copy, another key and no key are refused.
"$KG" report --from "$T/good.json" --verify-signature >"$T/out" 2>&1 && grep -q "signature verified" "$T/out" \
    && ok || { bad "report --verify-signature: the signed base"; cat "$T/out"; }
hostile "report --verify-signature of an edited report" "signature does not match" "$KG" report --from "$T/tamper.json" --verify-signature
KGATE_REPORT_KEY=another-key-0123456789abcdef hostile "report --verify-signature, another key" "signature does not match" \
    "$KG" report --from "$T/good.json" --verify-signature
KGATE_REPORT_KEY= hostile "report --verify-signature without a key" "KGATE_REPORT_KEY" "$KG" report --from "$T/good.json" --verify-signature
KGATE_REPORT_KEY=short hostile "a key under 16 characters" "at least 16" "$KG" marks advance --from-report "$T/good.json"
KGATE_REPORT_KEY='                ' hostile "a key of 16 spaces" "other than white space" "$KG" marks advance --from-report "$T/good.json"
KGATE_REPORT_KEY=aaaaaaaaaaaaaaaaaaaa hostile "a key of one letter" "8 of them different" "$KG" marks advance --from-report "$T/good.json"
# ---- JSON that readers disagree on ---------------------------------------------------------
sed -E 's/"certifying":[[:space:]]*true,/"certifying": true, "certifying": false,/' "$T/good.json" >"$T/dup.json"
adv "duplicate certifying" "duplicate key: 'certifying'" "$T/dup.json"
sed -E 's/"mode":[[:space:]]*"production",/"mode": "diagnostic", "mode": "production",/' "$T/good.json" >"$T/dup2.json"
adv "duplicate mode" "duplicate key: 'mode'" "$T/dup2.json"
sed -E '0,/"median_us"/s/"median_us":[[:space:]]*([0-9.]+)/"median_us": \1, "median_us": 1/' "$T/good.json" >"$T/dup3.json"
adv "duplicate figure" "duplicate key: 'median_us'" "$T/dup3.json"
{ cat "$T/good.json"; echo '{"mode":"diagnostic"}'; } >"$T/trail.json"; adv "trailing JSON" "not valid JSON" "$T/trail.json"
{ cat "$T/good.json"; echo 'garbage'; } >"$T/trail2.json"; adv "trailing garbage" "not valid JSON" "$T/trail2.json"
{ head -c 200 "$T/good.json"; printf '\0'; tail -c +201 "$T/good.json"; } >"$T/nul.json"; adv "NUL byte" "NUL byte" "$T/nul.json"
adv "/dev/zero" "input size limit" /dev/zero
adv "a directory" "is a directory" "$T"
adv "a missing file" "cannot open" "$T/nosuch.json"
truncate -s 65M "$T/big.json"; adv "65 MiB sparse file" "input size limit" "$T/big.json"
printf '%*s' 3000 '' | tr ' ' '[' >"$T/deep.json"; adv "3000 nested arrays" "not valid JSON" "$T/deep.json"
head -c 300 "$T/good.json" >"$T/trunc.json"; adv "truncated" "not valid JSON" "$T/trunc.json"
mk nan.json '{"mode": NaN}' >/dev/null; adv "NaN" "NaN and Infinity" "$T/nan.json"
mk arr.json '[1,2,3]' >/dev/null; adv "top-level array" "not a kgate report" "$T/arr.json"
# ---- a production report's shape (signed, so only the checks stop it) ----------------------
forged "diagnostic report" "diagnostic \\(non-certifying\\)" '.mode = "diagnostic" | .certifying = false'
forged "no selftest rows" "no 'selftest' results" 'del(.results[0])'
forged "no gates list" "field 'gates' is missing" 'del(.gates)'
forged "gates partial" "lacks the gate 'hotpath'" '.gates = ["parity", "preflight", "bench", "counters"]'
forged "gates unknown" "not a gate" '.gates += ["lint"]'
forged "gates twice" "listed twice" '.gates += ["bench"]'
forged "invented commit" "not in the repository" '.provenance.commit = "0123456789abcdef0123456789abcdef01234567"'
forged "short commit" "provenance.commit" '.provenance.commit = "c0ffee"'
forged "no commit" "provenance.commit" 'del(.provenance.commit)'
forged "command parity" "kgate run" '.command = "parity"'
forged "wrong schema" "schema" '.schema = "kgate-report/0"'
forged "results not an array" "not a kgate report" '.results = {}'
forged "unknown verdict" "verdict" '.results[1].verdict = "MAYBE"'
# ---- what would commit a mark kgate could not load back -----------------------------------
B='(.results[] | select(.gate == "bench" and .case == "a/n=1"))'
forged "band_rel 0.9995" "'band_rel'" "$B.figures.band_rel = 0.9995"
forged "metric 'Time US'" "field 'metric'" "$B.figures.metric = \"Time US\""
forged "time metric higher_is_better" "a time is lower_is_better" "$B.figures.direction = \"higher_is_better\""
forged "direction nonsense" "figures.direction" "$B.figures.direction = \"sideways\""
forged "newline in a case id" "field 'case' contains a control character" '(.results[] | select(.case == "a/n=1") | .case) = "a\nb"'
forged "ESC in a case id" "control character" "(.results[] | select(.case == \"a/n=1\") | .case) = \"a${ESC}[31mred\""
forged "case id over 1 KiB" "at most 1024 bytes" "(.results[] | select(.case == \"a/n=1\") | .case) = (\"x\" * 1100)"
forged "empty case id" "field 'case' must be a non-empty" '(.results[] | select(.case == "a/n=1") | .case) = ""'
forged "newline in the device class" "field 'device_class' contains a control" '.device.class = "GPU\nX"'
forged "TAB in run_id" "field 'run_id' contains a control" '.run_id = "run\t1"'
forged "started_at yesterday" "field 'date' must be ISO 8601" '.started_at = "yesterday"'
forged "samples 3e9" "samples in \\[1, 2e9\\]" "$B.figures.samples = 3e9"
forged "samples 0.5" "samples" "$B.figures.samples = 0.5"
forged "ci_lo above the median" "ci_lo <= median" "$B.figures.ci_lo_us = 11"
forged "negative median" "ci_lo <= median" "$B.figures.median_us = -1"
forged "missing median" "median_us must be a finite number" "$B.figures |= del(.median_us)"
forged "newline in the driver" "field 'driver' contains a control" '.device.driver_cuda_version = "13\n0"'
# ---- flags and identities ------------------------------------------------------------------
hostile "--author with a newline" "--author" "$KG" marks advance --from-report "$T/good.json" --author $'Eve\nevil: header'
KGATE_GIT_AUTHOR_NAME=$'Eve\nx' hostile "KGATE_GIT_AUTHOR_NAME with a newline" "KGATE_GIT_AUTHOR_NAME" "$KG" marks advance --from-report "$T/good.json"
hostile "--email with an angle bracket" "--email" "$KG" marks advance --from-report "$T/good.json" --email 'a>b@x'
hostile "--email with a C1 control (NEL)" "--email" "$KG" marks advance --from-report "$T/good.json" --email $'a\xc2\x85b@x'
hostile "--author with a C1 control (CSI)" "--author" "$KG" marks advance --from-report "$T/good.json" --author $'Eve\xc2\x9b31m'
hostile "lower --reason with a newline" "--reason: contains a control" "$KG" marks lower --case a/n=1 --device "$DEV" --reason $'two\nlines' --to 50
hostile "lower --case with ESC" "--case: contains a control" "$KG" marks lower --case "a${ESC}[2J" --device "$DEV" --reason x
hostile "lower --reason over 1000 bytes" "--reason: at most" "$KG" marks lower --case a/n=1 --device "$DEV" --reason "$(printf '%*s' 1200 '' | tr ' ' r)"
# issue #28: a lowering within reason (a time to at most twice its mark, 10.2 here)
hostile "lower --to 1e30" "--to 1e\+30: more than 2x worse than the mark of a/n=1" "$KG" marks lower --case a/n=1 --device "$DEV" --reason x --to 1e30
hostile "lower --to 2^64" "--to 1.8[0-9]*e\+19: more than 2x worse" "$KG" marks lower --case a/n=1 --device "$DEV" --reason x --to 18446744073709551616
hostile "lower --to just over twice" "--to 20.5: more than 2x worse .*at most 20.4" "$KG" marks lower --case a/n=1 --device "$DEV" --reason x --to 20.5
hostile "lower --to a hex float" "--to: expected a number, got '0x1p5'" "$KG" marks lower --case a/n=1 --device "$DEV" --reason x --to 0x1p5
hostile "lower --to infinity" "--to: expected a number" "$KG" marks lower --case a/n=1 --device "$DEV" --reason x --to infinity
hostile "--marks-ref a..b" "not a valid reference" "$KG" marks advance --from-report "$T/good.json" --marks-ref 'a..b'
hostile "advance without --from-report" "--from-report" "$KG" marks advance
hostile "unknown flag" "unknown" "$KG" marks advance --from-report "$T/good.json" --frobnicate
for s in ' -1' '010' '0x10' '18446744073709551616' '' '+5' '1e3' '-0'; do
    hostile "--seed '$s'" "--seed: expected a non-negative integer" "$KG" parity --seed "$s"
done
# ---- marks files -----------------------------------------------------------------------------
good_marks=$(git show HEAD:$M)
mf() { printf '%s' "$2" >"$T/m-$1.json"; hostile "marks: $1" "$3" "$KG" marks show --marks "$T/m-$1.json"; }
mf dupkey "$(sed -E '0,/"value"/s/"value":[[:space:]]*([0-9.e+-]+)/"value": \1, "value": 1/' <<<"$good_marks")" "'value' appears twice"
mf trailing "$good_marks x" "not valid JSON"
mf band "$(jq '.marks[0].band_rel = 0.9995' <<<"$good_marks")" "'band_rel'"
mf direction "$(jq '.marks[0].direction = "higher_is_better"' <<<"$good_marks")" "direction must be lower_is_better"
mf newline "$(jq '.marks[0].case = "a\nb"' <<<"$good_marks")" "field 'case' contains a control"
mf esc "$(jq --arg e "$ESC" '.marks[0].case = ("a" + $e + "[31m")' <<<"$good_marks")" "control character"
mf samples "$(jq '.marks[0].samples = 3e9' <<<"$good_marks")" "'samples'"
mf dupmark "$(jq '.marks += [.marks[0]]' <<<"$good_marks")" "duplicate key"
hostile "marks: /dev/zero" "input size limit" "$KG" marks show --marks /dev/zero
hostile "marks: a directory" "is a directory" "$KG" marks show --marks "$T"
# ---- resource baseline and spill allowlist ---------------------------------------------------
pf() { printf '%s' "$3" >"$T/pf-$1.json"; hostile "preflight $2: $1" "$4" "$KG" preflight --static --filter '^axpy/' "--$2" "$T/pf-$1.json"; }
pf dup baseline '{"version": 1, "version": 1, "kernels": []}' "duplicate key: 'version'"
pf trailing baseline '{"version": 1, "kernels": []} []' "not valid JSON"
pf dup allowlist '{"version": 1, "entries": [], "entries": []}' "duplicate key: 'entries'"
pf trailing allowlist '{"version": 1, "entries": []}}' "not valid JSON"
hostile "preflight baseline /dev/zero" "input size limit" "$KG" preflight --static --baseline /dev/zero
# ---- reports given to the exporters ----------------------------------------------------------
hostile "report: duplicate key" "duplicate key" "$KG" report --from "$T/dup.json" --junit "$T/x.xml"
hostile "report: trailing bytes" "not valid JSON" "$KG" report --from "$T/trail.json" --markdown "$T/x.md"
hostile "report: /dev/zero" "input size limit" "$KG" report --from /dev/zero --html "$T/x.html"
hostile "report: a directory" "is a directory" "$KG" report --from "$T" --junit "$T/x.xml"
[ ! -e "$T/x.xml" ] && [ ! -e "$T/x.md" ] && [ ! -e "$T/x.html" ] && ok || bad "a refused report wrote an output"
# ---- a symlinked baselines/ never makes kgate write outside the repository -------------------
L=$T/linked; scratch_repo "$L"; mkdir -p "$T/outside"; ln -s "$T/outside" "$L/baselines"
git -C "$L" add baselines && git -C "$L" commit -qm "baselines link"
(cd "$L" && RC=$(git rev-parse HEAD) && jq --arg c "$RC" '.provenance.commit = $c' "$T/good.json" >"$T/l.json" && "$SIGN" "$T/l.json")
tried=$((tried+1))
(cd "$L" && "$KG" marks advance --from-report "$T/l.json") >"$T/out" 2>&1; rc=$?
[ "$rc" -eq 2 ] && grep -q "outside the work" "$T/out" && refused=$((refused+1)) && ok || { bad "symlinked baselines/: exit $rc"; cat "$T/out"; }
[ -z "$(ls -A "$T/outside")" ] && [ "$(git -C "$L" rev-list --count HEAD)" -eq 2 ] && unchanged=$((unchanged+1)) && ok || bad "symlinked baselines/: written outside or committed"

# Everything refused left the first commit as the only advance, and it still loads.
[ "$(git rev-parse HEAD)" = "$HEAD1" ] && ok || bad "HEAD moved"
"$KG" marks show >/dev/null && ok || bad "the committed marks do not load"
git fsck --strict --no-progress >"$T/fsck" 2>&1 && ok || { bad "git fsck"; cat "$T/fsck"; }
echo "hostile inputs: tried $tried, refused with exit 2: $refused, files unchanged: $unchanged, crashes: $crashes, hangs: $hangs, accepted: $accepted"
[ "$tried" -ge 60 ] && ok || bad "fewer than 60 hostile inputs ($tried)"
finish
