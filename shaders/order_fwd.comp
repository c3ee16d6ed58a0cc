#version 450
// Forward-only renders (splat__render_bufs_fwd_only): the Gaussians in depth order, so that the
// intersections, emitted in that order, need only a stable sort by tile. One thread per Gaussian.
//   MODE 0, before the sort: keys[i] = the depth's float bits (the low word of the full sort's
//           key), or all ones for a Gaussian that touches no tile; order[i] = i. The stable sort
//           then orders visible Gaussians by (depth bits, index), exactly the tie order of the
//           full (tile, depth) sort, whose input is in index order.
//   MODE 1, after the sort: tiles_ordered[j] = tiles touched by the j-th Gaussian in that order,
//           for the scan that places each one's run of intersections.
#include "common.glsl"
#include "render_types.h"

layout(local_size_x = 256) in;
layout(constant_id = 0) const uint MODE = 0u;

layout(std430, binding = ORDER_FWD_FRAME) readonly buffer FrameBuf { splat_frame frame; };
layout(std430, binding = ORDER_FWD_PROJ) readonly buffer ProjBuf { vec4 proj[]; };             // [N,3] vec4
layout(std430, binding = ORDER_FWD_TILES) readonly buffer Tiles { uint tiles_touched[]; };     // [N]
layout(std430, binding = ORDER_FWD_KEYS) writeonly buffer Keys { uint keys[]; };               // [N] sort keys
layout(std430, binding = ORDER_FWD_ORDER) buffer Order { uint order[]; };                      // [N] Gaussian ids
layout(std430, binding = ORDER_FWD_TILES_ORDERED) writeonly buffer TilesOrd { uint tiles_ordered[]; };  // [N]

void main()
{
    uint i = splat_global_id();
    if (i >= frame.n_gaussians) return;
    if (MODE == 0u) {
        keys[i] = tiles_touched[i] != 0u ? floatBitsToUint(proj[3u * i].z) : 0xffffffffu;
        order[i] = i;
    } else {
        tiles_ordered[i] = tiles_touched[order[i]];
    }
}
