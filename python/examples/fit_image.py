"""Fits Gaussians to one image with splatc.render_backward and Adam written in numpy; prints the
PSNR as it rises. Run from the repository (after scripts/build.sh), or with splatc installed:

    PYTHONPATH=python SPLATC_LIBRARY=build/libsplatc.so /usr/bin/python3 python/examples/fit_image.py
"""
import argparse

import numpy as np

import splatc

ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
ap.add_argument("--steps", type=int, default=300)
ap.add_argument("--size", type=int, default=64, help="image width (height: 3/4 of it)")
ap.add_argument("--gaussians", type=int, default=500)
ap.add_argument("--seed", type=int, default=0)
args = ap.parse_args()

# The image to fit: a colour ramp with two discs.
W, H = args.size, args.size * 3 // 4
y, x = np.mgrid[0:H, 0:W] / W
target = np.stack([x, y, 0.5 + 0.5 * np.sin(6 * x)], axis=-1)
target[(x - 0.3) ** 2 + (y - 0.35) ** 2 < 0.15**2] = (1.0, 0.2, 0.1)
target[(x - 0.7) ** 2 + (y - 0.45) ** 2 < 0.2**2] = (0.1, 0.3, 1.0)
target = target.astype(np.float32)

# Gaussians spread over the view at depth z, a couple of pixels wide, grey, half transparent.
cam = splatc.Camera(W, H, fx=W, fy=W)
rng = np.random.default_rng(args.seed)
n, z = args.gaussians, 4.0
px = z / W  # world units per pixel at depth z
p = {"means": np.column_stack([rng.uniform(-W / 2, W / 2, n) * px, rng.uniform(-H / 2, H / 2, n) * px, np.full(n, z)]),
     "log_scales": np.log(np.full((n, 3), 2 * px)), "quats": rng.normal(size=(n, 4)), "opacities": np.zeros(n),
     "sh": np.zeros((n, 1, 3))}
p = {k: v.astype(np.float32) for k, v in p.items()}
lr = {"means": 0.3 * px, "log_scales": 0.03, "quats": 0.02, "opacities": 0.05, "sh": 0.05}
m = {k: np.zeros_like(v) for k, v in p.items()}
v = {k: np.zeros_like(v) for k, v in p.items()}

for step in range(1, args.steps + 1):
    scene = splatc.Scene(**p)
    err = splatc.render(scene, cam) - target
    mse = float(np.mean(err**2))
    if step == 1 or step % max(args.steps // 10, 1) == 0 or step == args.steps:
        print(f"step {step:4d}  loss {mse:.6f}  PSNR {-10 * np.log10(mse):.2f} dB", flush=True)
    grads = splatc.render_backward(scene, cam, 2 * err / err.size).grads  # d_rgb: dL/dimage of the MSE
    for k in p:
        g = getattr(grads, k)[:, :1] if k == "sh" else getattr(grads, k)  # the SH rows of degree 0
        m[k] = 0.9 * m[k] + 0.1 * g
        v[k] = 0.999 * v[k] + 0.001 * g * g
        # Adam; its epsilon far below the gradients, which are divided by the pixel count
        p[k] -= lr[k] * (m[k] / (1 - 0.9**step)) / (np.sqrt(v[k] / (1 - 0.999**step)) + 1e-15)
