/* The reference's MCMC strategy (src/ref/mcmc.c) against hand-computed values, its definition in
 * docs/TRAIN.md ("MCMC") and finite differences. */
#include <float.h>

#include "harness.h"
#include "ref/ref_train.h"

static uint32_t rand_u32(uint32_t lo, uint32_t hi) /* inclusive */
{
    return lo + (uint32_t)(splat__rng_u64(splat_test_rng()) % ((uint64_t)hi - lo + 1));
}

static double normal(void) { return splat__rng_normal(splat_test_rng()); }
static double sigmoid(double x) { return 1 / (1 + exp(-x)); }
static float logit(double o) { return (float)log(o / (1 - o)); }

/* Eq. 9 by hand for ratios 1, 2 and 3 at opacities whose new opacity is 0.5 (n = 2: 1 - sqrt(1 -
 * 0.75); n = 3: 1 - cbrt(1 - 0.875)), the clamps at both ends, and the ratio's clamp to [1, 51]:
 *   n = 1: D = o'                                   (o' = o: the scale is kept)
 *   n = 2: D = o' + (o' - o'^2 / sqrt 2)              = 1 - 1 / (4 sqrt 2)         at o' = 1/2
 *   n = 3: D = 3 o' - 3 o'^2 / sqrt 2 + o'^3 / sqrt 3 = 3/2 - 3 / (4 sqrt 2) + 1 / (8 sqrt 3) */
SPLAT_TEST(ref_mcmc_relocation_known)
{
    double s[3] = {t_uniform(0.01, 2), t_uniform(0.01, 2), t_uniform(0.01, 2)}, ns[3], no;
    struct {
        double o;
        uint32_t n;
        double want_o, want_coeff;
    } cases[] = {
        {0.3, 1, 0.3, 1.0},
        {0.75, 2, 0.5, 0.75 / (1 - 1 / (4 * sqrt(2)))},
        {0.875, 3, 0.5, 0.875 / (1.5 - 3 / (4 * sqrt(2)) + 1 / (8 * sqrt(3)))},
        /* 1 - sqrt(0.996) = 0.002..: clamped to 0.005 before the scale: D = 2 (0.005) - 0.005^2 / sqrt 2 */
        {0.004, 2, 0.005, 0.004 / (0.01 - 0.000025 / sqrt(2))},
        /* nearly opaque, alone: clamped to 1 - 2^-23 */
        {1 - 1e-12, 1, 1 - 0x1.0p-23, (1 - 1e-12) / (1 - 0x1.0p-23)},
    };
    for (size_t c = 0; c < SPLAT_COUNTOF(cases); c++) {
        splat__ref_mcmc_relocation(cases[c].o, s, cases[c].n, &no, ns, NULL);
        bool ok = fabs(no - cases[c].want_o) <= 1e-15;
        for (int k = 0; k < 3; k++) ok = ok && fabs(ns[k] / s[k] - cases[c].want_coeff) <= 1e-14 * cases[c].want_coeff;
        T_CHECK(ok, "opacity %.17g, ratio %u: %.17g and x%.17g, want %.17g and x%.17g", cases[c].o, cases[c].n, no, ns[0] / s[0],
                cases[c].want_o, cases[c].want_coeff);
    }
    /* ratios outside [1, 51] are clamped */
    double o = t_uniform(0.05, 0.95), a[3], b[3], oa, ob;
    splat__ref_mcmc_relocation(o, s, 0, &oa, a, NULL);
    splat__ref_mcmc_relocation(o, s, 1, &ob, b, NULL);
    T_CHECK(oa == ob && memcmp(a, b, sizeof a) == 0, "ratio 0 is not ratio 1");
    splat__ref_mcmc_relocation(o, s, 51 + rand_u32(1, 1000), &oa, a, NULL);
    splat__ref_mcmc_relocation(o, s, 51, &ob, b, NULL);
    T_CHECK(oa == ob && memcmp(a, b, sizeof a) == 0, "ratio past 51 is not 51");
    /* unclamped, the n new Gaussians stack up to the old opacity: 1 - (1 - o')^n = o */
    uint32_t n = rand_u32(2, 51);
    o = t_uniform(1 - pow(0.995, n) + 0.01, 0.99);
    splat__ref_mcmc_relocation(o, s, n, &oa, a, NULL);
    T_CHECK(fabs(1 - pow(1 - oa, n) - o) < 1e-12, "ratio %u: stacked opacity %.15g, was %.15g", n, 1 - pow(1 - oa, n), o);
}

/* The sampling weights (docs/TRAIN.md, "MCMC: sampling"): the shift where the count needs it; at
 * most 1/256 + 1/weight from 65536 sigmoid(logit) >> shift in relative terms, monotone in the
 * logit, at least 1, and the dead rule exactly at (float)logit(0.005). */
SPLAT_TEST(ref_mcmc_weights)
{
    T_CHECK(splat__ref_mcmc_shift(1) == 0 && splat__ref_mcmc_shift(65537) == 0 && splat__ref_mcmc_shift(65538) == 1 &&
                splat__ref_mcmc_shift(1000000) == 4 && splat__ref_mcmc_shift(UINT32_MAX) == 15,
            "shifts %u %u %u %u %u", splat__ref_mcmc_shift(1), splat__ref_mcmc_shift(65537), splat__ref_mcmc_shift(65538),
            splat__ref_mcmc_shift(1000000), splat__ref_mcmc_shift(UINT32_MAX));
    uint32_t shift = rand_u32(0, 6), prev = 0;
    double worst = 0;
    for (int k = 0; k < 4000; k++) {
        float x = (float)(-20 + 40.0 * k / 4000);
        uint32_t w = splat__ref_mcmc_weight(x, shift);
        T_CHECK(w >= prev && w >= 1, "logit %g: weight %u after %u", x, w, prev);
        prev = w;
        double want = 65536 * sigmoid(x) / (1u << shift);
        if (x > -16 && x < 16 && want >= 1) worst = fmax(worst, fabs(log(w / want)) - 1.0 / w);
    }
    T_CHECK(worst <= 1.0 / 256, "weights off the opacity by %.4g (relative) beyond their rounding", worst);
    T_CHECK(splat__ref_mcmc_weight(30, 0) == 65535 && splat__ref_mcmc_weight(-30, 0) == 1, "the ends: %u %u",
            splat__ref_mcmc_weight(30, 0), splat__ref_mcmc_weight(-30, 0));
    float edge = (float)log(0.005 / 0.995);
    T_CHECK(splat__ref_mcmc_dead(edge) && !splat__ref_mcmc_dead(nextafterf(edge, 0)) && splat__ref_mcmc_dead(nextafterf(edge, -INFINITY)),
            "the dead rule at logit(0.005)");
    T_CHECK(splat__ref_mcmc_added(100, 1000) == 5 && splat__ref_mcmc_added(100, 103) == 3 && splat__ref_mcmc_added(100, 50) == 0 &&
                splat__ref_mcmc_added(19, 1000) == 0 && splat__ref_mcmc_added(20, 1000) == 1,
            "added: %u %u %u %u %u", splat__ref_mcmc_added(100, 1000), splat__ref_mcmc_added(100, 103),
            splat__ref_mcmc_added(100, 50), splat__ref_mcmc_added(19, 1000), splat__ref_mcmc_added(20, 1000));
}

/* A random scene: `dead` of every 100 Gaussians dead (a few exactly at the dead logit), opacities
 * spread over (0.005, 1) for the others. */
static bool random_scene(splat_scene *s, uint32_t n, uint32_t dead)
{
    splat_error err = {0};
    if (splat_scene_init(s, n, &err) != SPLAT_OK) return false;
    s->count = n;
    s->sh_degree = rand_u32(0, 3);
    float edge = (float)log(0.005 / 0.995);
    for (uint32_t i = 0; i < n; i++) {
        for (int k = 0; k < 3; k++) s->means[i * 3 + k] = (float)(3 * normal()), s->log_scales[i * 3 + k] = (float)t_uniform(-6, 0);
        for (int k = 0; k < 4; k++) s->quats[i * 4 + k] = (float)normal();
        bool d = rand_u32(0, 99) < dead;
        s->opacities[i] = d ? (rand_u32(0, 20) == 0 ? edge : (float)t_uniform(-12, edge))
                            : (rand_u32(0, 20) == 0 ? nextafterf(edge, 0) : (float)t_uniform(edge, 8));
        for (int k = 0; k < 48; k++) s->sh[i * 48 + k] = (float)normal();
    }
    return true;
}

static bool same_row_but_opacity_scale(const splat_scene *a, uint32_t i, const splat_scene *b, uint32_t j)
{
    return memcmp(a->means + i * 3, b->means + j * 3, 12) == 0 && memcmp(a->quats + i * 4, b->quats + j * 4, 16) == 0 &&
           memcmp(a->sh + i * 48, b->sh + j * 48, 192) == 0;
}

/* Row r of out holds eq. 9 of input row i with `ratio` (1: unchanged), to float rounding. */
static bool relocated_like(const splat_scene *out, uint32_t r, const splat_scene *in, uint32_t i, uint32_t ratio)
{
    if (ratio == 1) return out->opacities[r] == in->opacities[i] && memcmp(out->log_scales + r * 3, in->log_scales + i * 3, 12) == 0;
    double sc[3], ns[3], no;
    for (int k = 0; k < 3; k++) sc[k] = exp((double)in->log_scales[i * 3 + k]);
    splat__ref_mcmc_relocation(sigmoid(in->opacities[i]), sc, ratio, &no, ns, NULL);
    bool ok = fabs(out->opacities[r] - log(no / (1 - no))) <= 1e-6 * fmax(1, fabs(log(no / (1 - no))));
    for (int k = 0; k < 3; k++) ok = ok && fabs(out->log_scales[r * 3 + k] - log(ns[k])) <= 1e-6 * fmax(1, fabs(log(ns[k])));
    return ok;
}

/* The relocation on random scenes: every dead row (and only those) now holds a live row's
 * parameters; each live row sampled c times took eq. 9 with ratio c + 1 and zero moments, its
 * copies too; the rest is untouched. The samples follow the weights: over ten bands of opacity,
 * each band's share of the samples is its share of the weight within 5 standard deviations (a
 * uniform choice misses by 20 or more). The same inputs give the same bits; another seed others. */
SPLAT_TEST(ref_mcmc_relocate)
{
    splat_scene in;
    uint32_t n = rand_u32(2000, 4000);
    T_REQUIRE(random_scene(&in, n, rand_u32(30, 60)));
    uint32_t step = 100 * rand_u32(6, 249), seed = (uint32_t)splat__rng_u64(splat_test_rng());
    splat_ref_mcmc_out out, again, other;
    splat_error err = {0};
    T_OK(splat__ref_mcmc_relocate(&in, step, seed, &out, &err), &err);
    T_OK(splat__ref_mcmc_relocate(&in, step, seed, &again, &err), &err);
    T_OK(splat__ref_mcmc_relocate(&in, step, seed ^ 1, &other, &err), &err);
    uint32_t *c = calloc(n, sizeof *c), dead = 0;
    for (uint32_t i = 0; i < n; i++) {
        bool d = in.opacities[i] <= (float)log(0.005 / 0.995); /* docs/TRAIN.md's definition */
        dead += d;
        T_CHECK(d ? !splat__ref_mcmc_dead(in.opacities[out.src[i]]) : out.src[i] == i, "row %u (dead %d): source %u", i, d,
                out.src[i]);
        if (d) c[out.src[i]]++;
    }
    T_CHECK(out.n_dead == dead && out.n_relocated == dead && out.scene.count == n, "%u dead, %u relocated, %u rows; want %u",
            out.n_dead, out.n_relocated, out.scene.count, dead);
    uint32_t bad = 0;
    for (uint32_t r = 0; r < n; r++) {
        uint32_t i = out.src[r];
        bool ok = same_row_but_opacity_scale(&out.scene, r, &in, i) && relocated_like(&out.scene, r, &in, i, c[i] + 1) &&
                  out.zeroed[r] == (i == r && c[i] > 0);
        if (!ok && bad++ < 3) printf("  row %u (source %u, sampled %u times, zeroed %u) wrong\n", r, i, c[i], out.zeroed[r]);
    }
    T_CHECK(bad == 0, "%u rows wrong", bad);
    /* the samples' distribution over bands of opacity */
    double wsum[10] = {0}, got[10] = {0}, total = 0;
    uint32_t shift = splat__ref_mcmc_shift(n);
    for (uint32_t i = 0; i < n; i++) {
        if (splat__ref_mcmc_dead(in.opacities[i])) continue;
        int band = (int)fmin(9, sigmoid(in.opacities[i]) * 10);
        double w = splat__ref_mcmc_weight(in.opacities[i], shift);
        wsum[band] += w, total += w, got[band] += c[i];
    }
    for (int b = 0; b < 10; b++) {
        double p = wsum[b] / total, sd = sqrt(p * (1 - p) / dead);
        T_CHECK(fabs(got[b] / dead - p) <= 5 * sd + 1e-12, "opacities %.1f..%.1f: %.4f of the samples, %.4f of the weight",
                b / 10.0, (b + 1) / 10.0, got[b] / dead, p);
    }
    T_CHECK(memcmp(out.scene.opacities, again.scene.opacities, n * 4) == 0 && memcmp(out.src, again.src, n * 4) == 0,
            "not deterministic");
    T_CHECK(memcmp(out.src, other.src, n * 4) != 0, "the seed is ignored");
    free(c);
    splat__ref_mcmc_out_free(&out), splat__ref_mcmc_out_free(&again), splat__ref_mcmc_out_free(&other);
    splat_scene_free(&in);
}

/* Adding on random scenes: min(cap, int(1.05 N)) - N rows appended, each a copy of a row that took
 * eq. 9 with ratio (its samples + 1), moments zero; the sources keep theirs. A scene where every
 * Gaussian is dead cannot relocate and still adds (every weight is at least 1). The refine is
 * relocate then add. */
SPLAT_TEST(ref_mcmc_add)
{
    splat_scene in;
    uint32_t n = rand_u32(200, 3000);
    T_REQUIRE(random_scene(&in, n, 0));
    uint32_t step = 100 * rand_u32(6, 249), seed = (uint32_t)splat__rng_u64(splat_test_rng());
    uint32_t cap = rand_u32(0, 1) ? n + rand_u32(1, n / 40) : 1000000, added = splat__ref_mcmc_added(n, cap);
    splat_ref_mcmc_out out;
    splat_error err = {0};
    T_OK(splat__ref_mcmc_add(&in, step, seed, cap, &out, &err), &err);
    T_REQUIRE(out.scene.count == n + added && out.n_added == added && added > 0, "%u rows, %u added, want %u + %u",
              out.scene.count, out.n_added, n, added);
    T_CHECK(added == (cap < 1000000 ? cap - n : (uint32_t)(1.05 * n) - n), "%u added", added);
    uint32_t *c = calloc(n, sizeof *c), bad = 0;
    for (uint32_t j = 0; j < added; j++) c[out.src[n + j]]++;
    for (uint32_t r = 0; r < n + added; r++) {
        uint32_t i = out.src[r];
        bool ok = (r < n ? i == r : i < n) && same_row_but_opacity_scale(&out.scene, r, &in, i) &&
                  relocated_like(&out.scene, r, &in, i, c[i] + 1) && out.zeroed[r] == (r >= n);
        if (!ok && bad++ < 3) printf("  row %u (source %u, sampled %u times) wrong\n", r, i, c[i]);
    }
    T_CHECK(bad == 0, "%u rows wrong", bad);
    splat__ref_mcmc_out_free(&out);
    free(c);

    /* all dead: nothing to relocate to; the adding samples every Gaussian alike */
    for (uint32_t i = 0; i < n; i++) in.opacities[i] = (float)t_uniform(-14, -8);
    T_OK(splat__ref_mcmc_refine(&in, step, seed, 1000000, &out, &err), &err);
    T_CHECK(out.n_dead == n && out.n_relocated == 0 && out.n_added == (uint32_t)(1.05 * n) - n, "%u dead, %u relocated, %u added",
            out.n_dead, out.n_relocated, out.n_added);
    splat__ref_mcmc_out_free(&out);

    /* the refine composes the two */
    splat_scene_free(&in);
    T_REQUIRE(random_scene(&in, n, 40));
    splat_ref_mcmc_out a, b;
    T_OK(splat__ref_mcmc_refine(&in, step, seed, cap, &out, &err), &err);
    T_OK(splat__ref_mcmc_relocate(&in, step, seed, &a, &err), &err);
    T_OK(splat__ref_mcmc_add(&a.scene, step, seed, cap, &b, &err), &err);
    bool same = out.scene.count == b.scene.count && memcmp(out.scene.means, b.scene.means, 12ull * b.scene.count) == 0 &&
                memcmp(out.scene.opacities, b.scene.opacities, 4ull * b.scene.count) == 0;
    for (uint32_t r = 0; same && r < out.scene.count; r++)
        same = out.src[r] == a.src[b.src[r]] && out.zeroed[r] == (r < n ? a.zeroed[r] : 1);
    T_CHECK(same && out.n_dead == a.n_dead && out.n_added == b.n_added, "the refine is not relocate then add");
    splat__ref_mcmc_out_free(&out), splat__ref_mcmc_out_free(&a), splat__ref_mcmc_out_free(&b);
    splat_scene_free(&in);
}

/* The noise by hand: the identity rotation moves axis k by scale_k^2 w z_k; a quarter turn about z
 * swaps the x and y variances; the opacity gate is 1/2 at opacity 0.005 and about e^-49.5 at 0.5;
 * the noise's scale is the means' rate after the step, x 5e5. */
SPLAT_TEST(ref_mcmc_noise)
{
    splat_scene s;
    splat_error err = {0};
    T_OK(splat_scene_init(&s, 3, &err), &err);
    s.count = 3;
    double sc[3] = {t_uniform(0.1, 1), t_uniform(0.1, 1), t_uniform(0.1, 1)}, scale = t_uniform(1, 100);
    uint32_t seed = (uint32_t)splat__rng_u64(splat_test_rng());
    float q[3][4] = {{1, 0, 0, 0}, {(float)cos(M_PI / 4), 0, 0, (float)sin(M_PI / 4)}, {2, 0, 0, 0}};
    float op[3] = {logit(0.005), logit(0.005), logit(0.5)};
    for (uint32_t i = 0; i < 3; i++) {
        for (int k = 0; k < 3; k++) s.means[i * 3 + k] = 0, s.log_scales[i * 3 + k] = (float)log(sc[k]);
        memcpy(s.quats + i * 4, q[i], 16);
        s.opacities[i] = op[i];
    }
    splat__ref_mcmc_noise(&s, seed, scale);
    double z[6], gate = sigmoid(-100 * (sigmoid(op[0]) - 0.005));
    T_CHECK(fabs(gate - 0.5) < 1e-6, "gate %.9g at opacity 0.005", gate);
    splat__ref_split_normals(seed, 0, z);
    double s2[3];
    for (int k = 0; k < 3; k++) s2[k] = exp(2 * (double)(float)log(sc[k]));
    for (int k = 0; k < 3; k++)
        T_CHECK(fabs(s.means[k] - s2[k] * gate * scale * z[k]) <= 1e-6 * fabs(s2[k] * gate * scale * z[k]) + 1e-30,
                "identity, axis %d: %.9g, want %.9g", k, s.means[k], s2[k] * gate * scale * z[k]);
    splat__ref_split_normals(seed, 1, z);
    double want1[3] = {s2[1] * gate * scale * z[0], s2[0] * gate * scale * z[1], s2[2] * gate * scale * z[2]};
    for (int k = 0; k < 3; k++)
        T_CHECK(fabs(s.means[3 + k] - want1[k]) <= 1e-6 * fabs(want1[k]) + 1e-6 * (fabs(want1[0]) + fabs(want1[1])),
                "quarter turn, axis %d: %.9g, want %.9g", k, s.means[3 + k], want1[k]);
    splat__ref_split_normals(seed, 2, z);
    double g2 = sigmoid(-100 * (0.5 - 0.005)) * scale;
    for (int k = 0; k < 3; k++)
        T_CHECK(fabs(s.means[6 + k] - s2[k] * g2 * z[k]) <= 1e-6 * fabs(s2[k] * g2 * z[k]) + 1e-45, "opaque, axis %d", k);
    double lr = 1.6e-4 * 2.5 * pow(0.01, 101.0 / 1000);
    T_CHECK(fabs(splat__ref_mcmc_noise_scale(2.5, 1.0, 100, 1000) - lr * 5e5) < 1e-12 * lr * 5e5, "noise scale %.12g, want %.12g",
            splat__ref_mcmc_noise_scale(2.5, 1.0, 100, 1000), lr * 5e5);
    splat_scene_free(&s);
}

/* The regularisers' value against gsplat's formula written out here (0.01 mean(sigmoid(logit)) +
 * 0.01 mean(exp(log_scale) / u), the scales in gsplat's world unit u), and their gradient against
 * central differences of that value. */
SPLAT_TEST(ref_mcmc_reg_fd)
{
    splat_scene s;
    uint32_t n = rand_u32(1, 50);
    double u = t_uniform(0.2, 10);
    T_REQUIRE(random_scene(&s, n, 20));
    double *dl = malloc(sizeof(double) * n), *ds = malloc(sizeof(double) * n * 3);
    double v = splat__ref_mcmc_reg(&s, u, dl, ds), worst = 0, so = 0, ss = 0;
    for (uint32_t i = 0; i < n; i++) {
        so += 1 / (1 + exp(-(double)s.opacities[i]));
        for (int k = 0; k < 3; k++) ss += exp((double)s.log_scales[i * 3 + k]);
    }
    double want = 0.01 * so / n + 0.01 * ss / (3.0 * n * u);
    printf("  %u Gaussians, world unit %.4g: value %.12g, want %.12g\n", n, u, v, want);
    T_CHECK(fabs(v - want) <= 1e-12 * want, "value %.12g, want %.12g", v, want);
    for (uint32_t i = 0; i < n; i++)
        for (int k = 0; k < 4; k++) {
            float *p = k == 3 ? &s.opacities[i] : &s.log_scales[i * 3 + k];
            float keep = *p, hi = keep + 1e-2f, lo = keep - 1e-2f;
            *p = hi;
            double up = splat__ref_mcmc_reg(&s, u, NULL, NULL);
            *p = lo;
            double down = splat__ref_mcmc_reg(&s, u, NULL, NULL);
            *p = keep;
            double fd = (up - down) / ((double)hi - lo), an = k == 3 ? dl[i] : ds[i * 3 + k];
            worst = fmax(worst, fabs(fd - an) / fmax(fabs(an), 1e-9));
        }
    T_CHECK(worst < 1e-3, "gradient off the differences by %.3g (relative)", worst);
    free(dl), free(ds);
    splat_scene_free(&s);
}
