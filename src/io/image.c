/* io: PNG and JPEG through libpng and libjpeg-turbo, every input converted to RGBA8.
 * Both libraries report errors by calling a handler that must not return; ours longjmp back to
 * the decoder, which frees everything and reports a message naming the file. What the decoder
 * owns across the longjmp lives in a heap context, never in locals that setjmp could clobber. */
#include "io/io_util.h"

#include <errno.h>
#include <png.h>
#include <setjmp.h>
#include <stdio.h>
/* jpeglib.h needs stdio.h first; jerror.h gives the warning codes. */
#include <jerror.h>
#include <jpeglib.h>

/* The largest image accepted (1 GiB of RGBA8), so a lying header cannot ask for more. */
#define MAX_PIXELS ((uint64_t)1 << 28)

typedef enum image_kind { KIND_UNKNOWN, KIND_PNG, KIND_JPEG } image_kind;

static const uint8_t png_magic[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};

static splat_status open_image(const char *path, FILE **out, image_kind *kind, long long *size, splat_error *err)
{
    *out = NULL;
    FILE *fp = fopen(path, "rb");
    if (!fp) return splat__fail(err, SPLAT_ERR_IO, "%s: cannot open image: %s", path, strerror(errno));
    *size = splat__file_size(fp);
    if (*size < 0) {
        fclose(fp);
        return splat__fail(err, SPLAT_ERR_IO, "%s: not a regular file", path);
    }
    uint8_t head[8] = {0};
    size_t n = fread(head, 1, sizeof head, fp);
    *kind = KIND_UNKNOWN;
    if (n == 8 && memcmp(head, png_magic, 8) == 0) *kind = KIND_PNG;
    else if (n >= 3 && head[0] == 0xff && head[1] == 0xd8 && head[2] == 0xff) *kind = KIND_JPEG;
    if (*kind == KIND_UNKNOWN) {
        fclose(fp);
        return splat__fail(err, SPLAT_ERR_FORMAT, "%s: not a PNG or JPEG file (unrecognised first bytes)", path);
    }
    rewind(fp);
    *out = fp;
    return SPLAT_OK;
}

static splat_status alloc_pixels(const char *path, uint32_t w, uint32_t h, uint8_t **pixels, splat_error *err)
{
    if (w == 0 || h == 0 || (uint64_t)w * h > MAX_PIXELS)
        return splat__fail(err, SPLAT_ERR_UNSUPPORTED, "%s: image size %ux%u is outside what splatc accepts",
                           path, w, h);
    *pixels = splat__malloc((size_t)w * h * 4);
    if (!*pixels)
        return splat__fail(err, SPLAT_ERR_OUT_OF_HOST_MEMORY, "%s: out of host memory for a %ux%u image", path, w, h);
    return SPLAT_OK;
}

/* ---------------------------------------------------------------------------- PNG */

typedef struct png_ctx {
    jmp_buf jb;
    char msg[200];
    splat_status status;     /* of a failure found outside libpng */
    uint8_t *pixels;
    png_bytep *rows;
} png_ctx;

static void png_on_error(png_structp png, png_const_charp msg)
{
    png_ctx *c = png_get_error_ptr(png);
    snprintf(c->msg, sizeof c->msg, "%s", msg);
    longjmp(c->jb, 1);
}

static void png_on_warning(png_structp png, png_const_charp msg)
{
    (void)png, (void)msg; /* warnings (e.g. about colour profiles) do not concern the pixels */
}

/* Everything that can longjmp, outside the function that called setjmp. Returns false with
 * c->msg set for problems found here rather than by libpng. */
static bool png_decode(png_structp png, png_infop info, png_ctx *c, long long file_size, uint32_t *w, uint32_t *h)
{
    png_read_info(png, info);
    png_uint_32 width, height;
    int depth, ctype, interlace;
    png_get_IHDR(png, info, &width, &height, &depth, &ctype, &interlace, NULL, NULL);
    /* Deflate expands at most about 1032:1, so a header that claims more pixel bytes than the
     * file could decompress to is lying (or the file is truncated); refuse before allocating. */
    uint64_t raw = (uint64_t)height * (1 + ((uint64_t)width * png_get_channels(png, info) * depth + 7) / 8);
    if (raw > 1100ull * (uint64_t)file_size + 65536) {
        snprintf(c->msg, sizeof c->msg, "header claims %ux%u pixels, more than the file's %lld bytes can hold",
                 (unsigned)width, (unsigned)height, file_size);
        c->status = SPLAT_ERR_FORMAT;
        return false;
    }
    if ((uint64_t)width * height > MAX_PIXELS) {
        snprintf(c->msg, sizeof c->msg, "image size %ux%u is outside what splatc accepts", (unsigned)width,
                 (unsigned)height);
        c->status = SPLAT_ERR_UNSUPPORTED;
        return false;
    }
    png_set_expand(png);                               /* palette, grey < 8 bits, tRNS -> alpha */
    png_set_scale_16(png);                             /* 16 -> 8 bits, rounded */
    png_set_gray_to_rgb(png);
    png_set_add_alpha(png, 0xff, PNG_FILLER_AFTER);    /* only where no alpha exists */
    png_set_interlace_handling(png);
    png_read_update_info(png, info);
    if (png_get_rowbytes(png, info) != (size_t)width * 4) {
        snprintf(c->msg, sizeof c->msg, "unexpected row layout after conversion to RGBA8");
        c->status = SPLAT_ERR_FORMAT;
        return false;
    }
    c->pixels = splat__malloc((size_t)width * height * 4);
    c->rows = splat__malloc((size_t)height * sizeof(png_bytep));
    if (!c->pixels || !c->rows) {
        snprintf(c->msg, sizeof c->msg, "out of host memory");
        c->status = SPLAT_ERR_OUT_OF_HOST_MEMORY;
        return false;
    }
    for (png_uint_32 y = 0; y < height; y++) c->rows[y] = c->pixels + (size_t)y * width * 4;
    png_read_image(png, c->rows);
    *w = width;
    *h = height;
    return true;
}

static splat_status load_png(const char *path, FILE *fp, long long file_size, splat_image *img, splat_error *err)
{
    png_ctx *c = splat__calloc(1, sizeof *c);
    if (!c) return splat__fail(err, SPLAT_ERR_OUT_OF_HOST_MEMORY, "%s: out of host memory", path);
    png_structp png = png_create_read_struct(PNG_LIBPNG_VER_STRING, c, png_on_error, png_on_warning);
    png_infop info = png ? png_create_info_struct(png) : NULL;
    splat_status st = SPLAT_OK;
    if (!info) {
        st = splat__fail(err, SPLAT_ERR_OUT_OF_HOST_MEMORY, "%s: out of host memory for the PNG decoder", path);
    } else if (setjmp(c->jb) == 0) {
        png_set_user_limits(png, 1u << 20, 1u << 20);
        png_set_chunk_malloc_max(png, (png_alloc_size_t)64 << 20);
        png_init_io(png, fp);
        uint32_t w = 0, h = 0;
        if (png_decode(png, info, c, file_size, &w, &h)) {
            img->width = w;
            img->height = h;
            img->rgba = c->pixels;
            c->pixels = NULL;
        } else {
            st = splat__fail(err, c->status, "%s: bad PNG: %s", path, c->msg);
        }
    } else {
        st = splat__fail(err, SPLAT_ERR_FORMAT, "%s: corrupt or truncated PNG: %s", path, c->msg);
    }
    png_destroy_read_struct(png ? &png : NULL, info ? &info : NULL, NULL);
    splat__free(c->pixels);
    splat__free(c->rows);
    splat__free(c);
    return st;
}

static splat_status probe_png(const char *path, FILE *fp, uint32_t *w, uint32_t *h, splat_error *err)
{
    /* The signature is followed by the IHDR chunk: length 13, "IHDR", width, height (big-endian). */
    uint8_t b[24];
    if (fread(b, 1, sizeof b, fp) != sizeof b || memcmp(b + 12, "IHDR", 4) != 0)
        return splat__fail(err, SPLAT_ERR_FORMAT, "%s: corrupt PNG: no IHDR chunk at the start", path);
    uint32_t ww = (uint32_t)b[16] << 24 | (uint32_t)b[17] << 16 | (uint32_t)b[18] << 8 | b[19];
    uint32_t hh = (uint32_t)b[20] << 24 | (uint32_t)b[21] << 16 | (uint32_t)b[22] << 8 | b[23];
    if (ww == 0 || hh == 0 || ww > 0x7fffffffu || hh > 0x7fffffffu)
        return splat__fail(err, SPLAT_ERR_FORMAT, "%s: corrupt PNG: invalid size %ux%u in IHDR", path, ww, hh);
    *w = ww;
    *h = hh;
    return SPLAT_OK;
}

/* --------------------------------------------------------------------------- JPEG */

/* Progressive JPEGs may hold any number of scans, each a pass over the whole image; a crafted
 * file with thousands costs minutes. Real encoders write about ten. */
#define MAX_JPEG_SCANS 1000

typedef struct jpeg_ctx {
    struct jpeg_decompress_struct cinfo;
    struct jpeg_error_mgr jerr;
    struct jpeg_progress_mgr progress;
    jmp_buf jb;
    char msg[JMSG_LENGTH_MAX];
    splat_status status;     /* of a failure found outside libjpeg */
    bool premature_end;
    uint8_t *pixels;
} jpeg_ctx;

/* The default handler calls exit(); ours returns to the decoder. */
static void jpeg_on_error(j_common_ptr cinfo)
{
    jpeg_ctx *c = cinfo->client_data;
    cinfo->err->format_message(cinfo, c->msg);
    longjmp(c->jb, 1);
}

/* Warnings are silent, except that a truncated stream (which libjpeg pads with grey) is an
 * error, raised at once: a training image that is silently half grey is worse than a clear
 * failure, and a short file claiming a huge image is not decoded (or stored) to its end. */
static void jpeg_on_message(j_common_ptr cinfo, int level)
{
    jpeg_ctx *c = cinfo->client_data;
    if (level < 0 && cinfo->err->msg_code == JWRN_JPEG_EOF) {
        c->premature_end = true;
        snprintf(c->msg, sizeof c->msg, "the data ends early (truncated file)");
        longjmp(c->jb, 1);
    }
}

static void jpeg_on_progress(j_common_ptr cinfo)
{
    jpeg_ctx *c = cinfo->client_data;
    if (c->cinfo.input_scan_number > MAX_JPEG_SCANS) {
        snprintf(c->msg, sizeof c->msg, "more than %d scans", MAX_JPEG_SCANS);
        longjmp(c->jb, 1);
    }
}

static bool jpeg_decode(jpeg_ctx *c, FILE *fp, long long file_size, bool probe_only, uint32_t *w, uint32_t *h)
{
    jpeg_create_decompress(&c->cinfo);
    c->cinfo.progress = &c->progress;
    jpeg_stdio_src(&c->cinfo, fp);
    jpeg_read_header(&c->cinfo, TRUE);
    *w = c->cinfo.image_width;
    *h = c->cinfo.image_height;
    if (probe_only) return true;
    /* Huffman coding spends at least one bit per 8x8 block, so a header claiming more than
     * 512 pixels per byte of file is lying or the file is truncated. Arithmetic coding has no
     * such floor: a flat image of 16384x16384 fits in a few hundred bytes, and decoding it costs
     * the 1 GiB its pixels take (a progressive one as much again in coefficients) whether the file
     * is cut short or not. No photograph compresses to a thousand pixels a byte, so arithmetic-coded
     * files (rare: browsers do not decode them) are held to the same bound. */
    uint64_t px = (uint64_t)*w * *h;
    if (px > 1024ull * (uint64_t)file_size + (1u << 20) || px > MAX_PIXELS) {
        if (c->cinfo.arith_code && px <= MAX_PIXELS)
            snprintf(c->msg, sizeof c->msg, "header claims %ux%u pixels in %lld bytes of arithmetic-coded data: more "
                     "than 1024 pixels a byte, which no photograph compresses to; refused rather than decoded", *w, *h,
                     file_size);
        else
            snprintf(c->msg, sizeof c->msg, "header claims %ux%u pixels, more than the file's %lld bytes can hold",
                     *w, *h, file_size);
        c->status = px > MAX_PIXELS ? SPLAT_ERR_UNSUPPORTED : SPLAT_ERR_FORMAT;
        return false;
    }
    c->cinfo.out_color_space = JCS_EXT_RGBA;
    jpeg_start_decompress(&c->cinfo);
    if (c->cinfo.output_components != 4 || c->cinfo.output_width != *w || c->cinfo.output_height != *h) {
        snprintf(c->msg, sizeof c->msg, "unexpected output layout");
        c->status = SPLAT_ERR_FORMAT;
        return false;
    }
    size_t row_bytes = (size_t)*w * 4, rows = 0;
    while (c->cinfo.output_scanline < *h) {
        if (c->cinfo.output_scanline == rows) {
            rows = SPLAT_MIN((size_t)*h, rows ? 2 * rows : 64);
            uint8_t *more = splat__realloc(c->pixels, rows * row_bytes);
            if (!more) {
                snprintf(c->msg, sizeof c->msg, "out of host memory for %ux%u pixels", *w, *h);
                c->status = SPLAT_ERR_OUT_OF_HOST_MEMORY;
                return false;
            }
            c->pixels = more;
        }
        JSAMPROW row = c->pixels + (size_t)c->cinfo.output_scanline * row_bytes;
        if (jpeg_read_scanlines(&c->cinfo, &row, 1) != 1) break;
        /* An arithmetic decoder that meets the end-of-image marker inside a single scan's data
         * feeds zeros for the rest, silently: more than the MCU row in hand still to come is a
         * truncated image (a multi-scan file has read all of its input by now). */
        uint32_t mcu_rows = (uint32_t)c->cinfo.max_v_samp_factor * DCTSIZE;
        if (c->cinfo.arith_code && !jpeg_has_multiple_scans(&c->cinfo) && c->cinfo.unread_marker == JPEG_EOI &&
            c->cinfo.output_scanline + 2 * mcu_rows < *h) {
            c->premature_end = true;
            snprintf(c->msg, sizeof c->msg, "the data ends at row %u of %u (truncated file)", c->cinfo.output_scanline, *h);
            c->status = SPLAT_ERR_FORMAT;
            return false;
        }
    }
    if (c->premature_end || c->cinfo.output_scanline < *h) {
        snprintf(c->msg, sizeof c->msg, "the data ends early (truncated file)");
        c->status = SPLAT_ERR_FORMAT;
        return false;
    }
    jpeg_finish_decompress(&c->cinfo);
    return true;
}

static splat_status run_jpeg(const char *path, FILE *fp, long long file_size, splat_image *img, uint32_t *pw,
                             uint32_t *ph, splat_error *err)
{
    jpeg_ctx *c = splat__calloc(1, sizeof *c);
    if (!c) return splat__fail(err, SPLAT_ERR_OUT_OF_HOST_MEMORY, "%s: out of host memory", path);
    c->cinfo.err = jpeg_std_error(&c->jerr);
    c->jerr.error_exit = jpeg_on_error;
    c->jerr.emit_message = jpeg_on_message;
    c->cinfo.client_data = c;
    c->progress.progress_monitor = jpeg_on_progress;
    splat_status st = SPLAT_OK;
    if (setjmp(c->jb) == 0) {
        uint32_t w = 0, h = 0;
        if (!jpeg_decode(c, fp, file_size, img == NULL, &w, &h)) {
            st = splat__fail(err, c->status, "%s: %s JPEG: %s", path, c->premature_end ? "truncated" : "bad", c->msg);
        } else if (img) {
            img->width = w;
            img->height = h;
            img->rgba = c->pixels;
            c->pixels = NULL;
        } else {
            *pw = w;
            *ph = h;
        }
    } else {
        st = splat__fail(err, SPLAT_ERR_FORMAT, "%s: %s JPEG: %s", path, c->premature_end ? "truncated" : "corrupt", c->msg);
    }
    jpeg_destroy_decompress(&c->cinfo);
    splat__free(c->pixels);
    splat__free(c);
    return st;
}

/* ------------------------------------------------------------------------- public */

splat_status splat__image_load(const char *path, splat_image *img, splat_error *err)
{
    SPLAT_ASSERT(path && img);
    memset(img, 0, sizeof *img);
    FILE *fp;
    image_kind kind;
    long long size;
    splat_status st = open_image(path, &fp, &kind, &size, err);
    if (st != SPLAT_OK) return st;
    st = kind == KIND_PNG ? load_png(path, fp, size, img, err) : run_jpeg(path, fp, size, img, NULL, NULL, err);
    fclose(fp);
    return st;
}

splat_status splat__image_probe(const char *path, uint32_t *width, uint32_t *height, splat_error *err)
{
    SPLAT_ASSERT(path && width && height);
    FILE *fp;
    image_kind kind;
    long long size;
    splat_status st = open_image(path, &fp, &kind, &size, err);
    if (st != SPLAT_OK) return st;
    st = kind == KIND_PNG ? probe_png(path, fp, width, height, err)
                          : run_jpeg(path, fp, size, NULL, width, height, err);
    fclose(fp);
    return st;
}

typedef struct png_write_ctx {
    jmp_buf jb;
    char msg[200];
} png_write_ctx;

static void png_encode(png_structp png, png_infop info, const splat_image *img, int channels)
{
    png_set_IHDR(png, info, img->width, img->height, 8, channels == 4 ? PNG_COLOR_TYPE_RGBA : PNG_COLOR_TYPE_RGB,
                 PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
    png_write_info(png, info);
    if (channels == 3) png_set_filler(png, 0, PNG_FILLER_AFTER); /* drops the 4th byte of each pixel */
    for (uint32_t y = 0; y < img->height; y++) png_write_row(png, img->rgba + (size_t)y * img->width * 4);
    png_write_end(png, NULL);
}

splat_status splat__image_save_png(const char *path, const splat_image *img, int channels, splat_error *err)
{
    SPLAT_ASSERT(path && img && img->rgba && img->width > 0 && img->height > 0);
    if (channels != 3 && channels != 4)
        return splat__fail(err, SPLAT_ERR_INVALID_ARG, "%s: PNG channels must be 3 or 4, not %d", path, channels);
    splat_atomic_file f;
    splat_status st = splat__atomic_open(&f, path, err);
    if (st != SPLAT_OK) return st;
    png_write_ctx *c = splat__calloc(1, sizeof *c);
    png_structp png = c ? png_create_write_struct(PNG_LIBPNG_VER_STRING, c, png_on_error, png_on_warning) : NULL;
    png_infop info = png ? png_create_info_struct(png) : NULL;
    if (!info) {
        st = splat__fail(err, SPLAT_ERR_OUT_OF_HOST_MEMORY, "%s: out of host memory for the PNG encoder", path);
    } else if (setjmp(c->jb) == 0) {
        png_init_io(png, f.fp);
        png_encode(png, info, img, channels);
    } else {
        st = splat__fail(err, SPLAT_ERR_IO, "%s: PNG encoding failed: %s", path, c->msg);
    }
    png_destroy_write_struct(png ? &png : NULL, info ? &info : NULL);
    splat__free(c);
    if (st == SPLAT_OK) return splat__atomic_commit(&f, err);
    splat__atomic_abort(&f);
    return st;
}

splat_status splat__image_downsample(const splat_image *src, uint32_t factor, splat_image *dst, splat_error *err)
{
    SPLAT_ASSERT(src && src->rgba && dst && factor >= 1);
    memset(dst, 0, sizeof *dst);
    uint32_t w = SPLAT_MAX(src->width / factor, 1u), h = SPLAT_MAX(src->height / factor, 1u);
    splat_status st = alloc_pixels("downsample", w, h, &dst->rgba, err);
    if (st != SPLAT_OK) return st;
    dst->width = w;
    dst->height = h;
    for (uint32_t y = 0; y < h; y++) {
        uint32_t y1 = SPLAT_MIN((uint64_t)(y + 1) * factor, src->height);
        for (uint32_t x = 0; x < w; x++) {
            uint32_t x1 = SPLAT_MIN((uint64_t)(x + 1) * factor, src->width);
            /* Colour is averaged weighted by alpha, so the (arbitrary) colour of transparent
             * pixels does not bleed into the edges of objects; with alpha constant this is the
             * plain box average. */
            uint64_t sum[3] = {0}, wsum[3] = {0}, asum = 0, n = 0;
            for (uint32_t sy = y * factor; sy < y1; sy++) {
                const uint8_t *p = src->rgba + ((size_t)sy * src->width + (size_t)x * factor) * 4;
                for (uint32_t sx = x * factor; sx < x1; sx++, p += 4) {
                    for (int c = 0; c < 3; c++) sum[c] += p[c], wsum[c] += (uint64_t)p[c] * p[3];
                    asum += p[3];
                    n++;
                }
            }
            uint8_t *q = dst->rgba + ((size_t)y * w + x) * 4;
            for (int c = 0; c < 3; c++)
                q[c] = (uint8_t)(asum ? (wsum[c] + asum / 2) / asum : (sum[c] + n / 2) / n);
            q[3] = (uint8_t)((asum + n / 2) / n);
        }
    }
    return SPLAT_OK;
}

/* ---------------------------------------------------------------- JPEG encoding */

/* A libjpeg destination that grows a splat_bytes through the allocation hooks (jpeg_mem_dest
 * would malloc behind them). */
typedef struct jpeg_out {
    struct jpeg_destination_mgr mgr;
    splat_bytes *bytes;
    jmp_buf *jb;
} jpeg_out;

static bool bytes_grow(splat_bytes *b, size_t want)
{
    if (want <= b->cap) return true;
    size_t cap = b->cap ? b->cap : 65536;
    while (cap < want) cap *= 2;
    uint8_t *more = splat__realloc(b->data, cap);
    if (!more) return false;
    b->data = more;
    b->cap = cap;
    return true;
}

static void out_init(j_compress_ptr cinfo)
{
    jpeg_out *o = (jpeg_out *)cinfo->dest;
    o->mgr.next_output_byte = o->bytes->data;
    o->mgr.free_in_buffer = o->bytes->cap;
}

static boolean out_empty(j_compress_ptr cinfo)
{
    /* called with the whole buffer full */
    jpeg_out *o = (jpeg_out *)cinfo->dest;
    size_t used = o->bytes->cap;
    if (!bytes_grow(o->bytes, used * 2)) longjmp(*o->jb, 2);
    o->mgr.next_output_byte = o->bytes->data + used;
    o->mgr.free_in_buffer = o->bytes->cap - used;
    return TRUE;
}

static void out_term(j_compress_ptr cinfo)
{
    jpeg_out *o = (jpeg_out *)cinfo->dest;
    o->bytes->size = o->bytes->cap - o->mgr.free_in_buffer;
}

typedef struct jpeg_enc {
    struct jpeg_compress_struct cinfo;
    struct jpeg_error_mgr jerr;
    jmp_buf jb;
    char msg[JMSG_LENGTH_MAX];
} jpeg_enc;

static void jpeg_enc_on_error(j_common_ptr cinfo)
{
    jpeg_enc *e = cinfo->client_data;
    cinfo->err->format_message(cinfo, e->msg);
    longjmp(e->jb, 1);
}

splat_status splat__jpeg_encode(const uint8_t *pixels, int channels, uint32_t width, uint32_t height, int quality,
                                splat_bytes *out, splat_error *err)
{
    SPLAT_ASSERT(width > 0 && height > 0 && width <= 65500 && height <= 65500 && quality >= 1 && quality <= 100);
    SPLAT_ASSERT(channels == 3 || channels == 4);
    out->size = 0;
    if (!bytes_grow(out, 65536)) return splat__fail(err, SPLAT_ERR_OUT_OF_HOST_MEMORY, "JPEG: out of host memory");
    jpeg_enc *e = splat__calloc(1, sizeof *e);
    if (!e) return splat__fail(err, SPLAT_ERR_OUT_OF_HOST_MEMORY, "JPEG: out of host memory");
    jpeg_out o = {.mgr = {.init_destination = out_init, .empty_output_buffer = out_empty, .term_destination = out_term},
                  .bytes = out, .jb = &e->jb};
    e->cinfo.err = jpeg_std_error(&e->jerr);
    e->jerr.error_exit = jpeg_enc_on_error;
    e->cinfo.client_data = e;
    splat_status st = SPLAT_OK;
    int jumped = setjmp(e->jb);
    if (jumped == 0) {
        jpeg_create_compress(&e->cinfo);
        e->cinfo.dest = &o.mgr;
        e->cinfo.image_width = width;
        e->cinfo.image_height = height;
        e->cinfo.input_components = channels;
        e->cinfo.in_color_space = channels == 4 ? JCS_EXT_RGBX : JCS_RGB;
        jpeg_set_defaults(&e->cinfo);
        jpeg_set_quality(&e->cinfo, quality, TRUE);
        if (quality >= 90) e->cinfo.comp_info[0].h_samp_factor = e->cinfo.comp_info[0].v_samp_factor = 1;
        jpeg_start_compress(&e->cinfo, TRUE);
        while (e->cinfo.next_scanline < height) {
            JSAMPROW row = (JSAMPROW)(pixels + (size_t)e->cinfo.next_scanline * width * channels);
            jpeg_write_scanlines(&e->cinfo, &row, 1);
        }
        jpeg_finish_compress(&e->cinfo);
    } else {
        st = jumped == 2 ? splat__fail(err, SPLAT_ERR_OUT_OF_HOST_MEMORY, "JPEG: out of host memory")
                         : splat__fail(err, SPLAT_ERR_FORMAT, "JPEG encoding: %s", e->msg);
        out->size = 0;
    }
    jpeg_destroy_compress(&e->cinfo);
    splat__free(e);
    return st;
}

void splat__image_free(splat_image *img)
{
    if (!img) return;
    splat__free(img->rgba);
    memset(img, 0, sizeof *img);
}
