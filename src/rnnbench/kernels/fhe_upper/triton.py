"""The FHE upper layer's carry as Triton kernels: each open gate's LSTM state copied forward in time.

``fhe_upper``'s cpu and triton implementations run the upper LSTM over the open positions only, compacted
to the front of each sequence (``updates`` [B, S, H], row k = the state after the
sequence's k-th open gate), then every real position t takes the state of the last
open gate at or before it. Here that carry is one kernel, and its adjoint another:
one program owns one sequence and BLOCK_H hidden units and loops over time inside,
the carried state (forward) or the accumulated gradient (backward) in registers.

- forward: at an open step load the next update row into the register state; write
  the state at every real step, 0 at padding and before the first open gate.
- backward: walking time backwards, add each real step's output gradient to the
  register accumulator; at an open step it is the whole gradient of that update row
  (the steps it was carried to): store it, restart from 0.

Imported only when the Triton implementation is asked for. Under ``TRITON_INTERPRET=1``
(the CPU tests) autotuning would rerun the slow interpreter once per config, so one
config is used there.
"""
from __future__ import annotations

import torch
import triton
import triton.language as tl

from rnnbench.kernels.multi_lstm.triton import autotune_configs  # the same hidden-size blocks as the LSTM cell


# S, the most open gates of a sequence, follows the sampled gates from call to call: unspecialised, so
# that a new S never compiles the kernel again (as multi_lstm.triton's row counts).
@triton.autotune(configs=autotune_configs(), key=["H"])
@triton.jit(do_not_specialize=["S"])
def _carry_forward_kernel(
    upd_ptr, open_ptr, mask_ptr, out_ptr,
    T, S, H,
    s_ob, s_ot, s_mb, s_mt,
    BLOCK_H: tl.constexpr,
):
    b = tl.program_id(0).to(tl.int64)
    cols = tl.program_id(1) * BLOCK_H + tl.arange(0, BLOCK_H)
    in_h = cols < H
    state = tl.zeros([BLOCK_H], dtype=tl.float32)
    k = 0  # next update row
    for t in range(T):
        is_open = tl.load(open_ptr + b * s_ob + t * s_ot).to(tl.int32)
        real = tl.load(mask_ptr + b * s_mb + t * s_mt).to(tl.int32)
        # written as bounds on cols, not in_h & flag, which the interpreter mistypes
        loads = cols < H * is_open
        row = tl.load(upd_ptr + (b * S + k) * H + cols, mask=loads, other=0.0).to(tl.float32)
        state = tl.where(loads, row, state)
        k += is_open
        out = tl.where(cols < H * real, state, 0.0)
        tl.store(out_ptr + (b * T + t) * H + cols, out.to(out_ptr.dtype.element_ty), mask=in_h)


@triton.autotune(configs=autotune_configs(), key=["H"])
@triton.jit(do_not_specialize=["S"])
def _carry_backward_kernel(
    dout_ptr, open_ptr, mask_ptr, count_ptr, dupd_ptr,
    T, S, H,
    s_db, s_dt, s_ob, s_ot, s_mb, s_mt,
    BLOCK_H: tl.constexpr,
):
    b = tl.program_id(0).to(tl.int64)
    cols = tl.program_id(1) * BLOCK_H + tl.arange(0, BLOCK_H)
    acc = tl.zeros([BLOCK_H], dtype=tl.float32)
    k = tl.load(count_ptr + b).to(tl.int32)  # one past the update row of the last open gate
    for i in range(T):
        t = T - 1 - i
        is_open = tl.load(open_ptr + b * s_ob + t * s_ot).to(tl.int32)
        real = tl.load(mask_ptr + b * s_mb + t * s_mt).to(tl.int32)
        acc += tl.load(dout_ptr + b * s_db + t * s_dt + cols, mask=cols < H * real, other=0.0).to(tl.float32)
        k -= is_open
        stores = cols < H * is_open
        tl.store(dupd_ptr + (b * S + k) * H + cols, acc.to(dupd_ptr.dtype.element_ty), mask=stores)
        acc = tl.where(stores, 0.0, acc)


def _grid(B: int, H: int):
    return lambda meta: (B, triton.cdiv(H, meta["BLOCK_H"]))


class Carry(torch.autograd.Function):
    """forward(updates [B, S, H], is_open [B, T] bool, mask [B, T] bool) -> states [B, T, H]."""

    @staticmethod
    def forward(ctx, updates, is_open, mask):
        B, S, H = updates.shape
        T = mask.shape[1]
        updates = updates.contiguous()
        is_open, mask = is_open.view(torch.uint8), mask.view(torch.uint8)
        out = torch.empty(B, T, H, dtype=updates.dtype, device=updates.device)
        _carry_forward_kernel[_grid(B, H)](updates, is_open, mask, out, T, S, H, *is_open.stride(), *mask.stride())
        ctx.save_for_backward(is_open, mask)
        ctx.S = S
        return out

    @staticmethod
    @torch.autograd.function.once_differentiable
    def backward(ctx, dout):
        is_open, mask = ctx.saved_tensors
        B, T, H = dout.shape
        if dout.stride(-1) != 1:
            dout = dout.contiguous()
        counts = is_open.sum(dim=1, dtype=torch.int32)
        # rows past a sequence's count get no gradient: zeros, not written by the kernel
        dupd = torch.zeros(B, ctx.S, H, dtype=dout.dtype, device=dout.device)
        _carry_backward_kernel[_grid(B, H)](
            dout, is_open, mask, counts, dupd, T, ctx.S, H, *dout.stride()[:2], *is_open.stride(), *mask.stride()
        )
        return dupd, None, None
