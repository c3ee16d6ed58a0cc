/* ref/densify.c: densification of docs/TRAIN.md (gsplat DefaultStrategy with its defaults):
 * the schedule, one refine (clone, split, prune) in splatc's row order, the opacity reset, and
 * the counter-based generator of the split samples. */
#include <stdlib.h>

#include "ref/ref_train.h"

#define SH_FLOATS (SPLAT_SH_COEFFS * 3)

/* ------------------------------------------------------------------------ schedule */

bool splat__ref_refine_due(uint32_t step)
{
    return step < SPLAT_REF_REFINE_STOP && step > SPLAT_REF_REFINE_START && step % SPLAT_REF_REFINE_EVERY == 0;
}

/* gsplat returns from step_post_backward at step >= refine_stop_iter before either action, so
 * the reset stops with refining (TRAIN.md: "while s < 15000"). */
bool splat__ref_reset_due(uint32_t step)
{
    return step < SPLAT_REF_REFINE_STOP && step > 0 && step % SPLAT_REF_RESET_EVERY == 0;
}

/* ------------------------------------------------------------------ random numbers */

uint32_t splat__ref_hash(uint32_t x)
{
    uint32_t state = x * 747796405u + 2891336453u;
    uint32_t word = ((state >> ((state >> 28u) + 4u)) ^ state) * 277803737u;
    return (word >> 22u) ^ word;
}

uint32_t splat__ref_word(uint32_t seed, uint32_t i, uint32_t k)
{
    return splat__ref_hash(splat__ref_hash(splat__ref_hash(seed) ^ i) ^ k);
}

double splat__ref_uniform(uint32_t seed, uint32_t i, uint32_t k)
{
    return (double)(splat__ref_word(seed, i, k) >> 8) * 0x1.0p-24 + 0x1.0p-25;
}

void splat__ref_split_normals(uint32_t seed, uint32_t i, double out[6])
{
    const double two_pi = 6.283185307179586476925;
    for (uint32_t j = 0; j < 3; j++) {
        double u1 = splat__ref_uniform(seed, i, 2 * j), u2 = splat__ref_uniform(seed, i, 2 * j + 1);
        double r = sqrt(-2 * log(u1));
        out[2 * j] = r * cos(two_pi * u2);
        out[2 * j + 1] = r * sin(two_pi * u2);
    }
}

/* ------------------------------------------------------------------------- refine */


static double max_scale(const float log_scale[3])
{
    return fmax(exp((double)log_scale[0]), fmax(exp((double)log_scale[1]), exp((double)log_scale[2])));
}

/* Child c of the split of r (input row i): mean + Rq(q/|q|) (exp(s) * z_c), log(exp(s) / 1.6),
 * the rest copied. A zero quaternion rotates by the identity, as gsplat's F.normalize (which
 * leaves 0 at 0) followed by its quaternion-to-matrix formula does. */
static void split_child(splat__ref_row *r, uint32_t seed, uint32_t i, int c)
{
    double z[6];
    splat__ref_split_normals(seed, i, z);
    double q[4] = {r->quat[0], r->quat[1], r->quat[2], r->quat[3]};
    double n2 = q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3];
    double R[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
    if (n2 > 0) {
        double len = sqrt(n2), w = q[0] / len, x = q[1] / len, y = q[2] / len, zq = q[3] / len;
        R[0] = 1 - 2 * (y * y + zq * zq), R[1] = 2 * (x * y - w * zq), R[2] = 2 * (x * zq + w * y);
        R[3] = 2 * (x * y + w * zq), R[4] = 1 - 2 * (x * x + zq * zq), R[5] = 2 * (y * zq - w * x);
        R[6] = 2 * (x * zq - w * y), R[7] = 2 * (y * zq + w * x), R[8] = 1 - 2 * (x * x + y * y);
    }
    double s[3], mean[3];
    for (int k = 0; k < 3; k++) s[k] = exp((double)r->log_scale[k]);
    for (int k = 0; k < 3; k++) {
        double acc = r->mean[k];
        for (int l = 0; l < 3; l++) acc += R[k * 3 + l] * s[l] * z[3 * c + l];
        mean[k] = acc;
    }
    for (int k = 0; k < 3; k++) {
        r->mean[k] = (float)mean[k];
        r->log_scale[k] = (float)log(s[k] / SPLAT_REF_SPLIT_SHRINK);
    }
}

static bool pruned(const splat__ref_row *r, uint32_t step, double scene_scale)
{
    double opacity = 1 / (1 + exp(-(double)r->opacity));
    if (opacity < SPLAT_REF_PRUNE_OPA) return true;
    return step > SPLAT_REF_RESET_EVERY && max_scale(r->log_scale) > SPLAT_REF_PRUNE_SCALE3D * scene_scale;
}

enum { GROW_NONE, GROW_CLONE, GROW_SPLIT };

/* The densification statistic as a budget ranks it: the average gradient in single precision,
 * as the GPU computes it (grad_stat in densify_common.glsl), so that both rank alike. */
static float rank_stat(const float *grad2d, const float *count, uint32_t i) { return grad2d[i] / fmaxf(count[i], 1.0f); }

typedef struct candidate {
    float stat;
    uint32_t row;
} candidate;

/* Largest statistic first, ties by row. */
static int candidate_order(const void *pa, const void *pb)
{
    const candidate *a = pa, *b = pb;
    if (a->stat != b->stat) return a->stat > b->stat ? -1 : 1;
    return a->row < b->row ? -1 : a->row > b->row;
}

/* The budget's cut, on the classification `grow` [n] (docs/TRAIN.md, "A budget"): when the rows
 * would number more than max_count, the candidates (a clone of a survivor, a split whose children
 * survive: each one more row than the base) are ranked by the statistic and those past the first
 * max_count - base are set to GROW_NONE. */
static splat_status apply_budget(const splat_scene *in, const float *grad2d, const float *count, uint8_t *grow,
                                 uint32_t step, double scene_scale, uint32_t run_seed, uint32_t max_count,
                                 splat_error *err)
{
    uint32_t n = in->count, seed = run_seed ^ step, m = 0;
    uint64_t kept = 0, splits = 0;
    candidate *cand = splat__malloc(sizeof *cand * (n ? n : 1));
    if (!cand) return splat__fail(err, SPLAT_ERR_OUT_OF_HOST_MEMORY, "ref budget of %u Gaussians: out of host memory", n);
    for (uint32_t i = 0; i < n; i++) {
        splat__ref_row r;
        splat__ref_load_row(in, i, &r);
        bool gone = pruned(&r, step, scene_scale);
        if (grow[i] != GROW_SPLIT) kept += !gone;
        if (grow[i] == GROW_CLONE && !gone) cand[m++] = (candidate){rank_stat(grad2d, count, i), i};
        if (grow[i] == GROW_SPLIT) {
            split_child(&r, seed, i, 0);
            if (!pruned(&r, step, scene_scale)) cand[m++] = (candidate){rank_stat(grad2d, count, i), i}, splits++;
        }
    }
    uint64_t base = kept + splits;
    if (base + m > max_count) {
        uint64_t made = max_count > base ? max_count - base : 0;
        qsort(cand, m, sizeof *cand, candidate_order);
        for (uint64_t k = made; k < m; k++) grow[cand[k].row] = GROW_NONE;
    }
    splat__free(cand);
    return SPLAT_OK;
}

splat_status splat__ref_refine(const splat_scene *in, const float *grad2d, const float *count, uint32_t step,
                              double scene_scale, uint32_t run_seed, splat_ref_refine_out *out,
                              splat_error *err)
{
    return splat__ref_refine_budget(in, grad2d, count, step, scene_scale, run_seed, UINT32_MAX, out, err);
}

splat_status splat__ref_refine_budget(const splat_scene *in, const float *grad2d, const float *count, uint32_t step,
                                      double scene_scale, uint32_t run_seed, uint32_t max_count,
                                      splat_ref_refine_out *out, splat_error *err)
{
    SPLAT_ASSERT(in && out && (in->count == 0 || (grad2d && count)));
    memset(out, 0, sizeof *out);
    splat_status st = SPLAT_OK;
    uint32_t n = in->count;
    uint8_t *grow = splat__calloc(n ? n : 1, 1);
    if (!grow) {
        st = splat__fail(err, SPLAT_ERR_OUT_OF_HOST_MEMORY, "ref refine of %u Gaussians: out of host memory", n);
        goto fail;
    }

    /* Classify every existing Gaussian. */
    for (uint32_t i = 0; i < n; i++) {
        double avg = (double)grad2d[i] / fmax((double)count[i], 1);
        if (!(avg > SPLAT_REF_GROW_GRAD2D)) continue;
        splat__ref_row r;
        splat__ref_load_row(in, i, &r);
        bool small = max_scale(r.log_scale) <= SPLAT_REF_GROW_SCALE3D * scene_scale;
        grow[i] = small ? GROW_CLONE : GROW_SPLIT;
    }
    if (max_count != UINT32_MAX) {
        st = apply_budget(in, grad2d, count, grow, step, scene_scale, run_seed, max_count, err);
        if (st != SPLAT_OK) goto fail;
    }
    for (uint32_t i = 0; i < n; i++) {
        out->n_clone += grow[i] == GROW_CLONE;
        out->n_split += grow[i] == GROW_SPLIT;
    }
    uint64_t grown = (uint64_t)n + out->n_clone + out->n_split;
    if (grown > UINT32_MAX) {
        st = splat__fail(err, SPLAT_ERR_LIMIT, "ref refine: %llu Gaussians after growing exceed 2^32 - 1",
                         (unsigned long long)grown);
        goto fail;
    }
    st = splat__scene_init(&out->scene, (uint32_t)grown, err);
    if (st != SPLAT_OK) goto fail;
    out->scene.sh_degree = in->sh_degree;
    out->src = splat__malloc(sizeof(uint32_t) * (grown ? grown : 1));
    out->kind = splat__malloc(grown ? grown : 1);
    if (!out->src || !out->kind) {
        st = splat__fail(err, SPLAT_ERR_OUT_OF_HOST_MEMORY, "ref refine of %u Gaussians: out of host memory", n);
        goto fail;
    }

    /* The grown sequence in TRAIN.md's order, four passes over the sources; each row is tested
     * for pruning as it is made and appended only when it survives. */
    uint32_t seed = run_seed ^ step, o = 0;
    for (int pass = SPLAT_REF_ROW_KEPT; pass <= SPLAT_REF_ROW_SPLIT1; pass++)
        for (uint32_t i = 0; i < n; i++) {
            bool take = pass == SPLAT_REF_ROW_KEPT    ? grow[i] != GROW_SPLIT
                        : pass == SPLAT_REF_ROW_CLONE ? grow[i] == GROW_CLONE
                                                      : grow[i] == GROW_SPLIT;
            if (!take) continue;
            splat__ref_row r;
            splat__ref_load_row(in, i, &r);
            if (pass == SPLAT_REF_ROW_SPLIT0 || pass == SPLAT_REF_ROW_SPLIT1)
                split_child(&r, seed, i, pass - SPLAT_REF_ROW_SPLIT0);
            if (pruned(&r, step, scene_scale)) {
                out->n_prune++;
                continue;
            }
            splat__ref_store_row(&out->scene, o, &r);
            out->src[o] = i;
            out->kind[o] = (uint8_t)pass;
            o++;
        }
    out->scene.count = o;
    splat__free(grow);
    return SPLAT_OK;

fail:
    splat__free(grow);
    splat__ref_refine_out_free(out);
    return st;
}

void splat__ref_refine_out_free(splat_ref_refine_out *out)
{
    if (!out) return;
    splat__scene_free(&out->scene);
    splat__free(out->src);
    splat__free(out->kind);
    memset(out, 0, sizeof *out);
}

/* ------------------------------------------------------------------ opacity reset */

/* gsplat's reset_opa: torch.clamp(opacities, max=logit(0.01)); a comparison rather than fminf
 * so that a NaN stays NaN, as in torch. */
void splat__ref_opacity_reset(splat_scene *s)
{
    SPLAT_ASSERT(s);
    float lim = (float)log(SPLAT_REF_RESET_OPA / (1 - SPLAT_REF_RESET_OPA));
    for (uint32_t i = 0; i < s->count; i++)
        if (s->opacities[i] > lim) s->opacities[i] = lim;
}
