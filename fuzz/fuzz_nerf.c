/* libFuzzer: a NeRF-synthetic scene, through the whole dataset load. The input is
 *   flags u8 (fuzz.h) | u16 length, transforms_train.json | transforms_test.json
 * written into the scene folder (an empty test part leaves transforms_test.json absent, which a
 * scene may be); the folder holds the small images the seeds' frames name (fuzz.h). */
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static char scene[1024], train[1100], test[1100];
    if (!scene[0]) {
        snprintf(scene, sizeof scene, "%s", fuzz_path("scene"));
        snprintf(train, sizeof train, "%s/transforms_train.json", scene);
        snprintf(test, sizeof test, "%s/transforms_test.json", scene);
        fuzz_mkdir(scene);
        fuzz_write_nerf_images(scene);
    }
    fuzz_input in = {data, size};
    uint8_t flags = fuzz_byte(&in);
    fuzz_input a = fuzz_part(&in), b = fuzz_rest(&in);
    fuzz_write(train, a.p, a.n);
    if (b.n) fuzz_write(test, b.p, b.n);
    else fuzz_remove(test);
    /* a frame may name an absolute image path, and the message then starts with it */
    fuzz_load_dataset(scene, flags, NULL);
    return 0;
}
