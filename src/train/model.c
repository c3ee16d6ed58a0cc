/* train: the parameters, their gradients and Adam moments, each a splat_scene_gpu, so that every
 * function here loops over the parameter groups of core/params.h: setting a scene, making room
 * after a strategy changed the count, the non-finite report. (checkpoint.c reads and writes them.) */
#include <stdio.h>

#include "train/train.h"

void splat__model_free(splat_gpu *g, splat_model *m)
{
    splat__scene_gpu_free(g, &m->params);
    splat__scene_gpu_free(g, &m->grads);
    splat__scene_gpu_free(g, &m->moments);
}

uint32_t splat__grad_width(uint32_t k)
{
    return splat__groups[k].flags & SPLAT_GROUP_FLAG_SH ? SPLAT_SH_RECORD_FLOATS : splat__groups[k].width;
}

#define MOMENT_ROW_WORDS(i, n, N, w, h, a, b, f) +(w) * SPLAT_MOMENT_WORDS(f)
_Static_assert(0 SPLAT_PARAM_GROUPS(MOMENT_ROW_WORDS) == SPLAT_MOMENT_ROW_WORDS, "SPLAT_MOMENT_ROW_WORDS is not the table's sum");
#undef MOMENT_ROW_WORDS

splat_scene_gpu splat__moments_layout(uint32_t rows)
{
    splat_scene_gpu m = {.capacity = rows};
    for (uint32_t k = 0; k < SPLAT_GROUP_COUNT; k++) m.words[k] = (uint8_t)SPLAT_MOMENT_WORDS(splat__groups[k].flags);
    return m;
}

splat_status splat__moments_init(splat_gpu *g, splat_scene_gpu *m, uint32_t rows, splat_error *err)
{
    *m = splat__moments_layout(rows);
    splat_status st = SPLAT_OK;
    for (uint32_t k = 0; k < SPLAT_GROUP_COUNT && st == SPLAT_OK; k++) st = splat__scene_gpu_group_init(g, m, "adam", k, err);
    if (st != SPLAT_OK) splat__scene_gpu_free(g, m);
    return st;
}

void splat__moments_of(const uint32_t *words, uint32_t per, uint64_t row, uint32_t width, uint32_t j, float mv[2])
{
    if (per == 1) {
        uint32_t w = words[row * width + j];
        mv[0] = splat__moment_m(w), mv[1] = splat__moment_v(w);
    } else {
        memcpy(&mv[0], &words[2 * row * width + j], 4);
        memcpy(&mv[1], &words[(2 * row + 1) * width + j], 4);
    }
}

static splat_status grads_init(splat_gpu *g, splat_scene_gpu *s, uint32_t rows, splat_error *err)
{
    memset(s, 0, sizeof *s);
    s->capacity = rows;
    splat_status st = SPLAT_OK;
    for (uint32_t k = 0; k < SPLAT_GROUP_COUNT && st == SPLAT_OK; k++) {
        char label[40];
        snprintf(label, sizeof label, "grads.%s", splat__groups[k].name);
        st = splat__buf_init(g, &s->group[k], label, (uint64_t)rows * splat__grad_width(k) * 4, SPLAT_MEM_DEVICE, err);
    }
    if (st != SPLAT_OK) splat__scene_gpu_free(g, s);
    return st;
}

void splat__train_params_changed(splat_trainer *t)
{
    t->params_version++;
    if (t->tap) atomic_store_explicit(&t->tap->version, t->params_version, memory_order_release);
}

splat_status splat__model_set(splat_trainer *t, const splat_scene *scene, splat_error *err)
{
    splat_gpu *g = t->env.gpu;
    splat_model *m = &t->model;
    splat__model_free(g, m);
    splat__train_params_changed(t);
    m->count = scene->count;
    uint32_t cap = scene->count ? scene->count : 1;
    splat_status st = splat__scene_gpu_init(g, &m->params, "params", cap, false, err);
    if (st == SPLAT_OK) st = grads_init(g, &m->grads, cap, err);
    if (st == SPLAT_OK) st = splat__moments_init(g, &m->moments, cap, err);
    if (st == SPLAT_OK) st = splat__scene_gpu_upload(g, &m->params, scene, err);
    if (st != SPLAT_OK) return st;
    if (t->rb.capacity < cap) {
        uint32_t isect = t->rb.isect_capacity ? t->rb.isect_capacity
                         : t->desc.isect_capacity ? t->desc.isect_capacity : cap * 8;
        splat__render_bufs_free(g, &t->rb);
        st = splat__render_bufs_init(g, t->env.renderer, &t->rb, cap, isect, t->room_w, t->room_h, err);
        if (st != SPLAT_OK) return st;
    }
    splat_cmd *c = splat__stream_cmd(t->env.stream);
    splat__scene_gpu_zero(c, &m->moments);
    splat__scene_gpu_zero(c, &m->grads);
    splat__cmd_fill(c, SPLAT_VIEW(t->rb.stats), 0);
    splat__render_bufs_clear(c, &t->rb);
    return splat__stream_sync(t->env.stream, SPLAT_SYNC_COMMIT_AND_WAIT, err);
}

splat_status splat__model_fit(splat_trainer *t, splat_error *err)
{
    splat_gpu *g = t->env.gpu;
    uint32_t cap = t->model.count ? t->model.count : 1;
    splat_status st = SPLAT_OK;
    /* Room to grow into, so that the next refines need not reallocate; where the room does not fit
     * (a device without a memory budget finds out only here), the count alone. */
    if (t->model.grads.capacity < cap) {
        splat__scene_gpu_free(g, &t->model.grads);
        st = grads_init(g, &t->model.grads, cap + cap / 4, err);
        if (st == SPLAT_ERR_OUT_OF_DEVICE_MEMORY) st = grads_init(g, &t->model.grads, cap, err);
    }
    if (st == SPLAT_OK && t->rb.capacity < cap) {
        uint32_t isect = t->rb.isect_capacity;
        splat__render_bufs_free(g, &t->rb);
        st = splat__render_bufs_init(g, t->env.renderer, &t->rb, cap + cap / 4, isect, t->room_w, t->room_h, err);
        if (st == SPLAT_ERR_OUT_OF_DEVICE_MEMORY)
            st = splat__render_bufs_init(g, t->env.renderer, &t->rb, cap, isect, t->room_w, t->room_h, err);
        /* ordered before the next iteration by the stream (run_strategy syncs after its fills) */
        if (st == SPLAT_OK) splat__render_bufs_clear(splat__stream_cmd(t->env.stream), &t->rb);
    }
    return st;
}

/* ------------------------------------------------------------------ diagnosis */

/* Appends "name (v0 v1 ..)" for up to four floats of `row`. */
static void describe_row(char *out, size_t size, const char *name, const float *row, uint32_t width)
{
    size_t len = strlen(out);
    int w = snprintf(out + len, size - len, "%s%s (", len ? ", " : "", name);
    for (uint32_t k = 0; k < width && k < 4 && w > 0 && (size_t)w < size - len; k++)
        w += snprintf(out + len + w, size - len - (size_t)w, "%s%g", k ? " " : "", row[k]);
    if (w > 0 && (size_t)w < size - len) snprintf(out + len + w, size - len - (size_t)w, "%s)", width > 4 ? " ..." : "");
}

splat_status splat__model_nonfinite(splat_trainer *t, uint32_t step, splat_error *err)
{
    /* After a non-finite report: the first Gaussian whose parameters are not finite, described
     * with its moments so a user (or developer) can see what went wrong. */
    splat_gpu *g = t->env.gpu;
    splat__stream_sync(t->env.stream, SPLAT_SYNC_COMMIT_AND_WAIT, NULL);
    uint64_t n = t->model.count, first = n;
    float *rows[SPLAT_GROUP_COUNT] = {0};
    uint32_t *moms[SPLAT_GROUP_COUNT] = {0};
    bool ok = true;
    for (uint32_t k = 0; k < SPLAT_GROUP_COUNT && ok; k++) {
        uint32_t w = splat__groups[k].width;
        rows[k] = splat__malloc(n * w * 4 + 4);
        uint64_t mrow = splat__scene_gpu_row_bytes(&t->model.moments, k);
        moms[k] = splat__malloc(n * mrow + 4);
        ok = rows[k] && moms[k] && splat__buf_download(g, &t->model.params.group[k], 0, rows[k], n * w * 4, NULL) == SPLAT_OK &&
             splat__buf_download(g, &t->model.moments.group[k], 0, moms[k], n * mrow, NULL) == SPLAT_OK;
        for (uint64_t e = 0; ok && e < n * w && e / w < first; e++)
            if (!isfinite(rows[k][e])) first = e / w;
    }
    char what[600] = "";
    if (ok && first < n) {
        char params[200] = "", mv[200] = "";
        for (uint32_t k = 0; k < SPLAT_GROUP_COUNT; k++) {
            uint32_t w = splat__groups[k].width;
            describe_row(params, sizeof params, splat__groups[k].name, rows[k] + first * w, w);
            float pair[2];
            splat__moments_of(moms[k], t->model.moments.words[k], first, w, 0, pair);
            describe_row(mv, sizeof mv, splat__groups[k].name, pair, 2);
        }
        snprintf(what, sizeof what, "; Gaussian %llu: %s; Adam m v of the first of each: %s", (unsigned long long)first,
                 params, mv);
    }
    for (uint32_t k = 0; k < SPLAT_GROUP_COUNT; k++) {
        splat__free(rows[k]);
        splat__free(moms[k]);
    }
    return splat__fail(err, SPLAT_ERR_NONFINITE, "training diverged: NaN or Inf parameters at step %u (%u Gaussians)%s", step,
                       t->model.count, what);
}
