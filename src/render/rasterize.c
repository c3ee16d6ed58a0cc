/* render: blending (docs/RASTER.md section 3) and its backward (section 4), one workgroup per 8x8
 * quadrant of a 16x16 tile over the tile's sorted list. The backward writes each intersection's
 * share of its Gaussian's 2D gradient from each quadrant, into that quadrant's array (no atomics);
 * project_bwd adds a Gaussian's shares in order. */
#include "render/render.h"

void splat__rasterize_fwd_record(splat_cmd *c, const splat_renderer *r, splat_render_bufs *b)
{
    splat_view v[RASTERIZE_FWD_BINDINGS] = {
        [RASTERIZE_FWD_FRAME] = SPLAT_VIEW(b->frame),
        [RASTERIZE_FWD_RANGES] = SPLAT_VIEW(b->ranges),
        [RASTERIZE_FWD_PROJ] = SPLAT_VIEW(b->proj),
        [RASTERIZE_FWD_OUT_RGBT] = SPLAT_VIEW(b->out_rgbt),
        [RASTERIZE_FWD_OUT_LAST] = SPLAT_VIEW(b->out_last),
        [RASTERIZE_FWD_OUT_DEPTH] = SPLAT_VIEW(b->out_depth),
        /* each sorted entry's Gaussian: tile_sort's gather, or in forward-only renders the values themselves */
        [RASTERIZE_FWD_GAUSS] = b->fwd_only ? SPLAT_VIEW(b->vals) : SPLAT_VIEW(b->gauss_sorted),
    };
    splat__cmd_dispatch(c, b->fwd_only ? &r->rasterize_fwd_only : &r->rasterize_fwd, v, RASTERIZE_FWD_BINDINGS, NULL, 0,
                        2 * b->max_tiles_x, 2 * b->max_tiles_y, 1); /* a workgroup per quadrant */
}

void splat__rasterize_bwd_record(splat_cmd *c, const splat_renderer *r, splat_render_bufs *b)
{
    splat_view v[RASTERIZE_BWD_BINDINGS] = {
        [RASTERIZE_BWD_FRAME] = SPLAT_VIEW(b->frame),
        [RASTERIZE_BWD_RANGES] = SPLAT_VIEW(b->ranges),
        [RASTERIZE_BWD_VALS] = SPLAT_VIEW(b->vals),
        [RASTERIZE_BWD_PROJ] = SPLAT_VIEW(b->proj),
        [RASTERIZE_BWD_OUT_RGBT] = SPLAT_VIEW(b->out_rgbt),
        [RASTERIZE_BWD_OUT_LAST] = SPLAT_VIEW(b->out_last),
        [RASTERIZE_BWD_GRAD_IMG] = SPLAT_VIEW(b->grad_img),
        [RASTERIZE_BWD_GAUSS] = SPLAT_VIEW(b->gauss_sorted),
        [RASTERIZE_BWD_PARTIAL] = SPLAT_VIEW(b->partial[0]), [RASTERIZE_BWD_PARTIAL_Q1] = SPLAT_VIEW(b->partial[1]),
        [RASTERIZE_BWD_PARTIAL_Q2] = SPLAT_VIEW(b->partial[2]), [RASTERIZE_BWD_PARTIAL_Q3] = SPLAT_VIEW(b->partial[3]),
        [RASTERIZE_BWD_QUADS] = SPLAT_VIEW(b->quads),
    };
    splat__cmd_dispatch(c, &r->rasterize_bwd, v, RASTERIZE_BWD_BINDINGS, NULL, 0, 2 * b->max_tiles_x, 2 * b->max_tiles_y, 1);
}
