"""AspectHead (MZU paper's ABSA model): aspect vector, context for conditional encoders, every encoder,
and a short learning check on the real SemEval restaurant data."""
from __future__ import annotations

import pytest
import torch
from torch import nn

from rnnbench.compose import compose_config
from rnnbench.data.batching import collate
from rnnbench.encoders.base import Encoder, EncoderOutput
from rnnbench.encoders.build import build_encoder, known_encoders
from rnnbench.heads.aspect import AspectHead
from rnnbench.training.loop import fit
from rnnbench.training.model import TaskModel
from tests.helpers import assert_scores_independent_of_batching, parameters_without_gradient

EMB, VOCAB, CLASSES, QUESTION = 12, 40, 4, 6
FIELDS = ["tokens", "aspect"]


def make_encoder(name: str, context_size: int, hidden: int = 8):
    cfg = compose_config([f"encoder={name}"]).encoder
    if "hidden_size" in cfg:
        cfg.hidden_size = hidden
    if "context_size" in cfg:
        cfg.context_size = context_size  # what the task config does through task.head.question_dim
    torch.manual_seed(0)
    return build_encoder(cfg, AspectHead.encoder_input_size(EMB))


def make_model(encoder_name: str = "bilstm", question_dim: int = QUESTION) -> TaskModel:
    torch.manual_seed(0)
    embedding = nn.Embedding(VOCAB, EMB, padding_idx=0)
    encoder = make_encoder(encoder_name, question_dim)
    return TaskModel(embedding, encoder, AspectHead(EMB, encoder.output_size, CLASSES, question_dim=question_dim))


def batch_of(examples: list[tuple[list[int], list[int], int]]) -> dict:
    records = [{"id": str(i), "tokens": t, "aspect": a, "label": y, "hds": i % 2 == 0} for i, (t, a, y) in enumerate(examples)]
    return collate(records, FIELDS)


SHORT = ([3, 4, 5, 6], [4], 1)
LONG = ([7, 8, 9, 10, 11, 12, 13, 14, 15], [10, 11, 12], 3)
MIDDLE = ([16, 17, 18, 19, 20, 21], [18, 19], 0)


class RecordingEncoder(Encoder):
    """A stand-in encoder that keeps the context it was given."""

    def __init__(self, input_size: int):
        super().__init__(input_size, input_size)
        self.seen = "not called"

    def forward(self, x, mask, context=None):
        self.seen = context
        return EncoderOutput(states=x * mask.unsqueeze(-1))


def test_aspect_vector_is_the_mean_of_its_word_embeddings():
    model = make_model().eval()
    batch = batch_of([SHORT, LONG])
    got = model.head.aspect_vector(batch, model.embed)
    weight = model.embedding.weight.detach()
    torch.testing.assert_close(got[0], weight[4])
    torch.testing.assert_close(got[1], weight[[10, 11, 12]].mean(0))


def test_shapes_loss_and_features():
    model = make_model().eval()
    out, _ = model(batch_of([SHORT, LONG, MIDDLE]))
    assert out.logits.shape == (3, CLASSES) and out.log_likelihood.shape == (3,)
    torch.testing.assert_close(out.loss, nn.functional.cross_entropy(out.logits, torch.tensor([1, 3, 0])))
    # The softmax layer reads [mean-pooled sentence, aspect vector].
    assert model.head.out.in_features == model.encoder.output_size + EMB


@pytest.mark.parametrize("question_dim, expected", [(QUESTION, (2, QUESTION)), (0, None)])
def test_context_given_to_the_encoder(question_dim, expected):
    torch.manual_seed(0)
    embedding = nn.Embedding(VOCAB, EMB, padding_idx=0)
    encoder = RecordingEncoder(EMB)
    model = TaskModel(embedding, encoder, AspectHead(EMB, EMB, CLASSES, question_dim=question_dim))
    model(batch_of([SHORT, LONG]))
    if expected is None:
        assert encoder.seen is None
    else:
        assert encoder.seen.shape == expected
        aspect = model.head.aspect_vector(batch_of([SHORT, LONG]), model.embed)
        torch.testing.assert_close(encoder.seen, model.head.context(aspect))


@pytest.mark.parametrize("name", known_encoders())
def test_prediction_does_not_depend_on_batch_padding(name):
    """An example scores the same alone as batched with a longer sentence and a longer aspect."""
    model = make_model(name).eval()
    assert_scores_independent_of_batching(model, batch_of, [SHORT, LONG, MIDDLE])


def test_gradients_reach_every_parameter():
    model = make_model(question_dim=0).train()
    _, loss = model(batch_of([SHORT, LONG, MIDDLE]))
    loss.backward()
    assert not parameters_without_gradient(model)


def test_conditional_encoder_trains_the_context_projection():
    model = make_model("fhe").train()
    _, loss = model(batch_of([SHORT, LONG, MIDDLE]))
    loss.backward()
    assert torch.any(model.head.context.weight.grad != 0)


def test_real_data_loss_falls(real_data, tmp_path, monkeypatch):
    """A few dozen batches of a small BiLSTM on SemEval restaurants: the training loss falls,
    and the HDS subset accuracy is reported beside the overall one."""
    monkeypatch.setenv("RNNBENCH_DATA", str(real_data))
    cfg = compose_config([
        "task=absa_restaurant", "encoder=bilstm", "encoder.hidden_size=32", f"paths.runs_dir={tmp_path}",
        "trainer.epochs=1", "trainer.max_batches=40", "trainer.lr=3e-3", "trainer.num_threads=1", "trainer.progress=false",
    ])
    (tmp_path / "run").mkdir()
    record = fit(cfg, tmp_path / "run", say=lambda _: None)
    epoch = record["history"][0]
    assert epoch["train_loss_end"] < epoch["train_loss_start"] - 0.1, epoch
    assert set(record["test"]) == {"accuracy", "accuracy_hds"}
    assert record["data"]["test"] == 1134
