/* core: errors, asserts, allocation, random numbers and small math shared by every layer. */
#ifndef SPLAT_CORE_H
#define SPLAT_CORE_H

#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "core/params.h"
#include "splatc.h"

#if defined(__GNUC__) || defined(__clang__)
#define SPLAT_PRINTF(f, a) __attribute__((format(printf, f, a)))
#define SPLAT_NORETURN __attribute__((noreturn))
#else
#define SPLAT_PRINTF(f, a)
#define SPLAT_NORETURN
#endif

/* Broken invariants (programmer errors) stop the program; bad input never reaches here. */
SPLAT_NORETURN void splat__assert_fail(const char *expr, const char *file, int line);
#define SPLAT_ASSERT(x) ((x) ? (void)0 : splat__assert_fail(#x, __FILE__, __LINE__))

/* Records a failure in `err` (which may be NULL) unless an earlier one is already there, and
 * returns `status`, so a failing path reads `return splat__fail(err, SPLAT_ERR_IO, ...)`. */
splat_status splat__fail(splat_error *err, splat_status status, const char *fmt, ...) SPLAT_PRINTF(3, 4);

/* The name of a status ("SPLAT_ERR_IO"); never NULL. */
const char *splat__status_str(splat_status status);

/* Host allocation through the hooks set here (NULL: malloc/realloc/free). */
void splat__set_allocator(const splat_allocator *allocator);
void *splat__malloc(size_t size);
void *splat__calloc(size_t count, size_t size);
void *splat__realloc(void *ptr, size_t size);
void splat__free(void *ptr);
char *splat__strdup(const char *s);
/* Overflow-checked count * size; false when it does not fit in size_t. */
static inline bool splat__mul_size(size_t count, size_t size, size_t *out)
{
    if (size != 0 && count > SIZE_MAX / size) return false;
    *out = count * size;
    return true;
}

#define SPLAT_MIN(a, b) ((a) < (b) ? (a) : (b))
#define SPLAT_MAX(a, b) ((a) > (b) ? (a) : (b))
#define SPLAT_COUNTOF(a) (sizeof(a) / sizeof((a)[0]))

static inline uint32_t splat__div_up(uint32_t a, uint32_t b) { return (a + b - 1) / b; }

/* xoshiro256** seeded through splitmix64: reproducible from one 64-bit seed. */
typedef struct splat_rng {
    uint64_t s[4];
} splat_rng;

void splat__rng_seed(splat_rng *rng, uint64_t seed);
uint64_t splat__rng_u64(splat_rng *rng);
/* Uniform in [0, 1). */
double splat__rng_uniform(splat_rng *rng);
/* Standard normal. */
double splat__rng_normal(splat_rng *rng);

/* IEEE half precision, round to nearest even (overflow to infinity, NaN kept). */
uint16_t splat__f32_to_f16(float f);
float splat__f16_to_f32(uint16_t h);

/* A parameter group of core/params.h, as C code reads it. */
typedef struct splat_group_info {
    const char *name;
    uint32_t width, head;
    double lr_head, lr_rest;
    uint32_t flags;
    size_t scene_member;     /* offsetof(splat_scene, <name>) */
} splat_group_info;

extern const splat_group_info splat__groups[SPLAT_GROUP_COUNT];

/* Group g's array of a host scene: [capacity, width]. */
static inline float **splat__scene_group(splat_scene *s, uint32_t g)
{
    return (float **)((char *)s + splat__groups[g].scene_member);
}
static inline const float *splat__scene_group_c(const splat_scene *s, uint32_t g)
{
    return *(float *const *)((const char *)s + splat__groups[g].scene_member);
}

/* Host scenes (splat_scene of include/splatc.h): allocation, growth keeping rows [0, count), freeing. */
splat_status splat__scene_init(splat_scene *scene, uint32_t capacity, splat_error *err);
/* A scene a renderer can use: no Gaussian with a zero rotation quaternion or a log-scale past
 * 44.36 (its covariance, exp(2 log-scale), overflows a float). SPLAT_ERR_INVALID_ARG naming
 * `what` (the scene's file, or "scene") and the first such Gaussian. Files may hold such values
 * (the readers pass them on); rendering and training refuse them. */
#define SPLAT_MAX_LOG_SCALE 44.36f
splat_status splat__scene_check(const splat_scene *scene, const char *what, splat_error *err);
splat_status splat__scene_reserve(splat_scene *scene, uint32_t capacity, splat_error *err);
void splat__scene_free(splat_scene *scene);

/* Monotonic wall clock in seconds. */
double splat__now(void);

#endif
