/* The Gaussian parameter groups: the one list that the host scene, the GPU scene, uploads and
 * downloads, zeroing, checkpoints, the non-finite report, Adam and densification loop over.
 * Included by C and by the shaders (glslc -I src), so it holds macros only.
 *
 * SPLAT_PARAM_GROUPS(X) calls X(index, name, NAME, width, head, lr_head, lr_rest, flags), once
 * per group, in index order:
 *   index    0..SPLAT_GROUP_COUNT-1: the order of every list, of checkpoint sections and of the
 *            group bindings of adam.comp and densify_apply.comp
 *   name     the member of splat_scene (include/splatc.h) and splat_scene_gpu; the checkpoint
 *            sections "params.<name>" and "adam.<name>"
 *   NAME     for SPLAT_GROUP_<NAME>, the index as a named constant
 *   width    floats per Gaussian
 *   head     the first `head` floats of a row learn at lr_head, the others at lr_rest
 *   lr_head, lr_rest  Adam's learning rates, gsplat's defaults (docs/TRAIN.md); C expressions,
 *            some in float arithmetic because that is how gsplat's values round
 *   flags    SPLAT_GROUP_FLAG_SCENE_LR: the learning rate is scaled by the scene scale and decays to
 *            1 % over the run; SPLAT_GROUP_FLAG_SH: rows are 16 coefficients x 3 channels, stored as
 *            half floats where a render asks (sh_half), and Adam leaves coefficients above the
 *            active degree alone (their gradients and moments are zero);
 *            SPLAT_GROUP_FLAG_FLOAT_MOMENTS: Adam's moments as float m and v, not a word
 *            (shaders/train_types.h). Several flags are one parenthesised expression: the shaders
 *            test `flags & ...` inside macros
 *
 * Adding a group: a row here (and the two numbers below it), its member in splat_scene (include/splatc.h), and the shaders
 * that read it; everything that only stores, moves or optimises parameters follows from the
 * row (docs/DESIGN.md, "Adding a parameter group"). */
#ifndef SPLAT_CORE_PARAMS_H
#define SPLAT_CORE_PARAMS_H

#define SPLAT_GROUP_FLAG_SCENE_LR 1u
#define SPLAT_GROUP_FLAG_SH 2u
#define SPLAT_GROUP_FLAG_FLOAT_MOMENTS 4u

#define SPLAT_PARAM_GROUPS(X)                                           \
    X(0, means, MEANS, 3, 3, 1.6e-4, 0.0, (SPLAT_GROUP_FLAG_SCENE_LR | SPLAT_GROUP_FLAG_FLOAT_MOMENTS)) \
    X(1, log_scales, LOG_SCALES, 3, 3, 5e-3f, 0.0, 0u)                  \
    X(2, quats, QUATS, 4, 4, 1e-3f, 0.0, 0u)                            \
    X(3, opacities, OPACITIES, 1, 1, 5e-2f, 0.0, SPLAT_GROUP_FLAG_FLOAT_MOMENTS) \
    X(4, sh, SH, 48, 3, 2.5e-3f, (2.5e-3f / 20.0f), SPLAT_GROUP_FLAG_SH)

/* How many groups, and how many floats a Gaussian has in all of them: numbers, not sums over the
 * table, because they are used inside expansions of the table (core/scene.c checks them). */
#define SPLAT_GROUP_COUNT 5
#define SPLAT_PARAM_FLOATS 59

#ifdef VULKAN
#define SPLAT_GROUP_X_INDEX(i, n, N, w, h, a, b, f) const uint SPLAT_GROUP_##N = uint(i);
SPLAT_PARAM_GROUPS(SPLAT_GROUP_X_INDEX)
#undef SPLAT_GROUP_X_INDEX
#else
#define SPLAT_GROUP_X_INDEX(i, n, N, w, h, a, b, f) SPLAT_GROUP_##N = i,
enum { SPLAT_PARAM_GROUPS(SPLAT_GROUP_X_INDEX) };
#undef SPLAT_GROUP_X_INDEX
#endif

#endif
