/* ref/project.c: the preprocess of docs/RASTER.md section 1, one Gaussian at a time, forward
 * and vector-Jacobian product together. The vjp re-runs the forward for its intermediates. */
#include <float.h>

#include "ref/ref_internal.h"

/* ------------------------------------------------------------------------ loading */

void splat__ref_load_cam(const splat_camera *cam, splat__ref_cam *c)
{
    c->fx = cam->fx, c->fy = cam->fy, c->cx = cam->cx, c->cy = cam->cy;
    for (int k = 0; k < 9; k++) c->R[k] = cam->R[k];
    for (int k = 0; k < 3; k++) c->t[k] = cam->t[k];
    c->width = cam->width, c->height = cam->height;
}

void splat__ref_load_scene(const splat_scene *scene, uint32_t i, splat__ref_gauss *g)
{
    for (int k = 0; k < 3; k++) g->mean[k] = scene->means[(size_t)i * 3 + k];
    for (int k = 0; k < 3; k++) g->log_scale[k] = scene->log_scales[(size_t)i * 3 + k];
    for (int k = 0; k < 4; k++) g->quat[k] = scene->quats[(size_t)i * 4 + k];
    g->logit = scene->opacities[i];
    for (int k = 0; k < SPLAT__REF_SH_FLOATS; k++) g->sh[k] = scene->sh[(size_t)i * SPLAT__REF_SH_FLOATS + k];
}

void splat__ref_load_params(const splat_ref_params *p, uint32_t i, splat__ref_gauss *g)
{
    memcpy(g->mean, p->means + (size_t)i * 3, sizeof g->mean);
    memcpy(g->log_scale, p->log_scales + (size_t)i * 3, sizeof g->log_scale);
    memcpy(g->quat, p->quats + (size_t)i * 4, sizeof g->quat);
    g->logit = p->opacities[i];
    memcpy(g->sh, p->sh + (size_t)i * SPLAT__REF_SH_FLOATS, sizeof g->sh);
}

splat_status splat__ref_params_init(splat_ref_params *p, const splat_scene *scene, splat_error *err)
{
    memset(p, 0, sizeof *p);
    size_t n = scene->count;
    p->means = splat__calloc(n * 3, sizeof(double));
    p->log_scales = splat__calloc(n * 3, sizeof(double));
    p->quats = splat__calloc(n * 4, sizeof(double));
    p->opacities = splat__calloc(n, sizeof(double));
    p->sh = splat__calloc(n * SPLAT__REF_SH_FLOATS, sizeof(double));
    if (!p->means || !p->log_scales || !p->quats || !p->opacities || !p->sh) {
        splat__ref_params_free(p);
        return splat__fail(err, SPLAT_ERR_OUT_OF_HOST_MEMORY, "ref params of %zu Gaussians: out of host memory", n);
    }
    p->count = scene->count;
    for (size_t k = 0; k < n * 3; k++) p->means[k] = scene->means[k], p->log_scales[k] = scene->log_scales[k];
    for (size_t k = 0; k < n * 4; k++) p->quats[k] = scene->quats[k];
    for (size_t k = 0; k < n; k++) p->opacities[k] = scene->opacities[k];
    for (size_t k = 0; k < n * SPLAT__REF_SH_FLOATS; k++) p->sh[k] = scene->sh[k];
    return SPLAT_OK;
}

void splat__ref_params_free(splat_ref_params *p)
{
    if (!p) return;
    splat__free(p->means);
    splat__free(p->log_scales);
    splat__free(p->quats);
    splat__free(p->opacities);
    splat__free(p->sh);
    memset(p, 0, sizeof *p);
}

/* ------------------------------------------------------------------------ forward */

/* The intermediates of one Gaussian's preprocess that the vjp needs. */
typedef struct fwd {
    double p[3];             /* camera space */
    double qn[4], qlen;      /* normalised quaternion and |q| */
    double Rq[9], scale[3], M[9], Sc[9];
    double u[2], lim_neg[2], lim_pos[2], uc[2]; /* p.x/p.z, p.y/p.z, their limits and clamped values */
    double J[6];             /* [2,3] */
    double a, b, c, det;     /* blurred covariance */
    double a0, c0;           /* the diagonal before the blur */
    double det0, ratio;      /* antialiased: the determinant before the blur, det0 / det */
    double sig, comp, alpha; /* sigmoid(logit), compensation, alpha = sig comp */
    double dir[3], vlen;
    double Y[16], raw[3];
} fwd;

static void margin_min(double *m, double v)
{
    if (v < *m) *m = v;
}

static double rel_margin(double v, double thr, double s) { return fabs(v - thr) / fmax(fabs(thr), s); }

static double clampd(double v, double lo, double hi) { return v < lo ? lo : v > hi ? hi : v; }

static uint32_t sh_count(uint32_t degree)
{
    SPLAT_ASSERT(degree <= 3);
    return (degree + 1) * (degree + 1);
}

/* Fills out (and f) as far as the Gaussian gets before it is culled. */
static void project_fwd(const splat__ref_gauss *g, const splat__ref_cam *c, const splat_ref_settings *set, fwd *f,
                        splat_ref_proj *out)
{
    uint32_t degree = set->sh_degree;
    memset(out, 0, sizeof *out);
    memset(f, 0, sizeof *f);
    out->margin = HUGE_VAL;
    const double *R = c->R;

    /* 1. Camera space and near plane. */
    for (int r = 0; r < 3; r++)
        f->p[r] = R[r * 3] * g->mean[0] + R[r * 3 + 1] * g->mean[1] + R[r * 3 + 2] * g->mean[2] + c->t[r];
    double z = f->p[2];
    out->depth = z;
    margin_min(&out->margin, rel_margin(z, SPLAT_REF_NEAR, SPLAT_REF_NEAR));
    if (!(z > SPLAT_REF_NEAR)) return;

    /* 2. Rotation and world covariance S = M M^T, M = Rq diag(exp(s)). */
    const double *q = g->quat;
    double n2 = q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3];
    if (n2 == 0) return;
    f->qlen = sqrt(n2);
    for (int k = 0; k < 4; k++) f->qn[k] = q[k] / f->qlen;
    double w = f->qn[0], x = f->qn[1], y = f->qn[2], zq = f->qn[3];
    double *Rq = f->Rq;
    Rq[0] = 1 - 2 * (y * y + zq * zq), Rq[1] = 2 * (x * y - w * zq), Rq[2] = 2 * (x * zq + w * y);
    Rq[3] = 2 * (x * y + w * zq), Rq[4] = 1 - 2 * (x * x + zq * zq), Rq[5] = 2 * (y * zq - w * x);
    Rq[6] = 2 * (x * zq - w * y), Rq[7] = 2 * (y * zq + w * x), Rq[8] = 1 - 2 * (x * x + y * y);
    for (int k = 0; k < 3; k++) f->scale[k] = exp(g->log_scale[k]);
    for (int r = 0; r < 3; r++)
        for (int k = 0; k < 3; k++) f->M[r * 3 + k] = Rq[r * 3 + k] * f->scale[k];
    double S[9];
    for (int r = 0; r < 3; r++)
        for (int s = 0; s < 3; s++) {
            double acc = 0;
            for (int k = 0; k < 3; k++) acc += f->M[r * 3 + k] * f->M[s * 3 + k];
            S[r * 3 + s] = acc;
        }

    /* 3. Camera covariance Sc = R S R^T. */
    double RS[9];
    for (int r = 0; r < 3; r++)
        for (int s = 0; s < 3; s++) {
            double acc = 0;
            for (int k = 0; k < 3; k++) acc += R[r * 3 + k] * S[k * 3 + s];
            RS[r * 3 + s] = acc;
        }
    for (int r = 0; r < 3; r++)
        for (int s = 0; s < 3; s++) {
            double acc = 0;
            for (int k = 0; k < 3; k++) acc += RS[r * 3 + k] * R[s * 3 + k];
            f->Sc[r * 3 + s] = acc;
        }

    /* 4. Projection with the guard band: only tx, ty are clamped, mean2d is not. */
    double W = c->width, H = c->height;
    double tan_x = 0.5 * W / c->fx, tan_y = 0.5 * H / c->fy;
    f->lim_pos[0] = (W - c->cx) / c->fx + 0.3 * tan_x, f->lim_neg[0] = c->cx / c->fx + 0.3 * tan_x;
    f->lim_pos[1] = (H - c->cy) / c->fy + 0.3 * tan_y, f->lim_neg[1] = c->cy / c->fy + 0.3 * tan_y;
    for (int k = 0; k < 2; k++) {
        f->u[k] = f->p[k] / z;
        margin_min(&out->margin, rel_margin(f->u[k], f->lim_pos[k], DBL_MIN));
        margin_min(&out->margin, rel_margin(f->u[k], -f->lim_neg[k], DBL_MIN));
        f->uc[k] = clampd(f->u[k], -f->lim_neg[k], f->lim_pos[k]);
    }
    double tx = z * f->uc[0], ty = z * f->uc[1];
    double *J = f->J;
    J[0] = c->fx / z, J[1] = 0, J[2] = -c->fx * tx / (z * z);
    J[3] = 0, J[4] = c->fy / z, J[5] = -c->fy * ty / (z * z);
    double JS[6];
    for (int r = 0; r < 2; r++)
        for (int s = 0; s < 3; s++) {
            double acc = 0;
            for (int k = 0; k < 3; k++) acc += J[r * 3 + k] * f->Sc[k * 3 + s];
            JS[r * 3 + s] = acc;
        }
    double cov[4];
    for (int r = 0; r < 2; r++)
        for (int s = 0; s < 2; s++) {
            double acc = 0;
            for (int k = 0; k < 3; k++) acc += JS[r * 3 + k] * J[s * 3 + k];
            cov[r * 2 + s] = acc;
        }
    out->mean2d[0] = c->fx * f->p[0] / z + c->cx;
    out->mean2d[1] = c->fy * f->p[1] / z + c->cy;
    /* How far float32 may put mean2d from this value: p_r = R_r . mu + t_r rounds by up to
     * gamma_4 ~ 4u of S_r = sum_k |R_rk mu_k| + |t_r|, which f / z carries to the screen (for
     * p_z through p_r / z); the division, the product and the sum add a few u of their results.
     * Twice that bound, like the depth keys' in the tests. */
    double Sz = fabs(c->t[2]);
    for (int k = 0; k < 3; k++) Sz += fabs(R[6 + k] * g->mean[k]);
    for (int r = 0; r < 2; r++) {
        double Sr = fabs(c->t[r]), fr = r ? c->fy : c->fx, ur = f->p[r] / z;
        for (int k = 0; k < 3; k++) Sr += fabs(R[r * 3 + k] * g->mean[k]);
        out->mean2d_err[r] = SPLAT_REF_POS_ROUNDING * 0x1p-24 *
                             (fr / z * (Sr + fabs(ur) * Sz) + fabs(fr * ur) + fabs(out->mean2d[r]));
    }

    /* 5. Low-pass and conic. cov[1] and cov[2] are equal up to rounding; take the upper one. */
    f->a = cov[0] + SPLAT_REF_EPS2D, f->b = cov[1], f->c = cov[3] + SPLAT_REF_EPS2D;
    f->det = f->a * f->c - f->b * f->b;
    f->a0 = cov[0], f->c0 = cov[3];
    out->cov2d[0] = f->a, out->cov2d[1] = f->b, out->cov2d[2] = f->c;
    margin_min(&out->margin, fabs(f->det) / (f->a * f->c));
    if (!(f->det > 0)) return;
    out->conic[0] = f->c / f->det, out->conic[1] = -f->b / f->det, out->conic[2] = f->a / f->det;
    /* Antialiased: the factor that keeps the Gaussian's integral through the low-pass. */
    f->comp = 1;
    if (set->rasterize_mode == SPLAT_RASTERIZE_ANTIALIASED) {
        const double floor2 = SPLAT_REF_MIN_COMPENSATION * SPLAT_REF_MIN_COMPENSATION;
        f->det0 = f->a0 * f->c0 - f->b * f->b;
        f->ratio = f->det0 / f->det;
        margin_min(&out->margin, rel_margin(f->ratio, floor2, floor2));
        f->comp = sqrt(f->ratio > floor2 ? f->ratio : floor2);
    }
    out->compensation = f->comp;

    /* 6. Opacity. */
    f->sig = 1 / (1 + exp(-g->logit));
    f->alpha = f->sig * f->comp;
    out->opacity = f->alpha;
    margin_min(&out->margin, rel_margin(f->alpha, SPLAT_REF_ALPHA_MIN, SPLAT_REF_ALPHA_MIN));
    if (!(f->alpha >= SPLAT_REF_ALPHA_MIN)) return;

    /* 7. Extent. */
    double tau = splat__ref_extent(f->alpha);
    out->radius[0] = sqrt(2 * tau * f->a);
    out->radius[1] = sqrt(2 * tau * f->c);

    /* 9. Colour, from the direction campos -> mean, campos = -R^T t. */
    double v[3];
    for (int k = 0; k < 3; k++) {
        double campos = -(R[k] * c->t[0] + R[3 + k] * c->t[1] + R[6 + k] * c->t[2]);
        v[k] = g->mean[k] - campos;
    }
    f->vlen = sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
    for (int k = 0; k < 3; k++) f->dir[k] = v[k] / f->vlen;
    splat__ref_sh_basis(f->dir, f->Y);
    uint32_t nk = sh_count(degree);
    for (int ch = 0; ch < 3; ch++) {
        double acc = 0;
        for (uint32_t k = 0; k < nk; k++) acc += f->Y[k] * g->sh[k * 3 + ch];
        f->raw[ch] = acc + 0.5;
        margin_min(&out->margin, rel_margin(f->raw[ch], 0, 1));
        out->color[ch] = f->raw[ch] > 0 ? f->raw[ch] : 0;
    }
    out->projected = 1;

    /* 8. Tiles (after the colour so that a Gaussian culled here still has every field). */
    out->tiles_touched = splat__ref_count_tiles(out, c->width, c->height);
    out->visible = out->tiles_touched > 0;
}

void splat__ref_project(const splat__ref_gauss *g, const splat__ref_cam *c, const splat_ref_settings *set,
                        splat_ref_proj *out)
{
    fwd f;
    project_fwd(g, c, set, &f, out);
}

void splat__ref_preprocess(const splat_scene *scene, const splat_camera *cam, const splat_ref_settings *set,
                          splat_ref_proj *proj)
{
    splat__ref_cam c;
    splat__ref_load_cam(cam, &c);
    for (uint32_t i = 0; i < scene->count; i++) {
        splat__ref_gauss g;
        splat__ref_load_scene(scene, i, &g);
        splat__ref_project(&g, &c, set, &proj[i]);
    }
}

void splat__ref_preprocess_params(const splat_ref_params *params, const splat_camera *cam,
                                 const splat_ref_settings *set, splat_ref_proj *proj)
{
    splat__ref_cam c;
    splat__ref_load_cam(cam, &c);
    for (uint32_t i = 0; i < params->count; i++) {
        splat__ref_gauss g;
        splat__ref_load_params(params, i, &g);
        splat__ref_project(&g, &c, set, &proj[i]);
    }
}

/* ------------------------------------------------------------------------ backward */

void splat__ref_project_vjp(const splat__ref_gauss *g, const splat__ref_cam *c, const splat_ref_settings *set,
                            const double d_mean2d[2], const double d_conic[3], const double d_color[3],
                            double d_alpha, splat__ref_gauss_grad *d)
{
    fwd f;
    splat_ref_proj pr;
    uint32_t degree = set->sh_degree;
    project_fwd(g, c, set, &f, &pr);
    memset(d, 0, sizeof *d);
    if (!pr.projected) return;
    const double *R = c->R;
    double z = f.p[2];

    /* 6. alpha = sig comp: the sigmoid, and the compensation's share for step 5. */
    d->logit = d_alpha * f.comp * f.sig * (1 - f.sig);
    double d_comp = d_alpha * f.sig;

    /* 9. Colour: flat where raw < 0 (torch's clamp_min passes the gradient at raw == 0). Its
     * direction depends on the mean through v / |v|. */
    double d_raw[3], d_dir[3] = {0, 0, 0};
    for (int ch = 0; ch < 3; ch++) d_raw[ch] = f.raw[ch] >= 0 ? d_color[ch] : 0;
    double dY[16][3];
    splat__ref_sh_basis_grad(f.dir, dY);
    uint32_t nk = sh_count(degree);
    for (uint32_t k = 0; k < nk; k++) {
        double dy = 0;
        for (int ch = 0; ch < 3; ch++) {
            d->sh[k * 3 + ch] = f.Y[k] * d_raw[ch];
            dy += g->sh[k * 3 + ch] * d_raw[ch];
        }
        for (int j = 0; j < 3; j++) d_dir[j] += dy * dY[k][j];
    }
    double dd = d_dir[0] * f.dir[0] + d_dir[1] * f.dir[1] + d_dir[2] * f.dir[2];
    for (int k = 0; k < 3; k++) d->mean[k] += (d_dir[k] - dd * f.dir[k]) / f.vlen;

    /* 5. Conic (A, B, C) = (c, -b, a) / det back to the blurred covariance; the blur is an
     * added constant. */
    double a = f.a, b = f.b, cc = f.c, det2 = f.det * f.det;
    double dA = d_conic[0], dB = d_conic[1], dC = d_conic[2];
    double da = (-cc * cc * dA + b * cc * dB - b * b * dC) / det2;
    double db = (2 * b * cc * dA - (a * cc + b * b) * dB + 2 * a * b * dC) / det2;
    double dc = (-b * b * dA + a * b * dB - a * a * dC) / det2;
    /* comp = sqrt(ratio), ratio = det0 / det with det0 = a0 c0 - b^2, det = a c - b^2 and
     * (a, c) = (a0, c0) + e: the quotient rule, flat where the floor holds. */
    if (set->rasterize_mode == SPLAT_RASTERIZE_ANTIALIASED &&
        f.ratio >= SPLAT_REF_MIN_COMPENSATION * SPLAT_REF_MIN_COMPENSATION) {
        double d_ratio = d_comp * 0.5 / f.comp;
        da += d_ratio * (f.c0 * f.det - f.det0 * cc) / det2;
        dc += d_ratio * (f.a0 * f.det - f.det0 * a) / det2;
        db += d_ratio * (-2 * b * f.det + 2 * b * f.det0) / det2;
    }

    /* 4. cov = J Sc J^T. With G the symmetric gradient of cov (the off-diagonal b counted
     * once, so half in each of its two places): dSc = J^T G J, dJ = 2 G J Sc. */
    double G[4] = {da, 0.5 * db, 0.5 * db, dc};
    const double *J = f.J;
    double dSc[9], GJ[6], dJ[6];
    for (int r = 0; r < 2; r++)
        for (int s = 0; s < 3; s++) GJ[r * 3 + s] = G[r * 2] * J[s] + G[r * 2 + 1] * J[3 + s];
    for (int r = 0; r < 3; r++)
        for (int s = 0; s < 3; s++) dSc[r * 3 + s] = J[r] * GJ[s] + J[3 + r] * GJ[3 + s];
    for (int r = 0; r < 2; r++)
        for (int s = 0; s < 3; s++) {
            double acc = 0;
            for (int k = 0; k < 3; k++) acc += GJ[r * 3 + k] * f.Sc[k * 3 + s];
            dJ[r * 3 + s] = 2 * acc;
        }

    /* mean2d = (fx x / z + cx, fy y / z + cy), unclamped. */
    double dp[3] = {0, 0, 0};
    dp[0] += c->fx / z * d_mean2d[0];
    dp[1] += c->fy / z * d_mean2d[1];
    dp[2] -= (c->fx * f.p[0] * d_mean2d[0] + c->fy * f.p[1] * d_mean2d[1]) / (z * z);

    /* J, holding tx, ty; then tx = z clamp(x / z): d tx / dx = 1 inside the clamp range,
     * else d tx / dz = the clamp value (gsplat's persp_proj_vjp). */
    double tx = z * f.uc[0], ty = z * f.uc[1], z2 = z * z, z3 = z2 * z;
    dp[2] += -c->fx / z2 * dJ[0] - c->fy / z2 * dJ[4] + 2 * c->fx * tx / z3 * dJ[2] + 2 * c->fy * ty / z3 * dJ[5];
    double dt[2] = {-c->fx / z2 * dJ[2], -c->fy / z2 * dJ[5]};
    for (int k = 0; k < 2; k++) {
        if (f.u[k] >= -f.lim_neg[k] && f.u[k] <= f.lim_pos[k]) dp[k] += dt[k];
        else dp[2] += dt[k] * f.uc[k];
    }

    /* 3. Sc = R S R^T: dS = R^T dSc R. */
    double tmp[9], dS[9];
    for (int r = 0; r < 3; r++)
        for (int s = 0; s < 3; s++) {
            double acc = 0;
            for (int k = 0; k < 3; k++) acc += dSc[r * 3 + k] * R[k * 3 + s];
            tmp[r * 3 + s] = acc;
        }
    for (int r = 0; r < 3; r++)
        for (int s = 0; s < 3; s++) {
            double acc = 0;
            for (int k = 0; k < 3; k++) acc += R[k * 3 + r] * tmp[k * 3 + s];
            dS[r * 3 + s] = acc;
        }

    /* 2. S = M M^T with dS symmetric: dM = 2 dS M; M = Rq diag(scale). */
    double dM[9], dRq[9];
    for (int r = 0; r < 3; r++)
        for (int k = 0; k < 3; k++) {
            double acc = 0;
            for (int s = 0; s < 3; s++) acc += dS[r * 3 + s] * f.M[s * 3 + k];
            dM[r * 3 + k] = 2 * acc;
        }
    for (int k = 0; k < 3; k++) {
        double acc = 0;
        for (int r = 0; r < 3; r++) {
            dRq[r * 3 + k] = dM[r * 3 + k] * f.scale[k];
            acc += dM[r * 3 + k] * f.M[r * 3 + k];
        }
        d->log_scale[k] = acc;
    }

    /* Rq of the normalised quaternion, then through the normalisation q / |q|. */
    double w = f.qn[0], x = f.qn[1], y = f.qn[2], zq = f.qn[3];
    double dq[4];
    dq[0] = 2 * (-zq * dRq[1] + y * dRq[2] + zq * dRq[3] - x * dRq[5] - y * dRq[6] + x * dRq[7]);
    dq[1] = 2 * (y * dRq[1] + zq * dRq[2] + y * dRq[3] - 2 * x * dRq[4] - w * dRq[5] + zq * dRq[6] + w * dRq[7] -
                 2 * x * dRq[8]);
    dq[2] = 2 * (-2 * y * dRq[0] + x * dRq[1] + w * dRq[2] + x * dRq[3] + zq * dRq[5] - w * dRq[6] + zq * dRq[7] -
                 2 * y * dRq[8]);
    dq[3] = 2 * (-2 * zq * dRq[0] - w * dRq[1] + x * dRq[2] + w * dRq[3] - 2 * zq * dRq[4] + y * dRq[5] +
                 x * dRq[6] + y * dRq[7]);
    double dqq = dq[0] * w + dq[1] * x + dq[2] * y + dq[3] * zq;
    for (int k = 0; k < 4; k++) d->quat[k] = (dq[k] - dqq * f.qn[k]) / f.qlen;

    /* 1. p = R mu + t. */
    for (int k = 0; k < 3; k++) d->mean[k] += R[k] * dp[0] + R[3 + k] * dp[1] + R[6 + k] * dp[2];
}
