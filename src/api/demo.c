/* The bundled demo: a procedural object of Gaussians, rendered by splatc itself into a small
 * NeRF-synthetic dataset, so the main job needs no download. */
#include <errno.h>
#include <stdio.h>
#include <sys/stat.h>

#include <cjson/cJSON.h>

#include "api/ctx.h"
#include "io/io.h"

/* Colour helpers for the object. */
static void hue(double h, float rgb[3])
{
    for (int c = 0; c < 3; c++) {
        double k = fmod(h * 6.0 + (c == 0 ? 0 : c == 1 ? 4 : 2), 6.0);
        rgb[c] = (float)(1.0 - fmax(0.0, fmin(1.0, fmin(k, 4.0 - k))) * 0.85);
    }
}

static void add(splat_scene *s, const double p[3], double scale, const float rgb[3], double opacity_logit,
                splat_rng *rng)
{
    uint32_t i = s->count++;
    for (int k = 0; k < 3; k++) {
        s->means[3 * i + k] = (float)p[k];
        s->log_scales[3 * i + k] = (float)log(scale * (0.8 + 0.4 * splat__rng_uniform(rng)));
    }
    s->quats[4 * i] = 1;
    s->quats[4 * i + 1] = s->quats[4 * i + 2] = s->quats[4 * i + 3] = 0;
    s->opacities[i] = (float)opacity_logit;
    memset(&s->sh[48 * i], 0, 48 * sizeof(float));
    for (int c = 0; c < 3; c++) s->sh[48 * i + c] = (float)((rgb[c] - 0.5) / 0.28209479177387814);
}

/* A rainbow torus around a grey-blue sphere with a small orange cube on top: smooth colour
 * gradients, sharp edges, occlusion and thin parts, in ~3000 Gaussians. */
static splat_status build_object(splat_scene *s, splat_error *err)
{
    splat_status st = splat_scene_init(s, 4000, err);
    if (st != SPLAT_OK) return st;
    s->sh_degree = 0;
    splat_rng rng;
    splat__rng_seed(&rng, 7);
    const double pi = 3.14159265358979;
    for (int a = 0; a < 72; a++)
        for (int b = 0; b < 20; b++) {
            double u = 2 * pi * (a + 0.5 * (b % 2)) / 72, v = 2 * pi * b / 20, R = 0.62, r = 0.18;
            double p[3] = {(R + r * cos(v)) * cos(u), (R + r * cos(v)) * sin(u), r * sin(v)};
            float rgb[3];
            hue(u / (2 * pi), rgb);
            add(s, p, 0.035, rgb, 3.0, &rng);
        }
    for (int k = 0; k < 900; k++) {
        /* Fibonacci sphere */
        double y = 1 - 2 * (k + 0.5) / 900, rr = sqrt(1 - y * y), phi = k * 2.399963229728653;
        double p[3] = {0.33 * rr * cos(phi), 0.33 * rr * sin(phi), 0.33 * y};
        int band = (int)floor((atan2(p[1], p[0]) + pi) / (pi / 4)) + (y > 0);
        float rgb[3] = {0.25f, 0.35f, 0.75f};
        if (band % 2) rgb[0] = rgb[1] = rgb[2] = 0.9f;
        add(s, p, 0.03, rgb, 3.0, &rng);
    }
    for (int f = 0; f < 6; f++)
        for (int i = 0; i < 9; i++)
            for (int j = 0; j < 9; j++) {
                double c[3], u = (i - 4) / 4.0 * 0.13, v = (j - 4) / 4.0 * 0.13, w = (f % 2 ? 1 : -1) * 0.13;
                int ax = f / 2;
                c[ax] = w;
                c[(ax + 1) % 3] = u;
                c[(ax + 2) % 3] = v;
                double p[3] = {c[0] + 0.25, c[1] - 0.2, c[2] + 0.5};
                float rgb[3] = {0.95f, 0.55f - 0.08f * f, 0.1f};
                add(s, p, 0.022, rgb, 3.5, &rng);
            }
    return SPLAT_OK;
}

/* A camera on a sphere of radius `dist` looking at the origin, world up +z: OpenCV
 * world-to-camera for rendering, and the OpenGL camera-to-world matrix NeRF files hold. */
static void look_at(double az, double el, double dist, uint32_t w, uint32_t h, double fx, splat_camera *cam,
                    double c2w[16])
{
    double eye[3] = {dist * cos(el) * cos(az), dist * cos(el) * sin(az), dist * sin(el)};
    double f[3] = {-eye[0] / dist, -eye[1] / dist, -eye[2] / dist};
    double up[3] = {0, 0, 1};
    double r[3] = {f[1] * up[2] - f[2] * up[1], f[2] * up[0] - f[0] * up[2], f[0] * up[1] - f[1] * up[0]};
    double rn = sqrt(r[0] * r[0] + r[1] * r[1] + r[2] * r[2]);
    for (int k = 0; k < 3; k++) r[k] /= rn;
    double d[3] = {f[1] * r[2] - f[2] * r[1], f[2] * r[0] - f[0] * r[2], f[0] * r[1] - f[1] * r[0]};
    memset(cam, 0, sizeof *cam);
    cam->width = w;
    cam->height = h;
    cam->fx = cam->fy = (float)fx;
    cam->cx = 0.5f * w;
    cam->cy = 0.5f * h;
    for (int k = 0; k < 3; k++) {
        cam->R[k] = (float)r[k];
        cam->R[3 + k] = (float)d[k];
        cam->R[6 + k] = (float)f[k];
    }
    for (int i = 0; i < 3; i++) cam->t[i] = -(cam->R[3 * i] * (float)eye[0] + cam->R[3 * i + 1] * (float)eye[1] + cam->R[3 * i + 2] * (float)eye[2]);
    /* columns: right, up (= -down), back (= -forward), eye */
    double cols[4][3] = {{r[0], r[1], r[2]}, {-d[0], -d[1], -d[2]}, {-f[0], -f[1], -f[2]}, {eye[0], eye[1], eye[2]}};
    for (int row = 0; row < 4; row++)
        for (int col = 0; col < 4; col++) c2w[row * 4 + col] = row < 3 ? cols[col][row] : (col == 3 ? 1.0 : 0.0);
}

static splat_status make_dir(const char *path, splat_error *err)
{
    if (mkdir(path, 0755) != 0 && errno != EEXIST)
        return splat__fail(err, SPLAT_ERR_IO, "%s: cannot create directory: %s", path, strerror(errno));
    return SPLAT_OK;
}

static splat_status write_split(splat_ctx *ctx, const char *dir, const char *split, const splat_scene *s, uint32_t n,
                                uint32_t w, uint32_t h, uint32_t seed, splat_error *err)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, split);
    splat_status st = make_dir(path, err);
    if (st != SPLAT_OK) return st;
    splat_renderer *r;
    st = splat__ctx_renderer(ctx, &r, err);
    if (st != SPLAT_OK) return st;
    const double fov_x = 40.0 * 3.14159265358979 / 180.0;
    double fx = 0.5 * w / tan(0.5 * fov_x);
    splat_gpu *g = ctx->gpu;
    splat_scene_gpu sg;
    splat_render_bufs rb;
    memset(&rb, 0, sizeof rb);
    st = splat__scene_gpu_init(g, &sg, "demo", s->count, err);
    if (st == SPLAT_OK) st = splat__scene_gpu_upload(g, &sg, s, err);
    if (st == SPLAT_OK) st = splat__render_bufs_init(g, r, &rb, s->count, s->count * 16, w, h, err);
    cJSON *root = cJSON_CreateObject(), *frames = cJSON_CreateArray();
    cJSON_AddNumberToObject(root, "camera_angle_x", fov_x);
    cJSON_AddItemToObject(root, "frames", frames);
    float *rgbt = splat__malloc((size_t)w * h * 16), *rgb = splat__malloc((size_t)w * h * 12), *alpha = splat__malloc((size_t)w * h * 4);
    if (st == SPLAT_OK && (!rgbt || !rgb || !alpha)) st = splat__fail(err, SPLAT_ERR_OUT_OF_HOST_MEMORY, "demo: out of host memory");
    splat_rng rng;
    splat__rng_seed(&rng, seed);
    for (uint32_t k = 0; k < n && st == SPLAT_OK; k++) {
        /* stratified azimuth, elevation from -20 to 65 degrees */
        double az = 2 * 3.14159265358979 * (k + splat__rng_uniform(&rng)) / n;
        double el = (-20 + 85 * splat__rng_uniform(&rng)) * 3.14159265358979 / 180.0;
        splat_camera cam;
        double c2w[16];
        look_at(az, el, 3.2, w, h, fx, &cam, c2w);
        splat_render_opts opts = {.sh_degree = 0};
        st = splat__render_image(&ctx->stream, r, &sg, &rb, &cam, &opts, err);
        if (st == SPLAT_OK) st = splat__buf_download(g, &rb.out_rgbt, 0, rgbt, (uint64_t)w * h * 16, err);
        if (st != SPLAT_OK) break;
        /* rendered on black, so rgb is the premultiplied colour: straight alpha divides it out */
        for (size_t p = 0; p < (size_t)w * h; p++) {
            float a = 1.0f - rgbt[4 * p + 3];
            alpha[p] = a;
            for (int c = 0; c < 3; c++) rgb[3 * p + c] = a > 1e-6f ? rgbt[4 * p + c] / a : 0.0f;
        }
        snprintf(path, sizeof path, "%s/%s/r_%u.png", dir, split, k);
        st = splat_write_png(path, rgb, alpha, w, h, err);
        cJSON *fr = cJSON_CreateObject(), *m = cJSON_CreateArray();
        char rel[64];
        snprintf(rel, sizeof rel, "./%s/r_%u", split, k);
        cJSON_AddStringToObject(fr, "file_path", rel);
        for (int row = 0; row < 4; row++) cJSON_AddItemToArray(m, cJSON_CreateDoubleArray(&c2w[row * 4], 4));
        cJSON_AddItemToObject(fr, "transform_matrix", m);
        cJSON_AddItemToArray(frames, fr);
    }
    if (st == SPLAT_OK) {
        char *text = cJSON_Print(root);
        snprintf(path, sizeof path, "%s/transforms_%s.json", dir, split);
        st = text ? splat_write_file(path, text, strlen(text), err)
                  : splat__fail(err, SPLAT_ERR_OUT_OF_HOST_MEMORY, "demo: out of host memory");
        cJSON_free(text);
    }
    cJSON_Delete(root);
    splat__free(rgbt);
    splat__free(rgb);
    splat__free(alpha);
    splat__render_bufs_free(g, &rb);
    splat__scene_gpu_free(g, &sg);
    return st;
}

splat_status splat_make_demo(splat_ctx *ctx, const char *dir, const splat_demo_desc *desc, splat_error *err)
{
    static const splat_demo_desc defaults = {0};
    if (!desc) desc = &defaults;
    uint32_t w = desc->width ? desc->width : 128, h = desc->height ? desc->height : 128;
    uint32_t n_train = desc->n_train ? desc->n_train : 48, n_test = desc->n_test ? desc->n_test : 8;
    splat_scene s = {0};
    splat_status st = make_dir(dir, err);
    if (st == SPLAT_OK) st = build_object(&s, err);
    if (st == SPLAT_OK) st = write_split(ctx, dir, "train", &s, n_train, w, h, 1, err);
    if (st == SPLAT_OK) st = write_split(ctx, dir, "test", &s, n_test, w, h, 2, err);
    if (st == SPLAT_OK) {
        char path[1024];
        snprintf(path, sizeof path, "%s/ground_truth.ply", dir);
        st = splat_ply_write(path, &s, err);
    }
    splat_scene_free(&s);
    return st;
}
