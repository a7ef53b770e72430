"""The MZU scan's small per-step pieces compiled in C (``cpu.c``): the CPU ops of the
fused scan (``fused.py``), the "cpu" implementation of ``mzu_transition``.

Between its matrix multiplies an MZU cell step is made of many tiny operations: zone
norms and the zone cosine, N x N self-attention per (M-function, sequence), layer
norm, tanh, sigmoid and the gated state update. As torch operations (``fused.TorchOps``,
the "torch" implementation) each costs an op dispatch (5-10 us) for a few thousand flops,
and the N x N attention products as ``bmm`` cost about 100 us each (one small BLAS call
per sequence). Here each piece, forward or backward, is one pass over its rows. float32
(exp to about 2 ulp, vectorisable) and float64 (libm, for gradcheck). Built by ``cbuild``.
"""
from __future__ import annotations

import ctypes
import functools
from pathlib import Path

import torch

from rnnbench.kernels import cbuild

C_SOURCE = Path(__file__).with_name("cpu.c")
# Unlike the LSTM cell, these pieces are mostly sums (norms, dot products over d_z, layer
# norm statistics): letting the compiler reassociate them is what lets it vectorise them
# (a serial float sum waits for each add). Results stay within float rounding of the
# reference's, which sums in its own order too. -fassociative-math alone does not switch
# the process to flush-to-zero (only -ffast-math's startup file does).
C_FLAGS = (*cbuild.BASE_FLAGS, "-fassociative-math")
C_LIBS = ("-lm",)

_C_TYPES = {torch.float32: ("f32", "float", "exp_f32", "sqrt_f32"), torch.float64: ("f64", "double", "exp_f64", "sqrt_f64")}
DTYPES = tuple(_C_TYPES)


@functools.cache
def _library() -> ctypes.CDLL:
    """Build (once per source, flags, compiler and CPU) and load the C pieces."""
    lib = cbuild.build("mzu", C_SOURCE, flags=C_FLAGS, libs=C_LIBS)
    i64, ptr, f64 = ctypes.c_int64, ctypes.c_void_p, ctypes.c_double
    for suffix, scalar, _, _ in _C_TYPES.values():
        real = ctypes.c_float if scalar == "float" else ctypes.c_double
        getattr(lib, f"zones_forward_{suffix}").argtypes = [i64] * 4 + [ptr] * 6
        getattr(lib, f"zones_backward_{suffix}").argtypes = [i64] * 4 + [ptr] * 7
        getattr(lib, f"attention_forward_{suffix}").argtypes = [i64] * 3 + [real] + [ptr] * 3
        getattr(lib, f"attention_backward_{suffix}").argtypes = [i64] * 3 + [real] + [ptr] * 4
        getattr(lib, f"gate_forward_{suffix}").argtypes = [i64] * 3 + [ptr] * 3 + [f64] + [ptr] * 7
        getattr(lib, f"gate_backward_{suffix}").argtypes = [i64] * 3 + [ptr] * 13
    return lib


def _fn(name: str, dtype: torch.dtype):
    return getattr(_library(), f"{name}_{_C_TYPES[dtype][0]}")


def _ptr(t: torch.Tensor | None):
    return None if t is None else t.data_ptr()


class COps:
    """The compiled pieces, with the interface of ``fused.TorchOps`` (contiguous tensors)."""

    @staticmethod
    def zones(zb, F, N, d):
        B = zb.shape[0]
        z, u = torch.empty(F, B, N, d, dtype=zb.dtype), torch.empty(F, B, N, d, dtype=zb.dtype)
        norm, total, cosine = torch.empty(F, B, N, 1, dtype=zb.dtype), torch.empty(F, B, d, dtype=zb.dtype), torch.empty(B, dtype=zb.dtype)
        _fn("zones_forward", zb.dtype)(B, F, N, d, zb.data_ptr(), z.data_ptr(), u.data_ptr(), norm.data_ptr(),
                                       total.data_ptr(), cosine.data_ptr())
        return z, u, norm, total, cosine

    @staticmethod
    def zones_backward(dz, du, dcos, u, norm, total):
        F, B, N, d = u.shape
        dzb = torch.empty(B, F * N * d, dtype=u.dtype)
        dz, du = (None if t is None else t.contiguous() for t in (dz, du))
        _fn("zones_backward", u.dtype)(B, F, N, d, _ptr(dz), _ptr(du), _ptr(dcos), u.data_ptr(), norm.data_ptr(),
                                       total.data_ptr(), dzb.data_ptr())
        return dzb

    @staticmethod
    def attention(qkv, N, d, scale):
        G = qkv.shape[0] * qkv.shape[1] // N
        a, o = torch.empty(G, N, N, dtype=qkv.dtype), torch.empty(G * N, d, dtype=qkv.dtype)
        _fn("attention_forward", qkv.dtype)(G, N, d, scale, qkv.data_ptr(), a.data_ptr(), o.data_ptr())
        return o, a

    @staticmethod
    def attention_backward(do, qkv, a, scale):
        G, N, _ = a.shape
        dqkv = torch.empty(qkv.shape, dtype=qkv.dtype)
        _fn("attention_backward", qkv.dtype)(G, N, do.shape[-1], scale, qkv.data_ptr(), a.data_ptr(),
                                             do.contiguous().data_ptr(), dqkv.data_ptr())
        return dqkv

    @staticmethod
    def gate(m, s, drop, gamma, beta, eps, ln_row):
        _, B, H = m.shape
        new, cand, gate = (torch.empty(B, H, dtype=m.dtype) for _ in range(3))
        mean, rstd = torch.empty(B, dtype=m.dtype), torch.empty(B, dtype=m.dtype)
        _fn("gate_forward", m.dtype)(B, H, ln_row, m.data_ptr(), gamma.data_ptr(), beta.data_ptr(), eps, s.data_ptr(), _ptr(drop),
                                     new.data_ptr(), mean.data_ptr(), rstd.data_ptr(), cand.data_ptr(), gate.data_ptr())
        return new, (m, mean, rstd, cand, gate)

    @staticmethod
    def gate_backward(dnew, s, drop, gamma, beta, saved, grads, ln_row):
        m, mean, rstd, cand, gate = saved
        _, B, H = m.shape
        ds, dm = torch.empty(B, H, dtype=m.dtype), torch.empty(2, B, H, dtype=m.dtype)
        _fn("gate_backward", m.dtype)(B, H, ln_row, dnew.contiguous().data_ptr(), m.data_ptr(), mean.data_ptr(), rstd.data_ptr(),
                                      gamma.data_ptr(), cand.data_ptr(), gate.data_ptr(), s.data_ptr(), _ptr(drop),
                                      ds.data_ptr(), dm.data_ptr(), grads.gamma.data_ptr(), grads.beta.data_ptr())
        return ds, dm
