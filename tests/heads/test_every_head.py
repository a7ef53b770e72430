"""What the shared embedding layer and the dropout options promise for every head that embeds
tokens: ``embedding.freeze`` decides whether the word vectors learn, the character encoder
(``embedding.char``) reaches the head through the one embedding layer, and ``task.head.dropout``
and ``embedding.dropout`` act in training only.

Each head is built from a task's config on that task's data (a tiny fixture in the original
format where the dataset is not in the data folder, generated data for the synthetic tasks),
with a small encoder, and given one batch of its own training examples.
"""
from __future__ import annotations

from pathlib import Path

import pytest
import torch

from rnnbench.compose import compose_config
from rnnbench.data.batching import collate
from rnnbench.data.prepare import prepare
from rnnbench.training.loop import build_optimizer
from rnnbench.training.model import build_model

FIXTURE_DATA = Path(__file__).resolve().parent.parent / "fixtures" / "data"

# head: (a task with that head, where its data is: "fixture", "real" or None for generated data)
HEAD_TASKS = {
    "classifier": ("trec", "real"),
    "aspect": ("absa_restaurant", "real"),
    "pair_classifier": ("snli", "fixture"),
    "ranker": ("trecqa", "fixture"),
    "mcq": ("race", "fixture"),
    "span": ("searchqa", "fixture"),
    "pointer_generator": ("pointer_copy", None),
    "lm": ("text8", "fixture"),
    "picking": ("picking", None),
}
# A margin no pair of cosines meets, so every triple has a loss (at the paper's 0.1 a small batch may have none).
EXTRA = {"ranker": ["task.head.margin=2.0"]}


@pytest.fixture(scope="module")
def cache_dir(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("cache")


def _data_dir(where: str | None, request) -> str | None:
    if where == "real":
        return str(request.getfixturevalue("real_data"))  # skips, saying so, when the data folder is absent
    return str(FIXTURE_DATA) if where == "fixture" else None


_prepared: dict = {}


def task_model(head: str, request, cache_dir: Path, *overrides: str):
    """(model, batch) for ``head``: its task's config with a small encoder, the overrides, and one
    batch of up to four training examples (as the training loop makes them)."""
    task, where = HEAD_TASKS[head]
    data_dir = _data_dir(where, request)
    encoder = "lstm1" if head == "lm" else "bilstm"  # a language model needs a causal encoder
    args = [f"task={task}", f"encoder={encoder}", "embedding=random", f"paths.cache_dir={cache_dir}",
            *([f"paths.data_dir={data_dir}"] if data_dir else []), *EXTRA.get(head, []), *overrides]
    cfg = compose_config(args)
    cfg.encoder.hidden_size = 8
    key = (task, str(cfg.embedding.char.kind), int(cfg.embedding.char.max_word_length))
    if key not in _prepared:  # the data depends on the task and the character settings only
        _prepared[key] = prepare(cfg)
    data = _prepared[key]
    torch.manual_seed(0)
    model = build_model(cfg, data)
    records, fields = model.head.training_records(data.splits["train"], data.fields, seed=1, epoch=0)
    return model, collate(records[:4], fields), cfg


HEADS = sorted(HEAD_TASKS)


@pytest.mark.parametrize("head", HEADS)
@pytest.mark.parametrize("freeze", [False, True])
def test_embedding_freeze_decides_whether_the_word_vectors_learn(head, freeze, request, cache_dir):
    model, batch, cfg = task_model(head, request, cache_dir, f"embedding.freeze={str(freeze).lower()}")
    before = model.embedding.weight.detach().clone()
    optimizer = build_optimizer(cfg, [p for p in model.parameters() if p.requires_grad])
    model.train()
    _, loss = model(batch)
    loss.backward()
    optimizer.step()
    grad = model.embedding.weight.grad
    if freeze:
        assert grad is None and not model.embedding.weight.requires_grad
        assert torch.equal(model.embedding.weight.detach(), before)
    else:
        assert grad is not None and bool(grad.abs().sum() > 0), f"{head}: the word vectors got no gradient"
        assert not torch.equal(model.embedding.weight.detach(), before), f"{head}: the word vectors did not change"


def _log_likelihood(model, batch, seed: int) -> torch.Tensor:
    torch.manual_seed(seed)
    with torch.no_grad():
        return model(batch)[0].log_likelihood


@pytest.mark.parametrize("head", HEADS)
def test_head_dropout_acts_in_training_only(head, request, cache_dir):
    model, batch, _ = task_model(head, request, cache_dir, "++task.head.dropout=0.5", "embedding.dropout=0.0")
    plain, _, _ = task_model(head, request, cache_dir, "++task.head.dropout=0.0", "embedding.dropout=0.0")
    plain.load_state_dict(model.state_dict())
    model.eval(), plain.eval()
    torch.testing.assert_close(_log_likelihood(model, batch, 1), _log_likelihood(plain, batch, 2))  # off in eval
    model.train(), plain.train()
    assert not torch.equal(_log_likelihood(model, batch, 1), _log_likelihood(model, batch, 2)), f"{head}: no dropout in training"
    # at 0 the option changes nothing in training either
    torch.testing.assert_close(_log_likelihood(plain, batch, 1), _log_likelihood(plain, batch, 2))


@pytest.mark.parametrize("head", ["classifier", "pair_classifier", "picking"])
def test_embedding_dropout_acts_in_training_only(head, request, cache_dir):
    model, batch, _ = task_model(head, request, cache_dir, "embedding.dropout=0.5", "++task.head.dropout=0.0")
    plain, _, _ = task_model(head, request, cache_dir, "++task.head.dropout=0.0")
    plain.load_state_dict(model.state_dict())
    field = {"classifier": "tokens", "pair_classifier": "premise", "picking": "tokens"}[head]
    ids = batch[field]
    model.eval()
    torch.testing.assert_close(model.embed(ids), plain.embed(ids))
    model.train()
    dropped = model.embed(ids)
    kept = dropped != 0
    assert bool((~kept & (plain.embed(ids) != 0)).any())  # some entries dropped ...
    torch.testing.assert_close(dropped[kept], 2 * plain.embed(ids)[kept])  # ... the rest scaled by 1 / (1 - p)


@pytest.mark.parametrize("head", HEADS)
def test_the_character_encoder_reaches_every_head(head, request, cache_dir):
    """The head is built for the wider embedding and the character encoder learns through it."""
    model, batch, cfg = task_model(head, request, cache_dir, "embedding.char.kind=bigru")
    assert model.char_encoder is not None and model.char_encoder.output_size == 50
    model.train()
    _, loss = model(batch)
    loss.backward()
    grad = model.char_encoder.embedding.weight.grad
    assert grad is not None and bool(grad.abs().sum() > 0), f"{head}: the character encoder got no gradient"
    field = next(f for f in batch if f + "_chars" in batch)
    assert model.embed(batch[field]).shape[-1] == cfg.embedding.dim + 50
