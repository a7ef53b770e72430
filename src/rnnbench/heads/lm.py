"""Language-model head: a softmax over the vocabulary at every position of a causal encoder.

Reads the records of ``rnnbench.data.char_lm`` (fields ``chars``, ``targets``,
``scored_from``): position i predicts ``targets[i]`` from the encoder state
after ``chars[:i+1]``, and only positions i >= ``scored_from`` are scored (the
earlier ones are the unscored warm-up context of truncated BPTT). The encoder
must be causal (``requires_causal_encoder``: the model builder refuses a
bidirectional one, which would read the very character it predicts).

    loss             mean negative log-likelihood (nats) over the scored characters of the batch
                     (the per-character loss of the MZU paper; a batch without scored characters
                     gives 0, not NaN)
    log_likelihood   [B] log-probability of each record's scored characters (their sum): the
                     gold answer's log-likelihood, which FHE uses as its reward
    decode           per record {"bits": sum of -log2 p over scored characters, "chars": their number};
                     metrics.language_model.bpc sums both over the split

Options:
    dropout     0.0 (ours): dropout on the encoder states before the output layer. The MZU paper's
                dropout (0.5 PTB, 0.3 text8) is on the MZU candidate activation: encoder.dropout.
    projection  null (the paper describes no output layer but the softmax): an int adds a
                Linear(encoder output -> projection) + tanh before the softmax layer (ours).
The padding id is never a target, so its logit is masked out; the unknown id stays
(a character unseen in training is scored as the unknown symbol).
"""
from __future__ import annotations

import math

import torch
from torch import nn

from rnnbench.heads.base import Head, HeadOutput, special_ids

LN2 = math.log(2.0)


class LanguageModelHead(Head):
    requires_causal_encoder = True
    predicts_from_text = False  # scores each next character: needs the text's targets

    def __init__(
        self,
        embedding_dim: int,
        encoder_output_size: int,
        num_classes: int,
        vocab,
        dropout: float = 0.0,
        projection: int | None = None,
    ):
        super().__init__()
        self.vocab_size = len(vocab)
        self.dropout = nn.Dropout(dropout)
        if projection:
            self.project = nn.Sequential(nn.Linear(encoder_output_size, projection), nn.Tanh())
            size = projection
        else:
            self.project = nn.Identity()
            size = encoder_output_size
        self.out = nn.Linear(size, self.vocab_size)
        is_padding = torch.zeros(self.vocab_size, dtype=torch.bool)
        is_padding[special_ids(vocab).pad] = True
        self.register_buffer("is_padding", is_padding, persistent=False)

    def forward(self, batch, embed, encoder) -> HeadOutput:
        chars, mask = batch["chars"], batch["chars_mask"]
        enc = encoder(embed(chars), mask, None)
        logits = self.out(self.project(self.dropout(enc.states)))  # [B, T, V]
        logits = logits.masked_fill(self.is_padding, float("-inf"))  # padding is never a target
        log_probs = torch.log_softmax(logits, dim=-1)
        targets = batch["targets"]
        token_ll = log_probs.gather(-1, targets.unsqueeze(-1)).squeeze(-1)  # [B, T]
        scored = self.scored_mask(batch)
        token_ll = token_ll.masked_fill(~scored, 0.0)
        record_ll = token_ll.sum(dim=1)
        count = scored.sum()
        loss = -record_ll.sum() / count.clamp(min=1)
        return HeadOutput(loss=loss, log_likelihood=record_ll, logits=None, encoder_output=enc,
                          extra={"token_log_likelihood": token_ll, "scored": scored})

    @staticmethod
    def scored_mask(batch: dict) -> torch.Tensor:
        """[B, T] True at real positions at or after each record's ``scored_from``."""
        mask = batch["chars_mask"] & batch["targets_mask"]
        positions = torch.arange(mask.shape[1], device=mask.device).unsqueeze(0)
        return mask & (positions >= batch["scored_from"].unsqueeze(1))

    def decode(self, out: HeadOutput, batch: dict) -> list:
        bits = (-out.extra["token_log_likelihood"].double().sum(dim=1) / LN2).tolist()
        chars = out.extra["scored"].sum(dim=1).tolist()
        return [{"bits": b, "chars": n} for b, n in zip(bits, chars)]

    def prediction_entry(self, prediction, record: dict, label_names: list[str]) -> dict:
        return {"prediction": prediction, "gold": "".join(record["targets"][record["scored_from"]:])}
