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

double splat__ref_means_lr(double scene_scale, uint32_t step, uint32_t max_steps)
{
    SPLAT_ASSERT(max_steps >= 1);
    return SPLAT_REF_LR_MEANS * scene_scale * pow(0.01, (double)step / (double)max_steps);
}

uint32_t splat__ref_sh_degree(uint32_t step, uint32_t max_degree) { return SPLAT_MIN(step / 1000, max_degree); }
