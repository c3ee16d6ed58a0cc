/* api: files: scene files in every format, atomic writes, PNG images, camera lists (thin wrappers
 * over io, which dispatches scene files by name so the trainer's init_ply reads the same formats). */
#include <stdio.h>

#include "io/io.h"

splat_status splat_write_file(const char *path, const void *data, size_t size, splat_error *err)
{
    splat_atomic_file f;
    splat_status st = splat__atomic_open(&f, path, err);
    if (st != SPLAT_OK) return st;
    if (size && fwrite(data, 1, size, (FILE *)f.fp) != size) {
        splat__atomic_abort(&f);
        return splat__fail(err, SPLAT_ERR_IO, "%s: write failed", path);
    }
    return splat__atomic_commit(&f, err);
}

splat_status splat_write_png(const char *path, const float *rgb, const float *alpha, uint32_t width, uint32_t height,
                             splat_error *err)
{
    size_t n = (size_t)width * height;
    splat_image im = {width, height, splat__malloc(n * 4)};
    if (!im.rgba) return splat__fail(err, SPLAT_ERR_OUT_OF_HOST_MEMORY, "%s: out of host memory", path);
    for (size_t p = 0; p < n; p++) {
        for (int c = 0; c < 3; c++) im.rgba[4 * p + c] = (uint8_t)lrintf(255.0f * fminf(fmaxf(rgb[3 * p + c], 0.0f), 1.0f));
        im.rgba[4 * p + 3] = alpha ? (uint8_t)lrintf(255.0f * fminf(fmaxf(alpha[p], 0.0f), 1.0f)) : 255;
    }
    splat_status st = splat__image_save_png(path, &im, alpha ? 4 : 3, err);
    splat__free(im.rgba);
    return st;
}

splat_status splat_read_cameras(const char *path, splat_camera **cams, uint32_t *n, splat_error *err)
{
    char **names = NULL;
    splat_status st = splat__cameras_read(path, cams, &names, n, err);
    if (st == SPLAT_OK && names) {
        for (uint32_t k = 0; k < *n; k++) splat__free(names[k]);
        splat__free(names);
    }
    return st;
}

splat_status splat_read_cameras_named(const char *path, splat_camera **cams, char ***names, uint32_t *n, splat_error *err)
{
    SPLAT_ASSERT(names);
    *names = NULL;
    char **each = NULL;
    splat_status st = splat__cameras_read(path, cams, &each, n, err);
    if (st != SPLAT_OK) return st;
    /* one block: the pointers, then the strings */
    size_t bytes = (size_t)*n * sizeof(char *);
    for (uint32_t k = 0; k < *n; k++) bytes += strlen(each[k]) + 1;
    char **block = splat__malloc(bytes);
    if (block) {
        char *text = (char *)(block + *n);
        for (uint32_t k = 0; k < *n; k++) {
            size_t len = strlen(each[k]) + 1;
            memcpy(text, each[k], len);
            block[k] = text;
            text += len;
        }
    }
    for (uint32_t k = 0; k < *n; k++) splat__free(each[k]);
    splat__free(each);
    if (!block) {
        splat__free(*cams);
        *cams = NULL;
        *n = 0;
        return splat__fail(err, SPLAT_ERR_OUT_OF_HOST_MEMORY, "%s: out of host memory", path);
    }
    *names = block;
    return SPLAT_OK;
}

splat_status splat_write_cameras(const char *path, const splat_camera *cams, const char *const *names, uint32_t n,
                                 splat_error *err)
{
    return splat__cameras_write_3dgs(path, cams, names, n, err);
}

splat_file_format splat_file_format_of(const char *path)
{
    SPLAT_ASSERT(path);
    return splat__scene_format(path);
}

const char *splat_file_format_name(splat_file_format format) { return splat__scene_format_name(format); }

uint32_t splat_file_format_sh_degree(splat_file_format format)
{
    return format == SPLAT_FILE_SPLAT ? 0 : format > SPLAT_FILE_UNKNOWN && format < SPLAT_FILE_FORMAT_COUNT ? 3 : 0;
}

splat_status splat_scene_load(const char *path, splat_scene *scene, splat_load_info *info, splat_error *err)
{
    SPLAT_ASSERT(path && scene);
    return splat__scene_read(path, scene, info, err);
}

splat_status splat_scene_save(const char *path, const splat_scene *scene, splat_error *err)
{
    SPLAT_ASSERT(path && scene);
    return splat__scene_write(path, scene, err);
}

splat_status splat_scene_load_ply(const char *path, splat_scene *scene, splat_error *err)
{
    return splat__ply_read(path, scene, NULL, err);
}

splat_status splat_scene_save_ply(const char *path, const splat_scene *scene, splat_error *err)
{
    return splat__ply_write(path, scene, err);
}
