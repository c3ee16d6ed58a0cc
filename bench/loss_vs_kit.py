#!/usr/bin/env python3
"""The training loss against the kit's (issue 12): splatc's reference loss (src/ref, double; the
GPU's loss is checked against it in the suite, train_loss_vs_ref) and the gsplat kit's, which is
simple_trainer's 0.8 L1 + 0.2 (1 - fused_ssim(padding="valid")) written in torch (bench.py's
ssim_valid), evaluated by torch in float64 with its autograd for the gradient.

    python3 bench/loss_vs_kit.py KIT_DIR [--loss-ref build/bench/loss_ref] [--seed N]

KIT_DIR is the unpacked kit (the folder with bench.py). Each case is a random ground truth y in
[0, 1] and a render x = y + N(0, 0.1), clipped to [-0.2, 1.3] (renders leave [0, 1]), with 2 % of
its values set equal to y (where L1's derivative is taken as 0, as torch's sign). Printed: the two
losses, their difference, and the gradients' relative L2 difference and largest difference.
Needs numpy and torch (Debian's python3-torch; no GPU) and the kit's imports (PIL). A measuring
tool, not a test.
"""
import argparse
import os
import subprocess
import sys
import tempfile

import numpy as np

SIZES = ((11, 11), (37, 23), (64, 48), (128, 96), (799, 532))


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("kit", help="the gsplat kit's folder (bench.py)")
    p.add_argument("--loss-ref", default="build/bench/loss_ref", help="the loss_ref command (default: %(default)s)")
    p.add_argument("--seed", type=int, default=None, help="seed of the images (default: a fresh one, printed)")
    args = p.parse_args(argv)
    if not os.path.isfile(os.path.join(args.kit, "bench.py")):
        sys.exit(f"{args.kit}: no bench.py here (the gsplat kit's folder)")
    if not os.access(args.loss_ref, os.X_OK):
        sys.exit(f"{args.loss_ref}: not an executable (build it: cmake --build build --target loss_ref)")
    try:
        import torch
        import torch.nn.functional as F
        sys.path.insert(0, args.kit)
        import bench as kit
    except ImportError as e:
        sys.exit(f"the kit's loss needs torch and the kit's imports ({e}; Debian: python3-torch python3-pil)")
    seed = args.seed if args.seed is not None else int.from_bytes(os.urandom(4), "little")
    print(f"seed {seed}  (--seed {seed} repeats the images); torch {torch.__version__}")
    rng = np.random.default_rng(seed)
    print("\n| size | loss, reference | loss, kit | difference | gradient: relative L2 | largest difference |")
    print("| --- | --- | --- | --- | --- | --- |")
    with tempfile.TemporaryDirectory() as tmp:
        pin, pout = os.path.join(tmp, "in.bin"), os.path.join(tmp, "out.bin")
        for w, h in SIZES:
            y = rng.uniform(0, 1, (h, w, 3)).astype(np.float32)
            x = np.clip(y + rng.normal(0, 0.1, y.shape), -0.2, 1.3).astype(np.float32)
            same = rng.uniform(size=x.shape) < 0.02
            x[same] = y[same]
            with open(pin, "wb") as f:
                f.write(x.tobytes() + y.tobytes())
            r = subprocess.run([args.loss_ref, str(w), str(h), pin, pout], capture_output=True, text=True)
            if r.returncode != 0:
                sys.exit(f"{args.loss_ref}: {r.stderr.strip() or f'exit {r.returncode}'}")
            out = np.fromfile(pout, np.float64)
            loss_ref, grad_ref = out[0], out[1:].reshape(h, w, 3)
            xt = torch.tensor(x, dtype=torch.float64, requires_grad=True)
            yt = torch.tensor(y, dtype=torch.float64)
            l1 = F.l1_loss(xt, yt, reduction="none").mean()
            ssim = kit.ssim_valid(torch, F, xt[None].permute(0, 3, 1, 2), yt[None].permute(0, 3, 1, 2))
            loss = torch.lerp(l1, 1.0 - ssim, 0.2)
            loss.backward()
            g = xt.grad.numpy()
            print(f"| {w}x{h} | {loss_ref:.15g} | {float(loss):.15g} | {abs(loss_ref - float(loss)):.2g} | "
                  f"{np.linalg.norm(g - grad_ref) / np.linalg.norm(g):.2g} | {np.abs(g - grad_ref).max():.2g} |")


if __name__ == "__main__":
    main()
