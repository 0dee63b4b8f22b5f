/* The ab gate: same-session A/B of two runner builds (rounds of A then B as child processes,
 * then one paired decision per case). Not in the gate table: `kgate ab` (runners/cli/ab_cmd.c)
 * runs the rounds, then the gate through the driver. */
#ifndef KG_AB_H
#define KG_AB_H

#include "gate.h"
#include "driver/driver.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct kg_ab_state kg_ab_state;

typedef struct {
    int rounds;
    const char *budget; /* passed through to `bench --budget` (checked here) */
    const char *mode;
    double band_floor;
    const char *exe[2];        /* the positional A_EXE B_EXE */
    const char *exclude, *tag; /* --exclude, --tag: passed through to every bench run */
    double case_timeout_s;     /* --case-timeout (0: the bench's default), passed through */
    const struct kg_ab_state *rounds_done; /* set by the command: the rounds already run */
} kg_ab_opts;

extern const kg_ab_opts kg_ab_opts_init;

/* Each side's path, when it names one, is an executable file. */
int kg_ab_check_exes(const kg_ab_opts *o);
/* Every round, A then B, before any case is decided (the cases are those of the reports).
 * Interrupted (kg_interrupted), the running side is killed and the rounds stop: 0 with the
 * rounds so far, and kg_ab_stopped_at says where. */
int kg_ab_rounds(kg_ab_state **out, const kg_ab_opts *o, const kg_gate_env *env);
/* Where the rounds were interrupted ("ab: round 2/5, B (EXE); ..."); NULL: they all ran. */
const char *kg_ab_stopped_at(const kg_ab_state *st);
/* The cases of the A/B reports as a registry the driver can loop over (ids owned by st);
 * without a GPU, NULL: this runner's own cases (each SKIP). */
int kg_ab_registry(kg_registry **out, const kg_ab_state *st, kg_registry *reg);
void kg_ab_state_free(kg_ab_state *st);

/* What `kgate ab` needs of the gate, which only this folder names: its option table over o,
 * the body of its --help, and the gate run through the driver (kg_run_gate) over `reg` once
 * the rounds are done (o->rounds_done). */
kg_opt_table kg_ab_opt_table(kg_ab_opts *o);
const char *kg_ab_description(void);
int kg_ab_decide(kg_run *run, const kg_registry *reg, const kg_ab_opts *o);

#ifdef __cplusplus
}
#endif
#endif
