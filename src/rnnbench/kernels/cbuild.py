"""Building the kernels' compiled CPU pieces: compile once per (source, flags, compiler,
CPU), cache the shared library, load it with ctypes.

Each op's C is a real file beside its ``cpu.py`` (``<op>/cpu.c``, shipped as package
data), starting with ``#include "prelude.h"`` (this folder's). It is built by the system
C compiler (``$CC``, default ``cc``) into ``$RNNBENCH_CACHE/kernels`` (default
``.cache/rnnbench``) and loaded through ctypes: no torch headers (a build takes about a
second) and the GIL is released during a call. Each ``cpu.py`` declares its functions'
argument types on the library it gets back.

Flags, the same for every piece:

- ``-Wall -Wextra``: the sources compile without a warning (``tests/kernels/test_cbuild.py``
  builds each with ``-Werror``).
- The value-preserving part of ``-ffast-math`` (``-fno-trapping-math -fno-math-errno
  -ffinite-math-only -fno-signed-zeros``): it lets gcc vectorise the compare, select and
  min/max of the loops (with trapping math one form of the exp clamp ran 10x slower) but
  never reorders arithmetic, so results follow the references' order. Full
  ``-ffast-math`` would also, with gcc < 13, switch the whole process to flush-to-zero.
  A piece may add flags (the MZU's adds ``-fassociative-math``, see its ``cpu.py``).
- A target, the first the compiler takes of the piece's ``targets``: by default this
  CPU's instructions at their full vector width (gcc keeps AVX-512 code to 256-bit vectors
  unless asked; the LSTM cell ran 1.1-1.6x faster at 512 on this project's Xeon), then
  ``-march=native`` alone, then portable code. The gated scan asks for ``-march=native``
  or portable only (``GATED_SCAN_TARGETS``). The cache key includes the CPU's feature
  flags, so a library built for one CPU is never loaded on another.
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

HERE = Path(__file__).resolve().parent
PRELUDE = HERE / "prelude.h"

BASE_FLAGS = (
    "-O3", "-std=c99", "-fPIC", "-shared", "-Wall", "-Wextra",
    "-fno-trapping-math", "-fno-math-errno", "-ffinite-math-only", "-fno-signed-zeros",
)
NATIVE_TARGETS = (("-march=native", "-mprefer-vector-width=512"), ("-march=native",), ())


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


def command(cc: str, source: Path, out: Path, flags=BASE_FLAGS, target=(), libs=()) -> list[str]:
    """The compiler command line of one piece (``-I`` this folder, for prelude.h)."""
    return [cc, *flags, *target, f"-I{HERE}", str(source), "-o", str(out), *libs]


def build(name: str, source: Path, flags=BASE_FLAGS, targets=NATIVE_TARGETS, libs=()) -> ctypes.CDLL:
    """Compile ``source`` (unless a matching library is cached) and load it."""
    cc = compiler()
    if cc is None:
        raise RuntimeError(f"{name}: no C compiler found (install one or set CC)")
    version = subprocess.run([cc, "--version"], capture_output=True, text=True).stdout
    texts = [source.read_text(), PRELUDE.read_text()]
    key = hashlib.sha256("\0".join([*texts, *flags, *sum(map(list, targets), []), *libs, version, cpu_fingerprint()]).encode())
    library = cache_dir() / f"{name}_{key.hexdigest()[:16]}.so"
    if not library.exists():
        library.parent.mkdir(parents=True, exist_ok=True)
        # Build in a private folder and rename into place: parallel processes may race.
        with tempfile.TemporaryDirectory(dir=library.parent) as build_dir:
            out = Path(build_dir) / library.name
            for target in targets:
                result = subprocess.run(command(cc, source, out, flags, target, libs), capture_output=True, text=True)
                if result.returncode == 0:
                    break
            else:
                raise RuntimeError(f"{name}: compiling {source} with {cc} failed:\n{result.stderr}")
            os.replace(out, library)
    return ctypes.CDLL(str(library))
