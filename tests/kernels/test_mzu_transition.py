"""mzu_transition: every implementation against the reference, outputs, zone cosines and every gradient.

Implementations: "cpu" (the fused scan with its C pieces, the CPU default), "torch" (the
fused scan with torch-operation pieces: the path of other devices and of machines without
a C compiler) and the "hoisted" variant. The weights come from the encoder's modules; the
paper's equations themselves are checked in tests/encoders/test_mzu.py.
"""
from __future__ import annotations

import copy

import pytest
import torch

from rnnbench.encoders.mzu import MZUTransition
from rnnbench.kernels import dispatch
from rnnbench.kernels import mzu_transition as op
from rnnbench.kernels.mzu_transition import cpu as cpu_impl
from rnnbench.kernels.mzu_transition import fused

pytestmark = pytest.mark.usefixtures("nan_allocations", "one_thread")

IMPLS = ["hoisted", "cpu", "torch"]
HIDDEN = 16
COMPOSITIONS = ["sat", "gcn", "cap"]
LAYER_NORMS = ["gate", "candidate"]  # on M_g before the sigmoid (the default), on M_h before the tanh

# (lengths, transition depth, shared transition weights): ragged with a zero-length
# sequence, T = 1, batch 1 with odd T, depth 1 and 2, shared and unshared.
CASES = [
    ([5, 3, 1], 1, False),
    ([1], 2, False),
    ([4, 2], 2, True),
    ([7], 1, False),
    ([3, 0, 2], 2, False),
]


def run(impl, x, mask, transition, drop=None):
    cells, options = transition.weights(), transition.options
    if impl == "hoisted":
        return op.hoisted(x, mask, cells, options, drop)
    return op.mzu_transition(x, mask, cells, options, drop, impl=impl)


def problem(composition, lengths, depth, share, dtype=torch.float32, dropout=0.0, seed=0, layer_norm="gate"):
    """A transition (random layer-norm affine parameters, so their gradients are not
    trivial) and inputs with noise in the padding."""
    torch.manual_seed(seed)
    transition = MZUTransition(3, HIDDEN, composition=composition, transition_depth=depth,
                                  share_transition=share, dropout=dropout, layer_norm=layer_norm).to(dtype)
    with torch.no_grad():
        for cell in transition.cells:
            cell.layer_norm.weight.uniform_(0.5, 1.5)
            cell.layer_norm.bias.uniform_(-0.5, 0.5)
    T = max(max(lengths), 1)
    x = torch.randn(len(lengths), T, 3, dtype=dtype, requires_grad=True)
    mask = torch.arange(T).unsqueeze(0) < torch.tensor(lengths).unsqueeze(1)
    return transition, x, mask


def outputs_and_grads(impl, transition, x, mask, drop=None, seed=1):
    out = run(impl, x, mask, transition, drop)
    # probes representable in bfloat16, so a bfloat16 run and its float64 check weigh alike
    g = torch.Generator().manual_seed(seed)
    w_states = torch.randn(out.states.shape, generator=g).bfloat16().to(out.states.dtype)
    w_cos = torch.randn(out.zone_cosine.shape, generator=g).bfloat16().to(out.zone_cosine.dtype)
    loss = (out.states * w_states).sum() + (out.zone_cosine * w_cos).sum()
    names = ["x"] + [name for name, _ in transition.named_parameters()]
    return out, dict(zip(names, torch.autograd.grad(loss, [x, *transition.parameters()])))


def assert_same(got, expected, **tol):
    (out_a, grads_a), (out_b, grads_b) = got, expected
    torch.testing.assert_close(out_a.states, out_b.states, **tol)
    torch.testing.assert_close(out_a.zone_cosine, out_b.zone_cosine, **tol)
    assert grads_a.keys() == grads_b.keys()
    for name in grads_a:
        torch.testing.assert_close(grads_a[name], grads_b[name], **tol, msg=lambda m, name=name: f"grad of {name}: {m}")


def in_float64(transition, x):
    """The same problem in float64: the transition's weights and x, converted."""
    double = copy.deepcopy(transition).double()
    return double, x.detach().double().requires_grad_()


@pytest.mark.parametrize("layer_norm", LAYER_NORMS)
@pytest.mark.parametrize("impl", IMPLS)
@pytest.mark.parametrize("case", CASES, ids=lambda c: f"lengths{c[0]}-depth{c[1]}{'-shared' if c[2] else ''}")
@pytest.mark.parametrize("composition", COMPOSITIONS)
def test_matches_reference_float64(impl, composition, case, layer_norm):
    """The same arithmetic: equal to the reference up to float64 rounding."""
    transition, x, mask = problem(composition, *case, dtype=torch.float64, layer_norm=layer_norm)
    expected = outputs_and_grads("reference", transition, x, mask)
    got = outputs_and_grads(impl, transition, x, mask)
    assert_same(got, expected, rtol=1e-9, atol=1e-11)
    assert torch.all(got[0].states[~mask] == 0) and torch.all(got[0].zone_cosine[~mask] == 0)
    assert torch.all(got[1]["x"][~mask] == 0)  # padding is read, but never reaches the loss


@pytest.mark.parametrize("layer_norm", LAYER_NORMS)
@pytest.mark.parametrize("impl", IMPLS)
@pytest.mark.parametrize("case", CASES, ids=lambda c: f"lengths{c[0]}-depth{c[1]}{'-shared' if c[2] else ''}")
@pytest.mark.parametrize("composition", COMPOSITIONS)
def test_float32_as_accurate_as_the_reference(impl, composition, case, layer_norm):
    """In float32 the recurrence amplifies rounding (the float32 reference's gradients are
    1e-4 to 1e-3 off the float64 ones here), so a fixed tight tolerance between two
    float32 runs would test the summation order. Instead: every output and gradient of
    the implementation is as close to the float64 result as the float32 reference is
    (within 4x, plus 1e-5 of the tensor's largest value: float32 resolution with
    some amplification)."""
    transition, x, mask = problem(composition, *case, layer_norm=layer_norm)
    exact = outputs_and_grads("reference", *in_float64(transition, x), mask)
    reference = outputs_and_grads("reference", transition, x, mask)
    got = outputs_and_grads(impl, transition, x, mask)
    names, tensors = flatten(got)
    for name, a, r, e in zip(names, tensors, flatten(reference)[1], flatten(exact)[1]):
        assert a.dtype == torch.float32 and not torch.isnan(a).any(), name
        scale = e.abs().max().item()
        error, reference_error = ((t.double() - e).abs().max().item() for t in (a, r))
        assert error <= 4 * reference_error + 1e-5 * scale, f"{name}: error {error:.2e}, reference's {reference_error:.2e}"


def flatten(result):
    """(names, tensors) of an (output, gradients) pair."""
    out, grads = result
    return [["states", "zone_cosine", *grads], [out.states, out.zone_cosine, *grads.values()]]


@pytest.mark.parametrize("layer_norm", LAYER_NORMS)
@pytest.mark.parametrize("impl", IMPLS)
@pytest.mark.parametrize("composition", COMPOSITIONS)
def test_matches_reference_with_candidate_dropout(impl, composition, layer_norm):
    transition, x, mask = problem(composition, [6, 4, 2], 1, False, dtype=torch.float64, dropout=0.4, layer_norm=layer_norm)
    drop = transition.train().candidate_dropout(x)
    assert drop is not None and torch.any(drop == 0)
    expected = outputs_and_grads("reference", transition, x, mask, drop)
    assert_same(outputs_and_grads(impl, transition, x, mask, drop), expected, rtol=1e-9, atol=1e-11)


@pytest.mark.parametrize("impl", ["cpu", "torch"])
@pytest.mark.parametrize("composition", COMPOSITIONS)
def test_bfloat16_input_runs_in_float32_and_returns_bfloat16(impl, composition):
    """A bfloat16 transition and input: the fused scan computes in float32 and returns
    bfloat16; compared with the reference in float64 (the reference itself in bfloat16
    would be the noisier of the two)."""
    transition, x, mask = problem(composition, [5, 3, 1], 1, False, dtype=torch.bfloat16)
    got = outputs_and_grads(impl, transition, x, mask)
    assert got[0].states.dtype == torch.bfloat16 and all(g.dtype == torch.bfloat16 for g in got[1].values())
    expected = outputs_and_grads("reference", *in_float64(transition, x), mask)
    as_double = (op.MZUOutput(*(t.double() for t in got[0])), {k: v.double() for k, v in got[1].items()})
    assert_same(as_double, expected, rtol=5e-2, atol=5e-2)


@pytest.mark.parametrize("layer_norm", LAYER_NORMS)
@pytest.mark.parametrize("compiled", [True, False], ids=["c_pieces", "torch_ops"])
@pytest.mark.parametrize("composition", COMPOSITIONS)
def test_gradcheck_float64(composition, compiled, layer_norm):
    """The hand-written backward against finite differences, for x and every weight, on a
    tiny transition (2 zones of 2, FFN 3, 2 capsules) with random biases: with zero ones a
    ReLU input can sit exactly at its kink, where finite differences see half a slope."""
    torch.manual_seed(0)
    transition = MZUTransition(2, 4, composition=composition, num_zones=2, ffn_size=3, layer_norm=layer_norm).double()
    with torch.no_grad():
        for p in transition.parameters():
            if p.dim() == 1:
                p.uniform_(-0.5, 0.5)
    x = torch.randn(2, 2, 2, dtype=torch.float64)
    mask = torch.tensor([[True, True], [True, False]])
    names = [name for name, _ in transition.named_parameters()]
    params = [p.detach().clone().requires_grad_() for p in transition.parameters()]

    def fn(x, *weights):
        with torch.nn.utils.stateless._reparametrize_module(transition, dict(zip(names, weights))):
            out = fused.fused(x, mask, transition.weights(), transition.options, compiled=compiled)
        return out[0], out[1]

    assert torch.autograd.gradcheck(fn, (x.requires_grad_(), *params))


def test_cpu_is_the_default_and_the_encoder_uses_it(monkeypatch):
    calls = []
    scan = fused.fused
    monkeypatch.setattr(fused, "fused", lambda *a, **k: calls.append(k["compiled"]) or scan(*a, **k))
    from rnnbench.encoders.mzu import MZU

    dispatch.reset_used()
    encoder = MZU(3, hidden_size=8)
    encoder(torch.randn(2, 3, 3), torch.ones(2, 3, dtype=torch.bool))
    assert calls == [True, True]  # forward and backward scans, with the C pieces
    assert dispatch.implementations_used() == {"mzu_transition": "cpu"}


def test_compiled_pieces_are_used_on_cpu():
    assert dispatch.c_compiler_available(), "no C compiler: the CPU fast path would fall back to torch operations"
    assert fused.ops_for(torch.device("cpu")) is cpu_impl.COps
    assert fused.ops_for(torch.device("cpu"), compiled=False) is fused.TorchOps


def test_triton_is_refused_by_name_and_replaced_as_the_default(monkeypatch):
    transition, x, mask = problem("sat", [2], 1, False)
    with pytest.raises(ValueError, match="mzu_transition has no 'triton' implementation"):
        run("triton", x, mask, transition)
    monkeypatch.setattr(dispatch, "_default", "triton")
    dispatch.reset_used()
    with pytest.warns(UserWarning, match="impl='torch'"):
        run(None, x, mask, transition)
    assert dispatch.implementations_used() == {"mzu_transition": "torch"}
