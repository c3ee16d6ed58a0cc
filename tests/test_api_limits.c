/* The public API at the device's limits: refused clearly, before any work, and the context
 * still renders afterwards. */
#include "api/api.h"
#include "harness.h"

/* A frame whose per-pixel buffers do not fit one storage binding (256 MiB at 4096x4096 on
 * lavapipe's 128 MiB): SPLAT_ERR_LIMIT naming the camera and the limit. Once, rendering it freed
 * buffers its submitted work still used, and lavapipe crashed. */
SPLAT_TEST(api_render_frame_too_large)
{
    splat_error err = {0};
    splat_ctx *ctx;
    T_OK(splat_ctx_init(&ctx, NULL, &err), &err);
    splat_device_info info;
    splat_ctx_device(ctx, &info);
    /* the smallest square frame past the limit, if one fits the API's 16384 */
    uint64_t side = (uint64_t)ceil(sqrt((double)info.max_storage_range / 16.0)) + 1;
    splat_scene s;
    T_OK(splat_scene_init(&s, 1, &err), &err);
    s.count = 1;
    float mean[3] = {0, 0, 4}, ls[3] = {-1, -1, -1}, q[4] = {1, 0, 0, 0};
    memcpy(s.means, mean, sizeof mean), memcpy(s.log_scales, ls, sizeof ls), memcpy(s.quats, q, sizeof q);
    s.opacities[0] = 2;
    memset(s.sh, 0, 48 * sizeof(float));
    splat_camera cam = {.fx = 100, .fy = 100, .R = {1, 0, 0, 0, 1, 0, 0, 0, 1}};
    float *img = NULL;
    if (side <= 16384) {
        cam.width = cam.height = (uint32_t)side;
        cam.cx = cam.cy = (float)side / 2;
        splat_status st = splat_render(ctx, &s, &cam, 1, NULL, &img, &err);
        printf("  %ux%u on %s (binding limit %.0f MiB): %s: %s\n", cam.width, cam.height, info.name,
               info.max_storage_range / 1048576.0, splat_status_str(st), err.msg);
        T_CHECK(st == SPLAT_ERR_LIMIT && strstr(err.msg, "image needs") && strstr(err.msg, "maxStorageBufferRange"), "%s: %s",
                splat_status_str(st), err.msg);
        T_CHECK(img == NULL);
        memset(&err, 0, sizeof err);
    } else {
        printf("  %s binds %.0f MiB: every frame the API takes fits\n", info.name, info.max_storage_range / 1048576.0);
    }
    cam.width = cam.height = 64;
    cam.cx = cam.cy = 32;
    T_OK(splat_render(ctx, &s, &cam, 1, NULL, &img, &err), &err);
    T_CHECK(img && img[3 * (32 * 64 + 32)] > 0.1f, "the Gaussian at the centre is not rendered");
    splat_free(img);
    splat_scene_free(&s);
    splat_ctx_free(ctx);
}

/* Gaussians no renderer can use, which a PLY may still hold: a zero rotation quaternion, a
 * log-scale whose covariance overflows a float (88: exp(176)). Refused by name, not rendered
 * into NaN. */
SPLAT_TEST(api_render_unusable_gaussians)
{
    splat_error err = {0};
    splat_ctx *ctx;
    T_OK(splat_ctx_init(&ctx, NULL, &err), &err);
    uint32_t n = 4 + (uint32_t)(splat__rng_u64(splat_test_rng()) % 60), bad = (uint32_t)(splat__rng_u64(splat_test_rng()) % n);
    splat_scene s;
    T_OK(splat_scene_init(&s, n, &err), &err);
    s.count = n;
    for (uint32_t i = 0; i < n; i++) {
        for (int k = 0; k < 3; k++) s.means[3 * i + k] = (float)t_uniform(-1, 1) + (k == 2 ? 4.0f : 0.0f);
        for (int k = 0; k < 3; k++) s.log_scales[3 * i + k] = (float)t_uniform(-4, -1);
        for (int k = 0; k < 4; k++) s.quats[4 * i + k] = (float)t_uniform(-1, 1) + (k == 0 ? 2.0f : 0.0f);
        s.opacities[i] = 1;
        memset(s.sh + 48 * i, 0, 48 * sizeof(float));
    }
    splat_camera cam = {.fx = 60, .fy = 60, .cx = 32, .cy = 32, .width = 64, .height = 64, .R = {1, 0, 0, 0, 1, 0, 0, 0, 1}};
    float *img = NULL;
    T_OK(splat_render(ctx, &s, &cam, 1, NULL, &img, &err), &err);
    splat_free(img);
    img = NULL;
    float q[4];
    memcpy(q, s.quats + 4 * bad, sizeof q);
    memset(s.quats + 4 * bad, 0, sizeof q);
    splat_status st = splat_render(ctx, &s, &cam, 1, NULL, &img, &err);
    char want[64];
    snprintf(want, sizeof want, "Gaussian %u has a zero rotation", bad);
    T_CHECK(st == SPLAT_ERR_INVALID_ARG && strstr(err.msg, want) && !img, "%s: %s", splat_status_str(st), err.msg);
    memcpy(s.quats + 4 * bad, q, sizeof q);
    memset(&err, 0, sizeof err);
    s.log_scales[3 * bad + 1] = 88;
    splat_scene grads;
    float *d_rgb = calloc(64 * 64 * 3, sizeof(float));
    st = splat_render_backward(ctx, &s, &cam, NULL, d_rgb, NULL, &grads, NULL, NULL, &err);
    snprintf(want, sizeof want, "Gaussian %u has log-scale 88", bad);
    T_CHECK(st == SPLAT_ERR_INVALID_ARG && strstr(err.msg, want), "%s: %s", splat_status_str(st), err.msg);
    free(d_rgb);
    splat_scene_free(&s);
    splat_ctx_free(ctx);
}

/* splat_train_desc.eval_scale out of its range is refused by splat_trainer_init, naming it; a
 * scale whose images' SSIM maps would not fit one storage binding is refused there too, before
 * any image is loaded (a demo of 400x300 at 8x needs 352 MiB: lavapipe binds 128). */
SPLAT_TEST(api_train_eval_scale_refused)
{
    splat_error err = {0};
    splat_ctx *ctx;
    T_OK(splat_ctx_init(&ctx, NULL, &err), &err);
    char dir[600];
    snprintf(dir, sizeof dir, "%s", splat_test_path("demo"));
    T_OK(splat_make_demo(ctx, dir, &(splat_demo_desc){.width = 400, .height = 300, .n_views = 2}, &err), &err);
    const float bad[] = {-1, -1e-30f, NAN, INFINITY, -INFINITY, 8.0001f, (float)t_uniform(8.01, 1e30)};
    for (size_t k = 0; k < SPLAT_COUNTOF(bad); k++) {
        splat_trainer *t = (splat_trainer *)&err; /* not NULL: init must clear it */
        err = (splat_error){0};
        splat_status st = splat_trainer_init(&t, ctx, &(splat_train_desc){.data = dir, .eval_scale = bad[k]}, &err);
        T_CHECK(st == SPLAT_ERR_INVALID_ARG && strstr(err.msg, "eval_scale") && !t, "eval_scale %g: %s: %s", (double)bad[k],
                splat_status_str(st), err.msg);
    }
    splat_device_info dev;
    splat_ctx_device(ctx, &dev);
    splat_trainer *t = NULL;
    err = (splat_error){0};
    splat_status st = splat_trainer_init(&t, ctx, &(splat_train_desc){.data = dir, .eval_scale = 8}, &err);
    if (dev.max_storage_range < 3200ull * 2400 * 48) {
        T_CHECK(st == SPLAT_ERR_LIMIT && strstr(err.msg, "evaluate at a smaller scale") && strstr(err.msg, "3200x2400") && !t,
                "%s: %s", splat_status_str(st), err.msg);
    } else {
        T_CHECK(st == SPLAT_OK, "%s: %s", splat_status_str(st), err.msg);
        printf("  %s binds %.0f MiB: the 8x evaluation fits\n", dev.name, dev.max_storage_range / 1048576.0);
    }
    splat_trainer_free(t);
    splat_ctx_free(ctx);
}

/* Every default of the training descriptor against gsplat 1.6.0's simple_trainer with its
 * DefaultStrategy and MCMCStrategy, the trainer splatc measures itself against: 30,000 steps,
 * 100,000 random points, refines every 100 steps from 500 to 15,000 (MCMC 25,000), the opacity
 * reset every 3,000, MCMC's cap of 1,000,000, SH degree 3. A set field is kept. Host only. */
SPLAT_TEST(api_train_defaults)
{
    splat_error err = {0};
    splat_train_desc out;
    for (int mcmc = 0; mcmc < 2; mcmc++) {
        const splat_train_desc in = {.data = "x", .strategy = mcmc ? SPLAT_STRATEGY_MCMC : SPLAT_STRATEGY_DEFAULT};
        T_OK(splat__train_options(&in, &out, &err), &err);
        T_CHECK(out.steps == 30000 && out.init_points == 100000 && out.refine_start == 500 && out.refine_every == 100 &&
                    out.refine_stop == (mcmc ? 25000u : 15000u) && out.reset_every == 3000 &&
                    out.max_gaussians == (mcmc ? 1000000u : UINT32_MAX) && out.images_factor == 1 &&
                    out.eval_scale == 1 && out.render.sh_degree == 3,
                "%s: steps %u, points %u, refines %u..%u every %u, reset %u, cap %u, factor %u, scale %g, degree %u",
                mcmc ? "mcmc" : "default", out.steps, out.init_points, out.refine_start, out.refine_stop,
                out.refine_every, out.reset_every, out.max_gaussians, out.images_factor, (double)out.eval_scale,
                out.render.sh_degree);
    }
    uint32_t v[8];
    for (int k = 0; k < 8; k++) v[k] = (uint32_t)t_uniform(1, 4);
    const splat_train_desc in = {.data = "x", .steps = v[0], .init_points = v[1], .refine_start = v[2], .refine_every = v[3],
                                 .refine_stop = v[4], .reset_every = v[5], .max_gaussians = v[6], .images_factor = v[7],
                                 .render.sh_degree = 1};
    T_OK(splat__train_options(&in, &out, &err), &err);
    T_CHECK(out.steps == v[0] && out.init_points == v[1] && out.refine_start == v[2] && out.refine_every == v[3] &&
                out.refine_stop == v[4] && out.reset_every == v[5] && out.max_gaussians == v[6] && out.images_factor == v[7] &&
                out.render.sh_degree == 1,
            "a set field was not kept");
}
