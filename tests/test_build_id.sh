#!/usr/bin/env bash
# The kgate build id (cmake/kg_build_id.cmake): a pure function of the listed sources (path and
# content) and the toolchain text; a changed byte, a renamed file or another toolchain is
# another id, an unchanged input leaves the generated file untouched (nothing relinks).
. "$(dirname "$0")/lib.sh"
SCRIPT=${KG_SOURCE_DIR:?}/cmake/kg_build_id.cmake
mkdir -p "$T/src/gates"
printf 'int a;\n' >"$T/src/gates/a.c"
printf 'int b;\n' >"$T/src/gates/b.c"
printf '%s\n' "$T/src/gates/b.c" "$T/src/gates/a.c" >"$T/list"
gen() { cmake -DLIST="$T/list" -DROOT="$T/src" -DDESC="${1:-gcc 12|Release}" -DOUT="$T/id.c" -P "$SCRIPT"; }
id() { sed -n 's/.*kg_build_id_hex\[\] = "\([0-9a-f]*\)";/\1/p' "$T/id.c"; }
gen || die "kg_build_id.cmake failed"
a=$(id)
[[ $a =~ ^[0-9a-f]{64}$ ]] && ok || die "no 64-hex id in $(cat "$T/id.c")"
touch -d '2001-01-01' "$T/id.c"
gen
[ "$(id)" = "$a" ] && [ "$(stat -c %Y "$T/id.c")" = "$(date -d 2001-01-01 +%s)" ] && ok \
    || bad "an unchanged input rewrote the id file"
printf '%s\n' "$T/src/gates/a.c" "$T/src/gates/b.c" >"$T/list" # the list's order is not the id
gen; [ "$(id)" = "$a" ] && ok || bad "the list's order changed the id"
printf 'int b; \n' >"$T/src/gates/b.c"
gen; b=$(id); [ "$b" != "$a" ] && ok || bad "a changed source kept the id"
printf 'int b;\n' >"$T/src/gates/b.c"
gen; [ "$(id)" = "$a" ] && ok || bad "the same sources again gave another id"
gen "gcc 13|Release"; [ "$(id)" != "$a" ] && ok || bad "another toolchain kept the id"
mv "$T/src/gates/b.c" "$T/src/gates/c.c"
printf '%s\n' "$T/src/gates/a.c" "$T/src/gates/c.c" >"$T/list"
gen; [ "$(id)" != "$a" ] && ok || bad "a renamed source kept the id"
finish "build id"
