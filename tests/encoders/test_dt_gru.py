"""The deep-transition GRU (MZU paper's "GRU (With-DT)"), checked against a step loop written
here from the DTMT T-GRU equations, and with no transition cells against torch's GRU; its
footnote-3 options (a layer norm on the gates, dropout on the candidate) and its candidate
statistic."""
from __future__ import annotations

import pytest
import torch

from rnnbench.encoders.base import lengths_of, reverse_padded
from rnnbench.encoders.dt_gru import DeepTransitionGRU

pytestmark = pytest.mark.usefixtures("one_thread")


def lengths_mask(lengths):
    return torch.arange(max(lengths)).unsqueeze(0) < torch.tensor(lengths).unsqueeze(1)


def normed(a, norm):
    """Layer norm written out: (a - mean) / sqrt(var + eps) * gain + bias, over the units; None: a."""
    if norm is None:
        return a
    mu, var = a.mean(-1, keepdim=True), a.var(-1, unbiased=False, keepdim=True)
    return (a - mu) / torch.sqrt(var + norm.eps) * norm.weight + norm.bias


def gru_cell_by_hand(x, h, cell, gate_norm=None):
    """torch's GRUCell equations, written out: n = tanh(W_in x + b_in + r * (W_hn h + b_hn));
    ``gate_norm``: the reset and update gates' pre-activations each through its own layer norm."""
    wi, wh, bi, bh = cell.weight_ih, cell.weight_hh, cell.bias_ih, cell.bias_hh
    H = h.shape[-1]
    gi, gh = x @ wi.T + bi, h @ wh.T + bh
    r = torch.sigmoid(normed(gi[:, :H] + gh[:, :H], gate_norm and gate_norm.reset))
    z = torch.sigmoid(normed(gi[:, H:2 * H] + gh[:, H:2 * H], gate_norm and gate_norm.update))
    n = torch.tanh(gi[:, 2 * H:] + r * gh[:, 2 * H:])
    return (1 - z) * n + z * h


def t_gru_by_hand(h, cell):
    """DTMT's T-GRU: gates and candidate from the state alone, the reset gate inside the tanh
    (with the cell's gate layer norms when it has them)."""
    H = h.shape[-1]
    g = h @ cell.gates.weight.T + cell.gates.bias
    norm = cell.gate_norm
    r, z = torch.sigmoid(normed(g[:, :H], norm and norm.reset)), torch.sigmoid(normed(g[:, H:], norm and norm.update))
    n = torch.tanh(r * (h @ cell.candidate.weight.T + cell.candidate.bias))
    return (1 - z) * n + z * h


def scan_by_hand(x, lengths, scan):
    """One direction, sequence by sequence (no padding at all)."""
    out = torch.zeros(x.shape[0], x.shape[1], scan.hidden_size, dtype=x.dtype)
    for b, n in enumerate(lengths):
        h = torch.zeros(1, scan.hidden_size, dtype=x.dtype)
        for t in range(n):
            h = gru_cell_by_hand(x[b:b + 1, t], h, scan.first, scan.first_gate_norm)
            for cell in scan.transitions:
                h = t_gru_by_hand(h, cell)
            out[b, t] = h[0]
    return out


@pytest.mark.parametrize("depth", [0, 1, 2])
def test_each_direction_follows_the_equations_and_ignores_padding(depth):
    torch.manual_seed(0)
    enc = DeepTransitionGRU(5, hidden_size=6, transition_depth=depth).double()
    lengths = [4, 1, 3]
    mask = lengths_mask(lengths)
    x = torch.randn(3, 4, 5, dtype=torch.float64)
    x = torch.where(mask.unsqueeze(-1), x, torch.full_like(x, 9.0))  # padding must not leak in
    states = enc(x, mask).states
    forward = scan_by_hand(x, lengths, enc.forward_scan)
    reversed_x = reverse_padded(x, lengths_of(mask))
    backward = reverse_padded(scan_by_hand(reversed_x, lengths, enc.backward_scan), lengths_of(mask))
    torch.testing.assert_close(states, torch.cat([forward, backward], dim=-1))
    assert states.shape == (3, 4, 12) and not states[~mask].any()


def test_no_transition_cells_is_torchs_gru():
    torch.manual_seed(0)
    enc = DeepTransitionGRU(5, hidden_size=6, transition_depth=0, bidirectional=False)
    gru = torch.nn.GRU(5, 6, batch_first=True)
    with torch.no_grad():
        for name in ("weight_ih", "weight_hh", "bias_ih", "bias_hh"):
            getattr(gru, f"{name}_l0").copy_(getattr(enc.forward_scan.first, name))
    x = torch.randn(2, 7, 5)
    torch.testing.assert_close(enc(x, torch.ones(2, 7, dtype=torch.bool)).states, gru(x)[0])
    assert enc.causal and enc.output_size == 6


def test_parameters_and_gradients():
    enc = DeepTransitionGRU(50, hidden_size=200, transition_depth=1)
    first = 3 * 200 * (50 + 200) + 2 * 3 * 200
    transition = 3 * 200 * 200 + 3 * 200
    assert sum(p.numel() for p in enc.parameters()) == 2 * (first + transition)
    x = torch.randn(2, 3, 50)
    enc(x, torch.ones(2, 3, dtype=torch.bool)).states.sum().backward()
    assert all(p.grad is not None and p.grad.abs().sum() > 0 for p in enc.parameters())


def test_a_negative_depth_is_refused():
    with pytest.raises(ValueError, match="transition_depth"):
        DeepTransitionGRU(5, transition_depth=-1)


# ---------------------------------------------------------------- footnote 3: layer norm and dropout


def _random_norms(enc):
    """Layer norms with gains and biases away from (1, 0), so a misplaced norm shows."""
    with torch.no_grad():
        for name, p in enc.named_parameters():
            if "norm" in name:
                p.uniform_(0.5, 1.5) if name.endswith("weight") else p.uniform_(-0.5, 0.5)
    return enc


@pytest.mark.parametrize("depth", [0, 1, 2])
def test_the_gate_layer_norm_follows_the_equations(depth):
    """gate_layer_norm: each gate's pre-activation through its own layer norm, in every cell."""
    torch.manual_seed(0)
    enc = _random_norms(DeepTransitionGRU(5, hidden_size=6, transition_depth=depth, gate_layer_norm=True).double())
    for scan in (enc.forward_scan, enc.backward_scan):  # every cell normalises its gates (the hand loop reads their norms)
        assert scan.first_gate_norm is not None and all(cell.gate_norm is not None for cell in scan.transitions)
    lengths = [4, 1, 3]
    mask = lengths_mask(lengths)
    x = torch.randn(3, 4, 5, dtype=torch.float64)
    x = torch.where(mask.unsqueeze(-1), x, torch.full_like(x, 9.0))
    for mode in (enc.train, enc.eval):  # a layer norm acts the same in both
        mode()
        states = enc(x, mask).states
        forward = scan_by_hand(x, lengths, enc.forward_scan)
        backward = reverse_padded(scan_by_hand(reverse_padded(x, lengths_of(mask)), lengths, enc.backward_scan), lengths_of(mask))
        torch.testing.assert_close(states, torch.cat([forward, backward], dim=-1))
        assert not states[~mask].any()


def test_each_option_changes_the_states_and_the_defaults_are_the_gru_cell():
    x, mask = torch.randn(3, 5, 4), lengths_mask([5, 3, 1])

    def build(**kw):
        torch.manual_seed(0)  # the same weights: the options draw nothing
        return DeepTransitionGRU(4, hidden_size=6, **kw)

    default = build()
    assert not default.forward_scan.by_hand and default.forward_scan.first_gate_norm is None
    assert [name for name, _ in default.named_parameters() if "norm" in name] == []  # the state dict of earlier runs
    base = default.eval()(x, mask).states
    normed_states = _random_norms(build(gate_layer_norm=True)).eval()(x, mask).states
    assert not torch.allclose(normed_states, base)
    # Dropout: off in eval (the by-hand first cell then equals torch's GRUCell), on in training,
    # a fresh mask per call; padding stays zero.
    dropped = build(candidate_dropout=0.5)
    assert dropped.forward_scan.by_hand
    torch.testing.assert_close(dropped.eval()(x, mask).states, base)
    dropped.train()
    first, second = dropped(x, mask).states, dropped(x, mask).states
    assert not torch.allclose(first, base) and not torch.allclose(first, second) and not first[~mask].any()
    torch.testing.assert_close(default.train()(x, mask).states, base, rtol=0, atol=0)  # nothing random by default


def test_dropout_acts_on_every_cells_candidate():
    """With the first cell's candidate mask all ones and each transition cell's all zeros, a
    transition step keeps z * h: dropout reaches the transition cells' candidates too."""
    torch.manual_seed(0)
    enc = DeepTransitionGRU(4, hidden_size=6, transition_depth=1, bidirectional=False, candidate_dropout=0.5).train()
    cell = enc.forward_scan.transitions[0]
    h = torch.randn(2, 6)
    torch.manual_seed(1)
    out = cell(h)
    with torch.no_grad():
        r, z = torch.sigmoid(cell.gates(h)).chunk(2, dim=-1)
        n = torch.tanh(r * cell.candidate(h))
    torch.manual_seed(1)
    keep = torch.nn.functional.dropout(torch.ones_like(n), 0.5, True)
    torch.testing.assert_close(out, (1 - z) * n * keep + z * h)
    assert (keep == 0).any()


def test_option_parameters_and_bad_values():
    plain = DeepTransitionGRU(50, hidden_size=200, transition_depth=1)
    normed_enc = DeepTransitionGRU(50, hidden_size=200, transition_depth=1, gate_layer_norm=True)
    count = lambda m: sum(p.numel() for p in m.parameters())  # noqa: E731
    assert count(normed_enc) - count(plain) == 2 * 2 * 2 * 2 * 200  # 2 scans x 2 cells x 2 gates x (gain, bias)
    with pytest.raises(ValueError, match="candidate_dropout"):
        DeepTransitionGRU(5, candidate_dropout=1.0)
    with pytest.raises(ValueError, match="gate_layer_norm"):
        DeepTransitionGRU(5, gate_layer_norm="gates")


def test_the_options_at_their_defaults_leave_every_run_where_it_was():
    """At false / 0.0 the options are left out of the run identity (NEUTRAL_DEFAULTS): the config
    hashes as before they existed; set, each makes a run of its own."""
    from rnnbench.compose import compose_config
    from rnnbench.results.identity import identity_config

    default = compose_config(["encoder=dt_gru"])
    assert default.encoder.gate_layer_norm is False and default.encoder.candidate_dropout == 0.0
    plain = identity_config(default)["encoder"]
    assert "gate_layer_norm" not in plain and "candidate_dropout" not in plain
    from omegaconf import open_dict

    without_keys = compose_config(["encoder=dt_gru"])  # the config as it was before the options
    with open_dict(without_keys):
        del without_keys.encoder["gate_layer_norm"], without_keys.encoder["candidate_dropout"]
    assert identity_config(without_keys) == identity_config(default)
    assert identity_config(compose_config(["encoder=dt_gru", "encoder.gate_layer_norm=true"]))["encoder"]["gate_layer_norm"] is True
    assert identity_config(compose_config(["encoder=dt_gru", "encoder.candidate_dropout=0.3"]))["encoder"]["candidate_dropout"] == 0.3


def test_mzu_table6s_committed_runs_keep_their_folders(real_data):
    """Seed 1 of the deep-transition GRU and of capMZRNN in MZU Table 6's evidence, composed now as
    the campaign composes them: the run folder the evidence names (the identity did not move)."""
    import csv

    from rnnbench.campaign.jobs import job_config
    from rnnbench.results.identity import run_dir
    from rnnbench.campaign.protocol import Job
    from tests.helpers import REPO

    rows = [r for r in csv.DictReader(open(REPO / "results" / "mzu_table6.csv"))
            if r["dataset"] == "Restaurant-DS/accuracy_mean" and r["variant"] == "" and r["seed"] == "1"
            and r["reported"] == "yes" and r["encoder"] in ("dt_gru", "mzu_cap")]
    assert {r["encoder"] for r in rows} == {"dt_gru", "mzu_cap"}
    for r in rows:
        cfg = job_config("mzu_table6_restaurant", Job(r["encoder"], 1, float(r["lr"]), r["phase"]), [f"paths.data_dir={real_data}"])
        assert run_dir(cfg).name == r["run"], r["encoder"]


# ---------------------------------------------------------------- the candidate's cosine across tokens


@pytest.mark.parametrize("gate_layer_norm", [False, True])
def test_candidate_cosine_follows_its_definition(gate_layer_norm):
    """The first cell's candidate n at each real token, from the hand-written cell and the scan's own
    states; per sequence the mean cosine over ordered pairs of distinct tokens, the scans averaged,
    then the mean over sequences of two tokens or more."""
    torch.manual_seed(2)
    enc = _random_norms(DeepTransitionGRU(5, hidden_size=6, gate_layer_norm=gate_layer_norm).double()).eval()
    assert "candidate_cosine" not in enc(torch.randn(1, 2, 5, dtype=torch.float64), lengths_mask([2])).stats  # on request only
    enc.eval_statistics = True
    lengths = [4, 1, 3]
    mask = lengths_mask(lengths)
    x = torch.randn(3, 4, 5, dtype=torch.float64)

    def per_sequence(x_scan, scan):
        states = scan_by_hand(x_scan, lengths, scan)
        H, first, norm = 6, scan.first, scan.first_gate_norm
        values = []
        for b, n in enumerate(lengths):
            h, candidates = torch.zeros(1, H, dtype=torch.float64), []
            for t in range(n):
                gi = x_scan[b:b + 1, t] @ first.weight_ih.T + first.bias_ih
                gh = h @ first.weight_hh.T + first.bias_hh
                r = torch.sigmoid(normed(gi[:, :H] + gh[:, :H], norm and norm.reset))
                candidates.append(torch.tanh(gi[:, 2 * H:] + r * gh[:, 2 * H:])[0])
                h = states[b:b + 1, t]
            c = torch.nn.functional.cosine_similarity
            pairs = [c(candidates[i], candidates[j], dim=0) for i in range(n) for j in range(n) if i != j]
            values.append(sum(pairs) / len(pairs) if pairs else None)
        return values

    with torch.no_grad():
        forward = per_sequence(x, enc.forward_scan)
        backward = per_sequence(reverse_padded(x, lengths_of(mask)), enc.backward_scan)
        expected = [(f + b) / 2 for f, b in zip(forward, backward) if f is not None]
        out = enc(x, mask)
    assert out.stats["candidate_cosine"] == pytest.approx(float(sum(expected) / len(expected)), abs=1e-6)
    assert "candidate_cosine" not in enc.train()(x, mask).stats  # eval only


@pytest.mark.slow  # two training runs
def test_a_run_records_the_candidate_cosine_without_changing_its_numbers(tmp_path, monkeypatch):
    from tests.encoders.test_mzu import assert_same_numbers_and_the_statistic_recorded, run_with_and_without_the_statistic

    runs = run_with_and_without_the_statistic(tmp_path, monkeypatch, "dt_gru", "encoder.candidate_dropout=0.3")
    assert_same_numbers_and_the_statistic_recorded(*runs)
