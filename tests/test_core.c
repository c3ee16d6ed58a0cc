#include "harness.h"

SPLAT_TEST(core_status_names)
{
    for (int s = 0; s < SPLAT_STATUS_COUNT; s++) {
        const char *name = splat_status_str((splat_status)s);
        T_CHECK(strncmp(name, "SPLAT_", 6) == 0, "status %d has name %s", s, name);
    }
    T_CHECK(strcmp(splat_status_str(SPLAT_STATUS_COUNT), "SPLAT_STATUS_UNKNOWN") == 0);
}

SPLAT_TEST(core_error_keeps_first)
{
    splat_error err = {0};
    T_CHECK(splat__fail(&err, SPLAT_ERR_IO, "first %d", 1) == SPLAT_ERR_IO);
    T_CHECK(splat__fail(&err, SPLAT_ERR_FORMAT, "second") == SPLAT_ERR_FORMAT);
    T_CHECK(err.status == SPLAT_ERR_IO && strcmp(err.msg, "first 1") == 0, "got %s", err.msg);
    T_CHECK(splat__fail(NULL, SPLAT_ERR_LIMIT, "ignored") == SPLAT_ERR_LIMIT);
}


SPLAT_TEST(core_error_keeps_both_ends)
{
    /* A path longer than the message buffer (a name taken from a file can be) must leave both the
     * start (which file) and the end (what is wrong) in the message; one that fits stays whole. */
    const char *end = ": the image name has 7 fields";
    char path[3000];
    for (int k = 0; k < 2; k++) {
        uint64_t r = splat__rng_u64(splat_test_rng());
        size_t n = k == 0 ? 1 + r % 400 : 600 + r % (sizeof path - 601);
        for (size_t i = 0; i < n; i++) path[i] = (char)('a' + i % 26);
        path[0] = '/', path[n] = '\0';
        splat_error err = {0};
        splat__fail(&err, SPLAT_ERR_FORMAT, "%s: the image name has %d fields", path, 7);
        size_t len = strlen(err.msg);
        if (k == 0) {
            T_CHECK(len == n + strlen(end) && strncmp(err.msg, path, n) == 0, "%s", err.msg);
            continue;
        }
        T_CHECK(len == sizeof err.msg - 1, "length %zu", len);
        T_CHECK(strncmp(err.msg, path, 100) == 0, "start lost (path %zu bytes): %s", n, err.msg);
        T_CHECK(strcmp(err.msg + len - strlen(end), end) == 0, "end lost (path %zu bytes): %s", n, err.msg);
    }
}


SPLAT_TEST(core_scene_alloc_faults)
{
    /* Every allocation of scene init fails in turn: each must report out-of-memory and leak
     * nothing (ASan checks the leak part). */
    uint32_t cap = 1 + (uint32_t)(splat__rng_u64(splat_test_rng()) % 1000);
    for (int k = 0; k < 5; k++) {
        t_fail_after = k;
        splat_set_allocator(&t_failing_allocator);
        splat_scene s;
        splat_error err = {0};
        splat_status st = splat_scene_init(&s, cap, &err);
        splat_set_allocator(NULL);
        T_CHECK(st == SPLAT_ERR_OUT_OF_HOST_MEMORY, "fault at allocation %d gave %s", k, splat_status_str(st));
        T_CHECK(strstr(err.msg, "out of host memory") != NULL, "message: %s", err.msg);
        T_CHECK(s.means == NULL && s.sh == NULL);
    }
    splat_scene s;
    splat_error err = {0};
    T_OK(splat_scene_init(&s, cap, &err), &err);
    T_CHECK(s.capacity == cap && s.count == 0);
    s.count = cap;
    for (uint32_t i = 0; i < cap * 3; i++) s.means[i] = (float)i;
    T_OK(splat_scene_reserve(&s, cap * 2 + 7, &err), &err);
    T_CHECK(s.capacity == cap * 2 + 7);
    for (uint32_t i = 0; i < cap * 3; i++) T_CHECK(s.means[i] == (float)i);
    splat_scene_free(&s);
}

SPLAT_TEST(core_rng_moments)
{
    /* Known values: mean 1/2 and variance 1/12 for uniform, 0 and 1 for normal. */
    splat_rng *r = splat_test_rng();
    const int n = 200000;
    double su = 0, su2 = 0, sn = 0, sn2 = 0;
    for (int i = 0; i < n; i++) {
        double u = splat__rng_uniform(r), g = splat__rng_normal(r);
        T_REQUIRE(u >= 0 && u < 1);
        su += u, su2 += u * u, sn += g, sn2 += g * g;
    }
    double mu = su / n, vu = su2 / n - mu * mu, mn = sn / n, vn = sn2 / n - mn * mn;
    T_CHECK(fabs(mu - 0.5) < 0.005 && fabs(vu - 1.0 / 12) < 0.002, "uniform mean %g var %g", mu, vu);
    T_CHECK(fabs(mn) < 0.01 && fabs(vn - 1) < 0.02, "normal mean %g var %g", mn, vn);
}
