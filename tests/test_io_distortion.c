/* io: lens distortion (src/io/distortion.c) against COLMAP: its formulas written again here from
 * COLMAP's camera_models.h (and nerfstudio's perspective model from its camera_utils.py), the inversion, the undistorted camera, images undistorted at load, and
 * one image against `colmap image_undistorter` itself. */
#include <sys/wait.h>

#include "io_fixtures.h"
#include "io/io_util.h"

static uint32_t rnd(uint32_t n) { return (uint32_t)(splat__rng_u64(splat_test_rng()) % n); }

static const splat_distortion_model k_models[] = {SPLAT_DISTORTION_SIMPLE_RADIAL, SPLAT_DISTORTION_RADIAL,
                                                  SPLAT_DISTORTION_OPENCV, SPLAT_DISTORTION_FULL_OPENCV,
                                                  SPLAT_DISTORTION_OPENCV_FISHEYE, SPLAT_DISTORTION_NERFSTUDIO};
static const char *const k_names[] = {"SIMPLE_RADIAL", "RADIAL", "OPENCV", "FULL_OPENCV", "OPENCV_FISHEYE", "nerfstudio"};
/* the models COLMAP has (the first 5), by its ids */
static const int k_colmap_ids[] = {2, 3, 4, 6, 5};
#define N_COLMAP_MODELS SPLAT_COUNTOF(k_colmap_ids)

/* Parameters of the size phone, action and fisheye cameras have (COLMAP's orders). */
static splat_distortion random_distortion(splat_distortion_model model)
{
    splat_distortion d = {.model = model};
    double *k = d.k;
    switch (model) {
    case SPLAT_DISTORTION_SIMPLE_RADIAL: k[0] = t_uniform(-0.15, 0.1); break;
    case SPLAT_DISTORTION_RADIAL: k[0] = t_uniform(-0.15, 0.1), k[1] = t_uniform(-0.02, 0.03); break;
    case SPLAT_DISTORTION_OPENCV:
        k[0] = t_uniform(-0.15, 0.1), k[1] = t_uniform(-0.02, 0.03), k[2] = t_uniform(-2e-3, 2e-3), k[3] = t_uniform(-2e-3, 2e-3);
        break;
    case SPLAT_DISTORTION_FULL_OPENCV:
        k[0] = t_uniform(-0.15, 0.1), k[1] = t_uniform(-0.02, 0.03), k[2] = t_uniform(-2e-3, 2e-3), k[3] = t_uniform(-2e-3, 2e-3);
        k[4] = t_uniform(-0.01, 0.01), k[5] = t_uniform(-0.05, 0.05), k[6] = t_uniform(-0.01, 0.01), k[7] = t_uniform(-0.005, 0.005);
        break;
    case SPLAT_DISTORTION_OPENCV_FISHEYE:
        k[0] = t_uniform(-0.05, 0.05), k[1] = t_uniform(-0.01, 0.01), k[2] = t_uniform(-0.005, 0.005), k[3] = t_uniform(-0.002, 0.002);
        break;
    case SPLAT_DISTORTION_NERFSTUDIO:
        k[0] = t_uniform(-0.15, 0.1), k[1] = t_uniform(-0.02, 0.03), k[2] = t_uniform(-0.004, 0.004), k[3] = t_uniform(-5e-4, 5e-4);
        k[4] = t_uniform(-2e-3, 2e-3), k[5] = t_uniform(-2e-3, 2e-3);
        break;
    case SPLAT_DISTORTION_NONE: break;
    }
    return d;
}

/* COLMAP's Distortion() of each model, again. */
static void colmap_distort(const splat_distortion *d, double u, double v, double *ud, double *vd)
{
    const double *k = d->k;
    double u2 = u * u, v2 = v * v, uv = u * v, r2 = u2 + v2, du = 0, dv = 0;
    if (d->model == SPLAT_DISTORTION_SIMPLE_RADIAL) du = u * k[0] * r2, dv = v * k[0] * r2;
    if (d->model == SPLAT_DISTORTION_RADIAL) du = u * (k[0] * r2 + k[1] * r2 * r2), dv = v * (k[0] * r2 + k[1] * r2 * r2);
    if (d->model == SPLAT_DISTORTION_OPENCV) {
        double radial = k[0] * r2 + k[1] * r2 * r2;
        du = u * radial + 2 * k[2] * uv + k[3] * (r2 + 2 * u2);
        dv = v * radial + 2 * k[3] * uv + k[2] * (r2 + 2 * v2);
    }
    if (d->model == SPLAT_DISTORTION_FULL_OPENCV) {
        double r4 = r2 * r2, r6 = r4 * r2;
        double radial = (1 + k[0] * r2 + k[1] * r4 + k[4] * r6) / (1 + k[5] * r2 + k[6] * r4 + k[7] * r6);
        du = u * radial + 2 * k[2] * uv + k[3] * (r2 + 2 * u2) - u;
        dv = v * radial + 2 * k[3] * uv + k[2] * (r2 + 2 * v2) - v;
    }
    if (d->model == SPLAT_DISTORTION_OPENCV_FISHEYE) {
        double r = sqrt(r2);
        if (r > 2.220446049250313e-16) {
            double th = atan(r), t2 = th * th;
            double thd = th * (1 + k[0] * t2 + k[1] * t2 * t2 + k[2] * t2 * t2 * t2 + k[3] * t2 * t2 * t2 * t2);
            du = u * thd / r - u, dv = v * thd / r - v;
        }
    }
    if (d->model == SPLAT_DISTORTION_NERFSTUDIO) { /* d = 1 + k1 r + k2 r^2 + k3 r^3 + k4 r^4, r = x^2 + y^2 */
        double dd = 1 + k[0] * r2 + k[1] * r2 * r2 + k[2] * r2 * r2 * r2 + k[3] * r2 * r2 * r2 * r2;
        du = dd * u + 2 * k[4] * uv + k[5] * (r2 + 2 * u2) - u;
        dv = dd * v + 2 * k[5] * uv + k[4] * (r2 + 2 * v2) - v;
    }
    *ud = u + du, *vd = v + dv;
}

static splat_camera random_raw(uint32_t w, uint32_t h)
{
    splat_camera c = {.width = w, .height = h};
    c.fx = (float)(SPLAT_MAX(w, h) * t_uniform(0.7, 1.4)); /* fields of view of 40 to 70 degrees */
    c.fy = c.fx * (float)t_uniform(0.98, 1.02);
    c.cx = (float)(w * t_uniform(0.45, 0.55)), c.cy = (float)(h * t_uniform(0.45, 0.55));
    c.R[0] = c.R[4] = c.R[8] = 1;
    return c;
}

/* Does the model reach past each corner of the image (by 1 %) along the ray towards it before
 * its distorted radius stops growing? A strong barrel term folds inside a wide image's corners,
 * and points past the fold have no inverse (io_distortion_camera covers those). */
static bool reaches_corners(const splat_distortion *d, const splat_camera *c)
{
    for (int k = 0; k < 4; k++) {
        double ud = ((k & 1) ? c->width - c->cx : -c->cx) / c->fx, vd = ((k & 2) ? c->height - c->cy : -c->cy) / c->fy;
        double rt = sqrt(ud * ud + vd * vd), last = 0, r = 0;
        for (int q = 1; q <= 4000 && r < 1.01 * rt; q++) {
            double t = 3.0 * q / 4000, a, b;
            colmap_distort(d, t * ud / rt, t * vd / rt, &a, &b);
            r = sqrt(a * a + b * b);
            if (!(r > last)) return false;
            last = r;
        }
        if (r < 1.01 * rt) return false;
    }
    return true;
}

/* Every model: the formulas agree with COLMAP's, and distort(undistort(p)) = p to 1e-6 pixels at
 * every pixel corner of an image (drawn again until its corners lie inside the model's fold). */
SPLAT_TEST(io_distortion_round_trip)
{
    for (size_t m = 0; m < SPLAT_COUNTOF(k_models); m++) {
        splat_distortion d;
        splat_camera c;
        int redrawn = -1;
        do {
            d = random_distortion(k_models[m]);
            c = random_raw(200 + rnd(400), 150 + rnd(300));
            redrawn++;
        } while (!reaches_corners(&d, &c) && redrawn < 100);
        T_REQUIRE(redrawn < 100, "%s: 100 draws fold inside the image", k_names[m]);
        if (redrawn) printf("  %s: %d draws folded inside the image's corners, drawn again\n", k_names[m], redrawn);
        double worst = 0, formula = 0;
        for (uint32_t y = 0; y <= c.height; y += 1 + rnd(3))
            for (uint32_t x = 0; x <= c.width; x += 1 + rnd(3)) {
                double ud = (x - c.cx) / c.fx, vd = (y - c.cy) / c.fy, u, v, a, b, e, f;
                T_REQUIRE(splat__undistort(&d, ud, vd, &u, &v), "%s: no inverse at (%u, %u)", k_names[m], x, y);
                splat__distort(&d, u, v, &a, &b);
                worst = fmax(worst, fmax(fabs(a - ud) * c.fx, fabs(b - vd) * c.fy));
                colmap_distort(&d, u, v, &e, &f);
                formula = fmax(formula, fmax(fabs(a - e), fabs(b - f)) / fmax(1, fabs(e) + fabs(f)));
            }
        printf("  %-15s %ux%u: round trip within %.2e px, formulas within %.1e\n", k_names[m], c.width, c.height, worst,
               formula);
        T_CHECK(worst < 1e-6, "%s: distort(undistort(p)) is %.3g px from p", k_names[m], worst);
        T_CHECK(formula < 1e-14, "%s: the distortion differs from COLMAP's formula by %.3g", k_names[m], formula);
    }
}

/* The undistorted camera: every pixel centre of it maps, distorted, inside the image; the box is
 * tight (each side comes within a pixel of the image's edge); zero distortion changes nothing. */
SPLAT_TEST(io_distortion_camera)
{
    for (size_t m = 0; m < SPLAT_COUNTOF(k_models); m++) {
        splat_distortion d = random_distortion(k_models[m]);
        splat_camera raw = random_raw(100 + rnd(300), 80 + rnd(200)), cam;
        splat_error err = {0};
        T_OK(splat__undistorted_camera("test", k_names[m], &raw, &d, &cam, &err), &err);
        T_CHECK(cam.fx == raw.fx && cam.fy == raw.fy, "%s: the focal lengths changed", k_names[m]);
        double lo[2] = {HUGE_VAL, HUGE_VAL}, hi[2] = {-HUGE_VAL, -HUGE_VAL};
        uint64_t outside = 0;
        for (uint32_t j = 0; j < cam.height; j++)
            for (uint32_t i = 0; i < cam.width; i++) {
                if (j != 0 && j != cam.height - 1 && i != 0 && i != cam.width - 1) continue;
                double u = (i + 0.5 - cam.cx) / cam.fx, v = (j + 0.5 - cam.cy) / cam.fy, ud, vd;
                colmap_distort(&d, u, v, &ud, &vd);
                double x = ud * raw.fx + raw.cx, y = vd * raw.fy + raw.cy;
                outside += x < 0 || y < 0 || x > raw.width || y > raw.height;
                lo[0] = fmin(lo[0], x), lo[1] = fmin(lo[1], y), hi[0] = fmax(hi[0], x), hi[1] = fmax(hi[1], y);
            }
        printf("  %-15s %ux%u -> %ux%u, border pixels span x %.2f..%.2f, y %.2f..%.2f\n", k_names[m], raw.width, raw.height,
               cam.width, cam.height, lo[0], hi[0], lo[1], hi[1]);
        T_CHECK(outside == 0, "%s: %llu border pixels map outside the image", k_names[m], (unsigned long long)outside);
        T_CHECK(lo[0] < 2.5 || lo[1] < 2.5 || hi[0] > raw.width - 2.5 || hi[1] > raw.height - 2.5,
                "%s: the box is not tight: x %.2f..%.2f, y %.2f..%.2f of %ux%u", k_names[m], lo[0], hi[0], lo[1], hi[1],
                raw.width, raw.height);
    }
    /* Models the image's corners lie beyond: a barrel term that folds inside a wide image, and a
     * fisheye whose image spans more than 180 degrees. The camera keeps to the part before the
     * fold (the distorted radius grows along every ray to its border) and inside the image. */
    const splat_distortion beyond[] = {{.model = SPLAT_DISTORTION_SIMPLE_RADIAL, .k = {-0.3}},
                                       {.model = SPLAT_DISTORTION_OPENCV_FISHEYE, .k = {-0.05, -0.01, -0.005, -0.002}}};
    for (size_t b = 0; b < SPLAT_COUNTOF(beyond); b++) {
        splat_camera raw = random_raw(200 + rnd(100), 150 + rnd(50)), cam;
        raw.fx = raw.fy = (float)(raw.width * t_uniform(0.35, 0.45));
        splat_error err = {0};
        T_OK(splat__undistorted_camera("test", "camera", &raw, &beyond[b], &cam, &err), &err);
        uint64_t bad = 0;
        for (uint32_t j = 0; j < cam.height; j++)
            for (uint32_t i = 0; i < cam.width; i++) {
                if (j != 0 && j != cam.height - 1 && i != 0 && i != cam.width - 1) continue;
                double u = (i + 0.5 - cam.cx) / cam.fx, v = (j + 0.5 - cam.cy) / cam.fy, ud, vd, last = 0;
                colmap_distort(&beyond[b], u, v, &ud, &vd);
                double x = ud * raw.fx + raw.cx, y = vd * raw.fy + raw.cy;
                bad += x < 0 || y < 0 || x > raw.width || y > raw.height;
                for (int k = 1; k <= 64; k++) {
                    colmap_distort(&beyond[b], u * k / 64, v * k / 64, &ud, &vd);
                    bad += !(ud * ud + vd * vd > last);
                    last = ud * ud + vd * vd;
                }
            }
        printf("  beyond %zu: %ux%u (f %.1f) -> %ux%u\n", b, raw.width, raw.height, (double)raw.fx, cam.width, cam.height);
        T_CHECK(bad == 0, "model %zu beyond the image: %llu border rays fold or leave the image", b, (unsigned long long)bad);
    }
    splat_distortion zero = {.model = SPLAT_DISTORTION_OPENCV};
    splat_camera raw = random_raw(64, 48), cam;
    splat_error err = {0};
    T_OK(splat__undistorted_camera("test", "camera", &raw, &zero, &cam, &err), &err);
    T_CHECK(memcmp(&cam, &raw, sizeof cam) == 0, "a zero distortion changed the camera");
}

/* A smooth pattern over the distorted image's pixel positions. */
static double pattern(double x, double y, int c)
{
    return 0.5 + 0.4 * sin(0.11 * x + 0.7 * c) * cos(0.09 * y - 0.3 * c);
}

/* A COLMAP scene with a distorted camera loads as a pinhole one, and its image as the same scene
 * seen through it: each undistorted pixel has the value of the pattern at the pixel it comes
 * from (COLMAP's formula), within bilinear and 8-bit rounding. A camera whose distortion is all
 * zero is not resampled: its image loads bit for bit. */
SPLAT_TEST(io_distortion_load)
{
    for (size_t m = 0; m < N_COLMAP_MODELS; m++) {
        splat_distortion d = random_distortion(k_models[m]);
        t_colmap model;
        t_colmap_random(&model);
        model.n_cams = 1;
        t_cam *c = &model.cams[0];
        c->model = k_colmap_ids[m];
        c->width = 96 + rnd(64), c->height = 64 + rnd(48);
        splat_camera raw = random_raw((uint32_t)c->width, (uint32_t)c->height);
        double head[4] = {raw.fx, raw.fy, raw.cx, raw.cy};
        int first = c->model == 2 || c->model == 3 ? 3 : 4;
        if (first == 3) head[1] = head[2], head[2] = head[3], raw.fy = raw.fx;
        for (int k = 0; k < first; k++) c->params[k] = head[k];
        for (uint32_t k = 0; k < splat__distortion_params(d.model); k++) c->params[first + k] = d.k[k];
        raw.fx = (float)c->params[0];
        model.n_imgs = 3;
        for (int i = 0; i < model.n_imgs; i++) {
            model.imgs[i].camera_id = c->id;
            model.imgs[i].w = (uint32_t)c->width, model.imgs[i].h = (uint32_t)c->height;
        }
        const char *scene = t_path("dist%zu", m);
        char dir[600];
        snprintf(dir, sizeof dir, "%s/sparse/0", scene);
        t_colmap_write(&model, dir, m % 2 == 1);
        char idir[600];
        snprintf(idir, sizeof idir, "%s/images", scene);
        t_mkdir(idir);
        uint32_t W = (uint32_t)c->width, H = (uint32_t)c->height;
        uint8_t *px = malloc((size_t)W * H * 3);
        for (uint32_t y = 0; y < H; y++)
            for (uint32_t x = 0; x < W; x++)
                for (int ch = 0; ch < 3; ch++) px[(y * W + x) * 3 + ch] = (uint8_t)lrint(255 * pattern(x + 0.5, y + 0.5, ch));
        for (int i = 0; i < model.n_imgs; i++) {
            char path[700];
            snprintf(path, sizeof path, "%s/%s", idir, model.imgs[i].name);
            T_REQUIRE(t_write_png(path, W, H, 2, 8, px, (size_t)W * 3, NULL, 0, NULL, 0, false));
        }
        free(px);
        splat_dataset ds;
        splat_error err = {0};
        T_OK(splat__dataset_load(&(splat_dataset_desc){.path = scene}, &ds, &err), &err);
        const splat_data_view *v = &ds.views[rnd(ds.n_views)];
        splat_image im;
        T_OK(splat__view_image_load(v, &im, &err), &err);
        T_CHECK(im.width == v->camera.width && im.height == v->camera.height);
        double sum = 0, worst = 0;
        uint64_t n = 0;
        for (uint32_t j = 1; j + 1 < im.height; j++)
            for (uint32_t i = 1; i + 1 < im.width; i++) {
                double u = (i + 0.5 - v->camera.cx) / v->camera.fx, w = (j + 0.5 - v->camera.cy) / v->camera.fy, ud, wd;
                colmap_distort(&d, u, w, &ud, &wd);
                double x = ud * v->raw.fx + v->raw.cx, y = wd * v->raw.fy + v->raw.cy;
                for (int ch = 0; ch < 3; ch++) {
                    double e = fabs(im.rgba[((size_t)j * im.width + i) * 4 + ch] / 255.0 - pattern(x, y, ch));
                    sum += e, worst = fmax(worst, e), n++;
                }
            }
        printf("  %-15s %ux%u -> %ux%u: mean error %.4f, max %.4f (of 1)\n", k_names[m], W, H, im.width, im.height, sum / n,
               worst);
        T_CHECK(sum / n < 2.0 / 255 && worst < 8.0 / 255, "%s: mean error %.4f, max %.4f", k_names[m], sum / n, worst);
        splat__image_free(&im);
        splat__dataset_free(&ds);
        /* the same camera with all its distortion parameters 0: a pinhole, the image untouched */
        for (uint32_t k = 0; k < splat__distortion_params(d.model); k++) c->params[first + k] = 0;
        t_colmap_write(&model, dir, m % 2 == 1);
        T_OK(splat__dataset_load(&(splat_dataset_desc){.path = scene}, &ds, &err), &err);
        v = &ds.views[0];
        T_CHECK(memcmp(&v->camera, &v->raw, sizeof v->camera) == 0, "%s with zero parameters: the camera changed", k_names[m]);
        splat_image plain;
        T_OK(splat__view_image_load(v, &im, &err), &err);
        T_OK(splat__image_load(v->image_path, &plain, &err), &err);
        T_CHECK(im.width == plain.width && im.height == plain.height &&
                    memcmp(im.rgba, plain.rgba, (size_t)im.width * im.height * 4) == 0,
                "%s with zero parameters: the image was resampled", k_names[m]);
        splat__image_free(&im), splat__image_free(&plain);
        splat__dataset_free(&ds);
    }
}

/* One image undistorted by `colmap image_undistorter` (COLMAP 3.8, Debian's package, which the
 * test command installs) and by splatc into the camera COLMAP chose: the two agree above 40 dB,
 * for every model. */
SPLAT_TEST(io_distortion_vs_colmap)
{
    T_REQUIRE(system("command -v colmap >/dev/null 2>&1") == 0, "colmap is not installed (scripts/deps.sh installs it)");
    for (size_t m = 0; m < N_COLMAP_MODELS; m++) {
        splat_distortion d = random_distortion(k_models[m]);
        uint32_t W = 120 + rnd(80), H = 90 + rnd(60);
        splat_camera raw = random_raw(W, H);
        bool one = k_colmap_ids[m] == 2 || k_colmap_ids[m] == 3;
        if (one) raw.fy = raw.fx;
        const char *scene = t_path("colmap%zu", m);
        char path[800], cmd[3000];
        snprintf(path, sizeof path, "%s/images", scene);
        t_mkdir(scene), t_mkdir(path);
        snprintf(path, sizeof path, "%s/sparse", scene);
        t_mkdir(path);
        uint8_t *px = malloc((size_t)W * H * 3);
        for (uint32_t y = 0; y < H; y++)
            for (uint32_t x = 0; x < W; x++)
                for (int ch = 0; ch < 3; ch++) px[(y * W + x) * 3 + ch] = (uint8_t)lrint(255 * pattern(x * 1.7, y * 1.3, ch));
        snprintf(path, sizeof path, "%s/images/a.png", scene);
        T_REQUIRE(t_write_png(path, W, H, 2, 8, px, (size_t)W * 3, NULL, 0, NULL, 0, false));
        free(px);
        tbuf b = {0};
        tb_printf(&b, "1 %s %u %u %.17g", k_names[m], W, H, (double)raw.fx);
        if (!one) tb_printf(&b, " %.17g", (double)raw.fy);
        tb_printf(&b, " %.17g %.17g", (double)raw.cx, (double)raw.cy);
        for (uint32_t k = 0; k < splat__distortion_params(d.model); k++) tb_printf(&b, " %.17g", d.k[k]);
        tb_printf(&b, "\n");
        snprintf(path, sizeof path, "%s/sparse/cameras.txt", scene);
        T_REQUIRE(t_write(path, b.p, b.n));
        tb_free(&b);
        snprintf(path, sizeof path, "%s/sparse/images.txt", scene);
        T_REQUIRE(t_write(path, "1 1 0 0 0 0 0 3 1 a.png\n\n", 25));
        snprintf(path, sizeof path, "%s/sparse/points3D.txt", scene);
        T_REQUIRE(t_write(path, "", 0));
        /* The sanitizer build preloads ASan into the tests (tests/CMakeLists.txt); COLMAP is not ours
         * and LeakSanitizer fails it for what its start-up leaves. */
        snprintf(cmd, sizeof cmd,
                 "env -u LD_PRELOAD ASAN_OPTIONS= LSAN_OPTIONS= QT_QPA_PLATFORM=offscreen colmap image_undistorter --image_path '%s/images' --input_path '%s/sparse' "
                 "--output_path '%s/out' --output_type COLMAP >'%s/colmap.log' 2>&1",
                 scene, scene, scene, scene);
        int rc = system(cmd);
        if (rc != 0) {
            snprintf(cmd, sizeof cmd, "tail -n 20 '%s/colmap.log' >&2", scene);
            (void)!system(cmd);
        }
        T_REQUIRE(rc == 0, "%s: colmap image_undistorter failed (%s/colmap.log)", k_names[m], scene);
        /* COLMAP's result is a pinhole scene: its camera, and its image */
        splat_dataset ds;
        splat_error err = {0};
        snprintf(path, sizeof path, "%s/out", scene);
        T_OK(splat__dataset_load(&(splat_dataset_desc){.path = path}, &ds, &err), &err);
        splat_image theirs, src, mine;
        T_OK(splat__view_image_load(&ds.views[0], &theirs, &err), &err);
        snprintf(path, sizeof path, "%s/images/a.png", scene);
        T_OK(splat__image_load(path, &src, &err), &err);
        T_OK(splat__image_undistort(&src, &raw, &d, &ds.views[0].camera, &mine, &err), &err);
        double se = 0;
        uint64_t n = (uint64_t)mine.width * mine.height * 3;
        for (uint64_t p = 0; p < (uint64_t)mine.width * mine.height; p++)
            for (int ch = 0; ch < 3; ch++) {
                double e = (mine.rgba[4 * p + ch] - theirs.rgba[4 * p + ch]) / 255.0;
                se += e * e;
            }
        double psnr = se > 0 ? -10 * log10(se / n) : 99;
        printf("  %-15s %ux%u -> COLMAP's %ux%u (fx %g cx %g cy %g): PSNR %.2f dB between the two\n", k_names[m], W, H,
               mine.width, mine.height, ds.views[0].camera.fx, ds.views[0].camera.cx, ds.views[0].camera.cy, psnr);
        T_CHECK(psnr > 40, "%s: splatc and COLMAP undistort to images %.2f dB apart", k_names[m], psnr);
        splat__image_free(&theirs), splat__image_free(&src), splat__image_free(&mine);
        splat__dataset_free(&ds);
    }
}

/* Coefficients past anything a lens has (|k| up to 3e38, still finite as floats) must be refused,
 * never turned into a camera: the inversion fails at every border pixel there, and a box of the
 * clamp's size (four times the image) came out of that before. */
SPLAT_TEST(io_distortion_absurd_refused)
{
    static const splat_distortion_model models[] = {SPLAT_DISTORTION_SIMPLE_RADIAL, SPLAT_DISTORTION_RADIAL,
                                                    SPLAT_DISTORTION_OPENCV, SPLAT_DISTORTION_OPENCV_FISHEYE,
                                                    SPLAT_DISTORTION_NERFSTUDIO};
    for (size_t m = 0; m < SPLAT_COUNTOF(models); m++)
        for (int sign = -1; sign <= 1; sign += 2) {
            double mag = pow(10, t_uniform(25, 38.5));
            splat_distortion d = {.model = models[m], .k = {sign * mag}};
            splat_camera raw = random_raw(24 + rnd(200), 24 + rnd(200)), cam;
            splat_error err = {0};
            splat_status st = splat__undistorted_camera("test", "camera", &raw, &d, &cam, &err);
            T_CHECK(st == SPLAT_ERR_UNSUPPORTED && strncmp(err.msg, "test: camera: ", 14) == 0,
                    "model %d, k1 = %g: %s (%ux%u -> %ux%u) %s", (int)models[m], d.k[0], splat_status_str(st), raw.width,
                    raw.height, cam.width, cam.height, err.msg);
        }
}
