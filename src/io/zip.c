/* io: the little of ZIP that SOG bundles need. Writing: stored (uncompressed) entries, as
 * splat-transform writes them (WebP is compressed already). Reading: stored and deflated entries
 * found through the central directory; ZIP64, encryption and multi-disk archives are refused. Every
 * size is checked against the archive's bytes, a deflated entry is inflated into a buffer that
 * grows with what really comes out (up to the size the directory gives), and its CRC-32 is
 * checked. */
#include "io/zip.h"

#include <zlib.h>

#define LOCAL_SIG 0x04034b50u
#define CENTRAL_SIG 0x02014b50u
#define END_SIG 0x06054b50u

static uint16_t u16(const uint8_t *p) { return (uint16_t)(p[0] | p[1] << 8); }

static void put16(uint8_t *p, uint32_t v) { p[0] = (uint8_t)v, p[1] = (uint8_t)(v >> 8); }

/* ---------------------------------------------------------------------------- write */

splat_status splat__zip_write(const char *path, const splat_zip_entry *entries, uint32_t n, splat_error *err)
{
    uint64_t total = 22;
    for (uint32_t k = 0; k < n; k++) total += 30 + 46 + 2 * strlen(entries[k].name) + entries[k].size;
    if (total > UINT32_MAX || n > 0xffff)
        return splat__fail(err, SPLAT_ERR_UNSUPPORTED, "%s: the bundle would need ZIP64 (over 4 GiB)", path);
    splat_atomic_file f;
    splat_status st = splat__atomic_open(&f, path, err);
    uint32_t *offsets = splat__calloc((size_t)n + 1, sizeof *offsets), *crcs = splat__calloc((size_t)n + 1, sizeof *crcs);
    if (st == SPLAT_OK && (!offsets || !crcs)) st = splat__fail(err, SPLAT_ERR_OUT_OF_HOST_MEMORY, "%s: out of host memory", path);
    uint32_t at = 0;
    for (uint32_t k = 0; k < n && st == SPLAT_OK; k++) {
        const splat_zip_entry *e = &entries[k];
        uint32_t name = (uint32_t)strlen(e->name), size = (uint32_t)e->size;
        crcs[k] = (uint32_t)crc32(crc32(0, NULL, 0), e->data, (uInt)size);
        uint8_t h[30] = {0};
        splat__store_u32(h, LOCAL_SIG);
        put16(h + 4, 20);         /* version needed: 2.0 */
        put16(h + 6, 0x800);      /* names in UTF-8 */
        splat__store_u32(h + 14, crcs[k]);
        splat__store_u32(h + 18, size);
        splat__store_u32(h + 22, size);
        put16(h + 26, name);
        offsets[k] = at;
        st = splat__atomic_write(&f, h, sizeof h, err);
        if (st == SPLAT_OK) st = splat__atomic_write(&f, e->name, name, err);
        if (st == SPLAT_OK) st = splat__atomic_write(&f, e->data, size, err);
        at += 30 + name + size;
    }
    uint32_t dir_start = at;
    for (uint32_t k = 0; k < n && st == SPLAT_OK; k++) {
        uint32_t name = (uint32_t)strlen(entries[k].name), size = (uint32_t)entries[k].size;
        uint8_t h[46] = {0};
        splat__store_u32(h, CENTRAL_SIG);
        put16(h + 4, 20);
        put16(h + 6, 20);
        put16(h + 8, 0x800);
        splat__store_u32(h + 16, crcs[k]);
        splat__store_u32(h + 20, size);
        splat__store_u32(h + 24, size);
        put16(h + 28, name);
        splat__store_u32(h + 42, offsets[k]);
        st = splat__atomic_write(&f, h, sizeof h, err);
        if (st == SPLAT_OK) st = splat__atomic_write(&f, entries[k].name, name, err);
        at += 46 + name;
    }
    uint8_t end[22] = {0};
    splat__store_u32(end, END_SIG);
    put16(end + 8, n);
    put16(end + 10, n);
    splat__store_u32(end + 12, at - dir_start);
    splat__store_u32(end + 16, dir_start);
    if (st == SPLAT_OK) st = splat__atomic_write(&f, end, sizeof end, err);
    splat__free(offsets), splat__free(crcs);
    if (st != SPLAT_OK) {
        splat__atomic_abort(&f);
        return st;
    }
    return splat__atomic_commit(&f, err);
}

/* ----------------------------------------------------------------------------- read */

splat_status splat__zip_open(const char *path, const uint8_t *data, size_t size, splat_zip *zip, splat_error *err)
{
    memset(zip, 0, sizeof *zip);
    zip->path = path, zip->data = data, zip->size = size;
    /* the end record: the last 22 bytes, or up to 64 KiB earlier behind a comment */
    size_t end = SIZE_MAX;
    for (size_t back = 22; back <= size && back <= 22 + 0xffff; back++)
        if (splat__load_u32(data + size - back) == END_SIG && u16(data + size - back + 20) == back - 22) {
            end = size - back;
            break;
        }
    if (end == SIZE_MAX) return splat__fail(err, SPLAT_ERR_FORMAT, "%s: not a zip archive (no end record)", path);
    const uint8_t *e = data + end;
    uint32_t count = u16(e + 10), dir_size = splat__load_u32(e + 12), dir_at = splat__load_u32(e + 16);
    if (u16(e + 4) != 0 || u16(e + 6) != 0 || u16(e + 8) != count)
        return splat__fail(err, SPLAT_ERR_UNSUPPORTED, "%s: a multi-disk zip archive is not supported", path);
    if (count == 0xffff || dir_at == UINT32_MAX)
        return splat__fail(err, SPLAT_ERR_UNSUPPORTED, "%s: ZIP64 archives are not supported", path);
    if (dir_at > end || dir_size > end - dir_at)
        return splat__fail(err, SPLAT_ERR_FORMAT, "%s: the zip directory lies outside the archive", path);
    /* an entry takes at least 46 bytes of the directory: the count cannot lie beyond that */
    if (count > dir_size / 46)
        return splat__fail(err, SPLAT_ERR_FORMAT, "%s: %u zip entries do not fit a %u-byte directory", path, count, dir_size);
    zip->entries = splat__calloc((size_t)count + 1, sizeof *zip->entries);
    if (!zip->entries) return splat__fail(err, SPLAT_ERR_OUT_OF_HOST_MEMORY, "%s: out of host memory", path);
    const uint8_t *p = data + dir_at, *stop = p + dir_size;
    for (uint32_t k = 0; k < count; k++) {
        if (stop - p < 46 || splat__load_u32(p) != CENTRAL_SIG)
            return splat__fail(err, SPLAT_ERR_FORMAT, "%s: zip directory entry %u is malformed", path, k);
        uint32_t name = u16(p + 28), extra = u16(p + 30), comment = u16(p + 32);
        if ((size_t)(stop - p) < 46 + (size_t)name + extra + comment)
            return splat__fail(err, SPLAT_ERR_FORMAT, "%s: zip directory entry %u runs past the directory", path, k);
        splat_zip_item *it = &zip->entries[zip->n++];
        it->flags = u16(p + 8);
        it->method = u16(p + 10);
        it->crc = splat__load_u32(p + 16);
        it->csize = splat__load_u32(p + 20);
        it->usize = splat__load_u32(p + 24);
        it->local = splat__load_u32(p + 42);
        it->name = (const char *)p + 46;
        it->name_len = name;
        p += 46 + (size_t)name + extra + comment;
    }
    return SPLAT_OK;
}

const splat_zip_item *splat__zip_find(const splat_zip *zip, const char *name)
{
    size_t n = strlen(name);
    for (uint32_t k = 0; k < zip->n; k++)
        if (zip->entries[k].name_len == n && memcmp(zip->entries[k].name, name, n) == 0) return &zip->entries[k];
    return NULL;
}

static void *z_alloc(void *opaque, uInt items, uInt size)
{
    (void)opaque;
    return splat__calloc(items, size);
}

static void z_free(void *opaque, void *p)
{
    (void)opaque;
    splat__free(p);
}

splat_status splat__zip_read(const splat_zip *zip, const splat_zip_item *it, uint8_t **out, size_t *n, splat_error *err)
{
    *out = NULL, *n = 0;
    const char *path = zip->path;
    int name_len = (int)SPLAT_MIN(it->name_len, 200u);
    if (it->flags & 1)
        return splat__fail(err, SPLAT_ERR_UNSUPPORTED, "%s: zip entry %.*s is encrypted", path, name_len, it->name);
    if (it->method != 0 && it->method != 8)
        return splat__fail(err, SPLAT_ERR_UNSUPPORTED, "%s: zip entry %.*s uses compression method %u (stored or "
                           "deflate)", path, name_len, it->name, it->method);
    if (it->local > zip->size || zip->size - it->local < 30 || splat__load_u32(zip->data + it->local) != LOCAL_SIG)
        return splat__fail(err, SPLAT_ERR_FORMAT, "%s: zip entry %.*s: no local header where the directory says", path,
                           name_len, it->name);
    const uint8_t *h = zip->data + it->local;
    size_t start = (size_t)it->local + 30 + u16(h + 26) + u16(h + 28);
    if (start > zip->size || zip->size - start < it->csize)
        return splat__fail(err, SPLAT_ERR_FORMAT, "%s: truncated: zip entry %.*s runs past the archive", path, name_len,
                           it->name);
    if (it->method == 0 && it->csize != it->usize)
        return splat__fail(err, SPLAT_ERR_FORMAT, "%s: zip entry %.*s is stored but its sizes differ", path, name_len,
                           it->name);
    uint8_t *buf = splat__malloc(it->method == 0 ? (size_t)it->usize + 1 : SPLAT_MIN((size_t)it->usize, (size_t)1 << 16) + 1);
    if (!buf) return splat__fail(err, SPLAT_ERR_OUT_OF_HOST_MEMORY, "%s: out of host memory", path);
    size_t got = 0, cap = it->method == 0 ? it->usize : SPLAT_MIN((size_t)it->usize, (size_t)1 << 16);
    splat_status st = SPLAT_OK;
    if (it->method == 0) {
        memcpy(buf, zip->data + start, it->usize);
        got = it->usize;
    } else {
        z_stream z = {.zalloc = z_alloc, .zfree = z_free, .next_in = (Bytef *)(uintptr_t)(zip->data + start),
                      .avail_in = it->csize};
        if (inflateInit2(&z, -MAX_WBITS) != Z_OK) {
            splat__free(buf);
            return splat__fail(err, SPLAT_ERR_OUT_OF_HOST_MEMORY, "%s: out of host memory", path);
        }
        for (int r = Z_OK; r != Z_STREAM_END && st == SPLAT_OK;) {
            if (got == cap && cap < it->usize) {
                size_t grown = SPLAT_MIN(cap * 2, (size_t)it->usize);
                uint8_t *p = splat__realloc(buf, grown + 1);
                if (!p) {
                    st = splat__fail(err, SPLAT_ERR_OUT_OF_HOST_MEMORY, "%s: out of host memory", path);
                    break;
                }
                buf = p, cap = grown;
            }
            z.next_out = buf + got;
            z.avail_out = (uInt)(cap - got + (cap == it->usize)); /* one byte more finds data past the end */
            uInt before = z.avail_out;
            r = inflate(&z, Z_NO_FLUSH);
            got += before - z.avail_out;
            if (got > it->usize)
                st = splat__fail(err, SPLAT_ERR_FORMAT, "%s: zip entry %.*s inflates past its %u bytes", path, name_len,
                                 it->name, it->usize);
            else if (r == Z_MEM_ERROR) st = splat__fail(err, SPLAT_ERR_OUT_OF_HOST_MEMORY, "%s: out of host memory", path);
            else if (r == Z_BUF_ERROR && z.avail_in == 0)
                st = splat__fail(err, SPLAT_ERR_FORMAT, "%s: truncated: zip entry %.*s ends early", path, name_len, it->name);
            else if (r != Z_OK && r != Z_STREAM_END && r != Z_BUF_ERROR)
                st = splat__fail(err, SPLAT_ERR_FORMAT, "%s: zip entry %.*s: corrupt deflate data", path, name_len, it->name);
        }
        inflateEnd(&z);
        if (st == SPLAT_OK && got != it->usize)
            st = splat__fail(err, SPLAT_ERR_FORMAT, "%s: zip entry %.*s inflates to %zu bytes, not %u", path, name_len,
                             it->name, got, it->usize);
    }
    if (st == SPLAT_OK && (uint32_t)crc32(crc32(0, NULL, 0), buf, (uInt)got) != it->crc)
        st = splat__fail(err, SPLAT_ERR_FORMAT, "%s: zip entry %.*s fails its CRC check", path, name_len, it->name);
    if (st != SPLAT_OK) {
        splat__free(buf);
        return st;
    }
    *out = buf, *n = got;
    return SPLAT_OK;
}

void splat__zip_close(splat_zip *zip)
{
    splat__free(zip->entries);
    memset(zip, 0, sizeof *zip);
}
