/* libFuzzer: the checkpoint reader (named sections with a CRC each), the input as the file. */
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static char path[1024];
    if (!path[0]) snprintf(path, sizeof path, "%s", fuzz_path("train.ckpt"));
    fuzz_write(path, data, size);
    splat_section *secs;
    uint32_t n;
    splat_error err = {0};
    splat_status st = splat__ckpt_read(path, &secs, &n, &err);
    fuzz_check(st, &err, path, "splat__ckpt_read");
    if (st != SPLAT_OK) {
        FUZZ_ASSERT(!secs && !n, "a failed read left sections");
        return 0;
    }
    uint64_t total = 16;
    for (uint32_t i = 0; i < n; i++) {
        size_t len = strnlen(secs[i].name, sizeof secs[i].name);
        FUZZ_ASSERT(len > 0 && len < sizeof secs[i].name, "section %u has a bad name", i);
        FUZZ_ASSERT(secs[i].data || !secs[i].size, "section %u has no data", i);
        FUZZ_ASSERT(splat__ckpt_find(secs, n, secs[i].name), "section %u is not found by its name", i);
        total += 44 + secs[i].size;
    }
    FUZZ_ASSERT(total == size, "sections of %llu bytes in a file of %zu", (unsigned long long)total, size);
    splat__ckpt_free(secs, n);
    return 0;
}
