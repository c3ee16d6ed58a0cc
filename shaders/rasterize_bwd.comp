#version 450
// Backward rasterization (docs/RASTER.md section 4): one workgroup per 8x8 quadrant of a 16x16
// tile, one thread per pixel, walking the tile's list back to front from the quadrant's furthest
// last contributor. Each pixel recovers the transmittance before every Gaussian by division and
// computes the gradient of its 2D mean, conic, opacity and colour. As in the forward, the
// Gaussians that cannot reach alpha 1/255 in the quadrant are dropped as a batch is loaded.
//
// No atomics, so training is deterministic: a Gaussian's contributions from the pixels of
// this quadrant are added within each subgroup (four Gaussians at a time, by the transpose below),
// the subgroups' sums are added in a fixed order through shared memory, and the quadrant writes
// the total into the Gaussian's own entry (its emission index) of its own partial array (one per
// quadrant); project_bwd adds a Gaussian's entries, the four quadrants' in order, in order.
// A quadrant writes only the entries it blends, and sets its bit in the entry's word of quadrant
// bits (zeroed by isect_fwd): project_bwd counts an array whose bit is clear as zeros, whatever
// it holds. Dropped entries, and those beyond the cap or the last contributor, cost no write.
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_vote : require
#extension GL_KHR_shader_subgroup_ballot : require
#extension GL_KHR_shader_subgroup_shuffle : require
#extension GL_EXT_control_flow_attributes : require
#include "common.glsl"
#include "render_types.h"
#include "render_common.glsl"

layout(local_size_x = SPLAT_QUAD, local_size_y = SPLAT_QUAD) in;
layout(constant_id = 0) const uint N_SG = 64u;  // at least the number of subgroups in a workgroup
layout(constant_id = 1) const uint SUB = 8u;    // Gaussians per reduction round (shared memory bound)

layout(std430, binding = RASTERIZE_BWD_FRAME) readonly buffer FrameBuf { splat_frame frame; };
layout(std430, binding = RASTERIZE_BWD_RANGES) readonly buffer Ranges { uvec2 ranges[]; };                // [tiles]
layout(std430, binding = RASTERIZE_BWD_VALS) readonly buffer Vals { uint emit_of_isect[]; };              // [M] sorted
layout(std430, binding = RASTERIZE_BWD_PROJ) readonly buffer ProjBuf { vec4 proj[]; };                    // [N,3] vec4
layout(std430, binding = RASTERIZE_BWD_OUT_RGBT) readonly buffer OutRGBT { vec4 out_rgbt[]; };            // [H,W] forward rgb + final T
layout(std430, binding = RASTERIZE_BWD_OUT_LAST) readonly buffer OutLast { uint out_last[]; };            // [H,W]
layout(std430, binding = RASTERIZE_BWD_GRAD_IMG) readonly buffer GradImg { vec4 grad_img[]; };            // [H,W] dL/drgb, dL/dalpha
layout(std430, binding = RASTERIZE_BWD_GAUSS) readonly buffer Gauss { uint gauss_sorted[]; };            // [M] each sorted entry's Gaussian (tile_sort)
// [M,9] each quadrant's: mean2d 2, conic 3, opacity, rgb 3
layout(std430, binding = RASTERIZE_BWD_PARTIAL) writeonly buffer Partial0 { float partial0[]; };
layout(std430, binding = RASTERIZE_BWD_PARTIAL_Q1) writeonly buffer Partial1 { float partial1[]; };
layout(std430, binding = RASTERIZE_BWD_PARTIAL_Q2) writeonly buffer Partial2 { float partial2[]; };
layout(std430, binding = RASTERIZE_BWD_PARTIAL_Q3) writeonly buffer Partial3 { float partial3[]; };
layout(std430, binding = RASTERIZE_BWD_QUADS) buffer Quads { uint quads[]; };                             // [M] a bit per quadrant that wrote

const uint BATCH = SPLAT_QUAD * SPLAT_QUAD;
shared vec4 s_geom[BATCH];   // mean2d.xy, depth, opacity
shared vec4 s_conic[BATCH];
shared vec3 s_rgb[BATCH];
shared uint s_emit[BATCH];
shared uint s_pos[BATCH];    // list position
shared uint s_kept[BATCH];   // per subgroup: entries of the batch kept
shared float s_part[N_SG * SUB * 9u];
shared uint s_max_last;

uint quad; // this workgroup's quadrant of its tile, 0..3: which partial array it writes

void put_partial(uint i, float v)
{
    if (quad == 0u) partial0[i] = v;
    else if (quad == 1u) partial1[i] = v;
    else if (quad == 2u) partial2[i] = v;
    else partial3[i] = v;
}

// Gaussians whose pixel gradients are summed over the subgroup together: GROUP x 8 values
// fill one 32-value transpose, and SUB is a multiple of it.
const uint GROUP = 4u;

// Subgroup sums of many values at once. A butterfly step at distance o halves the values a
// lane holds: it keeps one half (by bit o of its lane), adds its partner's copy of that half
// and sends the other. 32 values cost 31 shuffles on a subgroup of 32 instead of 32 x 5, and
// each lane then holds whole sums of its own share, which it writes to s_part (value i of a
// Gaussian q at part0 + 9q + i). Subgroups smaller than the value count leave several sums per
// lane; larger ones finish with plain butterfly adds and let one lane of each group write.
#define HALVE(v, H, o, base)                                                 \
    if (o != 0u) {                                                           \
        bool hi = (gl_SubgroupInvocationID & o) != 0u;                       \
        [[unroll]] for (uint i = 0u; i < H; i++) {                           \
            float send = hi ? v[i] : v[i + H];                               \
            v[i] = (hi ? v[i + H] : v[i]) + subgroupShuffleXor(send, o);     \
        }                                                                    \
        base += hi ? H : 0u;                                                 \
        o >>= 1u;                                                            \
    }

void subgroup_sum_32(inout float v[32], uint part0)
{
    uint o = gl_SubgroupSize >> 1u, base = 0u, dup = 0u;
    HALVE(v, 16u, o, base)
    HALVE(v, 8u, o, base)
    HALVE(v, 4u, o, base)
    HALVE(v, 2u, o, base)
    HALVE(v, 1u, o, base)
    for (; o != 0u; o >>= 1u) {
        v[0] += subgroupShuffleXor(v[0], o);
        dup |= o;
    }
    if ((gl_SubgroupInvocationID & dup) != 0u) return;
    uint held = 32u / min(gl_SubgroupSize, 32u);
    [[unroll]] for (uint i = 0u; i < 32u; i++) {
        if (i >= held) break;
        uint idx = base + i;
        s_part[part0 + (idx >> 3u) * 9u + (idx & 7u)] = v[i];
    }
}

void subgroup_sum_4(inout float v[GROUP], uint part0)
{
    uint o = gl_SubgroupSize >> 1u, base = 0u, dup = 0u;
    HALVE(v, 2u, o, base)
    HALVE(v, 1u, o, base)
    for (; o != 0u; o >>= 1u) {
        v[0] += subgroupShuffleXor(v[0], o);
        dup |= o;
    }
    if ((gl_SubgroupInvocationID & dup) != 0u) return;
    uint held = GROUP / min(gl_SubgroupSize, GROUP);
    [[unroll]] for (uint i = 0u; i < GROUP; i++) {
        if (i >= held) break;
        s_part[part0 + (base + i) * 9u + 8u] = v[i];
    }
}

void main()
{
    uint qx = gl_WorkGroupID.x, qy = gl_WorkGroupID.y;
    uint tx = qx / 2u, ty = qy / 2u;
    if (tx >= frame.tiles_x || ty >= frame.tiles_y) return;
    quad = (qy & 1u) * 2u + (qx & 1u);
    uint W = frame.cam.width, H = frame.cam.height;
    uint px = qx * SPLAT_QUAD + gl_LocalInvocationID.x, py = qy * SPLAT_QUAD + gl_LocalInvocationID.y;
    bool inside = px < W && py < H;
    vec2 pix = vec2(float(px), float(py)) + 0.5;
    uint tid = gl_LocalInvocationIndex;
    uint pi = py * W + px;
    vec2 c_lo, c_hi; // the quadrant's first and last pixel centres
    quad_centres(qx, qy, W, H, c_lo, c_hi);

    uvec2 range = ranges[ty * frame.tiles_x + tx];
    uint start = range.x;
    float T_final = 1.0;
    uint last = 0u;
    vec4 dpix = vec4(0.0);
    if (inside) {
        T_final = out_rgbt[pi].w;
        last = out_last[pi];
        dpix = grad_img[pi];
    }
    if (tid == 0u) s_max_last = start;
    barrier();
    atomicMax(s_max_last, last);
    barrier();
    // A quadrant past the image's edge has no pixels: it blends nothing and writes nothing.
    uint stop = s_max_last;

    vec3 bg = vec3(frame.background[0], frame.background[1], frame.background[2]);
    vec3 bg_term = T_final * bg;
    float T = T_final;
    vec3 after = vec3(0.0);   // sum over later Gaussians of colour * alpha * T

    // Each batch's entries are fetched while the batch before is worked: its loads then wait one
    // trip to memory (the records), not two (the indices, then the records).
    uint next_e = 0u, next_g = 0u;
    if (stop > start + tid) {
        next_e = emit_of_isect[stop - 1u - tid];
        next_g = gauss_sorted[stop - 1u - tid];
    }
    for (uint b_end = stop; b_end > start;) {
        uint b_start = b_end > start + BATCH ? b_end - BATCH : start;
        barrier();
        bool keep = false;
        uint e = next_e, g = next_g, pos = b_end - 1u - tid;
        vec4 geom, conic, rgb;
        if (b_start > start + tid) {
            next_e = emit_of_isect[b_start - 1u - tid];
            next_g = gauss_sorted[b_start - 1u - tid];
        }
        if (tid < b_end - b_start) {
            geom = proj[3u * g];
            conic = proj[3u * g + 1u];
            rgb = proj[3u * g + 2u];
            keep = may_blend(geom, conic.xyz, geom.xy - c_hi, geom.xy - c_lo);
        }
        // the kept entries, back to front: by subgroup, then by lane
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
            s_emit[at] = e;
            s_pos[at] = pos;
            s_geom[at] = geom;
            s_conic[at] = conic;
            s_rgb[at] = rgb.rgb;
        }
        barrier();
        for (uint r0 = 0u; r0 < cnt; r0 += SUB) {
            uint rn = min(SUB, cnt - r0);
            for (uint q0 = 0u; q0 < rn; q0 += GROUP) {
                float v[32];     // GROUP x (d_mean 2, d_conic 3, d_opac, d_rgb.rg)
                float vb[GROUP]; // d_rgb.b
                bool any_valid = false;
                [[unroll]] for (uint q = 0u; q < GROUP; q++) {
                    vec2 d_mean = vec2(0.0);
                    vec3 d_conic = vec3(0.0), d_rgb = vec3(0.0);
                    float d_opac = 0.0;
                    if (q0 + q < rn) {
                        uint j = r0 + q0 + q;
                        uint pos = s_pos[j];
                        vec4 geom = s_geom[j];
                        vec3 conic = s_conic[j].xyz;
                        vec2 d = geom.xy - pix;
                        precise float sigma = gauss_power(conic, d);
                        precise float alpha = min(ALPHA_MAX, geom.w * exp(-sigma));
                        if (pos < last && sigma >= 0.0 && alpha >= ALPHA_MIN) {
                            any_valid = true;
                            float ra = 1.0 / (1.0 - alpha);
                            float T_before = T * ra;
                            vec3 c = s_rgb[j];
                            d_rgb = alpha * T_before * dpix.rgb;
                            float d_alpha =
                                dot(dpix.rgb, c * T_before - (after + bg_term) * ra) + dpix.a * T_final * ra;
                            after += c * alpha * T_before;
                            T = T_before;
                            float vis = exp(-sigma);
                            if (geom.w * vis <= ALPHA_MAX) {
                                d_opac = d_alpha * vis;
                                float d_sigma = -d_alpha * alpha;
                                d_mean = d_sigma * vec2(conic.x * d.x + conic.y * d.y, conic.z * d.y + conic.y * d.x);
                                d_conic = d_sigma * vec3(0.5 * d.x * d.x, d.x * d.y, 0.5 * d.y * d.y);
                            }
                        }
                    }
                    v[8u * q + 0u] = d_mean.x;
                    v[8u * q + 1u] = d_mean.y;
                    v[8u * q + 2u] = d_conic.x;
                    v[8u * q + 3u] = d_conic.y;
                    v[8u * q + 4u] = d_conic.z;
                    v[8u * q + 5u] = d_opac;
                    v[8u * q + 6u] = d_rgb.r;
                    v[8u * q + 7u] = d_rgb.g;
                    vb[q] = d_rgb.b;
                }
                uint part0 = (gl_SubgroupID * SUB + q0) * 9u;
                if (subgroupAny(any_valid)) {
                    subgroup_sum_32(v, part0);
                    subgroup_sum_4(vb, part0);
                } else {
                    for (uint k = gl_SubgroupInvocationID; k < GROUP * 9u; k += gl_SubgroupSize) s_part[part0 + k] = 0.0;
                }
            }
            barrier();
            for (uint idx = tid; idx < rn * 9u; idx += BATCH) {
                uint jj = idx / 9u, k = idx - jj * 9u;
                float sum = 0.0;
                for (uint sg = 0u; sg < gl_NumSubgroups; sg++) sum += s_part[(sg * SUB + jj) * 9u + k];
                uint e = s_emit[r0 + jj];
                put_partial(9u * e + k, sum);
                if (k == 0u) atomicOr(quads[e], 1u << quad);
            }
            barrier();
        }
        b_end = b_start;
    }
}
