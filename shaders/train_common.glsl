// Shared by the training kernels.
#ifndef SPLAT_TRAIN_COMMON_GLSL
#define SPLAT_TRAIN_COMMON_GLSL

// The SSIM window: exp(-(k-5)^2 / (2 * 1.5^2)), normalised (docs/TRAIN.md).
const float SSIM_G[11] = float[11](0.0010283801, 0.0075987581, 0.0360007721, 0.1093606895, 0.2130055377,
                                   0.2660117249, 0.2130055377, 0.1093606895, 0.0360007721, 0.0075987581,
                                   0.0010283801);

// Ground truth: the packed RGBA8 pixel composited on the background.
vec3 gt_pixel(uint packed, vec3 bg)
{
    vec4 c = unpackUnorm4x8(packed);
    return c.rgb * c.a + (1.0 - c.a) * bg;
}

// Whether pixel i (an index into the pixels bound, like the image's) counts, from its mask byte.
// The shader declares `masks`, a uint array of packed bytes.
#define mask_at(i) (((masks[(i) >> 2u] >> (((i) & 3u) * 8u)) & 0xffu) != 0u)

#endif
