/* render: the frame every stage reads, from a camera and the render options. */
#include "render/render.h"

uint32_t splat__sh_degree(const splat_render_desc *desc)
{
    SPLAT_ASSERT(desc->sh_degree != 0 && (desc->sh_degree <= 3 || desc->sh_degree == SPLAT_SH_DEGREE_0));
    return desc->sh_degree == SPLAT_SH_DEGREE_0 ? 0 : desc->sh_degree;
}

void splat__frame_make(splat_frame *f, const splat_camera *cam, const splat_render_desc *desc, uint32_t n_gaussians)
{
    memset(f, 0, sizeof *f);
    f->cam.fx = cam->fx;
    f->cam.fy = cam->fy;
    f->cam.cx = cam->cx;
    f->cam.cy = cam->cy;
    memcpy(f->cam.R, cam->R, sizeof f->cam.R);
    memcpy(f->cam.t, cam->t, sizeof f->cam.t);
    f->cam.width = cam->width;
    f->cam.height = cam->height;
    for (int i = 0; i < 3; i++) {
        /* campos = -R^T t */
        double c = 0;
        for (int k = 0; k < 3; k++) c -= (double)cam->R[k * 3 + i] * cam->t[k];
        f->campos[i] = (float)c;
        f->background[i] = desc->background[i];
    }
    f->sh_degree = splat__sh_degree(desc);
    f->tiles_x = splat__div_up(cam->width, SPLAT_TILE);
    f->tiles_y = splat__div_up(cam->height, SPLAT_TILE);
    f->cap = desc->max_gaussians_per_tile;
    f->n_gaussians = n_gaussians;
    f->antialiased = desc->rasterize_mode == SPLAT_RASTERIZE_ANTIALIASED;
}

void splat__render_set_frame(splat_cmd *c, splat_render_bufs *b, const splat_frame *f)
{
    splat__cmd_update(c, SPLAT_VIEW(b->frame), f, sizeof *f);
}
