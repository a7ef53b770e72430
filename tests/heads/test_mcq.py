"""MultipleChoiceHead (DCU paper, section 3.1): features, shapes, symmetry, padding, gradients, learning."""
from __future__ import annotations

import random

import pytest
import torch
from torch import nn

from rnnbench.compose import compose_config
from rnnbench.data.batching import collate, numericalise
from rnnbench.data.vocab import Vocab
from rnnbench.encoders.build import build_encoder, known_encoders
from rnnbench.heads.base import special_ids
from rnnbench.heads.mcq import MultipleChoiceHead, exact_match, overlap_features, passage_idf

FIELDS = ["passage", "question", "option_0", "option_1", "option_2", "option_3"]
EMB = 12


def record(i, passage, question, options, label, level="high"):
    return {"id": str(i), "level": level, "passage": passage.split(), "question": question.split(),
            **{f"option_{k}": o.split() for k, o in enumerate(options)}, "label": label}


RECORDS = [
    record(0, "the cat sat on the mat . it was a happy cat", "where did the cat sit ?",
           ["on the mat", "in a small box", "under the big old table", "nowhere"], 0),
    record(1, "dogs bark loudly at night", "when do dogs bark ?", ["at noon", "at night", "never", "in the morning always"], 1),
    record(2, "water boils at one hundred degrees when heated", "water boils at what ?",
           ["fifty", "ninety", "one hundred degrees", "zero"], 2, "middle"),
]
VOCAB = Vocab.build(RECORDS, FIELDS, lowercase=True)


def batch_of(records):
    return collate(numericalise(records, VOCAB), FIELDS)


def make(encoder_name="bilstm", question_dim=0, **opts):
    torch.manual_seed(0)
    cfg = compose_config([f"encoder={encoder_name}", "task=race"])
    if "hidden_size" in cfg.encoder:
        cfg.encoder.hidden_size = 8
    if "context_size" in cfg.encoder:
        cfg.encoder.context_size = question_dim
    kwargs = dict(projection_dim=10, attention_dim=6, hidden=5, question_dim=question_dim, **opts)
    encoder = build_encoder(cfg.encoder, MultipleChoiceHead.encoder_input_size(EMB, **kwargs))
    head = MultipleChoiceHead(EMB, encoder.output_size, 4, VOCAB, **kwargs)
    embedding = nn.Embedding(len(VOCAB), EMB, padding_idx=0)
    return head, encoder, embedding


def ids(words):
    return torch.tensor([[VOCAB.stoi[w] for w in words.split()]])


def test_encoder_input_size_counts_the_exact_match_features():
    assert MultipleChoiceHead.encoder_input_size(300, projection_dim=250) == 252
    assert MultipleChoiceHead.encoder_input_size(300, projection_dim=250, exact_match=False) == 250
    assert MultipleChoiceHead.encoder_input_size(300, projection_dim=None) == 302
    head, encoder, embedding = make()
    assert encoder.input_size == 12


def test_exact_match_features_by_hand():
    p = torch.tensor([[5, 6, 7, 1, 0]])  # 1 = unknown, 0 = padding
    q = torch.tensor([[6, 1, 9]])
    a = torch.tensor([[[7, 0], [9, 1], [8, 0], [5, 6]]])
    m = exact_match(p, q, a, special_ids(VOCAB).unk)
    assert m.p_in_q.tolist() == [[False, True, False, False, False]]  # the unknown word never matches
    assert m.p_in_a.tolist() == [[True, True, True, False, False]]
    assert m.q_in_p.tolist() == [[True, False, False]]
    assert m.q_in_a.tolist() == [[True, False, True]]
    assert m.a_in_p.tolist() == [[[True, False], [False, False], [False, False], [True, True]]]
    assert m.a_in_q.tolist() == [[[False, False], [True, False], [False, False], [False, True]]]


def test_overlap_features_by_hand():
    found = torch.tensor([[True, False, True, False]])
    valid = torch.tensor([[True, True, True, False]])
    idf = torch.tensor([[1.0, 2.0, 3.0, 9.0]])
    stop = torch.tensor([[True, False, False, False]])
    feats = overlap_features(found, valid, idf, stop)
    expected = [2 / 3, (1 + 3) / (1 + 2 + 3), 1 / 2, 3 / (2 + 3)]
    assert feats.shape == (1, 4)
    assert feats[0].tolist() == pytest.approx(expected)
    nothing = overlap_features(torch.zeros(1, 2, dtype=torch.bool), torch.zeros(1, 2, dtype=torch.bool), torch.ones(1, 2), torch.zeros(1, 2, dtype=torch.bool))
    assert nothing.tolist() == [[0.0, 0.0, 0.0, 0.0]]


def test_idf_counts_each_distinct_passage_once():
    recs = [{"passage": [2, 3, 3]}, {"passage": [2, 3, 3]}, {"passage": [2, 4]}]  # the first passage has two questions
    idf = passage_idf(recs, 6)
    n = 2
    df = [0, 0, 2, 1, 1, 0]
    assert idf.tolist() == pytest.approx([float(torch.log(torch.tensor((1 + n) / (1 + d))) + 1) for d in df])


def test_training_records_sets_the_idf_once_and_it_is_saved():
    head, _, _ = make()
    recs = numericalise(RECORDS, VOCAB)
    assert not bool(head.idf_ready) and torch.all(head.idf == 1)
    out = head.training_records(recs, FIELDS, 1, 0)
    assert out == (recs, FIELDS)
    cat, dogs = VOCAB.stoi["cat"], VOCAB.stoi["at"]
    assert head.idf[dogs] < head.idf[cat]  # "at" is in 2 of the 3 passages, "cat" in 1
    state = head.state_dict()
    assert "idf" in state and bool(state["idf_ready"]) and "stop" not in state
    fresh, _, _ = make()
    fresh.load_state_dict(state)
    assert torch.equal(fresh.idf, head.idf)
    head.idf[cat] = 42.0
    head.training_records(recs, FIELDS, 1, 1)
    assert head.idf[cat] == 42.0  # computed once, not every epoch


def test_shapes_loss_and_likelihood():
    head, encoder, embedding = make()
    out = head(batch_of(RECORDS), embedding, encoder)
    assert out.logits.shape == (3, 4) and out.log_likelihood.shape == (3,)
    assert torch.allclose(out.loss, -out.log_likelihood.mean())
    assert torch.allclose(out.log_likelihood, out.logits.log_softmax(-1)[torch.arange(3), torch.tensor([0, 1, 2])])
    assert head.decode(out, batch_of(RECORDS)) == out.logits.argmax(-1).tolist()
    assert head.prediction_entry(2, RECORDS[0], ["A", "B", "C", "D"]) == {"prediction": "C", "gold": "A"}


@pytest.mark.parametrize("encoder_name", ["bilstm", "sim_dcu", "dcu"])
def test_permuting_the_options_permutes_the_scores(encoder_name):
    head, encoder, embedding = make(encoder_name)
    head.training_records(numericalise(RECORDS, VOCAB), FIELDS, 1, 0)
    head.eval(), encoder.eval()
    base = head(batch_of(RECORDS), embedding, encoder).logits
    perm = [2, 0, 3, 1]  # new option k is old option perm[k]
    permuted = [{**r, **{f"option_{k}": r[f"option_{perm[k]}"] for k in range(4)}, "label": perm.index(r["label"])} for r in RECORDS]
    out = head(batch_of(permuted), embedding, encoder)
    assert torch.allclose(out.logits, base[:, perm], atol=1e-5)
    assert torch.allclose(out.log_likelihood, head(batch_of(RECORDS), embedding, encoder).log_likelihood, atol=1e-5)
    assert not torch.allclose(base[:, 0], base[:, 1])  # the options are not all scored alike


@pytest.mark.parametrize("encoder_name", ["bilstm", "sim_dcu", "fhe"])
def test_padding_does_not_change_an_example(encoder_name):
    head, encoder, embedding = make(encoder_name, question_dim=4 if encoder_name == "fhe" else 0)
    head.eval(), encoder.eval()
    together = head(batch_of(RECORDS), embedding, encoder).logits
    for i, r in enumerate(RECORDS):
        alone = head(batch_of([r]), embedding, encoder).logits
        assert torch.allclose(alone[0], together[i], atol=1e-5), i


@pytest.mark.parametrize("encode_query", [True, False])
def test_every_parameter_gets_a_gradient(encode_query):
    head, encoder, embedding = make("fhe", question_dim=4, encode_query=encode_query)
    head.training_records(numericalise(RECORDS, VOCAB), FIELDS, 1, 0)
    out = head(batch_of(RECORDS), embedding, encoder)
    (out.loss + out.encoder_output.aux_loss).backward()
    missing = [n for n, p in [*head.named_parameters(), *encoder.named_parameters()] if p.grad is None or not torch.isfinite(p.grad).all() or not p.grad.abs().sum() > 0]
    assert missing == []
    assert embedding.weight.grad is not None and embedding.weight.grad.abs().sum() > 0
    enc = out.encoder_output  # one gate log-probability per example: the calls are aligned and summed
    assert enc.policy_log_prob is not None and enc.policy_log_prob.shape == (len(RECORDS),)
    policy = encoder.policy_loss(enc, out.log_likelihood.detach())
    assert policy is not None and policy.dim() == 0 and torch.isfinite(policy)


def test_no_parameter_is_cancelled_by_the_softmax_over_options():
    """Without an encoder nothing adds float noise: a bias on the option score (a constant the
    softmax over options cancels) would get an exactly zero gradient, as it did before version 3."""
    head, encoder, embedding = make("none")
    head.training_records(numericalise(RECORDS, VOCAB), FIELDS, 1, 0)
    head(batch_of(RECORDS), embedding, encoder).loss.backward()
    assert [n for n, p in head.named_parameters() if p.grad is None or not p.grad.abs().sum() > 0] == []
    assert head.scorer[-1].bias is None


def test_the_encoder_reads_each_sequence_once_or_only_the_passage():
    calls = []

    for encode_query, expected in [(True, 6), (False, 1)]:
        head, encoder, embedding = make(encode_query=encode_query)
        handle = encoder.register_forward_hook(lambda m, args, out: calls.append(args[0].shape[1]))
        calls.clear()
        batch = batch_of(RECORDS)
        head(batch, embedding, encoder)
        handle.remove()
        assert len(calls) == expected
        assert calls[0] == batch["passage"].shape[1]


def test_conditional_encoders_get_the_question_vector():
    seen = []
    head, encoder, embedding = make("fhe", question_dim=4)
    encoder.register_forward_hook(lambda m, args, out: seen.append(args[2]))
    head(batch_of(RECORDS), embedding, encoder)
    assert len(seen) == 6 and all(c is not None and c.shape == (3, 4) for c in seen)
    assert all(c is seen[0] for c in seen)
    head, encoder, embedding = make("bilstm", question_dim=0)
    seen.clear()
    encoder.register_forward_hook(lambda m, args, out: seen.append(args[2]))
    head(batch_of(RECORDS), embedding, encoder)
    assert seen == [None] * 6


def test_encoder_losses_are_averaged_over_calls():
    """encoders.base.combine_outputs' rule (head version 2): the plain mean of the six calls' terms."""
    head, encoder, embedding = make("mzu_sat")
    losses = []
    encoder.register_forward_hook(lambda module, args, out: losses.append(out.aux_loss.detach()))
    out = head(batch_of(RECORDS), embedding, encoder)
    assert len(losses) == 6
    torch.testing.assert_close(out.encoder_output.aux_loss.detach(), torch.stack(losses).mean())


@pytest.mark.parametrize("encoder_name", known_encoders())
def test_every_encoder_runs(encoder_name):
    head, encoder, embedding = make(encoder_name, question_dim=4)
    out = head(batch_of(RECORDS), embedding, encoder)
    assert out.logits.shape == (3, 4) and torch.isfinite(out.loss)
    out.loss.backward()


def synthetic(n, seed):
    """The answer is the option whose words come from the passage; the others' words do not."""
    rng = random.Random(seed)
    words = [f"w{i}" for i in range(40)]
    out = []
    for i in range(n):
        passage = rng.sample(words, 12)
        others = [w for w in words if w not in passage]
        label = rng.randrange(4)
        options = [" ".join(rng.sample(passage if k == label else others, rng.randint(1, 3))) for k in range(4)]
        out.append(record(i, " ".join(passage), " ".join(rng.sample(words, 3)), options, label))
    return out


@pytest.mark.parametrize("features", [{"overlap": False}, {"exact_match": False}])
def test_learns_a_passage_matching_task(features, one_thread):
    """Through the exact-match input features alone (encoder, bi-attention, pooling, scorer),
    or through the overlap features alone, the head learns which option the passage holds."""
    train, test = synthetic(400, 1), synthetic(100, 2)
    vocab = Vocab.build(train + test, FIELDS, lowercase=True)
    torch.manual_seed(0)
    cfg = compose_config(["encoder=bilstm", "task=race"])
    cfg.encoder.hidden_size = 8
    kwargs = dict(projection_dim=8, attention_dim=8, hidden=8, **features)
    encoder = build_encoder(cfg.encoder, MultipleChoiceHead.encoder_input_size(8, **kwargs))
    head = MultipleChoiceHead(8, encoder.output_size, 4, vocab, **kwargs)
    embedding = nn.Embedding(len(vocab), 8, padding_idx=0)
    embedding.weight.requires_grad = False  # random fixed words: nothing to learn from identities
    train_n, test_n = numericalise(train, vocab), numericalise(test, vocab)
    head.training_records(train_n, FIELDS, 1, 0)
    params = [*head.parameters(), *encoder.parameters()]
    optimizer = torch.optim.Adam(params, lr=1e-2)
    for epoch in range(4):
        for start in range(0, len(train_n), 20):
            out = head(collate(train_n[start:start + 20], FIELDS), embedding, encoder)
            optimizer.zero_grad()
            out.loss.backward()
            optimizer.step()
    head.eval(), encoder.eval()
    with torch.no_grad():
        out = head(collate(test_n, FIELDS), embedding, encoder)
    accuracy = (out.logits.argmax(-1) == torch.tensor([r["label"] for r in test])).float().mean().item()
    print(f"accuracy {accuracy:.2f}")
    assert accuracy > 0.9, accuracy
