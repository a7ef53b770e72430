"""The whole LSTM recurrence of ``fused.recurrence`` in one Triton launch per pass.

The per-step recurrence (``fused``) launches a batched matrix multiply and a cell kernel at
every step, forward and backward. On a GPU those launches, not the arithmetic, set its
time: at RCRN's sizes the GPU is busy for 9-16% of a call (results/rcrn_table10_cuda.md,
profiles). Here one program owns one direction and BLOCK_B sorted rows of the batch and
loops over all steps itself: each step it multiplies its rows' h_{t-1} by the direction's
recurrent weight (read from L2, it fits there: 6 directions of 800 x 200 floats are 3.8 MB),
applies the cell and writes h_t, then waits at a barrier for its own threads before the
next step reads h_t (those reads skip L1, ``.cg``: what another thread of the program wrote
is read from L2). No program needs another's rows, so nothing is synchronised across
programs. The backward runs the same loop in reverse: dL/dh_t is the output's gradient
plus the gate gradients of step t+1 times the recurrent weight, and the gate gradients of
every step go to one buffer, from which ``fused`` takes the weight and input gradients as
large matrix multiplies.

Buffers are ``fused``'s internal ones ([D, T, B, ...], rows sorted by length, each direction
in its reading order), so this replaces only the step loops. The matrix products run in
IEEE float32 (``input_precision="ieee"``, not TF32): the results equal the per-step
recurrence's to float32 rounding.

Used where ``ENABLED`` is true, the cell is the Triton one and the recurrence runs in float32;
off by default until timed on a GPU against the per-step loops (scripts/bench_cost.py).
"""
from __future__ import annotations

import os
from contextlib import contextmanager

import torch
import triton
import triton.language as tl

from rnnbench.kernels.multi_lstm.triton import _tanh  # the cell kernels' tanh, so both compute the same

ENABLED = False


def _configs() -> list[triton.Config]:
    if os.environ.get("TRITON_INTERPRET") == "1":
        return [triton.Config({"BLOCK_B": 16, "BLOCK_H": 16, "BLOCK_K": 16}, num_warps=1)]
    return [
        triton.Config({"BLOCK_B": rows, "BLOCK_H": units, "BLOCK_K": 32}, num_warps=warps)
        for rows, units, warps in ((16, 32, 4), (16, 64, 4), (32, 32, 4), (32, 64, 8), (16, 128, 8))
    ]


# T and B change from batch to batch: passed unspecialised, so no batch compiles the kernel again (Triton
# specialises an integer that is 1 or a multiple of 16).
@triton.autotune(configs=_configs(), key=["H", "HAS_R"], restore_value=["acts_ptr"])
@triton.jit(do_not_specialize=["T", "B"])
def _forward_kernel(
    acts_ptr, w_ptr, bias_ptr, len_ptr, c_ptr, tc_ptr, h_ptr, r_ptr,
    T, B, H,
    sa_d, sa_t, sa_b, ss_d, ss_t, ss_b, sr_d, sr_t, sr_b,
    HAS_R: tl.constexpr, BLOCK_B: tl.constexpr, BLOCK_H: tl.constexpr, BLOCK_K: tl.constexpr,
):
    d = tl.program_id(0).to(tl.int64)
    rows = tl.program_id(1) * BLOCK_B + tl.arange(0, BLOCK_B)
    lengths = tl.load(len_ptr + rows, mask=rows < B, other=0)
    in_b = (rows < B).to(tl.int32)
    w_d = w_ptr + d * 4 * H * H  # w_hh [D, 4H, H], contiguous
    for t in range(T):
        live = (t < lengths).to(tl.int32)  # masks as bounds, not with &, which the interpreter mistypes
        for j in range(0, H, BLOCK_H):
            units = j + tl.arange(0, BLOCK_H)
            m = units[None, :] < H * live[:, None]  # [BLOCK_B, BLOCK_H]: live rows, real units
            bias = bias_ptr + d * 4 * H + units
            # the recurrent term and the bias first, then the input's (as fused adds them)
            ri = tl.zeros([BLOCK_B, BLOCK_H], tl.float32) + tl.load(bias, mask=units < H, other=0.0)[None, :]
            rf = tl.zeros([BLOCK_B, BLOCK_H], tl.float32) + tl.load(bias + H, mask=units < H, other=0.0)[None, :]
            rg = tl.zeros([BLOCK_B, BLOCK_H], tl.float32) + tl.load(bias + 2 * H, mask=units < H, other=0.0)[None, :]
            ro = tl.zeros([BLOCK_B, BLOCK_H], tl.float32) + tl.load(bias + 3 * H, mask=units < H, other=0.0)[None, :]
            if t > 0:
                for k in range(0, H, BLOCK_K):
                    ks = k + tl.arange(0, BLOCK_K)
                    hp = tl.load(h_ptr + d * ss_d + (t - 1) * ss_t + rows[:, None] * ss_b + ks[None, :],
                                 mask=ks[None, :] < H * live[:, None], other=0.0, cache_modifier=".cg")
                    wm = units[None, :] < H * (ks < H).to(tl.int32)[:, None]  # [BLOCK_K, BLOCK_H]
                    wt = w_d + units[None, :] * H + ks[:, None]  # W^T: w[d, gate * H + unit, k]
                    ri += tl.dot(hp, tl.load(wt, mask=wm, other=0.0), input_precision="ieee")
                    rf += tl.dot(hp, tl.load(wt + H * H, mask=wm, other=0.0), input_precision="ieee")
                    rg += tl.dot(hp, tl.load(wt + 2 * H * H, mask=wm, other=0.0), input_precision="ieee")
                    ro += tl.dot(hp, tl.load(wt + 3 * H * H, mask=wm, other=0.0), input_precision="ieee")
            a = acts_ptr + d * sa_d + t * sa_t + rows[:, None] * sa_b + units[None, :]
            i = tl.sigmoid(tl.load(a, mask=m, other=0.0) + ri)
            f = tl.sigmoid(tl.load(a + H, mask=m, other=0.0) + rf)
            g = _tanh(tl.load(a + 2 * H, mask=m, other=0.0) + rg)
            o = tl.sigmoid(tl.load(a + 3 * H, mask=m, other=0.0) + ro)
            s = d * ss_d + t * ss_t + rows[:, None] * ss_b + units[None, :]
            c = i * g
            if t > 0:
                c += f * tl.load(c_ptr + s - ss_t, mask=m, other=0.0, cache_modifier=".cg")
            tc = _tanh(c)
            h = o * tc
            if HAS_R:
                h += tl.load(r_ptr + d * sr_d + t * sr_t + rows[:, None] * sr_b + units[None, :], mask=m, other=0.0)
            tl.store(a, i, mask=m)  # the gate activations, for the backward
            tl.store(a + H, f, mask=m)
            tl.store(a + 2 * H, g, mask=m)
            tl.store(a + 3 * H, o, mask=m)
            tl.store(c_ptr + s, c, mask=m)
            tl.store(tc_ptr + s, tc, mask=m)
            tl.store(h_ptr + s, tl.where(m, h, 0.0), mask=units[None, :] < H * in_b[:, None])  # padding: 0
        tl.debug_barrier()  # h_t written by every thread before step t + 1 reads it


@triton.autotune(configs=_configs(), key=["H", "HAS_DR"], restore_value=["dc_ptr"])
@triton.jit(do_not_specialize=["T", "B"])
def _backward_kernel(
    acts_ptr, da_ptr, w_ptr, len_ptr, c_ptr, tc_ptr, dho_ptr, dc_ptr, dr_ptr,
    T, B, H,
    sa_d, sa_t, sa_b, ss_d, ss_t, ss_b,
    HAS_DR: tl.constexpr, BLOCK_B: tl.constexpr, BLOCK_H: tl.constexpr, BLOCK_K: tl.constexpr,
):
    # acts: the gate activations; da [D, T, B, 4H] (strides sa_*) gets the pre-activation gradients;
    # dho: dL/dh_t from the output; dc [D, B, H] (zeros): dL/dc carried from step to step.
    d = tl.program_id(0).to(tl.int64)
    rows = tl.program_id(1) * BLOCK_B + tl.arange(0, BLOCK_B)
    lengths = tl.load(len_ptr + rows, mask=rows < B, other=0)
    in_b = (rows < B).to(tl.int32)
    w_d = w_ptr + d * 4 * H * H
    for step in range(T):
        t = T - 1 - step
        live = (t < lengths).to(tl.int32)
        for j in range(0, H, BLOCK_H):
            units = j + tl.arange(0, BLOCK_H)
            m = units[None, :] < H * live[:, None]
            s = d * ss_d + t * ss_t + rows[:, None] * ss_b + units[None, :]
            dh = tl.load(dho_ptr + s, mask=m, other=0.0)
            if t < T - 1:  # + the gate gradients of step t + 1 (0 on rows it did not reach) times W_hh
                for k in range(0, 4 * H, BLOCK_K):
                    ks = k + tl.arange(0, BLOCK_K)
                    dap = tl.load(da_ptr + d * sa_d + (t + 1) * sa_t + rows[:, None] * sa_b + ks[None, :],
                                  mask=ks[None, :] < 4 * H * live[:, None], other=0.0, cache_modifier=".cg")
                    wm = units[None, :] < H * (ks < 4 * H).to(tl.int32)[:, None]
                    dh += tl.dot(dap, tl.load(w_d + ks[:, None] * H + units[None, :], mask=wm, other=0.0),
                                 input_precision="ieee")
            if HAS_DR:
                tl.store(dr_ptr + s, dh, mask=m)
            a = acts_ptr + d * sa_d + t * sa_t + rows[:, None] * sa_b + units[None, :]
            i = tl.load(a, mask=m, other=0.0)
            f = tl.load(a + H, mask=m, other=0.0)
            g = tl.load(a + 2 * H, mask=m, other=0.0)
            o = tl.load(a + 3 * H, mask=m, other=0.0)
            tc = tl.load(tc_ptr + s, mask=m, other=0.0)
            dc_at = dc_ptr + d * B * H + rows[:, None] * H + units[None, :]
            dc = tl.load(dc_at, mask=m, other=0.0, cache_modifier=".cg") + dh * o * (1.0 - tc * tc)
            if t > 0:
                df = dc * tl.load(c_ptr + s - ss_t, mask=m, other=0.0) * f * (1.0 - f)
            else:
                df = tl.zeros([BLOCK_B, BLOCK_H], tl.float32)
            out = da_ptr + d * sa_d + t * sa_t + rows[:, None] * sa_b + units[None, :]
            real = units[None, :] < H * in_b[:, None]
            tl.store(out, tl.where(m, dc * g * i * (1.0 - i), 0.0), mask=real)  # padding: no gradient
            tl.store(out + H, tl.where(m, df, 0.0), mask=real)
            tl.store(out + 2 * H, tl.where(m, dc * i * (1.0 - g * g), 0.0), mask=real)
            tl.store(out + 3 * H, tl.where(m, dh * tc * o * (1.0 - o), 0.0), mask=real)
            tl.store(dc_at, dc * f, mask=m)
        tl.debug_barrier()  # da_t written by every thread before step t - 1 reads it


@contextmanager
def enabled(on: bool = True):
    """``ENABLED`` set to ``on`` inside the block (the forward decides; its backward follows it)."""
    global ENABLED
    before, ENABLED = ENABLED, on
    try:
        yield
    finally:
        ENABLED = before


def _grid(D: int, B: int):
    return lambda meta: (D, triton.cdiv(B, meta["BLOCK_B"]))


def applies(x: torch.Tensor) -> bool:
    """Whether ``fused.recurrence``, with the Triton cell (which fused checks), runs its steps here: enabled, float32."""
    return ENABLED and x.dtype == torch.float32


def forward(acts, w_hh, bias, lengths, c, tanh_c, h, r) -> None:
    """The forward step loop of ``fused._Recurrence``: acts [D, T, B, 4H] (input projections, replaced by
    the gate activations), w_hh [D, 4H, H], bias [D, 4H], lengths [B] of the sorted rows; writes c, tanh_c,
    h [D, T, B, H] (h is 0 at padding); r: the residual added to h, or None."""
    D, T, B, H4 = acts.shape
    H = H4 // 4
    _forward_kernel[_grid(D, B)](
        acts, w_hh.contiguous(), bias.contiguous(), lengths, c, tanh_c, h, h if r is None else r,
        T, B, H, *acts.stride()[:3], *c.stride()[:3], *(h if r is None else r).stride()[:3],
        HAS_R=r is not None,
    )


def backward(acts, w_hh, lengths, c, tanh_c, dh_out, dr) -> torch.Tensor:
    """The backward step loop: the pre-activation gradients of every step, [D, T, B, 4H] (0 at padding);
    dr, if given, gets dL/dh_t."""
    D, T, B, H4 = acts.shape
    H = H4 // 4
    da = torch.empty_like(acts)
    dc = torch.zeros(D, B, H, dtype=acts.dtype, device=acts.device)
    dh_out = dh_out.contiguous()
    _backward_kernel[_grid(D, B)](
        acts, da, w_hh.contiguous(), lengths, c, tanh_c, dh_out, dc, dh_out if dr is None else dr,
        T, B, H, *acts.stride()[:3], *c.stride()[:3],
        HAS_DR=dr is not None,
    )
    return da
