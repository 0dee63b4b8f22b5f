/* The isolation worker's parent side, shared by worker.c (one worker: a gate's cases in turn)
 * and pool.c (--devices: one worker per GPU, cases at once). Driver-private: the protocol and
 * the fault rules are worker.c's; pool.c only multiplexes several workers. */
#ifndef KG_WORKER_INT_H
#define KG_WORKER_INT_H

#include <stdbool.h>
#include <sys/types.h>
#include "core/sbuf.h"
#include "driver/driver.h"

#define KG_WK_TAIL 4096 /* bytes of the worker's last output kept for a fault */

struct kg_worker {
    pid_t pid;
    bool reaped; /* waitpid has taken it: `status` is its end */
    int status;
    int cmd_fd, res_fd, out_fd, err_fd;
    int lane;                   /* its phase slot and its GPU: opts.devices[lane] (0: the run's) */
    const struct kg_gate *gate; /* the gate this worker process has begun, or NULL */
    size_t gate_cases;          /* cases of that gate it ran */
    kg_sbuf *capture, *capture_err; /* non-NULL: what it prints (stdout, stderr) is kept
                                       there, not relayed (pool) */
    char tail[KG_WK_TAIL];
    size_t tail_len;
};

/* Why a worker was lost on a case. */
typedef struct {
    const char *cls; /* "signal", "exit", "timeout", "cuda", "interrupted" */
    int sig, status;
    const char *cuda_error;
    double timeout_s;
    bool retire; /* no fault: the worker ends after this row (its own error), the row stands */
} kg_wk_fault;

/* Fork a worker for `lane` (its GPU opts.devices[lane], or opts.device; its phase slot) and
 * read its hello: *drc is the device probe's code, *dev its device. */
int kg_wk_spawn(kg_run *run, int lane, struct kg_worker **out, int *drc, kg_device_info *dev);
/* Ask for one case: RUN {g, opts, d}; the table header with it when `header`. -1: it is gone. */
int kg_wk_send_run(struct kg_worker *w, const struct kg_gate *g, const void *opts,
                   const kg_case_desc *d, bool header);
/* Read and handle one message that poll() said is there: 1 the case's ROW (res, fig; f->cls
 * "cuda" when its context is dead), 0 another one (a report extra), <0 the run's error (the
 * gate could not begin); *gone when the worker is lost instead. */
int kg_wk_take(kg_run *run, struct kg_worker *w, const struct kg_gate *g, kg_case_result *res,
               cJSON **fig, kg_wk_fault *f, bool *gone);
/* Relay (or capture) what the worker printed on fd, keeping its tail. */
void kg_wk_relay(struct kg_worker *w, int fd);
/* Has the worker process ended? (reaped once) */
bool kg_wk_dead(struct kg_worker *w);
/* A message (or the start of one) is waiting in its result pipe. */
bool kg_wk_res_ready(const struct kg_worker *w);
/* The watchdog's limit for one case of g. */
double kg_wk_timeout(const kg_run *run, const struct kg_gate *g, const void *opts,
                     const kg_case_desc *d);
/* The worker in *slot is lost on case d (died, hung, dead context, interrupted): reap and
 * classify it, make res the case's fault verdict with figures.fault in *fig, free it (*slot
 * NULL: the lane's next case starts a fresh one). */
void kg_wk_lost(struct kg_worker **slot, const struct kg_gate *g, kg_wk_fault *f, bool gone,
                kg_case_result *res, cJSON **fig);
/* The table line of case d whose worker was lost ("id ERROR message"), unless quiet. */
void kg_wk_print_lost(const kg_run *run, const struct kg_gate *g, const kg_case_desc *d,
                      const char *message);
/* The gate's end in the worker in *slot (complete: it ran every case it was given): its
 * begin and end seconds, or 0 when it had not begun g. A worker that does not answer is lost.
 * `merged` (--devices): the extras earlier lanes' ends set, merged with this one's
 * (g->merge_extra); NULL: each set as it comes. */
int kg_wk_end_gate(kg_run *run, struct kg_worker **slot, const struct kg_gate *g, bool complete,
                   cJSON *merged, double *begin_s, double *end_s);
/* QUIT, reap, free; *slot NULL. */
void kg_wk_stop(struct kg_worker **slot);
/* Kill (a case may be running), reap, free; *slot NULL. */
void kg_wk_kill(struct kg_worker **slot);

#endif
