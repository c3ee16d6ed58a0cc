/* io: the PLY container: a header parsed into elements and typed properties, and where each
 * element's rows lie. The one PLY header parser, shared by the 3DGS layout (ply.c) and
 * PlayCanvas's compressed layout (ply_compressed.c), which one .ply reader tells apart by content,
 * and by the point clouds of a transforms.json (points.c). */
#ifndef SPLAT_IO_PLY_UTIL_H
#define SPLAT_IO_PLY_UTIL_H

#include "io/io_util.h"

#define SPLAT_PLY_MAX_ELEMENTS 8
#define SPLAT_PLY_MAX_PROPS 256
#define SPLAT_PLY_NAME 48

typedef enum splat_ply_type {
    SPLAT_PLY_I8 = 1, SPLAT_PLY_U8, SPLAT_PLY_I16, SPLAT_PLY_U16, SPLAT_PLY_I32, SPLAT_PLY_U32, SPLAT_PLY_F32,
    SPLAT_PLY_F64,
} splat_ply_type;

typedef struct splat_ply_prop {
    char name[SPLAT_PLY_NAME];
    uint8_t type;            /* splat_ply_type of the value (of each item, for a list) */
    uint8_t list_count;      /* 0 for a scalar; the splat_ply_type of a list's length */
} splat_ply_prop;

typedef struct splat_ply_element {
    char name[SPLAT_PLY_NAME];
    uint64_t count;
    uint32_t n_props;
    splat_ply_prop props[SPLAT_PLY_MAX_PROPS];
    uint64_t row_bytes;      /* binary: bytes of a row; 0 when a list makes rows vary */
} splat_ply_element;

/* The header comment that records a scene's rasterize mode: "comment splatc rasterize_mode
 * <name>", name from splat__ply_mode_names. A viewer that skips comments renders the mode it
 * knows (classic). */
#define SPLAT_PLY_MODE_COMMENT "splatc rasterize_mode"
extern const char *const splat__ply_mode_names[SPLAT_RASTERIZE_MODE_COUNT];

typedef struct splat_ply_header {
    bool ascii;
    bool big_endian;         /* binary_big_endian (the Gaussian readers refuse it; points.c reads it) */
    splat_rasterize_mode mode;  /* from the comment above; classic without it */
    bool mode_unknown;       /* the comment names a mode splatc does not know, mode_name (the Gaussian readers
                                refuse it; a point cloud does not care) */
    char mode_name[SPLAT_PLY_NAME];
    uint32_t n_elements;
    splat_ply_element elements[SPLAT_PLY_MAX_ELEMENTS];
    long long data_start;    /* file offset just after end_header */
    long long file_size;
} splat_ply_header;

/* Parses the header from the start of `fp` (left just after end_header). Formats
 * binary_little_endian, binary_big_endian and ascii; a property's type by any of PLY's names (char/int8, uchar/uint8,
 * ... float/float32, double/float64); splatc's rasterize mode comment. Errors name `path` and the header line. */
splat_status splat__ply_header_read(const char *path, FILE *fp, splat_ply_header *h, splat_error *err);
/* The element called `name`, or NULL. */
const splat_ply_element *splat__ply_element(const splat_ply_header *h, const char *name);
/* The index of the property called `name` in `e`, or -1. */
int splat__ply_prop(const splat_ply_element *e, const char *name);
/* Bytes of one value of `type`. */
uint32_t splat__ply_type_size(uint8_t type);
/* A binary value of `type` at p, in the byte order of the file (h->big_endian). */
double splat__ply_value(const uint8_t *p, uint8_t type, bool big_endian);
/* Binary files: positions `fp` at the rows of element `e`, after checking that the elements before
 * it have fixed rows and that its count * row_bytes lies within the file, so nothing is allocated
 * for rows the file does not hold. Errors name `path`. */
splat_status splat__ply_seek(const char *path, FILE *fp, const splat_ply_header *h, const splat_ply_element *e,
                             splat_error *err);

/* The compressed layout (chunk, vertex with packed_* and optional sh): true when `h` is one. */
bool splat__ply_is_compressed(const splat_ply_header *h);
/* Decodes it (binary only); `scene` as splat__ply_read leaves it. */
splat_status splat__ply_compressed_decode(const char *path, FILE *fp, const splat_ply_header *h, splat_scene *scene,
                                          splat_error *err);

#endif
