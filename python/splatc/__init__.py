"""splatc for Python: 3D Gaussian Splatting rendering and training on numpy arrays.

A thin layer of ctypes over libsplatc.so (include/splatc.h is the manual of every call here); no
compiled extension. Needs numpy (Debian: python3-numpy).

    import numpy as np, splatc
    scene = splatc.load_ply("point_cloud.ply")             # a Scene of numpy arrays
    cam = splatc.Camera(64, 48, fx=60, fy=60)               # at the origin, looking down +z
    image = splatc.render(scene, cam)                       # [48,64,3] float32
    out = splatc.render_backward(scene, cam, d_rgb)         # out.image, out.alpha, out.grads (a Scene)
    t = splatc.Trainer("data/garden", steps=7000, eval=True)
    t.run()                                                 # or t.step() / t.step(100)
    t.scene().save_ply("garden.ply")

The library is found in this order: the file SPLATC_LIBRARY names; a libsplatc.so.N beside this
module; where `cmake --install` put it relative to the module; the system's search path
(LD_LIBRARY_PATH, ldconfig). A failed call raises splatc.Error, whose message is splat_error's
(it names the file or object and the problem); a wrong argument of Python's own (a shape, a type)
raises ValueError or TypeError before anything is called. Arrays are float32 and C-ordered; inputs
of another dtype or order are converted (copied). Everything a call returns is a fresh array that
belongs to the caller.

A Context is a device and what splatc keeps on it; the functions take ctx=None, meaning one default
context made on first use (the best device, or SPLAT_DEVICE; SPLAT_VALIDATE=1 turns on the Vulkan
validation layers). Use a context from one thread at a time.
"""

import atexit
import ctypes
import glob
import math
import os
import sys
import weakref
from collections import namedtuple

import numpy as np

__all__ = [
    "Error", "Context", "Camera", "Scene", "Trainer", "Backward",
    "render", "render_backward", "load_ply", "save_ply", "read_cameras", "write_png", "make_demo",
    "devices", "version", "library_path", "default_context",
]

# ------------------------------------------------------------------ the C declarations (splatc.h)

_u32, _u64, _f32, _f64, _bool, _enum = (ctypes.c_uint32, ctypes.c_uint64, ctypes.c_float, ctypes.c_double,
                                         ctypes.c_bool, ctypes.c_int)
_fptr = ctypes.POINTER(ctypes.c_float)

SH_COEFFS = 16              # SPLAT_SH_COEFFS
_SH_DEGREE_0 = 0xFFFFFFFF   # SPLAT_SH_DEGREE_0
_STATUS = ["SPLAT_OK", "SPLAT_ERR_INVALID_ARG", "SPLAT_ERR_IO", "SPLAT_ERR_FORMAT", "SPLAT_ERR_UNSUPPORTED",
           "SPLAT_ERR_OUT_OF_HOST_MEMORY", "SPLAT_ERR_OUT_OF_DEVICE_MEMORY", "SPLAT_ERR_NO_DEVICE", "SPLAT_ERR_DEVICE",
           "SPLAT_ERR_LIMIT", "SPLAT_ERR_NONFINITE", "SPLAT_ERR_SHADER"]


class _Error(ctypes.Structure):
    _fields_ = [("status", _enum), ("msg", ctypes.c_char * 512)]


class _Camera(ctypes.Structure):
    _fields_ = [("fx", _f32), ("fy", _f32), ("cx", _f32), ("cy", _f32), ("R", _f32 * 9), ("t", _f32 * 3),
                ("width", _u32), ("height", _u32)]


class _Scene(ctypes.Structure):
    _fields_ = [("count", _u32), ("capacity", _u32), ("sh_degree", _u32), ("rasterize_mode", _enum), ("means", _fptr),
                ("log_scales", _fptr), ("quats", _fptr), ("opacities", _fptr), ("sh", _fptr)]


class _DeviceInfo(ctypes.Structure):
    _fields_ = [("index", _u32), ("name", ctypes.c_char * 256), ("driver", ctypes.c_char * 512), ("type", ctypes.c_char_p),
                ("subgroup_size", _u32), ("memory_bytes", _u64), ("max_storage_range", _u64),
                ("unified_memory", _bool), ("float_atomics", _bool), ("fp16_storage", _bool)]


class _CtxDesc(ctypes.Structure):
    _fields_ = [("choose_device", _bool), ("device_index", _u32), ("validation", _bool)]


class _RenderDesc(ctypes.Structure):
    _fields_ = [("sh_degree", _u32), ("background", _f32 * 3), ("max_gaussians_per_tile", _u32), ("sh_half", _bool),
                ("rasterize_mode", _enum)]


class _TrainProgress(ctypes.Structure):
    _fields_ = [("step", _u32), ("steps", _u32), ("loss", _f32), ("psnr", _f32), ("n_gaussians", _u32),
                ("iters_per_sec", _f64), ("eta_sec", _f64), ("isect_padded", _u64), ("memory_cap", _u32),
                ("memory_cap_step", _u32), ("refines", _u32), ("cloned", _u32), ("split", _u32), ("pruned", _u32),
                ("refines_in_place", _u32)]


_PROGRESS_FN = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.POINTER(_TrainProgress))


class _TrainDesc(ctypes.Structure):
    _fields_ = [("data", ctypes.c_char_p), ("images_factor", _u32), ("eval", _bool), ("eval_scale", _f32),
                ("steps", _u32), ("render", _RenderDesc), ("background", _enum), ("strategy", _enum), ("seed", _u64),
                ("init_points", _u32), ("identity_quats", _bool), ("init_ply", ctypes.c_char_p), ("init_scene", ctypes.c_void_p),
                ("progress", _PROGRESS_FN),
                ("progress_user", ctypes.c_void_p), ("progress_ms", _u32), ("profile", _bool),
                ("refine_start", _u32), ("refine_every", _u32), ("refine_stop", _u32), ("reset_every", _u32),
                ("max_gaussians", _u32), ("isect_capacity", _u32), ("selective_adam", _bool),
                ("stream_images", _bool)]


class _StageTime(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char_p), ("ms", _f64)]


class _EvalView(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char_p), ("psnr", _f64), ("ssim", _f64), ("l1", _f64), ("psnr_full", _f64)]


class _EvalResult(ctypes.Structure):
    _fields_ = [("n_views", _u32), ("psnr", _f64), ("ssim", _f64), ("l1", _f64), ("psnr_full", _f64), ("seconds", _f64),
                ("views", ctypes.POINTER(_EvalView)), ("views_cap", _u32)]


class _LoadInfo(ctypes.Structure):
    _fields_ = [("format", _enum), ("warning", ctypes.c_char * 512)]


class _DemoDesc(ctypes.Structure):
    _fields_ = [("width", _u32), ("height", _u32), ("n_views", _u32)]


_P = ctypes.POINTER
_vp = ctypes.c_void_p
_SIGNATURES = {
    "splat_version": (ctypes.c_char_p, []),
    "splat_status_str": (ctypes.c_char_p, [_enum]),
    "splat_free": (None, [_vp]),
    "splat_scene_init": (_enum, [_P(_Scene), _u32, _P(_Error)]),
    "splat_scene_free": (None, [_P(_Scene)]),
    "splat_devices": (_enum, [_P(_DeviceInfo), _u32, _P(_u32), _P(_Error)]),
    "splat_ctx_init": (_enum, [_P(_vp), _P(_CtxDesc), _P(_Error)]),
    "splat_ctx_free": (None, [_vp]),
    "splat_ctx_device": (None, [_vp, _P(_DeviceInfo)]),
    "splat_ctx_memory": (None, [_vp, _P(_u64), _P(_u64)]),
    "splat_render": (_enum, [_vp, _P(_Scene), _P(_Camera), _u32, _P(_RenderDesc), _P(_fptr), _P(_Error)]),
    "splat_render_backward": (_enum, [_vp, _P(_Scene), _P(_Camera), _P(_RenderDesc), _fptr, _fptr, _P(_Scene), _fptr,
                                      _fptr, _P(_Error)]),
    "splat_trainer_init": (_enum, [_P(_vp), _vp, _P(_TrainDesc), _P(_Error)]),
    "splat_trainer_run": (_enum, [_vp, _u32, _P(_Error)]),
    "splat_trainer_step": (_u32, [_vp]),
    "splat_trainer_steps": (_u32, [_vp]),
    "splat_trainer_count": (_u32, [_vp]),
    "splat_trainer_seed": (_u64, [_vp]),
    "splat_trainer_profile": (_u32, [_vp, _P(_StageTime), _u32]),
    "splat_trainer_diagnostics": (_u32, [_vp, ctypes.c_char_p, ctypes.c_size_t]),
    "splat_trainer_eval": (_enum, [_vp, ctypes.c_char_p, _P(_EvalResult), _P(_Error)]),
    # the count only (views NULL): the struct's layout is not mirrored here
    "splat_trainer_views": (_u32, [_vp, _vp, _u32]),
    "splat_trainer_scene": (_enum, [_vp, _P(_Scene), _P(_Error)]),
    "splat_trainer_save": (_enum, [_vp, ctypes.c_char_p, _P(_Error)]),
    "splat_trainer_resume": (_enum, [_vp, ctypes.c_char_p, _P(_Error)]),
    "splat_trainer_free": (None, [_vp]),
    "splat_scene_load_ply": (_enum, [ctypes.c_char_p, _P(_Scene), _P(_Error)]),
    "splat_scene_save_ply": (_enum, [ctypes.c_char_p, _P(_Scene), _P(_Error)]),
    "splat_scene_load": (_enum, [ctypes.c_char_p, _P(_Scene), _P(_LoadInfo), _P(_Error)]),
    "splat_scene_save": (_enum, [ctypes.c_char_p, _P(_Scene), _P(_Error)]),
    "splat_write_png": (_enum, [ctypes.c_char_p, _fptr, _fptr, _u32, _u32, _P(_Error)]),
    "splat_read_cameras": (_enum, [ctypes.c_char_p, _P(_P(_Camera)), _P(_u32), _P(_Error)]),
    "splat_make_demo": (_enum, [_vp, ctypes.c_char_p, _P(_DemoDesc), _P(_Error)]),
}

# ------------------------------------------------------------------ finding the library


def _candidates():
    env = os.environ.get("SPLATC_LIBRARY")
    if env:
        return [env]  # named explicitly: that one or nothing
    soname = "libsplatc.0.dylib" if sys.platform == "darwin" else "libsplatc.so.0"
    here = os.path.dirname(os.path.abspath(__file__))
    found = sorted(glob.glob(os.path.join(here, "libsplatc.so.*")) + glob.glob(os.path.join(here, "libsplatc.*.dylib")))
    try:
        from . import _install  # written by cmake --install
        found.append(os.path.normpath(os.path.join(here, _install.library)))
    except ImportError:
        pass
    return found + [soname]


def _load():
    tried = []
    for path in _candidates():
        try:
            lib = ctypes.CDLL(path)
        except OSError as e:
            tried.append(str(e))
            continue
        for name, (res, args) in _SIGNATURES.items():
            try:
                fn = getattr(lib, name)
            except AttributeError:
                raise ImportError(f"splatc: {path} has no {name}: it is older than this module") from None
            fn.restype, fn.argtypes = res, args
        return lib, path
    raise ImportError("splatc: cannot load libsplatc (set SPLATC_LIBRARY to its path, or install splatc): " +
                      "; ".join(tried))


_lib, _lib_name = _load()
__version__ = _lib.splat_version().decode()


def version():
    """The library's version, "MAJOR.MINOR.PATCH"."""
    return __version__


def library_path():
    """The file of the loaded libsplatc."""
    if os.path.sep in _lib_name:
        return os.path.abspath(_lib_name)
    try:  # loaded through the system's search path: where the loader found it
        with open("/proc/self/maps") as maps:
            for line in maps:
                if os.path.basename(line.split()[-1]).startswith("libsplatc."):
                    return line.split()[-1]
    except OSError:
        pass
    return _lib_name


# ------------------------------------------------------------------ errors


class Error(Exception):
    """A splatc call failed. str(e) is the library's message (splat_error.msg); e.status is the
    status's name, e.g. "SPLAT_ERR_IO"."""

    def __init__(self, status, message):
        super().__init__(message)
        self.status = status


def _check(status, err):
    if status != 0:
        name = _lib.splat_status_str(status).decode()
        raise Error(name, err.msg.decode(errors="replace") or name)


def _path(p, what):
    if not isinstance(p, (str, bytes, os.PathLike)):
        raise TypeError(f"{what} must be a path, got {type(p).__name__}")
    return os.fsencode(p)


def _floats(x, shape, what):
    """x as a C-ordered float32 array of `shape` (None: any length on that axis)."""
    a = np.ascontiguousarray(x, dtype=np.float32)
    if a.ndim != len(shape) or any(want is not None and got != want for got, want in zip(a.shape, shape)):
        dims = ",".join("N" if s is None else str(s) for s in shape)
        raise ValueError(f"{what} must have shape [{dims}], got {list(a.shape)}")
    return a


def _ptr(a):
    return a.ctypes.data_as(_fptr) if a is not None else None


# ------------------------------------------------------------------ context


class Context:
    """A device and everything splatc keeps on it (splat_ctx). device=None: the best one (or
    SPLAT_DEVICE); validation: the Vulkan validation layers (also SPLAT_VALIDATE=1)."""

    def __init__(self, device=None, validation=False):
        desc = _CtxDesc(choose_device=device is not None, device_index=device or 0, validation=bool(validation))
        self._ptr = _vp()
        self._users = weakref.WeakSet()  # trainers, closed before the context
        err = _Error()
        _check(_lib.splat_ctx_init(ctypes.byref(self._ptr), ctypes.byref(desc), ctypes.byref(err)), err)

    def _handle(self):
        if not self._ptr:
            raise ValueError("the splatc context is closed")
        return self._ptr

    def device(self):
        """The device the context runs on, as a dict (splat_device_info)."""
        info = _DeviceInfo()
        _lib.splat_ctx_device(self._handle(), ctypes.byref(info))
        return _device_dict(info)

    def memory(self):
        """(bytes of device memory in use, the most so far)."""
        now, peak = _u64(), _u64()
        _lib.splat_ctx_memory(self._handle(), ctypes.byref(now), ctypes.byref(peak))
        return now.value, peak.value

    def close(self):
        for user in list(self._users):
            user.close()
        if self._ptr:
            _lib.splat_ctx_free(self._ptr)
            self._ptr = _vp()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        if _lib is not None and getattr(self, "_ptr", None):  # not at interpreter shutdown
            self.close()


_default = None


def default_context():
    """The context the functions use when given ctx=None, made on first use."""
    global _default
    if _default is None or not _default._ptr:
        _default = Context()
    return _default


@atexit.register
def _close_default():
    if _default is not None:
        _default.close()


def _ctx(ctx):
    return (ctx if ctx is not None else default_context())._handle()


def _device_dict(info):
    return {"index": info.index, "name": info.name.decode(), "driver": info.driver.decode(),
            "type": info.type.decode() if info.type else "", "subgroup_size": info.subgroup_size,
            "memory_bytes": info.memory_bytes, "max_storage_range": info.max_storage_range,
            "unified_memory": info.unified_memory, "float_atomics": info.float_atomics,
            "fp16_storage": info.fp16_storage}


def devices():
    """The Vulkan devices, as dicts (splat_device_info)."""
    infos, n, err = (_DeviceInfo * 16)(), _u32(), _Error()
    _check(_lib.splat_devices(infos, 16, ctypes.byref(n), ctypes.byref(err)), err)
    return [_device_dict(infos[k]) for k in range(min(n.value, 16))]


# ------------------------------------------------------------------ cameras and scenes


class Camera:
    """A pinhole camera in the OpenCV/COLMAP convention (x right, y down, z forward): a world point
    X is R X + t in camera space and (fx x/z + cx, fy y/z + cy) in pixels. R [3,3] and t [3] are
    world-to-camera; cx, cy default to the image centre, R to the identity, t to zero."""

    def __init__(self, width, height, fx, fy, cx=None, cy=None, R=None, t=None):
        self.width, self.height = int(width), int(height)
        self.fx, self.fy = float(fx), float(fy)
        self.cx = self.width / 2 if cx is None else float(cx)
        self.cy = self.height / 2 if cy is None else float(cy)
        self.R = _floats(np.eye(3) if R is None else R, (3, 3), "R").copy()
        self.t = _floats(np.zeros(3) if t is None else t, (3,), "t").copy()
        if not (1 <= self.width <= 0xFFFFFFFF and 1 <= self.height <= 0xFFFFFFFF):
            raise ValueError(f"a camera of {self.width}x{self.height}")

    def _c(self):
        return _Camera(self.fx, self.fy, self.cx, self.cy, (_f32 * 9)(*self.R.ravel()), (_f32 * 3)(*self.t),
                       self.width, self.height)

    @classmethod
    def _from_c(cls, c):
        return cls(c.width, c.height, c.fx, c.fy, c.cx, c.cy, np.array(c.R[:], np.float32).reshape(3, 3),
                   np.array(c.t[:], np.float32))

    def __repr__(self):
        return f"Camera({self.width}x{self.height}, fx={self.fx:g}, fy={self.fy:g}, cx={self.cx:g}, cy={self.cy:g})"


_MODES = ("classic", "antialiased")  # splat_rasterize_mode


def _mode(name):
    """splat_rasterize_mode of "classic" or "antialiased"."""
    if name not in _MODES:
        raise ValueError(f"rasterize_mode must be 'classic' or 'antialiased', got {name!r}")
    return _MODES.index(name)


class Scene:
    """Gaussians in host memory (splat_scene), float32 arrays of N rows:

        means       [N,3]     world positions
        log_scales  [N,3]     natural log of the standard deviations
        quats       [N,4]     rotations w, x, y, z (not necessarily normalised)
        opacities   [N]       logits: opacity = 1 / (1 + exp(-logit))
        sh          [N,16,3]  SH coefficients, coefficient-major, channel-minor
        sh_degree   0..3      the degree the scene has
        rasterize_mode        "classic" or "antialiased": the mode it was trained in (a PLY records
                              it), which render() uses unless told otherwise

    sh may be given as [N,K,3] with K = 1, 4, 9 or 16 (degree 0..3): the rest is zero, and
    sh_degree defaults to that degree."""

    def __init__(self, means, log_scales, quats, opacities, sh, sh_degree=None, rasterize_mode="classic"):
        self.means = _floats(means, (None, 3), "means")
        n = self.means.shape[0]
        self.log_scales = _floats(log_scales, (n, 3), "log_scales")
        self.quats = _floats(quats, (n, 4), "quats")
        self.opacities = _floats(opacities, (n,), "opacities")
        sh = _floats(sh, (n, None, 3), "sh")
        k = sh.shape[1]
        if k not in (1, 4, 9, 16):
            raise ValueError(f"sh must have 1, 4, 9 or 16 coefficients per channel (degree 0..3), got {k}")
        if k < SH_COEFFS:
            sh = np.concatenate([sh, np.zeros((n, SH_COEFFS - k, 3), np.float32)], axis=1)
        self.sh = sh
        self.sh_degree = math.isqrt(k) - 1 if sh_degree is None else int(sh_degree)
        if not 0 <= self.sh_degree <= 3:
            raise ValueError(f"sh_degree must be 0..3, got {self.sh_degree}")
        _mode(rasterize_mode)
        self.rasterize_mode = rasterize_mode

    @property
    def count(self):
        return self.means.shape[0]

    def __len__(self):
        return self.count

    def __repr__(self):
        aa = ", antialiased" if self.rasterize_mode == "antialiased" else ""
        return f"Scene({self.count} Gaussians, SH degree {self.sh_degree}{aa})"

    def copy(self):
        return Scene(self.means.copy(), self.log_scales.copy(), self.quats.copy(), self.opacities.copy(),
                     self.sh.copy(), self.sh_degree, self.rasterize_mode)

    def save_ply(self, path):
        """Writes the PLY layout viewers read (atomically)."""
        save_ply(path, self)

    def save(self, path):
        """Writes the format the path's name says (.ply, .compressed.ply, .splat, .spz, .sog), atomically."""
        save_scene(path, self)

    def _c(self):
        """A splat_scene over this scene's arrays (they stay alive while self does)."""
        n = self.count
        return _Scene(n, n, self.sh_degree, _mode(self.rasterize_mode), _ptr(self.means), _ptr(self.log_scales),
                      _ptr(self.quats), _ptr(self.opacities), _ptr(self.sh))

    @classmethod
    def _take(cls, cs):
        """Copies a splat_scene the library allocated into a Scene, and frees it."""
        try:
            n = cs.count

            def arr(p, *shape):
                if n == 0:
                    return np.zeros((0,) + shape, np.float32)
                return np.ctypeslib.as_array(p, shape=(n,) + shape).copy()

            return cls(arr(cs.means, 3), arr(cs.log_scales, 3), arr(cs.quats, 4), arr(cs.opacities),
                       arr(cs.sh, SH_COEFFS, 3), min(cs.sh_degree, 3), _MODES[cs.rasterize_mode])
        finally:
            _lib.splat_scene_free(ctypes.byref(cs))


# ------------------------------------------------------------------ files


def load_ply(path):
    """Reads Gaussians from a PLY file (the layout standard viewers use) into a Scene."""
    cs, err = _Scene(), _Error()
    st = _lib.splat_scene_load_ply(_path(path, "path"), ctypes.byref(cs), ctypes.byref(err))
    if st != 0:
        _lib.splat_scene_free(ctypes.byref(cs))
        _check(st, err)
    return Scene._take(cs)


def save_ply(path, scene):
    """Writes a Scene as PLY, atomically."""
    if not isinstance(scene, Scene):
        raise TypeError(f"save_ply needs a Scene, got {type(scene).__name__}")
    err = _Error()
    _check(_lib.splat_scene_save_ply(_path(path, "path"), ctypes.byref(scene._c()), ctypes.byref(err)), err)


def load_scene(path):
    """Reads Gaussians from any scene file splatc reads (.ply, .compressed.ply, .splat, .spz, .sog,
    a SOG folder's meta.json; docs/FORMATS.md) into a Scene. What the file held besides (another
    trainer's PLY properties, say) is skipped with a warnings.warn naming it."""
    cs, info, err = _Scene(), _LoadInfo(), _Error()
    st = _lib.splat_scene_load(_path(path, "path"), ctypes.byref(cs), ctypes.byref(info), ctypes.byref(err))
    if st != 0:
        _lib.splat_scene_free(ctypes.byref(cs))
        _check(st, err)
    if info.warning:
        import warnings
        warnings.warn(info.warning.decode("utf-8", "replace"), stacklevel=2)
    return Scene._take(cs)


def save_scene(path, scene):
    """Writes a Scene in the format the path's name says, atomically (lossy formats: docs/FORMATS.md)."""
    if not isinstance(scene, Scene):
        raise TypeError(f"save_scene needs a Scene, got {type(scene).__name__}")
    err = _Error()
    _check(_lib.splat_scene_save(_path(path, "path"), ctypes.byref(scene._c()), ctypes.byref(err)), err)


def read_cameras(path):
    """Reads cameras (splatc's cameras.json or the original 3DGS one): a list of Camera."""
    cams, n, err = _P(_Camera)(), _u32(), _Error()
    _check(_lib.splat_read_cameras(_path(path, "path"), ctypes.byref(cams), ctypes.byref(n), ctypes.byref(err)), err)
    try:
        return [Camera._from_c(cams[k]) for k in range(n.value)]
    finally:
        _lib.splat_free(cams)


def write_png(path, rgb, alpha=None):
    """Writes an 8-bit PNG of rgb [H,W,3] (clamped to [0, 1]) and, when given, alpha [H,W]."""
    rgb = _floats(rgb, (None, None, 3), "rgb")
    h, w = rgb.shape[:2]
    alpha = None if alpha is None else _floats(alpha, (h, w), "alpha")
    err = _Error()
    _check(_lib.splat_write_png(_path(path, "path"), _ptr(rgb), _ptr(alpha), w, h, ctypes.byref(err)), err)


def make_demo(path, width=0, height=0, n_views=0, ctx=None):
    """Writes the bundled demo scene (a small COLMAP scene) into the folder `path`; 0: defaults."""
    desc, err = _DemoDesc(width, height, n_views), _Error()
    _check(_lib.splat_make_demo(_ctx(ctx), _path(path, "path"), ctypes.byref(desc), ctypes.byref(err)), err)


# ------------------------------------------------------------------ rendering


def _render_desc(sh_degree=None, background=None, max_gaussians_per_tile=0, sh_half=False, rasterize_mode=None):
    """A splat_render_desc. sh_degree: None for every degree the scene has, 0..3 for that degree
    (0 is degree 0 here, as on the command line: SPLAT_SH_DEGREE_0); rasterize_mode: None or
    "classic", "antialiased"."""
    d = _RenderDesc()
    d.rasterize_mode = _mode(rasterize_mode or "classic")
    if sh_degree is not None:
        if sh_degree not in (0, 1, 2, 3):
            raise ValueError(f"sh_degree must be None or 0..3, got {sh_degree!r}")
        d.sh_degree = _SH_DEGREE_0 if sh_degree == 0 else sh_degree
    if background is not None:
        bg = _floats(background, (3,), "background")
        d.background = (_f32 * 3)(*bg)
    d.max_gaussians_per_tile = int(max_gaussians_per_tile or 0)
    if not 0 <= d.max_gaussians_per_tile == (max_gaussians_per_tile or 0) <= 2**32 - 1:
        raise ValueError(f"max_gaussians_per_tile must be in 0..{2**32 - 1}, got {max_gaussians_per_tile}")
    d.sh_half = bool(sh_half)
    return d


def _scene(scene):
    if not isinstance(scene, Scene):
        raise TypeError(f"expected a Scene, got {type(scene).__name__}")
    return scene


def _camera(camera):
    if not isinstance(camera, Camera):
        raise TypeError(f"expected a Camera, got {type(camera).__name__}")
    return camera


def render(scene, camera, *, sh_degree=None, background=None, max_gaussians_per_tile=0, sh_half=False,
           rasterize_mode=None, ctx=None):
    """Renders a Scene from a Camera: an image [H,W,3] float32 (a list of them for a list of
    cameras). sh_degree None: all the scene has; background (r,g,b) in [0,1], None: black;
    max_gaussians_per_tile 0: unlimited; sh_half: SH stored as half floats on the device;
    rasterize_mode None: the scene's (scene.rasterize_mode), or "classic", "antialiased"
    (docs/RASTER.md 1.5)."""
    _scene(scene)
    cams = [_camera(c) for c in camera] if isinstance(camera, (list, tuple)) else [_camera(camera)]
    desc = _render_desc(sh_degree, background, max_gaussians_per_tile, sh_half, rasterize_mode or scene.rasterize_mode)
    carr = (_Camera * max(len(cams), 1))(*[c._c() for c in cams])
    images = (_fptr * max(len(cams), 1))()
    cs, err = scene._c(), _Error()
    _check(_lib.splat_render(_ctx(ctx), ctypes.byref(cs), carr, len(cams), ctypes.byref(desc), images, ctypes.byref(err)),
           err)
    out = []
    try:
        for k, c in enumerate(cams):
            out.append(np.ctypeslib.as_array(images[k], shape=(c.height, c.width, 3)).copy())
    finally:
        for k in range(len(cams)):
            _lib.splat_free(images[k])
    return out if isinstance(camera, (list, tuple)) else out[0]


Backward = namedtuple("Backward", "image alpha grads")
Backward.__doc__ = """What render_backward returns: the forward render image [H,W,3] and alpha
[H,W] (1 - final transmittance), and grads, a Scene whose arrays are dL/d(means), dL/d(log_scales),
dL/d(quats), dL/d(opacity logits) and dL/d(SH) (zero above the rendered degree)."""


def render_backward(scene, camera, d_rgb, d_alpha=None, *, sh_degree=None, background=None, max_gaussians_per_tile=0,
                    sh_half=False, rasterize_mode=None, ctx=None):
    """The rasterizer's backward: given dL/d(image) d_rgb [H,W,3] and dL/d(alpha) d_alpha [H,W]
    (None: zero) of a scalar loss L of the render of `scene` from `camera`, returns Backward(image,
    alpha, grads). Options as render's. Deterministic: the same inputs give the same bits."""
    _scene(scene)
    _camera(camera)
    h, w = camera.height, camera.width
    d_rgb = _floats(d_rgb, (h, w, 3), "d_rgb")
    d_alpha = None if d_alpha is None else _floats(d_alpha, (h, w), "d_alpha")
    desc = _render_desc(sh_degree, background, max_gaussians_per_tile, sh_half, rasterize_mode or scene.rasterize_mode)
    image, alpha = np.empty((h, w, 3), np.float32), np.empty((h, w), np.float32)
    cs, grads, cam, err = scene._c(), _Scene(), camera._c(), _Error()
    st = _lib.splat_render_backward(_ctx(ctx), ctypes.byref(cs), ctypes.byref(cam), ctypes.byref(desc), _ptr(d_rgb),
                                    _ptr(d_alpha), ctypes.byref(grads), _ptr(image), _ptr(alpha), ctypes.byref(err))
    _check(st, err)
    return Backward(image, alpha, Scene._take(grads))


# ------------------------------------------------------------------ training

_BACKGROUND = {"auto": 0, "color": 1, "random": 2}
_STRATEGY = {None: 0, "default": 0, "mcmc": 1}


class Trainer:
    """Training on a dataset folder (COLMAP or NeRF-synthetic), splat_trainer. The options are the
    fields of splat_train_desc; None or 0 takes the default written beside the field in splatc.h
    (gsplat's recipe: 30000 steps, ...), except as noted:

        images_factor, eval, steps, seed (default 0; the command line's is 42), init_points,
        init_ply, progress_ms, profile, refine_start, refine_every, refine_stop, reset_every,
        max_gaussians, isect_capacity, stream_images, identity_quats, selective_adam
                                                          as in splat_train_desc
        eval_scale       None: 1; evaluate() renders each view at round(eval_scale x its size) against
                         its image resampled to that size (splat_train_desc.eval_scale), in (0, 8]
        sh_degree        None: 3 (or what init_ply has); 0..3: that degree (0 is degree 0)
        background       None or "auto": white for images with alpha, else black; (r,g,b): that
                         colour; "random": a random colour every step
        max_gaussians_per_tile              render.max_gaussians_per_tile
        rasterize_mode   None or "classic", "antialiased" (render.rasterize_mode; a scene or
                         checkpoint trained antialiased goes on so)
        strategy         None or "default" (gsplat's default), or "mcmc" (its MCMCStrategy)
        progress         a function called with a dict (step, steps, loss, psnr, n_gaussians,
                         iters_per_sec, eta_sec, memory_cap and memory_cap_step: where the GPU's
                         free memory stopped the growth, 0 when it did not; refines, cloned, split
                         and pruned: the default strategy's refines so far and their decisions,
                         summed; refines_in_place: of the refines, those that moved the rows in
                         place) every progress_ms; the latest is also .progress

    The dataset is loaded and the Gaussians initialised here."""

    _OPTIONS = ("images_factor", "eval", "eval_scale", "steps", "sh_degree", "background", "max_gaussians_per_tile",
                "rasterize_mode", "strategy", "seed", "init_points", "init_ply", "progress", "progress_ms", "profile",
                "refine_start", "refine_every", "refine_stop", "reset_every", "max_gaussians", "isect_capacity",
                "stream_images", "identity_quats", "selective_adam")

    def __init__(self, data, ctx=None, **options):
        unknown = sorted(set(options) - set(self._OPTIONS))
        if unknown:
            raise TypeError(f"unknown Trainer option(s) {', '.join(unknown)}; the options are {', '.join(self._OPTIONS)}")
        o = {k: options.get(k) for k in self._OPTIONS}
        d = _TrainDesc()
        self._keep = [_path(data, "data")]  # the strings the descriptor points to
        d.data = self._keep[0]
        for name in ("images_factor", "steps", "init_points", "progress_ms", "refine_start", "refine_every",
                     "refine_stop", "reset_every", "max_gaussians", "isect_capacity", "seed"):
            v, most = int(o[name] or 0), 2**64 - 1 if name == "seed" else 2**32 - 1
            if not 0 <= v <= most:
                raise ValueError(f"{name} must be in 0..{most}, got {v}")
            setattr(d, name, v)
        for name in ("eval", "profile", "stream_images", "identity_quats", "selective_adam"):
            setattr(d, name, bool(o[name]))
        d.eval_scale = float(o["eval_scale"] or 0)  # the library refuses what is out of range
        bg = o["background"]
        if isinstance(bg, str):
            if bg not in _BACKGROUND or bg == "color":
                raise ValueError(f"background must be None, 'auto', 'random' or (r, g, b), got {bg!r}")
            d.background = _BACKGROUND[bg]
            bg = None
        elif bg is not None:
            d.background = _BACKGROUND["color"]
        d.render = _render_desc(o["sh_degree"], bg, o["max_gaussians_per_tile"], rasterize_mode=o["rasterize_mode"])
        if o["strategy"] not in _STRATEGY:
            raise ValueError(f"strategy must be None, 'default' or 'mcmc', got {o['strategy']!r}")
        d.strategy = _STRATEGY[o["strategy"]]
        if o["init_ply"] is not None:
            self._keep.append(_path(o["init_ply"], "init_ply"))
            d.init_ply = self._keep[-1]
        self.progress = None
        self._user_progress = o["progress"]
        self._callback_error = None
        self._callback = _PROGRESS_FN(self._on_progress)
        d.progress = self._callback
        self._owner = ctx if ctx is not None else default_context()
        self._ptr, err = _vp(), _Error()
        _check(_lib.splat_trainer_init(ctypes.byref(self._ptr), self._owner._handle(), ctypes.byref(d), ctypes.byref(err)),
               err)
        self._owner._users.add(self)

    def _on_progress(self, user, p):
        p = p.contents
        self.progress = {"step": p.step, "steps": p.steps, "loss": p.loss, "psnr": p.psnr,
                         "n_gaussians": p.n_gaussians, "iters_per_sec": p.iters_per_sec, "eta_sec": p.eta_sec,
                         "memory_cap": p.memory_cap, "memory_cap_step": p.memory_cap_step, "refines": p.refines,
                         "cloned": p.cloned, "split": p.split, "pruned": p.pruned,
                         "refines_in_place": p.refines_in_place}
        if self._user_progress is not None and self._callback_error is None:
            try:
                self._user_progress(dict(self.progress))
            except BaseException as e:  # raised again when the C call returns
                self._callback_error = e

    def _handle(self):
        if not self._ptr:
            raise ValueError("the trainer is closed")
        return self._ptr

    def _run(self, until):
        err = _Error()
        st = _lib.splat_trainer_run(self._handle(), until, ctypes.byref(err))
        if self._callback_error is not None:
            e, self._callback_error = self._callback_error, None
            raise e
        _check(st, err)
        return self.steps_done

    def step(self, n=1):
        """Runs n more steps (fewer at the end of the run); returns the steps done."""
        if n < 1:
            raise ValueError(f"step(n) needs n >= 1, got {n}")
        return self._run(min(self.steps_done + int(n), self.steps))

    def run(self, until=None):
        """Runs until step `until` (None: the end of the run); returns the steps done."""
        return self._run(0 if until is None else min(int(until), self.steps))

    @property
    def steps_done(self):
        return _lib.splat_trainer_step(self._handle())

    @property
    def steps(self):
        """The steps of the whole run."""
        return _lib.splat_trainer_steps(self._handle())

    @property
    def count(self):
        """The Gaussians of the model now."""
        return _lib.splat_trainer_count(self._handle())

    @property
    def seed(self):
        """The run's seed: the one asked for, or the checkpoint's after resume (a resume keeps it)."""
        return _lib.splat_trainer_seed(self._handle())

    def scene(self):
        """The current Gaussians, a Scene (a copy)."""
        cs, err = _Scene(), _Error()
        st = _lib.splat_trainer_scene(self._handle(), ctypes.byref(cs), ctypes.byref(err))
        if st != 0:
            _lib.splat_scene_free(ctypes.byref(cs))
            _check(st, err)
        return Scene._take(cs)

    def save(self, path):
        """Writes a checkpoint (parameters, optimizer state, step); resume() continues from it bit
        for bit. The Gaussians alone, for viewers: trainer.scene().save_ply(path)."""
        err = _Error()
        _check(_lib.splat_trainer_save(self._handle(), _path(path, "path"), ctypes.byref(err)), err)

    def resume(self, path):
        """Continues from a checkpoint written by save()."""
        err = _Error()
        _check(_lib.splat_trainer_resume(self._handle(), _path(path, "path"), ctypes.byref(err)), err)

    def evaluate(self, render_dir=None):
        """PSNR, SSIM and L1 on the test views (every view when there are none), as a dict: the
        means, and under "views" each view's {name, psnr, ssim, l1, psnr_full} in the order
        evaluated (metrics.json's form); writes each render as a PNG into render_dir when given."""
        cap = _lib.splat_trainer_views(self._handle(), None, 0)
        views, err = (_EvalView * max(cap, 1))(), _Error()
        res = _EvalResult(views=ctypes.cast(views, ctypes.POINTER(_EvalView)), views_cap=cap)
        rdir = None if render_dir is None else _path(render_dir, "render_dir")
        _check(_lib.splat_trainer_eval(self._handle(), rdir, ctypes.byref(res), ctypes.byref(err)), err)
        out = {name: getattr(res, name) for name, _ in _EvalResult._fields_ if not name.startswith("views")}
        out["views"] = [{"name": v.name.decode(errors="replace"), **{k: getattr(v, k) for k in ("psnr", "ssim", "l1", "psnr_full")}}
                        for v in views[:min(res.n_views, cap)]]
        return out

    def profile(self):
        """With profile=True: [(stage, mean GPU ms per iteration)] in pipeline order."""
        stages = (_StageTime * 64)()
        n = _lib.splat_trainer_profile(self._handle(), stages, 64)
        return [(stages[k].name.decode(), stages[k].ms) for k in range(min(n, 64))]

    def diagnostics(self):
        """(how many non-finite gradients were withheld, a description of the first)."""
        buf = ctypes.create_string_buffer(1024)
        n = _lib.splat_trainer_diagnostics(self._handle(), buf, len(buf))
        return n, buf.value.decode(errors="replace")

    def close(self):
        if getattr(self, "_ptr", None):
            _lib.splat_trainer_free(self._ptr)
            self._ptr = _vp()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        if _lib is not None:  # not at interpreter shutdown
            self.close()
