#version 450
// Preprocess (bwd) with SH coefficients stored as half floats.
#define SPLAT_SH_HALF
#include "project_bwd.glsl"
