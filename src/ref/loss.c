/* ref/loss.c: the training loss of docs/TRAIN.md, L = (1 - lambda) L1 + lambda (1 - SSIM) with
 * SSIM over the "valid" window positions, with or without a mask ("With a mask"), its exact
 * gradient, and the evaluation metrics. Every window's sums are evaluated directly: O(H W 121)
 * and no scratch memory. */
#include "ref/ref_train.h"

#define WIN SPLAT_REF_SSIM_WIN
#define HALF (SPLAT_REF_SSIM_WIN / 2)

/* The normalised 1D Gaussian window g [11]; the 2D window is g_a g_b. */
static void ssim_window(double g[WIN])
{
    double sum = 0;
    for (int k = 0; k < WIN; k++) {
        double d = k - HALF;
        g[k] = exp(-d * d / (2 * SPLAT_REF_SSIM_SIGMA * SPLAT_REF_SSIM_SIGMA));
        sum += g[k];
    }
    for (int k = 0; k < WIN; k++) g[k] /= sum;
}

/* One image as either float or double, so both entry points share one implementation. */
typedef struct img {
    const float *f;
    const double *d;
} img;

static double at(img im, size_t k) { return im.f ? (double)im.f[k] : im.d[k]; }

/* The mask's value at pixel p (1 without a mask). */
static double mask_at(const uint8_t *mask, size_t p) { return !mask || mask[p] ? 1.0 : 0.0; }

static void loss(img x, img y, const uint8_t *mask, uint32_t w, uint32_t h, double lambda, splat_ref_loss_value *out,
                 double *d_x)
{
    SPLAT_ASSERT(w >= 1 && h >= 1 && out);
    size_t px = (size_t)w * h, n = 0;
    for (size_t p = 0; p < px; p++) n += mask_at(mask, p) != 0;
    n *= 3;

    /* L1 (and its derivative, 0 at the kink as torch's sign), MSE and PSNR of clamped x, over
     * the pixels that count; MSE and PSNR over all of them too. */
    double l1 = 0, se = 0, se_full = 0;
    for (size_t k = 0; k < 3 * px; k++) {
        double m = mask_at(mask, k / 3), xv = at(x, k), yv = at(y, k), diff = xv - yv;
        double xc = fmin(fmax(xv, 0), 1);
        se_full += (xc - yv) * (xc - yv);
        if (d_x) d_x[k] = m * (diff > 0 ? 1.0 : diff < 0 ? -1.0 : 0.0) * (1 - lambda) / (double)(n ? n : 1);
        if (m == 0) continue;
        l1 += fabs(diff);
        se += (xc - yv) * (xc - yv);
    }
    out->l1 = n ? l1 / (double)n : 0;
    out->mse = n ? se / (double)n : 0;
    out->psnr = out->mse > 0 ? -10 * log10(out->mse) : HUGE_VAL;
    out->mse_full = se_full / (double)(3 * px);
    out->psnr_full = out->mse_full > 0 ? -10 * log10(out->mse_full) : HUGE_VAL;

    /* SSIM, on x' = m x and y' = m y, over the valid windows whose centre counts: no such window
     * (an image smaller than the window, or a mask that ignores every centre) gives 1. */
    double ssim = 1;
    size_t nwin = 0;
    for (uint32_t i = 0; i + WIN <= h; i++)
        for (uint32_t j = 0; j + WIN <= w; j++) nwin += 3 * (mask_at(mask, (size_t)(i + HALF) * w + j + HALF) != 0);
    if (nwin > 0) {
        double g[WIN];
        ssim_window(g);
        double dscale = -lambda / (double)nwin; /* dL/d(ssim of one window and channel) */
        double sum = 0;
        for (uint32_t i = 0; i + WIN <= h; i++)
            for (uint32_t j = 0; j + WIN <= w; j++)
                for (int c = 0; c < 3; c++) {
                    if (mask_at(mask, (size_t)(i + HALF) * w + j + HALF) == 0) continue;
                    double mx = 0, my = 0, exx = 0, eyy = 0, exy = 0;
                    for (int a = 0; a < WIN; a++)
                        for (int b = 0; b < WIN; b++) {
                            size_t k = ((size_t)(i + a) * w + (j + b)) * 3 + c;
                            double m = mask_at(mask, k / 3);
                            double wt = g[a] * g[b], xv = m * at(x, k), yv = m * at(y, k);
                            mx += wt * xv, my += wt * yv;
                            exx += wt * xv * xv, eyy += wt * yv * yv, exy += wt * xv * yv;
                        }
                    double sxx = exx - mx * mx, syy = eyy - my * my, sxy = exy - mx * my;
                    double n1 = 2 * mx * my + SPLAT_REF_SSIM_C1, n2 = 2 * sxy + SPLAT_REF_SSIM_C2;
                    double d1 = mx * mx + my * my + SPLAT_REF_SSIM_C1, d2 = sxx + syy + SPLAT_REF_SSIM_C2;
                    double f = n1 * n2 / (d1 * d2);
                    sum += f;
                    if (!d_x) continue;
                    /* f as a function of (mx, sxx, sxy), written without dividing by n1 or n2
                     * (they can vanish when x or y is negative): */
                    double df_dmx = 2 * my * n2 / (d1 * d2) - f * 2 * mx / d1;
                    double df_dsxx = -f / d2;
                    double df_dsxy = 2 * n1 / (d1 * d2);
                    /* ... and of (mx, exx, exy): sxx = exx - mx^2, sxy = exy - mx my. Then
                     * d mx / dx_p = wt_p, d exx / dx_p = 2 wt_p x_p, d exy / dx_p = wt_p y_p. */
                    double A = df_dmx - 2 * mx * df_dsxx - my * df_dsxy;
                    for (int a = 0; a < WIN; a++)
                        for (int b = 0; b < WIN; b++) {
                            size_t k = ((size_t)(i + a) * w + (j + b)) * 3 + c;
                            double m = mask_at(mask, k / 3), wt = g[a] * g[b];
                            /* d x'/d x = m */
                            d_x[k] += m * dscale * wt * (A + 2 * df_dsxx * m * at(x, k) + df_dsxy * m * at(y, k));
                        }
                }
        ssim = sum / (double)nwin;
    }
    out->ssim = ssim;
    out->loss = n ? (1 - lambda) * out->l1 + lambda * (1 - ssim) : 0;
}

void splat__ref_loss(const float *x, const float *y, uint32_t w, uint32_t h, double lambda,
                    splat_ref_loss_value *out, double *d_x)
{
    SPLAT_ASSERT(x && y);
    loss((img){.f = x}, (img){.f = y}, NULL, w, h, lambda, out, d_x);
}

void splat__ref_loss_masked(const float *x, const float *y, const uint8_t *mask, uint32_t w, uint32_t h, double lambda,
                            splat_ref_loss_value *out, double *d_x)
{
    SPLAT_ASSERT(x && y);
    loss((img){.f = x}, (img){.f = y}, mask, w, h, lambda, out, d_x);
}

void splat__ref_loss_double(const double *x, const double *y, uint32_t w, uint32_t h, double lambda,
                           splat_ref_loss_value *out, double *d_x)
{
    SPLAT_ASSERT(x && y);
    loss((img){.d = x}, (img){.d = y}, NULL, w, h, lambda, out, d_x);
}
