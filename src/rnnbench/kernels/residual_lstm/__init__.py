"""LSTM with the lateral residual of the LSTM baseline paper (Res-V2).

    i, f, g, o = split(W_ih x_t + W_hh h_{t-1} + b)
    c_t = sigmoid(f) * c_{t-1} + sigmoid(i) * tanh(g)
    h_t = sigmoid(o) * tanh(c_t) + r_t            (r_t: the residual input)

The same h_t goes up to the next layer and forward in time, which is why
nn.LSTM cannot run it.

Implementations (names and fallback: ``rnnbench.kernels.dispatch``):

- ``reference`` (``reference.py``): the per-step loop, the specification.
- ``torch``, ``cpu``, ``triton``: ``multi_lstm``'s fast recurrence with one direction
  and the residual, its pointwise cell as torch operations, compiled C or a Triton
  kernel (so this op has no ``cpu.py`` or ``triton.py`` of its own): the input
  projections of all steps in one matrix multiply, per step one recurrent matrix
  multiply and one fused pointwise cell (gates, c, h with r_t), and a hand-written
  backward whose weight gradients are large matrix multiplies over chunks of steps.
  The C cell ran about 4-5x the reference's speed on this project's CPU at length 150
  (results/benchmarks.md).
"""
from __future__ import annotations

from rnnbench.kernels import dispatch, multi_lstm
from rnnbench.kernels.residual_lstm.reference import reference

IMPLS = ("reference", "torch", "cpu", "triton")


def residual_lstm(x, residual, mask, w_ih, w_hh, bias, impl: str | None = None):
    """Same arguments and result as ``reference``; ``impl``: see ``dispatch``."""
    dispatch.check_shapes(
        "residual_lstm", x=(x, "B T I"), residual=(residual, "B T H"), mask=(mask, "B T"),
        w_ih=(w_ih, "4H I"), w_hh=(w_hh, "4H H"), bias=(bias, "4H"),
    )
    impl = dispatch.resolve("residual_lstm", IMPLS, x, impl)
    if impl == "reference":
        return reference(x, residual, mask, w_ih, w_hh, bias)
    h = multi_lstm.recurrence(
        x, mask, w_ih.unsqueeze(0), w_hh.unsqueeze(0), bias.unsqueeze(0), bidirectional=False,
        cell=multi_lstm.cell_for(impl), residual=residual.unsqueeze(2),
    )
    return h.squeeze(2)
