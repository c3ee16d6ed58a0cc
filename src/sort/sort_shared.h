/* Layouts shared by sort.c and the sort/scan shaders: included from C and from GLSL (glslc
 * defines VULKAN), so a push-constant block or a scratch word is declared once. */
#ifndef SPLAT_SORT_SHARED_H
#define SPLAT_SORT_SHARED_H

#ifdef VULKAN
#define SPLAT_U32 uint
#else
#include <stdint.h>
#define SPLAT_U32 uint32_t
#endif

/* One pass sorts a digit of at most SORT_DIGIT_BITS bits into SORT_RADIX buckets. */
#define SORT_DIGIT_BITS 8u
#define SORT_RADIX 256u

/* The header that sort_setup.comp writes at the start of the sort's and the scan's scratch,
 * in uint32 words: the element count (clamped), the number of tiles (sort) or blocks (scan),
 * and a VkDispatchIndirectCommand covering those tiles/blocks (one workgroup each, folded into
 * 2D like splat__cmd_dispatch_1d). */
#define SETUP_COUNT 0
#define SETUP_GROUPS 1
#define SETUP_ARGS 4
#define SETUP_WORDS 8

/* sort_setup.comp. has_count = 0: the count is max_count (no count buffer). */
#define SPLAT_SETUP_PUSH { SPLAT_U32 max_count; SPLAT_U32 tile; SPLAT_U32 has_count; SPLAT_U32 pad; }
/* sort_hist.comp and sort_scatter.comp: the digit of this pass is bits [shift, shift + width) of
 * the key word bound as the digit word. */
#define SPLAT_PASS_PUSH { SPLAT_U32 shift; SPLAT_U32 width; }

#endif
