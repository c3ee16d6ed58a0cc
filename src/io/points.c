/* io: point clouds in PLY (a transforms.json's "ply_file_path": nerfstudio writes ASCII with float
 * x y z and uint8 red green blue, Open3D and COLMAP binary of either byte order, some with normals
 * or doubles). The header is ply_header.c's; only the vertex element is read, and any scalar type
 * is accepted for any property. */
#include "io/ply_util.h"

#include <errno.h>
#include <stdlib.h>

enum { PT_X, PT_Y, PT_Z, PT_R, PT_G, PT_B, PT_ROLES };
static const char *const pt_names[PT_ROLES] = {"x", "y", "z", "red", "green", "blue"};

typedef struct pt_layout {
    const splat_ply_element *e;
    int slot[PT_ROLES];      /* the property index of each role, -1 when absent */
    uint32_t offset[PT_ROLES]; /* binary: its byte offset in a row */
    bool float_color;        /* red/green/blue are float (0..1) rather than integers (0..255) */
} pt_layout;

/* Finds the vertex properties and checks that the file can hold its rows, before anything is
 * allocated for them: a binary row takes row_bytes, an ASCII value at least a digit and a separator.
 * Leaves `fp` at the vertices. */
static splat_status layout(const char *path, FILE *fp, const splat_ply_header *h, pt_layout *l, splat_error *err)
{
    const splat_ply_element *e = l->e = splat__ply_element(h, "vertex");
    if (!e) return splat__fail(err, SPLAT_ERR_FORMAT, "%s: the PLY has no vertex element", path);
    for (uint32_t k = 0; k < e->n_props; k++)
        if (e->props[k].list_count)
            return splat__fail(err, SPLAT_ERR_UNSUPPORTED, "%s: a list property in the vertex element (\"%s\") is not "
                               "supported", path, e->props[k].name);
    for (int r = 0; r < PT_ROLES; r++) {
        l->slot[r] = splat__ply_prop(e, pt_names[r]);
        l->offset[r] = 0;
        for (int k = 0; k < l->slot[r]; k++) l->offset[r] += splat__ply_type_size(e->props[k].type);
        if (r >= PT_R && l->slot[r] >= 0) {
            uint8_t type = e->props[l->slot[r]].type;
            if (type == SPLAT_PLY_F32 || type == SPLAT_PLY_F64) l->float_color = true;
        }
    }
    if (l->slot[PT_X] < 0 || l->slot[PT_Y] < 0 || l->slot[PT_Z] < 0)
        return splat__fail(err, SPLAT_ERR_FORMAT, "%s: the vertices lack x, y or z", path);
    if (e->count > (1u << 28))
        return splat__fail(err, SPLAT_ERR_FORMAT, "%s: %llu points are more than splatc starts from (2^28)", path,
                           (unsigned long long)e->count);
    if (!h->ascii) return splat__ply_seek(path, fp, h, e, err);
    if (e != h->elements)
        return splat__fail(err, SPLAT_ERR_UNSUPPORTED, "%s: element \"%s\" before the vertices is not supported in an "
                           "ASCII PLY", path, h->elements[0].name);
    uint64_t need = e->count * e->n_props * 2, left = (uint64_t)(h->file_size - h->data_start);
    if (need > 0) need--;
    if (need > left)
        return splat__fail(err, SPLAT_ERR_FORMAT, "%s: truncated: %llu points need at least %llu bytes, the file holds "
                           "%llu after the header", path, (unsigned long long)e->count, (unsigned long long)need,
                           (unsigned long long)left);
    return SPLAT_OK;
}

splat_status splat__points_ply_read(const char *path, float **xyz, uint8_t **rgb, uint32_t *count, splat_error *err)
{
    *xyz = NULL, *rgb = NULL, *count = 0;
    FILE *fp = fopen(path, "rb");
    if (!fp) return splat__fail(err, SPLAT_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
    splat_ply_header *h = splat__malloc(sizeof *h);
    splat_status st = h ? splat__ply_header_read(path, fp, h, err)
                        : splat__fail(err, SPLAT_ERR_OUT_OF_HOST_MEMORY, "%s: out of host memory", path);
    pt_layout l = {0};
    if (st == SPLAT_OK) st = layout(path, fp, h, &l, err);
    char *text = NULL;
    uint8_t *row = NULL;
    double *values = NULL;
    uint64_t n = l.e ? l.e->count : 0;
    if (st == SPLAT_OK) {
        *xyz = splat__malloc(n ? n * 3 * sizeof(float) : 1);
        *rgb = splat__malloc(n ? n * 3 : 1);
        if (h->ascii) {
            text = splat__malloc((size_t)(h->file_size - h->data_start) + 1);
            values = splat__malloc(l.e->n_props * sizeof *values);
        } else {
            row = splat__malloc(l.e->row_bytes);
        }
        if (!*xyz || !*rgb || (h->ascii ? !text || !values : !row))
            st = splat__fail(err, SPLAT_ERR_OUT_OF_HOST_MEMORY, "%s: out of host memory", path);
    }
    if (st == SPLAT_OK && h->ascii) text[fread(text, 1, (size_t)(h->file_size - h->data_start), fp)] = 0;
    const char *p = text;
    for (uint64_t i = 0; st == SPLAT_OK && i < n; i++) {
        double v[PT_ROLES] = {0, 0, 0, 128, 128, 128};
        if (l.float_color) v[PT_R] = v[PT_G] = v[PT_B] = 128.0 / 255;
        if (h->ascii) {
            for (uint32_t k = 0; k < l.e->n_props && st == SPLAT_OK; k++) {
                char *end;
                values[k] = strtod(p, &end);
                if (end == p)
                    st = splat__fail(err, SPLAT_ERR_FORMAT, "%s: point %llu: value %u is missing or not a number", path,
                                     (unsigned long long)i, k);
                p = end;
            }
            for (int r = 0; r < PT_ROLES && st == SPLAT_OK; r++)
                if (l.slot[r] >= 0) v[r] = values[l.slot[r]];
        } else if (fread(row, l.e->row_bytes, 1, fp) != 1) {
            st = splat__fail(err, SPLAT_ERR_FORMAT, "%s: truncated: the data ends before point %llu", path,
                             (unsigned long long)i);
        } else {
            for (int r = 0; r < PT_ROLES; r++)
                if (l.slot[r] >= 0) v[r] = splat__ply_value(row + l.offset[r], l.e->props[l.slot[r]].type, h->big_endian);
        }
        for (int c = 0; c < 3 && st == SPLAT_OK; c++) {
            if (!splat__finite_float(v[c])) {
                st = splat__fail(err, SPLAT_ERR_NONFINITE, "%s: point %llu: %s is not a finite float", path,
                                 (unsigned long long)i, pt_names[c]);
                break;
            }
            (*xyz)[i * 3 + (uint64_t)c] = (float)v[c];
            double colour = l.float_color ? v[PT_R + c] * 255 : v[PT_R + c];
            (*rgb)[i * 3 + (uint64_t)c] = (uint8_t)lrint(isfinite(colour) ? fmin(fmax(colour, 0), 255) : 128);
        }
    }
    fclose(fp);
    splat__free(h);
    splat__free(text);
    splat__free(values);
    splat__free(row);
    if (st != SPLAT_OK) {
        splat__free(*xyz), splat__free(*rgb);
        *xyz = NULL, *rgb = NULL;
        return st;
    }
    *count = (uint32_t)n;
    return SPLAT_OK;
}
