"""Answer-ranking head of the RCRN paper (section 4.2), after AP-BiLSTM (dos Santos et al. 2016).

The question and the candidate are encoded by the same encoder (shared
weights), each pooled to one vector, and scored by cosine similarity.

Pooling (``attentive_pooling``):
- ``false`` (the paper's rows without "AP-"; dos Santos et al.'s QA-BiLSTM):
  max pooling over time of each sequence's states.
- ``true`` (AP-*): attentive pooling. With Q [Tq, c] and A [Ta, c] the states,
  G = tanh(Q U A^T) is a bilinear soft alignment (U [c, c] learned); its
  row-wise and column-wise maxima give one importance per question and per
  candidate position, a softmax turns each into weights, and the pooled vectors
  are the weighted sums Q^T softmax(max_j G_ij), A^T softmax(max_i G_ij). The
  question vector therefore depends on the candidate it is compared with.
Pooling and attention read every real token (the input mask), also for FHE,
whose open-gate mask may be empty for a sampled gate sequence.

Training (``training_records``): every epoch, each correct candidate gives
``negatives`` (6, the paper's n) flat (question, positive, negative) examples;
the loss is the pairwise hinge max(0, margin - s(q, a+) + s(q, a-)), margin
0.1 (paper), averaged over the batch. Negatives (ours: the paper only gives n)
are drawn without replacement from the same question's incorrect candidates;
when it has fewer than n, the rest come from the pool of all training
candidates of other questions (``fill_from_pool``; false gives fewer triples
instead). A sampled negative is never a candidate of the same question marked
correct, nor a sentence whose tokens equal one of them. Questions without a
correct candidate give no example (their sentences can still be pool
negatives). The draw is a function of (seed, epoch) only.

Scoring (dev/test batches, fields ``question`` and ``answer``): ``decode``
gives each record's cosine score; the ranking metrics group them by ``qid``.
Such batches hold no pairs, so their loss is reported as 0.

``log_likelihood`` (the reward FHE's gates learn from, ours): minus each
triple's hinge loss, highest (0) when the positive wins by the margin.

``question_dim`` > 0 (ours, for conditional encoders): the mean of the
question's word vectors, projected to that size, is passed as the encoder's
``context`` for both sequences (FHE's question-conditioned gates); 0 passes none.

``dropout`` (0.0; ours, neither paper gives one for this head): inverted dropout on the
encoder states that pooling reads (the input of the scoring layers, as the LSTM baseline
paper drops the input of every layer), training only. Not listed in the ranking tasks'
configs (a registered default of 0.0 for ``task.head.dropout`` would move the classifier
runs that list it): ``+task.head.dropout=0.2``.
"""
from __future__ import annotations

import random

import torch
import torch.nn.functional as F
from torch import nn

from rnnbench.data.vocab import char_field
from rnnbench.encoders.base import combine_outputs
from rnnbench.errors import ConfigError
from rnnbench.heads.base import Head, HeadOutput, masked_max, masked_mean
from rnnbench.nn.util import masked_softmax

SCORE_FIELDS = ("question", "answer")
TRIPLE_FIELDS = ["question", "positive", "negative"]


def sample_triples(records: list[dict], negatives: int, seed: int, epoch: int, fill_from_pool: bool = True) -> list[dict]:
    """(question, positive, negative) examples of one epoch from (question, candidate) records."""
    rng = random.Random(seed * 1_000_003 + epoch)
    by_question: dict[str, list[int]] = {}
    for i, r in enumerate(records):
        by_question.setdefault(str(r["qid"]), []).append(i)
    triples = []
    for qid, members in by_question.items():
        positives = [i for i in members if records[i]["label"] == 1]
        if not positives:
            continue
        correct_texts = {tuple(records[i]["answer"]) for i in positives}
        own = [i for i in members if records[i]["label"] != 1 and tuple(records[i]["answer"]) not in correct_texts]
        for p in positives:
            chosen = rng.sample(own, min(negatives, len(own)))
            if fill_from_pool and len(chosen) < negatives:
                chosen += _pool_draw(records, rng, negatives - len(chosen), qid, correct_texts)
            for n in chosen:
                triple = {
                    "id": f"{records[p]['id']}|{records[n]['id']}",
                    "qid": qid,
                    "question": records[p]["question"],
                    "positive": records[p]["answer"],
                    "negative": records[n]["answer"],
                }
                for name, record, source in (("question", records[p], "question"), ("positive", records[p], "answer"),
                                             ("negative", records[n], "answer")):
                    if char_field(source) in record:  # the words' characters (embedding.char) go with them
                        triple[char_field(name)] = record[char_field(source)]
                triples.append(triple)
    return triples


def _pool_draw(records: list[dict], rng: random.Random, k: int, qid: str, correct_texts: set) -> list[int]:
    """Up to k distinct candidates of other questions whose text is not a correct answer of ``qid``."""
    chosen: list[int] = []
    for _ in range(50 * k):  # bounded: a tiny training set may hold fewer than k admissible candidates
        if len(chosen) == k:
            break
        j = rng.randrange(len(records))
        r = records[j]
        if str(r["qid"]) != qid and j not in chosen and tuple(r["answer"]) not in correct_texts:
            chosen.append(j)
    return chosen


class RankerHead(Head):
    def __init__(
        self,
        embedding_dim: int,
        encoder_output_size: int,
        num_classes: int,
        attentive_pooling: bool = False,
        margin: float = 0.1,
        negatives: int = 6,
        fill_from_pool: bool = True,
        question_dim: int = 0,
        dropout: float = 0.0,
    ):
        super().__init__()
        self.dropout = nn.Dropout(dropout)
        if negatives < 1:
            raise ValueError(f"task.head.negatives must be at least 1, got {negatives}")
        self.attentive_pooling = attentive_pooling
        self.margin = margin
        self.negatives = negatives
        self.fill_from_pool = fill_from_pool
        self.U = None
        if attentive_pooling:
            self.U = nn.Parameter(torch.empty(encoder_output_size, encoder_output_size))
            nn.init.xavier_uniform_(self.U)  # ours: the paper does not give U's initialisation
        self.context = nn.Linear(embedding_dim, question_dim) if question_dim > 0 else None

    def training_records(self, records, fields, seed, epoch):
        missing = [f for f in SCORE_FIELDS if f not in fields]
        if missing:
            raise ConfigError(f"the ranking head needs text fields {list(SCORE_FIELDS)}; the task's records have {fields}")
        return sample_triples(records, self.negatives, seed, epoch, self.fill_from_pool), list(TRIPLE_FIELDS)

    def pool(self, q: torch.Tensor, q_mask: torch.Tensor, a: torch.Tensor, a_mask: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Question and candidate vectors [B, c] from their states [B, T, c]."""
        if self.U is None:
            return masked_max(q, q_mask), masked_max(a, a_mask)
        g = torch.tanh(torch.einsum("bic,cd,bjd->bij", q, self.U, a))  # [B, Tq, Ta]
        pair = q_mask.unsqueeze(2) & a_mask.unsqueeze(1)
        g = g.masked_fill(~pair, float("-inf"))
        # A padded row/column is all -inf and gets weight 0 (a wholly empty sequence: no weight at all).
        w_q = masked_softmax(g.amax(dim=2), pair.any(dim=2))  # [B, Tq]
        w_a = masked_softmax(g.amax(dim=1), pair.any(dim=1))  # [B, Ta]
        return torch.bmm(w_q.unsqueeze(1), q).squeeze(1), torch.bmm(w_a.unsqueeze(1), a).squeeze(1)

    def score(self, q: torch.Tensor, q_mask: torch.Tensor, a: torch.Tensor, a_mask: torch.Tensor) -> torch.Tensor:
        r_q, r_a = self.pool(q, q_mask, a, a_mask)
        return F.cosine_similarity(r_q, r_a, dim=-1, eps=1e-8)

    def forward(self, batch, embed, encoder) -> HeadOutput:
        q_mask = batch["question_mask"]
        q_x = embed(batch["question"])
        context = self.context(masked_mean(q_x, q_mask)) if self.context is not None else None
        # One encoder call per sequence role, each over the whole batch, so every call is aligned
        # with the examples (combine_outputs sums FHE's gate log-probabilities per example).
        q = encoder(q_x, q_mask, context)

        def encode(name):
            mask = batch[f"{name}_mask"]
            return encoder(embed(batch[name]), mask, context), mask

        q_states = self.dropout(q.states)  # one mask for the question, read against both candidates
        if "negative" in batch:
            (pos, pos_mask), (neg, neg_mask) = encode("positive"), encode("negative")
            s_pos = self.score(q_states, q_mask, self.dropout(pos.states), pos_mask)
            s_neg = self.score(q_states, q_mask, self.dropout(neg.states), neg_mask)
            hinge = F.relu(self.margin - s_pos + s_neg)
            return HeadOutput(loss=hinge.mean(), log_likelihood=-hinge, logits=None,
                              encoder_output=combine_outputs([q, pos, neg], primary=-1), extra={"score": s_pos, "negative_score": s_neg})
        ans, ans_mask = encode("answer")
        s = self.score(q_states, q_mask, self.dropout(ans.states), ans_mask)
        zero = s.new_zeros(s.shape)
        return HeadOutput(loss=zero.sum(), log_likelihood=zero, logits=None, encoder_output=combine_outputs([q, ans], primary=-1), extra={"score": s})

    def decode(self, out: HeadOutput, batch: dict) -> list:
        return [float(s) for s in out.extra["score"].tolist()]

    def prediction_entry(self, prediction, record: dict, label_names: list[str]) -> dict:
        return {"prediction": float(prediction), "gold": int(record["label"]), "qid": record["qid"]}
