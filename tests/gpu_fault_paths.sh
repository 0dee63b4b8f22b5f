#!/usr/bin/env bash
# gpu: the fault matrix's faults (kernels/defects/fault_matrix.cu) through the paths that run a
# case elsewhere than `kgate run`'s gates (gpu_fault_matrix.sh has those, class x phase x gate):
#   ab          the bench in child runners, 3 rounds of A and B
#   placements  `bench --placements 2`: the case set up again on fresh buffers
#   production  `run --production --bench-processes 2`: the bench in separate processes, and
#               the commit a fault must block
#   selftest    the selftest's own passes (its children of every gate, the bench's by id):
#               four classes in three phases of every gate, each a caught fault of its gate
# Each runs one bench fault per class, together covering every bench phase, and two
# cases that are clean in the bench (the counters' faults) after them: each fault is ERROR
# naming its class, each clean case is decided, the report is written and valid.
# Usage: gpu_fault_paths.sh KGATE_DEFECTS   (KG_FAULT_PATHS="ab placements ..." runs a part)
. "$(dirname "$0")/lib.sh"
DEF=$(realpath "$1")
export KGATE_FAULT_MATRIX=1
TO=${KG_MATRIX_TIMEOUT:-3}
PARTS=${KG_FAULT_PATHS:-ab placements production selftest}
SUB='^defect/faultmx/(bench/(setup/exit|prepare/host_segfault|launch/abort|capture/host_hang|replay/trap|replay/illegal_address|launch/assert|teardown/kernel_hang)|counters/(setup/exit|launch/trap))$'
has() { case " $PARTS " in *" $1 "*) return 0;; esac; return 1; }

# rows REPORT GATE WHAT: the subset's 10 rows of GATE in REPORT are right.
rows() {
    jq -r --arg g "$2" '.results[] | select(.gate == $g and (.case | startswith("defect/faultmx/")))
        | [.case, .verdict, (.message | gsub("[\t\n]"; " ")), (.figures.fault.class // "-")] | @tsv' \
        "$1" >"$T/rows"
    [ "$(wc -l <"$T/rows")" -eq 10 ] && ok || bad "$3: $(wc -l <"$T/rows") rows of $2, want 10"
    while IFS=$'\t' read -r id verdict msg cls; do
        IFS=/ read -r _ _ tg _ tcls <<<"$id"
        if [ "$tg" = bench ]; then
            w=$(fault_class_of "$tcls")
            [ "$verdict" = ERROR ] && [[ $msg == *"FAULT $w"* ]] && ok \
                || bad "$3: $id: $verdict '${msg:0:160}', want ERROR naming FAULT $w"
            [ "$2" = ab ] || [ "$cls" = "$w" ] && ok || bad "$3: $id: figures.fault.class '$cls', want $w"
        else
            [ "$verdict" != ERROR ] && ok || bad "$3: $id (clean in the bench): ERROR ${msg:0:160}"
        fi
    done <"$T/rows"
    printf '  %s\n' "$3:"; cut -c1-150 "$T/rows" | sed 's/^/    /'
}
# ran WHAT WANT_RC REPORT: the command exited WANT_RC and wrote a valid report
ran() {
    skip_if_no_gpu "$rc"
    [ "$rc" -eq "$2" ] && ok || { bad "$1: exit $rc, want $2"; tail -20 "$T/out"; }
    [ -s "$3" ] && valid_report "$3" && ok || bad "$1: no report, or it does not validate"
}

if has ab; then # the bench runs are children of ab: exit 4 with a whole report is a case's ERROR
    run "$DEF" ab --rounds 3 --budget 0.02 --case-timeout "$TO" --seed 11 --filter "$SUB" \
        --report "$T/ab.json" "$DEF" "$DEF"
    ran ab 4 "$T/ab.json"
    rows "$T/ab.json" ab ab
fi
if has placements; then
    run "$DEF" bench --placements 2 --budget 0.02 --case-timeout "$TO" --seed 11 --filter "$SUB" \
        --report "$T/pl.json"
    ran placements 4 "$T/pl.json"
    rows "$T/pl.json" bench "bench --placements 2"
fi
if has production; then
    # The selftest's runner without the matrix (its 150 faults are the selftest part's).
    printf '#!/bin/sh\nunset KGATE_FAULT_MATRIX\nexec "%s" "$@"\n' "$DEF" >"$T/defects"
    chmod +x "$T/defects"
    git_isolate
    export KGATE_MARKS_BRANCH=HEAD
    R=$T/scratch; scratch_repo "$R"
    (cd "$R" && "$DEF" run --production --bench-processes 2 --defects "$T/defects" --budget 0.02 \
        --case-timeout "$TO" --seed 11 --filter "$SUB" --report "$T/prod.json" >"$T/out" 2>&1); rc=$?
    ran production 4 "$T/prod.json"
    rows "$T/prod.json" bench "production bench"
    expect_jq '[.results[] | select(.gate == "bench" and .figures.fault != null)
                | (.figures.fault.process | type) == "number" and (.message | test("^bench process [12]: FAULT"))]
               | length == 8 and all' "$T/prod.json" "production: a fault row lacks its process"
    expect_jq '[.results[] | select(.gate == "bench" and .figures.fault == null) | .figures.processes == 2] | length == 2 and all' \
        "$T/prod.json" "production: a clean case was not combined from both processes"
    [ "$(git -C "$R" rev-list --count HEAD)" -eq 1 ] && [ ! -e "$R/baselines/high_water.json" ] && ok \
        || bad "production: a run with faults committed marks"
    expect_jq '(.marks_update.committed // false) == false' "$T/prod.json" "production: the report says committed"
fi
if has selftest; then # the selftest's children meet the faults: every one caught, exit 0
    STSUB='^defect/faultmx/(parity|hotpath|bench|counters)/(setup|launch|teardown)/(trap|exit|host_segfault|assert)$'
    run "$(dirname "$DEF")/kgate" selftest --defects "$DEF" --seed 11 --case-timeout 30 \
        --filter "$STSUB" --report "$T/st.json"
    ran selftest 0 "$T/st.json"
    expect_jq '.selftest | .caught == 48 and .escaped == 0 and .false_alarms == 0 and .not_run == 0' \
        "$T/st.json" "selftest: not 48 faults caught, or an escape, a false alarm, a cell not run"
    expect_jq '[.selftest.matrix[] | select(.case | startswith("defect/faultmx/"))
                | (.case | split("/")[2]) as $g | .outcome == "caught" and .observed[$g] == "ERROR"]
               | length == 48 and all' "$T/st.json" "selftest: a fault not ERROR in its own gate"
fi
finish "fault paths ($PARTS)"
