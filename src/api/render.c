/* api: rendering, forward and backward, in immediate mode. */
#include <stdio.h>

#include "api/api.h"

/* A camera the renderer can take: a size in 1..16384 whose per-pixel buffers (rgb and final
 * transmittance, 16 bytes a pixel) each fit one storage binding of the device. Checked before
 * any work, so a frame too large is an error naming it, not a failure in the middle. */
static splat_status check_camera(const splat_ctx *ctx, const splat_camera *cam, uint32_t k, uint32_t n, splat_error *err)
{
    char which[32] = "";
    if (n > 1) snprintf(which, sizeof which, "camera %u: ", k);
    if (cam->width == 0 || cam->height == 0 || cam->width > 16384 || cam->height > 16384)
        return splat__fail(err, SPLAT_ERR_INVALID_ARG, "%sa camera of %ux%u (1..16384 each)", which, cam->width, cam->height);
    bool finite = isfinite(cam->fx) && isfinite(cam->fy) && isfinite(cam->cx) && isfinite(cam->cy);
    for (int i = 0; i < 9; i++) finite = finite && isfinite(cam->R[i]);
    for (int i = 0; i < 3; i++) finite = finite && isfinite(cam->t[i]);
    if (!finite) return splat__fail(err, SPLAT_ERR_NONFINITE, "%sthe camera has a NaN or infinite value", which);
    if (!(cam->fx > 0 && cam->fy > 0))
        return splat__fail(err, SPLAT_ERR_INVALID_ARG, "%sfocal lengths %g, %g (they must be positive)", which, cam->fx, cam->fy);
    uint64_t bytes = (uint64_t)cam->width * cam->height * 16, most = ctx->gpu->info.max_storage_range;
    if (bytes > most)
        return splat__fail(err, SPLAT_ERR_LIMIT,
                           "%sa %ux%u image needs %.0f MiB in one storage binding, %s allows %.0f MiB "
                           "(maxStorageBufferRange); render a smaller image",
                           which, cam->width, cam->height, bytes / 1048576.0, ctx->gpu->info.name, most / 1048576.0);
    return SPLAT_OK;
}

splat_status splat_render_check(splat_ctx *ctx, const splat_scene *scene, const splat_camera *cams, uint32_t n,
                                const splat_render_desc *desc, splat_error *err)
{
    splat_render_desc rd;
    splat_status st = splat__render_options(desc, scene ? scene->sh_degree : 3, &rd, err);
    if (st == SPLAT_OK && scene) st = splat__scene_check(scene, "scene", err);
    for (uint32_t k = 0; k < n && st == SPLAT_OK; k++) st = check_camera(ctx, &cams[k], k, n, err);
    return st;
}

splat_status splat_render(splat_ctx *ctx, const splat_scene *scene, const splat_camera *cams, uint32_t n,
                          const splat_render_desc *desc, float **images, splat_error *err)
{
    for (uint32_t k = 0; k < n; k++) images[k] = NULL;
    splat_render_desc rd;
    splat_status st = splat__render_options(desc, scene->sh_degree, &rd, err);
    if (st == SPLAT_OK) st = splat__scene_check(scene, "scene", err);
    if (st != SPLAT_OK) return st;
    uint32_t max_w = 1, max_h = 1;
    for (uint32_t k = 0; k < n; k++) {
        st = check_camera(ctx, &cams[k], k, n, err);
        if (st != SPLAT_OK) return st;
        max_w = SPLAT_MAX(max_w, cams[k].width);
        max_h = SPLAT_MAX(max_h, cams[k].height);
    }
    const splat_renderer *r;
    st = splat__ctx_renderer(ctx, &r, err);
    if (st != SPLAT_OK) return st;
    splat_gpu *g = ctx->gpu;
    uint32_t cap = scene->count ? scene->count : 1;
    splat_scene_gpu sg;
    splat_render_bufs rb;
    splat_buf host = {0};
    memset(&rb, 0, sizeof rb);
    st = splat__scene_gpu_init(g, &sg, "scene", cap, rd.sh_half, err);
    if (st != SPLAT_OK) return st;
    st = splat__scene_gpu_upload(g, &sg, scene, err);
    if (st == SPLAT_OK) st = splat__render_bufs_init_fwd_only(g, r, &rb, cap, cap * 8, max_w, max_h, err);
    if (st == SPLAT_OK)
        st = splat__buf_init(g, &host, "render.image_readback", (uint64_t)max_w * max_h * 16, SPLAT_MEM_READBACK, err);
    for (uint32_t k = 0; k < n && st == SPLAT_OK; k++) {
        st = splat__render_image_copy(&ctx->stream, r, &sg, &rb, &cams[k], &rd, &host, err);
        uint64_t px = (uint64_t)cams[k].width * cams[k].height;
        images[k] = st == SPLAT_OK ? splat__malloc(px * 12) : NULL;
        if (st == SPLAT_OK && !images[k])
            st = splat__fail(err, SPLAT_ERR_OUT_OF_HOST_MEMORY, "render: out of host memory for a %ux%u image",
                             cams[k].width, cams[k].height);
        /* the submission that rendered it copied it here, and its wait made it visible */
        const float *rgbt = host.map;
        if (st == SPLAT_OK)
            for (uint64_t p = 0; p < px; p++)
                for (int c = 0; c < 3; c++) images[k][3 * p + c] = rgbt[4 * p + c];
    }
    if (st != SPLAT_OK)
        for (uint32_t k = 0; k < n; k++) {
            splat__free(images[k]);
            images[k] = NULL;
        }
    splat__buf_free(g, &host);
    splat__render_bufs_free(g, &rb);
    splat__scene_gpu_free(g, &sg);
    return st;
}

splat_status splat_render_backward(splat_ctx *ctx, const splat_scene *scene, const splat_camera *cam,
                                   const splat_render_desc *desc, const float *d_rgb, const float *d_alpha,
                                   splat_scene *grads, float *image, float *alpha, splat_error *err)
{
    memset(grads, 0, sizeof *grads);
    splat_render_desc rd;
    splat_status st = splat__render_options(desc, scene->sh_degree, &rd, err);
    if (st == SPLAT_OK) st = splat__scene_check(scene, "scene", err);
    if (st != SPLAT_OK) return st;
    st = check_camera(ctx, cam, 0, 1, err);
    if (st != SPLAT_OK) return st;
    const splat_renderer *r;
    st = splat__ctx_renderer(ctx, &r, err);
    if (st != SPLAT_OK) return st;
    splat_gpu *g = ctx->gpu;
    uint32_t cap = scene->count ? scene->count : 1;
    uint64_t px = (uint64_t)cam->width * cam->height;
    splat_scene_gpu sg, gg;
    splat_render_bufs rb;
    memset(&sg, 0, sizeof sg);
    memset(&gg, 0, sizeof gg);
    memset(&rb, 0, sizeof rb);
    float *buf = splat__malloc(px * 16);
    if (!buf) return splat__fail(err, SPLAT_ERR_OUT_OF_HOST_MEMORY, "render: out of host memory");
    st = splat__scene_gpu_init(g, &sg, "scene", cap, rd.sh_half, err);
    if (st == SPLAT_OK) st = splat__scene_gpu_init(g, &gg, "grads", cap, false, err);
    if (st == SPLAT_OK) st = splat__scene_gpu_upload(g, &sg, scene, err);
    if (st == SPLAT_OK) st = splat__render_bufs_init(g, r, &rb, cap, cap * 8, cam->width, cam->height, err);
    if (st == SPLAT_OK) splat__render_bufs_clear(splat__stream_cmd(&ctx->stream), &rb);
    if (st == SPLAT_OK) st = splat__render_image(&ctx->stream, r, &sg, &rb, cam, &rd, err);
    if (st == SPLAT_OK) {
        for (uint64_t p = 0; p < px; p++) {
            for (int c = 0; c < 3; c++) buf[4 * p + c] = d_rgb[3 * p + c];
            buf[4 * p + 3] = d_alpha ? d_alpha[p] : 0.0f;
        }
        st = splat__buf_upload(g, &rb.grad_img, 0, buf, px * 16, err);
    }
    if (st == SPLAT_OK) {
        splat__render_bwd(splat__stream_cmd(&ctx->stream), r, &sg, &rb, scene->count, &gg, 0);
        st = splat__stream_sync(&ctx->stream, SPLAT_SYNC_COMMIT_AND_WAIT, err);
    }
    if (st == SPLAT_OK) st = splat__scene_init(grads, cap, err);
    gg.count = scene->count;
    if (st == SPLAT_OK) st = splat__scene_gpu_download(g, &gg, grads, err);
    grads->sh_degree = scene->sh_degree;
    if (st == SPLAT_OK && (image || alpha)) st = splat__buf_download(g, &rb.out_rgbt, 0, buf, px * 16, err);
    if (st == SPLAT_OK)
        for (uint64_t p = 0; p < px && (image || alpha); p++) {
            if (image)
                for (int c = 0; c < 3; c++) image[3 * p + c] = buf[4 * p + c];
            if (alpha) alpha[p] = 1.0f - buf[4 * p + 3];
        }
    if (st != SPLAT_OK) splat__scene_free(grads);
    splat__free(buf);
    splat__render_bufs_free(g, &rb);
    splat__scene_gpu_free(g, &sg);
    splat__scene_gpu_free(g, &gg);
    return st;
}

