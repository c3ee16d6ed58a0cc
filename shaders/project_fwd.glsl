// Forward preprocess, one thread per Gaussian (docs/RASTER.md section 1; a large one's tile
// count by its whole subgroup): culling, EWA projection, conic, opacity (compensated for the
// low-pass in antialiased mode), opacity-aware extent, exact tile count, SH colour, depth. The
// tile count is computed from the stored outputs (conic, mean2d, tau, radii) exactly as
// isect_fwd recomputes it, so the two always agree.
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_ballot : require
#extension GL_KHR_shader_subgroup_shuffle : require
#include "common.glsl"
#include "render_types.h"
#include "render_common.glsl"

layout(local_size_x = 256) in;
// Forward-only renders (splat__render_bufs_fwd_only) and training (SPLAT_FWD_SH_DRAWN) check the
// SH of the Gaussians they draw only: a non-finite coefficient of a drawn one still shows in its
// colour, and the SH of the others (most of a scene, in a given view) is never read; training's
// Adam checks every value it writes. Other renders check every Gaussian's.
layout(constant_id = 0) const uint DRAWN_ONLY = 0u;

layout(std430, binding = PROJECT_FWD_FRAME) readonly buffer FrameBuf { splat_frame frame; };
layout(std430, binding = PROJECT_FWD_MEANS) readonly buffer Means { float means[]; };         // [N,3]
layout(std430, binding = PROJECT_FWD_SCALES) readonly buffer Scales { float log_scales[]; };  // [N,3]
layout(std430, binding = PROJECT_FWD_QUATS) readonly buffer Quats { vec4 quats[]; };          // [N] (w,x,y,z)
layout(std430, binding = PROJECT_FWD_OPACITIES) readonly buffer Opac { float opacities[]; };  // [N] logits
#ifdef SPLAT_SH_HALF
layout(std430, binding = PROJECT_FWD_SH) readonly buffer SH { uvec4 sh_h4[]; };  // [N,16,3] halves, eight per uvec4
#else
layout(std430, binding = PROJECT_FWD_SH) readonly buffer SH { vec4 sh4[]; };  // [N,16,3] floats, four per vec4
#endif
#define SPLAT_SH_ROWS
#include "sh_access.glsl"
layout(std430, binding = PROJECT_FWD_PROJ) writeonly buffer ProjBuf { vec4 proj[]; };          // [N,3] vec4
layout(std430, binding = PROJECT_FWD_RADII) writeonly buffer Radii { vec2 radii[]; };          // [N] ellipse half-widths (0: culled)
layout(std430, binding = PROJECT_FWD_TILES) writeonly buffer Tiles { uint tiles_touched[]; };  // [N]
layout(std430, binding = PROJECT_FWD_COUNTERS) buffer Count { splat_counters counters; };


void cull(uint i)
{
    tiles_touched[i] = 0u;
    radii[i] = vec2(0.0);
    proj[3u * i + 0u] = vec4(0.0);
    proj[3u * i + 1u] = vec4(0.0);
    proj[3u * i + 2u] = vec4(0.0);
}

// Candidate rectangles larger than this are counted by the whole subgroup together (as in
// isect_fwd); a thread counts a smaller one alone.
const uint ALONE_MAX = 8u;

void main()
{
    uint i = splat_global_id();
    splat_gpu_camera cam = frame.cam;
    uint n_coeffs = (frame.sh_degree + 1u) * (frame.sh_degree + 1u);

    // Up to the tile count, a culled Gaussian leaves `live` false; every thread stays for the
    // subgroup's count below.
    bool live = false;
    vec3 mu = vec3(0.0), p = vec3(0.0), conic = vec3(0.0);
    vec2 mean2d = vec2(0.0), radius = vec2(0.0);
    float a = 0.0, c = 0.0, alpha = 0.0, ratio = 0.0, tau = 0.0;
    ivec4 tr = ivec4(0);
    uint area = 0u;
    do {
        if (i >= frame.n_gaussians) break;
        mu = vec3(means[3u * i], means[3u * i + 1u], means[3u * i + 2u]);
        vec3 ls = vec3(log_scales[3u * i], log_scales[3u * i + 1u], log_scales[3u * i + 2u]);
        vec4 q = quats[i];
        float o = opacities[i];
        // Every input is checked, seen by this camera or not: bad parameters are reported, never
        // left for another view to trip over (DRAWN_ONLY: the SH through the colour, below).
        bool sh_ok = true;
        if (DRAWN_ONLY == 0u) {
            vec4 row[SH_ROW_QUADS];
            sh_row_load(i, n_coeffs, row);
            sh_ok = sh_row_finite(row, n_coeffs);
        }
        if (!all_finite(vec4(mu, o)) || !all_finite(vec4(ls, 0.0)) || !all_finite(q) || !sh_ok) {
            atomicOr(counters.nonfinite, 1u);
            cull(i);
            break;
        }
        mat3 R = cam_rotation(cam);
        p = R * mu + cam_translation(cam);
        float n2 = dot(q, q);
        if (!(p.z > float(SPLAT_NEAR)) || n2 == 0.0) {
            cull(i);
            break;
        }
        mat3 Rq = quat_to_rot(q * inversesqrt(n2));
        mat3 M = Rq * mat3(exp(ls.x), 0.0, 0.0, 0.0, exp(ls.y), 0.0, 0.0, 0.0, exp(ls.z));
        Proj2 pr = project_point(p, cam);
        mean2d = pr.mean2d;
        // cov2d = (J R M)(J R M)^T: one 2x3 product, symmetric by construction.
        mat3x2 T = pr.J * R * M;
        float b, det, det0;
        blurred_cov2d(T, a, b, c, det, det0);
        alpha = sigmoid(o);
        // antialiased: det0 / det, kept in the record for the backward (0 in classic mode)
        if (frame.antialiased != 0u) {
            ratio = det0 / det;
            alpha *= aa_compensation(ratio);
        }
        if (!(det > 0.0) || !(alpha >= ALPHA_MIN)) {
            cull(i);
            break;
        }
        conic = vec3(c, -b, a) / det;
        tau = min(log(alpha / ALPHA_MIN), 0.5 * float(SPLAT_SIGMA_CAP * SPLAT_SIGMA_CAP));
        radius = vec2(sqrt(2.0 * tau * a), sqrt(2.0 * tau * c));
        tr = candidate_tiles(mean2d, radius, frame.tiles_x, frame.tiles_y);
        if (tr.z >= tr.x && tr.w >= tr.y) area = uint(tr.z - tr.x + 1) * uint(tr.w - tr.y + 1);
        live = true;
    } while (false);

    uint count = 0u;
    if (area <= ALONE_MAX)
        for (int ty = tr.y; ty <= tr.w; ty++)
            for (int tx = tr.x; tx <= tr.z; tx++)
                count += tile_touched(conic, mean2d, tau, uint(tx), uint(ty), cam.width, cam.height) ? 1u : 0u;
    // A large rectangle would keep the subgroup waiting for one thread: the subgroup tests a
    // slice of its tiles at a time, one per lane present (by rank, so that a part-filled
    // subgroup still covers every tile), and counts them with a ballot.
    uint lane = gl_SubgroupInvocationID;
    uvec4 present = subgroupBallot(true);
    uint rank = subgroupBallotExclusiveBitCount(present), lanes = subgroupBallotBitCount(present);
    uvec4 wide = subgroupBallot(area > ALONE_MAX);
    while (wide != uvec4(0u)) {
        uint leader = subgroupBallotFindLSB(wide);
        wide[leader >> 5u] &= ~(1u << (leader & 31u));
        uint garea = subgroupShuffle(area, leader);
        vec2 gmean = subgroupShuffle(mean2d, leader);
        vec3 gconic = subgroupShuffle(conic, leader);
        float gtau = subgroupShuffle(tau, leader);
        ivec4 gtr = subgroupShuffle(tr, leader);
        uint gw = uint(gtr.z - gtr.x + 1), gcount = 0u;
        for (uint t0 = 0u; t0 < garea; t0 += lanes) {
            uint t = t0 + rank;
            bool hit = t < garea && tile_touched(gconic, gmean, gtau, uint(gtr.x) + t % gw, uint(gtr.y) + t / gw,
                                                 cam.width, cam.height);
            gcount += subgroupBallotBitCount(subgroupBallot(hit));
        }
        if (lane == leader) count = gcount;
    }
    if (!live) return;

    if (count == 0u) {
        cull(i);
        if (frame.seen_box != 0u && gsplat_box_overlaps(mean2d, a, c, alpha, cam.width, cam.height)) radii[i] = vec2(0.0, 1.0);
        return;
    }

    vec3 dir = normalize(mu - vec3(frame.campos[0], frame.campos[1], frame.campos[2]));
    float Y[16];
    sh_basis(dir, frame.sh_degree, Y);
    vec4 row[SH_ROW_QUADS];
    sh_row_load(i, n_coeffs, row);
    vec3 rgb = vec3(0.5);
    [[unroll]] for (uint k = 0u; k < 16u; k++)
        if (k < n_coeffs) rgb += Y[k] * sh_row_coeff(row, k);
    if (!all_finite(vec4(rgb, 0.0))) {
        atomicOr(counters.nonfinite, 1u);
        cull(i);
        return;
    }
    rgb = max(rgb, vec3(0.0));

    tiles_touched[i] = count;
    proj[3u * i + 0u] = vec4(mean2d, p.z, alpha);
    proj[3u * i + 1u] = vec4(conic, tau);
    proj[3u * i + 2u] = vec4(rgb, ratio);
    radii[i] = radius;
}
