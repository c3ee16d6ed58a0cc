/* The MCMC strategy's kernels against the CPU reference (src/ref/mcmc.c), and MCMC training runs. */
#include "gpu_support.h"
#include "harness.h"
#include "ref/ref_train.h"
#include "train/strategy.h"

/* Tolerances of eq. 9 in float32 against the reference (measured on lavapipe, see each use). */
#define TOL_RELOCATE_LOGIT 5e-6  /* the new opacity logit, relative to max(1, |logit|) */
#define TOL_RELOCATE_SCALE 5e-6  /* the log of the scale's factor, per unit of the sum's condition (cond) */

typedef struct mfix {
    splat_gpu *g;
    splat_mcmc_pipes pipes;
    splat_mcmc_bufs bufs;
    splat_stream s;
    splat_sorter sorter;
} mfix;

static bool mfix_init(mfix *f)
{
    memset(f, 0, sizeof *f);
    f->g = t_gpu();
    splat_error err = {0};
    if (!f->g) return false;
    if (splat__mcmc_pipes_init(f->g, &f->pipes, &err) || splat__mcmc_bufs_init(f->g, &f->bufs, &err) ||
        splat__stream_init(f->g, &f->s, &err) || splat__sorter_init(f->g, &f->sorter, NULL, &err)) {
        splat_test_fail(__FILE__, __LINE__, "fixture:", "%s", err.msg);
        return false;
    }
    return true;
}

static void mfix_free(mfix *f)
{
    if (!f->g) return;
    splat__sorter_free(&f->sorter);
    splat__stream_free(&f->s);
    splat__mcmc_bufs_free(f->g, &f->bufs);
    splat__mcmc_pipes_free(f->g, &f->pipes);
}

static uint32_t rand_u32(uint32_t lo, uint32_t hi) /* inclusive */
{
    return lo + (uint32_t)(splat__rng_u64(splat_test_rng()) % ((uint64_t)hi - lo + 1));
}

static double normal(void) { return splat__rng_normal(splat_test_rng()); }
static double sigmoid(double x) { return 1 / (1 + exp(-x)); }

/* Words of moments a parameter float of group g (train_types.h). The tests hold moments in a scene
 * of 2 n rows, the most any group needs; group g's n rows take n mwords(g) of them. */
static uint32_t mwords(uint32_t g) { return SPLAT_MOMENT_WORDS(splat__groups[g].flags); }

/* n random Gaussians, `dead` of every 100 dead (some exactly at the dead logit, some a float
 * above it), the others' opacities spread over (0.005, 1); moments random. */
static bool random_model(splat_scene *s, splat_scene *mom, uint32_t n, uint32_t dead)
{
    splat_error err = {0};
    if (splat_scene_init(s, n, &err) != SPLAT_OK || splat_scene_init(mom, 2 * n, &err) != SPLAT_OK) return false;
    s->count = n;
    s->sh_degree = 3;
    mom->count = 2 * n;
    float edge = (float)log(0.005 / 0.995);
    for (uint32_t i = 0; i < n; i++) {
        for (int k = 0; k < 3; k++) s->means[i * 3 + k] = (float)(3 * normal()), s->log_scales[i * 3 + k] = (float)t_uniform(-6, 0);
        for (int k = 0; k < 4; k++) s->quats[i * 4 + k] = (float)normal();
        bool d = rand_u32(0, 99) < dead;
        s->opacities[i] = d ? (rand_u32(0, 20) == 0 ? edge : (float)t_uniform(-12, edge))
                            : (rand_u32(0, 20) == 0 ? nextafterf(edge, 0) : (float)t_uniform(edge, 8));
        for (int k = 0; k < 48; k++) s->sh[i * 48 + k] = (float)normal();
    }
    for (uint32_t g = 0; g < SPLAT_GROUP_COUNT; g++) {
        float *m = *splat__scene_group(mom, g);
        for (uint64_t e = 0; e < (uint64_t)mwords(g) * n * splat__groups[g].width; e++) m[e] = (float)t_uniform(-1, 1);
    }
    return true;
}

static bool upload(splat_gpu *g, splat_scene_gpu *p, splat_scene_gpu *m, const splat_scene *s, const splat_scene *mom)
{
    splat_error err = {0};
    bool ok = splat__scene_gpu_init(g, p, "params", s->count, false, &err) == SPLAT_OK &&
              splat__moments_init(g, m, s->count, &err) == SPLAT_OK && splat__scene_gpu_upload(g, p, s, &err) == SPLAT_OK;
    for (uint32_t k = 0; k < SPLAT_GROUP_COUNT && ok; k++)
        ok = splat__buf_upload(g, &m->group[k], 0, splat__scene_group_c(mom, k), s->count * splat__scene_gpu_row_bytes(m, k), &err) ==
             SPLAT_OK;
    if (!ok) splat_test_fail(__FILE__, __LINE__, "upload:", "%s", err.msg);
    return ok;
}

static bool download(splat_gpu *g, const splat_scene_gpu *p, splat_scene_gpu *m, uint32_t n, splat_scene *s, splat_scene *mom)
{
    splat_error err = {0};
    memset(s, 0, sizeof *s), memset(mom, 0, sizeof *mom);
    bool ok = splat_scene_init(s, n, &err) == SPLAT_OK && splat_scene_init(mom, 2 * n, &err) == SPLAT_OK &&
              splat__scene_gpu_download(g, p, s, &err) == SPLAT_OK;
    for (uint32_t k = 0; k < SPLAT_GROUP_COUNT && ok; k++)
        ok = splat__buf_download(g, &m->group[k], 0, *splat__scene_group(mom, k), (uint64_t)n * splat__scene_gpu_row_bytes(m, k), &err) ==
             SPLAT_OK;
    mom->count = 2 * n;
    if (!ok) splat_test_fail(__FILE__, __LINE__, "download:", "%s", err.msg);
    s->sh_degree = 3;
    return ok;
}

static bool rows_equal(const splat_scene *a, uint32_t i, const splat_scene *b, uint32_t j, bool opacity_scale)
{
    bool same = memcmp(a->means + i * 3, b->means + j * 3, 12) == 0 && memcmp(a->quats + i * 4, b->quats + j * 4, 16) == 0 &&
                memcmp(a->sh + i * 48, b->sh + j * 48, 192) == 0;
    if (opacity_scale)
        same = same && a->opacities[i] == b->opacities[j] && memcmp(a->log_scales + i * 3, b->log_scales + j * 3, 12) == 0;
    return same;
}

/* Moments of row i of a and row j of b (each group's rows of mwords(g) width): equal, or a's all zero. */
static bool moments_row(const splat_scene *a, uint32_t i, const splat_scene *b, uint32_t j, bool zero)
{
    for (uint32_t g = 0; g < SPLAT_GROUP_COUNT; g++) {
        uint32_t w = splat__groups[g].width * mwords(g);
        const float *x = splat__scene_group_c(a, g) + (uint64_t)w * i, *y = splat__scene_group_c(b, g) + (uint64_t)w * j;
        for (uint32_t k = 0; k < w; k++)
            if (zero ? x[k] != 0.0f : x[k] != y[k]) return false;
    }
    return true;
}

/* Eq. 9 of the GPU's row r against the reference's on the input row i with `ratio`: the error of
 * the new logit (relative to max(1, |logit|)) and of the log-scale factor per unit of condition. */
static void relocation_error(const splat_scene *got, uint32_t r, const splat_scene *in, uint32_t i, uint32_t ratio,
                             double *e_logit, double *e_scale)
{
    double sc[3], ns[3], no, cond;
    for (int k = 0; k < 3; k++) sc[k] = exp((double)in->log_scales[i * 3 + k]);
    splat__ref_mcmc_relocation(sigmoid(in->opacities[i]), sc, ratio, &no, ns, &cond);
    double want = log(no / (1 - no));
    *e_logit = fabs(got->opacities[r] - want) / fmax(1, fabs(want));
    *e_scale = 0;
    for (int k = 0; k < 3; k++) {
        double f = got->log_scales[r * 3 + k] - (double)in->log_scales[i * 3 + k], fw = log(ns[k] / sc[k]);
        /* the float sum ls + log(coeff) rounds at the size of ls */
        double e = fabs(f - fw) - 1.2e-7 * fabs((double)in->log_scales[i * 3 + k]);
        *e_scale = fmax(*e_scale, e / cond);
    }
}

/* Eq. 9 on the GPU (mcmc_relocate) against the reference, on the hand-computed cases of
 * ref_mcmc_relocation_known and on random opacities, scales and ratios 1..51 (counts 0..60, past
 * the clamp); rows with no sample untouched bit for bit; moments zeroed only when asked. */
SPLAT_TEST(train_mcmc_relocation_vs_ref)
{
    mfix f;
    if (!mfix_init(&f)) goto done;
    splat_error err = {0};
    uint32_t n = rand_u32(300, 1500);
    splat_scene s, mom, got, gotm;
    T_REQUIRE(random_model(&s, &mom, n, 0));
    uint32_t *counts = calloc(n, 4);
    /* the known cases: opacity and ratio (count + 1) */
    const double known[][2] = {{0.3, 1}, {0.75, 2}, {0.875, 3}, {0.004, 2}, {1 - 1e-7, 1}};
    for (uint32_t i = 0; i < n; i++) {
        if (i < SPLAT_COUNTOF(known)) {
            s.opacities[i] = (float)log(known[i][0] / (1 - known[i][0]));
            counts[i] = (uint32_t)known[i][1] - 1;
        } else if (i == SPLAT_COUNTOF(known)) {
            s.opacities[i] = 40, counts[i] = 1; /* an opacity 1 in float: the new one is clamped below 1 */
        } else {
            s.opacities[i] = (float)t_uniform(-6, 14);
            counts[i] = rand_u32(0, 3) == 0 ? 0 : rand_u32(1, 4) == 1 ? rand_u32(1, 60) : rand_u32(1, 4);
        }
    }
    bool zero = rand_u32(0, 1);
    splat_scene_gpu p, m;
    T_REQUIRE(upload(f.g, &p, &m, &s, &mom));
    splat_buf b_counts;
    T_OK(splat__buf_init(f.g, &b_counts, "counts", n * 4, SPLAT_MEM_DEVICE, &err), &err);
    T_OK(splat__buf_upload(f.g, &b_counts, 0, counts, n * 4, &err), &err);
    splat__mcmc_relocate_record(splat__stream_cmd(&f.s), &f.pipes, SPLAT_VIEW(b_counts), &p, &m, n, zero);
    T_OK(splat__stream_sync(&f.s, SPLAT_SYNC_COMMIT_AND_WAIT, &err), &err);
    T_REQUIRE(download(f.g, &p, &m, n, &got, &gotm));
    double worst_logit = 0, worst_scale = 0;
    uint32_t bad = 0;
    for (uint32_t i = 0; i < n; i++) {
        if (counts[i] == 0) {
            bad += !rows_equal(&got, i, &s, i, true) || !moments_row(&gotm, i, &mom, i, false);
            continue;
        }
        double el, es;
        relocation_error(&got, i, &s, i, counts[i] + 1, &el, &es);
        worst_logit = fmax(worst_logit, el), worst_scale = fmax(worst_scale, es);
        bool ok = rows_equal(&got, i, &s, i, false) && moments_row(&gotm, i, &mom, i, zero);
        if ((!ok || el > TOL_RELOCATE_LOGIT || es > TOL_RELOCATE_SCALE) && bad++ < 3)
            printf("  row %u: opacity %.9g ratio %u: logit %.9g (error %.3g), scale error %.3g per condition, rest %s\n", i,
                   sigmoid(s.opacities[i]), SPLAT_MIN(counts[i] + 1, 51u), got.opacities[i], el, es, ok ? "right" : "wrong");
    }
    printf("  %u rows: worst logit error %.3g, worst scale error %.3g per unit of condition\n", n, worst_logit, worst_scale);
    T_CHECK(bad == 0, "%u rows wrong", bad);
    free(counts);
    splat__buf_free(f.g, &b_counts);
    splat__scene_gpu_free(f.g, &p), splat__scene_gpu_free(f.g, &m);
    splat_scene_free(&s), splat_scene_free(&mom), splat_scene_free(&got), splat_scene_free(&gotm);
done:
    mfix_free(&f);
}

/* The GPU's noise `got` [n] on the model `in` against the reference's (seed = the generator's,
 * noise_scale): the worst error of a mean, in units of the size of its noise's terms (|Sigma| |w z|
 * <= max scale^2 w |z|, each normal as large as its Box-Muller pair's radius, for float's cos and
 * sin err absolutely by a part of it, and no less than a typical normal, for float's log(u1) errs
 * absolutely near u1 = 1, where the radius is small), times 1 + 100 opacity (the gate's exponent
 * 100 (o - 0.005) carries float's rounding of o times 100), 2 ulp of the mean aside. *moved: the
 * largest move. Every other parameter must be unchanged (else +inf). */
static double noise_error(const splat_scene *got, const splat_scene *in, uint32_t seed, double noise_scale, double *moved)
{
    splat_error err = {0};
    splat_scene want;
    uint32_t n = in->count;
    if (splat_scene_init(&want, n, &err) != SPLAT_OK) return INFINITY;
    want.count = n;
    for (uint32_t g = 0; g < SPLAT_GROUP_COUNT; g++)
        memcpy(*splat__scene_group(&want, g), splat__scene_group_c(in, g), 4ull * n * splat__groups[g].width);
    splat__ref_mcmc_noise(&want, seed, noise_scale);
    double worst = 0;
    *moved = 0;
    for (uint32_t i = 0; i < n; i++) {
        double z[6], o = sigmoid(in->opacities[i]), w = fabs(noise_scale) / (1 + exp(100 * (o - 0.005))), smax = 0;
        splat__ref_split_normals(seed, i, z);
        for (int k = 0; k < 3; k++) smax = fmax(smax, exp(2 * (double)in->log_scales[i * 3 + k]));
        double mag = smax * w * (2 * hypot(z[0], z[1]) + hypot(z[2], z[3]) + 1);
        for (int k = 0; k < 3; k++) {
            double e = fabs((double)got->means[i * 3 + k] - want.means[i * 3 + k]) - 2.4e-7 * fabs((double)in->means[i * 3 + k]);
            worst = fmax(worst, e / fmax(mag * (1 + 100 * o), 1e-30));
            *moved = fmax(*moved, fabs((double)want.means[i * 3 + k] - in->means[i * 3 + k]));
        }
        if (memcmp(got->quats + 4 * i, in->quats + 4 * i, 16) != 0 || got->opacities[i] != in->opacities[i] ||
            memcmp(got->log_scales + 3 * i, in->log_scales + 3 * i, 12) != 0 || memcmp(got->sh + 48 * i, in->sh + 48 * i, 192) != 0)
            worst = INFINITY;
    }
    splat_scene_free(&want);
    return worst;
}

/* Compares a GPU refine's rows and moments with the reference's out, made from `in` with moments
 * `mom`; counts the rows wrong. The samples (sources) and every copied value must be the
 * reference's exactly; eq. 9's values within the tolerances. */
static uint32_t compare_refine(const splat_scene *got, const splat_scene *gotm, const splat_ref_mcmc_out *ref,
                               const splat_scene *in, const splat_scene *mom, const uint32_t *ratio)
{
    uint32_t bad = 0, n = in->count;
    for (uint32_t r = 0; r < ref->scene.count; r++) {
        uint32_t i = ref->src[r];
        bool ok = rows_equal(got, r, &ref->scene, r, false) && moments_row(gotm, r, mom, r < n ? r : 0, ref->zeroed[r]);
        double el = 0, es = 0;
        if (ratio[i] > 1) relocation_error(got, r, in, i, ratio[i], &el, &es);
        else ok = ok && got->opacities[r] == in->opacities[i] && memcmp(got->log_scales + r * 3, in->log_scales + i * 3, 12) == 0;
        if ((!ok || el > TOL_RELOCATE_LOGIT || es > TOL_RELOCATE_SCALE) && bad++ < 3)
            printf("    row %u (source %u, ratio %u, zeroed %u): copies and moments %s, logit error %.3g, scale %.3g\n", r, i,
                   ratio[i], ref->zeroed[r], ok ? "right" : "wrong", el, es);
    }
    return bad;
}

/* ratio [n + 1]: each of the first n rows' share after an adding, 1 plus the rows added from it */
static void added_ratios(uint32_t *ratio, uint32_t n, const splat_ref_mcmc_out *ref)
{
    memset(ratio, 0, (n + 1) * 4);
    for (uint32_t r = n; r < ref->scene.count; r++) ratio[ref->src[r]]++;
    for (uint32_t i = 0; i < n; i++) ratio[i] += 1;
}

/* The relocation alone (job: the model s, mom uploaded, its cap at the count) on the GPU against the
 * reference's, every row: *rel, *relm the GPU's result, ratio [n + 1] each row's samples + 1. The
 * rows wrong, or UINT32_MAX when the run or the download failed. */
static uint32_t relocation_vs_ref(splat_mcmc_job *job, const splat_scene *s, const splat_scene *mom, uint32_t step,
                                  uint32_t run_seed, splat_scene *rel, splat_scene *relm, uint32_t *ratio)
{
    splat_error err = {0};
    uint32_t n = s->count;
    splat_mcmc_result res;
    splat_ref_mcmc_out ref;
    if (splat__mcmc_refine(job, &res, &err) != SPLAT_OK || splat__ref_mcmc_relocate(s, step, run_seed, &ref, &err) != SPLAT_OK) {
        splat_test_fail(__FILE__, __LINE__, "relocation:", "%s", err.msg);
        return UINT32_MAX;
    }
    printf("  %u Gaussians, %u dead: relocated %u (reference %u dead, %u relocated)\n", n, res.dead, res.relocated, ref.n_dead,
           ref.n_relocated);
    T_CHECK(res.count == n && res.dead == ref.n_dead && res.relocated == ref.n_relocated && res.added == 0,
            "%u rows %u dead %u relocated %u added", res.count, res.dead, res.relocated, res.added);
    uint32_t bad = UINT32_MAX;
    if (download(job->gpu, job->params, job->moments, n, rel, relm)) {
        memset(ratio, 0, (n + 1) * 4ull);
        for (uint32_t r = 0; r < n; r++)
            if (ref.src[r] != r) ratio[ref.src[r]]++;
        for (uint32_t i = 0; i < n; i++) ratio[i] += 1; /* samples + 1 (1: untouched) */
        bad = compare_refine(rel, relm, &ref, s, mom, ratio);
    }
    splat__ref_mcmc_out_free(&ref);
    return bad;
}

/* The refine on the GPU against the reference on random models: first the relocation alone (a cap
 * at the count), every sample exact; then the whole refine from the same input, whose adding must
 * be the reference's adding on what the GPU relocated (the relocated opacities are the GPU's
 * floats, so both weigh them alike). Dead Gaussians sit exactly at and a float above the dead
 * logit. A model where every Gaussian is dead relocates none and still adds. */
SPLAT_TEST(train_mcmc_refine_vs_ref)
{
    mfix f;
    if (!mfix_init(&f)) goto done;
    splat_error err = {0};
    uint32_t n = rand_u32(500, 3000), step = 100 * rand_u32(6, 249), run_seed = (uint32_t)splat__rng_u64(splat_test_rng());
    uint32_t cap = rand_u32(0, 1) ? n + rand_u32(1, n / 25) : 1000000;
    splat_scene s, mom, rel, relm, got, gotm, dead, deadm;
    T_REQUIRE(random_model(&s, &mom, n, rand_u32(20, 60)));
    uint32_t *ratio = calloc(n + 1, 4);

    /* the relocation alone */
    splat_scene_gpu p, m;
    T_REQUIRE(upload(f.g, &p, &m, &s, &mom));
    splat_mcmc_job job = {.gpu = f.g, .stream = &f.s, .sorter = &f.sorter, .pipes = &f.pipes, .bufs = &f.bufs, .params = &p,
                          .moments = &m, .count = n, .cap = n, .seed = run_seed ^ step};
    uint32_t bad = relocation_vs_ref(&job, &s, &mom, step, run_seed, &rel, &relm, ratio);
    T_REQUIRE(bad != UINT32_MAX);
    T_CHECK(bad == 0, "relocation: %u rows wrong", bad);
    splat__scene_gpu_free(f.g, &p), splat__scene_gpu_free(f.g, &m);
    splat_mcmc_result res;
    splat_ref_mcmc_out ref;

    /* the whole refine, against the reference's adding on the GPU's relocation */
    T_REQUIRE(upload(f.g, &p, &m, &s, &mom));
    job.params = &p, job.moments = &m, job.cap = cap;
    T_OK(splat__mcmc_refine(&job, &res, &err), &err);
    T_OK(splat__ref_mcmc_add(&rel, step, run_seed, cap, &ref, &err), &err);
    printf("  the whole refine (cap %u): %u rows, %u added (reference %u)\n", cap, res.count, res.added, ref.n_added);
    T_REQUIRE(res.count == ref.scene.count && res.added == ref.n_added && p.count == res.count, "%u rows, %u added", res.count,
              res.added);
    T_REQUIRE(download(f.g, &p, &m, res.count, &got, &gotm));
    added_ratios(ratio, n, &ref);
    bad = compare_refine(&got, &gotm, &ref, &rel, &relm, ratio);
    T_CHECK(bad == 0, "adding: %u rows wrong", bad);
    splat__ref_mcmc_out_free(&ref);
    splat__scene_gpu_free(f.g, &p), splat__scene_gpu_free(f.g, &m);

    /* with the step's noise: after the adding, on every row, of seed run_seed ^ step */
    splat_scene noisy, noisym;
    double scene_scale = t_uniform(0.5, 10), world_unit = t_uniform(0.2, 5);
    T_REQUIRE(upload(f.g, &p, &m, &s, &mom));
    job.params = &p, job.moments = &m, job.noise_scale = (float)splat__ref_mcmc_noise_scale(scene_scale, world_unit, step, 30000);
    T_OK(splat__mcmc_refine(&job, &res, &err), &err);
    T_REQUIRE(download(f.g, &p, &m, res.count, &noisy, &noisym));
    double moved, worst = noise_error(&noisy, &got, run_seed ^ step, job.noise_scale, &moved);
    printf("  with noise: largest move %.3g, worst error %.3g of the noise's size\n", moved, worst);
    T_CHECK(worst < T_TOL_MOVE && moved > 0 && memcmp(noisym.sh, gotm.sh, 192ull * res.count) == 0,
            "the refine's noise: error %.3g of its size", worst);
    splat__scene_gpu_free(f.g, &p), splat__scene_gpu_free(f.g, &m);
    job.noise_scale = 0;

    /* the strategy's refine step in a run of 30000 steps does exactly this */
    splat_strategy_state *st = NULL;
    T_OK(splat__strategy_mcmc.init(&st, f.g, &err), &err);
    splat_model model = {.count = n};
    T_REQUIRE(upload(f.g, &model.params, &model.moments, &s, &mom));
    splat_train_desc desc = {.steps = 30000, .seed = run_seed, .max_gaussians = cap};
    splat_strategy_ctx ctx = {.gpu = f.g, .stream = &f.s, .sorter = &f.sorter, .model = &model, .desc = &desc,
                              .scene_scale = scene_scale, .world_unit = world_unit};
    bool resized = false;
    /* with the device's free memory known, as on NVIDIA (lavapipe reports none): the memory fit's
     * whole path, which once read render buffers this context has none of (a crash on the H100) */
    uint64_t limit = f.g->mem_limit;
    f.g->mem_limit = 1ull << 40;
    T_OK(splat__strategy_mcmc.run(st, &ctx, step, &resized, &err), &err);
    f.g->mem_limit = limit;
    splat_scene viaop, viaopm;
    T_REQUIRE(download(f.g, &model.params, &model.moments, model.count, &viaop, &viaopm));
    T_CHECK(resized == (model.count != n) && model.count == noisy.count && memcmp(viaop.means, noisy.means, 12ull * noisy.count) == 0 &&
                memcmp(viaop.opacities, noisy.opacities, 4ull * noisy.count) == 0,
            "the strategy's refine step differs from a refine with the step's noise");
    splat_scene_free(&viaop), splat_scene_free(&viaopm), splat_scene_free(&noisy), splat_scene_free(&noisym);
    splat__model_free(f.g, &model);
    splat__strategy_mcmc.free(st, f.g);

    /* every Gaussian dead, with the smallest weights (some rounding to 0, raised to 1): nothing to
     * relocate onto, and the adding's rows as the reference's. Weights of 1 to 8 put about a third
     * of the samples on the first unit of a run, where a search that stops short picks the row
     * before; the cap is left open so that at least 25 rows are added. */
    for (uint32_t i = 0; i < n; i++) s.opacities[i] = (float)t_uniform(-14, -9);
    T_REQUIRE(upload(f.g, &p, &m, &s, &mom));
    job.params = &p, job.moments = &m, job.cap = 1000000;
    T_OK(splat__mcmc_refine(&job, &res, &err), &err);
    T_OK(splat__ref_mcmc_refine(&s, step, run_seed, job.cap, &ref, &err), &err);
    T_CHECK(res.dead == n && res.relocated == 0 && res.count == ref.scene.count && ref.n_relocated == 0,
            "all dead: %u dead, %u relocated, %u rows (reference %u)", res.dead, res.relocated, res.count, ref.scene.count);
    if (res.count == ref.scene.count) {
        T_REQUIRE(download(f.g, &p, &m, res.count, &dead, &deadm));
        added_ratios(ratio, n, &ref);
        bad = compare_refine(&dead, &deadm, &ref, &s, &mom, ratio);
        printf("  all dead: %u added\n", res.added);
        T_CHECK(bad == 0, "all dead: %u rows wrong", bad);
        splat_scene_free(&dead), splat_scene_free(&deadm);
    }
    splat__ref_mcmc_out_free(&ref);
    splat__scene_gpu_free(f.g, &p), splat__scene_gpu_free(f.g, &m);

    free(ratio);
    splat_scene_free(&s), splat_scene_free(&mom), splat_scene_free(&rel), splat_scene_free(&relm);
    splat_scene_free(&got), splat_scene_free(&gotm);
done:
    mfix_free(&f);
}

/* The relocation on more Gaussians than 65,537, where the sampling's weights (up to 65,535 each)
 * must be shifted down for their sum to fit 32 bits: rows against the reference's. */
SPLAT_TEST(train_mcmc_relocation_many)
{
    mfix f;
    if (!mfix_init(&f)) goto done;
    uint32_t n = rand_u32(66000, 72000), step = 100 * rand_u32(6, 249), run_seed = (uint32_t)splat__rng_u64(splat_test_rng());
    splat_scene s, mom, rel, relm;
    T_REQUIRE(random_model(&s, &mom, n, 5));
    for (uint32_t i = 0; i < n; i++)
        if (s.opacities[i] > 0) s.opacities[i] = (float)t_uniform(6, 10); /* weights near the largest */
    splat_scene_gpu p, m;
    T_REQUIRE(upload(f.g, &p, &m, &s, &mom));
    splat_mcmc_job job = {.gpu = f.g, .stream = &f.s, .sorter = &f.sorter, .pipes = &f.pipes, .bufs = &f.bufs, .params = &p,
                          .moments = &m, .count = n, .cap = n, .seed = run_seed ^ step};
    uint32_t *ratio = calloc(n + 1, 4);
    T_REQUIRE(ratio);
    uint32_t bad = relocation_vs_ref(&job, &s, &mom, step, run_seed, &rel, &relm, ratio);
    free(ratio);
    T_REQUIRE(bad != UINT32_MAX);
    T_CHECK(bad == 0, "relocation of %u Gaussians: %u rows wrong", n, bad);
    splat__scene_gpu_free(f.g, &p), splat__scene_gpu_free(f.g, &m);
    splat_scene_free(&s), splat_scene_free(&mom), splat_scene_free(&rel), splat_scene_free(&relm);
done:
    mfix_free(&f);
}

/* The strategy's refine step where its scratch does not fit beside the model (a failure the test
 * injects, as a device without a memory budget would meet it): the step is skipped, the model
 * kept bit for bit, the memory bound recorded at that step with the count; the next refine, with
 * the memory back, relocates and adds as always. */
SPLAT_TEST(train_mcmc_scratch_fails)
{
    mfix f;
    if (!mfix_init(&f)) goto done;
    splat_error err = {0};
    uint32_t n = rand_u32(500, 3000), step = 100 * rand_u32(6, 148), run_seed = (uint32_t)splat__rng_u64(splat_test_rng());
    splat_scene s, mom, got, gotm;
    T_REQUIRE(random_model(&s, &mom, n, rand_u32(20, 60)));
    splat_strategy_state *st = NULL;
    T_OK(splat__strategy_mcmc.init(&st, f.g, &err), &err);
    splat_model model = {.count = n};
    T_REQUIRE(upload(f.g, &model.params, &model.moments, &s, &mom));
    splat_train_desc desc = {.steps = 30000, .seed = run_seed, .max_gaussians = 1000000};
    splat_strategy_ctx ctx = {.gpu = f.g, .stream = &f.s, .sorter = &f.sorter, .model = &model, .desc = &desc,
                              .scene_scale = t_uniform(0.5, 10), .world_unit = t_uniform(0.2, 5)};
    bool resized = true;
    printf("  %u Gaussians, step %u, seed %u\n", n, step, run_seed);
    splat__buf_fail_prefix = "mcmc.", splat__buf_fail_times = 1;
    splat_status rs = splat__strategy_mcmc.run(st, &ctx, step, &resized, &err);
    uint32_t unused = splat__buf_fail_times;
    splat__buf_fail_prefix = NULL, splat__buf_fail_times = 0;
    T_OK(rs, &err);
    T_CHECK(unused == 0, "the refine allocated no scratch");
    T_CHECK(!resized && model.count == n && model.memory_cap_step == step && model.memory_cap == n,
            "skipped refine: resized %d, %u Gaussians, bound %u at step %u", resized, model.count, model.memory_cap,
            model.memory_cap_step);
    T_REQUIRE(download(f.g, &model.params, &model.moments, n, &got, &gotm));
    bool same = true;
    for (uint32_t g = 0; g < SPLAT_GROUP_COUNT; g++) {
        size_t w = splat__groups[g].width * 4ull;
        same = same && memcmp(splat__scene_group_c(&got, g), splat__scene_group_c(&s, g), w * n) == 0 &&
               memcmp(splat__scene_group_c(&gotm, g), splat__scene_group_c(&mom, g), w * mwords(g) * n) == 0;
    }
    T_CHECK(same, "a skipped refine changed the model");
    splat_scene_free(&got), splat_scene_free(&gotm);

    /* the next refine has its scratch: dead ones relocated (the opacities move) and 5 % added */
    T_OK(splat__strategy_mcmc.run(st, &ctx, step + 100, &resized, &err), &err);
    uint32_t grown = (uint32_t)(1.05 * n);
    T_CHECK(resized && model.count == grown && model.memory_cap_step == step, "the next refine: %u Gaussians (%u expected)",
            model.count, grown);
    T_REQUIRE(download(f.g, &model.params, &model.moments, n, &got, &gotm));
    T_CHECK(memcmp(got.opacities, s.opacities, 4ull * n) != 0, "the next refine relocated nothing");
    splat_scene_free(&got), splat_scene_free(&gotm);
    splat__model_free(f.g, &model);
    splat__strategy_mcmc.free(st, f.g);
    splat_scene_free(&s), splat_scene_free(&mom);
done:
    mfix_free(&f);
}

/* A ring slot buffer for the iteration kernels: step, count and noise scale. */
static splat_buf slot_buf_reg(splat_gpu *g, uint32_t n, uint32_t step, float noise_scale, float scale_reg)
{
    splat_train_slot slot = {.step = step, .frame = {.n_gaussians = n}, .noise_scale = noise_scale, .scale_reg = scale_reg};
    splat_buf b = {0};
    splat_error err = {0};
    if (splat__buf_init(g, &b, "slot", sizeof slot, SPLAT_MEM_DEVICE, &err) != SPLAT_OK ||
        splat__buf_upload(g, &b, 0, &slot, sizeof slot, &err) != SPLAT_OK)
        splat_test_fail(__FILE__, __LINE__, "slot:", "%s", err.msg);
    return b;
}

static splat_buf slot_buf(splat_gpu *g, uint32_t n, uint32_t step, float noise_scale)
{
    return slot_buf_reg(g, n, step, noise_scale, 0);
}

/* The position noise on the GPU against the reference, opacities spread across the gate (logits
 * -8..4): each mean within T_TOL_MOVE of the size of its noise (noise_error), nothing else moved. In
 * an iteration (the strategy's record after Adam, from the ring slot): nothing behind a closed
 * gate, nothing where the slot's scale is 0 (a refine step), else the same bits as from the push
 * constants. */
SPLAT_TEST(train_mcmc_noise_vs_ref)
{
    mfix f;
    if (!mfix_init(&f)) goto done;
    splat_error err = {0};
    uint32_t n = rand_u32(500, 3000), step = rand_u32(0, 29999), run_seed = (uint32_t)splat__rng_u64(splat_test_rng());
    float scale = (float)splat__ref_mcmc_noise_scale(t_uniform(0.5, 10), 1.0, step, 30000);
    splat_scene s, mom, got, gotm;
    T_REQUIRE(random_model(&s, &mom, n, 0));
    for (uint32_t i = 0; i < n; i++) s.opacities[i] = (float)t_uniform(-8, 4);
    splat_scene_gpu p, m;
    T_REQUIRE(upload(f.g, &p, &m, &s, &mom));
    splat__mcmc_noise_record(splat__stream_cmd(&f.s), &f.pipes, &p, n, run_seed, step, scale);
    T_OK(splat__stream_sync(&f.s, SPLAT_SYNC_COMMIT_AND_WAIT, &err), &err);
    T_REQUIRE(download(f.g, &p, &m, n, &got, &gotm));
    double moved, worst = noise_error(&got, &s, run_seed ^ step, scale, &moved);
    printf("  %u Gaussians, step %u, scale %.4g: largest move %.3g, worst error %.3g of the noise's size\n", n, step, scale,
           moved, worst);
    T_CHECK(worst < T_TOL_MOVE && moved > 0, "error %.3g of the noise's size", worst);
    splat__scene_gpu_free(f.g, &p), splat__scene_gpu_free(f.g, &m);

    /* in an iteration: the strategy's hook, from the slot */
    splat_strategy_state *st = NULL;
    T_OK(splat__strategy_mcmc.init(&st, f.g, &err), &err);
    for (int c = 0; c < 3; c++) {
        uint32_t gate = c == 0;
        splat_buf b_slot = slot_buf(f.g, n, step, c == 1 ? 0.0f : scale), b_gate;
        T_OK(splat__buf_init(f.g, &b_gate, "gate", SPLAT_GATE_BYTES, SPLAT_MEM_DEVICE, &err), &err);
        T_OK(splat__buf_upload(f.g, &b_gate, 0, &gate, 4, &err), &err);
        splat_model model = {.count = n};
        T_REQUIRE(upload(f.g, &model.params, &model.moments, &s, &mom));
        splat_strategy_rec rec = {.slots = SPLAT_VIEW(b_slot), .gate = SPLAT_VIEW(b_gate), .model = &model, .seed = run_seed};
        splat__strategy_mcmc.record(st, splat__stream_cmd(&f.s), &rec, true);
        T_OK(splat__stream_sync(&f.s, SPLAT_SYNC_COMMIT_AND_WAIT, &err), &err);
        splat_scene it, itm;
        T_REQUIRE(download(f.g, &model.params, &model.moments, n, &it, &itm));
        const splat_scene *expect = c < 2 ? &s : &got;
        T_CHECK(memcmp(it.means, expect->means, 12ull * n) == 0, "%s", c == 0 ? "moved behind a closed gate"
                                                                     : c == 1 ? "moved at a scale of 0"
                                                                              : "the iteration's noise differs from the push constants'");
        splat_scene_free(&it), splat_scene_free(&itm);
        splat__scene_gpu_free(f.g, &model.params), splat__scene_gpu_free(f.g, &model.moments);
        splat__buf_free(f.g, &b_slot), splat__buf_free(f.g, &b_gate);
    }
    splat__strategy_mcmc.free(st, f.g);
    splat_scene_free(&s), splat_scene_free(&mom), splat_scene_free(&got), splat_scene_free(&gotm);
done:
    mfix_free(&f);
}

/* The regularisers' gradients (the strategy's record before Adam) added to the render's, against
 * the reference's, to 1e-6 of the sum; the other groups' gradients untouched. */
SPLAT_TEST(train_mcmc_reg_vs_ref)
{
    mfix f;
    if (!mfix_init(&f)) goto done;
    splat_error err = {0};
    uint32_t n = rand_u32(100, 3000);
    splat_scene s, mom, grads, unused, got;
    T_REQUIRE(random_model(&s, &mom, n, 20));
    T_REQUIRE(random_model(&grads, &unused, n, 0)); /* random gradients */
    splat_scene_free(&unused);
    for (uint32_t i = 0; i < n; i++) grads.opacities[i] = (float)(1e-4 * normal());
    splat_strategy_state *st = NULL;
    T_OK(splat__strategy_mcmc.init(&st, f.g, &err), &err);
    splat_model model = {.count = n};
    T_REQUIRE(upload(f.g, &model.params, &model.moments, &s, &mom));
    T_OK(splat__scene_gpu_init(f.g, &model.grads, "grads", n, false, &err), &err);
    T_OK(splat__scene_gpu_upload(f.g, &model.grads, &grads, &err), &err);
    double u = t_uniform(0.2, 10); /* gsplat's world unit in the scene's */
    splat_buf b_slot = slot_buf_reg(f.g, n, 0, 0, (float)(0.01 / u));
    splat_strategy_rec rec = {.slots = SPLAT_VIEW(b_slot), .gate = SPLAT_VIEW(b_slot), .model = &model};
    splat__strategy_mcmc.record(st, splat__stream_cmd(&f.s), &rec, false);
    T_OK(splat__stream_sync(&f.s, SPLAT_SYNC_COMMIT_AND_WAIT, &err), &err);
    T_OK(splat_scene_init(&got, n, &err), &err);
    T_OK(splat__scene_gpu_download(f.g, &model.grads, &got, &err), &err);
    double *dl = malloc(8ull * n), *ds = malloc(24ull * n), worst = 0;
    splat__ref_mcmc_reg(&s, u, dl, ds);
    for (uint32_t i = 0; i < n; i++) {
        double want = grads.opacities[i] + dl[i];
        worst = fmax(worst, fabs(got.opacities[i] - want) / (fabs(grads.opacities[i]) + dl[i]));
        for (int k = 0; k < 3; k++) {
            want = grads.log_scales[i * 3 + k] + ds[i * 3 + k];
            worst = fmax(worst, fabs(got.log_scales[i * 3 + k] - want) / (fabs(grads.log_scales[i * 3 + k]) + ds[i * 3 + k]));
        }
    }
    printf("  %u Gaussians, world unit %.4g: worst error %.3g of the sum\n", n, u, worst);
    T_CHECK(worst < 1e-6, "error %.3g", worst);
    T_CHECK(memcmp(got.means, grads.means, 12ull * n) == 0 && memcmp(got.quats, grads.quats, 16ull * n) == 0 &&
                memcmp(got.sh, grads.sh, 192ull * n) == 0,
            "other gradients changed");
    free(dl), free(ds);
    splat__buf_free(f.g, &b_slot);
    splat__model_free(f.g, &model);
    splat__strategy_mcmc.free(st, f.g);
    splat_scene_free(&s), splat_scene_free(&mom), splat_scene_free(&grads), splat_scene_free(&got);
done:
    mfix_free(&f);
}

/* ------------------------------------------------------------------ training runs */

static bool same_scene(const splat_scene *a, const splat_scene *b)
{
    size_t n = a->count;
    return a->count == b->count && memcmp(a->means, b->means, n * 12) == 0 && memcmp(a->log_scales, b->log_scales, n * 12) == 0 &&
           memcmp(a->quats, b->quats, n * 16) == 0 && memcmp(a->opacities, b->opacities, n * 4) == 0 &&
           memcmp(a->sh, b->sh, n * 192) == 0;
}

/* Trains desc to its end, pausing at `pause` (0: none) into a checkpoint that a new trainer
 * resumes; the scene at the end into *out. */
static bool run_to_end(splat_ctx *ctx, const splat_train_desc *desc, uint32_t pause, const char *ckpt, splat_scene *out)
{
    splat_error err = {0};
    splat_trainer *t = NULL;
    splat_status st = splat_trainer_init(&t, ctx, desc, &err);
    if (st == SPLAT_OK && pause) {
        st = splat_trainer_run(t, pause, &err);
        if (st == SPLAT_OK) st = splat_trainer_save(t, ckpt, &err);
        splat_trainer_free(t);
        t = NULL;
        if (st == SPLAT_OK) st = splat_trainer_init(&t, ctx, desc, &err);
        if (st == SPLAT_OK) st = splat_trainer_resume(t, ckpt, &err);
    }
    if (st == SPLAT_OK) st = splat_trainer_run(t, 0, &err);
    if (st == SPLAT_OK) st = splat_trainer_scene(t, out, &err);
    splat_trainer_free(t);
    if (st != SPLAT_OK) splat_test_fail(__FILE__, __LINE__, "training:", "%s", err.msg);
    return st == SPLAT_OK;
}

/* MCMC training is deterministic and keeps its cap: with refines every 10 steps (20 to 40) and a
 * cap the refines reach, a run resumed from a checkpoint at a random step, and a run whose first
 * iterations overflow and are re-run (the noise must be skipped with Adam behind the closed gate,
 * and applied once on the re-run), end with the same bits as an uninterrupted one, at the cap. The
 * Gaussians start at opacity 0.5 and a tenth of the default strategy's scales. */
SPLAT_TEST(train_mcmc_runs_exact)
{
    splat_ctx *ctx;
    splat_error err = {0};
    if (splat_ctx_init(&ctx, NULL, &err) != SPLAT_OK) {
        splat_test_fail(__FILE__, __LINE__, "context:", "%s", err.msg);
        return;
    }
    char dir[600], ckpt[700];
    snprintf(dir, sizeof dir, "%s", splat_test_path("demo"));
    snprintf(ckpt, sizeof ckpt, "%s/run.ckpt", dir);
    splat_scene a = {0}, b = {0}, c = {0}, d = {0}, e = {0};
    T_OK(splat_make_demo(ctx, dir, &(splat_demo_desc){.width = 32, .height = 24, .n_views = 8}, &err), &err);
    splat_train_desc desc = {.data = dir, .steps = 50, .seed = splat__rng_u64(splat_test_rng()), .refine_start = 10,
                             .refine_every = 10, .background = SPLAT_BACKGROUND_RANDOM};
    /* the start: the default strategy's Gaussians at opacity 0.5, scales x 0.1 */
    splat_trainer *t = NULL;
    T_OK(splat_trainer_init(&t, ctx, &desc, &err), &err);
    T_OK(splat_trainer_scene(t, &d, &err), &err);
    splat_trainer_free(t);
    desc.strategy = SPLAT_STRATEGY_MCMC;
    T_OK(splat_trainer_init(&t, ctx, &desc, &err), &err);
    T_OK(splat_trainer_scene(t, &e, &err), &err);
    splat_trainer_free(t);
    bool start_ok = d.count == e.count;
    for (uint32_t i = 0; start_ok && i < d.count; i++) {
        start_ok = e.opacities[i] == 0.0f;
        for (int k = 0; k < 3; k++) start_ok = start_ok && e.log_scales[i * 3 + k] == d.log_scales[i * 3 + k] + (float)log(0.1);
    }
    T_CHECK(start_ok, "the MCMC start is not opacity 0.5 and a tenth of the scale");
    /* the runs start from it with half the Gaussians nearly transparent, where the noise moves them
     * from the first step (at opacity 0.5 it is below a float's rounding of the means) */
    for (uint32_t i = 0; i < e.count; i += 2) e.opacities[i] = (float)t_uniform(-6, -3);
    char start[700];
    snprintf(start, sizeof start, "%s/start.ply", dir);
    T_OK(splat_scene_save_ply(start, &e, &err), &err);
    desc.init_ply = start;
    desc.max_gaussians = d.count + 40 + (uint32_t)(splat__rng_u64(splat_test_rng()) % 60);
    uint32_t pause = 11 + (uint32_t)(splat__rng_u64(splat_test_rng()) % 38);
    if (run_to_end(ctx, &desc, 0, NULL, &a) && run_to_end(ctx, &desc, pause, ckpt, &b))
        T_CHECK(same_scene(&a, &b), "resumed at step %u: %u vs %u Gaussians, parameters differ", pause, a.count, b.count);
    desc.isect_capacity = 64;
    if (run_to_end(ctx, &desc, 0, NULL, &c)) T_CHECK(same_scene(&a, &c), "the run that overflowed differs");
    printf("  %u Gaussians at the start, cap %u, %u at the end; resumed at step %u\n", d.count, desc.max_gaussians, a.count,
           pause);
    T_CHECK(a.count == desc.max_gaussians, "%u Gaussians at the end, the cap is %u", a.count, desc.max_gaussians);
    splat_scene_free(&a), splat_scene_free(&b), splat_scene_free(&c), splat_scene_free(&d), splat_scene_free(&e);
    splat_ctx_free(ctx);
}

/* MCMC's schedule: gsplat's defaults resolved (refines to 25000, a cap of 1,000,000), and every
 * step's ring slot carries the noise scale of the reference, except at the refine steps, whose
 * noise comes after the refine (the slot's 0), and evaluation's. */
SPLAT_TEST(train_mcmc_schedule)
{
    splat_ctx *ctx;
    splat_error err = {0};
    if (splat_ctx_init(&ctx, NULL, &err) != SPLAT_OK) {
        splat_test_fail(__FILE__, __LINE__, "context:", "%s", err.msg);
        return;
    }
    char dir[600];
    snprintf(dir, sizeof dir, "%s", splat_test_path("demo"));
    splat_trainer *t = NULL;
    T_OK(splat_make_demo(ctx, dir, &(splat_demo_desc){.width = 16, .height = 12, .n_views = 4}, &err), &err);
    T_OK(splat_trainer_init(&t, ctx, &(splat_train_desc){.data = dir, .strategy = SPLAT_STRATEGY_MCMC}, &err), &err);
    T_CHECK(t->desc.refine_start == 500 && t->desc.refine_every == 100 && t->desc.refine_stop == 25000 &&
                t->desc.max_gaussians == 1000000 && t->steps == 30000,
            "schedule %u %u %u, cap %u, %u steps", t->desc.refine_start, t->desc.refine_every, t->desc.refine_stop,
            t->desc.max_gaussians, t->steps);
    /* the demo is a COLMAP capture: its noise is in gsplat's unit, the cameras' focus distance */
    splat_camera *cams = malloc(sizeof *cams * t->ds.n_views);
    for (uint32_t v = 0; v < t->ds.n_views; v++) cams[v] = t->ds.views[v].camera;
    double unit = splat__focus_distance(cams, t->ds.n_views);
    free(cams);
    T_CHECK(t->ds.kind == SPLAT_DATASET_COLMAP && t->world_unit == unit && unit != 1.0, "world unit %g, want %g",
            t->world_unit, unit);
    uint32_t bad = 0, refines = 0;
    for (uint32_t s = 0; s < t->steps; s++) {
        splat_train_slot slot, eval;
        splat__train_fill_slot(t, 0, s, splat__train_view_of_step(t, s), true, &slot);
        splat__train_fill_slot(t, SPLAT_TRAIN_RING, s, 0, false, &eval);
        bool refine = splat__ref_refine_due(s) || (s >= SPLAT_REF_REFINE_STOP && s < SPLAT_REF_MCMC_REFINE_STOP && s % 100 == 0);
        double want = refine ? 0 : splat__ref_mcmc_noise_scale(t->scene_scale, t->world_unit, s, t->steps);
        refines += refine;
        /* the scale regulariser in gsplat's unit too (ref_mcmc_reg) */
        bool ok = fabs(slot.noise_scale - want) <= 1e-6 * want && eval.noise_scale == 0 &&
                  slot.scale_reg == (float)(0.01 / t->world_unit);
        if (!ok && bad++ < 3)
            printf("  step %u: noise scale %.9g, want %.9g (evaluation %g); scale regulariser %.9g, want %.9g\n", s,
                   slot.noise_scale, want, eval.noise_scale, slot.scale_reg, 0.01 / t->world_unit);
    }
    T_CHECK(bad == 0 && refines == 244, "%u steps' noise scales wrong (%u refines)", bad, refines);
    splat_trainer_free(t);
    splat_ctx_free(ctx);
}
