#!/usr/bin/env bash
# cpu: static preflight finds kernels under the names KG_KERNEL records (#fn) whatever the
# demangler prints: an anonymous namespace ("(anonymous namespace)::k" for KG_KERNEL(k)),
# unsigned template arguments ("k<64u>" for k<64>), nested namespaces left out (`using
# namespace`), a policy class in a namespace. Compiles tests/data/preflight_names.cu with nvcc.
# Usage: test_preflight_names.sh NVCC ARCH,LIST FINDER
. "$(dirname "$0")/lib.sh"
NVCC=$1 ARCHS=$2 FIND=$3
[ -x "$NVCC" ] || skip "no nvcc at '$NVCC'"
gencode=()
for a in ${ARCHS//[,;]/ }; do
    n=${a%%-*}
    [[ "$n" =~ ^[0-9]+a?$ ]] || continue
    gencode+=(-gencode "arch=compute_$n,code=sm_$n")
done
[ "${#gencode[@]}" -gt 0 ] || skip "no usable architecture in '$ARCHS'"
"$NVCC" -std=c++17 "${gencode[@]}" -fatbin "$SRC/tests/data/preflight_names.cu" -o "$T/n.fatbin" \
    2>"$T/nvcc.err" || { cat "$T/nvcc.err"; die "nvcc preflight_names.cu"; }
want=(anon_kernel 'anon_tile_kernel<64>' 'anon_tile_kernel<64u>' ops::detail::nested_kernel
      detail::nested_kernel nested_kernel 'ops::typed_kernel<float, 4>' 'typed_kernel<float,4>'
      'ops::policy_kernel<ops::policy, 8>' 'policy_kernel<ops::policy,8ul>')
if "$FIND" --find "$T/n.fatbin" "${want[@]}" >"$T/found" 2>"$T/err"; then ok; else
    bad "a KG_KERNEL spelling was not found:"; grep -v ' sm_' "$T/found"; cat "$T/err"; fi
# Wrong names stay unfound (no match by a mere suffix of an identifier).
for w in kernel ed_kernel 'anon_tile_kernel<65>' 'typed_kernel<double, 4>'; do
    if "$FIND" --find "$T/n.fatbin" "$w" >"$T/miss" 2>&1; then bad "'$w' matched: $(cat "$T/miss")"; else ok; fi
done
finish "$(wc -l <"$T/found") name/arch lookups"
