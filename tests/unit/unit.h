/* Shared by the unit tests: EXPECT counts a check and, when it fails, prints where and why;
 * each test ends with "NAME: N passed, M failed". */
#ifndef GSHMEM_UNIT_H
#define GSHMEM_UNIT_H

#include <stdio.h>

static int passed, failed;

#define EXPECT(cond, ...)                                                                    \
    do {                                                                                     \
        if (cond) passed++;                                                                  \
        else {                                                                               \
            failed++;                                                                        \
            fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__);                             \
            fprintf(stderr, __VA_ARGS__);                                                    \
            fputc('\n', stderr);                                                             \
        }                                                                                    \
    } while (0)

#endif
