"""residual_lstm (Res-V2): every fast implementation against the per-step reference.

Fast implementations: "cpu" (the compiled C cell), "torch" (the torch-operations cell,
what "cpu" falls back to without a C compiler) and "triton" (under TRITON_INTERPRET=1 on
the CPU, set by tests/conftest.py). Outputs and the gradients of every input, float32 tight
and bfloat16 loose.
"""
from __future__ import annotations

import pytest
import torch

from rnnbench.kernels import residual_lstm as R

FAST = ["cpu", "torch", "triton"]
NAMES = ["x", "residual", "w_ih", "w_hh", "bias"]

# (lengths, input size, hidden): ragged, T = 1, batch 1 with odd T, hidden sizes below,
# at and above the interpreter's block of 16, input size equal to and unlike hidden.
CASES = [
    ([7, 3, 5, 1], 5, 5),
    ([1, 1, 1], 4, 3),
    ([9], 4, 16),
    ([6, 6, 2], 3, 20),
    ([4, 2], 8, 4),
]


def problem(lengths, I, H, dtype=torch.float32, seed=0):
    g = torch.Generator().manual_seed(seed)
    B, T = len(lengths), max(lengths)
    mask = torch.arange(T).unsqueeze(0) < torch.tensor(lengths).unsqueeze(1)
    x = torch.randn(B, T, I, generator=g)
    residual = torch.randn(B, T, H, generator=g)
    w_ih, w_hh, bias = (torch.randn(*s, generator=g) * 0.5 for s in ((4 * H, I), (4 * H, H), (4 * H,)))
    x, residual, w_ih, w_hh, bias = (t.to(dtype).requires_grad_() for t in (x, residual, w_ih, w_hh, bias))
    return x, residual, mask, w_ih, w_hh, bias


def outputs_and_grads(fn, x, residual, mask, w_ih, w_hh, bias):
    out = fn(x, residual, mask, w_ih, w_hh, bias)
    grad = torch.randn(out.shape, generator=torch.Generator().manual_seed(1)).to(out.dtype)
    return out, torch.autograd.grad(out, [x, residual, w_ih, w_hh, bias], grad)


def assert_same(got, expected, **tol):
    torch.testing.assert_close(got[0], expected[0], **tol)
    for name, a, b in zip(NAMES, got[1], expected[1]):
        torch.testing.assert_close(a, b, **tol, msg=lambda m, name=name: f"grad of {name}: {m}")


@pytest.mark.parametrize("impl", FAST)
@pytest.mark.parametrize("case", CASES, ids=lambda c: f"lengths{c[0]}-I{c[1]}-H{c[2]}")
def test_fast_matches_reference_float32(impl, case):
    args = problem(*case)
    got = outputs_and_grads(lambda *a: R.residual_lstm(*a, impl=impl), *args)
    assert_same(got, outputs_and_grads(R.reference, *args), rtol=1e-5, atol=2e-6)
    assert torch.all(got[0][~args[2]] == 0)


@pytest.mark.parametrize("impl", FAST)
def test_fast_matches_reference_bfloat16(impl):
    args = problem([6, 4, 1], 5, 7, dtype=torch.bfloat16)
    got = outputs_and_grads(lambda *a: R.residual_lstm(*a, impl=impl), *args)
    expected = outputs_and_grads(R.reference, *args)
    assert got[0].dtype == torch.bfloat16 and all(g.dtype == torch.bfloat16 for g in got[1])
    assert_same(got, expected, rtol=5e-2, atol=5e-2)


@pytest.mark.parametrize("impl", ["cpu", "torch"])
def test_gradcheck_float64(impl):
    x, residual, mask, w_ih, w_hh, bias = problem([3, 1], 2, 2, dtype=torch.float64)
    assert torch.autograd.gradcheck(
        lambda x, r, *w: R.residual_lstm(x, r, mask, *w, impl=impl), (x, residual, w_ih, w_hh, bias)
    )


def test_cpu_is_the_default_on_cpu():
    args = problem([5, 3], 4, 4)
    torch.testing.assert_close(R.residual_lstm(*args), R.residual_lstm(*args, impl="cpu"), rtol=0, atol=0)


def test_unknown_impl_is_refused():
    with pytest.raises(ValueError, match="unknown impl"):
        R.residual_lstm(*problem([2], 2, 2), impl="cuda")


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"lengths{c[0]}-I{c[1]}-H{c[2]}")
def test_the_persistent_triton_recurrence_adds_the_residual_as_the_reference(monkeypatch, case):
    """The step loops as one Triton launch per pass (multi_lstm/persistent.py), with the lateral residual."""
    from rnnbench.kernels.multi_lstm import persistent

    monkeypatch.setattr(persistent, "ENABLED", True)
    args = problem(*case)
    got = outputs_and_grads(lambda *a: R.residual_lstm(*a, impl="triton"), *args)
    assert_same(got, outputs_and_grads(R.reference, *args), rtol=1e-5, atol=2e-6)
    assert torch.all(got[0][~args[2]] == 0)
