#!/usr/bin/env bash
# The public header stands alone: include/kgate/kgate.h compiles by itself, and with its macros
# in use, as C11 and as C++17 with -Wall -Wextra -Werror -pedantic, using kgate's own compilers
# (and clang/clang++ too where installed); and it includes nothing internal.
#   test_header.sh CUDA_INCLUDE_DIRS_COMMA_SEPARATED      (KG_SOURCE_DIR, KG_BUILD_DIR from CTest)
. "$(dirname "$0")/lib.sh"
: "${KG_SOURCE_DIR:?}" "${KG_BUILD_DIR:?}"
H="$SRC/include/kgate/kgate.h"
CC=$(cmake_cache CMAKE_C_COMPILER) CXX=$(cmake_cache CMAKE_CXX_COMPILER)
inc=(-I"$SRC/include")
IFS=, read -r -a cuda_dirs <<<"${1:-}"
for d in "${cuda_dirs[@]}"; do [ -n "$d" ] && inc+=(-isystem "$d"); done

# Only the C library, the CUDA runtime API and other public kgate headers may be included.
if grep -nE '^[[:space:]]*#[[:space:]]*include' "$H" \
    | grep -vE '<(stddef|stdint|stdbool|stdarg)\.h>|<cuda_runtime_api\.h>|"kgate/[a-z_]+\.h"'; then
    bad "kgate.h includes something beyond the C library, the CUDA runtime API and kgate/"
else ok; fi

printf '#include "kgate/kgate.h"\n' >"$T/alone.c"
printf '#include "kgate/kgate.h"\n' >"$T/alone.cpp"
# The macros a case author uses, expanded under the same flags (kernels live in .cu files, so
# KG_KERNEL is left to the example's build).
cat >"$T/use.c" <<'EOF'
#include "kgate/kgate.h"
static const kg_parity_policy tol = KG_PARITY_TOLERANCE_INIT(1e-6, 1e-6, 0.9999999);
static const kg_parity_policy bits = KG_PARITY_BITWISE_INIT;
static int step(int x) { return x < 0 ? kg_error_set(KG_EINVAL, __FILE__, __LINE__, "bad %d", x) : 0; }
int use_macros(void *dev, int x);
int use_macros(void *dev, int x)
{
    int rc = 0;
    KG_TRY(step(x));
    KG_CUDA_CHECK(cudaMemsetAsync(dev, 0x7f, 16, (cudaStream_t)0));
    KG_LAUNCH_CHECK();
    rc = tol.kind == KG_PARITY_TOLERANCE && bits.kind == KG_PARITY_BITWISE ? KG_OK : KG_EINTERNAL;
cleanup:
    return rc;
}
EOF
cp "$T/use.c" "$T/use.cpp"

WARN=(-Wall -Wextra -Werror -pedantic)
compile_with() { # compile_with CC CXX
    local cc=$1 cxx=$2
    for f in alone use; do
        check "$f as C11 ($cc)" 0 "" -- "$cc" -std=c11 "${WARN[@]}" -Wstrict-prototypes -Wshadow \
            "${inc[@]}" -fsyntax-only "$T/$f.c"
        check "$f as C++17 ($cxx)" 0 "" -- "$cxx" -std=c++17 "${WARN[@]}" -Wshadow "${inc[@]}" \
            -fsyntax-only "$T/$f.cpp"
    done
}
compile_with "$CC" "$CXX"
if command -v clang >/dev/null 2>&1 && command -v clang++ >/dev/null 2>&1 \
    && [ "$(basename "$CC")" != clang ]; then
    compile_with clang clang++
fi
finish
