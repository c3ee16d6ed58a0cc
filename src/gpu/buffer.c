#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu/gpu.h"

/* SPLAT_MEM_TRACE=1 prints every device allocation and free of 1 MiB or more with the total in
 * use after it, so the live set at the peak can be read off a run (docs/PERFORMANCE.md). */
static void mem_trace(const char *what, const char *name, VkDeviceSize size, uint64_t in_use)
{
    static int on = -1;
    if (on < 0) on = getenv("SPLAT_MEM_TRACE") && *getenv("SPLAT_MEM_TRACE") && strcmp(getenv("SPLAT_MEM_TRACE"), "0");
    if (on && size >= (1u << 20))
        fprintf(stderr, "mem %s %s %.1f MiB, in use %.1f MiB\n", what, name, (double)size / 1048576.0,
                (double)in_use / 1048576.0);
}

static int find_type(const splat_gpu *g, uint32_t allowed, VkMemoryPropertyFlags need, VkMemoryPropertyFlags want)
{
    int fallback = -1;
    for (uint32_t t = 0; t < g->mem_props.memoryTypeCount; t++) {
        if (!(allowed & (1u << t))) continue;
        VkMemoryPropertyFlags f = g->mem_props.memoryTypes[t].propertyFlags;
        if ((f & need) != need) continue;
        if ((f & want) == want) return (int)t;
        if (fallback < 0) fallback = (int)t;
    }
    return fallback;
}

/* Decimals that keep a size in MiB readable: a few KiB is not "0.0 MiB". */
static int mib_digits(uint64_t bytes) { return bytes < 1048576 ? 4 : 1; }

uint64_t splat__unique_id(void)
{
    static uint64_t last;
    return __atomic_add_fetch(&last, 1, __ATOMIC_RELAXED);
}

const char *splat__buf_fail_prefix;
uint32_t splat__buf_fail_times;

splat_status splat__buf_init(splat_gpu *g, splat_buf *b, const char *name, VkDeviceSize size, splat_mem kind,
                             splat_error *err)
{
    memset(b, 0, sizeof *b);
    snprintf(b->name, sizeof b->name, "%s", name);
    b->kind = kind;
    b->id = splat__unique_id();
    /* Bindings need a buffer even when a stage has nothing to store; 16 bytes keeps every
     * binding of an empty scene valid. */
    VkDeviceSize alloc_size = size < 16 ? 16 : (size + 15) & ~(VkDeviceSize)15;
    b->size = size;
    if (alloc_size > g->info.max_alloc || (g->info.device_local_heap && alloc_size > g->info.device_local_heap))
        return splat__fail(err, SPLAT_ERR_OUT_OF_DEVICE_MEMORY,
                           "buffer '%s': %.1f MiB is more than %s can allocate at once (%.1f MiB)", name,
                           (double)alloc_size / 1048576.0, g->info.name,
                           (double)SPLAT_MIN(g->info.max_alloc, g->info.device_local_heap) / 1048576.0);
    VkBufferCreateInfo bci = {
        .sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO,
        .size = alloc_size,
        .usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT |
                 VK_BUFFER_USAGE_INDIRECT_BUFFER_BIT,
        .sharingMode = VK_SHARING_MODE_EXCLUSIVE,
    };
    VkResult r = vkCreateBuffer(g->device, &bci, NULL, &b->buffer);
    if (r != VK_SUCCESS) return splat__vk_fail(err, r, "vkCreateBuffer '%s' (%llu bytes)", name, (unsigned long long)alloc_size);
    VkMemoryRequirements req;
    vkGetBufferMemoryRequirements(g->device, b->buffer, &req);

    const VkMemoryPropertyFlags local = VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT;
    const VkMemoryPropertyFlags visible = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
    int type = -1;
    switch (kind) {
    case SPLAT_MEM_DEVICE:
        type = g->info.unified_memory ? find_type(g, req.memoryTypeBits, local, visible)
                                       : find_type(g, req.memoryTypeBits, local, 0);
        break;
    case SPLAT_MEM_UPLOAD: type = find_type(g, req.memoryTypeBits, visible, 0); break;
    case SPLAT_MEM_READBACK:
        type = find_type(g, req.memoryTypeBits, visible, VK_MEMORY_PROPERTY_HOST_CACHED_BIT);
        break;
    }
    if (type < 0) {
        splat__buf_free(g, b);
        return splat__fail(err, SPLAT_ERR_UNSUPPORTED, "buffer '%s': %s has no suitable memory type", name, g->info.name);
    }
    VkMemoryAllocateInfo mai = {
        .sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO,
        .allocationSize = req.size,
        .memoryTypeIndex = (uint32_t)type,
    };
    if (kind == SPLAT_MEM_DEVICE && splat__buf_fail_times && splat__buf_fail_prefix &&
        strncmp(name, splat__buf_fail_prefix, strlen(splat__buf_fail_prefix)) == 0) {
        splat__buf_fail_times--;
        splat__buf_free(g, b);
        return splat__fail(err, SPLAT_ERR_OUT_OF_DEVICE_MEMORY, "buffer '%s': out of device memory (a test's)", name);
    }
    /* SPLAT_MEM_LIMIT emulates a smaller GPU for tests and users; the check and the allocation are
     * not one atomic step, so two threads allocating at once may pass it together by one buffer. */
    if (kind == SPLAT_MEM_DEVICE && g->mem_limit) {
        pthread_mutex_lock(&g->lock);
        uint64_t in_use = g->mem_in_use;
        pthread_mutex_unlock(&g->lock);
        if (in_use + req.size > g->mem_limit) {
            splat__buf_free(g, b);
            return splat__fail(err, SPLAT_ERR_OUT_OF_DEVICE_MEMORY,
                               "buffer '%s': %.*f MiB more would pass SPLAT_MEM_LIMIT (%.*f MiB, %.*f MiB in use)", name,
                               mib_digits(req.size), (double)req.size / 1048576.0, mib_digits(g->mem_limit),
                               (double)g->mem_limit / 1048576.0, mib_digits(in_use), (double)in_use / 1048576.0);
        }
    }
    r = vkAllocateMemory(g->device, &mai, NULL, &b->memory);
    if (r != VK_SUCCESS) {
        splat__buf_free(g, b);
        return splat__vk_fail(err, r, "allocating buffer '%s' (%.1f MiB)", name, (double)req.size / 1048576.0);
    }
    r = vkBindBufferMemory(g->device, b->buffer, b->memory, 0);
    if (r == VK_SUCCESS && (g->mem_props.memoryTypes[type].propertyFlags & VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT))
        r = vkMapMemory(g->device, b->memory, 0, VK_WHOLE_SIZE, 0, &b->map);
    if (r != VK_SUCCESS) {
        splat__buf_free(g, b);
        return splat__vk_fail(err, r, "binding or mapping buffer '%s'", name);
    }
    if (kind == SPLAT_MEM_DEVICE) {
        pthread_mutex_lock(&g->lock);
        g->mem_in_use += req.size;
        if (g->mem_in_use > g->mem_peak) g->mem_peak = g->mem_in_use;
        mem_trace("+", name, req.size, g->mem_in_use);
        pthread_mutex_unlock(&g->lock);
    }
    return SPLAT_OK;
}

splat_status splat__bufs_init(splat_gpu *g, const splat_buf_spec *specs, size_t n, splat_error *err)
{
    splat_status st = SPLAT_OK;
    for (size_t k = 0; k < n && st == SPLAT_OK; k++) st = splat__buf_init(g, specs[k].buf, specs[k].name, specs[k].size, specs[k].kind, err);
    return st;
}

void splat__buf_free(splat_gpu *g, splat_buf *b)
{
    if (!b || !g) return;
    if (b->memory) {
        if (b->kind == SPLAT_MEM_DEVICE) {
            VkMemoryRequirements req;
            vkGetBufferMemoryRequirements(g->device, b->buffer, &req);
            pthread_mutex_lock(&g->lock);
            g->mem_in_use -= SPLAT_MIN(g->mem_in_use, req.size);
            mem_trace("-", b->name, req.size, g->mem_in_use);
            pthread_mutex_unlock(&g->lock);
        }
        vkFreeMemory(g->device, b->memory, NULL);
    }
    if (b->buffer) vkDestroyBuffer(g->device, b->buffer, NULL);
    memset(b, 0, sizeof *b);
}

/* Records `record` into a one-off command buffer, submits it and waits. */
static splat_status run_once(splat_gpu *g, void (*record)(VkCommandBuffer, void *), void *user, const char *what,
                             splat_error *err)
{
    VkCommandBufferAllocateInfo ai = {
        .sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
        .commandPool = g->imm_pool,
        .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY,
        .commandBufferCount = 1,
    };
    VkFenceCreateInfo fci = {.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
    VkFence fence = VK_NULL_HANDLE;
    VkResult r = vkCreateFence(g->device, &fci, NULL, &fence);
    if (r != VK_SUCCESS) return splat__vk_fail(err, r, "%s: vkCreateFence", what);
    /* the pool and the queue are shared with streams on other threads; the wait is not */
    pthread_mutex_lock(&g->lock);
    VkCommandBuffer cb;
    r = vkAllocateCommandBuffers(g->device, &ai, &cb);
    if (r != VK_SUCCESS) {
        pthread_mutex_unlock(&g->lock);
        vkDestroyFence(g->device, fence, NULL);
        return splat__vk_fail(err, r, "%s: vkAllocateCommandBuffers", what);
    }
    VkCommandBufferBeginInfo bi = {
        .sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
        .flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT,
    };
    r = vkBeginCommandBuffer(cb, &bi);
    if (r == VK_SUCCESS) {
        record(cb, user);
        r = vkEndCommandBuffer(cb);
    }
    if (r == VK_SUCCESS) {
        VkSubmitInfo si = {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO, .commandBufferCount = 1, .pCommandBuffers = &cb};
        r = vkQueueSubmit(g->queue, 1, &si, fence);
    }
    pthread_mutex_unlock(&g->lock);
    if (r == VK_SUCCESS) r = vkWaitForFences(g->device, 1, &fence, VK_TRUE, UINT64_MAX);
    vkDestroyFence(g->device, fence, NULL);
    pthread_mutex_lock(&g->lock);
    vkFreeCommandBuffers(g->device, g->imm_pool, 1, &cb);
    pthread_mutex_unlock(&g->lock);
    if (r != VK_SUCCESS) return splat__vk_fail(err, r, "%s", what);
    return SPLAT_OK;
}

typedef struct copy_job {
    VkBuffer src, dst;
    VkBufferCopy region;
} copy_job;

static void record_copy(VkCommandBuffer cb, void *user)
{
    copy_job *j = user;
    /* Earlier submissions may have written the source; make that visible to the copy, and the
     * copy visible to the host and to later work. */
    VkMemoryBarrier mb = {
        .sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER,
        .srcAccessMask = VK_ACCESS_MEMORY_WRITE_BIT,
        .dstAccessMask = VK_ACCESS_TRANSFER_READ_BIT | VK_ACCESS_TRANSFER_WRITE_BIT,
    };
    vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, VK_PIPELINE_STAGE_TRANSFER_BIT, 0, 1, &mb, 0, NULL, 0, NULL);
    vkCmdCopyBuffer(cb, j->src, j->dst, 1, &j->region);
    mb.srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT;
    mb.dstAccessMask = VK_ACCESS_HOST_READ_BIT | VK_ACCESS_MEMORY_READ_BIT | VK_ACCESS_MEMORY_WRITE_BIT;
    vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_HOST_BIT | VK_PIPELINE_STAGE_ALL_COMMANDS_BIT,
                         0, 1, &mb, 0, NULL, 0, NULL);
}

static splat_status check_range(const splat_buf *b, VkDeviceSize offset, VkDeviceSize size, const char *what,
                                splat_error *err)
{
    if (offset > b->size || size > b->size - offset)
        return splat__fail(err, SPLAT_ERR_INVALID_ARG, "%s buffer '%s': range %llu+%llu outside its %llu bytes", what,
                           b->name, (unsigned long long)offset, (unsigned long long)size, (unsigned long long)b->size);
    return SPLAT_OK;
}

splat_status splat__buf_upload(splat_gpu *g, splat_buf *b, VkDeviceSize offset, const void *data, VkDeviceSize size,
                               splat_error *err)
{
    splat_status st = check_range(b, offset, size, "upload to", err);
    if (st != SPLAT_OK || size == 0) return st;
    if (b->map) {
        /* The GPU may still be using the buffer; callers upload outside the GPU's use of it. */
        memcpy((char *)b->map + offset, data, size);
        return SPLAT_OK;
    }
    splat_buf staging;
    st = splat__buf_init(g, &staging, "staging", size, SPLAT_MEM_UPLOAD, err);
    if (st != SPLAT_OK) return st;
    memcpy(staging.map, data, size);
    copy_job j = {staging.buffer, b->buffer, {0, offset, size}};
    st = run_once(g, record_copy, &j, "upload", err);
    splat__buf_free(g, &staging);
    return st;
}

splat_status splat__buf_download(splat_gpu *g, const splat_buf *b, VkDeviceSize offset, void *data, VkDeviceSize size,
                                 splat_error *err)
{
    splat_status st = check_range(b, offset, size, "download from", err);
    if (st != SPLAT_OK || size == 0) return st;
    if (b->map) {
        memcpy(data, (const char *)b->map + offset, size);
        return SPLAT_OK;
    }
    splat_buf staging;
    st = splat__buf_init(g, &staging, "readback", size, SPLAT_MEM_READBACK, err);
    if (st != SPLAT_OK) return st;
    copy_job j = {b->buffer, staging.buffer, {offset, 0, size}};
    st = run_once(g, record_copy, &j, "download", err);
    if (st == SPLAT_OK) memcpy(data, staging.map, size);
    splat__buf_free(g, &staging);
    return st;
}
