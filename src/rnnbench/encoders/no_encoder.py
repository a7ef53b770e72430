"""No encoder: the states are the inputs themselves.

The DCU paper's "Bi-Attention (No Encoder)" rows (Tables 1 and 2): the head's attention
and scorer read the embedded (projected, highway) tokens directly, which shows what the
encoders add. It has no parameters and no recurrence; each position's state is its own
input, so it is causal.

Options (conf/encoder/none.yaml):
  hidden_size  null. Accepted and not used: an experiment that sizes every row alike
               (``encoder.hidden_size: 100`` in DCU Table 1's small variant) applies to
               this row too; the output size is always the input size.
"""
from __future__ import annotations

from rnnbench.encoders.base import Encoder, EncoderOutput, zero_padding


class NoEncoder(Encoder):
    """The identity encoder, with padded positions set to zero as the contract requires."""

    causal = True

    def __init__(self, input_size: int, hidden_size: int | None = None):
        super().__init__(input_size, input_size)

    def forward(self, x, mask, context=None) -> EncoderOutput:
        return EncoderOutput(states=zero_padding(x, mask))  # padding may hold any (finite) input
