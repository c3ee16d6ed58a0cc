/* io: the scene formats (compressed PLY, .splat, SPZ, SOG) written by splatc and read back:
 * counts equal, Gaussian by Gaussian within each format's documented error (docs/FORMATS.md; the
 * bounds below are derived there), bad input refused naming the file, and the dispatch by name.
 * The same checks against splat-transform are in test_interop.c. */
#include <webp/decode.h>
#include <webp/encode.h>
#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "formats_support.h"
#include "io/zip.h"
#include "io_fixtures.h"
#include "io/quantize.h"

/* ---------------------------------------------------------------------- round trips */

static const splat_file_format k_lossy[] = {SPLAT_FILE_COMPRESSED_PLY, SPLAT_FILE_SPLAT, SPLAT_FILE_SPZ, SPLAT_FILE_SOG,
                                           SPLAT_FILE_SOG_FOLDER};

static const char *file_for(splat_file_format f, const char *stem)
{
    switch (f) {
    case SPLAT_FILE_COMPRESSED_PLY: return t_path("%s.compressed.ply", stem);
    case SPLAT_FILE_SPLAT: return t_path("%s.splat", stem);
    case SPLAT_FILE_SPZ: return t_path("%s.spz", stem);
    case SPLAT_FILE_SOG: return t_path("%s.sog", stem);
    default: {
        t_mkdir(t_path("%s", stem));
        return t_path("%s/meta.json", stem);
    }
    }
}

SPLAT_TEST(io_formats_round_trip)
{
    for (size_t f = 0; f < SPLAT_COUNTOF(k_lossy); f++) {
        tf_err all[TF_ATTRS] = {{0}};
        for (uint32_t degree = 0; degree <= 3; degree++) {
            splat_scene s, back;
            /* several chunks of compressed PLY, a scene off the origin (SOG's log transform) */
            uint32_t n = 1 + (uint32_t)t_uniform(0, 1200);
            tf_scene(&s, n, degree, t_uniform(0.02, 0.5), t_uniform(-40, 40));
            char stem[32];
            snprintf(stem, sizeof stem, "f%zu_%u", f, degree);
            char path[600];
            snprintf(path, sizeof path, "%s", file_for(k_lossy[f], stem));
            splat_error err = {0};
            T_OK(splat__scene_write(path, &s, &err), &err);
            splat_load_info info;
            T_OK(splat__scene_read(path, &back, &info, &err), &err);
            T_CHECK(info.format == k_lossy[f] && !info.warning[0], "format %d, warning \"%s\"", info.format, info.warning);
            sog_meta meta;
            if (k_lossy[f] == SPLAT_FILE_SOG || k_lossy[f] == SPLAT_FILE_SOG_FOLDER) T_REQUIRE(tf_sog_meta(path, &meta));
            tf_check(k_lossy[f], ENC_SPLATC, &s, &back, &meta, all);
            splat_scene_free(&back);
            splat_scene_free(&s);
            if (splat_test_failed()) {
                printf("failed on %s, degree %u, %u Gaussians\n", path, degree, n);
                return;
            }
        }
        tf_print(splat_file_format_name(k_lossy[f]), all);
    }
}

/* Values at the edges of what each format stores: clamped where documented, never non-finite. */
SPLAT_TEST(io_formats_extremes)
{
    splat_scene s, back;
    tf_scene(&s, 64, 3, 1.0, 0);
    /* opacities of 0 and 1 (as logits), log-scales past SPZ's and the compressed PLY's range,
     * colours past [0, 1], SH past [-4, 4], a zero quaternion, a scene 3000 units wide (SPZ drops
     * fractional bits) */
    s.opacities[0] = -40, s.opacities[1] = 40;
    s.log_scales[0] = -30, s.log_scales[1] = 25;
    s.sh[2 * 48] = 9, s.sh[2 * 48 + 1] = -9, s.sh[3 * 48 + 5] = 7;
    for (int k = 0; k < 4; k++) s.quats[4 * 4 + k] = 0;
    s.means[5 * 3] = 3000;
    for (size_t f = 0; f < SPLAT_COUNTOF(k_lossy); f++) {
        char path[600];
        snprintf(path, sizeof path, "%s", file_for(k_lossy[f], "edge"));
        splat_error err = {0};
        T_OK(splat__scene_write(path, &s, &err), &err);
        T_OK(splat__scene_read(path, &back, NULL, &err), &err);
        T_REQUIRE(back.count == s.count);
        for (uint32_t g = 0; g < SPLAT_GROUP_COUNT; g++) {
            const float *a = splat__scene_group_c(&back, g);
            for (uint64_t i = 0; i < (uint64_t)back.count * splat__groups[g].width; i++)
                T_CHECK(isfinite(a[i]), "%s: %s[%llu] is %g", path, splat__groups[g].name, (unsigned long long)i, a[i]);
        }
        /* the far Gaussian is where it was, to the format's resolution at that distance */
        float far = -INFINITY;
        for (uint32_t i = 0; i < back.count; i++) far = fmaxf(far, back.means[i * 3]);
        T_CHECK(fabs(far - 3000) < 0.1, "%s: the far Gaussian came back at x = %g", path, far);
        splat_scene_free(&back);
    }
    splat_scene_free(&s);
}

/* SOG's palette on a scene larger than it: every Gaussian's SH is one of at most `palette`
 * entries, Gaussians of one entry share it exactly, and the clustering explains most of the
 * variance of SH that has a few distinct patterns plus noise. */
SPLAT_TEST(io_sog_palette)
{
    splat_scene s, back;
    const uint32_t n = 600, palette = 24, patterns = 12;
    tf_scene(&s, n, 2, 0.1, 0);
    float centres[12][45];
    for (uint32_t p = 0; p < patterns; p++)
        for (int k = 0; k < 24; k++) centres[p][k] = (float)t_uniform(-0.8, 0.8);
    for (uint32_t i = 0; i < n; i++)
        for (int k = 0; k < 24; k++) s.sh[(size_t)i * 48 + 3 + (size_t)k] = centres[i % patterns][k] + (float)t_uniform(-0.02, 0.02);
    const char *path = t_path("pal.sog");
    splat_error err = {0};
    T_OK(splat__sog_write_palette(path, &s, palette, &err), &err);
    T_OK(splat__scene_read(path, &back, NULL, &err), &err);
    sog_meta meta;
    T_REQUIRE(tf_sog_meta(path, &meta));
    T_CHECK(meta.palette <= palette && meta.palette >= patterns, "palette of %u", meta.palette);
    uint32_t *of = tf_match(&s, &back);
    T_REQUIRE(of);
    double worst = 0;
    for (uint32_t i = 0; i < n; i++)
        for (int k = 0; k < 24; k++) {
            /* noise is 0.02; the codebook adds at most half its largest gap */
            double e = fabs(back.sh[(size_t)i * 48 + 3 + (size_t)k] - centres[of[i] % patterns][k]);
            worst = fmax(worst, e);
        }
    T_CHECK(worst < 0.05, "an SH coefficient is %.3g from its pattern: the palette did not find the patterns", worst);
    free(of);
    splat_scene_free(&back);
    splat_scene_free(&s);
}

/* The 1-D codebook: exact for few distinct values; otherwise every label is its value's nearest
 * entry, and the entries cover the tails (a lone far value gets an entry near it). */
SPLAT_TEST(io_quantize_1d)
{
    splat_error err = {0};
    float v[3000], cb[256];
    uint8_t lab[3000];
    for (int i = 0; i < 3000; i++) v[i] = (float)(int)t_uniform(0, 200) * 0.25f;
    T_OK(splat__quantize_1d(v, 3000, 256, cb, lab, &err), &err);
    for (int i = 0; i < 3000; i++) T_REQUIRE(cb[lab[i]] == v[i], "value %g stored as %g", v[i], cb[lab[i]]);
    /* exactly as many distinct values as entries (a SOG scene written again has 256): still exact */
    for (int i = 0; i < 3000; i++) {
        int j = i < 256 ? i : (int)t_uniform(0, 256); /* a dense run and a sparse tail, as log-scales */
        v[i] = j < 200 ? (float)j * 0.01f : 2.0f + (float)((j - 200) * (j - 200)) * 0.37f;
    }
    T_OK(splat__quantize_1d(v, 3000, 256, cb, lab, &err), &err);
    for (int i = 0; i < 3000; i++) T_REQUIRE(cb[lab[i]] == v[i], "of 256 distinct: value %g stored as %g", v[i], cb[lab[i]]);
    /* a dense core and a sparse tail (most Gaussians small, a few huge): the tail's values must
     * not be much worse off than a uniform grid over the whole range would leave them */
    for (int i = 0; i < 3000; i++)
        v[i] = i < 2940 ? (float)(0.2 * splat__rng_normal(splat_test_rng())) : (float)t_uniform(2, 12);
    v[17] = 40; /* the one huge Gaussian */
    T_OK(splat__quantize_1d(v, 3000, 256, cb, lab, &err), &err);
    double worst = 0, lo = INFINITY, hi = -INFINITY;
    for (int i = 0; i < 3000; i++) {
        T_REQUIRE(cb[lab[i]] == tf_nearest_entry(cb, 256, v[i]), "value %g: label %u is not the nearest", v[i], lab[i]);
        worst = fmax(worst, fabs(cb[lab[i]] - v[i]));
        lo = fmin(lo, v[i]), hi = fmax(hi, v[i]);
    }
    for (int j = 1; j < 256; j++) T_REQUIRE(cb[j] >= cb[j - 1], "codebook not ascending at %d", j);
    T_CHECK(fabs(cb[lab[17]] - 40) < 0.5, "the far value 40 is stored as %g", cb[lab[17]]);
    T_CHECK(worst <= (hi - lo) / 255, "a value is %.3g from its entry, over twice the %.3g a uniform grid leaves",
            worst, (hi - lo) / 510);
}

/* ------------------------------------------------------------- SPZ version 4, by hand */

SPLAT_TEST(io_spz_version_4)
{
    splat_scene s, a, b;
    tf_scene(&s, 300, 3, 0.1, 1);
    splat_error err = {0};
    const char *v3 = t_path("a.spz"), *v4 = t_path("b.spz");
    T_OK(splat__spz_write(v3, &s, &err), &err);
    T_REQUIRE(t_spz_v4_from_v3(v3, v4, NULL, 0, 0));
    T_OK(splat__spz_read(v3, &a, NULL, &err), &err);
    T_OK(splat__spz_read(v4, &b, NULL, &err), &err);
    /* the same Gaussians from either container, bit for bit */
    T_REQUIRE(a.count == b.count && a.sh_degree == b.sh_degree);
    for (uint32_t g = 0; g < SPLAT_GROUP_COUNT; g++)
        T_CHECK(memcmp(splat__scene_group_c(&a, g), splat__scene_group_c(&b, g),
                       (size_t)a.count * splat__groups[g].width * sizeof(float)) == 0, "%s differs", splat__groups[g].name);
    splat_scene_free(&b);
    /* stored in splatc's own axes (right, down, front: Adobe's RDF, 6): no flips */
    uint8_t ext[12] = {0x03, 0x00, 0xbe, 0xad, 4, 0, 0, 0, 6, 0, 0, 0}, other[10] = {0x01, 0x00, 0x34, 0x12, 2, 0, 0, 0, 9, 9};
    uint8_t both[22];
    memcpy(both, other, 10), memcpy(both + 10, ext, 12);
    T_REQUIRE(t_spz_v4_from_v3(v3, v4, both, sizeof both, 0));
    splat_load_info info;
    T_OK(splat__spz_read(v4, &b, &info, &err), &err);
    T_CHECK(t_has(info.warning, "0x12340001") && t_has(info.warning, v4), "warning: \"%s\"", info.warning);
    for (uint32_t i = 0; i < a.count; i++) {
        T_REQUIRE(b.means[i * 3] == a.means[i * 3] && b.means[i * 3 + 1] == -a.means[i * 3 + 1] &&
                  b.means[i * 3 + 2] == -a.means[i * 3 + 2], "Gaussian %u: the y and z flips are not undone", i);
        /* degree 1: y, z, x; the y and z coefficients change sign with their axes */
        T_REQUIRE(b.sh[i * 48 + 3] == -a.sh[i * 48 + 3] && b.sh[i * 48 + 9] == a.sh[i * 48 + 9], "Gaussian %u: SH flips", i);
    }
    splat_scene_free(&b);
    /* an empty version-4 file: a header, no streams (the fuzzer found its decoding pointing into
     * no data) */
    tbuf e = {0};
    tb_u32(&e, 0x5053474e), tb_u32(&e, 4), tb_u32(&e, 0), tb_u32(&e, 0), tb_u32(&e, 32);
    for (int k = 0; k < 12; k++) tb_u8(&e, 0);
    t_write(v4, e.p, e.n);
    tb_free(&e);
    T_OK(splat__spz_read(v4, &b, NULL, &err), &err);
    T_CHECK(b.count == 0 && b.sh_degree == 0);
    splat_scene_free(&b);
    /* system 0, "unspecified", is SPZ's own (right, up, back): read as the version-3 file */
    ext[8] = 0;
    T_REQUIRE(t_spz_v4_from_v3(v3, v4, ext, sizeof ext, 0));
    T_OK(splat__spz_read(v4, &b, NULL, &err), &err);
    for (uint32_t g = 0; g < SPLAT_GROUP_COUNT; g++)
        T_CHECK(b.count == a.count && memcmp(splat__scene_group_c(&a, g), splat__scene_group_c(&b, g),
                                             (size_t)a.count * splat__groups[g].width * sizeof(float)) == 0,
                "system 0: %s differs from the version-3 file's", splat__groups[g].name);
    splat_scene_free(&b);
    /* a rotated system is refused rather than misread */
    ext[8] = 12;
    T_REQUIRE(t_spz_v4_from_v3(v3, v4, ext, sizeof ext, 0));
    T_CHECK(splat__spz_read(v4, &b, NULL, &err) == SPLAT_ERR_UNSUPPORTED && t_has(err.msg, v4) &&
            t_has(err.msg, "coordinate system 12"), "%s", err.msg);
    splat_scene_free(&a);
    splat_scene_free(&s);
}

/* -------------------------------------------------------------------------- dispatch */

SPLAT_TEST(io_formats_dispatch)
{
    struct {
        const char *path;
        splat_file_format f;
    } cases[] = {
        {"a.ply", SPLAT_FILE_PLY}, {"A.PLY", SPLAT_FILE_PLY}, {"x/a.compressed.ply", SPLAT_FILE_COMPRESSED_PLY},
        {"a.Compressed.Ply", SPLAT_FILE_COMPRESSED_PLY}, {"a.splat", SPLAT_FILE_SPLAT}, {"a.spz", SPLAT_FILE_SPZ},
        {"a.sog", SPLAT_FILE_SOG}, {"d/meta.json", SPLAT_FILE_SOG_FOLDER}, {"scene_meta.json", SPLAT_FILE_SOG_FOLDER},
        {"a.json", SPLAT_FILE_UNKNOWN}, {"a.ply.txt", SPLAT_FILE_UNKNOWN}, {"ply", SPLAT_FILE_UNKNOWN}, {"", SPLAT_FILE_UNKNOWN},
    };
    for (size_t k = 0; k < SPLAT_COUNTOF(cases); k++)
        T_CHECK(splat_file_format_of(cases[k].path) == cases[k].f, "%s: %d", cases[k].path, splat_file_format_of(cases[k].path));
    splat_scene s;
    tf_scene(&s, 10, 1, 1, 0);
    splat_error err = {0};
    const char *bad = t_path("scene.obj");
    T_CHECK(splat_scene_save(bad, &s, &err) == SPLAT_ERR_UNSUPPORTED && t_has(err.msg, bad) && t_has(err.msg, ".spz"),
            "%s", err.msg);
    T_CHECK(!t_exists(bad));
    splat_scene back;
    err = (splat_error){0};
    T_CHECK(splat_scene_load(bad, &back, NULL, &err) == SPLAT_ERR_UNSUPPORTED && !back.means, "%s", err.msg);
    /* a compressed PLY named .ply is still read as one: by content */
    const char *c = t_path("c.compressed.ply"), *plain = t_path("c.ply");
    T_OK(splat_scene_save(c, &s, &err), &err);
    size_t n;
    uint8_t *bytes = t_read(c, &n);
    t_write(plain, bytes, n);
    free(bytes);
    splat_load_info info;
    T_OK(splat_scene_load(plain, &back, &info, &err), &err);
    T_CHECK(info.format == SPLAT_FILE_COMPRESSED_PLY && back.count == 10);
    splat_scene_free(&back);
    splat_scene_free(&s);
}

/* ------------------------------------------------------------------------ bad input */

static void expect_fail(const char *path, splat_status want, const char *what, int line)
{
    splat_error err = {0};
    splat_scene s;
    splat_load_info info;
    splat_status st = splat__scene_read(path, &s, &info, &err);
    if (st != want || !t_has(err.msg, path) || !t_has(err.msg, what))
        splat_test_fail(__FILE__, line, "expected failure", "got %s: \"%s\"; wanted %s naming %s and \"%s\"",
                        splat_status_str(st), err.msg, splat_status_str(want), path, what);
    if (s.means || s.sh || s.count || info.warning[0]) splat_test_fail(__FILE__, line, "not empty after a failure", " ");
    if (st == SPLAT_OK) splat_scene_free(&s);
}
#define EXPECT_FAIL(path, want, what) expect_fail(path, want, what, __LINE__)

static uint8_t *gzip_bytes(const uint8_t *p, size_t n, size_t *out_n)
{
    uLong cap = compressBound((uLong)n) + 64;
    uint8_t *out = malloc(cap);
    z_stream z = {0};
    deflateInit2(&z, 6, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY);
    z.next_in = (Bytef *)(uintptr_t)p, z.avail_in = (uInt)n, z.next_out = out, z.avail_out = (uInt)cap;
    deflate(&z, Z_FINISH);
    *out_n = z.total_out;
    deflateEnd(&z);
    return out;
}

SPLAT_TEST(io_formats_bad_input)
{
    splat_scene s;
    tf_scene(&s, 300, 2, 0.1, 0);
    splat_error err = {0};
    size_t n;
    uint8_t *b;

    /* .splat: a partial record, a non-finite position, a scale that is not positive */
    const char *sp = t_path("a.splat");
    T_OK(splat__splat_write(sp, &s, &err), &err);
    b = t_read(sp, &n);
    t_write(sp, b, n - 1 - (size_t)t_uniform(0, 31));
    EXPECT_FAIL(sp, SPLAT_ERR_FORMAT, "not a whole number of 32-byte");
    uint32_t bad = (uint32_t)t_uniform(0, 300);
    float nan_ = NAN, zero = 0;
    memcpy(b + bad * 32 + 4, &nan_, 4);
    t_write(sp, b, n);
    char what[64];
    snprintf(what, sizeof what, "record %u: the position", bad);
    EXPECT_FAIL(sp, SPLAT_ERR_NONFINITE, what);
    memcpy(b + bad * 32 + 4, &zero, 4);
    memcpy(b + bad * 32 + 16, &zero, 4);
    t_write(sp, b, n);
    snprintf(what, sizeof what, "record %u: scale 0", bad);
    EXPECT_FAIL(sp, SPLAT_ERR_FORMAT, what);
    /* an infinite scale: no log-scale holds it */
    float inf_ = INFINITY, one = 1;
    memcpy(b + bad * 32 + 16, &one, 4);
    memcpy(b + bad * 32 + 12 + 4 * (uint32_t)t_uniform(0, 3), &inf_, 4);
    t_write(sp, b, n);
    snprintf(what, sizeof what, "record %u: scale", bad);
    EXPECT_FAIL(sp, SPLAT_ERR_FORMAT, what);
    free(b);

    /* compressed PLY: chunk counts that disagree, a count the file cannot hold, wrong types,
     * a non-finite chunk range, a truncated SH element */
    const char *cp = t_path("a.compressed.ply");
    T_OK(splat__ply_compressed_write(cp, &s, &err), &err);
    b = t_read(cp, &n);
    const char *hdr_end = strstr((const char *)b, "end_header\n");
    T_REQUIRE(hdr_end);
    size_t hn = (size_t)(hdr_end - (const char *)b) + 11;
    char *hdr = calloc(1, hn + 1);
    memcpy(hdr, b, hn);
    struct {
        const char *from, *to, *msg;
        splat_status st;
    } edits[] = {
        {"element chunk 2", "element chunk 3", "3 chunks for 300 vertices", SPLAT_ERR_FORMAT},
        {"element vertex 300", "element vertex 4000000", "chunks for 4000000 vertices", SPLAT_ERR_FORMAT},
        {"property uint packed_color", "property float packed_color", "packed_color\" must be uint", SPLAT_ERR_FORMAT},
        {"property float min_x", "property float min_q", "lacks property \"min_x\"", SPLAT_ERR_FORMAT},
        {"element sh 300", "element sh 299", "element sh has 24 properties and 299 rows", SPLAT_ERR_FORMAT},
        {"format binary_little_endian", "format ascii", "ASCII compressed PLY", SPLAT_ERR_UNSUPPORTED},
    };
    for (size_t k = 0; k < SPLAT_COUNTOF(edits); k++) {
        char *at = strstr(hdr, edits[k].from);
        T_REQUIRE(at, "%s", edits[k].from);
        tbuf t = {0};
        tb_bytes(&t, hdr, (size_t)(at - hdr));
        tb_printf(&t, "%s", edits[k].to);
        tb_bytes(&t, at + strlen(edits[k].from), hn - (size_t)(at - hdr) - strlen(edits[k].from));
        tb_bytes(&t, b + hn, n - hn);
        t_write(cp, t.p, t.n);
        tb_free(&t);
        EXPECT_FAIL(cp, edits[k].st, edits[k].msg);
    }
    free(hdr);
    t_write(cp, b, n - 1 - (size_t)t_uniform(0, (double)(n - hn - 2)));
    EXPECT_FAIL(cp, SPLAT_ERR_FORMAT, "truncated");
    uint8_t *nb = malloc(n);
    memcpy(nb, b, n);
    float inf = INFINITY;
    memcpy(nb + hn + 72 + 4 * (uint32_t)t_uniform(0, 12), &inf, 4); /* chunk 1's ranges */
    t_write(cp, nb, n);
    EXPECT_FAIL(cp, SPLAT_ERR_NONFINITE, "chunk 1: ");
    free(nb), free(b);

    /* SPZ: not one, a cut stream, a count the data cannot hold, degree 4, a version from the future */
    const char *zp = t_path("a.spz");
    t_write(zp, "hello", 5);
    EXPECT_FAIL(zp, SPLAT_ERR_FORMAT, "not an SPZ file");
    T_OK(splat__spz_write(zp, &s, &err), &err);
    b = t_read(zp, &n);
    t_write(zp, b, n / 2);
    EXPECT_FAIL(zp, SPLAT_ERR_FORMAT, "gzip stream ends early");
    free(b);
    tbuf raw = {0};
    tb_u32(&raw, 0x5053474e), tb_u32(&raw, 3), tb_u32(&raw, 4000000000u);
    tb_u8(&raw, 1), tb_u8(&raw, 12), tb_u8(&raw, 0), tb_u8(&raw, 0);
    for (int k = 0; k < 200; k++) tb_u8(&raw, (uint8_t)k);
    uint8_t *gz = gzip_bytes(raw.p, raw.n, &n);
    t_write(zp, gz, n);
    free(gz);
    EXPECT_FAIL(zp, SPLAT_ERR_FORMAT, "truncated: 4000000000 Gaussians need");
    raw.p[8] = 1, raw.p[9] = raw.p[10] = raw.p[11] = 0, raw.p[12] = 4;
    gz = gzip_bytes(raw.p, raw.n, &n);
    t_write(zp, gz, n);
    free(gz);
    EXPECT_FAIL(zp, SPLAT_ERR_UNSUPPORTED, "SH degree 4");
    raw.p[12] = 1, raw.p[4] = 9;
    gz = gzip_bytes(raw.p, raw.n, &n);
    t_write(zp, gz, n);
    free(gz);
    EXPECT_FAIL(zp, SPLAT_ERR_UNSUPPORTED, "SPZ version 9");
    tb_free(&raw);
    /* version 4: a table of contents past the end, a stream size that is not what the count needs */
    const char *v3 = t_path("b.spz"), *v4 = t_path("c.spz");
    T_OK(splat__spz_write(v3, &s, &err), &err);
    T_REQUIRE(t_spz_v4_from_v3(v3, v4, NULL, 0, 0));
    b = t_read(v4, &n);
    b[16] = 0xff, b[17] = 0xff;
    t_write(v4, b, n);
    EXPECT_FAIL(v4, SPLAT_ERR_FORMAT, "table of contents");
    b[16] = 32, b[17] = 0;
    b[32 + 8] ^= 1; /* the positions' uncompressed size */
    t_write(v4, b, n);
    EXPECT_FAIL(v4, SPLAT_ERR_FORMAT, "stream 0 says");
    b[32 + 8] ^= 1;
    t_write(v4, b, n - 3);
    EXPECT_FAIL(v4, SPLAT_ERR_FORMAT, "truncated");
    free(b);

    /* SOG: not a zip, no meta.json, version 1, a count the bundle cannot hold, an image of the
     * wrong size, an index past its codebook, a file name that leaves the folder */
    const char *gp = t_path("a.sog");
    t_write(gp, "PK\x03\x04 not really", 16);
    EXPECT_FAIL(gp, SPLAT_ERR_FORMAT, "not a zip archive");
    t_mkdir(t_path("sf"));
    const char *meta = t_path("sf/meta.json");
    T_OK(splat__sog_write(meta, &s, &err), &err);
    b = t_read(meta, &n);
    char *text = calloc(1, n + 64);
    memcpy(text, b, n);
    free(b);
    struct {
        const char *from, *to, *msg;
        splat_status st;
    } medits[] = {
        {"\"version\":2,", "", "SOG version 1", SPLAT_ERR_UNSUPPORTED},
        {"\"version\":2,", "\"version\":3,", "meta.json version is not 2", SPLAT_ERR_UNSUPPORTED},
        {"\"count\":300", "\"count\":3000000000", "claims 3000000000 Gaussians", SPLAT_ERR_FORMAT},
        {"\"count\":300", "\"count\":3000", "means_l.webp is ", SPLAT_ERR_FORMAT},
        {"\"means_l.webp\"", "\"../means_l.webp\"", "not a file beside it", SPLAT_ERR_FORMAT},
        {"\"quats.webp\"", "\"none.webp\"", "none.webp", SPLAT_ERR_IO},
        {"\"count\":300", "\"count\":300.5", "count is not a whole number", SPLAT_ERR_FORMAT},
    };
    for (size_t k = 0; k < SPLAT_COUNTOF(medits); k++) {
        char *at = strstr(text, medits[k].from);
        T_REQUIRE(at, "%s in %s", medits[k].from, text);
        tbuf t = {0};
        tb_bytes(&t, text, (size_t)(at - text));
        tb_bytes(&t, medits[k].to, strlen(medits[k].to));
        tb_bytes(&t, at + strlen(medits[k].from), strlen(at + strlen(medits[k].from)));
        t_write(meta, t.p, t.n);
        tb_free(&t);
        EXPECT_FAIL(meta, medits[k].st, medits[k].msg);
    }
    /* a codebook shorter than the indices in the image */
    char *cb = strstr(text, "\"scales\":{\"codebook\":[");
    T_REQUIRE(cb);
    char *close = strchr(cb, ']'), *second = strchr(cb + 23, ',');
    tbuf t = {0};
    tb_bytes(&t, text, (size_t)(second - text));
    tb_bytes(&t, close, strlen(close));
    t_write(meta, t.p, t.n);
    tb_free(&t);
    EXPECT_FAIL(meta, SPLAT_ERR_FORMAT, "past its 1-entry codebook");
    t_write(meta, text, strlen(text));
    /* a corrupt image */
    const char *img = t_path("sf/scales.webp");
    b = t_read(img, &n);
    for (size_t k = 30; k < n; k += 7) b[k] ^= 0x5a;
    t_write(img, b, n);
    free(b);
    EXPECT_FAIL(meta, SPLAT_ERR_FORMAT, "scales.webp");
    /* a rotation tag (a quats texel's alpha) outside 252..255, the format's four: refused, naming it
     * (the tag less 252 indexes the quaternion's components) */
    const uint8_t tags[2] = {251, (uint8_t)t_uniform(0, 251)}; /* the one below the four, and any */
    for (int k = 0; k < 2; k++) {
        T_OK(splat__sog_write(meta, &s, &err), &err);
        const char *quats = t_path("sf/quats.webp");
        b = t_read(quats, &n);
        int qw = 0, qh = 0;
        uint8_t *texels = WebPDecodeRGBA(b, n, &qw, &qh);
        free(b);
        T_REQUIRE(texels && qw > 0 && qh > 0);
        texels[4 * (size_t)t_uniform(0, 300) + 3] = tags[k];
        uint8_t *enc = NULL;
        size_t en = WebPEncodeLosslessRGBA(texels, qw, qh, 4 * qw, &enc);
        T_REQUIRE(en > 0);
        t_write(quats, enc, en);
        WebPFree(enc), WebPFree(texels);
        snprintf(what, sizeof what, "rotation tag %u is not 252..255", tags[k]);
        EXPECT_FAIL(meta, SPLAT_ERR_FORMAT, what);
    }
    free(text);
    /* an index exactly one past a codebook's end: of two log-scales, the larger takes the last of
     * the codebook's 256 entries (the rest repeat it), and the codebook is cut to 255 */
    for (uint32_t i = 0; i < s.count * 3; i++) s.log_scales[i] = i % 2 ? -3.0f : -4.0f;
    T_OK(splat__sog_write(meta, &s, &err), &err);
    b = t_read(meta, &n);
    text = calloc(1, n + 1);
    memcpy(text, b, n);
    free(b);
    cb = strstr(text, "\"scales\":{\"codebook\":[");
    T_REQUIRE(cb);
    close = strchr(cb, ']');
    char *last = close;
    while (*last != ',') last--;
    t = (tbuf){0};
    tb_bytes(&t, text, (size_t)(last - text));
    tb_bytes(&t, close, strlen(close));
    t_write(meta, t.p, t.n);
    tb_free(&t);
    EXPECT_FAIL(meta, SPLAT_ERR_FORMAT, "index 255 is past its 255-entry codebook");
    free(text);
    /* the bundle cut short, and a bundle whose meta.json fails its CRC */
    T_OK(splat__sog_write(gp, &s, &err), &err);
    b = t_read(gp, &n);
    t_write(gp, b, n - 30);
    EXPECT_FAIL(gp, SPLAT_ERR_FORMAT, "zip");
    uint8_t *m = NULL;
    for (size_t k = 0; k + 9 <= n && !m; k++)
        if (memcmp(b + k, "\"version\"", 9) == 0) m = b + k;
    T_REQUIRE(m);
    m[1] = 'V';
    t_write(gp, b, n);
    EXPECT_FAIL(gp, SPLAT_ERR_FORMAT, "meta.json fails its CRC check");
    free(b);
    splat_scene_free(&s);
}

/* ------------------------------------------------------- SOG bundles with deflated entries */

static uint32_t ld16(const uint8_t *p) { return (uint32_t)p[0] | (uint32_t)p[1] << 8; }
static void tb_u16(tbuf *b, uint16_t v) { tb_u8(b, (uint8_t)v), tb_u8(b, (uint8_t)(v >> 8)); }

typedef struct zentry {
    char name[64];
    uint8_t *data; /* as stored in the archive: raw deflate when deflated */
    size_t csize, usize;
    uint32_t crc;
} zentry;

/* An archive by APPNOTE 4.3.7, 4.3.12 and 4.3.16, written here rather than by zip.c: method 8
 * (deflate) or 0 (stored) for every entry; entry `bend`'s declared size differs from its true one
 * by `delta` in both headers. */
static void zip_by_hand(const char *path, const zentry *e, uint32_t n, uint16_t method, uint32_t bend, int64_t delta)
{
    tbuf z = {0}, cd = {0};
    for (uint32_t k = 0; k < n; k++) {
        uint32_t off = (uint32_t)z.n, usize = (uint32_t)((int64_t)e[k].usize + (k == bend ? delta : 0));
        uint16_t len = (uint16_t)strlen(e[k].name);
        tb_u32(&z, 0x04034b50), tb_u16(&z, 20), tb_u16(&z, 0), tb_u16(&z, method), tb_u16(&z, 0), tb_u16(&z, 0x21);
        tb_u32(&z, e[k].crc), tb_u32(&z, (uint32_t)e[k].csize), tb_u32(&z, usize), tb_u16(&z, len), tb_u16(&z, 0);
        tb_bytes(&z, e[k].name, len), tb_bytes(&z, e[k].data, e[k].csize);
        tb_u32(&cd, 0x02014b50), tb_u16(&cd, 20), tb_u16(&cd, 20), tb_u16(&cd, 0), tb_u16(&cd, method), tb_u16(&cd, 0);
        tb_u16(&cd, 0x21), tb_u32(&cd, e[k].crc), tb_u32(&cd, (uint32_t)e[k].csize), tb_u32(&cd, usize), tb_u16(&cd, len);
        tb_u16(&cd, 0), tb_u16(&cd, 0), tb_u16(&cd, 0), tb_u16(&cd, 0), tb_u32(&cd, 0), tb_u32(&cd, off);
        tb_bytes(&cd, e[k].name, len);
    }
    uint32_t cd_off = (uint32_t)z.n;
    tb_bytes(&z, cd.p, cd.n);
    tb_u32(&z, 0x06054b50), tb_u16(&z, 0), tb_u16(&z, 0), tb_u16(&z, (uint16_t)n), tb_u16(&z, (uint16_t)n);
    tb_u32(&z, (uint32_t)cd.n), tb_u32(&z, cd_off), tb_u16(&z, 0);
    t_write(path, z.p, z.n);
    tb_free(&z), tb_free(&cd);
}

/* Other tools zip a SOG folder with deflate (splatc and splat-transform store): such a bundle reads
 * as the stored one, bit for bit; a declared size one byte short, one byte long, or a stored entry
 * whose sizes differ is refused, not overrun or waited on. */
SPLAT_TEST(io_sog_zip_deflated)
{
    splat_scene s, a, b;
    tf_scene(&s, 300 + (uint32_t)t_uniform(0, 200), 3, 0.1, 1);
    splat_error err = {0};
    const char *stored = t_path("s.sog"), *bundle = t_path("d.sog");
    T_OK(splat__sog_write(stored, &s, &err), &err);
    T_OK(splat__scene_read(stored, &a, NULL, &err), &err);
    /* splatc's own bundle: each local header agrees with its central entry and its CRC is its
     * data's (APPNOTE 4.3.7 and 4.4.7; readers that stream the archive see only the local one) */
    size_t zn;
    uint8_t *zb = t_read(stored, &zn);
    T_REQUIRE(zb && zn >= 22 && splat__load_u32(zb + zn - 22) == 0x06054b50, "no end of central directory in %s", stored);
    for (uint32_t k = 0, entries = ld16(zb + zn - 12), cd = splat__load_u32(zb + zn - 6); k < entries; k++) {
        T_REQUIRE((size_t)cd + 46 <= zn && splat__load_u32(zb + cd) == 0x02014b50, "central entry %u", k);
        const uint8_t *c = zb + cd;
        uint32_t name = ld16(c + 28), local = splat__load_u32(c + 42), csize = splat__load_u32(c + 20);
        T_REQUIRE((size_t)local + 30 + name <= zn, "entry %u's local header", k);
        const uint8_t *l = zb + local;
        size_t data = (size_t)local + 30 + ld16(l + 26) + ld16(l + 28);
        T_CHECK(splat__load_u32(l) == 0x04034b50 && ld16(l + 8) == ld16(c + 10) && splat__load_u32(l + 14) == splat__load_u32(c + 16) &&
                    splat__load_u32(l + 18) == csize && splat__load_u32(l + 22) == splat__load_u32(c + 24) && ld16(l + 26) == name &&
                    memcmp(l + 30, c + 46, name) == 0 && data + csize <= zn &&
                    (uint32_t)crc32(crc32(0, NULL, 0), zb + data, (uInt)csize) == splat__load_u32(c + 16),
                "entry %.*s: the local header disagrees with the central directory or the data", (int)name, c + 46);
        cd += 46 + name + ld16(c + 30) + ld16(c + 32);
    }
    free(zb);
    /* the files of the folder form, zipped here */
    const char *names[] = {"meta.json", "means_l.webp", "means_u.webp", "quats.webp", "scales.webp", "sh0.webp",
                           "shN_centroids.webp", "shN_labels.webp"};
    const uint32_t n = SPLAT_COUNTOF(names);
    t_mkdir(t_path("f"));
    T_OK(splat__sog_write(t_path("f/meta.json"), &s, &err), &err);
    zentry e[SPLAT_COUNTOF(names)], raw[SPLAT_COUNTOF(names)];
    for (uint32_t k = 0; k < n; k++) {
        size_t len;
        uint8_t *p = t_read(t_path("f/%s", names[k]), &len);
        T_REQUIRE(p, "f/%s", names[k]);
        snprintf(e[k].name, sizeof e[k].name, "%s", names[k]);
        e[k].usize = len, e[k].crc = (uint32_t)crc32(crc32(0, NULL, 0), p, (uInt)len);
        raw[k] = e[k], raw[k].data = p, raw[k].csize = len;
        uLong cap = compressBound((uLong)len) + 64;
        e[k].data = malloc(cap);
        z_stream z = {0};
        deflateInit2(&z, 9, Z_DEFLATED, -MAX_WBITS, 8, Z_DEFAULT_STRATEGY);
        z.next_in = p, z.avail_in = (uInt)len, z.next_out = e[k].data, z.avail_out = (uInt)cap;
        T_REQUIRE(deflate(&z, Z_FINISH) == Z_STREAM_END);
        e[k].csize = z.total_out;
        deflateEnd(&z);
    }
    zip_by_hand(bundle, e, n, 8, UINT32_MAX, 0);
    T_OK(splat__scene_read(bundle, &b, NULL, &err), &err);
    T_REQUIRE(a.count == b.count && a.sh_degree == b.sh_degree);
    for (uint32_t g = 0; g < SPLAT_GROUP_COUNT; g++)
        T_CHECK(memcmp(splat__scene_group_c(&a, g), splat__scene_group_c(&b, g),
                       (size_t)a.count * splat__groups[g].width * sizeof(float)) == 0, "deflated: %s differs",
                splat__groups[g].name);
    splat_scene_free(&b);
    uint32_t bend = (uint32_t)t_uniform(0, n);
    printf("  entry %s declared a byte short, then a byte long\n", names[bend]);
    zip_by_hand(bundle, e, n, 8, bend, -1);
    EXPECT_FAIL(bundle, SPLAT_ERR_FORMAT, "inflates past");
    zip_by_hand(bundle, e, n, 8, bend, 1);
    EXPECT_FAIL(bundle, SPLAT_ERR_FORMAT, "inflates to");
    /* stored, with a size larger than the bytes it holds */
    zip_by_hand(bundle, raw, n, 0, UINT32_MAX, 0);
    T_OK(splat__scene_read(bundle, &b, NULL, &err), &err);
    splat_scene_free(&b);
    zip_by_hand(bundle, raw, n, 0, bend, 1 << 20);
    EXPECT_FAIL(bundle, SPLAT_ERR_FORMAT, "is stored but its sizes differ");
    for (uint32_t k = 0; k < n; k++) free(e[k].data), free(raw[k].data);
    splat_scene_free(&a), splat_scene_free(&s);
}

/* .splat records written byte by byte (antimatter15's layout: position and scale as 6 floats,
 * RGBA, rotation bytes b with q = (b - 128) / 128, w first), read back against known values */
SPLAT_TEST(io_splat_known_bytes)
{
    static const uint8_t rot[][4] = {{255, 128, 128, 128}, {128, 255, 128, 128}, {128, 128, 128, 0}, {0, 128, 128, 128},
                                     {192, 64, 128, 128}};
    static const float want[][4] = {{1, 0, 0, 0}, {0, 1, 0, 0}, {0, 0, 0, -1}, {-1, 0, 0, 0}, {0.70710678f, -0.70710678f, 0, 0}};
    const uint32_t n = SPLAT_COUNTOF(rot);
    tbuf t = {0};
    uint8_t rgba[SPLAT_COUNTOF(rot)][4];
    for (uint32_t i = 0; i < n; i++) {
        for (int k = 0; k < 3; k++) tb_f32(&t, (float)t_uniform(-5, 5));
        for (int k = 0; k < 3; k++) tb_f32(&t, (float)t_uniform(0.01, 2));
        for (int k = 0; k < 4; k++) rgba[i][k] = (uint8_t)t_uniform(1, 255);
        tb_bytes(&t, rgba[i], 4), tb_bytes(&t, rot[i], 4);
    }
    const char *path = t_path("k.splat");
    t_write(path, t.p, t.n);
    tb_free(&t);
    splat_scene s;
    splat_error err = {0};
    T_OK(splat__splat_read(path, &s, NULL, &err), &err);
    T_REQUIRE(s.count == n);
    for (uint32_t i = 0; i < n; i++) {
        for (int k = 0; k < 4; k++)
            T_CHECK(fabsf(s.quats[i * 4 + k] - want[i][k]) <= 1e-7f, "record %u: rotation bytes %u %u %u %u read as "
                    "%g %g %g %g", i, rot[i][0], rot[i][1], rot[i][2], rot[i][3], s.quats[i * 4], s.quats[i * 4 + 1],
                    s.quats[i * 4 + 2], s.quats[i * 4 + 3]);
        /* colour: the DC term whose 0.5 + C0 dc is the byte's fraction; opacity: the byte's fraction */
        for (int c = 0; c < 3; c++)
            T_CHECK(fabs(0.5 + 0.28209479177387814 * s.sh[i * 48 + c] - rgba[i][c] / 255.0) < 1e-6, "record %u: colour %d", i, c);
        T_CHECK(fabs(1 / (1 + exp(-(double)s.opacities[i])) - rgba[i][3] / 255.0) < 1e-5, "record %u: opacity", i);
    }
    splat_scene_free(&s);
}

/* A compressed PLY written byte by byte in the older SuperSplat layout (no chunk colour range), SH
 * degree 1 with every byte value in each f_rest column: the colours are the bytes' fractions, and
 * each SH byte n decodes as PlayCanvas's readers decode it, 8 ((n + 0.5) / 256 - 0.5), with 0 and
 * 255 at -4 and 4 */
SPLAT_TEST(io_compressed_ply_known_bytes)
{
    const uint32_t n = 256, shift = (uint32_t)t_uniform(0, 256);
    tbuf t = {0};
    tb_printf(&t, "ply\nformat binary_little_endian 1.0\nelement chunk 1\n");
    const char *axes = "xyz";
    for (int k = 0; k < 3; k++) tb_printf(&t, "property float min_%c\n", axes[k]);
    for (int k = 0; k < 3; k++) tb_printf(&t, "property float max_%c\n", axes[k]);
    for (int k = 0; k < 3; k++) tb_printf(&t, "property float min_scale_%c\n", axes[k]);
    for (int k = 0; k < 3; k++) tb_printf(&t, "property float max_scale_%c\n", axes[k]);
    tb_printf(&t, "element vertex %u\nproperty uint packed_position\nproperty uint packed_rotation\n"
                  "property uint packed_scale\nproperty uint packed_color\nelement sh %u\n", n, n);
    for (int j = 0; j < 9; j++) tb_printf(&t, "property uchar f_rest_%d\n", j);
    tb_printf(&t, "end_header\n");
    const float chunk[12] = {0, 0, 0, 1, 1, 1, -2, -2, -2, 0, 0, 0};
    for (int k = 0; k < 12; k++) tb_f32(&t, chunk[k]);
    uint8_t rgba[256][4], shb[256][9];
    for (uint32_t i = 0; i < n; i++) {
        for (int k = 0; k < 4; k++) rgba[i][k] = (uint8_t)t_uniform(0, 256);
        tb_u32(&t, 0), tb_u32(&t, 512u << 20 | 512u << 10 | 512u), tb_u32(&t, 0);
        tb_u32(&t, (uint32_t)rgba[i][0] << 24 | (uint32_t)rgba[i][1] << 16 | (uint32_t)rgba[i][2] << 8 | rgba[i][3]);
    }
    for (uint32_t i = 0; i < n; i++)
        for (uint32_t j = 0; j < 9; j++) shb[i][j] = (uint8_t)(i + shift + 37 * j), tb_u8(&t, shb[i][j]);
    const char *path = t_path("k.compressed.ply");
    t_write(path, t.p, t.n);
    tb_free(&t);
    splat_scene s;
    splat_error err = {0};
    T_OK(splat__scene_read(path, &s, NULL, &err), &err);
    T_REQUIRE(s.count == n && s.sh_degree == 1, "%u Gaussians, degree %u", s.count, s.sh_degree);
    uint32_t bad_colour = 0, bad_sh = 0, bad_opacity = 0;
    for (uint32_t i = 0; i < n; i++) {
        const float *sh = s.sh + (size_t)i * 48;
        for (int c = 0; c < 3; c++) bad_colour += !(fabs(0.5 + 0.28209479177387814 * sh[c] - rgba[i][c] / 255.0) < 1e-6);
        bad_opacity += !(fabs(1 / (1 + exp(-(double)s.opacities[i])) - rgba[i][3] / 255.0) < 1e-5 || rgba[i][3] == 0 ||
                         rgba[i][3] == 255);
        for (uint32_t j = 0; j < 9; j++) {
            uint32_t b = shb[i][j];
            float want = b == 0 ? -4.0f : b == 255 ? 4.0f : (float)(((b + 0.5) / 256 - 0.5) * 8);
            /* f_rest is channel-major: 3 coefficients of red, then green, then blue */
            float got = sh[(1 + j % 3) * 3 + j / 3];
            if (got != want && bad_sh++ < 4) printf("  Gaussian %u, f_rest_%u: byte %u read as %.9g, not %.9g\n", i, j, b, got, want);
        }
    }
    T_CHECK(bad_colour == 0 && bad_sh == 0 && bad_opacity == 0, "%u colours, %u SH coefficients, %u opacities wrong",
            bad_colour, bad_sh, bad_opacity);
    splat_scene_free(&s);
}

/* Writers refuse non-finite values before writing anything, and leave the old file as it was. */
SPLAT_TEST(io_formats_write_nonfinite)
{
    splat_scene s;
    tf_scene(&s, 50, 1, 0.1, 0);
    splat_error err = {0};
    for (size_t f = 0; f < SPLAT_COUNTOF(k_lossy); f++) {
        char path[600];
        snprintf(path, sizeof path, "%s", file_for(k_lossy[f], "nf"));
        T_OK(splat__scene_write(path, &s, &err), &err);
        size_t n0, n1;
        uint8_t *before = t_read(path, &n0);
        float keep = s.sh[20 * 48 + 1];
        s.sh[20 * 48 + 1] = NAN;
        err = (splat_error){0};
        T_CHECK(splat__scene_write(path, &s, &err) == SPLAT_ERR_NONFINITE && t_has(err.msg, path) &&
                t_has(err.msg, "Gaussian 20"), "%s", err.msg);
        s.sh[20 * 48 + 1] = keep;
        uint8_t *after = t_read(path, &n1);
        T_CHECK(n0 == n1 && memcmp(before, after, n0) == 0, "%s changed", path);
        free(before), free(after);
    }
    splat_scene_free(&s);
}

/* A SOG folder is several files: when a write of a new scene cannot complete (here a folder sits
 * where one of the later files goes), every file of the old scene must be left as it was, byte
 * for byte, with no temporary left behind; once the way is clear the new scene goes in whole. */
SPLAT_TEST(io_sog_folder_write_fails_whole)
{
    static const char *const names[] = {"means_l.webp", "means_u.webp", "quats.webp",         "scales.webp",
                                        "sh0.webp",     "shN_centroids.webp", "shN_labels.webp", "meta.json"};
    const size_t n_names = SPLAT_COUNTOF(names);
    splat_scene a, b, back;
    tf_scene(&a, 50 + (uint32_t)t_uniform(0, 250), 3, 0.1, 0);
    tf_scene(&b, 50 + (uint32_t)t_uniform(0, 250), 3, 0.1, 5);
    t_mkdir(t_path("sogw"));
    char meta[600];
    snprintf(meta, sizeof meta, "%s", t_path("sogw/meta.json"));
    splat_error err = {0};
    T_OK(splat__scene_write(meta, &a, &err), &err);
    uint8_t *before[8] = {0};
    size_t size[8] = {0};
    for (size_t k = 0; k < n_names; k++) T_REQUIRE((before[k] = t_read(t_path("sogw/%s", names[k]), &size[k])) != NULL);
    /* not the first file: a writer that replaces file by file would already have replaced one */
    size_t blocked = 1 + (size_t)t_uniform(0, (double)n_names - 1);
    if (blocked >= n_names) blocked = n_names - 1;
    printf("  a folder in the way of %s\n", names[blocked]);
    char way[700];
    snprintf(way, sizeof way, "%s", t_path("sogw/%s", names[blocked]));
    T_REQUIRE(unlink(way) == 0 && mkdir(way, 0755) == 0);
    splat_status st = splat__scene_write(meta, &b, &err);
    T_CHECK(st == SPLAT_ERR_IO && strstr(err.msg, names[blocked]) && strstr(err.msg, "nothing was replaced"), "%s: %s",
            splat_status_str(st), err.msg);
    for (size_t k = 0; k < n_names; k++) {
        if (k == blocked) continue;
        size_t n = 0;
        uint8_t *now = t_read(t_path("sogw/%s", names[k]), &n);
        T_CHECK(now && n == size[k] && memcmp(now, before[k], n) == 0, "%s changed by the failed write", names[k]);
        free(now);
    }
    DIR *d = opendir(t_path("sogw"));
    T_REQUIRE(d);
    for (struct dirent *e; (e = readdir(d)) != NULL;) T_CHECK(!strstr(e->d_name, ".tmp-"), "left behind: %s", e->d_name);
    closedir(d);
    /* the way clear, the new scene whole */
    T_REQUIRE(rmdir(way) == 0);
    err = (splat_error){0};
    T_OK(splat__scene_write(meta, &b, &err), &err);
    splat_load_info info;
    T_OK(splat__scene_read(meta, &back, &info, &err), &err);
    T_CHECK(back.count == b.count, "%u Gaussians read back, %u written", back.count, b.count);
    splat_scene_free(&back);
    for (size_t k = 0; k < n_names; k++) free(before[k]);
    splat_scene_free(&a);
    splat_scene_free(&b);
}

/* ------------------------------------------------------------- SPZ versions 1 and 2, by hand */

/* A half float's value by its definition (IEEE 754 binary16), finite ones only. */
static double half_value(uint16_t h)
{
    int sign = h >> 15, e = (h >> 10) & 31, m = h & 1023;
    double v = e ? ldexp(1024 + m, e - 25) : ldexp(m, -24);
    return sign ? -v : v;
}

/* Files of versions 1 and 2 (which splatc reads and no longer writes: no tool at hand writes them
 * either), built here from the format's definition: a 16-byte header, then positions (version 1:
 * three little-endian half floats; 2: three 24-bit little-endian fixed-point numbers with the
 * header's fractional bits), alphas, colours, scales and three-byte rotations (x, y, z as
 * r / 127.5 - 1, w the rest of the unit length), gzipped whole. Every value is read back as the
 * definition gives it, in splatc's axes (SPZ's right-up-back: y and z negated). */
SPLAT_TEST(io_spz_versions_1_2)
{
    for (uint32_t version = 1; version <= 2; version++) {
        uint32_t n = 20 + (uint32_t)t_uniform(0, 200), frac = 8 + (uint32_t)t_uniform(0, 8);
        tbuf raw = {0};
        tb_u32(&raw, 0x5053474e), tb_u32(&raw, version), tb_u32(&raw, n);
        tb_u8(&raw, 0), tb_u8(&raw, (uint8_t)frac), tb_u8(&raw, 0), tb_u8(&raw, 0);
        double *pos = malloc(sizeof *pos * n * 3);
        uint8_t *alpha = malloc(n), *col = malloc(3 * n), *scl = malloc(3 * n), *rot = malloc(3 * n);
        for (uint32_t i = 0; i < 3 * n; i++) {
            if (version == 1) {
                uint16_t h;
                do h = (uint16_t)t_uniform(0, 65536); while (((h >> 10) & 31) == 31);
                pos[i] = half_value(h);
                tb_u8(&raw, (uint8_t)(h & 255)), tb_u8(&raw, (uint8_t)(h >> 8));
            } else {
                int32_t fixed = (int32_t)t_uniform(-8388608, 8388607);
                pos[i] = ldexp(fixed, -(int)frac);
                uint32_t u = (uint32_t)fixed & 0xffffff;
                tb_u8(&raw, (uint8_t)u), tb_u8(&raw, (uint8_t)(u >> 8)), tb_u8(&raw, (uint8_t)(u >> 16));
            }
        }
        for (uint32_t i = 0; i < n; i++) tb_u8(&raw, alpha[i] = (uint8_t)t_uniform(1, 255));
        for (uint32_t i = 0; i < 3 * n; i++) tb_u8(&raw, col[i] = (uint8_t)t_uniform(0, 256));
        for (uint32_t i = 0; i < 3 * n; i++) tb_u8(&raw, scl[i] = (uint8_t)t_uniform(0, 256));
        for (uint32_t i = 0; i < 3 * n; i++) tb_u8(&raw, rot[i] = (uint8_t)t_uniform(64, 192)); /* |xyz| < 1 */
        size_t gz_n;
        uint8_t *gz = gzip_bytes(raw.p, raw.n, &gz_n);
        const char *path = t_path("v%u.spz", version);
        t_write(path, gz, gz_n);
        free(gz);
        tb_free(&raw);
        splat_scene s;
        splat_error err = {0};
        T_OK(splat__spz_read(path, &s, NULL, &err), &err);
        T_REQUIRE(s.count == n && s.sh_degree == 0, "version %u: %u Gaussians of degree %u, not %u of 0", version, s.count,
                  s.sh_degree, n);
        uint32_t bad = 0;
        const double flip[3] = {1, -1, -1};
        for (uint32_t i = 0; i < n; i++) {
            double q[3], w2 = 1;
            for (int k = 0; k < 3; k++) {
                uint32_t e = 3 * i + (uint32_t)k;
                bad += s.means[e] != (float)(flip[k] * pos[e]);
                bad += fabs(s.log_scales[e] - (scl[e] / 16.0 - 10.0)) > 1e-6;
                bad += fabs(s.sh[48 * i + (uint32_t)k] - (col[e] / 255.0 - 0.5) / 0.15) > 1e-5;
                q[k] = rot[e] / 127.5 - 1.0, w2 -= q[k] * q[k];
            }
            bad += fabs(1 / (1 + exp(-s.opacities[i])) - alpha[i] / 255.0) > 1e-6;
            const float *o = s.quats + 4 * i;
            bad += fabs(o[0] - sqrt(w2)) > 1e-6 || fabs(o[1] - q[0]) > 1e-6 || fabs(o[2] + q[1]) > 1e-6 || fabs(o[3] + q[2]) > 1e-6;
            if (bad && i < 3) printf("  version %u, Gaussian %u: mean %g %g %g, want %g %g %g\n", version, i, s.means[3 * i],
                                     s.means[3 * i + 1], s.means[3 * i + 2], pos[3 * i], -pos[3 * i + 1], -pos[3 * i + 2]);
        }
        printf("  version %u: %u Gaussians (%u fractional bits for version 2)\n", version, n, frac);
        T_CHECK(bad == 0, "version %u: %u values differ from the format's definition", version, bad);
        splat_scene_free(&s);
        free(pos), free(alpha), free(col), free(scl), free(rot);
    }
}
