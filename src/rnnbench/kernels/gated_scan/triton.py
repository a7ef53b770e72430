"""The gated linear scan as Triton kernels (see ``gated_scan``), forward and backward.

One program owns one sequence and BLOCK_D channels and loops over time inside
the kernel, the state in registers: the scan is sequential in time but
independent across channels, so the grid is (batch, channel blocks) and each
step costs one coalesced load per input and one store per output. The gate
sigmoids are applied in registers. Padded steps are neither loaded nor change
the state; their outputs and gradients are written as 0.

Imported only when the Triton implementation is asked for, so the package
works without Triton. Under ``TRITON_INTERPRET=1`` (the CPU tests) autotuning
would rerun the slow interpreter once per config, so one config is used there.
"""
from __future__ import annotations

import os

import torch
import triton
import triton.language as tl


def _configs() -> list[triton.Config]:
    if os.environ.get("TRITON_INTERPRET") == "1":
        return [triton.Config({"BLOCK_D": 16}, num_warps=1)]
    return [
        triton.Config({"BLOCK_D": block}, num_warps=warps)
        for block, warps in ((32, 1), (64, 1), (128, 1), (128, 2), (256, 2), (256, 4), (512, 4))
    ]


@triton.autotune(configs=_configs(), key=["D", "HAS_O", "LOGITS", "SAVE"])
@triton.jit
def _forward_kernel(
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
        fg = tl.load(f_ptr + b * sf_b + t * sf_t + cols, mask=m, other=0.0).to(tl.float32)
        if LOGITS:
            fg = tl.sigmoid(fg)
        xv = tl.load(x_ptr + b * sx_b + t * sx_t + cols, mask=m, other=0.0).to(tl.float32)
        out = (b * T + t) * D + cols
        if SAVE:
            tl.store(c_prev_ptr + out, c, mask=m)
        cn = fg * c + (1.0 - fg) * xv
        hv = cn
        if HAS_O:
            og = tl.load(o_ptr + b * so_b + t * so_t + cols, mask=m, other=0.0).to(tl.float32)
            if LOGITS:
                og = tl.sigmoid(og)
            hv = og * cn
        c = tl.where(m, cn, c)
        tl.store(h_ptr + out, tl.where(m, hv, 0.0).to(h_ptr.dtype.element_ty), mask=in_d)
    tl.store(c_last_ptr + b * D + cols, c, mask=in_d)


@triton.autotune(configs=_configs(), key=["D", "HAS_O", "LOGITS"])
@triton.jit
def _backward_kernel(
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
        fg = tl.load(f_ptr + b * sf_b + t * sf_t + cols, mask=m, other=0.0).to(tl.float32)
        if LOGITS:
            fg = tl.sigmoid(fg)
        xv = tl.load(x_ptr + b * sx_b + t * sx_t + cols, mask=m, other=0.0).to(tl.float32)
        out = (b * T + t) * D + cols
        cp = tl.load(c_prev_ptr + out, mask=m, other=0.0)
        gh = tl.load(dh_ptr + b * sh_b + t * sh_t + cols, mask=m, other=0.0).to(tl.float32)
        if HAS_O:
            og = tl.load(o_ptr + b * so_b + t * so_t + cols, mask=m, other=0.0).to(tl.float32)
            if LOGITS:
                og = tl.sigmoid(og)
            gdo = gh * (fg * cp + (1.0 - fg) * xv)
            if LOGITS:
                gdo = gdo * og * (1.0 - og)
            tl.store(do_ptr + out, tl.where(m, gdo, 0.0).to(do_ptr.dtype.element_ty), mask=in_d)
            gc = g + gh * og
        else:
            gc = g + gh
        gdf = gc * (cp - xv)
        if LOGITS:
            gdf = gdf * fg * (1.0 - fg)
        tl.store(df_ptr + out, tl.where(m, gdf, 0.0).to(df_ptr.dtype.element_ty), mask=in_d)
        tl.store(dx_ptr + out, tl.where(m, gc * (1.0 - fg), 0.0).to(dx_ptr.dtype.element_ty), mask=in_d)
        g = tl.where(m, gc * fg, g)
    tl.store(dc0_ptr + b * D + cols, g, mask=in_d)


def _grid(B: int, D: int):
    return lambda meta: (B, triton.cdiv(D, meta["BLOCK_D"]))


def _strides(t: torch.Tensor | None, like: torch.Tensor) -> tuple[int, int]:
    return (t if t is not None else like).stride()[:2]


def forward(f, x, o, c0, mask, reverse, logits, save):
    """(h, c_last, c_prev) as ``gated_scan``'s autograd function expects. An absent o, c0 or c_prev is
    replaced by a placeholder tensor that its flag keeps the kernel from touching."""
    B, T, D = x.shape
    h = torch.empty(B, T, D, dtype=x.dtype, device=x.device)
    c_last = torch.empty(B, D, dtype=torch.float32, device=x.device)
    c_prev = torch.empty(B, T, D, dtype=torch.float32, device=x.device) if save else None
    c0 = None if c0 is None else c0.float().contiguous()
    mask = mask.view(torch.uint8)
    _forward_kernel[_grid(B, D)](
        f, x, x if o is None else o, mask, c_last if c0 is None else c0, h, h if c_prev is None else c_prev, c_last,
        T, D, *f.stride()[:2], *x.stride()[:2], *_strides(o, x), *mask.stride(),
        HAS_O=o is not None, HAS_C0=c0 is not None, SAVE=save, REVERSE=reverse, LOGITS=logits,
    )
    return h, c_last, c_prev


def backward(f, x, o, mask, c_prev, dh, dc_last, reverse, logits):
    """(df, dx, do, dc0) in the dtypes of f, x, o and float32."""
    B, T, D = x.shape
    df, dx, do = (None if t is None else torch.empty(t.shape, dtype=t.dtype, device=t.device) for t in (f, x, o))
    dc0 = torch.empty(B, D, dtype=torch.float32, device=x.device)
    mask = mask.view(torch.uint8)
    _backward_kernel[_grid(B, D)](
        f, x, x if o is None else o, mask, dh, c_prev, dc_last.float(), df, dx, dx if do is None else do, dc0,
        T, D, *f.stride()[:2], *x.stride()[:2], *_strides(o, x), *mask.stride(), *dh.stride()[:2],
        HAS_O=o is not None, REVERSE=reverse, LOGITS=logits,
    )
    return df, dx, do, dc0


class Backend:
    """The Triton scan behind ``gated_scan``'s autograd function."""

    forward = staticmethod(forward)
    backward = staticmethod(backward)
