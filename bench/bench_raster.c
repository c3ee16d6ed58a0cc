/* Rasterizer benchmark: GPU time of every stage of forward + backward on random scenes
 * (default 1M and 3M Gaussians at 1280x720), the intersection count, and the host waits and
 * submissions a forward + backward takes, with training's render flags (TRAIN_FWD, TRAIN_BWD).
 * Prints a table.
 * Usage: bench_raster [--device N] [--sizes 1000000,3000000] [--width 1280 --height 720] [--reps 10] */
#include <stdio.h>
#include <stdlib.h>

#include "render/render.h"

/* as src/train/ring.c records them, the default strategy's statistics included */
#define TRAIN_FWD SPLAT_FWD_SH_DRAWN
#define TRAIN_BWD (SPLAT_BWD_STATS | SPLAT_BWD_SH_RECORD)

#define CHECK(x)                                                                    \
    do {                                                                            \
        if ((x) != SPLAT_OK) {                                                      \
            fprintf(stderr, "bench_raster: %s\n", err.msg);                         \
            exit(1);                                                                \
        }                                                                           \
    } while (0)

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Gaussians spread through the view frustum at depths 2..20, sized like a trained scene's
 * (footprints of a fraction of a pixel to tens of pixels), all SH degrees. */
static void random_scene(splat_scene *s, uint32_t n, const splat_camera *cam, splat_rng *rng)
{
    splat_error err = {0};
    CHECK(splat_scene_init(s, n, &err));
    s->count = n;
    s->sh_degree = 3;
    for (uint32_t i = 0; i < n; i++) {
        double z = 2 + 18 * splat__rng_uniform(rng);
        double u = (splat__rng_uniform(rng) * 1.2 - 0.1) * cam->width, v = (splat__rng_uniform(rng) * 1.2 - 0.1) * cam->height;
        s->means[3 * i] = (float)((u - cam->cx) / cam->fx * z);
        s->means[3 * i + 1] = (float)((v - cam->cy) / cam->fy * z);
        s->means[3 * i + 2] = (float)z;
        double base = log(z / cam->fx * pow(10.0, -0.3 + 1.3 * splat__rng_uniform(rng)));
        for (int k = 0; k < 3; k++) s->log_scales[3 * i + k] = (float)(base + 0.5 * splat__rng_normal(rng));
        for (int k = 0; k < 4; k++) s->quats[4 * i + k] = (float)splat__rng_normal(rng);
        s->opacities[i] = (float)(splat__rng_normal(rng) * 2);
        for (int k = 0; k < 48; k++) s->sh[48 * i + k] = (float)(splat__rng_normal(rng) * (k < 3 ? 1 : 0.2));
    }
}

int main(int argc, char **argv)
{
    splat_gpu_desc desc = {0};
    uint32_t sizes[8] = {1000000, 3000000}, n_sizes = 2, W = 1280, H = 720, reps = 10;
    for (int i = 1; i + 1 < argc; i++) {
        if (strcmp(argv[i], "--device") == 0) desc.choose_device = true, desc.device_index = (uint32_t)atoi(argv[++i]);
        else if (strcmp(argv[i], "--width") == 0) W = (uint32_t)atoi(argv[++i]);
        else if (strcmp(argv[i], "--height") == 0) H = (uint32_t)atoi(argv[++i]);
        else if (strcmp(argv[i], "--reps") == 0) reps = (uint32_t)atoi(argv[++i]);
        else if (strcmp(argv[i], "--sizes") == 0) {
            n_sizes = 0;
            for (char *t = strtok(argv[++i], ","); t && n_sizes < 8; t = strtok(NULL, ",")) sizes[n_sizes++] = (uint32_t)atof(t);
        }
    }
    if (reps < 1 || reps > 64) reps = 10;
    splat_error err = {0};
    splat_gpu *g;
    CHECK(splat__gpu_init(&g, &desc, &err));
    splat_renderer r;
    splat_stream s;
    splat_prof prof;
    CHECK(splat__renderer_init(g, &r, &err));
    CHECK(splat__stream_init(g, &s, &err));
    CHECK(splat__prof_init(g, &prof, &err));
    printf("device: %s, %ux%u, median of %u\n\n", g->info.name, W, H, reps);
    for (uint32_t si = 0; si < n_sizes; si++) {
        uint32_t n = sizes[si];
        splat_rng rng;
        splat__rng_seed(&rng, 1234 + n);
        splat_camera cam = {.fx = 0.9f * W, .fy = 0.9f * W, .cx = 0.5f * W, .cy = 0.5f * H, .width = W, .height = H};
        cam.R[0] = cam.R[4] = cam.R[8] = 1;
        splat_scene scene;
        random_scene(&scene, n, &cam, &rng);
        splat_scene_gpu sg, grads;
        splat_render_bufs b;
        CHECK(splat__scene_gpu_init(g, &sg, "scene", n, false, &err));
        CHECK(splat__scene_gpu_init(g, &grads, "grads", n, false, &err));
        CHECK(splat__scene_gpu_upload(g, &sg, &scene, &err));
        CHECK(splat__render_bufs_init(g, &r, &b, n, n * 4, W, H, &err));
        splat__render_bufs_clear(splat__stream_cmd(&s), &b);
        splat_render_desc opts = {.sh_degree = 3};
        CHECK(splat__render_image(&s, &r, &sg, &b, &cam, &opts, &err)); /* grows the intersection buffers */
        float *gimg = malloc((size_t)W * H * 16);
        for (size_t p = 0; p < (size_t)W * H * 4; p++) gimg[p] = (float)(splat__rng_uniform(&rng) - 0.5) * 1e-6f;
        CHECK(splat__buf_upload(g, &b.grad_img, 0, gimg, (uint64_t)W * H * 16, &err));
        free(gimg);
        splat_frame f;
        splat__frame_make(&f, &cam, &opts, n);
        double stage[SPLAT_PROF_MAX][64], wall[64];
        const char *labels[SPLAT_PROF_MAX];
        uint32_t n_labels = 0;
        uint64_t submits = 0, waits = 0;
        /* Warm-up: at least 2 s of back-to-back work, or the first size of a run is timed at idle
         * clocks (seen on the H100: 22.6 ms where a warm GPU takes 4.9 ms). */
        uint32_t warm = 0;
        for (double w0 = splat__now(); warm < 2 || splat__now() - w0 < 2.0; warm++) {
            splat_cmd *c = splat__stream_cmd(&s);
            splat__render_set_frame(c, &b, &f);
            splat__cmd_barrier(c);
            splat__render_fwd(c, &r, &sg, &b, n, TRAIN_FWD);
            splat__render_bwd(c, &r, &sg, &b, n, &grads, TRAIN_BWD);
            CHECK(splat__stream_sync(&s, SPLAT_SYNC_COMMIT, &err));
        }
        CHECK(splat__stream_sync(&s, SPLAT_SYNC_COMMIT_AND_WAIT, &err));
        for (uint32_t rep = 0; rep < reps; rep++) {
            uint64_t s0 = s.submits, w0 = s.waits;
            double t0 = splat__now();
            splat_cmd *c = splat__stream_cmd(&s);
            splat__prof_begin(c, &prof);
            splat__render_set_frame(c, &b, &f);
            splat__cmd_barrier(c);
            splat__render_fwd(c, &r, &sg, &b, n, TRAIN_FWD);
            splat__render_bwd(c, &r, &sg, &b, n, &grads, TRAIN_BWD);
            CHECK(splat__stream_sync(&s, SPLAT_SYNC_COMMIT_AND_WAIT, &err));
            double t1 = splat__now();
            submits = s.submits - s0;
            waits = s.waits - w0 - 1; /* the benchmark's own final wait does not count */
            double ms[SPLAT_PROF_MAX];
            CHECK(splat__prof_read(g, &prof, ms, &err));
            n_labels = prof.n - 1;
            for (uint32_t k = 0; k < n_labels; k++) {
                labels[k] = prof.labels[k + 1];
                stage[k][rep] = ms[k];
            }
            wall[rep] = (t1 - t0) * 1e3;
        }
        splat_counters k;
        CHECK(splat__buf_download(g, &b.counters, 0, &k, sizeof k, &err));
        printf("%u Gaussians: %u intersections, %llu submit(s) and %llu host wait(s) inside a forward+backward\n", n,
               k.n_isect, (unsigned long long)submits, (unsigned long long)waits);
        printf("| stage | ms |\n| --- | --- |\n");
        /* stages by label, summed (the sort marks every pass) */
        const char *seen[SPLAT_PROF_MAX];
        uint32_t n_seen = 0;
        double total = 0;
        for (uint32_t a = 0; a < n_labels; a++) {
            bool dup = false;
            for (uint32_t q = 0; q < n_seen; q++) dup |= strcmp(seen[q], labels[a]) == 0;
            if (dup) continue;
            seen[n_seen++] = labels[a];
            double med[64];
            for (uint32_t rep = 0; rep < reps; rep++) {
                med[rep] = 0;
                for (uint32_t q = 0; q < n_labels; q++)
                    if (strcmp(labels[q], labels[a]) == 0) med[rep] += stage[q][rep];
            }
            qsort(med, reps, sizeof med[0], cmp_double);
            printf("| %s | %.3f |\n", labels[a], med[reps / 2]);
            total += med[reps / 2];
        }
        qsort(wall, reps, sizeof wall[0], cmp_double);
        printf("| sum of stages | %.3f |\n| host wall time (record + submit + wait) | %.3f |\n\n", total, wall[reps / 2]);
        splat__render_bufs_free(g, &b);
        splat__scene_gpu_free(g, &sg);
        splat__scene_gpu_free(g, &grads);
        splat_scene_free(&scene);
    }
    splat__prof_free(g, &prof);
    splat__stream_free(&s);
    splat__renderer_free(&r);
    splat__gpu_free(g);
    return 0;
}
