"""The character-level word encoder (``embedding.char``): its vocabulary, its batches, the module,
how the model feeds it, and what it does to a run's identity."""
from __future__ import annotations

import json

import pytest
import torch
from torch import nn

from rnnbench.compose import compose_config
from rnnbench.config import CharConf, validate
from rnnbench.data.batching import collate, numericalise
from rnnbench.data.vocab import PAD, UNK, CharVocab, Vocab
from rnnbench.errors import ConfigError
from rnnbench.nn.char_encoder import CharEncoder, char_output_size
from rnnbench.results import identity
from rnnbench.results.identity import component_versions, run_identity
from rnnbench.training.model import build_model, embedding_width

RECORDS = [{"tokens": ["Paris", "is", "big", "."], "label": 0}, {"tokens": ["paris", "Is", "small"], "label": 1}]


# -- vocabulary and batches ---------------------------------------------------------------

def test_the_character_vocabulary_is_the_training_splits_cased_characters():
    chars = CharVocab.build(RECORDS, ["tokens"], max_word_length=20)
    assert chars.itos[:2] == [PAD, UNK]
    assert {"P", "p", "I", "i", "."} <= set(chars.itos) and "z" not in chars.itos
    assert chars.itos[2] == "s"  # the most frequent character first (then in character order): fixed ids
    p, big_p = chars.stoi["p"], chars.stoi["P"]
    assert chars.encode_word("Paris")[0] == big_p and chars.encode_word("paris")[0] == p
    assert chars.encode_word("Zia") == (1, chars.stoi["i"], chars.stoi["a"])  # an unseen character is unknown (1)
    assert chars.encode_word(PAD) == () and chars.encode_word(UNK) == ()  # the special tokens have no characters


def test_a_long_word_keeps_its_first_characters():
    chars = CharVocab.build([{"tokens": ["abcdef"]}], ["tokens"], max_word_length=3)
    assert chars.encode_word("abcdef") == chars.encode_word("abc") and len(chars.encode_word("abcdef")) == 3
    with pytest.raises(ValueError, match="max_word_length"):
        CharVocab(["a"], 0)


def test_numericalised_records_and_batches_carry_each_fields_characters():
    vocab = Vocab.build(RECORDS, ["tokens"], lowercase=True)
    vocab.chars = CharVocab.build(RECORDS, ["tokens"], max_word_length=20)
    items = numericalise(RECORDS, vocab, ["tokens"])
    assert items[0]["tokens"][0] == items[1]["tokens"][0]  # one lower-cased word ...
    assert items[0]["tokens_chars"][0] != items[1]["tokens_chars"][0]  # ... two spellings
    batch = collate(items, ["tokens"])
    assert batch["tokens_chars"].shape == (2, 4, 5)  # [B, T, longest word]
    assert batch["tokens_chars"][1, 3].eq(0).all()  # a padded position has no characters
    assert batch["tokens_chars"][0, 3].tolist() == [vocab.chars.stoi["."], 0, 0, 0, 0]
    # a record cut to fewer tokens (trainer.truncate) keeps the characters of those only
    cut = collate([{**items[0], "tokens": items[0]["tokens"][:2]}], ["tokens"])
    assert cut["tokens_chars"].shape[:2] == cut["tokens"].shape


def test_without_a_character_vocabulary_records_are_as_before():
    vocab = Vocab.build(RECORDS, ["tokens"], lowercase=True)
    assert set(numericalise(RECORDS, vocab, ["tokens"])[0]) == {"tokens", "label"}


# -- the module ---------------------------------------------------------------------------

def _words(*lengths: int, L: int | None = None) -> torch.Tensor:
    """Character ids [N, L]: word i has lengths[i] characters (ids 2...), then padding."""
    L = L or max(lengths)
    out = torch.zeros(len(lengths), L, dtype=torch.long)
    for i, n in enumerate(lengths):
        out[i, :n] = torch.arange(2, 2 + n) + i
    return out


@pytest.mark.parametrize("kind, size", [("bigru", 2 * 7), ("cnn", 5 * 2)])
def test_a_words_vector_depends_on_its_characters_only(kind, size):
    torch.manual_seed(0)
    enc = CharEncoder(20, kind, dim=6, hidden=7, filters=5, widths=[2, 3]).eval()
    assert enc.output_size == size == char_output_size(kind, hidden=7, filters=5, widths=[2, 3])
    words = _words(4, 1, 0, 6)
    out = enc(words)
    assert out.shape == (4, size)
    assert out[2].eq(0).all() and out[0].ne(0).any()  # no characters: the zero vector
    for i in (0, 1, 3):  # the same alone, with other words, and with more padding
        alone = enc(words[i : i + 1, : int((words[i] != 0).sum())])
        torch.testing.assert_close(out[i], alone[0])
        torch.testing.assert_close(enc(torch.nn.functional.pad(words[i : i + 1], (0, 5)))[0], out[i])
    assert enc(words.view(2, 2, -1)).shape == (2, 2, size)  # any leading shape


def test_the_bigru_vector_is_both_directions_final_states():
    torch.manual_seed(0)
    enc = CharEncoder(20, "bigru", dim=4, hidden=3).eval()
    word = _words(5)
    x = enc.embedding(word)
    forward, _ = enc.gru(x)  # one word, no padding: nn.GRU's own bidirectional run
    torch.testing.assert_close(enc(word)[0], torch.cat([forward[0, -1, :3], forward[0, 0, 3:]]))


def test_the_cnn_vector_is_the_max_over_positions_of_each_filter_then_tanh():
    torch.manual_seed(0)
    enc = CharEncoder(20, "cnn", dim=4, filters=3, widths=[3]).eval()
    word = _words(2)  # shorter than the width: zero-padded on both sides
    x = enc.embedding(word).transpose(1, 2)
    y = enc.convs[0](torch.nn.functional.pad(x, (1, 1)))  # [1, 3, 2]: one output per character
    torch.testing.assert_close(enc(word)[0], torch.tanh(y.amax(dim=2))[0])


def test_the_padding_character_is_zero_and_the_rest_follow_ma_and_hovy():
    torch.manual_seed(0)
    enc = CharEncoder(50, "cnn", dim=30)
    weight = enc.embedding.weight.detach()
    assert weight[0].eq(0).all() and weight[1:].abs().max() <= (3 / 30) ** 0.5


def test_character_dropout_acts_in_training_only():
    torch.manual_seed(0)
    enc = CharEncoder(20, "bigru", dim=6, hidden=4, dropout=0.5)
    plain = CharEncoder(20, "bigru", dim=6, hidden=4)
    plain.load_state_dict(enc.state_dict())
    words = _words(5, 3, 6)
    torch.testing.assert_close(enc.eval()(words), plain.eval()(words))
    enc.train(), plain.train()
    assert not torch.allclose(enc(words), enc(words))
    torch.testing.assert_close(plain(words), plain(words))


def test_unknown_kinds_and_widths_are_refused():
    with pytest.raises(ValueError, match="kind"):
        CharEncoder(10, "lstm")
    with pytest.raises(ValueError, match="widths"):
        CharEncoder(10, "cnn", widths=[])
    cfg = compose_config(["embedding.char.kind=cnn", "embedding.char.widths=[]", "paths.runs_dir=/tmp"])
    with pytest.raises(ConfigError, match="embedding.char.widths"):
        validate(cfg)
    with pytest.raises(Exception, match="lstm"):  # the schema names the kinds
        compose_config(["embedding.char.kind=lstm"])


# -- the model ----------------------------------------------------------------------------

class _Data:
    def __init__(self, records, char=True):
        self.vocab = Vocab.build(records, ["tokens"], lowercase=True)
        if char:
            self.vocab.chars = CharVocab.build(records, ["tokens"], max_word_length=20)
        self.label_names = ["a", "b"]
        self.vectors = None
        self.fields = ["tokens"]


def _model(kind="bigru", *extra):
    cfg = compose_config(["task=trec", "embedding=random", f"embedding.char.kind={kind}", "encoder.hidden_size=8", *extra])
    data = _Data(RECORDS + [{"tokens": ["Lyon"], "label": 0}], char=kind != "none")
    torch.manual_seed(0)
    return build_model(cfg, data).eval(), data, cfg


def test_the_model_reads_each_words_characters_beside_its_vector():
    model, data, cfg = _model()
    assert embedding_width(cfg) == 50 + 50 and model.encoder.input_size == 100
    batch = collate(numericalise(RECORDS, data.vocab, ["tokens"]), ["tokens"])
    seen = []
    real_embed = model.embed

    def spy(ids):
        seen.append(real_embed(ids))
        return seen[-1]

    model.embed = spy
    model(batch)
    (x,) = seen
    assert x.shape == (2, 4, 100)
    torch.testing.assert_close(x[0, 0, :50], x[1, 0, :50])  # "Paris" and "paris": one word vector ...
    assert not torch.allclose(x[0, 0, 50:], x[1, 0, 50:])  # ... and two spellings
    assert x[1, 3].eq(0).all()  # padding: no word vector, no characters


def test_a_word_outside_the_vocabulary_keeps_its_characters():
    model, data, _ = _model()
    records = [{"tokens": ["Rome", "Oslo"], "label": 0}]
    batch = collate(numericalise(records, data.vocab, ["tokens"]), ["tokens"])
    assert batch["tokens"].tolist() == [[1, 1]]  # both unknown words
    chars = model.char_encoder(batch["tokens_chars"])
    assert not torch.allclose(chars[0, 0], chars[0, 1])


def test_ids_that_are_not_a_batch_field_are_spelled_from_the_vocabulary():
    """A generator's previous words: the vocabulary's (lower-cased) spelling of each id."""
    model, data, _ = _model()
    ids = torch.tensor([[data.vocab.stoi["paris"], 0]])
    x = model.embed(ids)
    spelled = torch.tensor([[list(data.vocab.chars.encode_word("paris"))]])
    torch.testing.assert_close(x[0, 0, 50:], model.char_encoder(spelled)[0, 0])
    assert x[0, 1].eq(0).all()


def test_without_the_character_encoder_the_model_is_as_before():
    model, data, cfg = _model("none")
    assert model.char_encoder is None and embedding_width(cfg) == 50
    assert not any(k.startswith("char_encoder") for k in model.state_dict())


def test_the_character_encoder_needs_the_vocabularys_characters():
    cfg = compose_config(["task=trec", "embedding=random", "embedding.char.kind=cnn"])
    with pytest.raises(ConfigError, match="no characters"):
        build_model(cfg, _Data(RECORDS, char=False))


# -- run identity -------------------------------------------------------------------------

def _identity_cfg(tmp_path, *extra):
    return compose_config(["task=picking", "encoder=bilstm", "embedding=random", f"paths.cache_dir={tmp_path}", *extra])


def test_the_neutral_default_is_the_schemas_default():
    """A field added to CharConf must be added to the registered default too, or every run moves."""
    default = compose_config(["task=picking"]).embedding.char
    assert identity.NEUTRAL_DEFAULTS[("embedding", "char")] == dict(default) == {
        k: (v.value if hasattr(v, "value") else v) for k, v in vars(CharConf()).items()}


def test_no_character_encoder_leaves_the_identity_as_before(tmp_path):
    plain = _identity_cfg(tmp_path)
    assert "char" not in identity.identity_config(plain)["embedding"]
    assert "char" not in component_versions(plain)


def test_a_character_encoder_is_part_of_the_identity_with_its_version(tmp_path, monkeypatch):
    plain, char = _identity_cfg(tmp_path), _identity_cfg(tmp_path, "embedding.char.kind=bigru")
    assert run_identity(char) != run_identity(plain)
    assert identity.identity_config(char)["embedding"]["char"]["hidden"] == 25  # every setting, defaults included
    assert component_versions(char)["char"] == f"rnnbench.nn.char_encoder.CharEncoder:{CharEncoder.version}"
    assert run_identity(_identity_cfg(tmp_path, "embedding.char.kind=bigru", "embedding.char.hidden=30")) != run_identity(char)
    before = run_identity(char), run_identity(plain)
    monkeypatch.setattr(CharEncoder, "version", CharEncoder.version + 1)
    assert run_identity(char) != before[0] and run_identity(plain) == before[1]


# -- a run --------------------------------------------------------------------------------

@pytest.mark.slow
def test_a_trec_run_with_characters_trains_saves_and_predicts(tmp_path, real_data, monkeypatch):
    """``train.py task=trec embedding.char.kind=bigru trainer=smoke``, then ``rnnbench.load`` and predict."""
    from rnnbench import inference
    from rnnbench.run import train
    from tests.helpers import smoke_config

    monkeypatch.setenv("RNNBENCH_DATA", str(real_data))
    cfg = smoke_config(tmp_path, "task=trec", "embedding=random", "embedding.char.kind=bigru", "encoder.hidden_size=16",
                       f"paths.cache_dir={tmp_path / 'cache'}")
    record = train(cfg, say=lambda _: None)
    assert json.loads(json.dumps(record["versions"]))["char"].endswith(f":{CharEncoder.version}")
    (run_dir,) = [p.parent for p in (tmp_path / "runs").rglob("record.json")]
    loaded = inference.load(run_dir)
    assert loaded.vocab.chars is not None and loaded.model.char_encoder is not None
    assert loaded.predict("How far is Reykjavik from Oslo ?") in loaded.label_names
