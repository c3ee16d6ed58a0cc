/* GPU layer benchmark: per device, copy bandwidth, float-atomic throughput, the cost of a
 * dispatch plus barrier, what a small fill adds to it, and the latency of an empty submit + wait; the
 * copy and the fill both as the gpu layer records them (its shaders) and as the Vulkan transfer
 * commands they replaced; and what a refine pays the driver for the model's buffers. Prints two tables.
 * Usage: bench_gpu [--device N] */
#include <stdio.h>
#include <pthread.h>
#include <stdlib.h>

#include "gpu/gpu.h"
#include "gpu/spirv.h"

/* The benchmarks' own shaders (bench/shaders). */
extern const splat__spirv bench_shaders[];

#define CHECK(x)                                                                    \
    do {                                                                            \
        if ((x) != SPLAT_OK) {                                                      \
            fprintf(stderr, "bench_gpu: %s\n", err.msg);                            \
            exit(1);                                                                \
        }                                                                           \
    } while (0)

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return v[n / 2];
}

/* A refine's new arrays (docs/PERFORMANCE.md, "Where a refine's time goes"): the parameters and
 * Adam moments of every group of core/params.h for n Gaussians, ten buffers. */
#define MODEL_BUFS (2 * SPLAT_GROUP_COUNT)

static void model_alloc(splat_gpu *g, splat_buf *bufs, uint64_t n)
{
    splat_error err = {0};
    for (uint32_t k = 0; k < MODEL_BUFS; k++)
        CHECK(splat__buf_init(g, &bufs[k], "model", n * splat__groups[k % SPLAT_GROUP_COUNT].width * 4 * (k < SPLAT_GROUP_COUNT ? 1 : 2),
                              SPLAT_MEM_DEVICE, &err));
}

typedef struct free_job {
    splat_gpu *g;
    splat_buf *bufs;
    double ms;
} free_job;

static void *model_free(void *user)
{
    free_job *j = user;
    double t0 = splat__now();
    for (uint32_t k = 0; k < MODEL_BUFS; k++) splat__buf_free(j->g, &j->bufs[k]);
    j->ms = (splat__now() - t0) * 1e3;
    return NULL;
}

/* Allocating one set while the set before is freed: on this thread after it, or on a second
 * thread at once (whether the driver lets the two overlap); and a fill of every buffer of a fresh
 * set, then of the same set again (what the first use of new memory costs). */
static void bench_model_buffers(splat_gpu *g, splat_stream *s)
{
    splat_error err = {0};
    uint64_t n = g->info.type == VK_PHYSICAL_DEVICE_TYPE_CPU ? 50000 : 900000, bytes = 0;
    for (uint32_t k = 0; k < MODEL_BUFS; k++) bytes += n * splat__groups[k % SPLAT_GROUP_COUNT].width * 4 * (k < SPLAT_GROUP_COUNT ? 1 : 2);
    enum { REPS = 7 };
    splat_buf set[2][MODEL_BUFS];
    double alloc_ms[REPS], free_ms[REPS], both_ms[REPS], first_ms[REPS], again_ms[REPS];
    int cur = 0;
    model_alloc(g, set[cur], n);
    for (int r = 0; r < REPS; r++) {
        double t0 = splat__now();
        model_alloc(g, set[!cur], n);
        double t1 = splat__now();
        free_job j = {g, set[cur], 0};
        model_free(&j);
        alloc_ms[r] = (t1 - t0) * 1e3, free_ms[r] = j.ms;
        cur = !cur;
        /* the fresh set's first fill, then its second */
        for (int pass = 0; pass < 2; pass++) {
            double f0 = splat__now();
            splat_cmd *c = splat__stream_cmd(s);
            for (uint32_t k = 0; k < MODEL_BUFS; k++) splat__cmd_fill(c, SPLAT_VIEW(set[cur][k]), 0);
            CHECK(splat__stream_sync(s, SPLAT_SYNC_COMMIT_AND_WAIT, &err));
            (pass ? again_ms : first_ms)[r] = (splat__now() - f0) * 1e3;
        }
    }
    for (int r = 0; r < REPS; r++) {
        free_job j = {g, set[cur], 0};
        pthread_t th;
        double t0 = splat__now();
        bool threaded = pthread_create(&th, NULL, model_free, &j) == 0;
        if (!threaded) model_free(&j);
        model_alloc(g, set[!cur], n);
        if (threaded) pthread_join(th, NULL);
        both_ms[r] = (splat__now() - t0) * 1e3;
        cur = !cur;
    }
    free_job j = {g, set[cur], 0};
    model_free(&j);
    printf("\n| device | model buffers | allocate ms | free ms | allocate while a second thread frees, ms "
           "| first fill ms | second fill ms |\n");
    printf("| --- | --- | --- | --- | --- | --- | --- |\n");
    printf("| %s | %u for %llu Gaussians, %.0f MB | %.2f | %.2f | %.2f | %.2f | %.2f |\n", g->info.name, MODEL_BUFS,
           (unsigned long long)n, bytes / 1e6, median(alloc_ms, REPS), median(free_ms, REPS), median(both_ms, REPS),
           median(first_ms, REPS), median(again_ms, REPS));
}

int main(int argc, char **argv)
{
    splat_gpu_desc desc = {0};
    for (int i = 1; i + 1 < argc; i++)
        if (strcmp(argv[i], "--device") == 0) desc.choose_device = true, desc.device_index = (uint32_t)atoi(argv[i + 1]);
    splat_error err = {0};
    splat_gpu *g;
    CHECK(splat__gpu_init(&g, &desc, &err));
    splat_stream s;
    splat_prof prof;
    CHECK(splat__stream_init(g, &s, &err));
    CHECK(splat__prof_init(g, &prof, &err));
    const int reps = 20;
    double t[64];

    /* Copy bandwidth: bytes read + written per second, device to device. */
    uint64_t bytes = g->info.type == VK_PHYSICAL_DEVICE_TYPE_CPU ? (64ull << 20) : (1ull << 30);
    splat_buf a, b;
    CHECK(splat__buf_init(g, &a, "copy_src", bytes, SPLAT_MEM_DEVICE, &err));
    CHECK(splat__buf_init(g, &b, "copy_dst", bytes, SPLAT_MEM_DEVICE, &err));
    splat_cmd *c = splat__stream_cmd(&s);
    splat__cmd_fill(c, SPLAT_VIEW(a), 0x3f800000u);
    CHECK(splat__stream_sync(&s, SPLAT_SYNC_COMMIT_AND_WAIT, &err));
    /* [0] splat__cmd_copy (the gpu layer's shader), [1] vkCmdCopyBuffer, which it replaced */
    double copy_gbs[2];
    for (int k = 0; k < 2; k++) {
        for (int r = 0; r < reps; r++) {
            c = splat__stream_cmd(&s);
            splat__prof_begin(c, &prof);
            if (k == 0) splat__cmd_copy(c, SPLAT_VIEW(a), SPLAT_VIEW(b));
            else vkCmdCopyBuffer(c->cb, a.buffer, b.buffer, 1, &(VkBufferCopy){0, 0, bytes});
            splat__cmd_mark(c, "copy");
            CHECK(splat__stream_sync(&s, SPLAT_SYNC_COMMIT_AND_WAIT, &err));
            double ms[SPLAT_PROF_MAX];
            CHECK(splat__prof_read(g, &prof, ms, &err));
            t[r] = ms[0];
        }
        copy_gbs[k] = 2.0 * (double)bytes / (median(t, reps) * 1e-3) / 1e9;
    }

    /* Float atomics: n adds spread over many addresses (low contention) and over 32 (high). */
    splat_pipe pa, pe;
    CHECK(splat__pipe_init(g, &pa, &(splat_pipe_desc){.shader = "bench_atomic", .table = bench_shaders, .n_bindings = 1, .push_size = 8}, &err));
    CHECK(splat__pipe_init(g, &pe, &(splat_pipe_desc){.shader = "bench_empty", .table = bench_shaders, .n_bindings = 1}, &err));
    uint32_t n_atomic = g->info.type == VK_PHYSICAL_DEVICE_TYPE_CPU ? (1u << 22) : (1u << 26);
    double atomic_rate[2];
    uint32_t buckets_of[2] = {1u << 20, 32};
    for (int k = 0; k < 2; k++) {
        for (int r = 0; r < reps; r++) {
            c = splat__stream_cmd(&s);
            splat__prof_begin(c, &prof);
            uint32_t pc[2] = {n_atomic, buckets_of[k]};
            splat__cmd_dispatch_1d(c, &pa, &SPLAT_VIEW(b), 1, pc, sizeof pc, n_atomic);
            splat__cmd_mark(c, "atomic");
            CHECK(splat__stream_sync(&s, SPLAT_SYNC_COMMIT_AND_WAIT, &err));
            double ms[SPLAT_PROF_MAX];
            CHECK(splat__prof_read(g, &prof, ms, &err));
            t[r] = ms[0];
        }
        atomic_rate[k] = (double)n_atomic / (median(t, reps) * 1e-3) / 1e9;
    }

    /* Dispatch + barrier: GPU time per (tiny dispatch, barrier) pair in one command buffer. */
    const int n_disp = 1000;
    for (int r = 0; r < reps; r++) {
        s.auto_sync = SPLAT_SYNC_NONE;
        c = splat__stream_cmd(&s);
        splat__prof_begin(c, &prof);
        for (int i = 0; i < n_disp; i++) {
            splat__cmd_dispatch(c, &pe, &SPLAT_VIEW(b), 1, NULL, 0, 1, 1, 1);
            splat__cmd_barrier(c);
        }
        splat__cmd_mark(c, "dispatches");
        CHECK(splat__stream_sync(&s, SPLAT_SYNC_COMMIT_AND_WAIT, &err));
        double ms[SPLAT_PROF_MAX];
        CHECK(splat__prof_read(g, &prof, ms, &err));
        t[r] = ms[0] * 1e3 / n_disp;
    }
    double dispatch_us = median(t, reps);
    /* The same with a 64-byte fill and its barrier after each dispatch: what a small fill adds,
     * [0] splat__cmd_fill, [1] vkCmdFillBuffer */
    double fill_us[2];
    for (int k = 0; k < 2; k++) {
        for (int r = 0; r < reps; r++) {
            s.auto_sync = SPLAT_SYNC_NONE;
            c = splat__stream_cmd(&s);
            splat__prof_begin(c, &prof);
            for (int i = 0; i < n_disp; i++) {
                splat__cmd_dispatch(c, &pe, &SPLAT_VIEW(b), 1, NULL, 0, 1, 1, 1);
                splat__cmd_barrier(c);
                if (k == 0) splat__cmd_fill(c, SPLAT_VIEW_AT(a, 0, 64), 0);
                else vkCmdFillBuffer(c->cb, a.buffer, 0, 64, 0);
                splat__cmd_barrier(c);
            }
            splat__cmd_mark(c, "fills");
            CHECK(splat__stream_sync(&s, SPLAT_SYNC_COMMIT_AND_WAIT, &err));
            double ms[SPLAT_PROF_MAX];
            CHECK(splat__prof_read(g, &prof, ms, &err));
            t[r] = ms[0] * 1e3 / n_disp - dispatch_us;
        }
        fill_us[k] = median(t, reps);
    }
    s.auto_sync = SPLAT_SYNC_ADAPTIVE;

    /* Empty submit + wait, host wall time. */
    for (int r = 0; r < 64; r++) {
        double t0 = splat__now();
        splat__cmd_barrier(splat__stream_cmd(&s));
        CHECK(splat__stream_sync(&s, SPLAT_SYNC_COMMIT_AND_WAIT, &err));
        t[r] = (splat__now() - t0) * 1e6;
    }
    double submit_us = median(t, 64);

    printf("| device | copy GB/s (read+write): shader / vkCmdCopyBuffer | float atomics G/s (spread) "
           "| float atomics G/s (32 addresses) | dispatch+barrier us | a 64-byte fill+barrier more, us: shader / "
           "vkCmdFillBuffer | empty submit+wait us |\n");
    printf("| --- | --- | --- | --- | --- | --- | --- |\n");
    printf("| %s | %.1f / %.1f | %.2f | %.3f | %.2f | %.2f / %.2f | %.1f |\n", g->info.name, copy_gbs[0], copy_gbs[1],
           atomic_rate[0], atomic_rate[1], dispatch_us, fill_us[0], fill_us[1], submit_us);

    splat__pipe_free(g, &pa);
    splat__pipe_free(g, &pe);
    splat__buf_free(g, &a);
    splat__buf_free(g, &b);
    bench_model_buffers(g, &s);
    splat__prof_free(g, &prof);
    splat__stream_free(&s);
    splat__gpu_free(g);
    return 0;
}
