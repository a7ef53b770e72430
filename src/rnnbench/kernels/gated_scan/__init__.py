"""Gated linear scan: the recurrence of the RCRN listener and the DCU cell.

    c_t = f_t * c_{t-1} + (1 - f_t) * x_t
    h_t = o_t * c_t          (h_t = c_t when no output gate is given)

with f, o either gate values in [0, 1] or, with ``logits=True``, pre-sigmoid
values (the sigmoid is then applied inside the op, so a fused kernel can do it
in registers). Positions where ``mask`` is False are neither read nor written:
the state carries over them and their output is 0. ``reverse=True`` runs each
sequence from its own last token backwards.

Implementations (names and fallback: ``rnnbench.kernels.dispatch``):

- ``reference`` (``reference.py``): the per-step loop, the specification.
- ``cpu`` (``cpu.py``, ``cpu.c``): one compiled pass over time per direction, batch
  rows split across threads.
- ``triton`` (``triton.py``): one program per (sequence, channel block) looping over
  time with the state in registers, a tile of steps at a time, scanned associatively
  (a variant that takes one step at a time is kept for comparison).

No ``torch`` fast path: without a C compiler the CPU runs the reference. Both fast
implementations keep the state in float32 for float32 and bfloat16 inputs and share
one autograd function (below): the forward saves the state before each step, the
backward runs the scan's adjoint (itself a gated scan in the opposite direction).
"""
from __future__ import annotations

import torch

from rnnbench.kernels import dispatch
from rnnbench.kernels.gated_scan.reference import reference

IMPLS = ("reference", "cpu", "triton")


def gated_scan(f, x, mask, o=None, c0=None, reverse=False, logits=False, impl: str | None = None):
    """Run the scan. f, x, o: [B, T, D]; mask: [B, T]; c0: [B, D].

    Returns (h [B, T, D] in x's dtype, c_last [B, D] float32: the state after each
    sequence's last real token), as ``reference``. ``impl``: see ``dispatch``.
    """
    dispatch.check_shapes("gated_scan", f=(f, "B T D"), x=(x, "B T D"), o=(o, "B T D"), mask=(mask, "B T"), c0=(c0, "B D"))
    impl = dispatch.resolve("gated_scan", IMPLS, x, impl)
    if impl == "reference":
        return reference(f, x, mask, o=o, c0=c0, reverse=reverse, logits=logits)
    if impl == "cpu":
        from rnnbench.kernels.gated_scan import cpu as backend
    else:
        from rnnbench.kernels.gated_scan import triton as backend
    save = torch.is_grad_enabled() and any(t is not None and t.requires_grad for t in (f, x, o, c0))
    return _Scan.apply(backend.Backend, f, x, o, c0, mask, reverse, logits, save)


class _Scan(torch.autograd.Function):
    """Autograd glue shared by the fast implementations.

    A backend provides ``forward(f, x, o, c0, mask, reverse, logits, save) ->
    (h, c_last, c_prev)``, where c_prev [B, T, D] is the state before each real
    step (None unless ``save``), and ``backward(f, x, o, mask, c_prev, dh,
    dc_last, reverse, logits) -> (df, dx, do, dc0)``. Inputs may be strided in
    batch and time; the last dimension must be contiguous.
    """

    @staticmethod
    def forward(ctx, backend, f, x, o, c0, mask, reverse, logits, save):
        f, x, o = (_last_dim_contiguous(t) for t in (f, x, o))
        mask = mask.to(device=x.device, dtype=torch.bool)
        h, c_last, c_prev = backend.forward(f, x, o, c0, mask, reverse, logits, save)
        ctx.backend, ctx.reverse, ctx.logits = backend, reverse, logits
        ctx.c0_dtype = None if c0 is None else c0.dtype
        ctx.save_for_backward(f, x, o, mask, c_prev)
        return h, c_last

    @staticmethod
    @torch.autograd.function.once_differentiable
    def backward(ctx, dh, dc_last):
        f, x, o, mask, c_prev = ctx.saved_tensors
        df, dx, do, dc0 = ctx.backend.backward(
            f, x, o, mask, c_prev, _last_dim_contiguous(dh), dc_last.contiguous(), ctx.reverse, ctx.logits
        )
        dc0 = None if ctx.c0_dtype is None else dc0.to(ctx.c0_dtype)
        do = None if o is None else do.to(o.dtype)
        return None, df.to(f.dtype), dx.to(x.dtype), do, dc0, None, None, None, None


def _last_dim_contiguous(t: torch.Tensor | None) -> torch.Tensor | None:
    """Kernels take batch and time strides (so channel slices need no copy) but unit channel stride."""
    return t if t is None or t.stride(-1) == 1 else t.contiguous()
