"""The gated linear scan on the CPU: one pass over time per direction in compiled C
(``cpu.c``), forward and a hand-written backward, batch rows split across threads.

A per-step torch loop pays a dozen op dispatches per time step for a few thousand flops
each; the scan itself is memory-bound, so a single fused pass is what CPUs can do. The
state is float32 for float32 and bfloat16 inputs and float64 for float64 ones (so
gradcheck can test the backward). Built by ``cbuild`` (flags there).
"""
from __future__ import annotations

import ctypes
import functools
import os
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import torch

from rnnbench.kernels import cbuild

C_SOURCE = Path(__file__).with_name("cpu.c")
# -march=native, else portable: the scan was always built so (without the 512-bit vector
# preference of the other pieces), and keeps its build.
TARGETS = (("-march=native",), ())
C_FLAGS = cbuild.BASE_FLAGS

# storage dtype -> (suffix of the C functions, state dtype)
_C_TYPES = {
    torch.float32: ("f32", torch.float32),
    torch.bfloat16: ("bf16", torch.float32),
    torch.float64: ("f64", torch.float64),
}


@functools.cache
def _cpu_library() -> ctypes.CDLL:
    """Build (once per source, flags, compiler and CPU) and load the C scan."""
    lib = cbuild.build("gated_scan", C_SOURCE, flags=C_FLAGS, targets=TARGETS)
    i64, ptr = ctypes.c_int64, ctypes.c_void_p
    strided = [ptr, i64, i64]
    for suffix, *_ in _C_TYPES.values():
        flags = [ctypes.c_int, ctypes.c_int]
        getattr(lib, f"gs_forward_{suffix}").argtypes = [i64] * 6 + strided * 4 + [ptr] * 3 + flags
        getattr(lib, f"gs_backward_{suffix}").argtypes = [i64] * 6 + strided * 5 + [ptr] * 5 + flags
    return lib


@functools.cache
def _pool(threads: int, pid: int) -> ThreadPoolExecutor:
    """Worker threads for the C calls; per process, as a forked child inherits no threads."""
    return ThreadPoolExecutor(threads, thread_name_prefix="gated_scan")


def _tiles(B: int, D: int) -> list[tuple[int, int, int, int]]:
    """(b0, b1, d0, d1) tiles, one per thread of torch's count: batch rows, or channel
    ranges when the batch is smaller. A scan with fewer than 4096 channel-rows per
    thread stays on the calling thread, where handing it off would cost more."""
    threads = max(1, min(torch.get_num_threads(), B * D // 4096))
    if B >= threads:
        edges = [B * i // threads for i in range(threads + 1)]
        return [(edges[i], edges[i + 1], 0, D) for i in range(threads) if edges[i] < edges[i + 1]]
    edges = [(D * i // threads) // 16 * 16 for i in range(threads)] + [D]
    return [(0, B, edges[i], edges[i + 1]) for i in range(threads) if edges[i] < edges[i + 1]]


def _run_tiles(fn, T: int, B: int, D: int, *args) -> None:
    """fn(T, D, b0, b1, d0, d1, *args) over the tiles, in parallel (ctypes releases the GIL)."""
    tiles = _tiles(B, D)
    if len(tiles) == 1:
        fn(T, D, *tiles[0], *args)
        return
    list(_pool(len(tiles), os.getpid()).map(lambda tile: fn(T, D, *tile, *args), tiles))


def _strided(t: torch.Tensor | None) -> list:
    return [None, 0, 0] if t is None else [t.data_ptr(), t.stride(0), t.stride(1)]


def _storage(*tensors: torch.Tensor | None) -> tuple[torch.dtype, list]:
    """The C kernels read f, x, o and dh in one storage type: bfloat16 only if all
    are, float64 if any is, float32 otherwise (callers pass one dtype, so the
    conversion is a no-op in practice)."""
    dtypes = {t.dtype for t in tensors if t is not None}
    if dtypes == {torch.bfloat16}:
        dtype = torch.bfloat16
    else:
        dtype = torch.float64 if torch.float64 in dtypes else torch.float32
    return dtype, [None if t is None else t.to(dtype) for t in tensors]


class Backend:
    """The compiled C scan behind ``gated_scan``'s autograd function."""

    @staticmethod
    def forward(f, x, o, c0, mask, reverse, logits, save):
        B, T, D = x.shape
        out_dtype = x.dtype
        dtype, (f, x, o) = _storage(f, x, o)
        suffix, state = _C_TYPES[dtype]
        h = torch.empty(B, T, D, dtype=dtype)
        c = torch.zeros(B, D, dtype=state) if c0 is None else c0.to(state).contiguous().clone()
        c_prev = torch.empty(B, T, D, dtype=state) if save else None
        _run_tiles(
            getattr(_cpu_library(), f"gs_forward_{suffix}"), T, B, D,
            *_strided(f), *_strided(x), *_strided(o), *_strided(mask.view(torch.uint8)),
            h.data_ptr(), None if c_prev is None else c_prev.data_ptr(), c.data_ptr(), int(reverse), int(logits),
        )
        return h.to(out_dtype), c, c_prev

    @staticmethod
    def backward(f, x, o, mask, c_prev, dh, dc_last, reverse, logits):
        B, T, D = x.shape
        dtype, (f, x, o, dh) = _storage(f, x, o, dh)
        suffix, state = _C_TYPES[dtype]
        df, dx = torch.empty(B, T, D, dtype=dtype), torch.empty(B, T, D, dtype=dtype)
        do = None if o is None else torch.empty(B, T, D, dtype=dtype)
        g = dc_last.to(state).contiguous().clone()
        _run_tiles(
            getattr(_cpu_library(), f"gs_backward_{suffix}"), T, B, D,
            *_strided(f), *_strided(x), *_strided(o), *_strided(mask.view(torch.uint8)),
            *_strided(dh), c_prev.data_ptr(), df.data_ptr(), dx.data_ptr(), None if do is None else do.data_ptr(),
            g.data_ptr(), int(reverse), int(logits),
        )
        return df, dx, do, g
