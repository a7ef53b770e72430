"""PointerGeneratorHead: the pointer softmax, teacher forcing, greedy decoding, padding invariance."""
from __future__ import annotations

import random

import pytest
import torch
import torch.nn.functional as F
from torch import nn

from rnnbench.data.batching import collate
from rnnbench.data.vocab import Vocab
from rnnbench.encoders.fhe import FHE
from rnnbench.encoders.lstm import LSTMEncoder
from rnnbench.heads.pointer_generator import PointerGeneratorHead

pytestmark = pytest.mark.usefixtures("one_thread")

FIELDS = ["passage", "question", "answer_tokens"]
E, Q = 12, 8
# Frequent words first (the task Vocab is sorted by frequency): with shortlist_size=3 the
# shortlist is "the a of"; w0..w29 are outside it and can only be copied.
WORDS = [f"w{i}" for i in range(30)]
VOCAB = Vocab(["the", "a", "of"] + WORDS, lowercase=False)


def make(encoder: str = "bilstm", seed: int = 0, **options):
    torch.manual_seed(seed)
    opts = {"shortlist_size": 3, "hidden_size": 16, "question_dim": Q, "attention_dim": 16, **options}
    head = PointerGeneratorHead(E, 20, 0, VOCAB, **opts)
    size = head.encoder_input_size(E, **opts)
    if encoder == "fhe":
        enc = FHE(size, hidden_size=20, context_size=Q, gate_hidden=8)
    else:
        enc = LSTMEncoder(size, hidden_size=10 if encoder == "bilstm" else 20, bidirectional=encoder == "bilstm")
    return head, enc, nn.Embedding(len(VOCAB), E, padding_idx=0)


def example(passage: str, question: str, answer: str) -> dict:
    return {name: VOCAB.encode(text.split()) for name, text in zip(FIELDS, (passage, question, answer))}


def batch_of(*examples: dict) -> dict:
    return collate(list(examples), FIELDS)


def first_step(head, enc, emb, batch):
    """Encode and take one decoder step from the start state."""
    mem, _ = head.encode(batch, emb, enc)
    B = batch["passage"].shape[0]
    prev = head.start.expand(B, -1)
    state, context, weights = head.step(mem, prev, (mem.h0, torch.zeros_like(mem.h0)), mem.states.new_zeros(B, 20))
    log_short, switch = head.outputs(state[0], context, prev)
    return mem, log_short, switch, weights


BATCH = batch_of(
    example("the w3 of w7 w3 a w9", "the", "w3 w7"),
    example("w1 w2 the w4", "a of", "w4 the"),
)


@pytest.mark.parametrize("encoder", ["bilstm", "fhe"])
def test_switch_mixes_two_distributions_into_one(encoder):
    head, enc, emb = make(encoder)
    head.eval(), enc.eval()
    with torch.no_grad():
        mem, log_short, switch, weights = first_step(head, enc, emb, BATCH)
        first = head.first_positions(mem.ids)
        scores = head.word_scores(log_short, switch, weights, mem, first)
        copy = head.copy_distribution(weights, mem)
    torch.testing.assert_close(log_short.exp().sum(-1), torch.ones(2))  # shortlist + end-of-answer
    torch.testing.assert_close(weights.sum(-1), torch.ones(2))  # attention
    assert not weights[~mem.attend].any()  # only attendable positions (FHE: open gates) are attended to
    torch.testing.assert_close(copy.sum(-1), torch.ones(2))  # copy distribution over passage positions
    assert not copy[~mem.mask].any()  # never over padding
    assert log_short.shape[-1] == 5  # end-of-answer, <unk>, the, a, of
    torch.testing.assert_close(scores.sum(-1), torch.ones(2))  # p(word) sums to 1 over every word
    # "w3" occurs twice in the first passage (positions 1 and 4): both copies count at position 1.
    z = torch.sigmoid(switch[0])
    w3 = VOCAB.stoi["w3"]
    torch.testing.assert_close(scores[0, head.n_short + 1], (1 - z) * copy[0, [1, 4]].sum())
    assert scores[0, head.n_short + 4] == 0
    # "the" is in the shortlist: generated or copied (position 0), scored at its vocabulary id.
    the = VOCAB.stoi["the"]
    torch.testing.assert_close(scores[0, the], z * log_short[0, the].exp() + (1 - z) * copy[0, 0])
    assert w3 >= head.n_short


def test_a_word_outside_the_shortlist_comes_only_from_the_copy_path():
    head, enc, emb = make("lstm1")
    head.eval(), enc.eval()
    w7, w29 = VOCAB.stoi["w7"], VOCAB.stoi["w29"]
    with torch.no_grad():
        mem, log_short, switch, weights = first_step(head, enc, emb, BATCH)
        targets = torch.tensor([[w7, w29, VOCAB.stoi["of"]], [w7, head.eos_id, head.unk_id]])
        L = targets.shape[1]
        lp = head.target_log_prob(log_short.unsqueeze(1).expand(-1, L, -1), switch.unsqueeze(1).expand(-1, L),
                                  weights.unsqueeze(1).expand(-1, L, -1), targets, mem)
        copy = head.copy_distribution(weights, mem)
    z = switch[0]
    # w7 in passage 0 (position 3): only the copy path, whatever the shortlist gives <unk>.
    torch.testing.assert_close(lp[0, 0], F.logsigmoid(-z) + copy[0, 3].log())
    # w29 is in neither: the target is <unk>, from the shortlist.
    torch.testing.assert_close(lp[0, 1], F.logsigmoid(z) + log_short[0, head.unk_id])
    # "of" is in the shortlist and at position 2: both paths.
    of = VOCAB.stoi["of"]
    expected = torch.logaddexp(F.logsigmoid(z) + log_short[0, of], F.logsigmoid(-z) + copy[0, 2].log())
    torch.testing.assert_close(lp[0, 2], expected)
    # w7 is not in passage 1: <unk>; end-of-answer is never copied.
    torch.testing.assert_close(lp[1, 0], F.logsigmoid(switch[1]) + log_short[1, head.unk_id])
    torch.testing.assert_close(lp[1, 1], F.logsigmoid(switch[1]) + log_short[1, head.eos_id])
    assert min(w7, w29) >= head.n_short

    # Without the pointer (the paper's ablation), a word outside the shortlist is <unk> and the switch is unused.
    head.pointer = False
    with torch.no_grad():
        lp = head.target_log_prob(log_short.unsqueeze(1), switch.unsqueeze(1), weights.unsqueeze(1), targets[:, :1], mem)
    torch.testing.assert_close(lp[:, 0], log_short[:, head.unk_id])


def test_shut_gates_do_not_change_the_targets_only_the_copy_probability():
    """A word lying only where the encoder lets nothing be attended (FHE's shut gates) stays a copy
    target: the smoothing gives it copy_smoothing / passage length, not <unk> (which shutting the
    gates would make an easy target) and not zero."""
    head, enc, emb = make("lstm1", copy_smoothing=0.05)
    head.eval(), enc.eval()
    w7 = VOCAB.stoi["w7"]
    with torch.no_grad():
        mem, log_short, switch, _ = first_step(head, enc, emb, BATCH)
        mem.attend = torch.zeros_like(mem.attend)
        mem.attend[0, 0] = True  # passage 0 exposes only its first token ("the"); passage 1 nothing
        weights = torch.zeros_like(mem.ids, dtype=torch.float)
        weights[0, 0] = 1.0
        copy = head.copy_distribution(weights, mem)
        lp = head.target_log_prob(log_short.unsqueeze(1), switch.unsqueeze(1), weights.unsqueeze(1), torch.tensor([[w7], [w7]]), mem)
    torch.testing.assert_close(copy[0], torch.tensor([0.95 + 0.05 / 7] + [0.05 / 7] * 6))
    torch.testing.assert_close(copy[1], torch.tensor([0.25] * 4 + [0.0] * 3))  # nothing attended: uniform
    torch.testing.assert_close(lp[0, 0], F.logsigmoid(-switch[0]) + torch.tensor(0.05 / 7).log())


def copy_task(rng: random.Random, n: int) -> list[dict]:
    """Question "the" asks for the first two passage words, "a" for the last two; all outside the shortlist."""
    out = []
    for _ in range(n):
        words = rng.sample(WORDS, 6)
        first = rng.random() < 0.5
        answer = words[:2] if first else words[-2:]
        out.append(example(" ".join(words), "the" if first else "a", " ".join(answer)))
    return out


def test_teacher_forced_loss_falls_on_a_question_conditioned_copy_task():
    head, enc, emb = make("bilstm", hidden_size=32, attention_dim=32)
    params = [*head.parameters(), *enc.parameters(), *emb.parameters()]
    optimizer = torch.optim.Adam(params, lr=2e-2)
    rng = random.Random(0)
    losses = []
    for _ in range(60):
        out = head(batch_of(*copy_task(rng, 16)), emb, enc)
        optimizer.zero_grad()
        out.loss.backward()
        optimizer.step()
        losses.append(out.loss.item())
    # Chance: about log(6) per copied word (the end-of-answer is easy). After 60 steps the copy is right.
    assert sum(losses[:5]) / 5 > 1.5
    assert sum(losses[-5:]) / 5 < 0.1 * sum(losses[:5]) / 5
    head.eval(), enc.eval()
    test = batch_of(*copy_task(random.Random(1), 32))
    with torch.no_grad():
        predictions = head.decode(head(test, emb, enc), test)
    gold = [" ".join(VOCAB.itos[i] for i in row if i) for row in test["answer_tokens"].tolist()]
    assert sum(p == g for p, g in zip(predictions, gold)) >= 24  # chance is about 1 in 30


def greedy_answers(head, enc, emb, batch=None) -> list[str]:
    """The greedy decoder's answers, decoded now (after any patching of the decoder)."""
    mem, _ = head.encode(BATCH if batch is None else batch, emb, enc)
    return [" ".join(head.itos[i] for i in answer) for answer in head.greedy(mem, emb)]


class Scripted:
    """Replaces ``outputs``: the switch fully on the shortlist, which gives ``words[i]`` at step i."""

    def __init__(self, head, words: list[int]):
        self.head, self.words, self.calls = head, words, 0

    def __call__(self, h, context, prev):
        word = self.words[min(self.calls, len(self.words) - 1)]
        self.calls += 1
        logits = torch.full((h.shape[0], self.head.n_short), -20.0)
        logits[:, word] = 0.0
        return torch.log_softmax(logits, -1), torch.full((h.shape[0],), 30.0)


def test_greedy_decoding_stops_at_end_of_answer_and_at_the_maximum_length(monkeypatch):
    head, enc, emb = make("bilstm", max_answer_length=4)
    head.eval(), enc.eval()
    the, a = VOCAB.stoi["the"], VOCAB.stoi["a"]
    with torch.no_grad():
        monkeypatch.setattr(head, "outputs", Scripted(head, [the, a, head.eos_id, the]))
        assert greedy_answers(head, enc, emb) == ["the a", "the a"]
        monkeypatch.setattr(head, "outputs", Scripted(head, [head.eos_id]))
        assert greedy_answers(head, enc, emb) == ["", ""]
        monkeypatch.setattr(head, "outputs", Scripted(head, [a]))
        assert greedy_answers(head, enc, emb) == ["a a a a", "a a a a"]  # never ends: cut at max_answer_length
        monkeypatch.setattr(head, "outputs", Scripted(head, [head.unk_id, head.eos_id]))
        assert greedy_answers(head, enc, emb)[0] != "<unk>"  # <unk> is never emitted


def test_greedy_decoding_copies_words_outside_the_shortlist(monkeypatch):
    """Switch fully on the copy path and attention on one position: that position's word is emitted."""
    head, enc, emb = make("bilstm", max_answer_length=2)
    head.eval(), enc.eval()

    def point_at(position):
        def step(mem, prev, state, context):
            weights = torch.zeros_like(mem.ids, dtype=torch.float)
            weights[:, position] = 1.0
            return state, context, weights
        return step

    with torch.no_grad():
        monkeypatch.setattr(head, "outputs", lambda h, c, p: (torch.log_softmax(torch.zeros(2, head.n_short), -1), torch.full((2,), -30.0)))
        monkeypatch.setattr(head, "step", point_at(3))
        assert greedy_answers(head, enc, emb) == ["w7 w7", "w4 w4"]


def test_decode_reads_answers_decoded_in_eval_and_no_function_travels_in_extra():
    head, enc, emb = make("bilstm", max_answer_length=3)
    out = head(BATCH, emb, enc)  # training mode: no decoding
    assert out.extra == {"answers": None}
    with pytest.raises(ValueError, match="eval mode"):
        head.decode(out, BATCH)
    head.eval(), enc.eval()
    with torch.no_grad():
        out = head(BATCH, emb, enc)
        assert not any(callable(v) for v in out.extra.values())
        assert head.decode(out, BATCH) == greedy_answers(head, enc, emb)


def test_special_ids_come_from_the_vocabulary():
    head, _, _ = make("bilstm")
    assert (head.eos_id, head.unk_id, head.first_word_id) == (VOCAB.stoi["<pad>"], VOCAB.stoi["<unk>"], 2)


@pytest.mark.parametrize("encoder", ["bilstm", "fhe"])
def test_padding_does_not_change_an_example(encoder):
    head, enc, emb = make(encoder)
    head.eval(), enc.eval()
    short = example("w5 the w6", "a", "w6")
    long = example("w1 w2 w3 w4 w5 w6 w7 w8 w9 w10 w11", "the a of the", "w2 w3 w4 w5")
    with torch.no_grad():
        alone = head(batch_of(short), emb, enc)
        together = head(batch_of(short, long), emb, enc)
        torch.testing.assert_close(alone.log_likelihood[0], together.log_likelihood[0], rtol=1e-5, atol=1e-5)
        assert head.decode(alone, batch_of(short))[0] == head.decode(together, batch_of(short, long))[0]


def test_fhe_gets_the_question_vector_as_context():
    head, enc, emb = make("fhe")
    seen = {}
    forward = enc.forward

    def spy(x, mask, context=None):
        seen["context"] = context
        return forward(x, mask, context)

    enc.forward = spy
    head(BATCH, emb, enc)
    assert seen["context"].shape == (2, Q)


def test_loss_is_the_mean_per_word_and_log_likelihood_the_whole_answer():
    head, enc, emb = make("lstm1")
    head.eval(), enc.eval()
    with torch.no_grad():
        out = head(BATCH, emb, enc)
    # Two answers of two words each, plus end-of-answer: 6 target words.
    torch.testing.assert_close(out.loss, -out.log_likelihood.sum() / 6)
    assert out.logits is None and (out.log_likelihood < 0).all()


def test_options_are_checked():
    with pytest.raises(ValueError, match="shortlist_size"):
        make(shortlist_size=0)
    with pytest.raises(ValueError, match="max_answer_length"):
        make(max_answer_length=0)


def test_without_the_pointer_no_switch_is_built_and_its_runs_get_a_new_version():
    head, _, _ = make("lstm1", pointer=False)
    assert head.switch is None and not any(name.startswith("switch") for name, _ in head.named_parameters())
    assert PointerGeneratorHead.version_for({"pointer": False}) == PointerGeneratorHead.version + 1
    assert PointerGeneratorHead.version_for({"pointer": True}) == PointerGeneratorHead.version_for({}) == PointerGeneratorHead.version


def test_without_the_pointer_memorised_means_every_word_the_shortlist_can_say():
    """The answers hold words outside the shortlist: greedy decoding can never give them, but the
    head learns its training targets (each such word as <unk>), which the probe counts."""
    from rnnbench.heads.probes import PointerGeneratorProbe

    head, enc, emb = make("lstm1", pointer=False)
    probe = PointerGeneratorProbe(head)
    params = [*head.parameters(), *enc.parameters(), *emb.parameters()]
    optimizer = torch.optim.Adam(params, lr=1e-2)
    for _ in range(150):
        head.train(), enc.train()
        loss = head(BATCH, emb, enc).loss
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    head.eval(), enc.eval()
    with torch.no_grad():
        out = head(BATCH, emb, enc)
    assert probe.hits(BATCH, out) == (2, 2)
    assert head.decode(out, BATCH) != ["w3 w7", "w4 the"]  # never the gold words outside the shortlist
