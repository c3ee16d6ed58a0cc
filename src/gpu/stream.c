#include <stdio.h>

#include "gpu/gpu.h"

/* --------------------------------------------------------------- recording */

void splat__cmd_fail(splat_cmd *c, splat_status st, const char *fmt, ...)
{
    if (c->err.status != SPLAT_OK) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->err.msg, sizeof c->err.msg, fmt, ap);
    va_end(ap);
    c->err.status = st;
}

static const VkAccessFlags k_all_access = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT |
                                          VK_ACCESS_TRANSFER_READ_BIT | VK_ACCESS_TRANSFER_WRITE_BIT |
                                          VK_ACCESS_INDIRECT_COMMAND_READ_BIT;
static const VkPipelineStageFlags k_all_stages = VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT |
                                                 VK_PIPELINE_STAGE_DRAW_INDIRECT_BIT;

static void barrier(VkCommandBuffer cb, VkPipelineStageFlags src, VkAccessFlags src_access, VkPipelineStageFlags dst,
                    VkAccessFlags dst_access)
{
    VkMemoryBarrier mb = {.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER, .srcAccessMask = src_access, .dstAccessMask = dst_access};
    vkCmdPipelineBarrier(cb, src, dst, 0, 1, &mb, 0, NULL, 0, NULL);
}

static void stream_after_dispatch(splat_stream *s);
static bool cmd_ready(splat_cmd *c);

static bool bind(splat_cmd *c, const splat_pipe *p, const splat_view *views, uint32_t n_views, const void *push,
                 uint32_t push_size)
{
    if (!cmd_ready(c)) return false;
    const splat_gpu_info *info = &c->gpu->info;
    if (n_views != p->n_bindings) {
        splat__cmd_fail(c, SPLAT_ERR_SHADER, "dispatch of '%s' binds %u buffers, the pipeline has %u bindings", p->name,
                        n_views, p->n_bindings);
        return false;
    }
    if (push_size != p->push_size) {
        splat__cmd_fail(c, SPLAT_ERR_SHADER, "dispatch of '%s' passes %u bytes of push constants, the pipeline takes %u",
                        p->name, push_size, p->push_size);
        return false;
    }
    VkDescriptorBufferInfo infos[32];
    VkWriteDescriptorSet writes[32];
    for (uint32_t i = 0; i < n_views; i++) {
        const splat_view *v = &views[i];
        SPLAT_ASSERT(v->buf && v->buf->buffer);
        VkDeviceSize alloc = v->buf->size < 16 ? 16 : v->buf->size;
        VkDeviceSize range = v->size ? v->size : (v->offset < alloc ? alloc - v->offset : 0);
        if (v->offset % info->storage_align || range == 0 || v->offset + range > ((alloc + 15) & ~(VkDeviceSize)15)) {
            splat__cmd_fail(c, SPLAT_ERR_INVALID_ARG, "'%s' binding %u: buffer '%s' range %llu+%llu is invalid", p->name, i,
                            v->buf->name, (unsigned long long)v->offset, (unsigned long long)range);
            return false;
        }
        if (range > info->max_storage_range) {
            splat__cmd_fail(c, SPLAT_ERR_LIMIT,
                            "'%s' binding %u: buffer '%s' binds %.1f MiB, more than %s allows in one storage binding "
                            "(maxStorageBufferRange %.1f MiB)",
                            p->name, i, v->buf->name, (double)range / 1048576.0, info->name,
                            (double)info->max_storage_range / 1048576.0);
            return false;
        }
        infos[i] = (VkDescriptorBufferInfo){v->buf->buffer, v->offset, range};
        writes[i] = (VkWriteDescriptorSet){
            .sType = VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET,
            .dstBinding = i,
            .descriptorCount = 1,
            .descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
            .pBufferInfo = &infos[i],
        };
    }
    vkCmdBindPipeline(c->cb, VK_PIPELINE_BIND_POINT_COMPUTE, p->pipeline);
    if (n_views) c->gpu->push_descriptor(c->cb, VK_PIPELINE_BIND_POINT_COMPUTE, p->layout, 0, n_views, writes);
    if (push_size) vkCmdPushConstants(c->cb, p->layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, push_size, push);
    return true;
}

static void after_dispatch(splat_cmd *c)
{
    c->dispatches++;
    if (c->stream) stream_after_dispatch(c->stream);
}

void splat__cmd_dispatch(splat_cmd *c, const splat_pipe *p, const splat_view *views, uint32_t n_views, const void *push,
                         uint32_t push_size, uint32_t gx, uint32_t gy, uint32_t gz)
{
    const uint32_t *lim = c->gpu->info.max_group_count;
    if (gx > lim[0] || gy > lim[1] || gz > lim[2]) {
        splat__cmd_fail(c, SPLAT_ERR_LIMIT, "dispatch of '%s': %u x %u x %u groups exceeds %s's %u x %u x %u", p->name, gx,
                        gy, gz, c->gpu->info.name, lim[0], lim[1], lim[2]);
        return;
    }
    if (!bind(c, p, views, n_views, push, push_size)) return;
    if (gx && gy && gz) vkCmdDispatch(c->cb, gx, gy, gz);
    after_dispatch(c);
}

void splat__cmd_dispatch_indirect(splat_cmd *c, const splat_pipe *p, const splat_view *views, uint32_t n_views,
                                  const void *push, uint32_t push_size, splat_view args)
{
    if (!bind(c, p, views, n_views, push, push_size)) return;
    vkCmdDispatchIndirect(c->cb, args.buf->buffer, args.offset);
    after_dispatch(c);
}

void splat__cmd_dispatch_1d(splat_cmd *c, const splat_pipe *p, const splat_view *views, uint32_t n_views,
                            const void *push, uint32_t push_size, uint64_t items)
{
    uint64_t groups = (items + p->local_size[0] - 1) / p->local_size[0];
    /* 65535 is every device's guaranteed minimum; shaders fold the 2D grid back with the same
     * constant (SPLAT_GRID_X in common.glsl). */
    uint64_t gx = groups < 65535 ? groups : 65535;
    uint64_t gy = gx ? (groups + gx - 1) / gx : 0;
    splat__cmd_dispatch(c, p, views, n_views, push, push_size, (uint32_t)gx, (uint32_t)(gy ? gy : 1), 1);
}

void splat__cmd_barrier(splat_cmd *c)
{
    if (!cmd_ready(c)) return;
    barrier(c->cb, k_all_stages, k_all_access, k_all_stages, k_all_access);
}

/* Records one copy (src) or fill (src NULL) of `n` units of `unit` bytes (4 or 16) with the gpu's
 * shaders, in pieces that each fit one storage binding. A binding starts at its offset rounded
 * down to the device's alignment; the shader takes the rest of the offset in units. */
static void record_words(splat_cmd *c, const splat_buf *src, VkDeviceSize src_off, const splat_buf *dst,
                         VkDeviceSize dst_off, uint64_t n, uint32_t unit, uint32_t value)
{
    const splat_gpu *g = c->gpu;
    const splat_pipe *p = src ? &g->copy_pipe[unit == 16] : &g->fill_pipe[unit == 16];
    VkDeviceSize align = g->info.storage_align ? g->info.storage_align : 1;
    /* a piece's binding is its bytes plus at most align - 1 before them */
    uint64_t room = (g->info.max_storage_range - (align - 1)) / unit;
    uint64_t piece_max = room < UINT32_MAX ? room : UINT32_MAX;
    while (n && cmd_ready(c)) {
        uint64_t k = n < piece_max ? n : piece_max;
        VkDeviceSize dbase = dst_off - dst_off % align, sbase = src ? src_off - src_off % align : 0;
        splat_view views[2];
        uint32_t nv = 0;
        if (src) views[nv++] = SPLAT_VIEW_AT(*src, sbase, src_off - sbase + k * unit);
        views[nv++] = SPLAT_VIEW_AT(*dst, dbase, dst_off - dbase + k * unit);
        uint32_t push[3];
        if (src) push[0] = (uint32_t)((src_off - sbase) / unit), push[1] = (uint32_t)((dst_off - dbase) / unit), push[2] = (uint32_t)k;
        else push[0] = (uint32_t)((dst_off - dbase) / unit), push[1] = (uint32_t)k, push[2] = value;
        splat__cmd_dispatch_1d(c, p, views, nv, push, sizeof push, k);
        src_off += k * unit, dst_off += k * unit, n -= k;
    }
}

/* Quads where both ends are 16-byte aligned, words for the rest. */
static void record_bytes(splat_cmd *c, const splat_buf *src, VkDeviceSize src_off, const splat_buf *dst,
                         VkDeviceSize dst_off, VkDeviceSize size, uint32_t value)
{
    bool quads = dst_off % 16 == 0 && (!src || src_off % 16 == 0);
    VkDeviceSize body = quads ? size - size % 16 : 0;
    if (body) record_words(c, src, src_off, dst, dst_off, body / 16, 16, value);
    if (size > body) record_words(c, src, src_off + body, dst, dst_off + body, (size - body) / 4, 4, value);
}

void splat__cmd_fill(splat_cmd *c, splat_view v, uint32_t value)
{
    if (!cmd_ready(c)) return;
    VkDeviceSize size = v.size ? v.size : v.buf->size - v.offset;
    if (size == 0) return;
    SPLAT_ASSERT(v.offset % 4 == 0 && size % 4 == 0 && v.offset + size <= v.buf->size);
    record_bytes(c, NULL, 0, v.buf, v.offset, size, value);
}

void splat__cmd_copy(splat_cmd *c, splat_view src, splat_view dst)
{
    if (!cmd_ready(c)) return;
    VkDeviceSize size = src.size ? src.size : src.buf->size - src.offset;
    if (size == 0) return;
    SPLAT_ASSERT(src.offset + size <= src.buf->size && dst.offset + size <= dst.buf->size);
    SPLAT_ASSERT(src.offset % 4 == 0 && dst.offset % 4 == 0 && size % 4 == 0);
    record_bytes(c, src.buf, src.offset, dst.buf, dst.offset, size, 0);
}

void splat__cmd_update(splat_cmd *c, splat_view dst, const void *data, uint32_t size)
{
    if (!cmd_ready(c) || size == 0) return;
    SPLAT_ASSERT(size <= 65536 && size % 4 == 0 && dst.offset % 4 == 0 && dst.offset + size <= dst.buf->size);
    vkCmdUpdateBuffer(c->cb, dst.buf->buffer, dst.offset, size, data);
}

void splat__cmd_mark(splat_cmd *c, const char *label)
{
    splat_prof *p = c->prof;
    if (!p || !cmd_ready(c) || p->n >= SPLAT_PROF_MAX) return;
    p->labels[p->n] = label;
    vkCmdWriteTimestamp(c->cb, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, p->pool, p->n);
    p->n++;
}

/* ------------------------------------------------------------------ stream */

static splat_status begin_cb(VkCommandBuffer cb, VkCommandBufferUsageFlags flags, splat_error *err)
{
    VkCommandBufferBeginInfo bi = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO, .flags = flags};
    VkResult r = vkBeginCommandBuffer(cb, &bi);
    if (r != VK_SUCCESS) return splat__vk_fail(err, r, "vkBeginCommandBuffer");
    /* Work submitted earlier (and host writes) happen-before this command buffer's work. */
    barrier(cb, k_all_stages | VK_PIPELINE_STAGE_HOST_BIT, k_all_access | VK_ACCESS_HOST_WRITE_BIT, k_all_stages, k_all_access);
    return SPLAT_OK;
}

static void end_barrier(VkCommandBuffer cb)
{
    /* Everything written becomes visible to the host once the submission's wait returns. */
    barrier(cb, k_all_stages, k_all_access, VK_PIPELINE_STAGE_HOST_BIT, VK_ACCESS_HOST_READ_BIT | VK_ACCESS_HOST_WRITE_BIT);
}

splat_status splat__stream_init(splat_gpu *g, splat_stream *s, splat_error *err)
{
    return splat__stream_init_on(g, g->queue, s, err);
}

splat_status splat__stream_init_on(splat_gpu *g, VkQueue queue, splat_stream *s, splat_error *err)
{
    memset(s, 0, sizeof *s);
    s->gpu = g;
    s->queue = queue;
    s->auto_sync = SPLAT_SYNC_ADAPTIVE;
    s->threshold = 32;
    VkCommandPoolCreateInfo pci = {
        .sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO,
        .flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT,
        .queueFamilyIndex = g->queue_family,
    };
    VkResult r = vkCreateCommandPool(g->device, &pci, NULL, &s->pool);
    if (r != VK_SUCCESS) return splat__vk_fail(err, r, "stream: vkCreateCommandPool");
    VkSemaphoreTypeCreateInfo ti = {
        .sType = VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO,
        .semaphoreType = VK_SEMAPHORE_TYPE_TIMELINE,
        .initialValue = 0,
    };
    VkSemaphoreCreateInfo sci = {.sType = VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO, .pNext = &ti};
    r = vkCreateSemaphore(g->device, &sci, NULL, &s->timeline);
    if (r != VK_SUCCESS) {
        splat__stream_free(s);
        return splat__vk_fail(err, r, "stream: vkCreateSemaphore (timeline)");
    }
    s->cmd.gpu = g;
    s->cmd.stream = s;
    return SPLAT_OK;
}

void splat__stream_free(splat_stream *s)
{
    if (!s || !s->gpu) return;
    VkDevice dev = s->gpu->device;
    if (s->submitted) splat__stream_wait(s, 0, NULL);
    if (s->open) vkEndCommandBuffer(s->cmd.cb);
    if (s->timeline) vkDestroySemaphore(dev, s->timeline, NULL);
    if (s->pool) vkDestroyCommandPool(dev, s->pool, NULL);
    memset(s, 0, sizeof *s);
}

uint64_t splat__stream_completed(splat_stream *s)
{
    uint64_t v = 0;
    if (vkGetSemaphoreCounterValue(s->gpu->device, s->timeline, &v) != VK_SUCCESS) return 0;
    return v;
}

static void retire(splat_stream *s, uint64_t done)
{
    uint32_t k = 0;
    for (uint32_t i = 0; i < s->n_inflight; i++) {
        if (s->inflight[i].value <= done) {
            if (s->inflight[i].cb) s->spare[s->n_spare++] = s->inflight[i].cb;
        } else {
            s->inflight[k++] = s->inflight[i];
        }
    }
    s->n_inflight = k;
}

splat_status splat__stream_wait(splat_stream *s, uint64_t value, splat_error *err)
{
    if (value == 0 || value > s->submitted) value = s->submitted;
    if (value == 0) return SPLAT_OK;
    VkSemaphoreWaitInfo wi = {
        .sType = VK_STRUCTURE_TYPE_SEMAPHORE_WAIT_INFO,
        .semaphoreCount = 1,
        .pSemaphores = &s->timeline,
        .pValues = &value,
    };
    s->waits++;
    VkResult r = vkWaitSemaphores(s->gpu->device, &wi, UINT64_MAX);
    if (r != VK_SUCCESS) return splat__vk_fail(err, r, "stream: waiting for submission %llu", (unsigned long long)value);
    retire(s, splat__stream_completed(s));
    return SPLAT_OK;
}

splat_status splat__stream_wait_polled(splat_stream *s, double poll_s, splat_error *err)
{
    if (s->gpu->info.type != VK_PHYSICAL_DEVICE_TYPE_CPU) {
        double t0 = splat__now();
        while (splat__stream_completed(s) < s->submitted && splat__now() - t0 < poll_s) {
        }
    }
    return splat__stream_wait(s, 0, err);
}

/* Makes room for one more submission in flight. */
static splat_status reserve_slot(splat_stream *s, splat_error *err)
{
    if (s->n_inflight < SPLAT_STREAM_MAX_INFLIGHT) return SPLAT_OK;
    return splat__stream_wait(s, s->inflight[0].value, err);
}

static splat_status submit(splat_stream *s, VkCommandBuffer cb, bool owned, splat_error *err)
{
    splat_status st = reserve_slot(s, err);
    if (st != SPLAT_OK) return st;
    uint64_t value = s->submitted + 1;
    VkSemaphore wait_sem[2];
    uint64_t wait_value[2];
    VkPipelineStageFlags wait_stage[2];
    for (uint32_t k = 0; k < s->n_after; k++) {
        wait_sem[k] = s->after[k].sem;
        wait_value[k] = s->after[k].value;
        wait_stage[k] = VK_PIPELINE_STAGE_ALL_COMMANDS_BIT;
    }
    VkTimelineSemaphoreSubmitInfo ts = {
        .sType = VK_STRUCTURE_TYPE_TIMELINE_SEMAPHORE_SUBMIT_INFO,
        .waitSemaphoreValueCount = s->n_after,
        .pWaitSemaphoreValues = wait_value,
        .signalSemaphoreValueCount = 1,
        .pSignalSemaphoreValues = &value,
    };
    VkSubmitInfo si = {
        .sType = VK_STRUCTURE_TYPE_SUBMIT_INFO,
        .pNext = &ts,
        .waitSemaphoreCount = s->n_after,
        .pWaitSemaphores = wait_sem,
        .pWaitDstStageMask = wait_stage,
        .commandBufferCount = 1,
        .pCommandBuffers = &cb,
        .signalSemaphoreCount = 1,
        .pSignalSemaphores = &s->timeline,
    };
    /* the lock: queue2 may be the queue itself, and the queue is shared with other threads */
    pthread_mutex_lock(&s->gpu->lock);
    VkResult r = vkQueueSubmit(s->queue, 1, &si, VK_NULL_HANDLE);
    pthread_mutex_unlock(&s->gpu->lock);
    if (r != VK_SUCCESS) return splat__vk_fail(err, r, "stream: vkQueueSubmit");
    s->n_after = 0;
    s->submitted = value;
    s->inflight[s->n_inflight].cb = owned ? cb : VK_NULL_HANDLE;
    s->inflight[s->n_inflight].value = value;
    s->n_inflight++;
    s->submits++;
    s->pending = 0;
    return SPLAT_OK;
}

static bool open_cmd(splat_stream *s)
{
    if (s->open) return true;
    splat_cmd *c = &s->cmd;
    if (c->err.status != SPLAT_OK) return false;
    VkCommandBuffer cb;
    if (s->n_spare) {
        cb = s->spare[--s->n_spare];
        vkResetCommandBuffer(cb, 0);
    } else {
        retire(s, splat__stream_completed(s));
        if (s->n_spare) {
            cb = s->spare[--s->n_spare];
            vkResetCommandBuffer(cb, 0);
        } else {
            VkCommandBufferAllocateInfo ai = {
                .sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
                .commandPool = s->pool,
                .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY,
                .commandBufferCount = 1,
            };
            VkResult r = vkAllocateCommandBuffers(s->gpu->device, &ai, &cb);
            if (r != VK_SUCCESS) {
                splat__vk_fail(&c->err, r, "stream: vkAllocateCommandBuffers");
                return false;
            }
        }
    }
    if (begin_cb(cb, VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT, &c->err) != SPLAT_OK) {
        s->spare[s->n_spare++] = cb;
        return false;
    }
    c->cb = cb;
    s->open = true;
    return true;
}

/* Streams open their command buffer lazily; recordings are always open until ended. */
static bool cmd_ready(splat_cmd *c)
{
    if (c->err.status != SPLAT_OK) return false;
    if (c->stream) return open_cmd(c->stream);
    return c->cb != VK_NULL_HANDLE;
}

splat_cmd *splat__stream_cmd(splat_stream *s)
{
    open_cmd(s);
    return &s->cmd;
}

static splat_status commit(splat_stream *s, splat_error *err)
{
    if (!s->open) return SPLAT_OK;
    s->open = false;
    end_barrier(s->cmd.cb);
    VkResult r = vkEndCommandBuffer(s->cmd.cb);
    if (r != VK_SUCCESS) {
        s->spare[s->n_spare++] = s->cmd.cb;
        return splat__vk_fail(err, r, "stream: vkEndCommandBuffer");
    }
    return submit(s, s->cmd.cb, true, err);
}

static void stream_after_dispatch(splat_stream *s)
{
    s->pending++;
    if (s->auto_sync == SPLAT_SYNC_ADAPTIVE && s->pending >= s->threshold) commit(s, &s->cmd.err);
}

splat_status splat__stream_sync(splat_stream *s, splat_sync kind, splat_error *err)
{
    if (s->cmd.err.status != SPLAT_OK) {
        splat_status st = s->cmd.err.status;
        splat__fail(err, st, "%s", s->cmd.err.msg);
        /* The failed command buffer is dropped; the stream can be used again. */
        if (s->open) {
            vkEndCommandBuffer(s->cmd.cb);
            s->spare[s->n_spare++] = s->cmd.cb;
            s->open = false;
        }
        memset(&s->cmd.err, 0, sizeof s->cmd.err);
        s->pending = 0;
        /* Work submitted before the failure (adaptive commits) may use what the caller frees
         * next, on its error path: let it finish first. */
        splat__stream_wait(s, 0, NULL);
        return st;
    }
    splat_status st = SPLAT_OK;
    switch (kind) {
    case SPLAT_SYNC_NONE: break;
    case SPLAT_SYNC_ADAPTIVE: st = s->pending >= s->threshold ? commit(s, err) : SPLAT_OK; break;
    case SPLAT_SYNC_COMMIT: st = commit(s, err); break;
    case SPLAT_SYNC_COMMIT_AND_WAIT:
        st = commit(s, err);
        return st != SPLAT_OK ? (splat__stream_wait(s, 0, NULL), st) : splat__stream_wait(s, 0, err);
    }
    /* a failed submission: what was submitted before it still finishes before the error returns */
    if (st != SPLAT_OK) splat__stream_wait(s, 0, NULL);
    return st;
}

void splat__stream_after(splat_stream *s, VkSemaphore sem, uint64_t value)
{
    if (!sem || !value) return;
    for (uint32_t k = 0; k < s->n_after; k++) {
        if (s->after[k].sem == sem) {
            if (value > s->after[k].value) s->after[k].value = value;
            return;
        }
    }
    /* a third semaphore: the two before it go out with what is recorded (or an empty submission) */
    if (s->n_after == 2) {
        splat__stream_cmd(s);
        commit(s, &s->cmd.err);
    }
    s->after[s->n_after].sem = sem;
    s->after[s->n_after].value = value;
    s->n_after++;
}

/* ---------------------------------------------------------------- recordings */

splat_status splat__rec_begin(splat_gpu *g, splat_rec *r, splat_error *err)
{
    memset(r, 0, sizeof *r);
    r->cmd.gpu = g;
    VkCommandPoolCreateInfo pci = {
        .sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO,
        .queueFamilyIndex = g->queue_family,
    };
    VkResult vr = vkCreateCommandPool(g->device, &pci, NULL, &r->pool);
    if (vr != VK_SUCCESS) return splat__vk_fail(err, vr, "recording: vkCreateCommandPool");
    VkCommandBufferAllocateInfo ai = {
        .sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
        .commandPool = r->pool,
        .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY,
        .commandBufferCount = 1,
    };
    vr = vkAllocateCommandBuffers(g->device, &ai, &r->cmd.cb);
    splat_status st = vr == VK_SUCCESS ? begin_cb(r->cmd.cb, VK_COMMAND_BUFFER_USAGE_SIMULTANEOUS_USE_BIT, err)
                                       : splat__vk_fail(err, vr, "recording: vkAllocateCommandBuffers");
    if (st != SPLAT_OK) splat__rec_free(g, r);
    return st;
}

splat_status splat__rec_end(splat_rec *r, splat_error *err)
{
    SPLAT_ASSERT(!r->ended);
    r->ended = true;
    if (r->cmd.err.status != SPLAT_OK) return splat__fail(err, r->cmd.err.status, "%s", r->cmd.err.msg);
    end_barrier(r->cmd.cb);
    VkResult vr = vkEndCommandBuffer(r->cmd.cb);
    if (vr != VK_SUCCESS) return splat__vk_fail(err, vr, "recording: vkEndCommandBuffer");
    return SPLAT_OK;
}

void splat__rec_free(splat_gpu *g, splat_rec *r)
{
    if (!r || !g) return;
    if (r->pool) vkDestroyCommandPool(g->device, r->pool, NULL);
    memset(r, 0, sizeof *r);
}

splat_status splat__stream_replay(splat_stream *s, const splat_rec *r, uint64_t *value, splat_error *err)
{
    SPLAT_ASSERT(r->ended && r->cmd.err.status == SPLAT_OK);
    splat_status st = splat__stream_sync(s, SPLAT_SYNC_COMMIT, err);
    if (st == SPLAT_OK) st = submit(s, r->cmd.cb, false, err);
    if (st == SPLAT_OK && value) *value = s->submitted;
    return st;
}

/* ------------------------------------------------------------------ profiler */

splat_status splat__prof_init(splat_gpu *g, splat_prof *p, splat_error *err)
{
    memset(p, 0, sizeof *p);
    if (!g->info.timestamps) return splat__fail(err, SPLAT_ERR_UNSUPPORTED, "%s has no compute timestamps", g->info.name);
    VkQueryPoolCreateInfo qi = {
        .sType = VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO,
        .queryType = VK_QUERY_TYPE_TIMESTAMP,
        .queryCount = SPLAT_PROF_MAX,
    };
    VkResult r = vkCreateQueryPool(g->device, &qi, NULL, &p->pool);
    if (r != VK_SUCCESS) return splat__vk_fail(err, r, "vkCreateQueryPool (timestamps)");
    return SPLAT_OK;
}

void splat__prof_free(splat_gpu *g, splat_prof *p)
{
    if (p && p->pool) vkDestroyQueryPool(g->device, p->pool, NULL);
    if (p) memset(p, 0, sizeof *p);
}

void splat__prof_begin(splat_cmd *c, splat_prof *p)
{
    c->prof = p;
    if (!cmd_ready(c)) return;
    vkCmdResetQueryPool(c->cb, p->pool, 0, SPLAT_PROF_MAX);
    p->n = 0;
    splat__cmd_mark(c, "begin");
}

splat_status splat__prof_read(splat_gpu *g, const splat_prof *p, double *ms, splat_error *err)
{
    if (p->n < 2) return SPLAT_OK;
    uint64_t t[SPLAT_PROF_MAX];
    VkResult r = vkGetQueryPoolResults(g->device, p->pool, 0, p->n, sizeof t, t, sizeof t[0],
                                       VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT);
    if (r != VK_SUCCESS) return splat__vk_fail(err, r, "reading timestamps");
    for (uint32_t i = 0; i + 1 < p->n; i++) ms[i] = (double)(t[i + 1] - t[i]) * g->info.timestamp_period_ns * 1e-6;
    return SPLAT_OK;
}

bool splat__prof_peek(splat_gpu *g, const splat_prof *p, double *ms)
{
    if (p->n < 2) return false;
    uint64_t t[SPLAT_PROF_MAX];
    if (vkGetQueryPoolResults(g->device, p->pool, 0, p->n, sizeof t, t, sizeof t[0], VK_QUERY_RESULT_64_BIT) != VK_SUCCESS)
        return false;
    for (uint32_t i = 0; i + 1 < p->n; i++) ms[i] = (double)(t[i + 1] - t[i]) * g->info.timestamp_period_ns * 1e-6;
    return true;
}
