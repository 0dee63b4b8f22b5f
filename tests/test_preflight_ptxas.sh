#!/usr/bin/env bash
# cpu: the static path's cubin parser against ptxas's own account (`nvcc -Xptxas -v`) of the same
# kernels: registers, stack frame (= local memory) and static shared memory, per architecture:
#  A. the rows `kgate preflight --static` reports from the built runners;
#  B. every kernel of the same sources compiled to a zstd-compressed fatbin (--compress-mode=size).
# Usage: test_preflight_ptxas.sh KGATE KGATE_DEFECTS NVCC ARCH,LIST DUMPER
. "$(dirname "$0")/lib.sh"
KG=$1 DEF=$2 NVCC=$3 ARCHS=$4 DUMP=$5
[ -x "$NVCC" ] || skip "no nvcc at '$NVCC'"
gencode=()
for a in ${ARCHS//[,;]/ }; do
    n=${a%%-*}
    [[ "$n" =~ ^[0-9]+a?$ ]] || continue
    gencode+=(-gencode "arch=compute_$n,code=sm_$n")
done
[ "${#gencode[@]}" -gt 0 ] || skip "no usable architecture in '$ARCHS'"
: >"$T/fatbin.rows"
for f in kernels/defects/preflight_defects.cu kernels/softmax.cu kernels/reduce_sum.cu kernels/axpy.cu; do
    "$NVCC" -std=c++17 -I"$SRC/include" -I"$SRC/kernels" -lineinfo "${gencode[@]}" -Xptxas -v \
        -fatbin --compress-mode=size "$SRC/$f" -o "$T/x.fatbin" 2>>"$T/ptxas.txt" \
        || { cat "$T/ptxas.txt"; die "nvcc $f"; }
    "$DUMP" "$T/x.fatbin" >>"$T/fatbin.rows" 2>"$T/dump.err" || { cat "$T/dump.err"; die "reading $f's fatbin"; }
    grep -q " 0 compressed entries unread" "$T/dump.err" || { cat "$T/dump.err"; die "$f: compressed cubins left unread"; }
done
# "symbol arch regs frame smem" per entry function.
awk '
  /Compiling entry function/ { if (sym != "") print sym, arch, regs, frame, smem;
      match($0, /function .[^'"'"']*/); sym = substr($0, RSTART + 10, RLENGTH - 10);
      match($0, /for .sm_[0-9]+/); arch = substr($0, RSTART + 5, RLENGTH - 5);
      regs = "?"; frame = 0; smem = 0; next }
  /bytes stack frame/ { frame = $1 }
  /Used [0-9]+ registers/ { for (i = 1; i <= NF; i++) { if ($(i+1) ~ /^registers/) regs = $i;
                                                      if ($(i+1) == "bytes" && $(i+2) ~ /^smem/) smem = $i } }
  END { if (sym != "") print sym, arch, regs, frame, smem }' "$T/ptxas.txt" | sort -u >"$T/ptxas.rows"
"$KG" preflight --static --report "$T/ref.json" >/dev/null 2>&1
"$DEF" preflight --static --report "$T/def.json" >/dev/null 2>&1
jq -r '.results[].figures.kernels[]? | select(.path=="static" and .registers != null)
       | "\(.symbol) \(.arch) \(.registers) \(.local_bytes) \(.static_smem)"' "$T/ref.json" "$T/def.json" \
    | sort -u >"$T/kgate.rows"
matched=0
while read -r sym arch regs frame smem; do
    got=$(awk -v s="$sym" -v a="$arch" '$1 == s && $2 == a { print $3, $4, $5; exit }' "$T/kgate.rows")
    [ -n "$got" ] || continue   # a kernel no registered case launches
    matched=$((matched+1))
    if [ "$got" != "$regs $frame $smem" ]; then
        bad "$sym $arch: ptxas regs/frame/smem $regs $frame $smem, kgate $got"
    else ok; fi
done <"$T/ptxas.rows"
# B: the compressed fatbins hold exactly the kernels ptxas compiled, with the same figures.
sort -u "$T/fatbin.rows" >"$T/fatbin.sorted"
if ! diff <(awk '{ print $1, $2, $3, $4, $5 }' "$T/ptxas.rows") "$T/fatbin.sorted" >"$T/diff.txt"; then
    bad "compressed fatbins vs ptxas (< ptxas, > kgate):"; cat "$T/diff.txt"
else ok; fi
[ "$matched" -ge 6 ] || { cat "$T/ptxas.rows"; die "too few kernels matched"; }
finish "$matched kernel/arch pairs of the built runners and $(wc -l <"$T/fatbin.sorted") of compressed fatbins compared"
