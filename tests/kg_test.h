/* Minimal test harness: CHECK records a failure with file:line and goes on. */
#ifndef KG_TEST_H
#define KG_TEST_H
#include <stdio.h>
#include <stdlib.h>

static int kg_t_pass, kg_t_fail;

#define CHECK(cond)                                                                  \
    do {                                                                             \
        if (cond) {                                                                  \
            kg_t_pass++;                                                             \
        } else {                                                                     \
            kg_t_fail++;                                                             \
            fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
        }                                                                            \
    } while (0)

#define CHECK_MSG(cond, ...)                                \
    do {                                                    \
        if (cond) {                                         \
            kg_t_pass++;                                    \
        } else {                                            \
            kg_t_fail++;                                    \
            fprintf(stderr, "%s:%d: ", __FILE__, __LINE__); \
            fprintf(stderr, __VA_ARGS__);                   \
            fputc('\n', stderr);                            \
        }                                                   \
    } while (0)

static inline int kg_test_done(const char *name)
{
    printf("%s: %d checks passed, %d failed\n", name, kg_t_pass, kg_t_fail);
    return kg_t_fail ? 1 : 0;
}
#endif
