/* io: lens distortion, the models COLMAP writes (its camera_models.h formulas), and the
 * undistortion of a view to a pinhole camera at load (docs/TRAIN.md, "Distorted cameras").
 *
 * Coordinates: (u, v) are normalised image coordinates, x / z and y / z in the camera frame; a
 * pixel position p = f (u + du, v + dv) + c in the convention of splat_camera and COLMAP (pixel
 * (i, j) covers [i, i + 1) x [j, j + 1)). */
#include "io/io_util.h"

uint32_t splat__distortion_params(splat_distortion_model model)
{
    switch (model) {
    case SPLAT_DISTORTION_NONE: return 0;
    case SPLAT_DISTORTION_SIMPLE_RADIAL: return 1;
    case SPLAT_DISTORTION_RADIAL: return 2;
    case SPLAT_DISTORTION_OPENCV: return 4;
    case SPLAT_DISTORTION_FULL_OPENCV: return 8;
    case SPLAT_DISTORTION_OPENCV_FISHEYE: return 4;
    case SPLAT_DISTORTION_NERFSTUDIO: return 6;
    }
    return 0;
}

bool splat__distortion_is_zero(const splat_distortion *d)
{
    for (uint32_t k = 0; k < splat__distortion_params(d->model); k++)
        if (d->k[k] != 0) return false;
    return true;
}

void splat__distort(const splat_distortion *d, double u, double v, double *ud, double *vd)
{
    const double *k = d->k;
    double du = 0, dv = 0;
    double u2 = u * u, v2 = v * v, uv = u * v, r2 = u2 + v2;
    switch (d->model) {
    case SPLAT_DISTORTION_NONE: break;
    case SPLAT_DISTORTION_SIMPLE_RADIAL: {
        double radial = k[0] * r2;
        du = u * radial, dv = v * radial;
        break;
    }
    case SPLAT_DISTORTION_RADIAL: {
        double radial = k[0] * r2 + k[1] * r2 * r2;
        du = u * radial, dv = v * radial;
        break;
    }
    case SPLAT_DISTORTION_OPENCV: { /* k1 k2 p1 p2 */
        double radial = k[0] * r2 + k[1] * r2 * r2;
        du = u * radial + 2 * k[2] * uv + k[3] * (r2 + 2 * u2);
        dv = v * radial + 2 * k[3] * uv + k[2] * (r2 + 2 * v2);
        break;
    }
    case SPLAT_DISTORTION_FULL_OPENCV: { /* k1 k2 p1 p2 k3 k4 k5 k6 */
        double r4 = r2 * r2, r6 = r4 * r2;
        double radial = (1 + k[0] * r2 + k[1] * r4 + k[4] * r6) / (1 + k[5] * r2 + k[6] * r4 + k[7] * r6);
        du = u * radial + 2 * k[2] * uv + k[3] * (r2 + 2 * u2) - u;
        dv = v * radial + 2 * k[3] * uv + k[2] * (r2 + 2 * v2) - v;
        break;
    }
    case SPLAT_DISTORTION_NERFSTUDIO: { /* k1 k2 k3 k4 p1 p2 */
        double radial = r2 * (k[0] + r2 * (k[1] + r2 * (k[2] + r2 * k[3])));
        du = u * radial + 2 * k[4] * uv + k[5] * (r2 + 2 * u2);
        dv = v * radial + 2 * k[5] * uv + k[4] * (r2 + 2 * v2);
        break;
    }
    case SPLAT_DISTORTION_OPENCV_FISHEYE: { /* k1 k2 k3 k4 */
        double r = sqrt(r2);
        if (r > 1e-15) {
            double th = atan(r), t2 = th * th, t4 = t2 * t2, t6 = t4 * t2, t8 = t4 * t4;
            double thd = th * (1 + k[0] * t2 + k[1] * t4 + k[2] * t6 + k[3] * t8);
            du = u * thd / r - u, dv = v * thd / r - v;
        }
        break;
    }
    }
    *ud = u + du;
    *vd = v + dv;
}

bool splat__undistort(const splat_distortion *d, double ud, double vd, double *u, double *v)
{
    /* Newton's method on distort(u, v) = (ud, vd), from the distorted point, with a central
     * difference Jacobian (as COLMAP's IterativeUndistortion) and a halving line search so a
     * step never makes the residual worse. */
    double x = ud, y = vd;
    for (int it = 0; it < 100; it++) {
        double fx, fy;
        splat__distort(d, x, y, &fx, &fy);
        double rx = fx - ud, ry = fy - vd, res = rx * rx + ry * ry;
        if (res < 1e-30) break;
        double h = 1e-7 * fmax(1.0, fmax(fabs(x), fabs(y)));
        double a, b, c, e, t;
        splat__distort(d, x + h, y, &a, &b);
        splat__distort(d, x - h, y, &c, &e);
        double j00 = (a - c) / (2 * h), j10 = (b - e) / (2 * h);
        splat__distort(d, x, y + h, &a, &b);
        splat__distort(d, x, y - h, &c, &e);
        double j01 = (a - c) / (2 * h), j11 = (b - e) / (2 * h);
        double det = j00 * j11 - j01 * j10;
        if (!isfinite(det) || fabs(det) < 1e-300) return false;
        double sx = (j11 * rx - j01 * ry) / det, sy = (j00 * ry - j10 * rx) / det;
        for (t = 1; t > 1e-6; t *= 0.5) {
            double nx = x - t * sx, ny = y - t * sy;
            splat__distort(d, nx, ny, &a, &b);
            if ((a - ud) * (a - ud) + (b - vd) * (b - vd) < res) {
                x = nx, y = ny;
                break;
            }
        }
        if (t <= 1e-6) break;
    }
    double fx, fy;
    splat__distort(d, x, y, &fx, &fy);
    *u = x, *v = y;
    return isfinite(x) && isfinite(y) && fabs(fx - ud) + fabs(fy - vd) < 1e-9 * fmax(1.0, fabs(ud) + fabs(vd));
}

/* The part of the ray from the principal point to (u, v), as a fraction, before the distorted
 * radius first stops growing: 1 when the model does not fold on the way. */
static double unfolded(const splat_distortion *d, double u, double v, int steps)
{
    double last = 0;
    for (int k = 1; k <= steps; k++) {
        double t = (double)k / steps, a, b;
        splat__distort(d, t * u, t * v, &a, &b);
        double r = a * a + b * b;
        if (!(r > last)) return (double)(k - 1) / steps;
        last = r;
    }
    return 1;
}

/* Does the model reach the distorted radius of (ud, vd) along the ray towards it, before its
 * first fold and within 1000 times the focal length off axis? A fisheye's image circle ends where
 * its field does, and a barrel term folds back: points past those are reached by no pinhole ray. */
static bool reachable(const splat_distortion *d, double ud, double vd)
{
    double rt = sqrt(ud * ud + vd * vd), last = 0;
    if (!(rt > 0)) return true;
    for (int k = 1; k <= 4096; k++) {
        double s = 1e3 * (k / 4096.0) * (k / 4096.0) / rt, a, b;
        splat__distort(d, s * ud, s * vd, &a, &b);
        double r2 = a * a + b * b;
        if (r2 >= rt * rt) return true;
        if (!(r2 > last)) return false;
        last = r2;
    }
    return false;
}

splat_status splat__undistorted_camera(const char *path, const char *what, const splat_camera *raw,
                                       const splat_distortion *d, splat_camera *out, splat_error *err)
{
    *out = *raw;
    if (d->model == SPLAT_DISTORTION_NONE || splat__distortion_is_zero(d)) return SPLAT_OK;
    /* Every pixel edge of the four sides of the distorted image, undistorted: the new image is
     * the largest axis-aligned box inside them, at the old focal lengths. */
    double u_min = -HUGE_VAL, u_max = HUGE_VAL, v_min = -HUGE_VAL, v_max = HUGE_VAL;
    double W = raw->width, H = raw->height;
    static const char *const side_names[4] = {"left", "right", "top", "bottom"};
    for (int side = 0; side < 4; side++) {
        uint32_t n = side < 2 ? raw->height : raw->width, bounded = 0;
        for (uint32_t k = 0; k <= n; k++) {
            /* left, right: (0 or W, y); top, bottom: (x, 0 or H) */
            double px = side == 0 ? 0 : side == 1 ? W : k, py = side == 2 ? 0 : side == 3 ? H : k;
            /* A point the model never reaches (a fisheye's field past 180 degrees, a barrel term
             * past its fold) bounds nothing: no pinhole ray lands there. */
            double u, v;
            if (!splat__undistort(d, (px - raw->cx) / raw->fx, (py - raw->cy) / raw->fy, &u, &v) || unfolded(d, u, v, 64) < 1)
                continue;
            if (side == 0) u_min = fmax(u_min, u);
            if (side == 1) u_max = fmin(u_max, u);
            if (side == 2) v_min = fmax(v_min, v);
            if (side == 3) v_max = fmin(v_max, v);
            bounded++;
        }
        /* No point of a side inverts although the model reaches them: the coefficients are past
         * what the inversion (or double precision) can follow, not a lens whose field ends. */
        double mx = side == 0 ? 0 : side == 1 ? W : W / 2, my = side == 2 ? 0 : side == 3 ? H : H / 2;
        if (!bounded && reachable(d, (mx - raw->cx) / raw->fx, (my - raw->cy) / raw->fy))
            return splat__fail(err, SPLAT_ERR_UNSUPPORTED, "%s: %s: the distortion cannot be inverted anywhere on the "
                               "image's %s edge (coefficients out of range?)", path, what, side_names[side]);
    }
    /* at most twice the image on each side of the principal point (wide fisheye lenses) */
    double lim_u = 2 * W / raw->fx, lim_v = 2 * H / raw->fy;
    u_min = fmax(u_min, -lim_u), u_max = fmin(u_max, lim_u);
    v_min = fmax(v_min, -lim_v), v_max = fmin(v_max, lim_v);
    /* Past a barrel term's fold the model maps outward rays back inward, onto pixels nearer rays
     * already took: the box stops short of the first fold on the way to each of its corners. */
    double shrink = 1;
    for (int corner = 0; corner < 4; corner++)
        shrink = fmin(shrink, unfolded(d, corner & 1 ? u_max : u_min, corner & 2 ? v_max : v_min, 512));
    u_min *= shrink, u_max *= shrink, v_min *= shrink, v_max *= shrink;
    double w = floor((u_max - u_min) * raw->fx), h = floor((v_max - v_min) * raw->fy);
    if (!(w >= SPLAT_MIN_IMAGE_SIDE && h >= SPLAT_MIN_IMAGE_SIDE))
        return splat__fail(err, SPLAT_ERR_UNSUPPORTED, "%s: %s: undistorted, no valid region of at least %u pixels a side "
                           "is left", path, what, SPLAT_MIN_IMAGE_SIDE);
    out->width = (uint32_t)w, out->height = (uint32_t)h;
    out->cx = (float)(-u_min * raw->fx), out->cy = (float)(-v_min * raw->fy);
    return SPLAT_OK;
}

/* Bilinear sample of an RGBA8 image at continuous pixel position (x, y) (pixel centres at
 * +0.5), colour weighted by alpha like splat__image_downsample; edges clamp. */
static void sample(const splat_image *im, double x, double y, uint8_t out[4])
{
    x -= 0.5, y -= 0.5;
    double fx = floor(x), fy = floor(y), ax = x - fx, ay = y - fy;
    long x0 = (long)fx, y0 = (long)fy;
    double acc[4] = {0, 0, 0, 0};
    for (int j = 0; j < 2; j++)
        for (int i = 0; i < 2; i++) {
            long xi = SPLAT_MIN(SPLAT_MAX(x0 + i, 0L), (long)im->width - 1);
            long yi = SPLAT_MIN(SPLAT_MAX(y0 + j, 0L), (long)im->height - 1);
            double wgt = (i ? ax : 1 - ax) * (j ? ay : 1 - ay);
            const uint8_t *p = im->rgba + ((size_t)yi * im->width + (size_t)xi) * 4;
            double a = p[3] * wgt;
            for (int c = 0; c < 3; c++) acc[c] += p[c] * a;
            acc[3] += a;
        }
    for (int c = 0; c < 3; c++) out[c] = (uint8_t)lrint(acc[3] > 0 ? fmin(255.0, acc[c] / acc[3]) : 0);
    out[3] = (uint8_t)lrint(fmin(255.0, acc[3]));
}

splat_status splat__image_undistort(const splat_image *src, const splat_camera *raw, const splat_distortion *d,
                                    const splat_camera *cam, splat_image *dst, splat_error *err)
{
    memset(dst, 0, sizeof *dst);
    size_t n;
    if (!splat__mul_size((size_t)cam->width * cam->height, 4, &n) || !(dst->rgba = splat__malloc(n)))
        return splat__fail(err, SPLAT_ERR_OUT_OF_HOST_MEMORY, "undistortion: out of host memory for %ux%u pixels",
                           cam->width, cam->height);
    dst->width = cam->width, dst->height = cam->height;
    double sx = (double)src->width / raw->width, sy = (double)src->height / raw->height;
    for (uint32_t j = 0; j < cam->height; j++)
        for (uint32_t i = 0; i < cam->width; i++) {
            double u = (i + 0.5 - cam->cx) / cam->fx, v = (j + 0.5 - cam->cy) / cam->fy, ud, vd;
            splat__distort(d, u, v, &ud, &vd);
            sample(src, (raw->fx * ud + raw->cx) * sx, (raw->fy * vd + raw->cy) * sy, dst->rgba + ((size_t)j * cam->width + i) * 4);
        }
    return SPLAT_OK;
}
