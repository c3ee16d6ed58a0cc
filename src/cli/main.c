/* splatc: the command-line tool. Uses the public API (include/splatc.h) only. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "splatc.h"

#define VERSION "0.1.0"

static int fail(const splat_error *err)
{
    fprintf(stderr, "splatc: %s\n", err->msg[0] ? err->msg : splat_status_str(err->status));
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

/* An output folder, checked before any work: created when missing, refused when it is a file or
 * cannot be written in. A run that fails removes what it created, if that is still empty. */
typedef struct out_dir {
    const char *path;
    bool created;
} out_dir;

static bool out_open(out_dir *d, const char *path)
{
    d->path = path;
    d->created = false;
    struct stat st;
    if (stat(path, &st) == 0 && !S_ISDIR(st.st_mode)) {
        fprintf(stderr, "splatc: %s: exists and is not a folder (the output folder, -o)\n", path);
        return false;
    }
    if (mkdir(path, 0755) == 0) d->created = true;
    else if (errno != EEXIST) {
        fprintf(stderr, "splatc: %s: cannot create the output folder: %s\n", path, strerror(errno));
        return false;
    }
    char probe[1100];
    snprintf(probe, sizeof probe, "%s/.splatc-write-test-XXXXXX", path);
    int fd = mkstemp(probe);
    if (fd < 0) {
        fprintf(stderr, "splatc: %s: cannot write in the output folder: %s\n", path, strerror(errno));
        if (d->created) rmdir(path);
        return false;
    }
    close(fd);
    unlink(probe);
    return true;
}

/* After a failed run: the folders it created, if empty (rmdir leaves any other alone). */
static void out_failed(const out_dir *d)
{
    if (!d->created) return;
    char sub[1100];
    snprintf(sub, sizeof sub, "%s/renders", d->path);
    rmdir(sub);
    rmdir(d->path);
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
    printf("splatc %s\n", VERSION);
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

static bool write_metrics(const char *path, const splat_eval_result *ev, const splat_train_progress *prog, uint32_t steps,
                          uint32_t n_gaussians, double seconds, uint64_t peak, const char *device, splat_error *err)
{
    cJSON *j = cJSON_CreateObject();
    cJSON_AddStringToObject(j, "device", device);
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
    char *text = cJSON_Print(j);
    cJSON_Delete(j);
    if (!text) return false;
    bool ok = splat_write_file(path, text, strlen(text), err) == SPLAT_OK;
    cJSON_free(text);
    return ok;
}

static splat_train_progress g_last;
static void remember(void *user, const splat_train_progress *p)
{
    g_last = *p;
    if (user) progress_bar(user, p);
}

static int cmd_train(int argc, char **argv)
{
    common_opts o = {0};
    splat_train_desc desc = {.seed = 42};
    const char *out = NULL, *resume = NULL;
    uint32_t ckpt_every = 0;
    bool renders = true;
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            printf("usage: splatc train DATA -o OUT [options]\n\n"
                   "Trains Gaussians on a COLMAP or NeRF-synthetic scene and writes OUT/point_cloud.ply,\n"
                   "OUT/metrics.json (PSNR/SSIM on held-out views) and OUT/renders/*.png.\n\n"
                   "  -o, --output DIR    output folder (created)\n"
                   "  --steps N           training steps (default 30000)\n"
                   "  --eval              hold out every 8th image of a COLMAP scene for evaluation\n"
                   "  --images-factor N   use images_N/ (or images/ downsampled by N); intrinsics follow\n"
                   "  --sh-degree D       spherical harmonics degree 0..3 (default 3)\n"
                   "  --max-gaussians-per-tile N   depth-sorted per-tile cap (default 0: none)\n"
                   "  --white-background  composite on white (the default for images with alpha, e.g. NeRF-synthetic)\n"
                   "  --background R,G,B  composite on this colour, each in [0,1] (default black, or white for images\n"
                   "                      with alpha)\n"
                   "  --random-background a random background colour every step\n"
                   "  --seed N            run seed (default 42)\n"
                   "  --init-points N     random initial points when the scene has none (default 100000)\n"
                   "  --init-ply FILE     start from these Gaussians (any scene file: .ply, .compressed.ply, .splat,\n"
                   "                      .spz, .sog, meta.json)\n"
                   "  --checkpoint-every N  write OUT/checkpoint.ckpt every N steps (and at the end)\n"
                   "  --resume FILE       continue from a checkpoint\n"
                   "  --no-renders        do not write test-view renders\n"
                   "  --profile           print the GPU time of each stage per iteration\n%s",
                   k_common_help);
            return 0;
        }
        int r = common_option("train", argc, argv, &i, &o);
        if (r < 0) return 2;
        if (r) continue;
        bool takes_value = true;
        if ((strcmp(a, "-o") == 0 || strcmp(a, "--output") == 0) && v) out = v;
        else if (strcmp(a, "--steps") == 0) {
            if (!parse_u32(v, &desc.steps) || desc.steps == 0) return usage_error("train", "--steps needs a positive number, got '%s'", v ? v : "");
        } else if (strcmp(a, "--images-factor") == 0) {
            if (!parse_u32(v, &desc.images_factor) || desc.images_factor == 0) return usage_error("train", "--images-factor needs a positive number, got '%s'", v ? v : "");
        } else if (strcmp(a, "--sh-degree") == 0) {
            uint32_t d;
            if (!parse_u32(v, &d) || d > 3) return usage_error("train", "--sh-degree takes 0..3, got '%s'", v ? v : "");
            desc.render.sh_degree = d == 0 ? SPLAT_SH_DEGREE_0 : d;
        } else if (strcmp(a, "--max-gaussians-per-tile") == 0) {
            if (!parse_u32(v, &desc.render.max_gaussians_per_tile)) return usage_error("train", "--max-gaussians-per-tile needs a number, got '%s'", v ? v : "");
        } else if (strcmp(a, "--background") == 0) {
            if (!parse_rgb(v, desc.render.background)) return usage_error("train", "--background expects R,G,B in [0,1], got '%s'", v ? v : "");
            desc.background = SPLAT_BACKGROUND_COLOR;
        } else if (strcmp(a, "--seed") == 0) {
            uint32_t s;
            if (!parse_u32(v, &s)) return usage_error("train", "--seed needs a number, got '%s'", v ? v : "");
            desc.seed = s;
        } else if (strcmp(a, "--init-points") == 0) {
            if (!parse_u32(v, &desc.init_points) || desc.init_points == 0) return usage_error("train", "--init-points needs a positive number, got '%s'", v ? v : "");
        } else if (strcmp(a, "--init-ply") == 0 && v) desc.init_ply = v;
        else if (strcmp(a, "--checkpoint-every") == 0) {
            if (!parse_u32(v, &ckpt_every)) return usage_error("train", "--checkpoint-every needs a number, got '%s'", v ? v : "");
        } else if (strcmp(a, "--resume") == 0 && v) resume = v;
        else {
            takes_value = false;
            if (strcmp(a, "--eval") == 0) desc.eval = true;
            else if (strcmp(a, "--white-background") == 0) set_white(&desc);
            else if (strcmp(a, "--random-background") == 0) desc.background = SPLAT_BACKGROUND_RANDOM;
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
    if (!out_open(&od, out)) {
        splat_scene_free(&init);
        return 1;
    }
    desc.progress = remember;
    desc.progress_user = o.quiet ? NULL : (void *)1;

    splat_error err = {0};
    splat_ctx *ctx;
    if (splat_ctx_init(&ctx, &o.ctx, &err) != SPLAT_OK) {
        splat_scene_free(&init);
        out_failed(&od);
        return fail(&err);
    }
    splat_device_info dev;
    splat_ctx_device(ctx, &dev);
    if (!o.quiet) fprintf(stderr, "splatc: training on %s (%s)\n", dev.name, dev.type);
    splat_trainer *t = NULL;
    splat_status st = splat_trainer_init(&t, ctx, &desc, &err);
    splat_scene_free(&init); /* the trainer has its copy */
    if (st == SPLAT_OK && resume) st = splat_trainer_resume(t, resume, &err);
    char path[1024];
    double start = 0;
    {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        start = ts.tv_sec + 1e-9 * ts.tv_nsec;
    }
    uint32_t steps = st == SPLAT_OK ? splat_trainer_steps(t) : 0;
    uint32_t first_step = st == SPLAT_OK ? splat_trainer_step(t) : 0, diag_seen = 0;
    while (st == SPLAT_OK && splat_trainer_step(t) < steps) {
        uint32_t until = ckpt_every ? (splat_trainer_step(t) / ckpt_every + 1) * ckpt_every : steps;
        st = splat_trainer_run(t, until < steps ? until : steps, &err);
        char diag[1024];
        uint32_t n_diag = t ? splat_trainer_diagnostics(t, diag, sizeof diag) : 0;
        if (n_diag > diag_seen) fprintf(stderr, "\nsplatc: warning at step %u: %s\n", splat_trainer_step(t), diag);
        diag_seen = n_diag;
        if (st == SPLAT_OK && ckpt_every) {
            snprintf(path, sizeof path, "%s/checkpoint.ckpt", out);
            st = splat_trainer_save(t, path, &err);
        }
    }
    double seconds;
    {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        seconds = ts.tv_sec + 1e-9 * ts.tv_nsec - start;
    }
    if (!o.quiet && st == SPLAT_OK) fprintf(stderr, "\n");
    splat_scene scene = {0};
    if (st == SPLAT_OK) st = splat_trainer_scene(t, &scene, &err);
    if (st == SPLAT_OK) {
        snprintf(path, sizeof path, "%s/point_cloud.ply", out);
        st = splat_scene_save_ply(path, &scene, &err);
    }
    splat_eval_result ev = {0};
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
        if (!write_metrics(path, &ev, &g_last, steps - first_step, scene.count, seconds, peak, dev.name, &err)) st = SPLAT_ERR_IO;
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
    splat_trainer_free(t);
    splat_ctx_free(ctx);
    if (st != SPLAT_OK) {
        if (!o.quiet) fprintf(stderr, "\n");
        out_failed(&od);
        return fail(&err);
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

static int cmd_render(int argc, char **argv)
{
    common_opts o = {0};
    const char *ply = NULL, *cams_path = NULL, *out = NULL;
    splat_camera one;
    bool have_one = false;
    splat_render_desc rd = {0};
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            printf("usage: splatc render SCENE (--cameras cameras.json | --camera W,H,fx,fy,cx,cy,qw,qx,qy,qz,tx,ty,tz) -o DIR\n\n"
                   "Renders PNG images (DIR/render_NNNN.png) of SCENE (.ply, .compressed.ply, .splat, .spz, .sog or\n"
                   "meta.json). cameras.json: splatc's own or the original 3DGS one.\n\n"
                   "  --sh-degree D       active SH degree (default: all the scene has)\n"
                   "  --background R,G,B  background colour in [0,1] (default 0,0,0)\n"
                   "  --max-gaussians-per-tile N\n"
                   "  --sh-half           store SH coefficients as half floats on the GPU (half the memory)\n%s",
                   k_common_help);
            return 0;
        }
        int r = common_option("render", argc, argv, &i, &o);
        if (r < 0) return 2;
        if (r) continue;
        if ((strcmp(a, "-o") == 0 || strcmp(a, "--output") == 0) && v) out = v, i++;
        else if (strcmp(a, "--cameras") == 0 && v) cams_path = v, i++;
        else if (strcmp(a, "--camera") == 0 && v) {
            if (!parse_camera(v, &one))
                return usage_error("render", "--camera expects W,H,fx,fy,cx,cy,qw,qx,qy,qz,tx,ty,tz (W and H whole, 1..16384; "
                                   "fx, fy positive; all finite; a nonzero quaternion), got '%s'", v);
            have_one = true;
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
        else if (a[0] != '-' && !ply) ply = a;
        else return usage_error("render", "unknown or incomplete option '%s'", a);
    }
    if (!ply) return usage_error("render", "%sno scene given", "");
    if (!out) return usage_error("render", "%sno output folder given (-o DIR)", "");
    if (!cams_path && !have_one) return usage_error("render", "%sgive --cameras or --camera", "");
    splat_error err = {0};
    splat_scene scene = {0};
    if (!load_scene(ply, &scene)) return 1;
    if (scene.count == 0) fprintf(stderr, "splatc: warning: %s has no Gaussians: every render is the background\n", ply);
    splat_camera *cams = &one;
    uint32_t n = 1;
    if (cams_path && splat_read_cameras(cams_path, &cams, &n, &err) != SPLAT_OK) {
        splat_scene_free(&scene);
        return fail(&err);
    }
    int rc = 0;
    splat_ctx *ctx = NULL;
    out_dir od;
    if (!out_open(&od, out)) rc = 1;
    else if (splat_ctx_init(&ctx, &o.ctx, &err) != SPLAT_OK) rc = fail(&err);
    for (uint32_t k = 0; k < n && rc == 0; k++) {
        float *img = NULL;
        char path[1024];
        snprintf(path, sizeof path, "%s/render_%04u.png", out, k);
        if (splat_render(ctx, &scene, &cams[k], 1, &rd, &img, &err) != SPLAT_OK) {
            if (cams_path) fprintf(stderr, "splatc: %s, camera %u: %s\n", cams_path, k, err.msg);
            else fprintf(stderr, "splatc: --camera: %s\n", err.msg);
            rc = 1;
        } else if (splat_write_png(path, img, NULL, cams[k].width, cams[k].height, &err) != SPLAT_OK)
            rc = fail(&err);
        else if (!o.quiet) printf("wrote %s\n", path);
        splat_free(img);
    }
    splat_ctx_free(ctx);
    if (cams != &one) splat_free(cams);
    splat_scene_free(&scene);
    if (rc != 0 && od.path) out_failed(&od);
    return rc;
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
            printf("usage: splatc eval SCENE DATA [--eval] [--images-factor N] [-o DIR]\n\n"
                   "Renders the held-out views of DATA from SCENE (any scene file splatc reads) and prints\n"
                   "PSNR and SSIM;\n"
                   "with -o, writes the renders and metrics.json there.\n\n%s", k_common_help);
            return 0;
        }
        int r = common_option("eval", argc, argv, &i, &o);
        if (r < 0) return 2;
        if (r) continue;
        if ((strcmp(a, "-o") == 0 || strcmp(a, "--output") == 0) && v) out = v, i++;
        else if (strcmp(a, "--images-factor") == 0) {
            if (!parse_u32(v, &desc.images_factor) || desc.images_factor == 0) return usage_error("eval", "--images-factor needs a positive number, got '%s'", v ? v : "");
            i++;
        } else if (strcmp(a, "--eval") == 0) desc.eval = true;
        else if (strcmp(a, "--white-background") == 0) set_white(&desc);
        else if (a[0] != '-' && !desc.init_ply) desc.init_ply = a;
        else if (a[0] != '-' && !desc.data) desc.data = a;
        else return usage_error("eval", "unknown or incomplete option '%s'", a);
    }
    if (!desc.init_ply || !desc.data) return usage_error("eval", "%sneeds SCENE and DATA", "");
    splat_scene scene = {0};
    if (!load_scene(desc.init_ply, &scene)) return 1;
    desc.init_scene = &scene;
    out_dir od = {0};
    if (out && !out_open(&od, out)) {
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
    /* a loaded scene is evaluated with every SH degree it has */
    if (st == SPLAT_OK) st = splat_trainer_eval(t, out ? rdir : NULL, &ev, &err);
    if (st == SPLAT_OK) {
        printf("%u views: PSNR %.3f  SSIM %.4f  L1 %.4f", ev.n_views, ev.psnr, ev.ssim, ev.l1);
        if (ev.psnr_full != ev.psnr) printf("  (masks; every pixel: PSNR %.3f)", ev.psnr_full);
        printf("\n");
        if (out) {
            char path[1024];
            snprintf(path, sizeof path, "%s/metrics.json", out);
            splat_device_info dev;
            splat_ctx_device(ctx, &dev);
            if (!write_metrics(path, &ev, NULL, 0, 0, 0, 0, dev.name, &err)) st = SPLAT_ERR_IO;
        }
    }
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
    splat_status st = splat_make_demo(ctx, dir, &dd, &err);
    splat_ctx_free(ctx);
    if (st != SPLAT_OK) return fail(&err);
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
               "  eval SCENE DATA         PSNR/SSIM of a trained scene on held-out views\n"
               "  convert IN OUT          convert Gaussians between .ply, .compressed.ply, .splat, .spz, .sog\n"
               "  demo DIR                write the bundled demo scene\n"
               "  info                    list devices and self-check\n",
            VERSION);
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
        printf("splatc %s\n", VERSION);
        return 0;
    }
    if (strcmp(cmd, "info") == 0) return cmd_info(argc, argv);
    if (strcmp(cmd, "train") == 0) return cmd_train(argc, argv);
    if (strcmp(cmd, "render") == 0) return cmd_render(argc, argv);
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
