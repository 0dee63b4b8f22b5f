/* The command line's internals: one kg_cmd_* per command (one file each), dispatched by
 * main.c. Only this layer turns KG_E* codes into exit codes. */
#ifndef KG_CLI_H
#define KG_CLI_H

#include "gate.h"
#include "bench/bench.h"
#include "marks/marks.h"

#ifdef __cplusplus
extern "C" {
#endif

int kg_cmd_gate(kg_registry *reg, const struct kg_gate *g, int argc, char **argv);

/* `kgate bench` around its gate (bench_cmd.c): the marks it decides against (--marks, else
 * $KGATE_MARKS) loaded before the device is touched, and --save-marks. `run` uses the marks
 * part too. */
typedef struct {
    kg_marks *marks;
    kg_marks *save;
} kg_cli_bench;

/* Load the marks (a bad file is exit 2 with or without a GPU), point the gate's lookup at
 * them, check --save-marks (not the compared file, writable, valid if it exists). */
int kg_cli_bench_prepare(kg_cli_bench *b, kg_bench_gate_opts *o);
/* Merge this run's bench rows into --save-marks, if given. */
int kg_cli_bench_save(kg_cli_bench *b, const kg_run *run, const kg_bench_gate_opts *o);
void kg_cli_bench_free(kg_cli_bench *b);

#ifdef __cplusplus
}
#endif
#endif
