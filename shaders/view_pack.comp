#version 450
// The viewer's frame, packed for the trip to the host (a quarter of the bytes of the float
// render): each colour rounded to 8 bits exactly as splat_write_png rounds it (255 x clamped to
// [0, 1], rounded half to even like lrintf), so a frame is what `splatc render` writes, less
// the JPEG's loss.
#include "common.glsl"
#include "render_types.h"
#include "view_types.h"

layout(local_size_x = 256) in;
layout(std430, binding = VIEW_PACK_FRAME) readonly buffer Frame { splat_frame frame; };
layout(std430, binding = VIEW_PACK_RGBT) readonly buffer Rgbt { vec4 rgbt[]; };    // [H,W]
layout(std430, binding = VIEW_PACK_OUT) writeonly buffer Out { uint rgba[]; };     // [H,W]

void main()
{
    uint i = splat_global_id();
    if (i >= frame.cam.width * frame.cam.height) return;
    uvec3 c = uvec3(roundEven(255.0 * clamp(rgbt[i].rgb, 0.0, 1.0)));
    rgba[i] = c.r | (c.g << 8) | (c.b << 16) | (255u << 24);
}
