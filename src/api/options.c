/* api: every default of the public descriptors, resolved in one place. What zero means for a
 * field is written beside it in include/splatc.h and done here, nowhere else: the layers below
 * receive resolved descriptors. (The two choices that need the data, the background of
 * SPLAT_BACKGROUND_AUTO and a degree capped by an init_ply scene, are the trainer's, where the
 * data is.) */
#include "api/api.h"

splat_status splat__render_options(const splat_render_desc *in, uint32_t scene_degree, splat_render_desc *out,
                                   splat_error *err)
{
    static const splat_render_desc zero = {0};
    *out = in ? *in : zero;
    for (int c = 0; c < 3; c++)
        if (!isfinite(out->background[c]))
            return splat__fail(err, SPLAT_ERR_INVALID_ARG, "render: background component %d is %g", c,
                               (double)out->background[c]);
    if ((unsigned)out->rasterize_mode >= SPLAT_RASTERIZE_MODE_COUNT)
        return splat__fail(err, SPLAT_ERR_INVALID_ARG, "render: unknown rasterize mode %d", (int)out->rasterize_mode);
    /* 0: all the scene has; never more than the scene has; at most 3 */
    uint32_t want = out->sh_degree == SPLAT_SH_DEGREE_0 ? 0 : out->sh_degree ? out->sh_degree : 3;
    uint32_t d = SPLAT_MIN(SPLAT_MIN(want, scene_degree), 3u);
    out->sh_degree = d ? d : SPLAT_SH_DEGREE_0;
    return SPLAT_OK;
}

splat_status splat__train_options(const splat_train_desc *in, splat_train_desc *out, splat_error *err)
{
    *out = *in;
    if (!out->data) return splat__fail(err, SPLAT_ERR_INVALID_ARG, "training needs a dataset folder");
    if (out->render.sh_half)
        return splat__fail(err, SPLAT_ERR_UNSUPPORTED, "training keeps SH coefficients as float (sh_half is for rendering)");
    splat_status st = splat__render_options(&in->render, 3, &out->render, err);
    if (st != SPLAT_OK) return st;
    if (!out->images_factor) out->images_factor = 1;
    if (out->eval_scale == 0) out->eval_scale = 1;
    if (!(out->eval_scale > 0 && out->eval_scale <= SPLAT_EVAL_SCALE_MAX))
        return splat__fail(err, SPLAT_ERR_INVALID_ARG, "evaluation: eval_scale %g is not a number above 0 and at most %g",
                           (double)out->eval_scale, (double)SPLAT_EVAL_SCALE_MAX);
    if (!out->steps) out->steps = 30000;
    if (!out->init_points) out->init_points = 100000;
    if (!out->progress_ms) out->progress_ms = 250;
    if (!out->refine_start) out->refine_start = 500;
    if (!out->refine_every) out->refine_every = 100;
    bool mcmc = out->strategy == SPLAT_STRATEGY_MCMC;
    if (!out->refine_stop) out->refine_stop = mcmc ? 25000 : 15000;
    if (!out->reset_every) out->reset_every = 3000;
    if (!out->max_gaussians) out->max_gaussians = mcmc ? 1000000 : UINT32_MAX;
    return SPLAT_OK;
}
