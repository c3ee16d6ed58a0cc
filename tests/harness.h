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

/* The one error metric of the GPU-against-reference tests: the normalised error
 * ||got - want|| / max(||want||, ||scale||) (||got - want|| when both are zero) over `rows` rows
 * of `width` values, leaving out the rows where skip[row] is true (skip may be NULL). `scale`
 * (may be NULL) is the magnitude float32 rounding follows where `want` is a sum that cancels:
 * the gradient tests pass splat__ref_backward_scale, so a gradient that happens to sum to nearly
 * zero over many pixels is not held to a relative error its float32 sum cannot have (a single
 * large Gaussian failed 1 run in 24 that way at 1e-4). *want_norm (may be NULL) receives ||want||. */
double t_norm_err(const float *got, const double *want, const double *scale, uint64_t rows, uint32_t width,
                  const bool *skip, double *want_norm);

/* The tolerances of the suite, named once (as ggml's test-backend-ops has one per case kind):
 * a GPU kernel in float32 against the float64 reference of src/ref. */
#define T_TOL_IMAGE 1e-4         /* rendered colour, alpha, transmittance: max error, relative to 1 */
/* A rendered image or alpha map as a whole: t_norm_err over the pixels compared. Measured at
 * most 2.6e-7 (rgb) and 5.9e-7 (alpha) over 100 scenes of api_render_*; a Gaussian missing from
 * a tile list measured 6.6e-3 or more. */
#define T_TOL_IMAGE_NORM 1e-5
#define T_TOL_GRAD 1e-4          /* a gradient group: t_norm_err */
/* Needle-shaped Gaussians (one axis ~0, another tens of pixels long): their long-axis scale and
 * rotation gradients are small differences of large conic-gradient terms accumulated in float32
 * (the same chain gsplat uses), measured at 1e-5 to 1.2e-4. */
#define T_TOL_GRAD_NEEDLES 1e-3
#define T_TOL_LOSS 1e-5          /* loss sums (L1, SSIM, MSE) per value, relative to max(1, value) */
#define T_TOL_OPTIM 1e-4         /* an optimizer update, relative to the reference's update */
#define T_TOL_MOVE 1e-5          /* densification's new means and log-scales, relative to max(1, value) */

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

/* Runs the splatc tool on `args` (a shell string), `env` ("NAME=value ...", "" for none) before
 * it, under a 300 s timeout. *out: what it printed, stdout and stderr together (its first MiB;
 * the caller frees it). Returns its exit status: 124 when it ran for 5 minutes (a loop that never
 * ends fails the case), -1 where it did not exit. */
int splat_test_cli(const char *env, const char *args, char **out);

#endif
