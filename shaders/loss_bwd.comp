#version 450
// Loss, second pass: dL/dx per pixel. The L1 part is local; the SSIM part gathers, from every
// valid window that covers the pixel, the window weight times the derivative with respect to
// the window's moments (maps from loss_fwd): G * d_mu + 2 x (G * d_xx) + y (G * d_xy).
#extension GL_EXT_control_flow_attributes : require
#include "common.glsl"
#include "train_types.h"
#include "train_common.glsl"

layout(local_size_x = 16, local_size_y = 16) in;

layout(std430, binding = LOSS_FRAME) readonly buffer FrameBuf { splat_frame frame; };
layout(std430, binding = LOSS_SLOTS) readonly buffer Slots { splat_train_slot slots[]; };
layout(std430, binding = LOSS_PIXELS) readonly buffer Images { uint pixels[]; };
layout(std430, binding = LOSS_RENDER) readonly buffer OutRGBT { vec4 out_rgbt[]; };
layout(std430, binding = LOSS_MAPS) readonly buffer Maps { vec4 maps[]; };         // [H,W,3]
layout(std430, binding = LOSS_OUT) writeonly buffer GradImg { vec4 grad_img[]; };  // [H,W] dL/drgb, dL/dalpha
layout(std430, binding = LOSS_MASKS) readonly buffer Masks { uint masks[]; };       // a byte a pixel: 1 counts
layout(push_constant) uniform Push { splat_train_push pc; };

const uint T = 16u, R = 5u, S = 26u;
const uint HALO = (S * S + 255u) / 256u; // halo pixels a thread loads
shared vec3 s_m[S * S];          // the three maps of one channel
shared vec3 s_h[S * T];

void main()
{
    uint W = frame.cam.width, H = frame.cam.height;
    uvec2 org = gl_WorkGroupID.xy * T;
    uvec2 q = org + gl_LocalInvocationID.xy;
    uint tid = gl_LocalInvocationIndex;
    bool inside = q.x < W && q.y < H;
    uint base = slots[pc.slot].image_offset;
    bool has_mask = slots[pc.slot].has_mask != 0u;
    bool counts = !has_mask || (inside && mask_at(base + q.y * W + q.x));
    vec3 bg = vec3(frame.background[0], frame.background[1], frame.background[2]);
    vec3 x = vec3(0.0), y = vec3(0.0);
    if (inside && counts) { // an ignored pixel is 0 in both images (x' = m x, y' = m y)
        x = out_rgbt[q.y * W + q.x].rgb;
        y = gt_pixel(pixels[base + q.y * W + q.x], bg);
    }
    float lambda = float(SPLAT_LOSS_LAMBDA);
    float n_pix = has_mask ? float(slots[pc.slot].n_pixels) * 3.0 : float(W) * float(H) * 3.0;
    float n_ssim = has_mask ? float(slots[pc.slot].n_centres) * 3.0
                            : W >= 11u && H >= 11u ? float(W - 10u) * float(H - 10u) * 3.0 : 0.0;
    vec3 grad = n_pix > 0.0 ? (1.0 - lambda) / n_pix * sign(x - y) : vec3(0.0);
    // The three maps of the tile and its halo, all channels, loaded once and all at once (HALO
    // pixels a thread); each channel below takes its values from registers.
    vec3 hm[HALO][3]; // [pixel][map], a channel per component; 0 at windows not counted
    [[unroll]] for (uint u = 0u; u < HALO; u++) {
        uint k = tid + 256u * u, ly = k / S, lx = k - ly * S;
        int gx = int(org.x + lx) - int(R), gy = int(org.y + ly) - int(R);
        hm[u][0] = vec3(0.0), hm[u][1] = vec3(0.0), hm[u][2] = vec3(0.0);
        if (n_ssim > 0.0 && k < S * S && gx >= 0 && gy >= 0 && gx < int(W) && gy < int(H)) {
            uint pi = uint(gy) * W + uint(gx);
            hm[u][0] = maps[3u * pi].xyz, hm[u][1] = maps[3u * pi + 1u].xyz, hm[u][2] = maps[3u * pi + 2u].xyz;
        }
    }
    for (uint c = 0u; c < 3u && n_ssim > 0.0; c++) {
        barrier();
        [[unroll]] for (uint u = 0u; u < HALO; u++) {
            uint k = tid + 256u * u;
            if (k < S * S) s_m[k] = vec3(hm[u][0][c], hm[u][1][c], hm[u][2][c]);
        }
        barrier();
        for (uint k = tid; k < S * T; k += 256u) {
            uint row = k / T, col = k - row * T;
            vec3 a = vec3(0.0);
            for (uint w = 0u; w < 11u; w++) a += SSIM_G[w] * s_m[row * S + col + w];
            s_h[k] = a;
        }
        barrier();
        vec3 gm = vec3(0.0);
        for (uint w = 0u; w < 11u; w++) gm += SSIM_G[w] * s_h[(gl_LocalInvocationID.y + w) * T + gl_LocalInvocationID.x];
        grad[c] -= lambda / n_ssim * (gm.x + 2.0 * x[c] * gm.y + y[c] * gm.z);
    }
    if (inside) grad_img[q.y * W + q.x] = counts ? vec4(grad, 0.0) : vec4(0.0);
}
