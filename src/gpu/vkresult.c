/* gpu: a failed VkResult as a status and a message. A file of its own because every file of the
 * layer reports through it, and the device (which builds the layer's own pipelines) must not sit
 * in a loop with the pipelines' file. */
#include <stdio.h>

#include "gpu/gpu.h"

const char *splat__vk_result_str(VkResult r)
{
    switch (r) {
    case VK_SUCCESS: return "VK_SUCCESS";
    case VK_NOT_READY: return "VK_NOT_READY";
    case VK_TIMEOUT: return "VK_TIMEOUT";
    case VK_INCOMPLETE: return "VK_INCOMPLETE";
    case VK_ERROR_OUT_OF_HOST_MEMORY: return "VK_ERROR_OUT_OF_HOST_MEMORY";
    case VK_ERROR_OUT_OF_DEVICE_MEMORY: return "VK_ERROR_OUT_OF_DEVICE_MEMORY";
    case VK_ERROR_INITIALIZATION_FAILED: return "VK_ERROR_INITIALIZATION_FAILED";
    case VK_ERROR_DEVICE_LOST: return "VK_ERROR_DEVICE_LOST";
    case VK_ERROR_MEMORY_MAP_FAILED: return "VK_ERROR_MEMORY_MAP_FAILED";
    case VK_ERROR_LAYER_NOT_PRESENT: return "VK_ERROR_LAYER_NOT_PRESENT";
    case VK_ERROR_EXTENSION_NOT_PRESENT: return "VK_ERROR_EXTENSION_NOT_PRESENT";
    case VK_ERROR_FEATURE_NOT_PRESENT: return "VK_ERROR_FEATURE_NOT_PRESENT";
    case VK_ERROR_INCOMPATIBLE_DRIVER: return "VK_ERROR_INCOMPATIBLE_DRIVER";
    case VK_ERROR_TOO_MANY_OBJECTS: return "VK_ERROR_TOO_MANY_OBJECTS";
    case VK_ERROR_FORMAT_NOT_SUPPORTED: return "VK_ERROR_FORMAT_NOT_SUPPORTED";
    case VK_ERROR_OUT_OF_POOL_MEMORY: return "VK_ERROR_OUT_OF_POOL_MEMORY";
    case VK_ERROR_INVALID_SHADER_NV: return "VK_ERROR_INVALID_SHADER_NV";
    default: return "VkResult (unknown)";
    }
}

splat_status splat__vk_fail(splat_error *err, VkResult r, const char *fmt, ...)
{
    splat_status st = SPLAT_ERR_DEVICE;
    if (r == VK_ERROR_OUT_OF_DEVICE_MEMORY) st = SPLAT_ERR_OUT_OF_DEVICE_MEMORY;
    else if (r == VK_ERROR_OUT_OF_HOST_MEMORY) st = SPLAT_ERR_OUT_OF_HOST_MEMORY;
    else if (r == VK_ERROR_INCOMPATIBLE_DRIVER) st = SPLAT_ERR_NO_DEVICE;
    else if (r == VK_ERROR_EXTENSION_NOT_PRESENT || r == VK_ERROR_FEATURE_NOT_PRESENT) st = SPLAT_ERR_UNSUPPORTED;
    if (err && err->status == SPLAT_OK) {
        char what[384];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(what, sizeof what, fmt, ap);
        va_end(ap);
        splat__fail(err, st, "%s: %s", what, splat__vk_result_str(r));
    }
    return st;
}
