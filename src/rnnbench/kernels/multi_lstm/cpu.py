"""The LSTM cell's pointwise step compiled in C (``cpu.c``): the CPU cell of ``multi_lstm``'s
recurrence (and so of ``residual_lstm`` and ``fhe_upper``).

Per time step the recurrence is one matrix multiply plus the pointwise cell: four
activations, c, tanh(c) and h forward; seven products backward. As torch operations
(``fused.TorchCell``, the "torch" implementation) that is about 9 (forward) and 16
(backward) op dispatches, each a memory pass over a few tens of thousands of values,
together about as long as the step's matrix multiply on a CPU; here each direction of the
step is one pass. Built by ``cbuild`` (flags and targets there). float32 uses a
vectorisable exp (about 2 ulp); float64 (there for gradcheck) uses libm.
"""
from __future__ import annotations

import ctypes
import functools
from pathlib import Path

import torch

from rnnbench.kernels import cbuild

C_SOURCE = Path(__file__).with_name("cpu.c")
C_FLAGS = cbuild.BASE_FLAGS

_C_TYPES = {torch.float32: ("f32", "float", "exp_f32"), torch.float64: ("f64", "double", "exp_f64")}
DTYPES = tuple(_C_TYPES)


@functools.cache
def _library() -> ctypes.CDLL:
    """Build (once per source, flags, compiler and CPU) and load the C cell."""
    lib = cbuild.build("lstm_cell", C_SOURCE, flags=C_FLAGS)
    i64, ptr = ctypes.c_int64, ctypes.c_void_p
    strided = [ptr, i64, i64]
    for suffix, _, _ in _C_TYPES.values():
        getattr(lib, f"cell_forward_{suffix}").argtypes = [i64] * 3 + strided * 7
        getattr(lib, f"cell_backward_{suffix}").argtypes = [i64] * 3 + strided * 6 + [i64] + strided * 2
    return lib


def _strided(t: torch.Tensor | None) -> list:
    """(pointer, direction stride, row stride) of a [D, n, X] view with unit last stride."""
    if t is None:
        return [None, 0, 0]
    return [t.data_ptr(), t.stride(0), t.stride(1)]


class CCell:
    """The compiled cell, with the interface of ``fused.TorchCell``."""

    @staticmethod
    def forward(a, rec, c_prev, c, tanh_c, h, r):
        D, n, H = c.shape
        fn = getattr(_library(), f"cell_forward_{_C_TYPES[a.dtype][0]}")
        fn(D, n, H, *_strided(a), *_strided(rec), *_strided(c_prev), *_strided(c), *_strided(tanh_c), *_strided(h), *_strided(r))

    @staticmethod
    def backward(a, da, c_prev, tanh_c, dh_out, dh_rec, dc, dr):
        D, n, H = dh_out.shape
        fn = getattr(_library(), f"cell_backward_{_C_TYPES[a.dtype][0]}")
        m = 0 if dh_rec is None else dh_rec.shape[1]
        fn(D, n, H, *_strided(a), *_strided(da), *_strided(c_prev), *_strided(tanh_c), *_strided(dh_out), *_strided(dh_rec), m,
           *_strided(dc), *_strided(dr))
