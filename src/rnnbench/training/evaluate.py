"""Evaluation over a split, with the LSTM baseline paper's Monte Carlo dropout option."""
from __future__ import annotations

import contextlib

import torch
from torch import nn

from rnnbench.data.batching import batch_indices, collate, to_device
from rnnbench.metrics import score as metric_score
from rnnbench.progress import progress_bar


def _dropout_only_train(model: nn.Module) -> None:
    """Eval mode everywhere except dropout layers (MC dropout keeps them sampling)."""
    model.eval()
    for m in model.modules():
        if isinstance(m, nn.Dropout):
            m.train()


@torch.no_grad()
def predict(model, records, fields, batch_size, device, max_batches=None, mc_samples=0, mc_combine="vote",
            autocast=contextlib.nullcontext, rank=0, world=1, progress=None, bar: str | None = None):
    """The head's predictions (sorted by record index), those indices, mean loss and averaged encoder stats.

    ``mc_samples`` > 0 (classification heads) predicts from that many dropout samples,
    combined by majority vote or by averaging probabilities. ``autocast``: the context the
    forward passes run in (mixed precision). ``rank``/``world``: predict every ``world``-th
    batch from ``rank`` (a multi-GPU run; ``gather_predictions`` puts the ranks' parts together).
    ``progress`` (a ``PredictionProgress``, one process only): saves the pass as it goes and
    resumes a saved one, ending with the predictions of an uninterrupted pass. ``bar``: show a progress
    bar with this label (a Monte Carlo test pass takes hours on a CPU)."""
    batches = batch_indices(records, fields, batch_size, shuffle=False)
    if max_batches is not None:
        batches = batches[:max_batches]
    batches = batches[rank::world]
    predictions: dict[int, object] = {}
    total_loss, count, stats, done = 0.0, 0, {}, 0
    saved = progress.resume() if progress is not None else None
    if saved is not None:
        predictions, total_loss, count, stats, done = (saved[k] for k in ("predictions", "total_loss", "count", "stats", "done"))
    remaining = progress_bar(batches[done:], total=len(batches), initial=done, desc=bar, disable=bar is None, leave=False, unit="batch")
    for done, idx in enumerate(remaining, start=done + 1):
        batch = to_device(collate([records[i] for i in idx], fields), device)
        model.eval()
        with autocast():
            out, loss = model(batch)
        total_loss += loss.item() * len(idx)
        count += len(idx)
        for k, v in out.encoder_output.stats.items():
            stats[k] = stats.get(k, 0.0) + float(v) * len(idx)
        if mc_samples > 0:
            if out.logits is None:
                raise ValueError("trainer.mc_dropout_samples needs a classification head (this head gives no class logits)")
            _dropout_only_train(model)
            with autocast():
                samples = torch.stack([model(batch)[0].logits.float() for _ in range(mc_samples)])  # [S, B, C]
            model.eval()
            if mc_combine == "mean":
                pred = samples.softmax(-1).mean(0).argmax(-1)
            elif mc_combine == "vote":
                votes = torch.nn.functional.one_hot(samples.argmax(-1), samples.shape[-1]).sum(0)
                pred = votes.argmax(-1)  # ties: the lower class id
            else:
                raise ValueError(f"trainer.mc_dropout_combine must be 'vote' or 'mean', got {mc_combine!r}")
            pred = pred.tolist()
        else:
            pred = model.head.decode(out, batch)
        for i, p in zip(idx, pred):
            predictions[i] = p
        if progress is not None:
            progress.after_batch(done, len(batches), predictions, total_loss, count, stats)
    order = sorted(predictions)
    return [predictions[i] for i in order], order, total_loss / max(count, 1), {k: v / max(count, 1) for k, v in stats.items()}


def score(task_cfg, predictions: list, records: list[dict]) -> dict[str, float]:
    """The task's metrics (and their subsets) over raw ``records``, aligned with ``predictions``."""
    subsets = task_cfg.get("metric_subsets") or {}
    return metric_score(list(task_cfg.metrics), predictions, records, dict(subsets))


def gather_predictions(parts: list[tuple]) -> tuple:
    """Put together ``predict``'s results of every rank (each predicted its share of the
    batches): predictions in record order, the mean loss and stats over all examples."""
    if len(parts) == 1:
        return parts[0]
    predictions: dict[int, object] = {}
    total_loss, count, stats = 0.0, 0, {}
    for preds, order, loss, part_stats in parts:
        predictions.update(zip(order, preds))
        total_loss += loss * len(order)
        count += len(order)
        for k, v in part_stats.items():
            stats[k] = stats.get(k, 0.0) + v * len(order)
    order = sorted(predictions)
    return [predictions[i] for i in order], order, total_loss / max(count, 1), {k: v / max(count, 1) for k, v in stats.items()}
