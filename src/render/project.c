/* render: the preprocess (docs/RASTER.md section 1) and its backward (section 4), one thread per
 * Gaussian. Shaders project_fwd.comp and project_bwd.comp (project_*_h: SH as half floats). */
#include "render/render.h"

void splat__project_fwd_record(splat_cmd *c, const splat_renderer *r, const splat_scene_gpu *scene,
                               splat_render_bufs *b, uint32_t n, uint32_t flags)
{
    splat_view v[PROJECT_FWD_BINDINGS] = {
        [PROJECT_FWD_FRAME] = SPLAT_VIEW(b->frame),
        [PROJECT_FWD_MEANS] = SPLAT_VIEW(scene->means),
        [PROJECT_FWD_SCALES] = SPLAT_VIEW(scene->log_scales),
        [PROJECT_FWD_QUATS] = SPLAT_VIEW(scene->quats),
        [PROJECT_FWD_OPACITIES] = SPLAT_VIEW(scene->opacities),
        [PROJECT_FWD_SH] = SPLAT_VIEW(scene->sh),
        [PROJECT_FWD_PROJ] = SPLAT_VIEW(b->proj),
        [PROJECT_FWD_RADII] = SPLAT_VIEW(b->radii),
        [PROJECT_FWD_TILES] = SPLAT_VIEW(b->tiles),
        [PROJECT_FWD_COUNTERS] = SPLAT_VIEW(b->counters),
    };
    bool drawn_only = b->fwd_only || (flags & SPLAT_FWD_SH_DRAWN);
    const splat_pipe *p = drawn_only ? (scene->sh_half ? &r->project_fwd_h_only : &r->project_fwd_only)
                                      : (scene->sh_half ? &r->project_fwd_h : &r->project_fwd);
    splat__cmd_dispatch_1d(c, p, v, PROJECT_FWD_BINDINGS, NULL, 0, n);
}

void splat__project_bwd_record(splat_cmd *c, const splat_renderer *r, const splat_scene_gpu *scene,
                               splat_render_bufs *b, uint32_t n, const splat_scene_gpu *grads, uint32_t flags)
{
    SPLAT_ASSERT(n <= grads->capacity);
    /* half-float SH is for rendering; training (the statistics, the records) keeps float parameters */
    SPLAT_ASSERT(!(flags && scene->sh_half));
    splat_render_push pc = splat__render_push(b);
    splat_view v[PROJECT_BWD_BINDINGS] = {
        [PROJECT_BWD_FRAME] = SPLAT_VIEW(b->frame),
        [PROJECT_BWD_MEANS] = SPLAT_VIEW(scene->means),
        [PROJECT_BWD_SCALES] = SPLAT_VIEW(scene->log_scales),
        [PROJECT_BWD_QUATS] = SPLAT_VIEW(scene->quats),
        [PROJECT_BWD_OPACITIES] = SPLAT_VIEW(scene->opacities),
        [PROJECT_BWD_SH] = SPLAT_VIEW(scene->sh),
        [PROJECT_BWD_RADII] = SPLAT_VIEW(b->radii),
        [PROJECT_BWD_PARTIAL] = SPLAT_VIEW(b->partial[0]), [PROJECT_BWD_PARTIAL_Q1] = SPLAT_VIEW(b->partial[1]),
        [PROJECT_BWD_PARTIAL_Q2] = SPLAT_VIEW(b->partial[2]), [PROJECT_BWD_PARTIAL_Q3] = SPLAT_VIEW(b->partial[3]),
        [PROJECT_BWD_QUADS] = SPLAT_VIEW(b->quads),
        [PROJECT_BWD_GRAD_MEANS] = SPLAT_VIEW(grads->means),
        [PROJECT_BWD_GRAD_SCALES] = SPLAT_VIEW(grads->log_scales),
        [PROJECT_BWD_GRAD_QUATS] = SPLAT_VIEW(grads->quats),
        [PROJECT_BWD_GRAD_OPACITIES] = SPLAT_VIEW(grads->opacities),
        [PROJECT_BWD_GRAD_SH] = SPLAT_VIEW(grads->sh),
        [PROJECT_BWD_STATS] = SPLAT_VIEW(b->stats),
        [PROJECT_BWD_OFFSETS] = SPLAT_VIEW(b->offsets),
        [PROJECT_BWD_TILES] = SPLAT_VIEW(b->tiles),
        [PROJECT_BWD_GATE] = SPLAT_VIEW(b->gate),
        [PROJECT_BWD_DEBUG] = SPLAT_VIEW(b->debug),
        [PROJECT_BWD_PROJ] = SPLAT_VIEW(b->proj),
    };
    const splat_pipe *p = scene->sh_half ? &r->project_bwd_h : &r->project_bwd[flags & 3u];
    splat__cmd_dispatch_1d(c, p, v, PROJECT_BWD_BINDINGS, &pc, sizeof pc, n);
}
