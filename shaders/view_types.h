/* Binding slots of the viewer's own stage (src/view/frames.c, shaders/view_pack.comp), shared by
 * C and GLSL. */
#ifndef SPLAT_VIEW_TYPES_H
#define SPLAT_VIEW_TYPES_H

#define VIEW_PACK_FRAME 0     /* splat_frame: the image size */
#define VIEW_PACK_RGBT 1      /* [H,W] vec4: the render (rgb + final transmittance) */
#define VIEW_PACK_OUT 2       /* [H,W] uint: RGBA8, alpha 255 */
#define VIEW_PACK_BINDINGS 3

#endif
