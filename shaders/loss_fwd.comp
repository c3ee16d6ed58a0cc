#version 450
// Loss, first pass (docs/TRAIN.md): per 16x16 pixel tile, the L1 and squared-error sums, and
// for every valid SSIM window centred in the tile, ssim and its derivatives with respect to
// the window's moments (mu_x, E[x^2], E[xy]); loss_bwd turns those into dL/dx. Sums are
// written per workgroup and added in a fixed order by loss_reduce (deterministic). With a
// mask, ignored pixels are zero in both images, add nothing to L1 and the squared error, and
// centre no window; the squared error over every pixel is summed too (full-image PSNR).
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_arithmetic : require
#extension GL_EXT_control_flow_attributes : require
#include "common.glsl"
#include "train_types.h"
#include "train_common.glsl"

layout(local_size_x = 16, local_size_y = 16) in;

layout(std430, binding = LOSS_FRAME) readonly buffer FrameBuf { splat_frame frame; };
layout(std430, binding = LOSS_SLOTS) readonly buffer Slots { splat_train_slot slots[]; };
layout(std430, binding = LOSS_PIXELS) readonly buffer Images { uint pixels[]; };     // packed RGBA8
layout(std430, binding = LOSS_RENDER) readonly buffer OutRGBT { vec4 out_rgbt[]; };  // [H,W] rendered rgb + T
layout(std430, binding = LOSS_MAPS) writeonly buffer Maps { vec4 maps[]; };          // [H,W,3] dssim/d(mu_x, E[x^2], E[xy]) per channel
layout(std430, binding = LOSS_OUT) writeonly buffer Parts { vec4 parts[]; };         // [groups] l1, sq, ssim, sq of every pixel
layout(std430, binding = LOSS_MASKS) readonly buffer Masks { uint masks[]; };        // a byte a pixel: 1 counts
layout(push_constant) uniform Push { splat_train_push pc; };

const uint T = 16u, R = 5u, S = 26u;  // tile, window radius, tile + halo
const uint HALO = (S * S + 255u) / 256u; // halo pixels a thread loads
shared float s_x[S * S], s_y[S * S];
shared float s_h[5u * S * T];         // horizontal window sums of x, y, x^2, y^2, xy
shared vec4 s_sum[64];          // per subgroup (subgroups of at least 4)

void main()
{
    uint W = frame.cam.width, H = frame.cam.height;
    uvec2 org = gl_WorkGroupID.xy * T;
    uvec2 q = org + gl_LocalInvocationID.xy;
    uint tid = gl_LocalInvocationIndex;
    bool inside = q.x < W && q.y < H;
    uint base = slots[pc.slot].image_offset;
    bool has_mask = slots[pc.slot].has_mask != 0u;
    vec3 bg = vec3(frame.background[0], frame.background[1], frame.background[2]);

    float l1 = 0.0, sq = 0.0, ssim_sum = 0.0, sq_full = 0.0;
    bool counts = !has_mask || (inside && mask_at(base + q.y * W + q.x));
    vec3 x = vec3(0.0), y = vec3(0.0);
    if (inside) {
        x = out_rgbt[q.y * W + q.x].rgb;
        y = gt_pixel(pixels[base + q.y * W + q.x], bg);
        vec3 d = x - y, dc = clamp(x, 0.0, 1.0) - y;
        sq_full = dot(dc, dc);
        if (counts) {
            l1 = abs(d.r) + abs(d.g) + abs(d.b);
            sq = dot(dc, dc);
        }
    }
    // Valid window centres: the whole 11x11 window inside the image, its centre counting.
    bool centre = inside && counts && W >= 11u && H >= 11u && q.x >= R && q.y >= R && q.x + R < W && q.y + R < H;
    vec3 d_mu = vec3(0.0), d_xx = vec3(0.0), d_xy = vec3(0.0);
    // The tile and its halo, all three channels, loaded once and all at once (HALO pixels a
    // thread): the channels below take their values from registers, not from three more rounds
    // of loads each waiting on the one before.
    vec3 hx[HALO], hy[HALO];
    [[unroll]] for (uint u = 0u; u < HALO; u++) {
        uint k = tid + 256u * u, ly = k / S, lx = k - ly * S;
        int gx = int(org.x + lx) - int(R), gy = int(org.y + ly) - int(R);
        hx[u] = vec3(0.0), hy[u] = vec3(0.0);
        if (k < S * S && gx >= 0 && gy >= 0 && gx < int(W) && gy < int(H)) {
            uint pi = uint(gy) * W + uint(gx);
            if (!has_mask || mask_at(base + pi)) {
                hx[u] = out_rgbt[pi].rgb;
                hy[u] = gt_pixel(pixels[base + pi], bg);
            }
        }
    }
    for (uint c = 0u; c < 3u; c++) {
        barrier();
        [[unroll]] for (uint u = 0u; u < HALO; u++) {
            uint k = tid + 256u * u;
            if (k < S * S) {
                s_x[k] = hx[u][c];
                s_y[k] = hy[u][c];
            }
        }
        barrier();
        for (uint k = tid; k < S * T; k += 256u) {
            uint row = k / T, col = k - row * T;
            float a = 0.0, b = 0.0, aa = 0.0, bb = 0.0, ab = 0.0;
            for (uint w = 0u; w < 11u; w++) {
                float xv = s_x[row * S + col + w], yv = s_y[row * S + col + w], g = SSIM_G[w];
                a += g * xv;
                b += g * yv;
                aa += g * xv * xv;
                bb += g * yv * yv;
                ab += g * xv * yv;
            }
            s_h[0u * S * T + k] = a;
            s_h[1u * S * T + k] = b;
            s_h[2u * S * T + k] = aa;
            s_h[3u * S * T + k] = bb;
            s_h[4u * S * T + k] = ab;
        }
        barrier();
        if (centre) {
            float mx = 0.0, my = 0.0, exx = 0.0, eyy = 0.0, exy = 0.0;
            uint col = gl_LocalInvocationID.x, row0 = gl_LocalInvocationID.y;
            for (uint w = 0u; w < 11u; w++) {
                uint k = (row0 + w) * T + col;
                float g = SSIM_G[w];
                mx += g * s_h[k];
                my += g * s_h[S * T + k];
                exx += g * s_h[2u * S * T + k];
                eyy += g * s_h[3u * S * T + k];
                exy += g * s_h[4u * S * T + k];
            }
            float C1 = float(SPLAT_SSIM_C1), C2 = float(SPLAT_SSIM_C2);
            float sxx = exx - mx * mx, syy = eyy - my * my, sxy = exy - mx * my;
            float A1 = 2.0 * mx * my + C1, A2 = 2.0 * sxy + C2;
            float B1 = mx * mx + my * my + C1, B2 = sxx + syy + C2;
            float B = B1 * B2;
            float ssim = (A1 * A2) / B;
            ssim_sum += ssim;
            // Partial derivatives with E[x^2] and E[xy] held fixed (sxx, sxy move with mu_x).
            // Written without dividing by A1 or A2: A2 = 2 sxy + C2 reaches 0 for anticorrelated
            // windows, where ssim / A2 = A1 / (B1 B2) is finite but 0 * (1 / 0) is not.
            // B1 >= C1 and B2 >= C2 - rounding stay positive.
            d_mu[c] = 2.0 * my * (A2 - A1) / B - 2.0 * mx * ssim / B1 + 2.0 * mx * ssim / B2;
            d_xx[c] = -ssim / B2;
            d_xy[c] = 2.0 * A1 / B;
        }
    }
    if (inside) {
        uint pi = q.y * W + q.x;
        maps[3u * pi] = vec4(d_mu, 0.0);
        maps[3u * pi + 1u] = vec4(d_xx, 0.0);
        maps[3u * pi + 2u] = vec4(d_xy, 0.0);
    }
    // Workgroup sums, in a fixed order.
    vec4 v = subgroupAdd(vec4(l1, sq, ssim_sum, sq_full));
    if (subgroupElect()) s_sum[gl_SubgroupID] = v;
    barrier();
    if (tid == 0u) {
        vec4 t = vec4(0.0);
        for (uint k = 0u; k < gl_NumSubgroups; k++) t += s_sum[k];
        parts[gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x] = t;
    }
}
