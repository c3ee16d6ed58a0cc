"""The Python module (python/splatc) against the C API it wraps, run by ctest with Debian's python3:

    /usr/bin/python3 tests/python/test_splatc.py CASE

Environment (tests/CMakeLists.txt sets it): PYTHONPATH (python/), SPLATC_LIBRARY (the built
libsplatc.so), SPLATC_CLI (the splatc tool), SPLATC_C_API (tests/python/c_api.c built against the
same libsplatc.so), SPLATC_EXAMPLES (python/examples). Each case draws fresh random inputs from a
seed it prints; SPLAT_SEED=<n> replays it. A case fails with an exception and exit status 1.
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

import numpy as np

import splatc

SEED = int(os.environ.get("SPLAT_SEED") or time.time_ns() % 2**63)
RNG = np.random.default_rng(SEED)
CLI, C_API = os.environ["SPLATC_CLI"], os.environ["SPLATC_C_API"]


def run(*args):
    """Runs a program; returns (exit status, stdout + stderr), echoing its output (ctest reads it for
    validation messages)."""
    p = subprocess.run([str(a) for a in args], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=600)
    sys.stdout.write(p.stdout)
    return p.returncode, p.stdout


def check(cond, msg):
    if not cond:
        raise AssertionError(f"{msg} (seed {SEED})")


def same_bits(a, b, what):
    a, b = np.ascontiguousarray(a, np.float32), np.ascontiguousarray(b, np.float32)
    check(a.shape == b.shape, f"{what}: shapes {a.shape} and {b.shape}")
    diff = np.flatnonzero(a.view(np.uint32) != b.view(np.uint32))
    check(diff.size == 0, f"{what}: {diff.size} of {a.size} values differ, the first at {diff[:1]}: "
          f"{a.ravel()[diff[:1]]} vs {b.ravel()[diff[:1]]}")


def random_camera():
    w, h = int(RNG.integers(40, 80)), int(RNG.integers(30, 60))
    q = RNG.normal(size=4)
    q /= np.linalg.norm(q)
    a, b, c, d = q
    R = np.array([[1 - 2 * (c * c + d * d), 2 * (b * c - a * d), 2 * (b * d + a * c)],
                  [2 * (b * c + a * d), 1 - 2 * (b * b + d * d), 2 * (c * d - a * b)],
                  [2 * (b * d - a * c), 2 * (c * d + a * b), 1 - 2 * (b * b + c * c)]])
    return splatc.Camera(w, h, fx=RNG.uniform(40, 80), fy=RNG.uniform(40, 80), cx=w * RNG.uniform(0.4, 0.6),
                         cy=h * RNG.uniform(0.4, 0.6), R=R, t=RNG.normal(size=3))


def random_scene(cam, n):
    """n Gaussians in front of `cam` (depth 2..8, a little beyond the image), sub-pixel to large."""
    z = RNG.uniform(2, 8, n)
    pc = np.column_stack([(RNG.uniform(-0.1, 1.1, n) * cam.width - cam.cx) * z / cam.fx,
                          (RNG.uniform(-0.1, 1.1, n) * cam.height - cam.cy) * z / cam.fy, z])
    means = (pc - cam.t) @ cam.R  # R^T (pc - t), row by row
    degree = int(RNG.integers(0, 4))
    return splatc.Scene(means, RNG.uniform(-4.5, -1.0, (n, 3)), RNG.normal(size=(n, 4)), RNG.uniform(-3, 4, n),
                        RNG.normal(0, 0.5, (n, 16, 3)), sh_degree=degree)


# ------------------------------------------------------------------ cases


def case_layout():
    """Every struct the module declares in ctypes has the C layout (size and each field's offset),
    read from the compiler through tests/python/c_api.c."""
    rc, out = run(C_API, "layout")
    check(rc == 0, "c_api layout failed")
    mirror = {"splat_error": splatc._Error, "splat_camera": splatc._Camera, "splat_scene": splatc._Scene,
              "splat_device_info": splatc._DeviceInfo, "splat_ctx_desc": splatc._CtxDesc,
              "splat_render_desc": splatc._RenderDesc, "splat_train_progress": splatc._TrainProgress,
              "splat_train_desc": splatc._TrainDesc, "splat_stage_time": splatc._StageTime,
              "splat_eval_result": splatc._EvalResult, "splat_eval_view": splatc._EvalView,
              "splat_demo_desc": splatc._DemoDesc,
              "splat_load_info": splatc._LoadInfo}
    seen = set()
    for line in out.splitlines():
        name, value = line.split()
        struct, _, field = name.partition(".")
        cls = mirror[struct]
        got = getattr(cls, field).offset if field else splatc.ctypes.sizeof(cls)
        check(got == int(value), f"{name}: {value} in C, {got} in the module")
        seen.add(name)
    for struct, cls in mirror.items():  # and no field the C side does not have
        for field, _ in cls._fields_:
            check(f"{struct}.{field}" in seen, f"the module's {struct} has a field {field} that C's has not")


def render_vs_c(sh_half, rasterize_mode):
    cam = random_camera()
    scene = random_scene(cam, int(RNG.integers(50, 300)))
    # the mode as a scene's, which render takes when not told (half the time), or as an option
    if RNG.integers(0, 2):
        scene.rasterize_mode = rasterize_mode
        mode_opt = {}
    else:
        mode_opt = {"rasterize_mode": rasterize_mode}
    opts = {"sh_degree": [None, 0, 1, 2, 3][int(RNG.integers(0, 5))], "background": RNG.uniform(0, 1, 3),
            "max_gaussians_per_tile": int(RNG.choice([0, 0, 8])), "sh_half": sh_half, **mode_opt}
    h, w = cam.height, cam.width
    d_rgb, d_alpha = RNG.uniform(-1, 1, (h, w, 3)).astype(np.float32), RNG.uniform(-1, 1, (h, w)).astype(np.float32)
    print(f"  {scene} from {cam}, options {opts}")

    image = splatc.render(scene, cam, **opts)
    back = splatc.render_backward(scene, cam, d_rgb, d_alpha, **opts)
    check(np.abs(image - opts["background"]).max() > 0.1, "the render is only background: the comparison says little")

    # the same through C
    tmp = tempfile.mkdtemp(prefix="splatc-py-")
    sh_degree = opts["sh_degree"]
    header = np.array([scene.count, w, h, scene.sh_degree, 0 if sh_degree is None else 0xFFFFFFFF if sh_degree == 0
                       else sh_degree, opts["max_gaussians_per_tile"], int(sh_half),
                       splatc._MODES.index(rasterize_mode)], np.uint32)
    cam_floats = np.concatenate([[cam.fx, cam.fy, cam.cx, cam.cy], cam.R.ravel(), cam.t]).astype(np.float32)
    with open(f"{tmp}/in.bin", "wb") as f:
        for a in (header, opts["background"].astype(np.float32), cam_floats, scene.means, scene.log_scales, scene.quats,
                  scene.opacities, scene.sh, d_rgb, d_alpha):
            f.write(np.ascontiguousarray(a).tobytes())
    rc, _ = run(C_API, "render", f"{tmp}/in.bin", f"{tmp}/out.bin")
    check(rc == 0, "c_api render failed")
    c = np.fromfile(f"{tmp}/out.bin", np.float32)
    shutil.rmtree(tmp)
    n, px = scene.count, h * w
    parts = {}
    for name, size in (("render", px * 3), ("backward image", px * 3), ("alpha", px), ("means", n * 3),
                       ("log_scales", n * 3), ("quats", n * 4), ("opacities", n), ("sh", n * 48)):
        parts[name], c = c[:size], c[size:]
    check(c.size == 0, "c_api wrote more than expected")
    same_bits(image.ravel(), parts["render"], "render")
    same_bits(back.image.ravel(), parts["backward image"], "render_backward's image")
    same_bits(back.alpha.ravel(), parts["alpha"], "render_backward's alpha")
    for g in ("means", "log_scales", "quats", "opacities", "sh"):
        same_bits(getattr(back.grads, g).ravel(), parts[g], f"the gradient of {g}")
    check(np.abs(back.grads.means).max() > 0, "all gradients are zero: the comparison says little")


def case_render_vs_c():
    """render and render_backward give the C API's bits (image, alpha, every gradient) on a random
    scene, camera and options, float and half-float SH, classic and antialiased."""
    render_vs_c(False, "classic")
    render_vs_c(True, "antialiased")


def demo(tmp):
    rc, _ = run(CLI, "demo", f"{tmp}/data", "--size", "48", "--views", "8", "-q")
    check(rc == 0, "splatc demo failed")
    return f"{tmp}/data"


def case_train_vs_cli():
    """Trainer on the demo scene, stepped in pieces (step(), step(n), run(k), run()), ends with the
    bits of `splatc train` given the same options: the scene, and the PLY file byte for byte. The
    options include --identity-quats, so its flag is checked end to end against the library's
    field. (--selective-adam is not: on the demo every Gaussian is seen in every view, where it
    gives plain Adam's bits.)"""
    tmp = tempfile.mkdtemp(prefix="splatc-py-")
    data = demo(tmp)
    seed, bg = int(RNG.integers(0, 2**31)), np.round(RNG.uniform(0, 1, 3), 3)
    steps, degree, cap = 30, int(RNG.integers(0, 4)), int(RNG.choice([0, 64]))
    rc, _ = run(CLI, "train", data, "-o", f"{tmp}/out", "--steps", steps, "--seed", seed, "--sh-degree", degree,
                "--background", ",".join(f"{c:g}" for c in bg), "--max-gaussians-per-tile", cap, "--eval",
                "--images-factor", 2, "--identity-quats", "--no-renders", "-q")
    check(rc == 0, "splatc train failed")
    seen = []
    t = splatc.Trainer(data, steps=steps, seed=seed, sh_degree=degree, background=tuple(bg), max_gaussians_per_tile=cap,
                       eval=True, images_factor=2, identity_quats=True, progress=seen.append,
                       progress_ms=1)
    check((t.steps_done, t.steps) == (0, steps), f"a new trainer is at step {t.steps_done} of {t.steps}")
    check(t.step() == 1 and t.step(4) == 5 and t.run(12) == 12 and t.run() == steps, "steps done")
    check(t.step() == steps, "a step past the end")
    check(seen and seen[-1]["step"] <= steps and t.progress is not None, f"progress reports: {seen[-1:]}")
    check((t.progress["memory_cap"], t.progress["memory_cap_step"]) == (0, 0), f"no memory bound here: {t.progress}")
    check(tuple(t.progress[k] for k in ("refines", "cloned", "split", "pruned")) == (0, 0, 0, 0),
          f"no refine in {steps} steps: {t.progress}")
    mine, cli = t.scene(), splatc.load_ply(f"{tmp}/out/point_cloud.ply")
    print(f"  {mine} after {steps} steps (seed {seed}, degree {degree}, background {bg}, cap {cap})")
    check(mine.count == cli.count and mine.sh_degree == cli.sh_degree, f"{mine} vs the CLI's {cli}")
    check(t.count == mine.count, f"the trainer counts {t.count} Gaussians, its scene has {mine.count}")
    for g in ("means", "log_scales", "quats", "opacities", "sh"):
        same_bits(getattr(mine, g), getattr(cli, g), g)
    mine.save_ply(f"{tmp}/mine.ply")
    with open(f"{tmp}/mine.ply", "rb") as a, open(f"{tmp}/out/point_cloud.ply", "rb") as b:
        check(a.read() == b.read(), "save_ply's file differs from splatc train's point_cloud.ply")
    ev = t.evaluate()
    check(ev["n_views"] == 1 and np.isfinite(ev["psnr"]), f"evaluate: {ev}")
    t.close()
    # each view's results, against the CLI's metrics.json of the same bits
    with open(f"{tmp}/out/metrics.json") as f:
        cli_views = json.load(f)["views"]
    check([v["name"] for v in ev["views"]] == [v["name"] for v in cli_views], f"views {ev['views']} vs the CLI's {cli_views}")
    for mine_v, cli_v in zip(ev["views"], cli_views):
        for k in ("psnr", "ssim", "l1", "psnr_full"):
            check(abs(mine_v[k] - cli_v[k]) <= 1e-9 * max(1.0, abs(cli_v[k])), f"view {cli_v['name']} {k}: {mine_v[k]} vs {cli_v[k]}")
    # eval_scale reaches the library: the scene evaluated at a scale, as `splatc eval --scale` does
    scale = float(RNG.choice([0.5, 1.375, 2]))
    rc, _ = run(CLI, "eval", f"{tmp}/out/point_cloud.ply", data, "--eval", "--images-factor", 2, "--scale", scale,
                "-o", f"{tmp}/ev", "-q")
    check(rc == 0, "splatc eval --scale failed")
    with open(f"{tmp}/ev/metrics.json") as f:
        cli_ev = json.load(f)
    t = splatc.Trainer(data, init_ply=f"{tmp}/out/point_cloud.ply", eval=True, images_factor=2, eval_scale=scale)
    ev = t.evaluate()
    t.close()
    # to 1e-12: on some seeds the two differ in the last digits (19.744408257423704 against
    # 19.7444082574237 in one CI run; why is not yet known), where a wrong scale moves it by dB
    check(cli_ev["scale"] == scale and abs(ev["psnr"] - cli_ev["psnr"]) <= 1e-12 * abs(cli_ev["psnr"]),
          f"eval_scale {scale}: PSNR {ev['psnr']}, the CLI's {cli_ev['psnr']} at scale {cli_ev['scale']}")
    shutil.rmtree(tmp)


def case_train_vs_c():
    """Trainer with the options the command line lacks (the tile-list capacity, streamed images)
    and more (the refinement schedule, a budget that binds, either strategy, a random background)
    ends with the bits of the C API given the same splat_train_desc; and checkpoints resume to the
    same bits."""
    tmp = tempfile.mkdtemp(prefix="splatc-py-")
    data = demo(tmp)
    opts = {"steps": 24, "seed": int(RNG.integers(0, 2**31)), "refine_start": 4, "refine_every": int(RNG.integers(4, 7)),
            "refine_stop": 16, "reset_every": 10, "isect_capacity": 16, "stream_images": True, "background": "random",
            "identity_quats": bool(RNG.integers(0, 2)), "selective_adam": bool(RNG.integers(0, 2)),
            "sh_degree": 1, "max_gaussians": 1200, "strategy": ["default", "mcmc"][int(RNG.integers(0, 2))],
            "rasterize_mode": ["classic", "antialiased"][int(RNG.integers(0, 2))]}
    rc, _ = run(C_API, "train", data, f"{tmp}/c.ply", *[f"{k}={int(v) if isinstance(v, bool) else v}" for k, v in opts.items()])
    check(rc == 0, "c_api train failed")
    t = splatc.Trainer(data, **opts)
    first = t.scene().count
    t.run(11)
    t.save(f"{tmp}/at11.ckpt")
    t.run()
    mine, c = t.scene(), splatc.load_ply(f"{tmp}/c.ply")
    print(f"  {first} Gaussians at the start, {mine.count} after {opts['steps']} steps with {opts}")
    check(mine.count != first, "refinement changed nothing: the options may not have reached the trainer")
    check(mine.rasterize_mode == c.rasterize_mode == opts["rasterize_mode"], f"modes {mine.rasterize_mode}, {c.rasterize_mode}")
    for g in ("means", "log_scales", "quats", "opacities", "sh"):
        same_bits(getattr(mine, g), getattr(c, g), g)
    # resume: a fresh trainer continued from the checkpoint ends with the same bits
    check(t.seed == opts["seed"], f"the trainer's seed {t.seed}, asked {opts['seed']}")
    t.close()
    # resumed by a trainer given another seed: the checkpoint's goes on, and says so
    r = splatc.Trainer(data, **{**opts, "seed": opts["seed"] + 1})
    r.resume(f"{tmp}/at11.ckpt")
    check(r.steps_done == 11, f"resumed at step {r.steps_done}")
    check(r.seed == opts["seed"], f"resumed with seed {r.seed}, the checkpoint's is {opts['seed']}")
    r.run()
    again = r.scene()
    for g in ("means", "log_scales", "quats", "opacities", "sh"):
        same_bits(getattr(again, g), getattr(c, g), f"{g} after resuming")
    r.close()
    shutil.rmtree(tmp)


def case_errors():
    """Failures raise splatc.Error with the library's message (the one splatc prints for the same
    input) and status; wrong arguments of Python's own raise ValueError or TypeError."""
    tmp = tempfile.mkdtemp(prefix="splatc-py-")

    def raises(fn, exc=splatc.Error):
        try:
            fn()
        except exc as e:
            return e
        raise AssertionError(f"no {exc.__name__} raised (seed {SEED})")

    def cli_message(*args):
        rc, out = run(CLI, *args)
        check(rc == 1 and out.startswith("splatc: "), f"splatc {' '.join(args)}: exit {rc}")
        return out.strip().splitlines()[-1][len("splatc: "):]

    missing = f"{tmp}/no-such-{RNG.integers(1 << 30)}.ply"
    e = raises(lambda: splatc.load_ply(missing))
    want = cli_message("render", missing, "--camera", "8,8,8,8,4,4,1,0,0,0,0,0,3", "-o", f"{tmp}/r")
    check(e.status == "SPLAT_ERR_IO" and str(e) == want and missing in str(e), f"load_ply: {e.status} '{e}', CLI: '{want}'")

    with open(f"{tmp}/cut.ply", "wb") as f:  # a header that promises a Gaussian the file lacks
        f.write(b"ply\nformat binary_little_endian 1.0\nelement vertex 1\nproperty float x\nend_header\n")
    e = raises(lambda: splatc.load_ply(f"{tmp}/cut.ply"))
    check(e.status == "SPLAT_ERR_FORMAT" and f"{tmp}/cut.ply" in str(e), f"truncated PLY: {e.status} '{e}'")

    nodata = f"{tmp}/no-such-dataset"
    e = raises(lambda: splatc.Trainer(nodata, steps=1))
    want = cli_message("train", nodata, "-o", f"{tmp}/t", "-q")
    check(str(e) == want and nodata in str(e), f"Trainer: '{e}', CLI: '{want}'")

    cam = splatc.Camera(16, 16, 16, 16)
    s = splatc.Scene([[0, 0, 4]], [[-2] * 3], [[0, 0, 0, 0]], [1], np.zeros((1, 1, 3)))
    e = raises(lambda: splatc.render(s, cam))
    check(e.status == "SPLAT_ERR_INVALID_ARG" and "zero rotation quaternion" in str(e), f"zero quaternion: '{e}'")
    e = raises(lambda: splatc.render(splatc.Scene([[0, 0, 4]], [[-2] * 3], [[1, 0, 0, 0]], [1], np.zeros((1, 1, 3))),
                                     splatc.Camera(16, 16, -1, 16)))
    check(e.status == "SPLAT_ERR_INVALID_ARG" and "focal" in str(e), f"negative focal length: '{e}'")

    raises(lambda: splatc.Scene(np.zeros((2, 2)), np.zeros((2, 3)), np.zeros((2, 4)), np.zeros(2), np.zeros((2, 1, 3))),
           ValueError)
    raises(lambda: splatc.Scene(np.zeros((2, 3)), np.zeros((2, 3)), np.zeros((2, 4)), np.zeros(2), np.zeros((2, 5, 3))),
           ValueError)
    raises(lambda: splatc.render_backward(s, cam, np.zeros((15, 16, 3))), ValueError)
    raises(lambda: splatc.Trainer(tmp, stepz=3), TypeError)
    raises(lambda: splatc.Trainer(tmp, steps=-1), ValueError)
    raises(lambda: splatc.render(s, cam, sh_degree=4), ValueError)
    shutil.rmtree(tmp)


def case_files():
    """A Scene survives save_ply/load_ply bit for bit, at each SH degree (the coefficients above it
    are not stored and read back as zero); save_scene and load_scene agree with the tool's convert
    bit for bit in every other format."""
    tmp = tempfile.mkdtemp(prefix="splatc-py-")
    for degree in range(4):
        cam = random_camera()
        s = random_scene(cam, int(RNG.integers(1, 50)))
        s = splatc.Scene(s.means, s.log_scales, s.quats, s.opacities, s.sh[:, :(degree + 1) ** 2])
        check(s.sh_degree == degree, f"degree from the SH shape: {s.sh_degree}, not {degree}")
        splatc.save_ply(f"{tmp}/s.ply", s)
        back = splatc.load_ply(f"{tmp}/s.ply")
        check(back.count == s.count and back.sh_degree == degree, f"{back} read back from {s}")
        for g in ("means", "log_scales", "quats", "opacities", "sh"):
            same_bits(getattr(back, g), getattr(s, g), f"{g} (degree {degree})")
        # the other formats: save_scene writes the bytes `splatc convert` writes, and load_scene
        # reads them as the tool does (its convert back to PLY)
        for ext in ("spz", "splat", "compressed.ply", "sog"):
            splatc.save_scene(f"{tmp}/py.{ext}", s)
            rc, out = run(CLI, "convert", f"{tmp}/s.ply", f"{tmp}/c.{ext}")
            check(rc == 0, f"splatc convert to .{ext} failed: {out}")
            with open(f"{tmp}/py.{ext}", "rb") as a, open(f"{tmp}/c.{ext}", "rb") as b:
                check(a.read() == b.read(), f".{ext} (degree {degree}): save_scene and splatc convert differ")
            rc, out = run(CLI, "convert", f"{tmp}/c.{ext}", f"{tmp}/back.ply")
            check(rc == 0, f"splatc convert from .{ext} failed: {out}")
            mine, tools = splatc.load_scene(f"{tmp}/py.{ext}"), splatc.load_ply(f"{tmp}/back.ply")
            check(mine.count == s.count, f".{ext}: {mine.count} Gaussians read back of {s.count}")
            for g in ("means", "log_scales", "quats", "opacities", "sh"):
                same_bits(getattr(mine, g), getattr(tools, g), f"{g} (.{ext}, degree {degree})")
    shutil.rmtree(tmp)


def case_example_fit_image():
    """python/examples/fit_image.py, briefly: its loss falls at every report, and its PSNR rises by
    at least 6 dB in 30 steps (measured: about 9 dB)."""
    rc, out = run(sys.executable, os.path.join(os.environ["SPLATC_EXAMPLES"], "fit_image.py"), "--steps", "30", "--size",
                  "32", "--gaussians", "150", "--seed", str(int(RNG.integers(0, 2**31))))
    check(rc == 0, "fit_image.py failed")
    rows = [(float(a), float(b)) for a, b in re.findall(r"loss ([0-9.]+)\s+PSNR ([0-9.-]+) dB", out)]
    check(len(rows) >= 5, f"fit_image.py printed {len(rows)} reports")
    losses = [r[0] for r in rows]
    check(all(b < a for a, b in zip(losses, losses[1:])), f"the loss does not fall at every report: {losses}")
    check(rows[-1][1] >= rows[0][1] + 6, f"PSNR {rows[0][1]} -> {rows[-1][1]} dB")


if __name__ == "__main__":
    name = sys.argv[1] if len(sys.argv) == 2 else ""
    fn = globals().get("case_" + name)
    if fn is None:
        sys.exit("usage: test_splatc.py CASE; cases: " + ", ".join(k[5:] for k in globals() if k.startswith("case_")))
    print(f"[ RUN  ] python_{name} (seed {SEED}), python {sys.version.split()[0]}, numpy {np.__version__}, "
          f"{splatc.library_path()}", flush=True)
    t0 = time.time()
    fn()
    print(f"[  OK  ] python_{name} ({time.time() - t0:.2f} s)")
