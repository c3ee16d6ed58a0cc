/* io: checkpoints, a list of named binary sections.
 *
 * Layout (all integers little-endian):
 *   "SPLATCKP" | version u32 (1) | count u32
 *   count times: name[32] (NUL-terminated, NUL-padded) | size u64 | crc u32 | data[size]
 * The CRC-32 (zlib's) covers the name, the size and the data, so any corrupted byte of a
 * section is caught; magic, version and count are checked directly, and a count that is too
 * small leaves trailing bytes, which are an error too. */
#include "io/io_util.h"

#include <errno.h>
#include <zlib.h>

#define CKPT_VERSION 1u
#define HEADER_BYTES 16
#define SECTION_HEADER_BYTES 44
static const char ckpt_magic[8] = {'S', 'P', 'L', 'A', 'T', 'C', 'K', 'P'};

static uint32_t crc_bytes(uint32_t crc, const void *data, uint64_t size)
{
    const uint8_t *p = data;
    while (size > 0) {
        uInt n = (uInt)SPLAT_MIN(size, (uint64_t)1 << 30);
        crc = (uint32_t)crc32(crc, p, n);
        p += n;
        size -= n;
    }
    return crc;
}

static uint32_t section_crc(const uint8_t header[SECTION_HEADER_BYTES], const void *data, uint64_t size)
{
    uint32_t crc = (uint32_t)crc32(0L, Z_NULL, 0);
    crc = crc_bytes(crc, header, 40); /* name and size */
    return crc_bytes(crc, data, size);
}

splat_status splat__ckpt_write(const char *path, const splat_section *sections, uint32_t n, splat_error *err)
{
    SPLAT_ASSERT(path && (sections || n == 0));
    for (uint32_t i = 0; i < n; i++) {
        size_t len = strnlen(sections[i].name, sizeof sections[i].name);
        if (len == 0 || len == sizeof sections[i].name)
            return splat__fail(err, SPLAT_ERR_INVALID_ARG, "%s: section %u needs a name of 1 to 31 characters", path, i);
        SPLAT_ASSERT(sections[i].data || sections[i].size == 0);
        for (uint32_t j = 0; j < i; j++)
            if (strcmp(sections[i].name, sections[j].name) == 0)
                return splat__fail(err, SPLAT_ERR_INVALID_ARG, "%s: section name \"%s\" appears twice", path,
                                   sections[i].name);
    }
    splat_atomic_file f;
    splat_status st = splat__atomic_open(&f, path, err);
    if (st != SPLAT_OK) return st;
    uint8_t head[HEADER_BYTES];
    memcpy(head, ckpt_magic, 8);
    splat__store_u32(head + 8, CKPT_VERSION);
    splat__store_u32(head + 12, n);
    st = splat__atomic_write(&f, head, sizeof head, err);
    for (uint32_t i = 0; i < n && st == SPLAT_OK; i++) {
        uint8_t sh[SECTION_HEADER_BYTES] = {0};
        memcpy(sh, sections[i].name, strlen(sections[i].name));
        splat__store_u64(sh + 32, sections[i].size);
        splat__store_u32(sh + 40, section_crc(sh, sections[i].data, sections[i].size));
        st = splat__atomic_write(&f, sh, sizeof sh, err);
        if (st == SPLAT_OK) st = splat__atomic_write(&f, sections[i].data, (size_t)sections[i].size, err);
    }
    if (st != SPLAT_OK) {
        splat__atomic_abort(&f);
        return st;
    }
    return splat__atomic_commit(&f, err);
}

splat_status splat__ckpt_read(const char *path, splat_section **sections, uint32_t *n, splat_error *err)
{
    SPLAT_ASSERT(path && sections && n);
    *sections = NULL;
    *n = 0;
    FILE *fp = fopen(path, "rb");
    if (!fp) return splat__fail(err, SPLAT_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
    splat_section *secs = NULL;
    uint32_t count = 0, done = 0;
    splat_status st = SPLAT_OK;
    long long size = splat__file_size(fp);
    uint8_t head[HEADER_BYTES];
    if (size < 0) {
        st = splat__fail(err, SPLAT_ERR_IO, "%s: not a regular file", path);
        goto fail;
    }
    if (fread(head, 1, sizeof head, fp) != sizeof head || memcmp(head, ckpt_magic, 8) != 0) {
        st = splat__fail(err, SPLAT_ERR_FORMAT, "%s: not a splatc checkpoint (bad magic)", path);
        goto fail;
    }
    uint32_t version = splat__load_u32(head + 8);
    if (version != CKPT_VERSION) {
        st = splat__fail(err, SPLAT_ERR_UNSUPPORTED, "%s: checkpoint version %u; this build reads version %u", path,
                         version, CKPT_VERSION);
        goto fail;
    }
    count = splat__load_u32(head + 12);
    uint64_t left = (uint64_t)size - HEADER_BYTES;
    if ((uint64_t)count * SECTION_HEADER_BYTES > left) {
        st = splat__fail(err, SPLAT_ERR_FORMAT, "%s: truncated or corrupt: %u sections cannot fit in %llu bytes", path,
                         count, (unsigned long long)left);
        goto fail;
    }
    secs = splat__calloc(count ? count : 1, sizeof *secs);
    if (!secs) {
        st = splat__fail(err, SPLAT_ERR_OUT_OF_HOST_MEMORY, "%s: out of host memory", path);
        goto fail;
    }
    for (; done < count; done++) {
        uint8_t sh[SECTION_HEADER_BYTES];
        if (fread(sh, 1, sizeof sh, fp) != sizeof sh) {
            st = splat__fail(err, SPLAT_ERR_FORMAT, "%s: truncated in the header of section %u", path, done);
            goto fail;
        }
        left -= SECTION_HEADER_BYTES;
        splat_section *s = &secs[done];
        size_t len = strnlen((const char *)sh, 32);
        if (len == 0 || len == 32) {
            st = splat__fail(err, SPLAT_ERR_FORMAT, "%s: section %u has a corrupt name", path, done);
            goto fail;
        }
        memcpy(s->name, sh, len);
        s->size = splat__load_u32(sh + 32) | (uint64_t)splat__load_u32(sh + 36) << 32;
        if (s->size > left || s->size > SIZE_MAX) {
            st = splat__fail(err, SPLAT_ERR_FORMAT, "%s: section \"%s\" says %llu bytes but only %llu remain "
                             "(truncated or corrupt)", path, s->name, (unsigned long long)s->size,
                             (unsigned long long)left);
            goto fail;
        }
        s->data = splat__malloc((size_t)s->size);
        if (!s->data) {
            st = splat__fail(err, SPLAT_ERR_OUT_OF_HOST_MEMORY, "%s: out of host memory for section \"%s\" (%llu "
                             "bytes)", path, s->name, (unsigned long long)s->size);
            goto fail;
        }
        if (fread(s->data, 1, (size_t)s->size, fp) != s->size) {
            st = splat__fail(err, SPLAT_ERR_IO, "%s: read error in section \"%s\"", path, s->name);
            goto fail;
        }
        left -= s->size;
        if (section_crc(sh, s->data, s->size) != splat__load_u32(sh + 40)) {
            st = splat__fail(err, SPLAT_ERR_FORMAT, "%s: checksum mismatch in section \"%s\" (corrupt file)", path,
                             s->name);
            goto fail;
        }
    }
    if (left != 0) {
        st = splat__fail(err, SPLAT_ERR_FORMAT, "%s: %llu unexpected bytes after the last section (corrupt file)",
                         path, (unsigned long long)left);
        goto fail;
    }
    fclose(fp);
    *sections = secs;
    *n = count;
    return SPLAT_OK;
fail:
    fclose(fp);
    if (secs) splat__ckpt_free(secs, count);
    return st;
}

void splat__ckpt_free(splat_section *sections, uint32_t n)
{
    if (!sections) return;
    for (uint32_t i = 0; i < n; i++) splat__free(sections[i].data);
    splat__free(sections);
}

const splat_section *splat__ckpt_find(const splat_section *sections, uint32_t n, const char *name)
{
    SPLAT_ASSERT(name);
    for (uint32_t i = 0; i < n; i++)
        if (strncmp(sections[i].name, name, sizeof sections[i].name) == 0) return &sections[i];
    return NULL;
}
