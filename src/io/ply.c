/* io: the Gaussian PLY of the original 3DGS code, which viewers read.
 * Writing streams rows through an atomic file; reading parses the header, checks the vertex
 * count against the bytes the file holds before allocating, then streams rows into the scene. */
#include "io/ply_util.h"

#include <errno.h>
#include <stdlib.h>

/* Where each property goes: a slot per known name. */
enum {
    SLOT_X = 0,        /* x y z */
    SLOT_N = 3,        /* nx ny nz: written as zeros, ignored on read */
    SLOT_DC = 6,       /* f_dc_0..2 */
    SLOT_REST = 9,     /* f_rest_0..44 */
    SLOT_OPACITY = 54,
    SLOT_SCALE = 55,   /* scale_0..2 */
    SLOT_ROT = 58,     /* rot_0..3 */
    SLOT_COUNT = 62,
};
#define MAX_REST 45
#define ROWS_PER_CHUNK 1024

static const uint32_t rest_for_degree[4] = {0, 3 * 3, 3 * 8, 3 * 15};

static void slot_name(int slot, char *out, size_t cap)
{
    static const char *const fixed[] = {"x", "y", "z", "nx", "ny", "nz", "f_dc_0", "f_dc_1", "f_dc_2"};
    if (slot < SLOT_REST) snprintf(out, cap, "%s", fixed[slot]);
    else if (slot < SLOT_OPACITY) snprintf(out, cap, "f_rest_%d", slot - SLOT_REST);
    else if (slot == SLOT_OPACITY) snprintf(out, cap, "opacity");
    else if (slot < SLOT_ROT) snprintf(out, cap, "scale_%d", slot - SLOT_SCALE);
    else snprintf(out, cap, "rot_%d", slot - SLOT_ROT);
}

static int slot_of(const char *name)
{
    char buf[32];
    for (int s = 0; s < SLOT_COUNT; s++) {
        slot_name(s, buf, sizeof buf);
        if (strcmp(buf, name) == 0) return s;
    }
    return -1;
}

/* ---------------------------------------------------------------------------- write */

static bool finite_row(const splat_scene *s, uint32_t i, uint32_t n_rest, const char **what)
{
    for (int k = 0; k < 3; k++)
        if (!isfinite(s->means[i * 3 + k])) return *what = "position", false;
    for (int k = 0; k < 3; k++)
        if (!isfinite(s->log_scales[i * 3 + k])) return *what = "scale", false;
    for (int k = 0; k < 4; k++)
        if (!isfinite(s->quats[i * 4 + k])) return *what = "rotation", false;
    if (!isfinite(s->opacities[i])) return *what = "opacity", false;
    for (uint32_t k = 0; k < 3 + n_rest; k++)
        if (!isfinite(s->sh[(size_t)i * SPLAT_SH_COEFFS * 3 + k])) return *what = "SH coefficient", false;
    return true;
}

splat_status splat__ply_write(const char *path, const splat_scene *scene, splat_error *err)
{
    SPLAT_ASSERT(path && scene && scene->sh_degree <= 3 && scene->count <= scene->capacity &&
                 (unsigned)scene->rasterize_mode < SPLAT_RASTERIZE_MODE_COUNT);
    const uint32_t n_rest = rest_for_degree[scene->sh_degree], per_channel = n_rest / 3;
    const uint32_t n_props = 17 + n_rest;
    char header[4096];
    int len = snprintf(header, sizeof header, "ply\nformat binary_little_endian 1.0\n");
    /* only antialiased scenes say so: a classic scene's file is what it always was */
    if (scene->rasterize_mode != SPLAT_RASTERIZE_CLASSIC)
        len += snprintf(header + len, sizeof header - (size_t)len, "comment %s %s\n", SPLAT_PLY_MODE_COMMENT,
                        splat__ply_mode_names[scene->rasterize_mode]);
    len += snprintf(header + len, sizeof header - (size_t)len,
                    "element vertex %u\n"
                    "property float x\nproperty float y\nproperty float z\n"
                    "property float nx\nproperty float ny\nproperty float nz\n"
                    "property float f_dc_0\nproperty float f_dc_1\nproperty float f_dc_2\n",
                    scene->count);
    for (uint32_t j = 0; j < n_rest; j++)
        len += snprintf(header + len, sizeof header - (size_t)len, "property float f_rest_%u\n", j);
    len += snprintf(header + len, sizeof header - (size_t)len,
                    "property float opacity\nproperty float scale_0\nproperty float scale_1\n"
                    "property float scale_2\nproperty float rot_0\nproperty float rot_1\n"
                    "property float rot_2\nproperty float rot_3\nend_header\n");
    SPLAT_ASSERT(len > 0 && (size_t)len < sizeof header);

    splat_atomic_file f;
    splat_status st = splat__atomic_open(&f, path, err);
    if (st != SPLAT_OK) return st;
    uint8_t *chunk = splat__malloc((size_t)ROWS_PER_CHUNK * n_props * 4);
    if (!chunk) {
        st = splat__fail(err, SPLAT_ERR_OUT_OF_HOST_MEMORY, "%s: out of host memory", path);
        goto fail;
    }
    st = splat__atomic_write(&f, header, (size_t)len, err);
    if (st != SPLAT_OK) goto fail;
    for (uint32_t i0 = 0; i0 < scene->count; i0 += ROWS_PER_CHUNK) {
        uint32_t rows = SPLAT_MIN(scene->count - i0, (uint32_t)ROWS_PER_CHUNK);
        uint8_t *p = chunk;
        for (uint32_t i = i0; i < i0 + rows; i++) {
            const char *what;
            if (!finite_row(scene, i, n_rest, &what)) {
                st = splat__fail(err, SPLAT_ERR_NONFINITE, "%s: Gaussian %u has a non-finite %s; nothing written",
                                 path, i, what);
                goto fail;
            }
            const float *sh = scene->sh + (size_t)i * SPLAT_SH_COEFFS * 3;
            float row[17 + MAX_REST];
            float *r = row;
            for (int k = 0; k < 3; k++) *r++ = scene->means[i * 3 + k];
            for (int k = 0; k < 3; k++) *r++ = 0.0f;
            for (int c = 0; c < 3; c++) *r++ = sh[c];
            /* channel-major: all of red's higher coefficients, then green's, then blue's */
            for (int c = 0; c < 3; c++)
                for (uint32_t k = 1; k <= per_channel; k++) *r++ = sh[k * 3 + c];
            *r++ = scene->opacities[i];
            for (int k = 0; k < 3; k++) *r++ = scene->log_scales[i * 3 + k];
            for (int k = 0; k < 4; k++) *r++ = scene->quats[i * 4 + k];
            for (uint32_t k = 0; k < n_props; k++, p += 4) {
                uint32_t u;
                memcpy(&u, &row[k], 4);
                splat__store_u32(p, u);
            }
        }
        st = splat__atomic_write(&f, chunk, (size_t)(p - chunk), err);
        if (st != SPLAT_OK) goto fail;
    }
    splat__free(chunk);
    return splat__atomic_commit(&f, err);
fail:
    splat__free(chunk);
    splat__atomic_abort(&f);
    return st;
}

/* ------------------------------------------------------------- the 3DGS layout, read */

/* How the reader treats each vertex property: a slot, or skipped (slot -1). */
typedef struct prop_map {
    uint32_t n;
    int slot[SPLAT_PLY_MAX_PROPS];
    uint8_t type[SPLAT_PLY_MAX_PROPS];
    uint32_t degree;
} prop_map;

/* "f_rest_<n>": n, else -1. */
static long rest_index(const char *name)
{
    if (strncmp(name, "f_rest_", 7) != 0 || name[7] < '0' || name[7] > '9') return -1;
    char *end;
    long v = strtol(name + 7, &end, 10);
    if (*end) return -1;
    return v > 100000 ? 100000 : v;
}

static splat_status map_vertex(const char *path, const splat_ply_element *e, prop_map *m, splat_load_info *info,
                               splat_error *err)
{
    memset(m, 0, sizeof *m);
    m->n = e->n_props;
    bool seen[SLOT_COUNT] = {false};
    char skipped[512] = "";
    size_t len = 0;
    uint32_t n_skipped = 0;
    for (uint32_t k = 0; k < e->n_props; k++) {
        const splat_ply_prop *p = &e->props[k];
        int slot = slot_of(p->name);
        long rest = rest_index(p->name);
        if (slot < 0 && rest >= MAX_REST)
            return splat__fail(err, SPLAT_ERR_UNSUPPORTED, "%s: vertex property \"%s\": SH above degree 3 is not "
                               "supported", path, p->name);
        if (p->list_count)
            return splat__fail(err, SPLAT_ERR_UNSUPPORTED, "%s: vertex property \"%s\" is a list; splatc reads "
                               "scalar vertex properties only", path, p->name);
        m->type[k] = p->type;
        m->slot[k] = slot;
        if (slot < 0) {
            /* another trainer's extra (filter_3D, red/green/blue, ...): named once, in the warning */
            if (n_skipped < 8 && len < sizeof skipped - 64)
                len += (size_t)snprintf(skipped + len, sizeof skipped - len, "%s%s", n_skipped ? ", " : "", p->name);
            n_skipped++;
            continue;
        }
        if (p->type != SPLAT_PLY_F32 && p->type != SPLAT_PLY_F64) {
            static const char *const names[] = {"", "char", "uchar", "short", "ushort", "int", "uint", "float", "double"};
            return splat__fail(err, SPLAT_ERR_UNSUPPORTED, "%s: vertex property \"%s\" has type %s; only float "
                               "and double are supported", path, p->name, names[p->type]);
        }
        seen[slot] = true;
    }
    uint32_t n_rest = 0;
    for (int s = SLOT_REST; s < SLOT_OPACITY; s++) n_rest += seen[s];
    m->degree = 4;
    for (uint32_t d = 0; d < 4; d++)
        if (rest_for_degree[d] == n_rest) m->degree = d;
    if (m->degree == 4)
        return splat__fail(err, SPLAT_ERR_FORMAT, "%s: %u f_rest properties; expected 0, 9, 24 or 45 (SH degree 0..3)",
                           path, n_rest);
    for (int s = 0; s < SLOT_COUNT; s++) {
        bool normal = s >= SLOT_N && s < SLOT_DC;
        bool rest = s >= SLOT_REST && s < SLOT_OPACITY;
        bool required = !normal && (!rest || (uint32_t)(s - SLOT_REST) < n_rest);
        if (required && !seen[s]) {
            char name[32];
            slot_name(s, name, sizeof name);
            return splat__fail(err, SPLAT_ERR_FORMAT, "%s: the vertex element lacks property \"%s\"", path, name);
        }
    }
    /* a long path or list is cut short: the warning is one line for a person */
    if (n_skipped && info &&
        snprintf(info->warning, sizeof info->warning, "%s: skipped %u vertex propert%s splatc does not use: %s%s", path,
                 n_skipped, n_skipped == 1 ? "y" : "ies", skipped, n_skipped > 8 ? ", ..." : "") < 0)
        info->warning[0] = '\0';
    return SPLAT_OK;
}

/* Stores one row of values (already decoded to double) in Gaussian i. */
static splat_status store_row(const char *path, const prop_map *m, const double *v, splat_scene *s, uint32_t i,
                              splat_error *err)
{
    const uint32_t per_channel = rest_for_degree[m->degree] / 3;
    float *sh = s->sh + (size_t)i * SPLAT_SH_COEFFS * 3;
    memset(sh, 0, SPLAT_SH_COEFFS * 3 * sizeof(float));
    for (uint32_t k = 0; k < m->n; k++) {
        int slot = m->slot[k];
        if (slot < 0 || (slot >= SLOT_N && slot < SLOT_DC)) continue;
        if (slot == SLOT_OPACITY && isinf(v[k])) {
            /* splat-transform writes the logit of an opacity byte of 0 or 255 as -inf or +inf */
            s->opacities[i] = splat__logit_clamped(v[k] > 0 ? 1.0 : 0.0);
            continue;
        }
        if (!splat__finite_float(v[k])) {
            char name[32];
            slot_name(slot, name, sizeof name);
            return splat__fail(err, SPLAT_ERR_NONFINITE, "%s: vertex %u: %s is not a finite float", path, i, name);
        }
        float x = (float)v[k];
        if (slot < SLOT_N) s->means[i * 3 + (uint32_t)slot] = x;
        else if (slot < SLOT_REST) sh[slot - SLOT_DC] = x;
        else if (slot < SLOT_OPACITY) {
            uint32_t j = (uint32_t)(slot - SLOT_REST), c = j / per_channel, coef = 1 + j % per_channel;
            sh[coef * 3 + c] = x;
        } else if (slot == SLOT_OPACITY) s->opacities[i] = x;
        else if (slot < SLOT_ROT) s->log_scales[i * 3 + (uint32_t)(slot - SLOT_SCALE)] = x;
        else s->quats[i * 4 + (uint32_t)(slot - SLOT_ROT)] = x;
    }
    return SPLAT_OK;
}

static splat_status read_binary(const char *path, FILE *fp, const splat_ply_element *e, const prop_map *m,
                                splat_scene *s, splat_error *err)
{
    uint8_t *chunk = splat__malloc((size_t)ROWS_PER_CHUNK * e->row_bytes);
    double *v = splat__malloc(SPLAT_PLY_MAX_PROPS * sizeof *v);
    splat_status st = SPLAT_OK;
    if (!chunk || !v) st = splat__fail(err, SPLAT_ERR_OUT_OF_HOST_MEMORY, "%s: out of host memory", path);
    for (uint32_t i0 = 0; i0 < s->count && st == SPLAT_OK; i0 += ROWS_PER_CHUNK) {
        uint32_t rows = (uint32_t)SPLAT_MIN(s->count - i0, (uint32_t)ROWS_PER_CHUNK);
        if (fread(chunk, e->row_bytes, rows, fp) != rows) {
            st = splat__fail(err, SPLAT_ERR_FORMAT, "%s: truncated: the data ends before vertex %u", path, i0);
            break;
        }
        const uint8_t *p = chunk;
        for (uint32_t i = i0; i < i0 + rows && st == SPLAT_OK; i++) {
            for (uint32_t k = 0; k < m->n; k++) {
                if (m->slot[k] >= 0) v[k] = splat__ply_value(p, m->type[k], false);
                p += splat__ply_type_size(m->type[k]);
            }
            st = store_row(path, m, v, s, i, err);
        }
    }
    splat__free(v);
    splat__free(chunk);
    return st;
}

static splat_status read_ascii(const char *path, FILE *fp, size_t left, const prop_map *m, splat_scene *s,
                               splat_error *err)
{
    char *text = splat__malloc(left + 1);
    double *v = splat__malloc(SPLAT_PLY_MAX_PROPS * sizeof *v);
    splat_status st = SPLAT_OK;
    if (!text || !v) st = splat__fail(err, SPLAT_ERR_OUT_OF_HOST_MEMORY, "%s: out of host memory", path);
    size_t n = text ? fread(text, 1, left, fp) : 0;
    if (text) text[n] = 0;
    const char *p = text;
    for (uint32_t i = 0; i < s->count && st == SPLAT_OK; i++) {
        for (uint32_t k = 0; k < m->n; k++) {
            while (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n') p++;
            if (!*p) {
                st = splat__fail(err, SPLAT_ERR_FORMAT, "%s: truncated: the data ends in vertex %u", path, i);
                break;
            }
            char *end;
            v[k] = strtod(p, &end);
            if (end == p || (*end && *end != ' ' && *end != '\t' && *end != '\r' && *end != '\n')) {
                st = splat__fail(err, SPLAT_ERR_FORMAT, "%s: vertex %u: value %u is not a number", path, i, k);
                break;
            }
            p = end;
        }
        if (st == SPLAT_OK) st = store_row(path, m, v, s, i, err);
    }
    splat__free(v);
    splat__free(text);
    return st;
}

static splat_status read_3dgs(const char *path, FILE *fp, const splat_ply_header *h, splat_scene *scene,
                              splat_load_info *info, splat_error *err)
{
    const splat_ply_element *e = splat__ply_element(h, "vertex");
    if (!e) return splat__fail(err, SPLAT_ERR_FORMAT, "%s: the PLY has no vertex element", path);
    if (e->count > UINT32_MAX)
        return splat__fail(err, SPLAT_ERR_FORMAT, "%s: vertex count %llu is too large", path,
                           (unsigned long long)e->count);
    prop_map *m = splat__malloc(sizeof *m);
    if (!m) return splat__fail(err, SPLAT_ERR_OUT_OF_HOST_MEMORY, "%s: out of host memory", path);
    splat_status st = map_vertex(path, e, m, info, err);
    /* A count the file cannot hold is refused before anything is allocated for it: a binary row
     * takes row_bytes, an ASCII value at least a digit and a separator. */
    uint64_t left = (uint64_t)(h->file_size - h->data_start);
    if (st == SPLAT_OK && h->ascii) {
        if (e != h->elements)
            st = splat__fail(err, SPLAT_ERR_UNSUPPORTED, "%s: the vertex element must come first in an ASCII PLY", path);
        uint64_t need = e->count * e->n_props * 2;
        if (need > 0) need--;
        if (st == SPLAT_OK && need > left)
            st = splat__fail(err, SPLAT_ERR_FORMAT, "%s: truncated: %llu vertices need at least %llu bytes, the file "
                             "holds %llu after the header", path, (unsigned long long)e->count,
                             (unsigned long long)need, (unsigned long long)left);
    } else if (st == SPLAT_OK) {
        st = splat__ply_seek(path, fp, h, e, err);
    }
    if (st == SPLAT_OK) st = splat__scene_init(scene, (uint32_t)e->count, err);
    if (st == SPLAT_OK) {
        scene->count = (uint32_t)e->count;
        scene->sh_degree = m->degree;
        st = h->ascii ? read_ascii(path, fp, (size_t)left, m, scene, err) : read_binary(path, fp, e, m, scene, err);
    }
    splat__free(m);
    return st;
}

splat_status splat__ply_read(const char *path, splat_scene *scene, splat_load_info *info, splat_error *err)
{
    SPLAT_ASSERT(path && scene);
    memset(scene, 0, sizeof *scene);
    if (info) memset(info, 0, sizeof *info);
    FILE *fp = fopen(path, "rb");
    if (!fp) return splat__fail(err, SPLAT_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
    splat_ply_header *h = splat__malloc(sizeof *h);
    splat_status st = h ? splat__ply_header_read(path, fp, h, err)
                        : splat__fail(err, SPLAT_ERR_OUT_OF_HOST_MEMORY, "%s: out of host memory", path);
    /* Both layouts read binary rows as little-endian (packed fields included); no Gaussian writer
     * uses the other order. */
    if (st == SPLAT_OK && h->big_endian)
        st = splat__fail(err, SPLAT_ERR_UNSUPPORTED, "%s: PLY format binary_big_endian is not supported "
                         "(binary_little_endian or ascii)", path);
    if (st == SPLAT_OK && h->mode_unknown)
        st = splat__fail(err, SPLAT_ERR_UNSUPPORTED, "%s: unknown rasterize mode \"%s\" in the PLY header (splatc knows "
                         "classic and antialiased)", path, h->mode_name);
    if (st == SPLAT_OK && splat__ply_is_compressed(h)) {
        if (info) info->format = SPLAT_FILE_COMPRESSED_PLY;
        st = splat__ply_compressed_decode(path, fp, h, scene, err);
    } else if (st == SPLAT_OK) {
        if (info) info->format = SPLAT_FILE_PLY;
        st = read_3dgs(path, fp, h, scene, info, err);
    }
    if (st == SPLAT_OK) scene->rasterize_mode = h->mode;
    splat__free(h);
    fclose(fp);
    if (st != SPLAT_OK) {
        splat__scene_free(scene);
        if (info) info->warning[0] = 0;
    }
    return st;
}
