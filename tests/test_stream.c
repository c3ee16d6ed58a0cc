/* The stream: sync kinds, the adaptive commit trigger, record once / replay many. */
#include "gpu_support.h"
#include "harness.h"

typedef struct affine_push {
    uint32_t n;
    float a, b;
} affine_push;

typedef struct fixture {
    splat_gpu *g;
    splat_pipe pipe;
    splat_buf buf;
    uint32_t n;
    float *x0;
} fixture;

static bool fixture_init(fixture *f, uint32_t n)
{
    memset(f, 0, sizeof *f);
    f->g = t_gpu();
    if (!f->g) return false;
    splat_error err = {0};
    f->n = n;
    f->x0 = malloc(n * 4);
    for (uint32_t i = 0; i < n; i++) f->x0[i] = (float)t_uniform(-1, 1);
    if (splat__pipe_init(f->g, &f->pipe, &(splat_pipe_desc){.shader = "test_affine", .table = t_shaders, .n_bindings = 1, .push_size = 12}, &err) ||
        splat__buf_init(f->g, &f->buf, "x", n * 4, SPLAT_MEM_DEVICE, &err) ||
        splat__buf_upload(f->g, &f->buf, 0, f->x0, n * 4, &err)) {
        splat_test_fail(__FILE__, __LINE__, "fixture:", "%s", err.msg);
        return false;
    }
    return true;
}

static void fixture_free(fixture *f)
{
    splat__buf_free(f->g, &f->buf);
    splat__pipe_free(f->g, &f->pipe);
    free(f->x0);
}

static void record_affine(splat_cmd *c, fixture *f, float a, float b)
{
    affine_push pc = {f->n, a, b};
    splat__cmd_dispatch_1d(c, &f->pipe, &SPLAT_VIEW(f->buf), 1, &pc, sizeof pc, f->n);
    splat__cmd_barrier(c);
}

/* Elements of y that differ from the fixture's input after `rounds` steps of x * a + b on the
 * CPU: the same float operations in the same order as the shader's. */
static uint32_t affine_mismatches(const fixture *f, const float *y, uint32_t rounds, float a, float b)
{
    uint32_t bad = 0;
    for (uint32_t i = 0; i < f->n; i++) {
        float v = f->x0[i];
        for (uint32_t r = 0; r < rounds; r++) v = v * a + b;
        bad += y[i] != v;
    }
    return bad;
}

/* ADAPTIVE with threshold T submits exactly floor(N/T) times while N dispatches are encoded,
 * and not at all with the trigger off; the result is the same either way. */
SPLAT_TEST(stream_adaptive_commit_count)
{
    fixture f;
    T_REQUIRE(fixture_init(&f, 1000 + (uint32_t)(splat__rng_u64(splat_test_rng()) % 3000)));
    const uint32_t counts[] = {16, 32, 64, 128, 256};
    const uint32_t thresholds[] = {32, 32, 32, 32, 32, 7};
    float a = (float)t_uniform(0.9, 1.1), b = (float)t_uniform(-0.01, 0.01);
    for (int trigger = 0; trigger < 2; trigger++) {
        for (size_t k = 0; k < SPLAT_COUNTOF(counts); k++) {
            for (size_t tk = 0; tk < (k == 2 ? SPLAT_COUNTOF(thresholds) : 1); tk++) {
                uint32_t N = counts[k], T = thresholds[tk];
                splat_error err = {0};
                splat_stream s;
                T_OK(splat__stream_init(f.g, &s, &err), &err);
                s.threshold = T;
                s.auto_sync = trigger ? SPLAT_SYNC_ADAPTIVE : SPLAT_SYNC_NONE;
                T_OK(splat__buf_upload(f.g, &f.buf, 0, f.x0, f.n * 4, &err), &err);
                for (uint32_t i = 0; i < N; i++) record_affine(splat__stream_cmd(&s), &f, a, b);
                uint64_t before_wait = s.submits;
                uint32_t expect = trigger ? N / T : 0;
                T_CHECK(before_wait == expect, "N %u threshold %u trigger %d: %llu submits, expected %u", N, T, trigger,
                        (unsigned long long)before_wait, expect);
                T_OK(splat__stream_sync(&s, SPLAT_SYNC_COMMIT_AND_WAIT, &err), &err);
                /* The final wait submits the tail (the dispatches after the last trigger, or at
                 * least the trailing barrier) exactly once. */
                T_CHECK(s.submits == expect + 1, "after wait %llu", (unsigned long long)s.submits);
                float *y = malloc(f.n * 4);
                T_OK(splat__buf_download(f.g, &f.buf, 0, y, f.n * 4, &err), &err);
                uint32_t bad = affine_mismatches(&f, y, N, a, b);
                T_CHECK(bad == 0, "N %u: %u elements differ from the CPU", N, bad);
                free(y);
                splat__stream_free(&s);
            }
        }
    }
    fixture_free(&f);
}

/* COMMIT_AND_WAIT leaves nothing pending or in flight; COMMIT returns before the work is done
 * and a later wait finishes it; sync kinds on an empty stream submit nothing. */
SPLAT_TEST(stream_sync_kinds)
{
    fixture f;
    T_REQUIRE(fixture_init(&f, 200000));
    splat_error err = {0};
    splat_stream s;
    T_OK(splat__stream_init(f.g, &s, &err), &err);
    T_OK(splat__stream_sync(&s, SPLAT_SYNC_COMMIT, &err), &err);
    T_OK(splat__stream_sync(&s, SPLAT_SYNC_COMMIT_AND_WAIT, &err), &err);
    T_CHECK(s.submits == 0, "empty stream submitted %llu times", (unsigned long long)s.submits);
    for (int i = 0; i < 10; i++) record_affine(splat__stream_cmd(&s), &f, 1.0f, 1.0f);
    T_OK(splat__stream_sync(&s, SPLAT_SYNC_NONE, &err), &err);
    T_CHECK(s.submits == 0 && s.pending == 10);
    T_OK(splat__stream_sync(&s, SPLAT_SYNC_ADAPTIVE, &err), &err);
    T_CHECK(s.submits == 0, "ADAPTIVE below threshold submitted");
    T_OK(splat__stream_sync(&s, SPLAT_SYNC_COMMIT, &err), &err);
    T_CHECK(s.submits == 1 && s.pending == 0 && s.submitted == 1);
    for (int i = 0; i < 10; i++) record_affine(splat__stream_cmd(&s), &f, 1.0f, 1.0f);
    T_OK(splat__stream_sync(&s, SPLAT_SYNC_COMMIT_AND_WAIT, &err), &err);
    T_CHECK(s.pending == 0 && s.n_inflight == 0 && !s.open, "pending %u inflight %u open %d", s.pending, s.n_inflight, s.open);
    T_CHECK(splat__stream_completed(&s) == s.submitted);
    float *y = malloc(f.n * 4);
    T_OK(splat__buf_download(f.g, &f.buf, 0, y, f.n * 4, &err), &err);
    uint32_t bad = affine_mismatches(&f, y, 20, 1.0f, 1.0f);
    T_CHECK(bad == 0, "%u elements wrong", bad);
    free(y);
    splat__stream_free(&s);
    fixture_free(&f);
}

/* Far more submissions than the flight holds, the first one slow enough that the host has a
 * full flight plus a new command buffer before anything retires: every command buffer comes
 * back as a spare once everything is done, and none is lost or written past the pool. */
SPLAT_TEST(stream_many_in_flight)
{
    fixture f;
    T_REQUIRE(fixture_init(&f, 1000000 + (uint32_t)(splat__rng_u64(splat_test_rng()) % 1000)));
    float a = (float)t_uniform(0.999, 1.001), b = (float)t_uniform(-0.001, 0.001);
    splat_error err = {0};
    splat_stream s;
    T_OK(splat__stream_init(f.g, &s, &err), &err);
    s.auto_sync = SPLAT_SYNC_NONE;
    uint32_t rounds = 0;
    for (int pass = 0; pass < 2; pass++) {
        for (int i = 0; i < 64; i++) record_affine(splat__stream_cmd(&s), &f, a, b);
        rounds += 64;
        T_OK(splat__stream_sync(&s, SPLAT_SYNC_COMMIT, &err), &err);
        for (int i = 0; i < 3 * SPLAT_STREAM_MAX_INFLIGHT; i++) {
            record_affine(splat__stream_cmd(&s), &f, a, b);
            rounds++;
            T_OK(splat__stream_sync(&s, SPLAT_SYNC_COMMIT, &err), &err);
        }
        T_OK(splat__stream_sync(&s, SPLAT_SYNC_COMMIT_AND_WAIT, &err), &err);
        T_CHECK(s.n_inflight == 0 && s.n_spare >= 1 && s.n_spare <= SPLAT_COUNTOF(s.spare),
                "pass %d: %u in flight, %u spare", pass, s.n_inflight, s.n_spare);
    }
    float *y = malloc(f.n * 4);
    T_OK(splat__buf_download(f.g, &f.buf, 0, y, f.n * 4, &err), &err);
    uint32_t bad = affine_mismatches(&f, y, rounds, a, b);
    T_CHECK(bad == 0, "%u of %u elements differ from the CPU after %u dispatches", bad, f.n, rounds);
    free(y);
    splat__stream_free(&s);
    fixture_free(&f);
}

/* A recording replayed 100 times (several in flight at once) gives the same bits as the same
 * dispatch recorded 100 times. */
SPLAT_TEST(stream_replay_matches_recording)
{
    fixture f;
    T_REQUIRE(fixture_init(&f, 5000 + (uint32_t)(splat__rng_u64(splat_test_rng()) % 5000)));
    float a = (float)t_uniform(0.95, 1.05), b = (float)t_uniform(-0.1, 0.1);
    splat_error err = {0};
    splat_stream s;
    T_OK(splat__stream_init(f.g, &s, &err), &err);
    for (int i = 0; i < 100; i++) record_affine(splat__stream_cmd(&s), &f, a, b);
    T_OK(splat__stream_sync(&s, SPLAT_SYNC_COMMIT_AND_WAIT, &err), &err);
    float *recorded = malloc(f.n * 4), *replayed = malloc(f.n * 4);
    T_OK(splat__buf_download(f.g, &f.buf, 0, recorded, f.n * 4, &err), &err);

    T_OK(splat__buf_upload(f.g, &f.buf, 0, f.x0, f.n * 4, &err), &err);
    splat_rec rec;
    T_OK(splat__rec_begin(f.g, &rec, &err), &err);
    record_affine(&rec.cmd, &f, a, b);
    T_OK(splat__rec_end(&rec, &err), &err);
    uint64_t last = 0;
    for (int i = 0; i < 100; i++) T_OK(splat__stream_replay(&s, &rec, &last, &err), &err);
    T_CHECK(s.n_inflight > 0 || splat__stream_completed(&s) == last);
    T_OK(splat__stream_wait(&s, last, &err), &err);
    T_OK(splat__buf_download(f.g, &f.buf, 0, replayed, f.n * 4, &err), &err);
    T_CHECK(memcmp(recorded, replayed, f.n * 4) == 0, "replayed result differs from recorded");
    uint32_t bad = affine_mismatches(&f, recorded, 100, a, b);
    T_CHECK(bad == 0, "%u elements differ from the CPU", bad);
    free(recorded);
    free(replayed);
    splat__rec_free(f.g, &rec);
    splat__stream_free(&s);
    fixture_free(&f);
}

/* GPU timestamps: every stage gets a non-negative duration, and a heavier stage takes longer
 * than an empty one. */
SPLAT_TEST(stream_timestamps)
{
    fixture f;
    T_REQUIRE(fixture_init(&f, 1 << 20));
    splat_error err = {0};
    splat_stream s;
    splat_prof prof;
    T_OK(splat__stream_init(f.g, &s, &err), &err);
    T_OK(splat__prof_init(f.g, &prof, &err), &err);
    splat_cmd *c = splat__stream_cmd(&s);
    splat__prof_begin(c, &prof);
    splat__cmd_mark(c, "nothing");
    for (int i = 0; i < 20; i++) record_affine(c, &f, 1.0f, 0.5f);
    splat__cmd_mark(c, "work");
    T_OK(splat__stream_sync(&s, SPLAT_SYNC_COMMIT_AND_WAIT, &err), &err);
    double ms[SPLAT_PROF_MAX];
    T_OK(splat__prof_read(f.g, &prof, ms, &err), &err);
    T_CHECK(prof.n == 3 && strcmp(prof.labels[2], "work") == 0);
    T_CHECK(ms[0] >= 0 && ms[1] > ms[0], "empty %.4f ms, work %.4f ms", ms[0], ms[1]);
    splat__prof_free(f.g, &prof);
    splat__stream_free(&s);
    fixture_free(&f);
}

/* A recording failure after earlier work was submitted (adaptive commits): the sync that reports
 * it waits for that work, so the caller may free what it used at once. Freeing device memory a
 * submitted command buffer still used made the validation layers report VUID-vkFreeMemory-
 * memory-00677 and lavapipe crash (a 4096x4096 `splatc render` on lavapipe, issue 10). The
 * harness fails the case on any validation message. */
SPLAT_TEST(stream_error_waits_for_submitted_work)
{
    fixture f;
    if (!fixture_init(&f, 1u << 20)) return;
    splat_error err = {0};
    splat_stream s;
    T_OK(splat__stream_init(f.g, &s, &err), &err);
    s.threshold = 4;
    for (int k = 0; k < 64; k++) {
        record_affine(splat__stream_cmd(&s), &f, 1.0001f, 0.5f);
        T_OK(splat__stream_sync(&s, SPLAT_SYNC_ADAPTIVE, &err), &err);
    }
    T_CHECK(s.submits > 0, "no work was submitted before the failure");
    /* a dispatch binding one buffer too many fails the command */
    splat_view two[] = {SPLAT_VIEW(f.buf), SPLAT_VIEW(f.buf)};
    affine_push pc = {f.n, 1, 0};
    splat__cmd_dispatch_1d(splat__stream_cmd(&s), &f.pipe, two, 2, &pc, sizeof pc, f.n);
    splat_status st = splat__stream_sync(&s, SPLAT_SYNC_COMMIT_AND_WAIT, &err);
    T_CHECK(st == SPLAT_ERR_SHADER, "%s: %s", splat_status_str(st), err.msg);
    T_CHECK(splat__stream_completed(&s) == s.submitted, "submission %llu of %llu complete after the failure",
            (unsigned long long)splat__stream_completed(&s), (unsigned long long)s.submitted);
    splat__buf_free(f.g, &f.buf); /* what the submitted work used, freed at once */
    splat__stream_free(&s);
    fixture_free(&f);
}
