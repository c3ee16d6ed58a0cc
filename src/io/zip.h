/* io: reading and writing the ZIP archives SOG bundles are (zip.c). */
#ifndef SPLAT_IO_ZIP_H
#define SPLAT_IO_ZIP_H

#include "io/io_util.h"

typedef struct splat_zip_entry {
    const char *name;
    const void *data;
    size_t size;
} splat_zip_entry;

/* Writes the entries, stored, into a new archive at `path`. Atomic. */
splat_status splat__zip_write(const char *path, const splat_zip_entry *entries, uint32_t n, splat_error *err);

typedef struct splat_zip_item {
    const char *name;        /* in the archive's bytes, not NUL-terminated */
    uint32_t name_len;
    uint32_t flags, method, crc, csize, usize, local;
} splat_zip_item;

typedef struct splat_zip {
    const char *path;        /* named in errors */
    const uint8_t *data;     /* the whole archive, the caller's */
    size_t size;
    splat_zip_item *entries;
    uint32_t n;
} splat_zip;

/* Reads the directory of the archive in data [size]; errors name `path`. Close with
 * splat__zip_close (also after a failure). */
splat_status splat__zip_open(const char *path, const uint8_t *data, size_t size, splat_zip *zip, splat_error *err);
/* The entry called `name`, or NULL. */
const splat_zip_item *splat__zip_find(const splat_zip *zip, const char *name);
/* An entry's bytes, allocated here (free with splat__free; one byte more than *n, 0). */
splat_status splat__zip_read(const splat_zip *zip, const splat_zip_item *it, uint8_t **out, size_t *n, splat_error *err);
void splat__zip_close(splat_zip *zip);

#endif
