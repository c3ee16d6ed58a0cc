#include "core/core.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const char *const status_names[SPLAT_STATUS_COUNT] = {
    [SPLAT_OK] = "SPLAT_OK",
    [SPLAT_ERR_INVALID_ARG] = "SPLAT_ERR_INVALID_ARG",
    [SPLAT_ERR_IO] = "SPLAT_ERR_IO",
    [SPLAT_ERR_FORMAT] = "SPLAT_ERR_FORMAT",
    [SPLAT_ERR_UNSUPPORTED] = "SPLAT_ERR_UNSUPPORTED",
    [SPLAT_ERR_OUT_OF_HOST_MEMORY] = "SPLAT_ERR_OUT_OF_HOST_MEMORY",
    [SPLAT_ERR_OUT_OF_DEVICE_MEMORY] = "SPLAT_ERR_OUT_OF_DEVICE_MEMORY",
    [SPLAT_ERR_NO_DEVICE] = "SPLAT_ERR_NO_DEVICE",
    [SPLAT_ERR_DEVICE] = "SPLAT_ERR_DEVICE",
    [SPLAT_ERR_LIMIT] = "SPLAT_ERR_LIMIT",
    [SPLAT_ERR_NONFINITE] = "SPLAT_ERR_NONFINITE",
    [SPLAT_ERR_SHADER] = "SPLAT_ERR_SHADER",
};

const char *splat__status_str(splat_status status)
{
    if ((unsigned)status >= SPLAT_STATUS_COUNT) return "SPLAT_STATUS_UNKNOWN";
    return status_names[status];
}

void splat__assert_fail(const char *expr, const char *file, int line)
{
    fprintf(stderr, "splatc: assertion failed: %s (%s:%d)\n", expr, file, line);
    abort();
}

/* Messages read "PATH: problem", and a path can be as long as a name in a file makes it: a message
 * too long for the buffer loses its middle, never its start (which file) or its end (what is wrong). */
static void elide_middle(char *dst, size_t size, const char *src, size_t n)
{
    static const char mark[] = " [...] ";
    if (n < size) {
        memcpy(dst, src, n + 1);
        return;
    }
    size_t tail = (size - sizeof mark) * 2 / 3, head = size - sizeof mark - tail;
    memcpy(dst, src, head);
    memcpy(dst + head, mark, sizeof mark - 1);
    memcpy(dst + head + sizeof mark - 1, src + n - tail, tail);
    dst[size - 1] = '\0';
}

splat_status splat__fail(splat_error *err, splat_status status, const char *fmt, ...)
{
    if (err && err->status == SPLAT_OK) {
        va_list ap, again;
        va_start(ap, fmt);
        va_copy(again, ap);
        char small[1024];
        int n = vsnprintf(small, sizeof small, fmt, ap);
        va_end(ap);
        char *full = small;
        if (n >= (int)sizeof small && (full = splat__malloc((size_t)n + 1)) != NULL) vsnprintf(full, (size_t)n + 1, fmt, again);
        va_end(again);
        if (!full) full = small, n = (int)sizeof small - 1;
        elide_middle(err->msg, sizeof err->msg, full, n < 0 ? 0 : (size_t)n);
        if (full != small) splat__free(full);
        err->status = status;
    }
    return status;
}

/* ---------------------------------------------------------------------- allocation */

static splat_allocator g_alloc;

void splat__set_allocator(const splat_allocator *allocator)
{
    if (allocator) g_alloc = *allocator;
    else memset(&g_alloc, 0, sizeof g_alloc);
}

void *splat__malloc(size_t size)
{
    if (size == 0) size = 1;
    return g_alloc.alloc ? g_alloc.alloc(g_alloc.user, size) : malloc(size);
}

void *splat__calloc(size_t count, size_t size)
{
    size_t bytes;
    if (!splat__mul_size(count, size, &bytes)) return NULL;
    void *p = splat__malloc(bytes);
    if (p) memset(p, 0, bytes);
    return p;
}

void *splat__realloc(void *ptr, size_t size)
{
    if (size == 0) size = 1;
    return g_alloc.realloc ? g_alloc.realloc(g_alloc.user, ptr, size) : realloc(ptr, size);
}

void splat__free(void *ptr)
{
    if (!ptr) return;
    if (g_alloc.free) g_alloc.free(g_alloc.user, ptr);
    else free(ptr);
}

char *splat__strdup(const char *s)
{
    size_t n = strlen(s) + 1;
    char *p = splat__malloc(n);
    if (p) memcpy(p, s, n);
    return p;
}

/* ---------------------------------------------------------------------- random */

static uint64_t splitmix64(uint64_t *x)
{
    uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

void splat__rng_seed(splat_rng *rng, uint64_t seed)
{
    for (int i = 0; i < 4; i++) rng->s[i] = splitmix64(&seed);
}

static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

uint64_t splat__rng_u64(splat_rng *rng)
{
    uint64_t *s = rng->s;
    uint64_t result = rotl(s[1] * 5, 7) * 9;
    uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return result;
}

double splat__rng_uniform(splat_rng *rng) { return (double)(splat__rng_u64(rng) >> 11) * 0x1.0p-53; }

double splat__rng_normal(splat_rng *rng)
{
    double u1 = splat__rng_uniform(rng), u2 = splat__rng_uniform(rng);
    if (u1 < 1e-300) u1 = 1e-300;
    return sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
}

double splat__now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* ---------------------------------------------------------------------- half floats */

uint16_t splat__f32_to_f16(float f)
{
    uint32_t x;
    memcpy(&x, &f, 4);
    uint32_t sign = (x >> 16) & 0x8000u, exp = (x >> 23) & 0xffu, man = x & 0x7fffffu;
    if (exp == 0xffu) return (uint16_t)(sign | 0x7c00u | (man ? 0x200u : 0)); /* inf, NaN */
    int e = (int)exp - 127 + 15;
    if (e >= 31) return (uint16_t)(sign | 0x7c00u);                           /* overflow */
    if (e <= 0) {                                                            /* subnormal or zero */
        if (e < -10) return (uint16_t)sign;
        man |= 0x800000u;
        uint32_t shift = (uint32_t)(14 - e), half = man >> shift, rem = man & ((1u << shift) - 1), mid = 1u << (shift - 1);
        if (rem > mid || (rem == mid && (half & 1))) half++;
        return (uint16_t)(sign | half);
    }
    uint32_t half = sign | ((uint32_t)e << 10) | (man >> 13), rem = man & 0x1fffu;
    if (rem > 0x1000u || (rem == 0x1000u && (half & 1))) half++; /* may carry into the exponent: correct */
    return (uint16_t)half;
}

float splat__f16_to_f32(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16, exp = (h >> 10) & 0x1fu, man = h & 0x3ffu, x;
    if (exp == 0x1fu) x = sign | 0x7f800000u | (man << 13);
    else if (exp != 0) x = sign | ((exp - 15 + 127) << 23) | (man << 13);
    else if (man == 0) x = sign;
    else {
        int e = -1;
        do {
            man <<= 1;
            e++;
        } while (!(man & 0x400u));
        x = sign | ((uint32_t)(127 - 15 - e) << 23) | ((man & 0x3ffu) << 13);
    }
    float f;
    memcpy(&f, &x, 4);
    return f;
}
