/* io: the Gaussian PLY of the original 3DGS code, which viewers read.
 * Writing streams rows through an atomic file; reading parses the header, checks the vertex
 * count against the bytes the file holds before allocating, then streams rows into the scene. */
#include "io/io_util.h"

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
    SPLAT_ASSERT(path && scene && scene->sh_degree <= 3 && scene->count <= scene->capacity);
    const uint32_t n_rest = rest_for_degree[scene->sh_degree], per_channel = n_rest / 3;
    const uint32_t n_props = 17 + n_rest;
    char header[4096];
    int len = snprintf(header, sizeof header,
                       "ply\nformat binary_little_endian 1.0\nelement vertex %u\n"
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

/* ----------------------------------------------------------------------------- read */

typedef struct ply_prop {
    int slot;
    uint8_t size;            /* 4 (float) or 8 (double) */
} ply_prop;

typedef struct ply_header {
    bool ascii;
    uint64_t count;
    uint32_t n_props;
    ply_prop props[SLOT_COUNT];
    uint32_t row_bytes;
    uint32_t degree;
} ply_header;

/* One header line without its line ending; false at end of file. */
/* A header line; false at the end of the file, and also for a last line that the file cuts
 * short (no newline): the header of a cut file ends there, whatever that line's start says. */
static bool next_line(FILE *fp, char *line, size_t cap, bool *too_long)
{
    *too_long = false;
    if (!fgets(line, (int)cap, fp)) return false;
    size_t n = strlen(line);
    if (n == cap - 1 && line[n - 1] != '\n') *too_long = true;
    else if (n == 0 || line[n - 1] != '\n') return false;
    while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == '\r')) line[--n] = 0;
    return true;
}

static int split(char *line, char **tok, int max)
{
    int n = 0;
    for (char *p = line; *p && n < max;) {
        while (*p == ' ' || *p == '\t') p++;
        if (!*p) break;
        tok[n++] = p;
        while (*p && *p != ' ' && *p != '\t') p++;
        if (*p) *p++ = 0;
    }
    return n;
}

static bool parse_u64(const char *s, uint64_t *v)
{
    if (*s < '0' || *s > '9') return false;
    errno = 0;
    char *end;
    unsigned long long x = strtoull(s, &end, 10);
    if (errno || *end) return false;
    *v = x;
    return true;
}

static splat_status read_header(const char *path, FILE *fp, ply_header *h, splat_error *err)
{
    memset(h, 0, sizeof *h);
    char line[4096], *tok[8];
    bool too_long, format_seen = false;
    int element = 0;         /* 0 none yet, 1 vertex, 2 an element after vertex (ignored) */
    bool seen[SLOT_COUNT] = {false};
    for (uint32_t lineno = 1;; lineno++) {
        if (!next_line(fp, line, sizeof line, &too_long))
            return splat__fail(err, SPLAT_ERR_FORMAT, "%s: the PLY header ends without end_header (the file is cut "
                               "short at header line %u)", path, lineno);
        if (too_long || lineno > 10000)
            return splat__fail(err, SPLAT_ERR_FORMAT, "%s: PLY header line %u is too long or too many", path, lineno);
        if (lineno == 1) {
            if (strcmp(line, "ply") != 0)
                return splat__fail(err, SPLAT_ERR_FORMAT, "%s: not a PLY file (no \"ply\" on the first line)", path);
            continue;
        }
        int n = split(line, tok, 8);
        if (n == 0) continue;
        if (strcmp(tok[0], "comment") == 0 || strcmp(tok[0], "obj_info") == 0) continue;
        if (strcmp(tok[0], "end_header") == 0) break;
        if (strcmp(tok[0], "format") == 0) {
            if (n != 3 || strcmp(tok[2], "1.0") != 0)
                return splat__fail(err, SPLAT_ERR_FORMAT, "%s: PLY header line %u: bad format line", path, lineno);
            if (strcmp(tok[1], "ascii") == 0) h->ascii = true;
            else if (strcmp(tok[1], "binary_little_endian") != 0)
                return splat__fail(err, SPLAT_ERR_UNSUPPORTED, "%s: PLY format %s is not supported "
                                   "(binary_little_endian or ascii)", path, tok[1]);
            format_seen = true;
        } else if (strcmp(tok[0], "element") == 0) {
            if (n != 3) return splat__fail(err, SPLAT_ERR_FORMAT, "%s: PLY header line %u: bad element line", path, lineno);
            if (strcmp(tok[1], "vertex") == 0) {
                if (element != 0)
                    return splat__fail(err, SPLAT_ERR_UNSUPPORTED, "%s: the vertex element must come first", path);
                if (!parse_u64(tok[2], &h->count))
                    return splat__fail(err, SPLAT_ERR_FORMAT, "%s: bad vertex count \"%s\"", path, tok[2]);
                element = 1;
            } else {
                if (element == 0)
                    return splat__fail(err, SPLAT_ERR_UNSUPPORTED, "%s: element %s before the vertex element is "
                                       "not supported", path, tok[1]);
                element = 2;
            }
        } else if (strcmp(tok[0], "property") == 0) {
            if (element == 0)
                return splat__fail(err, SPLAT_ERR_FORMAT, "%s: PLY header line %u: property outside an element",
                                   path, lineno);
            if (element == 2) continue; /* elements after the vertices are never read */
            if (n != 3)
                return splat__fail(err, SPLAT_ERR_FORMAT, "%s: vertex property \"%s\" is not a float or double "
                                   "scalar", path, n > 1 ? tok[n - 1] : "");
            int slot = slot_of(tok[2]);
            if (slot < 0)
                return splat__fail(err, SPLAT_ERR_FORMAT, "%s: unknown vertex property \"%s\"", path, tok[2]);
            if (seen[slot]) return splat__fail(err, SPLAT_ERR_FORMAT, "%s: vertex property \"%s\" appears twice", path, tok[2]);
            uint8_t size;
            if (strcmp(tok[1], "float") == 0 || strcmp(tok[1], "float32") == 0) size = 4;
            else if (strcmp(tok[1], "double") == 0 || strcmp(tok[1], "float64") == 0) size = 8;
            else
                return splat__fail(err, SPLAT_ERR_UNSUPPORTED, "%s: vertex property \"%s\" has type %s; only float "
                                   "and double are supported", path, tok[2], tok[1]);
            seen[slot] = true;
            h->props[h->n_props++] = (ply_prop){slot, size};
            h->row_bytes += size;
        } else {
            return splat__fail(err, SPLAT_ERR_FORMAT, "%s: PLY header line %u: unknown keyword \"%s\"", path, lineno, tok[0]);
        }
    }
    if (!format_seen) return splat__fail(err, SPLAT_ERR_FORMAT, "%s: the PLY header has no format line", path);
    if (element == 0) return splat__fail(err, SPLAT_ERR_FORMAT, "%s: the PLY has no vertex element", path);
    if (h->count > UINT32_MAX)
        return splat__fail(err, SPLAT_ERR_FORMAT, "%s: vertex count %llu is too large", path,
                           (unsigned long long)h->count);
    uint32_t n_rest = 0;
    for (int s = SLOT_REST; s < SLOT_OPACITY; s++) n_rest += seen[s];
    h->degree = 4;
    for (uint32_t d = 0; d < 4; d++)
        if (rest_for_degree[d] == n_rest) h->degree = d;
    if (h->degree == 4)
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
    return SPLAT_OK;
}

/* Stores one row of values (already decoded to double) in Gaussian i. */
static splat_status store_row(const char *path, const ply_header *h, const double *v, splat_scene *s, uint32_t i,
                              splat_error *err)
{
    const uint32_t per_channel = rest_for_degree[h->degree] / 3;
    float *sh = s->sh + (size_t)i * SPLAT_SH_COEFFS * 3;
    memset(sh, 0, SPLAT_SH_COEFFS * 3 * sizeof(float));
    for (uint32_t k = 0; k < h->n_props; k++) {
        int slot = h->props[k].slot;
        if (slot >= SLOT_N && slot < SLOT_DC) continue;
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

static splat_status read_binary(const char *path, FILE *fp, const ply_header *h, splat_scene *s, splat_error *err)
{
    uint8_t *chunk = splat__malloc((size_t)ROWS_PER_CHUNK * h->row_bytes);
    if (!chunk) return splat__fail(err, SPLAT_ERR_OUT_OF_HOST_MEMORY, "%s: out of host memory", path);
    splat_status st = SPLAT_OK;
    double v[SLOT_COUNT];
    for (uint32_t i0 = 0; i0 < s->count && st == SPLAT_OK; i0 += ROWS_PER_CHUNK) {
        uint32_t rows = (uint32_t)SPLAT_MIN(s->count - i0, (uint32_t)ROWS_PER_CHUNK);
        if (fread(chunk, h->row_bytes, rows, fp) != rows) {
            st = splat__fail(err, SPLAT_ERR_FORMAT, "%s: truncated: the data ends before vertex %u", path, i0);
            break;
        }
        const uint8_t *p = chunk;
        for (uint32_t i = i0; i < i0 + rows && st == SPLAT_OK; i++) {
            for (uint32_t k = 0; k < h->n_props; k++) {
                if (h->props[k].size == 4) {
                    uint32_t u = splat__load_u32(p);
                    float x;
                    memcpy(&x, &u, 4);
                    v[k] = x;
                } else {
                    uint64_t u = splat__load_u32(p) | (uint64_t)splat__load_u32(p + 4) << 32;
                    memcpy(&v[k], &u, 8);
                }
                p += h->props[k].size;
            }
            st = store_row(path, h, v, s, i, err);
        }
    }
    splat__free(chunk);
    return st;
}

static splat_status read_ascii(const char *path, FILE *fp, const ply_header *h, size_t left, splat_scene *s,
                               splat_error *err)
{
    char *text = splat__malloc(left + 1);
    if (!text) return splat__fail(err, SPLAT_ERR_OUT_OF_HOST_MEMORY, "%s: out of host memory", path);
    size_t n = fread(text, 1, left, fp);
    text[n] = 0;
    splat_status st = SPLAT_OK;
    const char *p = text;
    double v[SLOT_COUNT];
    for (uint32_t i = 0; i < s->count && st == SPLAT_OK; i++) {
        for (uint32_t k = 0; k < h->n_props; k++) {
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
        if (st == SPLAT_OK) st = store_row(path, h, v, s, i, err);
    }
    splat__free(text);
    return st;
}

splat_status splat__ply_read(const char *path, splat_scene *scene, splat_error *err)
{
    SPLAT_ASSERT(path && scene);
    memset(scene, 0, sizeof *scene);
    FILE *fp = fopen(path, "rb");
    if (!fp) return splat__fail(err, SPLAT_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
    ply_header h;
    splat_status st = read_header(path, fp, &h, err);
    if (st != SPLAT_OK) goto done;
    long long size = splat__file_size(fp), at = ftello(fp);
    if (size < 0 || at < 0 || at > size) {
        st = splat__fail(err, SPLAT_ERR_IO, "%s: not a regular file", path);
        goto done;
    }
    /* A count the file cannot hold is refused before anything is allocated for it: a binary
     * row takes row_bytes, an ASCII value at least a digit and a separator. */
    uint64_t left = (uint64_t)(size - at);
    uint64_t need = h.ascii ? h.count * h.n_props * 2 : h.count * h.row_bytes;
    if (h.ascii && need > 0) need--;
    if (need > left) {
        st = splat__fail(err, SPLAT_ERR_FORMAT, "%s: truncated: %llu vertices need %s%llu bytes, the file holds %llu "
                         "after the header", path, (unsigned long long)h.count, h.ascii ? "at least " : "",
                         (unsigned long long)need, (unsigned long long)left);
        goto done;
    }
    st = splat__scene_init(scene, (uint32_t)h.count, err);
    if (st != SPLAT_OK) goto done;
    scene->count = (uint32_t)h.count;
    scene->sh_degree = h.degree;
    st = h.ascii ? read_ascii(path, fp, &h, (size_t)left, scene, err) : read_binary(path, fp, &h, scene, err);
done:
    fclose(fp);
    if (st != SPLAT_OK) splat__scene_free(scene);
    return st;
}
