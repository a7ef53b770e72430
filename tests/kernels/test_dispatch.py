"""The dispatcher: one set of implementation names, one fallback policy, what ran."""
from __future__ import annotations

import warnings

import pytest
import torch

from rnnbench.errors import RnnbenchError
from rnnbench.kernels import dispatch
from rnnbench.kernels import gated_scan as gs
from rnnbench.kernels import residual_lstm as R


@pytest.fixture(autouse=True)
def fresh(monkeypatch):
    """Each test starts from the auto default, no record and no warning given yet."""
    monkeypatch.setattr(dispatch, "_default", "auto")
    dispatch.reset_used()
    dispatch._warn_once.cache_clear()
    yield
    dispatch.reset_used()


def scan_case():
    g = torch.Generator().manual_seed(0)
    f, x = torch.randn(2, 3, 4, generator=g), torch.randn(2, 3, 4, generator=g)
    return f, x, torch.tensor([[True, True, True], [True, False, False]])


def lstm_case():
    g = torch.Generator().manual_seed(0)
    x, r = torch.randn(2, 3, 4, generator=g), torch.randn(2, 3, 4, generator=g)
    w = [torch.randn(*s, generator=g) for s in ((16, 4), (16, 4), (16,))]
    return x, r, torch.tensor([[True, True, True], [True, False, False]]), *w


def test_auto_runs_cpu_on_cpu_and_records_it():
    f, x, mask = scan_case()
    gs.gated_scan(f, x, mask, logits=True)
    R.residual_lstm(*lstm_case())
    assert dispatch.implementations_used() == {"gated_scan": "cpu", "residual_lstm": "cpu"}
    dispatch.reset_used()
    assert dispatch.implementations_used() == {}


def test_the_process_default_is_used_and_a_per_call_impl_wins():
    dispatch.set_default_impl("reference")
    f, x, mask = scan_case()
    gs.gated_scan(f, x, mask, logits=True)
    gs.gated_scan(f, x, mask, logits=True, impl="cpu")
    assert dispatch.implementations_used() == {"gated_scan": "reference,cpu"}


def test_unknown_default_is_refused_in_one_line():
    with pytest.raises(RnnbenchError, match="'fast' is unknown: use one of auto, reference, torch, cpu, triton"):
        dispatch.set_default_impl("fast")


def test_a_default_the_op_lacks_falls_back_with_one_warning():
    dispatch.set_default_impl("torch")
    f, x, mask = scan_case()
    with pytest.warns(UserWarning, match="gated_scan has no 'torch' implementation, so impl='torch' runs as impl='reference'"):
        gs.gated_scan(f, x, mask, logits=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        gs.gated_scan(f, x, mask, logits=True)  # once only
    assert dispatch.implementations_used() == {"gated_scan": "reference"}


def test_a_preferred_name_falls_back_as_the_default_does_where_a_plain_name_is_refused():
    f, x, mask = scan_case()
    with pytest.raises(RnnbenchError, match="gated_scan has no 'torch' implementation"):
        gs.gated_scan(f, x, mask, logits=True, impl="torch")
    with pytest.warns(UserWarning, match="gated_scan has no 'torch' implementation, so impl='torch' runs as impl='reference'"):
        gs.gated_scan(f, x, mask, logits=True, impl=dispatch.Preferred("torch"))
    gs.gated_scan(f, x, mask, logits=True, impl=dispatch.Preferred("reference"))
    assert dispatch.implementations_used() == {"gated_scan": "reference"} and dispatch.get_default_impl() == "auto"
    with pytest.raises(RnnbenchError, match="'fast' is unknown: use one of auto, reference, torch, cpu, triton"):
        dispatch.Preferred("fast")


def test_no_c_compiler_falls_back_to_torch_or_reference_with_a_warning(monkeypatch):
    monkeypatch.setattr(dispatch, "c_compiler_available", lambda: False)
    f, x, mask = scan_case()
    with pytest.warns(UserWarning, match="no C compiler found"):
        h, c = gs.gated_scan(f, x, mask, logits=True)
    want = gs.reference(f, x, mask, logits=True)
    torch.testing.assert_close(h, want[0], rtol=0, atol=0)
    with pytest.warns(UserWarning, match="impl='cpu' runs as impl='torch'"):
        R.residual_lstm(*lstm_case(), impl="cpu")
    assert dispatch.implementations_used() == {"gated_scan": "reference", "residual_lstm": "torch"}


def test_no_triton_falls_back_with_a_warning(monkeypatch):
    monkeypatch.setattr(dispatch, "triton_available", lambda: False)
    with pytest.warns(UserWarning, match="Triton is not installed"):
        R.residual_lstm(*lstm_case(), impl="triton")
    assert dispatch.implementations_used() == {"residual_lstm": "torch"}


def test_cpu_on_a_cuda_tensor_is_refused():
    class FakeCuda:
        is_cuda = True
        device = torch.device("cuda")

    with pytest.raises(RnnbenchError, match="impl='cpu' needs CPU tensors"):
        dispatch.resolve("gated_scan", gs.IMPLS, FakeCuda(), "cpu")
    assert dispatch.resolve("gated_scan", gs.IMPLS, FakeCuda(), None) == "triton"


@pytest.mark.parametrize(
    "shapes, ok",
    [
        ({"a": ((2, 3), "B T"), "b": ((2, 3, 8), "B T 4H"), "c": ((2,), "H")}, True),
        ({"a": ((2, 3), "B T"), "b": ((2, 4, 8), "B T 4H")}, False),
        ({"b": ((2, 3, 8), "B T 4H"), "c": ((3,), "H")}, False),
        ({"b": ((2, 3, 7), "B T 4H")}, False),
        ({"a": ((2, 3, 1), "B T")}, False),
    ],
)
def test_shape_check(shapes, ok):
    named = {name: (torch.empty(shape), pattern) for name, (shape, pattern) in shapes.items()}
    if ok:
        assert dispatch.check_shapes("op", **named)["H"] == 2
    else:
        with pytest.raises(RnnbenchError, match="op expects"):
            dispatch.check_shapes("op", **named)


@pytest.mark.parametrize("op", ["gated_scan", "multi_lstm", "residual_lstm", "fhe_upper", "mzu_transition"])
def test_every_op_names_its_implementations_from_the_one_set(op):
    import importlib

    module = importlib.import_module(f"rnnbench.kernels.{op}")
    assert module.IMPLS[0] == "reference" and set(module.IMPLS) <= set(dispatch.IMPLS)
    assert callable(getattr(module, op))


@pytest.mark.slow  # one Triton kernel in the interpreter
def test_the_autotuned_configs_name_each_kernel_its_key_and_the_config_chosen(monkeypatch):
    pytest.importorskip("triton")
    B, T, D = 2, 3, 4
    f, x = torch.rand(B, T, D), torch.randn(B, T, D)
    gs.gated_scan(f, x, torch.ones(B, T, dtype=torch.bool), impl="triton")
    from rnnbench.kernels.gated_scan import triton as backend

    chosen = dispatch.autotuned_configs()["gated_scan._forward_kernel"]
    assert list(chosen) == ["only config"] and chosen["only config"].startswith("BLOCK_T=4, BLOCK_D=16, num_warps=1")  # the interpreter's
    import triton

    # where several configs were tried, the autotuner's cache holds one choice per key
    monkeypatch.setattr(backend._forward_kernel, "cache", {(400, True, True, False, "torch.float32"): triton.Config({"BLOCK_D": 128}, num_warps=2)})
    chosen = dispatch.autotuned_configs()["gated_scan._forward_kernel"]
    assert list(chosen) == ["400, True, True, False, float32"]
    assert chosen["400, True, True, False, float32"].startswith("BLOCK_D=128, num_warps=2")
