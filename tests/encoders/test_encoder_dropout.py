"""``encoder.dropout`` for the families that gained it (RCRN, DCU, FHE): it acts in training
only, evaluation equals the same weights without it, and RCRN draws a mask of its own for
each of its six directions (docs/encoders.md, "Dropout in every family")."""
from __future__ import annotations

import pytest
import torch
from torch import nn

from rnnbench.encoders.dcu import DCU, DCULSTM, SimDCU
from rnnbench.encoders.fhe import FHE
from rnnbench.encoders.rcrn import RCRN

IN, HIDDEN = 6, 8
BUILDERS = {
    "rcrn": lambda p: RCRN(IN, HIDDEN, dropout=p),
    "rcrn_unfused": lambda p: RCRN(IN, HIDDEN, fused=False, dropout=p),
    "sim_dcu": lambda p: SimDCU(IN, HIDDEN, ranges=[1, 2], dropout=p),
    "dcu": lambda p: DCU(IN, HIDDEN, ranges=[1, 2], bidirectional=True, dropout=p),
    "dcu_lstm": lambda p: DCULSTM(IN, HIDDEN, ranges=[1, 2], dropout=p),
    "fhe": lambda p: FHE(IN, HIDDEN, dropout=p),
}


def _pair(name: str) -> tuple[nn.Module, nn.Module]:
    """The encoder with dropout 0.5 and the same weights without dropout."""
    torch.manual_seed(0)
    dropped = BUILDERS[name](0.5)
    plain = BUILDERS[name](0.0)
    plain.load_state_dict(dropped.state_dict())
    return dropped, plain


def _inputs() -> tuple[torch.Tensor, torch.Tensor]:
    torch.manual_seed(1)
    x = torch.randn(3, 7, IN)
    mask = torch.arange(7).unsqueeze(0) < torch.tensor([[7], [5], [2]])
    return x, mask


@pytest.mark.parametrize("name", sorted(BUILDERS))
def test_evaluation_is_the_same_weights_without_dropout(name):
    dropped, plain = _pair(name)
    dropped.eval(), plain.eval()
    x, mask = _inputs()
    with torch.no_grad():
        assert torch.allclose(dropped(x, mask).states, plain(x, mask).states, atol=1e-6)


@pytest.mark.parametrize("name", sorted(BUILDERS))
def test_training_drops_what_the_recurrence_reads(name):
    dropped, _ = _pair(name)
    dropped.train()
    x, mask = _inputs()
    seen: list[torch.Tensor] = []
    dropped.dropout.register_forward_hook(lambda module, args, out: seen.append(out.detach()))
    dropped(x, mask)
    assert seen, "the encoder's dropout never ran in training"
    zeros = sum(float((t == 0).float().mean()) for t in seen) / len(seen)
    assert 0.3 < zeros < 0.7  # about half of what it reads is dropped at p = 0.5


@pytest.mark.parametrize("name", ["rcrn", "sim_dcu", "dcu", "dcu_lstm"])
def test_training_outputs_differ_from_call_to_call(name):
    dropped, plain = _pair(name)
    dropped.train(), plain.train()
    x, mask = _inputs()
    torch.manual_seed(2)
    a = dropped(x, mask).states
    b = dropped(x, mask).states
    assert not torch.allclose(a, b) and not torch.allclose(a, plain(x, mask).states)


def test_rcrn_draws_a_mask_for_each_of_its_six_directions():
    dropped, _ = _pair("rcrn")
    dropped.train()
    calls: list[torch.Tensor] = []
    dropped.dropout.register_forward_hook(lambda module, args, out: calls.append(out.detach()))
    x, mask = _inputs()
    dropped(x, mask)
    assert len(calls) == 6
    assert all(not torch.equal(calls[i], calls[j]) for i in range(6) for j in range(i + 1, 6))


def test_rcrn_refuses_a_dropout_outside_zero_to_one():
    with pytest.raises(ValueError, match="encoder.dropout"):
        RCRN(IN, HIDDEN, dropout=1.0)
