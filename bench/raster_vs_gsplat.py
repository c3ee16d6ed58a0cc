#!/usr/bin/env python3
"""The rasterizer against gsplat's (issue 12): the same Gaussians and cameras through both
libraries, the forward images and the gradients of one scalar loss compared group by group.

    SPLATC_LIBRARY=build/libsplatc.so PYTHONPATH=python:GSPLAT_SRC \\
        python3 bench/raster_vs_gsplat.py SCENE CAMERAS [--views 0,8,16] [--seed N] [--faint]
    SPLATC_LIBRARY=build/libsplatc.so PYTHONPATH=python \\
        python3 bench/raster_vs_gsplat.py SCENE CAMERAS --torch-reference GSPLAT_SRC [--sh-noise 0.3]

SCENE is any scene file splatc reads (a trained OUT/point_cloud.ply), CAMERAS a cameras.json
(splatc train writes OUT/cameras.json). The loss is L = sum(w * rgb), w drawn from N(0, 1) for
every pixel and channel (the seed is printed), so both libraries get dL/drgb = w. gsplat is called
as its simple_trainer renders while training (packed=False, near plane 0.01, black background),
with the parameters activated as simple_trainer activates them (exp of the log-scales, sigmoid
of the logits), and torch's autograd takes its gradients back to the raw parameters that
splatc's render_backward returns: means, log-scales, quaternions, opacity logits, SH.

Printed for each view: the two images' largest and RMS difference and the PSNR of one against the
other, the same for alpha; then for each group the relative difference |g_s - g_g| / |g_g|, the
cosine of the two, the median and 99th percentile of the per-Gaussian relative difference where
both are nonzero (against at least a thousandth of the group's RMS Gaussian: a gradient that is
zero but for rounding, as an isotropic Gaussian's rotation's, is not divided by its rounding), and
how many Gaussians only one library gives a gradient (culled by the other, or exactly zero in one).

Two known differences (docs/TRAIN.md, the side-by-side table): splatc's tiles end at 3 sigma,
gsplat's at the 1/255 level (its 3.33-sigma cap never binds), which differ for Gaussians of
opacity above e^4.5/255 (0.353), whose fringes then differ by up to alpha e^-4.5; and splatc clamps
alpha at 0.999, gsplat 1.6.0 at 0.99, which only opacities above 0.99 reach. --faint caps every
opacity at 0.35, where neither can differ.

Needs numpy, torch with CUDA and gsplat's extension (the device machine, with the kit
../shared/tools/gsplat-bench built), and libsplatc. A measuring tool, not a test.

--torch-reference GSPLAT_SRC needs no GPU and no gsplat build: gsplat's own pure-torch reference
functions (GSPLAT_SRC/gsplat/cuda/_torch_impl.py and _math.py, the ones gsplat's tests check its
kernels against: covariance, projection with its guard band, low-pass and compensation, SH) run
in float64 on the CPU (Debian's python3-torch is enough), and the compositing is written here
from gsplat's rasterize kernel (RasterizeToPixels3DGSDevice.cuh): pixel centres at +0.5, alpha =
min(MAX_ALPHA, o exp(-sigma)) with gsplat's own MAX_ALPHA (its _constants.py), skipped below
1/255, front to back by depth, a pixel ends before the Gaussian that would take its
transmittance to 1e-4 or below (--max-alpha A clamps at A instead: splatc's 0.999 sets the
clamps' difference aside). It covers every pixel where alpha reaches 1/255: that is
gsplat's coverage too, whose tiles end at min(3.33 sigma, the 1/255 level) and 3.33 sigma is
the 1/255 level of an opacity of 1.003, so the cap never binds. --sigma-cap 3 covers splatc's
tiles instead (docs/RASTER.md 1.7-1.8: the tiles whose pixel centres meet the ellipse at
min(3 sigma, the 1/255 level), every pixel of them): with --max-alpha 0.999 the reference then
renders what splatc renders, opaque Gaussians included. --sh-noise S adds N(0, S) (from
the seed) to the SH coefficients above the DC, so that a young scene, whose are zero, exercises
the view-dependent colour and its gradient to the means.
"""
import argparse
import math
import os
import sys

import numpy as np

GROUPS = ("means", "log_scales", "quats", "opacities", "sh")
MAX_CANDIDATES = 30_000_000  # float64 with autograd: about 7 GB (23.6 million took 5.3 GB peak, 2026-11-28)


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("scene", help="a scene file splatc reads (point_cloud.ply)")
    p.add_argument("cameras", help="a cameras.json (splatc's or the original 3DGS one)")
    p.add_argument("--views", default=None, help="comma list of camera indices (default: 4 spread over the list)")
    p.add_argument("--seed", type=int, default=None, help="seed of the loss weights (default: a fresh one, printed)")
    p.add_argument("--degree", type=int, default=None, choices=(0, 1, 2, 3), help="SH degree (default: the scene's)")
    p.add_argument("--mode", default="classic", choices=("classic", "antialiased"))
    p.add_argument("--faint", action="store_true", help="cap every opacity at 0.35 (below the extents' difference)")
    p.add_argument("--splatc-only", action="store_true", help="no gsplat: print splatc's side (a plumbing check)")
    p.add_argument("--torch-reference", metavar="GSPLAT_SRC", default=None,
                   help="gsplat's pure-torch reference from a gsplat source tree, float64 on the CPU, not its CUDA")
    p.add_argument("--max-alpha", type=float, default=None, metavar="A",
                   help="--torch-reference's alpha clamp (default: gsplat's MAX_ALPHA; splatc's is 0.999)")
    p.add_argument("--sigma-cap", type=float, default=None, metavar="S",
                   help="--torch-reference's coverage: splatc's tiles at S sigma (its 3), not gsplat's 1/255 level")
    p.add_argument("--downscale", type=float, default=1.0, metavar="F",
                   help="divide each camera's size and intrinsics by F (default 1): the same view, fewer pixels")
    p.add_argument("--sh-noise", type=float, default=0.0, metavar="S",
                   help="add N(0, S) to the SH coefficients above the DC (default 0)")
    return p.parse_args(argv)


def image_diff(a, b):
    d = a.astype(np.float64) - b.astype(np.float64)
    mse = float(np.mean(d * d))
    psnr = 10 * math.log10(1.0 / mse) if mse > 0 else float("inf")
    return f"max |d| {np.max(np.abs(d)):.3g}, rms {math.sqrt(mse):.3g}, PSNR {psnr:.1f} dB"


def group_diff(name, s, g):
    """One row: splatc's gradient s against gsplat's g, both [N, ...]."""
    s = s.reshape(len(s), -1).astype(np.float64)
    g = g.reshape(len(g), -1).astype(np.float64)
    ns, ng = np.linalg.norm(s), np.linalg.norm(g)
    rel = np.linalg.norm(s - g) / ng if ng > 0 else float("nan")
    cos = float((s * g).sum() / (ns * ng)) if ns > 0 and ng > 0 else float("nan")
    zs, zg = ~np.any(s != 0, axis=1), ~np.any(g != 0, axis=1)
    both = ~zs & ~zg
    # a Gaussian's gradient can be zero in exact arithmetic and rounding in both (a rotation of an
    # isotropic one): relative to at least a thousandth of the group's RMS Gaussian
    gn = np.linalg.norm(g[both], axis=1)
    floor = 1e-3 * np.sqrt(np.mean(gn * gn)) if len(gn) else 0.0
    r = np.linalg.norm(s[both] - g[both], axis=1) / np.maximum(gn, floor)
    med, p99 = (np.median(r), np.percentile(r, 99)) if len(r) else (float("nan"), float("nan"))
    return (f"| {name} | {rel:.3g} | {cos:.6f} | {med:.3g} | {p99:.3g} | {int(both.sum())} | "
            f"{int((~zs & zg).sum())} | {int((zs & ~zg).sum())} |")


def load_torch_reference(src):
    """gsplat's torch reference module from a source tree, without running gsplat/__init__.py
    (which loads the CUDA extension and needs a newer torch than Debian's): the two packages are
    stubs that only point at the tree's folders, and _wrapper, whose CUDA bindings
    _torch_impl imports only two type names from, is a stub with those names."""
    import importlib
    import types

    root = os.path.join(src, "gsplat")
    if not os.path.isfile(os.path.join(root, "cuda", "_torch_impl.py")):
        sys.exit(f"{src}: no gsplat/cuda/_torch_impl.py here (--torch-reference takes a gsplat source tree)")
    for name, path in (("gsplat", root), ("gsplat.cuda", os.path.join(root, "cuda"))):
        m = types.ModuleType(name)
        m.__path__ = [path]
        sys.modules[name] = m
    wrapper = types.ModuleType("gsplat.cuda._wrapper")
    wrapper.CameraModel = wrapper.RollingShutterType = str
    sys.modules["gsplat.cuda._wrapper"] = wrapper
    return importlib.import_module("gsplat.cuda._torch_impl")


def segment_starts(px):
    """Where each run of equal values of the sorted array px starts, for every element."""
    start = np.r_[0, np.nonzero(np.diff(px))[0] + 1]
    return np.repeat(start, np.diff(np.r_[start, len(px)]))


def rectangles(ids, x0, x1, y0, y1, W):
    """Every (id, pixel) of the rectangles [x0, x1) x [y0, y1), one per id."""
    bw, area = x1 - x0, (x1 - x0) * (y1 - y0)
    if area.sum() > MAX_CANDIDATES:
        sys.exit(f"{area.sum():,} (Gaussian, pixel) candidates in a view {W} wide, more than --torch-reference "
                 f"takes ({MAX_CANDIDATES:,}): try --downscale 2 or more")
    k = np.arange(area.sum()) - np.repeat(np.cumsum(area) - area, area)  # the index within the rectangle
    rep = lambda a: np.repeat(a, area)  # noqa: E731
    return rep(ids), (rep(y0) + k // rep(bw)) * W + rep(x0) + k % rep(bw)


def min_over_rect(a, b, c, dx0, dx1, dy0, dy1):
    """The least of 0.5 (a dx^2 + c dy^2) + b dx dy over [dx0, dx1] x [dy0, dy1] (a convex form):
    0 where the rectangle holds the origin, else the least of its edges' minima."""
    q = lambda dx, dy: 0.5 * (a * dx * dx + c * dy * dy) + b * dx * dy  # noqa: E731
    best = np.where((dx0 <= 0) & (dx1 >= 0) & (dy0 <= 0) & (dy1 >= 0), 0.0, np.inf)
    for ex in (dx0, dx1):
        best = np.minimum(best, q(ex, np.clip(-b * ex / c, dy0, dy1)))
    for ey in (dy0, dy1):
        best = np.minimum(best, q(np.clip(-b * ey / a, dx0, dx1), ey))
    return best


def candidate_pairs(m2, cn, live, level, W, H, sigma_cap):
    """The (Gaussian, pixel) pairs a pixel may blend. sigma_cap None: every pixel of the box of
    the 1/255 ellipse (gsplat's coverage). Else splatc's tiles (docs/RASTER.md 1.7-1.8): the
    16x16 tiles whose rectangle of pixel centres meets the ellipse at min(level, cap^2 / 2), and
    every pixel of them."""
    det = cn[:, 0] * cn[:, 2] - cn[:, 1] ** 2
    tau = level if sigma_cap is None else np.minimum(level, 0.5 * sigma_cap ** 2)
    rx, ry = np.sqrt(2 * tau * cn[:, 2] / det), np.sqrt(2 * tau * cn[:, 0] / det)
    if sigma_cap is None:
        x0, x1 = (np.clip(f, 0, W).astype(np.int64) for f in (np.floor(m2[:, 0] - rx), np.ceil(m2[:, 0] + rx)))
        y0, y1 = (np.clip(f, 0, H).astype(np.int64) for f in (np.floor(m2[:, 1] - ry), np.ceil(m2[:, 1] + ry)))
        ids = np.nonzero(live & (x1 > x0) & (y1 > y0))[0]
        return rectangles(ids, x0[ids], x1[ids], y0[ids], y1[ids], W)
    tw, th = -(-W // 16), -(-H // 16)
    t0 = lambda v, n: np.clip(np.floor(v / 16), 0, n).astype(np.int64)  # noqa: E731
    tx0, tx1 = t0(m2[:, 0] - rx, tw), t0(m2[:, 0] + rx, tw - 1) + 1
    ty0, ty1 = t0(m2[:, 1] - ry, th), t0(m2[:, 1] + ry, th - 1) + 1
    ids = np.nonzero(live & (tx1 > tx0) & (ty1 > ty0) & (m2[:, 0] + rx >= 0) & (m2[:, 1] + ry >= 0))[0]
    g, tile = rectangles(ids, tx0[ids], tx1[ids], ty0[ids], ty1[ids], tw)
    tx, ty = tile % tw, tile // tw
    x_lo, x_hi = 16 * tx + 0.5, np.minimum(16 * tx + 16, W) - 0.5
    y_lo, y_hi = 16 * ty + 0.5, np.minimum(16 * ty + 16, H) - 0.5
    near = min_over_rect(cn[g, 0], cn[g, 1], cn[g, 2], m2[g, 0] - x_hi, m2[g, 0] - x_lo, m2[g, 1] - y_hi,
                         m2[g, 1] - y_lo) <= tau[g]
    g, tx, ty = g[near], tx[near], ty[near]
    return rectangles(g, 16 * tx, np.minimum(16 * tx + 16, W), 16 * ty, np.minimum(16 * ty + 16, H), W)


def render_torch_reference(ti, torch, raw, cam, degree, mode, amax, sigma_cap=None):
    """(rgb [H,W,3], alpha [H,W]) of gsplat's rasterization() on a black background, in float64
    through gsplat's torch reference (module docstring); differentiable in raw's tensors."""
    f64 = torch.float64
    W, H = cam.width, cam.height
    means, opac = raw["means"], torch.sigmoid(raw["opacities"])
    covars, _ = ti._quat_scale_to_covar_preci(raw["quats"], torch.exp(raw["log_scales"]), compute_preci=False)
    viewmat = np.eye(4)
    viewmat[:3, :3], viewmat[:3, 3] = cam.R, cam.t
    K = np.array([[cam.fx, 0, cam.cx], [0, cam.fy, cam.cy], [0, 0, 1]], np.float64)
    radii, means2d, depths, conics, comp = ti._fully_fused_projection(
        means, covars, torch.tensor(viewmat, dtype=f64)[None], torch.tensor(K, dtype=f64)[None], W, H,
        eps2d=0.3, near_plane=0.01, far_plane=1e10, calc_compensations=mode == "antialiased")
    means2d, depths, conics = means2d[0], depths[0], conics[0]
    if comp is not None:
        opac = opac * comp[0]
    campos = torch.tensor(-cam.R.astype(np.float64).T @ cam.t.astype(np.float64), dtype=f64)
    colors = torch.clamp_min(ti._spherical_harmonics(degree, means - campos, raw["sh"]) + 0.5, 0.0)
    with torch.no_grad():  # which (Gaussian, pixel) pairs blend: decisions, held fixed
        m2, cn, o, z = (t.numpy() for t in (means2d, conics, opac, depths))
        live = (radii[0] > 0).all(-1).numpy() & (z > 0.01) & (o >= 1 / 255)
        level = np.log(np.where(live, o, 1.0) * 255)  # alpha >= 1/255 where sigma <= level
        gs, px = candidate_pairs(m2, cn, live, level, W, H, sigma_cap)
        dx, dy = px % W + 0.5 - m2[gs, 0], px // W + 0.5 - m2[gs, 1]
        sigma = 0.5 * (cn[gs, 0] * dx * dx + cn[gs, 2] * dy * dy) + cn[gs, 1] * dx * dy
        alpha = np.minimum(amax, o[gs] * np.exp(-sigma))
        keep = (sigma >= 0) & (alpha >= 1 / 255)
        gs, px, alpha = gs[keep], px[keep], alpha[keep]
        order = np.lexsort((z[gs], px))
        gs, px, alpha = gs[order], px[order], alpha[order]
        logt = np.cumsum(np.log1p(-alpha))
        seg = segment_starts(px)
        t_after = np.exp(logt - np.where(seg > 0, logt[seg - 1], 0.0))
        keep = t_after > 1e-4  # T only falls, so every pair after the first that ends a pixel goes too
        gs, px = gs[keep], px[keep]
    g_t, p_t = torch.from_numpy(gs), torch.from_numpy(px)
    d = torch.stack([(p_t % W).to(f64) + 0.5, (p_t // W).to(f64) + 0.5], -1) - means2d[g_t]
    c = conics[g_t]
    sigma = 0.5 * (c[:, 0] * d[:, 0] ** 2 + c[:, 2] * d[:, 1] ** 2) + c[:, 1] * d[:, 0] * d[:, 1]
    alpha = torch.clamp_max(opac[g_t] * torch.exp(-sigma), amax)
    log1m = torch.log1p(-alpha)
    logt = torch.cumsum(log1m, 0)
    seg = torch.from_numpy(segment_starts(px))
    base = torch.where(seg > 0, logt[(seg - 1).clamp_min(0)], torch.zeros_like(logt))
    weight = alpha * torch.exp(logt - log1m - base)  # alpha times the transmittance before it
    rgb = torch.zeros(H * W, 3, dtype=f64).index_add(0, p_t, weight[:, None] * colors[g_t])
    acc = torch.zeros(H * W, dtype=f64).index_add(0, p_t, weight)
    return rgb.reshape(H, W, 3), acc.reshape(H, W)


def main(argv=None):
    args = parse_args(argv)
    import splatc

    seed = args.seed if args.seed is not None else int.from_bytes(os.urandom(4), "little")
    print(f"seed {seed}  (--seed {seed} repeats the loss weights)")
    scene = splatc.load_scene(args.scene)
    if args.faint:
        cap = math.log(0.35 / 0.65)
        scene.opacities = np.minimum(scene.opacities, np.float32(cap))
    if args.sh_noise:
        noise = np.random.default_rng([seed, 1]).normal(0, args.sh_noise, scene.sh[:, 1:].shape)
        scene.sh[:, 1:] += noise.astype(np.float32)
    cams = splatc.read_cameras(args.cameras)
    if not cams:
        sys.exit(f"{args.cameras}: no cameras")
    if args.views:
        try:
            views = [int(v) for v in args.views.split(",")]
        except ValueError:
            sys.exit(f"--views: {args.views!r} is not a comma list of camera indices")
        bad = [v for v in views if not 0 <= v < len(cams)]
        if bad:
            sys.exit(f"--views: {bad} not in 0..{len(cams) - 1}")
    else:
        views = sorted({(k * len(cams)) // 4 for k in range(4)})
    if not args.torch_reference and (args.max_alpha is not None or args.sigma_cap is not None):
        sys.exit("--max-alpha and --sigma-cap set --torch-reference's rasterizer: give --torch-reference too")
    if args.sigma_cap is not None and not args.sigma_cap > 0:
        sys.exit(f"--sigma-cap: {args.sigma_cap} is not positive")
    if not args.downscale >= 1:
        sys.exit(f"--downscale: {args.downscale} is not 1 or more")
    if args.downscale != 1:
        f = args.downscale
        cams = [splatc.Camera(max(1, round(c.width / f)), max(1, round(c.height / f)), c.fx / f, c.fy / f, c.cx / f,
                              c.cy / f, c.R, c.t) for c in cams]
    degree = scene.sh_degree if args.degree is None else args.degree
    print(f"{args.scene}: {len(scene)} Gaussians, SH degree {degree}, {args.mode}"
          f"{', opacities capped at 0.35' if args.faint else ''}"
          f"{f', SH above the DC + N(0, {args.sh_noise:g})' if args.sh_noise else ''}; splatc {splatc.version()}")

    if args.torch_reference and not args.splatc_only:
        try:
            import torch
        except ImportError as e:
            sys.exit(f"--torch-reference needs torch ({e}; Debian: apt-get install python3-torch)")
        ti = load_torch_reference(args.torch_reference)
        max_alpha = ti.MAX_ALPHA if args.max_alpha is None else args.max_alpha
        if not 1 / 255 < max_alpha < 1:
            sys.exit(f"--max-alpha: {max_alpha} is not between 1/255 and 1")
        print(f"gsplat's torch reference from {args.torch_reference} (alpha clamp {max_alpha}; gsplat's MAX_ALPHA "
              f"{ti.MAX_ALPHA}), float64 on the CPU, torch {torch.__version__}")
        raw = {k: torch.tensor(np.ascontiguousarray(getattr(scene, k)), dtype=torch.float64, requires_grad=True)
               for k in GROUPS}
    elif not args.splatc_only:
        try:
            import torch
            import gsplat
            from gsplat.rendering import rasterization
        except ImportError as e:
            sys.exit(f"gsplat's side needs torch and gsplat's extension ({e}); --splatc-only runs without them")

        print(f"gsplat {gsplat.__version__}, torch {torch.__version__}, {torch.cuda.get_device_name()}")
        dev = torch.device("cuda")
        raw = {k: torch.tensor(np.ascontiguousarray(getattr(scene, k)), device=dev, requires_grad=True) for k in GROUPS}

    rng = np.random.default_rng(seed)
    for v in views:
        cam = cams[v]
        w = rng.standard_normal((cam.height, cam.width, 3)).astype(np.float32)
        b = splatc.render_backward(scene, cam, w, sh_degree=degree, rasterize_mode=args.mode)
        print(f"\nview {v}: {cam.width}x{cam.height}, L = sum(w rgb): splatc {float((w * b.image).sum()):.6g}")
        if args.splatc_only:
            for k in GROUPS:
                gk = getattr(b.grads, k)
                print(f"  {k}: |grad| {np.linalg.norm(gk):.6g}, Gaussians with a gradient "
                      f"{int(np.any(gk.reshape(len(gk), -1) != 0, axis=1).sum())}")
            continue
        for p in raw.values():
            p.grad = None
        if args.torch_reference:
            rgb, alpha = render_torch_reference(ti, torch, raw, cam, degree, args.mode, max_alpha, args.sigma_cap)
            loss = (rgb * torch.from_numpy(w).to(torch.float64)).sum()
        else:
            viewmat = np.eye(4, dtype=np.float32)
            viewmat[:3, :3], viewmat[:3, 3] = cam.R, cam.t
            K = np.array([[cam.fx, 0, cam.cx], [0, cam.fy, cam.cy], [0, 0, 1]], np.float32)
            rgb, alpha, _ = rasterization(
                means=raw["means"], quats=raw["quats"], scales=torch.exp(raw["log_scales"]),
                opacities=torch.sigmoid(raw["opacities"]), colors=raw["sh"],
                viewmats=torch.from_numpy(viewmat)[None].to(dev), Ks=torch.from_numpy(K)[None].to(dev),
                width=cam.width, height=cam.height, sh_degree=degree, near_plane=0.01, far_plane=1e10,
                packed=False, absgrad=False, sparse_grad=False, rasterize_mode=args.mode, render_mode="RGB")
            rgb, alpha = rgb[0], alpha[0, ..., 0]
            loss = (rgb * torch.from_numpy(w).to(dev)).sum()
        loss.backward()
        print(f"  gsplat {float(loss):.6g}")
        print(f"  image: {image_diff(b.image, rgb.detach().cpu().numpy())}")
        print(f"  alpha: {image_diff(b.alpha, alpha.detach().cpu().numpy())}")
        print("\n| group | relative L2 | cosine | per-Gaussian median | 99th percentile | both | splatc only | gsplat only |")
        print("| --- | --- | --- | --- | --- | --- | --- | --- |")
        for k in GROUPS:
            print(group_diff(k, getattr(b.grads, k), raw[k].grad.detach().cpu().numpy()))


if __name__ == "__main__":
    try:
        main()
    except Exception as e:  # splatc.Error names the file and the problem; no traceback for bad input
        if type(e).__module__ != "splatc":
            raise
        sys.exit(f"raster_vs_gsplat: {e}")
