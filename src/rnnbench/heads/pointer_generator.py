"""Generative QA head with a pointer softmax (FHE paper section 5; Gulcehre et al. 2016).

    question:  q = W_q SelfAttend(BiLSTM(question))                   (section 5.1; the head's own module)
    passage:   s_1..s_T = encoder([x_t; q], mask, context=q)          (the benchmarked encoder; FHE
               conditions its gates on q; attention reads EncoderOutput.mask, FHE's open gates)
    decoder:   h_i = LSTMCell([e(y_{i-1}); c_{i-1}], h_{i-1})          (Bahdanau attention, input feeding)
               a_i = softmax_t v^T tanh(W_k s_t + W_h h_i),  c_i = sum_t a_it s_t
    copy:      r_it = (1 - delta) a_it + delta / |passage|                (over the passage's real tokens)
    output:    p(w) = z_i p_short(w) + (1 - z_i) sum_{t: x_t = w} r_it    (pointer softmax)
               p_short = softmax(W_s tanh(W_o [h_i; c_i; e(y_{i-1})])) over the shortlist and end-of-answer,
               z_i = sigmoid(MLP([h_i; c_i; e(y_{i-1})]))               (the switch)

The mixture form of the pointer softmax is the FHE paper's ("a switching network ...
interpolate[s] between the indices in the document and the shortlist words"); each of the
two distributions sums to one, so p does. The copy distribution is the decoder's attention
(the location softmax of Gulcehre et al.), so with FHE a word is copied from the positions
whose gate is open (what the decoder sees of the passage), smoothed by ``copy_smoothing``
(delta) over every passage token: a target word lying only where the gates are shut keeps a
small probability, so its loss stays finite and FHE's reward (the answer's log-likelihood)
tells the gates to open there. Without it, a gate shut over an answer word could only turn the
word into <unk> or give it probability zero.

Options (paper values in the task configs, conf/task/msmarco.yaml):
- ``shortlist_size``: the most frequent words of the task vocabulary (sorted by frequency)
  that the vocabulary softmax covers (paper: 10,000 for MS MARCO, 100 for SearchQA);
- ``hidden_size`` (question BiLSTM per direction, decoder LSTM; paper: 300 for every component),
  ``question_dim`` (the question vector, FHE's context), ``attention_dim``;
- ``concat_question`` (the question vector beside every passage token, FHE's eq. 1 input;
  baselines read it too, so that LSTM2 is FHE with every gate open as in the paper's footnote 1);
- ``pointer: false`` removes the copy path and its switch (the paper's "– pointer softmax" ablation);
  ``copy_smoothing`` (delta above; ours);
- ``max_answer_length`` (greedy decoding), ``max_target_length`` (training targets cut to this
  many words; null = whole answers), ``dropout`` (decoder features; ours, the paper gives none);
- ``passage_field``, ``question_field``, ``answer_field``: record fields read.

Our choices (the paper gives none of them):
- Output ids: 0 is end-of-answer (the vocabulary's padding id, never a word), 1 is <unk>, and
  2.. are the vocabulary's most frequent words, so a shortlist index is its vocabulary id.
- Training targets: a word in the shortlist is generated or copied (both paths count); a word
  outside the shortlist that occurs in the passage is copied only; any other word is the
  shortlist's <unk>. Whether a word is copyable depends on the passage alone, never on the
  encoder's gates (else shutting every gate turns the answer into easy <unk>s, a reward FHE's
  gates learn to chase: on conf/task/pointer_copy.yaml they all shut and dev ROUGE-L stayed at
  0.03, against 1.0 now). Greedy decoding never emits <unk> (no reference holds it).
- A word unknown to the vocabulary (absent from training, hence <unk> in the batch) cannot be
  copied: the batch holds ids, not strings.
- Decoder start: a learned start-word vector; initial state tanh(W [q; mean of attended states]).
- Loss: mean negative log-likelihood per target word (answer words and end-of-answer);
  ``log_likelihood`` is the log-probability of the whole answer (FHE's reward).
- Greedy decoding only (beam search not implemented).
"""
from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn

from rnnbench.heads.base import Head, HeadOutput, masked_mean, special_ids
from rnnbench.nn.rnn import PackedBiLSTM
from rnnbench.nn.util import masked_softmax


class QuestionEncoder(nn.Module):
    """FHE section 5.1: a BiLSTM over the question, then self-attention to one vector."""

    def __init__(self, input_size: int, hidden_size: int, output_size: int):
        super().__init__()
        self.lstm = PackedBiLSTM(input_size, hidden_size)
        self.score = nn.Sequential(nn.Linear(2 * hidden_size, hidden_size), nn.Tanh(), nn.Linear(hidden_size, 1, bias=False))
        self.out = nn.Linear(2 * hidden_size, output_size)

    def forward(self, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        # Packed, so each question's backward pass starts at its own last word (padding invariance).
        states = self.lstm(x, mask)
        weights = masked_softmax(self.score(states).squeeze(-1), mask)
        return self.out(torch.bmm(weights.unsqueeze(1), states).squeeze(1))


@dataclass
class Memory:
    """What the decoder reads of one batch: passage ids, states, attention keys and mask."""

    ids: torch.Tensor  # [B, T] passage word ids
    mask: torch.Tensor  # [B, T] the passage's real tokens
    states: torch.Tensor  # [B, T, H] encoder states
    keys: torch.Tensor  # [B, T, A] W_k s_t
    attend: torch.Tensor  # [B, T] positions the decoder attends to (EncoderOutput.mask: FHE's open gates)
    h0: torch.Tensor  # [B, D] initial decoder state


class PointerGeneratorHead(Head):
    """Question encoder + the given passage encoder + an attention decoder with a pointer softmax."""

    predicts_from_text = False  # its forward reads the gold answer's tokens (teacher forcing)

    @classmethod
    def version_for(cls, options) -> int:
        """One past ``version`` without the pointer, which no longer builds the switch it never
        used (its weights were counted among the parameters and drew from the random stream);
        ``version`` with it (those runs are unchanged)."""
        return cls.version if options.get("pointer", True) else cls.version + 1

    def __init__(
        self,
        embedding_dim: int,
        encoder_output_size: int,
        num_classes: int,
        vocab,
        shortlist_size: int = 10000,
        hidden_size: int = 300,
        question_dim: int = 300,
        attention_dim: int = 300,
        concat_question: bool = True,
        pointer: bool = True,
        copy_smoothing: float = 0.01,
        max_answer_length: int = 100,
        max_target_length: int | None = None,
        dropout: float = 0.0,
        passage_field: str = "passage",
        question_field: str = "question",
        answer_field: str = "answer_tokens",
    ):
        super().__init__()
        if shortlist_size < 1:
            raise ValueError(f"task.head.shortlist_size must be at least 1, got {shortlist_size}")
        if not 0.0 <= copy_smoothing < 1.0:
            raise ValueError(f"task.head.copy_smoothing must be in [0, 1), got {copy_smoothing}")
        if max_answer_length < 1:
            raise ValueError(f"task.head.max_answer_length must be at least 1, got {max_answer_length}")
        self.itos = list(vocab.itos)
        # Output ids: the vocabulary's padding id (end of answer), its <unk> id and the shortlist
        # words, the vocabulary ids after those two, so an output id is its vocabulary id.
        ids = special_ids(vocab)
        self.eos_id, self.unk_id, self.first_word_id = ids.pad, ids.unk, max(ids) + 1
        self.n_short = min(len(self.itos), shortlist_size + self.first_word_id)
        self.concat_question = concat_question
        self.pointer = pointer
        self.copy_smoothing = copy_smoothing
        self.max_answer_length = max_answer_length
        self.max_target_length = max_target_length
        self.fields = (passage_field, question_field, answer_field)

        H, D, E = encoder_output_size, hidden_size, embedding_dim
        self.question_encoder = QuestionEncoder(E, hidden_size, question_dim)
        self.start = nn.Parameter(torch.zeros(E))
        self.init = nn.Linear(question_dim + H, D)
        self.cell = nn.LSTMCell(E + H, D)
        self.att_key = nn.Linear(H, attention_dim, bias=False)
        self.att_query = nn.Linear(D, attention_dim)
        self.att_score = nn.Linear(attention_dim, 1, bias=False)
        self.dropout = nn.Dropout(dropout)
        self.readout = nn.Linear(D + H + E, D)
        self.shortlist_out = nn.Linear(D, self.n_short)
        # The switch mixes the shortlist with the copy distribution: without the pointer there is nothing to mix.
        self.switch = nn.Sequential(nn.Linear(D + H + E, D), nn.Tanh(), nn.Linear(D, 1)) if pointer else None

    @staticmethod
    def encoder_input_size(embedding_dim: int, question_dim: int = 300, concat_question: bool = True, **_) -> int:
        return embedding_dim + (question_dim if concat_question else 0)

    # ---- encoding --------------------------------------------------------------------

    def encode(self, batch: dict, embed, encoder):
        passage_field, question_field, _ = self.fields
        q = self.question_encoder(embed(batch[question_field]), batch[f"{question_field}_mask"])
        ids, mask = batch[passage_field], batch[f"{passage_field}_mask"]
        x = embed(ids)
        if self.concat_question:
            x = torch.cat([x, q.unsqueeze(1).expand(-1, x.shape[1], -1)], dim=-1)
        enc = encoder(x, mask, q)
        attend = mask if enc.mask is None else enc.mask & mask
        h0 = torch.tanh(self.init(torch.cat([q, masked_mean(enc.states, attend)], dim=-1)))
        return Memory(ids, mask, enc.states, self.att_key(enc.states), attend, h0), enc

    # ---- one decoder step and the output distributions ---------------------------------

    def step(self, mem: Memory, prev: torch.Tensor, state, context: torch.Tensor):
        """One decoder step: new state, attention context and attention weights [B, T]."""
        h, c = self.cell(torch.cat([prev, context], dim=-1), state)
        scores = self.att_score(torch.tanh(mem.keys + self.att_query(h).unsqueeze(1))).squeeze(-1)
        weights = masked_softmax(scores, mem.attend)
        context = torch.bmm(weights.unsqueeze(1), mem.states).squeeze(1)
        return (h, c), context, weights

    def outputs(self, h: torch.Tensor, context: torch.Tensor, prev: torch.Tensor):
        """Shortlist log-probabilities [..., n_short] and the switch logit [...] (log z = logsigmoid;
        None without the pointer)."""
        features = self.dropout(torch.cat([h, context, prev], dim=-1))
        log_short = torch.log_softmax(self.shortlist_out(torch.tanh(self.readout(features))), dim=-1)
        return log_short, self.switch(features).squeeze(-1) if self.pointer else None

    def copy_distribution(self, attention: torch.Tensor, mem: Memory) -> torch.Tensor:
        """r over passage positions ([..., T], like ``attention``): the attention smoothed over the real tokens.
        A row with nothing to attend to (every gate of a sampled FHE sequence shut) copies uniformly."""
        mask = mem.mask if attention.dim() == 2 else mem.mask.unsqueeze(1)
        uniform = mask / mask.sum(dim=-1, keepdim=True).clamp(min=1)
        attended = attention.sum(dim=-1, keepdim=True) > 0
        smoothed = (1 - self.copy_smoothing) * attention + self.copy_smoothing * uniform
        return torch.where(attended, smoothed, uniform)

    def target_log_prob(self, log_short, switch, attention, targets, mem: Memory) -> torch.Tensor:
        """log p(target) per step [B, L] under the pointer softmax; see the module docstring."""
        in_short = targets < self.n_short
        if not self.pointer:
            return log_short.gather(-1, torch.where(in_short, targets, self.unk_id).unsqueeze(-1)).squeeze(-1)
        match = (mem.ids.unsqueeze(1) == targets.unsqueeze(2)) & mem.mask.unsqueeze(1)
        match = match & (targets >= self.first_word_id).unsqueeze(2)  # end-of-answer and <unk> are never copied
        copyable = match.any(dim=-1)
        use_short = in_short | ~copyable
        short_idx = torch.where(in_short, targets, self.unk_id)
        short_lp = log_short.gather(-1, short_idx.unsqueeze(-1)).squeeze(-1)
        # Zero only with copy_smoothing=0 and the word at shut positions only: a tiny floor keeps it finite.
        copy_mass = (self.copy_distribution(attention, mem) * match).sum(dim=-1).clamp(min=1e-30)
        neg_inf = torch.full_like(short_lp, float("-inf"))
        from_short = torch.where(use_short, F.logsigmoid(switch) + short_lp, neg_inf)
        from_copy = torch.where(copyable, F.logsigmoid(-switch) + copy_mass.log(), neg_inf)
        return torch.logaddexp(from_short, from_copy)

    # ---- training: teacher forcing -----------------------------------------------------

    def forward(self, batch, embed, encoder) -> HeadOutput:
        mem, enc = self.encode(batch, embed, encoder)
        _, _, answer_field = self.fields
        answer, answer_mask = batch[answer_field], batch[f"{answer_field}_mask"]
        lengths = answer_mask.sum(dim=1)
        if self.max_target_length is not None:
            answer = answer[:, : self.max_target_length]
            lengths = lengths.clamp(max=self.max_target_length)
        B, L = answer.shape[0], answer.shape[1] + 1
        # Step i predicts word i; step `length` predicts end-of-answer (the padding id).
        targets = torch.cat([answer, answer.new_full((B, 1), self.eos_id)], dim=1)
        targets = torch.where(torch.arange(L, device=answer.device) < lengths.unsqueeze(1), targets, self.eos_id)
        steps = torch.arange(L, device=answer.device).unsqueeze(0) <= lengths.unsqueeze(1)
        # Teacher forcing: step i reads the gold word i-1 (step 0 the learned start vector).
        prev = torch.cat([self.start.expand(B, 1, -1), embed(targets[:, :-1])], dim=1)

        state = (mem.h0, torch.zeros_like(mem.h0))
        context = mem.states.new_zeros(B, mem.states.shape[-1])
        hs, contexts, weights = [], [], []
        for i in range(L):
            state, context, w = self.step(mem, prev[:, i], state, context)
            hs.append(state[0])
            contexts.append(context)
            weights.append(w)
        log_short, switch = self.outputs(torch.stack(hs, 1), torch.stack(contexts, 1), prev)
        step_lp = self.target_log_prob(log_short, switch, torch.stack(weights, 1), targets, mem)
        step_lp = torch.where(steps, step_lp, torch.zeros_like(step_lp))
        log_likelihood = step_lp.sum(dim=1)
        loss = -log_likelihood.sum() / steps.sum().clamp(min=1)
        # Evaluation decodes here, while the embedding is at hand: decode() reads the answers.
        answers = None if self.training else self.greedy(mem, embed)
        extra = {"answers": answers}
        if not self.pointer and not self.training:
            # What the shortlist alone can say: each answer word, or <unk> for one outside it. Greedy
            # decoding never emits <unk>, so this is what "memorised" means without the pointer.
            expressible = torch.where(targets < self.n_short, targets, self.unk_id)
            extra["teacher_forced_right"] = ((log_short.argmax(dim=-1) == expressible) | ~steps).all(dim=1)
        return HeadOutput(loss=loss, log_likelihood=log_likelihood, logits=None, encoder_output=enc, extra=extra)

    # ---- evaluation: greedy decoding ---------------------------------------------------

    def word_scores(self, log_short, switch, attention, mem: Memory, first_position: torch.Tensor) -> torch.Tensor:
        """p(word) over [shortlist ids; passage positions] [B, n_short + T]: a word outside the
        shortlist is scored at the first position it occurs at (its copies summed there)."""
        if not self.pointer:
            return log_short.exp()
        z = torch.sigmoid(switch).unsqueeze(-1)
        short = z * log_short.exp()
        copy = (1 - z) * self.copy_distribution(attention, mem) * (mem.ids >= self.first_word_id)  # <unk> cannot be named
        in_short = mem.ids < self.n_short
        short = short.scatter_add(1, torch.where(in_short, mem.ids, self.eos_id), copy * in_short)
        positions = torch.zeros_like(copy).scatter_add(1, first_position, copy * ~in_short)
        return torch.cat([short, positions], dim=-1)

    @staticmethod
    def first_positions(ids: torch.Tensor) -> torch.Tensor:
        """For each position, the first position holding the same id in its row [B, T]."""
        out = torch.empty_like(ids)
        for b, row in enumerate(ids.tolist()):
            first: dict[int, int] = {}
            out[b] = torch.tensor([first.setdefault(w, t) for t, w in enumerate(row)], dtype=ids.dtype)
        return out

    @torch.no_grad()
    def greedy(self, mem: Memory, embed) -> list[list[int]]:
        """Vocabulary ids of each example's answer, stopping at end-of-answer or ``max_answer_length``."""
        B = mem.ids.shape[0]
        first = self.first_positions(mem.ids)
        state = (mem.h0, torch.zeros_like(mem.h0))
        context = mem.states.new_zeros(B, mem.states.shape[-1])
        prev = self.start.expand(B, -1)
        done = torch.zeros(B, dtype=torch.bool, device=mem.ids.device)
        answers: list[list[int]] = [[] for _ in range(B)]
        rows = torch.arange(B, device=mem.ids.device)
        for _ in range(self.max_answer_length):
            state, context, w = self.step(mem, prev, state, context)
            log_short, switch = self.outputs(state[0], context, prev)
            scores = self.word_scores(log_short, switch, w, mem, first)
            scores[:, self.unk_id] = -1.0  # never emit <unk>
            choice = scores.argmax(dim=-1)
            from_passage = choice >= self.n_short
            word = torch.where(from_passage, mem.ids[rows, (choice - self.n_short).clamp(min=0)], choice)
            done = done | (word == self.eos_id)
            for b in (~done).nonzero().flatten().tolist():
                answers[b].append(int(word[b]))
            if bool(done.all()):
                break
            prev = embed(word.clamp(min=self.unk_id))
        return answers

    def decode(self, out: HeadOutput, batch: dict) -> list[str]:
        """The generated answer of each example, its words joined by spaces."""
        ids = out.extra["answers"]
        if ids is None:
            raise ValueError("PointerGeneratorHead.decode needs an output made in eval mode (model.eval()): it decodes there")
        return [" ".join(self.itos[i] for i in answer) for answer in ids]

    def prediction_entry(self, prediction, record: dict, label_names: list[str]) -> dict:
        return {"prediction": prediction, "gold": record["answers"]}
