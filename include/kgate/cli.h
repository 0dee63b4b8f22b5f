/* kgate public API, part of kgate/kgate.h (which includes every part): kg_cli_main and its exit codes.
 * Self-contained: includes what it uses (test_header.sh compiles each alone, C and C++). */
#ifndef KGATE_CLI_H
#define KGATE_CLI_H

#include "kgate/registry.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Run the kgate command line over the registry; returns the process exit code (see
 * docs/production-ci.md: 0 pass, 1 gate failed, 2 usage or input error, 3 no GPU,
 * 4 runtime error). `reg_rc` is the result of registration: a negative code is reported
 * and exits 2. Takes ownership of reg (frees it, also on error; reg may be NULL then).
 * Call it once, from main(); every case callback runs on this thread. */
int kg_cli_main(kg_registry *reg, int reg_rc, int argc, char **argv);

/* Exit codes of kg_cli_main. */
enum {
    KG_EXIT_PASS = 0,
    KG_EXIT_GATE_FAILED = 1,
    KG_EXIT_USAGE = 2,
    KG_EXIT_NO_GPU = 3,
    KG_EXIT_RUNTIME = 4
};

#ifdef __cplusplus
}
#endif
#endif /* KGATE_CLI_H */
