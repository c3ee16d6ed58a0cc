#!/usr/bin/env python3
"""The rasterizer against gsplat's (issue 12): the same Gaussians and cameras through both
libraries, the forward images and the gradients of one scalar loss compared group by group.

    SPLATC_LIBRARY=build/libsplatc.so PYTHONPATH=python:GSPLAT_SRC \\
        python3 bench/raster_vs_gsplat.py SCENE CAMERAS [--views 0,8,16] [--seed N] [--faint]

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
both are nonzero, and how many Gaussians only one library gives a gradient (culled by the other).

A known difference (docs/RASTER.md 1.7; docs/TRAIN.md, the side-by-side table's tile extent):
splatc's tiles end at 3 sigma, gsplat's at 3.33, for Gaussians of opacity above e^4.5/255 (0.353),
so their fringes differ in the forward by up to alpha e^-4.5. --faint caps every opacity at 0.35,
where both extents are the alpha threshold's: what differs then is not the extent.

Needs numpy, torch with CUDA and gsplat's extension (the device machine, with the kit
../shared/tools/gsplat-bench built), and libsplatc. A measuring tool, not a test.
"""
import argparse
import math
import os
import sys

import numpy as np

GROUPS = ("means", "log_scales", "quats", "opacities", "sh")


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
    r = np.linalg.norm(s[both] - g[both], axis=1) / np.linalg.norm(g[both], axis=1)
    med, p99 = (np.median(r), np.percentile(r, 99)) if len(r) else (float("nan"), float("nan"))
    return (f"| {name} | {rel:.3g} | {cos:.6f} | {med:.3g} | {p99:.3g} | {int(both.sum())} | "
            f"{int((~zs & zg).sum())} | {int((zs & ~zg).sum())} |")


def main(argv=None):
    args = parse_args(argv)
    import splatc

    seed = args.seed if args.seed is not None else int.from_bytes(os.urandom(4), "little")
    print(f"seed {seed}  (--seed {seed} repeats the loss weights)")
    scene = splatc.load_scene(args.scene)
    if args.faint:
        cap = math.log(0.35 / 0.65)
        scene.opacities = np.minimum(scene.opacities, np.float32(cap))
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
    degree = scene.sh_degree if args.degree is None else args.degree
    print(f"{args.scene}: {len(scene)} Gaussians, SH degree {degree}, {args.mode}"
          f"{', opacities capped at 0.35' if args.faint else ''}; splatc {splatc.version()}")

    if not args.splatc_only:
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
        viewmat = np.eye(4, dtype=np.float32)
        viewmat[:3, :3], viewmat[:3, 3] = cam.R, cam.t
        K = np.array([[cam.fx, 0, cam.cx], [0, cam.fy, cam.cy], [0, 0, 1]], np.float32)
        for p in raw.values():
            p.grad = None
        rgb, alpha, _ = rasterization(
            means=raw["means"], quats=raw["quats"], scales=torch.exp(raw["log_scales"]),
            opacities=torch.sigmoid(raw["opacities"]), colors=raw["sh"],
            viewmats=torch.from_numpy(viewmat)[None].to(dev), Ks=torch.from_numpy(K)[None].to(dev),
            width=cam.width, height=cam.height, sh_degree=degree, near_plane=0.01, far_plane=1e10,
            packed=False, absgrad=False, sparse_grad=False, rasterize_mode=args.mode, render_mode="RGB")
        loss = (rgb[0] * torch.from_numpy(w).to(dev)).sum()
        loss.backward()
        print(f"  gsplat {float(loss):.6g}")
        print(f"  image: {image_diff(b.image, rgb[0].detach().cpu().numpy())}")
        print(f"  alpha: {image_diff(b.alpha, alpha[0, ..., 0].detach().cpu().numpy())}")
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
