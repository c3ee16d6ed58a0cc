#version 450
// Preprocess (fwd) with float SH coefficients.
#include "project_fwd.glsl"
