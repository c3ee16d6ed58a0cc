#version 450
// Adds the loss passes' per-workgroup sums in a fixed order and writes the iteration's report.
// Also keeps the update gate: an intersection overflow (or a non-finite parameter, met by the
// forward or written by the last Adam) closes it until the host reopens it, so no update is ever
// made from a truncated render, in this iteration or in any that the host already queued behind it.
#include "common.glsl"
#include "train_types.h"

layout(local_size_x = 256) in;

layout(std430, binding = LOSS_REDUCE_PARTS) readonly buffer Parts { vec4 parts[]; };  // [n_parts]
layout(std430, binding = LOSS_REDUCE_COUNTERS) readonly buffer Count { splat_counters counters; };
layout(std430, binding = LOSS_REDUCE_GATE) buffer Gate { uint gate; uint params_bad; };  // SPLAT_GATE_BYTES
layout(std430, binding = LOSS_REDUCE_REPORT) writeonly buffer Report { splat_train_report report; };
layout(std430, binding = LOSS_REDUCE_SLOTS) readonly buffer Slots { splat_train_slot slots[]; };
layout(push_constant) uniform Push { splat_train_push pc; };

shared vec4 s_acc[256];

void main()
{
    uint tid = gl_LocalInvocationIndex;
    uint n_parts = pc.n;  // workgroups of the loss passes
    vec4 acc = vec4(0.0);
    for (uint k = tid; k < n_parts; k += 256u) acc += parts[k];
    s_acc[tid] = acc;
    barrier();
    for (uint half_ = 128u; half_ > 0u; half_ >>= 1) {
        if (tid < half_) s_acc[tid] += s_acc[tid + half_];
        barrier();
    }
    if (tid == 0u) {
        uint g = gate | counters.overflow | counters.nonfinite | params_bad;
        gate = g;
        report.counters = counters;
        report.counters.nonfinite |= params_bad;
        report.l1_sum = s_acc[0].x;
        report.sq_sum = s_acc[0].y;
        report.ssim_sum = s_acc[0].z;
        report.n_ssim = slots[pc.slot].n_centres * 3u;
        report.sq_full_sum = s_acc[0].w;
        report.n_values = slots[pc.slot].n_pixels * 3u;
        report.step = slots[pc.slot].step;
        report.gate = g;
    }
}
