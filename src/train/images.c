/* train: the image store. Training images stay 8-bit RGBA (a quarter of float): resident in one
 * device buffer, or, when they do not fit, in host memory, each iteration's image copied into
 * its ring slot's buffer just before the slot is submitted. Masks, where the dataset has them,
 * follow their images: a byte a pixel, at the same pixel offsets. */
#include "train/train.h"

/* The pixels of view v that count, and the valid SSIM windows whose centre does (docs/TRAIN.md):
 * every one without a mask. */
static void count_mask(const uint8_t *mask, uint32_t w, uint32_t h, uint32_t *n_pixels, uint32_t *n_centres)
{
    uint32_t np = 0, nc = 0;
    for (uint32_t j = 0; j < h; j++)
        for (uint32_t i = 0; i < w; i++) {
            bool m = !mask || mask[(size_t)j * w + i];
            np += m;
            nc += m && i >= 5 && j >= 5 && i + 5 < w && j + 5 < h;
        }
    *n_pixels = np, *n_centres = nc;
}

/* Packs 0/1 bytes as the shaders read them (already bytes: a copy). */
static void copy_mask(splat_buf *dst, uint64_t offset, const uint8_t *mask, size_t n)
{
    memcpy((uint8_t *)dst->map + offset, mask, n);
}

splat_status splat__images_load(const splat_dataset *ds, uint32_t v, splat_image *out, splat_error *err)
{
    return splat__view_image_load(&ds->views[v], out, err);
}

static splat_train_view gpu_view(const splat_camera *c)
{
    splat_train_view v = {.cam = {.fx = c->fx, .fy = c->fy, .cx = c->cx, .cy = c->cy, .width = c->width, .height = c->height}};
    memcpy(v.cam.R, c->R, sizeof c->R);
    memcpy(v.cam.t, c->t, sizeof c->t);
    return v;
}

splat_status splat__images_init(splat_gpu *g, splat_image_store *s, const splat_dataset *ds, const uint32_t *train_views,
                                uint32_t n_train, uint32_t max_w, uint32_t max_h, uint32_t eval_w, uint32_t eval_h,
                                bool stream, splat_error *err)
{
    memset(s, 0, sizeof *s);
    uint64_t total = 0;
    /* the dataset's views, and evaluation's (splat__images_set_eval_camera) */
    splat_train_view *views = splat__calloc(ds->n_views + 1, sizeof *views);
    s->host = splat__calloc(ds->n_views, sizeof *s->host);
    s->host_mask = splat__calloc(ds->n_views, sizeof *s->host_mask);
    s->offset = splat__calloc(ds->n_views, sizeof *s->offset);
    s->n_pixels = splat__calloc(ds->n_views, sizeof *s->n_pixels);
    s->n_centres = splat__calloc(ds->n_views, sizeof *s->n_centres);
    s->n_views = ds->n_views;
    if (!views || !s->host || !s->host_mask || !s->offset || !s->n_pixels || !s->n_centres) {
        splat__free(views);
        return splat__fail(err, SPLAT_ERR_OUT_OF_HOST_MEMORY, "training images: out of host memory");
    }
    for (uint32_t v = 0; v < ds->n_views; v++) {
        s->masked |= ds->views[v].mask_path != NULL;
        count_mask(NULL, ds->views[v].camera.width, ds->views[v].camera.height, &s->n_pixels[v], &s->n_centres[v]);
    }
    splat_status st = splat__views_load(ds, train_views, n_train, s->host, s->masked ? s->host_mask : NULL, err);
    for (uint32_t k = 0; k < n_train && st == SPLAT_OK; k++) {
        uint32_t v = train_views[k];
        if (s->masked) count_mask(s->host_mask[v], s->host[v].width, s->host[v].height, &s->n_pixels[v], &s->n_centres[v]);
        total += (uint64_t)s->host[v].width * s->host[v].height * 4;
    }
    /* Resident when the store fits one binding and leaves most of the device to the Gaussians;
     * otherwise each iteration's image is copied from host memory into its ring slot. */
    s->streamed = stream || total > g->info.max_storage_range || total > g->info.device_local_heap / 3;
    uint64_t offset = 0;
    for (uint32_t v = 0; v < ds->n_views && st == SPLAT_OK; v++) {
        views[v] = gpu_view(&ds->views[v].camera);
        if (!s->streamed && s->host[v].rgba) {
            s->offset[v] = (uint32_t)(offset / 4);
            offset += (uint64_t)s->host[v].width * s->host[v].height * 4;
        }
    }
    uint64_t view_bytes = (ds->n_views + 1) * sizeof *views;
    if (st == SPLAT_OK) st = splat__buf_init(g, &s->views, "train.views", view_bytes, SPLAT_MEM_DEVICE, err);
    if (st == SPLAT_OK) st = splat__buf_upload(g, &s->views, 0, views, view_bytes, err);
    splat__free(views);
    for (int k = 0; k <= SPLAT_TRAIN_RING && st == SPLAT_OK; k++)
        if (s->streamed || k == SPLAT_TRAIN_RING) {
            uint64_t slot_bytes = k == SPLAT_TRAIN_RING ? (uint64_t)eval_w * eval_h * 4 : (uint64_t)max_w * max_h * 4;
            st = splat__buf_init(g, &s->slot_images[k], "train.slot_image", slot_bytes, SPLAT_MEM_UPLOAD, err);
            if (st == SPLAT_OK && s->masked)
                st = splat__buf_init(g, &s->slot_masks[k], "train.slot_mask", slot_bytes / 4 + 4, SPLAT_MEM_UPLOAD, err);
        }
    /* the resident masks: a byte a pixel, or one word to bind when there are none */
    uint64_t mask_bytes = s->masked && !s->streamed ? total / 4 + 4 : 4;
    if (st == SPLAT_OK) st = splat__buf_init(g, &s->masks, "train.masks", mask_bytes, SPLAT_MEM_DEVICE, err);
    if (st != SPLAT_OK || s->streamed) return st;
    st = splat__buf_init(g, &s->images, "train.images", total, SPLAT_MEM_DEVICE, err);
    for (uint32_t v = 0, off = 0; v < ds->n_views && st == SPLAT_OK; v++) {
        splat_image *im = &s->host[v];
        if (!im->rgba) continue;
        uint64_t bytes = (uint64_t)im->width * im->height * 4;
        st = splat__buf_upload(g, &s->images, off, im->rgba, bytes, err);
        if (st == SPLAT_OK && s->masked) st = splat__buf_upload(g, &s->masks, off / 4, s->host_mask[v], bytes / 4, err);
        off += (uint32_t)bytes;
        splat__image_free(im); /* resident: the GPU holds it now */
        splat__free(s->host_mask[v]);
        s->host_mask[v] = NULL;
    }
    return st;
}

void splat__images_free(splat_gpu *g, splat_image_store *s)
{
    splat__buf_free(g, &s->views);
    splat__buf_free(g, &s->images);
    for (int k = 0; k <= SPLAT_TRAIN_RING; k++) splat__buf_free(g, &s->slot_images[k]);
    splat__buf_free(g, &s->masks);
    for (int k = 0; k <= SPLAT_TRAIN_RING; k++) splat__buf_free(g, &s->slot_masks[k]);
    for (uint32_t v = 0; v < s->n_views; v++) {
        if (s->host) splat__image_free(&s->host[v]);
        if (s->host_mask) splat__free(s->host_mask[v]);
    }
    splat__free(s->host);
    splat__free(s->host_mask);
    splat__free(s->offset);
    splat__free(s->n_pixels);
    splat__free(s->n_centres);
    memset(s, 0, sizeof *s);
}

const splat_buf *splat__images_pixels(const splat_image_store *s, uint32_t slot)
{
    return s->streamed || slot == SPLAT_TRAIN_RING ? &s->slot_images[slot] : &s->images;
}

const splat_buf *splat__images_masks(const splat_image_store *s, uint32_t slot)
{
    return s->masked && (s->streamed || slot == SPLAT_TRAIN_RING) ? &s->slot_masks[slot] : &s->masks;
}

uint32_t splat__images_offset(const splat_image_store *s, uint32_t slot, uint32_t view)
{
    return splat__images_pixels(s, slot) == &s->images ? s->offset[view] : 0;
}

void splat__images_stage(splat_image_store *s, uint32_t slot, uint32_t view)
{
    if (!s->streamed) return;
    const splat_image *im = &s->host[view];
    memcpy(s->slot_images[slot].map, im->rgba, (size_t)im->width * im->height * 4);
    if (s->masked) copy_mask(&s->slot_masks[slot], 0, s->host_mask[view], (size_t)im->width * im->height);
}

splat_status splat__images_stage_eval(splat_image_store *s, const splat_dataset *ds, uint32_t v, uint32_t w, uint32_t h,
                                      const float background[3], uint32_t *n_pixels, uint32_t *n_centres, splat_error *err)
{
    splat_image full = {0}, sized = {0};
    uint8_t *mask = NULL, *full_mask = NULL;
    splat_status st = splat__images_load(ds, v, &full, err);
    if (st == SPLAT_OK && s->masked) st = splat__view_mask_load(&ds->views[v], &full_mask, err);
    bool same = st == SPLAT_OK && full.width == w && full.height == h;
    if (same) {
        sized = full, full = (splat_image){0};
        mask = full_mask, full_mask = NULL;
    } else if (st == SPLAT_OK) {
        st = splat__image_resample(&full, background, w, h, &sized, err);
        if (st == SPLAT_OK && s->masked) st = splat__mask_resample(full_mask, full.width, full.height, w, h, &mask, err);
    }
    if (st == SPLAT_OK) {
        memcpy(s->slot_images[SPLAT_TRAIN_RING].map, sized.rgba, (size_t)w * h * 4);
        if (s->masked) copy_mask(&s->slot_masks[SPLAT_TRAIN_RING], 0, mask, (size_t)w * h);
        count_mask(mask, w, h, n_pixels, n_centres);
    }
    splat__image_free(&full);
    splat__image_free(&sized);
    splat__free(full_mask);
    splat__free(mask);
    return st;
}

splat_status splat__images_set_eval_camera(splat_gpu *g, splat_image_store *s, const splat_camera *cam, splat_error *err)
{
    splat_train_view view = gpu_view(cam);
    return splat__buf_upload(g, &s->views, (uint64_t)s->n_views * sizeof view, &view, sizeof view, err);
}
