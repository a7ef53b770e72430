"""The FHE upper layer: an LSTM that steps only where its boundary gate is open.

    open_t = b_t and mask_t
    (h_t, c_t) = LSTMCell(x_t, (h_{t-1}, c_{t-1}))   where open_t
    (h_t, c_t) = (h_{t-1}, c_{t-1})                   otherwise (state copied)

from a zero initial state, with nn.LSTM's cell (gate order i, f, g, o). The output
is h_t at every real position (the copied state between gates) and 0 at padding.

Because a closed step changes nothing, the same states come from running the LSTM
over the open positions only, compacted to the front of each sequence, and carrying
each result forward to the next open position: the recurrence then costs one LSTM
step per open gate, not per token. Implementations (``fhe_upper`` dispatches by
device; ``impl=`` forces one):

- ``reference``: the specification, a plain per-step loop over every token.
- ``gather``: nn.LSTM's op (packed, so each sequence costs its own number of open
  gates) over the compacted positions, the carry a torch gather. On the CPU a packed
  nn.LSTM runs a generic per-step path whose time hardly follows the number of open
  gates: a quarter of them open took about as long as all of them.
- ``cpu`` (the default on the CPU): the compacted positions through ``multi_lstm``'s
  recurrence with its compiled C cell (hand-written backward, weight gradients as
  large products; its torch-operation cell where there is no C compiler), the carry a
  torch gather. Its time follows the number of open gates: at batch 32, hidden 200,
  length 150 it took 0.46x ``gather``'s time with a quarter of the gates open and
  1.25x with all open (results/benchmarks.md); FHE trains towards sparse gates.
- ``triton`` (the default on CUDA): the same recurrence with the Triton LSTM cell
  (per step one cuBLAS product outside the kernel, the cell fused), and the carry and
  its adjoint as Triton kernels that loop over time with the state in registers
  (``_fhe_upper_triton``).
"""
from __future__ import annotations

import torch
from torch.nn.utils.rnn import PackedSequence, pack_padded_sequence, pad_packed_sequence


def reference(
    x: torch.Tensor,
    gates: torch.Tensor,
    mask: torch.Tensor,
    w_ih: torch.Tensor,
    w_hh: torch.Tensor,
    b_ih: torch.Tensor,
    b_hh: torch.Tensor,
) -> torch.Tensor:
    """Plain per-step loop. x [B, T, I]; gates, mask [B, T] (bool or 0/1);
    w_ih [4H, I], w_hh [4H, H], b_ih, b_hh [4H]. Returns h [B, T, H]."""
    B, T, _ = x.shape
    H = w_hh.shape[1]
    h = x.new_zeros(B, H)
    c = x.new_zeros(B, H)
    update = (gates.bool() & mask.bool()).unsqueeze(-1)
    real = mask.bool().unsqueeze(-1)
    outputs = []
    for t in range(T):
        i, f, g, o = (x[:, t] @ w_ih.t() + b_ih + h @ w_hh.t() + b_hh).chunk(4, dim=-1)
        c_new = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        h_new = torch.sigmoid(o) * torch.tanh(c_new)
        c = torch.where(update[:, t], c_new, c)
        h = torch.where(update[:, t], h_new, h)
        outputs.append(torch.where(real[:, t], h, torch.zeros_like(h)))
    return torch.stack(outputs, dim=1)


def _compacted(x, gates, mask):
    """The open positions of each sequence moved to its front, in time order.

    Returns (is_open [B, T], counts [B], selected x [B, S, I]) with S = max(count, 1)."""
    B, T, I = x.shape
    is_open = gates.bool() & mask.bool()
    counts = is_open.sum(dim=1)
    steps = max(int(counts.max()), 1) if B else 1
    # A stable sort of the closed flags puts each sequence's open positions first, in time order.
    order = torch.sort((~is_open).to(torch.uint8), dim=1, stable=True).indices[:, :steps]
    return is_open, counts, x.gather(1, order.unsqueeze(-1).expand(B, steps, I))


def _carry(updates, is_open, mask):
    """states[b, t] = updates[b, k] for the k-th open gate the last at or before t; 0 before the first and at padding."""
    B, T = is_open.shape
    H = updates.shape[-1]
    slot = is_open.long().cumsum(dim=1) - 1  # -1: no open gate yet, the zero state
    states = updates.gather(1, slot.clamp(min=0).unsqueeze(-1).expand(B, T, H))
    keep = ((slot >= 0) & mask.bool()).unsqueeze(-1)
    return torch.where(keep, states, torch.zeros_like(states))


def gather(
    x: torch.Tensor,
    gates: torch.Tensor,
    mask: torch.Tensor,
    w_ih: torch.Tensor,
    w_hh: torch.Tensor,
    b_ih: torch.Tensor,
    b_hh: torch.Tensor,
) -> torch.Tensor:
    """Same result as ``reference``: nn.LSTM's fused op over the open positions
    (packed, so each sequence costs its own number of open gates), then the carry."""
    B = x.shape[0]
    H = w_hh.shape[1]
    is_open, counts, selected = _compacted(x, gates, mask)
    steps = selected.shape[1]
    # A sequence with no open gate still runs one (unread) step: packing needs length >= 1,
    # and it keeps the output connected to the weights, with zero gradient.
    packed = pack_padded_sequence(selected, counts.clamp(min=1).cpu(), batch_first=True, enforce_sorted=False)
    h0 = x.new_zeros(1, B, H)
    out, _, _ = torch._VF.lstm(
        packed.data, packed.batch_sizes, (h0, h0), [w_ih, w_hh, b_ih, b_hh], True, 1, 0.0, True, False
    )
    updates, _ = pad_packed_sequence(
        PackedSequence(out, packed.batch_sizes, packed.sorted_indices, packed.unsorted_indices),
        batch_first=True,
        total_length=steps,
    )
    return _carry(updates, is_open, mask)


def _recurrence(x, gates, mask, w_ih, w_hh, b_ih, b_hh, impl: str) -> torch.Tensor:
    """``cpu`` and ``triton``: multi_lstm's recurrence over the compacted positions, then the carry."""
    from rnnbench.kernels import multi_lstm

    is_open, counts, selected = _compacted(x, gates, mask)
    steps = torch.arange(selected.shape[1], device=x.device)
    updates = multi_lstm.recurrence(
        selected, steps < counts.unsqueeze(1), w_ih.unsqueeze(0), w_hh.unsqueeze(0), (b_ih + b_hh).unsqueeze(0),
        bidirectional=False, cell=multi_lstm.cell_for(impl),
    )[:, :, 0]
    if impl == "triton":
        from rnnbench.kernels._fhe_upper_triton import Carry

        return Carry.apply(updates, is_open, mask.bool())
    return _carry(updates, is_open, mask)


IMPLS = ("reference", "gather", "cpu", "triton")


def fhe_upper(x, gates, mask, w_ih, w_hh, b_ih, b_hh, impl: str | None = None) -> torch.Tensor:
    """Run the gated upper LSTM with ``impl`` (default: ``triton`` on CUDA, ``cpu`` elsewhere)."""
    impl = impl or ("triton" if x.is_cuda else "cpu")
    if impl == "reference":
        return reference(x, gates, mask, w_ih, w_hh, b_ih, b_hh)
    if impl == "gather":
        return gather(x, gates, mask, w_ih, w_hh, b_ih, b_hh)
    if impl in ("cpu", "triton"):
        return _recurrence(x, gates, mask, w_ih, w_hh, b_ih, b_hh, impl)
    raise ValueError(f"fhe_upper: unknown impl {impl!r} (known: {', '.join(IMPLS)})")
