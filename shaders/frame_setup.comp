#version 450
// First kernel of a training iteration: turns the iteration's ring slot and the view table into
// the frame every render stage reads, so one recorded command buffer serves any view.
#include "common.glsl"
#include "train_types.h"

layout(local_size_x = 1) in;
layout(std430, binding = 0) readonly buffer Slots { splat_train_slot slots[]; };
layout(std430, binding = 1) readonly buffer Views { splat_train_view views[]; };
layout(std430, binding = 2) writeonly buffer FrameBuf { splat_frame frame; };
layout(push_constant) uniform Push { splat_train_push pc; };

void main()
{
    splat_train_slot s = slots[pc.slot];
    splat_gpu_camera c = views[s.view].cam;
    frame.cam = c;
    // campos = -R^T t
    for (int i = 0; i < 3; i++)
        frame.campos[i] = -(c.R[i] * c.t[0] + c.R[3 + i] * c.t[1] + c.R[6 + i] * c.t[2]);
    for (int i = 0; i < 3; i++) frame.background[i] = s.background[i];
    frame.sh_degree = s.sh_degree;
    frame.tiles_x = (c.width + SPLAT_TILE - 1u) / SPLAT_TILE;
    frame.tiles_y = (c.height + SPLAT_TILE - 1u) / SPLAT_TILE;
    frame.cap = s.cap;
    frame.n_gaussians = s.n_gaussians;
}
