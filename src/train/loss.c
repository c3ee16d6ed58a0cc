/* train: the loss of docs/TRAIN.md, 0.8 L1 + 0.2 (1 - SSIM), fused: loss_fwd (per 16x16 tile: L1,
 * squared error and SSIM sums, and the SSIM derivative maps), loss_bwd (dL/d(render)) and
 * loss_reduce (the sums in a fixed order, the report, and the update gate). */
#include "train/train.h"

uint32_t splat__loss_groups(uint32_t width, uint32_t height)
{
    return splat__div_up(width, SPLAT_TILE) * splat__div_up(height, SPLAT_TILE);
}

double splat__psnr(double sq_sum, double values) { return sq_sum > 0 ? -10.0 * log10(sq_sum / values) : 99.0; }

void splat__loss_record(splat_cmd *c, const splat_train_pipes *p, const splat_loss_args *a)
{
    uint32_t gx = splat__div_up(a->width, SPLAT_TILE), gy = splat__div_up(a->height, SPLAT_TILE);
    splat_train_push pc = {.slot = a->slot, .width = a->width, .height = a->height};
    splat_view v[LOSS_BINDINGS] = {
        [LOSS_FRAME] = a->frame,   [LOSS_SLOTS] = a->slots, [LOSS_PIXELS] = a->pixels, [LOSS_MASKS] = a->masks,
        [LOSS_RENDER] = a->render, [LOSS_MAPS] = a->maps,   [LOSS_OUT] = a->parts,
    };
    splat__cmd_dispatch(c, &p->loss_fwd, v, LOSS_BINDINGS, &pc, sizeof pc, gx, gy, 1);
    splat__cmd_barrier(c);
    if (a->backward) {
        v[LOSS_OUT] = a->grad;
        splat__cmd_dispatch(c, &p->loss_bwd, v, LOSS_BINDINGS, &pc, sizeof pc, gx, gy, 1);
    }
    splat_train_push rpc = pc;
    rpc.n = gx * gy;
    splat_view r[LOSS_REDUCE_BINDINGS] = {
        [LOSS_REDUCE_PARTS] = a->parts, [LOSS_REDUCE_COUNTERS] = a->counters,
        [LOSS_REDUCE_GATE] = a->gate,   [LOSS_REDUCE_REPORT] = a->report, [LOSS_REDUCE_SLOTS] = a->slots,
    };
    splat__cmd_dispatch(c, &p->loss_reduce, r, LOSS_REDUCE_BINDINGS, &rpc, sizeof rpc, 1, 1, 1);
}
