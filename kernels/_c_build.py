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
