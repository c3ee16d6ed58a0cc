/* Training runs on the demo scene with a compressed schedule, checked step by step against the
 * reference (src/ref/ref_train.h, docs/TRAIN.md): the SH degree and learning rates each step
 * ran with, the optimizer's update, the opacity reset, and the densification statistics the
 * backward accumulates for the refines; and the ring's host waits between densifications.
 *
 * The checks ride on the trainer's own loop: a strategy that wraps the default one (the loop
 * knows a strategy only through splat_strategy_ops, train/strategy.h). Its `due` sees every step
 * right after the step is submitted, and asks for host work on the steps a check needs; its
 * `run` then sees the model with every iteration retired, before and after the default
 * strategy's own work. Asking for host work changes nothing the GPU computes (training is
 * deterministic: train_resume_and_overflow_exact). */
#include "harness.h"
#include "raster_support.h"
#include "ref/ref_train.h"
#include "train/strategy.h"

/* A small demo scene, made once per test process (as tests/test_train.c). */
static const char *demo_dir(splat_ctx *ctx, uint32_t size, uint32_t views)
{
    static char dir[512];
    snprintf(dir, sizeof dir, "%s", splat_test_path("demo"));
    splat_error err = {0};
    splat_demo_desc dd = {.width = size, .height = size * 3 / 4, .n_views = views};
    if (splat_make_demo(ctx, dir, &dd, &err) != SPLAT_OK) {
        splat_test_fail(__FILE__, __LINE__, "demo:", "%s", err.msg);
        return NULL;
    }
    return dir;
}

/* ------------------------------------------------------------------ the probe */

typedef struct probe {
    splat_trainer *t;
    const splat_strategy_ops *inner;
    splat_strategy_ops ops;
    uint32_t sh_max;             /* the degree trained: the default, 3 */
    double scene_scale;          /* TRAIN.md's, from the training cameras (not the trainer's) */
    uint32_t win_from, win_to;   /* the steps whose statistics are checked (none when win_to is 0) */
    uint32_t adam_from, adam_to; /* the steps whose optimizer update is checked (likewise) */
    splat_scene before;          /* the parameters the next step renders */
    uint32_t *moments_before[SPLAT_GROUP_COUNT]; /* their Adam moments, each group's as stored (train_types.h) */
    float *stats_before;         /* [count,4] the statistics before the next step */
    bool have_before;
    /* per step, right after it was submitted */
    uint64_t waits, submits;     /* the stream's counters at the previous step */
    uint32_t since_drain;        /* steps submitted since the ring was last drained */
    bool count_waits;
    bool rebase;                 /* the next step follows host work: only take its counters */
    /* what was checked */
    uint32_t steps_seen, stats_checked, resets_checked, reset_below, refines, bad_refines, adam_checked;
    uint32_t bad_schedule, bad_waits, waits_checked;
    double worst_stats;
    uint32_t box_only;           /* views where gsplat's box alone saw a Gaussian (counted by default, not with
                                    SPLAT_DENSIFY_SEEN=pixels) */
} probe;

static probe g_p;

static bool in_window(uint32_t s) { return g_p.win_to && s >= g_p.win_from && s <= g_p.win_to; }
static bool in_adam(uint32_t s) { return g_p.adam_to && s >= g_p.adam_from && s <= g_p.adam_to; }

/* docs/TRAIN.md's densification schedule, with the run's compressed periods. */
static bool refine_due(const splat_train_desc *d, uint32_t s)
{
    return s > d->refine_start && s % d->refine_every == 0 && s < d->refine_stop;
}

static bool reset_due(const splat_train_desc *d, uint32_t s) { return s > 0 && s % d->reset_every == 0 && s < d->refine_stop; }

static double rel_diff(double a, double b) { return fabs(a - b) / fmax(fabs(b), 1e-30); }

/* The slot step s ran with (the host wrote it just before submitting the step) against the
 * reference's schedules. */
static bool slot_matches(const splat_train_slot *slot, uint32_t s, uint32_t steps, bool print)
{
    static const struct {
        uint32_t group;
        bool rest;
        double lr;
    } fixed[] = {
        {SPLAT_GROUP_LOG_SCALES, false, SPLAT_REF_LR_SCALES}, {SPLAT_GROUP_QUATS, false, SPLAT_REF_LR_QUATS},
        {SPLAT_GROUP_OPACITIES, false, SPLAT_REF_LR_OPACITIES}, {SPLAT_GROUP_SH, false, SPLAT_REF_LR_SH0},
        {SPLAT_GROUP_SH, true, SPLAT_REF_LR_SHN},
    };
    uint32_t degree = splat__ref_sh_degree(s, g_p.sh_max);
    double lr = splat__ref_means_lr(g_p.scene_scale, s, steps);
    /* float32 slots: the rates are rounded once (6e-8), the scene scale was summed in another order */
    bool ok = slot->step == s && slot->frame.sh_degree == degree && rel_diff(slot->lr_head[SPLAT_GROUP_MEANS], lr) < 1e-6;
    for (size_t k = 0; k < SPLAT_COUNTOF(fixed); k++) {
        float got = fixed[k].rest ? slot->lr_rest[fixed[k].group] : slot->lr_head[fixed[k].group];
        ok &= rel_diff(got, fixed[k].lr) < 1e-6;
    }
    if (!ok && print)
        fprintf(stderr, "step %u: slot of step %u, degree %u (reference %u), means lr %.9g (reference %.9g)\n", s, slot->step,
                slot->frame.sh_degree, degree, slot->lr_head[SPLAT_GROUP_MEANS], lr);
    return ok;
}

/* Downloads `count` floats of a buffer. */
static float *download(splat_gpu *g, const splat_buf *b, uint64_t count)
{
    float *v = malloc(count * 4 + 4);
    splat_error err = {0};
    if (splat__buf_download(g, b, 0, v, count * 4, &err) != SPLAT_OK) {
        splat_test_fail(__FILE__, __LINE__, "download:", "%s", err.msg);
        free(v);
        return NULL;
    }
    return v;
}

/* Keeps the parameters and statistics the next step starts from. After a refine the loop zeroes
 * the statistics once `run` returns, so they are taken as zero. */
/* The model's moments of rows [0, n), each group's words as stored; false with err set. */
static bool moments_download(splat_trainer *t, uint32_t n, uint32_t *out[SPLAT_GROUP_COUNT], splat_error *err)
{
    bool ok = true;
    for (uint32_t k = 0; k < SPLAT_GROUP_COUNT; k++) {
        uint64_t bytes = (uint64_t)n * splat__scene_gpu_row_bytes(&t->model.moments, k);
        out[k] = malloc(bytes + 4);
        ok = ok && out[k] && splat__buf_download(t->env.gpu, &t->model.moments.group[k], 0, out[k], bytes, err) == SPLAT_OK;
    }
    return ok;
}

static void moments_free(uint32_t *m[SPLAT_GROUP_COUNT])
{
    for (uint32_t k = 0; k < SPLAT_GROUP_COUNT; k++) free(m[k]), m[k] = NULL;
}

static void snapshot(bool resized)
{
    splat_trainer *t = g_p.t;
    splat_error err = {0};
    splat_scene_free(&g_p.before);
    moments_free(g_p.moments_before);
    free(g_p.stats_before);
    g_p.stats_before = NULL;
    g_p.have_before = false;
    uint32_t n = t->model.count;
    splat_scene_gpu params = t->model.params;
    params.count = n;
    if (splat_scene_init(&g_p.before, n ? n : 1, &err) != SPLAT_OK ||
        splat__scene_gpu_download(t->env.gpu, &params, &g_p.before, &err) != SPLAT_OK ||
        !moments_download(t, n, g_p.moments_before, &err)) {
        splat_test_fail(__FILE__, __LINE__, "snapshot:", "%s", err.msg);
        return;
    }
    g_p.before.count = n;
    g_p.before.sh_degree = 3;
    g_p.stats_before = resized ? calloc((size_t)n * 4 + 4, 4) : download(t->env.gpu, &t->rb.stats, (uint64_t)n * 4);
    g_p.have_before = g_p.stats_before != NULL;
}

/* The statistics step s added, against the reference's: its render of the parameters step s
 * started from, from the step's view, background and degree, with the GPU's own loss gradient
 * as the upstream gradient (the loss is train_loss_vs_ref's business), and the backward's
 * dL/dmean2d: every Gaussian the render did not cull adds |dL/dmean2d * (W/2, H/2)| and 1
 * (docs/TRAIN.md, "Densification"). */
static void check_stats(uint32_t s)
{
    splat_trainer *t = g_p.t;
    splat_gpu *g = t->env.gpu;
    splat_error err = {0};
    uint32_t n = t->model.count;
    if (n != g_p.before.count) {
        splat_test_fail(__FILE__, __LINE__, "statistics:", "step %u: %u Gaussians, %u before it", s, n, g_p.before.count);
        return;
    }
    uint32_t view = splat__train_view_of_step(t, s);
    const splat_camera *cam = &t->ds.views[view].camera;
    uint32_t W = cam->width, H = cam->height;
    uint64_t px = (uint64_t)W * H;
    splat_train_slot slot;
    splat__train_fill_slot(t, 0, s, view, true, &slot);
    splat_render_desc rd = {.sh_degree = slot.frame.sh_degree ? slot.frame.sh_degree : SPLAT_SH_DEGREE_0,
                            .max_gaussians_per_tile = t->desc.render.max_gaussians_per_tile};
    memcpy(rd.background, slot.frame.background, sizeof rd.background);

    t_render tr;
    memset(&tr, 0, sizeof tr);
    tr.g = g;
    tr.bufs = t->rb;
    tr.scene.count = n;
    t_gpu_image gi;
    t_ref ref;
    char what[64];
    snprintf(what, sizeof what, "step %u (view %u, %u Gaussians)", s, view, n);
    float *g4 = download(g, &t->rb.grad_img, px * 4), *now = download(g, &t->rb.stats, (uint64_t)n * 4);
    if (g4 && now && t_download_image(&tr, cam, &gi) && t_ref_render(&ref, &g_p.before, cam, &rd, &gi)) {
        /* the step rendered what the reference renders */
        t_compare_forward(&ref, &gi, what);
        float *d_rgb = malloc(px * 12), *d_alpha = malloc(px * 4);
        for (uint64_t p = 0; p < px; p++) {
            for (int c = 0; c < 3; c++) d_rgb[3 * p + c] = g4[4 * p + c];
            d_alpha[p] = g4[4 * p + 3];
        }
        /* Gaussians that either side may have blended at a pixel whose raster decisions were
         * borderline (docs/RASTER.md, last section): the GPU's gradient there may differ (the
         * GPU's own loss gradient reaches those pixels), so they are left out. Such a Gaussian is
         * in the pixel's tile list and reaches ALPHA_MIN there (within 1e-3). */
        bool *skip = calloc(n + 1, 1);
        for (uint32_t py = 0; py < H; py++)
            for (uint32_t px_ = 0; px_ < W; px_++) {
                if (ref.img.margin[(size_t)py * W + px_] >= T_PIXEL_MARGIN) continue;
                uint32_t tile = (py / SPLAT_TILE) * ref.lists.tiles_x + px_ / SPLAT_TILE;
                for (uint32_t k = ref.lists.offsets[tile]; k < ref.lists.offsets[tile + 1]; k++) {
                    const splat_ref_proj *q = &ref.proj[ref.lists.ids[k]];
                    double dx = q->mean2d[0] - (px_ + 0.5), dy = q->mean2d[1] - (py + 0.5);
                    double sigma = 0.5 * (q->conic[0] * dx * dx + q->conic[2] * dy * dy) + q->conic[1] * dx * dy;
                    if (q->opacity * exp(-sigma) >= SPLAT_REF_ALPHA_MIN * (1 - 1e-3)) skip[ref.lists.ids[k]] = true;
                }
            }
        splat_ref_grads rg, rs;
        if (splat__ref_grads_init(&rg, n, &err) == SPLAT_OK && splat__ref_grads_init(&rs, n, &err) == SPLAT_OK) {
            splat__ref_backward(&g_p.before, cam, &ref.set, ref.proj, &ref.lists, &ref.img, d_rgb, d_alpha, &rg);
            splat__ref_backward_scale(&g_p.before, cam, &ref.set, ref.proj, &ref.lists, &ref.img, d_rgb, d_alpha, &rs);
            /* what the GPU rendered: the Gaussians in its tile lists (reconciled with the
             * reference's, borderline pairs aside) */
            bool *listed = calloc(n + 1, 1);
            uint32_t tiles = ref.lists.tiles_x * ref.lists.tiles_y;
            for (uint32_t k = 0; k < ref.lists.offsets[tiles]; k++) listed[ref.lists.ids[k]] = true;
            float *got = malloc((size_t)n * 4 + 4);
            double *want = malloc((size_t)n * 8 + 8), *scale = malloc((size_t)n * 8 + 8);
            uint32_t mismatched = 0, skipped = 0, box_only = 0;
            for (uint32_t i = 0; i < n; i++) {
                got[i] = now[4 * i] - g_p.stats_before[4 * i];
                want[i] = listed[i] ? hypot(rg.mean2d[2 * i] * 0.5 * W, rg.mean2d[2 * i + 1] * 0.5 * H) : 0;
                scale[i] = listed[i] ? hypot(rs.mean2d[2 * i] * 0.5 * W, rs.mean2d[2 * i + 1] * 0.5 * H) : 0;
                /* a borderline preprocess decision may cull on one side only */
                skip[i] |= ref.proj[i].margin < 1e-4;
                skipped += skip[i];
                float cnt = now[4 * i + 1] - g_p.stats_before[4 * i + 1];
                /* the default (gsplat's measure): also a view where gsplat's box overlaps the
                 * image; SPLAT_DENSIFY_SEEN=pixels: only one where it draws a pixel */
                double box_margin = INFINITY;
                bool in_box = !listed[i] && splat__ref_gsplat_box(&ref.proj[i], W, H, &box_margin);
                if (!listed[i] && box_margin < 1e-3 + 4 * fmax(ref.proj[i].mean2d_err[0], ref.proj[i].mean2d_err[1])) continue;
                bool seen = listed[i] || (t->seen_box && in_box);
                box_only += in_box;
                mismatched += cnt != (seen ? 1.0f : 0.0f);
            }
            double norm;
            double e = t_norm_err(got, want, scale, n, 1, skip, &norm);
            printf("  %s: grad2d normalised error %.2e (|ref| %.3g, %u Gaussians left out), %u counts differ, %u counted for "
                   "gsplat's box alone\n",
                   what, e, norm, skipped, mismatched, box_only);
            T_CHECK(e <= T_TOL_GRAD, "%s: accumulated grad2d normalised error %.3g (|ref| %.3g)", what, e, norm);
            T_CHECK(mismatched == 0, "%s: %u Gaussians counted differently from the render's", what, mismatched);
            T_CHECK(skipped * 2 < n, "%s: %u of %u Gaussians left out", what, skipped, n);
            /* The SH gradients the step left for Adam, as project_bwd's records (the product of
             * their two factors, as Adam takes it), against the reference's. */
            float *rec = download(g, &t->model.grads.sh, (uint64_t)n * SPLAT_SH_RECORD_FLOATS);
            float *g_sh = malloc((size_t)n * 48 * 4 + 4);
            if (rec && g_sh) {
                for (uint64_t i = 0; i < n; i++)
                    for (uint32_t j = 0; j < 48; j++)
                        g_sh[i * 48 + j] = rec[i * SPLAT_SH_RECORD_FLOATS + j / 3] *
                                           rec[i * SPLAT_SH_RECORD_FLOATS + SPLAT_SH_RECORD_D_RAW + j % 3];
                double sh_norm, e_sh = t_norm_err(g_sh, rg.sh, rs.sh, n, 48, skip, &sh_norm);
                printf("  %s: SH gradient normalised error %.2e (|ref| %.3g)\n", what, e_sh, sh_norm);
                T_CHECK(e_sh <= T_TOL_GRAD, "%s: SH gradient normalised error %.3g (|ref| %.3g)", what, e_sh, sh_norm);
                e = fmax(e, e_sh);
            }
            free(rec), free(g_sh);
            g_p.worst_stats = fmax(g_p.worst_stats, e);
            g_p.stats_checked++;
            g_p.box_only += box_only;
            free(got), free(want), free(scale), free(listed);
        }
        free(skip);
        splat__ref_grads_free(&rg);
        splat__ref_grads_free(&rs);
        free(d_rgb), free(d_alpha);
        t_ref_free(&ref);
    }
    t_gpu_image_free(&gi);
    free(g4), free(now);
}

/* m (h 0) or v (h 1) of element j of row i of a group's moments as stored (train_types.h: `per`
 * words a float, 1 the word, 2 float m and v rows), decoded here, not by the trainer's helpers. */
static double moment_half(const uint32_t *words, uint32_t per, uint64_t i, uint32_t w, uint32_t j, int h)
{
    uint32_t u = per == 1 ? words[i * w + j] : words[(2 * i + (uint32_t)h) * w + j];
    if (per == 1) u = h ? (u >> 16) << 15 : u << 16;
    float f;
    memcpy(&f, &u, 4);
    return f;
}

/* The optimizer update of step s: the parameters and moments it started from, the gradients the
 * step's backward wrote and the learning rates of its slot through splat__ref_adam (bias
 * corrections from the global step s + 1), against what the step left. Each moment within
 * T_TOL_OPTIM of the size of the terms that made it, and each update within T_TOL_OPTIM of the
 * reference's, scaled likewise by m's terms over m (training's gradients cancel in m now and
 * then: 0.9 m + 0.1 g = 1e-12 from terms of 3.5e-9 gave an update off by 9e-5 relative, against
 * 2.4e-5 otherwise), plus 2 float32 ulp of the parameter (as train_adam_vs_ref); SH coefficients
 * above the step's degree untouched. */
static void check_adam(uint32_t s)
{
    splat_trainer *t = g_p.t;
    splat_error err = {0};
    uint32_t n = t->model.count;
    if (n != g_p.before.count) {
        splat_test_fail(__FILE__, __LINE__, "adam:", "step %u: %u Gaussians, %u before it", s, n, g_p.before.count);
        return;
    }
    splat_train_slot slot;
    splat__train_fill_slot(t, 0, s, splat__train_view_of_step(t, s), true, &slot);
    uint32_t active = (slot.frame.sh_degree + 1) * (slot.frame.sh_degree + 1);
    splat_scene p, g;
    uint32_t *m[SPLAT_GROUP_COUNT] = {0};
    bool ok = splat_scene_init(&p, n, &err) == SPLAT_OK && splat_scene_init(&g, n, &err) == SPLAT_OK;
    /* (the GPU scenes' counts are not all kept by the trainer: the model's count is the truth) */
    splat_scene_gpu params = t->model.params;
    params.count = n;
    ok = ok && splat__scene_gpu_download(t->env.gpu, &params, &p, &err) == SPLAT_OK && moments_download(t, n, m, &err);
    /* the gradients' rows are as wide as splat__grad_width says */
    for (uint32_t k = 0; k < SPLAT_GROUP_COUNT && ok; k++)
        ok = splat__buf_download(t->env.gpu, &t->model.grads.group[k], 0, *splat__scene_group(&g, k),
                                 (uint64_t)n * splat__grad_width(k) * 4, &err) == SPLAT_OK;
    if (!ok) {
        splat_test_fail(__FILE__, __LINE__, "adam:", "%s", err.msg);
    } else {
        /* The trainer's SH gradient buffer holds project_bwd's SH records: the gradient is their
         * product, rounded once as Adam rounds it (render_types.h). Backwards, in place: row i's
         * record ends before row i's gradients begin. */
        for (uint64_t i = n; i-- > 0;) {
            const float *rec = g.sh + i * SPLAT_SH_RECORD_FLOATS;
            float row[48];
            for (uint32_t j = 0; j < 48; j++) row[j] = rec[j / 3] * rec[SPLAT_SH_RECORD_D_RAW + j % 3];
            memcpy(g.sh + i * 48, row, sizeof row);
        }
        double worst = 0;
        uint64_t stray = 0, updated = 0;
        for (uint32_t k = 0; k < SPLAT_GROUP_COUNT; k++) {
            const splat_group_info *gi = &splat__groups[k];
            uint32_t w = gi->width;
            const float *p0 = splat__scene_group_c(&g_p.before, k), *p1 = splat__scene_group_c(&p, k), *gr = splat__scene_group_c(&g, k);
            const uint32_t *m0 = g_p.moments_before[k], *m1 = m[k];
            uint32_t per = t->model.moments.words[k];
            for (uint64_t i = 0; i < n; i++)
                for (uint32_t j = 0; j < w; j++) {
                    uint64_t pi = i * w + j;
                    if ((gi->flags & SPLAT_GROUP_FLAG_SH) && j / 3 >= active) {
                        stray += memcmp(&p1[pi], &p0[pi], 4) != 0 || moment_half(m1, per, i, w, j, 0) != moment_half(m0, per, i, w, j, 0) ||
                                 moment_half(m1, per, i, w, j, 1) != moment_half(m0, per, i, w, j, 1);
                        continue;
                    }
                    double lr = j < gi->head ? slot.lr_head[k] : slot.lr_rest[k];
                    double rp = p0[pi], rg = gr[pi], rm = moment_half(m0, per, i, w, j, 0), rv = moment_half(m0, per, i, w, j, 1);
                    double m_scale = 0.9 * fabs(rm) + 0.1 * fabs(rg), v_scale = 0.999 * rv + 0.001 * rg * rg;
                    splat__ref_adam(1, &rp, &rg, &rm, &rv, lr, s + 1);
                    /* the update is proportional to m, which may cancel (0.9 m + 0.1 g): its error is
                     * relative to the size of the terms that made m, as m's own is */
                    double du = fabs(((double)p1[pi] - p0[pi]) - (rp - p0[pi]));
                    double cancel = rm != 0 ? fmax(1, m_scale / fabs(rm)) : 1;
                    double allowed = T_TOL_OPTIM * fabs(rp - p0[pi]) * cancel + 2.4e-7 * fabs(p0[pi]);
                    if (du > 0) worst = fmax(worst, allowed > 0 ? T_TOL_OPTIM * du / allowed : HUGE_VAL);
                    /* the moments as stored: within a spacing of their grids, 16-bit words' or
                     * floats' (test_train.c's train_adam_vs_ref checks the rounding itself) */
                    int em, ev, bm = per == 1 ? 8 : 24, bv = per == 1 ? 9 : 24;
                    frexp(fabs(rm), &em), frexp(rv, &ev);
                    double gm = moment_half(m1, per, i, w, j, 0), gv = moment_half(m1, per, i, w, j, 1);
                    if (m_scale > 0) worst = fmax(worst, T_TOL_OPTIM * fabs(gm - rm) / (T_TOL_OPTIM * m_scale + ldexp(1.0, em - bm)));
                    if (v_scale > 0) worst = fmax(worst, T_TOL_OPTIM * fabs(gv - rv) / (T_TOL_OPTIM * v_scale + ldexp(1.0, ev - bv)));
                    updated += rp != p0[pi];
                }
        }
        printf("  step %u: Adam over %u Gaussians, %llu values updated, worst relative error %.2e\n", s, n,
               (unsigned long long)updated, worst);
        T_CHECK(worst < T_TOL_OPTIM, "step %u: Adam update off by %.3g (relative)", s, worst);
        T_CHECK(stray == 0 && updated > 0, "step %u: %llu SH values above degree %u changed, %llu updated", s,
                (unsigned long long)stray, slot.frame.sh_degree, (unsigned long long)updated);
        g_p.adam_checked++;
    }
    splat_scene_free(&p);
    moments_free(m);
    splat_scene_free(&g);
}

/* The opacity reset of step s (docs/TRAIN.md): opacity = min(opacity, logit(0.01)) after the
 * step's optimizer update, and the opacity group's Adam moments zeroed. Before the default
 * strategy runs, a fifth of the Gaussians get logits below logit(0.01), which the reset must
 * leave alone (the run alone may have none there). */
static float *pre_reset(splat_trainer *t)
{
    uint32_t n = t->model.count;
    float *o = download(t->env.gpu, &t->model.params.opacities, n);
    if (!o) return NULL;
    for (uint32_t i = 0; i < n; i += 5) o[i] = (float)t_uniform(-9, -4.6);
    splat_error err = {0};
    if (splat__buf_upload(t->env.gpu, &t->model.params.opacities, 0, o, (uint64_t)n * 4, &err) != SPLAT_OK) {
        splat_test_fail(__FILE__, __LINE__, "upload:", "%s", err.msg);
        free(o);
        return NULL;
    }
    return o;
}

static void post_reset(splat_trainer *t, uint32_t s, float *o_before)
{
    splat_error err = {0};
    uint32_t n = t->model.count;
    /* the reset is committed, not waited for */
    if (splat__stream_sync(t->env.stream, SPLAT_SYNC_COMMIT_AND_WAIT, &err) != SPLAT_OK) {
        splat_test_fail(__FILE__, __LINE__, "sync:", "%s", err.msg);
        return;
    }
    float *o = download(t->env.gpu, &t->model.params.opacities, n);
    uint32_t per = t->model.moments.words[SPLAT_GROUP_OPACITIES];
    float *mv = download(t->env.gpu, &t->model.moments.opacities, (uint64_t)per * n);
    splat_scene want;
    if (o && mv && splat_scene_init(&want, n, &err) == SPLAT_OK) {
        want.count = n;
        memcpy(want.opacities, o_before, (size_t)n * 4);
        splat__ref_opacity_reset(&want);
        const float cap = (float)log(0.01 / 0.99);
        uint32_t differ = 0, above = 0, below = 0;
        uint64_t moments = 0;
        for (uint32_t i = 0; i < n; i++) {
            differ += memcmp(&o[i], &want.opacities[i], 4) != 0;
            above += !(o[i] <= cap);
            below += o_before[i] < cap;
            for (uint32_t k = 0; k < per; k++) {
                uint32_t word;
                memcpy(&word, &mv[per * i + k], 4);
                moments += word != 0;
            }
        }
        printf("  step %u: opacity reset of %u Gaussians (%u below logit(0.01) before it)\n", s, n, below);
        T_CHECK(above == 0, "step %u: %u opacity logits above logit(0.01) after the reset", s, above);
        T_CHECK(differ == 0, "step %u: %u opacities differ from the reference's reset", s, differ);
        T_CHECK(moments == 0, "step %u: %llu opacity moments not zeroed", s, (unsigned long long)moments);
        g_p.resets_checked++;
        g_p.reset_below += below;
        splat_scene_free(&want);
    }
    free(o), free(mv);
}

static bool probe_due(const splat_train_desc *d, uint32_t s)
{
    splat_trainer *t = g_p.t;
    const splat_train_slot *slot = (const splat_train_slot *)t->ring.slots.map + s % SPLAT_TRAIN_RING;
    g_p.steps_seen++;
    if (!slot_matches(slot, s, t->steps, g_p.bad_schedule < 3)) g_p.bad_schedule++;
    /* Between densifications: the step made one submission, and waited only to reuse its ring
     * slot, for the iteration SPLAT_TRAIN_RING steps back (none in the first SPLAT_TRAIN_RING
     * steps after a drain, whose slots are free): the three latest iterations (at most as many as
     * were submitted since the drain) are in flight, so the GPU had two queued behind the one
     * waited for. */
    const splat_stream *st = t->env.stream;
    g_p.since_drain++;
    if (g_p.count_waits && !g_p.rebase) {
        uint32_t queued = 0, expect = SPLAT_MIN(g_p.since_drain, 3u);
        for (uint32_t k = 0; k < 3; k++)
            for (uint32_t j = 0; j < SPLAT_TRAIN_RING; j++) queued += st->submitted >= k + 1 && t->ring.inflight[j] == st->submitted - k;
        uint64_t waits = st->waits - g_p.waits, submits = st->submits - g_p.submits;
        bool ok = submits == 1 && waits == (g_p.since_drain > SPLAT_TRAIN_RING ? 1u : 0u) && queued == expect;
        if (!ok && g_p.bad_waits < 3)
            fprintf(stderr, "step %u (%u since a drain): %llu submissions, %llu waits, %u of the %u latest iterations in flight\n",
                    s, g_p.since_drain, (unsigned long long)submits, (unsigned long long)waits, queued, expect);
        g_p.bad_waits += !ok;
        g_p.waits_checked++;
    }
    g_p.rebase = false;
    g_p.submits = st->submits;
    g_p.waits = st->waits;
    return g_p.inner->due(d, s) || in_window(s) || in_window(s + 1) || in_adam(s) || in_adam(s + 1);
}

static splat_status probe_run(splat_strategy_state *state, const splat_strategy_ctx *ctx, uint32_t s, bool *resized,
                              splat_error *err)
{
    splat_trainer *t = g_p.t;
    if (in_window(s) && g_p.have_before) check_stats(s);
    if (in_adam(s) && g_p.have_before) check_adam(s);
    float *o_before = reset_due(ctx->desc, s) ? pre_reset(t) : NULL;
    splat_status st = SPLAT_OK;
    if (g_p.inner->due(ctx->desc, s)) st = g_p.inner->run(state, ctx, s, resized, err);
    /* the default strategy refined (it reports a resize) exactly where TRAIN.md says */
    g_p.refines += *resized;
    g_p.bad_refines += *resized != refine_due(ctx->desc, s);
    if (st == SPLAT_OK && o_before) post_reset(t, s, o_before);
    free(o_before);
    if (st == SPLAT_OK && (in_window(s + 1) || in_adam(s + 1))) snapshot(*resized);
    /* the loop drained the ring before this host work, and after a refine it resets the
     * statistics and waits: the count starts over after the next step */
    g_p.since_drain = 0;
    g_p.rebase = true;
    return st;
}

/* A trainer on the demo with the probe in place of its strategy. */
static splat_trainer *probe_trainer(splat_ctx *ctx, const splat_train_desc *desc)
{
    memset(&g_p, 0, sizeof g_p);
    splat_error err = {0};
    splat_trainer *t = NULL;
    if (splat_trainer_init(&t, ctx, desc, &err) != SPLAT_OK) {
        splat_test_fail(__FILE__, __LINE__, "trainer:", "%s", err.msg);
        return NULL;
    }
    g_p.t = t;
    g_p.inner = t->strategy;
    g_p.ops = *t->strategy;
    g_p.ops.due = probe_due;
    g_p.ops.run = probe_run;
    t->strategy = &g_p.ops;
    g_p.sh_max = 3;
    g_p.rebase = true;
    /* scene scale: 1.1 x the largest distance of a training camera's centre -R^T t from their mean */
    double mean[3] = {0, 0, 0};
    for (int pass = 0; pass < 2; pass++)
        for (uint32_t k = 0; k < t->n_train; k++) {
            const splat_camera *cam = &t->ds.views[t->train_views[k]].camera;
            double c[3] = {0, 0, 0};
            for (int i = 0; i < 3; i++)
                for (int j = 0; j < 3; j++) c[i] -= (double)cam->R[3 * j + i] * cam->t[j];
            if (pass == 0)
                for (int i = 0; i < 3; i++) mean[i] += c[i] / t->n_train;
            else
                g_p.scene_scale = fmax(g_p.scene_scale, 1.1 * sqrt(pow(c[0] - mean[0], 2) + pow(c[1] - mean[1], 2) +
                                                                   pow(c[2] - mean[2], 2)));
        }
    return t;
}

/* The cases' run: the demo at 48 px, 12 views, 3200 steps scheduled, a fresh seed, refines every
 * 10 steps after step 10 until refine_stop, opacity resets every 25; NULL (the case failed) when
 * it cannot start. *ctx is the caller's to free, also then. */
static splat_trainer *probe_demo(splat_ctx **ctx, uint32_t refine_stop)
{
    splat_error err = {0};
    *ctx = NULL;
    if (splat_ctx_init(ctx, NULL, &err) != SPLAT_OK) {
        splat_test_fail(__FILE__, __LINE__, "context:", "%s", err.msg);
        return NULL;
    }
    const char *dir = demo_dir(*ctx, 48, 12);
    splat_train_desc desc = {.data = dir, .steps = 3200, .seed = splat__rng_u64(splat_test_rng()), .refine_start = 10,
                             .refine_every = 10, .refine_stop = refine_stop, .reset_every = 25};
    return dir ? probe_trainer(*ctx, &desc) : NULL;
}

static void probe_free(splat_trainer *t)
{
    splat_trainer_free(t);
    splat_scene_free(&g_p.before);
    moments_free(g_p.moments_before);
    free(g_p.stats_before);
    memset(&g_p, 0, sizeof g_p);
}

/* ------------------------------------------------------------------ the cases */

/* Runs the trainer to `until`; false (the case failed) on an error. */
static bool run_to(splat_trainer *t, uint32_t until)
{
    splat_error err = {0};
    if (splat_trainer_run(t, until, &err) == SPLAT_OK) return true;
    splat_test_fail(__FILE__, __LINE__, "training:", "%s", err.msg);
    return false;
}

/* 3200 steps scheduled (so the SH degree rises at 1000, 2000 and 3000 and the means' rate decays
 * over them), refines every 10 steps after step 10 until 35 (at 20 and 30) and opacity resets
 * every 25 (at 25). The GPU runs steps 0 to 34, then each SH degree step with the step before and
 * after it (the schedules are functions of the step alone: the trainer's step is set ahead).
 * Checked: the slot of every step run, and through splat__train_fill_slot of every step scheduled,
 * against the reference's SH degree and learning rates; the optimizer updates of steps 1 to 3
 * (where the bias corrections are far from 1) against splat__ref_adam; the refines where TRAIN.md
 * puts them; the reset at 25 against the reference's; the statistics steps 27 to 32 add, across
 * the refine at 30, against the reference's render and backward of each step. */
SPLAT_TEST(train_schedule_vs_ref)
{
    splat_ctx *ctx;
    splat_trainer *t = probe_demo(&ctx, 35);
    if (!t) goto done;
    g_p.win_from = 27, g_p.win_to = 32;
    g_p.adam_from = 1, g_p.adam_to = 3;
    if (!run_to(t, 35)) goto done;
    uint32_t count = t->model.count;
    static const uint32_t jumps[] = {999, 1999, 2999};
    for (size_t k = 0; k < SPLAT_COUNTOF(jumps); k++) {
        t->step = jumps[k];
        g_p.since_drain = 0;
        if (!run_to(t, jumps[k] + 3)) goto done;
    }
    /* the whole schedule, step by step */
    uint32_t bad = 0;
    for (uint32_t s = 0; s < t->steps; s++) {
        splat_train_slot slot;
        splat__train_fill_slot(t, 0, s, splat__train_view_of_step(t, s), true, &slot);
        bad += !slot_matches(&slot, s, t->steps, bad < 3);
    }
    printf("  scene scale %.6f (trainer %.6f); %u steps run, %u refines, Gaussians %u after step 34; statistics of %u steps "
           "(worst %.2e); %u reset(s)\n",
           g_p.scene_scale, t->scene_scale, g_p.steps_seen, g_p.refines, count, g_p.stats_checked, g_p.worst_stats,
           g_p.resets_checked);
    T_CHECK(bad == 0, "%u of %u scheduled steps differ from the reference's schedules", bad, t->steps);
    T_CHECK(g_p.bad_schedule == 0, "%u of the %u steps run differ from the reference's schedules", g_p.bad_schedule,
            g_p.steps_seen);
    T_CHECK(g_p.steps_seen == 35 + 3 * 3, "%u steps run", g_p.steps_seen);
    T_CHECK(g_p.bad_refines == 0, "%u steps refined where TRAIN.md's schedule does not, or the reverse", g_p.bad_refines);
    T_CHECK(g_p.refines == 2 && g_p.resets_checked == 1 && g_p.stats_checked == 6 && g_p.reset_below > 0 &&
                g_p.adam_checked == 3,
            "the run covered %u refines, %u resets (%u opacities below the cap), %u steps of statistics, %u of Adam",
            g_p.refines, g_p.resets_checked, g_p.reset_below, g_p.stats_checked, g_p.adam_checked);
done:
    probe_free(t);
    splat_ctx_free(ctx);
}

/* What counts as a view in the statistics, both measures: steps 27 to 44 (refines at 30 and 40),
 * small images so that many Gaussians sit at an edge, where gsplat's box overlaps the image while
 * the Gaussian draws no pixel. The default counts those views (splat__ref_gsplat_box decides),
 * SPLAT_DENSIFY_SEEN=pixels does not; either way such views must occur, or the case tests nothing. */
static void seen_case(const char *env, bool want_box)
{
    splat_ctx *ctx;
    if (env) setenv("SPLAT_DENSIFY_SEEN", env, 1);
    else unsetenv("SPLAT_DENSIFY_SEEN");
    splat_trainer *t = probe_demo(&ctx, 45);
    unsetenv("SPLAT_DENSIFY_SEEN");
    if (!t) goto done;
    T_CHECK(t->seen_box == want_box, "SPLAT_DENSIFY_SEEN=%s: the trainer counts %s", env ? env : "(unset)",
            t->seen_box ? "gsplat's box" : "drawn pixels");
    g_p.win_from = 27, g_p.win_to = 44;
    if (!run_to(t, 45)) goto done;
    printf("  SPLAT_DENSIFY_SEEN=%s: statistics of %u steps (worst %.2e), %u views seen by gsplat's box alone\n",
           env ? env : "(unset)", g_p.stats_checked, g_p.worst_stats, g_p.box_only);
    T_CHECK(g_p.stats_checked == 18, "%u steps of statistics checked", g_p.stats_checked);
    T_CHECK(g_p.box_only > 0, "no Gaussian was seen by gsplat's box alone: the case tells the measures apart by nothing");
done:
    probe_free(t);
    splat_ctx_free(ctx);
}

SPLAT_TEST(train_stats_seen_box) { seen_case(NULL, true); }
SPLAT_TEST(train_stats_seen_pixels) { seen_case("pixels", false); }

/* An unknown SPLAT_DENSIFY_SEEN is an error that names it, before any work. */
SPLAT_TEST(train_seen_unknown)
{
    splat_ctx *ctx = NULL;
    splat_error err = {0};
    T_OK(splat_ctx_init(&ctx, NULL, &err), &err);
    const char *dir = demo_dir(ctx, 48, 12);
    splat_trainer *t = NULL;
    splat_train_desc desc = {.data = dir, .steps = 10};
    setenv("SPLAT_DENSIFY_SEEN", "boxes", 1);
    splat_status st = dir ? splat_trainer_init(&t, ctx, &desc, &err) : SPLAT_OK;
    unsetenv("SPLAT_DENSIFY_SEEN");
    if (dir) {
        T_CHECK(st == SPLAT_ERR_INVALID_ARG && strstr(err.msg, "SPLAT_DENSIFY_SEEN") && strstr(err.msg, "'boxes'"),
                "%s: %s", splat_status_str(st), err.msg);
        T_CHECK(t == NULL);
    }
    splat_trainer_free(t);
    splat_ctx_free(ctx);
}

/* Between densifications the host never drains the GPU: each iteration is one submission of its
 * recorded command buffer and one wait, for the iteration SPLAT_TRAIN_RING steps back, with the
 * three latest in flight (the wait for a ring slot is a wait like any other for the stream's
 * counter: with a GPU slower than the host, it is where the host blocks). */
SPLAT_TEST(train_ring_no_drain)
{
    splat_ctx *ctx = NULL;
    splat_error err = {0};
    T_OK(splat_ctx_init(&ctx, NULL, &err), &err);
    const char *dir = demo_dir(ctx, 48, 12);
    splat_trainer *t = NULL;
    /* one refine, at 20: steps 0 to 19 and 21 to 39 are between densifications */
    splat_train_desc desc = {.data = dir, .steps = 40, .seed = splat__rng_u64(splat_test_rng()), .refine_start = 10,
                             .refine_every = 20, .reset_every = 1000};
    if (!dir || !(t = probe_trainer(ctx, &desc))) goto done;
    g_p.count_waits = true;
    uint64_t w0 = t->env.stream->waits, s0 = t->env.stream->submits;
    if (!run_to(t, 0)) goto done;
    printf("  %u steps: %llu submissions, %llu waits (a refine at 20, the final drain); %u steps off the rule\n",
           g_p.steps_seen, (unsigned long long)(t->env.stream->submits - s0), (unsigned long long)(t->env.stream->waits - w0),
           g_p.bad_waits);
    /* every step but the first and the one after the refine (whose counts include host work) */
    T_CHECK(g_p.steps_seen == 40 && g_p.refines == 1 && g_p.bad_refines == 0 && g_p.waits_checked == 38,
            "%u steps, %u refines, %u checked", g_p.steps_seen, g_p.refines, g_p.waits_checked);
    T_CHECK(g_p.bad_waits == 0, "%u steps between densifications drained the GPU or submitted more than once",
            g_p.bad_waits);
done:
    probe_free(t);
    splat_ctx_free(ctx);
}

/* With views held out (every 8th): each epoch of steps visits every training view once, in an order
 * of its own, and never a held-out one; the scene scale comes from the training cameras alone. The
 * oracle is the dataset's own flags, not the trainer's list of training views. */
SPLAT_TEST(train_views_held_out)
{
    splat_ctx *ctx = NULL;
    splat_error err = {0};
    splat_trainer *t = NULL;
    if (splat_ctx_init(&ctx, NULL, &err) != SPLAT_OK) {
        splat_test_fail(__FILE__, __LINE__, "context:", "%s", err.msg);
        goto done;
    }
    const char *dir = demo_dir(ctx, 32, 17 + (uint32_t)t_uniform(0, 8));
    splat_train_desc desc = {.data = dir, .eval = true, .steps = 200, .seed = splat__rng_u64(splat_test_rng())};
    if (!dir || splat_trainer_init(&t, ctx, &desc, &err) != SPLAT_OK) {
        splat_test_fail(__FILE__, __LINE__, "trainer:", "%s", err.msg);
        goto done;
    }
    const uint32_t n_views = t->ds.n_views;
    uint32_t n_train = 0;
    double (*centre)[3] = calloc(n_views, sizeof *centre), mean[3] = {0, 0, 0}, far = 0;
    for (uint32_t v = 0; v < n_views; v++) {
        const splat_camera *cam = &t->ds.views[v].camera;
        for (int i = 0; i < 3; i++)
            for (int j = 0; j < 3; j++) centre[v][i] -= (double)cam->R[3 * j + i] * cam->t[j];
        if (t->ds.views[v].is_test) continue;
        n_train++;
        for (int i = 0; i < 3; i++) mean[i] += centre[v][i];
    }
    for (int i = 0; i < 3; i++) mean[i] /= n_train;
    for (uint32_t v = 0; v < n_views; v++)
        if (!t->ds.views[v].is_test)
            far = fmax(far, sqrt(pow(centre[v][0] - mean[0], 2) + pow(centre[v][1] - mean[1], 2) +
                                 pow(centre[v][2] - mean[2], 2)));
    free(centre);
    T_REQUIRE(n_train == t->n_train && n_train < n_views, "%u training views of %u; the trainer has %u", n_train, n_views,
              t->n_train);
    /* the trainer sums the centres' float products: agreement to float rounding */
    T_CHECK(fabs(t->scene_scale - 1.1 * far) <= 1e-6 * far, "scene scale %.9g, from the training cameras %.9g",
            t->scene_scale, 1.1 * far);
    uint32_t *first = calloc(n_train, 4), same = 0;
    bool *seen = calloc(n_views, 1);
    for (uint32_t e = 0; e < 2; e++) {
        memset(seen, 0, n_views);
        for (uint32_t k = 0; k < n_train; k++) {
            uint32_t v = splat__train_view_of_step(t, e * n_train + k);
            T_REQUIRE(v < n_views, "step %u: view %u of %u", e * n_train + k, v, n_views);
            T_CHECK(!t->ds.views[v].is_test && !seen[v], "step %u: view %u (%s) is %s", e * n_train + k, v, t->ds.views[v].name,
                    t->ds.views[v].is_test ? "held out" : "visited twice in one epoch");
            seen[v] = true;
            if (e == 0) first[k] = v;
            else same += first[k] == v;
        }
    }
    T_CHECK(same < n_train, "the second epoch visits the views in the first's order");
    free(first), free(seen);
done:
    splat_trainer_free(t);
    splat_ctx_free(ctx);
}
