#version 450
// Opacity reset (docs/TRAIN.md): opacity = min(opacity, 0.01), and the opacity moments to 0.
#include "common.glsl"
#include "train_types.h"

layout(local_size_x = 256) in;
layout(std430, binding = OPACITY_RESET_OPACITIES) buffer Opac { float opacities[]; };
layout(std430, binding = OPACITY_RESET_MOMENTS) buffer MVOpac { uint mv_opac[]; };  // [N,words] (train_types.h)
#define FLAGS(i, name, N, w, h, a, b, f) const uint FLAGS_##N = f;
SPLAT_PARAM_GROUPS(FLAGS)
const uint WORDS = SPLAT_MOMENT_WORDS(FLAGS_OPACITIES);
layout(push_constant) uniform Push { splat_train_push pc; };

void main()
{
    uint i = splat_global_id();
    if (i >= pc.n) return;
    const float logit_001 = -4.59511985013459;  // log(0.01 / 0.99)
    opacities[i] = min(opacities[i], logit_001);
    for (uint k = 0u; k < WORDS; k++) mv_opac[WORDS * i + k] = 0u;
}
