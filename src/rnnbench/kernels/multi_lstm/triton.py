"""The LSTM cell's pointwise step as Triton kernels: the GPU cell of ``multi_lstm``'s recurrence
(and so of ``residual_lstm`` and ``fhe_upper``).

Per time step the recurrence runs one batched matrix multiply (cuBLAS) and one of
these kernels, which does the whole cell (the recurrent term added, four
activations, c, tanh(c), h and the optional lateral residual) in registers;
backward, one kernel gives all four gate gradients and dL/dc_{t-1}. One program
owns one (direction, row) and BLOCK_H units. Same interface as
``fused.TorchCell``.

Imported only when the Triton implementation is asked for, so the package works
without Triton. Under ``TRITON_INTERPRET=1`` (the CPU tests) autotuning would rerun
the slow interpreter once per config, so one config is used there.
"""
from __future__ import annotations

import os

import triton
import triton.language as tl


def autotune_configs() -> list[triton.Config]:
    """Blocks of the hidden dimension to try (one under the interpreter); ``fhe_upper``'s carry
    kernels use the same."""
    if os.environ.get("TRITON_INTERPRET") == "1":
        return [triton.Config({"BLOCK_H": 16}, num_warps=1)]
    return [
        triton.Config({"BLOCK_H": block}, num_warps=warps)
        for block, warps in ((32, 1), (64, 1), (128, 1), (128, 2), (256, 2), (256, 4), (512, 4))
    ]


@triton.jit
def _tanh(v):
    return 2.0 * tl.sigmoid(2.0 * v) - 1.0


# Updated in place (a forward, dc backward): autotuning restores them between its trial runs.
# Row counts (n, m_rec) change from step to step, and with FHE's sampled gates from call to call;
# Triton compiles a kernel again for an integer argument that is 1 or a multiple of 16 where it was
# not before (a compile inside a timed step, long after warm-up). They only index rows, so they are
# passed unspecialised: one compiled kernel for every count.
@triton.autotune(configs=autotune_configs(), key=["H", "HAS_PREV", "HAS_R"], restore_value=["a_ptr"])
@triton.jit(do_not_specialize=["n"])
def _forward_kernel(
    a_ptr, rec_ptr, cp_ptr, c_ptr, tc_ptr, h_ptr, r_ptr,
    n, H,
    a_sd, a_sr, rec_sd, rec_sr, cp_sd, cp_sr, c_sd, c_sr, tc_sd, tc_sr, h_sd, h_sr, r_sd, r_sr,
    HAS_PREV: tl.constexpr, HAS_R: tl.constexpr, BLOCK_H: tl.constexpr,
):
    pid = tl.program_id(0).to(tl.int64)
    d, row = pid // n, pid % n
    cols = tl.program_id(1) * BLOCK_H + tl.arange(0, BLOCK_H)
    m = cols < H
    a = a_ptr + d * a_sd + row * a_sr + cols
    zi = tl.load(a, mask=m, other=0.0).to(tl.float32)
    zf = tl.load(a + H, mask=m, other=0.0).to(tl.float32)
    zg = tl.load(a + 2 * H, mask=m, other=0.0).to(tl.float32)
    zo = tl.load(a + 3 * H, mask=m, other=0.0).to(tl.float32)
    rec = rec_ptr + d * rec_sd + row * rec_sr + cols  # the recurrent term and the bias
    zi += tl.load(rec, mask=m, other=0.0)
    zf += tl.load(rec + H, mask=m, other=0.0)
    zg += tl.load(rec + 2 * H, mask=m, other=0.0)
    zo += tl.load(rec + 3 * H, mask=m, other=0.0)
    i, f, g, o = tl.sigmoid(zi), tl.sigmoid(zf), _tanh(zg), tl.sigmoid(zo)
    c = i * g
    if HAS_PREV:
        c += f * tl.load(cp_ptr + d * cp_sd + row * cp_sr + cols, mask=m, other=0.0)
    tc = _tanh(c)
    h = o * tc
    if HAS_R:
        h += tl.load(r_ptr + d * r_sd + row * r_sr + cols, mask=m, other=0.0)
    tl.store(a, i, mask=m)
    tl.store(a + H, f, mask=m)
    tl.store(a + 2 * H, g, mask=m)
    tl.store(a + 3 * H, o, mask=m)
    tl.store(c_ptr + d * c_sd + row * c_sr + cols, c, mask=m)
    tl.store(tc_ptr + d * tc_sd + row * tc_sr + cols, tc, mask=m)
    tl.store(h_ptr + d * h_sd + row * h_sr + cols, h, mask=m)


@triton.autotune(configs=autotune_configs(), key=["H", "HAS_PREV", "HAS_REC", "HAS_DR"], restore_value=["dc_ptr"])
@triton.jit(do_not_specialize=["n", "m_rec"])
def _backward_kernel(
    a_ptr, da_ptr, cp_ptr, tc_ptr, dho_ptr, dhr_ptr, dc_ptr, dr_ptr,
    n, m_rec, H,
    a_sd, a_sr, da_sd, da_sr, cp_sd, cp_sr, tc_sd, tc_sr, dho_sd, dho_sr, dhr_sd, dhr_sr, dc_sd, dc_sr, dr_sd, dr_sr,
    HAS_PREV: tl.constexpr, HAS_REC: tl.constexpr, HAS_DR: tl.constexpr, BLOCK_H: tl.constexpr,
):
    pid = tl.program_id(0).to(tl.int64)
    d, row = pid // n, pid % n
    cols = tl.program_id(1) * BLOCK_H + tl.arange(0, BLOCK_H)
    m = cols < H
    a = a_ptr + d * a_sd + row * a_sr + cols
    i = tl.load(a, mask=m, other=0.0)
    f = tl.load(a + H, mask=m, other=0.0)
    g = tl.load(a + 2 * H, mask=m, other=0.0)
    o = tl.load(a + 3 * H, mask=m, other=0.0)
    tc = tl.load(tc_ptr + d * tc_sd + row * tc_sr + cols, mask=m, other=0.0)
    dh = tl.load(dho_ptr + d * dho_sd + row * dho_sr + cols, mask=m, other=0.0)
    if HAS_REC:
        # the recurrent gradient covers the rows still active at step t + 1 (written
        # as a bound on cols, not m & (row < m_rec), which the interpreter mistypes)
        in_rec = cols < H * (row < m_rec).to(tl.int32)
        dh += tl.load(dhr_ptr + d * dhr_sd + row * dhr_sr + cols, mask=in_rec, other=0.0)
    if HAS_DR:
        tl.store(dr_ptr + d * dr_sd + row * dr_sr + cols, dh, mask=m)
    dc_at = dc_ptr + d * dc_sd + row * dc_sr + cols
    dc = tl.load(dc_at, mask=m, other=0.0) + dh * o * (1.0 - tc * tc)
    if HAS_PREV:
        df = dc * tl.load(cp_ptr + d * cp_sd + row * cp_sr + cols, mask=m, other=0.0) * f * (1.0 - f)
    else:
        df = tl.zeros([BLOCK_H], dtype=tl.float32)
    da = da_ptr + d * da_sd + row * da_sr + cols
    tl.store(da, dc * g * i * (1.0 - i), mask=m)
    tl.store(da + H, df, mask=m)
    tl.store(da + 2 * H, dc * i * (1.0 - g * g), mask=m)
    tl.store(da + 3 * H, dh * tc * o * (1.0 - o), mask=m)
    tl.store(dc_at, dc * f, mask=m)


def _grid(D: int, n: int, H: int):
    return lambda meta: (D * n, triton.cdiv(H, meta["BLOCK_H"]))


def _strides(t, like):
    """(direction, row) strides; an absent tensor is replaced by a placeholder its flag keeps unread."""
    return (t if t is not None else like).stride()[:2]


class TritonCell:
    """The Triton cell, with the interface of ``fused.TorchCell``."""

    has_persistent_loops = True  # persistent.py can run the recurrence's step loops with this cell's arithmetic

    @staticmethod
    def forward(a, rec, c_prev, c, tanh_c, h, r):
        D, n, H = c.shape
        _forward_kernel[_grid(D, n, H)](
            a, rec, c if c_prev is None else c_prev, c, tanh_c, h, h if r is None else r,
            n, H, *a.stride()[:2], *rec.stride()[:2], *_strides(c_prev, c), *c.stride()[:2], *tanh_c.stride()[:2],
            *h.stride()[:2], *_strides(r, h),
            HAS_PREV=c_prev is not None, HAS_R=r is not None,
        )

    @staticmethod
    def backward(a, da, c_prev, tanh_c, dh_out, dh_rec, dc, dr):
        D, n, H = dh_out.shape
        _backward_kernel[_grid(D, n, H)](
            a, da, tanh_c if c_prev is None else c_prev, tanh_c, dh_out, dh_out if dh_rec is None else dh_rec, dc,
            dh_out if dr is None else dr,
            n, 0 if dh_rec is None else dh_rec.shape[1], H,
            *a.stride()[:2], *da.stride()[:2], *_strides(c_prev, tanh_c), *tanh_c.stride()[:2], *dh_out.stride()[:2],
            *_strides(dh_rec, dh_out), *dc.stride()[:2], *_strides(dr, dh_out),
            HAS_PREV=c_prev is not None, HAS_REC=dh_rec is not None, HAS_DR=dr is not None,
        )
