/* ref/sh.c: the real spherical-harmonics basis of docs/RASTER.md 1.9 (gsplat's
 * sh_coeffs_to_color_fast) and its derivative with respect to the direction. */
#include "ref/ref_internal.h"

#define C0 0.2820947917738781
#define C1 0.48860251190292
#define C2A 0.5462742152960395   /* Y4, Y8 */
#define C2B (-1.092548430592079) /* fTmp0B / z: Y5, Y7 */
#define C2C 0.9461746957575601   /* Y6 */
#define C2D 0.3153915652525201
#define C3A (-0.5900435899266435) /* Y9, Y15 */
#define C3B 1.445305721320277     /* fTmp1B / z: Y10, Y14 */
#define C3C (-2.285228997322329)  /* fTmp0C */
#define C3D 0.4570457994644658
#define C3E 1.865881662950577     /* Y12 */
#define C3F 1.119528997770346

void splat__ref_sh_basis(const double dir[3], double Y[16])
{
    double x = dir[0], y = dir[1], z = dir[2];
    double z2 = z * z, fC1 = x * x - y * y, fS1 = 2 * x * y;
    double fTmp0C = C3C * z2 + C3D;
    double fC2 = x * fC1 - y * fS1, fS2 = x * fS1 + y * fC1;
    Y[0] = C0;
    Y[1] = -C1 * y;
    Y[2] = C1 * z;
    Y[3] = -C1 * x;
    Y[4] = C2A * fS1;
    Y[5] = C2B * z * y;
    Y[6] = C2C * z2 - C2D;
    Y[7] = C2B * z * x;
    Y[8] = C2A * fC1;
    Y[9] = C3A * fS2;
    Y[10] = C3B * z * fS1;
    Y[11] = fTmp0C * y;
    Y[12] = z * (C3E * z2 - C3F);
    Y[13] = fTmp0C * x;
    Y[14] = C3B * z * fC1;
    Y[15] = C3A * fC2;
}

/* Differentiated by hand from the polynomials above, with fC2 = x^3 - 3 x y^2 and
 * fS2 = 3 x^2 y - y^3; the finite-difference tests check it through the colour. */
void splat__ref_sh_basis_grad(const double dir[3], double dY[16][3])
{
    double x = dir[0], y = dir[1], z = dir[2];
    double fC1 = x * x - y * y;
    double fTmp0C = C3C * z * z + C3D;
    memset(dY, 0, sizeof(double) * 16 * 3);
    dY[1][1] = -C1;
    dY[2][2] = C1;
    dY[3][0] = -C1;
    dY[4][0] = 2 * C2A * y, dY[4][1] = 2 * C2A * x;
    dY[5][1] = C2B * z, dY[5][2] = C2B * y;
    dY[6][2] = 2 * C2C * z;
    dY[7][0] = C2B * z, dY[7][2] = C2B * x;
    dY[8][0] = 2 * C2A * x, dY[8][1] = -2 * C2A * y;
    dY[9][0] = C3A * 6 * x * y, dY[9][1] = C3A * 3 * fC1;
    dY[10][0] = C3B * 2 * y * z, dY[10][1] = C3B * 2 * x * z, dY[10][2] = C3B * 2 * x * y;
    dY[11][1] = fTmp0C, dY[11][2] = 2 * C3C * z * y;
    dY[12][2] = 3 * C3E * z * z - C3F;
    dY[13][0] = fTmp0C, dY[13][2] = 2 * C3C * z * x;
    dY[14][0] = C3B * 2 * x * z, dY[14][1] = -C3B * 2 * y * z, dY[14][2] = C3B * fC1;
    dY[15][0] = C3A * 3 * fC1, dY[15][1] = -C3A * 6 * x * y;
}
