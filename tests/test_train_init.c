/* Tests of the initial Gaussians (src/train/init.h): the k-d tree's scales against an O(n^2)
 * brute force on random, clustered and duplicated points, tiny scenes, a timed million points,
 * the random initialisation and the argument errors. */
#include "harness.h"
#include "train/init.h"

static uint32_t rand_u32(uint32_t lo, uint32_t hi) /* inclusive */
{
    return lo + (uint32_t)(splat__rng_u64(splat_test_rng()) % (hi - lo + 1));
}

static double normal(void) { return splat__rng_normal(splat_test_rng()); }

static double dist2(const float *p, uint32_t i, uint32_t j)
{
    double d = 0;
    for (int k = 0; k < 3; k++) {
        double v = (double)p[i * 3 + k] - p[j * 3 + k];
        d += v * v;
    }
    return d;
}

/* The 3 smallest of the squared distances from point i to every other point, each 0 replaced
 * by dmin2 first (which, being the smallest positive distance, keeps the order); log(0.01) when
 * there is nothing positive to measure. *zeros (may be NULL): how many points coincide with i. */
static double brute_log_scale(const float *p, uint32_t n, uint32_t i, double dmin2, uint32_t *zeros)
{
    double best[3] = {HUGE_VAL, HUGE_VAL, HUGE_VAL};
    if (zeros) *zeros = 0;
    for (uint32_t j = 0; j < n; j++) {
        if (j == i) continue;
        double d = dist2(p, i, j);
        if (d == 0 && zeros) ++*zeros;
        if (d == 0) d = dmin2;
        if (d < best[2]) {
            best[2] = d;
            for (int m = 2; m > 0 && best[m] < best[m - 1]; m--) {
                double s = best[m];
                best[m] = best[m - 1], best[m - 1] = s;
            }
        }
    }
    uint32_t k = n - 1 < 3 ? n - 1 : 3;
    double sum = 0;
    for (uint32_t m = 0; m < k; m++) sum += best[m];
    return k == 0 || sum == HUGE_VAL ? log(0.01) : log(sqrt(sum / k));
}

static double brute_dmin2(const float *p, uint32_t n)
{
    double dmin2 = HUGE_VAL;
    for (uint32_t i = 0; i < n; i++)
        for (uint32_t j = i + 1; j < n; j++) {
            double d = dist2(p, i, j);
            if (d > 0 && d < dmin2) dmin2 = d;
        }
    return dmin2;
}

/* Everything about `s` but the scales: means, rotation, opacity, SH, degree. */
static bool check_rest(const splat_scene *s, const float *pts, const uint8_t *colors, uint32_t n)
{
    bool ok = s->count == n && s->sh_degree == 3 && memcmp(s->means, pts, sizeof(float) * 3 * n) == 0;
    T_CHECK(ok, "count %u degree %u or means differ", s->count, s->sh_degree);
    float logit = (float)log(0.1 / 0.9);
    for (uint32_t i = 0; i < n && ok; i++) {
        const float *q = s->quats + i * 4;
        ok = q[0] == 1 && q[1] == 0 && q[2] == 0 && q[3] == 0 && s->opacities[i] == logit;
        for (int k = 0; k < 48 && ok; k++) {
            double want = 0;
            if (k < 3) want = colors ? (colors[i * 3 + k] / 255.0 - 0.5) / 0.28209479177387814 : 0;
            ok = fabs(s->sh[i * 48 + k] - want) <= 1e-6 * fmax(1, fabs(want));
        }
        T_CHECK(ok, "row %u: quaternion, opacity or SH", i);
    }
    return ok;
}

/* Scales of all rows against the brute force: 3 equal axes, within float rounding. */
static void check_scales(const splat_scene *s, const float *pts, uint32_t n)
{
    double dmin2 = brute_dmin2(pts, n);
    for (uint32_t i = 0; i < n; i++) {
        double want = brute_log_scale(pts, n, i, dmin2, NULL);
        const float *ls = s->log_scales + i * 3;
        bool ok = ls[0] == ls[1] && ls[1] == ls[2] && fabs(ls[0] - want) <= 2.4e-7 * fmax(1, fabs(want));
        T_CHECK(ok, "n %u row %u: log scale %.9g %.9g %.9g, brute force %.9g", n, i, ls[0], ls[1], ls[2], want);
        if (!ok) return;
    }
}

static void random_colors(uint8_t *c, uint32_t n)
{
    for (uint32_t k = 0; k < n * 3; k++) c[k] = (uint8_t)rand_u32(0, 255);
}

SPLAT_TEST(train_init_knn_brute)
{
    /* A mixture: a uniform box, tight clusters, a plane and a line (degenerate axes, many equal
     * coordinates), far outliers, and exact duplicates, some in groups big enough that a point's
     * three nearest neighbours are all at distance 0. Shuffled. */
    uint32_t n = rand_u32(2000, 4000);
    float *p = malloc(sizeof(float) * 3 * n);
    uint8_t *c = malloc(3 * n);
    T_REQUIRE(p && c);
    double box = exp(t_uniform(log(0.1), log(100)));
    double ctr[4][3];
    for (int k = 0; k < 4; k++)
        for (int a = 0; a < 3; a++) ctr[k][a] = box * t_uniform(-1, 1);
    for (uint32_t i = 0; i < n; i++) {
        uint32_t kind = rand_u32(0, 9);
        for (int a = 0; a < 3; a++) {
            double v;
            if (kind <= 2) v = box * t_uniform(-1, 1);
            else if (kind <= 5) v = ctr[kind - 3][a] + box * 1e-3 * normal();
            else if (kind == 6) v = a == 2 ? ctr[0][2] : box * t_uniform(-1, 1);
            else if (kind == 7) v = a == 0 ? box * t_uniform(-1, 1) : ctr[1][a];
            else if (kind == 8) v = box * 1e3 * normal();
            else v = i > 0 ? p[rand_u32(0, i - 1) * 3 + a] : 0; /* replaced below */
            p[i * 3 + a] = (float)v;
        }
        if (kind == 9 && i > 0) { /* a duplicate of an earlier point, repeated up to 5 times */
            uint32_t src = rand_u32(0, i - 1), reps = rand_u32(1, 5);
            for (uint32_t r = 0; r < reps && i < n; r++, i++) memcpy(p + i * 3, p + src * 3, 12);
            i--;
        }
    }
    for (uint32_t i = n - 1; i > 0; i--) {
        uint32_t j = rand_u32(0, i);
        float t[3];
        memcpy(t, p + i * 3, 12), memcpy(p + i * 3, p + j * 3, 12), memcpy(p + j * 3, t, 12);
    }
    random_colors(c, n);
    splat_scene s;
    splat_error err = {0};
    T_OK(splat__init_from_points(&s, p, c, n, &err), &err);
    if (check_rest(&s, p, c, n)) check_scales(&s, p, n);
    splat_scene_free(&s);
    free(p), free(c);
}

SPLAT_TEST(train_init_duplicates)
{
    /* Few distinct positions, each repeated many times: most points see only zeros, so the
     * smallest positive distance must come from the positive-only queries, one per position.
     * The closest pair is made to include the position of largest x, so that the position a
     * sort by coordinates puts first is not the one that finds it. Then a scene of identical
     * points: no positive distance at all, every scale the default log(0.01). */
    uint32_t distinct = rand_u32(3, 12), n = rand_u32(200, 1500);
    float *p = malloc(sizeof(float) * 3 * n), pos[12][3];
    T_REQUIRE(p);
    uint32_t right = 0;
    for (uint32_t d = 0; d + 1 < distinct; d++) {
        for (int a = 0; a < 3; a++) pos[d][a] = (float)t_uniform(-5, 5);
        if (pos[d][0] > pos[right][0]) right = d;
    }
    for (int a = 0; a < 3; a++) pos[distinct - 1][a] = pos[right][a] + (float)t_uniform(-0.02, 0.02);
    for (uint32_t i = 0; i < n; i++) memcpy(p + i * 3, pos[i < distinct ? i : rand_u32(0, distinct - 1)], 12);
    splat_scene s;
    splat_error err = {0};
    T_OK(splat__init_from_points(&s, p, NULL, n, &err), &err);
    if (check_rest(&s, p, NULL, n)) check_scales(&s, p, n);
    splat_scene_free(&s);

    for (uint32_t i = 1; i < n; i++) memcpy(p + i * 3, p, 12);
    T_OK(splat__init_from_points(&s, p, NULL, n, &err), &err);
    for (uint32_t k = 0; k < 3 * n; k++) {
        T_CHECK(s.log_scales[k] == (float)log(0.01), "identical points: log scale %.9g", s.log_scales[k]);
        if (s.log_scales[k] != (float)log(0.01)) break;
    }
    splat_scene_free(&s);
    free(p);
}

SPLAT_TEST(train_init_few_points)
{
    /* 1 to 4 points (fewer than 4 use the n - 1 others), then the same with one duplicate. */
    for (int dup = 0; dup < 2; dup++)
        for (uint32_t n = 1; n <= 4; n++) {
            float p[12];
            uint8_t c[12];
            for (uint32_t k = 0; k < 3 * n; k++) p[k] = (float)(t_uniform(-3, 3));
            if (dup && n >= 2) memcpy(p + 3 * (n - 1), p, 12);
            random_colors(c, n);
            splat_scene s;
            splat_error err = {0};
            T_OK(splat__init_from_points(&s, p, dup ? NULL : c, n, &err), &err);
            if (check_rest(&s, p, dup ? NULL : c, n)) check_scales(&s, p, n);
            if (n == 1 || (dup && n == 2))
                T_CHECK(s.log_scales[0] == (float)log(0.01), "n %u: %.9g", n, s.log_scales[0]);
            if (n == 2 && !dup)
                T_CHECK(fabs(s.log_scales[0] - 0.5 * log(dist2(p, 0, 1))) <= 1e-6, "two points");
            splat_scene_free(&s);
        }
}

SPLAT_TEST(train_init_million)
{
    /* One million uniform points: the time (printed, not asserted) and 100 random rows against
     * the brute force. Random floats in a cube coincide with probability ~1e-9 here; a spot row
     * with a duplicate would need the global smallest distance, so such a row is reported. */
    const uint32_t n = 1000000;
    float *p = malloc(sizeof(float) * 3 * n);
    T_REQUIRE(p);
    for (uint32_t k = 0; k < 3 * n; k++) p[k] = (float)t_uniform(-1.3, 1.3);
    splat_scene s;
    splat_error err = {0};
    double t0 = splat__now();
    T_OK(splat__init_from_points(&s, p, NULL, n, &err), &err);
    double t1 = splat__now();
    printf("k-NN initialisation of %u points: %.3f s\n", n, t1 - t0);
    for (int r = 0; r < 100; r++) {
        uint32_t i = rand_u32(0, n - 1);
        uint32_t zeros;
        double want = brute_log_scale(p, n, i, HUGE_VAL, &zeros);
        T_CHECK(zeros == 0, "row %u has a duplicate", i);
        T_CHECK(s.log_scales[i * 3] == s.log_scales[i * 3 + 2] && fabs(s.log_scales[i * 3] - want) <= 2.4e-7 * fabs(want),
                "row %u: %.9g, brute force %.9g", i, s.log_scales[i * 3], want);
    }
    splat_scene_free(&s);
    free(p);
}

SPLAT_TEST(train_init_random)
{
    /* Points in the cube, colours in [0, 1], reproducible from the seed, scales as the brute
     * force says, and the first two moments of the coordinates and colours (6 sigma). */
    uint32_t n = rand_u32(1000, 3000);
    double half = t_uniform(0.1, 10);
    uint64_t seed = splat__rng_u64(splat_test_rng());
    splat_scene a, b, c;
    splat_error err = {0};
    T_OK(splat__init_random(&a, n, NULL, half, seed, &err), &err);
    T_OK(splat__init_random(&b, n, NULL, half, seed, &err), &err);
    T_OK(splat__init_random(&c, n, NULL, half, seed ^ 1, &err), &err);
    T_CHECK(memcmp(a.means, b.means, sizeof(float) * 3 * n) == 0 && memcmp(a.sh, b.sh, sizeof(float) * 48 * n) == 0,
            "not reproducible");
    /* around a centre: the same cube moved there */
    double centre[3] = {t_uniform(-50, 50), t_uniform(-50, 50), t_uniform(-50, 50)};
    splat_scene d;
    T_OK(splat__init_random(&d, n, centre, half, seed, &err), &err);
    for (uint32_t i = 0; i < 3 * n; i++)
        T_CHECK(fabs(d.means[i] - centre[i % 3] - a.means[i]) < 1e-5 * (1 + fabs(centre[i % 3])),
                "coordinate %u: %g, not %g + %g", i, (double)d.means[i], centre[i % 3], (double)a.means[i]);
    splat_scene_free(&d);
    T_CHECK(memcmp(a.means, c.means, sizeof(float) * 3 * n) != 0, "seed ignored");
    float hf = (float)half;
    double sm = 0, sm2 = 0, sc = 0, sc2 = 0;
    bool ok = true;
    for (uint32_t i = 0; i < n && ok; i++) {
        for (int k = 0; k < 3; k++) {
            float m = a.means[i * 3 + k];
            double col = a.sh[i * 48 + k] * 0.28209479177387814 + 0.5;
            ok = fabsf(m) <= hf && col >= -1e-6 && col <= 1 + 1e-6;
            sm += m / half, sm2 += (m / half) * (m / half), sc += col, sc2 += col * col;
        }
        for (int k = 3; k < 48; k++) ok = ok && a.sh[i * 48 + k] == 0;
        T_CHECK(ok, "row %u: mean or colour out of range", i);
    }
    double m3 = 3.0 * n, mean = sm / m3, var = sm2 / m3 - mean * mean;
    T_CHECK(fabs(mean) <= 6 * sqrt(1.0 / 3 / m3) && fabs(var - 1.0 / 3) <= 6 * sqrt((1.0 / 5 - 1.0 / 9) / m3),
            "coordinates / half: mean %.4f var %.4f", mean, var);
    mean = sc / m3, var = sc2 / m3 - mean * mean;
    T_CHECK(fabs(mean - 0.5) <= 6 * sqrt(1.0 / 12 / m3) && fabs(var - 1.0 / 12) <= 6 * sqrt((1.0 / 80 - 1.0 / 144) / m3),
            "colours: mean %.4f var %.4f", mean, var);
    check_scales(&a, a.means, n);
    T_CHECK(a.count == n && a.sh_degree == 3 && a.quats[0] == 1 && a.opacities[n - 1] == (float)log(0.1 / 0.9));
    splat_scene_free(&a), splat_scene_free(&b), splat_scene_free(&c);
}

SPLAT_TEST(train_init_errors)
{
    /* Bad input fails with a status and a message, and leaves the scene freed. */
    splat_scene s;
    splat_error err = {0};
    float p[6] = {0, 0, 0, 1, 1, 1};
    T_CHECK(splat__init_from_points(&s, p, NULL, 0, &err) == SPLAT_ERR_INVALID_ARG && err.msg[0] && s.means == NULL);
    p[rand_u32(0, 5)] = rand_u32(0, 1) ? NAN : INFINITY;
    err = (splat_error){0};
    T_CHECK(splat__init_from_points(&s, p, NULL, 2, &err) == SPLAT_ERR_NONFINITE && err.msg[0] && s.means == NULL);
    err = (splat_error){0};
    T_CHECK(splat__init_random(&s, 10, NULL, rand_u32(0, 1) ? -t_uniform(0, 1) : NAN, 1, &err) == SPLAT_ERR_INVALID_ARG &&
            s.means == NULL);
    err = (splat_error){0};
    T_CHECK(splat__init_random(&s, 0, NULL, 1.3, 1, &err) == SPLAT_ERR_INVALID_ARG && s.count == 0);
}


SPLAT_TEST(train_init_out_of_memory)
{
    /* Each allocation in turn fails (duplicates included, so the positive-only pass allocates
     * too) until one run succeeds: out-of-memory with a message, the scene freed, nothing leaked
     * (ASan checks that part). */
    uint32_t n = rand_u32(20, 200);
    float *p = malloc(sizeof(float) * 3 * n);
    T_REQUIRE(p);
    for (uint32_t k = 0; k < 3 * n; k++) p[k] = (float)t_uniform(-1, 1);
    for (uint32_t k = 0; k < 5; k++) memcpy(p + 3 * (k + 1), p, 12); /* a point with 5 copies */
    bool done = false;
    for (int at = 0; at < 64 && !done; at++) {
        t_fail_after = at;
        splat_set_allocator(&t_failing_allocator);
        splat_scene s;
        splat_error err = {0};
        splat_status st = splat__init_from_points(&s, p, NULL, n, &err);
        splat_set_allocator(NULL);
        t_fail_after = -1;
        done = st == SPLAT_OK;
        if (!done) {
            T_CHECK(st == SPLAT_ERR_OUT_OF_HOST_MEMORY && strstr(err.msg, "out of host memory"),
                    "fault at allocation %d: %s: %s", at, splat_status_str(st), err.msg);
            T_CHECK(s.means == NULL && s.count == 0, "fault at allocation %d left a scene", at);
        } else {
            T_CHECK(at >= 11, "succeeded with only %d allocations", at); /* 5 for the scene, 7 for the tree */
        }
        splat_scene_free(&s);
    }
    T_CHECK(done, "never succeeded");
    free(p);
}

SPLAT_TEST(train_init_quats_random)
{
    /* gsplat's torch.rand(N, 4): every component in [0, 1), reproducible from the seed, another
     * seed another draw, and mean 1/2 and variance 1/12 per component (6 sigma). */
    uint32_t n = rand_u32(2000, 5000);
    uint64_t seed = splat__rng_u64(splat_test_rng());
    splat_scene a = {0}, b = {0};
    splat_error err = {0};
    T_OK(splat__scene_init(&a, n, &err), &err);
    T_OK(splat__scene_init(&b, n, &err), &err);
    a.count = b.count = n;
    splat__init_quats_random(&a, seed);
    splat__init_quats_random(&b, seed);
    T_CHECK(memcmp(a.quats, b.quats, sizeof(float) * 4 * n) == 0, "not reproducible");
    splat__init_quats_random(&b, seed ^ 1);
    T_CHECK(memcmp(a.quats, b.quats, sizeof(float) * 4 * n) != 0, "seed ignored");
    for (uint32_t c = 0; c < 4; c++) {
        double s = 0, s2 = 0;
        bool in = true;
        for (uint32_t i = 0; i < n; i++) {
            double q = a.quats[4 * i + c];
            in = in && q >= 0 && q < 1;
            s += q, s2 += q * q;
        }
        double mean = s / n, var = s2 / n - mean * mean;
        T_CHECK(in, "component %u outside [0, 1)", c);
        T_CHECK(fabs(mean - 0.5) < 6 * sqrt(1.0 / 12 / n), "component %u: mean %g", c, mean);
        T_CHECK(fabs(var - 1.0 / 12) < 6 * sqrt(1.0 / 180 / n), "component %u: variance %g", c, var);
    }
    splat_scene_free(&a);
    splat_scene_free(&b);
}
