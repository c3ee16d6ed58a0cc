#!/usr/bin/env bash
# Mutation check of the test suite (a developer tool, not part of CI: minutes a mutation on a
# 2-core machine with lavapipe, so run a filtered few). Each mutation below is a deliberate one-line bug with the test family expected to
# catch it. The tree is copied once to a scratch folder and built once; then, per mutation, the
# line is changed (the pattern must occur exactly once in its file), the copy is rebuilt
# incrementally, `ctest -R ^<family>` runs, and the file is restored. A table of the outcomes is
# printed; the exit status is non-zero if any mutation survived, did not apply or did not build.
#
#   scripts/mutate.sh [NAME_FILTER]     run the mutations whose name contains NAME_FILTER (or one
#                                       of a comma-separated list)
#   scripts/mutate.sh --check           only check the table against the tree, without building:
#                                       every line's text occurs exactly once in its file (the
#                                       suite runs this: mutate_table), so a change that rewrites a
#                                       mutated line must rewrite its mutation too
#
# Environment: MUTATE_DIR (the scratch folder; default a new one under /tmp, removed at the end
# unless MUTATE_KEEP=1), MUTATE_JOBS (ctest -j, default 1), MUTATE_BASELINE=0 (skip the check that
# the families pass on the unmutated tree), MUTATE_TIMEOUT (seconds per family run, default 1800).
set -uo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
filter=${1:-}
jobs=${MUTATE_JOBS:-1}
limit=${MUTATE_TIMEOUT:-1800}

# ------------------------------------------------------------------ the mutations
# name | file | family | the text of the line | what it becomes (literal strings, not patterns)
names=() files=() families=() froms=() tos=()
mut() { names+=("$1"); files+=("$2"); families+=("$3"); froms+=("$4"); tos+=("$5"); }

# shaders
mut alpha_clamp_fwd shaders/rasterize_fwd.comp raster_ \
    'precise float alpha = min(ALPHA_MAX, geom.w * exp(-sigma));' \
    'precise float alpha = geom.w * exp(-sigma);'
mut quad_cull_tight shaders/render_common.glsl raster_ \
    'return !(min_power_rect(conic, lo, hi) > log(geom.w / ALPHA_MIN) + 1e-3 + 1.5e-5 * terms);' \
    'return !(min_power_rect(conic, lo, hi) > log(geom.w / ALPHA_MIN) - 0.3 + 1.5e-5 * terms);'
mut quad_rect_half shaders/render_common.glsl raster_ \
    'q1 = vec2(float(min((qx + 1u) * SPLAT_QUAD, W)), float(min((qy + 1u) * SPLAT_QUAD, H))) - 0.5;' \
    'q1 = vec2(float(min(qx * SPLAT_QUAD + 4u, W)), float(min((qy + 1u) * SPLAT_QUAD, H))) - 0.5;'
mut quad_bwd_cull_corner shaders/rasterize_bwd.comp raster_ \
    'keep = may_blend(geom, conic.xyz, geom.xy - c_hi, geom.xy - c_lo);' \
    'keep = may_blend(geom, conic.xyz, geom.xy - c_hi, geom.xy - c_hi);'
mut loss_fwd_halo_channel shaders/loss_fwd.comp train_loss \
    's_x[k] = hx[u][c];' \
    's_x[k] = hx[u][0];'
mut loss_fwd_halo_mask shaders/loss_fwd.comp train_loss \
    'if (!has_mask || mask_at(base + pi)) {' \
    'if (true) {'
mut loss_bwd_halo_map shaders/loss_bwd.comp train_loss \
    'if (k < S * S) s_m[k] = vec3(hm[u][0][c], hm[u][1][c], hm[u][2][c]);' \
    'if (k < S * S) s_m[k] = vec3(hm[u][0][c], hm[u][1][c], hm[u][1][c]);'
mut adam_quad_v_as_m shaders/adam.comp train_adam \
    'float mj = moment_m(mw[j]), vj = moment_v(mw[j]);' \
    'float mj = moment_m(mw[j]), vj = moment_m(mw[j]);'
mut adam_quad_lr_head shaders/adam.comp train_adam \
    'float lr = k < 3u ? slots[pc.slot].lr_head[SPLAT_GROUP_SH]' \
    'float lr = k < 4u ? slots[pc.slot].lr_head[SPLAT_GROUP_SH]'
mut adam_quad_threads_short shaders/train_types.h train_adam \
    '#define SPLAT_ADAM_THREADS (SPLAT_PARAM_FLOATS - 48 + 12)' \
    '#define SPLAT_ADAM_THREADS (SPLAT_PARAM_FLOATS - 48 + 11)'
mut quads_bit_wrong shaders/rasterize_bwd.comp raster_ \
    'if (k == 0u) atomicOr(quads[e], 1u << quad);' \
    'if (k == 0u) atomicOr(quads[e], 1u << (quad & 1u));'
mut quads_left_set shaders/isect_fwd.comp raster_ \
    "quads[pos] = 0u; // this step's" \
    "// this step's"
mut quads_ignored shaders/project_bwd.glsl raster_ \
    'float p2 = uintBitsToFloat(floatBitsToUint(partial2[at]) & keep.z);' \
    'float p2 = partial2[at];'
mut quad_bwd_two_arrays shaders/rasterize_bwd.comp raster_ \
    'quad = (qy & 1u) * 2u + (qx & 1u);' \
    'quad = (qy & 1u) * 2u;'
mut quad_bwd_position shaders/rasterize_bwd.comp raster_ \
    'uint pos = s_pos[j];' \
    'uint pos = s_pos[0];'
mut project_staged_store_index shaders/project_bwd.glsl raster_ \
    'if (j0 + u * WG < cn * 9u) s_sh[j0 + u * WG] = v[u];' \
    'if (j0 + u * WG < cn * 9u) s_sh[j0 + u] = v[u];'
mut project_sh_quad_offset shaders/project_bwd.glsl raster_ \
    'uint j = tid + u * WG, r = j / 12u, b = r * 49u + (j % 12u) * 4u;' \
    'uint j = tid + u * WG, r = j / 12u, b = r * 49u + (j % 12u) * 3u;'
mut project_own_stats_culled shaders/project_bwd.glsl train_stats \
    'if (STATS != 0u) o.st = stats[i];' \
    'if (STATS != 0u && o.rad.x != 0.0) o.st = stats[i];'
mut fwd_prefetch_same_batch shaders/rasterize_fwd.comp raster_ \
    'if (idx + BATCH < end) next_g = gauss_sorted[idx + BATCH];' \
    'if (idx + BATCH < end) next_g = gauss_sorted[idx];'
mut bwd_prefetch_shifted shaders/rasterize_bwd.comp raster_ \
    'next_g = gauss_sorted[b_start - 1u - tid];' \
    'next_g = gauss_sorted[b_start - tid];'
mut project_sh_dir_last_dropped shaders/project_bwd.glsl raster_ \
    'if (k < n_coeffs) d_dir += dY[k] * dot(sh_row(tid, k), d_raw);' \
    'if (k + 1u < n_coeffs) d_dir += dY[k] * dot(sh_row(tid, k), d_raw);'
mut project_sh_colour_first_dropped shaders/project_bwd.glsl raster_ \
    'if (k < n_coeffs) raw += Y[k] * sh_row(tid, k);' \
    'if (k < n_coeffs && k > 0u) raw += Y[k] * sh_row(tid, k);'
mut project_quadrant_dropped shaders/project_bwd.glsl raster_ \
    'v[u] = ((p0 + p1) + p2) + p3;' \
    'v[u] = (p0 + p1) + p2;'
mut quad_kept_order shaders/rasterize_fwd.comp raster_ \
    'at += k < gl_SubgroupID ? n : 0u;' \
    'at += k > gl_SubgroupID ? n : 0u;'
mut quad_last_batch_index shaders/rasterize_fwd.comp raster_ \
    'last = s_pos[j] + 1u;' \
    'last = b + j + 1u;'
mut quad_done_early shaders/rasterize_fwd.comp raster_ \
    'if (s_done == BATCH) break;' \
    'if (s_done >= BATCH / 2u) break;'
mut alpha_clamp_bwd shaders/rasterize_bwd.comp raster_ \
    'if (geom.w * vis <= ALPHA_MAX) {' \
    'if (true) {'
mut depth_key_zero shaders/isect_fwd.comp raster_ \
    'depth_bits = floatBitsToUint(p0.z);' \
    'depth_bits = 0u;'
mut project_wide_last_uncounted shaders/project_fwd.glsl raster_ \
    'bool hit = t < garea && tile_touched(gconic, gmean, gtau, uint(gtr.x) + t % gw, uint(gtr.y) + t / gw,' \
    'bool hit = t + 1u < garea && tile_touched(gconic, gmean, gtau, uint(gtr.x) + t % gw, uint(gtr.y) + t / gw,'
mut project_alone_boundary shaders/project_fwd.glsl raster_ \
    '    if (area <= ALONE_MAX)' \
    '    if (area < ALONE_MAX)'
mut sh_row_half_swapped shaders/sh_access.glsl api_render_sh_half \
    'row[2u * j + 1u] = vec4(unpackHalf2x16(h.z), unpackHalf2x16(h.w));' \
    'row[2u * j + 1u] = vec4(unpackHalf2x16(h.w), unpackHalf2x16(h.z));'
mut tile_sort_skipped src/render/render.c raster_ \
    '    splat__tile_sort_record(c, r, b);' \
    '    (void)splat__tile_sort_record;'
mut tile_sort_tie_reversed shaders/tile_sort.comp raster_fwd_only \
    'bool later(uint ka, uint va, uint kb, uint vb) { return ka > kb || (ka == kb && va > vb); }' \
    'bool later(uint ka, uint va, uint kb, uint vb) { return ka > kb || (ka == kb && va < vb); }'
mut tile_sort_merge_skipped shaders/tile_sort.comp raster_fwd_only \
    'if (c.y >= r.y) continue;' \
    'if (c.y + 1u >= r.y) continue;'
mut tile_sort_unmirrored shaders/tile_sort.comp raster_fwd_only \
    'uint hi = d == k >> 1u ? lo ^ (k - 1u) : lo | d;' \
    'uint hi = lo | d;'
mut isect_wide_transposed shaders/isect_fwd.comp raster_ \
    'uint tx = uint(gtr.x) + t % gw, ty = uint(gtr.y) + t / gw;' \
    'uint tx = uint(gtr.x) + t / gw, ty = uint(gtr.y) + t % gw;'
mut isect_wide_last_dropped shaders/isect_fwd.comp raster_ \
    'if (hit && at < gend) emit(at, gi, ty * frame.tiles_x + tx, gbits);' \
    'if (hit && at + 1u < gend) emit(at, gi, ty * frame.tiles_x + tx, gbits);'
mut sh_row_short shaders/sh_access.glsl raster_ \
    'uint sh_row_quads(uint n) { return (3u * n + 3u) / 4u; }' \
    'uint sh_row_quads(uint n) { return (3u * n) / 4u; }'
mut sh_row_blue_green shaders/sh_access.glsl raster_ \
    'return vec3(row[f >> 2u][f & 3u], row[(f + 1u) >> 2u][(f + 1u) & 3u], row[(f + 2u) >> 2u][(f + 2u) & 3u]);' \
    'return vec3(row[f >> 2u][f & 3u], row[(f + 1u) >> 2u][(f + 1u) & 3u], row[(f + 1u) >> 2u][(f + 1u) & 3u]);'
mut image_rec_frame_baked src/render/render.c api_render \
    '        record_image(&b->image_rec.cmd, j, true);' \
    '        record_image(&b->image_rec.cmd, j, false);'
mut image_rec_frame_short src/render/render.c api_render \
    '    memcpy(b->frame_host.map, j->f, sizeof *j->f);' \
    '    memcpy(b->frame_host.map, j->f, 64);'
mut image_rec_isect_unkeyed src/render/render.c api_render \
    '    struct splat_image_key k = {.renderer = j->r->id, .isect = j->b->keys_lo.id, .count = j->scene->count,' \
    '    struct splat_image_key k = {.renderer = j->r->id, .isect = 0, .count = j->scene->count,'
mut range_end_short shaders/ranges_fwd.comp api_ \
    'if (i + 1u == n || tile_of_isect[i + 1u] != tile) ranges[tile].y = i + 1u;' \
    'if (i + 1u == n || tile_of_isect[i + 1u] != tile) ranges[tile].y = i;'
mut seen_box_uncounted shaders/project_bwd.glsl train_stats_seen \
    'if (STATS != 0u && skip_updates == 0u && rad.y != 0.0) stats[i] = o.st + vec4(0.0, 1.0, 0.0, 0.0);' \
    'if (STATS != 0u && skip_updates == 0u && rad.y != 0.0) stats[i] = o.st + vec4(0.0, 0.0, 0.0, 0.0);'
mut seen_box_no_ceil shaders/render_common.glsl train_stats_seen \
    'vec2 r = ceil(ext * sqrt(vec2(a, c)));' \
    'vec2 r = ext * sqrt(vec2(a, c));'
mut seen_pixels_ignored src/train/trainer.c train_stats_seen \
    '*box = !(*asked && strcmp(v, "pixels") == 0);' \
    '*box = true;'
mut runctl_signal_always_quits src/cli/runctl.c cli_interrupt \
    '    if (!rc->trainer || rc->stop_signal) {' \
    '    if (true) {'
mut seen_resume_dropped src/train/checkpoint.c train_seen \
    '        t->seen_box = seen_box;' \
    '        (void)seen_box;'
mut seen_section_unchecked src/train/checkpoint.c train_seen \
    "    if (sn && (!seen || (strcmp(seen, seen_name(true)) != 0 && strcmp(seen, seen_name(false)) != 0))) {" \
    "    if (false) {"
mut distortion_reach_unchecked src/io/distortion.c io_distortion \
    'if (!bounded && reachable(d, (mx - raw->cx) / raw->fx, (my - raw->cy) / raw->fy))' \
    'if (!bounded && false)'
mut stats_plus_two shaders/project_bwd.glsl train_ \
    'st.x += length(g);' \
    'st.x += length(g) + 2.0;'
mut reset_no_min shaders/opacity_reset.comp train_ \
    'opacities[i] = min(opacities[i], logit_001);' \
    'opacities[i] = logit_001;'
mut reset_keeps_moment shaders/opacity_reset.comp train_ \
    'for (uint k = 0u; k < WORDS; k++) mv_opac[WORDS * i + k] = 0u;' \
    ''
mut reset_first_word_only shaders/opacity_reset.comp train_ \
    'for (uint k = 0u; k < WORDS; k++) mv_opac[WORDS * i + k] = 0u;' \
    'for (uint k = 0u; k < 1u; k++) mv_opac[WORDS * i + k] = 0u;'
mut aa_no_sqrt shaders/render_common.glsl raster_ \
    'float aa_compensation(float ratio) { return sqrt(max(ratio, MIN_COMP2)); }' \
    'float aa_compensation(float ratio) { return max(ratio, MIN_COMP2); }'
mut aa_no_cov_grad shaders/project_bwd.glsl raster_ \
    'if (ratio >= MIN_COMP2) G += (d_alpha * sigmoid(o.opac) * 0.5 / comp) * aa_ratio_grad(T, ratio / det0);' \
    ''
mut aa_floor_grad shaders/project_bwd.glsl raster_ \
    'if (ratio >= MIN_COMP2) G += ' \
    'if (ratio >= 0.0) G += '
mut mcmc_scratch_fail_fatal src/train/strategy_mcmc.c train_mcmc \
    'if (st == SPLAT_ERR_OUT_OF_DEVICE_MEMORY) {' \
    'if (st == SPLAT_ERR_OUT_OF_DEVICE_MEMORY && n == 0) {'
mut mcmc_skip_unbounded src/train/strategy_mcmc.c train_mcmc \
    'if (res.skipped) splat__model_memory_bound(m, step, m->count);' \
    'if (res.skipped && m->count == 0) splat__model_memory_bound(m, step, m->count);'
mut mcmc_scale_reg_unit src/train/strategy_mcmc.c train_mcmc \
    'slot->scale_reg = (float)(SPLAT_MCMC_SCALE_REG / world_unit);' \
    'slot->scale_reg = (float)SPLAT_MCMC_SCALE_REG;'
mut adam_no_bias2 shaders/adam.comp train_ \
    'return p - step_size * m / (sqrt(v) / bias2 + EPS);' \
    'return p - step_size * m / (sqrt(v) + EPS);'
mut fit_render_room_again src/train/model.c train_fit \
    '            st = splat__render_bufs_init(g, t->env.renderer, &t->rb, cap, isect, t->room_w, t->room_h, err);' \
    '            st = splat__render_bufs_init(g, t->env.renderer, &t->rb, cap + cap / 4, isect, t->room_w, t->room_h, err);'
mut fit_grads_any_failure src/train/model.c train_fit \
    'if (st == SPLAT_ERR_OUT_OF_DEVICE_MEMORY) st = grads_init(g, &t->model.grads, cap, err);' \
    'if (st != SPLAT_OK) st = grads_init(g, &t->model.grads, cap + cap / 4, err);'
mut moment_m_nearest shaders/moments.glsl train_adam \
    'uint rm = r & ((1u << MOMENT_M_CUT) - 1u), rv = (r >> MOMENT_M_CUT) & ((1u << MOMENT_V_CUT) - 1u);' \
    'uint rm = 1u << (MOMENT_M_CUT - 1u), rv = (r >> MOMENT_M_CUT) & ((1u << MOMENT_V_CUT) - 1u);'
mut moment_v_share_bits shaders/moments.glsl train_adam \
    'uint rm = r & ((1u << MOMENT_M_CUT) - 1u), rv = (r >> MOMENT_M_CUT) & ((1u << MOMENT_V_CUT) - 1u);' \
    'uint rm = r & ((1u << MOMENT_M_CUT) - 1u), rv = r & ((1u << MOMENT_V_CUT) - 1u);'
mut moment_v_unpacked_shift shaders/moments.glsl train_ \
    'float moment_v(uint w) { return uintBitsToFloat((w >> SPLAT_MOMENT_M_BITS) << MOMENT_V_CUT); }' \
    'float moment_v(uint w) { return uintBitsToFloat((w >> SPLAT_MOMENT_M_BITS) << MOMENT_M_CUT); }'
mut moment_v_host_shift src/train/train.h train_moment_words_host \
    'uint32_t u = (w >> SPLAT_MOMENT_M_BITS) << (SPLAT_MOMENT_M_BITS - 1);' \
    'uint32_t u = (w >> SPLAT_MOMENT_M_BITS) << SPLAT_MOMENT_M_BITS;'
mut adam_float_v_as_m shaders/adam.comp train_adam \
    'm_##name[mi + uint(width)] = floatBitsToUint(v);' \
    'm_##name[mi + uint(width)] = floatBitsToUint(m);'
mut adam_float_rows_single shaders/adam.comp train_adam \
    'uint mi = 2u * gi * uint(width) + k;' \
    'uint mi = gi * uint(width) + k;'
mut moments_layout_one_word src/train/model.c train_adam \
    'm.words[k] = (uint8_t)SPLAT_MOMENT_WORDS(splat__groups[k].flags);' \
    'm.words[k] = (uint8_t)1;'
mut moment_word_group shaders/adam.comp train_adam \
    'moment_pack(m, v, pcg_hash(pcg_hash(h_step ^ e) ^ (SPLAT_MOMENT_RNG_K + 4u * i)));' \
    'moment_pack(m, v, pcg_hash(pcg_hash(h_step ^ e) ^ SPLAT_MOMENT_RNG_K));'
mut moment_word_sh_lane shaders/adam.comp train_adam \
    'mw[j] = moment_pack(mj, vj, pcg_hash(h_quad ^ (SPLAT_MOMENT_RNG_K + 4u * SPLAT_GROUP_SH + j)));' \
    'mw[j] = moment_pack(mj, vj, pcg_hash(h_quad ^ (SPLAT_MOMENT_RNG_K + 4u * SPLAT_GROUP_SH)));'
mut ckpt_v1_v_from_m src/train/checkpoint.c cli_checkpoint_older_versions \
    'if (to == 1) out[i * w + j] = moment_pack_nearest(mv[0], mv[1]);' \
    'if (to == 1) out[i * w + j] = moment_pack_nearest(mv[0], mv[0]);'
mut ckpt_v2_v_from_m src/train/checkpoint.c cli_checkpoint_older_versions \
    'else memcpy(&out[2 * i * w + j], &mv[0], 4), memcpy(&out[(2 * i + 1) * w + j], &mv[1], 4);' \
    'else memcpy(&out[2 * i * w + j], &mv[0], 4), memcpy(&out[(2 * i + 1) * w + j], &mv[0], 4);'
mut ckpt_layout_not_converted src/train/checkpoint.c cli_checkpoint_older_versions \
    'if (s && from && from != t->model.moments.words[g]) {' \
    'if (s && from && from != t->model.moments.words[g] && false) {'
mut adam_sh_record_channel shaders/adam.comp train_ \
    'return g_sh[b + coeff] * g_sh[b + SPLAT_SH_RECORD_D_RAW + (k - 3u * coeff)];' \
    'return g_sh[b + coeff] * g_sh[b + SPLAT_SH_RECORD_D_RAW];'
mut sh_record_basis_shifted shaders/project_bwd.glsl raster_ \
    'for (uint k = 0u; k < 16u; k++) s_sh[b + k] = k < n_coeffs ? Y[k] : 0.0;' \
    'for (uint k = 0u; k < 16u; k++) s_sh[b + k] = k < n_coeffs ? Y[k == 0u ? 0u : k - 1u] : 0.0;'
mut sh_record_nonfinite_kept shaders/project_bwd.glsl raster_ \
    'vec3 d = n_coeffs > 0u ? d_raw : vec3(0.0);' \
    'vec3 d = d_raw;'
mut project_bwd_culled_inverted shaders/project_bwd.glsl raster_ \
    'return r < rows && (culled[r / 32u] & (1u << (r % 32u))) == 0u;' \
    'return r < rows && (culled[r / 32u] & (1u << (r % 32u))) != 0u;'
mut project_bwd_culled_word shaders/project_bwd.glsl raster_ \
    'return r < rows && (culled[r / 32u] & (1u << (r % 32u))) == 0u;' \
    'return r < rows && (culled[0] & (1u << (r % 32u))) == 0u;'
mut tile_sort_gather_last_missed shaders/tile_sort.comp raster_ \
    'if (p0 + u * WG < n) gauss_sorted[r.x + p0 + u * WG] = g[u];' \
    'if (p0 + u * WG + 1u < n) gauss_sorted[r.x + p0 + u * WG] = g[u];'
mut tile_sort_move_stride shaders/tile_sort.comp raster_ \
    'if (p0 + u * WG < m) s_key[p0 + u * WG] = k[u], s_val[p0 + u * WG] = v[u];' \
    'if (p0 + u * WG < m) s_key[p0 + u] = k[u], s_val[p0 + u] = v[u];'
mut tile_sort_gather_shared_long shaders/tile_sort.comp raster_ \
    'g[u] = gauss_of_emit[P <= CAP ? s_val[p] : vals[r.x + p]];' \
    'g[u] = gauss_of_emit[s_val[p]];'
mut tile_sort_gather_single_missed shaders/tile_sort.comp raster_ \
    'if (GATHER != 0u && n == 1u && gl_LocalInvocationIndex == 0u)' \
    'if (GATHER != 0u && n == 2u && gl_LocalInvocationIndex == 0u)'
mut room_retry_dropped src/train/strategy_default.c train_densify \
    'if (st == SPLAT_ERR_OUT_OF_DEVICE_MEMORY && np.capacity > new_count) {' \
    'if (st == SPLAT_ERR_OUT_OF_DEVICE_MEMORY && np.capacity < new_count) {'
mut room_retry_error_left src/train/strategy_default.c train_densify \
    'if (ap.outputs & (1u << gi) && !np.group[gi].buffer) st = splat__scene_gpu_group_init(g, &np, "params", gi, &tried);' \
    'if (ap.outputs & (1u << gi) && !np.group[gi].buffer) st = splat__scene_gpu_group_init(g, &np, "params", gi, err);'
mut scratch_retry_error_left src/train/strategy_default.c train_densify \
    'SPLAT_MEM_DEVICE, &tried);' \
    'SPLAT_MEM_DEVICE, err);'
mut compact_gather_shifted shaders/densify_compact.comp train_densify \
    'scratch[(seg) + (final_row(row) - base) * (width) + k] = arr[(width) * row + k];' \
    'scratch[(seg) + (final_row(row) - base + 1u) * (width) + k] = arr[(width) * row + k];'
mut compact_pruned_kept shaders/densify_compact.comp train_densify \
    'bool survives(uint i) { return i >= pc.n || n_keep[i] != 0u; }' \
    'bool survives(uint i) { return true; }'
mut compact_scatter_short shaders/densify_compact.comp train_densify \
    'uint count = final_row(last) - base; //' \
    'uint count = final_row(last) - base - 1u; //'
mut compact_moment_words_short shaders/densify_compact.comp train_densify \
    'move_element(mv_##name, SPLAT_MOMENT_WORDS(flags) * uint(width), e, seg);' \
    'move_element(mv_##name, uint(width) - 1u, e, seg);'
mut compact_segment_overlap shaders/densify_compact.comp train_densify \
    'e -= pc.rows * uint(width), seg += pc.rows * uint(width);' \
    'e -= pc.rows * uint(width), seg += pc.rows;'
mut compact_float_dropped shaders/densify_compact.comp train_densify \
    'arr[(width) * (base + j) + k] = scratch[(seg) + j * (width) + k];' \
    'if (k > 0u) arr[(width) * (base + j) + k] = scratch[(seg) + j * (width) + k];'
mut apply_in_place_survivors_written shaders/densify_apply.comp train_densify \
    'if (n_keep[i] != 0u && pc.append_at == 0u) copy_row(i, off_keep[i], true);' \
    'if (n_keep[i] != 0u) copy_row(i, off_keep[i], true);'
mut densify_in_place_chunk_skipped src/train/strategy_default.c train_densify \
    '        for (uint64_t first = 0; first < grown; first += rows)' \
    '        for (uint64_t first = 0; first < grown; first += rows + 1)'
mut densify_in_place_too_full src/train/strategy_default.c train_densify \
    '    if (n > 0 && grown <= p->capacity && grown <= m->capacity) {' \
    '    if (n > 0 && new_count <= p->capacity && new_count <= m->capacity) {'
mut compact_new_rows_shifted shaders/densify_compact.comp cli_train_refine_in_place \
    'uint final_row(uint i) { return i < pc.n ? off_keep[i] : total_keep + (i - pc.n); }' \
    'uint final_row(uint i) { return i < pc.n ? off_keep[i] : total_keep + (i - pc.n) / 2u; }'
mut refines_in_place_uncounted src/train/strategy_default.c cli_train_refine_in_place \
    '        m->refines_in_place += res.in_place;' \
    '        m->refines_in_place += 0;'
mut adam_nonfinite_unflagged shaders/adam.comp train_nonfinite \
    'if (isnan(p[j]) || isinf(p[j])) atomicOr(params_bad, 1u);' \
    'if (false) atomicOr(params_bad, 1u);'
mut train_sh_record_unflagged src/train/ring.c train_ \
    '.sh_record = true,' \
    '.sh_record = false,'
mut train_bwd_sh_rows src/train/ring.c train_ \
    'SPLAT_BWD_SH_RECORD | (t->strategy->stats ? SPLAT_BWD_STATS : 0));' \
    '(t->strategy->stats ? SPLAT_BWD_STATS : 0));'
# gpu layer
mut copy_tail_from_start src/gpu/stream.c gpu_copy_fill \
    'if (size > body) record_words(c, src, src_off + body, dst, dst_off + body, (size - body) / 4, 4, value);' \
    'if (size > body) record_words(c, src, src_off, dst, dst_off + body, (size - body) / 4, 4, value);'
mut copy_piece_not_advanced src/gpu/stream.c gpu_copy_fill \
    'src_off += k * unit, dst_off += k * unit, n -= k;' \
    'dst_off += k * unit, n -= k;'
mut copy_binding_offset_dropped src/gpu/stream.c gpu_copy_fill \
    'if (src) push[0] = (uint32_t)((src_off - sbase) / unit), push[1] = (uint32_t)((dst_off - dbase) / unit), push[2] = (uint32_t)k;' \
    'if (src) push[0] = 0, push[1] = (uint32_t)((dst_off - dbase) / unit), push[2] = (uint32_t)k;'
mut fill_one_word_short shaders/gpu_copy.glsl gpu_copy_fill \
    'if (i >= pc.n) return;' \
    'if (i + 1u >= pc.n) return;'

# render
mut frame_no_cap src/render/frame.c raster_ \
    'f->cap = desc->max_gaussians_per_tile;' \
    'f->cap = 0;'
mut campos_not_transposed src/render/frame.c raster_ \
    'for (int k = 0; k < 3; k++) c -= (double)cam->R[k * 3 + i] * cam->t[k];' \
    'for (int k = 0; k < 3; k++) c -= (double)cam->R[i * 3 + k] * cam->t[k];'
mut sort_tile_bit_short src/render/render.c raster_ \
    '.bits = pc.tile_bits,' \
    '.bits = pc.tile_bits - 1u,'
# sort
mut sort_digit_short src/sort/sort.c sort_ \
    'uint32_t width = word_bits[w] / passes[w] + (p < word_bits[w] % passes[w]);' \
    'uint32_t width = word_bits[w] / passes[w];'
# the reference's own margins (the oracle's borderline pixels)
mut ref_T_margin_no_rounding src/ref/rasterize.c ref_raster_transmittance \
    'double next_T = T * (1 - alpha), next_T_err = T_err + alpha / (1 - alpha) * v_err;' \
    'double next_T = T * (1 - alpha), next_T_err = T_err;'
# train
mut densify_memory_blind src/train/strategy_default.c cli_train_memory \
    '.max_count = d->max_gaussians, .memory = ctx,' \
    '.max_count = d->max_gaussians, .memory = NULL,'
mut sh_degree_stuck src/train/schedule.c train_ \
    'uint32_t d = step / 1000;' \
    'uint32_t d = 0;'
mut means_lr_decay src/train/schedule.c train_ \
    'pow(0.01, progress)' \
    'pow(0.1, progress)'
mut refine_at_start src/train/strategy_default.c train_ \
    'return s < d->refine_stop && s > d->refine_start && s % d->refine_every == 0;' \
    'return s < d->refine_stop && s >= d->refine_start && s % d->refine_every == 0;'
mut wait_every_step src/train/ring.c train_ \
    'splat_status st = splat__stream_replay(t->env.stream, &t->ring.rec[slot], &value, err);' \
    'splat_status st = splat__stream_replay(t->env.stream, &t->ring.rec[slot], &value, err); if (st == SPLAT_OK) st = splat__stream_wait(t->env.stream, value, err);'
# io
mut ply_rest_order src/io/ply.c io_ \
    'for (uint32_t k = 1; k <= per_channel; k++) *r++ = sh[k * 3 + c];' \
    'for (uint32_t k = 1; k <= per_channel; k++) *r++ = sh[c * 16 + k];'
mut ply_no_mode_comment src/io/ply.c io_ \
    'if (scene->rasterize_mode != SPLAT_RASTERIZE_CLASSIC)' \
    'if (!bounded && false)'
mut ckpt_forgets_mode src/train/checkpoint.c train_ \
    'if (meta.rasterize_mode == SPLAT_RASTERIZE_ANTIALIASED) t->desc.render.rasterize_mode = SPLAT_RASTERIZE_ANTIALIASED;' \
    ''
mut jpeg_arith_unbounded src/io/image.c io_image \
    'if (px > 1024ull * (uint64_t)file_size + (1u << 20) || px > MAX_PIXELS) {' \
    'if ((!c->cinfo.arith_code && px > 1024ull * (uint64_t)file_size + (1u << 20)) || px > MAX_PIXELS) {'
mut jpeg_arith_eoi_unchecked src/io/image.c io_image \
    '            c->cinfo.output_scanline + 2 * mcu_rows < *h) {' \
    '            c->cinfo.output_scanline + 2 * mcu_rows < *h && false) {'
mut view_back_never_grown src/view/frames.c view_train_tap \
    '    if (st == SPLAT_OK && idle && v->back.capacity < soon) {' \
    '    if (st == SPLAT_OK && idle && v->back.capacity < soon && false) {'
mut progress_end_rate_zero src/train/ring.c train_progress_reports \
    '    t->prog.iters_per_sec = dt >= 1.0 || (force && dt > 0) ? done / dt : 0;' \
    '    t->prog.iters_per_sec = dt >= 1.0 ? done / dt : 0;'
mut view_paced src/view/server.c view_ws_unpaced \
    '    unpaced(v, wsi);' \
    '    (void)unpaced;'
mut mcmc_grown_words_dropped src/train/strategy_mcmc.c train_mcmc \
    'memcpy(grown.words, s->words, sizeof grown.words);' \
    '(void)0;'
mut mcmc_relocate_zeroes_m_only shaders/mcmc_relocate.comp train_mcmc \
    'for (uint k = 0u; k < SPLAT_MOMENT_WORDS(flags) * uint(width); k++) m_##name[SPLAT_MOMENT_WORDS(flags) * uint(width) * i + k] = 0u;' \
    'for (uint k = 0u; k < uint(width); k++) m_##name[SPLAT_MOMENT_WORDS(flags) * uint(width) * i + k] = 0u;'
mut mcmc_move_zeroes_m_only shaders/mcmc_move.comp train_mcmc \
    'for (uint k = 0u; k < SPLAT_MOMENT_WORDS(flags) * uint(width); k++) m_##name[SPLAT_MOMENT_WORDS(flags) * uint(width) * dst + k] = 0u;' \
    'for (uint k = 0u; k < uint(width); k++) m_##name[SPLAT_MOMENT_WORDS(flags) * uint(width) * dst + k] = 0u;'
mut densify_apply_moves_m_only shaders/densify_apply.comp train_densify \
    'for (uint k = 0u; k < SPLAT_MOMENT_WORDS(flags) * uint(width); k++)' \
    'for (uint k = 0u; k < uint(width); k++)'
mut moments_of_v_from_m_row src/train/model.c cli_checkpoint_older_versions \
    'memcpy(&mv[1], &words[(2 * row + 1) * width + j], 4);' \
    'memcpy(&mv[1], &words[2 * row * width + j], 4);'
mut memory_fit_needs_rb src/train/growth.c train_mcmc_refine_vs_ref \
    '    const splat_render_bufs *rb = ctx->rb ? ctx->rb : &none;' \
    '    const splat_render_bufs *rb = ctx->rb; (void)none;'
mut colmap_rotation_transposed src/io/colmap.c io_ \
    'for (int k = 0; k < 9; k++) c->R[k] = (float)R[k];' \
    'for (int k = 0; k < 9; k++) c->R[k] = (float)R[(k % 3) * 3 + k / 3];'
mut resample_keys_a075 src/io/resample.c io_ \
    'if (d <= 1) return (1.5 * d - 2.5) * d * d + 1;' \
    'if (d <= 1) return (1.25 * d - 2.25) * d * d + 1;'
mut resample_area_first_tap src/io/resample.c io_ \
    'uint32_t k0 = (uint32_t)floor(lo);' \
    'uint32_t k0 = (uint32_t)ceil(lo);'
mut resample_no_background src/io/resample.c io_ \
    'in[3 * p + c] = (float)(q[c] / 255.0 * a + (1 - a) * background[c]);' \
    'in[3 * p + c] = (float)(q[c] / 255.0 * a);'
# cli
mut eval_scale_cx_kept src/train/eval.c cli_ \
    'cam.fx = (float)(cam.fx * sx), cam.cx = (float)(cam.cx * sx);' \
    'cam.fx = (float)(cam.fx * sx);'
mut eval_scale_counts_kept src/train/eval.c cli_ \
    'slot->n_pixels = n_pixels;' \
    ''
mut eval_views_reversed src/train/eval.c cli_eval_per_view \
    '            out[k] = (splat_eval_view){.name = t->ds.views[views[k]].name, .psnr = one.psnr, .ssim = one.ssim,' \
    '            out[n - 1 - k] = (splat_eval_view){.name = t->ds.views[views[n - 1 - k]].name, .psnr = one.psnr, .ssim = one.ssim,'
mut eval_view_name_by_position src/train/eval.c cli_eval_per_view \
    '.name = t->ds.views[views[k]].name,' \
    '.name = t->ds.views[k].name,'
mut cli_view_ssim_of_previous src/cli/main.c cli_eval_per_view \
    'cJSON_AddNumberToObject(v, "ssim", ev->views[k].ssim);' \
    'cJSON_AddNumberToObject(v, "ssim", ev->views[k ? k - 1 : 0].ssim);'
mut cli_out_keeps_highest src/cli/main.c cli_output_parents \
    'for (size_t n = strlen(sub); n >= d->created; n--) {' \
    'for (size_t n = strlen(sub); n > d->created; n--) {'
mut cli_oom_first_factor_same src/cli/main.c cli_output_parents \
    '2 * f);' \
    'f + 1);'
mut py_views_one_short python/splatc/__init__.py python_train_vs_cli \
    '                        for v in views[:min(res.n_views, cap)]]' \
    '                        for v in views[:min(res.n_views, cap) - 1]]'
mut ckpt_data_hash_unchecked src/train/checkpoint.c cli_checkpoint \
    'if (d && (d->size != sizeof there || there.hash != here.hash || there.n_views != here.n_views)) {' \
    'if (d && (d->size != sizeof there || there.n_views != here.n_views)) {'
mut ckpt_resume_at_end_refused src/train/checkpoint.c cli_checkpoint \
    'if (meta.step > t->steps) {' \
    'if (meta.step >= t->steps) {'
mut cli_final_checkpoint_skipped src/cli/main.c cli_checkpoint \
    'if (step == until && ckpt_every && (step % ckpt_every == 0 || step == steps)) {' \
    'if (step == until && ckpt_every && step % ckpt_every == 0) {'
mut nerf_val_with_test src/io/nerf.c io_transforms \
    'if (!list || (l == 2 && cJSON_GetObjectItemCaseSensitive(f->root, "test_filenames"))) continue;' \
    'if (!list) continue;'
mut nerf_angle_y_width src/io/nerf.c io_transforms \
    'fy = has_ay ? 0.5 * H / tan(0.5 * ay) : fx;' \
    'fy = has_ay ? 0.5 * W / tan(0.5 * ay) : fx;'
mut colmap_text_crlf src/io/colmap.c io_colmap \
    "while (n > 0 && (line[n - 1] == '\\r' || line[n - 1] == ' ' || line[n - 1] == '\\t')) line[--n] = 0;" \
    "while (n > 0 && (line[n - 1] == ' ' || line[n - 1] == '\\t')) line[--n] = 0;"
mut ply_rest_gap_accepted src/io/ply.c io_ply \
    'bool required = !normal && (!rest || (uint32_t)(s - SLOT_REST) < n_rest);' \
    'bool required = !normal && !rest;'
mut nonfinite_last_not_first src/train/model.c train_nonfinite \
    'for (uint64_t e = 0; ok && e < n * w && e / w < first; e++)' \
    'for (uint64_t e = 0; ok && e < n * w; e++)'
mut eval_l1_every_pixel src/train/eval.c cli_eval_scale \
    'one->l1 = rep->n_values ? rep->l1_sum / rep->n_values : 0;' \
    'one->l1 = rep->l1_sum / ((double)w * h * 3.0);'
mut progress_loss_weights_swapped src/train/ring.c train_progress \
    't->prog.loss = (float)((1.0 - SPLAT_LOSS_LAMBDA) * l1 + SPLAT_LOSS_LAMBDA * (1.0 - ssim));' \
    't->prog.loss = (float)(SPLAT_LOSS_LAMBDA * l1 + (1.0 - SPLAT_LOSS_LAMBDA) * (1.0 - ssim));'
mut refine_counts_swapped src/train/strategy_default.c train_densify \
    'm->refines++, m->cloned += res.clones, m->split += res.splits, m->pruned += res.pruned;' \
    'm->refines++, m->cloned += res.splits, m->split += res.clones, m->pruned += res.pruned;'
mut refine_seed_unmixed src/train/strategy_default.c train_densify \
    '.seed = (uint32_t)d->seed ^ step, .scene_scale = (float)ctx->scene_scale, .prune_large_after = d->reset_every,' \
    '.seed = (uint32_t)d->seed, .scene_scale = (float)ctx->scene_scale, .prune_large_after = d->reset_every,'
mut eval_render_name_slash_kept src/train/eval.c cli_transforms_json \
    "if (*ch == '/' || *ch == '\\\\') *ch = '_';" \
    "if (*ch == '\\\\') *ch = '_';"
mut cli_out_created_deepest src/cli/main.c cli_output_parents \
    'if (!d->created) d->created = n;' \
    'd->created = n;'
mut sog_rotation_tag_check src/io/sog.c io_formats \
    '        if (qp[3] < 252) {' \
    '        if (qp[3] < 248) {'
mut splat_scale_inf_accepted src/io/splat.c io_formats \
    'else if (!(v[3 + k] > 0) || !isfinite(v[3 + k]))' \
    'else if (!(v[3 + k] > 0))'
mut cli_path_size_fy_sx src/cli/main.c cli_orbit \
    'cams[k].fy = (float)(cams[k].fy * sy), cams[k].cy = (float)(cams[k].cy * sy);' \
    'cams[k].fy = (float)(cams[k].fy * sx), cams[k].cy = (float)(cams[k].cy * sy);'
mut orbit_fy_from_width src/cli/flythrough.c cli_orbit \
    '        fy = c0->fy * (double)h / c0->height;' \
    '        fy = c0->fy * (double)w / c0->width;'
mut frame_campos_R_not_RT src/render/frame.c api_render \
    '        for (int k = 0; k < 3; k++) c -= (double)cam->R[k * 3 + i] * cam->t[k];' \
    '        for (int k = 0; k < 3; k++) c -= (double)cam->R[i * 3 + k] * cam->t[k];'
mut spz_v1_f16_byte_order src/io/spz.c io_spz \
    'v = splat__f16_to_f32((uint16_t)(h[0] | h[1] << 8));' \
    'v = splat__f16_to_f32((uint16_t)(h[0] << 8 | h[1]));'
mut spz_v2_rotation_scale src/io/spz.c io_spz \
    'for (int k = 0; k < 3; k++) q[k] = r[k] / 127.5 - 1.0;' \
    'for (int k = 0; k < 3; k++) q[k] = r[k] / 128.0 - 1.0;'
mut spz_system_unspecified_rdf src/io/spz.c io_spz_version_4 \
    'if (s->system == 0) s->system = 4;' \
    'if (s->system == 0) s->system = 6;'
mut sog_version_range src/io/sog.c io_formats_bad_input \
    'if (!number(version, 2, 2, &v))' \
    'if (!number(version, 2, 9, &v))'
mut quantize_exact_needs_fewer src/io/quantize.c io_quantize_1d \
    'if (distinct <= k) {' \
    'if (distinct < k) {'
mut sog_scale_index_off_by_one src/io/sog.c io_formats_bad_input \
    'if (sl >= n_scb || cl >= n_ccb) {' \
    'if (sl > n_scb || cl >= n_ccb) {'
mut zip_stored_short_accepted src/io/zip.c io_sog_zip_deflated \
    'if (it->method == 0 && it->csize != it->usize)' \
    'if (it->method == 0 && it->csize > it->usize)'
mut splat_rot_centre_127_5 src/io/splat.c io_splat_known_bytes \
    'for (int k = 0; k < 4; k++) q[k] = (p[28 + k] - 128.0) / 128.0, norm += q[k] * q[k];' \
    'for (int k = 0; k < 4; k++) q[k] = (p[28 + k] - 127.5) / 128.0, norm += q[k] * q[k];'
mut cply_sh_value_255 src/io/ply_compressed.c io_compressed_ply_known_bytes \
    'static double sh_value(uint32_t n) { return n == 0 ? -4.0 : n == 255 ? 4.0 : ((n + 0.5) / 256.0 - 0.5) * 8.0; }' \
    'static double sh_value(uint32_t n) { return n == 0 ? -4.0 : n == 255 ? 4.0 : (n / 255.0 - 0.5) * 8.0; }'
mut cply_colour_range_always src/io/ply_compressed.c io_compressed_ply_known_bytes \
    'if (colour_range) cv = lerp(ch[12 + k], ch[15 + k], cv);' \
    'cv = lerp(ch[12 + k], ch[15 + k], cv);'
mut zip_local_crc_zero src/io/zip.c io_sog_zip_deflated \
    'splat__store_u32(h + 14, crcs[k]);' \
    'splat__store_u32(h + 14, 0);'
mut atomic_no_fsync src/io/atomic.c io_atomic_durable \
    'else if (fsync(fileno(fp)) != 0) what = "fsync failed", e = errno;' \
    'else if (0) what = "fsync failed", e = errno;'
mut atomic_no_folder_fsync src/io/atomic.c io_atomic_durable \
    '(void)fsync(dfd);' \
    '(void)dfd;'
mut colmap_number_trailing_junk src/io/colmap.c io_colmap_text_errors \
    'return end != s && !*end;' \
    'return end != s;'
mut nerf_ext_in_folder_name src/io/nerf.c io_nerf_synthetic \
    "bool has_ext = strchr(base, '.') != NULL;" \
    "bool has_ext = strchr(file_path, '.') != NULL;"
mut options_refine_stop_typo src/api/options.c api_train_defaults \
    'if (!out->refine_stop) out->refine_stop = mcmc ? 25000 : 15000;' \
    'if (!out->refine_stop) out->refine_stop = mcmc ? 25000 : 1500;'
mut options_degree_not_capped_by_scene src/api/options.c api_render_degree_of_scene \
    'uint32_t d = SPLAT_MIN(SPLAT_MIN(want, scene_degree), 3u);' \
    'uint32_t d = SPLAT_MIN(want, 3u);'
mut options_reset_every_typo src/api/options.c api_train_defaults \
    'if (!out->reset_every) out->reset_every = 3000;' \
    'if (!out->reset_every) out->reset_every = 300;'
mut options_init_points_typo src/api/options.c api_train_defaults \
    'if (!out->init_points) out->init_points = 100000;' \
    'if (!out->init_points) out->init_points = 10000;'
mut cli_metrics_failure_ignored src/cli/main.c cli_metrics_write_fails \
    'dev.name, 0, &err)) st = SPLAT_ERR_IO;' \
    'dev.name, 0, &err)) {}'
mut render_ranges_tile_short src/render/renderer.c render_bufs_sizes \
    '{&b->ranges, "render.ranges", (tiles + 1) * 8, SPLAT_MEM_DEVICE},' \
    '{&b->ranges, "render.ranges", (tiles - 1) * 8, SPLAT_MEM_DEVICE},'
mut render_radii_short src/render/renderer.c render_bufs_sizes \
    '{&b->radii, "render.radii", n * 8, SPLAT_MEM_DEVICE},' \
    '{&b->radii, "render.radii", n * 4, SPLAT_MEM_DEVICE},'
mut out_names_unchecked src/cli/main.c cli_outputs_checked_first \
    'if (!out_names_free(path, names)) {' \
    'if (false) {'
mut out_names_folder_kind src/cli/main.c cli_outputs_checked_first \
    'if (folder ? S_ISDIR(st.st_mode) : S_ISREG(st.st_mode) || S_ISLNK(st.st_mode)) continue;' \
    'if (folder ? true : S_ISREG(st.st_mode) || S_ISLNK(st.st_mode)) continue;'
mut out_names_file_follows_link src/cli/main.c cli_outputs_checked_first \
    'if ((folder ? stat(path, &st) : lstat(path, &st)) != 0) continue;' \
    'if (stat(path, &st) != 0) continue;'
mut out_names_folder_link_refused src/cli/main.c cli_outputs_checked_first \
    'if ((folder ? stat(path, &st) : lstat(path, &st)) != 0) continue;' \
    'if (lstat(path, &st) != 0) continue;'
mut render_images_unchecked src/cli/main.c cli_outputs_checked_first \
    'if (!out_names_free(out, (const char *const[]){name, NULL})) rc = 1, out_failed(&od);' \
    '(void)name;'
mut cli_render_names_repeat src/cli/main.c cli_cameras_json_renders \
    'if (strcmp(names[j], s) == 0) return false;' \
    'if (false) return false;'
mut runctl_save_now_sticky src/cli/runctl.c cli_interrupt_resume \
    'rc->save_now = false;' \
    ''
mut trainer_asked_degree_resolved src/api/trainer.c cli_checkpoint_resume \
    '(*t)->asked_sh_degree = desc->render.sh_degree;' \
    '(*t)->asked_sh_degree = resolved.render.sh_degree;'
mut eval_last_view_skipped src/train/eval.c cli_eval_per_view \
    'for (uint32_t k = 0; k < n && st == SPLAT_OK; k++) {' \
    'for (uint32_t k = 0; k + 1 < n && st == SPLAT_OK; k++) {'
mut eval_ssim_over_values src/train/eval.c train_eval_vs_render \
    'one->ssim = rep->n_ssim ? rep->ssim_sum / rep->n_ssim : 1.0;' \
    'one->ssim = rep->n_values ? rep->ssim_sum / rep->n_values : 1.0;'
mut ckpt_seed_not_restored src/train/checkpoint.c cli_checkpoint_resume \
    't->desc.seed = meta.seed;' \
    '(void)meta.seed;'
mut ckpt_stats_not_restored src/train/checkpoint.c train_resume_and_overflow_exact \
    'for (size_t k = SPLAT_GROUP_COUNT; k < CKPT_PARTS && st == SPLAT_OK; k++) {' \
    'for (size_t k = SPLAT_GROUP_COUNT; k < CKPT_PARTS - 1 && st == SPLAT_OK; k++) {'
mut ckpt_hash_ignores_split src/train/checkpoint.c cli_checkpoint_resume \
    'uint32_t size[3] = {w->camera.width, w->camera.height, w->is_test};' \
    'uint32_t size[3] = {w->camera.width, w->camera.height, 0};'
mut ring_gated_last_not_first src/train/ring.c train_resume_and_overflow_exact \
    'if (rep->step < *gated_step) *gated_step = rep->step;' \
    '*gated_step = rep->step;'
mut ws_rx_fragments_unbounded src/view/server.c view_ws_malformed \
    'if (len > sizeof s->rx - s->rx_len) {' \
    'if (len > sizeof s->rx) {'
mut demo_principal_point_swapped src/api/demo.c train_demo_psnr_floor \
    'fx, 0.5 * w, 0.5 * h);' \
    'fx, 0.5 * h, 0.5 * w);'
mut demo_points_colour_dark src/api/demo.c train_demo_psnr_floor \
    's->sh[48 * i + k] * 0.28209479177387814 + 0.5)));' \
    's->sh[48 * i + k] * 0.28209479177387814)));'
mut view_of_step_by_position src/train/schedule.c train_views_held_out \
    'return t->train_views[cache.perm[step % n]];' \
    'return cache.perm[step % n];'
mut scene_scale_by_position src/train/trainer.c train_views_held_out \
    'const splat_camera *c = &t->ds.views[t->train_views[k]].camera;' \
    'const splat_camera *c = &t->ds.views[k].camera;'
mut eta_from_first_step src/train/ring.c train_progress_reports \
    '(t->steps - t->step) / t->prog.iters_per_sec : 0;' \
    '(t->steps - t->first_step) / t->prog.iters_per_sec : 0;'
mut profile_stage_sum_not_mean src/train/trainer.c train_profile_per_step \
    'stages[n++] = (splat_stage_time){p->stage_name[k], p->n_profiled ? p->stage_ms[k] / p->n_profiled : 0};' \
    'stages[n++] = (splat_stage_time){p->stage_name[k], p->stage_ms[k]};'
mut view_history_full_overflow src/view/protocol.c view_history_thinned \
    'if (h->n == SPLAT_VIEW_HISTORY) {' \
    'if (h->n > SPLAT_VIEW_HISTORY) {'
mut view_ref_centre_R_not_RT src/view/protocol.c view_frame_of_ref_cameras \
    'scratch[3 * k + i] = -(c->R[i] * c->t[0] + c->R[3 + i] * c->t[1] + c->R[6 + i] * c->t[2]);' \
    'scratch[3 * k + i] = -(c->R[3 * i] * c->t[0] + c->R[3 * i + 1] * c->t[1] + c->R[3 * i + 2] * c->t[2]);'
mut ws_client_over_cap_admitted src/view/server.c view_ws_clients8 \
    'bool full = v->n_sessions >= SPLAT_VIEW_MAX_CLIENTS;' \
    'bool full = v->n_sessions > SPLAT_VIEW_MAX_CLIENTS;'
mut api_render_max_h_from_width src/api/render.c api_render_cameras_vs_ref \
    'max_h = SPLAT_MAX(max_h, cams[k].height);' \
    'max_h = SPLAT_MAX(max_h, cams[k].width);'
mut backward_null_dalpha_one src/api/render.c api_render_backward_vs_ref \
    'buf[4 * p + 3] = d_alpha ? d_alpha[p] : 0.0f;' \
    'buf[4 * p + 3] = d_alpha ? d_alpha[p] : 1.0f;'
mut view_frame_height_unchecked src/view/frames.c view_ws_frame_shapes \
    'rb->max_h >= h)' \
    'true)'
mut ckpt_old_version_accepted src/io/ckpt.c io_ckpt_corrupt \
    'if (version != CKPT_VERSION) {' \
    'if (version > CKPT_VERSION) {'
mut atomic_private_mode src/io/atomic.c io_ply_write_is_atomic \
    '(void)fchmod(fd, 0644);' \
    '(void)fd;'
mut cameras_reflection_accepted src/io/cameras.c io_cameras_bad_input \
    'return det > 0;' \
    'return det != 0;'
mut mcmc_weight_no_floor shaders/mcmc_weights.comp train_mcmc \
    'uint w = max(1u, table[uint(int(b) + SPLAT_MCMC_BINS / 2)] >> pc.shift);' \
    'uint w = table[uint(int(b) + SPLAT_MCMC_BINS / 2)] >> pc.shift;'
mut mcmc_sample_total_unchecked shaders/mcmc_sample.comp train_mcmc \
    'if (t >= pc.n || total == 0u) return;' \
    'if (t >= pc.n) return;'
mut mcmc_relocate_no_hi_clamp shaders/mcmc_relocate.comp train_mcmc \
    'if (o_new > hi) o_new = hi, log_rest = log(1.0 - hi);' \
    ''
mut mcmc_shift_uncast src/train/strategy_mcmc.c train_mcmc \
    'while ((uint64_t)n * SPLAT_MAX(1u, 65535u >> s) > UINT32_MAX) s++;' \
    'while (n * SPLAT_MAX(1u, 65535u >> s) > UINT32_MAX) s++;'
mut mcmc_search_strict shaders/mcmc_sample.comp train_mcmc_refine_vs_ref \
    'if (off_w[mid] <= target) lo = mid;' \
    'if (off_w[mid] < target) lo = mid;'
mut cli_demo_named_as_o src/cli/main.c cli_output_folder_checked_first \
    'if (!out_open(&od, dir, "the demo'"'"'s folder", NULL)) {' \
    'if (!out_open(&od, dir, OUT_FLAG, NULL)) {'
mut cli_out_empty_name src/cli/main.c cli_output_folder \
    '    if (!path[0]) {' \
    '    if (false) {'
mut cli_oom_checkpoint_above_cap src/cli/main.c cli_train_out_of_memory \
    'if (ckpt_step && ckpt_count <= cap)' \
    'if (ckpt_step)'
mut cli_resume_seed_dropped src/cli/main.c cli_checkpoint_resume \
    'if (st == SPLAT_OK && resume && seed_given && splat_trainer_seed(t) != desc.seed) {' \
    'if (false) {'
mut cli_png_stride_skips src/cli/main.c cli_cameras \
    'for (uint32_t k = w->t; k < b->count; k += b->threads)' \
    'for (uint32_t k = w->t; k < b->count; k += b->threads + 1)'
mut cli_selective_adam_dropped src/cli/main.c cli_train_selective \
    'else if (strcmp(a, "--selective-adam") == 0) desc.selective_adam = true;' \
    'else if (strcmp(a, "--selective-adam") == 0) desc.selective_adam = false;'
mut cli_unknown_command src/cli/main.c cli_ \
    'fprintf(stderr, "splatc: unknown command '"'"'%s'"'"'\n\n", cmd);' \
    'fprintf(stderr, "splatc: '"'"'%s'"'"'?\n\n", cmd);'
mut cli_render_runs_eval src/cli/main.c cli_ \
    'if (strcmp(cmd, "render") == 0) return cmd_render(argc, argv);' \
    'if (strcmp(cmd, "render") == 0) return cmd_eval(argc, argv);'

if [ "$filter" = --check ]; then
    stale=0
    for i in "${!names[@]}"; do
        n=$(FROM=${froms[$i]} perl -0ne '$n += () = /\Q$ENV{FROM}\E/g; END { print $n + 0 }' "$root/${files[$i]}" 2>/dev/null || echo 0)
        if [ "$n" != 1 ]; then
            echo "${names[$i]}: its line occurs $n times in ${files[$i]}"
            stale=1
        fi
    done
    [ "$stale" = 0 ] && echo "${#names[@]} mutations, every line found once"
    exit $stale
fi

# ------------------------------------------------------------------ the scratch copy
scratch=${MUTATE_DIR:-$(mktemp -d /tmp/splatc-mutate.XXXXXX)}
mkdir -p "$scratch/tree"
cleanup() { [ "${MUTATE_KEEP:-0}" = 1 ] || [ -n "${MUTATE_DIR:-}" ] || rm -rf "$scratch"; }
trap cleanup EXIT
echo "copying the tree to $scratch/tree"
(cd "$root" && git ls-files -z --cached --others --exclude-standard | tar cf - --null -T -) | tar xf - -C "$scratch/tree"
tree=$scratch/tree
build=$tree/build
log=$scratch/log
echo "building (log: $log)"
if ! cmake -S "$tree" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo >"$log" 2>&1 || ! cmake --build "$build" -j"$(nproc)" >>"$log" 2>&1; then
    echo "the unmutated tree does not build: see $log"
    MUTATE_KEEP=1
    exit 2
fi

run_family() { # family -> ctest's status (124 on timeout); the tests that failed in $scratch/failed
    timeout "$limit" ctest --test-dir "$build" -R "^$1" -j"$jobs" --stop-on-failure >"$scratch/run" 2>&1
    local rc=$?
    cat "$scratch/run" >>"$log"
    sed -n 's/^[[:space:]]*[0-9]* - \([a-z0-9_]*\) (.*/\1/p' "$scratch/run" | paste -sd, >"$scratch/failed"
    return $rc
}

selected=()
IFS=, read -ra wanted <<<"$filter"
for i in "${!names[@]}"; do
    take=$([ -z "$filter" ] && echo 1)
    for w in "${wanted[@]}"; do [[ ${names[$i]} == *"$w"* ]] && take=1; done
    [ -n "$take" ] && selected+=("$i")
done
[ "${#selected[@]}" -gt 0 ] || { echo "no mutation matches '$filter'"; exit 2; }

if [ "${MUTATE_BASELINE:-1}" != 0 ]; then
    for fam in $(for i in "${selected[@]}"; do echo "${families[$i]}"; done | sort -u); do
        echo "baseline: $fam"
        if ! run_family "$fam"; then
            echo "family $fam fails on the unmutated tree: see $log"
            MUTATE_KEEP=1
            exit 2
        fi
    done
fi

# ------------------------------------------------------------------ the mutations
results=()
bad=0
for i in "${selected[@]}"; do
    name=${names[$i]} file=${files[$i]} fam=${families[$i]}
    path=$tree/$file
    echo "== $name ($file, $fam)" | tee -a "$log"
    n=$(FROM=${froms[$i]} perl -0ne '$n += () = /\Q$ENV{FROM}\E/g; END { print $n + 0 }' "$path" 2>/dev/null || echo 0)
    if [ "$n" != 1 ]; then
        results+=("$name|$file|$fam|not applied (pattern found $n times)")
        bad=1
        continue
    fi
    cp "$path" "$scratch/orig"
    FROM=${froms[$i]} TO=${tos[$i]} perl -0pi -e 's/\Q$ENV{FROM}\E/$ENV{TO}/' "$path"
    if cmp -s "$path" "$scratch/orig"; then
        result="not applied (no change)"
        bad=1
    elif ! cmake --build "$build" -j"$(nproc)" >>"$log" 2>&1; then
        result="did not build"
        bad=1
    else
        run_family "$fam"
        rc=$?
        if [ "$rc" = 0 ]; then
            result=survived
            bad=1
        elif [ "$rc" = 124 ]; then
            result="caught (timeout)"
        else
            result="caught by $(cat "$scratch/failed")"
        fi
    fi
    cp "$scratch/orig" "$path"
    touch "$path"
    results+=("$name|$file|$fam|$result")
    echo "   $result"
done

echo
printf '| %-26s | %-30s | %-7s | %s\n' mutation file family result
printf '| %-26s | %-30s | %-7s | %s\n' --- --- --- ---
for r in "${results[@]}"; do
    IFS='|' read -r a b c d <<<"$r"
    printf '| %-26s | %-30s | %-7s | %s\n' "$a" "$b" "$c" "$d"
done
[ "$bad" = 0 ] || echo "some mutations survived or did not apply (log: $log)"
[ "$bad" = 0 ] || MUTATE_KEEP=1
exit "$bad"
