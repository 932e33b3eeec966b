/* unit_check.h - the check macro of the in-process unit tests
 * (tests/unit, tests/allocbench/test_ab_unit.c): CHECK(cond) reports a
 * false condition with its place and counts it; unit_check_done(name)
 * ends main with 1 if any failed, else prints that all passed. */
#ifndef UNIT_CHECK_H
#define UNIT_CHECK_H

#include <stdio.h>

static int unit_failures;

#define CHECK(cond)                                                                            \
    do {                                                                                       \
        if (!(cond)) {                                                                         \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond);           \
            unit_failures++;                                                                   \
        }                                                                                      \
    } while (0)

static inline int unit_check_done(const char *name)
{
    if (unit_failures) {
        fprintf(stderr, "%s: %d checks failed\n", name, unit_failures);
        return 1;
    }
    printf("%s: all checks passed\n", name);
    return 0;
}

#endif
