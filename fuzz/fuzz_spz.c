/* libFuzzer: the SPZ (versions 1-3 gzip, 4 zstd) reader, the input as the file. */
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static char path[1024];
    if (!path[0]) snprintf(path, sizeof path, "%s", fuzz_path("scene.spz"));
    fuzz_write(path, data, size);
    fuzz_read_scene(path, "splat__spz_read");
    return 0;
}
