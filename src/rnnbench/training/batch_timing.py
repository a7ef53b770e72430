"""Training time per batch of a config's model on its task's data, for the benchmark scripts that
compare encoders or sizes by ratios measured in one process (scripts/bench_epoch.py,
scripts/bench_fhe_budget.py). Never called by a run."""
from __future__ import annotations

import time

import torch

from rnnbench.data.batching import batch_indices, collate
from rnnbench.training.loop import build_optimizer
from rnnbench.training.model import build_model


def seconds_per_batch(cfg, data, batches: int, first: int = 0) -> float:
    """Mean seconds of a training step (forward, loss, backward, optimizer step) over ``batches``
    batches of the first epoch's order, starting at batch ``first``, after one more batch that
    warms the model up (not counted). The model is built afresh at seed 0."""
    torch.manual_seed(0)
    model = build_model(cfg, data)
    optimizer = build_optimizer(cfg, [p for p in model.parameters() if p.requires_grad])
    train = data.splits["train"]
    order = batch_indices(train, data.fields, cfg.trainer.batch_size, shuffle=True, seed=1, epoch=0)[first:first + batches + 1]
    times = []
    for idx in order:
        batch = collate([train[i] for i in idx], data.fields)
        start = time.perf_counter()
        _, loss = model(batch)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        times.append(time.perf_counter() - start)
    return sum(times[1:]) / len(times[1:])  # the first batch is warm-up
