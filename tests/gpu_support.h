#ifndef SPLAT_TEST_GPU_SUPPORT_H
#define SPLAT_TEST_GPU_SUPPORT_H

#include "gpu/gpu.h"
#include "gpu/spirv.h"

/* The tests' own shaders (tests/shaders), embedded in the test binary. */
extern const splat__spirv t_shaders[];

/* The device every GPU test runs on (created once per process, validation layers on when
 * SPLAT_VALIDATE=1, as CTest sets). NULL (and the case failed) when there is none. */
splat_gpu *t_gpu(void);

#endif
