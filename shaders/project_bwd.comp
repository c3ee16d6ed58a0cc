#version 450
// Preprocess (bwd) with float SH coefficients.
#include "project_bwd.glsl"
