/* io: resampling images to another size, for evaluation at other scales than training's
 * (docs/TRAIN.md, "Evaluation at other scales"). Each axis is filtered on its own, with a table of
 * taps per output index: area averaging where the axis shrinks, Keys' bicubic where it grows. */
#include "io/io.h"

/* The taps of one axis: output index i reads inputs idx[i * n + k] with weights wt[i * n + k],
 * k < n (unused taps have weight 0). */
typedef struct axis_taps {
    uint32_t n;
    uint32_t *idx;
    double *wt;
} axis_taps;

/* Keys' cubic convolution kernel with a = -0.5 (Catmull-Rom). */
static double keys(double d)
{
    d = fabs(d);
    if (d <= 1) return (1.5 * d - 2.5) * d * d + 1;
    if (d < 2) return ((-0.5 * d + 2.5) * d - 4) * d + 2;
    return 0;
}

static splat_status taps_init(axis_taps *t, uint32_t w, uint32_t w2, splat_error *err)
{
    /* area: an output pixel covers (w / w2) input pixels, which touches at most ceil(w / w2) + 1 */
    t->n = w2 > w ? 4 : (w + w2 - 1) / w2 + 1;
    t->idx = splat__calloc((size_t)w2 * t->n, sizeof *t->idx);
    t->wt = splat__calloc((size_t)w2 * t->n, sizeof *t->wt);
    if (!t->idx || !t->wt) return splat__fail(err, SPLAT_ERR_OUT_OF_HOST_MEMORY, "resample: out of host memory");
    for (uint32_t i = 0; i < w2; i++) {
        uint32_t *idx = t->idx + (size_t)i * t->n;
        double *wt = t->wt + (size_t)i * t->n;
        if (w2 > w) {
            /* the output pixel's centre in input pixels: (i + 0.5) w / w2 - 0.5, one rounding */
            double x = ((2.0 * i + 1) * w - w2) / (2.0 * w2), x0 = floor(x);
            for (uint32_t k = 0; k < 4; k++) {
                double tap = x0 - 1 + k;
                idx[k] = (uint32_t)(tap < 0 ? 0 : tap > w - 1 ? w - 1 : tap);
                wt[k] = keys(x - tap);
            }
        } else {
            /* the footprint [lo, hi) in input pixels; hi of the last output pixel is w exactly */
            double lo = (double)i * w / w2, hi = (double)(i + 1) * w / w2;
            uint32_t k0 = (uint32_t)floor(lo);
            for (uint32_t k = 0; k < t->n && k0 + k < w && k0 + k < hi; k++) {
                idx[k] = k0 + k;
                wt[k] = (fmin(k0 + k + 1.0, hi) - fmax((double)(k0 + k), lo)) / (hi - lo);
            }
        }
    }
    return SPLAT_OK;
}

static void taps_free(axis_taps *t)
{
    splat__free(t->idx);
    splat__free(t->wt);
}

splat_status splat__resample(const float *src, uint32_t w, uint32_t h, uint32_t channels, float *dst, uint32_t w2,
                             uint32_t h2, splat_error *err)
{
    SPLAT_ASSERT(src && dst && w && h && w2 && h2 && channels);
    axis_taps tx = {0}, ty = {0};
    double *rows = splat__malloc((size_t)h * w2 * channels * sizeof *rows); /* [h,w2,channels]: x done */
    splat_status st = rows ? SPLAT_OK : splat__fail(err, SPLAT_ERR_OUT_OF_HOST_MEMORY, "resample: out of host memory");
    if (st == SPLAT_OK) st = taps_init(&tx, w, w2, err);
    if (st == SPLAT_OK) st = taps_init(&ty, h, h2, err);
    if (st != SPLAT_OK) goto done;
    for (uint32_t y = 0; y < h; y++)
        for (uint32_t x = 0; x < w2; x++) {
            double *out = rows + ((size_t)y * w2 + x) * channels;
            for (uint32_t c = 0; c < channels; c++) out[c] = 0;
            for (uint32_t k = 0; k < tx.n; k++) {
                double wk = tx.wt[(size_t)x * tx.n + k];
                const float *in = src + ((size_t)y * w + tx.idx[(size_t)x * tx.n + k]) * channels;
                for (uint32_t c = 0; c < channels; c++) out[c] += wk * in[c];
            }
        }
    for (uint32_t y = 0; y < h2; y++)
        for (uint32_t x = 0; x < w2; x++)
            for (uint32_t c = 0; c < channels; c++) {
                double v = 0;
                for (uint32_t k = 0; k < ty.n; k++)
                    v += ty.wt[(size_t)y * ty.n + k] * rows[((size_t)ty.idx[(size_t)y * ty.n + k] * w2 + x) * channels + c];
                /* bicubic overshoots at edges; area averages of [0, 1] stay in it but for rounding */
                dst[((size_t)y * w2 + x) * channels + c] = (float)fmin(fmax(v, 0.0), 1.0);
            }
done:
    taps_free(&tx);
    taps_free(&ty);
    splat__free(rows);
    return st;
}

splat_status splat__image_resample(const splat_image *src, const float background[3], uint32_t w, uint32_t h,
                                   splat_image *dst, splat_error *err)
{
    SPLAT_ASSERT(src && src->rgba && dst && w && h);
    memset(dst, 0, sizeof *dst);
    size_t n = (size_t)src->width * src->height, n2 = (size_t)w * h;
    float *in = splat__malloc(n * 3 * sizeof *in), *out = splat__malloc(n2 * 3 * sizeof *out);
    dst->rgba = splat__malloc(n2 * 4);
    splat_status st = in && out && dst->rgba ? SPLAT_OK
                                             : splat__fail(err, SPLAT_ERR_OUT_OF_HOST_MEMORY,
                                                           "resample: out of host memory for a %ux%u image", w, h);
    if (st == SPLAT_OK) {
        /* the image as training sees it (gt_pixel in shaders/train_common.glsl) */
        for (size_t p = 0; p < n; p++) {
            const uint8_t *q = src->rgba + 4 * p;
            double a = q[3] / 255.0;
            for (int c = 0; c < 3; c++) in[3 * p + c] = (float)(q[c] / 255.0 * a + (1 - a) * background[c]);
        }
        st = splat__resample(in, src->width, src->height, 3, out, w, h, err);
    }
    if (st == SPLAT_OK) {
        for (size_t p = 0; p < n2; p++) {
            for (int c = 0; c < 3; c++) dst->rgba[4 * p + c] = (uint8_t)lrintf(255.0f * out[3 * p + c]);
            dst->rgba[4 * p + 3] = 255;
        }
        dst->width = w;
        dst->height = h;
    } else {
        splat__image_free(dst);
    }
    splat__free(in);
    splat__free(out);
    return st;
}

splat_status splat__mask_resample(const uint8_t *mask, uint32_t w, uint32_t h, uint32_t w2, uint32_t h2, uint8_t **out,
                                  splat_error *err)
{
    SPLAT_ASSERT(mask && out);
    size_t n = (size_t)w * h, n2 = (size_t)w2 * h2;
    float *in = splat__malloc(n * sizeof *in), *res = splat__malloc(n2 * sizeof *res);
    *out = splat__malloc(n2);
    splat_status st = in && res && *out ? SPLAT_OK
                                        : splat__fail(err, SPLAT_ERR_OUT_OF_HOST_MEMORY,
                                                      "resample: out of host memory for a %ux%u mask", w2, h2);
    if (st == SPLAT_OK) {
        for (size_t p = 0; p < n; p++) in[p] = mask[p] ? 1.0f : 0.0f;
        st = splat__resample(in, w, h, 1, res, w2, h2, err);
    }
    /* as a mask file's pixel counts at half its range (splat__view_mask_load) */
    for (size_t p = 0; p < n2 && st == SPLAT_OK; p++) (*out)[p] = res[p] >= 0.5f;
    if (st != SPLAT_OK) {
        splat__free(*out);
        *out = NULL;
    }
    splat__free(in);
    splat__free(res);
    return st;
}
