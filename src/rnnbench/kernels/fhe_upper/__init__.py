"""The FHE upper layer: an LSTM that steps only where its boundary gate is open.

    open_t = b_t and mask_t
    (h_t, c_t) = LSTMCell(x_t, (h_{t-1}, c_{t-1}))   where open_t
    (h_t, c_t) = (h_{t-1}, c_{t-1})                   otherwise (state copied)

from a zero initial state, with nn.LSTM's cell (gate order i, f, g, o). The output
is h_t at every real position (the copied state between gates) and 0 at padding.

Because a closed step changes nothing, the same states come from running the LSTM
over the open positions only, compacted to the front of each sequence, and carrying
each result forward to the next open position: the recurrence then costs one LSTM
step per open gate, not per token. Implementations (names and fallback:
``rnnbench.kernels.dispatch``):

- ``reference`` (``reference.py``): the specification, a plain per-step loop over
  every token.
- ``torch`` (``gather.py``; "gather" before the names were unified): nn.LSTM's op
  (packed, so each sequence costs its own number of open gates) over the compacted
  positions, the carry a torch gather.
- ``cpu``: the compacted positions through ``multi_lstm``'s recurrence with its
  compiled C cell (hand-written backward, weight gradients as large products), the
  carry a torch gather. Its time follows the number of open gates: at batch 32, hidden
  200, length 150 it took 0.46x ``torch``'s time with a quarter of the gates open and
  1.25x with all open (results/benchmarks.md); FHE trains towards sparse gates.
- ``triton``: the same recurrence with the Triton LSTM cell (per step one cuBLAS
  product outside the kernel, the cell fused), and the carry and its adjoint as Triton
  kernels that loop over time with the state in registers (``triton.py``).
"""
from __future__ import annotations

import torch

from rnnbench.kernels import dispatch, multi_lstm
from rnnbench.kernels.fhe_upper.gather import carry, compacted, gather
from rnnbench.kernels.fhe_upper.reference import reference

IMPLS = ("reference", "torch", "cpu", "triton")


def fhe_upper(x, gates, mask, w_ih, w_hh, b_ih, b_hh, impl: str | None = None) -> torch.Tensor:
    """Run the gated upper LSTM. x [B, T, I]; gates, mask [B, T] (bool or 0/1); w_ih [4H, I],
    w_hh [4H, H], b_ih, b_hh [4H]. Returns h [B, T, H]. ``impl``: see ``dispatch``."""
    dispatch.check_shapes(
        "fhe_upper", x=(x, "B T I"), gates=(gates, "B T"), mask=(mask, "B T"),
        w_ih=(w_ih, "4H I"), w_hh=(w_hh, "4H H"), b_ih=(b_ih, "4H"), b_hh=(b_hh, "4H"),
    )
    impl = dispatch.resolve("fhe_upper", IMPLS, x, impl)
    if impl == "reference":
        return reference(x, gates, mask, w_ih, w_hh, b_ih, b_hh)
    if impl == "torch":
        return gather(x, gates, mask, w_ih, w_hh, b_ih, b_hh)
    return _recurrence(x, gates, mask, w_ih, w_hh, b_ih, b_hh, impl)


def _recurrence(x, gates, mask, w_ih, w_hh, b_ih, b_hh, impl: str) -> torch.Tensor:
    """``cpu`` and ``triton``: multi_lstm's recurrence over the compacted positions, then the carry."""
    is_open, counts, selected = compacted(x, gates, mask)
    steps = torch.arange(selected.shape[1], device=x.device)
    updates = multi_lstm.recurrence(
        selected, steps < counts.unsqueeze(1), w_ih.unsqueeze(0), w_hh.unsqueeze(0), (b_ih + b_hh).unsqueeze(0),
        bidirectional=False, cell=multi_lstm.cell_for(impl),
    )[:, :, 0]
    if impl == "triton":
        from rnnbench.kernels.fhe_upper.triton import Carry

        return Carry.apply(updates, is_open, mask.bool())
    return carry(updates, is_open, mask)
