/* kgate public API, part of kgate/kgate.h (which includes every part): the registry of a runner's cases.
 * Self-contained: includes what it uses (test_header.sh compiles each alone, C and C++). */
#ifndef KGATE_REGISTRY_H
#define KGATE_REGISTRY_H

#include <stddef.h>
#include "kgate/case.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- registry ------------------------------------------------------------------------- */

/* The cases of a runner. Used from one thread; handed to kg_cli_main, which frees it. */
typedef struct kg_registry kg_registry;

/* *out = a new empty registry (caller owns it: kg_registry_free, or hand it to kg_cli_main). */
int kg_registry_new(kg_registry **out);
/* Copies the descriptor (strings and arrays must outlive the registry). Fails with
 * KG_EEXISTS on a duplicate id and KG_EINVAL on a missing required field. */
int kg_registry_add(kg_registry *reg, const kg_case_desc *desc);
/* kg_registry_add for each of n descriptors; stops at the first error. */
int kg_registry_add_all(kg_registry *reg, const kg_case_desc *descs, size_t n);
size_t kg_registry_count(const kg_registry *reg);
/* The i-th registered case (borrowed; NULL when out of range). */
const kg_case_desc *kg_registry_get(const kg_registry *reg, size_t i);
/* Frees the registry (not the descriptors' strings or arrays); NULL is a no-op. */
void kg_registry_free(kg_registry *reg);

#ifdef __cplusplus
}
#endif
#endif /* KGATE_REGISTRY_H */
