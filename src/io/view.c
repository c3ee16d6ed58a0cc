/* io: what the COLMAP and NeRF-synthetic loaders share about a view. */
#include "io/io_util.h"

splat_status splat__view_size(const splat_data_view *view, uint32_t *w0, uint32_t *h0, uint32_t *w, uint32_t *h,
                              splat_error *err)
{
    splat_status st = splat__image_probe(view->image_path, w0, h0, err);
    if (st != SPLAT_OK) return st;
    uint32_t f = view->downsample ? view->downsample : 1;
    *w = SPLAT_MAX(*w0 / f, 1u);
    *h = SPLAT_MAX(*h0 / f, 1u);
    return SPLAT_OK;
}

void splat__quat_to_mat(const double q[4], double R[9])
{
    double w = q[0], x = q[1], y = q[2], z = q[3];
    R[0] = 1 - 2 * (y * y + z * z), R[1] = 2 * (x * y - w * z), R[2] = 2 * (x * z + w * y);
    R[3] = 2 * (x * y + w * z), R[4] = 1 - 2 * (x * x + z * z), R[5] = 2 * (y * z - w * x);
    R[6] = 2 * (x * z - w * y), R[7] = 2 * (y * z + w * x), R[8] = 1 - 2 * (x * x + y * y);
}
