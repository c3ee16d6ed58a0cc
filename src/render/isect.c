/* render: the tile intersections (docs/RASTER.md section 2). isect_setup turns the scan's total
 * into the count the sort and the per-intersection dispatches use (clamped to the capacity, with
 * the overflow flagged); isect_fwd writes every intersection's key (tile id, depth bits) and value
 * (its emission index; forward-only renders: the Gaussian), one thread per Gaussian. The sort is by
 * tile alone; then tile_sort orders each tile's run by depth in a workgroup. */
#include "render/render.h"

void splat__isect_record(splat_cmd *c, const splat_renderer *r, splat_render_bufs *b, uint32_t n)
{
    splat_render_push pc = splat__render_push(b);
    splat_view setup[ISECT_SETUP_BINDINGS] = {
        [ISECT_SETUP_COUNTERS] = SPLAT_VIEW(b->counters),
        [ISECT_SETUP_SCAN_TOTAL] = SPLAT_VIEW(b->scan_total),
        [ISECT_SETUP_SORT_COUNT] = SPLAT_VIEW(b->sort_count),
    };
    splat__cmd_dispatch(c, &r->isect_setup, setup, ISECT_SETUP_BINDINGS, &pc, sizeof pc, 1, 1, 1);
    splat__cmd_barrier(c);
    splat_view v[ISECT_FWD_BINDINGS] = {
        [ISECT_FWD_FRAME] = SPLAT_VIEW(b->frame),
        [ISECT_FWD_PROJ] = SPLAT_VIEW(b->proj),
        [ISECT_FWD_RADII] = SPLAT_VIEW(b->radii),
        [ISECT_FWD_OFFSETS] = SPLAT_VIEW(b->offsets),
        [ISECT_FWD_TILES] = SPLAT_VIEW(b->tiles),
        [ISECT_FWD_KEYS_LO] = SPLAT_VIEW(b->keys_lo),
        [ISECT_FWD_KEYS_HI] = SPLAT_VIEW(b->keys_hi),
        [ISECT_FWD_VALS] = SPLAT_VIEW(b->vals),
        [ISECT_FWD_GAUSS_OF_EMIT] = SPLAT_VIEW(b->gauss_of_emit),
        [ISECT_FWD_QUADS] = SPLAT_VIEW(b->quads),
        [ISECT_FWD_COUNTERS] = SPLAT_VIEW(b->counters),
    };
    splat__cmd_dispatch_1d(c, b->fwd_only ? &r->isect_fwd_only : &r->isect_fwd, v, ISECT_FWD_BINDINGS, &pc, sizeof pc, n);
}

void splat__tile_sort_record(splat_cmd *c, const splat_renderer *r, splat_render_bufs *b)
{
    splat_view v[TILE_SORT_BINDINGS] = {
        [TILE_SORT_FRAME] = SPLAT_VIEW(b->frame),
        [TILE_SORT_RANGES] = SPLAT_VIEW(b->ranges),
        [TILE_SORT_KEYS] = SPLAT_VIEW(b->keys_lo),
        [TILE_SORT_VALS] = SPLAT_VIEW(b->vals),
        [TILE_SORT_GAUSS_OF_EMIT] = SPLAT_VIEW(b->gauss_of_emit),
        [TILE_SORT_GAUSS] = SPLAT_VIEW(b->gauss_sorted),
    };
    splat__cmd_dispatch(c, b->fwd_only ? &r->tile_sort : &r->tile_sort_gather, v, TILE_SORT_BINDINGS, NULL, 0,
                        b->max_tiles_x, b->max_tiles_y, 1);
}
