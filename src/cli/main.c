/* splatc: the command-line tool. Uses the public API (include/splatc.h) only. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "cli.h"

static int fail(const splat_error *err)
{
    fprintf(stderr, "splatc: %s\n", err->msg[0] ? err->msg : splat_status_str(err->status));
    return 1;
}

static int errorf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* A message of the tool's own ("splatc: ..."), and the exit status of a failure. */
static int errorf(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "splatc: ");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    va_end(ap);
    return 1;
}

static int usage_error(const char *cmd, const char *fmt, const char *arg)
{
    fprintf(stderr, "splatc %s: ", cmd);
    fprintf(stderr, fmt, arg);
    fprintf(stderr, " (see splatc %s --help)\n", cmd);
    return 2;
}

/* Parses an unsigned integer argument; false on junk. */
static bool parse_u32(const char *s, uint32_t *out)
{
    if (!s || !*s) return false;
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (*end || errno || v > UINT32_MAX || s[0] == '-') return false;
    *out = (uint32_t)v;
    return true;
}

/* A count option (--steps N and the like): a whole number from 1 to 2^32 - 1, or a usage error
 * (2) naming the option; 0 when it parsed. */
static int count_arg(const char *cmd, const char *opt, const char *v, uint32_t *out)
{
    if (parse_u32(v, out) && *out != 0) return 0;
    fprintf(stderr, "splatc %s: %s needs a whole number from 1 to 4294967295, got '%s' (see splatc %s --help)\n", cmd, opt,
            v ? v : "", cmd);
    return 2;
}

/* Parses "R,G,B", each a finite number in [0, 1]. */
static bool parse_rgb(const char *s, float rgb[3])
{
    if (!s) return false;
    char *end;
    for (int c = 0; c < 3; c++) {
        errno = 0;
        double v = strtod(s, &end);
        if (end == s || errno || !(v >= 0 && v <= 1) || *end != (c < 2 ? ',' : '\0')) return false;
        rgb[c] = (float)v;
        s = end + 1;
    }
    return true;
}

#define STR_(x) #x
#define STR(x) STR_(x)

/* Parses evaluation's scale: a number above 0 and at most SPLAT_EVAL_SCALE_MAX (so not NaN). */
static bool parse_scale(const char *s, float *out)
{
    if (!s || !*s) return false;
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (*end || errno || !(v > 0 && v <= SPLAT_EVAL_SCALE_MAX) || (float)v == 0) return false;
    *out = (float)v;
    return true;
}

static void set_white(splat_train_desc *desc)
{
    desc->background = SPLAT_BACKGROUND_COLOR;
    desc->render.background[0] = desc->render.background[1] = desc->render.background[2] = 1.0f;
}

static bool make_dir(const char *path)
{
    if (mkdir(path, 0755) == 0 || errno == EEXIST) return true;
    fprintf(stderr, "splatc: %s: cannot create directory: %s\n", path, strerror(errno));
    return false;
}

/* Loads a scene file in any format splatc reads, printing its warning (another trainer's extra
 * PLY properties, say); false, with the error printed, when it cannot. */
static bool load_scene(const char *path, splat_scene *scene)
{
    splat_error err = {0};
    splat_load_info info;
    if (splat_scene_load(path, scene, &info, &err) != SPLAT_OK) {
        fail(&err);
        return false;
    }
    if (info.warning[0]) fprintf(stderr, "splatc: warning: %s\n", info.warning);
    return true;
}

/* An output folder, checked before any work: created when missing, with any missing folders above
 * it (as mkdir -p), refused when it is a file or cannot be written in. A run that fails removes
 * what it created, if that is still empty. */
typedef struct out_dir {
    const char *path;
    size_t created; /* the length of the highest folder it created (0: none) */
} out_dir;

/* After a failed run: the folders it created, deepest first, each only if empty (rmdir leaves any
 * other alone). */
static void out_failed(const out_dir *d)
{
    if (!d->created) return;
    char sub[1100];
    snprintf(sub, sizeof sub, "%s/renders", d->path);
    rmdir(sub);
    snprintf(sub, sizeof sub, "%s", d->path);
    for (size_t n = strlen(sub); n >= d->created; n--) {
        if (sub[n] != '/' && sub[n] != 0) continue;
        sub[n] = 0;
        if (n && sub[n - 1] != '/') rmdir(sub);
    }
}

#define OUT_FLAG "the output folder, -o"

/* Each name a run will write in its folder (a trailing '/' marks a folder), checked before the
 * work: a folder where a file goes (or a file where a folder goes) would otherwise be found when
 * the run writes it, at the end of a long one. A file's name may be a link (the write renames over
 * the link), a folder's a link to a folder. */
static bool out_names_free(const char *dir, const char *const *names)
{
    for (const char *const *n = names; n && *n; n++) {
        size_t len = strlen(*n);
        bool folder = len && (*n)[len - 1] == '/';
        char path[1400]; /* out_open's folder (under 1100) and a render's name (under 300) */
        snprintf(path, sizeof path, "%s/%.*s", dir, (int)(folder ? len - 1 : len), *n);
        struct stat st;
        if ((folder ? stat(path, &st) : lstat(path, &st)) != 0) continue;
        if (folder ? S_ISDIR(st.st_mode) : S_ISREG(st.st_mode) || S_ISLNK(st.st_mode)) continue;
        fprintf(stderr, "splatc: %s: exists and is not a %s, and this run writes it: move it away first\n", path,
                folder ? "folder" : "file");
        return false;
    }
    return true;
}

/* what: how the user named it ("the output folder, -o"), for the message of a file in its place;
 * names: what the run will write in it (out_names_free), or NULL. */
static bool out_open(out_dir *d, const char *path, const char *what, const char *const *names)
{
    d->path = path;
    d->created = 0;
    struct stat st;
    if (stat(path, &st) == 0 && !S_ISDIR(st.st_mode)) {
        fprintf(stderr, "splatc: %s: exists and is not a folder (%s)\n", path, what);
        return false;
    }
    if (!path[0]) {
        fprintf(stderr, "splatc: the output folder's name is empty\n");
        return false;
    }
    char dir[1100];
    if (snprintf(dir, sizeof dir, "%s", path) >= (int)sizeof dir) {
        fprintf(stderr, "splatc: %.64s...: the output folder's name is too long\n", path);
        return false;
    }
    /* each folder on the way down, then the folder itself */
    for (size_t n = 1;; n++) {
        char c = dir[n];
        if (c != '/' && c != 0) continue;
        dir[n] = 0;
        if (dir[n - 1] != '/' && mkdir(dir, 0755) == 0) {
            if (!d->created) d->created = n;
        } else if (dir[n - 1] != '/' && errno != EEXIST) {
            fprintf(stderr, "splatc: %s: cannot create the output folder: %s%s%s\n", path, c ? dir : "", c ? ": " : "",
                    strerror(errno));
            out_failed(d);
            return false;
        }
        dir[n] = c;
        if (!c) break;
    }
    char probe[1100];
    snprintf(probe, sizeof probe, "%s/.splatc-write-test-XXXXXX", path);
    int fd = mkstemp(probe);
    if (fd < 0) {
        fprintf(stderr, "splatc: %s: cannot write in the output folder: %s\n", path, strerror(errno));
        out_failed(d);
        return false;
    }
    close(fd);
    unlink(probe);
    if (!out_names_free(path, names)) {
        out_failed(d);
        return false;
    }
    return true;
}

typedef struct common_opts {
    splat_ctx_desc ctx;
    bool quiet;
} common_opts;

/* Options every command takes; returns 1 when `argv[*i]` was one, -1 on a bad value. */
static int common_option(const char *cmd, int argc, char **argv, int *i, common_opts *o)
{
    const char *a = argv[*i];
    if (strcmp(a, "--device") == 0) {
        if (*i + 1 >= argc || !parse_u32(argv[*i + 1], &o->ctx.device_index))
            return usage_error(cmd, "--device needs a device index, got '%s'", *i + 1 < argc ? argv[*i + 1] : ""), -1;
        o->ctx.choose_device = true;
        (*i)++;
        return 1;
    }
    if (strcmp(a, "--validate") == 0) return o->ctx.validation = true, 1;
    if (strcmp(a, "--quiet") == 0 || strcmp(a, "-q") == 0) return o->quiet = true, 1;
    return 0;
}

static const char k_common_help[] = "  --device N          use Vulkan device N (see splatc info; also SPLAT_DEVICE=N)\n"
                                    "  --validate          Vulkan validation layers on (also SPLAT_VALIDATE=1)\n"
                                    "  -q, --quiet         no progress output\n";

/* ------------------------------------------------------------------- info */

static int cmd_info(int argc, char **argv)
{
    common_opts o = {0};
    for (int i = 2; i < argc; i++) {
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            printf("usage: splatc info [options]\n\nLists the Vulkan devices, picks one and checks that it renders like the\n"
                   "CPU reference.\n\n%s", k_common_help);
            return 0;
        }
        int r = common_option("info", argc, argv, &i, &o);
        if (r < 0) return 2;
        if (r == 0) return usage_error("info", "unknown option '%s'", argv[i]);
    }
    splat_error err = {0};
    splat_device_info devs[16];
    uint32_t n = 0;
    if (splat_devices(devs, 16, &n, &err) != SPLAT_OK) return fail(&err);
    printf("splatc %s\n", splat_version());
    for (uint32_t k = 0; k < n && k < 16; k++)
        printf("device %u: %s (%s, %s), subgroup %u, %.1f GiB, max storage binding %.0f MiB%s%s\n", devs[k].index, devs[k].name,
               devs[k].type, devs[k].driver, devs[k].subgroup_size, devs[k].memory_bytes / 1073741824.0,
               devs[k].max_storage_range / 1048576.0, devs[k].unified_memory ? ", unified memory" : "",
               devs[k].float_atomics ? "" : ", no float atomics");
    splat_ctx *ctx;
    if (splat_ctx_init(&ctx, &o.ctx, &err) != SPLAT_OK) return fail(&err);
    splat_device_info d;
    splat_ctx_device(ctx, &d);
    printf("using device %u: %s\n", d.index, d.name);
    double max_error = 0;
    splat_status st = splat_ctx_selfcheck(ctx, &max_error, &err);
    if (st == SPLAT_OK) printf("self-check: GPU render matches the CPU reference (max error %.2e)\n", max_error);
    splat_ctx_free(ctx);
    return st == SPLAT_OK ? 0 : fail(&err);
}

/* ------------------------------------------------------------------ train */

/* "12.3 it/s  ETA 4m05s", or "-- it/s  ETA --" until the rate is known. */
static void rate_text(const splat_train_progress *p, char *out, size_t size)
{
    if (p->iters_per_sec <= 0) {
        snprintf(out, size, "-- it/s  ETA --");
        return;
    }
    unsigned eta = (unsigned)p->eta_sec;
    snprintf(out, size, "%.1f it/s  ETA %um%02us", p->iters_per_sec, eta / 60, eta % 60);
}

static void progress_bar(void *user, const splat_train_progress *p)
{
    (void)user;
    static int tty = -1;
    static uint32_t last_tenth = 0;
    if (tty < 0) tty = isatty(2);
    char rate[64];
    rate_text(p, rate, sizeof rate);
    if (!tty) {
        /* a log, not a terminal: a line every tenth of the run, and the last step */
        uint32_t tenth = p->steps ? (uint32_t)((uint64_t)10 * p->step / p->steps) : 0;
        if (tenth == last_tenth && p->step != p->steps) return;
        last_tenth = tenth;
        fprintf(stderr, "step %u/%u  loss %.4f  psnr %.2f  %u Gaussians  %s\n", p->step, p->steps, p->loss, p->psnr,
                p->n_gaussians, rate);
        return;
    }
    int width = 24, filled = p->steps ? (int)((uint64_t)width * p->step / p->steps) : 0;
    char bar[32];
    for (int k = 0; k < width; k++) bar[k] = k < filled ? '#' : '.';
    bar[width] = '\0';
    fprintf(stderr, "\r[%s] %u/%u  loss %.4f  psnr %.2f  %u Gaussians  %s   ", bar, p->step, p->steps, p->loss, p->psnr,
            p->n_gaussians, rate);
    fflush(stderr);
}

/* Bytes as GiB, or MiB below one GiB ("0.00 GiB" said nothing on small scenes). */
static void bytes_text(uint64_t bytes, char *out, size_t size)
{
    if (bytes >= (1ull << 30)) snprintf(out, size, "%.2f GiB", bytes / 1073741824.0);
    else snprintf(out, size, "%.1f MiB", bytes / 1048576.0);
}

/* The default strategy's refine counts, once it has refined (metrics.json and the log's lines). */
static void add_refines(cJSON *j, const splat_train_progress *p)
{
    if (!p->refines) return;
    cJSON_AddNumberToObject(j, "refines", p->refines);
    cJSON_AddNumberToObject(j, "refines_in_place", p->refines_in_place);
    cJSON_AddNumberToObject(j, "cloned", p->cloned);
    cJSON_AddNumberToObject(j, "split", p->split);
    cJSON_AddNumberToObject(j, "pruned", p->pruned);
}

/* Room in `ev` for every view's results (the evaluated views are some of the dataset's, or all);
 * the caller frees ev->views. */
static splat_status eval_views_alloc(const splat_trainer *t, splat_eval_result *ev, splat_error *err)
{
    uint32_t n = splat_trainer_views(t, NULL, 0);
    ev->views = calloc(n ? n : 1, sizeof *ev->views);
    ev->views_cap = ev->views ? n : 0;
    if (ev->views) return SPLAT_OK;
    snprintf(err->msg, sizeof err->msg, "out of host memory for the results of %u views", n);
    return err->status = SPLAT_ERR_OUT_OF_HOST_MEMORY;
}

/* metrics.json; `scale` is evaluation's (splatc eval --scale), 0 where there is none to record. */
static bool write_metrics(const char *path, const splat_eval_result *ev, const splat_train_progress *prog, uint32_t steps,
                          uint32_t n_gaussians, double seconds, uint64_t peak, const char *device, double scale,
                          splat_error *err)
{
    cJSON *j = cJSON_CreateObject();
    cJSON_AddStringToObject(j, "device", device);
    if (scale > 0) cJSON_AddNumberToObject(j, "scale", scale);
    cJSON_AddNumberToObject(j, "steps", steps);
    cJSON_AddNumberToObject(j, "train_seconds", seconds);
    cJSON_AddNumberToObject(j, "iters_per_sec", seconds > 0 ? steps / seconds : 0);
    cJSON_AddNumberToObject(j, "n_gaussians", n_gaussians);
    cJSON_AddNumberToObject(j, "peak_gpu_memory_bytes", (double)peak);
    cJSON_AddNumberToObject(j, "eval_views", ev->n_views);
    cJSON_AddNumberToObject(j, "psnr", ev->psnr);
    cJSON_AddNumberToObject(j, "psnr_full", ev->psnr_full);
    cJSON_AddNumberToObject(j, "ssim", ev->ssim);
    cJSON_AddNumberToObject(j, "l1", ev->l1);
    cJSON_AddNumberToObject(j, "final_train_loss", prog ? prog->loss : 0);
    if (prog) add_refines(j, prog);
    if (prog && prog->memory_cap_step) {
        cJSON_AddNumberToObject(j, "memory_cap", prog->memory_cap);
        cJSON_AddNumberToObject(j, "memory_cap_step", prog->memory_cap_step);
    }
    /* each view's results, in the order evaluated: which views score badly */
    cJSON *views = cJSON_AddArrayToObject(j, "views");
    for (uint32_t k = 0; views && k < ev->n_views && k < ev->views_cap; k++) {
        cJSON *v = cJSON_CreateObject();
        cJSON_AddStringToObject(v, "name", ev->views[k].name);
        cJSON_AddNumberToObject(v, "psnr", ev->views[k].psnr);
        cJSON_AddNumberToObject(v, "ssim", ev->views[k].ssim);
        cJSON_AddNumberToObject(v, "l1", ev->views[k].l1);
        cJSON_AddNumberToObject(v, "psnr_full", ev->views[k].psnr_full);
        cJSON_AddItemToArray(views, v);
    }
    char *text = cJSON_Print(j);
    cJSON_Delete(j);
    if (!text) return false;
    bool ok = splat_write_file(path, text, strlen(text), err) == SPLAT_OK;
    cJSON_free(text);
    return ok;
}

/* --log FILE: a JSON object a line, appended with one write(2) each, so that a plot can follow a
 * run and a killed run leaves whole lines (docs/TRAIN.md, "Stopping, saving and logging a run"). */
typedef struct train_log {
    int fd;                  /* -1: no log */
    const char *path;
    splat_ctx *ctx;
    double start;
    uint32_t last_step;      /* lines go in increasing steps */
    bool wrote, failed;
} train_log;

static double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + 1e-9 * ts.tv_nsec;
}

/* A line for progress `p` (NULL: no iteration retired in this run), with the evaluation `ev` when
 * there was one. */
static void log_line(train_log *lg, uint32_t step, const splat_train_progress *p, const splat_eval_result *ev)
{
    if (lg->fd < 0 || lg->failed || (lg->wrote && step <= lg->last_step)) return;
    cJSON *j = cJSON_CreateObject();
    cJSON_AddNumberToObject(j, "step", step);
    if (p) {
        cJSON_AddNumberToObject(j, "loss", p->loss);
        cJSON_AddNumberToObject(j, "train_psnr", p->psnr);
        cJSON_AddNumberToObject(j, "gaussians", p->n_gaussians);
        cJSON_AddNumberToObject(j, "it_per_sec", p->iters_per_sec);
        add_refines(j, p);
    }
    if (ev) {
        cJSON_AddNumberToObject(j, "eval_views", ev->n_views);
        cJSON_AddNumberToObject(j, "psnr", ev->psnr);
        cJSON_AddNumberToObject(j, "psnr_full", ev->psnr_full);
        cJSON_AddNumberToObject(j, "ssim", ev->ssim);
        cJSON_AddNumberToObject(j, "l1", ev->l1);
    }
    uint64_t in_use, peak;
    splat_ctx_memory(lg->ctx, &in_use, &peak);
    cJSON_AddNumberToObject(j, "gpu_memory_bytes", (double)in_use);
    cJSON_AddNumberToObject(j, "peak_gpu_memory_bytes", (double)peak);
    cJSON_AddNumberToObject(j, "seconds", now_seconds() - lg->start);
    char *text = cJSON_PrintUnformatted(j);
    cJSON_Delete(j);
    size_t n = text ? strlen(text) : 0;
    char *line = text ? realloc(text, n + 2) : NULL;
    if (line) {
        line[n] = '\n', line[n + 1] = '\0';
        lg->failed = write(lg->fd, line, n + 1) != (ssize_t)(n + 1);
    } else {
        free(text);
        lg->failed = true;
    }
    free(line);
    if (lg->failed) fprintf(stderr, "\nsplatc: warning: %s: cannot append to the log (%s); no more lines\n", lg->path, strerror(errno));
    lg->wrote = true;
    lg->last_step = step;
}

typedef struct train_ui {
    bool quiet;
    train_log log;
} train_ui;

static splat_train_progress g_last;
static splat_viewer *g_viewer; /* the run's viewer, when it has one */
static void remember(void *user, const splat_train_progress *p)
{
    if (p->memory_cap_step && !g_last.memory_cap_step)
        fprintf(stderr, "%ssplatc: warning: GPU memory is full: from step %u the model grows no further than fits "
                        "(%u Gaussians now); --max-gaussians sets a cap of your own\n",
                ((train_ui *)user)->quiet ? "" : "\n", p->memory_cap_step, p->memory_cap);
    g_last = *p;
    if (g_viewer) splat_viewer_progress(g_viewer, p);
    train_ui *ui = user;
    if (!ui->quiet) progress_bar(NULL, p);
    /* the last step's line waits for the evaluation */
    if (p->step < p->steps) log_line(&ui->log, p->step, p, NULL);
}

/* The scene as OUT/<ply> and, with `ckpt`, a checkpoint as OUT/checkpoint.ckpt. */
static splat_status save_state(splat_trainer *t, const char *out, const char *ply, bool ckpt, splat_error *err)
{
    char path[1100];
    splat_scene scene = {0};
    splat_status st = splat_trainer_scene(t, &scene, err);
    if (st == SPLAT_OK) {
        snprintf(path, sizeof path, "%s/%s", out, ply);
        st = splat_scene_save_ply(path, &scene, err);
    }
    splat_scene_free(&scene);
    if (st == SPLAT_OK && ckpt) {
        snprintf(path, sizeof path, "%s/checkpoint.ckpt", out);
        st = splat_trainer_save(t, path, err);
    }
    return st;
}

/* OUT/cameras.json: every view's camera as training renders it, in the original 3DGS form (with
 * splatc's principal point and exact translation), named as its image less the extension, so that
 * `splatc render OUT/point_cloud.ply --cameras OUT/cameras.json` renders the training views. */
static splat_status write_cameras_json(splat_trainer *t, const char *out, splat_error *err)
{
    uint32_t n = splat_trainer_views(t, NULL, 0);
    splat_view_info *views = calloc(n ? n : 1, sizeof *views);
    splat_camera *cams = calloc(n ? n : 1, sizeof *cams);
    char **names = calloc(n ? n : 1, sizeof *names);
    splat_status st = views && cams && names ? SPLAT_OK : SPLAT_ERR_OUT_OF_HOST_MEMORY;
    if (st == SPLAT_OK) splat_trainer_views(t, views, n);
    for (uint32_t k = 0; k < n && st == SPLAT_OK; k++) {
        cams[k] = views[k].camera;
        names[k] = strdup(views[k].name);
        if (!names[k]) st = SPLAT_ERR_OUT_OF_HOST_MEMORY;
        else if (strrchr(names[k], '.') && strrchr(names[k], '.') > names[k]) *strrchr(names[k], '.') = '\0';
    }
    char path[1100];
    snprintf(path, sizeof path, "%s/cameras.json", out);
    if (st == SPLAT_OK) st = splat_write_cameras(path, cams, (const char *const *)names, n, err);
    else snprintf(err->msg, sizeof err->msg, "out of host memory for cameras.json"), err->status = st;
    for (uint32_t k = 0; names && k < n; k++) free(names[k]);
    free(names);
    free(cams);
    free(views);
    return st;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* A training camera far from all the others is most often a bad pose (a registration gone wrong,
 * a typo in a hand-written file); it sets the scene scale, and with it the learning rates and
 * densification (gsplat's rule, the farthest camera from their mean), and so ruins the run. Warned
 * about, not refused: a capture may have one camera far out on purpose. */
static void warn_far_cameras(splat_trainer *t)
{
    uint32_t n = splat_trainer_views(t, NULL, 0), m = 0;
    splat_view_info *views = calloc(n ? n : 1, sizeof *views);
    double *c = calloc(3 * (size_t)(n ? n : 1), sizeof *c), *axis = calloc(n ? n : 1, sizeof *axis);
    uint32_t *view_of = calloc(n ? n : 1, sizeof *view_of);
    if (!views || !c || !axis || !view_of) goto done;
    splat_trainer_views(t, views, n);
    for (uint32_t k = 0; k < n; k++) {
        if (views[k].is_test) continue;
        const splat_camera *cam = &views[k].camera;
        for (int i = 0; i < 3; i++) /* the centre -R^T t */
            c[3 * m + i] = -((double)cam->R[i] * cam->t[0] + (double)cam->R[3 + i] * cam->t[1] + (double)cam->R[6 + i] * cam->t[2]);
        view_of[m++] = k;
    }
    if (m < 4) goto done;
    double mid[3];
    for (int i = 0; i < 3; i++) { /* the median centre, axis by axis: an outlier does not move it */
        for (uint32_t k = 0; k < m; k++) axis[k] = c[3 * k + i];
        qsort(axis, m, sizeof *axis, cmp_double);
        mid[i] = axis[m / 2];
    }
    uint32_t far = 0;
    double far_d = -1;
    for (uint32_t k = 0; k < m; k++) {
        double dist = sqrt(pow(c[3 * k] - mid[0], 2) + pow(c[3 * k + 1] - mid[1], 2) + pow(c[3 * k + 2] - mid[2], 2));
        if (dist > far_d) far_d = dist, far = view_of[k];
        axis[k] = dist;
    }
    qsort(axis, m, sizeof *axis, cmp_double);
    double median = axis[m / 2];
    if (median > 0 && far_d > 20 * median)
        fprintf(stderr, "splatc: warning: image \"%s\": its camera is %.3gx farther from the cameras' middle than the "
                        "median camera; a bad pose? The scene scale, and with it the learning rates and densification, "
                        "follows the farthest camera\n", views[far].name, far_d / median);
done:
    free(views), free(c), free(axis), free(view_of);
}

/* The next step at which the loop has something to do: a checkpoint, a --save-every PLY, the end. */
static uint32_t next_stop(uint32_t step, uint32_t steps, uint32_t ckpt_every, uint32_t save_every)
{
    uint32_t until = steps;
    if (ckpt_every && (step / ckpt_every + 1) * (uint64_t)ckpt_every < until) until = (step / ckpt_every + 1) * ckpt_every;
    if (save_every && (step / save_every + 1) * (uint64_t)save_every < until) until = (step / save_every + 1) * save_every;
    return until;
}

/* ------------------------------------------------------------------ the viewer */

/* --viewer [P], --port P: 0 asks for any free port (printed). */
static bool parse_port(const char *s, uint32_t *port)
{
    uint32_t p;
    if (!parse_u32(s, &p) || p > 65535) return false;
    *port = p == 0 ? SPLAT_VIEWER_PORT_ANY : p;
    return true;
}

static void viewer_banner(const splat_viewer *v, const char *host)
{
    fprintf(stderr, "splatc: viewer at http://%s:%u/\n", host ? host : "127.0.0.1", splat_viewer_port(v));
    if (host && strcmp(host, "127.0.0.1") != 0)
        fprintf(stderr, "splatc: warning: the viewer has no password: whoever reaches %s:%u can watch, pause and save\n",
                host, splat_viewer_port(v));
}

/* With a viewer, training runs in pieces of about a second, so that the page's pause and
 * save-now act soon; between two pieces the ring is drained, which changes no result. */
static uint32_t viewer_piece_end(uint32_t step, uint32_t until)
{
    double rate = g_last.iters_per_sec;
    uint32_t piece = rate > 0 ? (uint32_t)fmin(fmax(rate, 1.0), 5000.0) : 10;
    return step + piece < until ? step + piece : until;
}

/* Between two pieces of training: what the pages asked for. Holds training while they have it
 * paused; save-now writes OUT/point_cloud_STEP.ply (a failed save is a warning, not the end of
 * the run). */
static void viewer_between_pieces(splat_viewer *v, splat_trainer *t, const char *out, run_control *rc)
{
    splat_viewer_control_state c;
    do {
        splat_viewer_control(v, 100, &c);
        if (!c.save) continue;
        char path[1100], note[1300];
        snprintf(path, sizeof path, "%s/point_cloud_%u.ply", out, splat_trainer_step(t));
        splat_error err = {0};
        splat_scene scene = {0};
        splat_status st = splat_trainer_scene(t, &scene, &err);
        if (st == SPLAT_OK) st = splat_scene_save_ply(path, &scene, &err);
        splat_scene_free(&scene);
        if (st == SPLAT_OK) snprintf(note, sizeof note, "wrote %s", path);
        else snprintf(note, sizeof note, "save failed: %s", err.msg);
        fprintf(stderr, "\nsplatc: viewer: %s\n", note);
        splat_viewer_note(v, note);
    } while (c.paused && !runctl_stopping(rc)); /* Ctrl-C ends a pause too */
}

static int cmd_train(int argc, char **argv)
{
    common_opts o = {0};
    splat_train_desc desc = {.seed = 42};
    const char *out = NULL, *resume = NULL, *log_path = NULL;
    bool seed_given = false;
    uint32_t ckpt_every = 0, save_every = 0;
    bool renders = true;
    bool use_viewer = false;
    splat_viewer_desc vd = {0};
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            printf("usage: splatc train DATA -o OUT [options]\n\n"
                   "Trains Gaussians on a COLMAP or NeRF-synthetic scene and writes OUT/point_cloud.ply,\n"
                   "OUT/metrics.json (PSNR/SSIM on held-out views: the means, then each view's under \"views\"),\n"
                   "OUT/renders/*.png (named after the images) and OUT/cameras.json (every view's camera, the\n"
                   "original 3DGS form: splatc render takes it).\n"
                   "Ctrl-C (or SIGTERM) stops after the current iteration and writes OUT/point_cloud.ply and\n"
                   "OUT/checkpoint.ckpt (exit 130, or 143); again, it quits at once. SIGUSR1 writes them and\n"
                   "goes on.\n\n"
                   "  -o, --output DIR    output folder (created, with any missing folders above it)\n"
                   "  --steps N           training steps (default 30000)\n"
                   "  --eval              hold out every 8th image of a COLMAP scene for evaluation\n"
                   "  --images-factor N   use images_N/ (or images/ downsampled by N); intrinsics follow\n"
                   "  --sh-degree D       spherical harmonics degree 0..3 (default 3)\n"
                   "  --strategy S        densification: default (gsplat's: clone, split, prune) or mcmc (gsplat's\n"
                   "                      MCMCStrategy: relocate, add up to --max-gaussians, noise, regularisers)\n"
                   "  --max-gaussians N   densification makes at most N Gaussians (default: no limit; mcmc: 1000000)\n"
                   "  --refine-start N, --refine-every N, --refine-stop N\n"
                   "                      densify every N steps after step START until STOP (default 500, 100,\n"
                   "                      15000; mcmc: 25000)\n"
                   "  --max-gaussians-per-tile N   depth-sorted per-tile cap (default 0: none)\n"
                   "  --antialiased       antialiased rasterization (gsplat's, Mip-Splatting's 2D filter): renders at\n"
                   "                      other resolutions alias less. The PLY records it; render and eval use it,\n"
                   "                      and --resume and --init-ply keep it\n"
                   "  --selective-adam    Adam moves only the Gaussians each step renders (gsplat's visible_adam):\n"
                   "                      faster on scenes seen from many sides, other results (docs/TRAIN.md)\n"
                   "  --white-background  composite on white (the default for images with alpha, e.g. NeRF-synthetic)\n"
                   "  --background R,G,B  composite on this colour, each in [0,1] (default black, or white for images\n"
                   "                      with alpha)\n"
                   "  --random-background a random background colour every step\n"
                   "  --seed N            run seed (default 42)\n"
                   "  --init-points N     random initial points when the scene has none (default 100000)\n"
                   "  --identity-quats    start every Gaussian unrotated (the original 3DGS) instead of gsplat's\n"
                   "                      random rotations\n"
                   "  --init-ply FILE     start from these Gaussians (any scene file: .ply, .compressed.ply, .splat,\n"
                   "                      .spz, .sog, meta.json)\n"
                   "  --checkpoint-every N  write OUT/checkpoint.ckpt every N steps (and at the end)\n"
                   "  --save-every N      write OUT/point_cloud_<step>.ply every N steps\n"
                   "  --resume FILE       continue from a checkpoint (its Gaussians, SH degree and seed;\n"
                   "                      --init-ply is not read again)\n"
                   "  --log FILE          append a JSON line of step, loss, Gaussians, it/s, GPU memory at every\n"
                   "                      progress report (4 a second), and the held-out PSNR at the end\n"
                   "  --no-renders        do not write test-view renders\n"
                   "  --profile           print the GPU time of each stage per iteration\n"
                   "  --viewer [P]        watch and steer the run in a browser: http://127.0.0.1:P/ (default port\n"
                   "                      8765; 0: any free port); pause, resume and save-now there\n"
                   "  --viewer-host H     the viewer listens on address H (e.g. 0.0.0.0: every interface; it has no\n"
                   "                      password) instead of 127.0.0.1\n%s",
                   k_common_help);
            return 0;
        }
        int r = common_option("train", argc, argv, &i, &o);
        if (r < 0) return 2;
        if (r) continue;
        bool takes_value = true;
        if ((strcmp(a, "-o") == 0 || strcmp(a, "--output") == 0) && v) out = v;
        else if (strcmp(a, "--steps") == 0) {
            if (count_arg("train", a, v, &desc.steps)) return 2;
        } else if (strcmp(a, "--images-factor") == 0) {
            if (count_arg("train", a, v, &desc.images_factor)) return 2;
        } else if (strcmp(a, "--sh-degree") == 0) {
            uint32_t d;
            if (!parse_u32(v, &d) || d > 3) return usage_error("train", "--sh-degree takes 0..3, got '%s'", v ? v : "");
            desc.render.sh_degree = d == 0 ? SPLAT_SH_DEGREE_0 : d;
        } else if (strcmp(a, "--strategy") == 0) {
            if (v && strcmp(v, "default") == 0) desc.strategy = SPLAT_STRATEGY_DEFAULT;
            else if (v && strcmp(v, "mcmc") == 0) desc.strategy = SPLAT_STRATEGY_MCMC;
            else return usage_error("train", "--strategy takes default or mcmc, got '%s'", v ? v : "");
        } else if (strcmp(a, "--max-gaussians") == 0) {
            if (count_arg("train", a, v, &desc.max_gaussians)) return 2;
        } else if (strcmp(a, "--refine-start") == 0 || strcmp(a, "--refine-every") == 0 || strcmp(a, "--refine-stop") == 0) {
            uint32_t *field = strcmp(a, "--refine-start") == 0   ? &desc.refine_start
                              : strcmp(a, "--refine-every") == 0 ? &desc.refine_every
                                                                 : &desc.refine_stop;
            if (count_arg("train", a, v, field)) return 2;
        } else if (strcmp(a, "--max-gaussians-per-tile") == 0) {
            if (!parse_u32(v, &desc.render.max_gaussians_per_tile)) return usage_error("train", "--max-gaussians-per-tile needs a number, got '%s'", v ? v : "");
        } else if (strcmp(a, "--background") == 0) {
            if (!parse_rgb(v, desc.render.background)) return usage_error("train", "--background expects R,G,B in [0,1], got '%s'", v ? v : "");
            desc.background = SPLAT_BACKGROUND_COLOR;
        } else if (strcmp(a, "--seed") == 0) {
            uint32_t s;
            if (!parse_u32(v, &s)) return usage_error("train", "--seed needs a number, got '%s'", v ? v : "");
            desc.seed = s;
            seed_given = true;
        } else if (strcmp(a, "--init-points") == 0) {
            if (count_arg("train", a, v, &desc.init_points)) return 2;
        } else if (strcmp(a, "--init-ply") == 0 && v) desc.init_ply = v;
        else if (strcmp(a, "--checkpoint-every") == 0) {
            if (count_arg("train", a, v, &ckpt_every)) return 2;
        } else if (strcmp(a, "--save-every") == 0) {
            if (count_arg("train", a, v, &save_every)) return 2;
        } else if (strcmp(a, "--log") == 0 && v) log_path = v;
        else if (strcmp(a, "--resume") == 0 && v) resume = v;
        else if (strcmp(a, "--viewer-host") == 0 && v) vd.host = v, use_viewer = true;
        else if (strcmp(a, "--viewer") == 0) {
            /* the port is optional: a number after --viewer is one */
            use_viewer = true;
            takes_value = v && v[0] >= '0' && v[0] <= '9';
            if (takes_value && !parse_port(v, &vd.port)) return usage_error("train", "--viewer takes a port 0..65535, got '%s'", v);
        } else {
            takes_value = false;
            if (strcmp(a, "--eval") == 0) desc.eval = true;
            else if (strcmp(a, "--white-background") == 0) set_white(&desc);
            else if (strcmp(a, "--random-background") == 0) desc.background = SPLAT_BACKGROUND_RANDOM;
            else if (strcmp(a, "--antialiased") == 0) desc.render.rasterize_mode = SPLAT_RASTERIZE_ANTIALIASED;
            else if (strcmp(a, "--selective-adam") == 0) desc.selective_adam = true;
            else if (strcmp(a, "--identity-quats") == 0) desc.identity_quats = true;
            else if (strcmp(a, "--no-renders") == 0) renders = false;
            else if (strcmp(a, "--profile") == 0) desc.profile = true;
            else if (a[0] != '-' && !desc.data) desc.data = a;
            else return usage_error("train", "unknown or incomplete option '%s'", a);
        }
        if (takes_value) i++;
    }
    if (!desc.data) return usage_error("train", "%sno dataset folder given", "");
    if (!out) return usage_error("train", "%sno output folder given (-o OUT)", "");
    /* the starting Gaussians are read (and their warning printed) before anything is created */
    splat_scene init = {0};
    if (desc.init_ply) {
        if (!load_scene(desc.init_ply, &init)) return 1;
        desc.init_scene = &init;
    }
    out_dir od;
    const char *writes[] = {"point_cloud.ply", "checkpoint.ckpt", "cameras.json", "metrics.json", renders ? "renders/" : NULL, NULL};
    if (!out_open(&od, out, OUT_FLAG, writes)) {
        splat_scene_free(&init);
        return 1;
    }
    train_ui ui = {.quiet = o.quiet, .log = {.fd = -1, .path = log_path}};
    if (log_path && (ui.log.fd = open(log_path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644)) < 0) {
        fprintf(stderr, "splatc: %s: cannot open the log for appending: %s\n", log_path, strerror(errno));
        splat_scene_free(&init);
        out_failed(&od);
        return 1;
    }
    desc.progress = remember;
    desc.progress_user = &ui;
    /* before the first thread (the driver's): they must not take the signals */
    static run_control rc;
    if (!runctl_start(&rc)) {
        fprintf(stderr, "splatc: cannot set up the signal handling: %s\n", strerror(errno));
        splat_scene_free(&init);
        out_failed(&od);
        return 1;
    }

    splat_error err = {0};
    splat_ctx *ctx;
    if (splat_ctx_init(&ctx, &o.ctx, &err) != SPLAT_OK) {
        splat_scene_free(&init);
        out_failed(&od);
        return fail(&err);
    }
    ui.log.ctx = ctx;
    splat_device_info dev;
    splat_ctx_device(ctx, &dev);
    if (!o.quiet) fprintf(stderr, "splatc: training on %s (%s)\n", dev.name, dev.type);
    splat_trainer *t = NULL;
    splat_viewer *viewer = NULL;
    /* the viewer first: a port in use is an error before any work */
    splat_status st = use_viewer ? splat_viewer_init(&viewer, ctx, &vd, &err) : SPLAT_OK;
    if (st == SPLAT_OK && viewer) viewer_banner(viewer, vd.host);
    if (st == SPLAT_OK) st = splat_trainer_init(&t, ctx, &desc, &err);
    splat_scene_free(&init); /* the trainer has its copy */
    if (st == SPLAT_OK && resume) st = splat_trainer_resume(t, resume, &err);
    /* the same command line with --resume passes the same --seed; another is refused, not dropped */
    if (st == SPLAT_OK && resume && seed_given && splat_trainer_seed(t) != desc.seed) {
        snprintf(err.msg, sizeof err.msg, "%s: the checkpoint's run has seed %llu, --seed asks for %llu (a resume keeps the "
                 "seed: leave --seed out, or give the same)", resume, (unsigned long long)splat_trainer_seed(t),
                 (unsigned long long)desc.seed);
        st = err.status = SPLAT_ERR_INVALID_ARG;
    }
    if (st == SPLAT_OK) st = write_cameras_json(t, out, &err);
    if (st == SPLAT_OK) warn_far_cameras(t);
    if (st == SPLAT_OK && desc.max_gaussians && splat_trainer_count(t) > desc.max_gaussians)
        fprintf(stderr, "splatc: warning: the run starts with %u Gaussians, more than --max-gaussians %u: none are "
                        "removed to meet it, and densification adds none\n", splat_trainer_count(t), desc.max_gaussians);
    if (st == SPLAT_OK && viewer) st = splat_viewer_attach(viewer, t, &err);
    g_viewer = viewer;
    char path[1024];
    double start = now_seconds();
    ui.log.start = start;
    uint32_t steps = st == SPLAT_OK ? splat_trainer_steps(t) : 0;
    uint32_t first_step = st == SPLAT_OK ? splat_trainer_step(t) : 0, diag_seen = 0;
    /* The loop's control points: between runs, each ending at a checkpoint, a --save-every PLY,
     * the end, or a request of run control (which interrupts the run at a step boundary). */
    int stop_signal = 0;
    /* the last checkpoint written and its count; where the run failed */
    uint32_t ckpt_step = 0, ckpt_count = 0, fail_step = 0, fail_count = 0;
    bool ran = false;
    if (st == SPLAT_OK) runctl_attach(&rc, t);
    while (st == SPLAT_OK && splat_trainer_step(t) < steps) {
        uint32_t until = next_stop(splat_trainer_step(t), steps, ckpt_every, save_every);
        if (viewer) until = viewer_piece_end(splat_trainer_step(t), until);
        st = splat_trainer_run(t, until, &err);
        ran = true;
        fail_step = splat_trainer_step(t);
        fail_count = splat_trainer_count(t);
        char diag[1024];
        uint32_t n_diag = t ? splat_trainer_diagnostics(t, diag, sizeof diag) : 0;
        if (n_diag > diag_seen) fprintf(stderr, "\nsplatc: warning at step %u: %s\n", splat_trainer_step(t), diag);
        diag_seen = n_diag;
        if (st != SPLAT_OK) break;
        bool save_now;
        runctl_take(&rc, &stop_signal, &save_now);
        if (stop_signal) break;
        uint32_t step = splat_trainer_step(t);
        if (step == until && ckpt_every && (step % ckpt_every == 0 || step == steps)) {
            snprintf(path, sizeof path, "%s/checkpoint.ckpt", out);
            st = splat_trainer_save(t, path, &err);
            if (st == SPLAT_OK) ckpt_step = step, ckpt_count = splat_trainer_count(t);
        }
        if (st == SPLAT_OK && step == until && save_every && step % save_every == 0) {
            char name[64];
            snprintf(name, sizeof name, "point_cloud_%u.ply", step);
            st = save_state(t, out, name, false, &err);
        }
        if (st == SPLAT_OK && save_now) {
            st = save_state(t, out, "point_cloud.ply", true, &err);
            if (st == SPLAT_OK && !o.quiet) fprintf(stderr, "\nsplatc: saved at step %u\n", step);
        }
        if (st == SPLAT_OK && viewer) viewer_between_pieces(viewer, t, out, &rc);
    }
    /* the page keeps the last snapshot; the trainer is done with the viewer */
    if (viewer && t) splat_viewer_attach(viewer, NULL, NULL);
    double seconds = now_seconds() - start;
    if (st == SPLAT_OK && !stop_signal) runctl_take(&rc, &stop_signal, &(bool){false});
    if (st == SPLAT_OK && stop_signal) {
        /* Ctrl-C or SIGTERM: keep the work, skip the evaluation. A second signal still quits at once. */
        st = save_state(t, out, "point_cloud.ply", true, &err);
        uint32_t step = splat_trainer_step(t);
        runctl_attach(&rc, NULL);
        g_viewer = NULL;
        splat_viewer_free(viewer);
        splat_trainer_free(t);
        splat_ctx_free(ctx);
        if (ui.log.fd >= 0) close(ui.log.fd);
        if (st != SPLAT_OK) return fail(&err);
        printf("stopped at step %u of %u: wrote %s/point_cloud.ply and %s/checkpoint.ckpt\n"
               "to go on, run the same command with --resume %s/checkpoint.ckpt\n", step, steps, out, out, out);
        return 128 + stop_signal;
    }
    /* from here a signal quits at once: the PLY comes next, then the evaluation */
    runctl_attach(&rc, NULL);
    if (!o.quiet && st == SPLAT_OK) fprintf(stderr, "\n");
    splat_scene scene = {0};
    if (st == SPLAT_OK) st = splat_trainer_scene(t, &scene, &err);
    if (st == SPLAT_OK) {
        snprintf(path, sizeof path, "%s/point_cloud.ply", out);
        st = splat_scene_save_ply(path, &scene, &err);
    }
    splat_eval_result ev = {0};
    if (st == SPLAT_OK) st = eval_views_alloc(t, &ev, &err);
    if (st == SPLAT_OK) {
        char rdir[1024];
        snprintf(rdir, sizeof rdir, "%s/renders", out);
        if (renders && !make_dir(rdir)) st = SPLAT_ERR_IO;
        if (st == SPLAT_OK) st = splat_trainer_eval(t, renders ? rdir : NULL, &ev, &err);
    }
    if (st == SPLAT_OK) {
        uint64_t peak;
        splat_ctx_memory(ctx, NULL, &peak);
        snprintf(path, sizeof path, "%s/metrics.json", out);
        if (!write_metrics(path, &ev, &g_last, steps - first_step, scene.count, seconds, peak, dev.name, 0, &err)) st = SPLAT_ERR_IO;
        log_line(&ui.log, steps, g_last.steps ? &g_last : NULL, &ev);
        char mem[32], masked_note[64] = "";
        bytes_text(peak, mem, sizeof mem);
        if (ev.psnr_full != ev.psnr) snprintf(masked_note, sizeof masked_note, " (masks; every pixel: PSNR %.2f)", ev.psnr_full);
        if (st == SPLAT_OK && !o.quiet)
            printf("trained %u steps in %.1f s (%.1f it/s): %u Gaussians, peak GPU memory %s\n"
                   "held-out views (%u): PSNR %.2f  SSIM %.4f  L1 %.4f%s\nwrote %s/point_cloud.ply, %s/metrics.json%s\n",
                   steps - first_step, seconds, seconds > 0 ? (steps - first_step) / seconds : 0, scene.count, mem,
                   ev.n_views, ev.psnr, ev.ssim, ev.l1, masked_note, out, out, renders ? ", renders/" : "");
    }
    if (st == SPLAT_OK && desc.profile) {
        splat_stage_time stages[64];
        uint32_t n = splat_trainer_profile(t, stages, 64);
        double total = 0;
        for (uint32_t k = 0; k < n; k++) total += stages[k].ms;
        printf("GPU time per iteration by stage (ms):\n");
        for (uint32_t k = 0; k < n; k++) printf("  %-16s %9.3f  %5.1f%%\n", stages[k].name, stages[k].ms, total > 0 ? 100 * stages[k].ms / total : 0);
        printf("  %-16s %9.3f\n", "total", total);
        printf("tile-list entries padded (the two tile tests disagreeing; expected 0): %llu\n",
               (unsigned long long)g_last.isect_padded);
    }
    splat_scene_free(&scene);
    free(ev.views);
    g_viewer = NULL;
    splat_viewer_free(viewer);
    splat_trainer_free(t);
    splat_ctx_free(ctx);
    if (ui.log.fd >= 0) close(ui.log.fd);
    if (st != SPLAT_OK) {
        if (!o.quiet) fprintf(stderr, "\n");
        out_failed(&od);
        fail(&err);
        if (ran && err.status == SPLAT_ERR_OUT_OF_DEVICE_MEMORY) {
            /* The model outgrew the GPU: say where, and how to go on within it. MCMC's failed adding
             * leaves the model as it was, so its count is a cap that fits (a refine whose scratch does
             * not fit is skipped, not failed: docs/TRAIN.md, "When the GPU is full"); the default
             * strategy's count moves both ways, and the peak of its refine holds more than the
             * model. A checkpoint is worth going on from only where it holds no more than the cap:
             * neither strategy removes Gaussians to meet one. */
            uint32_t n = fail_count, cap = desc.strategy == SPLAT_STRATEGY_MCMC ? n : (uint32_t)((uint64_t)n * 4 / 5);
            if (cap != n && cap >= 10000) cap -= cap % 1000;
            fprintf(stderr, "splatc: out of GPU memory after step %u of %u, at %u Gaussians; cap their number, "
                            "e.g. --max-gaussians %u",
                    fail_step, steps, n, cap ? cap : 1);
            if (ckpt_step && ckpt_count <= cap)
                fprintf(stderr, ", and go on from step %u with --resume %s/checkpoint.ckpt\n", ckpt_step, out);
            else if (ckpt_step)
                fprintf(stderr, ", and start again: the checkpoint of step %u holds %u Gaussians, more than that\n", ckpt_step,
                        ckpt_count);
            else
                fprintf(stderr, " (--checkpoint-every N keeps a checkpoint to go on from)\n");
        } else if (err.status == SPLAT_ERR_OUT_OF_DEVICE_MEMORY) {
            /* Before the first step: the starting model and the buffers for the largest image. The
             * images are not it (they stay in host memory when they do not fit the device). */
            uint32_t f = desc.images_factor > 1 ? desc.images_factor : 1;
            fprintf(stderr, "splatc: out of GPU memory before the first step: the starting Gaussians and the buffers "
                            "for images of this size do not fit; smaller images need less (--images-factor %u)\n",
                    2 * f);
        }
        return 1;
    }
    return 0;
}

/* ------------------------------------------------------------------ render */

static bool parse_camera(const char *s, splat_camera *c)
{
    /* W,H,fx,fy,cx,cy,qw,qx,qy,qz,tx,ty,tz: COLMAP's world-to-camera quaternion and translation */
    double v[13];
    int n = 0;
    const char *p = s;
    while (n < 13 && *p) {
        char *end;
        v[n++] = strtod(p, &end);
        if (end == p) return false;
        p = *end == ',' ? end + 1 : end;
    }
    if (n != 13 || *p) return false;
    /* sizes are whole numbers the renderer takes; everything a finite float, focal lengths positive */
    for (int k = 0; k < 13; k++)
        if (!isfinite(v[k]) || fabs(v[k]) > 3.4e38) return false;
    for (int k = 0; k < 2; k++)
        if (!(v[k] >= 1 && v[k] <= 16384 && v[k] == floor(v[k]))) return false;
    if (!(v[2] > 0 && v[3] > 0)) return false;
    memset(c, 0, sizeof *c);
    c->width = (uint32_t)v[0];
    c->height = (uint32_t)v[1];
    c->fx = (float)v[2], c->fy = (float)v[3], c->cx = (float)v[4], c->cy = (float)v[5];
    double w = v[6], x = v[7], y = v[8], z = v[9], q = sqrt(w * w + x * x + y * y + z * z);
    if (!(q > 0)) return false;
    w /= q, x /= q, y /= q, z /= q;
    double R[9] = {1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y), 2 * (x * y + w * z), 1 - 2 * (x * x + z * z),
                   2 * (y * z - w * x), 2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)};
    for (int k = 0; k < 9; k++) c->R[k] = (float)R[k];
    for (int k = 0; k < 3; k++) c->t[k] = (float)v[10 + k];
    return true;
}

/* Names a render after its camera's image: '/' made '_', an image extension dropped. False when a
 * name cannot be a file name (empty, too long) or two are the same: the renders are numbered then. */
static bool render_names(char **names, uint32_t n)
{
    for (uint32_t k = 0; k < n; k++) {
        char *s = names[k];
        for (char *c = s; *c; c++)
            if (*c == '/' || *c == '\\') *c = '_';
        size_t len = strlen(s);
        const char *exts[] = {".png", ".jpg", ".jpeg"};
        for (size_t e = 0; e < sizeof exts / sizeof *exts; e++) {
            size_t le = strlen(exts[e]);
            if (len > le && strcasecmp(s + len - le, exts[e]) == 0) {
                s[len - le] = '\0';
                break;
            }
        }
        if (!*s || strlen(s) > 200) return false;
        for (uint32_t j = 0; j < k; j++)
            if (strcmp(names[j], s) == 0) return false;
    }
    return true;
}

/* The name of camera k's image in the output folder. */
static void render_name(char *buf, size_t size, uint32_t k, bool frames, bool named, char *const *names)
{
    if (frames) snprintf(buf, size, "frame_%04u.png", k);
    else if (named) snprintf(buf, size, "%s.png", names[k]);
    else snprintf(buf, size, "render_%04u.png", k);
}

/* Whether "W" "x" "H" parses, each 1..16384. */
static bool parse_size(const char *s, uint32_t *w, uint32_t *h)
{
    char a[32];
    const char *x = s ? strchr(s, 'x') : NULL;
    if (!x || (size_t)(x - s) >= sizeof a) return false;
    memcpy(a, s, (size_t)(x - s));
    a[x - s] = '\0';
    return parse_u32(a, w) && parse_u32(x + 1, h) && *w >= 1 && *h >= 1 && *w <= 16384 && *h <= 16384;
}

static bool parse_vec3(const char *s, double v[3])
{
    if (!s) return false;
    char *end;
    for (int c = 0; c < 3; c++) {
        errno = 0;
        v[c] = strtod(s, &end);
        if (end == s || errno || !isfinite(v[c]) || *end != (c < 2 ? ',' : '\0')) return false;
        s = end + 1;
    }
    return v[0] != 0 || v[1] != 0 || v[2] != 0;
}

/* `splatc render`'s batches of cameras: at most this many, holding at most this many bytes of
 * float images (one camera at least, whatever its size). */
#define RENDER_BATCH 64
#define RENDER_BATCH_BYTES (256ull << 20)
#define RENDER_WRITERS 16

/* A batch's PNGs, written on up to RENDER_WRITERS threads (one a core): deflate is most of a
 * render's time past the GPU (24 ms for a 799x532 image on one core of the development machine,
 * where the H100 renders it in under 1). Thread t writes images t, t + T, ...; each keeps its own
 * status. The paths are distinct (render_names refuses repeated names). */
typedef struct png_batch {
    uint32_t count, threads;
    char (*path)[1300];
    float **img;
    const splat_camera *cams;
    splat_status *st;
    splat_error *err;
} png_batch;

typedef struct png_writer {
    png_batch *b;
    uint32_t t;
} png_writer;

static void *png_write_some(void *user)
{
    png_writer *w = user;
    png_batch *b = w->b;
    for (uint32_t k = w->t; k < b->count; k += b->threads)
        b->st[k] = splat_write_png(b->path[k], b->img[k], NULL, b->cams[k].width, b->cams[k].height, &b->err[k]);
    return NULL;
}

static void png_write_batch(png_batch *b)
{
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    b->threads = b->count < RENDER_WRITERS ? b->count : RENDER_WRITERS;
    if (cores >= 1 && (uint64_t)cores < b->threads) b->threads = (uint32_t)cores;
    pthread_t th[RENDER_WRITERS];
    png_writer w[RENDER_WRITERS];
    bool started[RENDER_WRITERS] = {false};
    for (uint32_t t = 0; t < b->threads; t++) {
        w[t] = (png_writer){b, t};
        if (t > 0) started[t] = pthread_create(&th[t], NULL, png_write_some, &w[t]) == 0;
    }
    /* this thread writes stride 0, and any stride whose thread did not start */
    for (uint32_t t = 0; t < b->threads; t++)
        if (!started[t]) png_write_some(&w[t]);
    for (uint32_t t = 1; t < b->threads; t++)
        if (started[t]) pthread_join(th[t], NULL);
}

static int cmd_render(int argc, char **argv)
{
    common_opts o = {0};
    const char *ply = NULL, *cams_path = NULL, *path_file = NULL, *out = NULL;
    splat_camera one;
    bool have_one = false, no_video = false;
    uint32_t orbit = 0, fps = 30;
    orbit_desc od_orbit = {0};
    splat_render_desc rd = {0};
    bool antialiased = false;
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            printf("usage: splatc render SCENE (--cameras FILE | --camera W,H,fx,fy,cx,cy,qw,qx,qy,qz,tx,ty,tz |\n"
                   "                                --orbit N [--cameras FILE] | --path FILE) -o DIR\n\n"
                   "Renders PNG images of SCENE (.ply, .compressed.ply, .splat, .spz, .sog or meta.json). FILE: a\n"
                   "cameras.json, splatc's own form or the original 3DGS one (which splatc train writes to\n"
                   "OUT/cameras.json). --cameras: DIR/NAME.png after each camera's image\n"
                   "(DIR/render_NNNN.png when the names are missing or repeat); --camera: DIR/render_0000.png.\n"
                   "A flythrough: DIR/frame_NNNN.png, the frames' cameras as DIR/path.json, and DIR/video.mp4\n"
                   "when ffmpeg is on the PATH.\n\n"
                   "  --orbit N           N frames on a circle around the scene, looking at its centre: the\n"
                   "                      circle of the --cameras (where they look, their mean up, height and\n"
                   "                      distance), else one from the scene's bounds (README.md, Flythroughs)\n"
                   "  --path FILE         one frame per camera of FILE, in order (all of one size)\n"
                   "  --size WxH          frame size of a flythrough (default: the first camera's; 800x600)\n"
                   "  --up X,Y,Z          the scene's up for --orbit (default: the cameras' mean up; +z)\n"
                   "  --fps N             frames a second of the video (default 30)\n"
                   "  --no-video          frames only\n"
                   "  --sh-degree D       active SH degree (default: all the scene has)\n"
                   "  --background R,G,B  background colour in [0,1] (default 0,0,0)\n"
                   "  --max-gaussians-per-tile N\n"
                   "  --antialiased       antialiased rasterization (default: the mode the scene was trained in,\n"
                   "                      which its PLY records)\n"
                   "  --sh-half           store SH coefficients as half floats on the GPU (half the memory)\n%s",
                   k_common_help);
            return 0;
        }
        int r = common_option("render", argc, argv, &i, &o);
        if (r < 0) return 2;
        if (r) continue;
        if ((strcmp(a, "-o") == 0 || strcmp(a, "--output") == 0) && v) out = v, i++;
        else if (strcmp(a, "--cameras") == 0 && v) cams_path = v, i++;
        else if (strcmp(a, "--path") == 0 && v) path_file = v, i++;
        else if (strcmp(a, "--camera") == 0 && v) {
            if (!parse_camera(v, &one))
                return usage_error("render", "--camera expects W,H,fx,fy,cx,cy,qw,qx,qy,qz,tx,ty,tz (W and H whole, 1..16384; "
                                   "fx, fy positive; all finite; a nonzero quaternion), got '%s'", v);
            have_one = true;
            i++;
        } else if (strcmp(a, "--orbit") == 0) {
            if (!parse_u32(v, &orbit) || orbit == 0 || orbit > 100000) return usage_error("render", "--orbit takes 1..100000 frames, got '%s'", v ? v : "");
            i++;
        } else if (strcmp(a, "--size") == 0) {
            if (!parse_size(v, &od_orbit.width, &od_orbit.height)) return usage_error("render", "--size expects WxH, each 1..16384, got '%s'", v ? v : "");
            i++;
        } else if (strcmp(a, "--up") == 0) {
            if (!parse_vec3(v, od_orbit.up)) return usage_error("render", "--up expects X,Y,Z, finite and not all 0, got '%s'", v ? v : "");
            od_orbit.have_up = true;
            i++;
        } else if (strcmp(a, "--fps") == 0) {
            if (!parse_u32(v, &fps) || fps == 0 || fps > 1000) return usage_error("render", "--fps takes 1..1000, got '%s'", v ? v : "");
            i++;
        } else if (strcmp(a, "--sh-degree") == 0) {
            uint32_t d;
            if (!parse_u32(v, &d) || d > 3) return usage_error("render", "--sh-degree takes 0..3, got '%s'", v ? v : "");
            rd.sh_degree = d == 0 ? SPLAT_SH_DEGREE_0 : d;
            i++;
        } else if (strcmp(a, "--max-gaussians-per-tile") == 0) {
            if (!parse_u32(v, &rd.max_gaussians_per_tile)) return usage_error("render", "--max-gaussians-per-tile needs a number, got '%s'", v ? v : "");
            i++;
        } else if (strcmp(a, "--background") == 0 && v) {
            if (!parse_rgb(v, rd.background)) return usage_error("render", "--background expects R,G,B in [0,1], got '%s'", v);
            i++;
        } else if (strcmp(a, "--sh-half") == 0) rd.sh_half = true;
        else if (strcmp(a, "--antialiased") == 0) antialiased = true;
        else if (strcmp(a, "--no-video") == 0) no_video = true;
        else if (a[0] != '-' && !ply) ply = a;
        else return usage_error("render", "unknown or incomplete option '%s'", a);
    }
    if (!ply) return usage_error("render", "%sno scene given", "");
    if (!out) return usage_error("render", "%sno output folder given (-o DIR)", "");
    bool frames = orbit || path_file;
    if ((int)have_one + (int)(cams_path && !orbit) + (int)(orbit > 0) + (int)(path_file != NULL) != 1)
        return usage_error("render", "%sgive one of --cameras, --camera, --orbit N (with --cameras or without) and --path", "");
    if (!frames && (od_orbit.width || od_orbit.have_up || no_video))
        return usage_error("render", "%s--size, --up and --no-video are for --orbit and --path", "");
    if (path_file && od_orbit.have_up) return usage_error("render", "%s--up is for --orbit", "");
    splat_error err = {0};
    splat_scene scene = {0};
    if (!load_scene(ply, &scene)) return 1;
    if (scene.count == 0) fprintf(stderr, "splatc: warning: %s has no Gaussians: every render is the background\n", ply);
    rd.rasterize_mode = antialiased ? SPLAT_RASTERIZE_ANTIALIASED : scene.rasterize_mode;
    splat_camera *cams = &one, *given = NULL;
    char **names = NULL;
    uint32_t n = 1, n_given = 0;
    const char *source = path_file ? path_file : cams_path;
    int rc = 0;
    if (source && splat_read_cameras_named(source, &given, &names, &n_given, &err) != SPLAT_OK) rc = fail(&err);
    if (rc == 0 && orbit) {
        char msg[256];
        od_orbit.frames = n = orbit;
        cams = calloc(orbit, sizeof *cams);
        if (!cams) rc = fail(&(splat_error){SPLAT_ERR_OUT_OF_HOST_MEMORY, "out of host memory"});
        else if (!orbit_cameras(&scene, given, n_given, &od_orbit, cams, msg, sizeof msg))
            rc = errorf("--orbit%s%s: %s", cams_path ? " around " : "", cams_path ? cams_path : "", msg);
    } else if (rc == 0 && source) {
        cams = given, n = n_given;
        for (uint32_t k = 1; path_file && k < n && rc == 0; k++)
            if (cams[k].width != cams[0].width || cams[k].height != cams[0].height)
                rc = errorf("%s: camera %u is %ux%u, camera 0 %ux%u: a path's frames share one size", path_file, k,
                            cams[k].width, cams[k].height, cams[0].width, cams[0].height);
        /* a path at another size: the same fields of view */
        for (uint32_t k = 0; path_file && od_orbit.width && k < n && rc == 0; k++) {
            double sx = (double)od_orbit.width / cams[k].width, sy = (double)od_orbit.height / cams[k].height;
            cams[k].fx = (float)(cams[k].fx * sx), cams[k].cx = (float)(cams[k].cx * sx);
            cams[k].fy = (float)(cams[k].fy * sy), cams[k].cy = (float)(cams[k].cy * sy);
            cams[k].width = od_orbit.width, cams[k].height = od_orbit.height;
        }
    }
    bool named = rc == 0 && !frames && cams_path && render_names(names, n);
    bool video = rc == 0 && frames && !no_video && ffmpeg_on_path();
    if (rc == 0 && frames && !no_video && !video)
        fprintf(stderr, "splatc: ffmpeg is not on the PATH: the frames only, no video\n");
    splat_ctx *ctx = NULL;
    out_dir od = {0};
    if (rc == 0 && splat_ctx_init(&ctx, &o.ctx, &err) != SPLAT_OK) rc = fail(&err);
    /* every camera and the scene checked before the first image is written; each message names
     * its file */
    if (rc == 0 && splat_render_check(ctx, &scene, NULL, 0, &rd, &err) != SPLAT_OK) rc = errorf("%s: %s", ply, err.msg);
    if (rc == 0 && splat_render_check(ctx, NULL, cams, n, &rd, &err) != SPLAT_OK) {
        if (source && !orbit) rc = n > 1 ? errorf("%s, %s", source, err.msg) : errorf("%s, camera 0: %s", source, err.msg);
        else if (orbit) rc = errorf("--orbit: %s", err.msg);
        else rc = errorf("--camera: %s", err.msg);
    }
    if (rc == 0 && !out_open(&od, out, OUT_FLAG, frames ? (const char *const[]){"path.json", video ? "video.mp4" : NULL, NULL} : NULL))
        rc = 1;
    for (uint32_t k = 0; k < n && rc == 0; k++) {
        char name[300];
        render_name(name, sizeof name, k, frames, named, names);
        if (!out_names_free(out, (const char *const[]){name, NULL})) rc = 1, out_failed(&od);
    }
    /* Cameras in batches of up to RENDER_BATCH_BYTES of images: the scene goes to the GPU once a
     * batch and splat_render replays one recording for its cameras, where a call per camera
     * uploaded the whole scene for every image. */
    for (uint32_t k0 = 0, k1; k0 < n && rc == 0; k0 = k1) {
        uint64_t bytes = 0;
        for (k1 = k0; k1 < n && k1 - k0 < RENDER_BATCH; k1++) {
            uint64_t b = (uint64_t)cams[k1].width * cams[k1].height * 12;
            if (k1 > k0 && bytes + b > RENDER_BATCH_BYTES) break;
            bytes += b;
        }
        float *img[RENDER_BATCH] = {0};
        if (splat_render(ctx, &scene, &cams[k0], k1 - k0, &rd, img, &err) != SPLAT_OK) {
            if (source && !orbit) fprintf(stderr, "splatc: %s, cameras %u-%u: %s\n", source, k0, k1 - 1, err.msg);
            else if (orbit) fprintf(stderr, "splatc: --orbit, frames %u-%u: %s\n", k0, k1 - 1, err.msg);
            else fprintf(stderr, "splatc: --camera: %s\n", err.msg);
            rc = 1;
        }
        static char path[RENDER_BATCH][1300];
        splat_status wst[RENDER_BATCH];
        splat_error werr[RENDER_BATCH] = {{0}}; /* splat__fail keeps the first error: each starts clear */
        for (uint32_t k = k0; k < k1; k++) {
            char name[300];
            render_name(name, sizeof name, k, frames, named, names);
            snprintf(path[k - k0], sizeof path[0], "%s/%s", out, name);
        }
        if (rc == 0) png_write_batch(&(png_batch){.count = k1 - k0, .path = path, .img = img, .cams = &cams[k0],
                                                  .st = wst, .err = werr});
        /* Every image of the batch was tried (each written whole or not at all): each failure is
         * reported, each image written is named, in camera order; no later batch is rendered. */
        bool batch_ok = rc == 0;
        for (uint32_t k = k0; k < k1 && batch_ok; k++) {
            if (wst[k - k0] != SPLAT_OK) rc = fail(&werr[k - k0]);
            else if (!o.quiet && !frames) printf("wrote %s\n", path[k - k0]);
            else if (!o.quiet && k + 1 == n && rc == 0) printf("wrote %u frames: %s/frame_NNNN.png\n", n, out);
        }
        for (uint32_t k = k0; k < k1; k++) splat_free(img[k - k0]);
    }
    if (rc == 0 && frames) {
        char path[1100];
        snprintf(path, sizeof path, "%s/path.json", out);
        if (splat_write_cameras(path, cams, NULL, n, &err) != SPLAT_OK) rc = fail(&err);
    }
    if (rc == 0 && video) {
        char msg[1300];
        if (!video_encode(out, n, fps, msg, sizeof msg)) rc = errorf("%s", msg);
        else if (!o.quiet) printf("wrote %s/video.mp4\n", out);
    }
    splat_ctx_free(ctx);
    if (cams != &one && cams != given) free(cams);
    splat_free(given);
    splat_free(names);
    splat_scene_free(&scene);
    if (rc != 0 && od.path) out_failed(&od);
    return rc;
}

/* ------------------------------------------------------------------- view */

static volatile sig_atomic_t g_stop_view;
static void on_stop_view(int sig)
{
    (void)sig;
    g_stop_view = 1;
}

static int cmd_view(int argc, char **argv)
{
    common_opts o = {0};
    const char *ply = NULL, *cams_path = NULL;
    splat_viewer_desc vd = {0};
    splat_render_desc rd = {0};
    bool antialiased = false;
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            printf("usage: splatc view SCENE [--cameras cameras.json] [--port P] [options]\n\n"
                   "Serves a viewer of the scene at http://127.0.0.1:P/ until Ctrl-C: open it in a browser.\n"
                   "Frames are rendered on the GPU here and sent as JPEG.\n\n"
                   "  --port P            port (default 8765; 0: any free port, printed)\n"
                   "  --viewer-host H     listen on address H (e.g. 0.0.0.0: every interface; the viewer has no\n"
                   "                      password) instead of 127.0.0.1\n"
                   "  --cameras FILE      cameras to list and draw (splatc's cameras.json or the original 3DGS one)\n"
                   "  --max-fps N         frames per second per browser at most (default 30)\n"
                   "  --sh-degree D       active SH degree (default: all the scene has)\n"
                   "  --background R,G,B  background colour in [0,1] (default 0,0,0)\n"
                   "  --max-gaussians-per-tile N\n"
                   "  --antialiased       antialiased rasterization (default: the mode the scene was trained in,\n"
                   "                      which its PLY records)\n"
                   "  --sh-half           store SH coefficients as half floats on the GPU\n%s",
                   k_common_help);
            return 0;
        }
        int r = common_option("view", argc, argv, &i, &o);
        if (r < 0) return 2;
        if (r) continue;
        if (strcmp(a, "--port") == 0) {
            if (!parse_port(v, &vd.port)) return usage_error("view", "--port takes 0..65535, got '%s'", v ? v : "");
            i++;
        } else if (strcmp(a, "--viewer-host") == 0 && v) vd.host = v, i++;
        else if (strcmp(a, "--cameras") == 0 && v) cams_path = v, i++;
        else if (strcmp(a, "--max-fps") == 0) {
            if (!parse_u32(v, &vd.max_fps) || vd.max_fps == 0 || vd.max_fps > 240)
                return usage_error("view", "--max-fps takes 1..240, got '%s'", v ? v : "");
            i++;
        } else if (strcmp(a, "--sh-degree") == 0) {
            uint32_t d;
            if (!parse_u32(v, &d) || d > 3) return usage_error("view", "--sh-degree takes 0..3, got '%s'", v ? v : "");
            rd.sh_degree = d == 0 ? SPLAT_SH_DEGREE_0 : d;
            i++;
        } else if (strcmp(a, "--max-gaussians-per-tile") == 0) {
            if (!parse_u32(v, &rd.max_gaussians_per_tile)) return usage_error("view", "--max-gaussians-per-tile needs a number, got '%s'", v ? v : "");
            i++;
        } else if (strcmp(a, "--background") == 0 && v) {
            if (!parse_rgb(v, rd.background)) return usage_error("view", "--background expects R,G,B in [0,1], got '%s'", v);
            i++;
        } else if (strcmp(a, "--sh-half") == 0) rd.sh_half = true;
        else if (strcmp(a, "--antialiased") == 0) antialiased = true;
        else if (a[0] != '-' && !ply) ply = a;
        else return usage_error("view", "unknown or incomplete option '%s'", a);
    }
    if (!ply) return usage_error("view", "%sno scene given", "");
    splat_error err = {0};
    splat_scene scene = {0};
    if (!load_scene(ply, &scene)) return 1;
    rd.rasterize_mode = antialiased ? SPLAT_RASTERIZE_ANTIALIASED : scene.rasterize_mode;
    splat_camera *cams = NULL;
    uint32_t n = 0;
    if (cams_path && splat_read_cameras(cams_path, &cams, &n, &err) != SPLAT_OK) {
        splat_scene_free(&scene);
        return fail(&err);
    }
    splat_ctx *ctx = NULL;
    splat_viewer *viewer = NULL;
    splat_status st = splat_ctx_init(&ctx, &o.ctx, &err);
    if (st == SPLAT_OK) st = splat_viewer_init(&viewer, ctx, &vd, &err);
    if (st == SPLAT_OK && n) st = splat_viewer_set_cameras(viewer, cams, NULL, n, &err);
    if (st == SPLAT_OK) st = splat_viewer_set_scene(viewer, &scene, &rd, &err);
    if (st == SPLAT_OK) {
        viewer_banner(viewer, vd.host);
        fprintf(stderr, "splatc: showing %s (%u Gaussians); Ctrl-C to stop\n", ply, scene.count);
        struct sigaction sa = {.sa_handler = on_stop_view};
        sigemptyset(&sa.sa_mask);
        sigaction(SIGINT, &sa, NULL);
        sigaction(SIGTERM, &sa, NULL);
        while (!g_stop_view) {
            struct timespec ts = {0, 100 * 1000 * 1000};
            nanosleep(&ts, NULL);
        }
    }
    splat_viewer_free(viewer);
    splat_ctx_free(ctx);
    splat_free(cams);
    splat_scene_free(&scene);
    return st == SPLAT_OK ? 0 : fail(&err);
}

/* ------------------------------------------------------------------- eval */

static int cmd_eval(int argc, char **argv)
{
    common_opts o = {0};
    splat_train_desc desc = {0};
    const char *out = NULL;
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            printf("usage: splatc eval SCENE DATA [--eval] [--images-factor N] [--antialiased] [--scale S] [-o DIR]\n\n"
                   "Renders the held-out views of DATA from SCENE (any scene file splatc reads) and prints\n"
                   "PSNR and SSIM;\n"
                   "with -o, writes the renders and metrics.json (the means, then each view's under \"views\")\n"
                   "there. It renders in the mode the scene was trained in (a PLY records it), or\n"
                   "antialiased with --antialiased.\n\n"
                   "  --scale S           render each view at S times its size (round(S w) x round(S h), the\n"
                   "                      intrinsics scaled with it), against its image resampled to that\n"
                   "                      size: area averaging below 1, bicubic (Keys, a = -0.5) above, on the\n"
                   "                      8-bit sRGB values as stored (no conversion to linear light); images\n"
                   "                      with alpha are composited on the background first. S in (0, %d],\n"
                   "                      default 1 (no resampling). Mip-Splatting's multi-scale evaluation:\n"
                   "                      how a scene trained at one resolution (--antialiased or not) holds\n"
                   "                      up at others\n\n%s",
                   SPLAT_EVAL_SCALE_MAX, k_common_help);
            return 0;
        }
        int r = common_option("eval", argc, argv, &i, &o);
        if (r < 0) return 2;
        if (r) continue;
        if ((strcmp(a, "-o") == 0 || strcmp(a, "--output") == 0) && v) out = v, i++;
        else if (strcmp(a, "--images-factor") == 0) {
            if (count_arg("eval", a, v, &desc.images_factor)) return 2;
            i++;
        } else if (strcmp(a, "--scale") == 0) {
            if (!parse_scale(v, &desc.eval_scale))
                return usage_error("eval", "--scale takes a number above 0 and at most " STR(SPLAT_EVAL_SCALE_MAX) ", got '%s'", v ? v : "");
            i++;
        } else if (strcmp(a, "--eval") == 0) desc.eval = true;
        else if (strcmp(a, "--white-background") == 0) set_white(&desc);
        else if (strcmp(a, "--antialiased") == 0) desc.render.rasterize_mode = SPLAT_RASTERIZE_ANTIALIASED;
        else if (a[0] != '-' && !desc.init_ply) desc.init_ply = a;
        else if (a[0] != '-' && !desc.data) desc.data = a;
        else return usage_error("eval", "unknown or incomplete option '%s'", a);
    }
    if (!desc.init_ply || !desc.data) return usage_error("eval", "%sneeds SCENE and DATA", "");
    splat_scene scene = {0};
    if (!load_scene(desc.init_ply, &scene)) return 1;
    desc.init_scene = &scene;
    out_dir od = {0};
    static const char *const writes[] = {"metrics.json", "renders/", NULL};
    if (out && !out_open(&od, out, OUT_FLAG, writes)) {
        splat_scene_free(&scene);
        return 1;
    }
    splat_error err = {0};
    splat_ctx *ctx;
    if (splat_ctx_init(&ctx, &o.ctx, &err) != SPLAT_OK) {
        splat_scene_free(&scene);
        out_failed(&od);
        return fail(&err);
    }
    splat_trainer *t = NULL;
    splat_eval_result ev = {0};
    splat_status st = splat_trainer_init(&t, ctx, &desc, &err);
    splat_scene_free(&scene); /* the trainer has its copy */
    char rdir[1024];
    if (out) snprintf(rdir, sizeof rdir, "%s/renders", out);
    if (st == SPLAT_OK && out && !make_dir(rdir)) st = SPLAT_ERR_IO;
    if (st == SPLAT_OK && out) st = eval_views_alloc(t, &ev, &err);
    /* a loaded scene is evaluated with every SH degree it has */
    if (st == SPLAT_OK) st = splat_trainer_eval(t, out ? rdir : NULL, &ev, &err);
    if (st == SPLAT_OK) {
        printf("%u views: PSNR %.3f  SSIM %.4f  L1 %.4f", ev.n_views, ev.psnr, ev.ssim, ev.l1);
        if (desc.eval_scale && desc.eval_scale != 1) printf("  (at scale %g)", (double)desc.eval_scale);
        if (ev.psnr_full != ev.psnr) printf("  (masks; every pixel: PSNR %.3f)", ev.psnr_full);
        printf("\n");
        if (out) {
            char path[1024];
            snprintf(path, sizeof path, "%s/metrics.json", out);
            splat_device_info dev;
            splat_ctx_device(ctx, &dev);
            if (!write_metrics(path, &ev, NULL, 0, 0, 0, 0, dev.name, desc.eval_scale ? desc.eval_scale : 1, &err)) st = SPLAT_ERR_IO;
        }
    }
    free(ev.views);
    splat_trainer_free(t);
    splat_ctx_free(ctx);
    if (st != SPLAT_OK) out_failed(&od);
    return st == SPLAT_OK ? 0 : fail(&err);
}

/* ---------------------------------------------------------------- convert */

static int cmd_convert(int argc, char **argv)
{
    common_opts o = {0};
    const char *in = NULL, *out = NULL;
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            printf("usage: splatc convert IN OUT\n\n"
                   "Converts Gaussians between scene files, each format chosen by the file's name:\n"
                   "  .ply             the 3DGS layout (reads ASCII, double, other trainers' PLYs, and\n"
                   "                   compressed PLYs by their content)\n"
                   "  .compressed.ply  PlayCanvas's chunked, quantised PLY\n"
                   "  .splat           antimatter15's 32-byte records (SH degree 0)\n"
                   "  .spz             Niantic's SPZ (writes version 3; reads 1 to 4)\n"
                   "  .sog             PlayCanvas's SOG bundle; meta.json: the same as a folder\n"
                   "docs/FORMATS.md gives what each keeps and the error it adds.\n\n"
                   "  -q, --quiet         no summary line\n");
            return 0;
        }
        if (strcmp(a, "-q") == 0 || strcmp(a, "--quiet") == 0) o.quiet = true;
        else if (a[0] != '-' && !in) in = a;
        else if (a[0] != '-' && !out) out = a;
        else return usage_error("convert", "unknown or extra argument '%s'", a);
    }
    if (!in || !out) return usage_error("convert", "%sneeds IN and OUT", "");
    splat_file_format to = splat_file_format_of(out);
    if (to == SPLAT_FILE_UNKNOWN)
        return usage_error("convert", "%s: unknown output type; give .ply, .compressed.ply, .splat, .spz, .sog or a "
                           "name ending in meta.json", out);
    splat_scene scene = {0};
    if (!load_scene(in, &scene)) return 1;
    if (scene.sh_degree > splat_file_format_sh_degree(to))
        fprintf(stderr, "splatc: warning: %s stores SH degree %u; the scene's coefficients of degree %u are dropped\n",
                out, splat_file_format_sh_degree(to), scene.sh_degree);
    splat_error err = {0};
    splat_status st = splat_scene_save(out, &scene, &err);
    if (st == SPLAT_OK && !o.quiet)
        printf("wrote %s (%s, %u Gaussians, SH degree %u)\n", out, splat_file_format_name(to), scene.count,
               scene.sh_degree < splat_file_format_sh_degree(to) ? scene.sh_degree : splat_file_format_sh_degree(to));
    splat_scene_free(&scene);
    return st == SPLAT_OK ? 0 : fail(&err);
}

/* ------------------------------------------------------------------- demo */

static int cmd_demo(int argc, char **argv)
{
    common_opts o = {0};
    const char *dir = NULL;
    splat_demo_desc dd = {0};
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            printf("usage: splatc demo DIR [--size N] [--views N]\n\n"
                   "Writes the bundled demo scene (a COLMAP scene rendered by splatc from a procedural\n"
                   "object, with a sparse point cloud) into DIR. --size N gives N x 3N/4 images.\n\n%s", k_common_help);
            return 0;
        }
        int r = common_option("demo", argc, argv, &i, &o);
        if (r < 0) return 2;
        if (r) continue;
        if (strcmp(a, "--size") == 0) {
            if (!parse_u32(v, &dd.width) || dd.width < 16 || dd.width > 4096) return usage_error("demo", "--size takes 16..4096, got '%s'", v ? v : "");
            dd.height = dd.width * 3 / 4;
            i++;
        } else if (strcmp(a, "--views") == 0) {
            if (!parse_u32(v, &dd.n_views) || dd.n_views < 2) return usage_error("demo", "--views takes at least 2, got '%s'", v ? v : "");
            i++;
        } else if (a[0] != '-' && !dir) dir = a;
        else return usage_error("demo", "unknown or incomplete option '%s'", a);
    }
    if (!dir) return usage_error("demo", "%sno folder given", "");
    splat_error err = {0};
    splat_ctx *ctx;
    if (splat_ctx_init(&ctx, &o.ctx, &err) != SPLAT_OK) return fail(&err);
    out_dir od;
    if (!out_open(&od, dir, "the demo's folder", NULL)) {
        splat_ctx_free(ctx);
        return 1;
    }
    splat_status st = splat_make_demo(ctx, dir, &dd, &err);
    splat_ctx_free(ctx);
    if (st != SPLAT_OK) {
        out_failed(&od);
        return fail(&err);
    }
    if (!o.quiet) printf("wrote the demo scene to %s\n", dir);
    return 0;
}

/* ------------------------------------------------------------------- main */

static void usage(FILE *f)
{
    fprintf(f, "splatc %s: 3D Gaussian Splatting on any Vulkan GPU\n\n"
               "usage: splatc COMMAND [options]   (splatc COMMAND --help for each)\n\n"
               "  train DATA -o OUT       train on a COLMAP or NeRF-synthetic scene\n"
               "  render SCENE ...        render images from cameras\n"
               "  view SCENE              look at a scene in the browser (train --viewer: a run as it trains)\n"
               "  eval SCENE DATA         PSNR/SSIM of a trained scene on held-out views\n"
               "  convert IN OUT          convert Gaussians between .ply, .compressed.ply, .splat, .spz, .sog\n"
               "  demo DIR                write the bundled demo scene\n"
               "  info                    list devices and self-check\n",
            splat_version());
}

/* "--option=value" is "--option value" (the getopt_long form users type): split once, here, so
 * every command's parser sees the two words. The strings stay alive until exit. */
static char **split_equals(int argc, char **argv, int *out_argc)
{
    char **out = calloc((size_t)argc * 2 + 1, sizeof *out);
    int n = 0;
    for (int i = 0; out && i < argc; i++) {
        const char *eq = strchr(argv[i], '=');
        if (i > 1 && strncmp(argv[i], "--", 2) == 0 && eq && eq > argv[i] + 2) {
            out[n++] = strndup(argv[i], (size_t)(eq - argv[i]));
            out[n++] = strdup(eq + 1);
            if (!out[n - 2] || !out[n - 1]) return NULL; /* out of memory: the process ends */
        } else {
            out[n++] = argv[i];
        }
    }
    *out_argc = n;
    return out;
}

static int dispatch(int argc, char **argv)
{
    const char *cmd = argv[1];
    if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0 || strcmp(cmd, "help") == 0) {
        usage(stdout);
        return 0;
    }
    if (strcmp(cmd, "--version") == 0) {
        printf("splatc %s\n", splat_version());
        return 0;
    }
    if (strcmp(cmd, "info") == 0) return cmd_info(argc, argv);
    if (strcmp(cmd, "train") == 0) return cmd_train(argc, argv);
    if (strcmp(cmd, "render") == 0) return cmd_render(argc, argv);
    if (strcmp(cmd, "view") == 0) return cmd_view(argc, argv);
    if (strcmp(cmd, "eval") == 0) return cmd_eval(argc, argv);
    if (strcmp(cmd, "demo") == 0) return cmd_demo(argc, argv);
    if (strcmp(cmd, "convert") == 0) return cmd_convert(argc, argv);
    fprintf(stderr, "splatc: unknown command '%s'\n\n", cmd);
    usage(stderr);
    return 2;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    int n;
    char **split = split_equals(argc, argv, &n);
    if (!split) {
        fprintf(stderr, "splatc: out of memory\n");
        return 1;
    }
    int rc = dispatch(n, split);
    for (int i = 0, j = 0; i < n; i++, j++) {
        if (split[i] == argv[j]) continue;
        free(split[i]), free(split[i + 1]); /* the two halves of argv[j] */
        i++;
    }
    free(split);
    return rc;
}
