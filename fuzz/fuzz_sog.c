/* libFuzzer: the a SOG bundle (a zip of meta.json and WebP images) reader, the input as the file. */
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static char path[1024];
    if (!path[0]) snprintf(path, sizeof path, "%s", fuzz_path("scene.sog"));
    fuzz_write(path, data, size);
    fuzz_read_scene(path, "splat__sog_read");
    return 0;
}
