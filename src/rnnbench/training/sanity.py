"""Sanity checks of one campaign row's model, before any run of it is trained.

A row (an encoder under an experiment's config) is built exactly as a run builds it
(``training.model.build_model`` on the task's data, the run's seed) and checked on a
fixed subset of ``EXAMPLES`` training examples (``heads.probes`` says what an example,
the prior and "memorised" are for each kind of head). Five checks, each a value and a
verdict; the thresholds are the constants below, and docs/sanity.md says why each is
what it is:

1. ``initial_loss``: the eval-mode loss at initialisation is within ``PRIOR_TOLERANCE``
   (relative; at least ``PRIOR_FLOOR`` nats) of the uniform prior's (ln C for C classes). Far above: the model starts
   confidently wrong (large logits); far below: it sees the answer.
2. ``gradients``: one training step's backward (task loss plus encoder terms, train mode)
   gives every trainable parameter tensor a non-zero gradient somewhere. Excused, and
   listed: parameters that only feed the encoder's context when the encoder ignores its
   context (the aspect and question projections under a non-FHE encoder), the embedding
   table under a one-hot input, and parameters that get a gradient once every text field is
   two tokens long where some field has one token only (a recurrence's state weights, an
   attention over one position: synthetic pointer copy's one-word questions).
3. ``input``: in eval mode, changing the last real token of every input field changes
   each example's output (median relative change at least ``TOKEN_CHANGE_MIN``), while
   ``PADDING_EXTRA`` more padding positions, and random vectors at every padding
   position, change no output by more than ``PADDING_CHANGE_MAX`` (relative).
4. ``train_eval``: the norm of the encoder's states in train mode (dropout active, the
   mean over ``DRAWS`` draws) over their norm in eval mode lies within
   [1/``TRAIN_EVAL_FACTOR``, ``TRAIN_EVAL_FACTOR``]: dropout is applied consistently
   (inverted dropout keeps a bounded state's scale; dropout on an unbounded path does not).
   An encoder that samples decisions in training (FHE's gates) keeps its eval-mode
   decisions for this comparison: their sampling is the method, not dropout.
5. ``memorisation``: up to ``memorise_budget(lr)`` full-batch steps of the row's optimizer
   at the row's learning rate (its gradient clipping and weight decay, train mode) reach
   ``MEMORISE_TARGET`` training accuracy on the subset (scored in eval mode every
   ``MEMORISE_EVERY`` steps). The budget is ``MEMORISE_STEPS`` at ``MEMORISE_REFERENCE_LR``
   or above and grows as 1/lr below it, up to ``MEMORISE_MAX_STEPS``: Adam moves a weight
   by about lr per step, so a budget of steps is a budget of distance only at a fixed rate.
   An encoder that samples decisions in training (FHE's gates) is scored with its decisions
   sampled as in training; the accuracy under its eval-mode rule is in the detail. The loss
   is the one the runs minimise (``TaskModel.forward``, as ``training.loop`` calls it): the
   task loss plus the encoder's regulariser (``aux_loss``: MZU's zone disagreement weighted
   by lambda, FHE's differentiable sparsity penalty) plus, in training, its policy loss. Where
   the regulariser weighs in (``has_regulariser`` and an ``aux_loss`` returned), the check
   runs again from the same initial weights without it, and keeps that number in the detail:
   a row that memorises only without it is flagged (``PREVENTS_FITTING``) and fails, since its
   runs train with it. Elsewhere the two are one computation and run once.
   Where one padded batch would be mostly padding (long reviews of very different lengths)
   and the head's loss is a mean over examples, each step sums the weighted gradients of
   length-sorted chunks (``length_chunks``): the full batch's gradient, up to float rounding
   and dropout's draws, at a fraction of the cost.

``check_model`` runs them in that order (the first four at initialisation, memorisation
last since it trains the model) and returns a ``Verdict``. Which rows a table runs, the
cache of verdicts and the gate in front of a sweep are ``rnnbench.campaign.sanity_gate``.
"""
from __future__ import annotations

import copy
import math
import statistics
import time
from dataclasses import asdict, dataclass, field

import torch
from omegaconf import DictConfig

from rnnbench.data.batching import collate
from rnnbench.encoders.build import build_encoder
from rnnbench.data.prepare import TaskData
from rnnbench.heads.base import special_ids
from rnnbench.heads.probes import Probe, probe_for
from rnnbench.training.loop import build_optimizer, truncated_batch
from rnnbench.training.model import TaskModel, build_model

# Bump when a check or threshold changes: it is part of every cached verdict's key.
# 2: the input check changes the last real token (was the middle one); one-token fields' recurrences excused.
# 3: the memorisation budget grows as 1/lr below MEMORISE_REFERENCE_LR; sampled decisions scored as
#    sampled; memorisation without the encoder's regulariser; a one-token field is lengthened with
#    another word (a repeated word cannot move an attention).
# 4: one changed token must move the output by 1e-6 (was 1e-5): an attention over a causal encoder's
#    400 states gives the changed last state a share of about 1/400 (FHE Table 2's LSTM2: 9.4e-6).
# 5: memorisation on the loss the runs train on, the encoder's regulariser included (the number
#    without it kept in the detail); rows whose regulariser does not weigh in carry over (``carried_over``).
VERSION = 5

EXAMPLES = 64
PRIOR_TOLERANCE = 0.25  # |loss - prior| <= 25% of the prior, or PRIOR_FLOOR where that is larger
PRIOR_FLOOR = 0.1  # nats: a ranker's prior is its margin (0.1), and cosine scores at init move it by a few hundredths
# Median relative output change from one changed real token: 10x float32 noise (~1e-7; a head that
# ignores its input moves by 0). A model reading a 250-token IMDb review through its final states
# moves by ~3e-4 at initialisation; one reading it through an attention over a causal encoder's
# states by ~1/length of that (one state of 400 changes): FHE Table 2's LSTM2, 400 digits, 9.4e-6.
TOKEN_CHANGE_MIN = 1e-6
PADDING_EXTRA = 4  # padding positions added to every text field
PADDING_CHANGE_MAX = 1e-5  # largest relative output change from padding (float32 noise is ~1e-7)
DRAWS = 4  # train-mode forward passes averaged
TRAIN_EVAL_FACTOR = 1.5
MEMORISE_STEPS = 300
MEMORISE_REFERENCE_LR = 1e-3  # MEMORISE_STEPS at this rate or above; ~1/lr steps below it
MEMORISE_MAX_STEPS = 3000  # the budget at 1e-4, the smallest rate a committed table uses
MEMORISE_EVERY = 25
MEMORISE_TARGET = 0.95
# Memorisation in length-sorted chunks when one padded batch holds at least CHUNK_MIN_PADDED
# positions and chunks cost at most half of it; a chunk costs its longest example's length times
# (its examples + CHUNK_OVERHEAD): the recurrence's per-position work beyond the matrix products.
CHUNK_MIN_PADDED = EXAMPLES * 256
CHUNK_OVERHEAD = 4

CHECKS = ("initial_loss", "gradients", "input", "train_eval", "memorisation")


def thresholds() -> dict:
    """Every constant a verdict depends on (part of its cache key)."""
    return {"version": VERSION, "examples": EXAMPLES, "prior_tolerance": PRIOR_TOLERANCE, "prior_floor": PRIOR_FLOOR, "token_change_min": TOKEN_CHANGE_MIN,
            "padding_extra": PADDING_EXTRA, "padding_change_max": PADDING_CHANGE_MAX, "draws": DRAWS,
            "train_eval_factor": TRAIN_EVAL_FACTOR, "memorise_steps": MEMORISE_STEPS, "memorise_every": MEMORISE_EVERY,
            "memorise_target": MEMORISE_TARGET, "memorise_reference_lr": MEMORISE_REFERENCE_LR,
            "memorise_max_steps": MEMORISE_MAX_STEPS}


# Version 4's constants: the cache keys its verdicts were stored under (``carried_over``).
PREVIOUS = {"version": 4, "examples": 64, "prior_tolerance": 0.25, "prior_floor": 0.1, "token_change_min": 1e-6,
            "padding_extra": 4, "padding_change_max": 1e-5, "draws": 4, "train_eval_factor": 1.5,
            "memorise_steps": 300, "memorise_every": 25, "memorise_target": 0.95,
            "memorise_reference_lr": 1e-3, "memorise_max_steps": 3000}

# What a failed memorisation says when the model memorises without its regulariser: the loss its runs
# train on keeps it from fitting the subset (results/sanity.md flags the row, the gate refuses it).
PREVENTS_FITTING = "the regulariser prevents fitting"
# The input width of the encoder built to ask whether its regulariser weighs in (``regulariser_in_use``).
PROBE_INPUT = 8


def regulariser_in_use(cfg: DictConfig) -> bool:
    """Whether the row's training loss includes its encoder's regulariser: the encoder class has one
    (``has_regulariser``) and, built from ``cfg.encoder``, returns an ``aux_loss`` from a train-mode
    call. A weight of 0 (MZU's lambda = 0 rows), FHE's penalty in the REINFORCE reward (the
    paper's form: part of the policy loss, which the check always included) or held back until
    a dev score (Table 3's schedule) return none. An encoder that cannot be asked counts as
    using it (its verdict is checked again rather than carried over)."""
    from hydra.utils import get_class

    try:
        if not getattr(get_class(str(cfg.encoder._target_)), "has_regulariser", False):
            return False
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(0)
            encoder = build_encoder(cfg.encoder, PROBE_INPUT)
            encoder.train()
            size = int(getattr(encoder, "context_size", 0) or 0)
            with torch.no_grad():
                out = encoder(torch.randn(2, 3, PROBE_INPUT), torch.ones(2, 3, dtype=torch.bool),
                              torch.randn(2, size) if size else None)
        return out.aux_loss is not None
    except Exception:  # noqa: BLE001 - unknown: check the row again
        return True


def carried_over(entry: dict, regulariser: bool) -> dict | None:
    """A version-4 verdict (a cached entry) as version 5 gives it, without checking again, or None
    where there is none. Version 5 adds the encoder's regulariser to the memorisation loss:
    where the row's training loss has none (``regulariser``: ``regulariser_in_use`` of the row,
    False for an encoder without one or at a weight of 0) the check is the same computation and
    the verdict carries over unchanged; a row whose regulariser weighs in is checked again."""
    verdict = entry.get("verdict")
    if entry.get("status") not in ("pass", "fail") or not verdict or regulariser:
        return None
    checks = [dict(c) for c in verdict["checks"]]
    for check in checks:
        if check["name"] == "memorisation":
            detail = dict(check.get("detail") or {})
            has_one = detail.pop("regulariser_left_out", False)
            detail["regulariser"] = "weighs nothing in this row" if has_one else "none"
            check["detail"] = detail
    return {**entry, "verdict": {**verdict, "checks": checks}}


def memorise_budget(lr: float) -> int:
    """Full-batch steps the memorisation check allows at rate ``lr`` (see the module docstring)."""
    scaled = math.ceil(MEMORISE_STEPS * MEMORISE_REFERENCE_LR / lr - 1e-9) if lr > 0 else MEMORISE_MAX_STEPS
    return min(MEMORISE_MAX_STEPS, max(MEMORISE_STEPS, scaled))


@dataclass
class Check:
    name: str
    value: float | None  # the measured number the verdict is read from
    passed: bool
    shown: str  # the value as the results table prints it
    detail: dict = field(default_factory=dict)  # other numbers measured on the way
    seconds: float = 0.0

    def failure(self) -> str:
        """One line naming the check and what it measured (for a failed check)."""
        return f"{self.name}: {self.shown}"


@dataclass
class Verdict:
    checks: list[Check]
    lr: float
    optimizer: str
    examples: int
    unit: str

    @property
    def passed(self) -> bool:
        return all(c.passed for c in self.checks)

    def failures(self) -> list[str]:
        return [c.failure() for c in self.checks if not c.passed]

    def to_dict(self) -> dict:
        return {**asdict(self), "passed": self.passed}

    @staticmethod
    def from_dict(data: dict) -> Verdict:
        checks = [Check(**c) for c in data["checks"]]
        return Verdict(checks, data["lr"], data["optimizer"], data["examples"], data["unit"])


# ---- the subset -------------------------------------------------------------------------------


def fixed_subset(cfg: DictConfig, data: TaskData, model: TaskModel, probe: Probe) -> tuple[list[dict], list[str]]:
    """``EXAMPLES`` training examples, the same for every encoder of a task: the head's epoch-1
    training records (a ranker's sampled triples), drawn with a generator seeded by ``cfg.seed``."""
    train = truncated_batch(data.splits, data.fields, cfg.trainer.truncate)["train"]
    records, fields = model.head.training_records(train, data.fields, cfg.seed, 0)
    order = torch.randperm(len(records), generator=torch.Generator().manual_seed(cfg.seed)).tolist()
    return probe.examples([records[i] for i in order[:EXAMPLES]]), fields


def _lengths(batch: dict) -> list[int] | None:
    """Each example's longest text field, in positions (the masks' real entries; an option set's
    longest option); None for a batch without text masks."""
    masks = [m for k, m in batch.items() if k.endswith("_mask") and torch.is_tensor(m) and m.dim() >= 2]
    per_field = [m.reshape(m.shape[0], -1, m.shape[-1]).sum(-1).amax(-1) for m in masks]
    return torch.stack(per_field).amax(0).tolist() if per_field else None


def length_chunks(examples: list[dict], fields: list[str], model: TaskModel) -> list[tuple[dict, float]] | None:
    """The subset as length-sorted chunks, each with its share of the examples, whose weighted
    losses sum to the full batch's mean loss; None where one batch is cheap enough or the head's
    loss is not a mean over examples. Chunk boundaries minimise the cost model above (a dynamic
    programme over the sorted lengths)."""
    if not model.head.loss_is_example_mean:
        return None
    lengths = _lengths(collate(examples, fields))
    if lengths is None:
        return None
    order = sorted(range(len(examples)), key=lambda i: lengths[i])
    sorted_lengths = [lengths[i] for i in order]
    n, longest = len(order), sorted_lengths[-1]
    if n * longest < CHUNK_MIN_PADDED:
        return None
    best, cut = [0.0] + [math.inf] * n, [0] * (n + 1)
    for j in range(1, n + 1):
        for i in range(j):
            cost = best[i] + sorted_lengths[j - 1] * (j - i + CHUNK_OVERHEAD)
            if cost < best[j]:
                best[j], cut[j] = cost, i
    if best[n] > 0.5 * longest * (n + CHUNK_OVERHEAD):
        return None
    bounds, j = [], n
    while j > 0:
        bounds.append((cut[j], j))
        j = cut[j]
    return [(collate([examples[k] for k in order[i:j]], fields), (j - i) / n) for i, j in reversed(bounds)]


# ---- helpers ------------------------------------------------------------------------------------


def _relative(changed: torch.Tensor, base: torch.Tensor) -> torch.Tensor:
    """Per example: |changed - base| / |base| over the example's output [B, ...]; an output over
    positions computed with more padding is compared on the positions both have."""
    if changed.shape != base.shape:
        changed = changed[..., : base.shape[-1]]
    diff = (changed.double() - base.double()).flatten(1).norm(dim=1)
    return diff / base.double().flatten(1).norm(dim=1).clamp(min=1e-12)


def _eval_output(model: TaskModel, batch: dict):
    model.eval()
    with torch.no_grad():
        return model(batch)[0]


def _input_fields(batch: dict, fields: list[str], probe: Probe) -> list[str]:
    return [f for f in fields if f not in probe.target_fields and f in batch]


class _Timer:
    def __enter__(self):
        self.start = time.perf_counter()
        return self

    def __exit__(self, *exc):
        self.seconds = time.perf_counter() - self.start


# ---- the checks -------------------------------------------------------------------------------


def initial_loss(model: TaskModel, batch: dict, probe: Probe) -> Check:
    out = _eval_output(model, batch)
    loss = float(out.loss)
    prior, formula = probe.prior_loss(batch, out)
    ok = math.isfinite(loss) and abs(loss - prior) <= max(PRIOR_TOLERANCE * prior, PRIOR_FLOOR)
    return Check("initial_loss", loss, ok, f"{loss:.3g} (prior {formula} = {prior:.3g})", {"prior": prior, "prior_formula": formula})


def _without_gradient(model: TaskModel, batch: dict, seed: int) -> tuple[list[str], dict[str, str], int]:
    """One train-mode backward of the training loss: the trainable tensors without a non-zero
    gradient, those of them excused for the encoder's unread context, and the tensor count."""
    model.train()
    torch.manual_seed(seed)
    contexts: list[torch.Tensor] = []
    encoder = model.encoder
    forward = encoder.forward

    def spy(x, mask, context=None):
        if context is not None and context.requires_grad:
            contexts.append(context)
        return forward(x, mask, context)

    encoder.forward = spy
    try:
        _, loss = model(batch)
    finally:
        del encoder.forward
    params = [(n, p) for n, p in model.named_parameters() if p.requires_grad]
    feeds_context, context_read = set(), True
    if contexts:
        grads = torch.autograd.grad(sum(c.sum() for c in contexts), [p for _, p in params], allow_unused=True, retain_graph=True)
        feeds_context = {n for (n, _), g in zip(params, grads) if g is not None}
        read = torch.autograd.grad(loss, contexts, allow_unused=True, retain_graph=True)
        context_read = any(g is not None and bool(g.abs().sum() > 0) for g in read)
    model.zero_grad(set_to_none=True)
    loss.backward()
    without = [n for n, p in params if p.grad is None or not bool((p.grad != 0).any())]
    model.zero_grad(set_to_none=True)
    excused = {n: "feeds only the encoder's context, which this encoder does not read"
               for n in without if not context_read and n in feeds_context}
    return without, excused, len(params)


def gradients(model: TaskModel, batch: dict, seed: int, fields: list[str] = (), vocab=None) -> Check:
    """One train-mode backward of the training loss; every trainable tensor must get a
    non-zero gradient somewhere (see the module docstring for what is excused). ``vocab``
    names the words a one-token field is lengthened with (needed only where a field has one token)."""
    without, excused, total = _without_gradient(model, batch, seed)
    if "embedding.weight" in without and getattr(model.head, "one_hot_size", 0):
        excused["embedding.weight"] = "the head reads one-hot inputs, not the embedding table"
    one_token = [f for f in fields if f in batch and int(batch[f"{f}_mask"].sum(dim=1).max()) == 1]
    if one_token and set(without) - set(excused):
        ids = special_ids(vocab)
        longer = _with_tokens_twice(batch, [f for f in fields if f in batch], max(ids) + 1, len(vocab))
        still = set(_without_gradient(model, longer, seed)[0])
        for name in set(without) - set(excused) - still:
            excused[name] = f"every {', '.join(one_token)} here has one token; it gets a gradient from two different tokens"
    failing = [n for n in without if n not in excused]
    if failing:
        listed = ", ".join(failing[:3]) + (f" and {len(failing) - 3} more" if len(failing) > 3 else "")
        shown = f"{len(failing)} of {total} tensors without gradient: {listed}"
    else:
        shown = f"all {total - len(excused)} tensors" + (f" ({len(excused)} excused)" if excused else "")
    return Check("gradients", float(len(failing)), not failing, shown, {"without_gradient": failing, "excused": excused, "tensors": total})


def _next_word(ids: torch.Tensor, first_word: int, vocab_size: int) -> torch.Tensor:
    """Another word id for each id: the next word of the vocabulary (cyclically); a special id gives the first word."""
    words = vocab_size - first_word
    return torch.where(ids >= first_word, first_word + (ids - first_word + 1) % words, torch.full_like(ids, first_word))


def _with_changed_tokens(batch: dict, fields: list[str], first_word: int, vocab_size: int) -> dict:
    """The batch with the last real token of every example's input fields replaced by another word:
    the token every readout reads most directly (a forward final state, a language model's next
    prediction, FHE's eval-mode gates, which open the last token when all are shut). A token in
    the middle can move a causal model's output by 1e-6 at initialisation, 25 positions on."""
    changed = dict(batch)
    for f in fields:
        ids, lengths = batch[f].clone(), batch[f"{f}_mask"].sum(dim=1)
        rows = torch.nonzero(lengths > 0).flatten()
        last = lengths[rows] - 1
        ids[rows, last] = _next_word(ids[rows, last], first_word, vocab_size)
        changed[f] = ids
    return changed


def _with_tokens_twice(batch: dict, fields: list[str], first_word: int, vocab_size: int) -> dict:
    """Every text field twice as long: its real tokens, then each one's next word (padding after
    them). Another word, not the same one again: an attention over two equal tokens scores them
    equally whatever its weights, so its weights would still get no gradient."""
    longer = dict(batch)
    for f in fields:
        rows = [real + _next_word(torch.tensor(real, dtype=torch.long), first_word, vocab_size).tolist()
                for real in (ids[: int(n)].tolist() for ids, n in zip(batch[f], batch[f"{f}_mask"].sum(dim=1)))]
        width = max(1, max(len(r) for r in rows))
        longer[f] = torch.tensor([r + [0] * (width - len(r)) for r in rows], dtype=batch[f].dtype)
        longer[f"{f}_mask"] = torch.arange(width).unsqueeze(0) < torch.tensor([len(r) for r in rows]).unsqueeze(1)
    return longer


def _with_more_padding(batch: dict, fields: list[str]) -> dict:
    """Every text field ``PADDING_EXTRA`` positions longer, all padding (id 0, mask false)."""
    padded = dict(batch)
    for f in fields:
        padded[f] = torch.nn.functional.pad(batch[f], (0, PADDING_EXTRA), value=0)
        padded[f"{f}_mask"] = torch.nn.functional.pad(batch[f"{f}_mask"], (0, PADDING_EXTRA), value=False)
    return padded


def input_dependence(model: TaskModel, batch: dict, probe: Probe, fields: list[str], vocab, seed: int) -> Check:
    ids = special_ids(vocab)
    first_word, vocab_size = max(ids) + 1, len(vocab)
    inputs = _input_fields(batch, fields, probe)
    base = _eval_output(model, batch)
    if vocab_size - first_word < 2:
        return Check("input", None, False, "the vocabulary has fewer than two words: no token to change to")
    changed = _eval_output(model, _with_changed_tokens(batch, inputs, first_word, vocab_size))
    token = _relative(probe.output(changed), probe.output(base))
    states = float(_relative(changed.encoder_output.states.unsqueeze(0), base.encoder_output.states.unsqueeze(0))[0])

    longer = _eval_output(model, _with_more_padding(batch, fields))
    embed = model.embed
    generator = torch.Generator().manual_seed(seed)

    def noisy_padding(token_ids):  # random vectors wherever the padding id is embedded
        x = embed(token_ids)
        noise = torch.randn(x.shape, generator=generator).to(x.dtype)
        return x + noise * (token_ids == ids.pad).unsqueeze(-1).to(x.dtype)

    model.embed = noisy_padding
    try:
        noisy = _eval_output(model, _with_more_padding(batch, fields))
    finally:
        del model.embed
    padding = float(torch.maximum(_relative(probe.output(longer), probe.output(base)),
                                  _relative(probe.output(noisy), probe.output(base))).max())
    median = float(token.median())
    changed_share = float((token > TOKEN_CHANGE_MIN).double().mean())
    ok = median >= TOKEN_CHANGE_MIN and padding <= PADDING_CHANGE_MAX
    shown = f"token {median:.2g}, padding {padding:.2g}"
    return Check("input", median, ok, shown, {"token_change_median": median, "token_changed_share": changed_share,
                                              "padding_change_max": padding, "encoder_states_change": states,
                                              "fields": inputs})


def _states_norm(model: TaskModel, batch: dict) -> float:
    with torch.no_grad():
        return float(model(batch)[0].encoder_output.states.double().norm())


def _samples_decisions(model: TaskModel, batch: dict, seed: int) -> bool:
    """Whether the encoder samples discrete decisions in training (FHE's gates: a policy)."""
    model.train()
    torch.manual_seed(seed)
    with torch.no_grad():
        return model(batch)[0].encoder_output.policy_log_prob is not None


def _train_mode(model: TaskModel, decisions_as_in_eval: bool) -> None:
    model.train()
    if decisions_as_in_eval:  # the encoder's own sampling off; its dropout layers still on
        model.encoder.eval()
        for module in model.encoder.modules():
            if isinstance(module, torch.nn.modules.dropout._DropoutNd):
                module.train()


def train_eval(model: TaskModel, batch: dict, seed: int) -> Check:
    """Train-mode over eval-mode norm of the encoder's states. An encoder that samples decisions in
    training (FHE samples its gates, thresholds them in eval: the method, not dropout) keeps its
    eval-mode decisions here, so the ratio measures dropout alone; the ratio with sampled
    decisions is in the detail."""
    model.eval()
    at_eval = _states_norm(model, batch)
    sampled = _samples_decisions(model, batch, seed)

    def train_norms(decisions_as_in_eval: bool) -> list[float]:
        draws = []
        for k in range(DRAWS):
            _train_mode(model, decisions_as_in_eval)
            torch.manual_seed(seed + k)
            draws.append(_states_norm(model, batch))
        return draws

    draws = train_norms(sampled)
    detail = {"train_norms": draws, "eval_norm": at_eval, "decisions_as_in_eval": sampled}
    if sampled and at_eval > 0:
        detail["ratio_with_sampled_decisions"] = statistics.fmean(train_norms(False)) / at_eval
    model.eval()
    at_train = statistics.fmean(draws)
    ratio = at_train / at_eval if at_eval > 0 else (1.0 if at_train == 0 else math.inf)
    ok = 1 / TRAIN_EVAL_FACTOR <= ratio <= TRAIN_EVAL_FACTOR
    detail["train_norm"] = at_train
    return Check("train_eval", ratio, ok, f"{ratio:.3g}x" + (" (decisions as in eval)" if sampled else ""), detail)


def _sampled_output(model: TaskModel, batch: dict, seed: int):
    """The eval-mode output with the encoder's decisions sampled as in training (its dropout
    off, seeded), leaving the model's buffers (FHE's reward baseline) and the random stream as
    they were: scoring must not change what the next training step does."""
    buffers = [b.clone() for b in model.buffers()]
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        model.eval()
        model.encoder.train()
        for module in model.encoder.modules():
            if isinstance(module, torch.nn.modules.dropout._DropoutNd):
                module.eval()
        with torch.no_grad():
            out = model(batch)[0]
    model.eval()
    with torch.no_grad():
        for buffer, saved in zip(model.buffers(), buffers):
            buffer.copy_(saved)
    return out


def memorisation(model: TaskModel, batch: dict, probe: Probe, cfg: DictConfig, say=lambda _: None,
                 sampled_decisions: bool = False, chunks: list[tuple[dict, float]] | None = None,
                 on_step=None, budget: int | None = None) -> Check:
    """Up to ``memorise_budget(lr)`` full-batch training steps on the loss the runs train on (the
    task loss, the encoder's regulariser, its policy loss), scored every ``MEMORISE_EVERY``: the
    verdict. Where the regulariser weighs in (the encoder has one and returns an ``aux_loss``),
    the same steps again from the same initial weights without it: the detail's
    ``without_regulariser``, and a row that memorises only then is flagged
    (``regulariser_prevents_fitting``, ``PREVENTS_FITTING`` in what it shows) and fails.
    ``chunks`` (``length_chunks``): the batch in weighted parts whose gradients are summed.
    ``on_step(step, loss, model)``: called after each backward of the verdict's steps, before
    clipping and the update (the gradients as computed); it must not change the model.
    ``budget``: another step budget (a replay of the check: scripts/replay_memorisation.py).
    ``sampled_decisions``: the encoder samples decisions in training (FHE's gates), so a score
    reads them sampled as in training (the check asks whether the model learns); the score
    under the eval-mode rule is kept beside it (the fourth number of each curve point)."""
    has_one = model.encoder.has_regulariser
    start = copy.deepcopy(model.state_dict()) if has_one else None  # weights and buffers (FHE's baseline)
    run = dict(probe=probe, cfg=cfg, say=say, sampled_decisions=sampled_decisions, chunks=chunks, budget=budget)
    check, weighed = _memorise(model, batch, regularisers=True, on_step=on_step, **run)
    if not weighed:
        check.detail["regulariser"] = "weighs nothing in this row" if has_one else "none"
        return check
    model.load_state_dict(start)
    say("  memorisation without the encoder's regulariser, from the same initial weights (kept beside)")
    without, _ = _memorise(model, batch, regularisers=False, label="without the regulariser: ", **run)
    prevents = not check.passed and without.passed
    shown = f"{check.shown}, without the regulariser {without.shown}" + (f": {PREVENTS_FITTING}" if prevents else "")
    detail = {**check.detail, "regulariser": "in the loss", "regulariser_prevents_fitting": prevents,
              "without_regulariser": {"accuracy": without.value, "passed": without.passed, "shown": without.shown,
                                      **{k: without.detail[k] for k in ("steps", "curve", "budget") if k in without.detail}}}
    return Check("memorisation", check.value, check.passed, shown, detail)


def _memorise(model: TaskModel, batch: dict, probe: Probe, cfg: DictConfig, say, sampled_decisions: bool,
              chunks: list[tuple[dict, float]] | None, budget: int | None, regularisers: bool,
              on_step=None, label: str = "") -> tuple[Check, bool]:
    """One memorisation run (``memorisation``), with or without the encoder's regulariser in the
    loss; also whether an ``aux_loss`` was returned (the regulariser weighed in)."""
    t = cfg.trainer
    budget = memorise_budget(float(t.lr)) if budget is None else budget
    trainable = [p for p in model.parameters() if p.requires_grad]
    optimizer = build_optimizer(cfg, trainable)
    parts = chunks or [(batch, 1.0)]

    def hits_of(output_of) -> tuple[int, int]:
        counts = [probe.hits(part, output_of(part)) for part, _ in parts]
        return sum(h for h, _ in counts), sum(n for _, n in counts)

    torch.manual_seed(cfg.seed)
    accuracy, steps, curve, weighed = 0.0, 0, [], False
    for step in range(1, budget + 1):
        model.train()
        optimizer.zero_grad(set_to_none=True)
        loss_value = 0.0
        for part, share in parts:
            out, loss = model(part, regularisers=regularisers)  # the training loop's call (its default: with them)
            weighed = weighed or out.encoder_output.aux_loss is not None
            if not torch.isfinite(loss):
                return Check("memorisation", accuracy, False, f"the loss is {float(loss)} at step {step} (lr {t.lr:g})",
                             {"steps": step, "curve": curve, "budget": budget}), weighed
            (loss * share).backward()
            loss_value += float(loss.detach()) * share
        if on_step is not None:
            on_step(step, loss_value, model)
        if t.grad_clip:
            torch.nn.utils.clip_grad_norm_(trainable, t.grad_clip)
        optimizer.step()
        if step % MEMORISE_EVERY == 0 or step == budget:
            hits, total = hits_of(lambda part: _eval_output(model, part))
            point = [step, hits / max(total, 1), loss_value]
            if sampled_decisions:  # [step, accuracy with sampled decisions, loss, accuracy under the eval rule]
                sampled_hits = hits_of(lambda part: _sampled_output(model, part, cfg.seed))[0]
                point = [step, sampled_hits / max(total, 1), point[2], point[1]]
            accuracy, steps = point[1], step
            curve.append(point)
            said = f" ({point[3]:.0%} with eval-mode decisions)" if sampled_decisions else ""
            say(f"  memorisation {label}step {step}: {accuracy:.0%} of {total} {probe.unit}{said} (loss {point[2]:.3g})")
            if accuracy >= MEMORISE_TARGET:
                break
    ok = accuracy >= MEMORISE_TARGET
    shown = f"{accuracy:.0%} at step {steps}" if ok else f"{accuracy:.0%} after {steps} steps"
    if sampled_decisions:
        shown += f" (decisions sampled; {curve[-1][3]:.0%} with eval-mode ones)" if curve else " (decisions sampled)"
    return Check("memorisation", accuracy, ok, shown, {"steps": steps, "curve": curve, "budget": budget,
                                                       "chunks": len(parts),
                                                       "decisions_sampled": sampled_decisions}), weighed


def check_model(cfg: DictConfig, data: TaskData, say=lambda _: None, on_step=None, budget: int | None = None) -> Verdict:
    """The five checks of the model ``cfg`` builds on ``data`` (see the module docstring), at one
    thread whatever the caller's setting (restored after): a verdict must not depend on where it
    was made, and the sums of several threads are ordered differently. ``on_step`` and ``budget``
    go to ``memorisation`` (a step-by-step replay of the check)."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        return _check_model(cfg, data, say, on_step, budget)
    finally:
        torch.set_num_threads(threads)


def _check_model(cfg: DictConfig, data: TaskData, say, on_step=None, budget: int | None = None) -> Verdict:
    torch.manual_seed(cfg.seed)  # as fit: the model's initial weights are the run's
    model = build_model(cfg, data)
    model.encoder.use_kernels(cfg.trainer.kernel_impl)  # the kernels a run would use
    probe = probe_for(model.head)
    examples, fields = fixed_subset(cfg, data, model, probe)
    batch = collate(examples, fields)
    checks: list[Check] = []

    def sampled() -> bool:  # what the train/eval check found
        return bool(checks[-1].detail.get("decisions_as_in_eval", False))

    steps = [("initial_loss", lambda: initial_loss(model, batch, probe)),
             ("gradients", lambda: gradients(model, batch, cfg.seed, fields, data.vocab)),
             ("input", lambda: input_dependence(model, batch, probe, fields, data.vocab, cfg.seed)),
             ("train_eval", lambda: train_eval(model, batch, cfg.seed)),
             ("memorisation", lambda: memorisation(model, batch, probe, cfg, say, sampled_decisions=sampled(),
                                                   chunks=length_chunks(examples, fields, model),
                                                   on_step=on_step, budget=budget))]
    for name, run in steps:
        with _Timer() as timer:
            check = run()
        check.seconds = round(timer.seconds, 2)
        say(f"  {name}: {check.shown} ({'pass' if check.passed else 'FAIL'}, {timer.seconds:.1f}s)")
        checks.append(check)
    return Verdict(checks, float(cfg.trainer.lr), str(cfg.trainer.optimizer), len(examples), probe.unit)
