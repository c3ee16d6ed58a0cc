/* libFuzzer: the antimatter15's .splat records reader, the input as the file. */
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static char path[1024];
    if (!path[0]) snprintf(path, sizeof path, "%s", fuzz_path("scene.splat"));
    fuzz_write(path, data, size);
    fuzz_read_scene(path, "splat__splat_read");
    return 0;
}
