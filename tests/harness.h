/* The test harness: one binary, each case runnable by name (`splatc_tests <case>`), each case
 * registered with CTest from its SPLAT_TEST line. Every case draws fresh random inputs from a
 * seed printed at its start (SPLAT_SEED=<n> replays one). */
#ifndef SPLAT_TEST_HARNESS_H
#define SPLAT_TEST_HARNESS_H

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "core/core.h"

typedef void (*splat_test_fn)(void);
void splat_test_register(const char *name, splat_test_fn fn);

#define SPLAT_TEST(name)                                                                   \
    static void test_##name(void);                                                         \
    __attribute__((constructor)) static void register_##name(void)                         \
    {                                                                                      \
        splat_test_register(#name, test_##name);                                           \
    }                                                                                      \
    static void test_##name(void)

/* Marks the running case failed and prints where and why. */
void splat_test_fail(const char *file, int line, const char *what, const char *fmt, ...) SPLAT_PRINTF(4, 5);
const char *splat_test_errmsg(const splat_error *err);
int splat_test_failed(void);

#define T_CHECK(cond, ...)                                                                 \
    do {                                                                                   \
        if (!(cond)) splat_test_fail(__FILE__, __LINE__, "check failed: " #cond, " " __VA_ARGS__); \
    } while (0)
/* Like T_CHECK, but leaves the case at once (use before dereferencing what failed). */
#define T_REQUIRE(cond, ...)                                                               \
    do {                                                                                   \
        if (!(cond)) {                                                                     \
            splat_test_fail(__FILE__, __LINE__, "requirement failed: " #cond, " " __VA_ARGS__); \
            return;                                                                        \
        }                                                                                  \
    } while (0)
#define T_OK(expr, errp)                                                                   \
    do {                                                                                   \
        splat_status st_ = (expr);                                                         \
        if (st_ != SPLAT_OK) {                                                             \
            splat_test_fail(__FILE__, __LINE__, #expr, "returned %s: %s",                  \
                            splat_status_str(st_), splat_test_errmsg(errp));               \
            return;                                                                        \
        }                                                                                  \
    } while (0)

/* The case's random generator, seeded from SPLAT_SEED or fresh per run. */
splat_rng *splat_test_rng(void);
uint64_t splat_test_seed(void);
double t_uniform(double lo, double hi);

/* Fault injection: with t_failing_allocator installed (splat_set_allocator), allocation
 * number t_fail_after (0-based) and every later one fail; -1 never fails. */
extern int t_fail_after;
extern const splat_allocator t_failing_allocator;

/* A scratch directory private to the running case (created on first use, removed at exit
 * when the case passes). Returns a path inside it for `name`. */
const char *splat_test_path(const char *name);

#endif
