#version 450
// First kernel of a training iteration: turns the iteration's ring slot and the view table into
// the frame every render stage reads, so one recorded command buffer serves any view.
#include "common.glsl"
#include "train_types.h"

layout(local_size_x = 1) in;
layout(std430, binding = FRAME_SETUP_SLOTS) readonly buffer Slots { splat_train_slot slots[]; };
layout(std430, binding = FRAME_SETUP_VIEWS) readonly buffer Views { splat_train_view views[]; };
layout(std430, binding = FRAME_SETUP_FRAME) writeonly buffer FrameBuf { splat_frame frame; };
layout(push_constant) uniform Push { splat_train_push pc; };

void main()
{
    // The slot carries the frame but for the camera (every render option included, so a new one
    // needs nothing here); the camera and what follows from it come from the view table.
    splat_frame f = slots[pc.slot].frame;
    splat_gpu_camera c = views[slots[pc.slot].view].cam;
    f.cam = c;
    // campos = -R^T t
    for (int i = 0; i < 3; i++)
        f.campos[i] = -(c.R[i] * c.t[0] + c.R[3 + i] * c.t[1] + c.R[6 + i] * c.t[2]);
    f.tiles_x = (c.width + SPLAT_TILE - 1u) / SPLAT_TILE;
    f.tiles_y = (c.height + SPLAT_TILE - 1u) / SPLAT_TILE;
    frame = f;
}
