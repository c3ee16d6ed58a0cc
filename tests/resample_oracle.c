#include "resample_oracle.h"

#include <math.h>
#include <stdlib.h>

/* Keys (1981), eq. 15, with a = -0.5 */
static double cubic(double s)
{
    const double a = -0.5;
    s = fabs(s);
    if (s <= 1) return (a + 2) * s * s * s - (a + 3) * s * s + 1;
    if (s < 2) return a * s * s * s - 5 * a * s * s + 8 * a * s - 4 * a;
    return 0;
}

double t_resample_weight(uint32_t i, uint32_t k, uint32_t n, uint32_t n2)
{
    double scale = (double)n / n2;
    if (n2 == n) return i == k;
    if (n2 < n) {
        double lo = i * scale, hi = (i + 1) * scale;
        double inside = fmin(k + 1.0, hi) - fmax((double)k, lo);
        return inside > 0 ? inside / scale : 0;
    }
    double x = (i + 0.5) * scale - 0.5, w = 0;
    for (long t = (long)floor(x) - 1; t <= (long)floor(x) + 2; t++) {
        long clamped = t < 0 ? 0 : t >= (long)n ? (long)n - 1 : t;
        if (clamped == (long)k) w += cubic(x - (double)t);
    }
    return w;
}

void t_resample_oracle(const double *src, uint32_t w, uint32_t h, uint32_t channels, double *dst, uint32_t w2,
                       uint32_t h2)
{
    double *wx = malloc(sizeof *wx * w2 * w), *wy = malloc(sizeof *wy * h2 * h);
    for (uint32_t i = 0; i < w2; i++)
        for (uint32_t k = 0; k < w; k++) wx[(size_t)i * w + k] = t_resample_weight(i, k, w, w2);
    for (uint32_t i = 0; i < h2; i++)
        for (uint32_t k = 0; k < h; k++) wy[(size_t)i * h + k] = t_resample_weight(i, k, h, h2);
    for (uint32_t y = 0; y < h2; y++)
        for (uint32_t x = 0; x < w2; x++)
            for (uint32_t c = 0; c < channels; c++) {
                double v = 0;
                for (uint32_t sy = 0; sy < h; sy++) {
                    double a = wy[(size_t)y * h + sy];
                    if (a == 0) continue;
                    for (uint32_t sx = 0; sx < w; sx++)
                        v += a * wx[(size_t)x * w + sx] * src[((size_t)sy * w + sx) * channels + c];
                }
                dst[((size_t)y * w2 + x) * channels + c] = v < 0 ? 0 : v > 1 ? 1 : v;
            }
    free(wx);
    free(wy);
}
