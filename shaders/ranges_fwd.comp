#version 450
// Tile ranges, one thread per sorted intersection: where each tile's run starts and ends.
// Tiles without intersections keep the (0, 0) the buffer was filled with.
#include "common.glsl"
#include "render_types.h"

layout(local_size_x = 256) in;
layout(std430, binding = RANGES_FWD_COUNTERS) readonly buffer Count { splat_counters counters; };
layout(std430, binding = RANGES_FWD_KEYS_HI) readonly buffer KeysHi { uint tile_of_isect[]; };  // [M] sorted tile ids
layout(std430, binding = RANGES_FWD_RANGES) buffer Ranges { uvec2 ranges[]; };                  // [tiles] [start, end)

void main()
{
    uint i = splat_global_id();
    uint n = counters.n_valid;
    if (i >= n) return;
    uint tile = tile_of_isect[i];
    if (i == 0u || tile_of_isect[i - 1u] != tile) ranges[tile].x = i;
    if (i + 1u == n || tile_of_isect[i + 1u] != tile) ranges[tile].y = i + 1u;
}
