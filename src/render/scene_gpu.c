/* render: Gaussians on the GPU, a buffer per parameter group of core/params.h. */
#include <stdio.h>

#include "render/render.h"

_Static_assert(sizeof(((splat_scene_gpu *)0)->group) == SPLAT_GROUP_COUNT * sizeof(splat_buf),
               "the named members and the array of splat_scene_gpu are the same buffers");

/* Bytes a group stores per float: SH may be half floats, moments several words. */
static uint64_t float_bytes(const splat_scene_gpu *s, uint32_t g)
{
    if (s->words[g]) return 4ull * s->words[g];
    return s->sh_half && (splat__groups[g].flags & SPLAT_GROUP_FLAG_SH) ? 2 : 4;
}

uint64_t splat__scene_gpu_row_bytes(const splat_scene_gpu *s, uint32_t k) { return splat__groups[k].width * float_bytes(s, k); }

splat_status splat__scene_gpu_group_init(splat_gpu *g, splat_scene_gpu *s, const char *name, uint32_t k,
                                         splat_error *err)
{
    char label[40];
    snprintf(label, sizeof label, "%s.%s", name, splat__groups[k].name);
    uint64_t bytes = (uint64_t)s->capacity * splat__scene_gpu_row_bytes(s, k);
    return splat__buf_init(g, &s->group[k], label, bytes, SPLAT_MEM_DEVICE, err);
}

splat_status splat__scene_gpu_init(splat_gpu *g, splat_scene_gpu *s, const char *name, uint32_t rows, bool sh_half,
                                   splat_error *err)
{
    memset(s, 0, sizeof *s);
    s->capacity = rows;
    s->sh_half = sh_half;
    for (uint32_t k = 0; k < SPLAT_GROUP_COUNT; k++) {
        splat_status st = splat__scene_gpu_group_init(g, s, name, k, err);
        if (st != SPLAT_OK) {
            splat__scene_gpu_free(g, s);
            return st;
        }
    }
    return SPLAT_OK;
}

void splat__scene_gpu_free(splat_gpu *g, splat_scene_gpu *s)
{
    for (uint32_t k = 0; k < SPLAT_GROUP_COUNT; k++) splat__buf_free(g, &s->group[k]);
    memset(s, 0, sizeof *s);
}

splat_status splat__scene_gpu_upload(splat_gpu *g, splat_scene_gpu *dst, const splat_scene *src, splat_error *err)
{
    if (src->count > dst->capacity)
        return splat__fail(err, SPLAT_ERR_INVALID_ARG, "scene of %u Gaussians does not fit a GPU scene of %u", src->count,
                           dst->capacity);
    splat_status st = SPLAT_OK;
    for (uint32_t k = 0; k < SPLAT_GROUP_COUNT && st == SPLAT_OK; k++) {
        uint64_t floats = (uint64_t)src->count * splat__groups[k].width;
        const float *host = splat__scene_group_c(src, k);
        SPLAT_ASSERT(!dst->words[k]); /* parameters only: moments move as words, with splat__buf_upload */
        if (float_bytes(dst, k) == 4) {
            st = splat__buf_upload(g, &dst->group[k], 0, host, floats * 4, err);
            continue;
        }
        uint16_t *h = splat__malloc(floats * 2 + 2);
        if (!h) return splat__fail(err, SPLAT_ERR_OUT_OF_HOST_MEMORY, "scene upload: out of host memory");
        for (uint64_t i = 0; i < floats; i++) h[i] = splat__f32_to_f16(host[i]);
        st = splat__buf_upload(g, &dst->group[k], 0, h, floats * 2, err);
        splat__free(h);
    }
    if (st == SPLAT_OK) dst->count = src->count;
    return st;
}

splat_status splat__scene_gpu_download(splat_gpu *g, const splat_scene_gpu *src, splat_scene *dst, splat_error *err)
{
    splat_status st = splat__scene_reserve(dst, src->count, err);
    for (uint32_t k = 0; k < SPLAT_GROUP_COUNT && st == SPLAT_OK; k++) {
        uint64_t floats = (uint64_t)src->count * splat__groups[k].width;
        float *host = *splat__scene_group(dst, k);
        SPLAT_ASSERT(!src->words[k]);
        if (float_bytes(src, k) == 4) {
            st = splat__buf_download(g, &src->group[k], 0, host, floats * 4, err);
            continue;
        }
        uint16_t *h = splat__malloc(floats * 2 + 2);
        if (!h) return splat__fail(err, SPLAT_ERR_OUT_OF_HOST_MEMORY, "scene download: out of host memory");
        st = splat__buf_download(g, &src->group[k], 0, h, floats * 2, err);
        for (uint64_t i = 0; st == SPLAT_OK && i < floats; i++) host[i] = splat__f16_to_f32(h[i]);
        splat__free(h);
    }
    if (st == SPLAT_OK) dst->count = src->count;
    return st;
}

void splat__scene_gpu_zero(splat_cmd *c, const splat_scene_gpu *s)
{
    for (uint32_t k = 0; k < SPLAT_GROUP_COUNT; k++) splat__cmd_fill(c, SPLAT_VIEW(s->group[k]), 0);
}
