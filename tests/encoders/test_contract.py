"""The encoder contract, checked for every encoder config in conf/encoder/.

A new encoder is covered as soon as its config file exists.
"""
from __future__ import annotations

import pytest
import torch
from rnnbench.compose import compose_config

from rnnbench.encoders.base import EncoderOutput
from rnnbench.encoders.build import build_encoder, known_encoders
from tests.helpers import parameters_without_gradient

INPUT = 12
CONTEXT = 12


def make(name: str, hidden: int = 8):
    cfg = compose_config([f"encoder={name}"])
    enc_cfg = cfg.encoder
    if "hidden_size" in enc_cfg:
        enc_cfg.hidden_size = hidden
    if "context_size" in enc_cfg:  # conditional encoders (FHE) read the context we pass
        enc_cfg.context_size = CONTEXT
    torch.manual_seed(0)
    return build_encoder(enc_cfg, INPUT)


def batch(lengths, seed=0):
    """Inputs, mask and context; padded positions hold large non-zero garbage, which an
    encoder must ignore (a zeroed padding would hide an encoder that reads it)."""
    g = torch.Generator().manual_seed(seed)
    T = max(lengths)
    x = torch.randn(len(lengths), T, INPUT, generator=g)
    mask = torch.arange(T).unsqueeze(0) < torch.tensor(lengths).unsqueeze(1)
    context = torch.randn(len(lengths), CONTEXT, generator=g)
    garbage = 3.0 + 10.0 * torch.randn(x.shape, generator=g)
    x = torch.where(mask.unsqueeze(-1), x, garbage)
    return x, mask, context


ENCODERS = known_encoders()


@pytest.mark.parametrize("name", ENCODERS)
def test_shapes_and_zero_padding(name):
    enc = make(name).eval()
    x, mask, ctx = batch([5, 3, 1])
    out = enc(x, mask, ctx)
    assert isinstance(out, EncoderOutput)
    assert out.states.shape == (3, 5, enc.output_size)
    assert torch.all(out.states[~mask] == 0)
    assert isinstance(out.stats, dict)


@pytest.mark.parametrize("name", ENCODERS)
def test_padding_invariance(name):
    """A sequence encodes the same alone as batched with longer ones (whose padding is garbage)."""
    enc = make(name).eval()
    x, mask, ctx = batch([7, 4, 2], seed=1)
    with torch.no_grad():
        together = enc(x, mask, ctx).states
        for i, n in enumerate([7, 4, 2]):
            alone = enc(x[i : i + 1, :n], mask[i : i + 1, :n], ctx[i : i + 1]).states
            torch.testing.assert_close(together[i, :n], alone[0], rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("name", ENCODERS)
def test_gradients_reach_every_parameter(name):
    enc = make(name).train()
    x, mask, ctx = batch([6, 5, 3], seed=2)
    out = enc(x.requires_grad_(True), mask, ctx)  # the input too: an encoder may have no parameters (none)
    loss = out.states.pow(2).sum()
    if out.aux_loss is not None:
        loss = loss + out.aux_loss
    extra = enc.policy_loss(out, torch.randn(x.shape[0]))
    if extra is not None:
        loss = loss + extra
    loss.backward()
    assert not parameters_without_gradient(enc)


@pytest.mark.parametrize("name", ENCODERS)
def test_padding_gets_no_gradient_and_changes_nothing(name):
    """Other garbage at the padding: the same states at real positions, and no gradient reaches it."""
    enc = make(name).eval()
    x, mask, ctx = batch([6, 3, 1], seed=4)
    other = torch.where(mask.unsqueeze(-1), x, -x)
    x.requires_grad_(True)
    states = enc(x, mask, ctx).states
    states.pow(2).sum().backward()
    assert torch.all(x.grad[~mask] == 0)
    with torch.no_grad():
        torch.testing.assert_close(enc(other, mask, ctx).states, states.detach(), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name", ENCODERS)
def test_no_grad_and_eval(name):
    enc = make(name).eval()
    x, mask, ctx = batch([4, 2], seed=3)
    with torch.no_grad():
        a = enc(x, mask, ctx).states
        b = enc(x, mask, ctx).states
    assert not a.requires_grad
    torch.testing.assert_close(a, b)  # eval mode is deterministic


@pytest.mark.parametrize("name", ENCODERS)
def test_parameter_count_exposed(name):
    enc = make(name)
    assert enc.num_parameters() == sum(p.numel() for p in enc.parameters())
