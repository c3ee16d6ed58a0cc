/* io: Gaussian scene files' formats by name, and what the formats share (the checks before
 * writing, the conversions between a scene's parameters and what the formats store, Morton order).
 * dispatch.c calls each format's reader and writer by name. */
#include "io/io_util.h"

#include <stdlib.h>
#include <strings.h>

static const struct {
    const char *suffix, *name;
    splat_file_format format;
} k_formats[] = {
    /* longest first: a .compressed.ply is also a .ply */
    {".compressed.ply", "compressed.ply", SPLAT_FILE_COMPRESSED_PLY},
    {"meta.json", "sog folder", SPLAT_FILE_SOG_FOLDER},
    {".ply", "ply", SPLAT_FILE_PLY},
    {".splat", "splat", SPLAT_FILE_SPLAT},
    {".spz", "spz", SPLAT_FILE_SPZ},
    {".sog", "sog", SPLAT_FILE_SOG},
};

splat_file_format splat__scene_format(const char *path)
{
    size_t n = strlen(path);
    for (size_t k = 0; k < SPLAT_COUNTOF(k_formats); k++) {
        size_t m = strlen(k_formats[k].suffix);
        if (n >= m && strcasecmp(path + n - m, k_formats[k].suffix) == 0) return k_formats[k].format;
    }
    return SPLAT_FILE_UNKNOWN;
}

const char *splat__scene_format_name(splat_file_format format)
{
    for (size_t k = 0; k < SPLAT_COUNTOF(k_formats); k++)
        if (k_formats[k].format == format) return k_formats[k].name;
    return "unknown";
}

/* ------------------------------------------------------------------- shared helpers */

splat_status splat__scene_finite(const char *path, const splat_scene *s, uint32_t degree, splat_error *err)
{
    const uint32_t n_sh = (degree + 1) * (degree + 1) * 3;
    for (uint32_t i = 0; i < s->count; i++) {
        const char *what = NULL;
        for (int k = 0; k < 3 && !what; k++)
            if (!isfinite(s->means[i * 3 + k])) what = "position";
        for (int k = 0; k < 3 && !what; k++)
            if (!isfinite(s->log_scales[i * 3 + k])) what = "scale";
        for (int k = 0; k < 4 && !what; k++)
            if (!isfinite(s->quats[i * 4 + k])) what = "rotation";
        if (!what && !isfinite(s->opacities[i])) what = "opacity";
        for (uint32_t k = 0; k < n_sh && !what; k++)
            if (!isfinite(s->sh[(size_t)i * SPLAT_SH_COEFFS * 3 + k])) what = "SH coefficient";
        if (what)
            return splat__fail(err, SPLAT_ERR_NONFINITE, "%s: Gaussian %u has a non-finite %s; nothing written", path,
                               i, what);
    }
    return SPLAT_OK;
}

uint32_t splat__scene_sh_used(const splat_scene *s)
{
    uint32_t used = 0;
    for (uint32_t i = 0; i < s->count && used < s->sh_degree; i++) {
        const float *sh = s->sh + (size_t)i * SPLAT_SH_COEFFS * 3;
        for (uint32_t d = s->sh_degree; d > used; d--)
            for (uint32_t k = d * d * 3; k < (d + 1) * (d + 1) * 3; k++)
                if (sh[k] != 0.0f) {
                    used = d;
                    break;
                }
    }
    return used;
}

double splat__sigmoid(double x) { return 1.0 / (1.0 + exp(-x)); }

float splat__logit_clamped(double p)
{
    p = fmin(fmax(p, SPLAT_OPACITY_EPS), 1.0 - SPLAT_OPACITY_EPS);
    return (float)log(p / (1.0 - p));
}

void splat__quat_unit(const float *q, double out[4])
{
    double n = sqrt((double)q[0] * q[0] + (double)q[1] * q[1] + (double)q[2] * q[2] + (double)q[3] * q[3]);
    if (!(n > 0) || !isfinite(n)) {
        out[0] = 1, out[1] = out[2] = out[3] = 0; /* no rotation at all: the identity */
        return;
    }
    for (int k = 0; k < 4; k++) out[k] = q[k] / n;
}

typedef struct morton_key {
    uint64_t key;
    uint32_t index;
} morton_key;

static int key_cmp(const void *a, const void *b)
{
    const morton_key *x = a, *y = b;
    if (x->key != y->key) return x->key < y->key ? -1 : 1;
    return x->index < y->index ? -1 : x->index > y->index;
}

/* 21 bits of x spread to every third bit. */
static uint64_t spread3(uint64_t x)
{
    x &= 0x1fffff;
    x = (x | x << 32) & 0x1f00000000ffffull;
    x = (x | x << 16) & 0x1f0000ff0000ffull;
    x = (x | x << 8) & 0x100f00f00f00f00full;
    x = (x | x << 4) & 0x10c30c30c30c30c3ull;
    x = (x | x << 2) & 0x1249249249249249ull;
    return x;
}

uint32_t *splat__morton_order(const splat_scene *s)
{
    uint32_t n = s->count;
    uint32_t *order = splat__malloc(((size_t)n + 1) * sizeof *order);
    morton_key *keys = splat__malloc(((size_t)n + 1) * sizeof *keys);
    if (!order || !keys) {
        splat__free(order), splat__free(keys);
        return NULL;
    }
    double lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
    for (uint32_t i = 0; i < n; i++)
        for (int k = 0; k < 3; k++) lo[k] = fmin(lo[k], s->means[i * 3 + k]), hi[k] = fmax(hi[k], s->means[i * 3 + k]);
    for (uint32_t i = 0; i < n; i++) {
        uint64_t key = 0;
        for (int k = 0; k < 3; k++) {
            double t = hi[k] > lo[k] ? (s->means[i * 3 + k] - lo[k]) / (hi[k] - lo[k]) : 0.0;
            key |= spread3((uint64_t)fmin(fmax(t * 2097151.0, 0.0), 2097151.0)) << k;
        }
        keys[i] = (morton_key){key, i};
    }
    qsort(keys, n, sizeof *keys, key_cmp);
    for (uint32_t i = 0; i < n; i++) order[i] = keys[i].index;
    splat__free(keys);
    return order;
}
