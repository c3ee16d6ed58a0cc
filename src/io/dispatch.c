/* io: a scene file's reader and writer chosen by its name (splat__scene_format). */
#include "io/io_util.h"

static splat_status unknown(const char *path, splat_error *err)
{
    return splat__fail(err, SPLAT_ERR_UNSUPPORTED, "%s: unknown scene file type; splatc reads and writes .ply, "
                       ".compressed.ply, .splat, .spz, .sog and a SOG folder's meta.json", path);
}

splat_status splat__scene_read(const char *path, splat_scene *scene, splat_load_info *info, splat_error *err)
{
    switch (splat__scene_format(path)) {
    case SPLAT_FILE_PLY:
    case SPLAT_FILE_COMPRESSED_PLY: return splat__ply_read(path, scene, info, err);
    case SPLAT_FILE_SPLAT: return splat__splat_read(path, scene, info, err);
    case SPLAT_FILE_SPZ: return splat__spz_read(path, scene, info, err);
    case SPLAT_FILE_SOG:
    case SPLAT_FILE_SOG_FOLDER: return splat__sog_read(path, scene, info, err);
    default:
        memset(scene, 0, sizeof *scene);
        if (info) memset(info, 0, sizeof *info);
        return unknown(path, err);
    }
}

splat_status splat__scene_write(const char *path, const splat_scene *scene, splat_error *err)
{
    switch (splat__scene_format(path)) {
    case SPLAT_FILE_PLY: return splat__ply_write(path, scene, err);
    case SPLAT_FILE_COMPRESSED_PLY: return splat__ply_compressed_write(path, scene, err);
    case SPLAT_FILE_SPLAT: return splat__splat_write(path, scene, err);
    case SPLAT_FILE_SPZ: return splat__spz_write(path, scene, err);
    case SPLAT_FILE_SOG:
    case SPLAT_FILE_SOG_FOLDER: return splat__sog_write(path, scene, err);
    default: return unknown(path, err);
    }
}

