/* libFuzzer: image decoding (PNG and JPEG, chosen by content), the input as the file: the size
 * from the header (splat__image_probe) and the whole decode (splat__image_load), which must
 * agree on the size when both succeed. */
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static char path[1024];
    if (!path[0]) snprintf(path, sizeof path, "%s", fuzz_path("image"));
    fuzz_write(path, data, size);
    uint32_t w = 0, h = 0;
    splat_error err = {0};
    splat_status probed = splat__image_probe(path, &w, &h, &err);
    fuzz_check(probed, &err, path, "splat__image_probe");
    splat_image img;
    splat_error err2 = {0};
    splat_status st = splat__image_load(path, &img, &err2);
    fuzz_check(st, &err2, path, "splat__image_load");
    if (st != SPLAT_OK) {
        FUZZ_ASSERT(!img.rgba && !img.width && !img.height, "a failed load left an image");
        return 0;
    }
    FUZZ_ASSERT(img.rgba && img.width >= 1 && img.height >= 1, "loaded a %ux%u image", img.width, img.height);
    FUZZ_ASSERT(probed != SPLAT_OK || (w == img.width && h == img.height), "probe says %ux%u, load %ux%u", w, h,
                img.width, img.height);
    splat__image_free(&img);
    return 0;
}
