/* api: training. The options are resolved here, and the trainer is given the context's device,
 * stream and renderer. */
#include "api/api.h"

splat_status splat_trainer_init(splat_trainer **t, splat_ctx *ctx, const splat_train_desc *desc, splat_error *err)
{
    *t = NULL;
    splat_train_desc resolved;
    splat_status st = splat__train_options(desc, &resolved, err);
    const splat_renderer *r = NULL;
    if (st == SPLAT_OK) st = splat__ctx_renderer(ctx, &r, err);
    if (st != SPLAT_OK) return st;
    splat_train_env env = {.gpu = ctx->gpu, .stream = &ctx->stream, .renderer = r};
    st = splat__trainer_init(t, &env, &resolved, err);
    if (st == SPLAT_OK) {
        /* what the caller asked for in so many words, for a resume to refuse what it cannot honour */
        (*t)->asked_sh_degree = desc->render.sh_degree;
    }
    return st;
}

splat_status splat_trainer_run(splat_trainer *t, uint32_t until_step, splat_error *err)
{
    return splat__train_run(t, until_step, err);
}

void splat_trainer_interrupt(splat_trainer *t) { splat__train_interrupt(t); }

uint32_t splat_trainer_step(const splat_trainer *t) { return t->step; }

uint32_t splat_trainer_steps(const splat_trainer *t) { return t->steps; }

uint32_t splat_trainer_count(const splat_trainer *t) { return t->model.count; }

uint64_t splat_trainer_seed(const splat_trainer *t) { return t->desc.seed; }

uint32_t splat_trainer_profile(const splat_trainer *t, splat_stage_time *stages, uint32_t max)
{
    return splat__trainer_profile(t, stages, max);
}

uint32_t splat_trainer_diagnostics(splat_trainer *t, char *msg, size_t size)
{
    return splat__trainer_diagnostics(t, msg, size);
}

uint32_t splat_trainer_views(const splat_trainer *t, splat_view_info *views, uint32_t max)
{
    for (uint32_t v = 0; v < t->ds.n_views && v < max; v++) {
        const splat_data_view *d = &t->ds.views[v];
        views[v] = (splat_view_info){.name = d->name, .camera = d->camera, .is_test = d->is_test};
    }
    return t->ds.n_views;
}

splat_status splat_trainer_eval(splat_trainer *t, const char *render_dir, splat_eval_result *res, splat_error *err)
{
    return splat__train_eval(t, render_dir, res, err);
}

splat_status splat_trainer_scene(splat_trainer *t, splat_scene *scene, splat_error *err)
{
    return splat__train_scene(t, scene, err);
}

splat_status splat_trainer_save(splat_trainer *t, const char *path, splat_error *err)
{
    return splat__train_save(t, path, err);
}

splat_status splat_trainer_resume(splat_trainer *t, const char *path, splat_error *err)
{
    return splat__train_resume(t, path, err);
}

void splat_trainer_free(splat_trainer *t) { splat__trainer_free(t); }
