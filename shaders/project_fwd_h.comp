#version 450
// Preprocess (fwd) with SH coefficients stored as half floats.
#define SPLAT_SH_HALF
#include "project_fwd.glsl"
