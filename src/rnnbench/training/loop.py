"""The training loop: optimise, evaluate on dev each epoch, keep the best, test once.

Short enough to read in one sitting. Resuming: a checkpoint holds the model,
optimiser, RNG state and the position (epoch, batch) reached; batch order is a
function of (seed, epoch), so a resumed run replays exactly what is missing.
"""
from __future__ import annotations

import math
import platform
import resource
import subprocess
import time
from pathlib import Path

import torch
from omegaconf import DictConfig, OmegaConf

from rnnbench.data.batching import batch_indices, collate, to_device
from rnnbench.data.prepare import TaskData, prepare
from rnnbench.errors import ConfigError, RunInterrupted, TrainingDiverged
from rnnbench.metrics import check_names
from rnnbench.progress import progress_bar
from rnnbench.metrics import implementations as metric_implementations
from rnnbench.results.identity import component_versions, data_fingerprint, run_identity
from rnnbench.results.records import PREDICTIONS, write_lines_atomic
from rnnbench.training import checkpoint
from rnnbench.training.evaluate import predict, score
from rnnbench.training.loggers import make_logger
from rnnbench.training.model import build_model

REPO = Path(__file__).resolve().parents[3]


def _device(name: str) -> torch.device:
    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    return torch.device(name)


def _optimizer(cfg, params):
    t = cfg.trainer
    if t.optimizer == "adam":
        return torch.optim.Adam(params, lr=t.lr, weight_decay=t.weight_decay)
    if t.optimizer == "adadelta":
        return torch.optim.Adadelta(params, lr=t.lr, weight_decay=t.weight_decay)
    if t.optimizer == "sgd":
        return torch.optim.SGD(params, lr=t.lr, weight_decay=t.weight_decay)
    raise ValueError(f"trainer.optimizer must be adam, adadelta or sgd; got {t.optimizer!r}")


def _hardware(device: torch.device) -> dict:
    info = {"device": str(device), "torch": torch.__version__, "threads": torch.get_num_threads(), "machine": platform.machine(), "python": platform.python_version()}
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                info["cpu"] = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    import os

    info["cpu_count"] = os.cpu_count()
    if device.type == "cuda":
        info["gpu"] = torch.cuda.get_device_name(device)
    return info


def _git_commit() -> str:
    try:
        head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=REPO, capture_output=True, text=True, timeout=5).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=REPO, capture_output=True, text=True, timeout=5).stdout.strip()
        return head + ("-dirty" if dirty else "") if head else "unknown"
    except (OSError, subprocess.SubprocessError):
        return "unknown"


def _truncated(splits: dict, fields: list[str], limit: int | None) -> dict:
    if limit is None:
        return splits
    return {name: [{**r, **{f: r[f][:limit] for f in fields}} for r in records] for name, records in splits.items()}


def fit(cfg: DictConfig, run_dir: Path, say=print, data: TaskData | None = None) -> dict:
    """Train one run in ``run_dir`` (resuming if it holds a checkpoint); return its record.

    ``data`` lets a caller that runs many configs on one task prepare it once (tests).
    """
    t = cfg.trainer
    if t.num_threads:
        torch.set_num_threads(t.num_threads)
    device = _device(t.device)
    check_names(cfg.task.metrics)  # a typo in a metric name fails now, not after the first epoch
    torch.manual_seed(cfg.seed)
    data = data or prepare(cfg)
    torch.manual_seed(cfg.seed)  # model init does not depend on how data was prepared
    model = build_model(cfg, data).to(device)
    optimizer = _optimizer(cfg, [p for p in model.parameters() if p.requires_grad])
    splits = _truncated(data.splits, data.fields, t.truncate)
    train, dev, test = splits["train"], splits["dev"], splits["test"]
    n_params = model.encoder.num_parameters()
    say(f"{cfg.task.name} / {cfg.encoder.name} / seed {cfg.seed}: {len(train)} train, {len(dev)} dev, {len(test)} test; "
        f"vocab {len(data.vocab)}; encoder parameters {n_params:,}; run folder {run_dir}")

    state = {"epoch": 0, "batch": 0, "best": None, "best_epoch": -1, "bad_epochs": 0, "history": [],
             "epoch_seconds": 0.0, "train_seconds": 0.0, "tokens": 0, "step": 0}
    saved = checkpoint.load_for_resume(run_dir, device, say)  # a damaged last.pt is moved aside: restart
    if saved is not None:
        model.load_state_dict(saved["model"])
        optimizer.load_state_dict(saved["optimizer"])
        state = saved["state"]
        checkpoint.set_rng_state(saved["rng"])
        say(f"resuming from epoch {state['epoch'] + 1}, batch {state['batch']}")

    def save_last():
        checkpoint.save(run_dir / checkpoint.LAST, model=model.state_dict(), optimizer=optimizer.state_dict(), state=state, rng=checkpoint.rng_state())

    logger = make_logger(cfg, run_dir, run_dir.name)
    log_every = cfg.logger.get("log_every_n_steps") or 0  # 0: per epoch only
    select = cfg.task.select_metric
    lower_is_better = cfg.task.get("select_mode", "max") == "min"  # e.g. bits per character
    while state["epoch"] < t.epochs:
        epoch = state["epoch"]
        examples, fields = model.head.training_records(train, data.fields, cfg.seed, epoch)
        batches = batch_indices(examples, fields, t.batch_size, shuffle=True, seed=cfg.seed, epoch=epoch, bucket_size=t.bucket_size)
        if t.max_batches is not None:
            batches = batches[: t.max_batches]
        if not batches:
            raise ConfigError(f"{cfg.task.name}: epoch {epoch + 1} has no training batches ({len(examples)} training examples); check the training split")
        model.train()
        started = time.perf_counter()
        bar = progress_bar(batches[state["batch"] :], desc=f"epoch {epoch + 1}/{t.epochs}", initial=state["batch"], total=len(batches), disable=not t.progress, leave=False)
        for idx in bar:
            batch = to_device(collate([examples[i] for i in idx], fields), device)
            out, loss = model(batch)
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            if t.grad_clip:
                torch.nn.utils.clip_grad_norm_(model.parameters(), t.grad_clip)
            optimizer.step()
            # The task loss alone: the total adds encoder terms (MZU disagreement, FHE policy)
            state.setdefault("losses", []).append(out.loss.item())
            if not (math.isfinite(state["losses"][-1]) and math.isfinite(loss.item())):
                raise TrainingDiverged(f"the training loss is {state['losses'][-1]} at epoch {epoch + 1}, batch {state['batch'] + 1} (trainer.lr={t.lr}): "
                                       "the run diverged and nothing was recorded; lower trainer.lr")
            state["batch"] += 1
            state["step"] += 1
            if log_every and state["step"] % log_every == 0:  # the only extra host sync: on logging steps
                logger.log({"train_loss_step": out.loss.item()}, step=state["step"])
            state["tokens"] += int(sum(batch[f"{f}_mask"].sum() for f in fields))
            bar.set_postfix(loss=f"{loss.item():.3f}")
            if state["batch"] % t.checkpoint_every == 0:
                state["epoch_seconds"] += time.perf_counter() - started
                started = time.perf_counter()
                save_last()
            if checkpoint.stop_requested():  # Ctrl-C: save at this batch boundary and stop
                state["epoch_seconds"] += time.perf_counter() - started
                save_last()
                raise RunInterrupted(f"interrupted at epoch {epoch + 1}, batch {state['batch']}; checkpoint saved: run the same command to resume ({run_dir})")
        epoch_seconds = state["epoch_seconds"] + time.perf_counter() - started
        state["train_seconds"] += epoch_seconds
        state["epoch_seconds"] = 0.0
        preds, order, dev_loss, stats = predict(model, dev, data.fields, t.eval_batch_size, device, t.max_eval_batches)
        dev_scores = score(cfg.task, preds, [data.raw["dev"][i] for i in order])
        if state["best"] is None:
            improved = True
        else:
            improved = dev_scores[select] < state["best"] if lower_is_better else dev_scores[select] > state["best"]
        losses, state["losses"] = state.pop("losses", []), []
        window = max(1, len(losses) // 5)  # first and last fifth of the epoch: did the loss fall?
        entry = {"epoch": epoch + 1, "train_seconds": epoch_seconds, "train_loss": sum(losses) / max(len(losses), 1),
                 "train_loss_start": sum(losses[:window]) / window, "train_loss_end": sum(losses[-window:]) / window,
                 "dev_loss": dev_loss, **{f"dev_{k}": v for k, v in dev_scores.items()}, **stats}
        state["history"].append(entry)
        logger.log(entry, step=state["step"])
        # Both losses: a ranker's dev loss is 0 by construction (dev batches hold no sampled pairs).
        say(f"epoch {epoch + 1}: dev {select} {dev_scores[select]:.4f} (train loss {entry['train_loss']:.4f}, dev loss {dev_loss:.4f})"
            f"{' *best*' if improved else ''}; {epoch_seconds:.1f}s")
        if improved:
            state.update(best=dev_scores[select], best_epoch=epoch + 1, bad_epochs=0, best_dev=dev_scores)
            checkpoint.save(run_dir / checkpoint.BEST, model=model.state_dict())
        else:
            state["bad_epochs"] += 1
        state["epoch"] += 1
        state["batch"] = 0
        stop = t.patience and state["bad_epochs"] >= t.patience
        if stop:
            state["epoch"] = t.epochs  # recorded so a resumed run does not train on
        save_last()
        if checkpoint.stop_requested():
            raise RunInterrupted(f"interrupted after epoch {epoch + 1}; checkpoint saved: run the same command to resume ({run_dir})")
        if stop:
            say(f"early stop: no dev improvement for {t.patience} epochs")

    # Test once, with the best epoch's weights.
    model.load_state_dict(checkpoint.load(run_dir / checkpoint.BEST, device)["model"])
    torch.manual_seed(cfg.seed + 1_000_003)  # MC dropout draws do not depend on training history
    test_started = time.perf_counter()
    preds, order, test_loss, test_stats = predict(model, test, data.fields, t.eval_batch_size, device, t.max_eval_batches, t.mc_dropout_samples, t.mc_dropout_combine)
    test_seconds = time.perf_counter() - test_started
    raw_test = data.raw["test"]
    test_scores = score(cfg.task, preds, [raw_test[i] for i in order])
    write_lines_atomic(
        run_dir / PREDICTIONS,
        [{"id": raw_test[i]["id"], **model.head.prediction_entry(p, raw_test[i], data.label_names)} for i, p in zip(order, preds)],
    )
    logger.log({f"test_{k}": v for k, v in test_scores.items()}, step=state["step"])
    logger.finish()
    say(f"best epoch {state['best_epoch']}: dev {select} {state['best']:.4f}; test {select} {test_scores[select]:.4f}")

    epochs_run = state["history"]
    peak_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return {
        "identity": run_identity(cfg),
        "versions": component_versions(cfg),
        "data_fingerprint": data_fingerprint(cfg),
        "run_dir": str(run_dir),
        "task": cfg.task.name,
        "encoder": cfg.encoder.name,
        "embedding": cfg.embedding.name,
        "seed": cfg.seed,
        "experiment": cfg.get("experiment"),
        "config": OmegaConf.to_container(cfg, resolve=True),
        "git_commit": _git_commit(),
        "encoder_parameters": n_params,
        "model_parameters": sum(p.numel() for p in model.parameters()),
        "best_epoch": state["best_epoch"],
        "epochs_run": len(epochs_run),
        "dev": state.get("best_dev", {}),
        "test": test_scores,
        "test_stats": test_stats,
        "metric_implementations": {k: v for k, v in metric_implementations().items() if k in cfg.task.metrics},
        "history": state["history"],
        "seconds_per_epoch": sum(h["train_seconds"] for h in epochs_run) / max(len(epochs_run), 1),
        "tokens_per_second": state["tokens"] / max(state["train_seconds"], 1e-9),
        # Inference cost: the test pass (scoring excluded) over the examples it predicted.
        "test_seconds": test_seconds,
        "inference_seconds_per_example": test_seconds / max(len(preds), 1),
        "peak_memory_mb": (torch.cuda.max_memory_allocated() / 2**20) if device.type == "cuda" else peak_kb / 1024,
        # max_eval_batches scores part of the test split: a smoke run, which tables refuse
        "test_examples_scored": len(order), "smoke": len(order) < len(test),
        "hardware": _hardware(device),
        "data": {"train": len(train), "dev": len(dev), "test": len(test), "vocab": len(data.vocab), "found_in_embeddings": data.found_in_embeddings},
    }
