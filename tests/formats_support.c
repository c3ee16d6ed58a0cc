/* The scene-format tests' shared helpers (formats_support.h). */
#include "formats_support.h"

const char *const tf_attr_name[TF_ATTRS] = {"position", "log-scale", "colour", "opacity", "rotation (rad)", "SH rest"};

void tf_scene(splat_scene *s, uint32_t n, uint32_t degree, double spacing, double centre)
{
    splat_error err = {0};
    if (splat_scene_init(s, n, &err) != SPLAT_OK) abort();
    s->count = n;
    s->sh_degree = degree;
    uint32_t side = 1;
    while (side * side * side < n) side++;
    /* cells in a random order, so the file order is not the grid's */
    uint32_t cells = side * side * side, *cell = malloc(cells * sizeof *cell);
    for (uint32_t c = 0; c < cells; c++) cell[c] = c;
    for (uint32_t c = cells - 1; c > 0; c--) {
        uint32_t j = (uint32_t)(splat__rng_u64(splat_test_rng()) % (c + 1)), t = cell[c];
        cell[c] = cell[j], cell[j] = t;
    }
    for (uint32_t i = 0; i < n; i++) {
        uint32_t c = cell[i], g[3] = {c % side, c / side % side, c / side / side};
        for (int k = 0; k < 3; k++) {
            s->means[i * 3 + k] = (float)(centre + (g[k] - side / 2.0 + t_uniform(-0.3, 0.3)) * spacing);
            s->log_scales[i * 3 + k] = (float)t_uniform(-7, 1);
        }
        for (int k = 0; k < 4; k++) s->quats[i * 4 + k] = (float)splat__rng_normal(splat_test_rng());
        s->opacities[i] = (float)t_uniform(-6, 6);
        float *sh = s->sh + (size_t)i * SPLAT_SH_COEFFS * 3;
        for (int k = 0; k < 3; k++) sh[k] = (float)((t_uniform(0.03, 0.97) - 0.5) / 0.28209479177387814);
        for (uint32_t k = 3; k < SPLAT_SH_COEFFS * 3; k++)
            sh[k] = k < (degree + 1) * (degree + 1) * 3 ? (float)t_uniform(-0.9, 0.9) : 0.0f;
    }
    free(cell);
}

uint32_t *tf_match(const splat_scene *want, const splat_scene *got)
{
    if (want->count != got->count) {
        splat_test_fail(__FILE__, __LINE__, "counts differ", "%u decoded, %u written", got->count, want->count);
        return NULL;
    }
    uint32_t n = got->count, *of = malloc(((size_t)n + 1) * sizeof *of);
    bool *taken = calloc((size_t)n + 1, 1);
    for (uint32_t i = 0; i < n; i++) {
        double best = INFINITY;
        for (uint32_t j = 0; j < n; j++) {
            double d = 0;
            for (int k = 0; k < 3; k++) {
                double t = (double)got->means[i * 3 + k] - want->means[j * 3 + k];
                d += t * t;
            }
            if (d < best) best = d, of[i] = j;
        }
        if (taken[of[i]]) {
            splat_test_fail(__FILE__, __LINE__, "match", "decoded Gaussians %u and another both lie nearest written %u", i,
                            of[i]);
            free(of), free(taken);
            return NULL;
        }
        taken[of[i]] = true;
    }
    free(taken);
    return of;
}

void tf_add(tf_err *e, double err, uint32_t at)
{
    if (!(err <= e->max)) e->max = err, e->worst = at; /* NaN is the worst */
    e->sum += err;
    e->n++;
}

double tf_angle(const float *a, const float *b)
{
    double na = 0, nb = 0, dot = 0;
    for (int k = 0; k < 4; k++) na += (double)a[k] * a[k], nb += (double)b[k] * b[k], dot += (double)a[k] * b[k];
    double c = fabs(dot) / sqrt(na * nb);
    return 2.0 * acos(fmin(1.0, c));
}

double tf_colour(float dc) { return 0.5 + 0.28209479177387814 * dc; }

double tf_sigmoid(double x) { return 1.0 / (1.0 + exp(-x)); }

void tf_print(const char *what, const tf_err *e)
{
    printf("%s:", what);
    for (int a = 0; a < TF_ATTRS; a++)
        if (e[a].n) printf(" %s max %.3g mean %.3g;", tf_attr_name[a], e[a].max, e[a].sum / (double)e[a].n);
    printf("\n");
}
