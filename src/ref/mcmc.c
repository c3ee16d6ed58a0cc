/* ref/mcmc.c: gsplat's MCMCStrategy (docs/TRAIN.md, "MCMC"): eq. 9's relocation, the sampling
 * weights, one refine (relocation of the dead, then adding), the position noise and the
 * regularisers. Written from TRAIN.md and gsplat's strategy/mcmc.py, strategy/ops.py and its
 * relocation kernel; never from the shaders. */
#include "ref/ref_train.h"

#define SH_FLOATS (SPLAT_SH_COEFFS * 3)

static double sigmoid(double x) { return 1 / (1 + exp(-x)); }

/* ------------------------------------------------------------------ eq. 9 */

void splat__ref_mcmc_relocation(double opacity, const double scale[3], uint32_t ratio, double *new_opacity,
                                double new_scale[3], double *cond)
{
    /* C(i, k) for i, k < N_MAX, exact in double (the largest, C(50, 25), is below 2^53) */
    static double binom[SPLAT_REF_MCMC_N_MAX][SPLAT_REF_MCMC_N_MAX];
    if (binom[0][0] == 0)
        for (int i = 0; i < SPLAT_REF_MCMC_N_MAX; i++)
            for (int k = 0; k <= i; k++) binom[i][k] = k == 0 || k == i ? 1 : binom[i - 1][k - 1] + binom[i - 1][k];
    uint32_t n = ratio < 1 ? 1 : ratio > SPLAT_REF_MCMC_N_MAX ? SPLAT_REF_MCMC_N_MAX : ratio;
    double o = 1 - pow(1 - opacity, 1.0 / n);
    o = fmin(fmax(o, SPLAT_REF_MCMC_MIN_OPACITY), 1 - 0x1.0p-23);
    double sum = 0, mag = 0;
    for (uint32_t i = 1; i <= n; i++)
        for (uint32_t k = 0; k < i; k++) {
            double term = binom[i - 1][k] * pow(o, k + 1) / sqrt(k + 1.0);
            sum += k % 2 ? -term : term;
            mag += term;
        }
    *new_opacity = o;
    for (int k = 0; k < 3; k++) new_scale[k] = scale[k] * opacity / sum;
    if (cond) *cond = mag / sum;
}

/* ------------------------------------------------------------------ sampling */

uint32_t splat__ref_mcmc_weight(float logit, uint32_t shift)
{
    double b = floor((double)logit * 128);
    b = fmin(fmax(b, -16 * 128), 16 * 128 - 1);
    double w = floor(65536 * sigmoid((b + 0.5) / 128));
    uint32_t v = (uint32_t)w >> shift;
    return v ? v : 1;
}

uint32_t splat__ref_mcmc_shift(uint32_t n)
{
    uint32_t s = 0;
    while ((uint64_t)n * SPLAT_MAX(1u, 65535u >> s) > UINT32_MAX) s++;
    return s;
}

bool splat__ref_mcmc_dead(float logit)
{
    return logit <= (float)log(SPLAT_REF_MCMC_MIN_OPACITY / (1 - SPLAT_REF_MCMC_MIN_OPACITY));
}

uint32_t splat__ref_mcmc_added(uint32_t n, uint32_t cap)
{
    /* Python's int(1.05 * n): a double product, truncated */
    double grown = SPLAT_REF_MCMC_GROWTH * (double)n;
    uint64_t target = grown >= (double)cap ? cap : (uint64_t)grown;
    return target > n ? (uint32_t)(target - n) : 0;
}


/* Draws `n` samples by the weights w [rows] (total > 0): sample j is the row whose run of the
 * weights' prefix holds (word(seed, j, k) * total) >> 32; counts [rows] += each row's samples,
 * out [n] the rows. cum [rows]: scratch. */
static void draw(const uint32_t *w, uint32_t rows, uint64_t *cum, uint32_t seed, uint32_t k, uint32_t n, uint32_t *out,
                 uint32_t *counts)
{
    uint64_t total = 0;
    for (uint32_t i = 0; i < rows; i++) cum[i] = total, total += w[i];
    for (uint32_t j = 0; j < n; j++) {
        uint64_t t = ((uint64_t)splat__ref_word(seed, j, k) * total) >> 32;
        uint32_t lo = 0, hi = rows; /* the last row whose run starts at or before t */
        while (hi - lo > 1) {
            uint32_t mid = lo + (hi - lo) / 2;
            if (cum[mid] <= t) lo = mid;
            else hi = mid;
        }
        out[j] = lo;
        counts[lo]++;
    }
}

/* Eq. 9 for row i of s with `ratio`, in place: opacity logit and log-scales. */
static void relocate_row(splat_scene *s, uint32_t i, uint32_t ratio)
{
    double sc[3], nsc[3], no;
    for (int k = 0; k < 3; k++) sc[k] = exp((double)s->log_scales[i * 3 + k]);
    splat__ref_mcmc_relocation(sigmoid(s->opacities[i]), sc, ratio, &no, nsc, NULL);
    s->opacities[i] = (float)log(no / (1 - no));
    for (int k = 0; k < 3; k++) s->log_scales[i * 3 + k] = (float)log(nsc[k]);
}

/* Sets up out for `rows` rows (count rows), the first in->count rows copies of in's, src the
 * identity; w, counts, samples [rows] and cum [rows] are the phases' scratch. */
typedef struct scratch {
    uint32_t *w, *counts, *samples;
    uint64_t *cum;
} scratch;

static splat_status begin(const splat_scene *in, uint32_t rows, splat_ref_mcmc_out *out, scratch *sc, splat_error *err)
{
    memset(out, 0, sizeof *out);
    uint32_t big = SPLAT_MAX(rows, 1u);
    sc->w = splat__malloc(sizeof *sc->w * big);
    sc->counts = splat__calloc(big, sizeof *sc->counts);
    sc->samples = splat__malloc(sizeof *sc->samples * big);
    sc->cum = splat__malloc(sizeof *sc->cum * big);
    splat_status st = splat__scene_init(&out->scene, big, err);
    out->src = splat__malloc(sizeof *out->src * big);
    out->zeroed = splat__calloc(big, 1);
    if (st == SPLAT_OK && (!sc->w || !sc->counts || !sc->samples || !sc->cum || !out->src || !out->zeroed))
        st = splat__fail(err, SPLAT_ERR_OUT_OF_HOST_MEMORY, "ref MCMC refine of %u Gaussians: out of host memory", in->count);
    if (st != SPLAT_OK) return st;
    out->scene.sh_degree = in->sh_degree;
    out->scene.count = rows;
    splat__ref_row r;
    for (uint32_t i = 0; i < in->count; i++) {
        splat__ref_load_row(in, i, &r);
        splat__ref_store_row(&out->scene, i, &r);
        out->src[i] = i;
    }
    return SPLAT_OK;
}

static splat_status end(splat_status st, splat_ref_mcmc_out *out, scratch *sc)
{
    splat__free(sc->w);
    splat__free(sc->counts);
    splat__free(sc->samples);
    splat__free(sc->cum);
    if (st != SPLAT_OK) splat__ref_mcmc_out_free(out);
    return st;
}

splat_status splat__ref_mcmc_relocate(const splat_scene *in, uint32_t step, uint32_t run_seed, splat_ref_mcmc_out *out,
                                      splat_error *err)
{
    SPLAT_ASSERT(in && out);
    uint32_t n = in->count, shift = splat__ref_mcmc_shift(n);
    scratch sc;
    splat_status st = begin(in, n, out, &sc, err);
    if (st != SPLAT_OK) return end(st, out, &sc);
    splat_scene *s = &out->scene;
    uint64_t total = 0;
    for (uint32_t i = 0; i < n; i++) {
        bool dead = splat__ref_mcmc_dead(s->opacities[i]);
        out->n_dead += dead;
        sc.w[i] = dead ? 0 : splat__ref_mcmc_weight(s->opacities[i], shift);
        total += sc.w[i];
    }
    SPLAT_ASSERT(total <= UINT32_MAX);
    if (out->n_dead == 0 || total == 0) return end(SPLAT_OK, out, &sc);
    draw(sc.w, n, sc.cum, run_seed ^ step, SPLAT_REF_MCMC_K_RELOCATE, out->n_dead, sc.samples, sc.counts);
    for (uint32_t i = 0; i < n; i++)
        if (sc.counts[i]) {
            relocate_row(s, i, sc.counts[i] + 1);
            out->zeroed[i] = 1;
        }
    splat__ref_row r;
    for (uint32_t i = 0, rank = 0; i < n; i++) {
        if (!splat__ref_mcmc_dead(in->opacities[i])) continue;
        splat__ref_load_row(s, sc.samples[rank], &r);
        splat__ref_store_row(s, i, &r);
        out->src[i] = sc.samples[rank++];
    }
    out->n_relocated = out->n_dead;
    return end(SPLAT_OK, out, &sc);
}

splat_status splat__ref_mcmc_add(const splat_scene *in, uint32_t step, uint32_t run_seed, uint32_t cap,
                                 splat_ref_mcmc_out *out, splat_error *err)
{
    SPLAT_ASSERT(in && out);
    uint32_t n = in->count, added = splat__ref_mcmc_added(n, cap), shift = splat__ref_mcmc_shift(n);
    if ((uint64_t)n + added > UINT32_MAX)
        return splat__fail(err, SPLAT_ERR_LIMIT, "ref MCMC refine: %u Gaussians and %u more exceed 2^32 - 1", n, added);
    scratch sc;
    splat_status st = begin(in, n + added, out, &sc, err);
    if (st != SPLAT_OK || added == 0) return end(st, out, &sc);
    splat_scene *s = &out->scene;
    for (uint32_t i = 0; i < n; i++) sc.w[i] = splat__ref_mcmc_weight(s->opacities[i], shift);
    draw(sc.w, n, sc.cum, run_seed ^ step, SPLAT_REF_MCMC_K_ADD, added, sc.samples, sc.counts);
    for (uint32_t i = 0; i < n; i++)
        if (sc.counts[i]) relocate_row(s, i, sc.counts[i] + 1);
    splat__ref_row r;
    for (uint32_t j = 0; j < added; j++) {
        splat__ref_load_row(s, sc.samples[j], &r);
        splat__ref_store_row(s, n + j, &r);
        out->src[n + j] = sc.samples[j];
        out->zeroed[n + j] = 1;
    }
    out->n_added = added;
    return end(SPLAT_OK, out, &sc);
}

splat_status splat__ref_mcmc_refine(const splat_scene *in, uint32_t step, uint32_t run_seed, uint32_t cap,
                                    splat_ref_mcmc_out *out, splat_error *err)
{
    splat_ref_mcmc_out first;
    splat_status st = splat__ref_mcmc_relocate(in, step, run_seed, &first, err);
    if (st == SPLAT_OK) st = splat__ref_mcmc_add(&first.scene, step, run_seed, cap, out, err);
    if (st == SPLAT_OK) {
        for (uint32_t r = 0; r < out->scene.count; r++) {
            uint32_t via = out->src[r];
            out->src[r] = first.src[via];
            if (r < in->count) out->zeroed[r] = first.zeroed[r];
        }
        out->n_dead = first.n_dead;
        out->n_relocated = first.n_relocated;
    }
    splat__ref_mcmc_out_free(&first);
    return st;
}

void splat__ref_mcmc_out_free(splat_ref_mcmc_out *out)
{
    if (!out) return;
    splat__scene_free(&out->scene);
    splat__free(out->src);
    splat__free(out->zeroed);
    memset(out, 0, sizeof *out);
}

/* ------------------------------------------------------------------ noise, regularisers */

double splat__ref_mcmc_noise_scale(double scene_scale, double world_unit, uint32_t step, uint32_t max_steps)
{
    return splat__ref_means_lr(scene_scale, step + 1, max_steps) * SPLAT_REF_MCMC_NOISE_LR / (world_unit * world_unit);
}

void splat__ref_mcmc_noise(splat_scene *s, uint32_t seed, double noise_scale)
{
    SPLAT_ASSERT(s);
    for (uint32_t i = 0; i < s->count; i++) {
        double z[6], q[4], R[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
        splat__ref_split_normals(seed, i, z);
        for (int k = 0; k < 4; k++) q[k] = s->quats[i * 4 + k];
        double n2 = q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3];
        if (n2 > 0) {
            double len = sqrt(n2), qw = q[0] / len, x = q[1] / len, y = q[2] / len, zq = q[3] / len;
            R[0] = 1 - 2 * (y * y + zq * zq), R[1] = 2 * (x * y - qw * zq), R[2] = 2 * (x * zq + qw * y);
            R[3] = 2 * (x * y + qw * zq), R[4] = 1 - 2 * (x * x + zq * zq), R[5] = 2 * (y * zq - qw * x);
            R[6] = 2 * (x * zq - qw * y), R[7] = 2 * (y * zq + qw * x), R[8] = 1 - 2 * (x * x + y * y);
        }
        double o = sigmoid(s->opacities[i]);
        double w = sigmoid(-SPLAT_REF_MCMC_NOISE_K * (o - SPLAT_REF_MCMC_NOISE_T)) * noise_scale;
        double u[3]; /* diag(s^2) R^T (w z) */
        for (int k = 0; k < 3; k++) {
            u[k] = 0;
            for (int l = 0; l < 3; l++) u[k] += R[l * 3 + k] * w * z[l];
            u[k] *= exp(2 * (double)s->log_scales[i * 3 + k]);
        }
        for (int k = 0; k < 3; k++) {
            double d = 0;
            for (int l = 0; l < 3; l++) d += R[k * 3 + l] * u[l];
            s->means[i * 3 + k] = (float)((double)s->means[i * 3 + k] + d);
        }
    }
}

double splat__ref_mcmc_reg(const splat_scene *s, double world_unit, double *d_logit, double *d_log_scale)
{
    SPLAT_ASSERT(s && world_unit > 0);
    uint32_t n = s->count;
    if (n == 0) return 0;
    double so = 0, ss = 0;
    for (uint32_t i = 0; i < n; i++) {
        double o = sigmoid(s->opacities[i]);
        so += o;
        if (d_logit) d_logit[i] = SPLAT_REF_MCMC_OPACITY_REG / n * o * (1 - o);
        for (int k = 0; k < 3; k++) {
            double e = exp((double)s->log_scales[i * 3 + k]) / world_unit;
            ss += e;
            if (d_log_scale) d_log_scale[i * 3 + k] = SPLAT_REF_MCMC_SCALE_REG / (3.0 * n) * e;
        }
    }
    return SPLAT_REF_MCMC_OPACITY_REG * so / n + SPLAT_REF_MCMC_SCALE_REG * ss / (3.0 * n);
}
