/* The training loss of docs/TRAIN.md through the double-precision reference (src/ref), for
 * bench/loss_vs_kit.py to set beside another implementation's.
 *
 *   loss_ref W H IN OUT
 *
 * IN holds the render x and the ground truth y, each [H,W,3] float32, one after the other; OUT
 * receives the loss (one double) and dL/dx ([H,W,3] doubles). Exits 1 with the file and the
 * problem on bad input. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ref/ref_train.h"

int main(int argc, char **argv)
{
    if (argc != 5) {
        fprintf(stderr, "usage: loss_ref W H IN OUT\n");
        return 2;
    }
    char *end_w, *end_h;
    unsigned long w = strtoul(argv[1], &end_w, 10), h = strtoul(argv[2], &end_h, 10);
    if (*end_w || *end_h || w == 0 || h == 0 || w > 16384 || h > 16384) {
        fprintf(stderr, "loss_ref: %s x %s is not an image size (1 to 16384 a side)\n", argv[1], argv[2]);
        return 1;
    }
    size_t n = (size_t)w * h * 3;
    float *x = malloc(n * sizeof *x), *y = malloc(n * sizeof *y);
    double *d = malloc(n * sizeof *d);
    if (!x || !y || !d) {
        fprintf(stderr, "loss_ref: out of memory for %lux%lu\n", w, h);
        return 1;
    }
    FILE *f = fopen(argv[3], "rb");
    if (!f) {
        fprintf(stderr, "loss_ref: %s: %s\n", argv[3], strerror(errno));
        return 1;
    }
    size_t got = fread(x, sizeof *x, n, f);
    got += fread(y, sizeof *y, n, f);
    bool more = fgetc(f) != EOF;
    long size = fseek(f, 0, SEEK_END) == 0 ? ftell(f) : -1;
    fclose(f);
    if (got != 2 * n || more) {
        fprintf(stderr, "loss_ref: %s: %ld bytes, not two %lux%lux3 float32 images (%zu bytes)\n", argv[3], size, w, h,
                2 * n * sizeof *x);
        return 1;
    }
    splat_ref_loss_value v;
    splat__ref_loss(x, y, (uint32_t)w, (uint32_t)h, SPLAT_REF_LAMBDA, &v, d);
    f = fopen(argv[4], "wb");
    if (!f || fwrite(&v.loss, sizeof v.loss, 1, f) != 1 || fwrite(d, sizeof *d, n, f) != n || fclose(f) != 0) {
        fprintf(stderr, "loss_ref: %s: %s\n", argv[4], strerror(errno));
        return 1;
    }
    free(x), free(y), free(d);
    return 0;
}
