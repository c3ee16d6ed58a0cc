/* io: where a capture's cameras look, and how far they stand from it: the world unit of gsplat's
 * COLMAP loader (its examples/datasets/normalize.py, similarity_from_cameras, "focus" centre),
 * which rescales every capture so that this distance is 1. Quantities that are not invariant to
 * the world's unit, as the MCMC position noise is not (docs/TRAIN.md, "MCMC"), use it to be
 * gsplat's in any capture's units. */
#include <stdlib.h>

#include "io/io_util.h"

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* numpy's median: the mean of the two middle values of an even count. Sorts v. */
static double median(double *v, uint32_t n)
{
    qsort(v, n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

double splat__focus_distance(const splat_camera *cams, uint32_t n)
{
    if (n == 0) return 1.0;
    for (uint32_t i = 0; i < n; i++)
        for (int k = 0; k < 12; k++)
            if (!isfinite(k < 9 ? cams[i].R[k] : cams[i].t[k - 9])) return 1.0;
    double *centre = malloc(sizeof(double) * 3 * n), *fwd = malloc(sizeof(double) * 3 * n),
           *tmp = malloc(sizeof(double) * n);
    double d = 1.0;
    if (!centre || !fwd || !tmp) goto done;
    /* the world's up: the mean of the cameras' up (-y of each camera, in the world) */
    double up[3] = {0, 0, 0};
    for (uint32_t i = 0; i < n; i++)
        for (int k = 0; k < 3; k++) up[k] -= cams[i].R[3 + k] / n;
    double len = sqrt(up[0] * up[0] + up[1] * up[1] + up[2] * up[2]);
    for (int k = 0; k < 3; k++) up[k] = len > 0 ? up[k] / len : 0;
    /* the rotation taking it to -y (Rodrigues' formula on up x (0,-1,0)), or a flip of x when it
     * is +y already */
    double c = -up[1], w[3] = {up[2], 0, -up[0]};
    double K[9] = {0, -w[2], w[1], w[2], 0, -w[0], -w[1], w[0], 0}, A[9];
    for (int r = 0; r < 3; r++)
        for (int q = 0; q < 3; q++) {
            double kk = 0;
            for (int m = 0; m < 3; m++) kk += K[3 * r + m] * K[3 * m + q];
            A[3 * r + q] = c > -1 ? (r == q) + K[3 * r + q] + kk / (1 + c) : (r == q) * (r == 0 ? -1 : 1);
        }
    for (uint32_t i = 0; i < n; i++) {
        const float *R = cams[i].R, *t = cams[i].t;
        double ctr[3], f[3];
        for (int k = 0; k < 3; k++) {
            ctr[k] = -(R[k] * t[0] + R[3 + k] * t[1] + R[6 + k] * t[2]);
            f[k] = R[6 + k]; /* the viewing direction, +z of the camera */
        }
        for (int r = 0; r < 3; r++) {
            centre[3 * i + r] = A[3 * r] * ctr[0] + A[3 * r + 1] * ctr[1] + A[3 * r + 2] * ctr[2];
            fwd[3 * i + r] = A[3 * r] * f[0] + A[3 * r + 1] * f[1] + A[3 * r + 2] * f[2];
        }
    }
    /* the focus: the median over cameras (per axis) of the point of each one's viewing axis
     * nearest the origin */
    double focus[3];
    for (int k = 0; k < 3; k++) {
        for (uint32_t i = 0; i < n; i++) {
            const double *p = &centre[3 * i], *f = &fwd[3 * i];
            double s = -(p[0] * f[0] + p[1] * f[1] + p[2] * f[2]);
            tmp[i] = p[k] + s * f[k];
        }
        focus[k] = median(tmp, n);
    }
    for (uint32_t i = 0; i < n; i++) {
        double dx = centre[3 * i] - focus[0], dy = centre[3 * i + 1] - focus[1], dz = centre[3 * i + 2] - focus[2];
        tmp[i] = sqrt(dx * dx + dy * dy + dz * dz);
    }
    d = median(tmp, n);
    if (!(d > 0) || !isfinite(d)) d = 1.0;
done:
    free(centre), free(fwd), free(tmp);
    return d;
}
