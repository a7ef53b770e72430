"""The FHE upper layer: an LSTM that steps only where its boundary gate is open.

    open_t = b_t and mask_t
    (h_t, c_t) = LSTMCell(x_t, (h_{t-1}, c_{t-1}))   where open_t
    (h_t, c_t) = (h_{t-1}, c_{t-1})                   otherwise (state copied)

from a zero initial state, with nn.LSTM's cell (gate order i, f, g, o). The output
is h_t at every real position (the copied state between gates) and 0 at padding.

Because a closed step changes nothing, the same states come from running the LSTM
over the open positions only and carrying each result forward to the next open
position (``impl="gather"``, the default): the recurrence then costs one LSTM step
per open gate, not per token. ``reference`` is the specification.
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
    (packed, so each sequence costs its own number of open gates), then a gather
    that copies each state forward until the next open gate."""
    B, T, I = x.shape
    H = w_hh.shape[1]
    is_open = gates.bool() & mask.bool()
    counts = is_open.sum(dim=1)
    # A sequence with no open gate still runs one (unread) step: packing needs length >= 1,
    # and it keeps the output connected to the weights, with zero gradient.
    steps = max(int(counts.max()), 1)
    # A stable sort of the closed flags puts each sequence's open positions first, in time order.
    order = torch.sort((~is_open).to(torch.uint8), dim=1, stable=True).indices[:, :steps]
    selected = x.gather(1, order.unsqueeze(-1).expand(B, steps, I))
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
    # slot[b, t]: index of the last update at or before t (-1: none yet, the zero state).
    slot = is_open.long().cumsum(dim=1) - 1
    states = updates.gather(1, slot.clamp(min=0).unsqueeze(-1).expand(B, T, H))
    keep = ((slot >= 0) & mask.bool()).unsqueeze(-1)
    return torch.where(keep, states, torch.zeros_like(states))


IMPLS = {"reference": reference, "gather": gather}


def fhe_upper(x, gates, mask, w_ih, w_hh, b_ih, b_hh, impl: str | None = None) -> torch.Tensor:
    """Run the gated upper LSTM with ``impl`` (default ``gather`` on every device)."""
    impl = impl or "gather"
    if impl not in IMPLS:
        raise ValueError(f"fhe_upper: unknown impl {impl!r} (known: {', '.join(IMPLS)})")
    return IMPLS[impl](x, gates, mask, w_ih, w_hh, b_ih, b_hh)
