"""Building the kernels' compiled CPU pieces: compile once per (source, flags,
compiler, CPU), cache the shared library, load it with ctypes.

Shared by gated_scan, _lstm_cell_cpu and _mzu_cpu; each keeps its own C source
and declares its functions' argument types on the library it gets back.
"""
from __future__ import annotations

import ctypes
import hashlib
import os
import platform
import shutil
import subprocess
import tempfile
from pathlib import Path

# Fast math that keeps NaN/Inf-free results exact enough for the reference tests.
BASE_FLAGS = (
    "-O3", "-std=c99", "-fPIC", "-shared",
    "-fno-trapping-math", "-fno-math-errno", "-ffinite-math-only", "-fno-signed-zeros",
)
# Tried in order: the widest vectors this CPU has, then plain native, then portable.
NATIVE_TARGETS = (["-march=native", "-mprefer-vector-width=512"], ["-march=native"], [])


def c_prelude(exp_name: str = "exp_f32", rint_rounding: bool = False) -> str:
    """The C every compiled piece starts with: headers, INLINE and a vectorisable e^a.

    e^a is Cephes' expf to about 2 ulp. Its rounding of a * log2(e) to an integer is
    the (v + 1.5 * 2^23) - 1.5 * 2^23 trick unless ``rint_rounding``: a piece built with
    -fassociative-math (the MZU's) must use rintf, since that flag folds the trick to v.
    """
    if rint_rounding:
        rounded = "__builtin_rintf(a * 1.44269504088896341f)"
    else:
        rounded = "(a * 1.44269504088896341f + 12582912.0f) - 12582912.0f"
    return r"""
#include <math.h>
#include <stdint.h>
#include <string.h>
#define INLINE static inline __attribute__((always_inline))

INLINE float EXP_NAME(float a) {
    a = __builtin_fminf(__builtin_fmaxf(a, -87.0f), 88.0f);
    float n = ROUNDED;
    float r = a - n * 0.693359375f + n * 2.12194440e-4f;
    float p = 1.9875691500e-4f;
    p = p * r + 1.3981999507e-3f;
    p = p * r + 8.3334519073e-3f;
    p = p * r + 4.1665795894e-2f;
    p = p * r + 1.6666665459e-1f;
    p = p * r + 5.0000001201e-1f;
    p = p * r * r + r + 1.0f;
    int32_t bits = ((int32_t)n + 127) << 23;
    float scale;
    memcpy(&scale, &bits, sizeof scale);
    return p * scale;
}
""".replace("EXP_NAME", exp_name).replace("ROUNDED", rounded)


def compiler() -> str | None:
    """The C compiler (``$CC``, else ``cc``), or None where there is none."""
    return shutil.which(os.environ.get("CC", "cc"))


def cache_dir() -> Path:
    return Path(os.environ.get("RNNBENCH_CACHE", ".cache/rnnbench")) / "kernels"


def cpu_fingerprint() -> str:
    """What -march=native depends on: the CPU's feature flags where Linux lists them."""
    try:
        lines = Path("/proc/cpuinfo").read_text().splitlines()
    except OSError:
        lines = []
    flags = next((line for line in lines if line.startswith(("flags", "Features"))), platform.processor())
    return f"{platform.machine()} {flags}"


def build(name: str, source: str, flags=BASE_FLAGS, targets=NATIVE_TARGETS, libs=()) -> ctypes.CDLL:
    """Compile ``source`` (unless a matching library is cached) and load it."""
    cc = compiler()
    if cc is None:
        raise RuntimeError(f"{name}: no C compiler found (install one or set CC)")
    version = subprocess.run([cc, "--version"], capture_output=True, text=True).stdout
    key = hashlib.sha256("\0".join([source, *flags, *sum(map(list, targets), []), *libs, version, cpu_fingerprint()]).encode())
    library = cache_dir() / f"{name}_{key.hexdigest()[:16]}.so"
    if not library.exists():
        library.parent.mkdir(parents=True, exist_ok=True)
        # Build in a private folder and rename into place: parallel processes may race.
        with tempfile.TemporaryDirectory(dir=library.parent) as build_dir:
            src, out = Path(build_dir) / f"{name}.c", Path(build_dir) / library.name
            src.write_text(source)
            for target in targets:
                result = subprocess.run([cc, *flags, *target, str(src), "-o", str(out), *libs], capture_output=True, text=True)
                if result.returncode == 0:
                    break
            else:
                raise RuntimeError(f"{name}: compiling with {cc} failed:\n{result.stderr}")
            os.replace(out, library)
    return ctypes.CDLL(str(library))
