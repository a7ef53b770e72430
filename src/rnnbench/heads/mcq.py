"""Multiple-choice reading comprehension head of the DCU paper (Tay et al., EMNLP 2018, section 3.1).

A question has a passage P, a question Q and N answer options A_1..A_N (RACE: 4).
Records carry the text fields ``passage``, ``question``, ``option_0`` .. ``option_{N-1}``
and ``label`` (the correct option); N is the task's number of classes.

Layers, in the paper's order:
1. Input encoding (shared by P, Q and every A_i): word embedding -> projection layer
   (linear, ``projection_dim``; null keeps the embedding width) -> beside it the
   exact-match (EM) binary features -> a single highway layer. The paper's three-way EM
   (EM(P,Q), EM(Q,A), EM(P,A)) is given to every sequence as two features, one per other
   sequence: a passage word is in Q / in any option; a question word is in P / in any
   option; an option word is in P / in Q. So ``encoder_input_size`` is
   ``projection_dim + 2`` (``exact_match: false``: + 0).
2. Compositional encoder: THE encoder (any rnnbench encoder, shared weights) reads P, Q
   and each A_i. ``encode_query: false`` encodes only P, as the paper says of its DCU
   models ("DCU encoders are only applied on the passage and not the query", section
   4.4; the DCU Table 1 experiments set it for every row): Q and the options then keep
   their input encoding (projection, EM features, highway), which is what the paper's
   no-encoder row gives every sequence. The paper's encoders keep their input's width
   ("the output of this layer has the same dimensions as its inputs"); here the encoder
   may be wider or narrower than the input encoding (the EM features, a BiLSTM's two
   directions), so a linear map brings Q and the options to the encoder's width (ours).
   Reading "the query" as the question and the options alike is ours. Conditional encoders (FHE) get the question vector as
   ``context``: a linear map of Q's mean input encoding to ``question_dim`` (the
   encoder config reads ``task.head.question_dim``; 0 passes no context).
3. Bi-attention B(X, Y) with mean-pooling aggregation: affinity
   s_ij = F(x_i)^T M F(y_j), F a ReLU layer (``attention_dim``), M bilinear; each side's
   attention is the softmax of the affinity rows (columns) averaged over the other side,
   and B returns each sequence re-weighted by its attention. B(P, Q) gives P^Q; then
   B(P^Q, A_i) gives P^{A_i} and A_i^P for each option; a temporal sum of P^{A_i} and of
   A_i^P, concatenated, is the option's vector a_i.
4. Answer selection: a_i beside word-overlap features (Severyn & Moschitti 2015: four
   per overlap operation) -> W_2 ReLU(W_1 [a_i; overlap_i] + b_1) + b_2, a scalar per
   option; softmax over the options; multi-class cross-entropy.

What the paper leaves open and we chose (ours):
- EM and overlap compare vocabulary ids, so they follow the vocabulary's lower-casing
  (GloVe 6B: case-insensitive; 840B: exact case). Padding and the unknown token never
  match, so dev/test words outside the training vocabulary cannot match either.
- The passage's and question's "in an option" feature looks at all options at once, so
  P and Q are encoded once per question, not once per option (4x cheaper), and the
  scores are equivariant under permuting the options.
- B re-weights a sequence by (attention x its length), not by the attention alone: the
  same direction as the paper's, but P^Q keeps P's scale (the raw weights, ~1/300 on
  RACE, would shrink P^Q before it enters B(P^Q, A_i)). The temporal sums use the
  attention itself (an attention-weighted sum). Q^P is computed but, as in the paper's
  text, only P^{A_i} and A_i^P reach the scorer; Q acts through P^Q.
- Overlap features, for (P, A_i) and (Q, A_i), so 8 per option: the fraction of A_i's
  tokens found in the other sequence and its IDF-weighted version, over all tokens and
  over non-stopwords (our short English stopword list). IDF = log((1 + N) / (1 + df)) + 1
  over the N distinct training passages, computed once from the training records
  (``training_records``) and kept in the state dict; before that every IDF is 1.
- Each sequence is one encoder call (P, Q, then each option), so an encoder sees batches
  aligned with the examples. The calls are combined by ``encoders.base.combine_outputs``
  (FHE's gate log-probabilities summed per example; the encoder losses, MZU disagreement
  and FHE sparsity, and the stats averaged over the calls; before version 2 they were
  averaged weighted by each call's real tokens).
- Model selection: the paper selects on each level's dev set; a run here selects one
  model on ``task.select_metric`` (overall dev accuracy).
Options: projection_dim (250: the paper's 250d models), exact_match, highway,
attention_dim, hidden (scorer width), overlap, dropout (on the input encoding, the
encoder outputs and the scorer input), encode_query, question_dim.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from rnnbench.encoders.base import EncoderOutput, combine_outputs, zero_padding
from rnnbench.heads.base import Head, HeadOutput, classification_output, masked_mean, special_ids
from rnnbench.nn.highway import Highway
from rnnbench.nn.util import masked_softmax

NUM_EM = 2  # exact-match features per token: one per other kind of sequence
NUM_OVERLAP = 8  # 4 per overlap operation, operations (P, A_i) and (Q, A_i)

# Ours: common English function words, for the non-stopword overlap features.
STOPWORDS = frozenset(
    """a about above after again against all am an and any are as at be because been before being below between
    both but by can could did do does doing down during each few for from further had has have having he her here
    hers herself him himself his how i if in into is it its itself just me more most my myself no nor not now of off
    on once only or other our ours ourselves out over own same she should so some such than that the their theirs
    them themselves then there these they this those through to too under until up very was we were what when where
    which while who whom why will with would you your yours yourself yourselves 's 're 've 'd 'll 'm n't . , ; : ! ?
    ' '' `` " - -- ( ) _""".split()
)


class BiAttention(nn.Module):
    """B(X, Y) with mean-pooling aggregation: one attention over X and one over Y.

    x [..., Tx, D], y [..., Ty, D] (leading axes broadcast: one passage against N options),
    masks [..., Tx], [..., Ty]. Returns the weights wx [..., Tx], wy [..., Ty].
    """

    def __init__(self, dim: int, hidden: int):
        super().__init__()
        self.f = nn.Sequential(nn.Linear(dim, hidden), nn.ReLU())
        self.m = nn.Linear(hidden, hidden, bias=False)

    def forward(self, x, x_mask, y, y_mask) -> tuple[torch.Tensor, torch.Tensor]:
        s = torch.matmul(self.m(self.f(x)), self.f(y).transpose(-1, -2))  # [..., Tx, Ty]
        xm, ym = x_mask.unsqueeze(-1).to(s.dtype), y_mask.unsqueeze(-2).to(s.dtype)
        s = s * xm * ym
        row = s.sum(-1) / ym.sum(-1).clamp(min=1.0)  # each x_i: its mean affinity to Y
        col = s.sum(-2) / xm.sum(-2).clamp(min=1.0)  # each y_j: its mean affinity to X
        return masked_softmax(row, x_mask.expand_as(row)), masked_softmax(col, y_mask.expand_as(col))


def _reweight(states: torch.Tensor, weights: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """states * (attention x number of attended positions): the re-weighted sequence at the input's scale."""
    count = mask.sum(-1, keepdim=True).to(states.dtype)
    return states * (weights * count).unsqueeze(-1)


def overlap_features(found: torch.Tensor, valid: torch.Tensor, idf: torch.Tensor, stop: torch.Tensor) -> torch.Tensor:
    """Four overlap features of option tokens [..., T] with another sequence: the fraction
    found there, plain and IDF-weighted, over all tokens and over non-stopwords."""
    feats = []
    for keep in (valid, valid & ~stop):
        w = keep.to(idf.dtype)
        hit = found.to(idf.dtype) * w
        feats.append(hit.sum(-1) / w.sum(-1).clamp(min=1.0))
        feats.append((hit * idf).sum(-1) / (w * idf).sum(-1).clamp(min=1e-6))
    return torch.stack(feats, dim=-1)


class Matches(NamedTuple):
    """Exact-match features: is each token in the other sequences (boolean)."""

    p_in_q: torch.Tensor  # [B, Tp]
    p_in_a: torch.Tensor  # [B, Tp]: in any option
    q_in_p: torch.Tensor  # [B, Tq]
    q_in_a: torch.Tensor  # [B, Tq]: in any option
    a_in_p: torch.Tensor  # [B, N, Ta]
    a_in_q: torch.Tensor  # [B, N, Ta]


def exact_match(p: torch.Tensor, q: torch.Tensor, a: torch.Tensor, unk_id: int) -> Matches:
    """Matches of token ids p [B, Tp], q [B, Tq], a [B, N, Ta]; padding and unknown words (ids up
    to ``unk_id``, the vocabulary's special ids) never match."""
    pv, qv, av = p > unk_id, q > unk_id, a > unk_id
    pq = (p.unsqueeze(2) == q.unsqueeze(1)) & pv.unsqueeze(2) & qv.unsqueeze(1)  # [B, Tp, Tq]
    pa = (p[:, :, None, None] == a[:, None]) & pv[:, :, None, None] & av[:, None]  # [B, Tp, N, Ta]
    qa = (q[:, :, None, None] == a[:, None]) & qv[:, :, None, None] & av[:, None]  # [B, Tq, N, Ta]
    return Matches(pq.any(2), pa.flatten(2).any(2), pq.any(1), qa.flatten(2).any(2), pa.any(1), qa.any(1))


class MultipleChoiceHead(Head):
    loss_is_example_mean = True  # classification_output
    # 2: the encoder's calls are combined by encoders.base.combine_outputs: aux losses and stats
    # averaged over the calls, no longer weighted by each call's real tokens.
    # 3: the option scorer's last layer has no bias (a constant added to every option's score,
    # which the softmax over options cancels: it never received a gradient).
    version = 3

    def __init__(
        self,
        embedding_dim: int,
        encoder_output_size: int,
        num_classes: int,
        vocab,
        projection_dim: int | None = 250,
        exact_match: bool = True,
        highway: bool = True,
        attention_dim: int = 250,
        hidden: int = 250,
        overlap: bool = True,
        dropout: float = 0.0,
        encode_query: bool = True,
        question_dim: int = 0,
    ):
        super().__init__()
        if num_classes < 2:
            raise ValueError(f"a multiple-choice task needs at least 2 options, got {num_classes} label names")
        self.num_options = num_classes
        self.exact_match, self.use_overlap, self.encode_query = exact_match, overlap, encode_query
        self.projection = nn.Linear(embedding_dim, projection_dim) if projection_dim else None
        input_dim = self.encoder_input_size(embedding_dim, projection_dim, exact_match)
        self.highway = Highway(input_dim, gate_bias=None) if highway else None  # nn.Linear's default gate bias
        self.pad_id, self.unk_id = special_ids(vocab)  # words have the ids above unk_id
        self.dropout = nn.Dropout(dropout)
        self.query_out = None if encode_query else nn.Linear(input_dim, encoder_output_size)
        self.question = nn.Linear(input_dim, question_dim) if question_dim > 0 else None
        self.attend_pq = BiAttention(encoder_output_size, attention_dim)
        self.attend_pa = BiAttention(encoder_output_size, attention_dim)
        features = 2 * encoder_output_size + (NUM_OVERLAP if overlap else 0)
        # No bias on the score: the softmax over a question's options cancels a shared constant.
        self.scorer = nn.Sequential(nn.Linear(features, hidden), nn.ReLU(), nn.Linear(hidden, 1, bias=False))
        # Word statistics for the overlap features, indexed by vocabulary id.
        self.register_buffer("idf", torch.ones(len(vocab)))
        self.register_buffer("idf_ready", torch.tensor(False))
        stop = torch.tensor([t.lower() in STOPWORDS for t in vocab.itos], dtype=torch.bool)
        self.register_buffer("stop", stop, persistent=False)

    @staticmethod
    def encoder_input_size(embedding_dim: int, projection_dim: int | None = 250, exact_match: bool = True, **_) -> int:
        return (projection_dim or embedding_dim) + (NUM_EM if exact_match else 0)

    # -- training examples: IDF from the training passages, once ------------------------
    def training_records(self, records, fields, seed, epoch):
        if not bool(self.idf_ready):
            self.idf.copy_(passage_idf(records, len(self.idf)).to(self.idf.device))
            self.idf_ready.fill_(True)
        return records, fields

    # -- forward -------------------------------------------------------------------------
    def _input(self, embed, ids: torch.Tensor, em: list[torch.Tensor]) -> torch.Tensor:
        x = embed(ids)
        if self.projection is not None:
            x = self.projection(x)
        if self.exact_match:
            x = torch.cat([x, *[f.unsqueeze(-1).to(x.dtype) for f in em]], dim=-1)
        if self.highway is not None:
            x = self.highway(x)
        return self.dropout(x)

    def forward(self, batch, embed, encoder) -> HeadOutput:
        n = self.num_options
        p, pm = batch["passage"], batch["passage_mask"]
        q, qm = batch["question"], batch["question_mask"]
        opts = [batch[f"option_{k}"] for k in range(n)]
        ta = max(o.shape[1] for o in opts)
        a = torch.stack([F.pad(o, (0, ta - o.shape[1]), value=self.pad_id) for o in opts], dim=1)  # [B, N, Ta]

        m = exact_match(p, q, a, self.unk_id)
        xp = self._input(embed, p, [m.p_in_q, m.p_in_a])
        xq = self._input(embed, q, [m.q_in_p, m.q_in_a])
        xa = [self._input(embed, o, [m.a_in_p[:, k, : o.shape[1]], m.a_in_q[:, k, : o.shape[1]]]) for k, o in enumerate(opts)]
        context = self.question(masked_mean(xq, qm)) if self.question is not None else None

        outputs = [encoder(xp, pm, context)]
        if self.encode_query:
            for x, mask in [(xq, qm), *[(x, batch[f"option_{k}_mask"]) for k, x in enumerate(xa)]]:
                outputs.append(encoder(x, mask, context))
            q_out, a_outs = outputs[1], outputs[2:]
        else:
            q_out = EncoderOutput(zero_padding(self.query_out(xq), qm))
            a_outs = [EncoderOutput(zero_padding(self.query_out(x), batch[f"option_{k}_mask"])) for k, x in enumerate(xa)]

        P = self.dropout(outputs[0].states)
        P_att = outputs[0].mask if outputs[0].mask is not None else pm
        Q = self.dropout(q_out.states)
        Q_att = q_out.mask if q_out.mask is not None else qm
        A = self.dropout(torch.stack([F.pad(o.states, (0, 0, 0, ta - o.states.shape[1])) for o in a_outs], dim=1))  # [B, N, Ta, D]
        A_att = torch.stack(
            [F.pad(o.mask if o.mask is not None else batch[f"option_{k}_mask"], (0, ta - o.states.shape[1])) for k, o in enumerate(a_outs)],
            dim=1,
        )

        # B(P, Q) -> P^Q; B(P^Q, A_i) -> P^{A_i}, A_i^P; temporal sums -> a_i.
        w_p, _ = self.attend_pq(P, P_att, Q, Q_att)
        PQ = _reweight(P, w_p, P_att)
        w_pa, w_a = self.attend_pa(PQ.unsqueeze(1), P_att.unsqueeze(1), A, A_att)  # [B, N, Tp], [B, N, Ta]
        pooled_p = torch.matmul(w_pa, PQ)  # [B, N, D]: sum_t w_t P^Q_t for each option
        pooled_a = (w_a.unsqueeze(-1) * A).sum(2)  # [B, N, D]
        features = [pooled_p, pooled_a]
        if self.use_overlap:
            idf, stop, real = self.idf[a], self.stop[a], a > self.unk_id
            features += [overlap_features(m.a_in_p, real, idf, stop), overlap_features(m.a_in_q, real, idf, stop)]
        logits = self.scorer(self.dropout(torch.cat(features, dim=-1))).squeeze(-1)  # [B, N]
        return classification_output(logits, batch["label"], combine_outputs(outputs))


def passage_idf(records: list[dict], vocab_size: int) -> torch.Tensor:
    """IDF of every vocabulary id over the distinct passages of numericalised records."""
    df = np.zeros(vocab_size, dtype=np.int64)
    seen: set[int] = set()
    for r in records:
        key = hash(tuple(r["passage"]))
        if key in seen:
            continue
        seen.add(key)
        df[np.unique(np.asarray(r["passage"], dtype=np.int64))] += 1
    n = len(seen)
    return torch.from_numpy(np.log((1.0 + n) / (1.0 + df)) + 1.0).float()
