# The sections of scripts/hostile-campaign.sh (sourced by it: its counters, attempt, report).
# Each section is one or two items of issue #28; q QUICK FULL sets its counts.

# 1. Replay, freshness, ancestry: an old signed report never undoes a lowering.
sec_replay() {
    section "1. replay, freshness, ancestry"
    local R=$T/replay i k rid st c med s0
    scratch_repo "$R"; cd "$R" || return
    export KGATE_MARKS_BRANCH=HEAD
    c=$(git rev-parse HEAD)
    report "$T/o1.json" run-o1 2026-12-01T00:00:00Z "$c" "a/n=1:NO_MARK:10"
    attempt ok 0 committed -- "$KG" marks advance --from-report "$T/o1.json"
    report "$T/o2.json" run-o2 2026-12-01T00:00:00Z "$c" "a/n=1:IMPROVED:9"
    attempt ok 0 "lowered" -- "$KG" marks lower --case a/n=1 --device "$DEV" --to 12 --reason "driver 590 is slower"
    git commit -q --allow-empty -m "code 1"; local code1; code1=$(git rev-parse HEAD)
    git commit -q --allow-empty -m "code 2"
    s0=$(state "$R")
    attempt forge 2 "refused by the replay rule" -- "$KG" marks advance --from-report "$T/o1.json"
    attempt forge 2 "refused by the freshness rule" -- "$KG" marks advance --from-report "$T/o2.json"
    for i in $(seq "$(q 2 30)"); do
        k=$((RANDOM % 5)) rid=run-r$i c=$(git rev-parse HEAD) med=$((RANDOM % 9 + 1)).$((RANDOM % 10))
        case $k in
        0) rid=run-o1 st=2026-12-0$((RANDOM % 2 + 1))T0$((RANDOM % 10)):00:00Z ;; # the applied id, new content
        1) st=20$((RANDOM % 6 + 20))-0$((RANDOM % 9 + 1))-1$((RANDOM % 9))T00:00:00Z ;; # before the lowering
        2) st=2$((RANDOM % 8 + 1))$((RANDOM % 10))$((RANDOM % 10))-01-01T00:00:00Z ;; # from the future
        3) rid="run $i Kgate-Lowered: {}" st=$(now) ;; # a run id that would forge a trailer
        4) rid=run-o1 st=$(now) ;; # the applied run again, started now
        esac
        report "$T/r.json" "$rid" "$st" "$c" "a/n=1:IMPROVED:$med"
        attempt forge 2 "refused by the (replay|freshness) rule" -- "$KG" marks advance --from-report "$T/r.json"
        unchanged "$R" "$s0" "replay $i (kind $k)"
    done
    [ "$(markval . HEAD a/n=1)" = 12 ] && ok || { forged=$((forged+1)); bad "the lowering was undone: $(markval . HEAD a/n=1)"; }
    # Ancestry: a mark set from newer code never moves for older or side-branch code.
    git checkout -q -b side "$code1"; git commit -q --allow-empty -m "side"; local sidec; sidec=$(git rev-parse HEAD)
    git checkout -q main
    sleep 1
    report "$T/o5.json" run-o5 "$(now)" "$(git rev-parse HEAD)" "a/n=1:IMPROVED:9"
    attempt ok 0 "12 -> 9.09" -- "$KG" marks advance --from-report "$T/o5.json"
    s0=$(state "$R")
    for i in $(seq "$(q 1 10)"); do
        k=$((RANDOM % 4)) med=$((RANDOM % 8 + 1)).$((RANDOM % 10))
        case $k in
        0) c=$code1 rid=run-a$i ;;
        1) c=$sidec rid=run-a$i ;;
        2) c=$(hexr 10) rid=run-a$i ;;
        3) c=$(git rev-parse HEAD) rid=run-o5 ;;
        esac
        report "$T/r.json" "$rid" "$(now)" "$c" "a/n=1:IMPROVED:$med"
        attempt forge 2 "refused by the (ancestry|replay) rule|not in the (repository|history of)" -- "$KG" marks advance --from-report "$T/r.json"
        unchanged "$R" "$s0" "ancestry $i (kind $k)"
    done
    unset KGATE_MARKS_BRANCH
}

# 6. Signed but edited: seeded mutants of one signed report. Only a copy that holds exactly
# the signed content may be accepted.
sec_edited() {
    section "6. signed but edited"
    local R=$T/edited n f kind same s0 h0
    scratch_repo "$R"; cd "$R" || return
    export KGATE_MARKS_BRANCH=HEAD
    h0=$(git rev-parse HEAD)
    report "$T/e.json" run-e1 "$(now)" "$h0" "a/n=1:NO_MARK:10" "b/n=2:IMPROVED:20"
    jq '.results[5].figures.note = null | .device.note = null' "$T/e.json" >"$T/e2.json" && mv "$T/e2.json" "$T/e.json"
    "$SIGN" "$T/e.json" || die "signing the base report"
    attempt ok 0 committed -- "$KG" marks advance --from-report "$T/e.json"
    git reset -q --hard "$h0"
    s0=$(state "$R")
    n=$(q 12 240)
    $HELP mutate "$T/e.json" "$T/mut" "$n" "$seed" || die "mutate"
    while read -r f kind same; do
        if [ "$same" = 1 ]; then
            attempt ok 0 "" -- "$KG" marks advance --from-report "$f" || true
            git reset -q --hard "$h0"; s0=$(state "$R")
        else
            attempt forge 2 "" -- "$KG" marks advance --from-report "$f"
            unchanged "$R" "$s0" "mutant $f ($kind)"
        fi
        [ "$(state "$R")" = "$s0" ] || { git reset -q --hard "$h0"; s0=$(state "$R"); } # its objects stay
    done <"$T/mut/index.tsv"
    echo "  mutants: $n, $(awk '$3 == 1' "$T/mut/index.tsv" | wc -l) of them the signed content in other bytes"
    unset KGATE_MARKS_BRANCH
}

# 3. --marks-branch (and KGATE_MARKS_BRANCH) moves only a branch.
sec_branch() {
    section "3. --marks-branch"
    local R=$T/branch b s0 i
    scratch_repo "$R"; cd "$R" || return
    git tag v1; git update-ref refs/remotes/origin/x HEAD; git update-ref refs/notes/commits HEAD
    report "$T/b.json" run-b1 "$(now)" "$(git rev-parse HEAD)" "a/n=1:NO_MARK:10"
    s0=$(state "$R")
    local names=(refs/tags/v1 refs/remotes/origin/x refs/notes/commits refs/heads/ refs/heads/HEAD -x
                 'a..b' 'refs/heads/../tags/v1' 'main^' 'HEAD~1' '@{-1}' ':/x' 'refs/pull/1/head'
                 'refs/kgate/x' $'main\nx' $'ma\x1bin' 'refs/tags/v1 ' ' refs/tags/v1' 'refs//heads/x'
                 'refs/heads/x.lock' "$(printf 'x%.0s' $(seq 5000))" 'refs/heads/a/' '/refs/heads/a'
                 $'caf\xe9' 'refs/tags/' 'tags/v1' 'remotes/origin/x' 'refs/stash' 'FETCH_HEAD' 'ORIG_HEAD')
    [ "$quick" = 1 ] && names=("${names[@]:0:6}")
    for i in $(seq "$(q 0 16)"); do # random refs outside refs/heads
        names+=("refs/$(printf '%s' tags remotes/origin notes pull merge-requests kgate | fold -w4 | head -1)$((RANDOM % 3))/$(hexr 2)")
    done
    for b in "${names[@]}"; do
        attempt input 2 "marks-branch" -- "$KG" marks advance --from-report "$T/b.json" --marks-branch "$b"
        unchanged "$R" "$s0" "--marks-branch $b"
    done
    local envs=(refs/tags/v1 refs/remotes/origin/x 'a..b' $'x\ny')
    [ "$quick" = 1 ] && envs=(refs/tags/v1)
    for b in "${envs[@]}"; do
        attempt input 2 "KGATE_MARKS_BRANCH" -- env KGATE_MARKS_BRANCH="$b" "$KG" marks advance --from-report "$T/b.json"
        attempt input 2 "marks-branch" -- "$KG" marks lower --case a/n=1 --device "$DEV" --to 30 --reason x --marks-branch "$b"
        unchanged "$R" "$s0" "KGATE_MARKS_BRANCH $b"
    done
    [ "$(git rev-parse v1)" = "$(git rev-parse main)" ] && ok || { lost=$((lost+1)); bad "the tag moved"; }
}

# 8. Flags and variables: control characters, invalid UTF-8, huge and non-finite values.
sec_flags() {
    section "8. flags and variables"
    local R=$T/flags v f s0 i
    scratch_repo "$R"; cd "$R" || return
    export KGATE_MARKS_BRANCH=HEAD
    report "$T/f.json" run-f1 "$(now)" "$(git rev-parse HEAD)" "a/n=1:NO_MARK:10"
    attempt ok 0 committed -- "$KG" marks advance --from-report "$T/f.json"
    s0=$(state "$R")
    local bads=($'a\nb' $'a\rb' $'\x1b[31mred' $'x\x7f' $'caf\xe9' $'\xc0\xaf' $'\xed\xa0\x80' $'a\tb'
                $'x\xc2\x85' $'x\xc2\x9b31m' "$(printf 'r%.0s' $(seq 3000))")
    [ "$quick" = 1 ] && bads=($'a\nb' $'caf\xe9')
    for i in $(seq "$(q 0 6)"); do # random byte strings, each with a control or invalid byte
        bads+=("$(printf "x\\x$(printf '%02x' $((RANDOM % 32)))\\x$(printf '%02x' $((RANDOM % 64 + 192)))y")")
    done
    for v in "${bads[@]}"; do
        for f in reason author case device; do
            local args=(--case a/n=1 --device "$DEV" --to 50 --reason ok)
            case $f in reason) args[7]=$v ;; case) args[1]=$v ;; device) args[3]=$v ;; author) args+=(--author "$v") ;; esac
            attempt input 2 "--$f" -- "$KG" marks lower "${args[@]}"
        done
        attempt input 2 "--email" -- "$KG" marks advance --from-report "$T/f.json" --email "$v@x"
        attempt input 2 "KGATE_GIT_AUTHOR_NAME" -- env KGATE_GIT_AUTHOR_NAME="$v" "$KG" marks advance --from-report "$T/f.json"
        unchanged "$R" "$s0" "flag value $(printf %q "$v" | head -c 40)"
    done
    local nums=(1e999 -1e999 nan inf 18446744073709551616 -1 0x10 '' ' 5' 5x 1e30 -0.0000001 0x1p5 infinity $'\t7')
    [ "$quick" = 1 ] && nums=(1e999 -1)
    for v in "${nums[@]}"; do
        attempt input 2 "--to" -- "$KG" marks lower --case a/n=1 --device "$DEV" --reason x --to "$v"
        attempt input 2 "--seed" -- "$KG" parity --seed "$v"
        attempt input 2 "--timeout" -- "$KG" status --from-report "$T/f.json" --timeout "$v" --dry-run
    done
    attempt input 2 "KGATE_REPORT_KEY" -- env KGATE_REPORT_KEY='                ' "$KG" marks advance --from-report "$T/f.json"
    attempt input 2 "KGATE_REPORT_KEY" -- env KGATE_REPORT_KEY=aaaaaaaaaaaaaaaaaaaaaaaa "$KG" marks advance --from-report "$T/f.json"
    # report --from X --junit X (and through another name) never overwrites its input
    cp "$T/f.json" "$T/self.json"; ln -f "$T/self.json" "$T/self-link.json"; ln -sf "$T/self.json" "$T/self-sym.json"
    local h; h=$(sha1sum <"$T/self.json")
    for o in $(q junit "junit markdown html"); do
        for n in self $(q "" "self-link self-sym"); do
            attempt input 2 "" -- "$KG" report --from "$T/self.json" "--$o" "$T/$n.json"
        done
    done
    [ "$(sha1sum <"$T/self.json")" = "$h" ] && ok || { lost=$((lost+1)); bad "report overwrote its input"; }
    # marks files with a BOM, invalid UTF-8, a NUL
    # (printf escapes, not bash strings: a bash string cannot hold NUL; the writer puts a TAB
    # after "case": so the edit matches any white space)
    local lead=('\xef\xbb\xbf' '\xff' '\xc0\xaf' '\x00')
    [ "$quick" = 1 ] && lead=('\xef\xbb\xbf')
    for v in "${lead[@]}"; do
        { printf "$v"; git show "HEAD:$M"; } >"$T/mk.json"
        attempt input 2 "mk.json" -- "$KG" marks show --marks "$T/mk.json"
        [ "$v" = '\xef\xbb\xbf' ] && continue # U+FEFF inside a string is a character, not a BOM
        git show "HEAD:$M" | sed "0,/\"case\":[[:space:]]*\"/s//\"case\": \"$v/" >"$T/mk.json"
        cmp -s "$T/mk.json" <(git show "HEAD:$M") && { bad "marks file edit $v changed nothing"; continue; }
        attempt input 2 "mk.json" -- "$KG" marks show --marks "$T/mk.json"
    done
    unchanged "$R" "$s0" "marks files"
    unset KGATE_MARKS_BRANCH
}

# 4, 5, 9. selftest children that crash, hang, write refused reports or print their environment.
sec_children() {
    section "4, 5, 9. selftest children"
    local FAKE=$T/fake-defects m
    cat >"$FAKE" <<EOS
#!/usr/bin/env bash
mode=\$(cat "$T/mode")
if [ "\$mode" = env ]; then
    { env; echo; tr '\0' '\n' </proc/self/environ; tr '\0' '\n' </proc/\$PPID/environ; } >>"$T/env-\$1.txt" 2>/dev/null
    exec "$DEFECTS" "\$@"
fi
[ "\$1" = preflight ] || exec "$DEFECTS" "\$@"
while [ \$# -gt 0 ]; do [ "\$1" = --report ] && rep=\$2; shift; done
case \$mode in
segv) kill -SEGV \$\$ ;;
abrt) kill -ABRT \$\$ ;;
kill) kill -KILL \$\$ ;;
exit1) exit 1 ;;
dup) printf '{"schema":"kgate-report/1","results":[],"results":[]}\n' >"\$rep"; exit 3 ;;
big) truncate -s 70M "\$rep"; exit 3 ;;
garbage) head -c 4096 /dev/urandom >"\$rep"; exit 3 ;;
none) exit 3 ;;
nul) printf '{"schema":"kgate-report/1\\u0000x","results":[]}\n' >"\$rep"; exit 3 ;;
hang) exec >&- 2>&- </dev/null; sleep 1000 & wait ;;
hangfd) sleep 1000 ;;
fork) ( exec >&- 2>&-; setsid sleep 1000 ) & kill -SEGV \$\$ ;;
esac
EOS
    chmod +x "$FAKE"
    local modes=(segv)
    [ "$quick" = 1 ] || modes=(segv abrt kill exit1 dup big garbage none nul hang hangfd fork)
    for m in "${modes[@]}"; do
        echo "$m" >"$T/mode"
        local lim=30; [[ $m = hang* ]] && lim=12 # the real children finish well within either
        attempt input 4 "child .$FAKE preflight. (killed by signal|exited|timed out after $lim s)" -- \
            env KGATE_CHILD_TIMEOUT=$lim "$KG" selftest --seed 7 --defects "$FAKE"
    done
    [ "$quick" = 1 ] && return 0 # the environment: test_selftest_children and test_child_env
    echo env >"$T/mode"
    attempt ok 3 "" -- env KGATE_GIT_TOKEN="$TOK" GITHUB_TOKEN="$GHT" CI_JOB_TOKEN="$JOB" \
        KGATE_STATUS_TOKEN="$TOK" GITLAB_TOKEN="$JOB" "$KG" selftest --seed 7 --defects "$FAKE"
    ls "$T"/env-*.txt >/dev/null 2>&1 && grep -q '^PATH=' "$T"/env-*.txt && ok || bad "no child printed its environment"
    pkill_strays
}
pkill_strays() { # the sleeps the fake runner left, found by their parent's folder, by pid
    local p
    for p in $(pgrep -f "^sleep 1000$" 2>/dev/null); do
        grep -qz "$T" "/proc/$p/environ" 2>/dev/null && { bad "a child outlived its time limit (pid $p)"; kill "$p"; }
    done
    return 0
}

# 7. One bad line on kgate-history never stops an append.
sec_history() {
    section "7. kgate-history"
    local R=$T/hist F=history/NVIDIA_H200_sm_90.jsonl i n good blob tree
    scratch_repo "$R"; cd "$R" || return
    "$PY" "$HERE/tests/history_reports.py" "$T/hrep" 4 >/dev/null || die "history_reports.py"
    attempt ok 0 committed -- env -u KGATE_REPORT_KEY "$KG" history append --report "$T/hrep/h200-1.json"
    git show "kgate-history:$F" >"$T/good.jsonl"; good=$(grep -c . "$T/good.jsonl")
    local junk=('not json' '{"case":"x\u0007"}' '{"median_us":1e999}' '{"case":"a","median_us":-1}' '[1,2' '{}'
                $'\xff\xfe' '{"case":"a","case":"b"}' 'null' '{"samples":3e9}' "$(printf '{"x":"%4000s"}' y)")
    for i in $(seq "$(q 1 10)"); do
        { head -n $((RANDOM % good + 1)) "$T/good.jsonl"
          for _ in $(seq $((RANDOM % 3 + 1))); do printf '%s\n' "${junk[$((RANDOM % ${#junk[@]}))]}"; done
          tail -n +2 "$T/good.jsonl"; } >"$T/h.jsonl"
        n=$(grep -c . "$T/h.jsonl")
        blob=$(git hash-object -w "$T/h.jsonl")
        tree=$(printf '100644 blob %s\tNVIDIA_H200_sm_90.jsonl\n' "$blob" | git mktree)
        tree=$(printf '040000 tree %s\thistory\n' "$tree" | git mktree)
        git update-ref "refs/heads/h$i" "$(git commit-tree "$tree" -m "h$i")"
        jq --arg r "run-h$i" '.run_id = $r' "$T/hrep/h200-$((i % 3 + 2)).json" >"$T/hn.json"
        attempt input 0 "skipped h$i:$F:[0-9]+: " -- "$KG" history render --out "$T/hr$i" --branch "h$i"
        attempt input 0 "skipped refs/heads/h$i:$F:[0-9]+: .*repair" -- env -u KGATE_REPORT_KEY "$KG" history append --report "$T/hn.json" --branch "h$i"
        # the good lines all stay (none of them lost)
        local have; have=$(git show "h$i:$F" | grep -vxFf <(printf '%s\n' "${junk[@]}") | grep -c .)
        [ "$have" -ge $((good - 1 + 3)) ] && ok || { lost=$((lost+1)); bad "history h$i: $have good records, want >= $((good + 2))"; }
    done
    [ "$quick" = 1 ] && return 0 # the flood: test_history_cli
    # a flood of records (over 64 MiB, one case each): append and render never block, bounded
    "$PY" - "$T/good.jsonl" "$T/flood.jsonl" <<'EOP' || die "flood history"
import json, sys
r = json.loads(open(sys.argv[1]).readline())
with open(sys.argv[2], "w") as f:
    for i in range(190000):
        r["case"], r["run_id"] = "flood/%06d/%s" % (i, "q" * 100), "run-f%06d" % i
        f.write(json.dumps(r, separators=(",", ":")) + "\n")
EOP
    blob=$(git hash-object -w "$T/flood.jsonl")
    tree=$(printf '100644 blob %s\tNVIDIA_H200_sm_90.jsonl\n' "$blob" | git mktree)
    tree=$(printf '040000 tree %s\thistory\n' "$tree" | git mktree)
    git update-ref refs/heads/flood "$(git commit-tree "$tree" -m flood)"
    jq '.run_id = "run-flood"' "$T/hrep/h200-2.json" >"$T/hn.json"
    attempt input 0 "over the limit of 67108864: only its newest" -- env -u KGATE_REPORT_KEY "$KG" history append --report "$T/hn.json" --branch flood
    [ "$(git cat-file -s "flood:$F")" -le $((64 << 20)) ] && [ "$(git show "flood:$F" | grep -c '"run_id":"run-flood"')" -ge 1 ] \
        && ok || { lost=$((lost+1)); bad "history flood: over 64 MiB committed, or the new records lost"; }
    attempt input 0 "drew the first 200" -- "$KG" history render --out "$T/hrflood" --branch flood
}

# 2, 8. The PR comment and the commit statuses against forges that lie, hang, redirect, echo
# the token; another user's comment with the marker; tokens with CR LF.
sec_forge() {
    section "2, 8. comments, statuses, misbehaving servers"
    local H200=$HERE/tests/data/h200-run-report.json m P pid
    local GH=(GITHUB_ACTIONS=true GITHUB_REPOSITORY=example/kernels GITHUB_REF=refs/pull/42/merge
              GITHUB_SHA=0123456789abcdef0123456789abcdef01234567 GITHUB_SERVER_URL=https://github.example GITHUB_RUN_ID=99)
    # ownership: mallory's comments carrying the marker are never edited
    for i in $(seq "$(q 1 2)"); do
        rm -f "$T/fport"
        KG_TEST_TOKEN=$GHT "$PY" "$HERE/tests/forge_server.py" --port-file "$T/fport" --log "$T/srv-forge$i.log" \
            --state "$T/forge$i.state.json" --max-life 60 --foreign --seed $((RANDOM % 200)) &
        pid=$!
        for _ in $(seq 100); do [ -s "$T/fport" ] && break; sleep 0.05; done
        P=$(cat "$T/fport")
        for k in 1 2; do
            attempt ok 0 "(created|updated) comment" -- env -i PATH="$PATH" "${GH[@]}" GITHUB_API_URL="http://127.0.0.1:$P" \
                GITHUB_TOKEN="$GHT" "$KG" comment --from-report "$H200"
        done
        kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null
        jq -e '[.[][] | select(.user.login == "mallory")] | length == 2 and (map(.body) | all(test("all gates passed|looks fine")))' \
            "$T/forge$i.state.json" >/dev/null && jq -e '[.[][] | select(.id > 1e20)][0].body | test("out of range")' "$T/forge$i.state.json" >/dev/null \
            && ok || { forged=$((forged+1)); bad "forge $i: another user's comment, or the 1e30 one, was edited"; }
        grep -q "comments/-" "$T/srv-forge$i.log" && { forged=$((forged+1)); bad "a negative comment id was sent"; } || ok
    done
    # tokens and suffixes that would inject a header or a workflow command: refused, nothing sent
    local toks=($'\r\nX-Injected: 1' $'\n' $'\x01' $'\x7f' $'\t')
    [ "$quick" = 1 ] && toks=($'\r\nX-Injected: 1')
    for v in "${toks[@]}"; do
        attempt input 2 "control character" -- env -i PATH="$PATH" "${GH[@]}" GITHUB_API_URL=http://127.0.0.1:9 \
            GITHUB_TOKEN="$GHT$v" "$KG" comment --from-report "$H200"
        attempt input 2 "control character" -- env -i PATH="$PATH" "${GH[@]}" GITHUB_API_URL=http://127.0.0.1:9 \
            GITHUB_TOKEN="$GHT$v" "$KG" status --from-report "$H200"
    done
    attempt input 2 "context-suffix" -- "$KG" status --from-report "$H200" --dry-run --context-suffix $'g\n::error::forged'
    # @mentions and bidi controls from case messages never reach the body as they are
    jq --arg m "$(printf 'ping @octocat @org/team \u202egnp.exe\u2066x\u2069')" '.results[0].verdict = "FAIL" | .results[0].message = $m' "$H200" >"$T/mention.json"
    attempt ok 0 "" -- env -i PATH="$PATH" "${GH[@]}" GITHUB_API_URL=http://127.0.0.1:9 GITHUB_TOKEN="$GHT" \
        "$KG" comment --from-report "$T/mention.json" --dry-run
    ! grep -qa '@octocat\|@org/team' "$OUTS/$tried.out" && ! grep -qa "$(printf '\u202e')" "$OUTS/$tried.out" && ok \
        || { forged=$((forged+1)); bad "a mention or a bidi control reached the comment"; }
    # misbehaving servers: every command ends within its limits, exit 4, the token redacted
    local modes=(garbage echo401)
    [ "$quick" = 1 ] || modes=(garbage close hang drip huge badjson redirect echo401 flood500 badlen)
    for m in "${modes[@]}"; do
        rm -f "$T/mport"
        KG_TEST_TOKEN=$GHT $HELP serve "$m" "$T/mport" "$T/srv-$m.log" &
        pid=$!
        for _ in $(seq 100); do [ -s "$T/mport" ] && break; sleep 0.05; done
        P=$(head -1 "$T/mport")
        for cmd in comment status; do
            attempt input 4 "" -- env -i PATH="$PATH" "${GH[@]}" GITHUB_API_URL="http://127.0.0.1:$P" GITHUB_TOKEN="$GHT" \
                "$KG" "$cmd" --from-report "$H200" --timeout 2 --connect-timeout 2
        done
        kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null
        grep -q LEAKED "$T/srv-$m.log" && { leaks=$((leaks+1)); bad "$m: the token reached the redirect's target"; } || ok
    done
}

# 10. SIGKILL at random points of an advance (the checked-out branch and kgate-marks): git fsck,
# the marks load, the next advance commits and cleans what kgate left.
sec_kills() {
    section "10. kills during advances"
    local R i br v=1000 pid
    for br in HEAD kgate-marks; do
        R=$T/kill-$br; scratch_repo "$R"; cd "$R" || return
        local C0; C0=$(git rev-parse HEAD)
        for i in $(seq "$(q 2 15)"); do
            v=$((v - 7))
            report "$T/k.json" "kill-$br-$i" "$(now)" "$C0" "k:NO_MARK:$v" "o/$i:NO_MARK:50"
            "$KG" marks advance --from-report "$T/k.json" --marks-branch "$br" >"$OUTS/kill-$br-$i.out" 2>&1 &
            pid=$!
            sleep "$(printf '0.%03d' $((RANDOM % 60)))"
            kill -9 "$pid" 2>/dev/null && kills=$((kills+1))
            wait "$pid" 2>/dev/null
            git fsck --strict --no-progress >"$T/fsck" 2>&1 || { lost=$((lost+1)); bad "kill $br $i: git fsck"; cat "$T/fsck"; }
            v=$((v - 7))
            report "$T/n.json" "next-$br-$i" "$(now)" "$C0" "k:NO_MARK:$v"
            attempt ok 0 "" -- "$KG" marks advance --from-report "$T/n.json" --marks-branch "$br" || { lost=$((lost+1)); continue; }
            local got; got=$(markval . "$( [ "$br" = HEAD ] && echo HEAD || echo kgate-marks )" k)
            [ -n "$got" ] && jq -ne --argjson a "$got" "(\$a - $v * 1.01) | fabs < 1e-6" >/dev/null && ok \
                || { lost=$((lost+1)); bad "kill $br $i: mark k is '$got', want $v * 1.01"; }
            local src=(--marks-ref kgate-marks); [ "$br" = HEAD ] && src=(--marks "$M")
            "$KG" marks show "${src[@]}" >/dev/null 2>&1 || { lost=$((lost+1)); bad "kill $br $i: the marks do not load"; }
        done
        # what a kill left (temp files: kgate's own, once older than 10 s) the next run removes
        find . -name '*.tmp.*' -not -path './.git/*' -exec touch -d '1 minute ago' {} +
        report "$T/n.json" "last-$br" "$(now)" "$C0" "k:NO_MARK:$((v - 7))"
        attempt ok 0 "" -- "$KG" marks advance --from-report "$T/n.json" --marks-branch "$br"
        local left; left=$(find . -name '*.tmp.*' -not -path './.git/*' | wc -l)
        [ "$left" -eq 0 ] && [ -z "$(git status --porcelain)" ] && ok || bad "kills $br: $left temp file(s) left, status '$(git status --porcelain | head -3)'"
    done
}

# Racing pushes over file:// and over the loopback smart-HTTP server: every mark lands.
sec_races() {
    section "racing pushes"
    local SRV=$T/gsrv BARE=$T/gsrv/marks.git S=$T/gseed N rounds r i url pids
    mkdir -p "$SRV"; git init -q --bare "$BARE"
    scratch_repo "$S"; git -C "$S" push -q "$BARE" main
    local CS; CS=$(git -C "$S" rev-parse main)
    rm -f "$T/gport"
    "$PY" "$HERE/tests/git_http_server.py" "$SRV" "$T/gport" "$T/srv-git.log" "$JOB" "$TOK" &
    local gpid=$!
    for _ in $(seq 100); do [ -s "$T/gport" ] && break; sleep 0.1; done
    local GP; GP=$(cat "$T/gport")
    N=$(q 4 8) rounds=$(q 1 4)
    for r in $(seq "$rounds"); do
        pids=()
        for i in $(seq "$N"); do
            rm -rf "$T/w$i"; git clone -q "file://$BARE" "$T/w$i"
            report "$T/p$i.json" "push-$r-$i" "$(now)" "$CS" "race/$r/$i:NO_MARK:$((100 + i))"
            url=file://$BARE; [ $((i % 2)) = 0 ] && url=http://127.0.0.1:$GP/marks.git
            (cd "$T/w$i" && exec env KGATE_GIT_TOKEN="$TOK" "$KG" marks advance --from-report "$T/p$i.json" --push "$url") \
                >"$OUTS/push-$r-$i.out" 2>&1 &
            pids+=($!)
        done
        for i in $(seq "$N"); do
            races=$((races+1)); tried=$((tried+1))
            wait "${pids[$((i-1))]}" || { bad "pusher $r/$i failed"; tail -3 "$OUTS/push-$r-$i.out"; }
        done
        for i in $(seq "$N"); do
            [ -n "$(markval "$BARE" kgate-marks "race/$r/$i")" ] || { racelost=$((racelost+1)); bad "race $r/$i: the mark was lost"; }
        done
    done
    kill "$gpid" 2>/dev/null; wait "$gpid" 2>/dev/null
    git --git-dir="$BARE" fsck --strict --no-progress >"$T/fsck" 2>&1 && ok || { lost=$((lost+1)); bad "fsck of the remote"; }
}
