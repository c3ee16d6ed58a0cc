/* splat__focus_distance, gsplat's world unit: known values from cameras built around a point, its
 * scaling with the world, and (where the shared datasets are beside the checkout) the values
 * gsplat's own normalisation (examples/datasets/normalize.py, run with numpy on the same COLMAP
 * files) gives for beer and bonsai. */
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "harness.h"
#include "io/io.h"

static void normalise(double v[3])
{
    double l = sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
    for (int k = 0; k < 3; k++) v[k] /= l;
}

/* A camera at `c` looking at the origin (OpenCV axes: x right, y down, z forward). */
static splat_camera looking_at_origin(const double c[3], const double up[3])
{
    double z[3] = {-c[0], -c[1], -c[2]}, x[3], y[3];
    normalise(z);
    x[0] = z[1] * up[2] - z[2] * up[1], x[1] = z[2] * up[0] - z[0] * up[2], x[2] = z[0] * up[1] - z[1] * up[0];
    normalise(x);
    y[0] = z[1] * x[2] - z[2] * x[1], y[1] = z[2] * x[0] - z[0] * x[2], y[2] = z[0] * x[1] - z[1] * x[0];
    splat_camera cam = {.fx = 100, .fy = 100, .cx = 50, .cy = 50, .width = 100, .height = 100};
    for (int k = 0; k < 3; k++) cam.R[k] = (float)x[k], cam.R[3 + k] = (float)y[k], cam.R[6 + k] = (float)z[k];
    for (int r = 0; r < 3; r++) cam.t[r] = (float)-(cam.R[3 * r] * c[0] + cam.R[3 * r + 1] * c[1] + cam.R[3 * r + 2] * c[2]);
    return cam;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Cameras at random distances and directions, all looking at the origin, under a random world
 * up: every viewing axis passes through the origin, so the focus is the origin and the distance
 * is the median of the cameras' distances (the mean of the middle two for an even count). Scaling
 * the world scales it. */
SPLAT_TEST(io_focus_known)
{
    for (int rep = 0; rep < 20; rep++) {
        uint32_t n = 1 + (uint32_t)(splat__rng_u64(splat_test_rng()) % 40);
        double up[3] = {t_uniform(-1, 1), t_uniform(-1, 1), t_uniform(-1, 1)};
        normalise(up);
        double k = exp(t_uniform(-4, 4));
        splat_camera *cams = malloc(sizeof *cams * n), *scaled = malloc(sizeof *cams * n);
        double *dist = malloc(sizeof(double) * n);
        for (uint32_t i = 0; i < n; i++) {
            double c[3];
            do { /* around the up axis, not along it */
                for (int a = 0; a < 3; a++) c[a] = t_uniform(-1, 1);
                normalise(c);
            } while (fabs(c[0] * up[0] + c[1] * up[1] + c[2] * up[2]) > 0.8);
            dist[i] = t_uniform(0.5, 20);
            for (int a = 0; a < 3; a++) c[a] *= dist[i];
            cams[i] = looking_at_origin(c, up);
            for (int a = 0; a < 3; a++) c[a] *= k;
            scaled[i] = looking_at_origin(c, up);
        }
        qsort(dist, n, sizeof *dist, cmp);
        double want = n % 2 ? dist[n / 2] : 0.5 * (dist[n / 2 - 1] + dist[n / 2]);
        double got = splat__focus_distance(cams, n), got_k = splat__focus_distance(scaled, n);
        T_CHECK(fabs(got - want) <= 1e-5 * want, "%u cameras: %.9g, want the median distance %.9g", n, got, want);
        T_CHECK(fabs(got_k - k * want) <= 1e-5 * k * want, "%u cameras, world scaled by %g: %.9g, want %.9g", n, k, got_k,
                k * want);
        free(cams), free(scaled), free(dist);
    }
    T_CHECK(splat__focus_distance(NULL, 0) == 1.0, "no cameras: want 1");
    /* degenerate rigs fall back to 1, never to 0 or NaN (the noise divides by its square) */
    double c[3] = {0, 0, 5}, up[3] = {0, 1, 0};
    splat_camera rig[3] = {looking_at_origin(c, up), looking_at_origin(c, up), looking_at_origin(c, up)};
    for (int i = 0; i < 3; i++)
        for (int k = 0; k < 3; k++) rig[i].t[k] = 0.0f; /* every camera at the origin, its own focus */
    T_CHECK(splat__focus_distance(rig, 3) == 1.0, "cameras at their focus: %g, want 1", splat__focus_distance(rig, 3));
    double d0[3] = {0, 0, 5}, d1[3] = {5, 0, 0}, d2[3] = {0, 0, -7};
    splat_camera ring[3] = {looking_at_origin(d0, up), looking_at_origin(d1, up), looking_at_origin(d2, up)};
    T_CHECK(fabs(splat__focus_distance(ring, 3) - 5) < 1e-5, "a ring of 5, 5, 7: %g, want 5", splat__focus_distance(ring, 3));
    ring[1].t[0] = NAN; /* one bad camera among good ones */
    double bad = splat__focus_distance(ring, 3);
    T_CHECK(bad == 1.0, "a non-finite camera: %g, want 1", bad);
}

/* gsplat's own numbers: 1 / the scale of similarity_from_cameras over all the views. */
SPLAT_TEST(io_focus_vs_gsplat)
{
    static const struct { const char *scene; uint32_t factor; double scale; } cases[] = {
        {"beer", 2, 0.29089996504550175}, {"bonsai", 1, 0.24718165160300612},
    };
    for (size_t c = 0; c < SPLAT_COUNTOF(cases); c++) {
        char path[1024];
        snprintf(path, sizeof path, "%s/../shared/datasets/%s", SPLAT_SOURCE_DIR, cases[c].scene);
        struct stat sb;
        if (stat(path, &sb) != 0) {
            printf("  %s: not beside the checkout, not checked\n", path);
            continue;
        }
        splat_dataset ds = {0};
        splat_error err = {0};
        T_OK(splat__dataset_load(&(splat_dataset_desc){.path = path, .images_factor = cases[c].factor}, &ds, &err), &err);
        splat_camera *cams = malloc(sizeof *cams * ds.n_views);
        for (uint32_t v = 0; v < ds.n_views; v++) cams[v] = ds.views[v].camera;
        double got = splat__focus_distance(cams, ds.n_views), want = 1.0 / cases[c].scale;
        printf("  %s: %u views, %.9g (gsplat: %.9g)\n", cases[c].scene, ds.n_views, got, want);
        T_CHECK(fabs(got - want) <= 1e-5 * want, "%s: %.9g, gsplat %.9g", cases[c].scene, got, want);
        free(cams);
        splat__dataset_free(&ds);
    }
}
