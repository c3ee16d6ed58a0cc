/* core: the parameter groups as C data, and host scenes allocated group by group. */
#include <stddef.h>

#include "core/core.h"

#define GROUP_INFO(i, n, N, w, h, a, b, f) [i] = {#n, w, h, a, b, f, offsetof(splat_scene, n)},
const splat_group_info splat__groups[SPLAT_GROUP_COUNT] = {SPLAT_PARAM_GROUPS(GROUP_INFO)};
#undef GROUP_INFO

#define ONE(i, n, N, w, h, a, b, f) +1
#define WIDTH(i, n, N, w, h, a, b, f) +w
_Static_assert((0 SPLAT_PARAM_GROUPS(ONE)) == SPLAT_GROUP_COUNT, "SPLAT_GROUP_COUNT is the number of rows");
_Static_assert((0 SPLAT_PARAM_GROUPS(WIDTH)) == SPLAT_PARAM_FLOATS, "SPLAT_PARAM_FLOATS is the sum of the widths");
#undef ONE
#undef WIDTH

static splat_status scene_alloc(splat_scene *s, uint32_t capacity, splat_error *err)
{
    size_t n = capacity ? capacity : 1;
    bool ok = true;
    for (uint32_t g = 0; g < SPLAT_GROUP_COUNT; g++) {
        float **a = splat__scene_group(s, g);
        float *p = splat__realloc(*a, n * splat__groups[g].width * sizeof(float));
        if (p) *a = p;
        ok &= p != NULL;
    }
    if (!ok)
        return splat__fail(err, SPLAT_ERR_OUT_OF_HOST_MEMORY, "scene: out of host memory for %u Gaussians", capacity);
    s->capacity = capacity;
    return SPLAT_OK;
}

splat_status splat__scene_init(splat_scene *scene, uint32_t capacity, splat_error *err)
{
    SPLAT_ASSERT(scene);
    memset(scene, 0, sizeof *scene);
    splat_status st = scene_alloc(scene, capacity, err);
    if (st != SPLAT_OK) splat__scene_free(scene);
    return st;
}

splat_status splat__scene_reserve(splat_scene *scene, uint32_t capacity, splat_error *err)
{
    SPLAT_ASSERT(scene);
    if (capacity <= scene->capacity) return SPLAT_OK;
    return scene_alloc(scene, capacity, err);
}

void splat__scene_free(splat_scene *scene)
{
    if (!scene) return;
    for (uint32_t g = 0; g < SPLAT_GROUP_COUNT; g++) splat__free(*splat__scene_group(scene, g));
    memset(scene, 0, sizeof *scene);
}

splat_status splat__scene_check(const splat_scene *scene, const char *what, splat_error *err)
{
    for (uint32_t i = 0; i < scene->count; i++) {
        const float *q = scene->quats + (size_t)i * 4, *ls = scene->log_scales + (size_t)i * 3;
        if (q[0] == 0 && q[1] == 0 && q[2] == 0 && q[3] == 0)
            return splat__fail(err, SPLAT_ERR_INVALID_ARG, "%s: Gaussian %u has a zero rotation quaternion", what, i);
        for (int k = 0; k < 3; k++)
            if (ls[k] > SPLAT_MAX_LOG_SCALE)
                return splat__fail(err, SPLAT_ERR_INVALID_ARG,
                                   "%s: Gaussian %u has log-scale %g; its covariance exp(2 log-scale) overflows a float",
                                   what, i, ls[k]);
    }
    return SPLAT_OK;
}
