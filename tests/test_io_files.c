/* io: PLY, camera lists, checkpoints and atomic writing. */
#include <float.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "io/ply_util.h"
#include "io_fixtures.h"

static uint32_t rnd(uint32_t n) { return (uint32_t)(splat__rng_u64(splat_test_rng()) % n); }

static float rfloat(void)
{
    /* mostly ordinary values, sometimes the awkward ones a bit-exact format must keep */
    switch (rnd(16)) {
    case 0: return -0.0f;
    case 1: return 1e-40f; /* subnormal */
    case 2: return -FLT_MAX;
    case 3: return FLT_MIN;
    default: return (float)(splat__rng_normal(splat_test_rng()) * pow(10, t_uniform(-3, 3)));
    }
}

static void random_scene(splat_scene *s, uint32_t n, uint32_t degree)
{
    splat_error err = {0};
    if (splat_scene_init(s, n + rnd(5), &err) != SPLAT_OK) abort();
    s->count = n;
    s->sh_degree = degree;
    for (uint32_t i = 0; i < n * 3; i++) s->means[i] = rfloat(), s->log_scales[i] = rfloat();
    for (uint32_t i = 0; i < n * 4; i++) s->quats[i] = rfloat();
    for (uint32_t i = 0; i < n; i++) s->opacities[i] = rfloat();
    for (uint32_t i = 0; i < n * SPLAT_SH_COEFFS * 3; i++) s->sh[i] = rfloat();
}

static bool same_bits(float a, float b) { return memcmp(&a, &b, sizeof a) == 0; }

static uint32_t rest_count(uint32_t degree) { return 3 * ((degree + 1) * (degree + 1) - 1); }

/* The property names of the layout viewers read, in order (built here from the spec). */
static int expected_names(uint32_t degree, char names[][24])
{
    int n = 0;
    const char *head[] = {"x", "y", "z", "nx", "ny", "nz", "f_dc_0", "f_dc_1", "f_dc_2"};
    for (int i = 0; i < 9; i++) snprintf(names[n++], 24, "%s", head[i]);
    for (uint32_t j = 0; j < rest_count(degree); j++) snprintf(names[n++], 24, "f_rest_%u", j);
    const char *tail[] = {"opacity", "scale_0", "scale_1", "scale_2", "rot_0", "rot_1", "rot_2", "rot_3"};
    for (int i = 0; i < 8; i++) snprintf(names[n++], 24, "%s", tail[i]);
    return n;
}

/* The value property `p` of Gaussian i must hold, by the spec (f_rest channel-major). */
static float expected_value(const splat_scene *s, uint32_t i, int p, uint32_t degree)
{
    int R = (int)rest_count(degree) / 3;
    if (p < 3) return s->means[i * 3 + (uint32_t)p];
    if (p < 6) return 0.0f;
    if (p < 9) return s->sh[(i * 16 + 0) * 3 + (uint32_t)(p - 6)];
    if (p < 9 + 3 * R) {
        int j = p - 9, c = j / R, k = 1 + j % R;
        return s->sh[(i * 16 + (uint32_t)k) * 3 + (uint32_t)c];
    }
    p -= 9 + 3 * R;
    if (p == 0) return s->opacities[i];
    if (p < 4) return s->log_scales[i * 3 + (uint32_t)(p - 1)];
    return s->quats[i * 4 + (uint32_t)(p - 4)];
}

SPLAT_TEST(io_ply_round_trip)
{
    for (uint32_t degree = 0; degree <= 3; degree++) {
        splat_scene s, back;
        uint32_t n = degree == 0 ? rnd(3) : 1 + rnd(2500); /* sometimes empty; sometimes several chunks */
        random_scene(&s, n, degree);
        /* the antialiased mode, as a header comment, for odd degrees */
        s.rasterize_mode = degree % 2 ? SPLAT_RASTERIZE_ANTIALIASED : SPLAT_RASTERIZE_CLASSIC;
        const char *path = t_path("scene%u.ply", degree);
        splat_error err = {0};
        T_OK(splat__ply_write(path, &s, &err), &err);

        /* the file, read independently: header names in order, then little-endian floats */
        size_t size;
        uint8_t *bytes = t_read(path, &size);
        T_REQUIRE(bytes);
        char names[64][24];
        int np = expected_names(degree, names);
        tbuf want = {0};
        tb_printf(&want, "ply\nformat binary_little_endian 1.0\n%selement vertex %u\n",
                  s.rasterize_mode ? "comment splatc rasterize_mode antialiased\n" : "", n);
        for (int p = 0; p < np; p++) tb_printf(&want, "property float %s\n", names[p]);
        tb_printf(&want, "end_header\n");
        T_REQUIRE(size == want.n + (size_t)n * (size_t)np * 4, "file is %zu bytes", size);
        T_CHECK(memcmp(bytes, want.p, want.n) == 0, "header differs");
        for (uint32_t i = 0; i < n; i++)
            for (int p = 0; p < np; p++) {
                const uint8_t *b = bytes + want.n + ((size_t)i * (size_t)np + (size_t)p) * 4;
                uint32_t u = (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
                float v;
                memcpy(&v, &u, 4);
                T_REQUIRE(same_bits(v, expected_value(&s, i, p, degree)), "Gaussian %u property %s", i, names[p]);
            }
        tb_free(&want);
        free(bytes);

        T_OK(splat__ply_read(path, &back, NULL, &err), &err);
        T_REQUIRE(back.count == n && back.sh_degree == degree && back.rasterize_mode == s.rasterize_mode,
                  "count %u degree %u mode %d", back.count, back.sh_degree, (int)back.rasterize_mode);
        for (uint32_t i = 0; i < n; i++) {
            for (int k = 0; k < 3; k++) {
                T_REQUIRE(same_bits(back.means[i * 3 + k], s.means[i * 3 + k]));
                T_REQUIRE(same_bits(back.log_scales[i * 3 + k], s.log_scales[i * 3 + k]));
            }
            for (int k = 0; k < 4; k++) T_REQUIRE(same_bits(back.quats[i * 4 + k], s.quats[i * 4 + k]));
            T_REQUIRE(same_bits(back.opacities[i], s.opacities[i]));
            uint32_t used = (degree + 1) * (degree + 1);
            for (uint32_t k = 0; k < SPLAT_SH_COEFFS * 3; k++) {
                float want_sh = k / 3 < used ? s.sh[i * 48 + k] : 0.0f;
                T_REQUIRE(same_bits(back.sh[i * 48 + k], want_sh), "Gaussian %u SH %u", i, k);
            }
        }
        splat_scene_free(&back);
        splat_scene_free(&s);
    }
}

/* Writes a PLY the way other tools might: properties in a random order, some as double,
 * binary or ASCII. Returns the scene it holds. */
static void write_foreign_ply(const char *path, const splat_scene *s, bool ascii, bool normals)
{
    uint32_t degree = s->sh_degree;
    char names[64][24];
    int np = expected_names(degree, names), order[64], kept = 0;
    for (int p = 0; p < np; p++)
        if (normals || p < 3 || p >= 6) order[kept++] = p;
    for (int p = kept - 1; p > 0; p--) {
        int j = (int)rnd((uint32_t)p + 1), t = order[p];
        order[p] = order[j], order[j] = t;
    }
    bool dbl[64];
    tbuf b = {0};
    tb_printf(&b, "ply\r\nformat %s 1.0\ncomment written by a test\nelement vertex %u\n",
              ascii ? "ascii" : "binary_little_endian", s->count);
    for (int q = 0; q < kept; q++) {
        dbl[q] = rnd(3) == 0;
        tb_printf(&b, "property %s %s\n", dbl[q] ? (rnd(2) ? "double" : "float64") : (rnd(2) ? "float" : "float32"),
                  names[order[q]]);
    }
    tb_printf(&b, "element face 0\nproperty list uchar int vertex_indices\nend_header\n");
    for (uint32_t i = 0; i < s->count; i++) {
        for (int q = 0; q < kept; q++) {
            float v = expected_value(s, i, order[q], degree);
            if (ascii) tb_printf(&b, "%s%.9g", q ? " " : "", (double)v);
            else if (dbl[q]) tb_f64(&b, (double)v);
            else tb_f32(&b, v);
        }
        if (ascii) tb_printf(&b, "\n");
    }
    t_write(path, b.p, b.n);
    tb_free(&b);
}

SPLAT_TEST(io_ply_foreign_layouts)
{
    for (int trial = 0; trial < 8; trial++) {
        splat_scene s, back;
        random_scene(&s, rnd(200), rnd(4));
        bool ascii = trial % 2 == 1;
        const char *path = t_path("foreign%d.ply", trial);
        write_foreign_ply(path, &s, ascii, trial < 4);
        splat_error err = {0};
        T_OK(splat__ply_read(path, &back, NULL, &err), &err);
        T_REQUIRE(back.count == s.count && back.sh_degree == s.sh_degree);
        char names[64][24];
        int np = expected_names(s.sh_degree, names);
        splat_scene *views[2] = {&s, &back};
        for (uint32_t i = 0; i < s.count; i++)
            for (int p = 0; p < np; p++) {
                float a = expected_value(views[0], i, p, s.sh_degree), b = expected_value(views[1], i, p, s.sh_degree);
                /* -0.0 printed as "-0" reads back as -0.0, subnormals too: bit-exact either way */
                T_REQUIRE(same_bits(a, b), "%s: Gaussian %u %s: %.9g vs %.9g", ascii ? "ascii" : "binary", i,
                          names[p], (double)a, (double)b);
            }
        splat_scene_free(&back);
        splat_scene_free(&s);
    }
}

static void expect_ply_fail(const char *path, splat_status want, const char *what, int line)
{
    splat_error err = {0};
    splat_scene s;
    splat_status st = splat__ply_read(path, &s, NULL, &err);
    if (st != want || !t_has(err.msg, path) || !t_has(err.msg, what))
        splat_test_fail(__FILE__, line, "expected failure", "got %s: \"%s\"; wanted %s naming %s and \"%s\"",
                        splat_status_str(st), err.msg, splat_status_str(want), path, what);
    if (s.means || s.sh || s.count) splat_test_fail(__FILE__, line, "scene not empty after a failure", " ");
    if (st == SPLAT_OK) splat_scene_free(&s);
}
#define EXPECT_PLY_FAIL(path, want, what) expect_ply_fail(path, want, what, __LINE__)

static void write_text(const char *path, const char *s) { t_write(path, s, strlen(s)); }

SPLAT_TEST(io_ply_bad_input)
{
    splat_scene s;
    uint32_t n = 5 + rnd(50);
    random_scene(&s, n, 1 + rnd(3));
    const char *path = t_path("bad.ply");
    splat_error err = {0};
    T_OK(splat__ply_write(path, &s, &err), &err);
    size_t size;
    uint8_t *bytes = t_read(path, &size);
    const char *end = strstr((const char *)bytes, "end_header\n");
    T_REQUIRE(end);
    size_t header = (size_t)(end - (const char *)bytes) + 11, row = (size - header) / n;

    /* truncated anywhere in the data */
    t_write(path, bytes, header + rnd((uint32_t)(size - header)));
    EXPECT_PLY_FAIL(path, SPLAT_ERR_FORMAT, "truncated");
    /* truncated in the header, wherever: the header is cut short (a line cut in the middle once
     * read as a keyword or a property of its own: "f_rest_2 appears twice") */
    t_write(path, bytes, header - 1 - rnd((uint32_t)header - 1));
    EXPECT_PLY_FAIL(path, SPLAT_ERR_FORMAT, "ends without end_header (the file is cut short");
    t_write(path, bytes, header - 11);
    EXPECT_PLY_FAIL(path, SPLAT_ERR_FORMAT, "ends without end_header");
    /* a NUL byte anywhere in the header before end_header: said as such (it read as cut short) */
    uint8_t *nul = malloc(size);
    memcpy(nul, bytes, size);
    nul[1 + rnd((uint32_t)header - 12)] = 0;
    t_write(path, nul, size);
    EXPECT_PLY_FAIL(path, SPLAT_ERR_FORMAT, "holds a NUL byte");
    free(nul);
    /* a vertex count that lies, hugely: refused before allocating */
    tbuf b = {0};
    const char *after_count = strstr((const char *)bytes, "\nproperty");
    tb_printf(&b, "ply\nformat binary_little_endian 1.0\nelement vertex 4000000000");
    tb_bytes(&b, after_count, size - (size_t)(after_count - (const char *)bytes));
    t_write(path, b.p, b.n);
    EXPECT_PLY_FAIL(path, SPLAT_ERR_FORMAT, "truncated: 4000000000 vertices");
    tb_free(&b);
    /* a NaN in a random vertex */
    uint32_t bad = rnd(n);
    uint8_t *nan_bytes = malloc(size);
    memcpy(nan_bytes, bytes, size);
    float nanf_ = NAN;
    memcpy(nan_bytes + header + bad * row + 4 * (6 + rnd(3)), &nanf_, 4); /* an f_dc */
    t_write(path, nan_bytes, size);
    char what[64];
    snprintf(what, sizeof what, "vertex %u: f_dc_", bad);
    EXPECT_PLY_FAIL(path, SPLAT_ERR_NONFINITE, what);
    float inf = INFINITY;
    memcpy(nan_bytes, bytes, size);
    memcpy(nan_bytes + header + bad * row, &inf, 4);
    t_write(path, nan_bytes, size);
    snprintf(what, sizeof what, "vertex %u: x is not", bad);
    EXPECT_PLY_FAIL(path, SPLAT_ERR_NONFINITE, what);
    free(nan_bytes);

    /* header problems, each named */
    /* an unknown property is skipped (other trainers add their own), but what is missing still fails */
    write_text(path, "ply\nformat ascii 1.0\nelement vertex 1\nproperty float x\nproperty float foo\nend_header\n1 2\n");
    EXPECT_PLY_FAIL(path, SPLAT_ERR_FORMAT, "lacks property \"y\"");
    write_text(path, "ply\nformat ascii 1.0\nelement vertex 1\nproperty float x\nproperty float f_rest_45\nend_header\n1 2\n");
    EXPECT_PLY_FAIL(path, SPLAT_ERR_UNSUPPORTED, "f_rest_45\": SH above degree 3");
    /* nine f_rest (degree 1's count) with one missing in the middle: the gap named, the SH not shifted */
    {
        uint32_t gap = rnd(9);
        tbuf h = {0};
        tb_printf(&h, "ply\nformat ascii 1.0\nelement vertex 1\n");
        const char *base[] = {"x", "y", "z", "f_dc_0", "f_dc_1", "f_dc_2", "opacity", "scale_0", "scale_1", "scale_2",
                              "rot_0", "rot_1", "rot_2", "rot_3"};
        for (size_t k = 0; k < sizeof base / sizeof *base; k++) tb_printf(&h, "property float %s\n", base[k]);
        for (uint32_t k = 0; k <= 9; k++)
            if (k != gap) tb_printf(&h, "property float f_rest_%u\n", k);
        tb_printf(&h, "end_header\n1 2 3 4 5 6 0.5 7 8 9 1 0 0 0 1 2 3 4 5 6 7 8 9\n");
        tb_printf(&h, "%c", 0);
        write_text(path, (const char *)h.p);
        tb_free(&h);
        char want[40];
        snprintf(want, sizeof want, "lacks property \"f_rest_%u\"", gap);
        EXPECT_PLY_FAIL(path, SPLAT_ERR_FORMAT, want);
    }
    write_text(path, "ply\nformat ascii 1.0\nelement vertex 1\nproperty float x\nproperty list uchar int idx\nend_header\n1 2\n");
    EXPECT_PLY_FAIL(path, SPLAT_ERR_UNSUPPORTED, "\"idx\" is a list");
    write_text(path, "ply\nformat ascii 1.0\nelement vertex 1\nproperty float x\nproperty float y\nproperty float z\n"
                     "property float f_dc_0\nproperty float f_dc_1\nproperty float f_dc_2\nproperty float scale_0\n"
                     "property float scale_1\nproperty float scale_2\nproperty float rot_0\nproperty float rot_1\n"
                     "property float rot_2\nproperty float rot_3\nend_header\n1 2 3 4 5 6 7 8 9 1 0 0 0\n");
    EXPECT_PLY_FAIL(path, SPLAT_ERR_FORMAT, "lacks property \"opacity\"");
    write_text(path, "ply\nformat ascii 1.0\nelement vertex 1\nproperty float x\nproperty float y\nproperty float z\n"
                     "property float f_dc_0\nproperty float f_dc_1\nproperty float f_dc_2\nproperty float opacity\n"
                     "property float scale_0\nproperty float scale_1\nproperty float scale_2\nproperty float rot_0\n"
                     "property float rot_1\nproperty float rot_2\nproperty float rot_3\nend_header\n"
                     "1 2 3 4 5 6 0.5 7 8 nan 1 0 0 0\n");
    EXPECT_PLY_FAIL(path, SPLAT_ERR_NONFINITE, "vertex 0: scale_2 is not");
    write_text(path, "ply\nformat ascii 1.0\nelement vertex 2\nproperty float x\nproperty float y\nproperty float z\n"
                     "property float f_dc_0\nproperty float f_dc_1\nproperty float f_dc_2\nproperty float opacity\n"
                     "property float scale_0\nproperty float scale_1\nproperty float scale_2\nproperty float rot_0\n"
                     "property float rot_1\nproperty float rot_2\nproperty float rot_3\nend_header\n"
                     "1 2 3 4 5 6 0.5 7 8 9 1 0 0 0\n1 2 3 4 5 6 0.5 7 8 9 1 0 0 0\n");
    splat_scene ok;
    T_OK(splat__ply_read(path, &ok, NULL, &err), &err); /* the control: this one is fine */
    T_CHECK(ok.count == 2 && ok.sh_degree == 0 && ok.log_scales[5] == 9.0f);
    splat_scene_free(&ok);
    /* an opacity of exactly 0 or 1, as splat-transform writes its logit (-inf, inf): read as the
     * nearest finite one; an infinite position is still refused */
    write_text(path, "ply\nformat ascii 1.0\nelement vertex 2\nproperty float x\nproperty float y\nproperty float z\n"
                     "property float f_dc_0\nproperty float f_dc_1\nproperty float f_dc_2\nproperty float opacity\n"
                     "property float scale_0\nproperty float scale_1\nproperty float scale_2\nproperty float rot_0\n"
                     "property float rot_1\nproperty float rot_2\nproperty float rot_3\nend_header\n"
                     "1 2 3 4 5 6 inf 7 8 9 1 0 0 0\n1 2 3 4 5 6 -inf 7 8 9 1 0 0 0\n");
    T_OK(splat__ply_read(path, &ok, NULL, &err), &err);
    T_CHECK(ok.opacities[0] > 13 && ok.opacities[0] < 14 && ok.opacities[1] < -13 && ok.opacities[1] > -14,
            "%g %g", ok.opacities[0], ok.opacities[1]);
    T_CHECK(ok.count == 2 && ok.sh_degree == 0 && ok.log_scales[5] == 9.0f);
    splat_scene_free(&ok);
    write_text(path, "ply\nformat ascii 1.0\nelement vertex 2\nproperty float x\nproperty float y\nproperty float z\n"
                     "property float f_dc_0\nproperty float f_dc_1\nproperty float f_dc_2\nproperty float opacity\n"
                     "property float scale_0\nproperty float scale_1\nproperty float scale_2\nproperty float rot_0\n"
                     "property float rot_1\nproperty float rot_2\nproperty float rot_3\nend_header\n"
                     "1 2 3 4 5 6 0.5 7 8 9 1 0 0 0\n1 2 3 4 5 6 0.5 7 8 9 1 0 0\n");
    EXPECT_PLY_FAIL(path, SPLAT_ERR_FORMAT, "truncated");
    /* a rasterize mode splatc does not know (a later version's): refused, not rendered as another */
    write_text(path, "ply\nformat ascii 1.0\ncomment splatc rasterize_mode mip\nelement vertex 1\nproperty float x\n"
                     "end_header\n1\n");
    EXPECT_PLY_FAIL(path, SPLAT_ERR_UNSUPPORTED, "unknown rasterize mode \"mip\"");
    write_text(path, "ply\nformat ascii 1.0\ncomment splatc rasterize_mode\nelement vertex 1\nproperty float x\n"
                     "end_header\n1\n");
    EXPECT_PLY_FAIL(path, SPLAT_ERR_UNSUPPORTED, "unknown rasterize mode \"\"");
    write_text(path, "ply\nformat ascii 1.0\nelement vertex 1\nproperty float f_rest_0\nend_header\n1\n");
    EXPECT_PLY_FAIL(path, SPLAT_ERR_FORMAT, "1 f_rest properties");
    write_text(path, "ply\nformat binary_big_endian 1.0\nelement vertex 1\nproperty float x\nend_header\n");
    EXPECT_PLY_FAIL(path, SPLAT_ERR_UNSUPPORTED, "binary_big_endian");
    write_text(path, "ply\nformat ascii 1.0\nelement vertex 1\nproperty uchar x\nend_header\n");
    EXPECT_PLY_FAIL(path, SPLAT_ERR_UNSUPPORTED, "type uchar");
    write_text(path, "solid cube\nfacet normal 0 0 1\n");
    EXPECT_PLY_FAIL(path, SPLAT_ERR_FORMAT, "not a PLY file");
    EXPECT_PLY_FAIL(t_path("absent.ply"), SPLAT_ERR_IO, "cannot open");
    free(bytes);
    splat_scene_free(&s);
}

/* The PLY value reader of both byte orders (ply_header.c; big-endian is what point clouds from
 * Open3D and others use): each type against known bytes, then fresh random values encoded here by
 * shifts, most significant byte first for big-endian. */
SPLAT_TEST(io_ply_value_byte_order)
{
    static const struct {
        uint8_t type, be[8];
        double want;
    } known[] = {
        {SPLAT_PLY_I8, {0xfe}, -2},
        {SPLAT_PLY_U8, {0xfe}, 254},
        {SPLAT_PLY_I16, {0xfe, 0xdc}, -292},
        {SPLAT_PLY_U16, {0xfe, 0xdc}, 65244},
        {SPLAT_PLY_I32, {0xfe, 0xdc, 0xba, 0x98}, -19088744},
        {SPLAT_PLY_U32, {0xfe, 0xdc, 0xba, 0x98}, 4275878552.0},
        {SPLAT_PLY_F32, {0x40, 0x49, 0x0f, 0xdb}, (double)3.14159274101257324f},
        {SPLAT_PLY_F64, {0x40, 0x09, 0x21, 0xfb, 0x54, 0x44, 0x2d, 0x18}, 3.141592653589793},
    };
    for (size_t t = 0; t < SPLAT_COUNTOF(known); t++) {
        uint32_t n = splat__ply_type_size(known[t].type);
        uint8_t le[8];
        for (uint32_t k = 0; k < n; k++) le[k] = known[t].be[n - 1 - k];
        double be_v = splat__ply_value(known[t].be, known[t].type, true), le_v = splat__ply_value(le, known[t].type, false);
        T_CHECK(be_v == known[t].want && le_v == known[t].want, "type %u: big-endian %.17g, little-endian %.17g, want %.17g",
                known[t].type, be_v, le_v, known[t].want);
    }
    for (int round = 0; round < 200; round++) {
        uint8_t type = (uint8_t)(SPLAT_PLY_I8 + rnd(8));
        uint32_t n = splat__ply_type_size(type);
        uint64_t bits = splat__rng_u64(splat_test_rng());
        double want;
        if (type == SPLAT_PLY_F32) {
            float f = rfloat();
            uint32_t u;
            memcpy(&u, &f, 4);
            bits = u, want = f;
        } else if (type == SPLAT_PLY_F64) {
            double d = splat__rng_normal(splat_test_rng()) * pow(10, t_uniform(-300, 300));
            memcpy(&bits, &d, 8);
            want = d;
        } else {
            bits &= n == 8 ? ~0ull : (1ull << (8 * n)) - 1;
            bool is_signed = type == SPLAT_PLY_I8 || type == SPLAT_PLY_I16 || type == SPLAT_PLY_I32;
            want = is_signed && bits >> (8 * n - 1) ? (double)bits - ldexp(1, 8 * (int)n) : (double)bits;
        }
        uint8_t be[8], le[8];
        for (uint32_t k = 0; k < n; k++) be[k] = (uint8_t)(bits >> (8 * (n - 1 - k))), le[k] = (uint8_t)(bits >> (8 * k));
        double be_v = splat__ply_value(be, type, true), le_v = splat__ply_value(le, type, false);
        T_CHECK(memcmp(&be_v, &want, 8) == 0 && memcmp(&le_v, &want, 8) == 0,
                "type %u, bits %#llx: big-endian %.17g, little-endian %.17g, want %.17g", type, (unsigned long long)bits,
                be_v, le_v, want);
        if (memcmp(&be_v, &want, 8) != 0 || memcmp(&le_v, &want, 8) != 0) break;
    }
}

SPLAT_TEST(io_ply_write_is_atomic)
{
    splat_scene a, b;
    splat_error err = {0};
    uint32_t n = 2000 + rnd(1000);
    random_scene(&a, n, 3);
    random_scene(&b, n, 3);
    /* no such folder: an error naming the path, and no file anywhere */
    const char *nodir = t_path("missing/dir/out.ply");
    T_CHECK(splat__ply_write(nodir, &a, &err) == SPLAT_ERR_IO && t_has(err.msg, nodir), "%s", err.msg);
    T_CHECK(!t_exists(t_path("missing")));

    /* an existing file survives a write that fails halfway (a NaN past the first chunk) */
    t_mkdir(t_path("atomic"));
    const char *path = t_path("atomic/keep.ply"), *dir = t_path("atomic");
    T_OK(splat__ply_write(path, &a, &err), &err);
    size_t n0, n1;
    uint8_t *before = t_read(path, &n0);
    int entries = t_count_entries(dir);
    b.quats[(n - 1 - rnd(100)) * 4 + rnd(4)] = NAN;
    err = (splat_error){0};
    T_CHECK(splat__ply_write(path, &b, &err) == SPLAT_ERR_NONFINITE && t_has(err.msg, path) &&
            t_has(err.msg, "rotation"), "%s", err.msg);
    uint8_t *after = t_read(path, &n1);
    T_CHECK(n0 == n1 && memcmp(before, after, n0) == 0, "the old file changed");
    T_CHECK(t_count_entries(dir) == entries, "a temporary file was left behind");
    free(before), free(after);

    /* a successful write replaces it */
    b.quats[0] = 1;
    for (uint32_t i = 0; i < n * 4; i++)
        if (isnan(b.quats[i])) b.quats[i] = 0.5f;
    T_OK(splat__ply_write(path, &b, &err), &err);
    splat_scene back;
    T_OK(splat__ply_read(path, &back, NULL, &err), &err);
    T_CHECK(back.count == n && same_bits(back.quats[0], 1.0f));
    T_CHECK(t_count_entries(dir) == entries);
    splat_scene_free(&back);
    /* readable by all, as a file written with open(2) under the usual umask would be: mkstemp's
     * temporary is 0600, and a scene a web server cannot read is no export */
    struct stat sb;
    T_CHECK(stat(path, &sb) == 0 && (sb.st_mode & 0777) == 0644, "mode %o", (unsigned)(sb.st_mode & 0777));

    /* the helpers directly: abort leaves nothing */
    splat_atomic_file f;
    T_OK(splat__atomic_open(&f, t_path("atomic/never.bin"), &err), &err);
    fputs("partial", (FILE *)f.fp);
    splat__atomic_abort(&f);
    T_CHECK(!t_exists(t_path("atomic/never.bin")) && t_count_entries(dir) == entries);
    splat_scene_free(&a);
    splat_scene_free(&b);
}

/* ------------------------------------------------------------------------ cameras */

static void random_camera(splat_camera *c)
{
    double q[4], n = 0;
    for (int k = 0; k < 4; k++) q[k] = splat__rng_normal(splat_test_rng()), n += q[k] * q[k];
    n = sqrt(n);
    double w = q[0] / n, x = q[1] / n, y = q[2] / n, z = q[3] / n;
    double R[9] = {1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y),
                   2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x),
                   2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)};
    for (int k = 0; k < 9; k++) c->R[k] = (float)R[k];
    for (int k = 0; k < 3; k++) c->t[k] = (float)t_uniform(-10, 10);
    c->width = 1 + rnd(2000), c->height = 1 + rnd(2000);
    c->fx = (float)t_uniform(100, 2000), c->fy = (float)t_uniform(100, 2000);
    c->cx = (float)t_uniform(0, c->width), c->cy = (float)t_uniform(0, c->height);
}

SPLAT_TEST(io_cameras_round_trip)
{
    uint32_t n = 1 + rnd(19); /* the reader refuses an empty list (io_cameras_bad_input) */
    splat_camera cams[20];
    char name_buf[20][32];
    const char *names[20];
    for (uint32_t i = 0; i < n; i++) {
        random_camera(&cams[i]);
        snprintf(name_buf[i], sizeof name_buf[i], i % 3 == 0 ? "q\"uote\\s\n\tx%u.png" : "view_%u.jpg", i);
        names[i] = name_buf[i];
    }
    const char *path = t_path("cams.json");
    splat_error err = {0};
    T_OK(splat__cameras_write(path, cams, names, n, &err), &err);
    splat_camera *back;
    char **back_names;
    uint32_t m;
    T_OK(splat__cameras_read(path, &back, &back_names, &m, &err), &err);
    T_REQUIRE(m == n);
    for (uint32_t i = 0; i < n; i++) {
        T_CHECK(memcmp(&back[i], &cams[i], sizeof cams[i]) == 0, "camera %u differs", i);
        T_CHECK(strcmp(back_names[i], names[i]) == 0, "name %u: %s", i, back_names[i]);
        splat__free(back_names[i]);
    }
    splat__free(back_names);
    splat__free(back);
    /* no names given, none asked for */
    T_OK(splat__cameras_write(path, cams, NULL, n, &err), &err);
    T_OK(splat__cameras_read(path, &back, NULL, &m, &err), &err);
    T_CHECK(m == n);
    splat__free(back);
    /* a non-finite camera is refused and the file kept */
    if (n > 0) {
        cams[n - 1].t[1] = NAN;
        T_CHECK(splat__cameras_write(path, cams, NULL, n, &err) == SPLAT_ERR_NONFINITE && t_has(err.msg, path));
        T_OK(splat__cameras_read(path, &back, NULL, &m, &err), &err);
        splat__free(back);
    }
}

SPLAT_TEST(io_cameras_3dgs_form)
{
    /* cameras.json of the original code: camera-to-world rotation (rows) and the centre */
    uint32_t n = 1 + rnd(6);
    double rot[6][9], pos[6][3];
    tbuf b = {0};
    tb_printf(&b, "[");
    for (uint32_t i = 0; i < n; i++) {
        splat_camera c;
        random_camera(&c);
        for (int k = 0; k < 9; k++) rot[i][k] = c.R[k];
        for (int k = 0; k < 3; k++) pos[i][k] = t_uniform(-5, 5);
        tb_printf(&b, "%s{\"id\": %u, \"img_name\": \"im%u\", \"width\": %u, \"height\": %u, \"position\": [%.17g, "
                  "%.17g, %.17g], \"rotation\": [[%.17g, %.17g, %.17g], [%.17g, %.17g, %.17g], [%.17g, %.17g, %.17g]], "
                  "\"fy\": 500.5, \"fx\": 400.25}", i ? ", " : "", i, i, 100 + i, 51 + i, pos[i][0], pos[i][1],
                  pos[i][2], rot[i][0], rot[i][1], rot[i][2], rot[i][3], rot[i][4], rot[i][5], rot[i][6], rot[i][7],
                  rot[i][8]);
    }
    tb_printf(&b, "]");
    const char *path = t_path("3dgs_cameras.json");
    t_write(path, b.p, b.n);
    tb_free(&b);
    splat_camera *cams;
    char **names;
    uint32_t m;
    splat_error err = {0};
    T_OK(splat__cameras_read(path, &cams, &names, &m, &err), &err);
    T_REQUIRE(m == n);
    for (uint32_t i = 0; i < n; i++) {
        const splat_camera *c = &cams[i];
        char want[16];
        snprintf(want, sizeof want, "im%u", i);
        T_CHECK(strcmp(names[i], want) == 0);
        T_CHECK(c->width == 100 + i && c->height == 51 + i && c->fx == 400.25f && c->fy == 500.5f);
        T_CHECK(c->cx == 0.5f * (float)(100 + i) && c->cy == 0.5f * (float)(51 + i));
        /* R is the transpose of the rotation; the centre maps to the camera origin; the
         * camera's forward axis (third column of rotation) maps to +z */
        for (int r = 0; r < 3; r++)
            for (int k = 0; k < 3; k++) T_CHECK(fabs(c->R[r * 3 + k] - rot[i][k * 3 + r]) < 1e-7);
        for (int r = 0; r < 3; r++) {
            double centre = c->R[r * 3] * pos[i][0] + c->R[r * 3 + 1] * pos[i][1] + c->R[r * 3 + 2] * pos[i][2] + c->t[r];
            double fwd = c->R[r * 3] * rot[i][2] + c->R[r * 3 + 1] * rot[i][5] + c->R[r * 3 + 2] * rot[i][8];
            T_CHECK(fabs(centre) < 1e-5, "centre maps to %g", centre);
            T_CHECK(fabs(fwd - (r == 2)) < 1e-6);
        }
        splat__free(names[i]);
    }
    splat__free(names);
    splat__free(cams);
}

/* The 3DGS form as splat__cameras_write_3dgs writes it (what `splatc train` leaves as
 * OUT/cameras.json): it reads back bit for bit, including cameras that look straight at the origin
 * (translation components of ~1e-8 that the position alone loses), and it is the 3DGS form to a
 * reader that knows only that form: the rotation is camera-to-world by rows and the position is
 * the camera's centre. A "t" that an edit of the position left behind is refused. */
SPLAT_TEST(io_cameras_3dgs_write)
{
    uint32_t n = 1 + rnd(12);
    splat_camera cams[12];
    char name_buf[12][32];
    const char *names[12];
    for (uint32_t i = 0; i < n; i++) {
        random_camera(&cams[i]);
        if (i % 2) {
            /* a camera at distance d looking at the origin: t = R c is (0, 0, d) up to float rounding */
            double c[3], d = t_uniform(1, 10), f[3];
            for (int k = 0; k < 3; k++) f[k] = cams[i].R[6 + k];
            for (int k = 0; k < 3; k++) c[k] = -d * f[k];
            for (int a = 0; a < 3; a++)
                cams[i].t[a] = (float)-(cams[i].R[a * 3] * c[0] + cams[i].R[a * 3 + 1] * c[1] + cams[i].R[a * 3 + 2] * c[2]);
        }
        snprintf(name_buf[i], sizeof name_buf[i], i % 3 == 0 ? "dir/q\"uote%u" : "view_%u", i);
        names[i] = name_buf[i];
    }
    const char *path = t_path("3dgs_written.json");
    splat_error err = {0};
    T_OK(splat__cameras_write_3dgs(path, cams, names, n, &err), &err);
    splat_camera *back;
    char **back_names;
    uint32_t m;
    T_OK(splat__cameras_read(path, &back, &back_names, &m, &err), &err);
    T_REQUIRE(m == n);
    for (uint32_t i = 0; i < n; i++) {
        T_CHECK(memcmp(&back[i], &cams[i], sizeof cams[i]) == 0, "camera %u differs: t %.9g %.9g %.9g, was %.9g %.9g %.9g", i,
                back[i].t[0], back[i].t[1], back[i].t[2], cams[i].t[0], cams[i].t[1], cams[i].t[2]);
        T_CHECK(strcmp(back_names[i], names[i]) == 0, "name %u: %s", i, back_names[i]);
        splat__free(back_names[i]);
    }
    splat__free(back_names);
    splat__free(back);

    /* what a 3DGS reader sees: keys of the form, ids in order, rotation = R^T, position = -R^T t */
    size_t len;
    char *text = (char *)t_read(path, &len);
    T_REQUIRE(text);
    char *z = realloc(text, len + 1);
    T_REQUIRE(z);
    z[len] = '\0';
    cJSON *root = cJSON_Parse(z);
    T_REQUIRE(cJSON_IsArray(root) && (uint32_t)cJSON_GetArraySize(root) == n);
    for (uint32_t i = 0; i < n; i++) {
        const cJSON *o = cJSON_GetArrayItem(root, (int)i), *rot = cJSON_GetObjectItem(o, "rotation"),
                    *pos = cJSON_GetObjectItem(o, "position");
        const splat_camera *c = &cams[i];
        T_CHECK(cJSON_GetObjectItem(o, "id")->valuedouble == i && cJSON_GetObjectItem(o, "width")->valuedouble == c->width &&
                cJSON_GetObjectItem(o, "height")->valuedouble == c->height &&
                (float)cJSON_GetObjectItem(o, "fx")->valuedouble == c->fx &&
                (float)cJSON_GetObjectItem(o, "fy")->valuedouble == c->fy &&
                strcmp(cJSON_GetObjectItem(o, "img_name")->valuestring, names[i]) == 0, "camera %u", i);
        T_REQUIRE(cJSON_GetArraySize(rot) == 3 && cJSON_GetArraySize(pos) == 3);
        for (int a = 0; a < 3; a++) {
            const cJSON *row = cJSON_GetArrayItem(rot, a);
            T_REQUIRE(cJSON_GetArraySize(row) == 3);
            double centre = 0;
            for (int b = 0; b < 3; b++) {
                T_CHECK((float)cJSON_GetArrayItem(row, b)->valuedouble == c->R[b * 3 + a]);
                centre -= (double)c->R[b * 3 + a] * c->t[b];
            }
            T_CHECK(fabs(cJSON_GetArrayItem(pos, a)->valuedouble - centre) < 1e-5 * (1 + fabs(centre)),
                    "camera %u: position %g, centre %g", i, cJSON_GetArrayItem(pos, a)->valuedouble, centre);
        }
    }

    /* without splatc's keys the form still reads (principal point at the centre, t from the position) */
    cJSON *o0 = cJSON_GetArrayItem(root, 0);
    cJSON_DeleteItemFromObject(o0, "cx");
    cJSON_DeleteItemFromObject(o0, "cy");
    cJSON_DeleteItemFromObject(o0, "t");
    char *plain = cJSON_Print(root);
    T_REQUIRE(plain && t_write(path, plain, strlen(plain)));
    cJSON_free(plain);
    T_OK(splat__cameras_read(path, &back, NULL, &m, &err), &err);
    T_CHECK(back[0].cx == 0.5f * cams[0].width && back[0].cy == 0.5f * cams[0].height);
    for (int a = 0; a < 3; a++) T_CHECK(fabsf(back[0].t[a] - cams[0].t[a]) < 1e-5f * (1 + fabsf(cams[0].t[a])));
    splat__free(back);

    /* a position edited with "t" left as it was */
    cJSON *o1 = cJSON_GetArrayItem(root, (int)n - 1), *p1 = cJSON_GetArrayItem(cJSON_GetObjectItem(o1, "position"), rnd(3));
    cJSON_SetNumberValue(p1, p1->valuedouble + 0.5);
    if (!cJSON_HasObjectItem(o1, "t")) cJSON_AddItemToObject(o1, "t", cJSON_CreateFloatArray(cams[n - 1].t, 3));
    plain = cJSON_Print(root);
    T_REQUIRE(plain && t_write(path, plain, strlen(plain)));
    cJSON_free(plain);
    err = (splat_error){0};
    T_CHECK(splat__cameras_read(path, &back, NULL, &m, &err) == SPLAT_ERR_FORMAT && t_has(err.msg, path) &&
            t_has(err.msg, "\"t\" does not match \"position\""), "%s", err.msg);
    cJSON_Delete(root);
    free(z);

    /* the writer refuses what it cannot write, and keeps the old file */
    cams[rnd(n)].R[rnd(9)] = INFINITY;
    T_CHECK(splat__cameras_write_3dgs(path, cams, names, n, &err) == SPLAT_ERR_NONFINITE && t_has(err.msg, path));
}

SPLAT_TEST(io_cameras_bad_input)
{
    const char *path = t_path("bad_cams.json");
    splat_camera *cams;
    uint32_t n;
    struct {
        const char *text, *what;
        splat_status st;
    } cases[] = {
        {"[\n  {\"name\": \"a\",\n   \"width\": 10 \"height\": 10}\n]", "JSON syntax error at line 3", SPLAT_ERR_FORMAT},
        /* what Python's json module writes for a non-finite float, named */
        {"[\n  {\"name\": \"a\",\n   \"fx\": NaN}\n]", "line 3, column 10: NaN is not a JSON number", SPLAT_ERR_FORMAT},
        {"[{\"fx\": 1, \"fy\":   -Infinity }]", "-Infinity is not a JSON number", SPLAT_ERR_FORMAT},
        /* the parser's nesting limit, said as such (a syntax error otherwise) */
        {NULL, "JSON nested more than 1000 deep", SPLAT_ERR_FORMAT},
        {"{\"name\": \"a\"}", "expected a JSON list", SPLAT_ERR_FORMAT},
        {" [ ] ", "the list of cameras is empty", SPLAT_ERR_FORMAT},
        {"[{\"name\": \"a\", \"width\": 10, \"height\": 10, \"fy\": 1, \"cx\": 1, \"cy\": 1, \"R\": [1,0,0,0,1,0,0,0,1], "
         "\"t\": [0,0,0]}]", "camera 0: \"fx\" is missing", SPLAT_ERR_FORMAT},
        {"[{\"width\": 10.5, \"height\": 10, \"fx\": 1, \"fy\": 1}]", "\"width\" must be a whole number",
         SPLAT_ERR_FORMAT},
        {"[{\"width\": 10, \"height\": 10, \"fx\": 1, \"fy\": 1, \"cx\": 1, \"cy\": 1, \"R\": [1,0,0,0,1,0,0,0], "
         "\"t\": [0,0,0]}]", "\"R\" must be a list of 9", SPLAT_ERR_FORMAT},
        {"[{\"width\": 10, \"height\": 10, \"fx\": 1, \"fy\": 1, \"cx\": 1, \"cy\": 1, \"R\": [2,0,0,0,1,0,0,0,1], "
         "\"t\": [0,0,0]}]", "not a rotation", SPLAT_ERR_FORMAT},
        /* orthonormal, but a mirror (determinant -1) */
        {"[{\"width\": 10, \"height\": 10, \"fx\": 1, \"fy\": 1, \"cx\": 1, \"cy\": 1, \"R\": [1,0,0,0,1,0,0,0,-1], "
         "\"t\": [0,0,0]}]", "not a rotation", SPLAT_ERR_FORMAT},
        {"[{\"width\": 10, \"height\": 10, \"fx\": 1e999, \"fy\": 1}]", "\"fx\" is not a finite", SPLAT_ERR_NONFINITE},
        /* positive as a double, 0 as a float (the fuzz_cameras contract check, on this input) */
        {"[{\"width\": 4, \"height\": 4, \"fx\": 1e-300, \"fy\": 1, \"cx\": 2, \"cy\": 2, \"R\": [1,0,0,0,1,0,0,0,1], "
         "\"t\": [0,0,0]}]", "focal lengths must be positive floats", SPLAT_ERR_FORMAT},
        {"[{\"width\": 10, \"height\": 10, \"fx\": 1, \"fy\": 1}]", "neither \"rotation\"", SPLAT_ERR_FORMAT},
    };
    char deep[2 * 1100 + 1];
    for (int k = 0; k < 1100; k++) deep[k] = '[', deep[2 * 1100 - 1 - k] = ']';
    deep[2 * 1100] = '\0';
    for (size_t k = 0; k < SPLAT_COUNTOF(cases); k++) {
        write_text(path, cases[k].text ? cases[k].text : deep);
        splat_error err = {0};
        splat_status st = splat__cameras_read(path, &cams, NULL, &n, &err);
        T_CHECK(st == cases[k].st && t_has(err.msg, path) && t_has(err.msg, cases[k].what), "case %zu: %s: %s", k,
                splat_status_str(st), err.msg);
        T_CHECK(cams == NULL && n == 0);
    }
}

/* ---------------------------------------------------------------------- checkpoints */

SPLAT_TEST(io_ckpt_round_trip)
{
    uint32_t n = rnd(8);
    splat_section secs[8];
    for (uint32_t i = 0; i < n; i++) {
        memset(secs[i].name, 0, sizeof secs[i].name);
        snprintf(secs[i].name, sizeof secs[i].name, i == 0 ? "a_name_of_exactly_31_characters" : "section %u", i);
        secs[i].size = rnd(4) == 0 ? 0 : rnd(100000);
        secs[i].data = malloc(secs[i].size + 1);
        for (uint64_t k = 0; k < secs[i].size; k++) ((uint8_t *)secs[i].data)[k] = (uint8_t)rnd(256);
    }
    const char *path = t_path("train.ckpt");
    splat_error err = {0};
    T_OK(splat__ckpt_write(path, secs, n, &err), &err);
    splat_section *back;
    uint32_t m;
    T_OK(splat__ckpt_read(path, &back, &m, &err), &err);
    T_REQUIRE(m == n);
    for (uint32_t i = 0; i < n; i++) {
        T_CHECK(strcmp(back[i].name, secs[i].name) == 0 && back[i].size == secs[i].size);
        T_CHECK(back[i].size == 0 || memcmp(back[i].data, secs[i].data, back[i].size) == 0, "section %u data", i);
        const splat_section *found = splat__ckpt_find(back, m, secs[i].name);
        T_CHECK(found == &back[i]);
    }
    T_CHECK(splat__ckpt_find(back, m, "nothing") == NULL);
    splat__ckpt_free(back, m);
    /* names that cannot be stored, or appear twice */
    if (n >= 2) {
        memcpy(secs[1].name, secs[0].name, sizeof secs[0].name);
        T_CHECK(splat__ckpt_write(path, secs, n, &err) == SPLAT_ERR_INVALID_ARG && t_has(err.msg, "twice"));
        memset(secs[1].name, 'x', sizeof secs[1].name);
        err = (splat_error){0};
        T_CHECK(splat__ckpt_write(path, secs, n, &err) == SPLAT_ERR_INVALID_ARG && t_has(err.msg, path));
    }
    for (uint32_t i = 0; i < n; i++) free(secs[i].data);
}

static void expect_ckpt_fail(const char *path, splat_status want, const char *what, int line)
{
    splat_error err = {0};
    splat_section *s;
    uint32_t n;
    splat_status st = splat__ckpt_read(path, &s, &n, &err);
    if (st != want || !t_has(err.msg, path) || (what && !t_has(err.msg, what)))
        splat_test_fail(__FILE__, line, "expected failure", "got %s: \"%s\"; wanted %s naming %s and \"%s\"",
                        splat_status_str(st), err.msg, splat_status_str(want), path, what ? what : "");
    if (s || n) splat_test_fail(__FILE__, line, "sections returned after a failure", " ");
    if (st == SPLAT_OK) splat__ckpt_free(s, n);
}
#define EXPECT_CKPT_FAIL(path, want, what) expect_ckpt_fail(path, want, what, __LINE__)

SPLAT_TEST(io_ckpt_corrupt)
{
    uint8_t a[300], b[17];
    for (size_t k = 0; k < sizeof a; k++) a[k] = (uint8_t)rnd(256);
    for (size_t k = 0; k < sizeof b; k++) b[k] = (uint8_t)rnd(256);
    splat_section secs[2] = {{"params", a, sizeof a}, {"adam", b, sizeof b}};
    const char *path = t_path("c.ckpt"), *bad = t_path("bad.ckpt");
    splat_error err = {0};
    T_OK(splat__ckpt_write(path, secs, 2, &err), &err);
    size_t size;
    uint8_t *bytes = t_read(path, &size);
    T_REQUIRE(size == 16 + 2 * 44 + sizeof a + sizeof b);
    /* a flipped byte in the data: checksum error naming the section */
    size_t at = 16 + 44 + rnd(sizeof a);
    bytes[at] ^= (uint8_t)(1 + rnd(255));
    t_write(bad, bytes, size);
    EXPECT_CKPT_FAIL(bad, SPLAT_ERR_FORMAT, "checksum mismatch in section \"params\"");
    /* every single flipped byte anywhere is caught */
    uint8_t *clean = t_read(path, &size);
    for (size_t k = 0; k < size; k++) {
        memcpy(bytes, clean, size);
        bytes[k] ^= (uint8_t)(1 << rnd(8));
        t_write(bad, bytes, size);
        splat_status want = k >= 8 && k < 12 ? SPLAT_ERR_UNSUPPORTED : SPLAT_ERR_FORMAT; /* the version */
        EXPECT_CKPT_FAIL(bad, want, NULL);
    }
    /* an older and a newer version, each refused by name (a single flipped bit reaches version 0
     * only when it is bit 0) */
    for (uint32_t v = 0; v <= 2; v += 2) {
        memcpy(bytes, clean, size);
        splat__store_u32(bytes + 8, v);
        t_write(bad, bytes, size);
        EXPECT_CKPT_FAIL(bad, SPLAT_ERR_UNSUPPORTED, "checkpoint version");
    }
    /* every truncation, and trailing bytes */
    for (size_t k = 0; k < size; k++) {
        t_write(bad, clean, k);
        EXPECT_CKPT_FAIL(bad, SPLAT_ERR_FORMAT, NULL);
    }
    uint8_t *longer = malloc(size + 1);
    memcpy(longer, clean, size);
    longer[size] = 0;
    t_write(bad, longer, size + 1);
    EXPECT_CKPT_FAIL(bad, SPLAT_ERR_FORMAT, "unexpected bytes");
    write_text(bad, "SPLATCKQ and more");
    EXPECT_CKPT_FAIL(bad, SPLAT_ERR_FORMAT, "not a splatc checkpoint");
    EXPECT_CKPT_FAIL(t_path("none.ckpt"), SPLAT_ERR_IO, "cannot open");
    free(longer), free(bytes), free(clean);
}

/* ------------------------------------------------------------------ durability */

/* fsync and rename, watched: the library is linked in statically, so these definitions stand in
 * for libc's in its code too. While g_watch is on they note each call (an fsync by the path its
 * descriptor names), then make the system call. */
typedef struct watched_call {
    char op; /* 'f' fsync, 'r' rename */
    char path[600], to[600];
} watched_call;
static watched_call g_calls[64];
static bool g_watch;
static int g_ncalls;

int fsync(int fd)
{
    if (g_watch && g_ncalls < (int)SPLAT_COUNTOF(g_calls)) {
        watched_call *c = &g_calls[g_ncalls++];
        char link[64];
        snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
        ssize_t n = readlink(link, c->path, sizeof c->path - 1);
        c->path[n > 0 ? n : 0] = 0, c->op = 'f';
    }
    return (int)syscall(SYS_fsync, fd);
}

int rename(const char *from, const char *to)
{
    if (g_watch && g_ncalls < (int)SPLAT_COUNTOF(g_calls)) {
        watched_call *c = &g_calls[g_ncalls++];
        snprintf(c->path, sizeof c->path, "%s", from), snprintf(c->to, sizeof c->to, "%s", to), c->op = 'r';
    }
    return (int)syscall(SYS_renameat, AT_FDCWD, from, AT_FDCWD, to);
}

/* A written file survives a power cut once its write returns: the temporary's data is flushed to
 * the disk before the rename that publishes it, and the folder after it (the rename's own entry). */
SPLAT_TEST(io_atomic_durable)
{
    splat_scene a;
    random_scene(&a, 100 + rnd(100), 1);
    t_mkdir(t_path("durable"));
    const char *path = t_path("durable/s.ply");
    char dir[600];
    T_REQUIRE(realpath(t_path("durable"), dir));
    splat_error err = {0};
    g_ncalls = 0, g_watch = true;
    splat_status st = splat__ply_write(path, &a, &err);
    g_watch = false;
    T_OK(st, &err);
    int r = -1, f = -1, d = -1;
    for (int k = 0; k < g_ncalls; k++)
        if (g_calls[k].op == 'r' && strcmp(g_calls[k].to, path) == 0) r = k;
    T_REQUIRE(r >= 0, "no rename onto %s among %d calls", path, g_ncalls);
    const char *base = strrchr(g_calls[r].path, '/');
    char tmp[1300];
    snprintf(tmp, sizeof tmp, "%s%s", dir, base ? base : "/");
    for (int k = 0; k < r; k++)
        if (g_calls[k].op == 'f' && strcmp(g_calls[k].path, tmp) == 0) f = k;
    for (int k = r + 1; k < g_ncalls; k++)
        if (g_calls[k].op == 'f' && strcmp(g_calls[k].path, dir) == 0) d = k;
    T_CHECK(f >= 0, "the temporary %s was not flushed (fsync) before its rename", tmp);
    T_CHECK(d >= 0, "the folder %s was not flushed (fsync) after the rename", dir);
    splat_scene_free(&a);
}

/* A writer killed mid-file leaves "<target>.tmp-<pid>-XXXXXX" behind (gigabytes for a real
 * checkpoint); the next write of the same target removes the ones whose process is gone, and
 * leaves alone those of a live process and any other file. */
SPLAT_TEST(io_atomic_removes_stale_temporaries)
{
    const char *dir = t_path("stale");
    t_mkdir(dir);
    char target[600], dead[700], live[700], other[700], unrelated[700];
    snprintf(target, sizeof target, "%s/checkpoint.ckpt", dir);
    /* a pid that is certainly gone: a child that has exited and been reaped */
    pid_t child = fork();
    if (child == 0) _exit(0);
    T_REQUIRE(child > 0);
    int status;
    waitpid(child, &status, 0);
    snprintf(dead, sizeof dead, "%s.tmp-%ld-a1B2c3", target, (long)child);
    snprintf(live, sizeof live, "%s.tmp-%ld-Zz9yY8", target, (long)getppid());
    snprintf(other, sizeof other, "%s/point_cloud.ply.tmp-%ld-q1w2e3", dir, (long)child);
    snprintf(unrelated, sizeof unrelated, "%s.tmp-notapid", target);
    const char *files[] = {dead, live, other, unrelated};
    for (size_t k = 0; k < SPLAT_COUNTOF(files); k++) T_REQUIRE(t_write(files[k], "left behind", 11));
    splat_error err = {0};
    T_OK(splat_write_file(target, "new", 3, &err), &err);
    T_CHECK(!t_exists(dead), "the temporary of a process that is gone is still there: %s", dead);
    T_CHECK(t_exists(live), "the temporary of a live process was removed");
    T_CHECK(t_exists(other), "another target's temporary was removed");
    T_CHECK(t_exists(unrelated), "a file not named like a temporary was removed");
    T_CHECK(t_count_entries(dir) == 4, "%d entries (the target and the three kept)", t_count_entries(dir));
}

/* A PLY as other trainers write it: extra vertex properties of several types among the known ones
 * (Mip-Splatting's filter_3D, colours as uchar, normals, a per-Gaussian id), and a face element
 * after the vertices. It loads, the extras skipped and named in one warning, every value right. */
SPLAT_TEST(io_ply_other_trainers)
{
    for (int trial = 0; trial < 4; trial++) {
        splat_scene s, back;
        uint32_t degree = (uint32_t)trial;
        random_scene(&s, 1 + rnd(300), degree);
        char names[64][24];
        int np = expected_names(degree, names);
        static const char *const extra[] = {"filter_3D", "red", "green", "blue", "id"};
        static const char *const extra_type[] = {"float", "uchar", "uchar", "uchar", "int"};
        static const int extra_size[] = {4, 1, 1, 1, 4};
        const char *path = t_path("other%d.ply", trial);
        tbuf b = {0};
        bool ascii = trial == 3;
        tb_printf(&b, "ply\nformat %s 1.0\nelement vertex %u\n", ascii ? "ascii" : "binary_little_endian", s.count);
        /* the extras at random places among the known properties */
        int at[5];
        for (int e = 0; e < 5; e++) at[e] = (int)rnd((uint32_t)np + 1);
        for (int p = 0; p <= np; p++) {
            for (int e = 0; e < 5; e++)
                if (at[e] == p) tb_printf(&b, "property %s %s\n", extra_type[e], extra[e]);
            if (p < np) tb_printf(&b, "property float %s\n", names[p]);
        }
        tb_printf(&b, "element face 1\nproperty list uchar int vertex_indices\nend_header\n");
        for (uint32_t i = 0; i < s.count; i++) {
            for (int p = 0; p <= np; p++) {
                for (int e = 0; e < 5; e++)
                    if (at[e] == p) {
                        if (ascii) tb_printf(&b, "%d ", (int)rnd(200));
                        else for (int k = 0; k < extra_size[e]; k++) tb_u8(&b, (uint8_t)rnd(256));
                    }
                if (p == np) continue;
                float v = expected_value(&s, i, p, degree);
                if (ascii) tb_printf(&b, "%.9g ", (double)v);
                else tb_f32(&b, v);
            }
            if (ascii) tb_printf(&b, "\n");
        }
        if (ascii) tb_printf(&b, "3 0 1 2\n");
        else tb_u8(&b, 3), tb_u32(&b, 0), tb_u32(&b, 1), tb_u32(&b, 2);
        t_write(path, b.p, b.n);
        tb_free(&b);
        splat_error err = {0};
        splat_load_info info;
        T_OK(splat__ply_read(path, &back, &info, &err), &err);
        T_CHECK(info.format == SPLAT_FILE_PLY, "format %d", info.format);
        T_CHECK(t_has(info.warning, path) && t_has(info.warning, "skipped 5 vertex properties") &&
                t_has(info.warning, "filter_3D") && t_has(info.warning, "red") && t_has(info.warning, "blue") &&
                t_has(info.warning, "id"), "warning: \"%s\"", info.warning);
        T_REQUIRE(back.count == s.count && back.sh_degree == degree);
        for (uint32_t i = 0; i < s.count; i++)
            for (int p = 0; p < np; p++)
                T_REQUIRE(same_bits(expected_value(&back, i, p, degree), expected_value(&s, i, p, degree)),
                          "Gaussian %u %s", i, names[p]);
        splat_scene_free(&back);
        splat_scene_free(&s);
    }
}
