/* libFuzzer: a COLMAP binary model, through the whole dataset load. The input is
 *   flags u8 (fuzz.h) | u16 length, cameras.bin | u16 length, images.bin | points3D.bin
 * written into <scene>/sparse/0/; <scene>/images/ and images_2/ hold the small images the seeds
 * name (fuzz.h), so a model that parses goes on to probe them and build its views. */
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char *const files[3] = {"cameras.bin", "images.bin", "points3D.bin"};
    static char scene[1024], model[1100];
    if (!scene[0]) {
        snprintf(scene, sizeof scene, "%s", fuzz_path("scene"));
        snprintf(model, sizeof model, "%s/sparse/0", scene);
        fuzz_mkdir(model);
        fuzz_write_colmap_images(scene);
    }
    fuzz_input in = {data, size};
    uint8_t flags = fuzz_byte(&in);
    fuzz_input parts[3];
    parts[0] = fuzz_part(&in);
    parts[1] = fuzz_part(&in);
    parts[2] = fuzz_rest(&in);
    char path[1200];
    for (int k = 0; k < 3; k++) {
        snprintf(path, sizeof path, "%s/%s", model, files[k]);
        fuzz_write(path, parts[k].p, parts[k].n);
    }
    fuzz_load_dataset(scene, flags, scene);
    return 0;
}
