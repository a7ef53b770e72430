"""multi_lstm: its reference against nn.LSTM, and every fast implementation against the reference.

Fast implementations: "cpu" (the compiled C cell), "torch" (the torch-operations cell,
also the CPU fallback without a C compiler) and "triton" (under TRITON_INTERPRET=1 on the
CPU, set by tests/conftest.py).
"""
from __future__ import annotations

import pytest
import torch
from torch import nn

from rnnbench.kernels import multi_lstm as M
from rnnbench.kernels.multi_lstm import fused
from tests.helpers import compile_for_a_gpu

FAST = ["cpu", "torch", "triton"]

# (lengths, input size, hidden, LSTMs, bidirectional): ragged with zero-length and
# length-1 sequences, T = 1, batch 1 with odd T, hidden sizes below, at and above the
# interpreter's block of 16, one direction.
CASES = [
    ([7, 3, 5, 1], 5, 5, 3, True),
    ([1, 1], 3, 4, 2, True),
    ([9], 4, 16, 1, True),
    ([6, 0, 2], 3, 20, 2, True),
    ([5, 4, 2], 6, 3, 2, False),
]


def run(impl, *args, bidirectional=True):
    return M.multi_lstm(*args, bidirectional=bidirectional, impl=impl)


def problem(lengths, I, H, N, bidirectional, dtype=torch.float32, seed=0):
    """Inputs with noise in the padding (it must never be read) and weights that require grad."""
    g = torch.Generator().manual_seed(seed)
    B, T, D = len(lengths), max(max(lengths), 1), N * (2 if bidirectional else 1)
    mask = torch.arange(T).unsqueeze(0) < torch.tensor(lengths).unsqueeze(1)
    x = torch.randn(B, T, I, generator=g, dtype=dtype)
    weights = [torch.randn(*shape, generator=g, dtype=dtype) * 0.5 for shape in ((D, 4 * H, I), (D, 4 * H, H), (D, 4 * H))]
    return [x.requires_grad_(), mask, *(w.requires_grad_() for w in weights)]


def outputs_and_grads(fn, x, mask, *weights, seed=1):
    out = fn(x, mask, *weights)
    grad = torch.randn(out.shape, generator=torch.Generator().manual_seed(seed)).to(out.dtype)
    return out, torch.autograd.grad(out, [x, *weights], grad)


def assert_same(a, b, **tol):
    (out_a, grads_a), (out_b, grads_b) = a, b
    torch.testing.assert_close(out_a, out_b, **tol)
    for name, ga, gb in zip(["x", "w_ih", "w_hh", "bias"], grads_a, grads_b):
        torch.testing.assert_close(ga, gb, **tol, msg=lambda m, name=name: f"grad of {name}: {m}")


def test_reference_is_nn_lstm_on_each_sequence():
    """Each direction pair of the reference is an nn.LSTM(bidirectional) run on the sequence alone."""
    torch.manual_seed(0)
    lstms = [nn.LSTM(4, 3, batch_first=True, bidirectional=True) for _ in range(2)]
    suffixes = ("l0", "l0_reverse")
    w_ih = torch.stack([getattr(m, f"weight_ih_{s}") for m in lstms for s in suffixes])
    w_hh = torch.stack([getattr(m, f"weight_hh_{s}") for m in lstms for s in suffixes])
    bias = torch.stack([getattr(m, f"bias_ih_{s}") + getattr(m, f"bias_hh_{s}") for m in lstms for s in suffixes])
    x, mask = problem([5, 2, 4], 4, 3, 2, True)[:2]
    with torch.no_grad():
        out = M.reference(x, mask, w_ih, w_hh, bias)
        for i, n in enumerate([5, 2, 4]):
            expected = torch.cat([m(x[i : i + 1, :n])[0][0] for m in lstms], dim=-1)
            torch.testing.assert_close(out[i, :n].flatten(1), expected)
        assert torch.all(out[~mask] == 0)


@pytest.mark.parametrize("impl", FAST)
@pytest.mark.parametrize("case", CASES, ids=lambda c: f"lengths{c[0]}-H{c[2]}-N{c[3]}-{'bi' if c[4] else 'uni'}")
def test_fast_matches_reference_float32(impl, case):
    lengths, I, H, N, bidirectional = case
    args = problem(lengths, I, H, N, bidirectional)
    expected = outputs_and_grads(lambda *a: M.reference(*a, bidirectional=bidirectional), *args)
    got = outputs_and_grads(lambda *a: run(impl, *a, bidirectional=bidirectional), *args)
    assert_same(got, expected, rtol=1e-5, atol=2e-6)
    assert torch.all(got[0][~args[1]] == 0)


@pytest.mark.parametrize("impl", FAST)
def test_bfloat16_runs_in_float32_and_returns_bfloat16(impl):
    args = problem([6, 4, 1], 5, 7, 2, True, dtype=torch.bfloat16)
    got = outputs_and_grads(lambda *a: run(impl, *a), *args)
    expected = outputs_and_grads(M.reference, *[a.detach().double().requires_grad_() if a.is_floating_point() else a for a in args])
    assert got[0].dtype == torch.bfloat16 and all(g.dtype == torch.bfloat16 for g in got[1])
    assert_same((got[0].double(), [g.double() for g in got[1]]), expected, rtol=5e-2, atol=5e-2)


@pytest.mark.parametrize("impl", ["cpu", "torch"])
def test_padding_is_never_read(impl):
    """NaN in the padding changes nothing: not the outputs, not any gradient."""
    args = problem([5, 2, 4], 3, 4, 2, True)
    clean = outputs_and_grads(lambda *a: run(impl, *a), *args)
    x = args[0].detach().clone()
    x[~args[1]] = float("nan")
    dirty = outputs_and_grads(lambda *a: run(impl, *a), x.requires_grad_(), *args[1:])
    assert_same(dirty, clean, rtol=0, atol=0)


def test_weight_gradients_in_chunks_of_steps(monkeypatch):
    """The backward sums the weight gradients over chunks of steps; chunk boundaries change nothing."""
    args = problem([7, 3, 6, 1], 4, 5, 2, True)
    expected = outputs_and_grads(M.reference, *args)
    monkeypatch.setattr(fused, "_CHUNK_ROWS", 8)  # 2 steps per chunk for 4 sequences
    assert_same(outputs_and_grads(lambda *a: run("cpu", *a), *args), expected, rtol=1e-5, atol=2e-6)


def test_backward_twice_through_one_graph():
    x, mask, *weights = problem([4, 2], 3, 4, 1, True)
    out = M.multi_lstm(x, mask, *weights)
    first = torch.autograd.grad(out.sum(), [x, *weights], retain_graph=True)
    second = torch.autograd.grad(out.sum(), [x, *weights])
    for a, b in zip(first, second):
        torch.testing.assert_close(a, b, rtol=0, atol=0)


def test_input_that_needs_no_gradient_gets_none():
    x, mask, *weights = problem([4, 2], 3, 4, 1, True)
    out = M.multi_lstm(x.detach(), mask, *weights)
    grads = torch.autograd.grad(out.sum(), weights)
    assert all(g is not None and torch.any(g != 0) for g in grads)


@pytest.mark.parametrize("impl", ["cpu", "torch"])
def test_gradcheck_float64(impl):
    x, mask, *weights = problem([3, 1], 2, 2, 1, True, dtype=torch.float64)
    assert torch.autograd.gradcheck(lambda x, *w: run(impl, x, mask, *w), (x, *weights))


def test_unknown_impl_is_refused():
    with pytest.raises(ValueError, match="unknown impl"):
        M.multi_lstm(*problem([2], 2, 2, 1, True), impl="cuda")


def test_mismatched_weights_are_refused():
    x, mask, w_ih, w_hh, bias = problem([2], 2, 2, 1, True)
    with pytest.raises(ValueError, match=r"w_hh \[D, 4H, H\]"):
        M.multi_lstm(x, mask, w_ih, w_hh[:, :7], bias)


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"lengths{c[0]}-H{c[2]}-N{c[3]}-{'bi' if c[4] else 'uni'}")
def test_the_persistent_triton_recurrence_matches_reference(monkeypatch, case):
    """The step loops as one Triton launch per pass (persistent.py): outputs and every gradient as the
    reference's, padding exactly 0; hidden sizes below, at and above the interpreter's block of 16."""
    from rnnbench.kernels.multi_lstm import persistent

    monkeypatch.setattr(persistent, "ENABLED", True)
    launched = []
    for name in ("forward", "backward"):
        monkeypatch.setattr(persistent, name, lambda *a, _f=getattr(persistent, name), _n=name: launched.append(_n) or _f(*a))
    lengths, I, H, N, bidirectional = case
    args = problem(lengths, I, H, N, bidirectional)
    expected = outputs_and_grads(lambda *a: M.reference(*a, bidirectional=bidirectional), *args)
    got = outputs_and_grads(lambda *a: run("triton", *a, bidirectional=bidirectional), *args)
    assert launched == ["forward", "backward"]
    assert_same(got, expected, rtol=1e-5, atol=2e-6)
    assert torch.all(got[0][~args[1]] == 0)


def test_the_persistent_recurrence_is_off_by_default_and_never_for_other_cells():
    from rnnbench.kernels.multi_lstm import persistent
    from rnnbench.kernels.multi_lstm.triton import TritonCell

    x = torch.zeros(1, 1, 1)
    assert not persistent.ENABLED and not fused.persistent_applies(TritonCell, x)
    assert not fused.persistent_applies(fused.TorchCell, x)


@pytest.mark.slow
def test_the_persistent_kernels_compile_for_a_gpu(tmp_path):
    """The interpreter does not type-check like the compiler (nor does it run tl.dot's GPU lowering):
    compile both persistent kernels for a CUDA target (sm_80, no GPU needed) without TRITON_INTERPRET."""
    result = compile_for_a_gpu(tmp_path, "rnnbench.kernels.multi_lstm.persistent", ["_forward_kernel", "_backward_kernel"],
                               {"HAS_R": True, "HAS_DR": True, "BLOCK_B": 16, "BLOCK_H": 64, "BLOCK_K": 32}, {"len_ptr": "*i64"})
    assert result.returncode == 0, result.stderr[-3000:]
