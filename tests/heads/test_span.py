"""SpanHead: best span search, padding invariance, gradients, loss masking, and learning a span task."""
from __future__ import annotations

import random

import pytest
import torch
from torch import nn

from rnnbench.compose import compose_config
from rnnbench.data.batching import collate
from rnnbench.encoders.build import build_encoder
from rnnbench.heads.base import special_ids
from rnnbench.heads.span import SpanHead, best_spans, exact_match

VOCAB, EMB = 30, 12


def make(encoder_name: str = "bilstm", hidden: int = 8, **opts):
    opts = {"projection_dim": 10, "dropout": 0.0, "max_span_length": 4, **opts}
    cfg = compose_config([f"encoder={encoder_name}"])
    if "hidden_size" in cfg.encoder:
        cfg.encoder.hidden_size = hidden
    if "context_size" in cfg.encoder:
        cfg.encoder.context_size = opts.get("question_dim", 0)
    torch.manual_seed(0)
    encoder = build_encoder(cfg.encoder, SpanHead.encoder_input_size(EMB, **opts))
    head = SpanHead(EMB, encoder.output_size, 0, **opts)
    embedding = nn.Embedding(VOCAB, EMB, padding_idx=0)
    return head, encoder, embedding


def example(i: int, p_len: int, q_len: int, rng: random.Random, start: int = 1, end: int = 2) -> dict:
    return {"id": str(i), "passage": [rng.randrange(1, VOCAB) for _ in range(p_len)],
            "question": [rng.randrange(1, VOCAB) for _ in range(q_len)], "span_start": start, "span_end": end}


def batch_of(records: list[dict]) -> dict:
    return collate(records, ["passage", "question"])


def test_best_spans_matches_brute_force_and_respects_max_length():
    g = torch.Generator().manual_seed(0)
    for _ in range(20):
        B, T, L = 3, 9, int(torch.randint(1, 6, (1,), generator=g))
        lengths = torch.randint(1, T + 1, (B,), generator=g)
        mask = torch.arange(T).unsqueeze(0) < lengths.unsqueeze(1)
        ls = torch.log_softmax(torch.randn(B, T, generator=g).masked_fill(~mask, float("-inf")), -1)
        le = torch.log_softmax(torch.randn(B, T, generator=g).masked_fill(~mask, float("-inf")), -1)
        start, end = best_spans(ls, le, L)
        for b in range(B):
            n = int(lengths[b])
            best = max(((float(ls[b, s] + le[b, e]), s, e) for s in range(n) for e in range(s, min(n, s + L))), key=lambda t: t[0])
            assert 0 <= start[b] <= end[b] < n and end[b] - start[b] < L
            assert float(ls[b, start[b]] + le[b, end[b]]) == pytest.approx(best[0])


def test_best_spans_breaks_ties_early_and_short():
    ls = torch.log(torch.tensor([[0.5, 0.5, 0.0]]))
    le = torch.log(torch.tensor([[0.5, 0.5, 0.0]]))
    start, end = best_spans(ls, le, 3)
    assert (int(start), int(end)) == (0, 0)


def test_exact_match_feature_ignores_padding_and_unknown():
    p = torch.tensor([[5, 1, 7, 0]])
    q = torch.tensor([[7, 1, 0]])
    em = exact_match(p, p > 0, q, q > 0, special_ids().unk)
    assert em.tolist() == [[0.0, 0.0, 1.0, 0.0]]


@pytest.mark.parametrize("encoder_name,opts", [
    ("bilstm", {}),
    ("bilstm", {"pointer": "encoder", "attention": "trilinear", "compare": "bidaf"}),
    ("dcu", {"compare": "mult", "encode_question": False}),
    ("fhe", {"question_dim": 6}),
    ("rcrn", {"query_to_context": False}),
])
def test_padding_invariance(encoder_name, opts):
    """An example's span distributions and decoded span are the same alone as in a batch with longer ones."""
    head, encoder, embedding = make(encoder_name, **opts)
    head.eval(), encoder.eval()
    rng = random.Random(1)
    records = [example(0, 5, 3, rng), example(1, 11, 6, rng), example(2, 8, 2, rng)]
    with torch.no_grad():
        together = head(batch_of(records), embedding, encoder)
        spans = head.decode(together, batch_of(records))
        for i, r in enumerate(records):
            alone = head(batch_of([r]), embedding, encoder)
            n = len(r["passage"])
            for key in ("start_log_probs", "end_log_probs"):
                assert torch.allclose(together.extra[key][i, :n], alone.extra[key][0], atol=1e-5), (key, i)
                assert torch.all(together.extra[key][i, n:] == float("-inf"))
            assert spans[i] == head.decode(alone, batch_of([r]))[0]
            assert 0 <= spans[i]["start"] <= spans[i]["end"] < n and spans[i]["end"] - spans[i]["start"] < 4


@pytest.mark.parametrize("encoder_name,opts", [("bilstm", {}), ("fhe", {"question_dim": 6, "pointer": "encoder"})])
def test_gradients_reach_head_encoder_and_embeddings(encoder_name, opts):
    head, encoder, embedding = make(encoder_name, **opts)
    rng = random.Random(2)
    out = head(batch_of([example(i, 7 + i, 3, rng) for i in range(4)]), embedding, encoder)
    loss = out.loss + (out.encoder_output.aux_loss if out.encoder_output.aux_loss is not None else 0)
    loss.backward()
    assert torch.isfinite(loss)
    skip = set() if opts.get("question_dim") else {"question_score", "question_vector"}
    for name, p in head.named_parameters():
        if name.split(".")[0] not in skip:
            assert p.grad is not None and p.grad.abs().sum() > 0, name
    assert any(p.grad is not None and p.grad.abs().sum() > 0 for p in encoder.parameters())
    assert embedding.weight.grad.abs().sum() > 0
    if encoder_name == "fhe":  # the conditional encoder read the question vector and added its aux loss
        assert out.encoder_output.aux_loss is not None and "gate_openness" in out.encoder_output.stats


def test_examples_without_a_gold_span_stay_out_of_the_loss():
    head, encoder, embedding = make()
    rng = random.Random(3)
    good = [example(0, 6, 3, rng, 1, 2), example(1, 6, 3, rng, 0, 0)]
    bad = [example(2, 6, 3, rng, -1, -1), example(3, 6, 3, rng, 4, 9)]  # none; beyond the (cut) passage
    out = head(batch_of(good + bad), embedding, encoder)
    alone = head(batch_of(good), embedding, encoder)
    assert out.loss.item() == pytest.approx(alone.loss.item(), abs=1e-5)
    assert out.log_likelihood[2:].tolist() == [0.0, 0.0]
    lp = out.extra["start_log_probs"][0, 1] + out.extra["end_log_probs"][0, 2]
    assert out.log_likelihood[0].item() == pytest.approx(lp.item())
    none = head(batch_of(bad), embedding, encoder)
    assert none.loss.item() == 0.0 and none.loss.requires_grad


def test_decode_and_prediction_entry():
    head, encoder, embedding = make()
    record = {"id": "q", "passage": "the cat sat on the mat".split(), "answers": ["a cat"]}
    entry = head.prediction_entry({"start": 1, "end": 2}, record, [])
    assert entry == {"prediction": "cat sat", "span": [1, 2], "gold": ["a cat"]}


def test_bad_options():
    with pytest.raises(ValueError, match="compare"):
        SpanHead(EMB, 8, 0, compare="concat")
    with pytest.raises(ValueError, match="pointer"):
        SpanHead(EMB, 8, 0, pointer="gru")


def test_learns_a_span_copy_task():
    """Synthetic: the question is a word that occurs once in the passage; the answer is the two words after it.
    A random span of at most 3 words out of 6-10 is right about once in 20; the head learns the task in
    about 40 steps (1.0 exact-span accuracy on held-out examples at step 40 on a 2-core CPU)."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # a tiny model: threads only add overhead on a shared machine
    try:
        accuracy = _train_span_copy()
    finally:
        torch.set_num_threads(threads)
    assert accuracy > 0.8, accuracy


def _train_span_copy() -> float:
    torch.manual_seed(0)
    head, encoder, embedding = make("bilstm", hidden=16, max_span_length=3)
    rng = random.Random(4)

    def sample(i):
        n = rng.randint(6, 10)
        passage = rng.sample(range(2, VOCAB), n)  # distinct words: the cue occurs once
        cue = rng.randrange(0, n - 2)
        return {"id": str(i), "passage": passage, "question": [passage[cue]], "span_start": cue + 1, "span_end": cue + 2}

    train = [sample(i) for i in range(512)]
    test = [sample(i) for i in range(200)]
    params = list(head.parameters()) + list(encoder.parameters()) + list(embedding.parameters())
    opt = torch.optim.Adam(params, lr=2e-2)
    for step in range(60):
        records = [train[(step * 32 + k) % len(train)] for k in range(32)]
        out = head(batch_of(records), embedding, encoder)
        opt.zero_grad()
        out.loss.backward()
        opt.step()
    head.eval(), encoder.eval()
    with torch.no_grad():
        batch = batch_of(test)
        spans = head.decode(head(batch, embedding, encoder), batch)
    return sum(s == {"start": r["span_start"], "end": r["span_end"]} for s, r in zip(spans, test)) / len(test)


def test_pointer_can_read_the_input_layer():
    head, encoder, embedding = make("fhe", question_dim=6, pointer_reads_input=True)
    assert head.pointer1.input_size == head.g_size == 8 + head.input_size  # G (compare_dim = d = 8) + input
    rng = random.Random(5)
    out = head(batch_of([example(0, 6, 2, rng), example(1, 4, 3, rng)]), embedding, encoder)
    assert torch.isfinite(out.loss)


def test_encoder_losses_are_averaged_over_the_calls():
    """Head version 2: passage, question and both pointer layers are four calls; their aux losses are
    averaged (encoders.base.combine_outputs), so a regulariser weighs as it does in a one-call head."""
    head, encoder, embedding = make("mzu_sat", pointer="encoder")
    losses = []
    encoder.register_forward_hook(lambda module, args, out: losses.append(out.aux_loss.detach()))
    rng = random.Random(0)
    out = head(batch_of([example(0, 7, 3, rng), example(1, 5, 4, rng)]), embedding, encoder)
    assert len(losses) == 4
    torch.testing.assert_close(out.encoder_output.aux_loss.detach(), torch.stack(losses).mean())


def test_the_start_and_end_scores_have_no_bias_a_softmax_over_positions_would_cancel():
    for pointer in ("bilstm", "encoder"):
        head = SpanHead(EMB, 8, 0, pointer=pointer)
        assert head.start_out.bias is None and head.end_out.bias is None
