/* train: the first stage of an iteration, one invocation: the ring slot's frame template plus the
 * camera of its view, into the frame every render stage reads (shaders/frame_setup.comp). */
#include "train/train.h"

void splat__frame_setup_record(splat_cmd *c, const splat_train_pipes *p, splat_view slots, splat_view views,
                               splat_view frame, uint32_t slot)
{
    splat_train_push pc = {.slot = slot};
    splat_view v[FRAME_SETUP_BINDINGS] = {
        [FRAME_SETUP_SLOTS] = slots,
        [FRAME_SETUP_VIEWS] = views,
        [FRAME_SETUP_FRAME] = frame,
    };
    splat__cmd_dispatch(c, &p->frame_setup, v, FRAME_SETUP_BINDINGS, &pc, sizeof pc, 1, 1, 1);
}
