"""LanguageModelHead: shapes, scoring only the segment, causality, padding, and refusing bidirectional encoders."""
from __future__ import annotations

import math
from types import SimpleNamespace

import pytest
import torch

from rnnbench.compose import compose_config
from rnnbench.data.batching import collate, numericalise
from rnnbench.data.char_lm import segment_records
from rnnbench.data.vocab import Vocab
from rnnbench.encoders.build import build_encoder
from rnnbench.errors import ConfigError
from rnnbench.heads.lm import LanguageModelHead
from rnnbench.training.model import build_model

TEXT = "the_mill_closed_in_N\nprices_rose_N_%\nworkers_moved_north\n"
EMBED = 6
CAUSAL = [["encoder=lstm1"], ["encoder=lstm2"], ["encoder=fhe"], ["encoder=mzu_sat", "encoder.bidirectional=false"],
          ["encoder=mzu_cap", "encoder.bidirectional=false"]]


def setup(overrides, bptt=12, context=5, seed=0):
    records = segment_records(TEXT, "train", bptt, context)
    vocab = Vocab.build(records, ["chars", "targets"], lowercase=False)
    cfg = compose_config(["task=ptb_char", *overrides])  # fhe: no context from this head (context_size 0)
    if "hidden_size" in cfg.encoder:
        cfg.encoder.hidden_size = 8
    torch.manual_seed(seed)
    encoder = build_encoder(cfg.encoder, EMBED).eval()
    embedding = torch.nn.Embedding(len(vocab), EMBED, padding_idx=0)
    head = LanguageModelHead(EMBED, encoder.output_size, 0, vocab=vocab).eval()
    return records, vocab, encoder, embedding, head


def run(records, vocab, encoder, embedding, head):
    batch = collate(numericalise(records, vocab), ["chars", "targets"])
    with torch.no_grad():
        return head(batch, embedding, encoder), batch


def test_shapes_loss_and_decode():
    records, vocab, encoder, embedding, head = setup(["encoder=lstm1"])
    out, batch = run(records, vocab, encoder, embedding, head)
    B, T = batch["chars"].shape
    assert B == len(records) and T == max(len(r["chars"]) for r in records)
    token_ll, scored = out.extra["token_log_likelihood"], out.extra["scored"]
    assert token_ll.shape == scored.shape == (B, T) and out.log_likelihood.shape == (B,)
    # Scored: exactly the segment's characters, each once over the records.
    assert scored.sum().item() == len(TEXT) - 1
    assert scored.sum(1).tolist() == [len(r["chars"]) - r["scored_from"] for r in records]
    assert torch.all(token_ll[~scored] == 0) and torch.all(token_ll[scored] < 0)
    assert torch.allclose(out.loss, -token_ll.sum() / scored.sum())
    assert torch.allclose(out.log_likelihood, token_ll.sum(1))
    decoded = head.decode(out, batch)
    for d, r, ll in zip(decoded, records, out.log_likelihood):
        assert d["chars"] == len(r["chars"]) - r["scored_from"]
        assert d["bits"] == pytest.approx(-ll.item() / math.log(2), rel=1e-5)
    entry = head.prediction_entry(decoded[1], records[1], [])
    assert entry["gold"] == TEXT[13:25] and entry["prediction"] == decoded[1]


def test_an_untrained_uniform_model_scores_log2_of_the_symbols():
    """With a zero output layer every non-padding symbol is equally likely: log2(V - 1) bits each."""
    records, vocab, encoder, embedding, head = setup(["encoder=lstm1"])
    torch.nn.init.zeros_(head.out.weight)
    torch.nn.init.zeros_(head.out.bias)
    out, batch = run(records, vocab, encoder, embedding, head)
    decoded = head.decode(out, batch)
    bits = sum(d["bits"] for d in decoded) / sum(d["chars"] for d in decoded)
    assert bits == pytest.approx(math.log2(len(vocab) - 1), rel=1e-6)  # padding gets no probability


def test_no_scored_character_gives_zero_loss_not_nan():
    records, vocab, encoder, embedding, head = setup(["encoder=lstm1"], bptt=12, context=5)
    cut = [{**r, "chars": r["chars"][:3], "targets": r["targets"][:3]} for r in records[1:]]  # context only
    out, _ = run(cut, vocab, encoder, embedding, head)
    assert out.loss.item() == 0.0 and torch.all(out.log_likelihood == 0)


@pytest.mark.parametrize("overrides", CAUSAL, ids=lambda o: " ".join(o))
def test_a_later_character_does_not_change_earlier_scores(overrides):
    records, vocab, encoder, embedding, head = setup(overrides, bptt=40, context=0)
    record = records[0]
    k = 25  # change the character at stream position k: input k, target k - 1
    changed = dict(record, chars=list(record["chars"]), targets=list(record["targets"]))
    new = "z" if record["chars"][k] != "z" else "q"
    changed["chars"][k], changed["targets"][k - 1] = new, new
    before, _ = run([record], vocab, encoder, embedding, head)
    after, _ = run([changed], vocab, encoder, embedding, head)
    a, b = before.extra["token_log_likelihood"][0], after.extra["token_log_likelihood"][0]
    assert torch.equal(a[: k - 1], b[: k - 1])
    assert not torch.equal(a[k - 1 :], b[k - 1 :])


def test_the_causality_check_catches_a_bidirectional_encoder():
    """The check above can fail: a BiLSTM's earlier positions do read the later character."""
    records, vocab, encoder, embedding, head = setup(["encoder=bilstm"], bptt=40, context=0)
    head = LanguageModelHead(EMBED, encoder.output_size, 0, vocab=vocab).eval()
    record = records[0]
    changed = dict(record, chars=list(record["chars"]))
    changed["chars"][25] = "z" if record["chars"][25] != "z" else "q"
    before, _ = run([record], vocab, encoder, embedding, head)
    after, _ = run([changed], vocab, encoder, embedding, head)
    assert not torch.equal(before.extra["token_log_likelihood"][0, :24], after.extra["token_log_likelihood"][0, :24])


@pytest.mark.parametrize("overrides", CAUSAL[:1] + CAUSAL[3:4], ids=lambda o: " ".join(o))
def test_a_record_scores_the_same_alone_as_in_a_padded_batch(overrides):
    records, vocab, encoder, embedding, head = setup(overrides)
    together = head.decode(*run(records, vocab, encoder, embedding, head))
    for r, d in zip(records, together):
        alone = head.decode(*run([r], vocab, encoder, embedding, head))[0]
        assert alone["chars"] == d["chars"] and alone["bits"] == pytest.approx(d["bits"], rel=1e-5, abs=1e-5)


@pytest.mark.parametrize("encoder", ["bilstm", "mzu_sat", "rcrn"])
def test_the_builder_refuses_a_bidirectional_encoder(encoder):
    records = segment_records(TEXT, "train", 12, 5)
    data = SimpleNamespace(vocab=Vocab.build(records, ["chars", "targets"], lowercase=False), label_names=[], vectors=None)
    cfg = compose_config(["task=ptb_char", f"encoder={encoder}", "encoder.hidden_size=8"])
    with pytest.raises(ConfigError, match=rf"task 'ptb_char' needs a causal encoder.*encoder '{encoder}' reads both directions"):
        build_model(cfg, data)
    causal = compose_config(["task=ptb_char", "encoder=mzu_sat", "encoder.bidirectional=false", "encoder.hidden_size=8"])
    assert isinstance(build_model(causal, data).head, LanguageModelHead)


@pytest.mark.slow
def test_lstm1_learns_ptb_characters_in_a_few_dozen_batches(real_data, tmp_path, monkeypatch):
    """Real data: after 40 batches the dev BPC is a bit or more below the uniform log2(50) = 5.64 (3.93 here)."""
    from rnnbench.training.loop import fit

    monkeypatch.setenv("RNNBENCH_DATA", str(real_data))
    cfg = compose_config(["task=ptb_char", "encoder=lstm1", "encoder.hidden_size=64", "trainer.batch_size=32",
                          "trainer.epochs=1", "trainer.max_batches=40", "trainer.max_eval_batches=2",
                          "trainer.eval_batch_size=64", "trainer.num_threads=1", "trainer.progress=false",
                          f"paths.runs_dir={tmp_path}"])
    record = fit(cfg, tmp_path, say=lambda _: None)
    history = record["history"][0]
    assert history["train_loss_end"] < history["train_loss_start"] - 0.5
    assert record["dev"]["bpc"] < math.log2(50) - 1, record["dev"]
    assert math.isfinite(record["test"]["bpc"]) and record["test"]["bpc"] < math.log2(50) - 1
