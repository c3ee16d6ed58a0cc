/* Fixture writers for the io tests (no test cases here). */
#include "io_fixtures.h"

#include <dirent.h>
#include <errno.h>
#include <png.h>
#include <stdarg.h>
#include <stdio.h>
#include <sys/stat.h>
/* jpeglib.h needs stdio.h first */
#include <jpeglib.h>
#include <zlib.h>
#include <zstd.h>

void tb_bytes(tbuf *b, const void *data, size_t n)
{
    if (b->n + n > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap < b->n + n) cap *= 2;
        b->p = realloc(b->p, cap);
        if (!b->p) abort();
        b->cap = cap;
    }
    if (n) memcpy(b->p + b->n, data, n);
    b->n += n;
}

void tb_u8(tbuf *b, uint8_t v) { tb_bytes(b, &v, 1); }

void tb_u32(tbuf *b, uint32_t v)
{
    uint8_t x[4] = {(uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16), (uint8_t)(v >> 24)};
    tb_bytes(b, x, 4);
}

void tb_u64(tbuf *b, uint64_t v)
{
    tb_u32(b, (uint32_t)v);
    tb_u32(b, (uint32_t)(v >> 32));
}

void tb_f32(tbuf *b, float v)
{
    uint32_t u;
    memcpy(&u, &v, 4);
    tb_u32(b, u);
}

void tb_f64(tbuf *b, double v)
{
    uint64_t u;
    memcpy(&u, &v, 8);
    tb_u64(b, u);
}

void tb_printf(tbuf *b, const char *fmt, ...)
{
    char tmp[4096];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= sizeof tmp) abort();
    tb_bytes(b, tmp, (size_t)n);
}

void tb_free(tbuf *b)
{
    free(b->p);
    memset(b, 0, sizeof *b);
}

const char *t_path(const char *fmt, ...)
{
    static char ring[32][512];
    static int next;
    char name[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(name, sizeof name, fmt, ap);
    va_end(ap);
    char *out = ring[next++ % 32];
    snprintf(out, 512, "%s", splat_test_path(name));
    return out;
}

void t_mkdir(const char *path)
{
    char tmp[512];
    snprintf(tmp, sizeof tmp, "%s", path);
    for (char *p = tmp + 1; *p; p++) {
        if (*p != '/') continue;
        *p = 0;
        mkdir(tmp, 0755);
        *p = '/';
    }
    mkdir(tmp, 0755);
}

bool t_write(const char *path, const void *data, size_t n)
{
    FILE *fp = fopen(path, "wb");
    if (!fp) return false;
    bool ok = fwrite(data, 1, n, fp) == n;
    return fclose(fp) == 0 && ok;
}

uint8_t *t_read(const char *path, size_t *n)
{
    FILE *fp = fopen(path, "rb");
    if (!fp) return NULL;
    tbuf b = {0};
    uint8_t chunk[65536];
    size_t k;
    while ((k = fread(chunk, 1, sizeof chunk, fp)) > 0) tb_bytes(&b, chunk, k);
    fclose(fp);
    tb_bytes(&b, "", 0);
    if (!b.p) b.p = malloc(1);
    *n = b.n;
    return b.p;
}

bool t_exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

int t_count_entries(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d) return -1;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)))
        if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0) n++;
    closedir(d);
    return n;
}

bool t_has(const char *msg, const char *part) { return msg && part && strstr(msg, part) != NULL; }

/* ----------------------------------------------------------------------- images */

bool t_write_png(const char *path, uint32_t w, uint32_t h, int color_type, int bit_depth, const uint8_t *rows,
                 size_t row_bytes, const uint8_t *palette_rgb, int n_palette, const uint8_t *trns, int n_trns,
                 bool interlace)
{
    FILE *fp = fopen(path, "wb");
    if (!fp) return false;
    png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, NULL, NULL, NULL);
    png_infop info = png_create_info_struct(png);
    if (setjmp(png_jmpbuf(png))) {
        png_destroy_write_struct(&png, &info);
        fclose(fp);
        return false;
    }
    png_init_io(png, fp);
    png_set_IHDR(png, info, w, h, bit_depth, color_type, interlace ? PNG_INTERLACE_ADAM7 : PNG_INTERLACE_NONE,
                 PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
    if (palette_rgb) {
        png_color pal[256];
        for (int i = 0; i < n_palette; i++)
            pal[i] = (png_color){palette_rgb[i * 3], palette_rgb[i * 3 + 1], palette_rgb[i * 3 + 2]};
        png_set_PLTE(png, info, pal, n_palette);
    }
    if (trns) png_set_tRNS(png, info, trns, n_trns, NULL);
    png_write_info(png, info);
    png_bytep *rp = malloc(h * sizeof *rp);
    for (uint32_t y = 0; y < h; y++) rp[y] = (png_bytep)(rows + y * row_bytes);
    png_write_image(png, rp);
    png_write_end(png, NULL);
    free(rp);
    png_destroy_write_struct(&png, &info);
    return fclose(fp) == 0;
}

bool t_write_jpeg(const char *path, uint32_t w, uint32_t h, int components, const uint8_t *pixels, int quality)
{
    return t_write_jpeg_coded(path, w, h, components, pixels, quality, false);
}

bool t_write_jpeg_coded(const char *path, uint32_t w, uint32_t h, int components, const uint8_t *pixels, int quality,
                        bool arithmetic)
{
    FILE *fp = fopen(path, "wb");
    if (!fp) return false;
    struct jpeg_compress_struct c;
    struct jpeg_error_mgr jerr;
    c.err = jpeg_std_error(&jerr);
    jpeg_create_compress(&c);
    jpeg_stdio_dest(&c, fp);
    c.image_width = w;
    c.image_height = h;
    c.input_components = components;
    c.in_color_space = components == 1 ? JCS_GRAYSCALE : JCS_RGB;
    jpeg_set_defaults(&c);
    jpeg_set_quality(&c, quality, TRUE);
    c.arith_code = arithmetic;
    jpeg_start_compress(&c, TRUE);
    while (c.next_scanline < h) {
        JSAMPROW row = (JSAMPROW)(pixels + (size_t)c.next_scanline * w * (size_t)components);
        jpeg_write_scanlines(&c, &row, 1);
    }
    jpeg_finish_compress(&c);
    jpeg_destroy_compress(&c);
    return fclose(fp) == 0;
}

bool t_write_random_png(const char *path, uint32_t w, uint32_t h)
{
    uint8_t *px = malloc((size_t)w * h * 3);
    for (size_t i = 0; i < (size_t)w * h * 3; i++) px[i] = (uint8_t)splat__rng_u64(splat_test_rng());
    bool ok = t_write_png(path, w, h, PNG_COLOR_TYPE_RGB, 8, px, (size_t)w * 3, NULL, 0, NULL, 0, false);
    free(px);
    return ok;
}

/* ----------------------------------------------------------------------- COLMAP */

int t_model_params(int model)
{
    static const int n[] = {3, 4, 4, 5, 8, 8, 12, 5, 4, 5, 12, 16};
    return model >= 0 && model < 12 ? n[model] : 0;
}

static const char *model_name(int model)
{
    static const char *const names[] = {"SIMPLE_PINHOLE", "PINHOLE", "SIMPLE_RADIAL", "RADIAL", "OPENCV",
                                        "OPENCV_FISHEYE", "FULL_OPENCV", "FOV", "SIMPLE_RADIAL_FISHEYE",
                                        "RADIAL_FISHEYE", "THIN_PRISM_FISHEYE", "RAD_TAN_THIN_PRISM_FISHEYE"};
    return model >= 0 && model < 12 ? names[model] : "UNKNOWN";
}

static uint32_t rnd(uint32_t n) { return (uint32_t)(splat__rng_u64(splat_test_rng()) % n); }

void t_colmap_random(t_colmap *m)
{
    memset(m, 0, sizeof *m);
    m->n_cams = 2;
    /* ids not in file order, to exercise the lookup */
    m->cams[0] = (t_cam){.id = 7, .model = 1, .width = 40 + rnd(30), .height = 30 + rnd(20)};
    m->cams[0].params[0] = t_uniform(30, 60), m->cams[0].params[1] = t_uniform(30, 60);
    m->cams[0].params[2] = (double)m->cams[0].width / 2 + t_uniform(-3, 3);
    m->cams[0].params[3] = (double)m->cams[0].height / 2 + t_uniform(-3, 3);
    m->cams[1] = (t_cam){.id = 3, .model = 0, .width = 33 + rnd(20), .height = 21 + rnd(20)};
    m->cams[1].params[0] = t_uniform(20, 50);
    m->cams[1].params[1] = (double)m->cams[1].width / 2 + t_uniform(-2, 2);
    m->cams[1].params[2] = (double)m->cams[1].height / 2 + t_uniform(-2, 2);
    m->n_imgs = 9 + (int)rnd(12);
    /* names in random order: a shuffled list of distinct numbers */
    int order[32];
    for (int i = 0; i < 32; i++) order[i] = i;
    for (int i = 31; i > 0; i--) {
        int j = (int)rnd((uint32_t)i + 1), t = order[i];
        order[i] = order[j], order[j] = t;
    }
    for (int i = 0; i < m->n_imgs; i++) {
        t_img *im = &m->imgs[i];
        im->id = 100 + (uint32_t)i;
        double q[4], n = 0;
        for (int k = 0; k < 4; k++) q[k] = splat__rng_normal(splat_test_rng()), n += q[k] * q[k];
        for (int k = 0; k < 4; k++) im->q[k] = q[k] / sqrt(n);
        for (int k = 0; k < 3; k++) im->t[k] = t_uniform(-5, 5);
        const t_cam *c = &m->cams[rnd(2)];
        im->camera_id = c->id;
        snprintf(im->name, sizeof im->name, "frame_%02d%s.png", order[i], order[i] % 5 == 1 ? " b" : "");
        im->n2d = rnd(3) ? 0 : 1 + rnd(4);
        /* most images are the camera's size; some are scaled, the two axes rounded differently
         * (the intrinsics must follow each axis); the shape stays the camera's, within a pixel */
        im->w = (uint32_t)c->width, im->h = (uint32_t)c->height;
        if (rnd(3) == 0) {
            im->w = (uint32_t)c->width - 1 - rnd(5);
            im->h = (uint32_t)((double)c->height * im->w / (double)c->width) + rnd(2);
        }
        im->w2 = (uint32_t)(c->width + rnd(2)) / 2, im->h2 = (uint32_t)(c->height + rnd(2)) / 2;
    }
    m->n_pts = (int)rnd(41);
    for (int i = 0; i < m->n_pts; i++) {
        for (int k = 0; k < 3; k++) m->pts[i].xyz[k] = t_uniform(-10, 10), m->pts[i].rgb[k] = (uint8_t)rnd(256);
        m->pts[i].track = rnd(4);
    }
}

void t_colmap_write(const t_colmap *m, const char *dir, bool text)
{
    t_mkdir(dir);
    char path[600];
    tbuf b = {0};
    if (text) {
        tb_printf(&b, "# Camera list with one line of data per camera:\n#   CAMERA_ID, MODEL, WIDTH, HEIGHT, PARAMS[]\n");
        for (int i = 0; i < m->n_cams; i++) {
            const t_cam *c = &m->cams[i];
            tb_printf(&b, "%u %s %llu %llu", c->id, model_name(c->model), (unsigned long long)c->width,
                      (unsigned long long)c->height);
            for (int k = 0; k < t_model_params(c->model); k++) tb_printf(&b, " %.17g", c->params[k]);
            tb_printf(&b, "\n");
        }
    } else {
        tb_u64(&b, (uint64_t)m->n_cams);
        for (int i = 0; i < m->n_cams; i++) {
            const t_cam *c = &m->cams[i];
            tb_u32(&b, c->id), tb_u32(&b, (uint32_t)c->model), tb_u64(&b, c->width), tb_u64(&b, c->height);
            for (int k = 0; k < t_model_params(c->model); k++) tb_f64(&b, c->params[k]);
        }
    }
    snprintf(path, sizeof path, "%s/cameras.%s", dir, text ? "txt" : "bin");
    t_write(path, b.p, b.n);
    b.n = 0;
    if (text) {
        tb_printf(&b, "# Image list with two lines of data per image:\n\n");
        for (int i = 0; i < m->n_imgs; i++) {
            const t_img *im = &m->imgs[i];
            tb_printf(&b, "%u %.17g %.17g %.17g %.17g %.17g %.17g %.17g %u %s\n", im->id, im->q[0], im->q[1], im->q[2],
                      im->q[3], im->t[0], im->t[1], im->t[2], im->camera_id, im->name);
            for (uint32_t k = 0; k < im->n2d; k++) tb_printf(&b, "%s%.3f %.3f %d", k ? " " : "", 1.5 * k, 2.0, -1);
            tb_printf(&b, "\n"); /* an empty line when the image has no 2D points */
        }
    } else {
        tb_u64(&b, (uint64_t)m->n_imgs);
        for (int i = 0; i < m->n_imgs; i++) {
            const t_img *im = &m->imgs[i];
            tb_u32(&b, im->id);
            for (int k = 0; k < 4; k++) tb_f64(&b, im->q[k]);
            for (int k = 0; k < 3; k++) tb_f64(&b, im->t[k]);
            tb_u32(&b, im->camera_id);
            tb_bytes(&b, im->name, strlen(im->name) + 1);
            tb_u64(&b, im->n2d);
            for (uint32_t k = 0; k < im->n2d; k++) tb_f64(&b, 1.5 * k), tb_f64(&b, 2.0), tb_u64(&b, UINT64_MAX);
        }
    }
    snprintf(path, sizeof path, "%s/images.%s", dir, text ? "txt" : "bin");
    t_write(path, b.p, b.n);
    b.n = 0;
    if (text) {
        tb_printf(&b, "# 3D point list\n");
        for (int i = 0; i < m->n_pts; i++) {
            const t_pt *p = &m->pts[i];
            tb_printf(&b, "%d %.17g %.17g %.17g %u %u %u %.3f", i + 1, p->xyz[0], p->xyz[1], p->xyz[2], p->rgb[0],
                      p->rgb[1], p->rgb[2], 0.25);
            for (uint32_t k = 0; k < p->track; k++) tb_printf(&b, " %u %u", 100 + k, k);
            tb_printf(&b, "\n");
        }
    } else {
        tb_u64(&b, (uint64_t)m->n_pts);
        for (int i = 0; i < m->n_pts; i++) {
            const t_pt *p = &m->pts[i];
            tb_u64(&b, (uint64_t)i + 1);
            for (int k = 0; k < 3; k++) tb_f64(&b, p->xyz[k]);
            tb_bytes(&b, p->rgb, 3);
            tb_f64(&b, 0.25);
            tb_u64(&b, p->track);
            for (uint32_t k = 0; k < p->track; k++) tb_u32(&b, 100 + k), tb_u32(&b, k);
        }
    }
    snprintf(path, sizeof path, "%s/points3D.%s", dir, text ? "txt" : "bin");
    t_write(path, b.p, b.n);
    tb_free(&b);
}

void t_colmap_write_images(const t_colmap *m, const char *scene, bool with_2)
{
    char dir[600], path[700];
    for (int pass = 0; pass < (with_2 ? 2 : 1); pass++) {
        snprintf(dir, sizeof dir, "%s/%s", scene, pass ? "images_2" : "images");
        t_mkdir(dir);
        for (int i = 0; i < m->n_imgs; i++) {
            const t_img *im = &m->imgs[i];
            snprintf(path, sizeof path, "%s/%s", dir, im->name);
            t_write_random_png(path, pass ? im->w2 : im->w, pass ? im->h2 : im->h);
        }
    }
}

/* ------------------------------------------------------------------------------ SPZ */

/* SPZ version 4 (io_fixtures.h). */
bool t_spz_v4_from_v3(const char *v3, const char *v4, const uint8_t *ext, size_t ext_n, uint8_t flags_extra)
{
    size_t n;
    uint8_t *gz = t_read(v3, &n);
    if (!gz) return false;
    uint8_t *raw = malloc(64 << 20);
    z_stream z = {0};
    inflateInit2(&z, 16 + MAX_WBITS);
    z.next_in = gz, z.avail_in = (uInt)n, z.next_out = raw, z.avail_out = 64 << 20;
    int r = inflate(&z, Z_FINISH);
    size_t raw_n = (size_t)z.total_out;
    inflateEnd(&z);
    free(gz);
    if (r != Z_STREAM_END) return free(raw), false;
    uint32_t count = raw[8] | raw[9] << 8 | raw[10] << 16 | (uint32_t)raw[11] << 24, degree = raw[12];
    static const uint32_t dim[4] = {0, 3, 8, 15};
    size_t widths[6] = {9, 1, 3, 3, 4, (size_t)dim[degree] * 3};
    tbuf b = {0};
    tb_u32(&b, 0x5053474e), tb_u32(&b, 4), tb_u32(&b, count);
    int streams = 0;
    for (int k = 0; k < 6; k++) streams += widths[k] > 0;
    tb_u8(&b, (uint8_t)degree), tb_u8(&b, raw[13]), tb_u8(&b, (uint8_t)(flags_extra | (ext_n ? 2 : 0))), tb_u8(&b, (uint8_t)streams);
    tb_u32(&b, (uint32_t)(32 + ext_n));
    for (int k = 0; k < 12; k++) tb_u8(&b, 0);
    tb_bytes(&b, ext, ext_n);
    size_t toc = b.n, at = 16;
    for (int k = 0; k < streams; k++) tb_u64(&b, 0), tb_u64(&b, 0);
    for (int k = 0, j = 0; k < 6; k++) {
        if (!widths[k]) continue;
        size_t len = count * widths[k], cap = ZSTD_compressBound(len);
        uint8_t *c = malloc(cap);
        size_t cn = ZSTD_compress(c, cap, raw + at, len, 3);
        for (int q = 0; q < 8; q++) b.p[toc + (size_t)j * 16 + (size_t)q] = (uint8_t)(cn >> (8 * q)), b.p[toc + (size_t)j * 16 + 8 + (size_t)q] = (uint8_t)(len >> (8 * q));
        tb_bytes(&b, c, cn);
        free(c);
        at += len, j++;
    }
    (void)raw_n;
    bool ok = t_write(v4, b.p, b.n);
    tb_free(&b);
    free(raw);
    return ok;
}

