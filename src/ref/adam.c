/* ref/adam.c: one Adam step and the schedules of docs/TRAIN.md ("Adam"). */
#include "ref/ref_train.h"

void splat__ref_adam(uint64_t n, double *p, const double *g, double *m, double *v, double lr, uint32_t t)
{
    SPLAT_ASSERT(t >= 1);
    SPLAT_ASSERT(n == 0 || (p && g && m && v));
    const double b1 = SPLAT_REF_ADAM_B1, b2 = SPLAT_REF_ADAM_B2;
    double bc1 = 1 - pow(b1, t), bc2 = 1 - pow(b2, t);
    for (uint64_t k = 0; k < n; k++) {
        m[k] = b1 * m[k] + (1 - b1) * g[k];
        v[k] = b2 * v[k] + (1 - b2) * g[k] * g[k];
        p[k] -= lr * (m[k] / bc1) / (sqrt(v[k] / bc2) + SPLAT_REF_ADAM_EPS);
    }
}

/* x >= 0 rounded on the grid of `bits` significant bits by the share u in [0, 1); *margin as above. */
static double round_share(double x, int bits, double u, double *margin)
{
    if (x == 0) {
        *margin = 1;
        return 0;
    }
    int e;
    frexp(x, &e); /* x in [2^(e-1), 2^e) */
    double spacing = ldexp(1.0, e - bits), below = floor(x / spacing) * spacing;
    double s = (x - below) / spacing + u;
    *margin = fabs(s - 1);
    return s >= 1 ? below + spacing : below;
}

void splat__ref_moments_round(double m, double v, uint32_t r, int m_bits, double *m16, double *v16, double *margin)
{
    SPLAT_ASSERT(v >= 0 && m_bits >= 10 && m_bits <= 23);
    double mm, mv;
    const int M = m_bits, cut_m = 32 - M, cut_v = M - 1;
    double am = round_share(fabs(m), M - 8, ldexp((double)(r & ((1u << cut_m) - 1)), -cut_m), &mm);
    *m16 = m < 0 ? -am : am;
    *v16 = round_share(v, 25 - M, ldexp((double)((r >> cut_m) & ((1u << cut_v) - 1)), -cut_v), &mv);
    *margin = fmin(mm, mv);
}

uint32_t splat__ref_moments_word(uint32_t step, uint64_t i, uint32_t group, bool sh)
{
    if (sh) return splat__ref_word(step, (uint32_t)(i / 4), 16 + 4 * group + (uint32_t)(i % 4));
    return splat__ref_word(step, (uint32_t)i, 16 + 4 * group);
}

double splat__ref_means_lr(double scene_scale, uint32_t step, uint32_t max_steps)
{
    SPLAT_ASSERT(max_steps >= 1);
    return SPLAT_REF_LR_MEANS * scene_scale * pow(0.01, (double)step / (double)max_steps);
}

uint32_t splat__ref_sh_degree(uint32_t step, uint32_t max_degree) { return SPLAT_MIN(step / 1000, max_degree); }
