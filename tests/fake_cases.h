/* The hooks of test cases that need no GPU (the isolation, --devices, child-environment and
 * sixth-gate tests): a setup and a reference that do nothing, and launches that fault on
 * purpose. Static inline: each test takes what it uses. */
#ifndef KG_TEST_FAKE_CASES_H
#define KG_TEST_FAKE_CASES_H

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include "core/kg_core.h"

static inline int t_setup(const kg_setup_args *a, void **s, kg_case_io *io)
{
    (void)a, (void)s, (void)io;
    return 0;
}
static inline int t_ref(void *s, cudaStream_t st, void *r)
{
    (void)s, (void)st, (void)r;
    return 0;
}
/* Not a null store: UBSan would end it first. */
static inline int t_segv(void *s, cudaStream_t st)
{
    (void)s, (void)st;
    raise(SIGSEGV);
    return 0;
}
/* Hangs; with KG_T_MARK set it first creates that file (a test waits for it to interrupt). */
static inline int t_hang(void *s, cudaStream_t st)
{
    (void)s, (void)st;
    const char *mark = getenv("KG_T_MARK");
    FILE *f = mark ? fopen(mark, "w") : NULL;
    if (f)
        fclose(f);
    for (;;)
        pause();
    return 0;
}

/* A case of these hooks launching `fn`. */
#define T_CASE(id_, fn)                                                          \
    {                                                                            \
        .id = id_, .op = "t", .setup = t_setup, .launch = fn, .reference = t_ref \
    }

#endif
