"""What the sanity checks (``rnnbench.training.sanity``) need to know of each kind of head.

Every head returns a loss and a per-example gold log-likelihood, but "the uniform prior's
loss", "memorised" and "the output" mean different things for a classifier, a language
model, a span extractor, a ranker and a generator. A ``Probe`` says, for one head kind:

- ``examples``: the fixed training subset the checks read, as records (a language model's
  example is one scored character after its context, so 64 examples are 64 predictions);
- ``prior_loss``: the loss a model predicting uniformly would have on the batch, and how
  it was computed (``ln 5`` for five classes);
- ``hits``: how many of the batch's prediction units (examples, characters, triples,
  answers) an eval-mode output gets right, and of how many;
- ``output``: the per-example output [B, ...] the input check compares (a distribution over
  positions may be longer when padding is added: the check compares the positions both have);
- ``target_fields``: text fields that are targets, not inputs (changing them changes the
  loss, not what the model reads).

``probe_for(head)`` picks the probe by the head's class; any head that returns class
``logits`` is probed as a classifier.
"""
from __future__ import annotations

import math

import torch

from rnnbench.heads.base import Head, HeadOutput
from rnnbench.heads.lm import LanguageModelHead
from rnnbench.heads.pointer_generator import Memory, PointerGeneratorHead
from rnnbench.heads.ranker import RankerHead
from rnnbench.heads.span import SpanHead


class Probe:
    unit = "examples"
    target_fields: tuple[str, ...] = ()

    def __init__(self, head: Head):
        self.head = head

    def examples(self, records: list[dict]) -> list[dict]:
        return records

    def prior_loss(self, batch: dict, out: HeadOutput) -> tuple[float, str]:  # pragma: no cover - abstract
        raise NotImplementedError

    def hits(self, batch: dict, out: HeadOutput) -> tuple[int, int]:  # pragma: no cover - abstract
        raise NotImplementedError

    def output(self, out: HeadOutput) -> torch.Tensor:
        return out.logits if out.logits is not None else out.log_likelihood.unsqueeze(1)


class ClassifierProbe(Probe):
    """Heads that return class logits [B, C] (sentence, pair, aspect, picking, multiple choice)."""

    def prior_loss(self, batch, out):
        classes = torch.isfinite(out.logits).sum(dim=-1).double()  # masked options do not count
        value = float(classes.log().mean())
        counts = sorted({int(c) for c in classes.tolist()})
        return value, f"ln {counts[0]}" if len(counts) == 1 else f"mean ln C, C in {counts}"

    def hits(self, batch, out):
        right = out.logits.argmax(dim=-1) == batch["label"]
        return int(right.sum()), int(right.numel())


class LanguageModelProbe(Probe):
    """``heads.lm``: an example is one scored character after the record's unscored context;
    it counts as memorised when the gold character gets probability above 1/2 (so it is the
    argmax). A whole 150-character record would make 64 examples 9,600 predictions."""

    unit = "characters"
    target_fields = ("targets",)

    def examples(self, records):
        out = []
        for r in records:
            end = max(int(r["scored_from"]), 0) + 1  # the context, then its first scored character
            out.append({**r, "chars": r["chars"][:end], "targets": r["targets"][:end], "scored_from": end - 1})
        return out

    def prior_loss(self, batch, out):
        symbols = self.head.vocab_size - 1  # padding is never predicted
        return math.log(symbols), f"ln {symbols}"

    def hits(self, batch, out):
        scored = out.extra["scored"]
        right = (out.extra["token_log_likelihood"] > math.log(0.5)) & scored
        return int(right.sum()), int(scored.sum())


class SpanProbe(Probe):
    """``heads.span``: uniform start and end over the passage's real tokens; an example is
    memorised when the decoded span is the gold one. Its output is the start and end
    distributions over the passage [B, 2, T] (the gold span's probability alone barely moves
    when a token far from it changes)."""

    def output(self, out):
        return torch.stack([out.extra["start_log_probs"].exp(), out.extra["end_log_probs"].exp()], dim=1)

    def prior_loss(self, batch, out):
        lengths = batch["passage_mask"].sum(dim=1).double()
        valid = (batch["span_start"] >= 0) & (batch["span_end"] >= batch["span_start"])
        value = float((2 * lengths[valid].log()).mean()) if bool(valid.any()) else 0.0
        return value, "mean 2 ln(passage length)"

    def hits(self, batch, out):
        spans = self.head.decode(out, batch)
        gold = list(zip(batch["span_start"].tolist(), batch["span_end"].tolist()))
        right = sum(1 for (s, e), p in zip(gold, spans) if s >= 0 and (p["start"], p["end"]) == (s, e))
        return right, sum(1 for s, _ in gold if s >= 0)


class RankerProbe(Probe):
    """``heads.ranker`` on training triples: equal scores give the hinge its margin; a
    triple is memorised when the positive outscores the negative."""

    unit = "triples"

    def prior_loss(self, batch, out):
        return float(self.head.margin), "the margin (equal scores)"

    def hits(self, batch, out):
        right = out.extra["score"] > out.extra["negative_score"]
        return int(right.sum()), int(right.numel())

    def output(self, out):
        return torch.stack([out.extra["score"], out.extra["negative_score"]], dim=1)


class PointerGeneratorProbe(Probe):
    """``heads.pointer_generator``: the prior is the head's own pointer softmax with a uniform
    shortlist, an even switch and uniform attention over the passage; an answer is memorised
    when greedy decoding gives exactly its words. Without the pointer (the ablation) a word
    outside the shortlist cannot be said at all: an answer is memorised when, fed the gold
    words, the shortlist's most likely word is at every step the answer's word, or <unk> for
    one outside the shortlist (the training target)."""

    unit = "answers"

    def __init__(self, head):
        super().__init__(head)
        self.target_fields = (head.fields[2],)

    def _targets(self, batch):
        """The training targets and scored steps, as ``forward`` builds them."""
        head = self.head
        answer, lengths = batch[head.fields[2]], batch[f"{head.fields[2]}_mask"].sum(dim=1)
        if head.max_target_length is not None:
            answer, lengths = answer[:, : head.max_target_length], lengths.clamp(max=head.max_target_length)
        steps = torch.arange(answer.shape[1] + 1)
        targets = torch.cat([answer, answer.new_full((answer.shape[0], 1), head.eos_id)], dim=1)
        targets = torch.where(steps < lengths.unsqueeze(1), targets, head.eos_id)
        return targets, steps.unsqueeze(0) <= lengths.unsqueeze(1), lengths

    def prior_loss(self, batch, out):
        head = self.head
        ids, mask = batch[head.fields[0]], batch[f"{head.fields[0]}_mask"]
        targets, steps, _ = self._targets(batch)
        B, L = targets.shape
        log_short = torch.full((B, L, head.n_short), -math.log(head.n_short))
        attention = (mask / mask.sum(dim=1, keepdim=True).clamp(min=1)).unsqueeze(1).expand(B, L, -1).float()
        memory = Memory(ids, mask, None, None, mask, None)
        step_lp = head.target_log_prob(log_short, torch.zeros(B, L), attention, targets, memory)
        value = float(-(step_lp * steps).sum() / steps.sum().clamp(min=1))
        return value, "uniform shortlist, even switch, uniform copy"

    def hits(self, batch, out):
        if "teacher_forced_right" in out.extra:
            right = out.extra["teacher_forced_right"]
            return int(right.sum()), int(right.numel())
        answers = out.extra["answers"]
        targets, _, lengths = self._targets(batch)
        right = sum(1 for b, answer in enumerate(answers) if answer == targets[b, : int(lengths[b])].tolist())
        return right, len(answers)


def probe_for(head: Head) -> Probe:
    """The probe of ``head``'s kind; a head of another kind is probed as a classifier
    (it must return class logits)."""
    for cls, probe in ((LanguageModelHead, LanguageModelProbe), (SpanHead, SpanProbe), (RankerHead, RankerProbe),
                       (PointerGeneratorHead, PointerGeneratorProbe)):
        if isinstance(head, cls):
            return probe(head)
    return ClassifierProbe(head)
