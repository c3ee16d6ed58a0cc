/* io: PNG and JPEG decoding of files written here through libpng and libjpeg, probing,
 * saving and downsampling. */
#include <png.h>
#include <zlib.h>

#include "io_fixtures.h"

static uint32_t rnd(uint32_t n) { return (uint32_t)(splat__rng_u64(splat_test_rng()) % n); }
static uint8_t rbyte(void) { return (uint8_t)splat__rng_u64(splat_test_rng()); }

typedef enum png_case {
    CASE_RGB8, CASE_RGBA8, CASE_GREY8, CASE_GREY_ALPHA8, CASE_GREY1, CASE_RGB16, CASE_RGBA16, CASE_GREY16,
    CASE_PALETTE8_TRNS, CASE_PALETTE4, CASE_GREY8_TRNS, CASE_RGB8_INTERLACED, CASE_COUNT
} png_case;

static const char *const case_names[CASE_COUNT] = {
    "rgb8", "rgba8", "grey8", "grey_alpha8", "grey1", "rgb16", "rgba16", "grey16", "palette8_trns", "palette4",
    "grey8_trns", "rgb8_interlaced"};

/* 16-bit to 8-bit, rounded: round(v * 255 / 65535) = round(v / 257) */
static uint8_t to8(unsigned v) { return (uint8_t)((v + 128) / 257); }

/* Writes one PNG of the given kind with random content and fills `want` with the RGBA8 the
 * decoder must produce, computed from the samples directly. */
static bool make_png(png_case k, const char *path, uint32_t w, uint32_t h, uint8_t *want)
{
    int ctype, depth = 8, spp; /* samples per pixel */
    switch (k) {
    case CASE_RGB8: case CASE_RGB8_INTERLACED: ctype = PNG_COLOR_TYPE_RGB, spp = 3; break;
    case CASE_RGBA8: ctype = PNG_COLOR_TYPE_RGBA, spp = 4; break;
    case CASE_GREY8: case CASE_GREY8_TRNS: ctype = PNG_COLOR_TYPE_GRAY, spp = 1; break;
    case CASE_GREY_ALPHA8: ctype = PNG_COLOR_TYPE_GRAY_ALPHA, spp = 2; break;
    case CASE_GREY1: ctype = PNG_COLOR_TYPE_GRAY, spp = 1, depth = 1; break;
    case CASE_RGB16: ctype = PNG_COLOR_TYPE_RGB, spp = 3, depth = 16; break;
    case CASE_RGBA16: ctype = PNG_COLOR_TYPE_RGBA, spp = 4, depth = 16; break;
    case CASE_GREY16: ctype = PNG_COLOR_TYPE_GRAY, spp = 1, depth = 16; break;
    case CASE_PALETTE8_TRNS: ctype = PNG_COLOR_TYPE_PALETTE, spp = 1; break;
    case CASE_PALETTE4: ctype = PNG_COLOR_TYPE_PALETTE, spp = 1, depth = 4; break;
    default: return false;
    }
    size_t row_bytes = ((size_t)w * (size_t)spp * (size_t)depth + 7) / 8;
    uint8_t *rows = calloc(h, row_bytes);
    uint8_t pal[256 * 3], trns[256];
    int n_pal = depth == 4 ? 16 : 1 + (int)rnd(256), n_trns = 0;
    for (int i = 0; i < n_pal * 3; i++) pal[i] = rbyte();
    if (k == CASE_PALETTE8_TRNS) {
        n_trns = 1 + (int)rnd((uint32_t)n_pal);
        for (int i = 0; i < n_trns; i++) trns[i] = rbyte();
    }
    uint8_t grey_key = rbyte();
    for (uint32_t y = 0; y < h; y++)
        for (uint32_t x = 0; x < w; x++) {
            uint8_t *row = rows + y * row_bytes, *o = want + ((size_t)y * w + x) * 4;
            o[3] = 255;
            if (k == CASE_GREY1) {
                int bit = (int)rnd(2);
                row[x / 8] |= (uint8_t)(bit << (7 - x % 8));
                o[0] = o[1] = o[2] = bit ? 255 : 0;
            } else if (k == CASE_PALETTE4) {
                int idx = (int)rnd(16);
                row[x / 2] |= (uint8_t)(x % 2 ? idx : idx << 4);
                memcpy(o, pal + idx * 3, 3);
            } else if (k == CASE_PALETTE8_TRNS) {
                int idx = (int)rnd((uint32_t)n_pal);
                row[x] = (uint8_t)idx;
                memcpy(o, pal + idx * 3, 3);
                o[3] = idx < n_trns ? trns[idx] : 255;
            } else if (depth == 16) {
                unsigned s[4] = {0};
                for (int c = 0; c < spp; c++) {
                    /* include the extremes and the values next to rounding edges */
                    s[c] = rnd(4) == 0 ? 257u * rnd(255) + 128 + rnd(2) : (unsigned)rnd(65536);
                    row[(x * (unsigned)spp + (unsigned)c) * 2] = (uint8_t)(s[c] >> 8);
                    row[(x * (unsigned)spp + (unsigned)c) * 2 + 1] = (uint8_t)s[c];
                }
                if (spp == 1) o[0] = o[1] = o[2] = to8(s[0]);
                else for (int c = 0; c < 3; c++) o[c] = to8(s[c]);
                if (spp == 4) o[3] = to8(s[3]);
            } else {
                uint8_t s[4] = {0};
                for (int c = 0; c < spp; c++) s[c] = row[x * (unsigned)spp + (unsigned)c] = rbyte();
                if (k == CASE_GREY8_TRNS && rnd(4) == 0) s[0] = row[x] = grey_key;
                if (spp <= 2) o[0] = o[1] = o[2] = s[0];
                else memcpy(o, s, 3);
                if (spp == 2) o[3] = s[1];
                if (spp == 4) o[3] = s[3];
                if (k == CASE_GREY8_TRNS && s[0] == grey_key) o[3] = 0;
            }
        }
    bool ok;
    if (k == CASE_GREY8_TRNS) {
        /* grey tRNS: one grey level is fully transparent */
        FILE *fp = fopen(path, "wb");
        png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, NULL, NULL, NULL);
        png_infop info = png_create_info_struct(png);
        png_init_io(png, fp);
        png_set_IHDR(png, info, w, h, 8, PNG_COLOR_TYPE_GRAY, PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT,
                     PNG_FILTER_TYPE_DEFAULT);
        png_color_16 key = {.gray = grey_key};
        png_set_tRNS(png, info, NULL, 0, &key);
        png_write_info(png, info);
        for (uint32_t y = 0; y < h; y++) png_write_row(png, rows + y * row_bytes);
        png_write_end(png, NULL);
        png_destroy_write_struct(&png, &info);
        ok = fclose(fp) == 0;
    } else {
        ok = t_write_png(path, w, h, ctype, depth, rows, row_bytes, ctype == PNG_COLOR_TYPE_PALETTE ? pal : NULL, n_pal,
                         n_trns ? trns : NULL, n_trns, k == CASE_RGB8_INTERLACED);
    }
    free(rows);
    return ok;
}

SPLAT_TEST(io_image_png_formats)
{
    for (int k = 0; k < CASE_COUNT; k++) {
        uint32_t w = 1 + rnd(37), h = 1 + rnd(29);
        const char *path = t_path("%s.png", case_names[k]);
        uint8_t *want = malloc((size_t)w * h * 4);
        T_REQUIRE(make_png((png_case)k, path, w, h, want), "writing %s", path);
        splat_error err = {0};
        splat_image img;
        T_OK(splat__image_load(path, &img, &err), &err);
        T_CHECK(img.width == w && img.height == h, "%s: %ux%u", case_names[k], img.width, img.height);
        size_t bad = 0, first = 0;
        for (size_t i = 0; i < (size_t)w * h * 4; i++)
            if (img.rgba[i] != want[i] && bad++ == 0) first = i;
        T_CHECK(bad == 0, "%s (%ux%u): %zu bytes differ, first at pixel %zu channel %zu: %u, expected %u",
                case_names[k], w, h, bad, first / 4, first % 4, img.rgba[first], want[first]);
        uint32_t pw, ph;
        T_OK(splat__image_probe(path, &pw, &ph, &err), &err);
        T_CHECK(pw == w && ph == h);
        splat__image_free(&img);
        free(want);
    }
}

/* Smooth random content, which JPEG keeps well: low-frequency waves with random phases. */
static void smooth_image(uint8_t *px, uint32_t w, uint32_t h, int comps)
{
    double a[3][4];
    for (int c = 0; c < 3; c++)
        for (int j = 0; j < 4; j++) a[c][j] = t_uniform(0, 6.28);
    for (uint32_t y = 0; y < h; y++)
        for (uint32_t x = 0; x < w; x++)
            for (int c = 0; c < comps; c++) {
                double v = 128 + 60 * sin(0.11 * x + a[c][0]) * cos(0.07 * y + a[c][1]) + 30 * sin(0.05 * (x + y) + a[c][2]);
                px[((size_t)y * w + x) * (size_t)comps + (size_t)c] = (uint8_t)lround(v);
            }
}

SPLAT_TEST(io_image_jpeg)
{
    for (int comps = 1; comps <= 3; comps += 2) {
        uint32_t w = 17 + rnd(80), h = 9 + rnd(60);
        uint8_t *px = malloc((size_t)w * h * (size_t)comps);
        smooth_image(px, w, h, comps);
        const char *path = t_path("photo%d.jpg", comps);
        T_REQUIRE(t_write_jpeg(path, w, h, comps, px, 95));
        splat_error err = {0};
        splat_image img;
        T_OK(splat__image_load(path, &img, &err), &err);
        T_REQUIRE(img.width == w && img.height == h);
        double sum = 0;
        int worst = 0;
        for (size_t i = 0; i < (size_t)w * h; i++) {
            T_CHECK(img.rgba[i * 4 + 3] == 255);
            for (int c = 0; c < 3; c++) {
                int want = px[i * (size_t)comps + (size_t)(comps == 1 ? 0 : c)];
                int d = abs((int)img.rgba[i * 4 + (size_t)c] - want);
                sum += d, worst = d > worst ? d : worst;
            }
        }
        double mean = sum / ((double)w * h * 3);
        /* quality 95 on smooth content: about 1 level on average (4:2:0 chroma adds a little) */
        T_CHECK(mean < 3 && worst < 24, "%d components: mean error %.2f, worst %d", comps, mean, worst);
        uint32_t pw, ph;
        T_OK(splat__image_probe(path, &pw, &ph, &err), &err);
        T_CHECK(pw == w && ph == h);
        splat__image_free(&img);
        free(px);
    }
}

SPLAT_TEST(io_image_probe_reads_headers_only)
{
    /* A PNG cut right after its header still probes, but does not load. */
    uint32_t w = 5 + rnd(100), h = 5 + rnd(100);
    const char *path = t_path("header_only.png");
    T_REQUIRE(t_write_random_png(path, w, h));
    size_t n;
    uint8_t *bytes = t_read(path, &n);
    T_REQUIRE(bytes && n > 40);
    t_write(path, bytes, 33);
    splat_error err = {0};
    uint32_t pw, ph;
    T_OK(splat__image_probe(path, &pw, &ph, &err), &err);
    T_CHECK(pw == w && ph == h);
    splat_image img;
    T_CHECK(splat__image_load(path, &img, &err) == SPLAT_ERR_FORMAT && t_has(err.msg, path), "%s", err.msg);
    T_CHECK(img.rgba == NULL);
    free(bytes);
}

SPLAT_TEST(io_image_downsample)
{
    for (int trial = 0; trial < 20; trial++) {
        splat_image src = {1 + rnd(40), 1 + rnd(40), NULL};
        uint32_t f = 1 + rnd(6);
        bool opaque = trial % 2 == 0;
        src.rgba = malloc((size_t)src.width * src.height * 4);
        for (size_t i = 0; i < (size_t)src.width * src.height * 4; i++)
            src.rgba[i] = (opaque && i % 4 == 3) ? 255 : (trial % 4 == 1 && i % 4 == 3) ? 0 : rbyte();
        splat_image dst;
        splat_error err = {0};
        T_OK(splat__image_downsample(&src, f, &dst, &err), &err);
        uint32_t w = src.width / f ? src.width / f : 1, h = src.height / f ? src.height / f : 1;
        T_REQUIRE(dst.width == w && dst.height == h, "%ux%u / %u gave %ux%u", src.width, src.height, f, dst.width,
                  dst.height);
        for (uint32_t y = 0; y < h; y++)
            for (uint32_t x = 0; x < w; x++) {
                /* the box: f x f source pixels, clipped to the image */
                double s[3] = {0}, ws[3] = {0}, as = 0, n = 0;
                for (uint32_t sy = y * f; sy < (y + 1) * f && sy < src.height; sy++)
                    for (uint32_t sx = x * f; sx < (x + 1) * f && sx < src.width; sx++) {
                        const uint8_t *p = src.rgba + ((size_t)sy * src.width + sx) * 4;
                        for (int c = 0; c < 3; c++) s[c] += p[c], ws[c] += (double)p[c] * p[3];
                        as += p[3], n++;
                    }
                const uint8_t *q = dst.rgba + ((size_t)y * w + x) * 4;
                for (int c = 0; c < 3; c++) {
                    /* plain average when opaque (or all transparent), else alpha-weighted */
                    long want = as > 0 ? lround(ws[c] / as) : lround(s[c] / n);
                    T_CHECK(q[c] == want, "pixel %u,%u channel %d: %u, expected %ld", x, y, c, q[c], want);
                }
                T_CHECK(q[3] == lround(as / n));
            }
        splat__image_free(&dst);
        free(src.rgba);
    }
}

SPLAT_TEST(io_image_save_png)
{
    splat_image img = {1 + rnd(50), 1 + rnd(50), NULL};
    img.rgba = malloc((size_t)img.width * img.height * 4);
    for (size_t i = 0; i < (size_t)img.width * img.height * 4; i++) img.rgba[i] = rbyte();
    splat_error err = {0};
    for (int channels = 3; channels <= 4; channels++) {
        const char *path = t_path("saved%d.png", channels);
        T_OK(splat__image_save_png(path, &img, channels, &err), &err);
        splat_image back;
        T_OK(splat__image_load(path, &back, &err), &err);
        T_REQUIRE(back.width == img.width && back.height == img.height);
        for (size_t i = 0; i < (size_t)img.width * img.height * 4; i++)
            T_REQUIRE(back.rgba[i] == (channels == 3 && i % 4 == 3 ? 255 : img.rgba[i]), "byte %zu", i);
        splat__image_free(&back);
    }
    const char *nodir = t_path("no/such/dir/x.png");
    T_CHECK(splat__image_save_png(nodir, &img, 4, &err) == SPLAT_ERR_IO && t_has(err.msg, nodir), "%s", err.msg);
    err = (splat_error){0};
    T_CHECK(splat__image_save_png(t_path("x.png"), &img, 2, &err) == SPLAT_ERR_INVALID_ARG);
    free(img.rgba);
}

static void put_be32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24), p[1] = (uint8_t)(v >> 16), p[2] = (uint8_t)(v >> 8), p[3] = (uint8_t)v;
}

SPLAT_TEST(io_image_bad_input)
{
    splat_error err = {0};
    splat_image img;
    uint32_t w, h;
    /* not an image at all, empty, missing */
    const char *txt = t_path("notes.png");
    t_write(txt, "just some text, not pixels\n", 27);
    T_CHECK(splat__image_load(txt, &img, &err) == SPLAT_ERR_FORMAT && t_has(err.msg, txt) &&
            t_has(err.msg, "not a PNG or JPEG"), "%s", err.msg);
    err = (splat_error){0};
    T_CHECK(splat__image_probe(txt, &w, &h, &err) == SPLAT_ERR_FORMAT && t_has(err.msg, txt));
    const char *empty = t_path("empty.jpg");
    t_write(empty, "", 0);
    err = (splat_error){0};
    T_CHECK(splat__image_load(empty, &img, &err) == SPLAT_ERR_FORMAT && t_has(err.msg, empty), "%s", err.msg);
    const char *missing = t_path("missing.png");
    err = (splat_error){0};
    T_CHECK(splat__image_load(missing, &img, &err) == SPLAT_ERR_IO && t_has(err.msg, missing), "%s", err.msg);

    /* a PNG cut inside its pixel data */
    const char *png = t_path("cut.png");
    T_REQUIRE(t_write_random_png(png, 30, 20));
    size_t n;
    uint8_t *bytes = t_read(png, &n);
    t_write(png, bytes, n / 2);
    err = (splat_error){0};
    T_CHECK(splat__image_load(png, &img, &err) == SPLAT_ERR_FORMAT && t_has(err.msg, png), "%s", err.msg);
    /* a PNG whose (valid, checksummed) header claims far more pixels than the file holds */
    put_be32(bytes + 16, 60000);
    put_be32(bytes + 20, 60000);
    put_be32(bytes + 29, (uint32_t)crc32(0, bytes + 12, 17));
    t_write(png, bytes, n);
    err = (splat_error){0};
    T_CHECK(splat__image_load(png, &img, &err) == SPLAT_ERR_FORMAT && t_has(err.msg, png) &&
            t_has(err.msg, "more than the file"), "%s", err.msg);
    free(bytes);

    /* a JPEG cut short, and one whose frame header claims a huge size */
    uint8_t px[64 * 48 * 3];
    smooth_image(px, 64, 48, 3);
    const char *jpg = t_path("cut.jpg");
    T_REQUIRE(t_write_jpeg(jpg, 64, 48, 3, px, 90));
    bytes = t_read(jpg, &n);
    t_write(jpg, bytes, n - n / 3);
    err = (splat_error){0};
    T_CHECK(splat__image_load(jpg, &img, &err) == SPLAT_ERR_FORMAT && t_has(err.msg, jpg), "%s", err.msg);
    for (size_t i = 2; i + 9 < n; i++)
        if (bytes[i] == 0xff && bytes[i + 1] == 0xc0) { /* SOF0: length, precision, height, width */
            bytes[i + 5] = 0x27, bytes[i + 6] = 0x10, bytes[i + 7] = 0x27, bytes[i + 8] = 0x10; /* 10000 */
            break;
        }
    t_write(jpg, bytes, n);
    err = (splat_error){0};
    T_CHECK(splat__image_load(jpg, &img, &err) == SPLAT_ERR_FORMAT && t_has(err.msg, "more than the file"), "%s",
            err.msg);
    T_OK(splat__image_probe(jpg, &w, &h, &err), &err);
    T_CHECK(w == 10000 && h == 10000);
    free(bytes);
}

/* Largest single request through the allocation hooks, for the case below. */
static size_t g_largest;
static void *big_alloc(void *u, size_t n)
{
    (void)u;
    if (n > g_largest) g_largest = n;
    return malloc(n);
}
static void *big_realloc(void *u, void *p, size_t n)
{
    (void)u;
    if (n > g_largest) g_largest = n;
    return realloc(p, n);
}
static void big_free(void *u, void *p)
{
    (void)u;
    free(p);
}

/* An arithmetic-coded JPEG (whose coding has no pixels-per-byte floor) whose header claims
 * 16384x16384 but whose data is a 64x64 image's: refused, naming the file, without the 1 GiB its
 * header claims (it once allocated 1.1 GB, then failed); claiming 1024x1024, within the bound, it
 * is decoded until its data ends and refused as truncated. The same image with its own header
 * decodes. And a complete, valid arithmetic-coded image of one flat colour, 4096x3072 in a few
 * hundred bytes: refused before decoding, as more than 1024 pixels a byte (the fuzzer found such
 * a file costing 2 GB under ASan: it is decoded whole, a progressive one in coefficients too). */
SPLAT_TEST(io_image_jpeg_arithmetic_huge_claim)
{
    uint32_t w = 64, h = 64;
    uint8_t *px = malloc(w * h * 3);
    for (uint32_t i = 0; i < w * h * 3; i++) px[i] = (uint8_t)((i / 3 % w) * 4 + (splat__rng_u64(splat_test_rng()) & 7));
    const char *path = t_path("arith.jpg");
    T_REQUIRE(t_write_jpeg_coded(path, w, h, 3, px, 90, true));
    splat_error err = {0};
    splat_image im;
    T_OK(splat__image_load(path, &im, &err), &err);
    T_CHECK(im.width == w && im.height == h, "%ux%u", im.width, im.height);
    splat__image_free(&im);
    size_t n;
    uint8_t *bytes = t_read(path, &n);
    size_t sof = 0;
    for (size_t k = 0; k + 9 < n && !sof; k++)
        if (bytes[k] == 0xff && bytes[k + 1] == 0xc9) sof = k;
    T_REQUIRE(sof, "no SOF9 marker: the encoder did not use arithmetic coding");
    bytes[sof + 5] = bytes[sof + 7] = 0x40, bytes[sof + 6] = bytes[sof + 8] = 0x00; /* 16384 x 16384 */
    T_REQUIRE(t_write(path, bytes, n));
    g_largest = 0;
    splat_set_allocator(&(splat_allocator){big_alloc, big_realloc, big_free, NULL});
    splat_status st = splat__image_load(path, &im, &err);
    splat_set_allocator(NULL);
    printf("  %zu bytes claiming 16384x16384: %s: %s; largest allocation %zu bytes\n", n, splat_status_str(st), err.msg,
           g_largest);
    T_CHECK(st == SPLAT_ERR_FORMAT && strstr(err.msg, path) && strstr(err.msg, "1024 pixels a byte"), "%s: %s",
            splat_status_str(st), err.msg);
    T_CHECK(g_largest < (16u << 20), "the decoder asked for %zu bytes", g_largest);
    /* a claim the bound lets through (1024x1024, the 1M pixels of slack): decoded until the data
     * ends, and refused as truncated */
    bytes[sof + 5] = bytes[sof + 7] = 0x04, bytes[sof + 6] = bytes[sof + 8] = 0x00;
    T_REQUIRE(t_write(path, bytes, n));
    err = (splat_error){0};
    st = splat__image_load(path, &im, &err);
    T_CHECK(st == SPLAT_ERR_FORMAT && strstr(err.msg, path) && strstr(err.msg, "truncated"), "1024x1024 on 64x64 data: %s: %s",
            splat_status_str(st), err.msg);
    free(bytes);
    free(px);

    w = 4096, h = 3072;
    px = malloc((size_t)w * h * 3);
    uint8_t grey = (uint8_t)(splat__rng_u64(splat_test_rng()) & 255);
    memset(px, grey, (size_t)w * h * 3);
    T_REQUIRE(t_write_jpeg_coded(path, w, h, 3, px, 90, true));
    free(t_read(path, &n));
    err = (splat_error){0};
    g_largest = 0;
    splat_set_allocator(&(splat_allocator){big_alloc, big_realloc, big_free, NULL});
    st = splat__image_load(path, &im, &err);
    splat_set_allocator(NULL);
    printf("  a flat %ux%u (grey %u) in %zu bytes: %s: %s; largest allocation %zu bytes\n", w, h, grey, n,
           splat_status_str(st), err.msg, g_largest);
    T_CHECK(st == SPLAT_ERR_FORMAT && strstr(err.msg, path) && strstr(err.msg, "1024 pixels a byte"), "%s: %s",
            splat_status_str(st), err.msg);
    T_CHECK(g_largest < (16u << 20), "the decoder asked for %zu bytes", g_largest);
    free(px);
}
