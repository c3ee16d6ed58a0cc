#version 450
// Forward rasterization (docs/RASTER.md section 3): one workgroup per quadrant (8x8 pixels) of
// a 16x16 tile, one thread per pixel. The tile's sorted Gaussians are read in batches of 64;
// those that cannot reach alpha 1/255 at any pixel of the quadrant are dropped as the batch is
// loaded, and the rest, in list order, are blended front to back until transmittance would fall
// to T_MIN, the list ends, or the per-tile cap is reached. A dropped Gaussian is one every pixel
// of the quadrant would skip, so each pixel blends what it would in a whole-tile workgroup, in
// the same order: the same bits. A quadrant stops as soon as its own 64 pixels are done, and
// skips the tile's Gaussians that only reach its other quadrants.
//
// Each sorted entry's Gaussian comes in place: training's tile_sort gathered it, and in
// forward-only renders the sorted values are the Gaussians. FWD_ONLY (splat__render_bufs_fwd_only):
// only the image is written; the last position and the depth are for the backward and training,
// which use the full pipeline.
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_ballot : require
#include "common.glsl"
#include "render_types.h"
#include "render_common.glsl"

layout(local_size_x = SPLAT_QUAD, local_size_y = SPLAT_QUAD) in;

layout(std430, binding = RASTERIZE_FWD_FRAME) readonly buffer FrameBuf { splat_frame frame; };
layout(std430, binding = RASTERIZE_FWD_RANGES) readonly buffer Ranges { uvec2 ranges[]; };                // [tiles]
layout(std430, binding = RASTERIZE_FWD_GAUSS) readonly buffer Gauss { uint gauss_sorted[]; };            // [M] each sorted entry's Gaussian
layout(std430, binding = RASTERIZE_FWD_PROJ) readonly buffer ProjBuf { vec4 proj[]; };                    // [N,3] vec4
layout(std430, binding = RASTERIZE_FWD_OUT_RGBT) writeonly buffer OutRGBT { vec4 out_rgbt[]; };           // [H,W] rgb + final T
layout(std430, binding = RASTERIZE_FWD_OUT_LAST) writeonly buffer OutLast { uint out_last[]; };           // [H,W] last blended list position + 1 (0: none)
layout(std430, binding = RASTERIZE_FWD_OUT_DEPTH) writeonly buffer OutDepth { float out_depth[]; };       // [H,W] sum(depth alpha T)

layout(constant_id = 0) const uint FWD_ONLY = 0u;

const uint BATCH = SPLAT_QUAD * SPLAT_QUAD;
shared vec4 s_geom[BATCH];   // mean2d.xy, depth, opacity
shared vec4 s_conic[BATCH];  // conic, unused
shared vec3 s_rgb[BATCH];
shared uint s_pos[BATCH];    // list position
shared uint s_kept[BATCH];   // per subgroup: entries of the batch kept
shared uint s_done;

void main()
{
    uint qx = gl_WorkGroupID.x, qy = gl_WorkGroupID.y;
    uint tx = qx / 2u, ty = qy / 2u;
    uint W = frame.cam.width, H = frame.cam.height;
    // Dispatches cover the largest image of the run; this camera's may be smaller.
    if (tx >= frame.tiles_x || ty >= frame.tiles_y || qx * SPLAT_QUAD >= W || qy * SPLAT_QUAD >= H) return;
    uint px = qx * SPLAT_QUAD + gl_LocalInvocationID.x, py = qy * SPLAT_QUAD + gl_LocalInvocationID.y;
    bool inside = px < W && py < H;
    vec2 pix = vec2(float(px), float(py)) + 0.5;
    uint tid = gl_LocalInvocationIndex;
    vec2 q0, q1;
    quad_centres(qx, qy, W, H, q0, q1);

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
    // Each batch's Gaussians are fetched while the batch before blends: its loads then wait one
    // trip to memory (the records), not two (the index, then the records).
    uint next_g = start + tid < end ? gauss_sorted[start + tid] : 0u;
    for (uint b = start; b < end; b += BATCH) {
        barrier();
        if (s_done == BATCH) break;
        uint idx = b + tid;
        bool keep = false;
        vec4 geom, conic, rgb;
        uint g = next_g;
        if (idx + BATCH < end) next_g = gauss_sorted[idx + BATCH];
        if (idx < end) {
            geom = proj[3u * g];
            conic = proj[3u * g + 1u];
            rgb = proj[3u * g + 2u];
            keep = may_blend(geom, conic.xyz, geom.xy - q1, geom.xy - q0);
        }
        // the kept entries in list order: by subgroup, then by lane
        uvec4 ballot = subgroupBallot(keep);
        if (subgroupElect()) s_kept[gl_SubgroupID] = subgroupBallotBitCount(ballot);
        barrier();
        uint at = subgroupBallotExclusiveBitCount(ballot), cnt = 0u;
        for (uint k = 0u; k < gl_NumSubgroups; k++) {
            uint n = s_kept[k];
            at += k < gl_SubgroupID ? n : 0u;
            cnt += n;
        }
        if (keep) {
            s_geom[at] = geom;
            s_conic[at] = conic;
            s_rgb[at] = rgb.rgb;
            s_pos[at] = idx;
        }
        barrier();
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
            last = s_pos[j] + 1u;
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
