/* view: a frame's JPEG, in horizontal strips encoded at once (view.h, splat_view_encoder). One
 * libjpeg-turbo encode of 1280x720 at quality 90 takes 4-8 ms of one core, and as much as 30 ms
 * when training's own threads crowd the host: the strips spread it over the pool's threads and
 * the renderer's own. Each strip is a JPEG of its own, so nothing is shared while they encode. */
#include <time.h>

#include "view/view.h"

uint32_t splat__view_strip_layout(uint32_t height, uint32_t max_strips, uint32_t *y, uint32_t *rows)
{
    /* whole 16-row bands: the MCUs of 4:2:0, two of 4:4:4 */
    uint32_t bands = (height + 15) / 16;
    uint32_t n = SPLAT_MAX(1u, SPLAT_MIN(max_strips, bands));
    for (uint32_t k = 0; k < n; k++) {
        uint32_t first = (uint32_t)((uint64_t)bands * k / n), end = (uint32_t)((uint64_t)bands * (k + 1) / n);
        y[k] = 16 * first;
        rows[k] = SPLAT_MIN(16 * end, height) - y[k];
    }
    return n;
}

static double thread_cpu(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void encode_strip(splat_view_encoder *e, uint32_t k)
{
    splat_view_strip *s = &e->strips[k];
    double t0 = splat__now(), c0 = thread_cpu();
    memset(&s->err, 0, sizeof s->err);
    s->status = splat__jpeg_encode(e->pixels + (size_t)s->y * e->width * 4, 4, e->width, s->rows, e->quality, &s->jpeg,
                                   &s->err);
    s->seconds = splat__now() - t0;
    s->cpu_seconds = thread_cpu() - c0;
}

/* Encodes strips of the current frame until none is left to take. Under the lock, which it lets
 * go while encoding. */
static void take_strips(splat_view_encoder *e)
{
    while (e->next < e->n) {
        uint32_t k = e->next++;
        pthread_mutex_unlock(&e->lock);
        encode_strip(e, k);
        pthread_mutex_lock(&e->lock);
        if (--e->left == 0) pthread_cond_signal(&e->done);
    }
}

static void *worker(void *arg)
{
    splat_view_encoder *e = arg;
    pthread_mutex_lock(&e->lock);
    while (!e->stop) {
        take_strips(e);
        if (!e->stop) pthread_cond_wait(&e->work, &e->lock);
    }
    pthread_mutex_unlock(&e->lock);
    return NULL;
}

splat_status splat__view_encoder_init(splat_view_encoder *e, splat_error *err)
{
    memset(e, 0, sizeof *e);
    if (pthread_mutex_init(&e->lock, NULL) != 0) return splat__fail(err, SPLAT_ERR_OUT_OF_HOST_MEMORY, "viewer: cannot create a lock");
    if (pthread_cond_init(&e->work, NULL) != 0 || pthread_cond_init(&e->done, NULL) != 0) {
        pthread_mutex_destroy(&e->lock);
        return splat__fail(err, SPLAT_ERR_OUT_OF_HOST_MEMORY, "viewer: cannot create a condition variable");
    }
    for (uint32_t k = 0; k < SPLAT_COUNTOF(e->threads); k++) {
        if (pthread_create(&e->threads[k], NULL, worker, e) != 0) {
            splat__view_encoder_free(e);
            return splat__fail(err, SPLAT_ERR_OUT_OF_HOST_MEMORY, "viewer: cannot start the JPEG encoder's threads");
        }
        e->n_threads++;
    }
    return SPLAT_OK;
}

void splat__view_encoder_free(splat_view_encoder *e)
{
    pthread_mutex_lock(&e->lock);
    e->stop = true;
    pthread_cond_broadcast(&e->work);
    pthread_mutex_unlock(&e->lock);
    for (uint32_t k = 0; k < e->n_threads; k++) pthread_join(e->threads[k], NULL);
    for (uint32_t k = 0; k < SPLAT_COUNTOF(e->strips); k++) splat__free(e->strips[k].jpeg.data);
    pthread_cond_destroy(&e->done);
    pthread_cond_destroy(&e->work);
    pthread_mutex_destroy(&e->lock);
    memset(e, 0, sizeof *e);
}

splat_status splat__view_encode(splat_view_encoder *e, const uint8_t *pixels, uint32_t width, uint32_t height, int quality,
                                uint32_t max_strips, double *wall, splat_error *err)
{
    double t0 = splat__now();
    uint32_t y[SPLAT_VIEW_STRIPS], rows[SPLAT_VIEW_STRIPS];
    uint32_t n = splat__view_strip_layout(height, SPLAT_MIN(max_strips, (uint32_t)SPLAT_VIEW_STRIPS), y, rows);
    pthread_mutex_lock(&e->lock);
    e->pixels = pixels;
    e->width = width;
    e->quality = quality;
    for (uint32_t k = 0; k < n; k++) e->strips[k].y = y[k], e->strips[k].rows = rows[k];
    e->n = n;
    e->next = 0;
    e->left = n;
    if (n > 1) pthread_cond_broadcast(&e->work);
    take_strips(e);
    while (e->left) pthread_cond_wait(&e->done, &e->lock);
    pthread_mutex_unlock(&e->lock);
    *wall = splat__now() - t0;
    for (uint32_t k = 0; k < n; k++)
        if (e->strips[k].status != SPLAT_OK) {
            if (err) *err = e->strips[k].err;
            return e->strips[k].status;
        }
    return SPLAT_OK;
}
