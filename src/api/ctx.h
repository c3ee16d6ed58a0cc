/* api: the public entry points of include/splatc.h that are not a single layer's, and the
 * context they share. */
#ifndef SPLAT_API_CTX_H
#define SPLAT_API_CTX_H

#include "gpu/gpu.h"
#include "render/render.h"

struct splat_ctx {
    splat_gpu *gpu;
    splat_stream stream;
    splat_renderer renderer;         /* built on first use (pipeline compilation takes a while on CPU drivers) */
    bool has_renderer;
};

splat_status splat__ctx_renderer(splat_ctx *ctx, splat_renderer **r, splat_error *err);

#endif
