/* render: each tile's run [start, end) in the sorted intersection list, one thread per
 * intersection (an indirect dispatch over the count isect_setup wrote). */
#include "render/render.h"

void splat__ranges_record(splat_cmd *c, const splat_renderer *r, splat_render_bufs *b)
{
    splat_view v[RANGES_FWD_BINDINGS] = {
        [RANGES_FWD_COUNTERS] = SPLAT_VIEW(b->counters),
        [RANGES_FWD_KEYS_HI] = SPLAT_VIEW(b->keys_hi),
        [RANGES_FWD_RANGES] = SPLAT_VIEW(b->ranges),
    };
    splat__cmd_dispatch_indirect(c, &r->ranges_fwd, v, RANGES_FWD_BINDINGS, NULL, 0,
                                 SPLAT_VIEW_AT(b->counters, offsetof(splat_counters, isect_groups), 12));
}
