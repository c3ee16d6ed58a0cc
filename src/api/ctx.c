#include <stdio.h>
#include <stdlib.h>

#include "api/ctx.h"
#include "io/io.h"
#include "ref/ref.h"

static const char *type_name(VkPhysicalDeviceType t)
{
    switch (t) {
    case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU: return "discrete";
    case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU: return "integrated";
    case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU: return "virtual";
    case VK_PHYSICAL_DEVICE_TYPE_CPU: return "cpu";
    default: return "other";
    }
}

static void to_public(const splat_gpu_info *in, splat_device_info *out)
{
    memset(out, 0, sizeof *out);
    out->index = in->index;
    snprintf(out->name, sizeof out->name, "%s", in->name);
    snprintf(out->driver, sizeof out->driver, "%s", in->driver);
    out->type = type_name(in->type);
    out->subgroup_size = in->subgroup_size;
    out->memory_bytes = in->device_local_heap;
    out->max_storage_range = in->max_storage_range;
    out->unified_memory = in->unified_memory;
    out->float_atomics = in->float_atomics;
    out->fp16_storage = in->fp16_storage;
}

splat_status splat_devices(splat_device_info *infos, uint32_t max, uint32_t *count, splat_error *err)
{
    splat_gpu_info tmp[16];
    uint32_t n = 0;
    splat_status st = splat__gpu_list(tmp, 16, &n, err);
    if (st != SPLAT_OK) return st;
    for (uint32_t i = 0; i < n && i < max && i < 16; i++) to_public(&tmp[i], &infos[i]);
    *count = n;
    return SPLAT_OK;
}

splat_status splat_ctx_init(splat_ctx **out, const splat_ctx_desc *desc, splat_error *err)
{
    static const splat_ctx_desc defaults = {0};
    if (!desc) desc = &defaults;
    *out = NULL;
    splat_ctx *ctx = splat__calloc(1, sizeof *ctx);
    if (!ctx) return splat__fail(err, SPLAT_ERR_OUT_OF_HOST_MEMORY, "context: out of host memory");
    splat_gpu_desc gd = {.choose_device = desc->choose_device, .device_index = desc->device_index, .validation = desc->validation};
    splat_status st = splat__gpu_init(&ctx->gpu, &gd, err);
    if (st == SPLAT_OK) st = splat__stream_init(ctx->gpu, &ctx->stream, err);
    if (st != SPLAT_OK) {
        splat_ctx_free(ctx);
        return st;
    }
    *out = ctx;
    return SPLAT_OK;
}

void splat_ctx_free(splat_ctx *ctx)
{
    if (!ctx) return;
    if (ctx->gpu) {
        splat__stream_free(&ctx->stream);
        if (ctx->has_renderer) splat__renderer_free(&ctx->renderer);
        splat__gpu_free(ctx->gpu);
    }
    splat__free(ctx);
}

splat_status splat__ctx_renderer(splat_ctx *ctx, splat_renderer **r, splat_error *err)
{
    if (!ctx->has_renderer) {
        splat_status st = splat__renderer_init(ctx->gpu, &ctx->renderer, err);
        if (st != SPLAT_OK) return st;
        ctx->has_renderer = true;
    }
    *r = &ctx->renderer;
    return SPLAT_OK;
}

void splat_ctx_device(const splat_ctx *ctx, splat_device_info *info) { to_public(&ctx->gpu->info, info); }

void splat_ctx_memory(const splat_ctx *ctx, uint64_t *in_use, uint64_t *peak)
{
    if (in_use) *in_use = ctx->gpu->mem_in_use;
    if (peak) *peak = ctx->gpu->mem_peak;
}

splat_status splat_render(splat_ctx *ctx, const splat_scene *scene, const splat_camera *cams, uint32_t n,
                          const splat_render_desc *desc, float **images, splat_error *err)
{
    static const splat_render_desc defaults = {0};
    if (!desc) desc = &defaults;
    for (uint32_t k = 0; k < n; k++) images[k] = NULL;
    uint32_t max_w = 1, max_h = 1;
    for (uint32_t k = 0; k < n; k++) {
        if (cams[k].width == 0 || cams[k].height == 0 || cams[k].width > 16384 || cams[k].height > 16384)
            return splat__fail(err, SPLAT_ERR_INVALID_ARG, "camera %u: size %ux%u (1..16384 each)", k, cams[k].width,
                               cams[k].height);
        max_w = SPLAT_MAX(max_w, cams[k].width);
        max_h = SPLAT_MAX(max_h, cams[k].height);
    }
    splat_renderer *r;
    splat_status st = splat__ctx_renderer(ctx, &r, err);
    if (st != SPLAT_OK) return st;
    splat_gpu *g = ctx->gpu;
    uint32_t cap = scene->count ? scene->count : 1;
    splat_scene_gpu sg;
    splat_render_bufs rb;
    memset(&rb, 0, sizeof rb);
    st = splat__scene_gpu_init_sh(g, &sg, "scene", cap, desc->sh_half, err);
    if (st != SPLAT_OK) return st;
    st = splat__scene_gpu_upload(g, &sg, scene, err);
    if (st == SPLAT_OK) st = splat__render_bufs_init(g, r, &rb, cap, cap * 8, max_w, max_h, err);
    splat_render_opts opts = {.sh_degree = desc->sh_degree, .max_gaussians_per_tile = desc->max_gaussians_per_tile};
    memcpy(opts.background, desc->background, sizeof opts.background);
    for (uint32_t k = 0; k < n && st == SPLAT_OK; k++) {
        st = splat__render_image(&ctx->stream, r, &sg, &rb, &cams[k], &opts, err);
        uint64_t px = (uint64_t)cams[k].width * cams[k].height;
        float *rgbt = st == SPLAT_OK ? splat__malloc(px * 16) : NULL;
        images[k] = st == SPLAT_OK ? splat__malloc(px * 12) : NULL;
        if (st == SPLAT_OK && (!rgbt || !images[k]))
            st = splat__fail(err, SPLAT_ERR_OUT_OF_HOST_MEMORY, "render: out of host memory for a %ux%u image",
                             cams[k].width, cams[k].height);
        if (st == SPLAT_OK) st = splat__buf_download(g, &rb.out_rgbt, 0, rgbt, px * 16, err);
        if (st == SPLAT_OK)
            for (uint64_t p = 0; p < px; p++)
                for (int c = 0; c < 3; c++) images[k][3 * p + c] = rgbt[4 * p + c];
        splat__free(rgbt);
    }
    if (st != SPLAT_OK)
        for (uint32_t k = 0; k < n; k++) {
            splat__free(images[k]);
            images[k] = NULL;
        }
    splat__render_bufs_free(g, &rb);
    splat__scene_gpu_free(g, &sg);
    return st;
}

splat_status splat_render_backward(splat_ctx *ctx, const splat_scene *scene, const splat_camera *cam,
                                   const splat_render_desc *desc, const float *d_rgb, const float *d_alpha,
                                   splat_scene *grads, float *image, float *alpha, splat_error *err)
{
    static const splat_render_desc defaults = {0};
    if (!desc) desc = &defaults;
    memset(grads, 0, sizeof *grads);
    if (cam->width == 0 || cam->height == 0 || cam->width > 16384 || cam->height > 16384)
        return splat__fail(err, SPLAT_ERR_INVALID_ARG, "camera size %ux%u (1..16384 each)", cam->width, cam->height);
    splat_renderer *r;
    splat_status st = splat__ctx_renderer(ctx, &r, err);
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
    st = splat__scene_gpu_init_sh(g, &sg, "scene", cap, desc->sh_half, err);
    if (st == SPLAT_OK) st = splat__scene_gpu_init(g, &gg, "grads", cap, err);
    if (st == SPLAT_OK) st = splat__scene_gpu_upload(g, &sg, scene, err);
    if (st == SPLAT_OK) st = splat__render_bufs_init(g, r, &rb, cap, cap * 8, cam->width, cam->height, err);
    splat_render_opts opts = {.sh_degree = desc->sh_degree, .max_gaussians_per_tile = desc->max_gaussians_per_tile};
    memcpy(opts.background, desc->background, sizeof opts.background);
    if (st == SPLAT_OK) st = splat__render_image(&ctx->stream, r, &sg, &rb, cam, &opts, err);
    if (st == SPLAT_OK) {
        for (uint64_t p = 0; p < px; p++) {
            for (int c = 0; c < 3; c++) buf[4 * p + c] = d_rgb[3 * p + c];
            buf[4 * p + 3] = d_alpha ? d_alpha[p] : 0.0f;
        }
        st = splat__buf_upload(g, &rb.grad_img, 0, buf, px * 16, err);
    }
    if (st == SPLAT_OK) {
        splat__render_bwd(splat__stream_cmd(&ctx->stream), r, &sg, &rb, scene->count, &gg, false);
        st = splat__stream_sync(&ctx->stream, SPLAT_SYNC_COMMIT_AND_WAIT, err);
    }
    if (st == SPLAT_OK) st = splat_scene_init(grads, cap, err);
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
    if (st != SPLAT_OK) splat_scene_free(grads);
    splat__free(buf);
    splat__render_bufs_free(g, &rb);
    splat__scene_gpu_free(g, &sg);
    splat__scene_gpu_free(g, &gg);
    return st;
}

splat_status splat_scene_load_ply(const char *path, splat_scene *scene, splat_error *err)
{
    return splat__ply_read(path, scene, err);
}

splat_status splat_scene_save_ply(const char *path, const splat_scene *scene, splat_error *err)
{
    return splat__ply_write(path, scene, err);
}

splat_status splat_ctx_selfcheck(splat_ctx *ctx, double *max_error, splat_error *err)
{
    /* A fixed-seed random scene (the same every run, so a failure reproduces), rendered on the
     * device and by the double-precision reference. */
    splat_rng rng;
    splat__rng_seed(&rng, 20261122);
    splat_camera cam = {.fx = 80, .fy = 84, .cx = 47, .cy = 33, .width = 96, .height = 64};
    cam.R[0] = cam.R[4] = cam.R[8] = 1;
    splat_scene s;
    splat_status st = splat_scene_init(&s, 200, err);
    if (st != SPLAT_OK) return st;
    s.count = 200;
    for (uint32_t i = 0; i < s.count; i++) {
        double z = 2 + 4 * splat__rng_uniform(&rng);
        s.means[3 * i] = (float)((splat__rng_uniform(&rng) * 96 - 47) / 80 * z);
        s.means[3 * i + 1] = (float)((splat__rng_uniform(&rng) * 64 - 33) / 84 * z);
        s.means[3 * i + 2] = (float)z;
        for (int k = 0; k < 3; k++) s.log_scales[3 * i + k] = (float)(log(z / 80) + 1.5 * splat__rng_uniform(&rng));
        for (int k = 0; k < 4; k++) s.quats[4 * i + k] = (float)splat__rng_normal(&rng);
        s.opacities[i] = (float)(splat__rng_uniform(&rng) * 4 - 1);
        for (int k = 0; k < 48; k++) s.sh[48 * i + k] = (float)(splat__rng_normal(&rng) * (k < 3 ? 1 : 0.2));
    }
    splat_render_desc desc = {.sh_degree = 3, .background = {0.2f, 0.3f, 0.4f}};
    float *img = NULL;
    st = splat_render(ctx, &s, &cam, 1, &desc, &img, err);
    splat_ref_settings set = {.sh_degree = 3, .background = {0.2f, 0.3f, 0.4f}};
    splat_ref_proj *proj = splat__calloc(s.count, sizeof *proj);
    splat_ref_lists lists = {0};
    splat_ref_image ref = {0};
    if (st == SPLAT_OK && !proj) st = splat__fail(err, SPLAT_ERR_OUT_OF_HOST_MEMORY, "selfcheck: out of host memory");
    if (st == SPLAT_OK) st = splat__ref_render(&s, &cam, &set, proj, &lists, &ref, err);
    if (st == SPLAT_OK) {
        double worst = 0;
        for (uint32_t p = 0; p < cam.width * cam.height; p++)
            if (ref.margin[p] >= 1e-4)
                for (int c = 0; c < 3; c++) worst = fmax(worst, fabs(img[3 * p + c] - ref.rgb[3 * p + c]));
        *max_error = worst;
        if (!(worst < 1e-3))
            st = splat__fail(err, SPLAT_ERR_DEVICE, "selfcheck: %s renders differently from the CPU reference (max error %.3g)",
                             ctx->gpu->info.name, worst);
    }
    splat__ref_lists_free(&lists);
    splat__ref_image_free(&ref);
    splat__free(proj);
    splat__free(img);
    splat_scene_free(&s);
    return st;
}
