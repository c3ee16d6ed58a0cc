#version 450
// Forward-only renders (splat__render_bufs_fwd_only): the drawn Gaussians in depth order, so
// that the intersections, emitted in that order, need only a stable sort by tile. One thread
// per Gaussian; three modes around a scan and a sort (splat__order_record):
//   MODE 0, flags:  flags[i] = 1 for a Gaussian that touches a tile, else 0; the scan of the
//                   flags gives each drawn Gaussian its slot (offsets) and their number (count).
//   MODE 1, place:  a drawn Gaussian puts its depth's float bits (the low word of the full
//                   sort's key) and its index in its slot. The slots keep index order, so the
//                   stable sort of the count drawn ones orders them by (depth bits, index),
//                   exactly the tie order of the full (tile, depth) sort, whose input is in
//                   index order; the culled ones, most of a scene in a given view, are not sorted.
//   MODE 2, gather: tiles_ordered[j] = tiles touched by the j-th Gaussian in that order (0 past
//                   the count), for the scan that places each one's run of intersections.
#include "common.glsl"
#include "render_types.h"

layout(local_size_x = 256) in;
layout(constant_id = 0) const uint MODE = 0u;

layout(std430, binding = ORDER_FWD_FRAME) readonly buffer FrameBuf { splat_frame frame; };
layout(std430, binding = ORDER_FWD_PROJ) readonly buffer ProjBuf { vec4 proj[]; };             // [N,3] vec4
layout(std430, binding = ORDER_FWD_TILES) readonly buffer Tiles { uint tiles_touched[]; };     // [N]
layout(std430, binding = ORDER_FWD_KEYS) writeonly buffer Keys { uint keys[]; };               // [count] sort keys
layout(std430, binding = ORDER_FWD_ORDER) buffer Order { uint order[]; };                      // [count] Gaussian ids
layout(std430, binding = ORDER_FWD_TILES_ORDERED) buffer TilesOrd { uint tiles_ordered[]; };   // [N] (MODE 0: the flags)
layout(std430, binding = ORDER_FWD_OFFSETS) readonly buffer Offsets { uint offsets[]; };       // [N] scan of the flags
layout(std430, binding = ORDER_FWD_COUNT) readonly buffer Count { uint count; };               // drawn Gaussians

void main()
{
    uint i = splat_global_id();
    if (i >= frame.n_gaussians) return;
    if (MODE == 0u) {
        tiles_ordered[i] = tiles_touched[i] != 0u ? 1u : 0u;
    } else if (MODE == 1u) {
        if (tiles_touched[i] == 0u) return;
        uint slot = offsets[i];
        keys[slot] = floatBitsToUint(proj[3u * i].z);
        order[slot] = i;
    } else {
        tiles_ordered[i] = i < count ? tiles_touched[order[i]] : 0u;
    }
}
