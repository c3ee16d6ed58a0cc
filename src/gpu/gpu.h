/* gpu: the Vulkan layer. Device choice, buffers, compute pipelines from embedded SPIR-V, and
 * command recording and submission (the stream). Everything above records through splat_cmd;
 * only the stream submits and waits.
 *
 * Recording functions (splat__cmd_*) return nothing: the first failure (a binding that breaks a
 * device limit, a dispatch that does not match its pipeline, a Vulkan error) is kept in the
 * command's `err`, later recording into it is skipped, and the failure is returned by whoever
 * submits or ends it (splat__stream_sync, splat__rec_end). */
#ifndef SPLAT_GPU_H
#define SPLAT_GPU_H

#include <pthread.h>
#include <vulkan/vulkan.h>

#include "core/core.h"

/* ------------------------------------------------------------------ device */

typedef struct splat_gpu_info {
    char name[VK_MAX_PHYSICAL_DEVICE_NAME_SIZE];
    char driver[VK_MAX_DRIVER_INFO_SIZE + VK_MAX_DRIVER_NAME_SIZE];
    VkPhysicalDeviceType type;
    uint32_t vendor_id, device_id, api_version;
    uint32_t index;                  /* in vkEnumeratePhysicalDevices order */
    uint32_t subgroup_size;          /* the default subgroup size: read, never assumed */
    uint32_t min_subgroup_size, max_subgroup_size;
    uint64_t max_storage_range;      /* largest range one storage-buffer binding may have */
    uint64_t storage_align;          /* minStorageBufferOffsetAlignment */
    uint64_t max_alloc;              /* largest single allocation */
    uint64_t device_local_heap;      /* bytes of the largest device-local heap */
    uint32_t max_shared_memory;      /* bytes per workgroup */
    uint32_t max_group_count[3];
    uint32_t max_group_invocations;
    uint32_t max_push_constants;
    bool unified_memory;             /* device-local memory is host-visible and the host may map it */
    bool float_atomics;              /* shaderBufferFloat32AtomicAdd */
    bool fp16_storage;               /* storageBuffer16BitAccess + shaderFloat16 */
    bool timestamps;
    double timestamp_period_ns;
} splat_gpu_info;

/* A compute pipeline (splat__pipe_init, below). */
typedef struct splat_pipe {
    VkPipeline pipeline;
    VkPipelineLayout layout;
    VkDescriptorSetLayout set_layout;
    uint32_t n_bindings, push_size;
    uint32_t local_size[3];
    char name[48];
} splat_pipe;

typedef struct splat_gpu {
    VkInstance instance;
    VkDebugUtilsMessengerEXT messenger;
    VkPhysicalDevice phys;
    VkDevice device;
    VkQueue queue;
    uint32_t queue_family;
    /* A second queue of the same family for work beside training (the viewer's frames), so that it
     * does not wait behind training's queued iterations: only with SPLAT_TWO_QUEUES=1, and `queue`
     * itself otherwise or when the family has only one. Streams on different queues order their
     * work with each other's timelines (splat__stream_after). */
    VkQueue queue2;
    VkCommandPool imm_pool;          /* for one-off uploads and downloads */
    /* Streams may live on different threads (the viewer renders beside training), and they share
     * the queue, the immediate pool and the memory counts: whoever touches those holds this lock
     * (submissions, immediate copies, allocations). Nothing waits on the GPU while holding it. */
    pthread_mutex_t lock;
    VkPhysicalDeviceMemoryProperties mem_props;
    splat_gpu_info info;
    bool validation;
    uint32_t validation_messages;    /* errors and warnings reported by the validation layers (any thread:
                                        added to atomically) */
    uint64_t mem_in_use, mem_peak;   /* device memory allocated through splat__buf_init (under `lock`) */
    uint64_t mem_limit;              /* SPLAT_MEM_LIMIT (MiB): allocations beyond it fail as out of memory, as
                                        on a GPU that size (0: none) */
    bool mem_budget;                 /* VK_EXT_memory_budget is on: the heap's budget can be read */
    bool mem_budget_hidden;          /* SPLAT_MEM_BUDGET_UNKNOWN=1: splat__gpu_mem_available knows nothing, as on a
                                        device without the extension (SPLAT_MEM_LIMIT still binds) */
    PFN_vkCmdPushDescriptorSetKHR push_descriptor;
    /* splat__cmd_copy and splat__cmd_fill: [0] a 4-byte word per thread, [1] a 16-byte quad */
    splat_pipe copy_pipe[2], fill_pipe[2];
} splat_gpu;

typedef struct splat_gpu_desc {
    bool choose_device;              /* false: pick automatically (or from SPLAT_DEVICE) */
    uint32_t device_index;           /* with choose_device: the index in `splatc info` order */
    bool validation;                 /* also switched on by SPLAT_VALIDATE=1 */
} splat_gpu_desc;

/* Creates the instance and the device. Without a choice, the first discrete GPU wins, then
 * integrated, virtual, CPU. The environment variable SPLAT_DEVICE=N overrides the automatic
 * choice. Fails with SPLAT_ERR_NO_DEVICE (index absent, no Vulkan) or _UNSUPPORTED (the
 * device lacks something splatc needs; the message says what). */
splat_status splat__gpu_init(splat_gpu **out, const splat_gpu_desc *desc, splat_error *err);

/* Bytes of device memory that can still be allocated: SPLAT_MEM_LIMIT less what splatc holds, and
 * the largest device-local heap's budget for this process (the driver's estimate, which leaves
 * out what other processes hold) less this process's usage of it (VK_EXT_memory_budget), whichever
 * is less; UINT64_MAX when neither is known. *total (may be NULL) receives the size
 * that bound it (the limit, or the heap's budget). An estimate of the moment: other processes
 * allocate too. */
uint64_t splat__gpu_mem_available(splat_gpu *g, uint64_t *total);
void splat__gpu_free(splat_gpu *g);

/* Lists the devices the loader sees (for `splatc info`): infos [max], returns the count. */
splat_status splat__gpu_list(splat_gpu_info *infos, uint32_t max, uint32_t *count, splat_error *err);

/* Maps a failed VkResult to a status and a message naming `what` (the object or call). */
splat_status splat__vk_fail(splat_error *err, VkResult r, const char *fmt, ...) SPLAT_PRINTF(3, 4);
const char *splat__vk_result_str(VkResult r);

/* ------------------------------------------------------------------ buffers */

typedef enum splat_mem {
    SPLAT_MEM_DEVICE = 0,            /* device-local; also mapped on unified-memory devices */
    SPLAT_MEM_UPLOAD,                /* host-visible, written by the host */
    SPLAT_MEM_READBACK,              /* host-visible and cached, read by the host */
} splat_mem;

typedef struct splat_buf {
    VkBuffer buffer;
    VkDeviceMemory memory;
    VkDeviceSize size;
    void *map;                       /* host pointer when host-visible, else NULL */
    splat_mem kind;
    uint64_t id;                     /* unique in the process: tells this buffer from a later one that
                                        gets the same handle (recordings compare it) */
    char name[40];
} splat_buf;

/* Tests of recovery paths that no memory limit reaches on purpose: the next
 * splat__buf_fail_times device allocations whose names begin with splat__buf_fail_prefix fail as
 * out of device memory. */
extern const char *splat__buf_fail_prefix;
extern uint32_t splat__buf_fail_times;

/* A size of 0 allocates a minimal buffer (bindings stay valid). Out of device memory (or a
 * size larger than the heap) is SPLAT_ERR_OUT_OF_DEVICE_MEMORY naming the buffer. */
splat_status splat__buf_init(splat_gpu *g, splat_buf *b, const char *name, VkDeviceSize size, splat_mem kind,
                             splat_error *err);
/* A number never returned before in this process (never 0). */
uint64_t splat__unique_id(void);
void splat__buf_free(splat_gpu *g, splat_buf *b);
/* A set of buffers allocated together, in order, stopping at the first failure (the caller frees
 * the set: splat__buf_free does nothing to a buffer never allocated). */
typedef struct splat_buf_spec {
    splat_buf *buf;
    const char *name;
    VkDeviceSize size;
    splat_mem kind;
} splat_buf_spec;

splat_status splat__bufs_init(splat_gpu *g, const splat_buf_spec *specs, size_t n, splat_error *err);
/* Immediate host<->buffer copies: in place when mapped, else through a staging buffer and a
 * wait. For setup and tests, never inside the training loop. */
splat_status splat__buf_upload(splat_gpu *g, splat_buf *b, VkDeviceSize offset, const void *data,
                               VkDeviceSize size, splat_error *err);
splat_status splat__buf_download(splat_gpu *g, const splat_buf *b, VkDeviceSize offset, void *data,
                                 VkDeviceSize size, splat_error *err);

/* A range of a buffer to bind. size 0 = to the end of the buffer. */
typedef struct splat_view {
    const splat_buf *buf;
    VkDeviceSize offset, size;
} splat_view;

#define SPLAT_VIEW(b) ((splat_view){&(b), 0, 0})
#define SPLAT_VIEW_AT(b, off, sz) ((splat_view){&(b), (off), (sz)})

/* ---------------------------------------------------------------- pipelines */

struct splat__spirv;

typedef struct splat_pipe_desc {
    const char *shader;              /* name in the embedded table: the .comp file name without extension */
    const struct splat__spirv *table;/* where to find it; NULL: the library's own shaders (tests and benchmarks
                                        embed theirs in their own binaries) */
    uint32_t n_bindings;             /* storage buffers at set 0, bindings 0..n-1 */
    uint32_t push_size;              /* sizeof the push-constant struct, 0 for none */
    const uint32_t *spec;            /* uint32 specialization constants, constant_id 0..n_spec-1 */
    uint32_t n_spec;
} splat_pipe_desc;


/* Builds a compute pipeline from the embedded SPIR-V. The SPIR-V is checked against the
 * description: the bindings it declares must be exactly 0..n_bindings-1 of set 0 and its
 * push-constant block exactly push_size bytes, else SPLAT_ERR_SHADER naming the shader. */
splat_status splat__pipe_init(splat_gpu *g, splat_pipe *p, const splat_pipe_desc *desc, splat_error *err);
void splat__pipe_free(splat_gpu *g, splat_pipe *p);

/* What a SPIR-V module declares, for the check above (exposed for tests). */
typedef struct splat_spirv_iface {
    uint32_t n_bindings;             /* distinct bindings in set 0 */
    uint32_t max_binding;            /* highest binding number + 1 */
    uint32_t other_sets;             /* bindings in sets other than 0 */
    uint32_t push_size;              /* bytes of the push-constant block, 0 if none */
    uint32_t local_size[3];          /* resolved with the given specialization constants */
} splat_spirv_iface;

splat_status splat__spirv_reflect(const uint32_t *code, size_t size, const uint32_t *spec, uint32_t n_spec,
                                  splat_spirv_iface *out, splat_error *err);

/* ---------------------------------------------------------------- recording */

typedef struct splat_prof splat_prof;
typedef struct splat_stream splat_stream;

typedef struct splat_cmd {
    splat_gpu *gpu;
    VkCommandBuffer cb;              /* may change between calls when a stream commits: never cache it */
    splat_stream *stream;            /* set when encoding on the fly through a stream */
    splat_prof *prof;                /* optional: where splat__cmd_mark writes timestamps */
    splat_error err;                 /* the first recording failure */
    uint64_t dispatches;             /* recorded so far */
} splat_cmd;

void splat__cmd_dispatch(splat_cmd *c, const splat_pipe *p, const splat_view *views, uint32_t n_views,
                         const void *push, uint32_t push_size, uint32_t gx, uint32_t gy, uint32_t gz);
/* Group counts read from args: VkDispatchIndirectCommand (3 x uint32) written by a shader. */
void splat__cmd_dispatch_indirect(splat_cmd *c, const splat_pipe *p, const splat_view *views, uint32_t n_views,
                                  const void *push, uint32_t push_size, splat_view args);
/* One thread per item, in groups of the pipeline's local size x, spread over a 2D grid when
 * the count exceeds the device limit (shaders use splat_global_id() from common.glsl). */
void splat__cmd_dispatch_1d(splat_cmd *c, const splat_pipe *p, const splat_view *views, uint32_t n_views,
                            const void *push, uint32_t push_size, uint64_t items);
/* Makes all earlier compute and transfer writes visible to later compute, transfer and
 * indirect-argument reads. */
void splat__cmd_barrier(splat_cmd *c);
/* Fill and copy, recorded as dispatches of the gpu's own shaders (gpu_copy.glsl), so that they
 * run at the shaders' bandwidth and stay on the compute engine; ordered against other work by
 * splat__cmd_barrier like any dispatch. Offsets and sizes are multiples of 4 (the view's size 0:
 * to the end of the buffer; a copy's size is the source's). */
void splat__cmd_fill(splat_cmd *c, splat_view v, uint32_t value);
void splat__cmd_copy(splat_cmd *c, splat_view src, splat_view dst);
/* Small host data (at most 65536 bytes, multiple of 4) written in command order. */
void splat__cmd_update(splat_cmd *c, splat_view dst, const void *data, uint32_t size);
/* A GPU timestamp named `label` (kept by pointer: use string literals) when a profiler is set. */
void splat__cmd_mark(splat_cmd *c, const char *label);
/* Records a failure into the command (for callers that validate their own arguments). */
void splat__cmd_fail(splat_cmd *c, splat_status st, const char *fmt, ...) SPLAT_PRINTF(3, 4);

/* ---------------------------------------------------------------- the stream */

/* How a stream treats the work recorded so far (seed 002, MPSStream's SyncType):
 *   NONE             keep encoding, submit nothing
 *   COMMIT           submit what is recorded; the host carries on
 *   COMMIT_AND_WAIT  submit and wait until the GPU has finished everything
 *   ADAPTIVE         submit once `threshold` dispatches are pending, so the GPU starts while
 *                    the host keeps encoding */
typedef enum splat_sync {
    SPLAT_SYNC_NONE = 0,
    SPLAT_SYNC_COMMIT,
    SPLAT_SYNC_COMMIT_AND_WAIT,
    SPLAT_SYNC_ADAPTIVE,
} splat_sync;

#define SPLAT_STREAM_MAX_INFLIGHT 64

struct splat_stream {
    splat_gpu *gpu;
    VkQueue queue;                   /* where it submits: the gpu's queue or queue2 */
    VkCommandPool pool;
    VkSemaphore timeline;            /* value n is signalled when submission n completes */
    uint64_t submitted;              /* value of the latest submission */
    struct {
        VkCommandBuffer cb;
        uint64_t value;
    } inflight[SPLAT_STREAM_MAX_INFLIGHT];
    uint32_t n_inflight;
    /* Every command buffer the stream owns can be spare at once: a full flight plus the one
     * being encoded when the flight was full. */
    VkCommandBuffer spare[SPLAT_STREAM_MAX_INFLIGHT + 1];
    uint32_t n_spare;
    splat_cmd cmd;                   /* the command buffer being encoded, when open */
    bool open;
    splat_sync auto_sync;            /* applied after every dispatch: ADAPTIVE (default) or NONE */
    uint32_t threshold;              /* ADAPTIVE's pending-dispatch trigger, default 32 */
    uint32_t pending;                /* dispatches recorded since the last submit */
    uint64_t submits;                /* submissions made so far, of either kind */
    uint64_t waits;                  /* times the host blocked on the GPU (splat__stream_wait) */
    struct {
        VkSemaphore sem;
        uint64_t value;
    } after[2];                      /* what the next submission waits for on the device (splat__stream_after) */
    uint32_t n_after;
};

splat_status splat__stream_init(splat_gpu *g, splat_stream *s, splat_error *err);
/* A stream that submits to `queue` (the gpu's queue or queue2). */
splat_status splat__stream_init_on(splat_gpu *g, VkQueue queue, splat_stream *s, splat_error *err);
/* The stream's next submission waits on the device until timeline `sem` (another stream's) has
 * reached `value`: work of another stream, maybe on another queue, happens-before it, memory
 * included. Waits for a value already reached cost nothing but say so to the validation layers.
 * At most two per submission (a third waits for the next). */
void splat__stream_after(splat_stream *s, VkSemaphore sem, uint64_t value);
void splat__stream_free(splat_stream *s);
/* The command to encode into (opened on first use). */
splat_cmd *splat__stream_cmd(splat_stream *s);
/* Applies a sync kind to what is recorded (see splat_sync). Returns any recording failure. A
 * failure (of the recording or of a submission) returns only after every earlier submission has
 * completed, so the caller's error path may free whatever that work used. */
splat_status splat__stream_sync(splat_stream *s, splat_sync kind, splat_error *err);
/* Waits until submission `value` has completed (0: everything submitted) and recycles what
 * has retired. */
splat_status splat__stream_wait(splat_stream *s, uint64_t value, splat_error *err);
/* Highest submission value known complete (does not wait). */
uint64_t splat__stream_completed(splat_stream *s);
/* splat__stream_wait(s, 0) for a wait known to be short (an image): polls the timeline for up to
 * `poll_s` seconds before blocking, since a blocking wait wakes about 0.02 ms late on the H100.
 * Never polls on a CPU device, whose work needs the cores the poll would take. */
splat_status splat__stream_wait_polled(splat_stream *s, double poll_s, splat_error *err);

/* A recording: a command buffer recorded once and submitted many times (replay). */
typedef struct splat_rec {
    splat_cmd cmd;
    VkCommandPool pool;
    bool ended;
} splat_rec;

splat_status splat__rec_begin(splat_gpu *g, splat_rec *r, splat_error *err);
splat_status splat__rec_end(splat_rec *r, splat_error *err);
void splat__rec_free(splat_gpu *g, splat_rec *r);
/* Submits the recording after whatever the stream holds (which is committed first); returns the
 * submission's value in *value. The recording may be submitted again while earlier
 * submissions of it are still running. */
splat_status splat__stream_replay(splat_stream *s, const splat_rec *r, uint64_t *value, splat_error *err);

/* ------------------------------------------------------------------ timing */

#define SPLAT_PROF_MAX 128

struct splat_prof {
    VkQueryPool pool;
    uint32_t n;
    const char *labels[SPLAT_PROF_MAX];
};

splat_status splat__prof_init(splat_gpu *g, splat_prof *p, splat_error *err);
void splat__prof_free(splat_gpu *g, splat_prof *p);
/* Records the reset of the profiler's queries; call before the first mark of a run. */
void splat__prof_begin(splat_cmd *c, splat_prof *p);
/* After the marked work has completed: ms[i] = time from mark i to mark i+1, i < n-1. */
splat_status splat__prof_read(splat_gpu *g, const splat_prof *p, double *ms, splat_error *err);
/* The same without asking the device to wait, for marks whose submission is known complete: false
 * when it does not have them yet. */
bool splat__prof_peek(splat_gpu *g, const splat_prof *p, double *ms);

#endif
