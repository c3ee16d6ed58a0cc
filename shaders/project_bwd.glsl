// Backward preprocess, one thread per Gaussian: the chain rule from the 2D gradients the
// rasterizer accumulated (mean2d, conic, opacity, colour) to means, log-scales, quaternions,
// opacity logits and SH coefficients (docs/RASTER.md section 4). It overwrites every gradient
// row, zero for culled Gaussians. With STATS it also accumulates what densification needs.
//
// The 48 SH values of a Gaussian are a 192-byte row: a thread reading or writing its own row
// would have neighbouring threads 192 bytes apart in every access. So the workgroup moves its
// 64 rows between memory and shared memory together, consecutive threads on consecutive
// floats, and each thread works on its row there. The partial gradients are read the same way.
// With SH_RECORD (training) the SH gradient rows are not written: each Gaussian's SH record
// (render_types.h) goes in their place, 19 floats where the rows were 48, and Adam multiplies
// its factors. The rows cost a write here and a read in Adam; the record a fraction of both.
#include "common.glsl"
#include "render_types.h"
#include "render_common.glsl"

layout(local_size_x = 64) in;
const uint WG = 64u;
layout(constant_id = 0) const uint STATS = 0u;
layout(constant_id = 1) const uint SH_RECORD = 0u;

layout(std430, binding = PROJECT_BWD_FRAME) readonly buffer FrameBuf { splat_frame frame; };
layout(std430, binding = PROJECT_BWD_MEANS) readonly buffer Means { float means[]; };         // [N,3]
layout(std430, binding = PROJECT_BWD_SCALES) readonly buffer Scales { float log_scales[]; };  // [N,3]
layout(std430, binding = PROJECT_BWD_QUATS) readonly buffer Quats { vec4 quats[]; };          // [N]
layout(std430, binding = PROJECT_BWD_OPACITIES) readonly buffer Opac { float opacities[]; };  // [N]
#ifdef SPLAT_SH_HALF
layout(std430, binding = PROJECT_BWD_SH) readonly buffer SH { uint sh_h[]; };  // [N,16,3] halves, two per uint
#else
layout(std430, binding = PROJECT_BWD_SH) readonly buffer SH { float sh[]; };  // [N,16,3]
layout(std430, binding = PROJECT_BWD_SH) readonly buffer SH4 { vec4 sh4[]; }; // the same rows, 12 quads each
#endif
#include "sh_access.glsl"
layout(std430, binding = PROJECT_BWD_RADII) readonly buffer Radii { vec2 radii[]; };               // [N] 0: culled
layout(std430, binding = PROJECT_BWD_PROJ) readonly buffer ProjBuf { vec4 proj[]; };               // [N,3] the forward's record
// [M,9] per intersection, by emission index: one array per tile quadrant
layout(std430, binding = PROJECT_BWD_PARTIAL) readonly buffer Partial0 { float partial0[]; };
layout(std430, binding = PROJECT_BWD_PARTIAL_Q1) readonly buffer Partial1 { float partial1[]; };
layout(std430, binding = PROJECT_BWD_PARTIAL_Q2) readonly buffer Partial2 { float partial2[]; };
layout(std430, binding = PROJECT_BWD_PARTIAL_Q3) readonly buffer Partial3 { float partial3[]; };
layout(std430, binding = PROJECT_BWD_QUADS) readonly buffer Quads { uint quads[]; };                // [M] the quadrants that wrote, a bit each
layout(std430, binding = PROJECT_BWD_GRAD_MEANS) writeonly buffer GMeans { float g_means[]; };     // [N,3]
layout(std430, binding = PROJECT_BWD_GRAD_SCALES) writeonly buffer GScales { float g_scales[]; };  // [N,3]
layout(std430, binding = PROJECT_BWD_GRAD_QUATS) writeonly buffer GQuats { vec4 g_quats[]; };      // [N]
layout(std430, binding = PROJECT_BWD_GRAD_OPACITIES) writeonly buffer GOpac { float g_opac[]; };   // [N]
layout(std430, binding = PROJECT_BWD_GRAD_SH) writeonly buffer GSH { float g_sh[]; };              // [N,16,3], or [N,19] SH records
layout(std430, binding = PROJECT_BWD_STATS) buffer Stats { vec4 stats[]; };                        // [N] grad2d norm sum, count, max radius / max(W,H)
layout(std430, binding = PROJECT_BWD_OFFSETS) readonly buffer Offsets { uint offsets[]; };         // [N] first emission index
layout(std430, binding = PROJECT_BWD_TILES) readonly buffer Tiles { uint tiles_touched[]; };       // [N] number of entries
layout(std430, binding = PROJECT_BWD_GATE) readonly buffer Gate { uint skip_updates; };            // nonzero: leave the statistics alone
// The first Gaussian whose gradient came out non-finite, with what produced it (diagnostics).
layout(std430, binding = PROJECT_BWD_DEBUG) buffer Debug { uint dbg_count; uint dbg_index; uint dbg_entries; uint dbg_pad; float dbg[28]; };

layout(push_constant) uniform Push { splat_render_push pc; };

shared float s_sh[WG * 49u]; // the workgroup's SH rows (48 floats, padded to 49 against bank conflicts)
shared uint s_culled[WG / 32u]; // the rows this view culled, a bit each: their SH is never read
const uint CHUNK = WG * 49u / 9u; // entries of partial gradients that s_sh holds at a time
const uint UNROLL = 4u;           // partial gradients a thread loads before it stores

float sh_flat(uint j)
{
#ifdef SPLAT_SH_HALF
    return sh_half_at(j);
#else
    return sh[j];
#endif
}

vec3 sh_row(uint tid, uint k)
{
    uint b = tid * 49u + 3u * k;
    return vec3(s_sh[b], s_sh[b + 1u], s_sh[b + 2u]);
}


void write_grads(uint i, vec3 dmu, vec3 dls, vec4 dq, float dop)
{
    g_means[3u * i] = dmu.x;
    g_means[3u * i + 1u] = dmu.y;
    g_means[3u * i + 2u] = dmu.z;
    g_scales[3u * i] = dls.x;
    g_scales[3u * i + 1u] = dls.y;
    g_scales[3u * i + 2u] = dls.z;
    g_quats[i] = dq;
    g_opac[i] = dop;
}

// Row r of the workgroup's SH is read: it exists, and this view did not cull it.
bool row_wanted(uint culled[WG / 32u], uint r, uint rows)
{
    return r < rows && (culled[r / 32u] & (1u << (r % 32u))) == 0u;
}

// A Gaussian's own inputs, loaded before its partial gradients are gathered, so that their loads
// wait together with those (one trip to memory, not two).
struct Own {
    vec2 rad;
    vec3 mu, log_s;
    vec4 q;
    float opac;
    vec4 st;
};

Own load_own(uint i)
{
    Own o;
    o.rad = radii[i];
    o.mu = vec3(0.0), o.log_s = vec3(0.0), o.q = vec4(0.0), o.opac = 0.0, o.st = vec4(0.0);
    if (o.rad.x != 0.0) {
        o.mu = vec3(means[3u * i], means[3u * i + 1u], means[3u * i + 2u]);
        o.log_s = vec3(log_scales[3u * i], log_scales[3u * i + 1u], log_scales[3u * i + 2u]);
        o.q = quats[i];
        o.opac = opacities[i];
    }
    if (STATS != 0u) o.st = stats[i];
    return o;
}

// Everything but the SH gradient rows, which the caller writes: Y[k] * d_raw for k below the
// returned coefficient count, zero beyond it (0 for a culled or non-finite Gaussian).
uint backward(uint i, uint tid, Own o, float g[9], out float Y[16], out vec3 d_raw)
{
    d_raw = vec3(0.0);
    vec2 rad = o.rad;
    if (rad.x == 0.0) {
        write_grads(i, vec3(0.0), vec3(0.0), vec4(0.0), 0.0);
        // culled, but seen by gsplat's measure (frame.seen_box): a view with no gradient
        if (STATS != 0u && skip_updates == 0u && rad.y != 0.0) stats[i] = o.st + vec4(0.0, 1.0, 0.0, 0.0);
        return 0u;
    }
    splat_gpu_camera cam = frame.cam;
    vec2 d_mean2d = vec2(g[0], g[1]);
    vec3 d_conic = vec3(g[2], g[3], g[4]);
    float d_alpha = g[5];
    vec3 d_rgb = vec3(g[6], g[7], g[8]);

    // Recompute the forward.
    vec3 mu = o.mu;
    vec3 s = exp(o.log_s);
    vec4 q = o.q;
    float inv_n = inversesqrt(dot(q, q));
    vec4 qn = q * inv_n;
    mat3 R = cam_rotation(cam);
    vec3 p = R * mu + cam_translation(cam);
    mat3 Rq = quat_to_rot(qn);
    mat3 M = Rq * mat3(s.x, 0.0, 0.0, 0.0, s.y, 0.0, 0.0, 0.0, s.z);
    Proj2 pr = project_point(p, cam);
    mat3x2 JR = pr.J * R;
    mat3x2 T = JR * M;
    // The conic exactly as project_fwd computed it.
    float a, b, c, det, det0;
    blurred_cov2d(T, a, b, c, det, det0);
    mat2 Q = mat2(c, -b, -b, a) / det;

    // conic -> covariance: dL/dSigma = -Q dL/dQ Q, with the off-diagonal gradient shared by
    // the two symmetric entries.
    mat2 GQ = mat2(d_conic.x, 0.5 * d_conic.y, 0.5 * d_conic.y, d_conic.z);
    mat2 G = -(Q * GQ * Q);
    // Antialiased: alpha = sigmoid(o) comp, comp = sqrt(max(ratio, MIN^2)), ratio = det0 / det as
    // the forward kept it. d_alpha is the gradient of the compensated alpha, so comp's share
    // reaches the covariance (none where the floor holds). No division by det here: a second
    // one would let the compiler change how Q divides by it, and classic mode must keep its bits.
    float comp = 1.0;
    if (frame.antialiased != 0u) {
        float ratio = proj[3u * i + 2u].w;
        comp = aa_compensation(ratio);
        if (ratio >= MIN_COMP2) G += (d_alpha * sigmoid(o.opac) * 0.5 / comp) * aa_ratio_grad(T, ratio / det0);
    }
    // cov = T T^T (+ blur): dL/dT = 2 G T
    mat3x2 dT = 2.0 * (G * T);
    mat3 dM = transpose(JR) * dT;
    mat3x2 dJ = (dT * transpose(M)) * transpose(R);

    // M = Rq diag(s)
    mat3 dRq = mat3(dM[0] * s.x, dM[1] * s.y, dM[2] * s.z);
    vec3 ds = vec3(dot(dM[0], Rq[0]), dot(dM[1], Rq[1]), dot(dM[2], Rq[2]));
    vec3 d_log_scale = ds * s;
    // Rq(w,x,y,z): entry (row r, col c) is Rq[c][r]; G_rc below.
    float w = qn.x, x = qn.y, y = qn.z, z = qn.w;
    float G00 = dRq[0][0], G01 = dRq[1][0], G02 = dRq[2][0];
    float G10 = dRq[0][1], G11 = dRq[1][1], G12 = dRq[2][1];
    float G20 = dRq[0][2], G21 = dRq[1][2], G22 = dRq[2][2];
    vec4 dqn = 2.0 * vec4(-z * G01 + y * G02 + z * G10 - x * G12 - y * G20 + x * G21,
                          y * G01 + z * G02 + y * G10 - 2.0 * x * G11 - w * G12 + z * G20 + w * G21 - 2.0 * x * G22,
                          -2.0 * y * G00 + x * G01 + w * G02 + x * G10 + z * G12 - w * G20 + z * G21 - 2.0 * y * G22,
                          -2.0 * z * G00 - w * G01 + x * G02 + w * G10 - 2.0 * z * G11 + y * G12 + x * G20 + y * G21);
    vec4 dq = (dqn - qn * dot(qn, dqn)) * inv_n;

    // J and mean2d -> camera-space point
    float rz = 1.0 / p.z, rz2 = rz * rz, rz3 = rz2 * rz;
    vec3 dp = vec3(cam.fx * rz * d_mean2d.x, cam.fy * rz * d_mean2d.y,
                   -(cam.fx * p.x * d_mean2d.x + cam.fy * p.y * d_mean2d.y) * rz2);
    dp.z += -cam.fx * rz2 * dJ[0][0] - cam.fy * rz2 * dJ[1][1];
    if (!pr.clamped.x) {
        dp.x += -cam.fx * rz2 * dJ[2][0];
        dp.z += 2.0 * cam.fx * p.x * rz3 * dJ[2][0];
    } else {
        dp.z += cam.fx * pr.t.x * rz3 * dJ[2][0];
    }
    if (!pr.clamped.y) {
        dp.y += -cam.fy * rz2 * dJ[2][1];
        dp.z += 2.0 * cam.fy * p.y * rz3 * dJ[2][1];
    } else {
        dp.z += cam.fy * pr.t.y * rz3 * dJ[2][1];
    }
    vec3 dmu = transpose(R) * dp;

    // Colour: SH coefficients, and the view direction back to the mean.
    vec3 v = mu - vec3(frame.campos[0], frame.campos[1], frame.campos[2]);
    float inv_len = inversesqrt(dot(v, v));
    vec3 dir = v * inv_len;
    sh_basis(dir, frame.sh_degree, Y);
    uint n_coeffs = (frame.sh_degree + 1u) * (frame.sh_degree + 1u);
    vec3 raw = vec3(0.5);
    // Loops over all 16 coefficients with the count as a test, not as the bound: unrolled, Y and
    // dY stay in registers (with a run-time bound the driver put them in local memory).
    [[unroll]] for (uint k = 0u; k < 16u; k++)
        if (k < n_coeffs) raw += Y[k] * sh_row(tid, k);
    d_raw = d_rgb * vec3(greaterThanEqual(raw, vec3(0.0)));
    if (frame.sh_degree > 0u) {
        vec3 dY[16];
        sh_basis_grad(dir, frame.sh_degree, dY);
        vec3 d_dir = vec3(0.0);
        [[unroll]] for (uint k = 1u; k < 16u; k++)
            if (k < n_coeffs) d_dir += dY[k] * dot(sh_row(tid, k), d_raw);
        dmu += (d_dir - dir * dot(dir, d_dir)) * inv_len;
    }

    float alpha = sigmoid(o.opac);
    float d_logit = d_alpha * alpha * sigmoid(-o.opac);
    if (frame.antialiased != 0u) d_logit *= comp;
    if (!all_finite(vec4(dmu, d_logit)) || !all_finite(vec4(d_log_scale, 0.0)) || !all_finite(dq)) {
        // Never hand a non-finite gradient to the optimizer: record it, and give this Gaussian
        // none this step.
        if (atomicAdd(dbg_count, 1u) == 0u) {
            dbg_index = i;
            dbg_entries = tiles_touched[i];
            for (uint k = 0u; k < 9u; k++) dbg[k] = g[k];
            vec4 p0 = proj[3u * i], p1 = proj[3u * i + 1u], p2 = proj[3u * i + 2u];
            dbg[9] = p0.x, dbg[10] = p0.y, dbg[11] = p0.z, dbg[12] = p0.w;
            dbg[13] = p1.x, dbg[14] = p1.y, dbg[15] = p1.z, dbg[16] = p1.w;
            dbg[17] = rad.x, dbg[18] = rad.y;
            dbg[19] = dmu.x, dbg[20] = d_log_scale.x, dbg[21] = dq.x, dbg[22] = d_logit;
            dbg[23] = p.x, dbg[24] = p.y, dbg[25] = p.z, dbg[26] = s.x, dbg[27] = inv_n;
        }
        write_grads(i, vec3(0.0), vec3(0.0), vec4(0.0), 0.0);
        return 0u;
    }
    write_grads(i, dmu, d_log_scale, dq, d_logit);

    if (STATS != 0u && skip_updates == 0u) {
        // gsplat's default strategy: the pixel-space mean gradient scaled to NDC units.
        vec2 g = d_mean2d * vec2(0.5 * float(cam.width), 0.5 * float(cam.height));
        vec4 st = o.st;
        st.x += length(g);
        st.y += 1.0;
        st.z = max(st.z, max(rad.x, rad.y) / float(max(cam.width, cam.height)));
        stats[i] = st;
    }
    return n_coeffs;
}

void main()
{
    uint i = splat_global_id();
    uint tid = gl_LocalInvocationID.x;
    uint first = i - tid;
    // Rows of this workgroup: the same for all its threads, so the return and the barriers
    // below are in uniform control flow.
    uint rows = first < frame.n_gaussians ? min(WG, frame.n_gaussians - first) : 0u;
    if (rows == 0u) return;

    // This Gaussian's entries, one per touched tile (each the sum of the tile's four quadrants'
    // shares, in order), added in order: deterministic. The workgroup's entries are one
    // contiguous range (emission order follows Gaussian order), so it reads them together in
    // chunks through shared memory, consecutive threads on consecutive floats, and each thread
    // adds its own entries from there.
    float g[9] = float[9](0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0);
    uint last = first + rows - 1u;
    uint e_first = offsets[first];
    uint e_stop = min(offsets[last] + tiles_touched[last], pc.isect_capacity);
    uint my_first = 0u, my_stop = 0u;
    if (tid < rows) {
        my_first = offsets[i];
        my_stop = min(my_first + tiles_touched[i], pc.isect_capacity);
    }
    Own own;
    if (tid < rows) own = load_own(i);
    if (tid < WG / 32u) s_culled[tid] = 0u;
    barrier();
    if (tid < rows && own.rad.x == 0.0) atomicOr(s_culled[tid / 32u], 1u << (tid % 32u));
    for (uint c0 = e_first; c0 < e_stop; c0 += CHUNK) {
        uint cn = min(CHUNK, e_stop - c0);
        barrier();
        // UNROLL floats a thread at a time, every load issued before the first store waits on one.
        for (uint j0 = tid; j0 < cn * 9u; j0 += UNROLL * WG) {
            float v[UNROLL];
            [[unroll]] for (uint u = 0u; u < UNROLL; u++) {
                uint j = min(j0 + u * WG, cn * 9u - 1u), at = 9u * c0 + j;
                // A quadrant that did not write the entry adds +0, whatever its array holds there.
                // The four loads go out with the bits' load, not after it: reading only the set
                // arrays measured slower (docs/PERFORMANCE.md).
                uvec4 m = uvec4(quads[c0 + j / 9u]) & uvec4(1u, 2u, 4u, 8u);
                uvec4 keep = uvec4(notEqual(m, uvec4(0u))) * 0xffffffffu;
                float p0 = uintBitsToFloat(floatBitsToUint(partial0[at]) & keep.x);
                float p1 = uintBitsToFloat(floatBitsToUint(partial1[at]) & keep.y);
                float p2 = uintBitsToFloat(floatBitsToUint(partial2[at]) & keep.z);
                float p3 = uintBitsToFloat(floatBitsToUint(partial3[at]) & keep.w);
                v[u] = ((p0 + p1) + p2) + p3;
            }
            [[unroll]] for (uint u = 0u; u < UNROLL; u++)
                if (j0 + u * WG < cn * 9u) s_sh[j0 + u * WG] = v[u];
        }
        barrier();
        uint a = max(my_first, c0), b = min(my_stop, c0 + cn);
        for (uint e = a; e < b; e++)
            [[unroll]] for (uint k = 0u; k < 9u; k++) g[k] += s_sh[9u * (e - c0) + k];
    }
    barrier();

    // The culled rows' SH is left out: backward() reads no culled row. The mask sits in registers,
    // so that nothing but the predicate stands between the loads (an earlier version that read a
    // flag from shared memory before each load measured slower, docs/PERFORMANCE.md).
    uint culled[WG / 32u];
    for (uint w = 0u; w < WG / 32u; w++) culled[w] = s_culled[w];
#ifdef SPLAT_SH_HALF
    for (uint j = tid; j < rows * 48u; j += WG) {
        uint r = j / 48u;
        if (row_wanted(culled, r, rows)) s_sh[r * 49u + j % 48u] = sh_flat(first * 48u + j);
    }
#else
    // The rows as 16-byte quads, 12 a thread for a full workgroup, all loaded before any is stored.
    vec4 qv[12];
    bool want[12];
    [[unroll]] for (uint u = 0u; u < 12u; u++) {
        uint j = tid + u * WG;
        want[u] = row_wanted(culled, j / 12u, rows);
        qv[u] = want[u] ? sh4[first * 12u + j] : vec4(0.0);
    }
    [[unroll]] for (uint u = 0u; u < 12u; u++) {
        uint j = tid + u * WG, r = j / 12u, b = r * 49u + (j % 12u) * 4u;
        if (want[u]) {
            s_sh[b] = qv[u].x;
            s_sh[b + 1u] = qv[u].y;
            s_sh[b + 2u] = qv[u].z;
            s_sh[b + 3u] = qv[u].w;
        }
    }
#endif
    barrier();
    float Y[16];
    vec3 d_raw = vec3(0.0);
    uint n_coeffs = tid < rows ? backward(i, tid, own, g, Y, d_raw) : 0u;
    barrier();
    // The SH rows, or the records, leave through s_sh as they came: consecutive threads on
    // consecutive floats.
    uint width = SH_RECORD != 0u ? SPLAT_SH_RECORD_FLOATS : 48u;
    if (tid < rows) {
        uint b = tid * 49u;
        if (SH_RECORD != 0u) {
            for (uint k = 0u; k < 16u; k++) s_sh[b + k] = k < n_coeffs ? Y[k] : 0.0;
            vec3 d = n_coeffs > 0u ? d_raw : vec3(0.0); // a non-finite Gaussian's d_raw may be anything
            s_sh[b + SPLAT_SH_RECORD_D_RAW] = d.x;
            s_sh[b + SPLAT_SH_RECORD_D_RAW + 1u] = d.y;
            s_sh[b + SPLAT_SH_RECORD_D_RAW + 2u] = d.z;
        } else {
            for (uint k = 0u; k < 16u; k++) {
                vec3 gk = k < n_coeffs ? Y[k] * d_raw : vec3(0.0);
                s_sh[b + 3u * k] = gk.x;
                s_sh[b + 3u * k + 1u] = gk.y;
                s_sh[b + 3u * k + 2u] = gk.z;
            }
        }
    }
    barrier();
    for (uint j = tid; j < rows * width; j += WG) g_sh[first * width + j] = s_sh[(j / width) * 49u + j % width];
}
