/* The oracle of the resampling tests (io/io.h, splat__resample): written from the definition,
 * not from the code. */
#ifndef SPLAT_TEST_RESAMPLE_ORACLE_H
#define SPLAT_TEST_RESAMPLE_ORACLE_H

#include <stdint.h>

/* The weight of input pixel k in output pixel i when an axis of n pixels becomes n2: area
 * averaging when it shrinks (the length of [k, k+1) inside the footprint [i n/n2, (i+1) n/n2),
 * over the footprint's length), Keys' cubic (a = -0.5) when it grows (the kernel at the centre
 * (i + 0.5) n/n2 - 0.5, summed over the taps that clamp to k), 1 for k = i when it keeps. */
double t_resample_weight(uint32_t i, uint32_t k, uint32_t n, uint32_t n2);
/* dst[y,x,c] = clamp(sum over every (sy, sx) of weight(y, sy) weight(x, sx) src[sy,sx,c], 0, 1),
 * in double. src [h,w,channels], dst [h2,w2,channels] (the caller's). */
void t_resample_oracle(const double *src, uint32_t w, uint32_t h, uint32_t channels, double *dst, uint32_t w2,
                       uint32_t h2);

#endif
