"""gated_scan: each fast implementation equals the reference, outputs and every gradient.

Triton runs in its interpreter on CPU tensors (TRITON_INTERPRET=1, set by tests/conftest.py
before anything imports Triton); those cases are marked slow there.
"""

import pytest
import torch

from rnnbench.kernels import gated_scan as op
from rnnbench.kernels.gated_scan import cpu as cpu_impl
from tests.helpers import compile_for_a_gpu

pytestmark = pytest.mark.usefixtures("nan_allocations")

FAST = ("cpu", "triton")
TOLERANCE = {torch.float32: dict(atol=1e-5, rtol=1e-5), torch.bfloat16: dict(atol=3e-2, rtol=3e-2)}
INPUTS = ("f", "x", "o", "c0")


def make_case(B, T, D, lengths, *, logits, has_o=True, has_c0=True, dtype=torch.float32, seed=0):
    """Inputs (gates as logits, or as values in (0, 1)), a padding mask and loss weights."""
    g = torch.Generator().manual_seed(seed)
    gate = (lambda t: t) if logits else torch.sigmoid
    return {
        "f": gate(2 * torch.randn(B, T, D, generator=g)).to(dtype),
        "x": torch.randn(B, T, D, generator=g).to(dtype),
        "o": gate(2 * torch.randn(B, T, D, generator=g)).to(dtype) if has_o else None,
        "c0": torch.randn(B, D, generator=g) if has_c0 else None,
        "mask": torch.arange(T)[None, :] < torch.tensor(lengths)[:, None],
        "w_h": torch.randn(B, T, D, generator=g),
        "w_c": torch.randn(B, D, generator=g),
    }


def run(impl, case, *, reverse, logits, poison_padding=False):
    """(h, c_last, gradients of a weighted sum of both) from fresh leaves.

    With poison_padding, f, x and o hold NaN at padded steps: an implementation
    that reads padding then returns NaN.
    """
    pad = ~case["mask"]
    leaves = {}
    for name in INPUTS:
        if case[name] is None:
            continue
        t = case[name].clone()
        if poison_padding and name != "c0":
            t[pad] = float("nan")
        leaves[name] = t.requires_grad_()
    h, c = op.gated_scan(
        leaves["f"], leaves["x"], case["mask"], o=leaves.get("o"), c0=leaves.get("c0"),
        reverse=reverse, logits=logits, impl=impl,
    )
    ((h.float() * case["w_h"]).sum() + (c * case["w_c"]).sum()).backward()
    return h, c, {name: t.grad for name, t in leaves.items()}


def check(impl, case, *, reverse, logits):
    """The implementation against the reference: values, padding exactly 0, no NaN anywhere."""
    h, c, grads = run(impl, case, reverse=reverse, logits=logits, poison_padding=True)
    h_ref, c_ref, grads_ref = run("reference", case, reverse=reverse, logits=logits)
    tol = TOLERANCE[case["x"].dtype]
    assert h.dtype == case["x"].dtype and c.dtype == torch.float32
    pad = ~case["mask"]
    pairs = [("h", h, h_ref), ("c_last", c, c_ref)] + [(f"d{k}", grads[k], grads_ref[k]) for k in grads]
    for name, got, want in pairs:
        assert got.dtype == want.dtype, name
        assert not got.isnan().any(), f"{name} has NaN (unwritten, or padding read)"
        if got.dim() == 3:
            assert (got[pad] == 0).all(), f"{name} is not exactly 0 at padding"
        torch.testing.assert_close(got.float(), want.float(), **tol, msg=lambda m: f"{impl} {name}: {m}")


OPTIONS = [
    pytest.param(
        reverse, has_o, has_c0, logits, id=f"{'rev' if reverse else 'fwd'}-o{has_o:d}-c0{has_c0:d}-logits{logits:d}"
    )
    for reverse in (False, True)
    for has_o in (False, True)
    for has_c0 in (False, True)
    for logits in (False, True)
]


@pytest.mark.parametrize("impl", FAST)
@pytest.mark.parametrize("reverse, has_o, has_c0, logits", OPTIONS)
def test_every_option_matches_reference(impl, reverse, has_o, has_c0, logits):
    """Ragged lengths with padding, channels not a multiple of the kernel block."""
    case = make_case(3, 7, 33, [7, 4, 1], logits=logits, has_o=has_o, has_c0=has_c0)
    check(impl, case, reverse=reverse, logits=logits)


SHAPES = [
    pytest.param(1, 1, 5, [1], id="T1-batch1-D5"),
    pytest.param(1, 9, 33, [9], id="odd-T-batch1"),
    pytest.param(2, 16, 20, [16, 5], id="ragged-D20"),
    pytest.param(4, 5, 1, [5, 0, 2, 3], id="D1-empty-sequence"),
]


@pytest.mark.parametrize("impl", FAST)
@pytest.mark.parametrize("B, T, D, lengths", SHAPES)
@pytest.mark.parametrize("reverse", [False, True], ids=["fwd", "rev"])
def test_shapes_match_reference(impl, B, T, D, lengths, reverse):
    check(impl, make_case(B, T, D, lengths, logits=True), reverse=reverse, logits=True)


@pytest.mark.parametrize("variant", ["chunked", "step"])
@pytest.mark.parametrize("reverse", [False, True], ids=["fwd", "rev"])
@pytest.mark.parametrize("has_o", [False, True], ids=["h=c", "gated"])
def test_both_triton_variants_match_reference_with_holes_in_the_mask(monkeypatch, variant, reverse, has_o):
    """The chunked kernels (tiles of steps scanned at once; 4 steps a tile in the interpreter) and the
    step kernels, over tile boundaries and a mask with padding inside a sequence as well as after it."""
    from rnnbench.kernels.gated_scan import triton as kernels

    monkeypatch.setattr(kernels, "VARIANT", {"forward": variant, "backward": variant})
    case = make_case(3, 11, 33, [11, 9, 1], logits=True, has_o=has_o, seed=3)
    case["mask"][0, [0, 3, 4, 5, 8]] = False  # holes: at the start, a run across a tile boundary, inside a tile
    case["mask"][1, [4, 7]] = False
    check("triton", case, reverse=reverse, logits=True)


@pytest.mark.parametrize("impl", FAST)
@pytest.mark.parametrize("reverse", [False, True], ids=["fwd", "rev"])
@pytest.mark.parametrize("has_o", [False, True], ids=["h=c", "gated"])
def test_bfloat16_matches_reference(impl, reverse, has_o):
    """bfloat16 inputs and outputs, float32 state: loose tolerance."""
    case = make_case(3, 7, 33, [7, 4, 1], logits=True, has_o=has_o, dtype=torch.bfloat16)
    check(impl, case, reverse=reverse, logits=True)


@pytest.mark.parametrize("B, D", [(4, 3100), (2, 6200)], ids=["batch-split", "channel-split"])
def test_cpu_threads_share_the_work(B, D):
    """Tiles of batch rows, or of channels when the batch is smaller than the thread count."""
    threads = torch.get_num_threads()
    torch.set_num_threads(3)
    try:
        assert len(cpu_impl._tiles(B, D)) == 3
        check("cpu", make_case(B, 5, D, [5, 2, 4, 1][:B], logits=True), reverse=True, logits=True)
    finally:
        torch.set_num_threads(threads)


@pytest.mark.parametrize("impl", FAST)
def test_channel_slices_and_broadcast_gradient(impl):
    """RCRN's bidirectional listener passes channel slices of wider tensors (strided in
    batch and time), and h.sum() sends back a broadcast (stride 0) gradient."""
    g = torch.Generator().manual_seed(1)
    B, T, D = 2, 6, 10
    mask = torch.arange(T)[None, :] < torch.tensor([[6], [3]])
    wide = [torch.randn(B, T, 2 * D, generator=g).requires_grad_() for _ in range(3)]
    results = []
    for impl_ in (impl, "reference"):
        f, x, o = (w[..., D:] for w in wide)
        h, c = op.gated_scan(f, x, mask, o=o, reverse=True, logits=True, impl=impl_)
        (h.sum() + c.sum()).backward()
        results.append([h, c] + [w.grad.clone() for w in wide])
        for w in wide:
            w.grad = None
    for got, want in zip(*results):
        torch.testing.assert_close(got, want, **TOLERANCE[torch.float32])


@pytest.mark.parametrize("impl", FAST)
def test_without_grad_matches_reference(impl):
    """Inference skips saving the states; results are unchanged."""
    case = make_case(3, 7, 33, [7, 4, 1], logits=True)
    with torch.no_grad():
        got = op.gated_scan(case["f"], case["x"], case["mask"], o=case["o"], c0=case["c0"], logits=True, impl=impl)
        want = op.reference(case["f"], case["x"], case["mask"], o=case["o"], c0=case["c0"], logits=True)
    for g, w in zip(got, want):
        torch.testing.assert_close(g, w, **TOLERANCE[torch.float32])


@pytest.mark.parametrize("reverse", [False, True], ids=["fwd", "rev"])
@pytest.mark.parametrize("logits", [False, True], ids=["values", "logits"])
def test_cpu_backward_gradcheck(reverse, logits):
    """The hand-written backward against finite differences (float64, ragged)."""
    case = make_case(2, 5, 3, [5, 3], logits=logits, dtype=torch.float64)
    mask = case["mask"]
    inputs = tuple(case[k].double().requires_grad_() for k in INPUTS)

    def scan(f, x, o, c0):
        return op.gated_scan(f, x, mask, o=o, c0=c0, reverse=reverse, logits=logits, impl="cpu")

    assert torch.autograd.gradcheck(scan, inputs)


@pytest.mark.slow
def test_triton_kernels_compile_for_a_gpu(tmp_path):
    """The interpreter does not type-check like the compiler: compile every kernel (both
    variants, forward and backward) for a CUDA target (sm_80, no GPU needed) in a process
    without TRITON_INTERPRET."""
    state = {name: "*fp32" for name in ("c0_ptr", "c_prev_ptr", "c_last_ptr", "dc_last_ptr", "dc0_ptr")}
    result = compile_for_a_gpu(
        tmp_path, "rnnbench.kernels.gated_scan.triton",
        ["_forward_kernel", "_backward_kernel", "_step_forward_kernel", "_step_backward_kernel"],
        {"HAS_O": True, "HAS_C0": True, "SAVE": True, "REVERSE": True, "LOGITS": True, "BLOCK_T": 16, "BLOCK_D": 128},
        {"mask_ptr": "*u8", **state}, dtypes=("fp32", "bf16"),
    )
    assert result.returncode == 0, result.stderr[-3000:]


def test_default_on_cpu_is_the_cpu_path(monkeypatch):
    calls = []
    forward = cpu_impl.Backend.forward
    monkeypatch.setattr(cpu_impl.Backend, "forward", lambda *a: calls.append(1) or forward(*a))
    case = make_case(2, 4, 3, [4, 2], logits=True)
    op.gated_scan(case["f"], case["x"], case["mask"], logits=True)
    assert calls


def test_unknown_impl_lists_the_known_ones():
    case = make_case(1, 2, 3, [2], logits=True)
    with pytest.raises(ValueError, match="unknown impl 'cuda'.*auto, reference, torch, cpu, triton"):
        op.gated_scan(case["f"], case["x"], case["mask"], impl="cuda")


def test_an_implementation_the_op_lacks_is_refused_by_name():
    case = make_case(1, 2, 3, [2], logits=True)
    with pytest.raises(ValueError, match="gated_scan has no 'torch' implementation"):
        op.gated_scan(case["f"], case["x"], case["mask"], impl="torch")


@pytest.mark.parametrize("impl", FAST)
def test_mismatched_shapes_are_refused(impl):
    case = make_case(2, 4, 3, [4, 2], logits=True)
    with pytest.raises(ValueError, match=r"mask \[B, T\]"):
        op.gated_scan(case["f"], case["x"], case["mask"][:, :3], impl=impl)
