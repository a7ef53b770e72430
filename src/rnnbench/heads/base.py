"""The head interface and masked pooling shared by heads.

A head owns the task-specific layers around the encoder. It never knows which
encoder it holds: it calls ``encoder(x, mask, context)`` and reads the
EncoderOutput. Construction is in two steps so heads can add input layers:
``encoder_input_size(embedding_dim, **options)`` tells the builder what the
encoder reads, then ``__init__(embedding_dim, encoder_output_size, num_classes, **options)``.
A head whose ``__init__`` takes a ``vocab`` argument also receives the task's
Vocab (language models and generators predict words).

Besides ``forward`` (loss and gold log-likelihood of a batch), a head tells the
training loop three task-specific things, each with a classification default:
- ``training_records(records, fields, seed, epoch)``: the examples of one training
  epoch (a ranking head turns (question, candidate) pairs into sampled
  (question, positive, negative) triples);
- ``decode(out, batch)``: one JSON-able prediction per example (a class id, a
  score, a span, a string, ...), which the task's metrics read beside the raw
  records (``rnnbench.metrics``);
- ``prediction_entry(prediction, record, label_names)``: the prediction and gold
  as written to the run's predictions file.
``requires_causal_encoder`` makes the builder refuse a bidirectional encoder
(language models).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, NamedTuple

import torch
from torch import nn

from rnnbench.data.vocab import PAD, UNK, Vocab
from rnnbench.encoders.base import Encoder, EncoderOutput
from rnnbench.nn.util import POOLERS, masked_max, masked_mean, masked_min  # noqa: F401 (re-exported for the heads)

Embed = Callable[[torch.Tensor], torch.Tensor]


@dataclass
class HeadOutput:
    loss: torch.Tensor  # mean task loss over the batch
    log_likelihood: torch.Tensor  # [B] log-probability of the gold answer (the FHE reward)
    logits: torch.Tensor | None  # [B, C] class scores (classification heads; MC dropout reads them)
    encoder_output: EncoderOutput
    extra: dict = field(default_factory=dict)  # anything a head's decode needs (scores, span logits, ...)


class Head(nn.Module):
    requires_causal_encoder = False
    # Whether rnnbench.load(...).predict can score raw inputs: False for heads whose forward
    # needs each example's gold answer (a span, the answer's words, the next characters).
    predicts_from_text = True
    # Whether the loss is a mean of one term per example (classification_output), so that a batch's
    # gradient is the example-weighted sum of its parts' (the sanity check's length chunks).
    loss_is_example_mean = False
    version: int = 1  # bump when a change alters results (part of the run identity)

    @staticmethod
    def encoder_input_size(embedding_dim: int, **options) -> int:
        return embedding_dim

    def forward(self, batch: dict, embed: Embed, encoder: Encoder) -> HeadOutput:  # pragma: no cover
        raise NotImplementedError

    def training_records(self, records: list[dict], fields: list[str], seed: int, epoch: int) -> tuple[list[dict], list[str]]:
        """The (numericalised) examples and text fields of one training epoch; a function of (seed, epoch)."""
        return records, fields

    def predict(self, logits: torch.Tensor) -> torch.Tensor:
        return logits.argmax(dim=-1)

    def decode(self, out: HeadOutput, batch: dict) -> list:
        """One prediction per example of the batch, in batch order."""
        return self.predict(out.logits).tolist()

    def prediction_entry(self, prediction, record: dict, label_names: list[str]) -> dict:
        return {"prediction": label_names[prediction], "gold": label_names[record["label"]]}


class SpecialIds(NamedTuple):
    pad: int  # padding: never a word
    unk: int  # a word outside the vocabulary


def special_ids(vocab: Vocab | None = None) -> SpecialIds:
    """The padding and unknown-word ids of ``vocab``; without one (a head built on raw ids, as
    in tests), those every ``Vocab`` has."""
    vocab = Vocab([], lowercase=False) if vocab is None else vocab
    return SpecialIds(vocab.stoi[PAD], vocab.stoi[UNK])


def classification_output(logits: torch.Tensor, labels: torch.Tensor, enc: EncoderOutput) -> HeadOutput:
    log_probs = torch.log_softmax(logits, dim=-1)
    log_likelihood = log_probs.gather(1, labels.unsqueeze(1)).squeeze(1)
    return HeadOutput(loss=-log_likelihood.mean(), log_likelihood=log_likelihood, logits=logits, encoder_output=enc)
