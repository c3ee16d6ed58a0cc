/* libFuzzer: a SOG folder: `u16 n` + meta.json, then `u16 n` + each image in the order
 * means_l, means_u, quats, scales, sh0, shN_centroids, shN_labels (.webp; absent when empty). */
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char *const images[7] = {"means_l.webp", "means_u.webp", "quats.webp", "scales.webp", "sh0.webp",
                                          "shN_centroids.webp", "shN_labels.webp"};
    static char meta[1024];
    if (!meta[0]) snprintf(meta, sizeof meta, "%s", fuzz_path("meta.json"));
    fuzz_input in = {data, size};
    fuzz_input m = fuzz_part(&in);
    fuzz_write(meta, m.p, m.n);
    for (int k = 0; k < 7; k++) {
        fuzz_input part = fuzz_part(&in);
        const char *p = fuzz_path(images[k]);
        if (part.n) fuzz_write(p, part.p, part.n);
        else fuzz_remove(p);
    }
    fuzz_read_scene(meta, "splat__sog_read (folder)");
    return 0;
}
