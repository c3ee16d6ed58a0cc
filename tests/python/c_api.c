/* The C side of the Python module's tests (tests/python/test_splatc.py): the same calls made
 * through include/splatc.h alone, linked to the same libsplatc.so, so the module's results can be
 * compared with C's bit for bit.
 *
 *   c_api layout                  sizeof and offsetof of every field of the structs the module
 *                                 declares again in ctypes: "struct.field offset", "struct size"
 *   c_api render IN OUT           IN: what to render (the layout below); OUT: splat_render's image,
 *                                 then splat_render_backward's image, alpha and gradients
 *   c_api train DATA OUT.ply K=V...  trains with splat_train_desc fields set by name (the ones the
 *                                 Python Trainer takes) and writes the scene
 *
 * IN, all little-endian 32-bit: u32 n, width, height, scene_degree, sh_degree (the desc's),
 * max_gaussians_per_tile, sh_half, rasterize_mode; f32 background[3], fx, fy, cx, cy, R[9], t[3]; f32 means [n,3],
 * log_scales [n,3], quats [n,4], opacities [n], sh [n,16,3], d_rgb [H,W,3], d_alpha [H,W].
 * OUT: f32 image [H,W,3], image [H,W,3], alpha [H,W], then the gradient of means, log_scales,
 * quats, opacities, sh in that order. */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "splatc.h"

static int fail(const char *what, const splat_error *err)
{
    fprintf(stderr, "c_api: %s: %s\n", what, err ? err->msg : "");
    return 1;
}

#define FIELD(s, f) printf("%s.%s %zu\n", #s, #f, offsetof(s, f))
#define SIZE(s) printf("%s %zu\n", #s, sizeof(s))

static int layout(void)
{
    SIZE(splat_error), FIELD(splat_error, status), FIELD(splat_error, msg);
    SIZE(splat_camera), FIELD(splat_camera, fx), FIELD(splat_camera, fy), FIELD(splat_camera, cx), FIELD(splat_camera, cy),
        FIELD(splat_camera, R), FIELD(splat_camera, t), FIELD(splat_camera, width), FIELD(splat_camera, height);
    SIZE(splat_scene), FIELD(splat_scene, count), FIELD(splat_scene, capacity), FIELD(splat_scene, sh_degree),
        FIELD(splat_scene, rasterize_mode), FIELD(splat_scene, means), FIELD(splat_scene, log_scales), FIELD(splat_scene, quats), FIELD(splat_scene, opacities),
        FIELD(splat_scene, sh);
    SIZE(splat_device_info), FIELD(splat_device_info, index), FIELD(splat_device_info, name), FIELD(splat_device_info, driver),
        FIELD(splat_device_info, type), FIELD(splat_device_info, subgroup_size), FIELD(splat_device_info, memory_bytes),
        FIELD(splat_device_info, max_storage_range), FIELD(splat_device_info, unified_memory),
        FIELD(splat_device_info, float_atomics), FIELD(splat_device_info, fp16_storage);
    SIZE(splat_ctx_desc), FIELD(splat_ctx_desc, choose_device), FIELD(splat_ctx_desc, device_index),
        FIELD(splat_ctx_desc, validation);
    SIZE(splat_render_desc), FIELD(splat_render_desc, sh_degree), FIELD(splat_render_desc, background),
        FIELD(splat_render_desc, max_gaussians_per_tile), FIELD(splat_render_desc, sh_half),
        FIELD(splat_render_desc, rasterize_mode);
    SIZE(splat_train_progress), FIELD(splat_train_progress, step), FIELD(splat_train_progress, steps),
        FIELD(splat_train_progress, loss), FIELD(splat_train_progress, psnr), FIELD(splat_train_progress, n_gaussians),
        FIELD(splat_train_progress, iters_per_sec), FIELD(splat_train_progress, eta_sec),
        FIELD(splat_train_progress, isect_padded);
        FIELD(splat_train_progress, memory_cap);
        FIELD(splat_train_progress, memory_cap_step);
        FIELD(splat_train_progress, refines), FIELD(splat_train_progress, cloned);
        FIELD(splat_train_progress, split), FIELD(splat_train_progress, pruned);
        FIELD(splat_train_progress, refines_in_place);
    SIZE(splat_train_desc), FIELD(splat_train_desc, data), FIELD(splat_train_desc, images_factor), FIELD(splat_train_desc, eval),
        FIELD(splat_train_desc, eval_scale),
        FIELD(splat_train_desc, steps), FIELD(splat_train_desc, render), FIELD(splat_train_desc, background),
        FIELD(splat_train_desc, strategy), FIELD(splat_train_desc, seed), FIELD(splat_train_desc, init_points),
        FIELD(splat_train_desc, identity_quats), FIELD(splat_train_desc, init_ply), FIELD(splat_train_desc, init_scene), FIELD(splat_train_desc, progress), FIELD(splat_train_desc, progress_user),
        FIELD(splat_train_desc, progress_ms), FIELD(splat_train_desc, profile), FIELD(splat_train_desc, refine_start),
        FIELD(splat_train_desc, refine_every), FIELD(splat_train_desc, refine_stop), FIELD(splat_train_desc, reset_every),
        FIELD(splat_train_desc, max_gaussians), FIELD(splat_train_desc, isect_capacity), FIELD(splat_train_desc, selective_adam),
        FIELD(splat_train_desc, stream_images);
    SIZE(splat_stage_time), FIELD(splat_stage_time, name), FIELD(splat_stage_time, ms);
    SIZE(splat_eval_result), FIELD(splat_eval_result, n_views), FIELD(splat_eval_result, psnr), FIELD(splat_eval_result, ssim),
        FIELD(splat_eval_result, l1), FIELD(splat_eval_result, psnr_full), FIELD(splat_eval_result, seconds),
        FIELD(splat_eval_result, views), FIELD(splat_eval_result, views_cap);
    SIZE(splat_eval_view), FIELD(splat_eval_view, name), FIELD(splat_eval_view, psnr), FIELD(splat_eval_view, ssim),
        FIELD(splat_eval_view, l1), FIELD(splat_eval_view, psnr_full);
    SIZE(splat_demo_desc), FIELD(splat_demo_desc, width), FIELD(splat_demo_desc, height), FIELD(splat_demo_desc, n_views);
    SIZE(splat_load_info), FIELD(splat_load_info, format), FIELD(splat_load_info, warning);
    return 0;
}

static bool read_exact(FILE *f, void *p, size_t bytes) { return fread(p, 1, bytes, f) == bytes; }

static int render(const char *in_path, const char *out_path)
{
    FILE *f = fopen(in_path, "rb");
    if (!f) return fail(in_path, NULL);
    uint32_t h[8];
    float bg[3], cf[16];
    bool ok = read_exact(f, h, sizeof h) && read_exact(f, bg, sizeof bg) && read_exact(f, cf, sizeof cf);
    uint32_t n = h[0], W = h[1], H = h[2];
    splat_error err = {0};
    splat_scene s = {0}, grads = {0};
    if (!ok || splat_scene_init(&s, n, &err) != SPLAT_OK) return fail(in_path, &err);
    s.count = n;
    s.sh_degree = h[3];
    size_t px = (size_t)W * H;
    float *d_rgb = malloc(px * 12), *d_alpha = malloc(px * 4), *image = malloc(px * 12), *alpha = malloc(px * 4);
    ok = ok && read_exact(f, s.means, n * 12ull) && read_exact(f, s.log_scales, n * 12ull) && read_exact(f, s.quats, n * 16ull) &&
         read_exact(f, s.opacities, n * 4ull) && read_exact(f, s.sh, n * 192ull) && read_exact(f, d_rgb, px * 12) &&
         read_exact(f, d_alpha, px * 4) && fgetc(f) == EOF;
    fclose(f);
    if (!ok) return fail(in_path, NULL);
    splat_camera cam = {.fx = cf[0], .fy = cf[1], .cx = cf[2], .cy = cf[3], .width = W, .height = H};
    memcpy(cam.R, cf + 4, sizeof cam.R);
    memcpy(cam.t, cf + 13, sizeof cam.t);
    splat_render_desc rd = {.sh_degree = h[4], .max_gaussians_per_tile = h[5], .sh_half = h[6] != 0,
                            .rasterize_mode = (splat_rasterize_mode)h[7]};
    memcpy(rd.background, bg, sizeof bg);
    splat_ctx *ctx;
    float *fwd = NULL;
    if (splat_ctx_init(&ctx, NULL, &err) != SPLAT_OK) return fail("context", &err);
    if (splat_render(ctx, &s, &cam, 1, &rd, &fwd, &err) != SPLAT_OK) return fail("splat_render", &err);
    if (splat_render_backward(ctx, &s, &cam, &rd, d_rgb, d_alpha, &grads, image, alpha, &err) != SPLAT_OK)
        return fail("splat_render_backward", &err);
    f = fopen(out_path, "wb");
    ok = f && fwrite(fwd, 12, px, f) == px && fwrite(image, 12, px, f) == px && fwrite(alpha, 4, px, f) == px &&
         fwrite(grads.means, 12, n, f) == n && fwrite(grads.log_scales, 12, n, f) == n && fwrite(grads.quats, 16, n, f) == n &&
         fwrite(grads.opacities, 4, n, f) == n && fwrite(grads.sh, 192, n, f) == n;
    if (!f || fclose(f) != 0 || !ok) return fail(out_path, NULL);
    splat_free(fwd);
    splat_scene_free(&grads);
    splat_scene_free(&s);
    splat_ctx_free(ctx);
    free(d_rgb), free(d_alpha), free(image), free(alpha);
    return 0;
}

/* key=value: the splat_train_desc field of that name (background=R,G,B sets the colour and
 * SPLAT_BACKGROUND_COLOR, background=random SPLAT_BACKGROUND_RANDOM; sh_degree=0 is
 * SPLAT_SH_DEGREE_0, as in the module; rasterize_mode=antialiased). */
static bool set_option(splat_train_desc *d, const char *kv)
{
    const char *eq = strchr(kv, '=');
    if (!eq) return false;
    size_t k = (size_t)(eq - kv);
    const char *v = eq + 1;
    unsigned long long u = strtoull(v, NULL, 10);
#define U32(name)                                                 \
    if (k == strlen(#name) && strncmp(kv, #name, k) == 0) {       \
        d->name = (uint32_t)u;                                    \
        return true;                                              \
    }
    U32(images_factor) U32(steps) U32(init_points) U32(refine_start) U32(refine_every) U32(refine_stop) U32(reset_every)
        U32(max_gaussians) U32(isect_capacity)
#undef U32
    if (strncmp(kv, "seed=", 5) == 0) return d->seed = u, true;
    if (strncmp(kv, "eval_scale=", 11) == 0) return d->eval_scale = strtof(v, NULL), true;
    if (strncmp(kv, "eval=", 5) == 0) return d->eval = u != 0, true;
    if (strncmp(kv, "stream_images=", 14) == 0) return d->stream_images = u != 0, true;
    if (strncmp(kv, "identity_quats=", 15) == 0) return d->identity_quats = u != 0, true;
    if (strncmp(kv, "selective_adam=", 15) == 0) return d->selective_adam = u != 0, true;
    if (strncmp(kv, "init_ply=", 9) == 0) return d->init_ply = v, true;
    if (strncmp(kv, "max_gaussians_per_tile=", 23) == 0) return d->render.max_gaussians_per_tile = (uint32_t)u, true;
    if (strncmp(kv, "sh_degree=", 10) == 0) return d->render.sh_degree = u ? (uint32_t)u : SPLAT_SH_DEGREE_0, true;
    if (strcmp(kv, "background=random") == 0) return d->background = SPLAT_BACKGROUND_RANDOM, true;
    if (strcmp(kv, "strategy=default") == 0) return d->strategy = SPLAT_STRATEGY_DEFAULT, true;
    if (strcmp(kv, "strategy=mcmc") == 0) return d->strategy = SPLAT_STRATEGY_MCMC, true;
    if (strcmp(kv, "rasterize_mode=classic") == 0) return d->render.rasterize_mode = SPLAT_RASTERIZE_CLASSIC, true;
    if (strcmp(kv, "rasterize_mode=antialiased") == 0) return d->render.rasterize_mode = SPLAT_RASTERIZE_ANTIALIASED, true;
    if (strncmp(kv, "background=", 11) == 0) {
        d->background = SPLAT_BACKGROUND_COLOR;
        return sscanf(v, "%f,%f,%f", &d->render.background[0], &d->render.background[1], &d->render.background[2]) == 3;
    }
    return false;
}

static int train(int argc, char **argv)
{
    splat_train_desc d = {.data = argv[2]};
    for (int i = 4; i < argc; i++)
        if (!set_option(&d, argv[i])) {
            fprintf(stderr, "c_api: unknown option %s\n", argv[i]);
            return 2;
        }
    splat_error err = {0};
    splat_ctx *ctx;
    splat_trainer *t;
    splat_scene s = {0};
    if (splat_ctx_init(&ctx, NULL, &err) != SPLAT_OK) return fail("context", &err);
    if (splat_trainer_init(&t, ctx, &d, &err) != SPLAT_OK || splat_trainer_run(t, 0, &err) != SPLAT_OK ||
        splat_trainer_scene(t, &s, &err) != SPLAT_OK || splat_scene_save_ply(argv[3], &s, &err) != SPLAT_OK)
        return fail("train", &err);
    printf("c_api: trained %u steps: %u Gaussians\n", splat_trainer_step(t), s.count);
    splat_scene_free(&s);
    splat_trainer_free(t);
    splat_ctx_free(ctx);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc == 2 && strcmp(argv[1], "layout") == 0) return layout();
    if (argc == 4 && strcmp(argv[1], "render") == 0) return render(argv[2], argv[3]);
    if (argc >= 4 && strcmp(argv[1], "train") == 0) return train(argc, argv);
    fprintf(stderr, "usage: c_api layout | render IN OUT | train DATA OUT.ply [key=value...]\n");
    return 2;
}
