"""fhe_upper: every fast implementation against the reference, outputs and every gradient.

Fast implementations: "torch" (nn.LSTM over the open positions), "cpu" (multi_lstm's
recurrence with the compiled C cell) and "triton" (the Triton cell and carry kernels,
run by Triton's interpreter on the CPU: TRITON_INTERPRET is set by tests/conftest.py,
before anything imports the Triton modules). The encoder-level checks (hand-set gates
against nn.LSTMCell) are in tests/encoders/test_fhe.py.
"""
import pytest
import torch

from rnnbench.kernels import fhe_upper as op

pytestmark = pytest.mark.usefixtures("nan_allocations")

FAST = ["torch", "cpu", "triton"]
NAMES = ["x", "w_ih", "w_hh", "b_ih", "b_hh"]

# (lengths, gate pattern, input size, hidden): batch 1 with T = 1, T = 1 over a batch,
# odd T, ragged with an empty sequence, all gates shut, all open; hidden sizes below and
# above the interpreter's block of 16 and not a multiple of it.
CASES = [
    ([1], "random", 3, 5),
    ([1, 1, 1], "random", 4, 20),
    ([7], "random", 3, 5),
    ([7, 3, 5, 1], "random", 4, 20),
    ([6, 0, 2], "random", 3, 5),
    ([7, 3, 5, 1], "shut", 4, 20),
    ([7, 3, 5, 1], "open", 4, 20),
    ([9, 9], "open", 3, 17),
]


def problem(lengths, pattern, I, H, dtype=torch.float32, seed=0):
    """Inputs with noise in the padding and gates set at padding too (neither may matter)."""
    g = torch.Generator().manual_seed(seed)
    B, T = len(lengths), max(max(lengths), 1)
    mask = torch.arange(T).unsqueeze(0) < torch.tensor(lengths).unsqueeze(1)
    gates = {
        "random": torch.rand(B, T, generator=g) < 0.5,
        "shut": torch.zeros(B, T, dtype=torch.bool),
        "open": torch.ones(B, T, dtype=torch.bool),
    }[pattern]
    x = torch.randn(B, T, I, generator=g).to(dtype).requires_grad_()
    weights = [(0.5 * torch.randn(*s, generator=g)).to(dtype).requires_grad_() for s in ((4 * H, I), (4 * H, H), (4 * H,), (4 * H,))]
    return x, gates, mask, weights


def outputs_and_grads(impl, x, gates, mask, weights, seed=1):
    out = op.fhe_upper(x, gates, mask, *weights, impl=impl)
    # a probe representable in bfloat16, so a bfloat16 run and its float64 check weigh alike
    probe = torch.randn(out.shape, generator=torch.Generator().manual_seed(seed)).bfloat16().to(out.dtype)
    return out, torch.autograd.grad((out * probe).sum(), [x, *weights])


def assert_same(got, expected, **tol):
    (out_a, grads_a), (out_b, grads_b) = got, expected
    torch.testing.assert_close(out_a, out_b, **tol)
    for name, a, b in zip(NAMES, grads_a, grads_b):
        torch.testing.assert_close(a, b, **tol, msg=lambda m, name=name: f"grad of {name}: {m}")


@pytest.mark.parametrize("impl", FAST)
@pytest.mark.parametrize("case", CASES, ids=lambda c: f"lengths{c[0]}-{c[1]}-H{c[3]}")
def test_matches_reference_float32(impl, case):
    x, gates, mask, weights = problem(*case)
    expected = outputs_and_grads("reference", x, gates, mask, weights)
    got = outputs_and_grads(impl, x, gates, mask, weights)
    assert_same(got, expected, rtol=1e-5, atol=1e-6)
    assert torch.all(got[0][~mask] == 0)
    assert torch.all(got[1][0][~(gates & mask)] == 0)  # x is read at open gates only


@pytest.mark.parametrize("impl", FAST)
def test_bfloat16_against_float64_reference(impl):
    x, gates, mask, weights = problem([7, 3, 5, 1], "random", 4, 20, dtype=torch.bfloat16)
    got = outputs_and_grads(impl, x, gates, mask, weights)
    assert got[0].dtype == torch.bfloat16 and all(g.dtype == torch.bfloat16 for g in got[1])
    double = [t.detach().double().requires_grad_() for t in (x, *weights)]
    expected = outputs_and_grads("reference", double[0], gates, mask, double[1:])
    assert_same((got[0].double(), [g.double() for g in got[1]]), expected, rtol=5e-2, atol=5e-2)


def test_shut_gates_give_zero_states_and_no_gradient():
    x, gates, mask, weights = problem([4, 2], "shut", 3, 5)
    for impl in FAST:
        out, grads = outputs_and_grads(impl, x, gates, mask, weights)
        assert torch.all(out == 0)
        assert all(torch.all(g == 0) for g in grads), impl


@pytest.mark.parametrize("impl", ["torch", "cpu"])
def test_gradcheck_float64(impl):
    x, gates, mask, weights = problem([4, 1, 3], "random", 2, 3, dtype=torch.float64)
    assert torch.autograd.gradcheck(lambda x, *w: op.fhe_upper(x, gates, mask, *w, impl=impl), (x, *weights))


@pytest.mark.slow
def test_triton_carry_kernels_alone():
    """The carry and its adjoint against the torch gather, including rows past each count."""
    from rnnbench.kernels.fhe_upper.triton import Carry

    g = torch.Generator().manual_seed(3)
    mask = torch.arange(6).unsqueeze(0) < torch.tensor([6, 4, 1, 0]).unsqueeze(1)
    is_open = (torch.rand(4, 6, generator=g) < 0.5) & mask
    S = max(int(is_open.sum(1).max()), 1)
    updates = torch.randn(4, S, 18, generator=g, requires_grad=True)
    probe = torch.randn(4, 6, 18, generator=g)
    got = Carry.apply(updates, is_open, mask)
    expected = op.carry(updates, is_open, mask)
    torch.testing.assert_close(got, expected, rtol=0, atol=0)
    (d_got,) = torch.autograd.grad((got * probe).sum(), updates)
    (d_expected,) = torch.autograd.grad((expected * probe).sum(), updates)
    torch.testing.assert_close(d_got, d_expected, rtol=1e-6, atol=1e-6)


def test_default_on_cpu_is_the_compiled_recurrence(monkeypatch):
    calls = []
    monkeypatch.setattr(op, "_recurrence", lambda *a: calls.append(a[-1]) or op.reference(*a[:-1]))
    x, gates, mask, weights = problem([2], "open", 3, 5)
    op.fhe_upper(x, gates, mask, *weights)
    assert calls == ["cpu"]


def test_unknown_impl_is_named():
    x, gates, mask, weights = problem([2], "open", 3, 5)
    with pytest.raises(ValueError, match="known: auto, reference, torch, cpu, triton"):
        op.fhe_upper(x, gates, mask, *weights, impl="cuda")


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"lengths{c[0]}-{c[1]}-H{c[3]}")
def test_the_persistent_triton_recurrence_over_the_open_positions(monkeypatch, case):
    """FHE's upper LSTM with its step loops as one Triton launch per pass (multi_lstm/persistent.py)."""
    from rnnbench.kernels.multi_lstm import persistent

    monkeypatch.setattr(persistent, "ENABLED", True)
    x, gates, mask, weights = problem(*case)
    expected = outputs_and_grads("reference", x, gates, mask, weights)
    assert_same(outputs_and_grads("triton", x, gates, mask, weights), expected, rtol=1e-5, atol=1e-6)
