/* The trainer's life outside the loop: setup from a dataset, evaluation, checkpoints. */
#include <stdio.h>

#include "train/init.h"
#include "train/train.h"

static splat_status load_view_image(const splat_trainer *t, uint32_t v, splat_image *out, splat_error *err)
{
    const splat_data_view *view = &t->ds.views[v];
    splat_image raw = {0};
    splat_status st = splat__image_load(view->image_path, &raw, err);
    if (st != SPLAT_OK) return st;
    if (view->downsample > 1) {
        st = splat__image_downsample(&raw, view->downsample, out, err);
        splat__image_free(&raw);
        if (st != SPLAT_OK) return st;
    } else {
        *out = raw;
    }
    if (out->width != view->camera.width || out->height != view->camera.height) {
        splat_status bad = splat__fail(err, SPLAT_ERR_FORMAT, "%s: image is %ux%u but its camera is %ux%u", view->image_path,
                                       out->width, out->height, view->camera.width, view->camera.height);
        splat__image_free(out);
        return bad;
    }
    return SPLAT_OK;
}

static splat_status alloc_scene_state(splat_trainer *t, uint32_t capacity, splat_error *err)
{
    splat_gpu *g = t->g;
    splat_status st = splat__scene_gpu_init(g, &t->params, "params", capacity, err);
    if (st == SPLAT_OK) st = splat__scene_gpu_init(g, &t->grads, "grads", capacity, err);
    /* m and v: the scene layout with two rows per Gaussian */
    if (st == SPLAT_OK) st = splat__scene_gpu_init(g, &t->moments, "adam", capacity * 2, err);
    return st;
}

static void free_scene_state(splat_trainer *t)
{
    splat__scene_gpu_free(t->g, &t->params);
    splat__scene_gpu_free(t->g, &t->grads);
    splat__scene_gpu_free(t->g, &t->moments);
}

static void zero_scene_gpu(splat_cmd *c, splat_scene_gpu *s)
{
    splat__cmd_fill(c, SPLAT_VIEW(s->means), 0);
    splat__cmd_fill(c, SPLAT_VIEW(s->log_scales), 0);
    splat__cmd_fill(c, SPLAT_VIEW(s->quats), 0);
    splat__cmd_fill(c, SPLAT_VIEW(s->opacities), 0);
    splat__cmd_fill(c, SPLAT_VIEW(s->sh), 0);
}

/* Uploads `scene` as the parameters, with zero Adam state and statistics. */
static splat_status set_scene(splat_trainer *t, const splat_scene *scene, splat_error *err)
{
    free_scene_state(t);
    t->count = scene->count;
    uint32_t cap = scene->count ? scene->count : 1;
    splat_status st = alloc_scene_state(t, cap, err);
    if (st == SPLAT_OK) st = splat__scene_gpu_upload(t->g, &t->params, scene, err);
    if (st != SPLAT_OK) return st;
    if (t->rb.capacity < cap) {
        uint32_t isect = t->rb.isect_capacity ? t->rb.isect_capacity
                         : t->desc.isect_capacity ? t->desc.isect_capacity : cap * 8;
        splat__render_bufs_free(t->g, &t->rb);
        st = splat__render_bufs_init(t->g, &t->ctx->renderer, &t->rb, cap, isect, t->max_w, t->max_h, err);
        if (st != SPLAT_OK) return st;
    }
    splat_cmd *c = splat__stream_cmd(&t->ctx->stream);
    zero_scene_gpu(c, &t->moments);
    zero_scene_gpu(c, &t->grads);
    splat__cmd_fill(c, SPLAT_VIEW(t->rb.stats), 0);
    return splat__stream_sync(&t->ctx->stream, SPLAT_SYNC_COMMIT_AND_WAIT, err);
}

static splat_status upload_images(splat_trainer *t, splat_error *err)
{
    splat_gpu *g = t->g;
    uint64_t total = 0;
    splat_train_view *views = splat__calloc(t->ds.n_views, sizeof *views);
    t->host_images = splat__calloc(t->ds.n_views, sizeof *t->host_images);
    if (!views || !t->host_images) {
        splat__free(views);
        return splat__fail(err, SPLAT_ERR_OUT_OF_HOST_MEMORY, "training images: out of host memory");
    }
    splat_status st = SPLAT_OK;
    for (uint32_t k = 0; k < t->n_train && st == SPLAT_OK; k++) {
        uint32_t v = t->train_views[k];
        st = load_view_image(t, v, &t->host_images[v], err);
        total += (uint64_t)t->host_images[v].width * t->host_images[v].height * 4;
    }
    /* Resident when the store fits one binding and leaves most of the device to the Gaussians;
     * otherwise each iteration's image is copied from host memory into its ring slot. */
    t->streamed = t->desc.stream_images || total > g->info.max_storage_range || total > g->info.device_local_heap / 3;
    uint64_t offset = 0;
    for (uint32_t v = 0; v < t->ds.n_views && st == SPLAT_OK; v++) {
        const splat_camera *c = &t->ds.views[v].camera;
        views[v].cam = (splat_gpu_camera){.fx = c->fx, .fy = c->fy, .cx = c->cx, .cy = c->cy,
                                          .width = c->width, .height = c->height};
        memcpy(views[v].cam.R, c->R, sizeof c->R);
        memcpy(views[v].cam.t, c->t, sizeof c->t);
        if (!t->streamed && t->host_images[v].rgba) {
            views[v].image_offset = (uint32_t)(offset / 4);
            offset += (uint64_t)t->host_images[v].width * t->host_images[v].height * 4;
        }
    }
    if (st == SPLAT_OK) st = splat__buf_init(g, &t->views, "train.views", t->ds.n_views * sizeof *views, SPLAT_MEM_DEVICE, err);
    if (st == SPLAT_OK) st = splat__buf_upload(g, &t->views, 0, views, t->ds.n_views * sizeof *views, err);
    splat__free(views);
    uint64_t slot_bytes = (uint64_t)t->max_w * t->max_h * 4;
    for (int k = 0; k <= SPLAT_TRAIN_RING && st == SPLAT_OK; k++)
        if (t->streamed || k == SPLAT_TRAIN_RING)
            st = splat__buf_init(g, &t->slot_images[k], "train.slot_image", slot_bytes, SPLAT_MEM_UPLOAD, err);
    if (st != SPLAT_OK || t->streamed) return st;
    st = splat__buf_init(g, &t->images, "train.images", total, SPLAT_MEM_DEVICE, err);
    for (uint32_t v = 0, off = 0; v < t->ds.n_views && st == SPLAT_OK; v++) {
        splat_image *im = &t->host_images[v];
        if (!im->rgba) continue;
        uint64_t bytes = (uint64_t)im->width * im->height * 4;
        st = splat__buf_upload(g, &t->images, off, im->rgba, bytes, err);
        off += (uint32_t)bytes;
        splat__image_free(im); /* resident: the GPU holds it now */
    }
    return st;
}

static splat_status init_gaussians(splat_trainer *t, splat_scene *scene, splat_error *err)
{
    if (t->desc.init_ply) {
        splat_status st = splat__ply_read(t->desc.init_ply, scene, err);
        if (st == SPLAT_OK && scene->sh_degree < t->sh_max) t->sh_max = scene->sh_degree;
        return st;
    }
    if (t->ds.n_points > 0) return splat__init_from_points(scene, t->ds.points, t->ds.point_colors, t->ds.n_points, err);
    uint32_t n = t->desc.init_points ? t->desc.init_points : 100000;
    return splat__init_random(scene, n, 1.3, t->desc.seed, err);
}

splat_status splat_trainer_init(splat_trainer **out, splat_ctx *ctx, const splat_train_desc *desc, splat_error *err)
{
    *out = NULL;
    splat_trainer *t = splat__calloc(1, sizeof *t);
    if (!t) return splat__fail(err, SPLAT_ERR_OUT_OF_HOST_MEMORY, "trainer: out of host memory");
    t->ctx = ctx;
    t->g = ctx->gpu;
    t->desc = *desc;
    t->steps = desc->steps ? desc->steps : 30000;
    t->sh_max = desc->sh_degree == SPLAT_SH_DEGREE_0 ? 0 : desc->sh_degree ? SPLAT_MIN(desc->sh_degree, 3u) : 3;
    t->refine_start = desc->refine_start ? desc->refine_start : 500;
    t->refine_every = desc->refine_every ? desc->refine_every : 100;
    t->refine_stop = desc->refine_stop ? desc->refine_stop : 15000;
    t->reset_every = desc->reset_every ? desc->reset_every : 3000;
    splat_scene scene = {0};
    splat_renderer *r;
    splat_status st = desc->data ? SPLAT_OK : splat__fail(err, SPLAT_ERR_INVALID_ARG, "training needs a dataset folder");
    if (st == SPLAT_OK) st = splat__ctx_renderer(ctx, &r, err);
    if (st == SPLAT_OK) {
        splat_dataset_desc dd = {.path = desc->data, .images_factor = desc->images_factor, .eval = desc->eval};
        st = splat__dataset_load(&dd, &t->ds, err);
    }
    if (st != SPLAT_OK) goto fail;
    t->train_views = splat__calloc(t->ds.n_views, sizeof *t->train_views);
    t->test_views = splat__calloc(t->ds.n_views, sizeof *t->test_views);
    if (!t->train_views || !t->test_views) {
        st = splat__fail(err, SPLAT_ERR_OUT_OF_HOST_MEMORY, "trainer: out of host memory");
        goto fail;
    }
    for (uint32_t v = 0; v < t->ds.n_views; v++) {
        if (t->ds.views[v].is_test) t->test_views[t->n_test++] = v;
        else t->train_views[t->n_train++] = v;
        t->max_w = SPLAT_MAX(t->max_w, t->ds.views[v].camera.width);
        t->max_h = SPLAT_MAX(t->max_h, t->ds.views[v].camera.height);
    }
    if (t->n_train == 0) {
        st = splat__fail(err, SPLAT_ERR_FORMAT, "%s: no training views", desc->data);
        goto fail;
    }
    /* scene scale: 1.1 x the largest distance of a training camera from their mean centre */
    double mean[3] = {0, 0, 0}, far = 0;
    for (int pass = 0; pass < 2; pass++)
        for (uint32_t k = 0; k < t->n_train; k++) {
            const splat_camera *c = &t->ds.views[t->train_views[k]].camera;
            double ctr[3];
            for (int i = 0; i < 3; i++) ctr[i] = -(c->R[i] * c->t[0] + c->R[3 + i] * c->t[1] + c->R[6 + i] * c->t[2]);
            if (pass == 0)
                for (int i = 0; i < 3; i++) mean[i] += ctr[i] / t->n_train;
            else
                far = fmax(far, sqrt((ctr[0] - mean[0]) * (ctr[0] - mean[0]) + (ctr[1] - mean[1]) * (ctr[1] - mean[1]) +
                                     (ctr[2] - mean[2]) * (ctr[2] - mean[2])));
        }
    t->scene_scale = 1.1 * (far > 0 ? far : 1.0);
    float bgv = (desc->white_background || t->ds.has_alpha) ? 1.0f : 0.0f;
    t->background[0] = t->background[1] = t->background[2] = bgv;

    st = init_gaussians(t, &scene, err);
    if (st == SPLAT_OK) st = upload_images(t, err);
    if (st != SPLAT_OK) goto fail;
    splat_gpu *g = t->g;
    t->report_stride = SPLAT_MAX((uint64_t)sizeof(splat_train_report), g->info.storage_align);
    t->loss_groups_x = splat__div_up(t->max_w, SPLAT_TILE);
    t->loss_groups_y = splat__div_up(t->max_h, SPLAT_TILE);
    uint64_t px = (uint64_t)t->max_w * t->max_h;
    st = splat__buf_init(g, &t->slots, "train.slots", (SPLAT_TRAIN_RING + 1) * sizeof(splat_train_slot), SPLAT_MEM_UPLOAD, err);
    if (st == SPLAT_OK)
        st = splat__buf_init(g, &t->reports, "train.reports", (SPLAT_TRAIN_RING + 1) * t->report_stride, SPLAT_MEM_READBACK, err);
    if (st == SPLAT_OK) st = splat__buf_init(g, &t->maps, "train.ssim_maps", px * 48, SPLAT_MEM_DEVICE, err);
    if (st == SPLAT_OK)
        st = splat__buf_init(g, &t->parts, "train.loss_parts", (uint64_t)t->loss_groups_x * t->loss_groups_y * 16,
                             SPLAT_MEM_DEVICE, err);
    if (st == SPLAT_OK) st = splat__train_pipes_init(g, &t->pipes, err);
    t->profiling = desc->profile;
    for (int k = 0; k < SPLAT_TRAIN_RING && st == SPLAT_OK && t->profiling; k++) st = splat__prof_init(g, &t->prof[k], err);
    if (st == SPLAT_OK) st = set_scene(t, &scene, err);
    if (st == SPLAT_OK) st = splat__train_rerecord(t, err);
    if (st != SPLAT_OK) goto fail;
    splat__scene_free(&scene);
    *out = t;
    return SPLAT_OK;
fail:
    splat__scene_free(&scene);
    splat_trainer_free(t);
    return st;
}

void splat_trainer_free(splat_trainer *t)
{
    if (!t) return;
    splat_gpu *g = t->g;
    if (t->ctx) splat__stream_sync(&t->ctx->stream, SPLAT_SYNC_COMMIT_AND_WAIT, NULL);
    if (t->recorded)
        for (int k = 0; k < SPLAT_TRAIN_RING; k++) splat__rec_free(g, &t->rec[k]);
    splat__train_pipes_free(g, &t->pipes);
    for (int k = 0; k < SPLAT_TRAIN_RING; k++) splat__prof_free(g, &t->prof[k]);
    free_scene_state(t);
    splat__render_bufs_free(g, &t->rb);
    splat__densify_bufs_free(g, &t->dens);
    splat_buf *bufs[] = {&t->views, &t->images, &t->slots, &t->reports, &t->maps, &t->parts};
    for (size_t k = 0; k < SPLAT_COUNTOF(bufs); k++) splat__buf_free(g, bufs[k]);
    for (int k = 0; k <= SPLAT_TRAIN_RING; k++) splat__buf_free(g, &t->slot_images[k]);
    if (t->host_images)
        for (uint32_t v = 0; v < t->ds.n_views; v++) splat__image_free(&t->host_images[v]);
    splat__free(t->host_images);
    splat__free(t->train_views);
    splat__free(t->test_views);
    splat__dataset_free(&t->ds);
    splat__free(t);
}

/* ------------------------------------------------------------------ evaluation */

static splat_status eval_view(splat_trainer *t, uint32_t v, const char *render_dir, double *psnr, double *ssim, double *l1,
                              splat_error *err)
{
    splat_image im = {0};
    splat_status st = load_view_image(t, v, &im, err);
    if (st != SPLAT_OK) return st;
    memcpy(t->slot_images[SPLAT_TRAIN_RING].map, im.rgba, (size_t)im.width * im.height * 4);
    splat_train_slot *slot = (splat_train_slot *)t->slots.map + SPLAT_TRAIN_RING;
    splat_train_slot s;
    memset(&s, 0, sizeof s);
    s.view = v;
    s.step = t->step;
    /* the degree training has reached; all of it for Gaussians loaded to be evaluated */
    s.sh_degree = t->desc.init_ply && t->step == 0 ? t->sh_max : SPLAT_MIN(t->step / 1000, t->sh_max);
    s.n_gaussians = t->count;
    s.cap = t->desc.max_gaussians_per_tile;
    memcpy(s.background, t->background, sizeof s.background);
    *slot = s;
    const splat_train_report *rep = (const splat_train_report *)((const char *)t->reports.map + SPLAT_TRAIN_RING * t->report_stride);
    for (int attempt = 0; attempt < 4; attempt++) {
        splat__train_record(t, splat__stream_cmd(&t->ctx->stream), SPLAT_TRAIN_RING, false, &t->slot_images[SPLAT_TRAIN_RING]);
        st = splat__stream_sync(&t->ctx->stream, SPLAT_SYNC_COMMIT_AND_WAIT, err);
        if (st != SPLAT_OK || !rep->counters.overflow) break;
        st = splat__render_bufs_grow_isect(t->g, &t->ctx->renderer, &t->rb, rep->counters.n_isect, err);
        if (st == SPLAT_OK) st = splat__train_rerecord(t, err);
        splat__cmd_fill(splat__stream_cmd(&t->ctx->stream), SPLAT_VIEW(t->rb.gate), 0);
        if (st == SPLAT_OK) st = splat__stream_sync(&t->ctx->stream, SPLAT_SYNC_COMMIT_AND_WAIT, err);
        if (st != SPLAT_OK) break;
    }
    if (st == SPLAT_OK && rep->counters.nonfinite)
        st = splat__fail(err, SPLAT_ERR_NONFINITE, "evaluation: NaN or Inf parameters");
    if (st == SPLAT_OK) {
        double px = (double)im.width * im.height * 3.0;
        *psnr = rep->sq_sum > 0 ? -10.0 * log10(rep->sq_sum / px) : 99.0;
        *ssim = rep->n_ssim ? rep->ssim_sum / rep->n_ssim : 1.0;
        *l1 = rep->l1_sum / px;
    }
    if (st == SPLAT_OK && render_dir) {
        uint64_t n = (uint64_t)im.width * im.height;
        float *rgbt = splat__malloc(n * 16);
        splat_image out = {im.width, im.height, splat__malloc(n * 4)};
        if (!rgbt || !out.rgba) st = splat__fail(err, SPLAT_ERR_OUT_OF_HOST_MEMORY, "evaluation: out of host memory");
        if (st == SPLAT_OK) st = splat__buf_download(t->g, &t->rb.out_rgbt, 0, rgbt, n * 16, err);
        if (st == SPLAT_OK) {
            for (uint64_t p = 0; p < n; p++) {
                for (int c = 0; c < 3; c++) out.rgba[4 * p + c] = (uint8_t)lrintf(255.0f * fminf(fmaxf(rgbt[4 * p + c], 0), 1));
                out.rgba[4 * p + 3] = 255;
            }
            char path[1024], base[256];
            snprintf(base, sizeof base, "%s", t->ds.views[v].name);
            for (char *ch = base; *ch; ch++)
                if (*ch == '/' || *ch == '\\') *ch = '_';
            char *dot = strrchr(base, '.');
            if (dot) *dot = '\0';
            snprintf(path, sizeof path, "%s/%s.png", render_dir, base);
            st = splat__image_save_png(path, &out, 3, err);
        }
        splat__free(rgbt);
        splat__free(out.rgba);
    }
    splat__image_free(&im);
    return st;
}

splat_status splat_trainer_eval(splat_trainer *t, const char *render_dir, splat_eval_result *res, splat_error *err)
{
    memset(res, 0, sizeof *res);
    double t0 = splat__now();
    splat_status st = splat__train_drain(t, err);
    const uint32_t *views = t->n_test ? t->test_views : t->train_views;
    uint32_t n = t->n_test ? t->n_test : t->n_train;
    for (uint32_t k = 0; k < n && st == SPLAT_OK; k++) {
        double psnr, ssim, l1;
        st = eval_view(t, views[k], render_dir, &psnr, &ssim, &l1, err);
        if (st == SPLAT_OK) {
            res->psnr += psnr / n;
            res->ssim += ssim / n;
            res->l1 += l1 / n;
        }
    }
    res->n_views = n;
    res->seconds = splat__now() - t0;
    return st;
}

splat_status splat_trainer_scene(splat_trainer *t, splat_scene *scene, splat_error *err)
{
    splat_status st = splat__train_drain(t, err);
    if (st == SPLAT_OK) st = splat__scene_init(scene, t->count ? t->count : 1, err);
    if (st != SPLAT_OK) return st;
    t->params.count = t->count;
    st = splat__scene_gpu_download(t->g, &t->params, scene, err);
    scene->sh_degree = t->sh_max;
    if (st != SPLAT_OK) splat__scene_free(scene);
    return st;
}

/* ------------------------------------------------------------------ checkpoints */

typedef struct ckpt_meta {
    uint32_t version, step, steps, count, sh_max, pad;
    double scene_scale;
    uint64_t seed;
} ckpt_meta;

#define CKPT_VERSION 1

splat_status splat_trainer_save(splat_trainer *t, const char *path, splat_error *err)
{
    splat_status st = splat__train_drain(t, err);
    if (st != SPLAT_OK) return st;
    ckpt_meta meta = {CKPT_VERSION, t->step, t->steps, t->count, t->sh_max, 0, t->scene_scale, t->desc.seed};
    uint64_t n = t->count;
    struct {
        const char *name;
        const splat_buf *buf;
        uint64_t bytes;
    } parts[] = {
        {"params.means", &t->params.means, n * 12},       {"params.log_scales", &t->params.log_scales, n * 12},
        {"params.quats", &t->params.quats, n * 16},       {"params.opacities", &t->params.opacities, n * 4},
        {"params.sh", &t->params.sh, n * 192},            {"adam.means", &t->moments.means, n * 24},
        {"adam.log_scales", &t->moments.log_scales, n * 24}, {"adam.quats", &t->moments.quats, n * 32},
        {"adam.opacities", &t->moments.opacities, n * 8}, {"adam.sh", &t->moments.sh, n * 384},
        {"stats", &t->rb.stats, n * 16},
    };
    splat_section sec[1 + SPLAT_COUNTOF(parts)];
    memset(sec, 0, sizeof sec);
    snprintf(sec[0].name, sizeof sec[0].name, "meta");
    sec[0].data = &meta;
    sec[0].size = sizeof meta;
    for (size_t k = 0; k < SPLAT_COUNTOF(parts) && st == SPLAT_OK; k++) {
        snprintf(sec[k + 1].name, sizeof sec[k + 1].name, "%s", parts[k].name);
        sec[k + 1].size = parts[k].bytes;
        sec[k + 1].data = splat__malloc(parts[k].bytes ? parts[k].bytes : 1);
        if (!sec[k + 1].data) st = splat__fail(err, SPLAT_ERR_OUT_OF_HOST_MEMORY, "%s: out of host memory", path);
        else st = splat__buf_download(t->g, parts[k].buf, 0, sec[k + 1].data, parts[k].bytes, err);
    }
    if (st == SPLAT_OK) st = splat__ckpt_write(path, sec, (uint32_t)SPLAT_COUNTOF(sec), err);
    for (size_t k = 1; k < SPLAT_COUNTOF(sec); k++) splat__free(sec[k].data);
    return st;
}

splat_status splat_trainer_resume(splat_trainer *t, const char *path, splat_error *err)
{
    splat_status st = splat__train_drain(t, err);
    if (st != SPLAT_OK) return st;
    splat_section *sec = NULL;
    uint32_t n_sec = 0;
    st = splat__ckpt_read(path, &sec, &n_sec, err);
    if (st != SPLAT_OK) return st;
    const splat_section *m = splat__ckpt_find(sec, n_sec, "meta");
    ckpt_meta meta;
    if (!m || m->size != sizeof meta) {
        st = splat__fail(err, SPLAT_ERR_FORMAT, "%s: no valid meta section", path);
        goto done;
    }
    memcpy(&meta, m->data, sizeof meta);
    if (meta.version != CKPT_VERSION || meta.step > meta.steps) {
        st = splat__fail(err, SPLAT_ERR_FORMAT, "%s: checkpoint version %u, step %u of %u", path, meta.version, meta.step, meta.steps);
        goto done;
    }
    uint64_t n = meta.count;
    splat_scene scene = {0};
    st = splat__scene_init(&scene, meta.count ? meta.count : 1, err);
    if (st != SPLAT_OK) goto done;
    scene.count = meta.count;
    scene.sh_degree = meta.sh_max;
    struct {
        const char *name;
        void *host;
        uint64_t bytes;
    } params[] = {
        {"params.means", scene.means, n * 12}, {"params.log_scales", scene.log_scales, n * 12},
        {"params.quats", scene.quats, n * 16}, {"params.opacities", scene.opacities, n * 4},
        {"params.sh", scene.sh, n * 192},
    };
    for (size_t k = 0; k < SPLAT_COUNTOF(params) && st == SPLAT_OK; k++) {
        const splat_section *s = splat__ckpt_find(sec, n_sec, params[k].name);
        if (!s || s->size != params[k].bytes) st = splat__fail(err, SPLAT_ERR_FORMAT, "%s: section %s missing or of the wrong size", path, params[k].name);
        else memcpy(params[k].host, s->data, params[k].bytes);
    }
    if (st == SPLAT_OK) {
        t->steps = meta.steps;
        t->sh_max = meta.sh_max;
        t->scene_scale = meta.scene_scale;
        t->desc.seed = meta.seed;
        st = set_scene(t, &scene, err);
    }
    splat__scene_free(&scene);
    struct {
        const char *name;
        splat_buf *buf;
        uint64_t bytes;
    } state[] = {
        {"adam.means", &t->moments.means, n * 24}, {"adam.log_scales", &t->moments.log_scales, n * 24},
        {"adam.quats", &t->moments.quats, n * 32}, {"adam.opacities", &t->moments.opacities, n * 8},
        {"adam.sh", &t->moments.sh, n * 384},      {"stats", &t->rb.stats, n * 16},
    };
    for (size_t k = 0; k < SPLAT_COUNTOF(state) && st == SPLAT_OK; k++) {
        const splat_section *s = splat__ckpt_find(sec, n_sec, state[k].name);
        if (!s || s->size != state[k].bytes) st = splat__fail(err, SPLAT_ERR_FORMAT, "%s: section %s missing or of the wrong size", path, state[k].name);
        else st = splat__buf_upload(t->g, state[k].buf, 0, s->data, state[k].bytes, err);
    }
    if (st == SPLAT_OK) {
        t->step = meta.step;
        st = splat__train_rerecord(t, err);
    }
done:
    splat__ckpt_free(sec, n_sec);
    return st;
}
