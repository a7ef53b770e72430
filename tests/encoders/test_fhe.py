"""FHE: the gated upper layer (kernels.fhe_upper), the gates, and their learning signal."""
from __future__ import annotations

import math

import pytest
import torch
import torch.nn.functional as F
from torch import nn

from rnnbench.encoders.fhe import FHE
from rnnbench.kernels.fhe_upper import fhe_upper

I, H, C = 5, 6, 3


def upper_weights(dtype=torch.float64, seed=0):
    g = torch.Generator().manual_seed(seed)
    shapes = [(4 * H, I), (4 * H, H), (4 * H,), (4 * H,)]
    return [(0.5 * torch.randn(*s, generator=g, dtype=dtype)).requires_grad_() for s in shapes]


def padding_mask(lengths):
    return torch.arange(max(max(lengths), 1)).unsqueeze(0) < torch.tensor(lengths).unsqueeze(1)


# ---- kernels.fhe_upper ----------------------------------------------------------------


def test_upper_state_is_copied_where_the_gate_is_shut():
    """Against an independent step-by-step nn.LSTMCell run on hand-set gates."""
    gates = torch.tensor([[1, 0, 0, 1, 0, 1], [0, 1, 1, 0, 0, 0]], dtype=torch.bool)
    mask = padding_mask([6, 4])
    x = torch.randn(2, 6, I, dtype=torch.float64)
    weights = upper_weights()
    cell = nn.LSTMCell(I, H).double()
    with torch.no_grad():
        for p, w in zip([cell.weight_ih, cell.weight_hh, cell.bias_ih, cell.bias_hh], weights):
            p.copy_(w)
    expected = torch.zeros(2, 6, H, dtype=torch.float64)
    with torch.no_grad():
        for b in range(2):
            h = c = torch.zeros(1, H, dtype=torch.float64)
            for t in range(int(mask[b].sum())):
                if gates[b, t]:
                    h, c = cell(x[b, t : t + 1], (h, c))
                expected[b, t] = h[0]
    for impl in ("reference", "torch"):
        out = fhe_upper(x, gates, mask, *weights, impl=impl).detach()
        torch.testing.assert_close(out, expected, rtol=1e-12, atol=1e-12)
        assert torch.equal(out[0, 1], out[0, 0]) and torch.equal(out[0, 2], out[0, 0])  # copied exactly
        assert torch.all(out[1, 0] == 0)  # before the first open gate: the zero state
        assert torch.all(out[1, 4:] == 0)  # padding


GATE_CASES = [
    ([1], "random"),  # batch 1, T = 1
    ([1, 1, 1], "random"),  # T = 1
    ([5], "random"),  # batch 1
    ([7, 3, 5, 1], "random"),  # ragged
    ([6, 0, 2], "random"),  # an empty sequence
    ([7, 3, 5, 1], "closed"),
    ([7, 3, 5, 1], "open"),
    ([9, 9], "open"),
]


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
@pytest.mark.parametrize("lengths,pattern", GATE_CASES)
def test_gather_matches_reference(lengths, pattern, dtype):
    g = torch.Generator().manual_seed(len(lengths) * 10 + max(lengths))
    mask = padding_mask(lengths)
    B, T = mask.shape
    x = torch.randn(B, T, I, generator=g, dtype=dtype, requires_grad=True)
    gates = {"random": torch.rand(B, T, generator=g) < 0.5, "closed": torch.zeros(B, T, dtype=torch.bool), "open": torch.ones(B, T, dtype=torch.bool)}[pattern]
    weights = upper_weights(dtype)
    probe = torch.randn(B, T, H, generator=g, dtype=dtype)
    results = []
    for impl in ("reference", "torch"):
        out = fhe_upper(x, gates, mask, *weights, impl=impl)
        results.append((out.detach(), torch.autograd.grad((out * probe).sum(), [x, *weights])))
    tol = {"rtol": 1e-10, "atol": 1e-12} if dtype == torch.float64 else {"rtol": 1e-5, "atol": 1e-6}
    (ref, ref_grads), (fast, fast_grads) = results
    torch.testing.assert_close(fast, ref, **tol)
    for a, b in zip(fast_grads, ref_grads):
        torch.testing.assert_close(a, b, **tol)


def test_unknown_impl_is_named():
    with pytest.raises(ValueError, match="known: auto, reference, torch, cpu, triton"):
        fhe_upper(torch.zeros(1, 1, I), torch.ones(1, 1), torch.ones(1, 1, dtype=torch.bool), *upper_weights(torch.float32), impl="cuda")


# ---- the encoder ------------------------------------------------------------------------


def make_fhe(**options) -> FHE:
    torch.manual_seed(0)
    return FHE(I, hidden_size=H, context_size=C, **options)


def fix_gate_probability(enc: FHE, prob: float) -> None:
    """Make p_t = prob at every token (the gate MLP's last layer ignores its input)."""
    with torch.no_grad():
        enc.gate[2].weight.zero_()
        enc.gate[2].bias.fill_(math.log(prob / (1 - prob)))


def inputs(lengths, seed=0):
    g = torch.Generator().manual_seed(seed)
    mask = padding_mask(lengths)
    return torch.randn(*mask.shape, I, generator=g), mask, torch.randn(len(lengths), C, generator=g)


def capture_gate_probability(enc: FHE) -> dict:
    seen = {}
    enc.gate.register_forward_hook(lambda module, args, out: seen.__setitem__("p", torch.sigmoid(out.squeeze(-1)).detach()))
    return seen


def test_eval_gates_are_thresholded():
    enc = make_fhe().eval()
    seen = capture_gate_probability(enc)
    x, mask, ctx = inputs([8, 5, 3])
    with torch.no_grad():
        enc(x, mask, ctx)
        enc.threshold = float(seen["p"][mask].median())  # some gates open, some shut
        out = enc(x, mask, ctx)
        again = enc(x, mask, ctx)
    assert torch.equal(out.mask, again.mask)
    expected = (seen["p"] > enc.threshold) & mask
    for b, n in enumerate([8, 5, 3]):
        if not expected[b].any():
            expected[b, n - 1] = True
    assert torch.equal(out.mask, expected)


def test_eval_opens_the_last_token_when_every_gate_is_shut():
    enc = make_fhe().eval()
    fix_gate_probability(enc, 0.1)
    x, mask, ctx = inputs([6, 4, 1])
    with torch.no_grad():
        out = enc(x, mask, ctx)
    last = torch.zeros_like(mask)
    last[torch.arange(3), torch.tensor([5, 3, 0])] = True
    assert torch.equal(out.mask, last)
    assert torch.all(out.states[~last] == 0)  # no update before the last token
    assert torch.all(out.states[last].abs().sum(-1) > 0)  # the upper layer stepped there


def test_training_samples_gates_with_exploration():
    x, mask, ctx = inputs([7, 4, 2])
    for epsilon, expected in [(0.0, torch.zeros_like(mask)), (1.0, mask)]:
        enc = make_fhe(epsilon=epsilon).train()
        fix_gate_probability(enc, 1e-9)
        out = enc(x, mask, ctx)
        assert torch.equal(out.mask, expected)


def test_openness_stat():
    x, mask, ctx = inputs([7, 4, 2])
    enc = make_fhe().eval()
    fix_gate_probability(enc, 0.9)
    with torch.no_grad():
        out = enc(x, mask, ctx)
    assert out.stats["gate_openness"] == 1.0
    assert out.stats["gate_prob"] == pytest.approx(0.9)
    enc = make_fhe().train()
    out = enc(x, mask, ctx)
    assert not torch.any(out.mask & ~mask)
    assert out.stats["gate_openness"] == pytest.approx(float(out.mask.sum() / mask.sum()))


@pytest.mark.parametrize("weight,target,expected", [(2.0, 0.5, 0.6), (2.0, 0.9, 0.0), (0.0, 0.5, None)])
def test_sparsity_penalty_on_the_gate_probabilities(weight, target, expected):
    enc = make_fhe(sparsity_weight=weight, sparsity_target=target).train()
    fix_gate_probability(enc, 0.8)
    out = enc(*inputs([7, 4, 2]))
    if expected is None:
        assert out.aux_loss is None
    else:
        assert out.aux_loss.item() == pytest.approx(expected, abs=1e-6)


def test_context_size_is_checked():
    x, mask, ctx = inputs([4, 2])
    enc = make_fhe()
    with pytest.raises(ValueError, match="got no context"):
        enc(x, mask)
    with pytest.raises(ValueError, match="context_size=3 but got a context of size 4"):
        enc(x, mask, torch.zeros(2, 4))
    assert make_fhe(context_in_input=False).lower.input_size == I
    assert make_fhe().lower.input_size == I + C


def test_unconditional_gates_ignore_the_context():
    torch.manual_seed(0)
    enc = FHE(I, hidden_size=H, context_size=0).eval()
    x, mask, ctx = inputs([5, 3])
    with torch.no_grad():
        torch.testing.assert_close(enc(x, mask, ctx).states, enc(x, mask).states)


def test_policy_loss_is_reinforce_with_a_running_baseline():
    enc = make_fhe(epsilon=0.05, baseline_momentum=0.75).train()
    seen = capture_gate_probability(enc)
    x, mask, ctx = inputs([7, 4, 2])
    means = []
    for step in range(2):
        out = enc(x, mask, ctx)
        ll = -torch.rand(3) * 3
        pi = seen["p"] + 0.05
        log_prob = torch.where(out.mask, pi.log(), (1 - pi).log()).masked_fill(~mask, 0).sum(1)
        torch.testing.assert_close(out.policy_log_prob, log_prob, rtol=1e-5, atol=1e-6)
        baseline = ll.mean() if step == 0 else means[0]  # started at the first mean
        expected = -((ll - baseline) * log_prob).mean()
        torch.testing.assert_close(enc.policy_loss(out, ll), expected, rtol=1e-5, atol=1e-6)
        means.append(ll.mean())
    torch.testing.assert_close(enc.baseline, 0.75 * means[0] + 0.25 * means[1])
    enc.eval()
    with torch.no_grad():
        out = enc(x, mask, ctx)
    assert out.policy_log_prob is None and enc.policy_loss(out, torch.zeros(3)) is None
    torch.testing.assert_close(enc.baseline, 0.75 * means[0] + 0.25 * means[1])  # eval leaves it alone


def test_the_policy_loss_does_not_depend_on_earlier_calls():
    """Two training forwards then one loss equal one forward and its loss: no state between calls."""
    x, mask, ctx = inputs([7, 4, 2])
    ll = -torch.rand(3, generator=torch.Generator().manual_seed(5)) * 3

    def loss_and_gate_grads(extra_calls):
        enc = make_fhe(sparsity_weight=0.5, sparsity_target=0.1, sparsity_penalty="reward").train()
        for _ in range(extra_calls):
            enc(x, mask, ctx)  # thrown away: sampled gates of a call nobody scores
        torch.manual_seed(1)
        out = enc(x, mask, ctx)
        loss = enc.policy_loss(out, ll)
        loss.backward()
        return loss.detach(), [p.grad.clone() for p in enc.gate.parameters()], enc.baseline.clone()

    one, grads_one, baseline_one = loss_and_gate_grads(0)
    two, grads_two, baseline_two = loss_and_gate_grads(1)
    torch.testing.assert_close(two, one)
    torch.testing.assert_close(baseline_two, baseline_one)
    for a, b in zip(grads_two, grads_one):
        torch.testing.assert_close(a, b)


def test_policy_losses_train_only_the_gate():
    """REINFORCE and the sparsity penalty reach the gate, not the lower LSTM or the context."""
    enc = make_fhe(sparsity_weight=1.0).train()
    fix_gate_probability(enc, 0.9)  # openness above the target: the penalty is active
    with torch.no_grad():
        enc.gate[2].weight.normal_()
    x, mask, ctx = inputs([7, 4, 2])
    ctx.requires_grad_()
    out = enc(x, mask, ctx)
    (out.aux_loss + enc.policy_loss(out, -torch.rand(3))).backward()
    trained = {n for n, p in enc.named_parameters() if p.grad is not None and torch.any(p.grad != 0)}
    assert trained == {"gate.0.weight", "gate.0.bias", "gate.2.weight", "gate.2.bias", "context_proj.weight", "context_proj.bias"}
    assert ctx.grad is None


# ---- the learning signal ----------------------------------------------------------------

VOCAB, LENGTH, MARKER = 4, 8, 4


def marker_batch(n, g):
    """Random digits with one marker; the label is the digit right after it."""
    tokens = torch.randint(0, VOCAB, (n, LENGTH), generator=g)
    where = torch.randint(0, LENGTH - 1, (n,), generator=g)
    tokens[torch.arange(n), where] = MARKER
    return F.one_hot(tokens, VOCAB + 1).float(), where + 1, tokens[torch.arange(n), where + 1]


class MarkerModel(nn.Module):
    """FHE + attention over its open gates + a classifier."""

    def __init__(self):
        super().__init__()
        self.encoder = FHE(VOCAB + 1, hidden_size=16, sparsity_weight=0.05, sparsity_target=0.1)
        self.score = nn.Linear(16, 1)
        self.out = nn.Linear(16, VOCAB)

    def forward(self, x, mask):
        enc = self.encoder(x, mask)
        scores = self.score(torch.tanh(enc.states)).squeeze(-1).masked_fill(~enc.mask, float("-inf"))
        weights = torch.nan_to_num(torch.softmax(scores, dim=-1), nan=0.0)
        return torch.log_softmax(self.out(torch.bmm(weights.unsqueeze(1), enc.states).squeeze(1)), -1), enc


def test_reinforce_opens_the_gate_where_the_answer_is(one_thread):
    torch.manual_seed(0)
    model = MarkerModel()
    seen = capture_gate_probability(model.encoder)
    x_dev, target_dev, _ = marker_batch(256, torch.Generator().manual_seed(1))
    mask = torch.ones(256, LENGTH, dtype=torch.bool)
    at_target = F.one_hot(target_dev, LENGTH).bool()

    def gate_probability():
        model.eval()
        with torch.no_grad():
            model(x_dev, mask)
        model.train()
        return float(seen["p"][at_target].mean()), float(seen["p"][~at_target].mean())

    start, _ = gate_probability()
    optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
    g = torch.Generator().manual_seed(2)
    for _ in range(200):
        x, _, label = marker_batch(64, g)
        log_probs, enc = model(x, mask[:64])
        ll = log_probs.gather(1, label.unsqueeze(1)).squeeze(1)
        loss = -ll.mean() + enc.aux_loss + model.encoder.policy_loss(enc, ll.detach())
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    end, elsewhere = gate_probability()
    assert end > start + 0.3, (start, end)
    assert end > elsewhere + 0.3, (end, elsewhere)


# ---- the sparsity penalty's two forms and Table 3's schedule ----------------------------


def test_sparsity_penalty_by_hand():
    """lambda * max(0, mean_t b_t - gamma) per sequence, over its real tokens."""
    from rnnbench.encoders.fhe import sparsity_penalty

    gates = torch.tensor([[1, 1, 0, 0], [1, 0, 0, 0], [1, 1, 1, 1]], dtype=torch.bool)
    mask = torch.tensor([[1, 1, 1, 1], [1, 1, 1, 1], [1, 1, 0, 0]], dtype=torch.bool)  # third: 2 real tokens
    # openness 0.5, 0.25, 1.0 (padding never counts); gamma 0.25, lambda 2
    torch.testing.assert_close(sparsity_penalty(gates, mask, 2.0, 0.25), torch.tensor([0.5, 0.0, 1.5]))
    # gamma = 0: a penalty on every open gate (the paper's eq. 11)
    torch.testing.assert_close(sparsity_penalty(gates, mask, 1.0, 0.0), torch.tensor([0.5, 0.25, 1.0]))


def test_reward_form_is_subtracted_from_the_reward():
    """sparsity_penalty=reward: no aux loss; the penalty of the sampled gates lowers each sequence's reward."""
    enc = make_fhe(epsilon=0.0, sparsity_weight=2.0, sparsity_target=0.25, sparsity_penalty="reward", baseline_momentum=0.5).train()
    fix_gate_probability(enc, 0.6)
    x, mask, ctx = inputs([4, 4, 2])
    torch.manual_seed(3)
    out = enc(x, mask, ctx)
    assert out.aux_loss is None
    real = mask.float()
    openness = (out.mask.float() * real).sum(1) / real.sum(1)
    penalty = 2.0 * torch.clamp(openness - 0.25, min=0.0)
    torch.testing.assert_close(out.policy_penalty, penalty)
    ll = torch.tensor([-0.5, -1.0, -2.0])
    reward = ll - penalty
    log_prob = torch.where(out.mask, math.log(0.6), math.log(0.4)).masked_fill(~mask, 0).sum(1)
    expected = -((reward - reward.mean()) * log_prob).mean()  # the baseline starts at the first mean reward
    torch.testing.assert_close(enc.policy_loss(out, ll), expected, rtol=1e-5, atol=1e-6)
    torch.testing.assert_close(enc.baseline, reward.mean())  # 0.5 * first mean + 0.5 * the same mean
    enc.eval()
    with torch.no_grad():
        out = enc(x, mask, ctx)
    assert out.aux_loss is None and out.policy_penalty is None  # eval: nothing sampled, no penalty


def test_loss_form_is_todays_differentiable_term():
    enc = make_fhe(sparsity_weight=2.0, sparsity_target=0.25).train()  # sparsity_penalty="loss" is the default
    fix_gate_probability(enc, 0.6)
    x, mask, ctx = inputs([4, 4, 2])
    out = enc(x, mask, ctx)
    assert out.policy_penalty is None
    torch.testing.assert_close(out.aux_loss, torch.tensor(2.0 * (0.6 - 0.25)))


def test_an_unknown_penalty_form_or_threshold_is_one_line():
    from rnnbench.errors import ConfigError

    with pytest.raises(ConfigError, match="sparsity_penalty"):
        make_fhe(sparsity_penalty="both")
    with pytest.raises(ConfigError, match="penalty_from_dev_accuracy"):
        make_fhe(penalty_from_dev_accuracy=90)
    with pytest.raises(ConfigError, match="penalty_from_dev_accuracy"):
        make_fhe().set_penalty_active(True)


@pytest.mark.parametrize("form", ["reward", "loss"])
def test_table3_schedule_enforces_the_penalty_once_dev_accuracy_is_reached(form):
    enc = make_fhe(sparsity_weight=2.0, sparsity_target=0.0, sparsity_penalty=form, penalty_from_dev_accuracy=0.9).train()
    fix_gate_probability(enc, 0.6)
    x, mask, ctx = inputs([4, 3])

    def penalised():
        out = enc(x, mask, ctx)
        return (out.aux_loss if form == "loss" else out.policy_penalty) is not None, out.stats["penalty_active"]

    assert penalised() == (False, 0.0)  # gates free at first
    assert enc.on_dev_score(0.85) is False
    assert penalised() == (False, 0.0)
    assert enc.on_dev_score(0.9) is True  # the objective changed: the loop restarts its choice of the best epoch
    assert penalised() == (True, 1.0)
    assert enc.on_dev_score(0.95) is False and enc.on_dev_score(0.5) is False  # enforced for the rest of training
    assert penalised() == (True, 1.0)
    # the switch is saved with the weights, so a resumed run keeps it
    fresh = make_fhe(sparsity_weight=2.0, sparsity_target=0.0, sparsity_penalty=form, penalty_from_dev_accuracy=0.9)
    fresh.load_state_dict(enc.state_dict())
    assert fresh.penalty_is_active()


def test_without_the_schedule_the_state_dict_is_unchanged():
    """Runs without penalty_from_dev_accuracy keep the state-dict keys they always had (old checkpoints load)."""
    enc = make_fhe()
    assert "penalty_active" not in enc.state_dict()
    x, mask, ctx = inputs([4, 3])
    assert set(enc(x, mask, ctx).stats) == {"gate_openness", "gate_prob"}  # records keep their keys too
