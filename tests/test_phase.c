/* The phase page's evidence slot (gates/core/phase.c, issue #25): the first evidence of a case
 * wins, a phase change keeps it, the start of a case (kg_phase_set with a gate or a case)
 * clears it, a long text is truncated, not overrun; and after kg_phase_share it outlives a
 * worker that set it and then called exit(1), as a cudaCheck-style launcher does. */
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "core/kg_core.h"
#include "kg_test.h"

static void check_local(void)
{
    char buf[256], small[8];
    kg_phase_set("hotpath", "a/case", "run_case");
    CHECK(!kg_phase_evidence_get(buf, sizeof buf) && buf[0] == '\0');
    kg_phase_evidence_set("cudaMalloc [alloc/free] in launch under observation (CUPTI)");
    kg_phase_evidence_set("cudaFree [alloc/free] in launch under observation (CUPTI)");
    CHECK(kg_phase_evidence_get(buf, sizeof buf));
    CHECK_MSG(strcmp(buf, "cudaMalloc [alloc/free] in launch under observation (CUPTI)") == 0,
              "first evidence should win, got '%s'", buf);
    kg_phase_set(NULL, NULL, "graph capture and replay"); /* same case, later phase: kept */
    CHECK(kg_phase_evidence_get(buf, sizeof buf) && strncmp(buf, "cudaMalloc ", 11) == 0);
    CHECK(kg_phase_evidence_get(small, sizeof small) && strcmp(small, "cudaMal") == 0);
    kg_phase_set("hotpath", "b/case", "run_case"); /* the next case: cleared */
    CHECK(!kg_phase_evidence_get(buf, sizeof buf) && buf[0] == '\0');
    kg_phase_evidence_set("cudaFree [alloc/free] in launch under observation (CUPTI)");
    CHECK(kg_phase_evidence_get(buf, sizeof buf) && strncmp(buf, "cudaFree ", 9) == 0);
    kg_phase_set("parity", "b/case", "run_case"); /* the same case in another gate: cleared */
    CHECK(!kg_phase_evidence_get(buf, sizeof buf));
    kg_phase_evidence_set("");
    CHECK(!kg_phase_evidence_get(buf, sizeof buf));
    char big[600];
    memset(big, 'x', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    kg_phase_evidence_set(big);
    CHECK(kg_phase_evidence_get(buf, sizeof buf) && strlen(buf) > 100 && strlen(buf) < sizeof big);
}

/* A forked worker sets the evidence and exits: the parent reads it from the shared page. */
static void check_shared(void)
{
    char buf[256];
    int status = 0;
    CHECK(kg_phase_share() == 0);
    kg_phase_set("hotpath", "c/case", "run_case");
    pid_t pid = fork();
    if (pid == 0) {
        kg_phase_set(NULL, NULL, "launch under observation (CUPTI)");
        kg_phase_evidence_set("cudaMalloc [alloc/free] in launch under observation (CUPTI)");
        _exit(1);
    }
    CHECK(pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
          WEXITSTATUS(status) == 1);
    CHECK_MSG(kg_phase_evidence_get(buf, sizeof buf) && strncmp(buf, "cudaMalloc ", 11) == 0,
              "the worker's evidence did not reach the parent: '%s'", buf);
    CHECK(kg_phase_is_case("c/case"));
    kg_phase_set("hotpath", "d/case", "run_case");
    CHECK(!kg_phase_evidence_get(buf, sizeof buf));
}

static void nap(long ms) { usleep((useconds_t)(ms * 1000)); }

/* The phase account: each phase's time goes to its kind, a new case starts from zero, a closed
 * case gains nothing, and a worker that dies mid-phase is charged until the parent looks. The
 * bounds are loose (a loaded CI machine): each kind must have at least its sleep and the
 * kinds it was not in nothing. */
static void check_times(void)
{
    double t[KG_PHASE_N];
    kg_phase_set("parity", "e/case", "setup");
    nap(60);
    kg_phase_set(NULL, NULL, "launch");
    nap(30);
    kg_phase_set(NULL, NULL, "reference");
    nap(40);
    kg_phase_set(NULL, NULL, "teardown");
    nap(20);
    kg_phase_case_end();
    nap(80); /* after the case: nobody's time */
    CHECK(kg_phase_times("parity", "e/case", t));
    CHECK_MSG(t[KG_PHASE_SETUP] >= 0.059 && t[KG_PHASE_SETUP] < 0.5, "setup %.3f",
              t[KG_PHASE_SETUP]);
    CHECK_MSG(t[KG_PHASE_WORK] >= 0.029 && t[KG_PHASE_WORK] < 0.5, "work %.3f", t[KG_PHASE_WORK]);
    CHECK_MSG(t[KG_PHASE_REFERENCE] >= 0.039 && t[KG_PHASE_REFERENCE] < 0.5, "reference %.3f",
              t[KG_PHASE_REFERENCE]);
    CHECK_MSG(t[KG_PHASE_TEARDOWN] >= 0.019 && t[KG_PHASE_TEARDOWN] < 0.079,
              "teardown %.3f (the time after the case's end was charged?)", t[KG_PHASE_TEARDOWN]);
    CHECK(t[KG_PHASE_PREPARE] == 0);
    CHECK_MSG(!kg_phase_times("hotpath", "e/case", t) && t[KG_PHASE_SETUP] == 0,
              "another gate's case got this one's times");
    CHECK(!kg_phase_times("parity", "f/case", t));
    kg_phase_set("parity", "f/case", "prepare");
    CHECK(kg_phase_times("parity", "f/case", t) && t[KG_PHASE_SETUP] == 0 &&
          t[KG_PHASE_TEARDOWN] == 0);
    /* A worker that dies in its launch: the parent's look charges the open phase until now. */
    pid_t pid = fork();
    if (pid == 0) {
        kg_phase_set("parity", "g/case", "launch");
        _exit(1);
    }
    int status = 0;
    CHECK(pid > 0 && waitpid(pid, &status, 0) == pid);
    nap(50);
    CHECK(kg_phase_times("parity", "g/case", t) && t[KG_PHASE_WORK] >= 0.049);
    CHECK(strcmp(kg_phase_kind_name(KG_PHASE_REFERENCE), "reference") == 0 &&
          strcmp(kg_phase_kind_name(KG_PHASE_N), "?") == 0);
}

int main(void)
{
    check_local();
    check_shared();
    check_times();
    return kg_test_done("test_phase");
}
