/* io: resampling to other sizes (splat__resample, splat__image_resample, splat__mask_resample),
 * against the oracle of resample_oracle.c on fresh random images of random sizes, and known values. */
#include "io_fixtures.h"
#include "resample_oracle.h"

static uint32_t rnd(uint32_t n) { return (uint32_t)(splat__rng_u64(splat_test_rng()) % n); }

/* A size after scaling by s, as evaluation makes it: round(s n), at least 1. */
static uint32_t scaled(uint32_t n, double s)
{
    long v = lround(s * n);
    return v < 1 ? 1 : (uint32_t)v;
}

/* Sizes for a trial: by a scale below or above 1 (as evaluation), or each axis on its own (a
 * third of the trials: one axis may shrink while the other grows). */
static void random_sizes(int trial, uint32_t *w, uint32_t *h, uint32_t *w2, uint32_t *h2)
{
    *w = 1 + rnd(37), *h = 1 + rnd(37);
    if (trial % 3 == 2) {
        *w2 = 1 + rnd(3 * *w + 2), *h2 = 1 + rnd(3 * *h + 2);
        return;
    }
    double s = trial % 3 ? t_uniform(1.01, 3.2) : t_uniform(0.05, 0.99);
    *w2 = scaled(*w, s), *h2 = scaled(*h, s);
}

/* Random images of random sizes, 1 to 4 channels, shrunk (area), grown (bicubic) or both, against
 * the oracle's double-precision sum over every input pixel. The results are float: a rounding of
 * 6e-8; 1e-6 leaves room for the double sums' order and nothing for a wrong weight. */
SPLAT_TEST(io_resample_vs_oracle)
{
    double worst = 0;
    for (int trial = 0; trial < 48; trial++) {
        uint32_t w, h, w2, h2, ch = 1 + rnd(4);
        random_sizes(trial, &w, &h, &w2, &h2);
        size_t n = (size_t)w * h * ch, n2 = (size_t)w2 * h2 * ch;
        float *src = malloc(n * sizeof *src), *got = malloc(n2 * sizeof *got);
        double *srcd = malloc(n * sizeof *srcd), *want = malloc(n2 * sizeof *want);
        for (size_t i = 0; i < n; i++) srcd[i] = src[i] = (float)t_uniform(0, 1);
        splat_error err = {0};
        T_OK(splat__resample(src, w, h, ch, got, w2, h2, &err), &err);
        t_resample_oracle(srcd, w, h, ch, want, w2, h2);
        double e = 0;
        size_t at = 0;
        for (size_t i = 0; i < n2; i++)
            if (fabs(got[i] - want[i]) > e) e = fabs(got[i] - want[i]), at = i;
        T_CHECK(e <= 1e-6, "%ux%u -> %ux%u, %u channels: error %.3g at value %zu (%.9f, want %.9f)", w, h, w2, h2, ch,
                e, at, got[at], want[at]);
        worst = fmax(worst, e);
        free(src), free(got), free(srcd), free(want);
    }
    printf("  largest error against the oracle: %.3g\n", worst);
}

/* Known values: a constant stays that constant (floats and RGBA8, any alpha); the same size is a
 * copy; half an even size is the mean of each 2x2 block, exactly (values k / 1024, whose sums
 * of 4 and quarters are exact). */
SPLAT_TEST(io_resample_known)
{
    splat_error err = {0};
    for (int trial = 0; trial < 24; trial++) {
        uint32_t w, h, w2, h2;
        random_sizes(trial, &w, &h, &w2, &h2);
        /* constant floats */
        float c = (float)t_uniform(0, 1);
        float *src = malloc(sizeof *src * w * h), *got = malloc(sizeof *got * w2 * h2);
        for (size_t i = 0; i < (size_t)w * h; i++) src[i] = c;
        T_OK(splat__resample(src, w, h, 1, got, w2, h2, &err), &err);
        uint32_t off = 0;
        for (size_t i = 0; i < (size_t)w2 * h2; i++) off += got[i] != c;
        T_CHECK(off == 0, "constant %.9g, %ux%u -> %ux%u: %u values changed", c, w, h, w2, h2, off);
        /* the same size: a copy */
        for (size_t i = 0; i < (size_t)w * h; i++) src[i] = (float)t_uniform(0, 1);
        float *same = malloc(sizeof *same * w * h);
        T_OK(splat__resample(src, w, h, 1, same, w, h, &err), &err);
        T_CHECK(memcmp(same, src, sizeof *src * w * h) == 0, "%ux%u to its own size is not a copy", w, h);
        free(same), free(src), free(got);

        /* a constant RGBA8 image (alpha 0, 255 or between) on a background: one colour, the
         * composite rounded to 8 bits */
        splat_image im = {w, h, malloc((size_t)w * h * 4)}, out;
        uint8_t px[4] = {(uint8_t)rnd(256), (uint8_t)rnd(256), (uint8_t)rnd(256),
                         (uint8_t)(trial % 3 == 0 ? 255 : trial % 3 == 1 ? 0 : rnd(256))};
        float bg[3] = {(float)t_uniform(0, 1), (float)t_uniform(0, 1), (float)t_uniform(0, 1)};
        for (size_t i = 0; i < (size_t)w * h; i++) memcpy(im.rgba + 4 * i, px, 4);
        T_OK(splat__image_resample(&im, bg, w2, h2, &out, &err), &err);
        T_REQUIRE(out.width == w2 && out.height == h2, "%ux%u, asked %ux%u", out.width, out.height, w2, h2);
        uint8_t want[4] = {0, 0, 0, 255};
        for (int k = 0; k < 3; k++) {
            double v = 255 * (px[k] / 255.0 * px[3] / 255.0 + (1 - px[3] / 255.0) * bg[k]);
            want[k] = (uint8_t)lround(v);
            if (fabs(v - floor(v) - 0.5) < 1e-3) want[k] = out.rgba[k]; /* a tie: either side */
        }
        off = 0;
        for (size_t i = 0; i < (size_t)w2 * h2; i++) off += memcmp(out.rgba + 4 * i, want, 4) != 0;
        T_CHECK(off == 0, "RGBA %u,%u,%u,%u on %.3f,%.3f,%.3f, %ux%u -> %ux%u: %u pixels are not %u,%u,%u,%u", px[0],
                px[1], px[2], px[3], bg[0], bg[1], bg[2], w, h, w2, h2, off, want[0], want[1], want[2], want[3]);
        splat__image_free(&out);
        free(im.rgba);
    }
    for (int trial = 0; trial < 12; trial++) {
        uint32_t w = 2 * (1 + rnd(20)), h = 2 * (1 + rnd(20)), ch = 1 + rnd(4);
        float *src = malloc(sizeof *src * w * h * ch), *got = malloc(sizeof *got * w * h * ch / 4);
        for (size_t i = 0; i < (size_t)w * h * ch; i++) src[i] = (float)rnd(1025) / 1024.0f;
        T_OK(splat__resample(src, w, h, ch, got, w / 2, h / 2, &err), &err);
        uint32_t off = 0;
        for (uint32_t y = 0; y < h / 2; y++)
            for (uint32_t x = 0; x < w / 2; x++)
                for (uint32_t c = 0; c < ch; c++) {
                    const float *p = src + ((size_t)2 * y * w + 2 * x) * ch + c;
                    float mean = (p[0] + p[ch] + p[(size_t)w * ch] + p[(size_t)w * ch + ch]) / 4;
                    off += got[((size_t)y * (w / 2) + x) * ch + c] != mean;
                }
        T_CHECK(off == 0, "%ux%u to half: %u values are not their block's mean", w, h, off);
        free(src), free(got);
    }
}

/* RGBA8 with random alpha (hard edges included) on a random background: the resampling of the
 * composited image (the oracle's, in double), but for the rounding to 8 bits (0.5/255). Filtering
 * colour and alpha apart fails this where bicubic overshoots at an alpha edge. */
SPLAT_TEST(io_resample_rgba_composites)
{
    double worst = 0;
    for (int trial = 0; trial < 24; trial++) {
        uint32_t w, h, w2, h2;
        random_sizes(trial, &w, &h, &w2, &h2);
        splat_image im = {w, h, malloc((size_t)w * h * 4)}, out;
        for (size_t i = 0; i < (size_t)w * h * 4; i++) im.rgba[i] = (uint8_t)rnd(256);
        for (size_t i = 0; i < (size_t)w * h; i += 1 + rnd(3)) im.rgba[4 * i + 3] = rnd(2) ? 0 : 255;
        float bg[3] = {(float)t_uniform(0, 1), (float)t_uniform(0, 1), (float)t_uniform(0, 1)};
        double *comp = malloc(sizeof *comp * w * h * 3), *want = malloc(sizeof *want * w2 * h2 * 3);
        for (size_t i = 0; i < (size_t)w * h; i++) {
            double a = im.rgba[4 * i + 3] / 255.0;
            for (int c = 0; c < 3; c++) comp[3 * i + c] = im.rgba[4 * i + c] / 255.0 * a + bg[c] * (1 - a);
        }
        t_resample_oracle(comp, w, h, 3, want, w2, h2);
        splat_error err = {0};
        T_OK(splat__image_resample(&im, bg, w2, h2, &out, &err), &err);
        double e = 0;
        uint32_t opaque = 0;
        for (size_t i = 0; i < (size_t)w2 * h2; i++) {
            opaque += out.rgba[4 * i + 3] == 255;
            for (int c = 0; c < 3; c++) e = fmax(e, fabs(out.rgba[4 * i + c] / 255.0 - want[3 * i + c]));
        }
        T_CHECK(e <= 0.5 / 255 + 1e-6, "%ux%u -> %ux%u: error %.3g (x255: %.3f)", w, h, w2, h2, e, e * 255);
        T_CHECK(opaque == w2 * h2, "%u of %u pixels not opaque", w2 * h2 - opaque, w2 * h2);
        worst = fmax(worst, e);
        splat__image_free(&out);
        free(im.rgba), free(comp), free(want);
    }
    printf("  largest error: %.3f / 255\n", worst * 255);
}

/* Masks: a pixel counts where the oracle's resampling of the 0/1 mask is at least 0.5. Pixels
 * within 1e-9 of 0.5 but not at it are left out (their side is the rounding's); at half an even
 * size every value is exact, and a block of 2 counting pixels in 4 counts. */
SPLAT_TEST(io_resample_mask)
{
    uint32_t halves = 0;
    for (int trial = 0; trial < 32; trial++) {
        uint32_t w, h, w2, h2;
        random_sizes(trial, &w, &h, &w2, &h2);
        if (trial % 4 == 3) w = 2 * (1 + rnd(20)), h = 2 * (1 + rnd(20)), w2 = w / 2, h2 = h / 2;
        uint8_t *mask = malloc((size_t)w * h);
        double *md = malloc(sizeof *md * w * h), *want = malloc(sizeof *want * w2 * h2);
        /* a disc, some noise, and a value other than 1 that counts */
        double cx = t_uniform(0, w), cy = t_uniform(0, h), r = t_uniform(0.5, 0.7 * (w > h ? w : h));
        for (uint32_t y = 0; y < h; y++)
            for (uint32_t x = 0; x < w; x++) {
                bool in = (x - cx) * (x - cx) + (y - cy) * (y - cy) < r * r;
                if (rnd(8) == 0) in = !in;
                mask[(size_t)y * w + x] = in ? (uint8_t)(1 + rnd(255)) : 0;
                md[(size_t)y * w + x] = in;
            }
        t_resample_oracle(md, w, h, 1, want, w2, h2);
        uint8_t *got = NULL;
        splat_error err = {0};
        T_OK(splat__mask_resample(mask, w, h, w2, h2, &got, &err), &err);
        uint32_t off = 0;
        for (size_t i = 0; i < (size_t)w2 * h2; i++) {
            if (want[i] != 0.5 && fabs(want[i] - 0.5) < 1e-9) continue;
            off += got[i] != (want[i] >= 0.5);
            halves += want[i] == 0.5;
        }
        T_CHECK(off == 0, "%ux%u -> %ux%u: %u pixels on the wrong side", w, h, w2, h2, off);
        splat__free(got);
        free(mask), free(md), free(want);
    }
    printf("  %u pixels at exactly 0.5\n", halves);
}
