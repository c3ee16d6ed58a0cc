/* GPU layer benchmark: per device, copy bandwidth, float-atomic throughput, the cost of a
 * dispatch plus barrier, what a small fill adds to it, and the latency of an empty submit + wait; the
 * copy and the fill both as the gpu layer records them (its shaders) and as the Vulkan transfer
 * commands they replaced. Prints a table.
 * Usage: bench_gpu [--device N] */
#include <stdio.h>
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
    splat__prof_free(g, &prof);
    splat__stream_free(&s);
    splat__gpu_free(g);
    return 0;
}
