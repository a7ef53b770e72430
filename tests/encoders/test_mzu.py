"""MZU: the paper's equations checked against computations written here from the
paper (Meng et al., AAAI 2020), independent of the kernel's own helpers, and the
hoisted fast path checked against the reference (forward and gradients).
"""
from __future__ import annotations

import math

import pytest
import torch

from rnnbench.encoders.base import lengths_of, reverse_padded
from rnnbench.encoders.mzu import MZU, MZUTransition, mzu_recurrence
from rnnbench.kernels import mzu_transition as op

pytestmark = pytest.mark.usefixtures("one_thread")

COMPOSITIONS = ["sat", "gcn", "cap"]


def cos(a, b):
    return (a * b).sum(-1) / (a.norm(dim=-1) * b.norm(dim=-1))


def lengths_mask(lengths, T=None):
    T = T or max(lengths)
    return torch.arange(T).unsqueeze(0) < torch.tensor(lengths).unsqueeze(1)


# ---------------------------------------------------------------- zone composition


def test_self_attention_weights_sum_to_one_and_follow_eq6():
    g = torch.Generator().manual_seed(0)
    B, N, d = 2, 4, 3
    z = torch.randn(B, N, d, generator=g, dtype=torch.float64)
    wq, wk, wv = (torch.randn(d, d, generator=g, dtype=torch.float64) for _ in range(3))
    o, weights = op.self_attention(z, wq, wk, wv)
    torch.testing.assert_close(weights.sum(-1), torch.ones(B, N, dtype=torch.float64))
    for b in range(B):
        for i in range(N):
            scores = torch.stack([(z[b, i] @ wq) @ (z[b, j] @ wk) / math.sqrt(d) for j in range(N)])
            a = scores.exp() / scores.exp().sum()
            torch.testing.assert_close(weights[b, i], a)
            torch.testing.assert_close(o[b, i], sum(a[j] * (z[b, j] @ wv) for j in range(N)))


def test_gcn_normalised_adjacency_on_hand_made_zones():
    """Zones (1,0), (1,1), (0,1): cosines c = 1/sqrt(2) between neighbours, 0 between the ends."""
    z = torch.tensor([[[1.0, 0.0], [1.0, 1.0], [0.0, 1.0]]], dtype=torch.float64)
    c = 1 / math.sqrt(2)
    a = torch.tensor([[2, c, 0], [c, 2, c], [0, c, 2]], dtype=torch.float64)  # A + I
    deg = torch.tensor([2 + c, 2 + 2 * c, 2 + c], dtype=torch.float64)
    expected = a / torch.sqrt(deg.unsqueeze(1) * deg.unsqueeze(0))
    torch.testing.assert_close(op.normalised_adjacency(z)[0], expected)
    o, adjacency = op.graph_convolution(z, torch.eye(2, dtype=torch.float64), "relu")
    torch.testing.assert_close(adjacency[0], expected)
    torch.testing.assert_close(o[0], torch.relu(expected @ z[0]))


def test_gcn_degree_uses_absolute_edge_weights():
    """Opposite zones have cosine -1: the signed degree 2 - 1 = 1 would hide the edge; |.| gives 3."""
    z = torch.tensor([[[1.0, 0.0], [-2.0, 0.0]]], dtype=torch.float64)
    expected = torch.tensor([[2 / 3, -1 / 3], [-1 / 3, 2 / 3]], dtype=torch.float64)
    torch.testing.assert_close(op.normalised_adjacency(z)[0], expected)
    # One zone against three opposite ones: the signed degree is 2 - 3 = -1 (no square root).
    z = torch.tensor([[[1.0], [-1.0], [-1.0], [-1.0]]])
    assert torch.isfinite(op.normalised_adjacency(z)).all()


def test_squash_keeps_direction_and_norm_below_one():
    s = torch.tensor([[3.0, 4.0], [1e-3, 0.0], [300.0, 400.0]], dtype=torch.float64)
    v = op.squash(s)
    n = s.norm(dim=-1)
    torch.testing.assert_close(v.norm(dim=-1), n**2 / (1 + n**2))
    torch.testing.assert_close(v / v.norm(dim=-1, keepdim=True), s / n.unsqueeze(-1))
    assert (v.norm(dim=-1) < 1).all()


def test_dynamic_routing_couplings_and_capsules():
    g = torch.Generator().manual_seed(1)
    B, N, J, d_z, d_o, iters = 2, 4, 2, 3, 5, 3
    z = torch.randn(B, N, d_z, generator=g, dtype=torch.float64)
    w = torch.randn(J, d_z, d_o, generator=g, dtype=torch.float64)
    o, couplings = op.dynamic_routing(z, w, iters)
    assert couplings.shape == (iters, B, J, N)
    torch.testing.assert_close(couplings.sum(dim=2), torch.ones(iters, B, N, dtype=torch.float64))
    torch.testing.assert_close(couplings[0], torch.full((B, J, N), 1 / J, dtype=torch.float64))
    assert (o.norm(dim=-1) < 1).all()
    for b in range(B):
        u = [[z[b, i] @ w[j] for j in range(J)] for i in range(N)]  # eq. 10, u[i][j] = z^_{j|i}
        logits = [[0.0] * J for _ in range(N)]
        for it in range(iters):
            c = [[math.exp(logits[i][j]) / sum(math.exp(v) for v in logits[i]) for j in range(J)] for i in range(N)]
            for i in range(N):
                for j in range(J):
                    assert couplings[it, b, j, i].item() == pytest.approx(c[i][j])
            caps = []
            for j in range(J):
                s = sum(c[i][j] * u[i][j] for i in range(N))
                caps.append(s.norm() ** 2 / (1 + s.norm() ** 2) * s / s.norm())
            logits = [[logits[i][j] + (u[i][j] @ caps[j]).item() for j in range(J)] for i in range(N)]
        torch.testing.assert_close(o[b], torch.stack(caps))


# ---------------------------------------------------------------- disagreement


def test_zone_cosine_is_minus_d_zone_of_eq18():
    """D_zone = -1/N^2 sum over all N^2 pairs (self-pairs included): -1 for identical zones,
    -1/N for orthogonal ones (only the self-pairs count), 0 for a zone and its opposite."""
    orthogonal = torch.eye(4).unsqueeze(0)
    identical = torch.ones(1, 4, 3)
    opposite = torch.tensor([[[1.0, 2.0], [-1.0, -2.0]]])
    assert -op.zone_cosine(orthogonal).item() == pytest.approx(-1 / 4)
    assert -op.zone_cosine(identical).item() == pytest.approx(-1.0)
    assert -op.zone_cosine(opposite).item() == pytest.approx(0.0)


def small_encoder(composition, **kw):
    torch.manual_seed(0)
    return MZU(6, hidden_size=8, composition=composition, **kw)


@pytest.mark.parametrize("normalizer", ["sequence", "token"])
def test_aux_loss_is_weighted_zone_cosine(normalizer):
    enc = small_encoder("sat", disagreement_weight=0.5, disagreement_normalizer=normalizer).eval()
    x, mask = torch.randn(3, 5, 6), lengths_mask([5, 3, 1])
    out = enc(x, mask)
    backward_x = reverse_padded(x, lengths_of(mask))
    total = (
        op.reference(x, mask, enc.forward_scan.weights(), enc.forward_scan.options).zone_cosine.sum()
        + op.reference(backward_x, mask, enc.backward_scan.weights(), enc.backward_scan.options).zone_cosine.sum()
    )
    per = 3 if normalizer == "sequence" else 9  # sequences or real tokens
    torch.testing.assert_close(out.aux_loss, 0.5 * total / per)
    # 9 tokens, 2 directions, 2 cells of 2 M-functions each
    assert out.stats["zone_cosine"] == pytest.approx((total / (9 * 2 * 4)).item())


def test_minimising_aux_loss_pushes_zones_apart():
    enc = small_encoder("gcn", disagreement_weight=1.0).train()
    x, mask = torch.randn(4, 5, 6), lengths_mask([5, 4, 3, 2])
    opt = torch.optim.SGD(enc.parameters(), lr=0.05)
    before = enc(x, mask).stats["zone_cosine"]
    for _ in range(5):
        opt.zero_grad()
        enc(x, mask).aux_loss.backward()
        opt.step()
    assert enc(x, mask).stats["zone_cosine"] < before


# ---------------------------------------------------------------- one step vs the paper


def paper_m_function(x, h, m):
    """Eqs. 4-14 and zone aggregation for one M-function, zone by zone, from its weights."""
    inp = torch.cat([x, h], dim=-1)
    N = m.zone_weight.shape[0]
    z = [inp @ m.zone_weight[i] for i in range(N)]  # eq. 4
    d_z = z[0].shape[-1]
    if m.composition == "sat":  # eq. 6
        q, k, v = [zi @ m.query for zi in z], [zi @ m.key for zi in z], [zi @ m.value for zi in z]
        o = []
        for i in range(N):
            a = torch.softmax(torch.stack([(q[i] * k[j]).sum(-1) / math.sqrt(d_z) for j in range(N)], -1), -1)
            o.append(sum(a[:, j : j + 1] * v[j] for j in range(N)))
    elif m.composition == "gcn":  # eqs. 7-9, self-loops added after the cosines
        A = [[cos(z[i], z[j]) + (1.0 if i == j else 0.0) for j in range(N)] for i in range(N)]
        deg = [sum(A[i][j].abs() for j in range(N)) for i in range(N)]
        o = [
            torch.relu(sum((A[i][j] / torch.sqrt(deg[i] * deg[j])).unsqueeze(-1) * z[j] for j in range(N)) @ m.graph)
            for i in range(N)
        ]
    else:  # eqs. 10-14
        J = m.capsule.shape[0]
        u = [[z[i] @ m.capsule[j] for j in range(J)] for i in range(N)]
        b = torch.zeros(x.shape[0], N, J, dtype=x.dtype)
        for it in range(m.routing_iterations):
            c = torch.softmax(b, dim=-1)
            o = []
            for j in range(J):
                s = sum(c[:, i, j : j + 1] * u[i][j] for i in range(N))
                n = s.norm(dim=-1, keepdim=True)
                o.append(n**2 / (1 + n**2) * s / n)
            b = b + torch.stack([torch.stack([(u[i][j] * o[j]).sum(-1) for j in range(J)], -1) for i in range(N)], 1)
    f = [torch.relu(oj @ m.ffn_in + m.ffn_in_bias) @ m.ffn_out + m.ffn_out_bias for oj in o]  # eq. 5
    out = torch.cat(f, dim=-1) @ m.aggregate + m.aggregate_bias
    d_zone = -sum(cos(z[i], z[j]) for i in range(N) for j in range(N)) / N**2  # eq. 18
    return out, d_zone


def paper_scan(x, mask, scan):
    """Eqs. 1-3 and 15-17 step by step; returns states and the summed -D_zone per token."""
    B, T, _ = x.shape
    H = scan.hidden_size
    h = torch.zeros(B, H, dtype=x.dtype)
    states, cosines = [], []
    for t in range(T):
        state, cos_sum = h, torch.zeros(B, dtype=x.dtype)
        for depth, cell in enumerate(scan.cells):
            x_in = x[:, t] if depth == 0 else torch.zeros(B, cell.input_size, dtype=x.dtype)
            m_h, d_h = paper_m_function(x_in, state, cell.m_h)
            m_g, d_g = paper_m_function(x_in, state, cell.m_g)

            def layer_norm(m):
                mu, var = m.mean(-1, keepdim=True), m.var(-1, unbiased=False, keepdim=True)
                return (m - mu) / torch.sqrt(var + cell.layer_norm.eps) * cell.layer_norm.weight + cell.layer_norm.bias

            on_gate = scan.options.layer_norm == "gate"
            candidate = torch.tanh(m_h if on_gate else layer_norm(m_h))  # eq. 2 (+ layer norm: candidate)
            g = torch.sigmoid(layer_norm(m_g) if on_gate else m_g)  # eq. 3 (+ layer norm: gate)
            state = (1 - g) * state + g * candidate  # eq. 1 / 15
            cos_sum = cos_sum - d_h - d_g
        keep = mask[:, t : t + 1].to(x.dtype)
        h = keep * state + (1 - keep) * h
        states.append(keep * state)
        cosines.append(keep[:, 0] * cos_sum)
    return torch.stack(states, 1), torch.stack(cosines, 1)


@pytest.mark.parametrize("layer_norm", ["gate", "candidate"])
@pytest.mark.parametrize("composition", COMPOSITIONS)
def test_mzu_steps_match_the_paper(composition, layer_norm):
    torch.manual_seed(3)
    scan = MZUTransition(5, 8, composition=composition, transition_depth=1, layer_norm=layer_norm).double().eval()
    with torch.no_grad():  # non-trivial layer-norm affine parameters
        for cell in scan.cells:
            cell.layer_norm.weight.uniform_(0.5, 1.5)
            cell.layer_norm.bias.uniform_(-0.5, 0.5)
    x, mask = torch.randn(2, 2, 5, dtype=torch.float64), lengths_mask([2, 1])
    expected_states, expected_cos = paper_scan(x, mask, scan)
    for impl in op.IMPLS:
        got = mzu_recurrence(x, mask, scan, impl=impl)
        torch.testing.assert_close(got.states, expected_states)
        torch.testing.assert_close(got.zone_cosine, expected_cos)
    assert torch.all(got.states[1, 1] == 0)


# ---------------------------------------------------------------- hoisted == reference

SHAPES = [  # (lengths, transition_depth, share_transition)
    ([1], 1, False),
    ([5, 3, 1], 2, False),
    ([4, 2], 1, True),
    ([3, 3], 0, False),
]


@pytest.mark.parametrize("composition", COMPOSITIONS)
@pytest.mark.parametrize("lengths,depth,share", SHAPES)
def test_hoisted_equals_reference(composition, lengths, depth, share):
    torch.manual_seed(4)
    scan = MZUTransition(
        3, 8, composition=composition, transition_depth=depth, share_transition=share, dropout=0.3
    ).double().train()
    x = torch.randn(len(lengths), max(lengths), 3, dtype=torch.float64, requires_grad=True)
    mask = lengths_mask(lengths)
    drop = scan.candidate_dropout(x)
    w_states, w_cos = torch.randn_like(x[..., :1].expand(-1, -1, 8)), torch.randn(x.shape[:2], dtype=torch.float64)
    results = []
    for run in (op.reference, op.hoisted):
        out = run(x, mask, scan.weights(), scan.options, drop)
        loss = (out.states * w_states).sum() + (out.zone_cosine * w_cos).sum()
        grads = torch.autograd.grad(loss, [x, *scan.parameters()])
        results.append((out, grads))
    (ref, ref_grads), (fast, fast_grads) = results
    torch.testing.assert_close(fast.states, ref.states)
    torch.testing.assert_close(fast.zone_cosine, ref.zone_cosine)
    for a, b in zip(fast_grads, ref_grads):
        torch.testing.assert_close(a, b)


def test_unknown_impl_is_named():
    scan = MZUTransition(3, 8)
    with pytest.raises(ValueError, match="no 'triton' implementation"):
        mzu_recurrence(torch.zeros(1, 1, 3), torch.ones(1, 1, dtype=torch.bool), scan, impl="triton")


# ---------------------------------------------------------------- encoder options


def test_unidirectional_is_causal():
    enc = small_encoder("cap", bidirectional=False).eval()
    assert enc.causal and enc.output_size == 8
    x, mask = torch.randn(1, 6, 6), lengths_mask([6])
    changed = x.clone()
    changed[:, 4:] = torch.randn(1, 2, 6)
    with torch.no_grad():
        torch.testing.assert_close(enc(x, mask).states[:, :4], enc(changed, mask).states[:, :4])


def test_transition_cells_read_only_the_state_unless_shared():
    own = MZUTransition(5, 8, transition_depth=2)
    assert [cell.m_h.zone_weight.shape[1] for cell in own.cells] == [5 + 8, 8, 8]
    shared = MZUTransition(5, 8, transition_depth=2, share_transition=True)
    first = MZUTransition(5, 8, transition_depth=0)
    assert sum(p.numel() for p in shared.parameters()) == sum(p.numel() for p in first.parameters())


@pytest.mark.parametrize(
    "kwargs,message",
    [
        ({"composition": "rnn"}, "composition"),
        ({"num_zones": 3}, "num_zones"),
        ({"composition": "cap", "num_capsules": 3}, "num_capsules"),
        ({"disagreement_normalizer": "batch"}, "disagreement_normalizer"),
    ],
)
def test_bad_options_are_named(kwargs, message):
    with pytest.raises(ValueError, match=message):
        MZU(6, hidden_size=8, **kwargs)


def test_the_layer_norms_place_is_an_option_and_the_old_place_keeps_its_runs():
    from rnnbench.compose import compose_config
    from rnnbench.results.identity import identity_config

    with pytest.raises(ValueError, match="layer_norm must be one of gate, candidate"):
        MZUTransition(5, 8, layer_norm="both")
    gate = compose_config(["encoder=mzu_cap"])
    assert gate.encoder.layer_norm == "gate"
    candidate = compose_config(["encoder=mzu_cap", "encoder.layer_norm=candidate"])
    assert "layer_norm" not in identity_config(candidate)["encoder"]  # the identity of every run made before the option
    assert identity_config(gate)["encoder"]["layer_norm"] == "gate"
