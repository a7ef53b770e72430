"""The gated linear scan as Triton kernels (see ``gated_scan``), forward and backward.

One program owns one sequence and BLOCK_D channels, the state in registers; the grid is
(batch, channel blocks). Two variants of each kernel:

- ``chunked`` (the default): the program reads BLOCK_T steps at once, a [BLOCK_T, BLOCK_D]
  tile of each input in one wide load, and runs the BLOCK_T steps as an associative scan
  over the tile (the recurrence c_t = a_t c_{t-1} + u_t composes: (a1, u1) then (a2, u2) is
  (a1 a2, a2 u1 + u2)), then carries the last state into the next tile. The loads of a
  tile do not wait on the state, so a step costs a share of one tile's memory latency
  instead of a whole one. The backward is the same scan of the adjoint, run in the
  opposite direction.
- ``step``: a loop over single steps, one load per input per step, each step waiting on
  the load of the last: simpler, slower by the memory latency per step on a GPU.

``VARIANT`` picks the one ``forward`` and ``backward`` launch, per pass (scripts/bench_scan.py
times both on the same inputs): chunked for both, as measured on an NVIDIA H200
(results/gpu_scan.md, code cd9f4be): at RCRN's sizes (batch 32, 400 channels) the chunked
kernels took 0.3-0.9x the step kernels' time from length 32 to 256, in both passes; on the
large problem the chunked forward 0.7-0.8x, the chunked backward 1.1x (still 75% of the
copy's bandwidth). Both agree with the reference to float32 rounding: the scan reassociates
the products. The gate sigmoids are applied in registers. Padded steps are neither loaded nor
change the state; their outputs and gradients are written as 0.

Imported only when the Triton implementation is asked for, so the package
works without Triton. Under ``TRITON_INTERPRET=1`` (the CPU tests) autotuning
would rerun the slow interpreter once per config, so one config is used there.
"""
from __future__ import annotations

import os

import torch
import triton
import triton.language as tl


VARIANTS = ("chunked", "step")
VARIANT = {"forward": "chunked", "backward": "chunked"}


def _configs() -> list[triton.Config]:
    if os.environ.get("TRITON_INTERPRET") == "1":
        return [triton.Config({"BLOCK_D": 16}, num_warps=1)]
    return [
        triton.Config({"BLOCK_D": block}, num_warps=warps)
        for block, warps in ((32, 1), (64, 1), (128, 1), (128, 2), (256, 2), (256, 4), (512, 4))
    ]


@triton.jit
def _gate(v, LOGITS: tl.constexpr):
    """A gate's value: the sigmoid of v where the gates come as logits."""
    if LOGITS:
        v = tl.sigmoid(v)
    return v


@triton.jit
def _output_gate_grad(gh, fg, cp, xv, og, LOGITS: tl.constexpr):
    """dL/do (of its logit where LOGITS) at one step: dL/dh times the step's new state."""
    gdo = gh * (fg * cp + (1.0 - fg) * xv)
    if LOGITS:
        gdo = gdo * og * (1.0 - og)
    return gdo


@triton.jit
def _forget_gate_grad(gc, fg, cp, xv, LOGITS: tl.constexpr):
    """dL/df (of its logit where LOGITS) at one step, from gc, dL/d(the step's new state)."""
    gdf = gc * (cp - xv)
    if LOGITS:
        gdf = gdf * fg * (1.0 - fg)
    return gdf


@triton.autotune(configs=_configs(), key=["D", "HAS_O", "LOGITS", "SAVE"])
@triton.jit
def _step_forward_kernel(
    f_ptr, x_ptr, o_ptr, mask_ptr, c0_ptr, h_ptr, c_prev_ptr, c_last_ptr,
    T, D,
    sf_b, sf_t, sx_b, sx_t, so_b, so_t, sm_b, sm_t,
    HAS_O: tl.constexpr, HAS_C0: tl.constexpr, SAVE: tl.constexpr, REVERSE: tl.constexpr,
    LOGITS: tl.constexpr, BLOCK_D: tl.constexpr,
):
    b = tl.program_id(0).to(tl.int64)
    cols = tl.program_id(1) * BLOCK_D + tl.arange(0, BLOCK_D)
    in_d = cols < D
    if HAS_C0:
        c = tl.load(c0_ptr + b * D + cols, mask=in_d, other=0.0).to(tl.float32)
    else:
        c = tl.zeros([BLOCK_D], dtype=tl.float32)
    for i in range(T):
        if REVERSE:
            t = T - 1 - i
        else:
            t = i
        # channels this step reads and updates: none at padding (written as a bound,
        # not in_d & keep, which the interpreter mistypes)
        m = cols < D * tl.load(mask_ptr + b * sm_b + t * sm_t).to(tl.int32)
        fg = _gate(tl.load(f_ptr + b * sf_b + t * sf_t + cols, mask=m, other=0.0).to(tl.float32), LOGITS)
        xv = tl.load(x_ptr + b * sx_b + t * sx_t + cols, mask=m, other=0.0).to(tl.float32)
        out = (b * T + t) * D + cols
        if SAVE:
            tl.store(c_prev_ptr + out, c, mask=m)
        cn = fg * c + (1.0 - fg) * xv
        hv = cn
        if HAS_O:
            og = _gate(tl.load(o_ptr + b * so_b + t * so_t + cols, mask=m, other=0.0).to(tl.float32), LOGITS)
            hv = og * cn
        c = tl.where(m, cn, c)
        tl.store(h_ptr + out, tl.where(m, hv, 0.0).to(h_ptr.dtype.element_ty), mask=in_d)
    tl.store(c_last_ptr + b * D + cols, c, mask=in_d)


@triton.autotune(configs=_configs(), key=["D", "HAS_O", "LOGITS"])
@triton.jit
def _step_backward_kernel(
    f_ptr, x_ptr, o_ptr, mask_ptr, dh_ptr, c_prev_ptr, dc_last_ptr, df_ptr, dx_ptr, do_ptr, dc0_ptr,
    T, D,
    sf_b, sf_t, sx_b, sx_t, so_b, so_t, sm_b, sm_t, sh_b, sh_t,
    HAS_O: tl.constexpr, REVERSE: tl.constexpr, LOGITS: tl.constexpr, BLOCK_D: tl.constexpr,
):
    b = tl.program_id(0).to(tl.int64)
    cols = tl.program_id(1) * BLOCK_D + tl.arange(0, BLOCK_D)
    in_d = cols < D
    g = tl.load(dc_last_ptr + b * D + cols, mask=in_d, other=0.0)
    for i in range(T):
        if REVERSE:
            t = i
        else:
            t = T - 1 - i
        # channels this step reads and updates: none at padding (written as a bound,
        # not in_d & keep, which the interpreter mistypes)
        m = cols < D * tl.load(mask_ptr + b * sm_b + t * sm_t).to(tl.int32)
        fg = _gate(tl.load(f_ptr + b * sf_b + t * sf_t + cols, mask=m, other=0.0).to(tl.float32), LOGITS)
        xv = tl.load(x_ptr + b * sx_b + t * sx_t + cols, mask=m, other=0.0).to(tl.float32)
        out = (b * T + t) * D + cols
        cp = tl.load(c_prev_ptr + out, mask=m, other=0.0)
        gh = tl.load(dh_ptr + b * sh_b + t * sh_t + cols, mask=m, other=0.0).to(tl.float32)
        if HAS_O:
            og = _gate(tl.load(o_ptr + b * so_b + t * so_t + cols, mask=m, other=0.0).to(tl.float32), LOGITS)
            gdo = _output_gate_grad(gh, fg, cp, xv, og, LOGITS)
            tl.store(do_ptr + out, tl.where(m, gdo, 0.0).to(do_ptr.dtype.element_ty), mask=in_d)
            gc = g + gh * og
        else:
            gc = g + gh
        gdf = _forget_gate_grad(gc, fg, cp, xv, LOGITS)
        tl.store(df_ptr + out, tl.where(m, gdf, 0.0).to(df_ptr.dtype.element_ty), mask=in_d)
        tl.store(dx_ptr + out, tl.where(m, gc * (1.0 - fg), 0.0).to(dx_ptr.dtype.element_ty), mask=in_d)
        g = tl.where(m, gc * fg, g)
    tl.store(dc0_ptr + b * D + cols, g, mask=in_d)


def _chunk_configs() -> list[triton.Config]:
    if os.environ.get("TRITON_INTERPRET") == "1":
        return [triton.Config({"BLOCK_T": 4, "BLOCK_D": 16}, num_warps=1)]
    return [
        triton.Config({"BLOCK_T": steps, "BLOCK_D": block}, num_warps=warps)
        for steps, block, warps in ((8, 32, 1), (8, 64, 2), (16, 32, 2), (16, 64, 4), (32, 32, 4), (32, 64, 4),
                                    (64, 32, 4), (16, 128, 8))
    ]


@triton.jit
def _compose(a1, u1, a2, u2):
    """Two steps of c -> a c + u, the first (a1, u1) then (a2, u2), as one."""
    return a1 * a2, a2 * u1 + u2


@triton.autotune(configs=_chunk_configs(), key=["D", "HAS_O", "LOGITS", "SAVE"])
@triton.jit
def _forward_kernel(
    f_ptr, x_ptr, o_ptr, mask_ptr, c0_ptr, h_ptr, c_prev_ptr, c_last_ptr,
    T, D,
    sf_b, sf_t, sx_b, sx_t, so_b, so_t, sm_b, sm_t,
    HAS_O: tl.constexpr, HAS_C0: tl.constexpr, SAVE: tl.constexpr, REVERSE: tl.constexpr,
    LOGITS: tl.constexpr, BLOCK_T: tl.constexpr, BLOCK_D: tl.constexpr,
):
    b = tl.program_id(0).to(tl.int64)
    cols = tl.program_id(1) * BLOCK_D + tl.arange(0, BLOCK_D)
    in_d = cols < D
    if HAS_C0:
        c = tl.load(c0_ptr + b * D + cols, mask=in_d, other=0.0).to(tl.float32)
    else:
        c = tl.zeros([BLOCK_D], dtype=tl.float32)
    if SAVE:  # the state before the first step (the others: below, after each tile)
        if REVERSE:
            first = T - 1
        else:
            first = 0
        tl.store(c_prev_ptr + (b * T + first) * D + cols, c, mask=in_d)
    j = tl.arange(0, BLOCK_T)
    for k in range(0, T, BLOCK_T):
        i = k + j  # the tile's steps in the order the scan takes them
        in_t = i < T
        if REVERSE:
            t = T - 1 - i
            t_next = t - 1
        else:
            t = i
            t_next = t + 1
        # masks written as bounds, not with &, which the interpreter mistypes
        keep = tl.load(mask_ptr + b * sm_b + t * sm_t, mask=in_t, other=0).to(tl.int32)
        m = cols[None, :] < D * keep[:, None]  # [BLOCK_T, BLOCK_D]: real steps, real channels
        rows = t[:, None]
        fg = _gate(tl.load(f_ptr + b * sf_b + rows * sf_t + cols[None, :], mask=m, other=0.0).to(tl.float32), LOGITS)
        xv = tl.load(x_ptr + b * sx_b + rows * sx_t + cols[None, :], mask=m, other=0.0).to(tl.float32)
        a = tl.where(m, fg, 1.0)  # padding: the state carries over
        u = tl.where(m, (1.0 - fg) * xv, 0.0)
        a, u = tl.associative_scan((a, u), 0, _compose)
        cn = a * c[None, :] + u  # the state after each step of the tile
        hv = cn
        if HAS_O:
            og = _gate(tl.load(o_ptr + b * so_b + rows * so_t + cols[None, :], mask=m, other=0.0).to(tl.float32), LOGITS)
            hv = og * cn
        out = (b * T + rows) * D + cols[None, :]
        in_tile = cols[None, :] < D * in_t.to(tl.int32)[:, None]
        tl.store(h_ptr + out, tl.where(m, hv, 0.0).to(h_ptr.dtype.element_ty), mask=in_tile)
        if SAVE:  # the state after step t is the state before the next one
            has_next = cols[None, :] < D * (i + 1 < T).to(tl.int32)[:, None]
            tl.store(c_prev_ptr + (b * T + t_next[:, None]) * D + cols[None, :], cn, mask=has_next)
        c = tl.sum(tl.where(j[:, None] == BLOCK_T - 1, cn, 0.0), axis=0)  # the tile's last state (steps past T carry it)
    tl.store(c_last_ptr + b * D + cols, c, mask=in_d)


@triton.autotune(configs=_chunk_configs(), key=["D", "HAS_O", "LOGITS"])
@triton.jit
def _backward_kernel(
    f_ptr, x_ptr, o_ptr, mask_ptr, dh_ptr, c_prev_ptr, dc_last_ptr, df_ptr, dx_ptr, do_ptr, dc0_ptr,
    T, D,
    sf_b, sf_t, sx_b, sx_t, so_b, so_t, sm_b, sm_t, sh_b, sh_t,
    HAS_O: tl.constexpr, REVERSE: tl.constexpr, LOGITS: tl.constexpr, BLOCK_T: tl.constexpr, BLOCK_D: tl.constexpr,
):
    # The adjoint, taken from the forward's last step back to its first. With v_t the gradient
    # of the state after step t (at padding: the gradient carried over it), and step s the one
    # after t in the forward: v_t = gh_t o_t + a_s v_s, a_s = f_s at a real step s, else 1.
    b = tl.program_id(0).to(tl.int64)
    cols = tl.program_id(1) * BLOCK_D + tl.arange(0, BLOCK_D)
    in_d = cols < D
    v = tl.load(dc_last_ptr + b * D + cols, mask=in_d, other=0.0)
    j = tl.arange(0, BLOCK_T)
    for k in range(0, T, BLOCK_T):
        i = k + j
        in_t = i < T
        if REVERSE:
            t = i
            s = t - 1
        else:
            t = T - 1 - i
            s = t + 1
        keep = tl.load(mask_ptr + b * sm_b + t * sm_t, mask=in_t, other=0).to(tl.int32)
        has_s = (i >= 1).to(tl.int32)  # the tile's first step of all has no step s: v starts as dc_last
        s = tl.where(i >= 1, s, t)
        keep_s = tl.load(mask_ptr + b * sm_b + s * sm_t, mask=in_t, other=0).to(tl.int32) * has_s
        m = cols[None, :] < D * keep[:, None]
        m_s = cols[None, :] < D * keep_s[:, None]
        rows = t[:, None]
        fg = _gate(tl.load(f_ptr + b * sf_b + rows * sf_t + cols[None, :], mask=m, other=0.0).to(tl.float32), LOGITS)
        fs = _gate(tl.load(f_ptr + b * sf_b + s[:, None] * sf_t + cols[None, :], mask=m_s, other=0.0).to(tl.float32), LOGITS)
        xv = tl.load(x_ptr + b * sx_b + rows * sx_t + cols[None, :], mask=m, other=0.0).to(tl.float32)
        out = (b * T + rows) * D + cols[None, :]
        cp = tl.load(c_prev_ptr + out, mask=m, other=0.0)
        gh = tl.load(dh_ptr + b * sh_b + rows * sh_t + cols[None, :], mask=m, other=0.0).to(tl.float32)
        in_tile = cols[None, :] < D * in_t.to(tl.int32)[:, None]
        if HAS_O:
            og = _gate(tl.load(o_ptr + b * so_b + rows * so_t + cols[None, :], mask=m, other=0.0).to(tl.float32), LOGITS)
            gdo = _output_gate_grad(gh, fg, cp, xv, og, LOGITS)
            tl.store(do_ptr + out, tl.where(m, gdo, 0.0).to(do_ptr.dtype.element_ty), mask=in_tile)
            e = tl.where(m, gh * og, 0.0)
        else:
            e = tl.where(m, gh, 0.0)
        a = tl.where(m_s, fs, 1.0)
        a, e = tl.associative_scan((a, e), 0, _compose)
        gc = a * v[None, :] + e
        gdf = _forget_gate_grad(gc, fg, cp, xv, LOGITS)
        tl.store(df_ptr + out, tl.where(m, gdf, 0.0).to(df_ptr.dtype.element_ty), mask=in_tile)
        tl.store(dx_ptr + out, tl.where(m, gc * (1.0 - fg), 0.0).to(dx_ptr.dtype.element_ty), mask=in_tile)
        v = tl.sum(tl.where(j[:, None] == BLOCK_T - 1, gc, 0.0), axis=0)
    # dc0: through the first step of the forward, if it is real
    if REVERSE:
        t0 = T - 1
    else:
        t0 = 0
    m0 = cols < D * tl.load(mask_ptr + b * sm_b + t0 * sm_t).to(tl.int32)
    f0 = _gate(tl.load(f_ptr + b * sf_b + t0 * sf_t + cols, mask=m0, other=0.0).to(tl.float32), LOGITS)
    tl.store(dc0_ptr + b * D + cols, tl.where(m0, f0 * v, v), mask=in_d)


def _grid(B: int, D: int):
    return lambda meta: (B, triton.cdiv(D, meta["BLOCK_D"]))


def _strides(t: torch.Tensor | None, like: torch.Tensor) -> tuple[int, int]:
    return (t if t is not None else like).stride()[:2]


def forward(f, x, o, c0, mask, reverse, logits, save):
    """(h, c_last, c_prev) as ``gated_scan``'s autograd function expects. An absent o, c0 or c_prev is
    replaced by a placeholder tensor that its flag keeps the kernel from touching."""
    B, T, D = x.shape
    chunked = VARIANT["forward"] == "chunked" and T > 0
    h = torch.empty(B, T, D, dtype=x.dtype, device=x.device)
    c_last = torch.empty(B, D, dtype=torch.float32, device=x.device)
    c_prev = torch.empty(B, T, D, dtype=torch.float32, device=x.device) if save else None
    c0 = None if c0 is None else c0.float().contiguous()
    mask = mask.view(torch.uint8)
    (_forward_kernel if chunked else _step_forward_kernel)[_grid(B, D)](
        f, x, x if o is None else o, mask, c_last if c0 is None else c0, h, h if c_prev is None else c_prev, c_last,
        T, D, *f.stride()[:2], *x.stride()[:2], *_strides(o, x), *mask.stride(),
        HAS_O=o is not None, HAS_C0=c0 is not None, SAVE=save, REVERSE=reverse, LOGITS=logits,
    )
    return h, c_last, c_prev


def backward(f, x, o, mask, c_prev, dh, dc_last, reverse, logits):
    """(df, dx, do, dc0) in the dtypes of f, x, o and float32."""
    B, T, D = x.shape
    chunked = VARIANT["backward"] == "chunked" and T > 0
    df, dx, do = (None if t is None else torch.empty(t.shape, dtype=t.dtype, device=t.device) for t in (f, x, o))
    dc0 = torch.empty(B, D, dtype=torch.float32, device=x.device)
    mask = mask.view(torch.uint8)
    (_backward_kernel if chunked else _step_backward_kernel)[_grid(B, D)](
        f, x, x if o is None else o, mask, dh, c_prev, dc_last.float(), df, dx, dx if do is None else do, dc0,
        T, D, *f.stride()[:2], *x.stride()[:2], *_strides(o, x), *mask.stride(), *dh.stride()[:2],
        HAS_O=o is not None, REVERSE=reverse, LOGITS=logits,
    )
    return df, dx, do, dc0


class Backend:
    """The Triton scan behind ``gated_scan``'s autograd function."""

    forward = staticmethod(forward)
    backward = staticmethod(backward)
