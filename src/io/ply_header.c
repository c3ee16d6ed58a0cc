/* io: the PLY container's header, and where each element's rows lie (ply_util.h). */
#include "io/ply_util.h"

#include <errno.h>
#include <stdlib.h>

/* A header line without its line ending. LINE_END at the end of the file, and also for a last
 * line that the file cuts short (no newline): the header of a cut file ends there, whatever that
 * line's start says. A NUL byte is no text: a header holds none. */
typedef enum { LINE_OK, LINE_END, LINE_TOO_LONG, LINE_NUL } line_result;

static line_result next_line(FILE *fp, char *line, size_t cap)
{
    size_t n = 0;
    for (int c; (c = getc(fp)) != '\n';) {
        if (c == EOF) return LINE_END;
        if (c == '\0') return LINE_NUL;
        if (n + 1 >= cap) return LINE_TOO_LONG;
        line[n++] = (char)c;
    }
    while (n > 0 && line[n - 1] == '\r') n--;
    line[n] = 0;
    return LINE_OK;
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

static uint8_t type_of(const char *s)
{
    static const struct {
        const char *a, *b;
        uint8_t type;
    } names[] = {
        {"char", "int8", SPLAT_PLY_I8},     {"uchar", "uint8", SPLAT_PLY_U8},   {"short", "int16", SPLAT_PLY_I16},
        {"ushort", "uint16", SPLAT_PLY_U16}, {"int", "int32", SPLAT_PLY_I32},    {"uint", "uint32", SPLAT_PLY_U32},
        {"float", "float32", SPLAT_PLY_F32}, {"double", "float64", SPLAT_PLY_F64},
    };
    for (size_t k = 0; k < SPLAT_COUNTOF(names); k++)
        if (strcmp(s, names[k].a) == 0 || strcmp(s, names[k].b) == 0) return names[k].type;
    return 0;
}

uint32_t splat__ply_type_size(uint8_t type)
{
    static const uint32_t size[] = {0, 1, 1, 2, 2, 4, 4, 4, 8};
    SPLAT_ASSERT(type >= SPLAT_PLY_I8 && type <= SPLAT_PLY_F64);
    return size[type];
}

double splat__ply_value(const uint8_t *p, uint8_t type, bool big_endian)
{
    uint8_t le[8];
    if (big_endian) {
        uint32_t n = splat__ply_type_size(type);
        for (uint32_t k = 0; k < n; k++) le[k] = p[n - 1 - k];
        p = le;
    }
    uint32_t u32 = 0;
    switch (type) {
    case SPLAT_PLY_I8: return (int8_t)p[0];
    case SPLAT_PLY_U8: return p[0];
    case SPLAT_PLY_I16: return (int16_t)(uint16_t)(p[0] | p[1] << 8);
    case SPLAT_PLY_U16: return (uint16_t)(p[0] | p[1] << 8);
    case SPLAT_PLY_I32: return (int32_t)splat__load_u32(p);
    case SPLAT_PLY_U32: return splat__load_u32(p);
    case SPLAT_PLY_F32: {
        u32 = splat__load_u32(p);
        float f;
        memcpy(&f, &u32, 4);
        return f;
    }
    default: {
        uint64_t u = splat__load_u32(p) | (uint64_t)splat__load_u32(p + 4) << 32;
        double d;
        memcpy(&d, &u, 8);
        return d;
    }
    }
}

const char *const splat__ply_mode_names[SPLAT_RASTERIZE_MODE_COUNT] = {"classic", "antialiased"};

splat_status splat__ply_header_read(const char *path, FILE *fp, splat_ply_header *h, splat_error *err)
{
    memset(h, 0, sizeof *h);
    char line[4096], *tok[8];
    bool format_seen = false;
    splat_ply_element *e = NULL;
    for (uint32_t lineno = 1;; lineno++) {
        line_result got = next_line(fp, line, sizeof line);
        if (got == LINE_END)
            return splat__fail(err, SPLAT_ERR_FORMAT, "%s: the PLY header ends without end_header (the file is cut "
                               "short at header line %u)", path, lineno);
        if (got == LINE_NUL)
            return splat__fail(err, SPLAT_ERR_FORMAT, "%s: PLY header line %u holds a NUL byte (a header is text: "
                               "binary data before end_header)", path, lineno);
        if (got == LINE_TOO_LONG || lineno > 10000)
            return splat__fail(err, SPLAT_ERR_FORMAT, "%s: PLY header line %u is too long or too many", path, lineno);
        if (lineno == 1) {
            if (strcmp(line, "ply") != 0)
                return splat__fail(err, SPLAT_ERR_FORMAT, "%s: not a PLY file (no \"ply\" on the first line)", path);
            continue;
        }
        int n = split(line, tok, 8);
        if (n == 0) continue;
        if (n >= 3 && strcmp(tok[0], "comment") == 0 && strcmp(tok[1], "splatc") == 0 &&
            strcmp(tok[2], "rasterize_mode") == 0) {
            int m = -1;
            for (int k = 0; n == 4 && k < SPLAT_RASTERIZE_MODE_COUNT; k++)
                if (strcmp(tok[3], splat__ply_mode_names[k]) == 0) m = k;
            h->mode = m < 0 ? SPLAT_RASTERIZE_CLASSIC : (splat_rasterize_mode)m;
            h->mode_unknown = m < 0;
            snprintf(h->mode_name, sizeof h->mode_name, "%.*s", (int)sizeof h->mode_name - 1, n > 3 ? tok[3] : "");
            continue;
        }
        if (strcmp(tok[0], "comment") == 0 || strcmp(tok[0], "obj_info") == 0) continue;
        if (strcmp(tok[0], "end_header") == 0) break;
        if (strcmp(tok[0], "format") == 0) {
            if (n != 3 || strcmp(tok[2], "1.0") != 0)
                return splat__fail(err, SPLAT_ERR_FORMAT, "%s: PLY header line %u: bad format line", path, lineno);
            if (strcmp(tok[1], "ascii") == 0) h->ascii = true;
            else if (strcmp(tok[1], "binary_big_endian") == 0) h->big_endian = true;
            else if (strcmp(tok[1], "binary_little_endian") != 0)
                return splat__fail(err, SPLAT_ERR_UNSUPPORTED, "%s: PLY format %s is not supported "
                                   "(binary_little_endian, binary_big_endian or ascii)", path, tok[1]);
            format_seen = true;
        } else if (strcmp(tok[0], "element") == 0) {
            if (n != 3) return splat__fail(err, SPLAT_ERR_FORMAT, "%s: PLY header line %u: bad element line", path, lineno);
            if (h->n_elements == SPLAT_PLY_MAX_ELEMENTS)
                return splat__fail(err, SPLAT_ERR_UNSUPPORTED, "%s: more than %d PLY elements", path,
                                   SPLAT_PLY_MAX_ELEMENTS);
            e = &h->elements[h->n_elements++];
            if (strlen(tok[1]) >= SPLAT_PLY_NAME)
                return splat__fail(err, SPLAT_ERR_FORMAT, "%s: PLY header line %u: element name too long", path, lineno);
            snprintf(e->name, sizeof e->name, "%s", tok[1]);
            if (splat__ply_element(h, e->name) != e)
                return splat__fail(err, SPLAT_ERR_FORMAT, "%s: element %s appears twice", path, e->name);
            if (!parse_u64(tok[2], &e->count))
                return splat__fail(err, SPLAT_ERR_FORMAT, "%s: bad %s count \"%s\"", path, e->name, tok[2]);
        } else if (strcmp(tok[0], "property") == 0) {
            if (!e)
                return splat__fail(err, SPLAT_ERR_FORMAT, "%s: PLY header line %u: property outside an element",
                                   path, lineno);
            bool list = n >= 2 && strcmp(tok[1], "list") == 0;
            if (n != (list ? 5 : 3))
                return splat__fail(err, SPLAT_ERR_FORMAT, "%s: PLY header line %u: bad property line", path, lineno);
            const char *name = tok[n - 1];
            uint8_t type = type_of(tok[n - 2]), count_type = list ? type_of(tok[2]) : 0;
            if (!type || (list && !count_type))
                return splat__fail(err, SPLAT_ERR_FORMAT, "%s: %s property \"%s\" has an unknown type %s", path,
                                   e->name, name, type ? tok[2] : tok[n - 2]);
            if (strlen(name) >= SPLAT_PLY_NAME)
                return splat__fail(err, SPLAT_ERR_FORMAT, "%s: PLY header line %u: property name too long", path, lineno);
            if (splat__ply_prop(e, name) >= 0)
                return splat__fail(err, SPLAT_ERR_FORMAT, "%s: %s property \"%s\" appears twice", path, e->name, name);
            if (e->n_props == SPLAT_PLY_MAX_PROPS)
                return splat__fail(err, SPLAT_ERR_UNSUPPORTED, "%s: element %s has more than %d properties", path,
                                   e->name, SPLAT_PLY_MAX_PROPS);
            splat_ply_prop *p = &e->props[e->n_props++];
            snprintf(p->name, sizeof p->name, "%s", name);
            p->type = type;
            p->list_count = count_type;
        } else {
            return splat__fail(err, SPLAT_ERR_FORMAT, "%s: PLY header line %u: unknown keyword \"%s\"", path, lineno, tok[0]);
        }
    }
    if (!format_seen) return splat__fail(err, SPLAT_ERR_FORMAT, "%s: the PLY header has no format line", path);
    for (uint32_t k = 0; k < h->n_elements; k++) {
        splat_ply_element *el = &h->elements[k];
        bool fixed = true;
        for (uint32_t j = 0; j < el->n_props; j++) {
            fixed = fixed && !el->props[j].list_count;
            el->row_bytes += splat__ply_type_size(el->props[j].type);
        }
        if (!fixed) el->row_bytes = 0;
    }
    h->file_size = splat__file_size(fp);
    h->data_start = ftello(fp);
    if (h->file_size < 0 || h->data_start < 0 || h->data_start > h->file_size)
        return splat__fail(err, SPLAT_ERR_IO, "%s: not a regular file", path);
    return SPLAT_OK;
}

const splat_ply_element *splat__ply_element(const splat_ply_header *h, const char *name)
{
    for (uint32_t k = 0; k < h->n_elements; k++)
        if (strcmp(h->elements[k].name, name) == 0) return &h->elements[k];
    return NULL;
}

int splat__ply_prop(const splat_ply_element *e, const char *name)
{
    for (uint32_t k = 0; k < e->n_props; k++)
        if (strcmp(e->props[k].name, name) == 0) return (int)k;
    return -1;
}

splat_status splat__ply_seek(const char *path, FILE *fp, const splat_ply_header *h, const splat_ply_element *e,
                             splat_error *err)
{
    SPLAT_ASSERT(!h->ascii);
    uint64_t at = (uint64_t)h->data_start, size = (uint64_t)h->file_size;
    for (const splat_ply_element *p = h->elements; p != e; p++) {
        if (!p->row_bytes)
            return splat__fail(err, SPLAT_ERR_UNSUPPORTED, "%s: element %s, before %s, has a list property; splatc "
                               "reads binary PLY elements after such an element only", path, p->name, e->name);
        /* row_bytes <= 256 * 8, so the product fits; a count the file cannot hold stops here */
        if (p->count > size / p->row_bytes || at + p->count * p->row_bytes > size) break;
        at += p->count * p->row_bytes;
    }
    uint64_t left = at <= size ? size - at : 0;
    if (!e->row_bytes || e->count > left / e->row_bytes)
        return splat__fail(err, SPLAT_ERR_FORMAT, "%s: truncated: %llu %s need %llu bytes, the file holds %llu "
                           "where they start", path, (unsigned long long)e->count,
                           strcmp(e->name, "vertex") == 0 ? "vertices" : e->name,
                           (unsigned long long)e->count * e->row_bytes, (unsigned long long)left);
    if (fseeko(fp, (off_t)at, SEEK_SET) != 0) return splat__fail(err, SPLAT_ERR_IO, "%s: cannot seek", path);
    return SPLAT_OK;
}

