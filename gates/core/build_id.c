/* The kgate build id: what the selftest's certificate is bound to (cmake/kg_build_id.cmake
 * hashes the gate library's and the command line's sources and the toolchain into
 * kg_build_id_hex at build time). */
#include "core/kg_core.h"

extern const char kg_build_id_hex[];

const char *kg_build_id(void) { return kg_build_id_hex; }
