/* view: what the page and the server say to each other (view.h), and what the viewer says to its
 * log; the page's files; the frame of reference the page starts from. Host code only, safe on
 * any input. */
#include <stdio.h>
#include <stdlib.h>

#include <cjson/cJSON.h>

#include "view/view.h"

void splat__view_log(splat_viewer *v, const char *fmt, ...)
{
    char line[600];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    if (v->desc.log) v->desc.log(v->desc.log_user, line);
    else fprintf(stderr, "splatc: viewer: %s\n", line);
}

/* ------------------------------------------------------------------ the page's files */

const splat_view_file *splat__view_file(const char *path)
{
    if (!path || path[0] != '/') return NULL;
    const char *name = path[1] ? path + 1 : "index.html";
    for (const splat_view_file *f = splat__view_files; f->name; f++)
        if (strcmp(f->name, name) == 0) return f;
    return NULL;
}

const char *splat__view_mime(const char *name)
{
    const char *dot = strrchr(name, '.');
    if (dot && strcmp(dot, ".html") == 0) return "text/html; charset=utf-8";
    if (dot && strcmp(dot, ".js") == 0) return "text/javascript; charset=utf-8";
    if (dot && strcmp(dot, ".css") == 0) return "text/css; charset=utf-8";
    if (dot && strcmp(dot, ".svg") == 0) return "image/svg+xml";
    return "application/octet-stream";
}

/* ------------------------------------------------------------------ client messages */

static bool why(char *out, size_t size, const char *fmt, ...) SPLAT_PRINTF(3, 4);
static bool why(char *out, size_t size, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(out, size, fmt, ap);
    va_end(ap);
    return false;
}

/* A finite number that stays finite as a float. */
static bool number(const cJSON *o, const char *key, double *v)
{
    const cJSON *j = cJSON_GetObjectItemCaseSensitive(o, key);
    if (!cJSON_IsNumber(j) || !isfinite(j->valuedouble) || fabs(j->valuedouble) > 1e30) return false;
    *v = j->valuedouble;
    return true;
}

static bool whole(const cJSON *o, const char *key, double lo, double hi, uint32_t *v)
{
    double d;
    if (!number(o, key, &d) || d != floor(d) || d < lo || d > hi) return false;
    *v = (uint32_t)d;
    return true;
}

static bool numbers(const cJSON *o, const char *key, float *v, int n)
{
    const cJSON *a = cJSON_GetObjectItemCaseSensitive(o, key);
    if (!cJSON_IsArray(a) || cJSON_GetArraySize(a) != n) return false;
    int k = 0;
    const cJSON *e;
    cJSON_ArrayForEach(e, a)
    {
        if (!cJSON_IsNumber(e) || !isfinite(e->valuedouble) || fabs(e->valuedouble) > 1e30) return false;
        v[k++] = (float)e->valuedouble;
    }
    return k == n;
}

static bool parse_frame(const cJSON *o, uint32_t max_side, splat_view_request *r, char *w, size_t ws)
{
    memset(r, 0, sizeof *r);
    double fx, fy, cx, cy;
    if (!whole(o, "id", 0, 4294967295.0, &r->id)) return why(w, ws, "a frame request without a whole \"id\" in 0..2^32-1");
    if (!whole(o, "w", 1, max_side, &r->cam.width) || !whole(o, "h", 1, max_side, &r->cam.height))
        return why(w, ws, "a frame request whose \"w\" or \"h\" is not a whole number in 1..%u", max_side);
    if (!whole(o, "q", 1, 100, &r->quality)) return why(w, ws, "a frame request whose \"q\" is not a whole number in 1..100");
    if (!number(o, "fx", &fx) || !number(o, "fy", &fy) || !(fx > 0 && fy > 0) || !((float)fx > 0 && (float)fy > 0))
        return why(w, ws, "a frame request whose \"fx\" or \"fy\" is not a positive number");
    if (!number(o, "cx", &cx) || !number(o, "cy", &cy)) return why(w, ws, "a frame request whose \"cx\" or \"cy\" is not a number");
    if (!numbers(o, "R", r->cam.R, 9) || !numbers(o, "T", r->cam.t, 3))
        return why(w, ws, "a frame request whose \"R\" is not 9 numbers or \"T\" not 3");
    r->cam.fx = (float)fx, r->cam.fy = (float)fy, r->cam.cx = (float)cx, r->cam.cy = (float)cy;
    return true;
}

bool splat__view_parse(const char *text, size_t len, uint32_t max_side, splat_view_msg *out, char *w, size_t ws)
{
    memset(out, 0, sizeof *out);
    if (len > SPLAT_VIEW_MAX_MESSAGE) return why(w, ws, "a message of %zu bytes (at most %d)", len, SPLAT_VIEW_MAX_MESSAGE);
    cJSON *o = cJSON_ParseWithLength(text, len);
    bool ok = false;
    if (!o) why(w, ws, "a message that is not JSON");
    else if (!cJSON_IsObject(o)) why(w, ws, "a message that is not a JSON object");
    else {
        const cJSON *t = cJSON_GetObjectItemCaseSensitive(o, "t");
        const char *kind = cJSON_GetStringValue(t);
        if (!kind) why(w, ws, "a message without a string \"t\"");
        else if (strcmp(kind, "frame") == 0) {
            out->kind = SPLAT_VIEW_MSG_FRAME;
            ok = parse_frame(o, max_side, &out->frame, w, ws);
        } else if (strcmp(kind, "pause") == 0) out->kind = SPLAT_VIEW_MSG_PAUSE, ok = true;
        else if (strcmp(kind, "resume") == 0) out->kind = SPLAT_VIEW_MSG_RESUME, ok = true;
        else if (strcmp(kind, "save") == 0) out->kind = SPLAT_VIEW_MSG_SAVE, ok = true;
        else {
            char shown[40];
            size_t n = strlen(kind);
            snprintf(shown, sizeof shown, "%.32s%s", kind, n > 32 ? "..." : "");
            /* only printable ASCII reaches the log */
            for (char *c = shown; *c; c++)
                if (*c < 0x20 || *c > 0x7e) *c = '?';
            why(w, ws, "a message of unknown type \"%s\"", shown);
        }
    }
    cJSON_Delete(o);
    if (!ok) out->kind = 0;
    return ok;
}

/* ------------------------------------------------------------------ frames */

static uint8_t *put32(uint8_t *p, uint32_t v)
{
    for (int b = 0; b < 4; b++) p[b] = (uint8_t)(v >> (8 * b)); /* little-endian, whatever the host */
    return p + 4;
}

uint32_t splat__view_clock_us(double t) { return t <= 0 ? 0 : (uint32_t)(uint64_t)(t * 1e6); }

void splat__view_frame_stamp_written(uint8_t *msg, size_t len, double now)
{
    if (len < SPLAT_VIEW_FRAME_HEADER) return;
    const uint8_t *a = msg + 4 * SPLAT_VIEW_HEAD_ARRIVED_CLOCK;
    uint32_t arrived = a[0] | a[1] << 8 | a[2] << 16 | (uint32_t)a[3] << 24;
    put32(msg + 4 * SPLAT_VIEW_HEAD_WRITTEN_US, splat__view_clock_us(now) - arrived); /* modulo 2^32, as both are */
}

bool splat__view_frame_pack(const uint32_t head[SPLAT_VIEW_HEAD_WORDS], const splat_view_strip *strips, uint32_t n,
                            uint8_t **msg, size_t *len)
{
    size_t size = SPLAT_VIEW_FRAME_HEADER + 4 + (size_t)n * 4 * SPLAT_VIEW_STRIP_WORDS;
    for (uint32_t k = 0; k < n; k++) size += strips[k].jpeg.size;
    uint8_t *p = *msg = splat__malloc(size);
    if (!p) return false;
    for (int k = 0; k < SPLAT_VIEW_HEAD_WORDS; k++) p = put32(p, head[k]);
    p = put32(p, n);
    for (uint32_t k = 0; k < n; k++) {
        p = put32(p, strips[k].y);
        p = put32(p, strips[k].rows);
        p = put32(p, (uint32_t)strips[k].jpeg.size);
    }
    for (uint32_t k = 0; k < n; k++) {
        memcpy(p, strips[k].jpeg.data, strips[k].jpeg.size);
        p += strips[k].jpeg.size;
    }
    *len = size;
    return true;
}

/* ------------------------------------------------------------------ server messages */

static cJSON *floats(const float *v, int n)
{
    cJSON *a = cJSON_CreateArray();
    for (int k = 0; a && k < n; k++) cJSON_AddItemToArray(a, cJSON_CreateNumber(v[k]));
    return a;
}

/* Everything else stays a plain number; non-finite values (a diverged run) become null. */
static void add_number(cJSON *o, const char *key, double v)
{
    if (isfinite(v)) cJSON_AddNumberToObject(o, key, v);
    else cJSON_AddNullToObject(o, key);
}

static cJSON *stats_object(const splat_view_stats *s)
{
    cJSON *o = cJSON_CreateObject();
    if (!o) return NULL;
    cJSON_AddStringToObject(o, "t", "stats");
    cJSON_AddBoolToObject(o, "training", s->training);
    cJSON_AddNumberToObject(o, "step", s->prog.step);
    cJSON_AddNumberToObject(o, "steps", s->prog.steps);
    add_number(o, "loss", s->prog.loss);
    add_number(o, "psnr", s->prog.psnr);
    cJSON_AddNumberToObject(o, "n", s->prog.n_gaussians);
    add_number(o, "its", s->prog.iters_per_sec);
    add_number(o, "eta", s->prog.eta_sec);
    cJSON_AddBoolToObject(o, "paused", s->paused);
    cJSON_AddBoolToObject(o, "pause_asked", s->pause_asked);
    cJSON_AddBoolToObject(o, "done", s->done);
    return o;
}

static char *print(cJSON *o)
{
    char *text = o ? cJSON_PrintUnformatted(o) : NULL;
    cJSON_Delete(o);
    if (!text) return NULL;
    char *mine = splat__strdup(text); /* freed with splat__free, like everything of the library */
    cJSON_free(text);
    return mine;
}

char *splat__view_stats_json(const splat_view_stats *s) { return print(stats_object(s)); }

char *splat__view_note_json(const char *type, uint32_t id, const char *text)
{
    cJSON *o = cJSON_CreateObject();
    if (!o) return NULL;
    cJSON_AddStringToObject(o, "t", type);
    if (strcmp(type, "error") == 0) cJSON_AddNumberToObject(o, "id", id);
    cJSON_AddStringToObject(o, "text", text);
    return print(o);
}

char *splat__view_hello_json(const splat_view_stats *s, const splat_view_history *h, const splat_camera *cams,
                             char *const *names, uint32_t n_cams, const splat_view_frame_of_ref *ref, uint32_t max_fps,
                             uint32_t max_side)
{
    cJSON *o = cJSON_CreateObject();
    if (!o) return NULL;
    cJSON_AddStringToObject(o, "t", "hello");
    cJSON_AddStringToObject(o, "mode", s->training ? "train" : "view");
    cJSON_AddNumberToObject(o, "max_fps", max_fps);
    cJSON_AddNumberToObject(o, "max_side", max_side);
    cJSON_AddNumberToObject(o, "frame_header", SPLAT_VIEW_FRAME_HEADER);
    cJSON_AddItemToObject(o, "center", floats(ref->center, 3));
    add_number(o, "radius", ref->radius);
    cJSON_AddItemToObject(o, "up", floats(ref->up, 3));
    cJSON *list = cJSON_AddArrayToObject(o, "cameras");
    for (uint32_t k = 0; list && k < n_cams; k++) {
        const splat_camera *c = &cams[k];
        cJSON *j = cJSON_CreateObject();
        if (!j) break;
        char name[32];
        snprintf(name, sizeof name, "camera %u", k);
        cJSON_AddStringToObject(j, "name", names && names[k] ? names[k] : name);
        cJSON_AddNumberToObject(j, "w", c->width);
        cJSON_AddNumberToObject(j, "h", c->height);
        cJSON_AddNumberToObject(j, "fx", c->fx);
        cJSON_AddNumberToObject(j, "fy", c->fy);
        cJSON_AddNumberToObject(j, "cx", c->cx);
        cJSON_AddNumberToObject(j, "cy", c->cy);
        cJSON_AddItemToObject(j, "R", floats(c->R, 9));
        cJSON_AddItemToObject(j, "T", floats(c->t, 3));
        cJSON_AddItemToArray(list, j);
    }
    cJSON *hist = cJSON_AddArrayToObject(o, "history");
    for (uint32_t k = 0; hist && k < h->n; k++) {
        float p[3] = {h->step[k], h->loss[k], h->psnr[k]};
        cJSON_AddItemToArray(hist, floats(p, 3));
    }
    cJSON_AddItemToObject(o, "stats", stats_object(s));
    return print(o);
}

void splat__view_history_add(splat_view_history *h, const splat_train_progress *p)
{
    if (!h->stride) h->stride = 1;
    if (h->n && h->step[h->n - 1] >= (float)p->step) return; /* the same step again (the forced last report) */
    if (++h->skipped < h->stride) return;
    h->skipped = 0;
    if (h->n == SPLAT_VIEW_HISTORY) {
        /* full: keep every other point, and from now on every other report */
        for (uint32_t k = 0; k < h->n / 2; k++) {
            h->step[k] = h->step[2 * k + 1];
            h->loss[k] = h->loss[2 * k + 1];
            h->psnr[k] = h->psnr[2 * k + 1];
        }
        h->n /= 2;
        h->stride *= 2;
    }
    h->step[h->n] = (float)p->step;
    h->loss[h->n] = p->loss;
    h->psnr[h->n] = p->psnr;
    h->n++;
}

/* ------------------------------------------------------------------ frame of reference */

static int cmp_float(const void *a, const void *b)
{
    float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

/* The median of n values spread `stride` floats apart, into scratch [n]. */
static float median(const float *v, uint32_t n, uint32_t stride, float *scratch)
{
    for (uint32_t k = 0; k < n; k++) scratch[k] = v[(size_t)k * stride];
    qsort(scratch, n, sizeof *scratch, cmp_float);
    return scratch[n / 2];
}

void splat__view_frame_of_ref(const float *means, uint32_t n, const splat_camera *cams, uint32_t n_cams,
                              splat_view_frame_of_ref *out)
{
    memset(out, 0, sizeof *out);
    out->radius = 1.0f;
    out->up[1] = -1.0f; /* the OpenCV convention's up, when nothing says otherwise */
    double up[3] = {0, 0, 0};
    for (uint32_t k = 0; k < n_cams; k++)
        for (int i = 0; i < 3; i++) up[i] -= cams[k].R[3 + i]; /* the camera's -y axis in world space */
    double un = sqrt(up[0] * up[0] + up[1] * up[1] + up[2] * up[2]);
    if (un > 1e-6)
        for (int i = 0; i < 3; i++) out->up[i] = (float)(up[i] / un);
    uint32_t m = n ? n : n_cams;
    float *scratch = m ? splat__malloc((size_t)m * 3 * sizeof(float)) : NULL;
    if (!scratch) return;
    if (n) {
        for (int i = 0; i < 3; i++) out->center[i] = median(means + i, n, 3, scratch);
    } else {
        for (uint32_t k = 0; k < n_cams; k++)
            for (int i = 0; i < 3; i++) { /* the camera centre: -R^T t */
                const splat_camera *c = &cams[k];
                scratch[3 * k + i] = -(c->R[i] * c->t[0] + c->R[3 + i] * c->t[1] + c->R[6 + i] * c->t[2]);
            }
        for (int i = 0; i < 3; i++) {
            double s = 0;
            for (uint32_t k = 0; k < n_cams; k++) s += scratch[3 * k + i];
            out->center[i] = (float)(s / n_cams);
        }
        /* the cameras' spread */
        for (uint32_t k = 0; k < n_cams; k++) {
            double d = 0;
            for (int i = 0; i < 3; i++) d += (scratch[3 * k + i] - out->center[i]) * (scratch[3 * k + i] - out->center[i]);
            scratch[k] = (float)sqrt(d);
        }
        qsort(scratch, n_cams, sizeof *scratch, cmp_float);
        out->radius = scratch[n_cams - 1] > 0 ? scratch[n_cams - 1] : 1.0f;
        splat__free(scratch);
        return;
    }
    for (uint32_t k = 0; k < n; k++) {
        double d = 0;
        for (int i = 0; i < 3; i++) d += (means[3 * k + i] - out->center[i]) * (means[3 * k + i] - out->center[i]);
        scratch[k] = (float)sqrt(d);
    }
    qsort(scratch, n, sizeof *scratch, cmp_float);
    float r = scratch[(size_t)(0.9 * (n - 1))];
    out->radius = isfinite(r) && r > 0 ? r : 1.0f;
    splat__free(scratch);
}
