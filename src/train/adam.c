/* train: Adam over every parameter group of core/params.h in one dispatch, one thread per
 * parameter element (shaders/adam.comp). */
#include "train/train.h"

void splat__adam_record(splat_cmd *c, const splat_train_pipes *p, const splat_adam_args *a)
{
    splat_train_push pc = {.slot = a->slot, .n = a->n, .flags = a->selective ? SPLAT_ADAM_SELECTIVE : 0};
    /* the binding needs a buffer even when nothing reads it */
    splat_view v[ADAM_BINDINGS] = {[ADAM_SLOTS] = a->slots, [ADAM_GATE] = a->gate,
                                   [ADAM_VISIBLE] = a->radii.buf ? a->radii : a->gate};
    for (uint32_t g = 0; g < SPLAT_GROUP_COUNT; g++) {
        v[ADAM_PARAMS + g] = SPLAT_VIEW(a->params->group[g]);
        v[ADAM_GRADS + g] = SPLAT_VIEW(a->grads->group[g]);
        v[ADAM_MOMENTS + g] = SPLAT_VIEW(a->moments->group[g]);
    }
    splat__cmd_dispatch_1d(c, a->sh_record ? &p->adam_sh_record : &p->adam, v, ADAM_BINDINGS, &pc, sizeof pc,
                           (uint64_t)a->n * SPLAT_ADAM_THREADS);
}
