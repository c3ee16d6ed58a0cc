/* io: what the COLMAP and NeRF-synthetic loaders share about a view. */
#include <pthread.h>
#include <stdatomic.h>
#include <unistd.h>

#include "io/io_util.h"

splat_status splat__view_size(const splat_data_view *view, uint32_t *w0, uint32_t *h0, uint32_t *w, uint32_t *h,
                              splat_error *err)
{
    splat_status st = splat__image_probe(view->image_path, w0, h0, err);
    if (st != SPLAT_OK) return st;
    uint32_t f = view->downsample ? view->downsample : 1;
    *w = SPLAT_MAX(*w0 / f, 1u);
    *h = SPLAT_MAX(*h0 / f, 1u);
    if (f > 1 && (*w < SPLAT_MIN_IMAGE_SIDE || *h < SPLAT_MIN_IMAGE_SIDE))
        return splat__fail(err, SPLAT_ERR_INVALID_ARG, "%s: %ux%u downsampled by %u is %ux%u, fewer than %u pixels a side",
                           view->image_path, *w0, *h0, f, *w, *h, SPLAT_MIN_IMAGE_SIDE);
    return SPLAT_OK;
}

splat_status splat__view_aspect_check(const char *path, const char *what, uint32_t w, uint32_t h, double W, double H,
                                      splat_error *err)
{
    /* images_N/ round each side down on its own: allow that, plus 2 % */
    double ratio = ((double)w / W) / ((double)h / H);
    double slack = 0.02 + 1.0 / SPLAT_MIN(w, h);
    if (!(fabs(ratio - 1) <= slack))
        return splat__fail(err, SPLAT_ERR_FORMAT, "%s: %s: the image is %ux%u but its camera is %gx%g, another shape "
                           "(a rotated image?)", path, what, w, h, W, H);
    return SPLAT_OK;
}

void splat__quat_to_mat(const double q[4], double R[9])
{
    double w = q[0], x = q[1], y = q[2], z = q[3];
    R[0] = 1 - 2 * (y * y + z * z), R[1] = 2 * (x * y - w * z), R[2] = 2 * (x * z + w * y);
    R[3] = 2 * (x * y + w * z), R[4] = 1 - 2 * (x * x + z * z), R[5] = 2 * (y * z - w * x);
    R[6] = 2 * (x * z - w * y), R[7] = 2 * (y * z + w * x), R[8] = 1 - 2 * (x * x + y * y);
}

splat_status splat__camera_check(const char *path, const char *what, const splat_camera *c, splat_error *err)
{
    bool finite = isfinite(c->fx) && isfinite(c->fy) && isfinite(c->cx) && isfinite(c->cy);
    for (int k = 0; k < 9; k++) finite = finite && isfinite(c->R[k]);
    for (int k = 0; k < 3; k++) finite = finite && isfinite(c->t[k]);
    if (!finite)
        return splat__fail(err, SPLAT_ERR_NONFINITE, "%s: %s: an intrinsic or the pose is not finite as a float "
                           "(fx %g fy %g cx %g cy %g)", path, what, c->fx, c->fy, c->cx, c->cy);
    double w = c->width, h = c->height;
    if (!(c->fx >= 1e-3 * w && c->fx <= 1e5 * w && c->fy >= 1e-3 * w && c->fy <= 1e5 * w))
        return splat__fail(err, SPLAT_ERR_FORMAT, "%s: %s: focal lengths %g, %g for an image %g pixels wide (1e-3 to 1e5 "
                           "times the width)", path, what, c->fx, c->fy, w);
    if (!(fabs(c->cx - 0.5 * w) <= 10 * w && fabs(c->cy - 0.5 * h) <= 10 * h))
        return splat__fail(err, SPLAT_ERR_FORMAT, "%s: %s: principal point (%g, %g) far outside its %gx%g image", path,
                           what, c->cx, c->cy, w, h);
    return SPLAT_OK;
}

splat_status splat__view_image_load(const splat_data_view *view, splat_image *out, splat_error *err)
{
    memset(out, 0, sizeof *out);
    splat_image raw = {0}, small = {0};
    splat_status st = splat__image_load(view->image_path, &raw, err);
    if (st == SPLAT_OK && view->downsample > 1) {
        st = splat__image_downsample(&raw, view->downsample, &small, err);
        splat__image_free(&raw);
        raw = small;
    }
    if (st != SPLAT_OK) return st;
    if (raw.width != view->raw.width || raw.height != view->raw.height) {
        st = splat__fail(err, SPLAT_ERR_FORMAT, "%s: image is %ux%u but its camera is %ux%u", view->image_path, raw.width,
                         raw.height, view->raw.width, view->raw.height);
        splat__image_free(&raw);
        return st;
    }
    if (view->distortion.model == SPLAT_DISTORTION_NONE || splat__distortion_is_zero(&view->distortion)) {
        *out = raw;
        return SPLAT_OK;
    }
    st = splat__image_undistort(&raw, &view->raw, &view->distortion, &view->camera, out, err);
    splat__image_free(&raw);
    return st;
}

splat_status splat__view_mask_load(const splat_data_view *view, uint8_t **mask, splat_error *err)
{
    const splat_camera *cam = &view->camera;
    size_t n = (size_t)cam->width * cam->height;
    *mask = splat__malloc(n ? n : 1);
    if (!*mask) return splat__fail(err, SPLAT_ERR_OUT_OF_HOST_MEMORY, "mask: out of host memory for %ux%u", cam->width,
                                   cam->height);
    if (!view->mask_path) {
        memset(*mask, 1, n);
        return SPLAT_OK;
    }
    /* the mask as an image of the view: downsampled, checked and undistorted with it */
    splat_data_view as_image = *view;
    as_image.image_path = view->mask_path;
    splat_image im;
    splat_status st = splat__view_image_load(&as_image, &im, err);
    if (st != SPLAT_OK) {
        splat__free(*mask);
        *mask = NULL;
        return st;
    }
    for (size_t p = 0; p < n; p++) {
        const uint8_t *px = im.rgba + 4 * p;
        (*mask)[p] = SPLAT_MAX(px[0], SPLAT_MAX(px[1], px[2])) >= 128;
    }
    splat__image_free(&im);
    return SPLAT_OK;
}

/* ------------------------------------------------------------- many views at once */

typedef struct views_job {
    const splat_dataset *ds;
    const uint32_t *idx;
    uint32_t n;
    splat_image *images;
    uint8_t **masks;
    atomic_uint next;
    splat_status *status;    /* [n] */
    splat_error *errs;       /* [n] */
} views_job;

static void *views_worker(void *arg)
{
    views_job *j = arg;
    for (;;) {
        uint32_t k = atomic_fetch_add(&j->next, 1);
        if (k >= j->n) return NULL;
        uint32_t v = j->idx[k];
        j->status[k] = splat__view_image_load(&j->ds->views[v], &j->images[v], &j->errs[k]);
        if (j->status[k] == SPLAT_OK && j->masks)
            j->status[k] = splat__view_mask_load(&j->ds->views[v], &j->masks[v], &j->errs[k]);
    }
}

splat_status splat__views_load(const splat_dataset *ds, const uint32_t *idx, uint32_t n, splat_image *images,
                               uint8_t **masks, splat_error *err)
{
    views_job j = {.ds = ds, .idx = idx, .n = n, .images = images, .masks = masks};
    atomic_init(&j.next, 0);
    j.status = splat__calloc(n ? n : 1, sizeof *j.status);
    j.errs = splat__calloc(n ? n : 1, sizeof *j.errs);
    if (!j.status || !j.errs) {
        splat__free(j.status), splat__free(j.errs);
        return splat__fail(err, SPLAT_ERR_OUT_OF_HOST_MEMORY, "images: out of host memory");
    }
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    uint32_t n_threads = (uint32_t)SPLAT_MIN(SPLAT_MAX(cores, 1L), 16L);
    n_threads = SPLAT_MIN(n_threads, SPLAT_MAX(n, 1u));
    pthread_t threads[16];
    uint32_t started = 0;
    for (uint32_t t = 1; t < n_threads; t++) /* the calling thread is one of them */
        if (pthread_create(&threads[started], NULL, views_worker, &j) == 0) started++;
    views_worker(&j);
    for (uint32_t t = 0; t < started; t++) pthread_join(threads[t], NULL);
    splat_status st = SPLAT_OK;
    for (uint32_t k = 0; k < n && st == SPLAT_OK; k++)
        if (j.status[k] != SPLAT_OK) st = splat__fail(err, j.status[k], "%s", j.errs[k].msg);
    if (st != SPLAT_OK)
        for (uint32_t k = 0; k < n; k++) {
            splat__image_free(&images[idx[k]]);
            if (masks) splat__free(masks[idx[k]]), masks[idx[k]] = NULL;
        }
    splat__free(j.status), splat__free(j.errs);
    return st;
}
