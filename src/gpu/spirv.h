/* The embedded SPIR-V of every shader (generated table, see cmake/shaders.cmake). */
#ifndef SPLAT_GPU_SPIRV_H
#define SPLAT_GPU_SPIRV_H

#include <stddef.h>
#include <stdint.h>

typedef struct splat__spirv {
    const char *name;        /* the shader's file name without .comp */
    const uint32_t *code;
    size_t size;             /* bytes */
} splat__spirv;

/* The library's shaders (shaders/, every .comp). Terminated by an entry whose name is NULL. */
extern const splat__spirv splat__spirv_table[];

/* The shader called `name` in `table` (NULL: the library's), or NULL. */
const splat__spirv *splat__spirv_find(const splat__spirv *table, const char *name);

#endif
