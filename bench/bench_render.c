/* Render benchmark: `splatc render`'s cost per image on a real scene, timed the way gsplat times
 * its renders (host wall clock around one render, synchronised before and after, the image left
 * on the GPU: no download, no PNG), with the GPU time of every stage from timestamps.
 *
 * The scene is uploaded once; every camera of the file is rendered R times through
 * splat__render_image, the path splat_render takes for each camera (with the buffers and render
 * options splat_render gives it), twice: as splat_render runs it (the headline wall time), then
 * with a timestamp after every stage. Prints ms per image (mean, p50) and per stage, then how long the
 * tiles' runs of entries are over every camera (a stage with a workgroup per tile waits for its
 * longest run).
 *
 * Usage: bench_render SCENE CAMERAS [--reps R] [--width W --height H] [--sh-half] [--antialiased]
 *                     [--path fwd|train] [--device N]
 *                     [--host-split] [--commit-every K] [--tile-cap C]
 *   SCENE    any format splatc reads (PLY, compressed PLY, .splat, .spz, .sog)
 *   CAMERAS  a cameras.json (the 3DGS form `splatc train` writes, or splatc's own)
 *   --width/--height  render every camera at this size (intrinsics scaled to keep the field of
 *            view): 1280x720 is the viewer's case
 *   --path   fwd (default): the forward-only render splat_render uses; train: the forward that
 *            training records (also keeps what the backward reads), to compare the two
 *   --host-split  also where the host's time around a render goes (recording, submission, the
 *            wait blocking or polling, an empty submission's round trip)
 *   --commit-every K  the stream submits after every K dispatches (default 32), so the GPU starts
 *            on a render's first stages while the host records the rest
 *   --tile-cap C  tile_sort's block in shared memory (a power of two; default 2048) */
#include <stdio.h>
#include <stdlib.h>

#include "api/api.h"

/* A tile's run [start, end) of sorted entries, as the ranges buffer holds it. */
typedef struct tile_run {
    uint32_t start, end;
} tile_run;

static void die(const char *what, const splat_error *err)
{
    fprintf(stderr, "bench_render: %s: %s\n", what, err->msg);
    exit(1);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static void mean_p50(double *v, uint32_t n, double *mean, double *p50)
{
    double s = 0;
    for (uint32_t i = 0; i < n; i++) s += v[i];
    *mean = n ? s / n : 0;
    qsort(v, n, sizeof v[0], cmp_double);
    *p50 = n ? (n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2])) : 0;
}

static uint32_t arg_u32(const char *flag, const char *v)
{
    char *end;
    unsigned long x = strtoul(v, &end, 10);
    if (*v == '\0' || *end != '\0' || x == 0 || x > 16384) {
        fprintf(stderr, "bench_render: %s wants a number in 1..16384, not '%s'\n", flag, v);
        exit(2);
    }
    return (uint32_t)x;
}

#define MAX_STAGES 16

int main(int argc, char **argv)
{
    splat_gpu_desc gdesc = {0};
    const char *scene_path = NULL, *cams_path = NULL;
    uint32_t reps = 5, W = 0, H = 0, threshold = 0, tile_cap = 0;
    bool sh_half = false, antialiased = false, train_path = false, host_split = false;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        bool has = i + 1 < argc;
        if (strcmp(a, "--reps") == 0 && has) reps = arg_u32(a, argv[++i]);
        else if (strcmp(a, "--width") == 0 && has) W = arg_u32(a, argv[++i]);
        else if (strcmp(a, "--height") == 0 && has) H = arg_u32(a, argv[++i]);
        else if (strcmp(a, "--device") == 0 && has) gdesc.choose_device = true, gdesc.device_index = (uint32_t)atoi(argv[++i]);
        else if (strcmp(a, "--path") == 0 && has) {
            const char *p = argv[++i];
            if (strcmp(p, "train") != 0 && strcmp(p, "fwd") != 0) {
                fprintf(stderr, "bench_render: --path is fwd or train, not '%s'\n", p);
                return 2;
            }
            train_path = strcmp(p, "train") == 0;
        } else if (strcmp(a, "--sh-half") == 0) sh_half = true;
        else if (strcmp(a, "--antialiased") == 0) antialiased = true;
        else if (strcmp(a, "--host-split") == 0) host_split = true;
        else if (strcmp(a, "--commit-every") == 0 && has) threshold = arg_u32(a, argv[++i]);
        else if (strcmp(a, "--tile-cap") == 0 && has) tile_cap = arg_u32(a, argv[++i]);
        else if (a[0] != '-' && !scene_path) scene_path = a;
        else if (a[0] != '-' && !cams_path) cams_path = a;
        else {
            fprintf(stderr, "bench_render: unknown argument '%s'\n", a);
            return 2;
        }
    }
    if (!scene_path || !cams_path || (W == 0) != (H == 0)) {
        fprintf(stderr, "usage: bench_render SCENE CAMERAS [--reps R] [--width W --height H] [--sh-half] "
                        "[--antialiased] [--path fwd|train] [--device N] [--host-split] "
                        "[--commit-every K] [--tile-cap C]\n");
        return 2;
    }

    splat_error err = {0};
    splat_scene scene;
    if (splat_scene_load(scene_path, &scene, NULL, &err) != SPLAT_OK) die(scene_path, &err);
    splat_camera *cams;
    uint32_t n_cams;
    if (splat_read_cameras(cams_path, &cams, &n_cams, &err) != SPLAT_OK) die(cams_path, &err);
    if (n_cams == 0) {
        fprintf(stderr, "bench_render: %s: no cameras\n", cams_path);
        return 1;
    }
    uint32_t max_w = 1, max_h = 1;
    for (uint32_t k = 0; k < n_cams; k++) {
        splat_camera *c = &cams[k];
        if (W) {
            double sx = (double)W / c->width, sy = (double)H / c->height;
            c->fx = (float)(c->fx * sx), c->cx = (float)(c->cx * sx);
            c->fy = (float)(c->fy * sy), c->cy = (float)(c->cy * sy);
            c->width = W, c->height = H;
        }
        max_w = SPLAT_MAX(max_w, c->width);
        max_h = SPLAT_MAX(max_h, c->height);
    }
    splat_render_desc rd, in = {.sh_half = sh_half,
                                .rasterize_mode = antialiased ? SPLAT_RASTERIZE_ANTIALIASED : scene.rasterize_mode};
    if (splat__render_options(&in, scene.sh_degree, &rd, &err) != SPLAT_OK) die("render options", &err);

    splat_gpu *g;
    splat_renderer r;
    splat_stream s;
    splat_prof prof;
    if (splat__gpu_init(&g, &gdesc, &err) != SPLAT_OK) die("device", &err);
    if (splat__renderer_init(g, &r, &err) != SPLAT_OK) die("renderer", &err);
    if (splat__stream_init(g, &s, &err) != SPLAT_OK) die("stream", &err);
    if (threshold) s.threshold = threshold;
    if (tile_cap && splat__renderer_set_tile_cap(&r, tile_cap, &err) != SPLAT_OK) die("tile cap", &err);
    if (splat__prof_init(g, &prof, &err) != SPLAT_OK) die("timestamps", &err);

    /* What splat_render does once per call: the scene and the buffers, sized for every camera. */
    uint32_t cap = scene.count ? scene.count : 1;
    splat_scene_gpu sg;
    splat_render_bufs rb;
    if (splat__scene_gpu_init(g, &sg, "scene", cap, rd.sh_half, &err) != SPLAT_OK) die("scene", &err);
    if (splat__scene_gpu_upload(g, &sg, &scene, &err) != SPLAT_OK) die("scene upload", &err);
    if ((train_path ? splat__render_bufs_init : splat__render_bufs_init_fwd_only)(g, &r, &rb, cap, cap * 8, max_w, max_h, &err) !=
        SPLAT_OK)
        die("buffers", &err);

    printf("device: %s\nscene: %s, %u Gaussians, SH degree %u%s%s\ncameras: %u from %s", g->info.name, scene_path,
           scene.count, splat__sh_degree(&rd), rd.sh_half ? ", SH as half floats" : "",
           rd.rasterize_mode == SPLAT_RASTERIZE_ANTIALIASED ? ", antialiased" : "", n_cams, cams_path);
    if (W) printf(", all rendered at %ux%u", W, H);
    printf("\npath: %s, %u rep(s) of every camera, a submission every %u dispatches, tile_sort blocks of %u\n\n",
           train_path ? "train (the forward training records)" : "fwd (splat_render's)", reps, s.threshold,
           r.tile_cap);

    /* Warm-up: every camera once (the intersection buffers grow to the largest), then at least 2 s of
     * back-to-back renders, or the first renders are timed at idle clocks. */
    double w0 = splat__now();
    for (uint32_t k = 0, done = 0; done < n_cams || splat__now() - w0 < 2.0; k = (k + 1) % n_cams, done++)
        if (splat__render_image(&s, &r, &sg, &rb, &cams[k], &rd, &err) != SPLAT_OK) die("render", &err);

    uint32_t n = reps * n_cams;
    double *wall = malloc(sizeof(double) * n), *gpu = malloc(sizeof(double) * n), *plain = malloc(sizeof(double) * n);
    double *stage = malloc(sizeof(double) * n * MAX_STAGES);
    double *isect = malloc(sizeof(double) * n);
    if (!wall || !gpu || !plain || !stage || !isect) {
        fprintf(stderr, "bench_render: out of host memory\n");
        return 1;
    }
    const char *names[MAX_STAGES];
    uint32_t n_names = 0, i = 0;
    for (uint32_t rep = 0; rep < reps; rep++)
        for (uint32_t k = 0; k < n_cams; k++, i++) {
            /* Nothing in flight: the clock starts at an idle queue, like gsplat's synchronize. First
             * the render as splat_render does it (replayed, no timestamps), then again with the
             * stages' timestamps (recorded afresh). */
            if (splat__stream_sync(&s, SPLAT_SYNC_COMMIT_AND_WAIT, &err) != SPLAT_OK) die("sync", &err);
            double p0 = splat__now();
            if (splat__render_image(&s, &r, &sg, &rb, &cams[k], &rd, &err) != SPLAT_OK) die("render", &err);
            plain[i] = (splat__now() - p0) * 1e3;
            splat__prof_begin(splat__stream_cmd(&s), &prof);
            double t0 = splat__now();
            if (splat__render_image(&s, &r, &sg, &rb, &cams[k], &rd, &err) != SPLAT_OK) die("render", &err);
            double t1 = splat__now();
            splat__stream_cmd(&s)->prof = NULL;
            wall[i] = (t1 - t0) * 1e3;
            double ms[SPLAT_PROF_MAX];
            if (splat__prof_read(g, &prof, ms, &err) != SPLAT_OK) die("timestamps", &err);
            for (uint32_t q = 0; q < MAX_STAGES; q++) stage[q * n + i] = 0;
            gpu[i] = 0;
            /* Stages by label, summed (the sort marks each of its passes). */
            for (uint32_t m = 0; m + 1 < prof.n; m++) {
                const char *label = prof.labels[m + 1];
                uint32_t q = 0;
                while (q < n_names && strcmp(names[q], label) != 0) q++;
                if (q == n_names && n_names < MAX_STAGES) names[n_names++] = label;
                if (q < MAX_STAGES) stage[q * n + i] += ms[m];
                gpu[i] += ms[m];
            }
            splat_counters kc;
            if (splat__buf_download(g, &rb.readback, 0, &kc, sizeof kc, &err) != SPLAT_OK) die("counters", &err);
            isect[i] = kc.n_isect;
        }

    double mean, p50;
    printf("| per image | mean | p50 |\n| --- | --- | --- |\n");
    mean_p50(plain, n, &mean, &p50);
    printf("| host wall time, call to return (ms) | %.3f | %.3f |\n", mean, p50);
    mean_p50(wall, n, &mean, &p50);
    printf("| the same with timestamps, recorded afresh (ms) | %.3f | %.3f |\n", mean, p50);
    mean_p50(gpu, n, &mean, &p50);
    printf("| GPU time, first to last timestamp (ms) | %.3f | %.3f |\n", mean, p50);
    for (uint32_t q = 0; q < n_names; q++) {
        mean_p50(stage + (size_t)q * n, n, &mean, &p50);
        printf("| %s (ms) | %.3f | %.3f |\n", names[q], mean, p50);
    }
    mean_p50(isect, n, &mean, &p50);
    printf("| tile intersections | %.0f | %.0f |\n", mean, p50);

    if (host_split) {
        /* Where the host's time around a render goes, no timestamps recorded: the render as
         * splat__render_image did it before it kept its recording, in its parts (recording,
         * submission, the wait), with a blocking wait and with the host polling the timeline;
         * and the round trip of a submission with no work. */
        enum { REC, COMMIT, WAIT, CHECK, WHOLE, SPIN_WAIT, SPIN_WHOLE, EMPTY, NPARTS };
        static const char *part[NPARTS] = {"record", "submit", "wait (blocking)", "counters check", "whole (blocking)",
                                           "wait (polling)", "whole (polling)", "empty submission, blocking wait"};
        double *t = malloc(sizeof(double) * n * NPARTS);
        if (!t) die("host split", &err);
        for (uint32_t pass = 0, i2 = 0; pass < reps; pass++)
            for (uint32_t k = 0; k < n_cams; k++, i2++)
                for (int spin = 0; spin < 2; spin++) {
                    if (splat__stream_sync(&s, SPLAT_SYNC_COMMIT_AND_WAIT, &err) != SPLAT_OK) die("sync", &err);
                    splat_frame f;
                    double a = splat__now();
                    splat__frame_make(&f, &cams[k], &rd, sg.count);
                    splat_cmd *c = splat__stream_cmd(&s);
                    splat__render_set_frame(c, &rb, &f);
                    splat__cmd_barrier(c);
                    splat__render_fwd(c, &r, &sg, &rb, sg.count, 0);
                    double b = splat__now();
                    if (splat__stream_sync(&s, SPLAT_SYNC_COMMIT, &err) != SPLAT_OK) die("submit", &err);
                    double d = splat__now();
                    if (spin)
                        while (splat__stream_completed(&s) < s.submitted) {
                        }
                    if (splat__stream_wait(&s, 0, &err) != SPLAT_OK) die("wait", &err);
                    double e = splat__now();
                    bool overflow;
                    uint32_t needed;
                    if (splat__render_check(g, &rb, &overflow, &needed, &err) != SPLAT_OK || overflow) die("check", &err);
                    double h = splat__now();
                    if (!spin) {
                        t[REC * n + i2] = (b - a) * 1e3, t[COMMIT * n + i2] = (d - b) * 1e3;
                        t[WAIT * n + i2] = (e - d) * 1e3, t[CHECK * n + i2] = (h - e) * 1e3;
                        t[WHOLE * n + i2] = (h - a) * 1e3;
                        splat__cmd_barrier(splat__stream_cmd(&s));
                        double x = splat__now();
                        if (splat__stream_sync(&s, SPLAT_SYNC_COMMIT_AND_WAIT, &err) != SPLAT_OK) die("empty", &err);
                        t[EMPTY * n + i2] = (splat__now() - x) * 1e3;
                    } else {
                        t[SPIN_WAIT * n + i2] = (e - d) * 1e3, t[SPIN_WHOLE * n + i2] = (h - a) * 1e3;
                    }
                }
        printf("\n| host time per image, no timestamps | mean | p50 |\n| --- | --- | --- |\n");
        for (int q = 0; q < NPARTS; q++) {
            mean_p50(t + (size_t)q * n, n, &mean, &p50);
            printf("| %s (ms) | %.3f | %.3f |\n", part[q], mean, p50);
        }
        free(t);
    }

    /* How long the tiles' runs of entries are (a per-tile stage is as slow as its longest run):
     * every camera once more, untimed, its ranges read back. */
    uint32_t hist[6] = {0}; /* runs of 1-64, -256, -1024, -2048, -8192, more entries */
    uint64_t in_hist[6] = {0}, longest = 0, runs = 0, entries = 0;
    const uint32_t bound[5] = {64, 256, 1024, 2048, 8192};
    tile_run *ranges = malloc(sizeof *ranges * (size_t)rb.max_tiles_x * rb.max_tiles_y);
    for (uint32_t k = 0; ranges && k < n_cams; k++) {
        if (splat__render_image(&s, &r, &sg, &rb, &cams[k], &rd, &err) != SPLAT_OK) die("render", &err);
        uint32_t tiles = ((cams[k].width + SPLAT_TILE - 1) / SPLAT_TILE) * ((cams[k].height + SPLAT_TILE - 1) / SPLAT_TILE);
        if (splat__buf_download(g, &rb.ranges, 0, ranges, sizeof *ranges * tiles, &err) != SPLAT_OK) die("ranges", &err);
        for (uint32_t t = 0; t < tiles; t++) {
            uint32_t len = ranges[t].end - ranges[t].start;
            if (!len) continue;
            uint32_t b = 0;
            while (b < 5 && len > bound[b]) b++;
            hist[b]++, in_hist[b] += len, runs++, entries += len;
            if (len > longest) longest = len;
        }
    }
    if (runs) {
        printf("\n| tile runs (every camera once) | runs | share of the entries |\n| --- | --- | --- |\n");
        const char *label[6] = {"1-64", "65-256", "257-1,024", "1,025-2,048", "2,049-8,192", "over 8,192"};
        for (uint32_t b = 0; b < 6; b++)
            printf("| %s entries | %u | %.1f %% |\n", label[b], hist[b], 100.0 * (double)in_hist[b] / (double)entries);
        printf("| mean / longest | %.0f | %llu |\n", (double)entries / (double)runs, (unsigned long long)longest);
    }
    free(ranges);
    free(wall), free(gpu), free(plain), free(stage), free(isect);
    splat__render_bufs_free(g, &rb);
    splat__scene_gpu_free(g, &sg);
    splat__prof_free(g, &prof);
    splat__stream_free(&s);
    splat__renderer_free(&r);
    splat__gpu_free(g);
    splat_free(cams);
    splat_scene_free(&scene);
    return 0;
}
