/* io: dataset detection (the loaders are colmap.c and nerf.c) and freeing. */
#include "io/io_util.h"

/* 1 when `dir` holds a COLMAP model, 0 when not, -1 when out of memory. */
static int has_model(const char *dir)
{
    char *bin = splat__path_join(dir, "cameras.bin"), *txt = splat__path_join(dir, "cameras.txt");
    int found = !bin || !txt ? -1 : splat__is_file(bin) || splat__is_file(txt);
    splat__free(bin);
    splat__free(txt);
    return found;
}

splat_status splat__dataset_load(const splat_dataset_desc *desc, splat_dataset *ds, splat_error *err)
{
    SPLAT_ASSERT(desc && desc->path && ds);
    memset(ds, 0, sizeof *ds);
    if (!splat__is_dir(desc->path)) return splat__fail(err, SPLAT_ERR_IO, "%s: not a folder", desc->path);
    splat_status st;
    char *nerf = splat__path_join(desc->path, "transforms_train.json");
    char *tf = splat__path_join(desc->path, "transforms.json");
    char *sparse0 = splat__path_join(desc->path, "sparse/0");
    char *sparse = splat__path_join(desc->path, "sparse");
    int in0 = sparse0 ? has_model(sparse0) : -1, in = sparse ? has_model(sparse) : -1;
    if (!nerf || !tf || in0 < 0 || in < 0)
        st = splat__fail(err, SPLAT_ERR_OUT_OF_HOST_MEMORY, "%s: out of host memory", desc->path);
    else if (splat__is_file(nerf)) st = splat__nerf_load(desc, ds, err);
    else if (in0) st = splat__colmap_load(sparse0, desc, ds, err);
    else if (in) st = splat__colmap_load(sparse, desc, ds, err);
    else if (splat__is_file(tf)) st = splat__transforms_load(desc, ds, err);
    else
        st = splat__fail(err, SPLAT_ERR_FORMAT, "%s: no dataset found: expected a COLMAP model (sparse/0/ or sparse/ "
                         "with cameras.bin or cameras.txt), NeRF-synthetic transforms_train.json or nerfstudio "
                         "transforms.json", desc->path);
    splat__free(nerf);
    splat__free(tf);
    splat__free(sparse0);
    splat__free(sparse);
    if (st != SPLAT_OK) splat__dataset_free(ds);
    return st;
}

void splat__dataset_free(splat_dataset *ds)
{
    if (!ds) return;
    for (uint32_t i = 0; ds->views && i < ds->n_views; i++) {
        splat__free(ds->views[i].name);
        splat__free(ds->views[i].image_path);
        splat__free(ds->views[i].mask_path);
    }
    splat__free(ds->views);
    splat__free(ds->points);
    splat__free(ds->point_colors);
    memset(ds, 0, sizeof *ds);
}
