"""Highway layers (Srivastava et al. 2015): y = g * relu(W x + b) + (1 - g) * x, g = sigmoid(W_g x + b_g)."""
from __future__ import annotations

import torch
from torch import nn


class Highway(nn.Module):
    """``layers`` highway layers of width ``dim``.

    ``gate_bias``: the value every gate bias starts at (negative: close to the identity at
    first, as Srivastava et al. advise), or None for nn.Linear's default initialisation.
    Heads differ here on purpose and keep their own: the span head (-1), the pair
    classifier (its ``gate_bias`` option, -1 by default) and the multiple-choice head (None).
    """

    def __init__(self, dim: int, layers: int = 1, gate_bias: float | None = None):
        super().__init__()
        self.transforms = nn.ModuleList(nn.Linear(dim, dim) for _ in range(layers))
        self.gates = nn.ModuleList(nn.Linear(dim, dim) for _ in range(layers))
        if gate_bias is not None:
            for gate in self.gates:
                nn.init.constant_(gate.bias, gate_bias)
        self._register_load_state_dict_pre_hook(_one_layer_names)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for transform, gate in zip(self.transforms, self.gates):
            g = torch.sigmoid(gate(x))
            x = g * torch.relu(transform(x)) + (1 - g) * x
        return x


def _one_layer_names(state_dict, prefix, *_):
    """Checkpoints of the heads' former one-layer copies name ``transform.*`` and ``gate.*``."""
    for old, new in (("transform.", "transforms.0."), ("gate.", "gates.0.")):
        for key in [k for k in state_dict if k.startswith(prefix + old)]:
            state_dict[prefix + new + key[len(prefix + old):]] = state_dict.pop(key)
