"""rnnbench.training.sanity: every check passes on a healthy tiny model and fails on one broken the way
the check is meant to catch (an unused parameter, a head that ignores its input, an encoder that
reads padding, dropout on an unbounded residual path, states constant across tokens, a rate at
which nothing is learned); the probes' uniform priors are what a uniform model's loss is."""
from __future__ import annotations

import math

import pytest
import torch
from omegaconf import OmegaConf
from torch import nn

from rnnbench.training import sanity
from rnnbench.compose import compose_config
from rnnbench.data.batching import collate
from rnnbench.data.prepare import prepare
from rnnbench.data.vocab import Vocab
from rnnbench.encoders.base import Encoder, EncoderOutput, zero_padding
from rnnbench.encoders.lstm import LSTMEncoder
from rnnbench.heads.aspect import AspectHead
from rnnbench.heads.classifier import ClassifierHead
from rnnbench.heads.lm import LanguageModelHead
from rnnbench.heads.probes import ClassifierProbe, LanguageModelProbe, probe_for
from rnnbench.training.model import TaskModel, build_model

VOCAB = Vocab([f"w{i}" for i in range(20)], lowercase=False)
EMB, CLASSES = 8, 3


def _examples(n: int = sanity.EXAMPLES) -> list[dict]:
    g = torch.Generator().manual_seed(0)
    out = []
    for i in range(n):
        ids = torch.randint(2, len(VOCAB), (int(torch.randint(3, 9, (1,), generator=g)),), generator=g).tolist()
        out.append({"id": str(i), "tokens": ids, "aspect": ids[:1], "label": ids[0] % CLASSES})
    return out


BATCH = collate(_examples(), ["tokens", "aspect"])


def _model(encoder: Encoder | None = None, head_cls=ClassifierHead, **head_options) -> TaskModel:
    torch.manual_seed(0)
    encoder = encoder or LSTMEncoder(EMB, hidden_size=8, bidirectional=True, dropout=0.5)
    options = {"hidden": 16, **head_options} if head_cls is ClassifierHead else head_options
    return TaskModel(nn.Embedding(len(VOCAB), EMB, padding_idx=0), encoder, head_cls(EMB, encoder.output_size, CLASSES, **options))


def _cfg(lr: float = 1e-2):
    return OmegaConf.create({"seed": 1, "trainer": {"lr": lr, "optimizer": "adam", "weight_decay": 0.0, "grad_clip": None}})


# ---- deliberately broken parts ----------------------------------------------------------------


class UnusedParameter(LSTMEncoder):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.spare = nn.Parameter(torch.zeros(3))  # never read


class BlindHead(ClassifierHead):
    """Calls the encoder but classifies from a constant: the output ignores the input."""

    def forward(self, batch, embed, encoder):
        from rnnbench.heads.base import classification_output

        enc = encoder(embed(batch["tokens"]), batch["tokens_mask"])
        features = torch.zeros(enc.states.shape[0], self.out.in_features) + 0.0 * enc.states.sum()
        return classification_output(self.out(features), batch["label"], enc)


class PaddingReader(Encoder):
    """An LSTM whose states also get the mean input over every position, padding included."""

    def __init__(self, input_size: int):
        super().__init__(input_size, 2 * input_size)
        self.lstm = LSTMEncoder(input_size, hidden_size=input_size, bidirectional=True)

    def forward(self, x, mask, context=None):
        unmasked = x.mean(dim=1, keepdim=True).repeat(1, 1, 2)
        return EncoderOutput(zero_padding(self.lstm(x, mask).states + unmasked, mask))


class Residual(Encoder):
    """An LSTM of input dropout plus its input: ``dropped_residual`` adds the dropped-out input
    (Res-V2 before its fix: unbounded, so training-mode states are larger), else the clean one."""

    def __init__(self, input_size: int, dropped_residual: bool, p: float = 0.7):
        super().__init__(input_size, input_size)
        self.dropout = nn.Dropout(p)
        self.lstm = LSTMEncoder(input_size, hidden_size=input_size // 2, bidirectional=True)
        self.dropped_residual = dropped_residual

    def forward(self, x, mask, context=None):
        dropped = self.dropout(x)
        residual = dropped if self.dropped_residual else x
        return EncoderOutput(zero_padding(self.lstm(dropped, mask).states + residual, mask))


class Constant(Encoder):
    """The same learned state at every real token, whatever the token (MZU's failure: a candidate
    constant across tokens)."""

    def __init__(self, input_size: int):
        super().__init__(input_size, input_size)
        self.state = nn.Parameter(torch.randn(input_size))

    def forward(self, x, mask, context=None):
        return EncoderOutput(zero_padding(self.state.expand_as(x) + 0.0 * x, mask))


# ---- the checks ---------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def healthy_verdict():
    model = _model()
    probe = probe_for(model.head)
    checks = [sanity.initial_loss(model, BATCH, probe), sanity.gradients(model, BATCH, 1),
              sanity.input_dependence(model, BATCH, probe, ["tokens"], VOCAB, 1), sanity.train_eval(model, BATCH, 1),
              sanity.memorisation(model, BATCH, probe, _cfg())]
    return {c.name: c for c in checks}


@pytest.mark.parametrize("name", sanity.CHECKS)
def test_a_healthy_model_passes_every_check(healthy_verdict, name):
    check = healthy_verdict[name]
    assert check.passed, check.shown


def test_the_initial_loss_of_a_uniform_model_is_the_prior_and_large_logits_fail():
    model = _model()
    nn.init.zeros_(model.head.out.weight), nn.init.zeros_(model.head.out.bias)
    uniform = sanity.initial_loss(model, BATCH, ClassifierProbe(model.head))
    assert uniform.passed and uniform.value == pytest.approx(math.log(CLASSES), abs=1e-6)
    assert "ln 3" in uniform.shown
    with torch.no_grad():
        model.head.out.weight.normal_(0, 30)
    confident = sanity.initial_loss(model, BATCH, ClassifierProbe(model.head))
    assert not confident.passed and confident.value > 2 * math.log(CLASSES)


class _FixedLoss(nn.Module):
    def __init__(self, loss: float):
        super().__init__()
        self.loss = loss

    def forward(self, batch):
        from types import SimpleNamespace

        return SimpleNamespace(loss=torch.tensor(self.loss)), None


class _MarginProbe(ClassifierProbe):
    def prior_loss(self, batch, out):
        return 0.1, "the margin"


@pytest.mark.parametrize("loss, passes", [(0.18, True), (0.02, True), (0.25, False)])
def test_a_small_prior_is_judged_within_an_absolute_floor(loss, passes):
    """A ranker's prior is its margin, 0.1: 25% of it would fail cosine scores a few hundredths apart."""
    check = sanity.initial_loss(_FixedLoss(loss), BATCH, _MarginProbe(None))
    assert check.passed is passes


def test_an_unused_parameter_fails_the_gradient_check_by_name():
    model = _model(UnusedParameter(EMB, hidden_size=8, bidirectional=True))
    check = sanity.gradients(model, BATCH, 1)
    assert not check.passed and check.value == 1
    assert check.detail["without_gradient"] == ["encoder.spare"] and "encoder.spare" in check.shown


def test_a_context_projection_the_encoder_ignores_is_excused_and_named():
    model = _model(head_cls=AspectHead, question_dim=4)  # the LSTM ignores its context, as under MZU Table 6's bilstm
    check = sanity.gradients(model, BATCH, 1)
    assert check.passed and set(check.detail["excused"]) == {"head.context.weight", "head.context.bias"}
    assert "2 excused" in check.shown


def test_recurrent_weights_that_one_token_sequences_leave_without_gradient_are_excused():
    one_token = collate([{**e, "tokens": e["tokens"][:1]} for e in _examples()], ["tokens", "aspect"])
    check = sanity.gradients(_model(), one_token, 1, ["tokens", "aspect"], VOCAB)
    assert check.passed and "encoder.layers.0.rnn.weight_hh_l0" in check.detail["excused"]
    assert "one token" in check.detail["excused"]["encoder.layers.0.rnn.weight_hh_l0"]
    unused = sanity.gradients(_model(UnusedParameter(EMB, hidden_size=8, bidirectional=True)), one_token, 1, ["tokens", "aspect"], VOCAB)
    assert not unused.passed and unused.detail["without_gradient"] == ["encoder.spare"]


class AttentionPool(Encoder):
    """Each state is its token plus an attention-pooled summary of the sequence (a learned score
    per token): over one token the attention weight is 1 whatever the score."""

    def __init__(self, input_size: int):
        super().__init__(input_size, input_size)
        self.score = nn.Linear(input_size, 1, bias=False)

    def forward(self, x, mask, context=None):
        from rnnbench.nn.util import masked_softmax

        weights = masked_softmax(self.score(x).squeeze(-1), mask, dim=1)
        summary = torch.bmm(weights.unsqueeze(1), x)
        return EncoderOutput(zero_padding(x + summary, mask))


def test_an_attention_over_a_one_token_field_is_excused_by_lengthening_it_with_another_word():
    """Lengthened with the same word again, the attention would score both positions equally and
    its weights would still get no gradient (the span head's question score under FHE)."""
    one_token = collate([{**e, "tokens": e["tokens"][:1]} for e in _examples()], ["tokens", "aspect"])
    check = sanity.gradients(_model(AttentionPool(EMB)), one_token, 1, ["tokens", "aspect"], VOCAB)
    assert check.passed and "one token" in check.detail["excused"]["encoder.score.weight"]
    longer = sanity._with_tokens_twice(one_token, ["tokens"], 2, len(VOCAB))
    first, second = longer["tokens"][:, 0], longer["tokens"][:, 1]
    assert bool((first != second).all()) and bool(longer["tokens_mask"][:, :2].all())


def test_the_input_check_changes_the_last_real_token_of_each_input_field():
    changed = sanity._with_changed_tokens(BATCH, ["tokens"], 2, len(VOCAB))
    lengths = BATCH["tokens_mask"].sum(dim=1)
    differs = changed["tokens"] != BATCH["tokens"]
    assert differs.sum(dim=1).tolist() == [1] * len(lengths)
    assert differs.nonzero()[:, 1].tolist() == (lengths - 1).tolist()


def test_a_head_that_ignores_its_input_fails_the_input_check():
    model = _model(head_cls=BlindHead)
    check = sanity.input_dependence(model, BATCH, probe_for(model.head), ["tokens"], VOCAB, 1)
    assert not check.passed and check.value == 0.0


def test_an_encoder_that_reads_padding_fails_the_input_check():
    model = _model(PaddingReader(EMB))
    check = sanity.input_dependence(model, BATCH, probe_for(model.head), ["tokens"], VOCAB, 1)
    assert not check.passed and check.detail["padding_change_max"] > sanity.PADDING_CHANGE_MAX
    assert check.detail["token_change_median"] >= sanity.TOKEN_CHANGE_MIN  # the tokens do matter


def test_dropout_on_an_unbounded_residual_path_fails_the_train_eval_check():
    clean = sanity.train_eval(_model(Residual(EMB, dropped_residual=False)), BATCH, 1)
    dropped = sanity.train_eval(_model(Residual(EMB, dropped_residual=True)), BATCH, 1)
    assert clean.passed and abs(clean.value - 1) < 0.2
    assert not dropped.passed and dropped.value > sanity.TRAIN_EVAL_FACTOR


class Gated(Encoder):
    """Samples a gate per token in training (a policy, as FHE's) and thresholds it in eval; the
    states are the input where the gate is open, tripled."""

    def __init__(self, input_size: int):
        super().__init__(input_size, input_size)
        self.gate = nn.Linear(input_size, 1)

    def forward(self, x, mask, context=None):
        p = torch.sigmoid(self.gate(x).squeeze(-1))
        if self.training:
            b = torch.bernoulli(torch.full_like(p, 0.9)).bool()
            log_prob = torch.where(b, p.log(), torch.log1p(-p)).sum(dim=1)
        else:
            b, log_prob = p > 2.0, None  # every gate shut
        states = x + 2 * x * b.unsqueeze(-1)
        return EncoderOutput(zero_padding(states, mask), policy_log_prob=log_prob)


def test_sampled_decisions_are_taken_as_in_eval_mode_when_only_dropout_is_judged():
    check = sanity.train_eval(_model(Gated(EMB)), BATCH, 1)
    assert check.passed and check.value == pytest.approx(1.0) and "decisions as in eval" in check.shown
    assert check.detail["ratio_with_sampled_decisions"] > 2


def test_states_constant_across_tokens_fail_memorisation_and_the_input_check():
    model = _model(Constant(EMB))
    probe = probe_for(model.head)
    assert not sanity.input_dependence(model, BATCH, probe, ["tokens"], VOCAB, 1).passed
    check = sanity.memorisation(model, BATCH, probe, _cfg())
    assert not check.passed and check.value < 0.6 and check.detail["steps"] == sanity.MEMORISE_STEPS


def test_a_rate_at_which_nothing_is_learned_fails_memorisation(monkeypatch):
    monkeypatch.setattr(sanity, "MEMORISE_STEPS", 50)  # the budget's length does not matter here: nothing moves
    monkeypatch.setattr(sanity, "MEMORISE_MAX_STEPS", 50)
    model = _model()
    check = sanity.memorisation(model, BATCH, probe_for(model.head), _cfg(lr=1e-7))
    assert not check.passed and "after 50 steps" in check.shown


def test_the_memorisation_budget_is_a_distance_at_small_rates():
    assert sanity.memorise_budget(3e-3) == sanity.memorise_budget(1e-3) == sanity.MEMORISE_STEPS == 300
    assert sanity.memorise_budget(5e-4) == 600 and sanity.memorise_budget(3e-4) == 1000
    assert sanity.memorise_budget(1e-4) == sanity.MEMORISE_MAX_STEPS == 3000
    assert sanity.memorise_budget(1e-7) == 3000


class ShutInEval(Encoder):
    """Samples a gate per token in training and thresholds it in eval, where every gate is shut:
    the states are the input at open gates and zero elsewhere (FHE's gates, in the extreme)."""

    def __init__(self, input_size: int):
        super().__init__(input_size, input_size)
        self.gate = nn.Linear(input_size, 1)
        self.register_buffer("calls", torch.zeros(()))

    def forward(self, x, mask, context=None):
        p = torch.sigmoid(self.gate(x).squeeze(-1))
        if self.training:
            self.calls += 1  # state a training-mode pass changes (FHE's reward baseline)
            b = torch.bernoulli(torch.full_like(p, 0.9)).bool()
            log_prob = torch.where(b, p.log(), torch.log1p(-p)).sum(dim=1)
        else:
            b, log_prob = p > 2.0, None
        return EncoderOutput(zero_padding(x * b.unsqueeze(-1), mask), policy_log_prob=log_prob)


def test_decisions_sampled_in_training_are_scored_sampled_with_the_eval_rule_beside():
    model = _model(ShutInEval(EMB), hidden=32)
    probe = probe_for(model.head)
    check = sanity.memorisation(model, BATCH, probe, _cfg(), sampled_decisions=True)
    assert check.passed and "decisions sampled" in check.shown and check.detail["decisions_sampled"]
    step, sampled, _, eval_rule = check.detail["curve"][-1]
    assert sampled >= sanity.MEMORISE_TARGET and eval_rule < 0.6  # every gate shut in eval: the majority at best
    plain = sanity.memorisation(_model(ShutInEval(EMB), hidden=32), BATCH, probe, _cfg())
    assert not plain.passed


def test_scoring_with_sampled_decisions_leaves_the_buffers_and_the_random_stream_alone():
    model = _model(ShutInEval(EMB))
    model.train()
    calls, state = model.encoder.calls.clone(), torch.random.get_rng_state()
    out = sanity._sampled_output(model, BATCH, 1)
    assert float(out.encoder_output.states.abs().sum()) > 0  # gates were sampled open
    assert torch.equal(model.encoder.calls, calls) and torch.equal(torch.random.get_rng_state(), state)
    assert not model.training


class Shrunk(LSTMEncoder):
    """An LSTM whose regulariser pulls every example's states together (``weight`` times their
    spread across examples): at 1000, a thousand times harder than the task pulls them apart; at
    0 it returns none, as MZU does at lambda = 0."""

    has_regulariser = True

    def __init__(self, *args, weight: float = 1000.0, **kwargs):
        super().__init__(*args, **kwargs)
        self.weight = weight

    def forward(self, x, mask, context=None):
        out = super().forward(x, mask, context)
        if self.weight:
            out.aux_loss = self.weight * out.states.sum(dim=1).std(dim=0).mean()
        return out


def test_memorisation_trains_on_the_runs_loss_with_the_regulariser_and_keeps_the_number_without_it(monkeypatch):
    """The verdict is the model as its runs train it (``TaskModel.forward`` with the regulariser, as
    training.loop calls it): a regulariser that forbids fitting fails the check; the same steps
    without it, from the same initial weights, memorise, and the row is flagged."""
    monkeypatch.setattr(sanity, "MEMORISE_STEPS", 100)  # without the regulariser: 98% at step 25; with it: 39% at 100
    model = _model(Shrunk(EMB, hidden_size=8, bidirectional=True))
    check = sanity.memorisation(model, BATCH, probe_for(model.head), _cfg())
    assert not check.passed and check.value < sanity.MEMORISE_TARGET
    assert check.detail["steps"] == sanity.MEMORISE_STEPS and check.detail["regulariser"] == "in the loss"
    without = check.detail["without_regulariser"]
    assert without["passed"] and without["accuracy"] >= sanity.MEMORISE_TARGET and without["steps"] < sanity.MEMORISE_STEPS
    assert check.detail["regulariser_prevents_fitting"]
    assert sanity.PREVENTS_FITTING in check.failure() and without["shown"] in check.shown
    # the curve's losses are the training loss's, the regulariser included
    out, with_it = model(BATCH)
    _, task_only = model(BATCH, regularisers=False)
    assert float((with_it - task_only).detach()) == pytest.approx(float(out.encoder_output.aux_loss.detach()))


def test_a_regulariser_the_model_fits_under_is_not_flagged():
    model = _model(Shrunk(EMB, hidden_size=8, bidirectional=True, weight=1e-3))
    check = sanity.memorisation(model, BATCH, probe_for(model.head), _cfg())
    assert check.passed and check.detail["without_regulariser"]["passed"]
    assert not check.detail["regulariser_prevents_fitting"] and "without the regulariser" in check.shown


@pytest.mark.parametrize("encoder, regulariser", [
    (lambda: LSTMEncoder(EMB, hidden_size=8, bidirectional=True), "none"),  # no regulariser
    (lambda: Shrunk(EMB, hidden_size=8, bidirectional=True, weight=0.0), "weighs nothing in this row"),  # lambda = 0
])
def test_memorisation_runs_once_where_no_regulariser_weighs_in(monkeypatch, encoder, regulariser):
    runs, memorise = [], sanity._memorise
    monkeypatch.setattr(sanity, "_memorise", lambda *a, **k: runs.append(k["regularisers"]) or memorise(*a, **k))
    model = _model(encoder())
    check = sanity.memorisation(model, BATCH, probe_for(model.head), _cfg())
    assert runs == [True] and check.passed
    assert check.detail["regulariser"] == regulariser and "without_regulariser" not in check.detail


def test_memorisation_stops_once_the_target_is_reached():
    model = _model()
    check = sanity.memorisation(model, BATCH, probe_for(model.head), _cfg())
    assert check.passed and check.detail["steps"] < sanity.MEMORISE_STEPS
    assert check.detail["steps"] % sanity.MEMORISE_EVERY == 0 and check.detail["curve"][-1][1] >= sanity.MEMORISE_TARGET


def _long_tailed_examples() -> list[dict]:
    """Reviews of very different lengths: one padded batch would be mostly padding."""
    g = torch.Generator().manual_seed(1)
    out = []
    for i, n in enumerate([300, 120, *[4 + i % 20 for i in range(sanity.EXAMPLES - 2)]]):
        ids = torch.randint(2, len(VOCAB), (n,), generator=g).tolist()
        out.append({"id": str(i), "tokens": ids, "aspect": ids[:1], "label": ids[0] % CLASSES})
    return out


def test_length_chunks_partition_the_subset_and_their_weighted_gradients_are_the_full_batchs():
    examples = _long_tailed_examples()
    model = _model(LSTMEncoder(EMB, hidden_size=8, bidirectional=True, dropout=0.0))
    chunks = sanity.length_chunks(examples, ["tokens", "aspect"], model)
    assert chunks is not None and len(chunks) > 1
    assert sum(len(part["label"]) for part, _ in chunks) == len(examples)
    assert sum(share for _, share in chunks) == pytest.approx(1.0)
    longest = [int(part["tokens_mask"].sum(1).max()) for part, _ in chunks]
    assert longest == sorted(longest) and longest[-1] == 300
    padded = sum(part["tokens_mask"].numel() for part, _ in chunks)
    assert padded < 0.5 * len(examples) * 300  # what chunking is for

    def gradients(parts):
        model.zero_grad(set_to_none=True)
        for part, share in parts:
            (model(part)[1] * share).backward()
        return {n: p.grad.clone() for n, p in model.named_parameters() if p.grad is not None}

    model.train()  # no dropout in this model: train mode is deterministic
    full, chunked = gradients([(collate(examples, ["tokens", "aspect"]), 1.0)]), gradients(chunks)
    assert full.keys() == chunked.keys()
    for name in full:
        assert torch.allclose(full[name], chunked[name], rtol=1e-4, atol=1e-6), name


def test_short_batches_and_losses_not_averaged_over_examples_are_not_chunked():
    model = _model()
    assert sanity.length_chunks(_examples(), ["tokens", "aspect"], model) is None  # one batch is cheap
    assert not LanguageModelHead.loss_is_example_mean  # a mean over characters
    model.head.loss_is_example_mean = False
    assert sanity.length_chunks(_long_tailed_examples(), ["tokens", "aspect"], model) is None


def test_memorisation_in_chunks_learns_as_the_full_batch_does():
    examples = _long_tailed_examples()
    fields = ["tokens", "aspect"]
    runs = []
    for chunked in (False, True):
        model = _model(LSTMEncoder(EMB, hidden_size=8, bidirectional=True, dropout=0.0))
        chunks = sanity.length_chunks(examples, fields, model) if chunked else None
        runs.append(sanity.memorisation(model, collate(examples, fields), probe_for(model.head), _cfg(), chunks=chunks))
    full, chunked = runs  # the same gradients up to rounding, which Adam's normalisation amplifies over steps
    assert chunked.detail["chunks"] > 1 and full.detail["chunks"] == 1
    assert full.passed and chunked.passed


# ---- the probes -----------------------------------------------------------------------------------


def test_a_language_model_example_is_one_scored_character_and_its_prior_is_uniform_over_the_symbols():
    probe = LanguageModelProbe(None)
    record = {"id": "r", "chars": list("abcdefghij"), "targets": list("bcdefghijk"), "scored_from": 4}
    (cut,) = probe.examples([record])
    assert cut["chars"] == list("abcde") and cut["targets"] == list("bcdef") and cut["scored_from"] == 4

    vocab = Vocab(list("abcdefghijk"), lowercase=False)
    torch.manual_seed(0)
    encoder = LSTMEncoder(EMB, hidden_size=8, bidirectional=False)
    head = LanguageModelHead(EMB, encoder.output_size, 0, vocab)
    nn.init.zeros_(head.out.weight), nn.init.zeros_(head.out.bias)
    model = TaskModel(nn.Embedding(len(vocab), EMB, padding_idx=0), encoder, head)
    records = probe.examples([{"id": str(i), "chars": vocab.encode(list("abcdefghij")), "targets": vocab.encode(list("bcdefghijk")),
                               "scored_from": 3 + i} for i in range(4)])
    batch = collate(records, ["chars", "targets"])
    check = sanity.initial_loss(model, batch, probe_for(head))
    assert check.value == pytest.approx(math.log(len(vocab) - 1), abs=1e-6) and check.detail["prior_formula"] == f"ln {len(vocab) - 1}"
    assert probe_for(head).hits(batch, model(batch)[0]) == (0, 4)  # uniform: no character above 1/2


def _small(task: str, tmp_path, *extra: str):
    cfg = compose_config([f"task={task}", "encoder=bilstm", "encoder.hidden_size=8", "task.reader.train_size=64",
                          "task.reader.dev_size=4", "task.reader.test_size=4", f"paths.cache_dir={tmp_path}", *extra])
    data = prepare(cfg)
    torch.manual_seed(0)
    model = build_model(cfg, data)
    probe = probe_for(model.head)
    examples, fields = sanity.fixed_subset(cfg, data, model, probe)
    return model, probe, collate(examples, fields), data.vocab


def test_a_span_heads_output_is_its_start_and_end_distributions():
    """Compared on the positions both batches have when padding is added (the distributions are longer)."""
    base = torch.softmax(torch.randn(2, 5), dim=-1)
    longer = torch.cat([base, torch.zeros(2, 4)], dim=-1)
    assert sanity._relative(longer, base).tolist() == [0.0, 0.0]


def test_a_span_heads_prior_is_a_uniform_start_and_end(tmp_path):
    model, probe, batch, vocab = _small("span_copy", tmp_path)
    check = sanity.input_dependence(model, batch, probe, ["passage", "question"], vocab, 1)
    assert check.passed and probe.output(model(batch)[0]).shape[1:] == (2, batch["passage"].shape[1])
    for layer in (model.head.start_out, model.head.end_out):
        nn.init.zeros_(layer.weight)
    check = sanity.initial_loss(model, batch, probe)
    assert check.passed and check.value == pytest.approx(check.detail["prior"], rel=1e-6)


def test_a_pointer_generators_prior_is_its_own_softmax_made_uniform(tmp_path):
    model, probe, batch, _ = _small("pointer_copy", tmp_path)
    head = model.head
    for layer in (head.shortlist_out, head.switch[-1]):
        nn.init.zeros_(layer.weight), nn.init.zeros_(layer.bias)
    nn.init.zeros_(head.att_score.weight)  # uniform attention over the passage
    check = sanity.initial_loss(model, batch, probe)
    assert check.value == pytest.approx(check.detail["prior"], rel=1e-5)
    assert probe.target_fields == ("answer_tokens",)


def test_check_model_builds_the_rows_model_and_runs_the_five_checks_in_order(tmp_path):
    cfg = compose_config(["encoder=lstm1", "encoder.hidden_size=16", "task.reader.train_size=200", "task.reader.dev_size=8",
                          "task.reader.test_size=8", f"paths.cache_dir={tmp_path}"])
    threads = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        verdict = sanity.check_model(cfg, prepare(cfg))
        assert torch.get_num_threads() == 2  # the checks ran at one thread; the caller's setting is back
    finally:
        torch.set_num_threads(threads)
    assert [c.name for c in verdict.checks] == list(sanity.CHECKS)
    assert verdict.passed, verdict.failures()
    assert verdict.examples == sanity.EXAMPLES and verdict.lr == cfg.trainer.lr and verdict.unit == "examples"
    assert sanity.Verdict.from_dict(verdict.to_dict()).to_dict() == verdict.to_dict()


def test_a_step_hook_sees_every_steps_gradient_before_clipping_and_changes_nothing():
    cfg = _cfg()
    cfg.trainer.grad_clip = 1e-3  # far below any gradient here: a norm above it was read before clipping
    plain = sanity.memorisation(_model(), BATCH, probe_for(_model().head), cfg)
    seen = []

    def on_step(step, loss, model):
        norm = sum(float(p.grad.pow(2).sum()) for p in model.parameters() if p.grad is not None) ** 0.5
        seen.append((step, loss, norm))

    model = _model()
    hooked = sanity.memorisation(model, BATCH, probe_for(model.head), cfg, on_step=on_step)
    assert hooked.detail["curve"] == plain.detail["curve"]  # the same numbers as the check without the hook
    assert [s for s, _, _ in seen] == list(range(1, hooked.detail["steps"] + 1))
    assert all(norm > 10 * cfg.trainer.grad_clip for _, _, norm in seen)
    scored = {point[0]: point[2] for point in hooked.detail["curve"]}
    assert all(loss == scored[step] for step, loss, _ in seen if step in scored)


def test_a_replay_budget_replaces_the_checks_step_budget():
    model = _model()
    check = sanity.memorisation(model, BATCH, probe_for(model.head), _cfg(lr=1e-6), budget=30)
    assert check.detail["budget"] == 30 and check.detail["steps"] == 30 and not check.passed
    assert [point[0] for point in check.detail["curve"]] == [25, 30]
