/* Load time of a captured scene: N JPEGs (default 300 of 1600x1200, quality 90) with a COLMAP
 * model, once with a pinhole camera and once with an OPENCV lens (k1 = -0.1, k2 = 0.02,
 * p1 = p2 = 0.001, the bonsai distortion), timed through what `splatc train` does before
 * the first step: the dataset load (headers, cameras, the undistorted camera of each view) and
 * every image loaded as training sees it (decoded, undistorted; splat__views_load, a thread per
 * core). Prints a table with the machine's core count.
 *
 *   bench_load [--images N] [--size WxH] [--dir D]     (the images are written once into D) */
#include <errno.h>
#include <stdio.h>
#include <jpeglib.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "io/io_util.h"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void write_jpeg(const char *path, uint32_t w, uint32_t h, uint32_t seed)
{
    FILE *f = fopen(path, "wb");
    if (!f) {
        fprintf(stderr, "bench_load: %s: %s\n", path, strerror(errno));
        exit(1);
    }
    struct jpeg_compress_struct c;
    struct jpeg_error_mgr e;
    c.err = jpeg_std_error(&e);
    jpeg_create_compress(&c);
    jpeg_stdio_dest(&c, f);
    c.image_width = w, c.image_height = h, c.input_components = 3, c.in_color_space = JCS_RGB;
    jpeg_set_defaults(&c);
    jpeg_set_quality(&c, 90, TRUE);
    jpeg_start_compress(&c, TRUE);
    uint8_t *row = malloc((size_t)w * 3);
    for (uint32_t y = 0; y < h; y++) { /* smooth texture with some detail, as a photo has */
        for (uint32_t x = 0; x < w; x++)
            for (int k = 0; k < 3; k++)
                row[x * 3 + k] = (uint8_t)(128 + 60 * sin(x * 0.013 * (k + 1) + seed) * cos(y * 0.011 + k) +
                                          30 * sin((x ^ y) * 0.2 + seed));
        JSAMPROW r = row;
        jpeg_write_scanlines(&c, &r, 1);
    }
    jpeg_finish_compress(&c);
    jpeg_destroy_compress(&c);
    free(row);
    fclose(f);
}

static void write_model(const char *dir, uint32_t n, uint32_t w, uint32_t h, bool distorted)
{
    char path[1200];
    snprintf(path, sizeof path, "%s/sparse/0", dir);
    char cmd[1400];
    snprintf(cmd, sizeof cmd, "mkdir -p '%s'", path);
    if (system(cmd) != 0) exit(1);
    snprintf(path, sizeof path, "%s/sparse/0/cameras.txt", dir);
    FILE *f = fopen(path, "w");
    double fx = 0.9 * w;
    if (distorted) fprintf(f, "1 OPENCV %u %u %g %g %g %g -0.1 0.02 0.001 0.001\n", w, h, fx, fx, w / 2.0, h / 2.0);
    else fprintf(f, "1 PINHOLE %u %u %g %g %g %g\n", w, h, fx, fx, w / 2.0, h / 2.0);
    fclose(f);
    snprintf(path, sizeof path, "%s/sparse/0/images.txt", dir);
    f = fopen(path, "w");
    for (uint32_t i = 0; i < n; i++) {
        double a = 6.283185307179586 * i / n;
        fprintf(f, "%u %.9f 0 %.9f 0 0 0 4 1 img_%04u.jpg\n\n", i + 1, cos(a / 2), sin(a / 2), i);
    }
    fclose(f);
    snprintf(path, sizeof path, "%s/sparse/0/points3D.txt", dir);
    f = fopen(path, "w");
    fprintf(f, "1 0 0 0 128 128 128 0\n");
    fclose(f);
}

int main(int argc, char **argv)
{
    uint32_t n = 300, w = 1600, h = 1200;
    const char *base = "/tmp/splatc-bench-load";
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--images") && i + 1 < argc) n = (uint32_t)atoi(argv[++i]);
        else if (!strcmp(argv[i], "--size") && i + 1 < argc) sscanf(argv[++i], "%ux%u", &w, &h);
        else if (!strcmp(argv[i], "--dir") && i + 1 < argc) base = argv[++i];
        else {
            fprintf(stderr, "usage: bench_load [--images N] [--size WxH] [--dir D]\n");
            return 2;
        }
    }
    char images[1200], marker[1300];
    snprintf(images, sizeof images, "%s/images", base);
    snprintf(marker, sizeof marker, "%s/.written-%ux%ux%u", base, n, w, h);
    struct stat st;
    if (stat(marker, &st) != 0) {
        char cmd[1400];
        snprintf(cmd, sizeof cmd, "rm -rf '%s' && mkdir -p '%s'", base, images);
        if (system(cmd) != 0) return 1;
        double t0 = now();
        for (uint32_t i = 0; i < n; i++) {
            char path[1400];
            snprintf(path, sizeof path, "%s/img_%04u.jpg", images, i);
            write_jpeg(path, w, h, i);
        }
        fclose(fopen(marker, "w"));
        fprintf(stderr, "wrote %u JPEGs of %ux%u in %.1f s\n", n, w, h, now() - t0);
    }
    printf("%ld cores\n\n", sysconf(_SC_NPROCESSORS_ONLN));
    printf("| camera | images | dataset load (s) | images decoded + undistorted (s) | per image (ms) | trained size |\n");
    printf("| --- | --- | --- | --- | --- | --- |\n");
    for (int distorted = 0; distorted < 2; distorted++) {
        write_model(base, n, w, h, distorted);
        splat_dataset ds;
        splat_error err = {0};
        double t0 = now();
        if (splat__dataset_load(&(splat_dataset_desc){.path = base}, &ds, &err) != SPLAT_OK) {
            fprintf(stderr, "bench_load: %s\n", err.msg);
            return 1;
        }
        double t1 = now();
        uint32_t *idx = malloc(ds.n_views * sizeof *idx);
        splat_image *ims = calloc(ds.n_views, sizeof *ims);
        for (uint32_t v = 0; v < ds.n_views; v++) idx[v] = v;
        if (splat__views_load(&ds, idx, ds.n_views, ims, NULL, &err) != SPLAT_OK) {
            fprintf(stderr, "bench_load: %s\n", err.msg);
            return 1;
        }
        for (uint32_t v = 0; v < ds.n_views; v++) splat__image_free(&ims[v]);
        free(ims), free(idx);
        double t2 = now();
        printf("| %s | %u of %ux%u | %.2f | %.2f | %.1f | %ux%u |\n", distorted ? "OPENCV" : "PINHOLE", n, w, h, t1 - t0,
               t2 - t1, 1e3 * (t2 - t0) / n, ds.views[0].camera.width, ds.views[0].camera.height);
        splat__dataset_free(&ds);
    }
    return 0;
}
