// The counter-based generator of docs/TRAIN.md ("The random samples of a split"): split samples,
// MCMC's samples and noise.
#ifndef SPLAT_RNG_GLSL
#define SPLAT_RNG_GLSL

uint pcg_hash(uint x)
{
    uint state = x * 747796405u + 2891336453u;
    uint word = ((state >> ((state >> 28u) + 4u)) ^ state) * 277803737u;
    return (word >> 22u) ^ word;
}

// hash(hash(hash(seed) ^ i) ^ k): the word behind uniform(seed, i, k)
uint rng_word(uint seed, uint i, uint k) { return pcg_hash(pcg_hash(pcg_hash(seed) ^ i) ^ k); }

float rng_uniform(uint seed, uint i, uint k)
{
    return float(rng_word(seed, i, k) >> 8u) * (1.0 / 16777216.0) + (1.0 / 33554432.0);
}

vec2 rng_normal_pair(uint seed, uint i, uint j)
{
    float u1 = rng_uniform(seed, i, 2u * j), u2 = rng_uniform(seed, i, 2u * j + 1u);
    float r = sqrt(-2.0 * log(u1));
    float a = 6.283185307179586 * u2;
    return vec2(r * cos(a), r * sin(a));
}

#endif
