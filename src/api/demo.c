/* The bundled demo: a procedural object of Gaussians, rendered by splatc itself into a small
 * COLMAP scene (images, poses and a sparse point cloud), so the main job needs no download. */
#include <errno.h>
#include <stdio.h>
#include <sys/stat.h>

#include "api/api.h"

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

/* COLMAP's quaternion (w, x, y, z) of a rotation matrix (row-major). */
static void rot_to_quat(const float *R, double q[4])
{
    double tr = R[0] + R[4] + R[8];
    if (tr > 0) {
        double s = 0.5 / sqrt(tr + 1.0);
        q[0] = 0.25 / s, q[1] = (R[7] - R[5]) * s, q[2] = (R[2] - R[6]) * s, q[3] = (R[3] - R[1]) * s;
    } else if (R[0] > R[4] && R[0] > R[8]) {
        double s = 2.0 * sqrt(1.0 + R[0] - R[4] - R[8]);
        q[0] = (R[7] - R[5]) / s, q[1] = 0.25 * s, q[2] = (R[1] + R[3]) / s, q[3] = (R[2] + R[6]) / s;
    } else if (R[4] > R[8]) {
        double s = 2.0 * sqrt(1.0 + R[4] - R[0] - R[8]);
        q[0] = (R[2] - R[6]) / s, q[1] = (R[1] + R[3]) / s, q[2] = 0.25 * s, q[3] = (R[5] + R[7]) / s;
    } else {
        double s = 2.0 * sqrt(1.0 + R[8] - R[0] - R[4]);
        q[0] = (R[3] - R[1]) / s, q[1] = (R[2] + R[6]) / s, q[2] = (R[5] + R[7]) / s, q[3] = 0.25 * s;
    }
}

/* Text buffer that grows; every demo file is a few hundred kilobytes at most. */
typedef struct text_buf {
    char *p;
    size_t n, cap;
    bool oom;
} text_buf;

static void text_add(text_buf *b, const char *fmt, ...) SPLAT_PRINTF(2, 3);
static void text_add(text_buf *b, const char *fmt, ...)
{
    if (b->oom) return;
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        int k = vsnprintf(b->p ? b->p + b->n : NULL, b->p ? b->cap - b->n : 0, fmt, ap);
        va_end(ap);
        if (k < 0) {
            b->oom = true;
            return;
        }
        if (b->p && b->n + (size_t)k < b->cap) {
            b->n += (size_t)k;
            return;
        }
        size_t cap = (b->cap + (size_t)k + 1) * 2;
        char *q = splat__realloc(b->p, cap);
        if (!q) {
            b->oom = true;
            return;
        }
        b->p = q;
        b->cap = cap;
    }
}

static splat_status write_text(const char *path, text_buf *b, splat_error *err)
{
    splat_status st = b->oom ? splat__fail(err, SPLAT_ERR_OUT_OF_HOST_MEMORY, "demo: out of host memory")
                             : splat_write_file(path, b->p ? b->p : "", b->n, err);
    splat__free(b->p);
    memset(b, 0, sizeof *b);
    return st;
}

/* Renders the views (images/view_NNN.png on a dark grey background) and writes the COLMAP
 * text model: one PINHOLE camera, the poses, and a sparse point cloud like SfM gives (a
 * subset of the object's Gaussian centres, jittered, with their colours). */
static splat_status write_colmap(splat_ctx *ctx, const char *dir, const splat_scene *s, uint32_t n, uint32_t w,
                                 uint32_t h, splat_error *err)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/images", dir);
    splat_status st = make_dir(path, err);
    snprintf(path, sizeof path, "%s/sparse", dir);
    if (st == SPLAT_OK) st = make_dir(path, err);
    snprintf(path, sizeof path, "%s/sparse/0", dir);
    if (st == SPLAT_OK) st = make_dir(path, err);
    const splat_renderer *r;
    if (st == SPLAT_OK) st = splat__ctx_renderer(ctx, &r, err);
    if (st != SPLAT_OK) return st;
    const double fov_x = 40.0 * 3.14159265358979 / 180.0;
    double fx = 0.5 * w / tan(0.5 * fov_x);
    splat_gpu *g = ctx->gpu;
    splat_scene_gpu sg;
    splat_render_bufs rb;
    memset(&rb, 0, sizeof rb);
    st = splat__scene_gpu_init(g, &sg, "demo", s->count, false, err);
    if (st == SPLAT_OK) st = splat__scene_gpu_upload(g, &sg, s, err);
    if (st == SPLAT_OK) st = splat__render_bufs_init(g, r, &rb, s->count, s->count * 16, w, h, err);
    float *rgbt = splat__malloc((size_t)w * h * 16), *rgb = splat__malloc((size_t)w * h * 12);
    if (st == SPLAT_OK && (!rgbt || !rgb)) st = splat__fail(err, SPLAT_ERR_OUT_OF_HOST_MEMORY, "demo: out of host memory");
    text_buf images = {0}, cams = {0}, pts = {0};
    text_add(&cams, "# Camera list: CAMERA_ID, MODEL, WIDTH, HEIGHT, PARAMS[]\n1 PINHOLE %u %u %.9g %.9g %.9g %.9g\n", w, h, fx,
             fx, 0.5 * w, 0.5 * h);
    text_add(&images, "# IMAGE_ID, QW, QX, QY, QZ, TX, TY, TZ, CAMERA_ID, NAME, then POINTS2D[]\n");
    splat_rng rng;
    splat__rng_seed(&rng, 11);
    for (uint32_t k = 0; k < n && st == SPLAT_OK; k++) {
        /* stratified azimuth, elevation from -20 to 65 degrees */
        double az = 2 * 3.14159265358979 * (k + splat__rng_uniform(&rng)) / n;
        double el = (-20 + 85 * splat__rng_uniform(&rng)) * 3.14159265358979 / 180.0;
        splat_camera cam;
        double c2w[16];
        look_at(az, el, 3.2, w, h, fx, &cam, c2w);
        splat_render_desc rd = {.sh_degree = SPLAT_SH_DEGREE_0, .background = {0.1f, 0.1f, 0.12f}};
        st = splat__render_image(&ctx->stream, r, &sg, &rb, &cam, &rd, err);
        if (st == SPLAT_OK) st = splat__buf_download(g, &rb.out_rgbt, 0, rgbt, (uint64_t)w * h * 16, err);
        if (st != SPLAT_OK) break;
        for (size_t p = 0; p < (size_t)w * h; p++)
            for (int c = 0; c < 3; c++) rgb[3 * p + c] = rgbt[4 * p + c];
        snprintf(path, sizeof path, "%s/images/view_%03u.png", dir, k);
        st = splat_write_png(path, rgb, NULL, w, h, err);
        double q[4];
        rot_to_quat(cam.R, q);
        text_add(&images, "%u %.9g %.9g %.9g %.9g %.9g %.9g %.9g 1 view_%03u.png\n\n", k + 1, q[0], q[1], q[2], q[3],
                 cam.t[0], cam.t[1], cam.t[2], k);
    }
    text_add(&pts, "# POINT3D_ID, X, Y, Z, R, G, B, ERROR, TRACK[]\n");
    for (uint32_t i = 0, id = 1; i < s->count; i += 3, id++) {
        double p[3];
        int c[3];
        for (int k = 0; k < 3; k++) p[k] = s->means[3 * i + k] + 0.01 * splat__rng_normal(&rng);
        for (int k = 0; k < 3; k++) c[k] = (int)lrint(255.0 * fmin(1.0, fmax(0.0, s->sh[48 * i + k] * 0.28209479177387814 + 0.5)));
        text_add(&pts, "%u %.7g %.7g %.7g %d %d %d 0.5\n", id, p[0], p[1], p[2], c[0], c[1], c[2]);
    }
    splat_status wst;
    snprintf(path, sizeof path, "%s/sparse/0/cameras.txt", dir);
    wst = write_text(path, &cams, err);
    if (st == SPLAT_OK) st = wst;
    snprintf(path, sizeof path, "%s/sparse/0/images.txt", dir);
    wst = write_text(path, &images, err);
    if (st == SPLAT_OK) st = wst;
    snprintf(path, sizeof path, "%s/sparse/0/points3D.txt", dir);
    wst = write_text(path, &pts, err);
    if (st == SPLAT_OK) st = wst;
    splat__free(rgbt);
    splat__free(rgb);
    splat__render_bufs_free(g, &rb);
    splat__scene_gpu_free(g, &sg);
    return st;
}

splat_status splat_make_demo(splat_ctx *ctx, const char *dir, const splat_demo_desc *desc, splat_error *err)
{
    static const splat_demo_desc defaults = {0};
    if (!desc) desc = &defaults;
    uint32_t w = desc->width ? desc->width : 128, h = desc->height ? desc->height : 96;
    uint32_t n = desc->n_views ? desc->n_views : 64;
    splat_scene s = {0};
    splat_status st = make_dir(dir, err);
    if (st == SPLAT_OK) st = build_object(&s, err);
    if (st == SPLAT_OK) st = write_colmap(ctx, dir, &s, n, w, h, err);
    if (st == SPLAT_OK) {
        char path[1024];
        snprintf(path, sizeof path, "%s/ground_truth.ply", dir);
        st = splat__ply_write(path, &s, err);
    }
    splat_scene_free(&s);
    return st;
}
