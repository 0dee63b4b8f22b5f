/* SIGINT and SIGTERM, caught once for the whole process: one flag that every waiting loop
 * checks (the isolation worker's, the selftest's and ab's children's), so an interrupt ends
 * the wait at once, kills what the run started and leaves a report marked incomplete, instead
 * of waiting for the children and pinning the interrupt on the next case. */
#include <signal.h>
#include <string.h>
#include "core/kg_core.h"

static volatile sig_atomic_t intr_sig;

static void intr_on_signal(int sig) { intr_sig = sig; }

void kg_interrupt_catch(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = intr_on_signal; /* no SA_RESTART: a blocking wait returns EINTR */
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
}

int kg_interrupted(void) { return intr_sig; }

const char *kg_interrupt_name(void)
{
    return intr_sig == SIGTERM ? "SIGTERM" : intr_sig == SIGINT ? "SIGINT" : "a signal";
}
