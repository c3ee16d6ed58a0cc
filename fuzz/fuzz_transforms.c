/* libFuzzer: a nerfstudio transforms.json scene, through the whole dataset load. The input is
 *   flags u8 (fuzz.h) | u16 length, transforms.json | points.ply
 * written into the scene folder, which holds the small images the seeds' frames name (fuzz.h's
 * NeRF images, also used as masks). The PLY is what the seeds' "ply_file_path" names, so the
 * point-cloud reader (src/io/points.c) is fuzzed through the same input. */
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static char scene[1024], json[1100], ply[1100];
    if (!scene[0]) {
        snprintf(scene, sizeof scene, "%s", fuzz_path("scene"));
        snprintf(json, sizeof json, "%s/transforms.json", scene);
        snprintf(ply, sizeof ply, "%s/points.ply", scene);
        fuzz_mkdir(scene);
        fuzz_write_nerf_images(scene);
    }
    fuzz_input in = {data, size};
    uint8_t flags = fuzz_byte(&in);
    fuzz_input a = fuzz_part(&in), b = fuzz_rest(&in);
    fuzz_write(json, a.p, a.n);
    fuzz_write(ply, b.p, b.n);
    /* a frame may name an absolute image path, and the message then starts with it */
    fuzz_load_dataset(scene, flags, NULL);
    return 0;
}
