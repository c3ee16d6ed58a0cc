#version 450
// Forward rasterization (docs/RASTER.md section 3): one workgroup per 16x16 tile, one thread
// per pixel. The tile's sorted Gaussians are loaded into shared memory in batches of 256 and
// blended front to back until transmittance would fall to T_MIN, the list ends, or the
// per-tile cap is reached.
//
// Each sorted entry's Gaussian comes in place: training's tile_sort gathered it, and in
// forward-only renders the sorted values are the Gaussians. FWD_ONLY (splat__render_bufs_fwd_only):
// only the image is written; the last position and the depth are for the backward and training,
// which use the full pipeline.
#include "common.glsl"
#include "render_types.h"
#include "render_common.glsl"

layout(local_size_x = 16, local_size_y = 16) in;

layout(std430, binding = RASTERIZE_FWD_FRAME) readonly buffer FrameBuf { splat_frame frame; };
layout(std430, binding = RASTERIZE_FWD_RANGES) readonly buffer Ranges { uvec2 ranges[]; };                // [tiles]
layout(std430, binding = RASTERIZE_FWD_GAUSS) readonly buffer Gauss { uint gauss_sorted[]; };            // [M] each sorted entry's Gaussian
layout(std430, binding = RASTERIZE_FWD_PROJ) readonly buffer ProjBuf { vec4 proj[]; };                    // [N,3] vec4
layout(std430, binding = RASTERIZE_FWD_OUT_RGBT) writeonly buffer OutRGBT { vec4 out_rgbt[]; };           // [H,W] rgb + final T
layout(std430, binding = RASTERIZE_FWD_OUT_LAST) writeonly buffer OutLast { uint out_last[]; };           // [H,W] last blended list position + 1 (0: none)
layout(std430, binding = RASTERIZE_FWD_OUT_DEPTH) writeonly buffer OutDepth { float out_depth[]; };       // [H,W] sum(depth alpha T)

layout(constant_id = 0) const uint FWD_ONLY = 0u;

const uint BATCH = 256u;
shared vec4 s_geom[BATCH];   // mean2d.xy, depth, opacity
shared vec4 s_conic[BATCH];  // conic, unused
shared vec3 s_rgb[BATCH];
shared uint s_done;

void main()
{
    uint tx = gl_WorkGroupID.x, ty = gl_WorkGroupID.y;
    // Dispatches cover the largest image of the run; this camera's may be smaller.
    if (tx >= frame.tiles_x || ty >= frame.tiles_y) return;
    uint W = frame.cam.width, H = frame.cam.height;
    uint px = tx * SPLAT_TILE + gl_LocalInvocationID.x, py = ty * SPLAT_TILE + gl_LocalInvocationID.y;
    bool inside = px < W && py < H;
    vec2 pix = vec2(float(px), float(py)) + 0.5;
    uint tid = gl_LocalInvocationIndex;

    uvec2 range = ranges[ty * frame.tiles_x + tx];
    uint start = range.x, end = range.y;
    if (frame.cap > 0u) end = min(end, start + frame.cap);

    if (tid == 0u) s_done = 0u;
    barrier();
    bool done = !inside;
    if (done) atomicAdd(s_done, 1u);

    float T = 1.0, D = 0.0;
    vec3 C = vec3(0.0);
    uint last = 0u;
    for (uint b = start; b < end; b += BATCH) {
        barrier();
        if (s_done == BATCH) break;
        uint idx = b + tid;
        if (idx < end) {
            uint g = gauss_sorted[idx];
            s_geom[tid] = proj[3u * g];
            s_conic[tid] = proj[3u * g + 1u];
            s_rgb[tid] = proj[3u * g + 2u].rgb;
        }
        barrier();
        uint cnt = min(BATCH, end - b);
        for (uint j = 0u; j < cnt && !done; j++) {
            vec4 geom = s_geom[j];
            precise float sigma = gauss_power(s_conic[j].xyz, geom.xy - pix);
            if (sigma < 0.0) continue;
            precise float alpha = min(ALPHA_MAX, geom.w * exp(-sigma));
            if (alpha < ALPHA_MIN) continue;
            float next_T = T * (1.0 - alpha);
            if (next_T <= T_MIN) {
                done = true;
                atomicAdd(s_done, 1u);
                break;
            }
            float w = alpha * T;
            C += s_rgb[j] * w;
            D += geom.z * w;
            T = next_T;
            last = b + j + 1u;
        }
    }
    if (!inside) return;
    uint pi = py * W + px;
    vec3 bg = vec3(frame.background[0], frame.background[1], frame.background[2]);
    out_rgbt[pi] = vec4(C + T * bg, T);
    if (FWD_ONLY != 0u) return;
    out_last[pi] = last;
    out_depth[pi] = D;
}
