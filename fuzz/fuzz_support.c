/* What the harnesses share (fuzz.h), and the few functions of tests/harness.h that the fixture
 * writers of tests/test_io_fixtures.c call, so the harnesses and the seed generator write their
 * PNG and JPEG files through the same code as the io tests. */
#define _XOPEN_SOURCE 700 /* nftw */
#include "fuzz.h"

#include <errno.h>
#include <ftw.h>
#include <png.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "io_fixtures.h"

/* ------------------------------------------------------- the fixture writers' harness */

static splat_rng g_rng;
static bool g_rng_ready;

splat_rng *splat_test_rng(void)
{
    /* a fixed seed: the images and seeds are the same on every run */
    if (!g_rng_ready) splat__rng_seed(&g_rng, 10), g_rng_ready = true;
    return &g_rng;
}

double t_uniform(double lo, double hi) { return lo + (hi - lo) * splat__rng_uniform(splat_test_rng()); }

const char *splat_test_path(const char *name) { return fuzz_path(name); }

/* ------------------------------------------------------------------- scratch files */

static char g_dir[512];
static pid_t g_owner;

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st, (void)flag, (void)ftw;
    remove(path);
    return 0;
}

static void remove_dir(void)
{
    /* only the process that made it (a forked child exits through here too) */
    if (g_dir[0] && getpid() == g_owner) nftw(g_dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

const char *fuzz_dir(void)
{
    if (g_dir[0]) return g_dir;
    const char *tmp = getenv("TMPDIR");
    snprintf(g_dir, sizeof g_dir, "%s/splatc-fuzz-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(g_dir)) {
        fprintf(stderr, "fuzz: cannot create %s: %s\n", g_dir, strerror(errno));
        exit(2);
    }
    g_owner = getpid();
    atexit(remove_dir);
    return g_dir;
}

const char *fuzz_path(const char *name)
{
    static char ring[32][1024];
    static int next;
    char *out = ring[next++ % 32];
    snprintf(out, sizeof ring[0], "%s/%s", fuzz_dir(), name);
    return out;
}

void fuzz_mkdir(const char *path) { t_mkdir(path); }

void fuzz_write(const char *path, const uint8_t *data, size_t n)
{
    if (!t_write(path, data, n)) {
        fprintf(stderr, "fuzz: cannot write %s: %s\n", path, strerror(errno));
        exit(2);
    }
}

void fuzz_remove(const char *path) { unlink(path); }

/* --------------------------------------------------------------------------- inputs */

uint8_t fuzz_byte(fuzz_input *in)
{
    if (!in->n) return 0;
    in->n--;
    return *in->p++;
}

fuzz_input fuzz_part(fuzz_input *in)
{
    size_t len = fuzz_byte(in);
    len |= (size_t)fuzz_byte(in) << 8;
    fuzz_input part = {in->p, SPLAT_MIN(len, in->n)};
    in->p += part.n;
    in->n -= part.n;
    return part;
}

fuzz_input fuzz_rest(fuzz_input *in)
{
    fuzz_input rest = *in;
    in->p += in->n;
    in->n = 0;
    return rest;
}

/* -------------------------------------------------------------------- the contract */

void fuzz_check(splat_status st, const splat_error *err, const char *prefix, const char *what)
{
    static int verbose = -1;
    if (verbose < 0) verbose = getenv("SPLAT_FUZZ_VERBOSE") != NULL;
    if (verbose) fprintf(stderr, "%s: %s%s%s\n", what, splat__status_str(st), st ? ": " : "", err->msg);
    if (st == SPLAT_OK) {
        FUZZ_ASSERT(err->status == SPLAT_OK && !err->msg[0], "%s succeeded with an error recorded: %s", what,
                    err->msg);
        return;
    }
    /* INVALID_ARG: an images factor that leaves fewer than 4 pixels a side (the flags ask for 3) */
    FUZZ_ASSERT(st == SPLAT_ERR_IO || st == SPLAT_ERR_FORMAT || st == SPLAT_ERR_UNSUPPORTED ||
                    st == SPLAT_ERR_NONFINITE || st == SPLAT_ERR_OUT_OF_HOST_MEMORY ||
                    (st == SPLAT_ERR_INVALID_ARG && strstr(err->msg, "fewer than 4 pixels a side")),
                "%s returned %s, which no reader returns: %s", what, splat__status_str(st), err->msg);
    FUZZ_ASSERT(err->status == st, "%s returned %s but recorded %s: %s", what, splat__status_str(st),
                splat__status_str(err->status), err->msg);
    bool named = prefix ? strncmp(err->msg, prefix, strlen(prefix)) == 0 : err->msg[0] == '/';
    FUZZ_ASSERT(named && strstr(err->msg, ": "), "%s: the message does not start with the path (%s): \"%s\"", what,
                prefix ? prefix : "an absolute path", err->msg);
}

/* --------------------------------------------------------------------------- images */

const char *const fuzz_colmap_images[FUZZ_COLMAP_IMAGES] = {"a.png", "b.png", "c.jpg", "d e.png"};
const char *const fuzz_nerf_images[FUZZ_NERF_IMAGES] = {"r_0.png", "r_1.png", "train/r_2.png", "test/r_3.jpg"};

static void check(bool ok, const char *path)
{
    if (!ok) {
        fprintf(stderr, "fuzz: cannot write the image %s\n", path);
        exit(2);
    }
}

static uint8_t g_pixels[64 * 64 * 4];

static const uint8_t *pixels(void)
{
    for (size_t i = 0; i < sizeof g_pixels; i++) g_pixels[i] = (uint8_t)(i * 37 + i / 7);
    return g_pixels;
}

void fuzz_write_colmap_images(const char *scene)
{
    static const uint8_t pal[4 * 3] = {10, 20, 30, 40, 50, 60, 70, 80, 90, 200, 210, 220}, trns[2] = {0, 128};
    char dir[1024], path[1100];
    const uint8_t *px = pixels();
    for (uint32_t f = 1; f <= 2; f++) {
        snprintf(dir, sizeof dir, "%s/%s", scene, f == 1 ? "images" : "images_2");
        fuzz_mkdir(dir);
        /* RGB, palette with tRNS, a JPEG, 16-bit grey interlaced */
        snprintf(path, sizeof path, "%s/%s", dir, fuzz_colmap_images[0]);
        check(t_write_png(path, 12 / f, 8 / f, PNG_COLOR_TYPE_RGB, 8, px, 12 * 3, NULL, 0, NULL, 0, false), path);
        uint8_t idx[10 * 6];
        for (size_t i = 0; i < sizeof idx; i++) idx[i] = px[i] & 3;
        snprintf(path, sizeof path, "%s/%s", dir, fuzz_colmap_images[1]);
        check(t_write_png(path, 10 / f, 6 / f, PNG_COLOR_TYPE_PALETTE, 8, idx, 10, pal, 4, trns, 2, false), path);
        snprintf(path, sizeof path, "%s/%s", dir, fuzz_colmap_images[2]);
        check(t_write_jpeg(path, 16 / f, 8 / f, 3, px, 75), path);
        snprintf(path, sizeof path, "%s/%s", dir, fuzz_colmap_images[3]);
        check(t_write_png(path, 6 / f, 4 / f, PNG_COLOR_TYPE_GRAY, 16, px, 12, NULL, 0, NULL, 0, true), path);
    }
}

void fuzz_write_nerf_images(const char *scene)
{
    char path[1100];
    const uint8_t *px = pixels();
    snprintf(path, sizeof path, "%s/train", scene);
    fuzz_mkdir(path);
    snprintf(path, sizeof path, "%s/test", scene);
    fuzz_mkdir(path);
    /* RGBA (the Blender scenes' kind), grey+alpha, RGB, a grey JPEG */
    snprintf(path, sizeof path, "%s/%s", scene, fuzz_nerf_images[0]);
    check(t_write_png(path, 8, 8, PNG_COLOR_TYPE_RGBA, 8, px, 8 * 4, NULL, 0, NULL, 0, false), path);
    snprintf(path, sizeof path, "%s/%s", scene, fuzz_nerf_images[1]);
    check(t_write_png(path, 8, 8, PNG_COLOR_TYPE_GRAY_ALPHA, 8, px, 8 * 2, NULL, 0, NULL, 0, false), path);
    snprintf(path, sizeof path, "%s/%s", scene, fuzz_nerf_images[2]);
    check(t_write_png(path, 8, 6, PNG_COLOR_TYPE_RGB, 8, px, 8 * 3, NULL, 0, NULL, 0, false), path);
    snprintf(path, sizeof path, "%s/%s", scene, fuzz_nerf_images[3]);
    check(t_write_jpeg(path, 8, 8, 1, px, 90), path);
}

/* ------------------------------------------------------------------------- datasets */

static bool finite_camera(const splat_camera *c)
{
    bool ok = isfinite(c->fx) && isfinite(c->fy) && isfinite(c->cx) && isfinite(c->cy);
    for (int k = 0; k < 9; k++) ok = ok && isfinite(c->R[k]);
    for (int k = 0; k < 3; k++) ok = ok && isfinite(c->t[k]);
    return ok;
}

void fuzz_load_dataset(const char *scene, uint8_t flags, const char *prefix)
{
    splat_dataset_desc desc = {.path = scene, .eval = flags & 1, .images_factor = (flags >> 1) & 3};
    splat_dataset ds;
    splat_error err = {0};
    splat_status st = splat__dataset_load(&desc, &ds, &err);
    fuzz_check(st, &err, prefix, "splat__dataset_load");
    if (st != SPLAT_OK) {
        FUZZ_ASSERT(!ds.views && !ds.points && !ds.point_colors && !ds.n_views, "a failed load left a dataset");
        return;
    }
    FUZZ_ASSERT(ds.n_views > 0 && ds.views, "a dataset without views");
    for (uint32_t i = 0; i < ds.n_views; i++) {
        const splat_data_view *v = &ds.views[i];
        FUZZ_ASSERT(v->name && v->image_path, "view %u has no name or path", i);
        FUZZ_ASSERT(v->camera.width >= 1 && v->camera.height >= 1 && v->downsample >= 1, "view %u: size %ux%u / %u",
                    i, v->camera.width, v->camera.height, v->downsample);
        FUZZ_ASSERT(finite_camera(&v->camera) && v->camera.fx > 0 && v->camera.fy > 0,
                    "view %u (%s): a non-finite camera or a focal length not positive: f %g %g c %g %g t %g %g %g",
                    i, v->name, v->camera.fx, v->camera.fy, v->camera.cx, v->camera.cy, v->camera.t[0],
                    v->camera.t[1], v->camera.t[2]);
    }
    FUZZ_ASSERT(!ds.n_points || (ds.points && ds.point_colors), "points counted but absent");
    for (uint64_t i = 0; i < (uint64_t)ds.n_points * 3; i++)
        FUZZ_ASSERT(isfinite(ds.points[i]), "point %llu is not finite", (unsigned long long)i / 3);
    splat__dataset_free(&ds);
}

/* --------------------------------------------------------------------------- scenes */

void fuzz_read_scene(const char *path, const char *what)
{
    splat_scene s;
    splat_load_info info;
    splat_error err = {0};
    splat_status st = splat__scene_read(path, &s, &info, &err);
    fuzz_check(st, &err, path, what);
    if (st != SPLAT_OK) {
        FUZZ_ASSERT(!s.means && !s.sh && !s.count && !info.warning[0], "a failed read left a scene or a warning");
        return;
    }
    FUZZ_ASSERT(s.count == s.capacity && s.sh_degree <= 3, "count %u, capacity %u, degree %u", s.count, s.capacity,
                s.sh_degree);
    FUZZ_ASSERT(!info.warning[0] || strncmp(info.warning, path, strlen(path)) == 0, "the warning does not name the "
                "file: %s", info.warning);
    for (uint32_t g = 0; g < SPLAT_GROUP_COUNT; g++) {
        const float *a = splat__scene_group_c(&s, g);
        for (uint64_t i = 0; i < (uint64_t)s.count * splat__groups[g].width; i++)
            FUZZ_ASSERT(isfinite(a[i]), "%s[%llu] is not finite", splat__groups[g].name, (unsigned long long)i);
    }
    /* SH above the degree read are zero */
    for (uint32_t i = 0; i < s.count; i++)
        for (uint32_t k = (s.sh_degree + 1) * (s.sh_degree + 1) * 3; k < SPLAT_SH_COEFFS * 3; k++)
            FUZZ_ASSERT(s.sh[(size_t)i * SPLAT_SH_COEFFS * 3 + k] == 0.0f, "Gaussian %u: SH %u above the degree", i, k);
    splat__scene_free(&s);
}
