/* A distorted copy of an undistorted (pinhole) COLMAP scene, for the distortion benchmark of
 * docs/PERFORMANCE.md: the same views through an OPENCV lens (k1 k2 p1 p2), written as a COLMAP
 * text model with PNG images of the same names and sizes, so `splatc train` on the copy undistorts
 * at load and can be compared with training on the original.
 *
 * The lens keeps each camera's principal point and scales its focal lengths by s >= 1, the
 * smallest (in steps of 1/1000) for which every pixel of the distorted image sees a ray inside the
 * original image: a real lens with this distortion would have seen more, and the copy must not
 * invent it. Each distorted pixel centre is undistorted (splat__undistort) and the original
 * sampled there bilinearly.
 *
 *   bench_distort SRC DST [k1 k2 p1 p2]      (default -0.1 0.02 0.001 0.001) */
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "io/io_util.h"

typedef struct job {
    const splat_dataset *ds;
    const char *dst;
    splat_distortion d;
    double *scale;           /* [n_views] */
    atomic_uint next;
    atomic_int failed;
} job;

/* The distorted camera's focal scale for `c` (see the header). */
static double focal_scale(const splat_camera *c, const splat_distortion *d)
{
    for (int k = 0; k < 1000; k++) {
        double s = 1 + k / 1000.0;
        bool inside = true;
        for (uint32_t side = 0; side < 4 && inside; side++) {
            uint32_t n = side < 2 ? c->height : c->width;
            for (uint32_t i = 0; i <= n && inside; i++) {
                double px = side == 0 ? 0.5 : side == 1 ? c->width - 0.5 : i, py = side == 2 ? 0.5 : side == 3 ? c->height - 0.5 : i;
                double u, v;
                bool ok = splat__undistort(d, (px - c->cx) / (s * c->fx), (py - c->cy) / (s * c->fy), &u, &v);
                double x = u * c->fx + c->cx, y = v * c->fy + c->cy;
                inside = ok && x >= 0 && y >= 0 && x <= c->width && y <= c->height;
            }
        }
        if (inside) return s;
    }
    return 0;
}

static void sample(const splat_image *im, double x, double y, uint8_t out[3])
{
    x -= 0.5, y -= 0.5;
    double fx = floor(x), fy = floor(y), ax = x - fx, ay = y - fy;
    for (int c = 0; c < 3; c++) {
        double acc = 0;
        for (int j = 0; j < 2; j++)
            for (int i = 0; i < 2; i++) {
                long xi = SPLAT_MIN(SPLAT_MAX((long)fx + i, 0L), (long)im->width - 1);
                long yi = SPLAT_MIN(SPLAT_MAX((long)fy + j, 0L), (long)im->height - 1);
                acc += (i ? ax : 1 - ax) * (j ? ay : 1 - ay) * im->rgba[((size_t)yi * im->width + (size_t)xi) * 4 + c];
            }
        out[c] = (uint8_t)lrint(fmin(255, acc));
    }
}

static void *worker(void *arg)
{
    job *j = arg;
    for (;;) {
        uint32_t v = atomic_fetch_add(&j->next, 1);
        if (v >= j->ds->n_views || atomic_load(&j->failed)) return NULL;
        const splat_data_view *view = &j->ds->views[v];
        const splat_camera *c = &view->camera;
        splat_image src, dst = {.width = c->width, .height = c->height};
        splat_error err = {0};
        if (splat__view_image_load(view, &src, &err) != SPLAT_OK) {
            fprintf(stderr, "bench_distort: %s\n", err.msg);
            atomic_store(&j->failed, 1);
            return NULL;
        }
        double s = j->scale[v];
        dst.rgba = malloc((size_t)c->width * c->height * 4);
        for (uint32_t y = 0; y < c->height; y++)
            for (uint32_t x = 0; x < c->width; x++) {
                double u, w;
                splat__undistort(&j->d, (x + 0.5 - c->cx) / (s * c->fx), (y + 0.5 - c->cy) / (s * c->fy), &u, &w);
                uint8_t *p = dst.rgba + ((size_t)y * c->width + x) * 4;
                sample(&src, u * c->fx + c->cx, w * c->fy + c->cy, p);
                p[3] = 255;
            }
        char path[2048];
        snprintf(path, sizeof path, "%s/images/%s", j->dst, view->name);
        char *dot = strrchr(path, '.');
        if (dot) strcpy(dot, ".png");
        if (splat__image_save_png(path, &dst, 3, &err) != SPLAT_OK) {
            fprintf(stderr, "bench_distort: %s\n", err.msg);
            atomic_store(&j->failed, 1);
        }
        free(dst.rgba);
        splat__image_free(&src);
    }
}

/* Rotation matrix to COLMAP's quaternion (w, x, y, z). */
static void mat_quat(const float *R, double q[4])
{
    double m00 = R[0], m11 = R[4], m22 = R[8], tr = m00 + m11 + m22;
    if (tr > 0) {
        double s = 2 * sqrt(tr + 1);
        q[0] = s / 4, q[1] = (R[7] - R[5]) / s, q[2] = (R[2] - R[6]) / s, q[3] = (R[3] - R[1]) / s;
    } else if (m00 > m11 && m00 > m22) {
        double s = 2 * sqrt(1 + m00 - m11 - m22);
        q[0] = (R[7] - R[5]) / s, q[1] = s / 4, q[2] = (R[1] + R[3]) / s, q[3] = (R[2] + R[6]) / s;
    } else if (m11 > m22) {
        double s = 2 * sqrt(1 + m11 - m00 - m22);
        q[0] = (R[2] - R[6]) / s, q[1] = (R[1] + R[3]) / s, q[2] = s / 4, q[3] = (R[5] + R[7]) / s;
    } else {
        double s = 2 * sqrt(1 + m22 - m00 - m11);
        q[0] = (R[3] - R[1]) / s, q[1] = (R[2] + R[6]) / s, q[2] = (R[5] + R[7]) / s, q[3] = s / 4;
    }
}

int main(int argc, char **argv)
{
    if (argc != 3 && argc != 7) {
        fprintf(stderr, "usage: bench_distort SRC DST [k1 k2 p1 p2]\n");
        return 2;
    }
    job j = {.dst = argv[2], .d = {.model = SPLAT_DISTORTION_OPENCV, .k = {-0.1, 0.02, 0.001, 0.001}}};
    for (int k = 0; argc == 7 && k < 4; k++) j.d.k[k] = atof(argv[3 + k]);
    splat_dataset ds;
    splat_error err = {0};
    if (splat__dataset_load(&(splat_dataset_desc){.path = argv[1]}, &ds, &err) != SPLAT_OK) {
        fprintf(stderr, "bench_distort: %s\n", err.msg);
        return 1;
    }
    j.ds = &ds;
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "mkdir -p '%s/images' '%s/sparse/0'", argv[2], argv[2]);
    if (system(cmd) != 0) return 1;
    j.scale = calloc(ds.n_views, sizeof *j.scale);
    char path[2048];
    snprintf(path, sizeof path, "%s/sparse/0/cameras.txt", argv[2]);
    FILE *cams = fopen(path, "w");
    snprintf(path, sizeof path, "%s/sparse/0/images.txt", argv[2]);
    FILE *imgs = fopen(path, "w");
    double lo = 1e9, hi = 0;
    for (uint32_t v = 0; v < ds.n_views; v++) {
        const splat_camera *c = &ds.views[v].camera;
        if (ds.views[v].distortion.model != SPLAT_DISTORTION_NONE && !splat__distortion_is_zero(&ds.views[v].distortion)) {
            fprintf(stderr, "bench_distort: %s: view %s is distorted already\n", argv[1], ds.views[v].name);
            return 1;
        }
        j.scale[v] = v > 0 && !memcmp(c, &ds.views[v - 1].camera, offsetof(splat_camera, R)) ? j.scale[v - 1]
                                                                                              : focal_scale(c, &j.d);
        if (j.scale[v] == 0) {
            fprintf(stderr, "bench_distort: view %s: no focal scale up to 2 keeps the lens inside the image\n",
                    ds.views[v].name);
            return 1;
        }
        lo = fmin(lo, j.scale[v]), hi = fmax(hi, j.scale[v]);
        double s = j.scale[v], q[4];
        fprintf(cams, "%u OPENCV %u %u %.9g %.9g %.9g %.9g %.17g %.17g %.17g %.17g\n", v + 1, c->width, c->height,
                s * c->fx, s * c->fy, (double)c->cx, (double)c->cy, j.d.k[0], j.d.k[1], j.d.k[2], j.d.k[3]);
        mat_quat(c->R, q);
        char name[1024];
        snprintf(name, sizeof name, "%s", ds.views[v].name);
        char *dot = strrchr(name, '.');
        if (dot) strcpy(dot, ".png");
        fprintf(imgs, "%u %.17g %.17g %.17g %.17g %.9g %.9g %.9g %u %s\n\n", v + 1, q[0], q[1], q[2], q[3],
                (double)c->t[0], (double)c->t[1], (double)c->t[2], v + 1, name);
    }
    fclose(cams), fclose(imgs);
    snprintf(path, sizeof path, "%s/sparse/0/points3D.txt", argv[2]);
    FILE *pts = fopen(path, "w");
    for (uint32_t i = 0; i < ds.n_points; i++)
        fprintf(pts, "%u %.9g %.9g %.9g %u %u %u 0\n", i + 1, (double)ds.points[i * 3], (double)ds.points[i * 3 + 1],
                (double)ds.points[i * 3 + 2], ds.point_colors[i * 3], ds.point_colors[i * 3 + 1], ds.point_colors[i * 3 + 2]);
    fclose(pts);
    atomic_init(&j.next, 0), atomic_init(&j.failed, 0);
    long cores = SPLAT_MIN(SPLAT_MAX(sysconf(_SC_NPROCESSORS_ONLN), 1L), 32L);
    pthread_t th[32];
    for (long t = 0; t < cores; t++) pthread_create(&th[t], NULL, worker, &j);
    for (long t = 0; t < cores; t++) pthread_join(th[t], NULL);
    if (atomic_load(&j.failed)) return 1;
    printf("bench_distort: %u views of %s through OPENCV (%g %g %g %g) into %s, focal scale %.3f..%.3f\n", ds.n_views,
           argv[1], j.d.k[0], j.d.k[1], j.d.k[2], j.d.k[3], argv[2], lo, hi);
    splat__dataset_free(&ds);
    return 0;
}
