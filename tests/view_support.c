/* The viewer tests' shared helpers (view_support.h). */
#include "view_support.h"

#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <jpeglib.h>

/* A camera at `eye` looking at the origin, y down as near as world -y allows. */
static splat_camera look_at_origin(const double eye[3], uint32_t w, uint32_t h)
{
    splat_camera c = {0};
    double z[3] = {-eye[0], -eye[1], -eye[2]}, zn = sqrt(z[0] * z[0] + z[1] * z[1] + z[2] * z[2]);
    for (int i = 0; i < 3; i++) z[i] /= zn;
    double down[3] = {0, 1, 0}, d = down[0] * z[0] + down[1] * z[1] + down[2] * z[2];
    double y[3] = {down[0] - d * z[0], down[1] - d * z[1], down[2] - d * z[2]};
    double yn = sqrt(y[0] * y[0] + y[1] * y[1] + y[2] * y[2]);
    for (int i = 0; i < 3; i++) y[i] /= yn;
    double x[3] = {y[1] * z[2] - y[2] * z[1], y[2] * z[0] - y[0] * z[2], y[0] * z[1] - y[1] * z[0]};
    for (int i = 0; i < 3; i++) {
        c.R[i] = (float)x[i];
        c.R[3 + i] = (float)y[i];
        c.R[6 + i] = (float)z[i];
    }
    for (int r = 0; r < 3; r++) c.t[r] = -(float)(c.R[3 * r] * eye[0] + c.R[3 * r + 1] * eye[1] + c.R[3 * r + 2] * eye[2]);
    c.width = w;
    c.height = h;
    c.fx = c.fy = (float)(0.9 * w);
    c.cx = 0.5f * w + (float)t_uniform(-2, 2);
    c.cy = 0.5f * h + (float)t_uniform(-2, 2);
    return c;
}

void t_view_scene(splat_scene *s, uint32_t n, splat_camera *cams, uint32_t n_cams, uint32_t w, uint32_t h)
{
    splat_error err = {0};
    if (splat_scene_init(s, n, &err) != SPLAT_OK) abort();
    s->count = n;
    s->sh_degree = 1;
    for (uint32_t k = 0; k < n; k++) {
        double p[3], r2;
        do {
            for (int i = 0; i < 3; i++) p[i] = t_uniform(-1, 1);
            r2 = p[0] * p[0] + p[1] * p[1] + p[2] * p[2];
        } while (r2 > 1);
        for (int i = 0; i < 3; i++) {
            s->means[3 * k + i] = (float)p[i];
            s->log_scales[3 * k + i] = (float)log(t_uniform(0.02, 0.12));
        }
        for (int i = 0; i < 4; i++) s->quats[4 * k + i] = (float)t_uniform(-1, 1);
        s->quats[4 * k] += 2.0f;
        s->opacities[k] = (float)t_uniform(-1, 3);
        for (int c = 0; c < SPLAT_SH_COEFFS * 3; c++) s->sh[48 * k + c] = c < 3 ? (float)t_uniform(-1.5, 1.5) : c < 12 ? (float)t_uniform(-0.3, 0.3) : 0.0f;
    }
    /* the first camera straight ahead; the next ones around it, the second close in front of the
     * first and a little aside, so that the first sees the second's frustum */
    for (uint32_t k = 0; k < n_cams; k++) {
        double eye[3] = {0, 0, -4};
        if (k == 1) eye[0] = 0.5, eye[1] = 0.2, eye[2] = -2.5;
        else if (k > 1) {
            double a = 2 * M_PI * k / n_cams;
            eye[0] = 4 * sin(a), eye[1] = t_uniform(-1, 1), eye[2] = -4 * cos(a);
        }
        cams[k] = look_at_origin(eye, w, h);
    }
}

double t_psnr8(const uint8_t *a, int ac, const uint8_t *b, int bc, uint32_t w, uint32_t h)
{
    double se = 0;
    for (uint64_t p = 0; p < (uint64_t)w * h; p++)
        for (int c = 0; c < 3; c++) {
            double d = (double)a[p * ac + c] - b[p * bc + c];
            se += d * d;
        }
    double mse = se / (3.0 * w * h);
    return mse > 0 ? 10 * log10(255.0 * 255.0 / mse) : 99;
}

typedef struct jerr {
    struct jpeg_error_mgr mgr;
    jmp_buf jb;
} jerr;

static void on_jpeg_error(j_common_ptr c) { longjmp(((jerr *)c->err)->jb, 1); }

bool t_jpeg_decode(const uint8_t *data, size_t n, uint8_t **rgb, uint32_t *w, uint32_t *h)
{
    struct jpeg_decompress_struct d;
    jerr e;
    *rgb = NULL;
    d.err = jpeg_std_error(&e.mgr);
    e.mgr.error_exit = on_jpeg_error;
    uint8_t *volatile out = NULL;
    if (setjmp(e.jb)) {
        jpeg_destroy_decompress(&d);
        free(out);
        return false;
    }
    jpeg_create_decompress(&d);
    jpeg_mem_src(&d, data, (unsigned long)n);
    jpeg_read_header(&d, TRUE);
    d.out_color_space = JCS_RGB;
    jpeg_start_decompress(&d);
    *w = d.output_width;
    *h = d.output_height;
    out = malloc((size_t)*w * *h * 3);
    if (!out) longjmp(e.jb, 1);
    while (d.output_scanline < d.output_height) {
        JSAMPROW row = out + (size_t)d.output_scanline * *w * 3;
        jpeg_read_scanlines(&d, &row, 1);
    }
    jpeg_finish_decompress(&d);
    jpeg_destroy_decompress(&d);
    *rgb = out;
    return true;
}

static uint32_t le32(const uint8_t *p) { return p[0] | p[1] << 8 | p[2] << 16 | (uint32_t)p[3] << 24; }

static bool refuse(char *why, size_t size, const char *fmt, ...) SPLAT_PRINTF(3, 4);
static bool refuse(char *why, size_t size, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, size, fmt, ap);
    va_end(ap);
    return false;
}

bool t_frame_decode(const uint8_t *msg, size_t n, size_t header, uint8_t **rgb, uint32_t *w, uint32_t *h, uint32_t *strips,
                    char *why, size_t why_size)
{
    *rgb = NULL;
    if (n < header + 4) return refuse(why, why_size, "%zu bytes: shorter than the header and its strip count", n);
    *w = le32(msg + 8), *h = le32(msg + 12);
    uint32_t ns = *strips = le32(msg + header);
    if (*w < 1 || *h < 1 || *w > 65500 || *h > 65500) return refuse(why, why_size, "a frame of %ux%u", *w, *h);
    if (ns < 1 || ns > *h) return refuse(why, why_size, "%u strips for %u rows", ns, *h);
    size_t at = header + 4 + 12 * (size_t)ns;
    if (at > n) return refuse(why, why_size, "the table of %u strips goes past the message's %zu bytes", ns, n);
    uint8_t *out = malloc((size_t)*w * *h * 3);
    if (!out) return refuse(why, why_size, "out of memory");
    uint32_t y = 0;
    for (uint32_t k = 0; k < ns; k++) {
        const uint8_t *t = msg + header + 4 + 12 * (size_t)k;
        uint32_t sy = le32(t), rows = le32(t + 4), bytes = le32(t + 8);
        uint8_t *px = NULL;
        uint32_t sw = 0, sh = 0;
        bool ok = sy == y && rows >= 1 && rows <= *h - y && bytes >= 1 && bytes <= n - at;
        if (ok && !(ok = t_jpeg_decode(msg + at, bytes, &px, &sw, &sh)))
            refuse(why, why_size, "strip %u (rows %u..%u): its JPEG does not decode", k, sy, sy + rows - 1);
        else if (ok && !(ok = sw == *w && sh == rows))
            refuse(why, why_size, "strip %u is %ux%u, not %ux%u", k, sw, sh, *w, rows);
        else if (!ok)
            refuse(why, why_size, "strip %u: rows %u..+%u and %u bytes, where row %u and %zu bytes are next of %u rows and %zu "
                   "bytes", k, sy, rows, bytes, y, at, *h, n);
        if (!ok) {
            free(px);
            free(out);
            return false;
        }
        memcpy(out + (size_t)y * *w * 3, px, (size_t)rows * *w * 3);
        free(px);
        y += rows;
        at += bytes;
    }
    if (y != *h || at != n) {
        free(out);
        return refuse(why, why_size, "the strips cover %u of %u rows and end at byte %zu of %zu", y, *h, at, n);
    }
    *rgb = out;
    return true;
}

bool t_proc_start(t_proc *p, const char *args, const char *log)
{
    snprintf(p->log, sizeof p->log, "%s", log);
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "exec %s %s >'%s' 2>&1", SPLAT_CLI_PATH, args, log);
    p->pid = fork();
    if (p->pid < 0) return false;
    if (p->pid == 0) {
        execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
        _exit(127);
    }
    return true;
}

char *t_proc_log(const t_proc *p)
{
    FILE *f = fopen(p->log, "rb");
    char *s = calloc(1, 1 << 20);
    if (f && s) {
        size_t n = fread(s, 1, (1 << 20) - 1, f);
        s[n] = '\0';
    }
    if (f) fclose(f);
    return s;
}

static void nap(double s)
{
    struct timespec ts = {(time_t)s, (long)((s - (time_t)s) * 1e9)};
    nanosleep(&ts, NULL);
}

uint32_t t_proc_viewer_port(t_proc *p, double timeout_s)
{
    double end = splat__now() + timeout_s;
    while (splat__now() < end) {
        char *log = t_proc_log(p);
        const char *at = log ? strstr(log, "viewer at http://") : NULL;
        const char *colon = at ? strchr(at + 17, ':') : NULL;
        uint32_t port = colon ? (uint32_t)strtoul(colon + 1, NULL, 10) : 0;
        free(log);
        if (port) return port;
        int status;
        if (waitpid(p->pid, &status, WNOHANG) == p->pid) {
            p->pid = 0;
            return 0;
        }
        nap(0.05);
    }
    return 0;
}

int t_proc_wait(t_proc *p, double timeout_s)
{
    if (p->pid <= 0) return -1;
    double end = splat__now() + timeout_s;
    int status;
    for (;;) {
        pid_t r = waitpid(p->pid, &status, WNOHANG);
        if (r == p->pid) break;
        if (splat__now() > end) {
            kill(p->pid, SIGKILL);
            waitpid(p->pid, &status, 0);
            p->pid = 0;
            return -2;
        }
        nap(0.05);
    }
    p->pid = 0;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}
