/* The GPU layer: device, buffers, pipelines, dispatch, errors. */
#include "gpu_support.h"
#include "harness.h"
#include "gpu/spirv.h"

SPLAT_TEST(gpu_device_info)
{
    splat_gpu *g = t_gpu();
    T_REQUIRE(g);
    const splat_gpu_info *in = &g->info;
    printf("%s: subgroup %u (%u..%u), max storage range %llu, shared %u, unified %d, fp16 %d\n", in->name,
           in->subgroup_size, in->min_subgroup_size, in->max_subgroup_size, (unsigned long long)in->max_storage_range,
           in->max_shared_memory, in->unified_memory, in->fp16_storage);
    T_CHECK(in->subgroup_size >= in->min_subgroup_size && in->subgroup_size <= in->max_subgroup_size);
    T_CHECK((in->subgroup_size & (in->subgroup_size - 1)) == 0, "subgroup size %u is not a power of two", in->subgroup_size);
    T_CHECK(in->max_storage_range >= (1u << 27), "Vulkan guarantees at least 128 MiB, got %llu",
            (unsigned long long)in->max_storage_range);
    splat_gpu_info list[8];
    uint32_t n = 0;
    splat_error err = {0};
    T_OK(splat__gpu_list(list, 8, &n, &err), &err);
    T_CHECK(n >= 1 && in->index < n);
    T_CHECK(strcmp(list[in->index].name, in->name) == 0);
}

static void random_bytes(uint8_t *p, size_t n)
{
    for (size_t i = 0; i < n; i++) p[i] = (uint8_t)splat__rng_u64(splat_test_rng());
}

SPLAT_TEST(gpu_buffer_roundtrip)
{
    splat_gpu *g = t_gpu();
    T_REQUIRE(g);
    const size_t sizes[] = {4, 12, 4096, 65536 + 4 * (size_t)(splat__rng_u64(splat_test_rng()) % 1000), 3 << 20};
    const splat_mem kinds[] = {SPLAT_MEM_DEVICE, SPLAT_MEM_UPLOAD, SPLAT_MEM_READBACK};
    for (size_t s = 0; s < SPLAT_COUNTOF(sizes); s++) {
        for (size_t k = 0; k < SPLAT_COUNTOF(kinds); k++) {
            size_t n = sizes[s];
            uint8_t *a = malloc(n), *b = malloc(n);
            random_bytes(a, n);
            memset(b, 0, n);
            splat_buf buf;
            splat_error err = {0};
            T_OK(splat__buf_init(g, &buf, "roundtrip", n, kinds[k], &err), &err);
            splat_status st = splat__buf_upload(g, &buf, 0, a, n, &err);
            if (st == SPLAT_OK) st = splat__buf_download(g, &buf, 0, b, n, &err);
            T_CHECK(st == SPLAT_OK, "%s", err.msg);
            T_CHECK(memcmp(a, b, n) == 0, "size %zu kind %d differs", n, (int)kinds[k]);
            /* A sub-range in the middle. */
            if (n >= 16) {
                size_t off = 4 * (splat__rng_u64(splat_test_rng()) % (n / 8)), len = n / 2 - (n / 2) % 4;
                random_bytes(a + off, len);
                T_OK(splat__buf_upload(g, &buf, off, a + off, len, &err), &err);
                T_OK(splat__buf_download(g, &buf, 0, b, n, &err), &err);
                T_CHECK(memcmp(a, b, n) == 0, "sub-range %zu+%zu of %zu differs", off, len, n);
            }
            /* Out of range is refused, not clipped. */
            T_CHECK(splat__buf_upload(g, &buf, n - 3, a, 4, &err) == SPLAT_ERR_INVALID_ARG);
            T_CHECK(strstr(err.msg, "roundtrip") != NULL, "message: %s", err.msg);
            splat__buf_free(g, &buf);
            free(a);
            free(b);
        }
    }
}

/* Devices whose device-local memory the host can read map their buffers and skip staging;
 * the others stage. Either way the GPU's writes reach the host. */
SPLAT_TEST(gpu_buffer_unified_path)
{
    splat_gpu *g = t_gpu();
    T_REQUIRE(g);
    splat_error err = {0};
    splat_buf buf;
    uint32_t n = 1000 + (uint32_t)(splat__rng_u64(splat_test_rng()) % 5000);
    T_OK(splat__buf_init(g, &buf, "data", n * 4, SPLAT_MEM_DEVICE, &err), &err);
    T_CHECK((buf.map != NULL) == g->info.unified_memory, "map %p unified %d", buf.map, g->info.unified_memory);
    float *x = malloc(n * 4), *y = malloc(n * 4);
    for (uint32_t i = 0; i < n; i++) x[i] = (float)t_uniform(-1, 1);
    T_OK(splat__buf_upload(g, &buf, 0, x, n * 4, &err), &err);
    splat_pipe p;
    T_OK(splat__pipe_init(g, &p, &(splat_pipe_desc){.shader = "test_affine", .table = t_shaders, .n_bindings = 1, .push_size = 12}, &err), &err);
    splat_stream s;
    T_OK(splat__stream_init(g, &s, &err), &err);
    struct { uint32_t n; float a, b; } pc = {n, 2.0f, 0.5f};
    splat__cmd_dispatch_1d(splat__stream_cmd(&s), &p, &SPLAT_VIEW(buf), 1, &pc, sizeof pc, n);
    T_OK(splat__stream_sync(&s, SPLAT_SYNC_COMMIT_AND_WAIT, &err), &err);
    if (buf.map) memcpy(y, buf.map, n * 4); /* in place, no staging copy */
    else T_OK(splat__buf_download(g, &buf, 0, y, n * 4, &err), &err);
    for (uint32_t i = 0; i < n; i++) T_CHECK(y[i] == x[i] * 2.0f + 0.5f, "at %u: %g", i, y[i]);
    splat__stream_free(&s);
    splat__pipe_free(g, &p);
    splat__buf_free(g, &buf);
    free(x);
    free(y);
}

/* A binding larger than the device's maxStorageBufferRange is refused with a clear status;
 * the same buffer bound in ranges within the limit works. */
SPLAT_TEST(gpu_buffer_storage_range_limit)
{
    splat_gpu *g = t_gpu();
    T_REQUIRE(g);
    splat_error err = {0};
    uint64_t range = g->info.max_storage_range;
    uint64_t size = range + 256;
    splat_buf buf;
    splat_status st = splat__buf_init(g, &buf, "huge", size, SPLAT_MEM_DEVICE, &err);
    if (st != SPLAT_OK) {
        /* The device cannot allocate past its binding range at all: that refusal must be clean. */
        T_CHECK(st == SPLAT_ERR_OUT_OF_DEVICE_MEMORY, "%s", err.msg);
        T_CHECK(strstr(err.msg, "huge") != NULL, "message: %s", err.msg);
        return;
    }
    splat_pipe p;
    T_OK(splat__pipe_init(g, &p, &(splat_pipe_desc){.shader = "test_affine", .table = t_shaders, .n_bindings = 1, .push_size = 12}, &err), &err);
    splat_stream s;
    T_OK(splat__stream_init(g, &s, &err), &err);
    struct { uint32_t n; float a, b; } pc = {64, 1.0f, 1.0f};
    splat__cmd_dispatch(splat__stream_cmd(&s), &p, &SPLAT_VIEW(buf), 1, &pc, sizeof pc, 1, 1, 1);
    st = splat__stream_sync(&s, SPLAT_SYNC_COMMIT_AND_WAIT, &err);
    T_CHECK(st == SPLAT_ERR_LIMIT, "got %s", splat_status_str(st));
    T_CHECK(strstr(err.msg, "huge") && strstr(err.msg, "maxStorageBufferRange"), "message: %s", err.msg);
    /* Split: the tail bound from an aligned offset works, and only touches that range. */
    uint64_t off = size - 4096;
    off -= off % g->info.storage_align;
    float ones[64];
    for (int i = 0; i < 64; i++) ones[i] = (float)i;
    T_OK(splat__buf_upload(g, &buf, off, ones, sizeof ones, &err), &err);
    memset(&err, 0, sizeof err);
    splat__cmd_dispatch(splat__stream_cmd(&s), &p, &SPLAT_VIEW_AT(buf, off, 4096), 1, &pc, sizeof pc, 1, 1, 1);
    T_OK(splat__stream_sync(&s, SPLAT_SYNC_COMMIT_AND_WAIT, &err), &err);
    float back[64];
    T_OK(splat__buf_download(g, &buf, off, back, sizeof back, &err), &err);
    for (int i = 0; i < 64; i++) T_CHECK(back[i] == (float)i + 1.0f, "at %d: %g", i, back[i]);
    splat__stream_free(&s);
    splat__pipe_free(g, &p);
    splat__buf_free(g, &buf);
}

/* splat__cmd_copy and splat__cmd_fill (shaders since the transfer commands were slow on the H100):
 * every case against a host mirror of the destination, the whole buffer compared, so a byte written
 * outside the range fails as surely as one missed. The cases cross the shaders' split into 16-byte
 * quads and 4-byte words (both ends aligned, one, neither) and, with the binding range lowered,
 * into pieces. */
typedef struct copy_case {
    const char *what;
    bool fill;
    uint32_t src_phase, dst_phase;   /* offset mod 16, in bytes */
    uint64_t range;                  /* the binding range to pretend, 0: the device's */
    splat_mem dst_kind;
} copy_case;

SPLAT_TEST(gpu_copy_fill)
{
    splat_gpu *g = t_gpu();
    T_REQUIRE(g);
    static const copy_case cases[] = {
        {"copy, both aligned", false, 0, 0, 0, SPLAT_MEM_DEVICE},
        {"copy, source off by 4", false, 4, 0, 0, SPLAT_MEM_DEVICE},
        {"copy, destination off by 8", false, 0, 8, 0, SPLAT_MEM_DEVICE},
        {"copy, both off by 12", false, 12, 12, 0, SPLAT_MEM_DEVICE},
        {"copy into host-visible memory", false, 0, 4, 0, SPLAT_MEM_READBACK},
        {"copy in pieces, aligned", false, 0, 0, 4096, SPLAT_MEM_DEVICE},
        {"copy in pieces, unaligned", false, 8, 4, 4096 + 48, SPLAT_MEM_DEVICE},
        {"fill, aligned", true, 0, 0, 0, SPLAT_MEM_DEVICE},
        {"fill, off by 4", true, 0, 4, 0, SPLAT_MEM_DEVICE},
        {"fill of host-visible memory", true, 0, 12, 0, SPLAT_MEM_READBACK},
        {"fill in pieces", true, 0, 4, 4096 + 16, SPLAT_MEM_DEVICE},
    };
    const uint64_t device_range = g->info.max_storage_range;
    const size_t size = 65536 + 16 * (size_t)(splat__rng_u64(splat_test_rng()) % 4096);
    uint8_t *src_host = malloc(size), *want = malloc(size), *got = malloc(size);
    T_REQUIRE(src_host && want && got);
    splat_error err = {0};
    splat_stream s;
    T_OK(splat__stream_init(g, &s, &err), &err);
    for (size_t k = 0; k < SPLAT_COUNTOF(cases); k++) {
        const copy_case *cc = &cases[k];
        splat_buf src, dst;
        T_OK(splat__buf_init(g, &src, "copy_src", size, SPLAT_MEM_DEVICE, &err), &err);
        T_OK(splat__buf_init(g, &dst, "copy_dst", size, cc->dst_kind, &err), &err);
        random_bytes(src_host, size);
        random_bytes(want, size);
        T_OK(splat__buf_upload(g, &src, 0, src_host, size, &err), &err);
        T_OK(splat__buf_upload(g, &dst, 0, want, size, &err), &err);
        /* a few operations per case, each on a fresh random range of that phase */
        for (int rep = 0; rep < 3; rep++) {
            uint64_t rnd = splat__rng_u64(splat_test_rng());
            size_t len = 4 * (1 + (size_t)(rnd % (size / 8))); /* up to half the buffer */
            if (rep == 0) len = 4 * (size_t)(1 + rnd % 7); /* and a few words only */
            size_t so = 16 * (size_t)((rnd >> 20) % ((size - len) / 32)) + cc->src_phase;
            size_t dof = 16 * (size_t)((rnd >> 40) % ((size - len) / 32)) + cc->dst_phase;
            uint32_t value = (uint32_t)(rnd >> 13);
            g->info.max_storage_range = cc->range ? cc->range : device_range;
            splat_cmd *c = splat__stream_cmd(&s);
            if (cc->fill) splat__cmd_fill(c, SPLAT_VIEW_AT(dst, dof, len), value);
            else splat__cmd_copy(c, SPLAT_VIEW_AT(src, so, len), SPLAT_VIEW_AT(dst, dof, len));
            splat_status st = splat__stream_sync(&s, SPLAT_SYNC_COMMIT_AND_WAIT, &err);
            g->info.max_storage_range = device_range;
            T_CHECK(st == SPLAT_OK, "%s: %s", cc->what, err.msg);
            if (cc->fill)
                for (size_t i = 0; i < len; i += 4) memcpy(want + dof + i, &value, 4);
            else memcpy(want + dof, src_host + so, len);
            T_OK(splat__buf_download(g, &dst, 0, got, size, &err), &err);
            size_t bad = 0;
            while (bad < size && got[bad] == want[bad]) bad++;
            T_CHECK(bad == size, "%s (%zu bytes from %zu to %zu of %zu): first wrong byte at %zu", cc->what, len, so, dof,
                    size, bad);
        }
        splat__buf_free(g, &src);
        splat__buf_free(g, &dst);
    }
    splat__stream_free(&s);
    free(src_host), free(want), free(got);
}

SPLAT_TEST(gpu_subgroup_atomics)
{
    splat_gpu *g = t_gpu();
    T_REQUIRE(g);
    /* splatc itself does not need float atomics; this test of the layer does. */
    T_REQUIRE(g->info.float_atomics, "%s has no float atomic add on storage buffers", g->info.name);
    splat_error err = {0};
    splat_pipe p;
    T_OK(splat__pipe_init(g, &p, &(splat_pipe_desc){.shader = "test_reduce", .table = t_shaders, .n_bindings = 3, .push_size = 4}, &err), &err);
    splat_stream s;
    T_OK(splat__stream_init(g, &s, &err), &err);
    const uint32_t sizes[] = {0, 1, 2, 63, 64, 65, 1000, 100003 + (uint32_t)(splat__rng_u64(splat_test_rng()) % 1000)};
    for (size_t k = 0; k < SPLAT_COUNTOF(sizes); k++) {
        uint32_t n = sizes[k];
        /* Multiples of 1/8 in [-4, 4]: every partial sum is exact in float, whatever the order of
         * the atomics, so the GPU must match the CPU exactly. */
        float *x = malloc((n + 1) * 4);
        double want = 0;
        uint64_t want_u = 0;
        for (uint32_t i = 0; i < n; i++) {
            x[i] = (float)((int)(splat__rng_u64(splat_test_rng()) % 65) - 32) / 8.0f;
            want += x[i];
            want_u += (uint32_t)((int)(x[i] * 8.0f) + 64);
        }
        splat_buf in, sum, scan;
        T_OK(splat__buf_init(g, &in, "in", (uint64_t)n * 4, SPLAT_MEM_DEVICE, &err), &err);
        T_OK(splat__buf_init(g, &sum, "sum", 12, SPLAT_MEM_DEVICE, &err), &err);
        T_OK(splat__buf_init(g, &scan, "scan", (uint64_t)n * 16, SPLAT_MEM_DEVICE, &err), &err);
        T_OK(splat__buf_upload(g, &in, 0, x, (uint64_t)n * 4, &err), &err);
        splat_cmd *c = splat__stream_cmd(&s);
        splat__cmd_fill(c, SPLAT_VIEW(sum), 0);
        splat__cmd_barrier(c);
        splat_view views[] = {SPLAT_VIEW(in), SPLAT_VIEW(sum), SPLAT_VIEW(scan)};
        splat__cmd_dispatch_1d(c, &p, views, 3, &n, 4, n);
        T_OK(splat__stream_sync(&s, SPLAT_SYNC_COMMIT_AND_WAIT, &err), &err);
        struct { float f; uint32_t u, count; } got;
        T_OK(splat__buf_download(g, &sum, 0, &got, sizeof got, &err), &err);
        T_CHECK(got.count == n, "n %u: counted %u", n, got.count);
        T_CHECK((double)got.f == want, "n %u: float atomic sum %.9g, CPU %.9g", n, got.f, want);
        T_CHECK(got.u == (uint32_t)want_u, "n %u: uint sum %u, CPU %llu", n, got.u, (unsigned long long)want_u);
        /* The subgroup inclusive scan, rebuilt on the CPU from each invocation's reported
         * subgroup and lane: lanes of one subgroup, in lane order, must accumulate. */
        uint32_t *sc = malloc((n + 1) * 16);
        T_OK(splat__buf_download(g, &scan, 0, sc, (uint64_t)n * 16, &err), &err);
        uint32_t sg_max = g->info.max_subgroup_size;
        uint32_t wg_size = 64, bad = 0;
        for (uint32_t base = 0; base < n && !bad; base += wg_size) {
            uint32_t end = SPLAT_MIN(base + wg_size, n);
            for (uint32_t i = base; i < end; i++) {
                uint32_t sg = sc[i * 4 + 1], lane = sc[i * 4 + 2];
                if (lane >= sg_max || sc[i * 4 + 3] != i / wg_size) {
                    bad++;
                    continue;
                }
                uint64_t expect = 0;
                for (uint32_t j = base; j < end; j++)
                    if (sc[j * 4 + 1] == sg && sc[j * 4 + 2] <= lane) expect += (uint32_t)((int)(x[j] * 8.0f) + 64);
                if (expect != sc[i * 4]) bad++;
            }
        }
        T_CHECK(bad == 0, "n %u: %u invocations with a wrong subgroup scan", n, bad);
        free(sc);
        free(x);
        splat__buf_free(g, &in);
        splat__buf_free(g, &sum);
        splat__buf_free(g, &scan);
    }
    splat__stream_free(&s);
    splat__pipe_free(g, &p);
}

/* A count written by one shader drives the next dispatch; the host never reads it. */
SPLAT_TEST(gpu_indirect_dispatch)
{
    splat_gpu *g = t_gpu();
    T_REQUIRE(g);
    splat_error err = {0};
    splat_pipe count, args, fill;
    T_OK(splat__pipe_init(g, &count, &(splat_pipe_desc){.shader = "test_count", .table = t_shaders, .n_bindings = 2, .push_size = 8}, &err), &err);
    uint32_t mode0 = 0, mode1 = 1;
    T_OK(splat__pipe_init(g, &args, &(splat_pipe_desc){.shader = "test_indirect", .table = t_shaders, .n_bindings = 2, .spec = &mode0, .n_spec = 1},
                          &err), &err);
    T_OK(splat__pipe_init(g, &fill, &(splat_pipe_desc){.shader = "test_indirect", .table = t_shaders, .n_bindings = 2, .spec = &mode1, .n_spec = 1},
                          &err), &err);
    splat_stream s;
    T_OK(splat__stream_init(g, &s, &err), &err);
    for (int rep = 0; rep < 4; rep++) {
        uint32_t n = rep == 0 ? 0 : 1 + (uint32_t)(splat__rng_u64(splat_test_rng()) % 300000);
        float threshold = (float)t_uniform(-1, 1);
        float *x = malloc((n + 1) * 4);
        uint32_t want = 0;
        for (uint32_t i = 0; i < n; i++) {
            x[i] = (float)t_uniform(-1, 1);
            want += x[i] > threshold;
        }
        splat_buf in, cnt, out;
        T_OK(splat__buf_init(g, &in, "in", (uint64_t)n * 4, SPLAT_MEM_DEVICE, &err), &err);
        T_OK(splat__buf_init(g, &cnt, "count", 16, SPLAT_MEM_DEVICE, &err), &err);
        T_OK(splat__buf_init(g, &out, "out", (uint64_t)n * 4 + 4, SPLAT_MEM_DEVICE, &err), &err);
        T_OK(splat__buf_upload(g, &in, 0, x, (uint64_t)n * 4, &err), &err);
        splat_cmd *c = splat__stream_cmd(&s);
        splat__cmd_fill(c, SPLAT_VIEW(cnt), 0);
        splat__cmd_fill(c, SPLAT_VIEW(out), 0xdeadbeef);
        splat__cmd_barrier(c);
        struct { uint32_t n; float t; } pc = {n, threshold};
        splat__cmd_dispatch_1d(c, &count, (splat_view[]){SPLAT_VIEW(in), SPLAT_VIEW(cnt)}, 2, &pc, sizeof pc, n);
        splat__cmd_barrier(c);
        splat__cmd_dispatch(c, &args, (splat_view[]){SPLAT_VIEW(cnt), SPLAT_VIEW(out)}, 2, NULL, 0, 1, 1, 1);
        splat__cmd_barrier(c);
        splat__cmd_dispatch_indirect(c, &fill, (splat_view[]){SPLAT_VIEW(cnt), SPLAT_VIEW(out)}, 2, NULL, 0,
                                     SPLAT_VIEW_AT(cnt, 4, 12));
        T_OK(splat__stream_sync(&s, SPLAT_SYNC_COMMIT_AND_WAIT, &err), &err);
        uint32_t *y = malloc((uint64_t)n * 4 + 4);
        T_OK(splat__buf_download(g, &out, 0, y, (uint64_t)n * 4 + 4, &err), &err);
        uint32_t got;
        T_OK(splat__buf_download(g, &cnt, 0, &got, 4, &err), &err);
        T_CHECK(got == want, "count %u, CPU %u", got, want);
        uint32_t bad = 0;
        for (uint32_t i = 0; i <= n; i++) bad += y[i] != (i < want ? i * 3 + 1 : 0xdeadbeefu);
        T_CHECK(bad == 0, "n %u count %u: %u wrong elements", n, want, bad);
        free(x);
        free(y);
        splat__buf_free(g, &in);
        splat__buf_free(g, &cnt);
        splat__buf_free(g, &out);
    }
    splat__stream_free(&s);
    splat__pipe_free(g, &count);
    splat__pipe_free(g, &args);
    splat__pipe_free(g, &fill);
}

SPLAT_TEST(gpu_error_bad_device_index)
{
    splat_gpu *g = NULL;
    splat_error err = {0};
    uint32_t idx = 64 + (uint32_t)(splat__rng_u64(splat_test_rng()) % 1000);
    splat_status st = splat__gpu_init(&g, &(splat_gpu_desc){.choose_device = true, .device_index = idx}, &err);
    T_CHECK(st == SPLAT_ERR_NO_DEVICE, "got %s", splat_status_str(st));
    T_CHECK(g == NULL);
    char want[32];
    snprintf(want, sizeof want, "device %u", idx);
    T_CHECK(strstr(err.msg, want) != NULL, "message: %s", err.msg);
}

/* SPLAT_DEVICE is a decimal index: anything else is an error that quotes it, not some device. */
SPLAT_TEST(gpu_error_bad_device_env)
{
    static const char *bad[] = {"-1", "+0", " 0", "0x1", "1.0", "4294967296", "99999999999999999999999", "one", "0 "};
    const char *was = getenv("SPLAT_DEVICE");
    char *kept = was ? strdup(was) : NULL;
    for (size_t k = 0; k < SPLAT_COUNTOF(bad); k++) {
        splat_gpu *g = NULL;
        splat_error err = {0};
        setenv("SPLAT_DEVICE", bad[k], 1);
        splat_status st = splat__gpu_init(&g, &(splat_gpu_desc){0}, &err);
        unsetenv("SPLAT_DEVICE");
        char want[64];
        snprintf(want, sizeof want, "SPLAT_DEVICE=%s is not a device index", bad[k]);
        T_CHECK(st == SPLAT_ERR_INVALID_ARG && g == NULL && strstr(err.msg, want), "SPLAT_DEVICE='%s': %s: %s", bad[k],
                splat_status_str(st), err.msg);
        splat__gpu_free(g);
    }
    if (kept) setenv("SPLAT_DEVICE", kept, 1);
    free(kept);
}

SPLAT_TEST(gpu_error_shader_interface)
{
    splat_gpu *g = t_gpu();
    T_REQUIRE(g);
    splat_error err = {0};
    splat_pipe p;
    /* test_reduce has 3 bindings and a 4-byte push block. */
    splat_status st = splat__pipe_init(g, &p, &(splat_pipe_desc){.shader = "test_reduce", .table = t_shaders, .n_bindings = 2, .push_size = 4}, &err);
    T_CHECK(st == SPLAT_ERR_SHADER && strstr(err.msg, "test_reduce") && strstr(err.msg, "3 storage buffer"), "%s: %s",
            splat_status_str(st), err.msg);
    memset(&err, 0, sizeof err);
    st = splat__pipe_init(g, &p, &(splat_pipe_desc){.shader = "test_reduce", .table = t_shaders, .n_bindings = 4, .push_size = 4}, &err);
    T_CHECK(st == SPLAT_ERR_SHADER, "%s", splat_status_str(st));
    memset(&err, 0, sizeof err);
    st = splat__pipe_init(g, &p, &(splat_pipe_desc){.shader = "test_reduce", .table = t_shaders, .n_bindings = 3, .push_size = 8}, &err);
    T_CHECK(st == SPLAT_ERR_SHADER && strstr(err.msg, "push-constant"), "%s: %s", splat_status_str(st), err.msg);
    memset(&err, 0, sizeof err);
    st = splat__pipe_init(g, &p, &(splat_pipe_desc){.shader = "no_such_shader"}, &err);
    T_CHECK(st == SPLAT_ERR_SHADER && strstr(err.msg, "no_such_shader"), "%s", err.msg);
    /* A dispatch that binds the wrong number of buffers fails at submit, and the stream recovers. */
    memset(&err, 0, sizeof err);
    T_OK(splat__pipe_init(g, &p, &(splat_pipe_desc){.shader = "test_affine", .table = t_shaders, .n_bindings = 1, .push_size = 12}, &err), &err);
    splat_stream s;
    T_OK(splat__stream_init(g, &s, &err), &err);
    splat_buf b;
    T_OK(splat__buf_init(g, &b, "b", 256, SPLAT_MEM_DEVICE, &err), &err);
    struct { uint32_t n; float a, b; } pc = {64, 1, 1};
    splat_view two[] = {SPLAT_VIEW(b), SPLAT_VIEW(b)};
    splat__cmd_dispatch(splat__stream_cmd(&s), &p, two, 2, &pc, sizeof pc, 1, 1, 1);
    st = splat__stream_sync(&s, SPLAT_SYNC_COMMIT_AND_WAIT, &err);
    T_CHECK(st == SPLAT_ERR_SHADER && strstr(err.msg, "test_affine"), "%s: %s", splat_status_str(st), err.msg);
    memset(&err, 0, sizeof err);
    splat__cmd_dispatch(splat__stream_cmd(&s), &p, two, 1, &pc, sizeof pc, 1, 1, 1);
    T_OK(splat__stream_sync(&s, SPLAT_SYNC_COMMIT_AND_WAIT, &err), &err);
    splat__buf_free(g, &b);
    splat__stream_free(&s);
    splat__pipe_free(g, &p);
}

SPLAT_TEST(gpu_error_alloc_too_large)
{
    splat_gpu *g = t_gpu();
    T_REQUIRE(g);
    splat_error err = {0};
    splat_buf b;
    uint64_t size = SPLAT_MAX(g->info.device_local_heap, g->info.max_alloc) + 4096 * (1 + splat__rng_u64(splat_test_rng()) % 16);
    splat_status st = splat__buf_init(g, &b, "giant", size, SPLAT_MEM_DEVICE, &err);
    T_CHECK(st == SPLAT_ERR_OUT_OF_DEVICE_MEMORY, "got %s", splat_status_str(st));
    T_CHECK(strstr(err.msg, "giant") != NULL, "message: %s", err.msg);
    T_CHECK(b.buffer == VK_NULL_HANDLE && b.memory == VK_NULL_HANDLE);
}

SPLAT_TEST(gpu_spirv_reflect)
{
    /* The reflector reads what glslc wrote: bindings, push block and local size, including a
     * specialised one. */
    const splat__spirv *spv = splat__spirv_find(t_shaders, "test_reduce");
    T_REQUIRE(spv);
    splat_spirv_iface f;
    splat_error err = {0};
    T_OK(splat__spirv_reflect(spv->code, spv->size, NULL, 0, &f, &err), &err);
    T_CHECK(f.n_bindings == 3 && f.max_binding == 3 && f.push_size == 4, "%u %u %u", f.n_bindings, f.max_binding, f.push_size);
    T_CHECK(f.local_size[0] == 64 && f.local_size[1] == 1 && f.local_size[2] == 1);
    spv = splat__spirv_find(t_shaders, "test_affine");
    T_REQUIRE(spv);
    T_OK(splat__spirv_reflect(spv->code, spv->size, NULL, 0, &f, &err), &err);
    T_CHECK(f.n_bindings == 1 && f.push_size == 12 && f.local_size[0] == 128);
    /* Garbage is refused. */
    uint32_t junk[16];
    for (int i = 0; i < 16; i++) junk[i] = (uint32_t)splat__rng_u64(splat_test_rng());
    T_CHECK(splat__spirv_reflect(junk, sizeof junk, NULL, 0, &f, &err) == SPLAT_ERR_SHADER);
    /* Truncations of a real module never crash. */
    spv = splat__spirv_find(t_shaders, "test_reduce");
    for (size_t cut = 20; cut < spv->size; cut += 4) {
        splat_error e2 = {0};
        splat__spirv_reflect(spv->code, cut, NULL, 0, &f, &e2);
    }
}
