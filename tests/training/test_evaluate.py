"""Monte Carlo dropout at test time (LSTM baseline paper): majority vote and probability mean."""
from __future__ import annotations

import torch
from torch import nn

from rnnbench.training.evaluate import predict


class _Scripted(nn.Module):
    """Returns pre-set logits per call, so the combination rule can be checked by hand."""

    def __init__(self, script):
        super().__init__()
        self.script = list(script)
        self.drop = nn.Dropout(0.5)
        self.head = type("H", (), {"decode": staticmethod(lambda out, batch: out.logits.argmax(-1).tolist())})()
        self.train_flags = []

    def forward(self, batch):
        self.train_flags.append(self.drop.training)
        logits = self.script.pop(0)
        out = type("O", (), {"logits": logits, "encoder_output": type("E", (), {"stats": {}})()})()
        return out, torch.tensor(0.0)


def _records():
    return [{"tokens": [2], "label": 0}]


def test_vote_and_mean_can_disagree_and_each_follows_its_rule():
    deterministic = torch.tensor([[0.0, 1.0, 0.0]])
    # Two samples vote class 0 weakly, one votes class 2 with near certainty.
    samples = [torch.tensor([[2.0, 1.9, 0.0]]), torch.tensor([[2.0, 1.9, 0.0]]), torch.tensor([[-9.0, -9.0, 9.0]])]
    vote_model = _Scripted([deterministic, *samples])
    preds, *_ = predict(vote_model, _records(), ["tokens"], 8, torch.device("cpu"), mc_samples=3, mc_combine="vote")
    assert preds == [0]
    assert vote_model.train_flags == [False, True, True, True]  # dropout sampling only for the MC draws
    mean_model = _Scripted([deterministic, *samples])
    preds, *_ = predict(mean_model, _records(), ["tokens"], 8, torch.device("cpu"), mc_samples=3, mc_combine="mean")
    assert preds == [2]


def test_without_mc_the_deterministic_prediction_is_used():
    model = _Scripted([torch.tensor([[0.0, 1.0, 0.0]])])
    preds, *_ = predict(model, _records(), ["tokens"], 8, torch.device("cpu"))
    assert preds == [1] and model.train_flags == [False]
