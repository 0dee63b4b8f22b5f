#!/usr/bin/env bash
# scripts/main.sh, README's first command (issue #30 items 2 and 3): it installs only what the
# main job needs (no chromium, no docs tools: scripts/deps.sh --docs-tools, which test.sh asks
# for), shows the build's own progress and not the configure chatter, and writes its report
# where git ignores it. main.sh runs here in a copy of scripts/ whose deps.sh, build.sh and
# runner are stubs recording what they were asked.
. "$(dirname "$0")/lib.sh"
# deps.sh: the package lists.
run bash "$SRC/scripts/deps.sh" --list
[ "$rc" -eq 0 ] && grep -qx cmake "$T/out" && ok || bad "deps.sh --list: exit $rc, no cmake"
grep -qxE 'chromium|python3-markdown|fonts-dejavu-core' "$T/out" && bad "deps.sh installs the docs tools by default" || ok
run bash "$SRC/scripts/deps.sh" --list --docs-tools
grep -qx chromium "$T/out" && grep -qx python3-markdown "$T/out" && ok || bad "deps.sh --docs-tools lacks chromium"
check "deps.sh bad option" 2 "unknown argument '--bogus'" -- bash "$SRC/scripts/deps.sh" --bogus
grep -qE '^scripts/deps\.sh .*--docs-tools' "$SRC/scripts/test.sh" && ok || bad "test.sh does not install the docs tools (test_render.sh needs chromium)"

# main.sh against stubs.
R=$T/repo
mkdir -p "$R/scripts" "$R/build/runners"
cp "$SRC/scripts/main.sh" "$R/scripts/"
cat >"$R/scripts/deps.sh" <<EOS
#!/usr/bin/env bash
echo "\$*" >"$T/deps.args"
EOS
cat >"$R/scripts/build.sh" <<'EOS'
#!/usr/bin/env bash
echo "-- The C compiler identification is GNU 12.2.0"
echo "-- Configuring done"
echo "[1/2] Building C object gates/core/error.c.o"
echo "[2/2] Linking C executable runners/kgate"
EOS
cat >"$R/build/runners/kgate" <<EOS
#!/usr/bin/env bash
echo "\$*" >"$T/kgate.args"
while [ \$# -gt 0 ]; do [ "\$1" = --report ] && echo '{}' >"\$2"; shift; done
exit 3
EOS
chmod +x "$R/scripts/"*.sh "$R/build/runners/kgate"
check "main.sh" 3 "" -- env -u KG_BUILD_DIR bash "$R/scripts/main.sh" --seed 5
[ -e "$T/deps.args" ] && ! grep -q -- --docs-tools "$T/deps.args" && ok || bad "main.sh asks deps.sh for the docs tools: $(cat "$T/deps.args" 2>/dev/null)"
expect_grep '^\[1/2\] Building C object' "$T/out" "main.sh hides the build's progress"
grep -q -- '^-- ' "$T/out" && bad "main.sh shows the configure step's chatter" || ok
expect_grep '^run --diagnostic --report build/kgate-report\.json --seed 5$' "$T/kgate.args" \
    "main.sh: not 'run --diagnostic --report build/kgate-report.json ARGS'"
[ -e "$R/build/kgate-report.json" ] && [ ! -e "$R/kgate-report.json" ] && ok || bad "main.sh's report is not under build/"
# ... and the build folder, and a report written at the root by hand, are ignored.
for p in build/kgate-report.json kgate-report.json; do
    git -C "$SRC" check-ignore -q "$p" && ok || bad "$p is not ignored (.gitignore)"
done
finish
