/* train: evaluation. Each held-out view goes through the iteration's recording without the
 * backward, in the ring's spare slot, and through the render layer's overflow-retry path. At a
 * scale other than 1 (desc.eval_scale) the view's camera is scaled, its image resampled to the
 * scaled size (io/io.h), and the rest is the same path: the camera goes into the view table's
 * evaluation entry at every scale, so that there is one path. */
#include <stdio.h>

#include "train/train.h"

uint32_t splat__eval_size(uint32_t n, float scale)
{
    double v = round((double)scale * n);
    return v < 1 ? 1 : (uint32_t)v;
}

static void record_eval(splat_cmd *c, void *user)
{
    splat__train_record(user, c, SPLAT_TRAIN_RING, false);
}

static splat_status regrown(void *user, splat_error *err) { return splat__train_regrown(user, err); }

static splat_status write_render(splat_trainer *t, uint32_t v, uint32_t w, uint32_t h, const char *render_dir,
                                 splat_error *err)
{
    uint64_t n = (uint64_t)w * h;
    float *rgbt = splat__malloc(n * 16);
    splat_image out = {w, h, splat__malloc(n * 4)};
    splat_status st = SPLAT_OK;
    if (!rgbt || !out.rgba) st = splat__fail(err, SPLAT_ERR_OUT_OF_HOST_MEMORY, "evaluation: out of host memory");
    if (st == SPLAT_OK) st = splat__buf_download(t->env.gpu, &t->rb.out_rgbt, 0, rgbt, n * 16, err);
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
    return st;
}

static splat_status eval_view(splat_trainer *t, uint32_t v, const char *render_dir, splat_eval_result *one,
                              splat_error *err)
{
    /* the camera at the scaled size, its intrinsics scaled by the new size over the old (exactly
     * the scale asked for only when it gives whole pixels) */
    splat_camera cam = t->ds.views[v].camera;
    uint32_t w = splat__eval_size(cam.width, t->desc.eval_scale), h = splat__eval_size(cam.height, t->desc.eval_scale);
    double sx = (double)w / cam.width, sy = (double)h / cam.height;
    cam.fx = (float)(cam.fx * sx), cam.cx = (float)(cam.cx * sx);
    cam.fy = (float)(cam.fy * sy), cam.cy = (float)(cam.cy * sy);
    cam.width = w, cam.height = h;
    uint32_t n_pixels = 0, n_centres = 0;
    splat_status st = splat__images_stage_eval(&t->images, &t->ds, v, w, h, t->background, &n_pixels, &n_centres, err);
    if (st == SPLAT_OK) st = splat__images_set_eval_camera(t->env.gpu, &t->images, &cam, err);
    if (st != SPLAT_OK) return st;
    splat_train_slot *slot = (splat_train_slot *)t->ring.slots.map + SPLAT_TRAIN_RING;
    splat__train_fill_slot(t, SPLAT_TRAIN_RING, t->step, v, false, slot);
    slot->view = t->images.n_views; /* the evaluation entry: frame_setup takes the scaled camera from it */
    slot->n_pixels = n_pixels;
    slot->n_centres = n_centres;
    const splat_train_report *rep =
        (const splat_train_report *)((const char *)t->ring.reports.map + SPLAT_TRAIN_RING * t->ring.report_stride);
    st = splat__render_run(t->env.stream, t->env.renderer, &t->rb,
                           &(splat_render_job){.record = record_eval, .regrown = regrown, .user = t}, err);
    if (st == SPLAT_OK) {
        /* over the pixels that count (every one without a mask), and PSNR over every pixel too */
        one->psnr = splat__psnr(rep->sq_sum, rep->n_values);
        one->ssim = rep->n_ssim ? rep->ssim_sum / rep->n_ssim : 1.0;
        one->l1 = rep->n_values ? rep->l1_sum / rep->n_values : 0;
        one->psnr_full = splat__psnr(rep->sq_full_sum, (double)w * h * 3.0);
    }
    if (st == SPLAT_OK && render_dir) st = write_render(t, v, w, h, render_dir, err);
    return st;
}

splat_status splat__train_eval(splat_trainer *t, const char *render_dir, splat_eval_result *res, splat_error *err)
{
    /* the caller's array and its capacity are inputs; everything else is output */
    splat_eval_view *out = res->views;
    uint32_t out_cap = res->views_cap, cap = out ? out_cap : 0;
    memset(res, 0, sizeof *res);
    res->views = out, res->views_cap = out_cap;
    double t0 = splat__now();
    splat_status st = splat__train_drain(t, err);
    const uint32_t *views = t->n_test ? t->test_views : t->train_views;
    uint32_t n = t->n_test ? t->n_test : t->n_train;
    for (uint32_t k = 0; k < n && st == SPLAT_OK; k++) {
        splat_eval_result one = {0};
        st = eval_view(t, views[k], render_dir, &one, err);
        if (st == SPLAT_OK && k < cap)
            out[k] = (splat_eval_view){.name = t->ds.views[views[k]].name, .psnr = one.psnr, .ssim = one.ssim,
                                       .l1 = one.l1, .psnr_full = one.psnr_full};
        if (st == SPLAT_OK) {
            res->psnr += one.psnr / n;
            res->ssim += one.ssim / n;
            res->l1 += one.l1 / n;
            res->psnr_full += one.psnr_full / n;
        }
    }
    res->n_views = n;
    res->seconds = splat__now() - t0;
    return st;
}
