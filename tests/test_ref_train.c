/* Tests of the CPU reference of the training step (src/ref/ref_train.h): the loss against
 * central finite differences, closed forms and a brute-force SSIM written another way; Adam
 * against a hand-computed example and torch's formulation; the schedules; refine on scenes
 * built so that every Gaussian is far from every threshold; the split generator. */
#include <float.h>

#include "harness.h"
#include "ref/ref_train.h"

/* ------------------------------------------------------------------------ helpers */

static uint32_t rand_u32(uint32_t lo, uint32_t hi) /* inclusive */
{
    return lo + (uint32_t)(splat__rng_u64(splat_test_rng()) % (hi - lo + 1));
}

static double normal(void) { return splat__rng_normal(splat_test_rng()); }

static bool all_finite(const double *v, size_t n)
{
    for (size_t k = 0; k < n; k++)
        if (!isfinite(v[k])) return false;
    return true;
}

static double rel_err(double got, double want, double floor)
{
    return fabs(got - want) / fmax(fabs(want), floor);
}

static double sigmoid(double x) { return 1 / (1 + exp(-x)); }

static void quat_to_matrix(const double q[4], double R[9])
{
    double n = sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
    double w = q[0] / n, x = q[1] / n, y = q[2] / n, z = q[3] / n;
    R[0] = 1 - 2 * (y * y + z * z), R[1] = 2 * (x * y - w * z), R[2] = 2 * (x * z + w * y);
    R[3] = 2 * (x * y + w * z), R[4] = 1 - 2 * (x * x + z * z), R[5] = 2 * (y * z - w * x);
    R[6] = 2 * (x * z - w * y), R[7] = 2 * (y * z + w * x), R[8] = 1 - 2 * (x * x + y * y);
}

/* ------------------------------------------------------------------------ loss */

/* Central differences of the double loss, step FD_H; x in [0, 1] and |x - y| >= FD_GAP, so the
 * L1 kink is never within reach of a step. The loss is O(1) and evaluated in double, so the
 * differences' rounding is ~1e-15 / FD_H = 1e-10 absolute against gradients ~1 / (3 H W) >=
 * 1e-5, and their truncation error is O(FD_H^2): FD_TOL, relative to the largest |gradient|,
 * leaves a margin of 100x on both. */
#define FD_H 1e-5
#define FD_GAP 1e-3
#define FD_TOL 1e-6

enum { Y_INDEPENDENT, Y_NEAR, Y_SIGNED, Y_VARIANTS };

/* x: [n] in [0, 1]; y: [n], depending on the variant: independent in [0, 1], x plus noise (the
 * regime of training, SSIM near 1) or in [-1, 1] (negative means). */
static void random_pair(double *x, double *y, size_t n, int variant)
{
    for (size_t k = 0; k < n; k++) {
        x[k] = t_uniform(0, 1);
        do {
            if (variant == Y_INDEPENDENT) y[k] = t_uniform(0, 1);
            else if (variant == Y_NEAR) y[k] = x[k] + 0.05 * normal();
            else y[k] = t_uniform(-1, 1);
        } while (fabs(x[k] - y[k]) < FD_GAP);
    }
}

static double loss_at(double *x, const double *y, uint32_t w, uint32_t h, double lambda, size_t e, double dx)
{
    double keep = x[e];
    splat_ref_loss_value v;
    x[e] = keep + dx;
    splat__ref_loss_double(x, y, w, h, lambda, &v, NULL);
    x[e] = keep;
    return v.loss;
}

SPLAT_TEST(ref_train_loss_grad_fd)
{
    /* Sizes: both under 11; exactly 11; one under and one over; both over, non-square; large
     * (checked on a subset of elements, the window's borders included, and along a direction). */
    int offset = (int)rand_u32(0, Y_VARIANTS - 1);
    for (int cs = 0; cs < 5; cs++) {
        uint32_t w, h;
        if (cs == 0) w = rand_u32(1, 10), h = rand_u32(1, 10);
        else if (cs == 1) w = 11, h = 11;
        else if (cs == 2) w = rand_u32(3, 10), h = rand_u32(11, 24);
        else if (cs == 3) {
            w = rand_u32(12, 20);
            do h = rand_u32(12, 20);
            while (h == w);
        } else w = rand_u32(40, 64), h = rand_u32(30, 48);
        if (cs == 2 && rand_u32(0, 1)) {
            uint32_t s = w;
            w = h, h = s;
        }
        int variant = (cs + offset) % Y_VARIANTS;
        double lambda = t_uniform(0.05, 0.95);
        size_t n = (size_t)w * h * 3;
        double *x = malloc(sizeof(double) * n), *y = malloc(sizeof(double) * n), *g = malloc(sizeof(double) * n);
        double *xd = malloc(sizeof(double) * n);
        T_REQUIRE(x && y && g && xd);
        random_pair(x, y, n, variant);
        splat_ref_loss_value v;
        splat__ref_loss_double(x, y, w, h, lambda, &v, g);
        T_CHECK(all_finite(g, n) && isfinite(v.loss), "%ux%u", w, h);
        double gmax = 0, gsum = 0;
        for (size_t k = 0; k < n; k++) gmax = fmax(gmax, fabs(g[k])), gsum += fabs(g[k]);

        /* The elements to check: all, or 80 random ones plus the corners and the pixels where
         * the count of windows covering a row or column changes. */
        size_t n_check = n <= 1500 ? n : 80 + 8 * 3;
        double worst = 0;
        size_t worst_e = 0;
        for (size_t c = 0; c < n_check; c++) {
            size_t e = c;
            if (n > 1500) {
                if (c < 80) e = rand_u32(0, (uint32_t)n - 1);
                else {
                    uint32_t q = (uint32_t)(c - 80) / 3, ch = (uint32_t)(c - 80) % 3;
                    uint32_t rows[8] = {0, 0, h - 1, h - 1, 9, 10, h - 11, h - 10};
                    uint32_t cols[8] = {0, w - 1, 0, w - 1, 10, 9, w - 10, w - 11};
                    e = ((size_t)rows[q] * w + cols[q]) * 3 + ch;
                }
            }
            double fd = (loss_at(x, y, w, h, lambda, e, FD_H) - loss_at(x, y, w, h, lambda, e, -FD_H)) / (2 * FD_H);
            double err = fabs(fd - g[e]) / gmax;
            if (err > worst) worst = err, worst_e = e;
        }
        T_CHECK(worst <= FD_TOL, "%ux%u variant %d lambda %.3f: element %zu: analytic %.9e, error %.2e of max %.3e",
                w, h, variant, lambda, worst_e, g[worst_e], worst, gmax);

        /* Along a random direction of +-1 in every element. */
        double dot = 0;
        for (size_t k = 0; k < n; k++) {
            double d = rand_u32(0, 1) ? 1 : -1;
            dot += d * g[k];
            xd[k] = d;
        }
        double lp, lm;
        for (size_t k = 0; k < n; k++) x[k] += FD_H * xd[k];
        splat__ref_loss_double(x, y, w, h, lambda, &v, NULL);
        lp = v.loss;
        for (size_t k = 0; k < n; k++) x[k] -= 2 * FD_H * xd[k];
        splat__ref_loss_double(x, y, w, h, lambda, &v, NULL);
        lm = v.loss;
        double fd = (lp - lm) / (2 * FD_H);
        T_CHECK(fabs(fd - dot) <= FD_TOL * gsum, "%ux%u directional: fd %.12e analytic %.12e", w, h, fd, dot);
        free(x), free(y), free(g), free(xd);
    }
}

SPLAT_TEST(ref_train_ssim_identical)
{
    /* Identical images: SSIM 1, loss 0, gradient 0 (the L1 term's derivative is taken as 0 at
     * x == y; SSIM is at its maximum). Both under and over the window size. */
    for (int cs = 0; cs < 2; cs++) {
        uint32_t w = cs ? rand_u32(11, 40) : rand_u32(1, 10), h = cs ? rand_u32(11, 40) : rand_u32(1, 40);
        size_t n = (size_t)w * h * 3;
        float *x = malloc(sizeof(float) * n);
        double *g = malloc(sizeof(double) * n);
        T_REQUIRE(x && g);
        for (size_t k = 0; k < n; k++) x[k] = (float)t_uniform(0, 1);
        double lambda = t_uniform(0.05, 0.95);
        splat_ref_loss_value v;
        splat__ref_loss(x, x, w, h, lambda, &v, g);
        T_CHECK(fabs(v.ssim - 1) <= 1e-12, "%ux%u: ssim %.17g", w, h, v.ssim);
        T_CHECK(fabs(v.loss) <= 1e-12 && v.l1 == 0 && v.mse == 0, "%ux%u: loss %.3e l1 %.3e", w, h, v.loss, v.l1);
        T_CHECK(v.psnr == HUGE_VAL, "psnr %g", v.psnr);
        /* Gradients are ~1 / n where they are not 0. */
        double gmax = 0;
        for (size_t k = 0; k < n; k++) gmax = fmax(gmax, fabs(g[k]));
        T_CHECK(gmax * (double)n <= 1e-9, "%ux%u: largest |dL/dx| %.3e", w, h, gmax);
        free(x), free(g);
    }
}

SPLAT_TEST(ref_train_ssim_constant)
{
    /* Constant images per channel: every window has mu = the constant and no variance, so
     * ssim = (2 a b + C1) / (a^2 + b^2 + C1); l1, mse and psnr are closed forms too. */
    uint32_t w = rand_u32(11, 30), h = rand_u32(11, 30);
    size_t n = (size_t)w * h * 3;
    float *x = malloc(sizeof(float) * n), *y = malloc(sizeof(float) * n);
    double *g = malloc(sizeof(double) * n);
    T_REQUIRE(x && y && g);
    float a[3], b[3];
    double ssim = 0, l1 = 0, se = 0, C1 = SPLAT_REF_SSIM_C1;
    for (int c = 0; c < 3; c++) {
        a[c] = (float)t_uniform(-0.3, 1.3), b[c] = (float)t_uniform(0, 1);
        ssim += (2.0 * a[c] * b[c] + C1) / ((double)a[c] * a[c] + (double)b[c] * b[c] + C1) / 3;
        l1 += fabs((double)a[c] - b[c]) / 3;
        double ac = fmin(fmax(a[c], 0), 1);
        se += (ac - b[c]) * (ac - b[c]) / 3;
    }
    for (size_t k = 0; k < n; k++) x[k] = a[k % 3], y[k] = b[k % 3];
    double lambda = t_uniform(0.05, 0.95);
    splat_ref_loss_value v;
    splat__ref_loss(x, y, w, h, lambda, &v, g);
    T_CHECK(rel_err(v.ssim, ssim, 1) <= 1e-10, "ssim %.15g want %.15g", v.ssim, ssim);
    T_CHECK(rel_err(v.l1, l1, 1) <= 1e-12 && rel_err(v.mse, se, 1e-300) <= 1e-12, "l1 %.15g mse %.15g", v.l1, v.mse);
    T_CHECK(rel_err(v.psnr, -10 * log10(se), 1) <= 1e-12, "psnr %.15g", v.psnr);
    T_CHECK(rel_err(v.loss, (1 - lambda) * l1 + lambda * (1 - ssim), 1) <= 1e-10, "loss %.15g", v.loss);

    /* Under the window size in one dimension: SSIM is 1 by definition, so loss and gradient
     * are the L1 term's exactly. */
    uint32_t ws = rand_u32(1, 10);
    size_t ns = (size_t)ws * h * 3;
    bool flip = rand_u32(0, 1);
    splat__ref_loss(x, y, flip ? h : ws, flip ? ws : h, lambda, &v, g);
    T_CHECK(v.ssim == 1 && v.loss == (1 - lambda) * v.l1, "small: ssim %.17g loss %.17g", v.ssim, v.loss);
    for (size_t k = 0; k < ns; k++) {
        double want = (x[k] > y[k] ? 1 : x[k] < y[k] ? -1 : 0) * (1 - lambda) / (double)ns;
        T_CHECK(g[k] == want, "small: dL/dx[%zu] = %.17g, want %.17g", k, g[k], want);
        if (g[k] != want) break;
    }
    free(x), free(y), free(g);
}

/* SSIM written another way: the explicit 2D window exp(-(da^2 + db^2) / (2 sigma^2)) normalised
 * over all 121 taps, and the (co)variances as weighted sums of centred products. */
static double brute_ssim(const float *x, const float *y, uint32_t w, uint32_t h)
{
    double win[11][11], wsum = 0;
    for (int a = 0; a < 11; a++)
        for (int b = 0; b < 11; b++) wsum += win[a][b] = exp(-((a - 5) * (a - 5) + (b - 5) * (b - 5)) / 4.5);
    double total = 0;
    for (int c = 0; c < 3; c++)
        for (uint32_t i = 0; i + 11 <= h; i++)
            for (uint32_t j = 0; j + 11 <= w; j++) {
                double px[11][11], py[11][11], mx = 0, my = 0;
                for (int a = 0; a < 11; a++)
                    for (int b = 0; b < 11; b++) {
                        size_t k = ((size_t)(i + a) * w + j + b) * 3 + c;
                        px[a][b] = x[k], py[a][b] = y[k];
                        mx += win[a][b] / wsum * px[a][b], my += win[a][b] / wsum * py[a][b];
                    }
                double vx = 0, vy = 0, cxy = 0;
                for (int a = 0; a < 11; a++)
                    for (int b = 0; b < 11; b++) {
                        double wt = win[a][b] / wsum;
                        vx += wt * (px[a][b] - mx) * (px[a][b] - mx);
                        vy += wt * (py[a][b] - my) * (py[a][b] - my);
                        cxy += wt * (px[a][b] - mx) * (py[a][b] - my);
                    }
                double C1 = 1e-4, C2 = 9e-4;
                total += (2 * mx * my + C1) * (2 * cxy + C2) / ((mx * mx + my * my + C1) * (vx + vy + C2));
            }
    return total / (3.0 * (h - 10) * (w - 10));
}

SPLAT_TEST(ref_train_ssim_brute)
{
    /* x random; y its negation, a value shift, a spatial shift, an affine map, or independent. */
    for (int variant = 0; variant < 5; variant++) {
        uint32_t w = rand_u32(11, 40), h = rand_u32(11, 40);
        size_t n = (size_t)w * h * 3;
        float *x = malloc(sizeof(float) * n), *y = malloc(sizeof(float) * n);
        T_REQUIRE(x && y);
        for (size_t k = 0; k < n; k++) x[k] = (float)t_uniform(0, 1);
        double shift[3] = {t_uniform(-0.5, 0.5), t_uniform(-0.5, 0.5), t_uniform(-0.5, 0.5)};
        double sa = t_uniform(-2, 2), sb = t_uniform(-1, 1);
        uint32_t di = rand_u32(1, h - 1), dj = rand_u32(1, w - 1);
        for (uint32_t i = 0; i < h; i++)
            for (uint32_t j = 0; j < w; j++)
                for (int c = 0; c < 3; c++) {
                    size_t k = ((size_t)i * w + j) * 3 + c;
                    if (variant == 0) y[k] = -x[k];
                    else if (variant == 1) y[k] = (float)(x[k] + shift[c]);
                    else if (variant == 2) y[k] = x[(((i + di) % h) * w + (j + dj) % w) * 3 + c];
                    else if (variant == 3) y[k] = (float)(sa * x[k] + sb);
                    else y[k] = (float)t_uniform(0, 1);
                }
        double lambda = t_uniform(0.05, 0.95), want = brute_ssim(x, y, w, h), l1 = 0;
        for (size_t k = 0; k < n; k++) l1 += fabs((double)x[k] - y[k]) / (double)n;
        splat_ref_loss_value v;
        splat__ref_loss(x, y, w, h, lambda, &v, NULL);
        T_CHECK(rel_err(v.ssim, want, 1) <= 1e-10, "variant %d %ux%u: ssim %.15g brute %.15g", variant, w, h,
                v.ssim, want);
        T_CHECK(rel_err(v.loss, (1 - lambda) * l1 + lambda * (1 - want), 1) <= 1e-10, "variant %d: loss %.15g",
                variant, v.loss);
        free(x), free(y);
    }
}

SPLAT_TEST(ref_train_psnr)
{
    /* Every element off by exactly delta (multiples of 1/256 are exact in float), including
     * elements of x beyond [0, 1] whose clamped value is off by delta: psnr = -20 log10 delta. */
    uint32_t w = rand_u32(1, 40), h = rand_u32(1, 40), d = rand_u32(1, 40);
    size_t n = (size_t)w * h * 3;
    double delta = d / 256.0;
    float *x = malloc(sizeof(float) * n), *y = malloc(sizeof(float) * n);
    T_REQUIRE(x && y);
    for (size_t k = 0; k < n; k++) {
        uint32_t r = rand_u32(0, 9);
        if (r == 0) y[k] = (float)(1 - delta), x[k] = (float)t_uniform(1, 2);
        else if (r == 1) y[k] = (float)delta, x[k] = (float)t_uniform(-1, 0);
        else {
            y[k] = (float)(rand_u32(d, 256 - d) / 256.0);
            x[k] = (float)(y[k] + (rand_u32(0, 1) ? delta : -delta));
        }
    }
    splat_ref_loss_value v;
    splat__ref_loss(x, y, w, h, SPLAT_REF_LAMBDA, &v, NULL);
    T_CHECK(rel_err(v.mse, delta * delta, 0) <= 1e-12, "mse %.17g want %.17g", v.mse, delta * delta);
    T_CHECK(fabs(v.psnr + 20 * log10(delta)) <= 1e-10, "psnr %.15g want %.15g", v.psnr, -20 * log10(delta));
    free(x), free(y);
}

/* ------------------------------------------------------------------------ Adam */

SPLAT_TEST(ref_train_adam_two_steps)
{
    /* Two steps from zero moments with gradients k and -k/2 (k > 0). By hand:
     * step 1: m = 0.1 k, v = 0.001 k^2, m^ = k, v^ = k^2: update lr k / k = lr.
     * step 2: m = 0.09 k - 0.05 k = 0.04 k, v = 0.000999 k^2 + 0.00025 k^2 = 0.001249 k^2,
     *         m^ = 0.04 k / 0.19 = (4/19) k, v^ = 0.001249 k^2 / 0.001999,
     *         update lr (4/19) / sqrt(1249/1999) = lr 0.26633703966040258 (exact to 17 digits).
     * Independent of k up to eps / |k| <= 1e-13. */
    const double u2 = 0.26633703966040258;
    uint32_t n = rand_u32(1, 50);
    double p[50], p0[50], g[50], m[50] = {0}, v[50] = {0}, k[50];
    double lr = exp(t_uniform(log(1e-5), log(1)));
    for (uint32_t e = 0; e < n; e++) {
        p0[e] = p[e] = t_uniform(-10, 10);
        k[e] = exp(t_uniform(log(1e-2), log(1e3))) * (rand_u32(0, 1) ? 1 : -1);
        g[e] = k[e];
    }
    splat__ref_adam(n, p, g, m, v, lr, 1);
    for (uint32_t e = 0; e < n; e++) g[e] = -k[e] / 2;
    splat__ref_adam(n, p, g, m, v, lr, 2);
    for (uint32_t e = 0; e < n; e++) {
        double sgn = k[e] > 0 ? 1 : -1, want = p0[e] - sgn * lr * (1 + u2);
        T_CHECK(fabs(p[e] - want) <= 1e-12 * fmax(1, fabs(want)), "element %u: p %.17g want %.17g", e, p[e], want);
        T_CHECK(rel_err(m[e], 0.04 * k[e], 0) <= 1e-14 && rel_err(v[e], 0.001249 * k[e] * k[e], 0) <= 1e-14,
                "element %u: m %.17g v %.17g", e, m[e], v[e]);
    }
}

SPLAT_TEST(ref_train_adam_torch)
{
    /* torch.optim.Adam's own arrangement (lerp of m, step_size = lr / bc1, denom = sqrt(v) /
     * sqrt(bc2) + eps, addcdiv), over several steps from a global step t0 that is not 1 and
     * moments that start at zero (as those of a Gaussian born in a refine). */
    uint32_t n = rand_u32(1, 64), steps = rand_u32(2, 6), t0 = rand_u32(1, 30000);
    double p[64], m[64] = {0}, v[64] = {0}, tp[64], tm[64] = {0}, tv[64] = {0}, g[64], gmax[64] = {0};
    double lr = exp(t_uniform(log(1e-5), log(1e-1)));
    for (uint32_t e = 0; e < n; e++) tp[e] = p[e] = t_uniform(-5, 5);
    for (uint32_t s = 0; s < steps; s++) {
        uint32_t t = t0 + s;
        for (uint32_t e = 0; e < n; e++) {
            g[e] = (rand_u32(0, 9) == 0) ? 0 : normal() * exp(t_uniform(-8, 2));
            gmax[e] = fmax(gmax[e], fabs(g[e]));
        }
        splat__ref_adam(n, p, g, m, v, lr, t);
        double bc1 = 1 - pow(0.9, t), bc2 = 1 - pow(0.999, t);
        for (uint32_t e = 0; e < n; e++) {
            tm[e] += (g[e] - tm[e]) * (1 - 0.9);
            tv[e] = tv[e] * 0.999 + (1 - 0.999) * g[e] * g[e];
            double denom = sqrt(tv[e]) / sqrt(bc2) + 1e-15;
            tp[e] += -(lr / bc1) * tm[e] / denom;
        }
    }
    /* m can cancel to near 0, so its rounding is measured against the gradients' size. */
    for (uint32_t e = 0; e < n; e++)
        T_CHECK(fabs(p[e] - tp[e]) <= 1e-12 * fmax(1, fabs(tp[e])) && fabs(m[e] - tm[e]) <= 1e-14 * gmax[e] &&
                    rel_err(v[e], tv[e], 1e-300) <= 1e-12,
                "t0 %u element %u: p %.17g torch %.17g", t0, e, p[e], tp[e]);

    /* The bias correction uses the global step: one step of fresh moments at t moves by
     * lr 0.1 sqrt(1 - 0.999^t) / (sqrt(0.001) (1 - 0.9^t)), not lr. */
    uint32_t t = rand_u32(600, 30000);
    double q = 0, mq = 0, vq = 0, gq = t_uniform(0.1, 10);
    splat__ref_adam(1, &q, &gq, &mq, &vq, lr, t);
    double want = -lr * 0.1 * sqrt(1 - pow(0.999, t)) / (sqrt(0.001) * (1 - pow(0.9, t)));
    T_CHECK(rel_err(q, want, 0) <= 1e-12, "t %u: step %.17g want %.17g", t, q, want);
    /* Zero gradients and zero moments: no motion (eps keeps 0 / 0 away). */
    double z = t_uniform(-1, 1), z0 = z, zg = 0, zm = 0, zv = 0;
    splat__ref_adam(1, &z, &zg, &zm, &zv, lr, t);
    T_CHECK(z == z0, "zero gradient moved %.17g to %.17g", z0, z);
}

SPLAT_TEST(ref_train_schedules)
{
    /* The means' rate against gsplat's ExponentialLR, multiplied step by step. */
    double scale = exp(t_uniform(log(0.1), log(100)));
    uint32_t max_steps = 2 * rand_u32(1, 30000);
    double lr0 = 1.6e-4 * scale;
    T_CHECK(rel_err(splat__ref_means_lr(scale, 0, max_steps), lr0, 0) <= 1e-15, "step 0");
    T_CHECK(rel_err(splat__ref_means_lr(scale, max_steps / 2, max_steps), 0.1 * lr0, 0) <= 1e-13, "half way");
    T_CHECK(rel_err(splat__ref_means_lr(scale, max_steps, max_steps), 0.01 * lr0, 0) <= 1e-13, "end");
    double gamma = pow(0.01, 1.0 / max_steps), lr = lr0;
    for (uint32_t s = 0; s + 1 < max_steps; s++) lr *= gamma;
    T_CHECK(rel_err(splat__ref_means_lr(scale, max_steps - 1, max_steps), lr, 0) <= 1e-9,
            "step max-1 of %u: %.17g chained %.17g", max_steps, splat__ref_means_lr(scale, max_steps - 1, max_steps),
            lr);

    /* SH degree: +1 every 1000 steps up to the scene's. */
    T_CHECK(splat__ref_sh_degree(0, 3) == 0 && splat__ref_sh_degree(999, 3) == 0 && splat__ref_sh_degree(1000, 3) == 1);
    T_CHECK(splat__ref_sh_degree(2999, 3) == 2 && splat__ref_sh_degree(3000, 3) == 3 && splat__ref_sh_degree(UINT32_MAX, 3) == 3);
    T_CHECK(splat__ref_sh_degree(5000, 1) == 1 && splat__ref_sh_degree(rand_u32(0, 100000), 0) == 0);
    uint32_t s = rand_u32(0, 10000), d = rand_u32(0, 3), want = 0;
    while (want < d && (want + 1) * 1000 <= s) want++;
    T_CHECK(splat__ref_sh_degree(s, d) == want, "step %u degree %u: %u, want %u", s, d, splat__ref_sh_degree(s, d), want);

    /* Refine at 600, 700, ..., 14900; resets at 3000, 6000, 9000, 12000. Every step below 20000
     * against those lists, plus a random step beyond. */
    uint32_t n_refine = 0, n_reset = 0;
    for (uint32_t t = 0; t < 20000; t++) {
        bool refine = t >= 600 && t <= 14900 && t % 100 == 0;
        bool reset = t == 3000 || t == 6000 || t == 9000 || t == 12000;
        T_CHECK(splat__ref_refine_due(t) == refine && splat__ref_reset_due(t) == reset, "step %u", t);
        n_refine += splat__ref_refine_due(t), n_reset += splat__ref_reset_due(t);
    }
    T_CHECK(n_refine == 144 && n_reset == 4, "%u refines, %u resets", n_refine, n_reset);
    uint32_t far = 15000 + 3000 * rand_u32(0, 1000000);
    T_CHECK(!splat__ref_refine_due(far) && !splat__ref_reset_due(far), "step %u", far);
}

/* ------------------------------------------------------------------------ RNG */

/* The hash in 64-bit arithmetic, masked: an independent transcription of TRAIN.md. */
static uint32_t hash64(uint32_t x)
{
    uint64_t state = ((uint64_t)x * 747796405ull + 2891336453ull) & 0xffffffffull;
    uint64_t word = (((state >> ((state >> 28) + 4)) ^ state) * 277803737ull) & 0xffffffffull;
    return (uint32_t)(((word >> 22) ^ word) & 0xffffffffull);
}

SPLAT_TEST(ref_train_rng_hash)
{
    /* Known values (computed with Python integers). */
    T_CHECK(splat__ref_hash(0) == 129708002u && splat__ref_hash(1) == 2831084092u);
    T_CHECK(splat__ref_hash(0xdeadbeefu) == 1730779506u && splat__ref_hash(123456789u) == 4272394698u);
    for (int k = 0; k < 10000; k++) {
        uint32_t x = (uint32_t)splat__rng_u64(splat_test_rng());
        T_CHECK(splat__ref_hash(x) == hash64(x), "hash(%u)", x);
        if (splat__ref_hash(x) != hash64(x)) break;
    }
}

SPLAT_TEST(ref_train_rng_uniform)
{
    /* Exact form, range (0, 1), and the first two moments (6 sigma bounds). */
    uint32_t seed = (uint32_t)splat__rng_u64(splat_test_rng()), base = (uint32_t)splat__rng_u64(splat_test_rng());
    const uint32_t n = 100000;
    double sum = 0, sum2 = 0;
    bool ok = true;
    for (uint32_t c = 0; c < n && ok; c++) {
        uint32_t i = base + c / 8, k = c % 8;
        double u = splat__ref_uniform(seed, i, k);
        uint32_t bits = hash64(hash64(hash64(seed) ^ i) ^ k) >> 8;
        ok = u > 0 && u < 1 && u == ((double)bits + 0.5) / 16777216.0;
        T_CHECK(ok, "uniform(%u, %u, %u) = %.17g", seed, i, k, u);
        sum += u, sum2 += u * u;
    }
    double mean = sum / n, var = sum2 / n - mean * mean;
    T_CHECK(fabs(mean - 0.5) <= 6 * sqrt(1.0 / 12 / n), "mean %.6f", mean);
    T_CHECK(fabs(var - 1.0 / 12) <= 6 * sqrt((1.0 / 80 - 1.0 / 144) / n), "variance %.6f", var);
    /* Determinism, and every input matters. */
    uint32_t i = (uint32_t)splat__rng_u64(splat_test_rng());
    double u = splat__ref_uniform(seed, i, 3);
    T_CHECK(u == splat__ref_uniform(seed, i, 3));
    T_CHECK(u != splat__ref_uniform(seed ^ 1, i, 3) && u != splat__ref_uniform(seed, i ^ 1, 3) &&
            u != splat__ref_uniform(seed, i, 2));
}

SPLAT_TEST(ref_train_rng_normals)
{
    /* The six normals of a split: Box-Muller of the numbered uniforms; mean 0, variance 1 per
     * position; children (positions 0..2 vs 3..5) uncorrelated; deterministic. */
    uint32_t seed = (uint32_t)splat__rng_u64(splat_test_rng()), base = (uint32_t)splat__rng_u64(splat_test_rng());
    const uint32_t n = 40000;
    double s1[6] = {0}, s2[6] = {0}, cross = 0;
    for (uint32_t c = 0; c < n; c++) {
        double z[6], again[6];
        splat__ref_split_normals(seed, base + c, z);
        splat__ref_split_normals(seed, base + c, again);
        if (c < 100) {
            T_CHECK(memcmp(z, again, sizeof z) == 0, "not deterministic");
            for (uint32_t j = 0; j < 3; j++) {
                double u1 = splat__ref_uniform(seed, base + c, 2 * j), u2 = splat__ref_uniform(seed, base + c, 2 * j + 1);
                double r = sqrt(-2 * log(u1)), a = 2 * M_PI * u2;
                T_CHECK(fabs(z[2 * j] - r * cos(a)) <= 1e-14 && fabs(z[2 * j + 1] - r * sin(a)) <= 1e-14,
                        "pair %u of %u", j, base + c);
            }
        }
        T_REQUIRE(all_finite(z, 6));
        for (int k = 0; k < 6; k++) s1[k] += z[k], s2[k] += z[k] * z[k];
        cross += z[0] * z[3] + z[1] * z[4] + z[2] * z[5];
    }
    for (int k = 0; k < 6; k++) {
        double mean = s1[k] / n, var = s2[k] / n - mean * mean;
        T_CHECK(fabs(mean) <= 6 / sqrt(n) && fabs(var - 1) <= 6 * sqrt(2.0 / n), "position %d: mean %.4f var %.4f",
                k, mean, var);
    }
    T_CHECK(fabs(cross / (3.0 * n)) <= 6 / sqrt(3.0 * n), "child correlation %.4f", cross / (3.0 * n));
    double a[6], b[6];
    splat__ref_split_normals(seed, base, a);
    splat__ref_split_normals(seed ^ 0x80000000u, base, b);
    T_CHECK(memcmp(a, b, sizeof a) != 0, "seed ignored");
}

/* ------------------------------------------------------------------------ refine */

/* What a crafted Gaussian is built to do. Margins: average gradient <= 1.6e-4 (low) or >= 4e-4
 * (high) against 2e-4 (a quarter of the counts are 0, where the average is grad2d itself); max scale <= 0.005 (small), 0.02..0.06 (medium), 0.11..0.15 (big: its
 * split children, / 1.6, are 0.069..0.094) or 0.2..0.5 (huge: children >= 0.125), times the
 * scene scale, against 0.01 and 0.1; opacity >= 0.076 or <= 0.0025 against 0.005. */
typedef enum cls {
    C_KEEP,        /* low gradient, small or medium, opaque */
    C_CLONE,       /* high gradient, small, opaque: kept and cloned */
    C_SPLIT,       /* high gradient, medium, opaque: two children survive */
    C_PRUNE,       /* low gradient, small or medium, transparent */
    C_CLONE_PRUNE, /* high gradient, small, transparent: original and clone pruned */
    C_SPLIT_PRUNE, /* high gradient, medium, transparent: split, both children pruned */
    C_BIG,         /* low gradient, big or huge, opaque: pruned only after step 3000 */
    C_SPLIT_BIG,   /* high gradient, big, opaque: split, children survive */
    C_SPLIT_HUGE,  /* high gradient, huge, opaque: split, children pruned after step 3000 */
    C_COUNT
} cls;

static bool cls_split(cls c) { return c == C_SPLIT || c == C_SPLIT_PRUNE || c == C_SPLIT_BIG || c == C_SPLIT_HUGE; }
static bool cls_clone(cls c) { return c == C_CLONE || c == C_CLONE_PRUNE; }

typedef struct crafted {
    splat_scene scene;
    float *grad2d, *count;
    cls *cls;
    double scene_scale;
} crafted;

static void crafted_free(crafted *c)
{
    splat_scene_free(&c->scene);
    free(c->grad2d), free(c->count), free(c->cls);
}

static bool crafted_init(crafted *cr, uint32_t n)
{
    memset(cr, 0, sizeof *cr);
    splat_error err = {0};
    if (splat_scene_init(&cr->scene, n, &err) != SPLAT_OK) return false;
    cr->grad2d = malloc(sizeof(float) * (n + 1));
    cr->count = malloc(sizeof(float) * (n + 1));
    cr->cls = malloc(sizeof(cls) * (n + 1));
    if (!cr->grad2d || !cr->count || !cr->cls) return false;
    cr->scene.count = n;
    cr->scene.sh_degree = rand_u32(0, 3);
    double ss = cr->scene_scale = exp(t_uniform(log(0.5), log(20)));
    splat_scene *s = &cr->scene;
    for (uint32_t i = 0; i < n; i++) {
        cls c = cr->cls[i] = (cls)rand_u32(0, C_COUNT - 1);
        bool high = c == C_CLONE || c == C_CLONE_PRUNE || cls_split(c);
        double avg = high ? t_uniform(4e-4, 1e-2) : t_uniform(0, 1.6e-4);
        uint32_t cnt = rand_u32(0, 3) == 0 ? 0 : rand_u32(1, 40);
        cr->count[i] = (float)cnt;
        cr->grad2d[i] = (float)(avg * (cnt ? cnt : 1));
        double smax;
        if (c == C_CLONE || c == C_CLONE_PRUNE || ((c == C_KEEP || c == C_PRUNE) && rand_u32(0, 1)))
            smax = t_uniform(1e-3, 5e-3);
        else if (c == C_SPLIT_BIG || (c == C_BIG && rand_u32(0, 1))) smax = t_uniform(0.11, 0.15);
        else if (c == C_SPLIT_HUGE || c == C_BIG) smax = t_uniform(0.2, 0.5);
        else smax = t_uniform(0.02, 0.06);
        int amax = (int)rand_u32(0, 2);
        for (int k = 0; k < 3; k++)
            s->log_scales[i * 3 + k] = (float)log(ss * smax * (k == amax ? 1 : t_uniform(0.1, 0.99)));
        bool transparent = c == C_PRUNE || c == C_CLONE_PRUNE || c == C_SPLIT_PRUNE;
        s->opacities[i] = (float)(transparent ? t_uniform(-9, -6) : t_uniform(-2.5, 5));
        for (int k = 0; k < 3; k++) s->means[i * 3 + k] = (float)(ss * normal());
        double qs = t_uniform(0.3, 3);
        for (int k = 0; k < 4; k++) s->quats[i * 4 + k] = (float)(qs * normal());
        for (int k = 0; k < 48; k++) s->sh[i * 48 + k] = (float)normal();
    }
    return true;
}

static bool row_equal(const splat_scene *a, uint32_t i, const splat_scene *b, uint32_t j)
{
    return memcmp(a->means + i * 3, b->means + j * 3, 12) == 0 &&
           memcmp(a->log_scales + i * 3, b->log_scales + j * 3, 12) == 0 &&
           memcmp(a->quats + i * 4, b->quats + j * 4, 16) == 0 &&
           memcmp(a->opacities + i, b->opacities + j, 4) == 0 && memcmp(a->sh + i * 48, b->sh + j * 48, 192) == 0;
}

/* Checks out against what the classes dictate at `step` under the budget max_count (UINT32_MAX:
 * none; docs/TRAIN.md, "A budget"); returns false after a failure. */
static bool check_refine_budget(const crafted *cr, uint32_t step, uint32_t run_seed, const splat_ref_refine_out *out,
                                uint32_t max_count)
{
    const splat_scene *in = &cr->scene;
    uint32_t n = in->count;
    bool late = step > 3000;
    /* What the budget allows: kept = unsplit survivors, splits = those whose children survive;
     * the base counts every such split's parent as staying. */
    uint64_t kept = 0, clones = 0, splits = 0;
    for (uint32_t i = 0; i < n; i++) {
        cls c = cr->cls[i];
        kept += c == C_KEEP || c == C_CLONE || (c == C_BIG && !late);
        clones += c == C_CLONE;
        splits += c == C_SPLIT || c == C_SPLIT_BIG || (c == C_SPLIT_HUGE && !late);
    }
    uint64_t base = kept + splits, room = max_count > base ? max_count - base : 0;
    bool binds = kept + clones + 2 * splits > max_count;
    /* made[i]: the clone or split of i is made (a clone of a pruned source, a split whose children
     * are pruned: always, they add nothing); under a binding budget, the candidates of the `room`
     * largest statistics (float grad2d / max(count, 1); ties: the lower row) */
    bool *made = calloc(n + 1, sizeof *made);
    uint32_t *cand = malloc(sizeof(uint32_t) * (n + 1)), m_cand = 0;
    if (!made || !cand) return free(made), free(cand), false;
    for (uint32_t i = 0; i < n; i++) {
        cls c = cr->cls[i];
        bool candidate = c == C_CLONE || c == C_SPLIT || c == C_SPLIT_BIG || (c == C_SPLIT_HUGE && !late);
        if (candidate) cand[m_cand++] = i;
        else made[i] = cls_clone(c) || cls_split(c);
    }
    for (uint32_t a = 0; a < m_cand; a++) { /* selection by rank: the best of the rest, each time */
        uint32_t best = a;
        for (uint32_t b = a + 1; b < m_cand; b++) {
            float sb = cr->grad2d[cand[b]] / fmaxf(cr->count[cand[b]], 1), sbest = cr->grad2d[cand[best]] / fmaxf(cr->count[cand[best]], 1);
            if (sb > sbest || (sb == sbest && cand[b] < cand[best])) best = b;
        }
        uint32_t t = cand[a];
        cand[a] = cand[best], cand[best] = t;
        made[cand[a]] = !binds || a < room;
    }
    free(cand);
    /* The expected sequence: kept non-split rows, clones, first children, second children. */
    uint32_t *esrc = malloc(sizeof(uint32_t) * (3 * n + 1));
    uint8_t *ekind = malloc(3 * n + 1);
    if (!esrc || !ekind) return free(esrc), free(ekind), free(made), false;
    uint32_t m = 0, n_clone = 0, n_split = 0, n_prune = 0;
    for (uint32_t i = 0; i < n; i++) {
        cls c = cr->cls[i];
        n_clone += cls_clone(c) && made[i], n_split += cls_split(c) && made[i];
        if (cls_split(c) && made[i]) continue;
        /* an unsplit split candidate is opaque; big parents go after step 3000 */
        bool gone = c == C_PRUNE || c == C_CLONE_PRUNE || ((c == C_BIG || c == C_SPLIT_BIG) && late);
        if (gone) n_prune++;
        else esrc[m] = i, ekind[m++] = SPLAT_REF_ROW_KEPT;
    }
    for (uint32_t i = 0; i < n; i++)
        if (cr->cls[i] == C_CLONE && made[i]) esrc[m] = i, ekind[m++] = SPLAT_REF_ROW_CLONE;
        else if (cr->cls[i] == C_CLONE_PRUNE) n_prune++;
    for (uint8_t kind = SPLAT_REF_ROW_SPLIT0; kind <= SPLAT_REF_ROW_SPLIT1; kind++)
        for (uint32_t i = 0; i < n; i++) {
            cls c = cr->cls[i];
            if (!made[i]) continue;
            if (c == C_SPLIT || c == C_SPLIT_BIG || (c == C_SPLIT_HUGE && !late)) esrc[m] = i, ekind[m++] = kind;
            else if (c == C_SPLIT_PRUNE || c == C_SPLIT_HUGE) n_prune++;
        }
    free(made);
    if (kept + splits <= max_count)
        T_CHECK(m <= max_count, "step %u: %u rows expected under a budget of %u", step, m, max_count);
    bool ok = true;
    T_CHECK(out->n_clone == n_clone && out->n_split == n_split && out->n_prune == n_prune,
            "step %u: %u clones %u splits %u prunes, want %u %u %u", step, out->n_clone, out->n_split, out->n_prune,
            n_clone, n_split, n_prune);
    T_CHECK(out->scene.count == m && out->scene.sh_degree == in->sh_degree, "step %u: %u rows, want %u", step,
            out->scene.count, m);
    if (out->scene.count != m) ok = false;
    double seedz[6];
    for (uint32_t r = 0; r < m && ok; r++) {
        uint32_t i = esrc[r];
        ok = out->src[r] == i && out->kind[r] == ekind[r];
        T_CHECK(ok, "step %u row %u: source %u kind %u, want %u %u (class %d)", step, r, out->src[r], out->kind[r], i,
                ekind[r], cr->cls[i]);
        if (!ok) break;
        if (ekind[r] == SPLAT_REF_ROW_KEPT || ekind[r] == SPLAT_REF_ROW_CLONE) {
            ok = row_equal(&out->scene, r, in, i);
            T_CHECK(ok, "step %u row %u: not an exact copy of %u", step, r, i);
            continue;
        }
        /* A split child: mean + Rq (exp(s) * z_c), log(exp(s) / 1.6), the rest copied. */
        const splat_scene *o = &out->scene;
        int c = ekind[r] - SPLAT_REF_ROW_SPLIT0;
        splat__ref_split_normals(run_seed ^ step, i, seedz);
        double q[4], R[9], sc[3], bound = 0;
        for (int k = 0; k < 4; k++) q[k] = in->quats[i * 4 + k];
        quat_to_matrix(q, R);
        for (int k = 0; k < 3; k++) sc[k] = exp((double)in->log_scales[i * 3 + k]);
        for (int k = 0; k < 3; k++) {
            double want = in->means[i * 3 + k], mag = fabs(want);
            for (int l = 0; l < 3; l++) want += R[k * 3 + l] * sc[l] * seedz[3 * c + l], mag += sc[l] * fabs(seedz[3 * c + l]);
            bound = 2e-7 * mag; /* one float rounding of each term's sum */
            ok = ok && fabs(o->means[r * 3 + k] - want) <= bound;
            double ls = (double)in->log_scales[i * 3 + k] - log(1.6);
            ok = ok && fabs(o->log_scales[r * 3 + k] - ls) <= 1.2e-7 * fmax(1, fabs(ls));
        }
        ok = ok && memcmp(o->quats + r * 4, in->quats + i * 4, 16) == 0 && o->opacities[r] == in->opacities[i] &&
             memcmp(o->sh + r * 48, in->sh + i * 48, 192) == 0;
        T_CHECK(ok, "step %u row %u: child %d of %u: mean %.9g %.9g %.9g", step, r, c, i, o->means[r * 3],
                o->means[r * 3 + 1], o->means[r * 3 + 2]);
    }
    free(esrc), free(ekind);
    return ok;
}

static bool check_refine(const crafted *cr, uint32_t step, uint32_t run_seed, const splat_ref_refine_out *out)
{
    return check_refine_budget(cr, step, run_seed, out, UINT32_MAX);
}

SPLAT_TEST(ref_train_refine_crafted)
{
    /* One scene, refined before step 3000, at 3000 (large-scale pruning needs s > 3000) and
     * after; counts, order, source map and parameters against the classes. */
    crafted cr;
    uint32_t n = rand_u32(100, 300);
    bool built = crafted_init(&cr, n);
    T_REQUIRE(built);
    uint32_t run_seed = (uint32_t)splat__rng_u64(splat_test_rng());
    uint32_t steps[3] = {100 * rand_u32(6, 29), 3000, 100 * rand_u32(31, 149)};
    for (int k = 0; k < 3; k++) {
        T_CHECK(splat__ref_refine_due(steps[k]));
        splat_ref_refine_out out;
        splat_error err = {0};
        splat_status st = splat__ref_refine(&cr.scene, cr.grad2d, cr.count, steps[k], cr.scene_scale, run_seed, &out, &err);
        T_CHECK(st == SPLAT_OK, "%s", err.msg);
        if (st == SPLAT_OK) {
            bool finite = true;
            for (size_t e = 0; e < (size_t)out.scene.count * 3; e++)
                finite = finite && isfinite(out.scene.means[e]) && isfinite(out.scene.log_scales[e]);
            T_CHECK(finite, "non-finite output");
            check_refine(&cr, steps[k], run_seed, &out);
        }
        splat__ref_refine_out_free(&out);
    }
    crafted_free(&cr);
}

SPLAT_TEST(ref_train_refine_budget)
{
    /* The crafted scene under budgets: none that binds (the same rows as without), one between the
     * base and the full count (some clones or splits cut, the count at most the budget), one below
     * the base (nothing grows, nothing is cut down but what the prune removes), and exactly the
     * full count (nothing cut), before and after step 3000. */
    crafted cr;
    uint32_t n = rand_u32(100, 300);
    bool built = crafted_init(&cr, n);
    T_REQUIRE(built);
    uint32_t run_seed = (uint32_t)splat__rng_u64(splat_test_rng());
    uint32_t steps[2] = {100 * rand_u32(6, 29), 100 * rand_u32(31, 149)};
    for (int k = 0; k < 2; k++) {
        splat_ref_refine_out full;
        splat_error err = {0};
        T_OK(splat__ref_refine(&cr.scene, cr.grad2d, cr.count, steps[k], cr.scene_scale, run_seed, &full, &err), &err);
        uint32_t kept = 0, splits = 0, count = full.scene.count;
        for (uint32_t r = 0; r < count; r++) kept += full.kind[r] == SPLAT_REF_ROW_KEPT, splits += full.kind[r] == SPLAT_REF_ROW_SPLIT0;
        splat__ref_refine_out_free(&full);
        uint32_t base = kept + splits;
        uint32_t budgets[5] = {count + rand_u32(1, 100), count, count > base ? base + rand_u32(0, count - base - 1) : base, base,
                               rand_u32(0, base > 0 ? base - 1 : 0)};
        for (int b = 0; b < 5; b++) {
            splat_ref_refine_out out;
            T_OK(splat__ref_refine_budget(&cr.scene, cr.grad2d, cr.count, steps[k], cr.scene_scale, run_seed, budgets[b], &out,
                                          &err),
                 &err);
            if (b < 4) T_CHECK(out.scene.count <= budgets[b], "step %u: %u rows over a budget of %u", steps[k], out.scene.count, budgets[b]);
            if (b < 2) T_CHECK(out.scene.count == count, "step %u: a budget of %u (the full count %u) cut", steps[k], budgets[b], count);
            if (!check_refine_budget(&cr, steps[k], run_seed, &out, budgets[b])) printf("  budget %u (base %u, full %u)\n", budgets[b], base, count);
            splat__ref_refine_out_free(&out);
        }
    }
    crafted_free(&cr);
}

SPLAT_TEST(ref_train_refine_split_samples)
{
    /* Split-only scenes (medium scale, opaque): the children's offsets, rotated back and divided
     * by the scale, are the generator's normals; the seed is run_seed ^ step; the same inputs
     * give bit-identical output; a zero quaternion rotates by the identity. */
    uint32_t n = rand_u32(200, 400);
    splat_scene s;
    splat_error err = {0};
    T_OK(splat_scene_init(&s, n, &err), &err);
    s.count = n;
    double ss = t_uniform(1, 10);
    float *grad = malloc(sizeof(float) * n), *cnt = malloc(sizeof(float) * n);
    T_REQUIRE(grad && cnt);
    for (uint32_t i = 0; i < n; i++) {
        grad[i] = (float)t_uniform(0.01, 0.1), cnt[i] = (float)rand_u32(1, 30);
        for (int k = 0; k < 3; k++) s.means[i * 3 + k] = (float)(ss * normal());
        for (int k = 0; k < 3; k++) s.log_scales[i * 3 + k] = (float)log(ss * t_uniform(0.02, 0.06));
        for (int k = 0; k < 4; k++) s.quats[i * 4 + k] = i == 0 ? 0.0f : (float)normal();
        s.opacities[i] = (float)t_uniform(-2, 5);
        for (int k = 0; k < 48; k++) s.sh[i * 48 + k] = (float)normal();
    }
    uint32_t run_seed = (uint32_t)splat__rng_u64(splat_test_rng()), step = 100 * rand_u32(6, 149);
    uint32_t step2 = 100 * rand_u32(6, 149);
    splat_ref_refine_out a, b, c;
    T_OK(splat__ref_refine(&s, grad, cnt, step, ss, run_seed, &a, &err), &err);
    T_OK(splat__ref_refine(&s, grad, cnt, step, ss, run_seed, &b, &err), &err);
    /* run_seed ^ step is all that matters (the large-scale prune does not touch these). */
    T_OK(splat__ref_refine(&s, grad, cnt, step2, ss, run_seed ^ step ^ step2, &c, &err), &err);
    T_REQUIRE(a.scene.count == 2 * n && a.n_split == n && a.n_clone == 0 && a.n_prune == 0, "%u rows", a.scene.count);
    T_REQUIRE(b.scene.count == 2 * n && c.scene.count == 2 * n);
    size_t bytes = sizeof(float) * 3 * 2 * n;
    T_CHECK(memcmp(a.scene.means, b.scene.means, bytes) == 0 && memcmp(a.scene.log_scales, b.scene.log_scales, bytes) == 0,
            "not deterministic");
    T_CHECK(memcmp(a.scene.means, c.scene.means, bytes) == 0, "seed is not run_seed ^ step");
    double s1 = 0, s2 = 0, worst = 0;
    for (uint32_t r = 0; r < 2 * n; r++) {
        uint32_t i = a.src[r];
        T_CHECK(i == r % n && a.kind[r] == (r < n ? SPLAT_REF_ROW_SPLIT0 : SPLAT_REF_ROW_SPLIT1), "row %u", r);
        double q[4] = {s.quats[i * 4], s.quats[i * 4 + 1], s.quats[i * 4 + 2], s.quats[i * 4 + 3]};
        double R[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1}, z[6];
        if (i != 0) quat_to_matrix(q, R);
        splat__ref_split_normals(run_seed ^ step, i, z);
        int ch = r < n ? 0 : 1;
        for (int k = 0; k < 3; k++) {
            double off = 0; /* (R^T (child - mean))_k / scale_k */
            for (int l = 0; l < 3; l++) off += R[l * 3 + k] * ((double)a.scene.means[r * 3 + l] - s.means[i * 3 + l]);
            off /= exp((double)s.log_scales[i * 3 + k]);
            worst = fmax(worst, fabs(off - z[3 * ch + k]));
            s1 += off, s2 += off * off;
        }
    }
    /* Means are O(ss) and offsets O(0.04 ss), so float rounding of the mean is ~1e-5 of an offset. */
    T_CHECK(worst <= 1e-4, "offset differs from the normal by %.3e", worst);
    double m6 = 6 * n, mean = s1 / m6, var = s2 / m6 - mean * mean;
    T_CHECK(fabs(mean) <= 6 / sqrt(m6) && fabs(var - 1) <= 6 * sqrt(2 / m6), "offsets: mean %.4f var %.4f", mean, var);
    splat_ref_refine_out d;
    T_OK(splat__ref_refine(&s, grad, cnt, step, ss, run_seed ^ 0x10000u, &d, &err), &err);
    T_CHECK(memcmp(a.scene.means, d.scene.means, bytes) != 0, "run_seed ignored");
    splat__ref_refine_out_free(&a), splat__ref_refine_out_free(&b), splat__ref_refine_out_free(&c);
    splat__ref_refine_out_free(&d);
    splat_scene_free(&s);
    free(grad), free(cnt);
}

SPLAT_TEST(ref_train_refine_edge)
{
    /* An empty scene; a scene whose every Gaussian (and clone) is pruned; counts of zero with a
     * gradient (avg = grad2d / max(count, 1)). */
    splat_error err = {0};
    splat_scene s;
    T_OK(splat_scene_init(&s, 8, &err), &err);
    splat_ref_refine_out out;
    T_OK(splat__ref_refine(&s, NULL, NULL, 600, 1, 7, &out, &err), &err);
    T_CHECK(out.scene.count == 0 && out.n_clone == 0 && out.n_split == 0 && out.n_prune == 0);
    splat__ref_refine_out_free(&out);

    uint32_t n = rand_u32(2, 8);
    float grad[8], cnt[8];
    s.count = n;
    double ss = t_uniform(1, 5);
    for (uint32_t i = 0; i < n; i++) {
        for (int k = 0; k < 3; k++) s.means[i * 3 + k] = (float)normal(), s.log_scales[i * 3 + k] = (float)log(ss * 0.003);
        for (int k = 0; k < 4; k++) s.quats[i * 4 + k] = (float)normal();
        s.opacities[i] = (float)t_uniform(-12, -6);
        memset(s.sh + i * 48, 0, 192);
        grad[i] = (float)(i % 2 ? t_uniform(5e-4, 1e-2) : 0), cnt[i] = 0;
    }
    T_OK(splat__ref_refine(&s, grad, cnt, 100 * rand_u32(6, 149), ss, 7, &out, &err), &err);
    uint32_t clones = n / 2;
    T_CHECK(out.scene.count == 0 && out.n_clone == clones && out.n_prune == n + clones, "%u rows, %u clones, %u prunes",
            out.scene.count, out.n_clone, out.n_prune);
    splat__ref_refine_out_free(&out);
    splat_scene_free(&s);
}

SPLAT_TEST(ref_train_opacity_reset)
{
    /* min(logit, logit(0.01)) row by row; rows at or below it untouched, bit for bit. */
    uint32_t n = rand_u32(1, 500);
    splat_scene s;
    splat_error err = {0};
    T_OK(splat_scene_init(&s, n + 1, &err), &err);
    s.count = n;
    float *before = malloc(sizeof(float) * (n + 1));
    T_REQUIRE(before);
    for (uint32_t i = 0; i <= n; i++) before[i] = s.opacities[i] = (float)t_uniform(-10, 10);
    splat__ref_opacity_reset(&s);
    double lim = log(0.01 / 0.99);
    for (uint32_t i = 0; i < n; i++) {
        bool ok = before[i] <= lim ? s.opacities[i] == before[i] : fabs(s.opacities[i] - lim) <= 1e-6;
        T_CHECK(ok, "row %u: %.9g -> %.9g", i, before[i], s.opacities[i]);
        if (!ok) break;
        T_CHECK(sigmoid(s.opacities[i]) <= 0.01 * (1 + 1e-5));
    }
    T_CHECK(s.opacities[n] == before[n], "row past count changed");
    free(before);
    splat_scene_free(&s);
}


SPLAT_TEST(ref_train_refine_out_of_memory)
{
    /* Each allocation in turn fails until one run succeeds: out-of-memory with a message, out
     * left empty, nothing leaked (ASan checks that part); without a budget and with one (its
     * ranking allocates). */
    crafted cr;
    bool built = crafted_init(&cr, rand_u32(10, 50));
    T_REQUIRE(built);
    for (uint32_t b = 0; b < 2; b++) {
        bool done = false;
        for (int at = 0; at < 32 && !done; at++) {
            t_fail_after = at;
            splat_set_allocator(&t_failing_allocator);
            splat_ref_refine_out out;
            splat_error err = {0};
            splat_status st = splat__ref_refine_budget(&cr.scene, cr.grad2d, cr.count, 600, cr.scene_scale, 1,
                                                       b ? cr.scene.count / 2 : UINT32_MAX, &out, &err);
            splat_set_allocator(NULL);
            t_fail_after = -1;
            done = st == SPLAT_OK;
            if (!done)
                T_CHECK(st == SPLAT_ERR_OUT_OF_HOST_MEMORY && strstr(err.msg, "out of host memory") && !out.src &&
                            !out.scene.means,
                        "fault at allocation %d: %s: %s", at, splat_status_str(st), err.msg);
            else T_CHECK(at >= 8 + (int)b, "succeeded with only %d allocations", at); /* grow, [ranking], 5 scene arrays, src, kind */
            splat__ref_refine_out_free(&out);
        }
        T_CHECK(done, "never succeeded (budget %u)", b);
    }
    crafted_free(&cr);
}
