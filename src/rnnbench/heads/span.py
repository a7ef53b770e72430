"""Span prediction head: the DCU paper's bi-attentive span model (EMNLP 2018, section 3.2).

Reads records with ``passage`` and ``question`` (token lists), ``span_start`` and
``span_end`` (inclusive gold indices; -1 when there is none) and, for the
metrics, ``answers``. Layers, in order:

1. Input encoding (paper): each word embedding with a binary exact-match
   feature (does the word occur in the other sequence; ids compared, padding and
   unknown words never match), a linear projection to ``projection_dim`` and a
   one-layer highway network. Its output is what the encoder reads.
2. Compositional encoder: the ONE encoder of the run, on the passage and on the
   question (shared weights). The paper applies DCU to the passage only;
   ``encode_question: false`` does that (the question then keeps its highway
   output, projected to the encoder's width; ours).
   Conditional encoders (FHE) get a question vector as ``context``: attention
   pooling of the question's highway output, projected to ``question_dim``
   (0: no context). The question vector comes from the input layer, not the
   encoder, so the question's own encoding can be conditioned on it too.
3. Bi-attention (ours within the paper's description): similarity
   S_ij = F(p_i)^T M F(q_j) with F a ReLU dense layer (the paper's "bilinear
   product of the nonlinearly transformed input"; ``attention: trilinear`` gives
   BiDAF's w^T[p; q; p*q]). Passage-to-question attention aligns a question
   vector a_i with every passage word; with ``query_to_context`` BiDAF's
   question-to-passage attention adds h = sum_i softmax_i(max_j S_ij) p_i.
   ``compare`` forms the query-aware passage G (Wang & Jiang 2016's comparison
   functions, the paper's choice): ``submult_nn`` ReLU(W[(p-a)^2; p*a (; p*h)]),
   ``mult`` p*a (; p*h), or ``bidaf`` [p; a; p*a (; p*h)].
   Attention keys are the positions the encoder exposes (EncoderOutput.mask:
   FHE's open gates), within the real tokens.
4. Answer pointer (paper): two stacked layers over G; the start distribution
   is softmax(w_1^T H_1), the end distribution softmax(w_2^T H_2). ``pointer``:
   ``bilstm`` (default): the head's own two BiLSTM layers (the paper's layers are
   encoders of the kind under test, BiLSTMs for DCU-LSTM; a head cannot build
   another encoder of the run's kind, so this is the DCU-LSTM setting for all);
   ``encoder``: the run's encoder again (shared weights) on linear projections
   of G and H_1, so the encoder under test also acts in the pointer layer (the
   paper's rows marked with a dagger). ``pointer_reads_input`` (ours, off by
   default) gives the pointer the input layer's output beside G: an encoder
   whose states are not per token (FHE's upper states stay constant between
   open gates) then still tells the pointer which word is where.
5. Loss (paper, after BiDAF and Match-LSTM): joint cross-entropy
   -log p_start(s) - log p_end(e), averaged over the examples that have a gold
   span inside the (possibly cut) passage; the others add nothing (their
   log_likelihood is 0).
6. Inference (Wang & Jiang 2016b's boundary search): the span (s, e) with
   s <= e < s + ``max_span_length`` maximising p_start(s) p_end(e).

``decode`` gives ``{"start": s, "end": e}`` per example; the text metrics read
the answer as ``passage[s..e]`` of the raw record (rnnbench.metrics.text).
Dropout (``dropout``) on the input layer, the encoder outputs and G: the paper
tuned it in {0.1, 0.2, 0.3} on every layer.
The encoder's calls (passage, question, pointer layers) are combined by
``encoders.base.combine_outputs``: aux losses averaged (summed before version 2).
The start and end scores have no bias since version 3: a bias adds the same number to every
position's score, which a softmax over positions cancels, so it never learned anything and its
gradient was zero up to float noise.
"""
from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from rnnbench.encoders.base import EncoderOutput, combine_outputs, zero_padding
from rnnbench.heads.base import Head, HeadOutput, special_ids
from rnnbench.nn.highway import Highway
from rnnbench.nn.rnn import PackedBiLSTM
from rnnbench.nn.util import masked_softmax

NEG = float("-inf")
COMPARES = ("submult_nn", "mult", "bidaf")
ATTENTIONS = ("bilinear", "trilinear")
POINTERS = ("bilstm", "encoder")


def exact_match(ids: torch.Tensor, mask: torch.Tensor, other: torch.Tensor, other_mask: torch.Tensor, unk_id: int) -> torch.Tensor:
    """[B, T] 1.0 where the word occurs in ``other``; padding and the unknown word (ids up to
    ``unk_id``, the vocabulary's special ids) never match."""
    same = (ids.unsqueeze(2) == other.unsqueeze(1)) & other_mask.unsqueeze(1) & (other.unsqueeze(1) > unk_id)
    return (same.any(dim=2) & mask & (ids > unk_id)).float()


def best_spans(start_log_probs: torch.Tensor, end_log_probs: torch.Tensor, max_length: int) -> tuple[torch.Tensor, torch.Tensor]:
    """argmax over s <= e < s + max_length of start[s] + end[e] ([B, T] log-probs, -inf at padding).

    Ties go to the earliest start, then the shortest span."""
    B, T = start_log_probs.shape
    L = max(1, min(max_length, T))
    ends = F.pad(end_log_probs, (0, L - 1), value=NEG).unfold(1, L, 1)  # [B, T, L]: end[s + k]
    scores = start_log_probs.unsqueeze(-1) + ends
    flat = scores.reshape(B, -1).argmax(dim=-1)
    start = torch.div(flat, L, rounding_mode="floor")
    return start, start + flat % L


class SpanHead(Head):
    predicts_from_text = False  # its forward reads the gold span
    # 2: the encoder's aux losses over its calls (passage, question, pointer layers) are averaged
    # (encoders.base.combine_outputs), no longer summed, so MZU's and FHE's regularisers weigh as
    # in every other head.
    version = 3

    def __init__(
        self,
        embedding_dim: int,
        encoder_output_size: int,
        num_classes: int = 0,
        projection_dim: int | None = 300,
        exact_match_feature: bool = True,
        highway: bool = True,
        dropout: float = 0.2,
        encode_question: bool = True,
        attention: str = "bilinear",
        attention_dim: int | None = None,
        compare: str = "submult_nn",
        compare_dim: int | None = None,
        query_to_context: bool = True,
        pointer: str = "bilstm",
        pointer_hidden: int | None = None,
        pointer_reads_input: bool = False,
        max_span_length: int = 20,
        question_dim: int = 0,
        vocab=None,
    ):
        super().__init__()
        self.unk_id = special_ids(vocab).unk  # words have the ids above it
        for name, value, allowed in (("attention", attention, ATTENTIONS), ("compare", compare, COMPARES), ("pointer", pointer, POINTERS)):
            if value not in allowed:
                raise ValueError(f"task.head.{name} must be one of {', '.join(allowed)}; got {value!r}")
        if max_span_length < 1:
            raise ValueError(f"task.head.max_span_length must be >= 1; got {max_span_length}")
        d = encoder_output_size
        self.exact_match_feature = exact_match_feature
        self.encode_question = encode_question
        self.attention = attention
        self.compare = compare
        self.query_to_context = query_to_context
        self.pointer = pointer
        self.max_span_length = max_span_length
        self.question_dim = question_dim
        self.drop = nn.Dropout(dropout)

        features = embedding_dim + (1 if exact_match_feature else 0)
        self.input_size = SpanHead.encoder_input_size(embedding_dim, projection_dim, exact_match_feature)
        self.project = nn.Linear(features, projection_dim) if projection_dim else nn.Identity()
        self.highway = Highway(self.input_size, gate_bias=-1.0) if highway else nn.Identity()  # start close to the identity
        self.question_out = None if encode_question else nn.Linear(self.input_size, d)
        if question_dim > 0:
            self.question_score = nn.Linear(self.input_size, 1, bias=False)  # a bias cannot move a softmax
            self.question_vector = nn.Linear(self.input_size, question_dim)

        a = attention_dim or d
        if attention == "bilinear":
            self.att_in = nn.Sequential(nn.Linear(d, a), nn.ReLU())
            self.att_m = nn.Parameter(torch.empty(a, a))
            nn.init.xavier_uniform_(self.att_m)
        else:
            self.att_w = nn.Linear(3 * d, 1)
        parts = 2 + (1 if query_to_context else 0)  # (p-a)^2, p*a [, p*h]
        if compare == "submult_nn":
            g = compare_dim or d
            self.compare_nn = nn.Sequential(nn.Linear(parts * d, g), nn.ReLU())
        elif compare == "mult":
            g = (parts - 1) * d
        else:
            g = (parts + 1) * d
        self.pointer_reads_input = pointer_reads_input
        if pointer_reads_input:  # ours: the input layer's output beside G (token identity for encoders that blur it)
            g += self.input_size
        self.g_size = g

        if pointer == "bilstm":
            h = pointer_hidden or max(1, d // 2)
            self.pointer1 = PackedBiLSTM(g, h)
            self.pointer2 = PackedBiLSTM(self.pointer1.output_size, h)
            p1 = p2 = self.pointer1.output_size
        else:  # the run's encoder reads projections to its input size
            self.to_pointer1 = nn.Linear(g, self.input_size)
            self.to_pointer2 = nn.Linear(d, self.input_size)
            p1 = p2 = d
        self.start_out = nn.Linear(p1, 1, bias=False)  # a bias cannot move a softmax over positions
        self.end_out = nn.Linear(p2, 1, bias=False)

    @staticmethod
    def encoder_input_size(embedding_dim: int, projection_dim: int | None = 300, exact_match_feature: bool = True, **_) -> int:
        return projection_dim or embedding_dim + (1 if exact_match_feature else 0)

    # -- layers ---------------------------------------------------------------
    def _input(self, embedded: torch.Tensor, em: torch.Tensor) -> torch.Tensor:
        x = torch.cat([embedded, em.unsqueeze(-1)], dim=-1) if self.exact_match_feature else embedded
        return self.drop(self.highway(self.project(x)))

    def _context(self, q_in: torch.Tensor, q_mask: torch.Tensor) -> torch.Tensor | None:
        if self.question_dim <= 0:
            return None
        weights = masked_softmax(self.question_score(q_in).squeeze(-1), q_mask, dim=1)
        return self.question_vector(torch.bmm(weights.unsqueeze(1), q_in).squeeze(1))

    def _similarity(self, p: torch.Tensor, q: torch.Tensor) -> torch.Tensor:
        if self.attention == "bilinear":
            fp, fq = self.att_in(p), self.att_in(q)
            return torch.einsum("bia,ac,bjc->bij", fp, self.att_m, fq)
        w = self.att_w.weight.squeeze(0)
        d = p.shape[-1]
        # w^T [p; q; p*q] without the [B, Tp, Tq, 3d] tensor
        return ((p @ w[:d]).unsqueeze(2) + (q @ w[d : 2 * d]).unsqueeze(1)
                + torch.einsum("bid,d,bjd->bij", p, w[2 * d :], q) + self.att_w.bias)

    def _bi_attention(self, p, p_mask, p_keys, q, q_keys) -> torch.Tensor:
        s = self._similarity(p, q)  # [B, Tp, Tq]
        aligned = torch.bmm(masked_softmax(s, q_keys.unsqueeze(1), dim=2), q)  # [B, Tp, d]
        parts = [(p - aligned) ** 2, p * aligned] if self.compare == "submult_nn" else [p * aligned]
        if self.compare == "bidaf":
            parts = [p, aligned, p * aligned]
        if self.query_to_context:
            best = s.masked_fill(~q_keys.unsqueeze(1), NEG).amax(dim=2)  # [B, Tp]
            weights = masked_softmax(best, p_keys & torch.isfinite(best), dim=1)
            summary = torch.bmm(weights.unsqueeze(1), p)  # [B, 1, d]
            parts.append(p * summary)
        g = torch.cat(parts, dim=-1)
        if self.compare == "submult_nn":
            g = self.compare_nn(g)
        return zero_padding(self.drop(g), p_mask)

    @staticmethod
    def _keys(enc: EncoderOutput, mask: torch.Tensor) -> torch.Tensor:
        """Attention keys: the encoder's exposed positions, or all real tokens where it exposes none."""
        if enc.mask is None:
            return mask
        keys = enc.mask.bool() & mask
        return torch.where(keys.any(dim=1, keepdim=True), keys, mask)

    def forward(self, batch: dict, embed, encoder) -> HeadOutput:
        p_ids, p_mask = batch["passage"], batch["passage_mask"]
        q_ids, q_mask = batch["question"], batch["question_mask"]
        em_p = exact_match(p_ids, p_mask, q_ids, q_mask, self.unk_id)
        em_q = exact_match(q_ids, q_mask, p_ids, p_mask, self.unk_id)
        p_in, q_in = self._input(embed(p_ids), em_p), self._input(embed(q_ids), em_q)
        context = self._context(q_in, q_mask)

        outputs = []
        enc_p = encoder(p_in, p_mask, context)
        outputs.append(enc_p)
        if self.encode_question:
            enc_q = encoder(q_in, q_mask, context)
            outputs.append(enc_q)
            q, q_keys = enc_q.states, self._keys(enc_q, q_mask)
        else:
            q, q_keys = zero_padding(self.question_out(q_in), q_mask), q_mask
        p = self.drop(enc_p.states)
        g = self._bi_attention(p, p_mask, self._keys(enc_p, p_mask), self.drop(q), q_keys)
        if self.pointer_reads_input:
            g = torch.cat([g, p_in], dim=-1)

        if self.pointer == "bilstm":
            h1 = self.pointer1(g, p_mask)
            h2 = self.pointer2(self.drop(h1), p_mask)
        else:
            out1 = encoder(self.to_pointer1(g), p_mask, context)
            out2 = encoder(self.to_pointer2(self.drop(out1.states)), p_mask, context)
            outputs += [out1, out2]
            h1, h2 = out1.states, out2.states
        start_lp = torch.log_softmax(self.start_out(h1).squeeze(-1).masked_fill(~p_mask, NEG), dim=-1)
        end_lp = torch.log_softmax(self.end_out(h2).squeeze(-1).masked_fill(~p_mask, NEG), dim=-1)

        start, end = batch["span_start"], batch["span_end"]
        lengths = p_mask.sum(dim=1)
        valid = (start >= 0) & (end >= start) & (end < lengths)
        s, e = start.clamp(min=0, max=p_ids.shape[1] - 1), end.clamp(min=0, max=p_ids.shape[1] - 1)
        gold = start_lp.gather(1, s.unsqueeze(1)).squeeze(1) + end_lp.gather(1, e.unsqueeze(1)).squeeze(1)
        log_likelihood = torch.where(valid, gold, torch.zeros_like(gold))
        # Mean over examples with a gold span; none in the batch gives a zero loss that still has a graph.
        loss = -log_likelihood.sum() / valid.sum().clamp(min=1)
        return HeadOutput(loss=loss, log_likelihood=log_likelihood, logits=None,
                          encoder_output=combine_outputs(outputs), extra={"start_log_probs": start_lp, "end_log_probs": end_lp})

    def decode(self, out: HeadOutput, batch: dict) -> list:
        start, end = best_spans(out.extra["start_log_probs"], out.extra["end_log_probs"], self.max_span_length)
        return [{"start": int(s), "end": int(e)} for s, e in zip(start.tolist(), end.tolist())]

    def prediction_entry(self, prediction, record: dict, label_names: list[str]) -> dict:
        s, e = prediction["start"], prediction["end"]
        return {"prediction": " ".join(record["passage"][s : e + 1]), "span": [s, e], "gold": list(record["answers"])}
