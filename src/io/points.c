/* io: point clouds in PLY (a transforms.json's "ply_file_path": nerfstudio writes ASCII with float
 * x y z and uint8 red green blue, Open3D and COLMAP binary, some with normals or doubles). Only the
 * vertex element is read; any scalar type is accepted for any property. */
#include "io/io_util.h"

#include <errno.h>
#include <stdlib.h>

enum { PT_X, PT_Y, PT_Z, PT_R, PT_G, PT_B, PT_OTHER };
static const char *const pt_names[] = {"x", "y", "z", "red", "green", "blue"};

typedef struct pt_prop {
    int role;                /* PT_* */
    uint8_t size;            /* bytes in a binary row */
    bool is_float, is_signed;
} pt_prop;

typedef struct pt_header {
    bool ascii, big_endian;
    uint64_t count;
    uint32_t n_props, row_bytes;
    pt_prop props[64];
    bool float_color;        /* red/green/blue are float (0..1) rather than integers (0..255) */
} pt_header;

static bool scalar_type(const char *t, pt_prop *p)
{
    static const struct { const char *name, *alias; uint8_t size; bool is_float, is_signed; } types[] = {
        {"char", "int8", 1, false, true},     {"uchar", "uint8", 1, false, false}, {"short", "int16", 2, false, true},
        {"ushort", "uint16", 2, false, false}, {"int", "int32", 4, false, true},    {"uint", "uint32", 4, false, false},
        {"float", "float32", 4, true, true},   {"double", "float64", 8, true, true},
    };
    for (size_t k = 0; k < SPLAT_COUNTOF(types); k++)
        if (strcmp(t, types[k].name) == 0 || strcmp(t, types[k].alias) == 0) {
            p->size = types[k].size, p->is_float = types[k].is_float, p->is_signed = types[k].is_signed;
            return true;
        }
    return false;
}

static splat_status read_header(const char *path, FILE *fp, pt_header *h, splat_error *err)
{
    memset(h, 0, sizeof *h);
    char line[1024];
    int element = 0;         /* 0 none yet, 1 vertex, 2 after it */
    bool seen[6] = {false}, format = false;
    for (uint32_t lineno = 1;; lineno++) {
        if (!fgets(line, sizeof line, fp) || lineno > 10000)
            return splat__fail(err, SPLAT_ERR_FORMAT, "%s: the PLY header ends without end_header", path);
        size_t n = strlen(line);
        if (n == sizeof line - 1 && line[n - 1] != '\n')
            return splat__fail(err, SPLAT_ERR_FORMAT, "%s: PLY header line %u is too long", path, lineno);
        while (n && (line[n - 1] == '\n' || line[n - 1] == '\r')) line[--n] = 0;
        char a[64] = "", b[64] = "", c[64] = "";
        int k = sscanf(line, "%63s %63s %63s", a, b, c);
        if (lineno == 1) {
            if (strcmp(line, "ply") != 0) return splat__fail(err, SPLAT_ERR_FORMAT, "%s: not a PLY file", path);
            continue;
        }
        if (k <= 0 || strcmp(a, "comment") == 0 || strcmp(a, "obj_info") == 0) continue;
        if (strcmp(a, "end_header") == 0) break;
        if (strcmp(a, "format") == 0) {
            format = true;
            if (strcmp(b, "ascii") == 0) h->ascii = true;
            else if (strcmp(b, "binary_big_endian") == 0) h->big_endian = true;
            else if (strcmp(b, "binary_little_endian") != 0)
                return splat__fail(err, SPLAT_ERR_FORMAT, "%s: unknown PLY format \"%s\"", path, b);
        } else if (strcmp(a, "element") == 0) {
            if (element == 1) element = 2;
            else if (strcmp(b, "vertex") == 0 && element == 0) {
                char *end;
                errno = 0;
                unsigned long long count = strtoull(c, &end, 10);
                if (k != 3 || errno || *end || c[0] == '-')
                    return splat__fail(err, SPLAT_ERR_FORMAT, "%s: bad vertex count \"%s\"", path, c);
                h->count = count;
                element = 1;
            } else if (element == 0)
                return splat__fail(err, SPLAT_ERR_UNSUPPORTED, "%s: element \"%s\" before the vertices is not supported",
                                   path, b);
        } else if (strcmp(a, "property") == 0) {
            if (element != 1) continue; /* properties of other elements: never read */
            if (strcmp(b, "list") == 0)
                return splat__fail(err, SPLAT_ERR_UNSUPPORTED, "%s: a list property in the vertex element is not "
                                   "supported", path);
            pt_prop p = {.role = PT_OTHER};
            if (k != 3 || !scalar_type(b, &p))
                return splat__fail(err, SPLAT_ERR_FORMAT, "%s: PLY header line %u: bad property \"%s\"", path, lineno, line);
            for (int r = 0; r < 6; r++)
                if (strcmp(c, pt_names[r]) == 0) {
                    if (seen[r]) return splat__fail(err, SPLAT_ERR_FORMAT, "%s: property \"%s\" appears twice", path, c);
                    seen[r] = true, p.role = r;
                }
            if (p.role >= PT_R && p.role <= PT_B && p.is_float) h->float_color = true;
            if (h->n_props == SPLAT_COUNTOF(h->props))
                return splat__fail(err, SPLAT_ERR_UNSUPPORTED, "%s: more than %zu vertex properties", path,
                                   SPLAT_COUNTOF(h->props));
            h->props[h->n_props++] = p;
            h->row_bytes += p.size;
        } else {
            return splat__fail(err, SPLAT_ERR_FORMAT, "%s: PLY header line %u: unknown keyword \"%s\"", path, lineno, a);
        }
    }
    if (!format) return splat__fail(err, SPLAT_ERR_FORMAT, "%s: the PLY header has no format line", path);
    if (element == 0) return splat__fail(err, SPLAT_ERR_FORMAT, "%s: the PLY has no vertex element", path);
    if (!seen[PT_X] || !seen[PT_Y] || !seen[PT_Z])
        return splat__fail(err, SPLAT_ERR_FORMAT, "%s: the vertices lack x, y or z", path);
    if (h->count > (1u << 28))
        return splat__fail(err, SPLAT_ERR_FORMAT, "%s: %llu points are more than splatc starts from (2^28)", path,
                           (unsigned long long)h->count);
    return SPLAT_OK;
}

static double decode(const pt_prop *p, const uint8_t *src, bool big_endian)
{
    uint8_t b[8];
    for (uint8_t k = 0; k < p->size; k++) b[k] = big_endian ? src[p->size - 1 - k] : src[k];
    uint64_t u = 0;
    for (uint8_t k = 0; k < p->size; k++) u |= (uint64_t)b[k] << (8 * k);
    if (p->is_float) {
        if (p->size == 4) {
            float f;
            uint32_t u32 = (uint32_t)u;
            memcpy(&f, &u32, 4);
            return f;
        }
        double d;
        memcpy(&d, &u, 8);
        return d;
    }
    if (p->is_signed && p->size < 8 && (u >> (8 * p->size - 1)) & 1) return (double)(int64_t)(u | ~0ull << (8 * p->size));
    return (double)u;
}

splat_status splat__points_ply_read(const char *path, float **xyz, uint8_t **rgb, uint32_t *count, splat_error *err)
{
    *xyz = NULL, *rgb = NULL, *count = 0;
    FILE *fp = fopen(path, "rb");
    if (!fp) return splat__fail(err, SPLAT_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
    pt_header h;
    splat_status st = read_header(path, fp, &h, err);
    long long size = splat__file_size(fp), at = ftello(fp);
    uint64_t left = size >= 0 && at >= 0 && at <= size ? (uint64_t)(size - at) : 0;
    /* a count the file cannot hold is refused before anything is allocated for it */
    if (st == SPLAT_OK && h.count * (h.ascii ? 2u * h.n_props - 1 : h.row_bytes) > left + (h.ascii ? 1 : 0) && h.count)
        st = splat__fail(err, SPLAT_ERR_FORMAT, "%s: truncated: %llu points do not fit in the %llu bytes after the header",
                         path, (unsigned long long)h.count, (unsigned long long)left);
    char *text = NULL;
    uint8_t *row = NULL;
    if (st == SPLAT_OK) {
        *xyz = splat__malloc(h.count ? h.count * 3 * sizeof(float) : 1);
        *rgb = splat__malloc(h.count ? h.count * 3 : 1);
        text = h.ascii ? splat__malloc(left + 1) : NULL;
        row = splat__malloc(h.row_bytes ? h.row_bytes : 1);
        if (!*xyz || !*rgb || !row || (h.ascii && !text))
            st = splat__fail(err, SPLAT_ERR_OUT_OF_HOST_MEMORY, "%s: out of host memory", path);
    }
    if (st == SPLAT_OK && h.ascii) text[fread(text, 1, left, fp)] = 0;
    const char *p = text;
    for (uint64_t i = 0; st == SPLAT_OK && i < h.count; i++) {
        double v[6] = {0, 0, 0, 128, 128, 128};
        if (h.float_color) v[3] = v[4] = v[5] = 128.0 / 255;
        if (!h.ascii && fread(row, h.row_bytes, 1, fp) != 1) {
            st = splat__fail(err, SPLAT_ERR_FORMAT, "%s: truncated: the data ends before point %llu", path,
                             (unsigned long long)i);
            break;
        }
        const uint8_t *q = row;
        for (uint32_t k = 0; k < h.n_props; k++) {
            double x;
            if (h.ascii) {
                char *end;
                x = strtod(p, &end);
                if (end == p) {
                    st = splat__fail(err, SPLAT_ERR_FORMAT, "%s: point %llu: value %u is missing or not a number", path,
                                     (unsigned long long)i, k);
                    break;
                }
                p = end;
            } else {
                x = decode(&h.props[k], q, h.big_endian);
                q += h.props[k].size;
            }
            if (h.props[k].role != PT_OTHER) v[h.props[k].role] = x;
        }
        if (st != SPLAT_OK) break;
        for (int c = 0; c < 3; c++) {
            if (!splat__finite_float(v[c])) {
                st = splat__fail(err, SPLAT_ERR_NONFINITE, "%s: point %llu: %s is not a finite float", path,
                                 (unsigned long long)i, pt_names[c]);
                break;
            }
            (*xyz)[i * 3 + (uint64_t)c] = (float)v[c];
            double colour = h.float_color ? v[3 + c] * 255 : v[3 + c];
            (*rgb)[i * 3 + (uint64_t)c] = (uint8_t)lrint(isfinite(colour) ? fmin(fmax(colour, 0), 255) : 128);
        }
    }
    fclose(fp);
    splat__free(text);
    splat__free(row);
    if (st != SPLAT_OK) {
        splat__free(*xyz), splat__free(*rgb);
        *xyz = NULL, *rgb = NULL;
        return st;
    }
    *count = (uint32_t)h.count;
    return SPLAT_OK;
}
