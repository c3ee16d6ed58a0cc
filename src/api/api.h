/* api: the public entry points of include/splatc.h, the only layer that defines them. Everything
 * below receives resolved options (options.c) and what it runs on (the context's device, stream
 * and renderer). */
#ifndef SPLAT_API_H
#define SPLAT_API_H

#include "gpu/gpu.h"
#include "render/render.h"
#include "train/train.h"

struct splat_ctx {
    splat_gpu *gpu;
    splat_stream stream;
    splat_renderer renderer;         /* built on first use (pipeline compilation takes a while on CPU drivers) */
    bool has_renderer;
};

/* The context's renderer, built on first use. */
splat_status splat__ctx_renderer(splat_ctx *ctx, const splat_renderer **r, splat_error *err);

/* options.c: every default of the public descriptors. */
/* A render of a scene of degree scene_degree (0..3): out is `in` (NULL: all-zero) with every
 * default filled in; sh_degree becomes the degree rendered, never more than the scene has
 * (SPLAT_SH_DEGREE_0 for 0). A non-finite background is SPLAT_ERR_INVALID_ARG. */
splat_status splat__render_options(const splat_render_desc *in, uint32_t scene_degree, splat_render_desc *out,
                                   splat_error *err);
/* Training: every default filled in (render.sh_degree: the largest degree trained). */
splat_status splat__train_options(const splat_train_desc *in, splat_train_desc *out, splat_error *err);

#endif
