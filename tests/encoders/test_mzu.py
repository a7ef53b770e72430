"""MZU: the paper's equations checked against computations written here from the
paper (Meng et al., AAAI 2020), independent of the kernel's own helpers, and the
hoisted fast path checked against the reference (forward and gradients).
"""
from __future__ import annotations

import json
import math
from pathlib import Path

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


@pytest.mark.parametrize("normalizer", ["sequence", "token", "token_mean"])
def test_aux_loss_is_weighted_zone_cosine(normalizer):
    enc = small_encoder("sat", disagreement_weight=0.5, disagreement_normalizer=normalizer).eval()
    x, mask = torch.randn(3, 5, 6), lengths_mask([5, 3, 1])
    out = enc(x, mask)
    backward_x = reverse_padded(x, lengths_of(mask))
    total = (
        op.reference(x, mask, enc.forward_scan.weights(), enc.forward_scan.options).zone_cosine.sum()
        + op.reference(backward_x, mask, enc.backward_scan.weights(), enc.backward_scan.options).zone_cosine.sum()
    )
    per = {"sequence": 3, "token": 9, "token_mean": 9 * 8}[normalizer]  # sequences, real tokens, or their 8 cosines each
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


# ---------------------------------------------------------------- the disagreement term's normalisation


@pytest.mark.parametrize("normalizer,expected", [("token", 2.0), ("token_mean", 0.25), ("sequence", 4.0)])
def test_the_three_normalisations_on_a_hand_checked_sum(normalizer, expected):
    """C = 16 summed cosines over two sentences of 3 and 1 real tokens (n = 4, B = 2), K = 8 cosines
    per token, lambda = 0.5: token 0.5 * 16 / 4; token_mean 0.5 * 16 / (4 * 8); sequence 0.5 * 16 / 2."""
    from rnnbench.encoders.mzu import disagreement_loss

    mask = lengths_mask([3, 1])
    assert disagreement_loss(torch.tensor(16.0), mask, 8, 0.5, normalizer).item() == pytest.approx(expected)


def _identical_zones(enc):
    """Every M-function's N zone matrices made equal: every zone pair has cosine 1, so -D_zone = 1."""
    with torch.no_grad():
        for scan in (enc.forward_scan, enc.backward_scan):
            for cell in scan.cells:
                for m in (cell.m_h, cell.m_g):
                    m.zone_weight.copy_(m.zone_weight[:1].expand_as(m.zone_weight))
    return enc


@pytest.mark.parametrize("normalizer,expected", [("token", 8.0), ("token_mean", 1.0), ("sequence", 16.0)])
def test_identical_zones_give_the_hand_computed_term_through_the_encoder(normalizer, expected):
    """Each token has 8 cosines of 1 (2 directions x 2 cells x 2 M-functions); 4 real tokens in 2
    sentences: per token 8, per cosine 1, per sentence 8 * 4 / 2 = 16 (lambda 1)."""
    enc = _identical_zones(small_encoder("gcn", disagreement_normalizer=normalizer)).eval()
    x, mask = torch.randn(2, 3, 6), lengths_mask([3, 1])
    out = enc(x, mask)
    assert out.aux_loss.item() == pytest.approx(expected, rel=1e-5)
    assert out.stats["zone_cosine"] == pytest.approx(1.0, rel=1e-5)


def test_the_normalisation_changes_only_the_regulariser_and_token_is_the_default():
    from rnnbench.compose import compose_config
    from rnnbench.results.identity import identity_config

    x, mask = torch.randn(3, 5, 6), lengths_mask([5, 3, 1])
    outs = {n: small_encoder("cap", disagreement_normalizer=n).eval()(x, mask) for n in ("token", "token_mean", "sequence")}
    for n in ("token_mean", "sequence"):
        torch.testing.assert_close(outs[n].states, outs["token"].states, rtol=0, atol=0)
        assert outs[n].aux_loss.item() != pytest.approx(outs["token"].aux_loss.item())
    assert MZU(6, hidden_size=8).disagreement_normalizer == "token"
    for name in ("mzu_cap", "mzu_sat", "mzu_gcn"):
        default = compose_config([f"encoder={name}"])
        assert default.encoder.disagreement_normalizer == "token" and default.encoder.dropout == 0.0
        other = identity_config(compose_config([f"encoder={name}", "encoder.disagreement_normalizer=token_mean"]))
        assert other["encoder"]["disagreement_normalizer"] == "token_mean" != identity_config(default)["encoder"]["disagreement_normalizer"]


# ---------------------------------------------------------------- dropout on the candidate


def test_candidate_dropout_acts_in_training_only():
    """Dropout (the paper's, on the candidate activation) changes the states in training, with a
    fresh mask per call; in eval the states are those without it; at 0 nothing changes."""
    x, mask = torch.randn(3, 5, 6), lengths_mask([5, 3, 1])
    plain, dropped = small_encoder("sat"), small_encoder("sat", dropout=0.4)  # the same weights
    with torch.no_grad():
        torch.testing.assert_close(dropped.eval()(x, mask).states, plain.eval()(x, mask).states, rtol=0, atol=0)
        torch.testing.assert_close(plain.train()(x, mask).states, plain.eval()(x, mask).states, rtol=0, atol=0)
        dropped.train()
        first, second = dropped(x, mask).states, dropped(x, mask).states
    assert not torch.allclose(first, plain.eval()(x, mask).states) and not torch.allclose(first, second)
    assert not first[~mask].any()


# ---------------------------------------------------------------- the candidate's cosine across tokens


def test_mean_pairwise_cosine_on_constructed_vectors():
    from rnnbench.encoders.mzu import mean_pairwise_cosine

    same = torch.tensor([[2.0, 1.0, 0.0]]).expand(4, 3).unsqueeze(0) * torch.tensor([1.0, 3.0, 0.5, 2.0]).view(1, 4, 1)
    orthogonal = torch.eye(4)[:3].unsqueeze(0)  # three one-hot vectors of four
    # (1,0), (1,1), (0,1): cosines 1/sqrt(2), 0, 1/sqrt(2); the ordered pairs' mean is sqrt(2) / 3
    hand = torch.tensor([[[1.0, 0.0], [1.0, 1.0], [0.0, 1.0], [-7.0, 3.0]]])  # the last one padding
    values, defined = mean_pairwise_cosine(same, torch.ones(1, 4, dtype=torch.bool))
    assert values.item() == pytest.approx(1.0, abs=1e-6) and defined.item()
    values, defined = mean_pairwise_cosine(orthogonal, torch.ones(1, 3, dtype=torch.bool))
    assert values.item() == pytest.approx(0.0, abs=1e-7) and defined.item()
    values, defined = mean_pairwise_cosine(hand, lengths_mask([3], 4))
    assert values.item() == pytest.approx(math.sqrt(2) / 3, abs=1e-6)
    values, defined = mean_pairwise_cosine(hand.expand(2, 4, 2), lengths_mask([1, 0], 4))
    assert not defined.any() and not values.any()  # one token or none: no pair


def test_candidate_cosine_is_one_when_every_token_has_the_same_candidate():
    """M_h's weights zeroed but for its output bias: h~ = tanh(b) at every token of both scans."""
    enc = small_encoder("cap").eval()
    with torch.no_grad():
        for scan in (enc.forward_scan, enc.backward_scan):
            for name, w in scan.cells[0].m_h.named_parameters():
                if name != "aggregate_bias":
                    w.zero_()
            scan.cells[0].m_h.aggregate_bias.uniform_(-1, 1)
    enc.eval_statistics = True
    out = enc(torch.randn(3, 5, 6), lengths_mask([5, 3, 2]))
    assert out.stats["candidate_cosine"] == pytest.approx(1.0, abs=1e-6)


@pytest.mark.parametrize("layer_norm", ["gate", "candidate"])
@pytest.mark.parametrize("composition", COMPOSITIONS)
def test_candidate_cosine_follows_its_definition(composition, layer_norm):
    """Eq. 2's candidates of the first cell, computed step by step from the paper's M-function and
    the scan's own states; per sequence the mean over ordered pairs of distinct real tokens, the two
    scans averaged, then the mean over the sequences with two tokens or more (the 1-token one is out)."""
    torch.manual_seed(5)
    enc = MZU(5, hidden_size=8, composition=composition, layer_norm=layer_norm).double().eval()
    enc.eval_statistics = True
    x, lengths = torch.randn(3, 4, 5, dtype=torch.float64), [4, 1, 3]
    mask = lengths_mask(lengths)

    def per_sequence(x_scan, scan):
        states, _ = paper_scan(x_scan, mask, scan)
        cell = scan.cells[0]
        values = []
        for b, n in enumerate(lengths):
            h, candidates = torch.zeros(1, 8, dtype=torch.float64), []
            for t in range(n):
                m_h, _ = paper_m_function(x_scan[b:b + 1, t], h, cell.m_h)
                if layer_norm == "candidate":
                    m_h = torch.nn.functional.layer_norm(m_h, (8,), cell.layer_norm.weight, cell.layer_norm.bias, cell.layer_norm.eps)
                candidates.append(torch.tanh(m_h)[0])
                h = states[b:b + 1, t]
            pairs = [cos(candidates[i], candidates[j]) for i in range(n) for j in range(n) if i != j]
            values.append(sum(pairs) / len(pairs) if pairs else None)
        return values

    with torch.no_grad():
        forward = per_sequence(x, enc.forward_scan)
        backward = per_sequence(reverse_padded(x, lengths_of(mask)), enc.backward_scan)
        expected = [(f + b) / 2 for f, b in zip(forward, backward) if f is not None]
        got = enc(x, mask).stats["candidate_cosine"]
    assert got == pytest.approx(float(sum(expected) / len(expected)), abs=1e-6)


def test_candidate_cosine_is_an_eval_statistic_on_request_that_changes_no_output():
    """Off by default (a timed call, the cost benchmark's, never pays for it), never in training,
    and computed it leaves the outputs as they are."""
    enc = small_encoder("gcn", dropout=0.3)
    x, mask = torch.randn(3, 5, 6), lengths_mask([5, 3, 1])
    with torch.no_grad():
        off = enc.eval()(x, mask)
        enc.eval_statistics = True
        on = enc(x, mask)
        assert "candidate_cosine" not in enc.train()(x, mask).stats
    enc.eval()
    assert "candidate_cosine" in on.stats and "candidate_cosine" not in off.stats
    torch.testing.assert_close(on.states, off.states, rtol=0, atol=0)
    torch.testing.assert_close(on.aux_loss, off.aux_loss, rtol=0, atol=0)
    assert on.stats["zone_cosine"] == off.stats["zone_cosine"]
    assert "candidate_cosine" not in enc(x[:, :1], lengths_mask([1, 1, 1])).stats  # no sequence has a pair


def run_with_and_without_the_statistic(tmp_path, monkeypatch, encoder: str, *overrides: str) -> tuple[dict, dict]:
    """The same tiny picking run of ``encoder`` twice: with the loop's eval statistics, then without
    (``loop.EVAL_STATISTICS`` off). Returns both records. With dropout in ``overrides`` a random
    number drawn by the statistic in a dev pass would change the next epoch's masks, and so the
    numbers. Checks on the way that the timed test pass never computes it."""
    from rnnbench.run import train
    from rnnbench.training import loop
    from tests.helpers import smoke_config

    timed = []
    evaluate = loop.evaluate

    def watched(run, split, *args, **kwargs):
        if split == "test":
            timed.append(any(getattr(m, "eval_statistics", False) for m in run.model.modules()))
        return evaluate(run, split, *args, **kwargs)

    monkeypatch.setattr(loop, "evaluate", watched)
    tiny = ["task=picking", f"encoder={encoder}", "encoder.hidden_size=8", "task.reader.train_size=48",
            "task.reader.dev_size=16", "task.reader.test_size=32", "trainer.epochs=2", *overrides]
    with_stat = train(smoke_config(tmp_path / "on", *tiny), say=lambda *_: None)
    assert timed == [False]  # the timed test pass (inference_seconds_per_example) ran without it
    monkeypatch.setattr(loop, "EVAL_STATISTICS", False)
    without = train(smoke_config(tmp_path / "off", *tiny), say=lambda *_: None)
    return with_stat, without


def assert_same_numbers_and_the_statistic_recorded(with_stat: dict, without: dict) -> None:
    """The same identity, test score, dev curve and predictions; the statistic in the first record's
    test_stats and history only, and from there in a table's ``stats:candidate_cosine`` evidence row."""
    from rnnbench.results import evidence

    assert with_stat["identity"] == without["identity"]
    assert with_stat["test"] == without["test"] and with_stat["best_epoch"] == without["best_epoch"]
    assert [h["dev_loss"] for h in with_stat["history"]] == [h["dev_loss"] for h in without["history"]]
    predictions = [(Path(r["run_dir"]) / "predictions.jsonl").read_text() for r in (with_stat, without)]
    assert predictions[0] == predictions[1]
    assert "candidate_cosine" not in without["test_stats"]
    value = with_stat["test_stats"]["candidate_cosine"]
    assert -1.0 <= value <= 1.0 and all("candidate_cosine" in h for h in with_stat["history"])
    record = json.loads((Path(with_stat["run_dir"]) / "record.json").read_text())
    assert record["test_stats"]["candidate_cosine"] == value
    rows = evidence.evidence_rows(record, "row", None, {"acc": "accuracy", "candidate cosine": "stats:candidate_cosine"},
                                  100.0, "final", True)
    (row,) = [r for r in rows if r["metric"] == "stats:candidate_cosine"]
    assert row["test"] == value and row["dev"] == record["history"][record["best_epoch"] - 1]["candidate_cosine"]


@pytest.mark.slow  # two training runs
def test_a_run_records_the_candidate_cosine_without_changing_its_numbers(tmp_path, monkeypatch):
    runs = run_with_and_without_the_statistic(tmp_path, monkeypatch, "mzu_sat", "encoder.dropout=0.3")
    assert_same_numbers_and_the_statistic_recorded(*runs)
