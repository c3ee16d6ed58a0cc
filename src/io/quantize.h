/* io: codebooks for the palette formats (quantize.c). */
#ifndef SPLAT_IO_QUANTIZE_H
#define SPLAT_IO_QUANTIZE_H

#include "io/io_util.h"

/* Fits k (1..256) values to values [n] (1-D k-means weighted to spread them over the range the
 * data occupies; the distinct values themselves when there are at most k) into codebook [k], ascending, and when labels is not NULL
 * gives each value the index of its nearest entry (labels [n]). */
splat_status splat__quantize_1d(const float *values, size_t n, uint32_t k, float *codebook, uint8_t *labels,
                                splat_error *err);
/* The index of the entry of codebook [k] (ascending) nearest v. */
uint8_t splat__quantize_label(const float *codebook, uint32_t k, float v);
/* At most k centroids for the rows of x [n, d] (bisecting k-means: the cluster of largest squared
 * error split across its principal axis, until k clusters or no cluster can split): centroids
 * [k, d] (the first *k_out filled, each its cluster's mean) and labels [n]. k >= n gives every
 * distinct row its own centroid. */
splat_status splat__palette(const float *x, uint32_t n, uint32_t d, uint32_t k, float *centroids, uint32_t *labels,
                            uint32_t *k_out, splat_error *err);

#endif
