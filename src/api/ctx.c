#include <stdio.h>
#include <stdlib.h>

#include "api/api.h"

static const char *type_name(VkPhysicalDeviceType t)
{
    switch (t) {
    case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU: return "discrete";
    case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU: return "integrated";
    case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU: return "virtual";
    case VK_PHYSICAL_DEVICE_TYPE_CPU: return "cpu";
    default: return "other";
    }
}

static void to_public(const splat_gpu_info *in, splat_device_info *out)
{
    memset(out, 0, sizeof *out);
    out->index = in->index;
    snprintf(out->name, sizeof out->name, "%s", in->name);
    snprintf(out->driver, sizeof out->driver, "%s", in->driver);
    out->type = type_name(in->type);
    out->subgroup_size = in->subgroup_size;
    out->memory_bytes = in->device_local_heap;
    out->max_storage_range = in->max_storage_range;
    out->unified_memory = in->unified_memory;
    out->float_atomics = in->float_atomics;
    out->fp16_storage = in->fp16_storage;
}

splat_status splat_devices(splat_device_info *infos, uint32_t max, uint32_t *count, splat_error *err)
{
    splat_gpu_info tmp[16];
    uint32_t n = 0;
    splat_status st = splat__gpu_list(tmp, 16, &n, err);
    if (st != SPLAT_OK) return st;
    for (uint32_t i = 0; i < n && i < max && i < 16; i++) to_public(&tmp[i], &infos[i]);
    *count = n;
    return SPLAT_OK;
}

splat_status splat_ctx_init(splat_ctx **out, const splat_ctx_desc *desc, splat_error *err)
{
    static const splat_ctx_desc defaults = {0};
    if (!desc) desc = &defaults;
    *out = NULL;
    splat_ctx *ctx = splat__calloc(1, sizeof *ctx);
    if (!ctx) return splat__fail(err, SPLAT_ERR_OUT_OF_HOST_MEMORY, "context: out of host memory");
    splat_gpu_desc gd = {.choose_device = desc->choose_device, .device_index = desc->device_index, .validation = desc->validation};
    splat_status st = splat__gpu_init(&ctx->gpu, &gd, err);
    if (st == SPLAT_OK) st = splat__stream_init(ctx->gpu, &ctx->stream, err);
    if (st != SPLAT_OK) {
        splat_ctx_free(ctx);
        return st;
    }
    *out = ctx;
    return SPLAT_OK;
}

void splat_ctx_free(splat_ctx *ctx)
{
    if (!ctx) return;
    if (ctx->gpu) {
        splat__stream_free(&ctx->stream);
        if (ctx->has_renderer) splat__renderer_free(&ctx->renderer);
        splat__gpu_free(ctx->gpu);
    }
    splat__free(ctx);
}

splat_status splat__ctx_renderer(splat_ctx *ctx, const splat_renderer **r, splat_error *err)
{
    if (!ctx->has_renderer) {
        splat_status st = splat__renderer_init(ctx->gpu, &ctx->renderer, err);
        if (st != SPLAT_OK) return st;
        ctx->has_renderer = true;
    }
    *r = &ctx->renderer;
    return SPLAT_OK;
}

void splat_ctx_device(const splat_ctx *ctx, splat_device_info *info) { to_public(&ctx->gpu->info, info); }

void splat_ctx_memory(const splat_ctx *ctx, uint64_t *in_use, uint64_t *peak)
{
    if (in_use) *in_use = ctx->gpu->mem_in_use;
    if (peak) *peak = ctx->gpu->mem_peak;
}
