"""The FHE upper layer's "torch" implementation: nn.LSTM's op over the open positions only,
compacted to the front of each sequence, then each state carried forward (a torch gather).

``compacted`` and ``carry`` are shared with the "cpu" implementation, which runs the
compacted positions through ``multi_lstm``'s recurrence instead. On the CPU a packed
nn.LSTM runs a generic per-step path whose time hardly follows the number of open gates:
a quarter of them open took about as long as all of them.
"""
from __future__ import annotations

import torch
from torch.nn.utils.rnn import PackedSequence, pack_padded_sequence, pad_packed_sequence


def compacted(x, gates, mask):
    """The open positions of each sequence moved to its front, in time order.

    Returns (is_open [B, T], counts [B], selected x [B, S, I]) with S = max(count, 1)."""
    B, T, I = x.shape
    is_open = gates.bool() & mask.bool()
    counts = is_open.sum(dim=1)
    steps = max(int(counts.max()), 1) if B else 1
    # A stable sort of the closed flags puts each sequence's open positions first, in time order.
    order = torch.sort((~is_open).to(torch.uint8), dim=1, stable=True).indices[:, :steps]
    return is_open, counts, x.gather(1, order.unsqueeze(-1).expand(B, steps, I))


def carry(updates, is_open, mask):
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
    is_open, counts, selected = compacted(x, gates, mask)
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
    return carry(updates, is_open, mask)
