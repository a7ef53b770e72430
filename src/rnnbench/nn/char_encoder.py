"""Character-level word encoder: one vector per word from its characters (``embedding.char``).

The RCRN paper (section 4.2) adds "an optional character-level word representation ...
constructed with a standard BiGRU model" beside its word vectors, without sizes. Two kinds:

- ``bigru``: the word's character embeddings read by a one-layer BiGRU; the word's vector is
  the forward direction's final state beside the backward direction's (2 * ``hidden``).
  ``hidden`` 25 per direction is ours (Lample et al. 2016's character BiLSTM size).
- ``cnn``: the character CNN of Ma & Hovy (2016; Kim et al. 2016 with one width): for each
  width w in ``widths``, ``filters`` convolutions of width w over the character embeddings
  (zero-padded so that every character position has an output, even in a word shorter than
  w), max over the word's character positions, then tanh (Kim et al.'s tanh, before or after
  the max alike, since it is increasing). The word's vector is filters * len(widths).

Both read ``dim``-d character embeddings (Ma & Hovy: 30), initialised as Ma & Hovy's,
U(±sqrt(3 / dim)); the padding character's row is zero. ``dropout`` is inverted dropout on
the character embeddings (where Ma & Hovy put it, before the CNN), training only.

``forward(chars [..., L])`` takes character ids, padding (id 0) after each word's characters,
and returns [..., output_size]. A word with no characters (padding positions, the special
tokens) gets the zero vector, so padding stays zero and never changes a real word's vector.
"""
from __future__ import annotations

import math
from collections.abc import Sequence

import torch
import torch.nn.functional as F
from torch import nn
from torch.nn.utils.rnn import pack_padded_sequence

KINDS = ("bigru", "cnn")


def char_output_size(kind: str, hidden: int = 25, filters: int = 30, widths: Sequence[int] = (3,), **_) -> int:
    """The width of a word's character vector under these options (0 for ``none``)."""
    if kind == "none":
        return 0
    if kind == "bigru":
        return 2 * int(hidden)
    if kind == "cnn":
        return int(filters) * len(list(widths))
    raise ValueError(f"embedding.char.kind must be none, bigru or cnn; got {kind!r}")


class CharEncoder(nn.Module):
    """Per-word vectors from character ids; see the module docstring."""

    version: int = 1  # part of a run's identity when the run encodes characters; bump when a change alters results

    def __init__(
        self,
        num_chars: int,
        kind: str = "bigru",
        dim: int = 30,
        hidden: int = 25,
        filters: int = 30,
        widths: Sequence[int] = (3,),
        dropout: float = 0.0,
    ):
        super().__init__()
        if kind not in KINDS:
            raise ValueError(f"embedding.char.kind must be one of {', '.join(KINDS)} to build a character encoder; got {kind!r}")
        widths = [int(w) for w in widths]
        if kind == "cnn" and (not widths or min(widths) < 1):
            raise ValueError(f"embedding.char.widths must list at least one width, each at least 1; got {widths}")
        self.kind = kind
        self.output_size = char_output_size(kind, hidden, filters, widths)
        self.embedding = nn.Embedding(num_chars, dim, padding_idx=0)
        bound = math.sqrt(3.0 / dim)
        with torch.no_grad():
            self.embedding.weight.uniform_(-bound, bound)
            self.embedding.weight[0].zero_()
        self.dropout = nn.Dropout(dropout)
        self.gru = nn.GRU(dim, hidden, batch_first=True, bidirectional=True) if kind == "bigru" else None
        self.widths = widths if kind == "cnn" else []
        self.convs = nn.ModuleList(nn.Conv1d(dim, filters, w) for w in self.widths)

    def forward(self, chars: torch.Tensor) -> torch.Tensor:
        *lead, L = chars.shape
        flat = chars.reshape(-1, L)
        lengths = (flat != 0).sum(dim=1)
        real = lengths > 0
        out = self.embedding.weight.new_zeros(flat.shape[0], self.output_size)
        if not bool(real.any()):
            return out.view(*lead, self.output_size)
        words, lengths = flat[real], lengths[real]
        x = self.dropout(self.embedding(words[:, : int(lengths.max())]))  # [N, L', dim]
        encoded = self._bigru(x, lengths) if self.gru is not None else self._cnn(x, lengths)
        out = out.index_put((real.nonzero().squeeze(1),), encoded.to(out.dtype))
        return out.view(*lead, self.output_size)

    def _bigru(self, x: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
        packed = pack_padded_sequence(x, lengths.cpu(), batch_first=True, enforce_sorted=False)
        _, h_n = self.gru(packed)  # [2, N, hidden], in the words' order: forward's last step, backward's
        return torch.cat([h_n[0], h_n[1]], dim=-1)

    def _cnn(self, x: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
        x = x.transpose(1, 2)  # [N, dim, L']
        real = torch.arange(x.shape[2], device=x.device).unsqueeze(0) < lengths.unsqueeze(1)  # [N, L']
        pooled = []
        for w, conv in zip(self.widths, self.convs):
            y = conv(F.pad(x, ((w - 1) // 2, w // 2)))  # [N, filters, L']: one output per character position
            pooled.append(y.masked_fill(~real.unsqueeze(1), float("-inf")).amax(dim=2))
        return torch.tanh(torch.cat(pooled, dim=-1))
