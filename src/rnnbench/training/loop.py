"""The training loop: optimise, evaluate on dev each epoch, keep the best, test once.

``fit`` reads top to bottom: build the run (data, model, optimiser), resume from
``last.pt`` if there is one, then per epoch ``train_epoch`` -> ``evaluate`` on dev ->
``end_epoch`` (history, best weights, early stopping) -> checkpoint, and finally
``test_best`` and the record (``results/run_record.py``). Early stopping's patience counts
from the first epoch whose dev score beats the dev split's majority-class score
(``results/patience.py``); a run that never does is recorded as "did not train". The
position reached lives in a ``TrainState`` (``checkpoint.py``); batch order is a function
of (seed, epoch), so a resumed run replays exactly what is missing.

The training step does not wait for the device: losses stay on it and are read back
(``_Losses.flush``) only at logging steps, checkpoints and the end of the epoch.

Under ``torchrun`` (``distributed.py``) every rank runs this same code on its share of
each batch; rank 0 alone writes files and logs.
"""
from __future__ import annotations

import contextlib
import hashlib
import time
from dataclasses import dataclass
from pathlib import Path

import torch
from hydra.utils import instantiate
from omegaconf import DictConfig

from rnnbench.data.batching import batch_indices, collate, to_device
from rnnbench.data.prepare import TaskData, prepare
from rnnbench.errors import ConfigError, RunInterrupted, TrainingDiverged
from rnnbench.kernels import dispatch
from rnnbench.metrics import check_names
from rnnbench.metrics import implementations as metric_implementations
from rnnbench.progress import progress_bar
from rnnbench.results import patience
from rnnbench.results import timing
from rnnbench.results.records import PREDICTIONS, write_lines_atomic
from rnnbench.results.run_record import build_record, reset_peak_memory
from rnnbench.training import checkpoint, distributed
from rnnbench.training.checkpoint import TrainState
from rnnbench.training.distributed import Dist
from rnnbench.training.evaluate import gather_predictions, predict, score
from rnnbench.training.partial_predictions import PARTIAL_TEST, PredictionProgress
from rnnbench.training.loggers import NullLogger, make_logger
from rnnbench.training.model import TaskModel, build_model
from rnnbench.training.precision import Precision, keep_encoder_float32

# trainer.optimizer -> the optimiser class, built as a Hydra partial (lr, weight decay bound)
OPTIMIZERS = {"adam": "torch.optim.Adam", "adadelta": "torch.optim.Adadelta", "sgd": "torch.optim.SGD"}


def build_optimizer(cfg: DictConfig, params) -> torch.optim.Optimizer:
    t = cfg.trainer
    name = str(t.optimizer)
    if name not in OPTIMIZERS:
        raise ConfigError(f"trainer.optimizer must be {', '.join(OPTIMIZERS)}; got {name!r}")
    partial = instantiate({"_target_": OPTIMIZERS[name], "_partial_": True, "lr": t.lr, "weight_decay": t.weight_decay})
    return partial(params)


def _device(name: str, dist: Dist) -> torch.device:
    cuda = torch.cuda.is_available() if name == "auto" else name == "cuda"
    if not cuda:
        return torch.device("cpu")
    return torch.device("cuda", dist.local_rank) if dist.enabled else torch.device("cuda")


def truncated_batch(splits: dict, fields: list[str], limit: int | None) -> dict:
    if limit is None:
        return splits
    return {name: [{**r, **{f: r[f][:limit] for f in fields}} for r in records] for name, records in splits.items()}


@dataclass
class Run:
    """What every step of one run works with (built once by ``fit``)."""

    cfg: DictConfig
    run_dir: Path
    data: TaskData
    splits: dict  # train/dev/test records, truncated to trainer.truncate
    model: TaskModel
    train_model: torch.nn.Module  # what the training step calls: the model, or its DDP wrapper
    optimizer: torch.optim.Optimizer
    device: torch.device
    precision: Precision  # autocast for the forward pass, the fp16 gradient scaler
    dist: Dist  # this process's rank among those training the run (rank 0 of 1 without torchrun)
    logger: object
    say: object
    baseline: float | None = None  # the dev split's majority-class score on the select metric (None: patience counts from epoch 1)
    start_loss: float | None = None  # trainer.start_below_prior times the prior's loss: the training loss a start needs

    def dev_curve(self, state: TrainState) -> list[float | None]:
        return [h.get(f"dev_{self.cfg.task.select_metric}") for h in state.history]

    def started(self, state: TrainState) -> bool:
        """Whether patience counts yet (results/patience.py): an epoch has beaten the majority class,
        with its training loss under ``start_loss`` where the option sets one."""
        return patience.started(self.dev_curve(state), self.baseline, self.lower_is_better(),
                                [h.get("train_loss") for h in state.history], self.start_loss)

    def lower_is_better(self) -> bool:
        return self.cfg.task.get("select_mode", "max") == "min"

    def save_last(self, state: TrainState) -> None:
        """``last.pt``, written by rank 0; every rank's RNG state goes in (a collective: all ranks call it)."""
        rngs = distributed.all_gather(checkpoint.rng_state(), self.dist)
        extra = {"scaler": self.precision.state_dict()} if self.precision.scaler else {}
        if self.dist.enabled:
            extra["rng_ranks"] = rngs
        if self.dist.main:
            checkpoint.save_last(self.run_dir, self.model, self.optimizer, state, rng=rngs[0], **extra)


class _Losses:
    """The training losses of the steps not yet read from the device."""

    def __init__(self):
        self.task: list[torch.Tensor] = []  # the task loss: what the history averages
        self.total: list[torch.Tensor] = []  # the optimised loss (task + encoder terms): checked too

    def add(self, task: torch.Tensor, total: torch.Tensor) -> None:
        self.task.append(task.detach())
        self.total.append(total.detach())

    def flush(self, run: Run, state: TrainState) -> None:
        """Append the pending task losses to ``state.losses`` (one host synchronisation);
        a non-finite loss stops the run, naming the first batch that had one. Several ranks:
        each added its weighted share, summed here into the whole batch's loss."""
        if not self.task:
            return
        losses = distributed.all_reduce_sum(torch.stack([torch.stack(self.task).float(), torch.stack(self.total).float()]), run.dist)
        task = losses[0].tolist() if run.dist.enabled else torch.stack(self.task).tolist()
        finite = torch.isfinite(losses).all(0)
        first_batch = state.batch - len(task)  # batches finished before the pending ones
        self.task, self.total = [], []
        if not bool(finite.all()):
            i = int((~finite).nonzero()[0])
            raise TrainingDiverged(f"the training loss is {task[i]} at epoch {state.epoch + 1}, batch {first_batch + i + 1} (trainer.lr={run.cfg.trainer.lr}): "
                                   "the run diverged and nothing was recorded; lower trainer.lr")
        state.losses.extend(task)


def train_epoch(run: Run, state: TrainState) -> tuple[float, float]:
    """Train the rest of epoch ``state.epoch`` (from ``state.batch``); return its training seconds,
    wall-clock and the process's CPU time (``results/timing.py``)."""
    cfg, t, model = run.cfg, run.cfg.trainer, run.model
    epoch = state.epoch
    examples, fields = model.head.training_records(run.splits["train"], run.data.fields, cfg.seed, epoch)
    batches = batch_indices(examples, fields, t.batch_size, shuffle=True, seed=cfg.seed, epoch=epoch, bucket_size=t.bucket_size)
    if t.max_batches is not None:
        batches = batches[: t.max_batches]
    if not batches:
        raise ConfigError(f"{cfg.task.name}: epoch {epoch + 1} has no training batches ({len(examples)} training examples); check the training split")
    log_every = run.cfg.logger.get("log_every_n_steps") or 0  # 0: per epoch only
    params = [p for p in model.parameters()]
    dist = run.dist
    pending = _Losses()
    model.train()
    started, cpu_started = time.perf_counter(), timing.cpu_seconds()
    bar = progress_bar(batches[state.batch :], desc=f"epoch {epoch + 1}/{t.epochs}", initial=state.batch, total=len(batches),
                       disable=not t.progress or not dist.main, leave=False)
    for idx in bar:
        part, weight = distributed.shard(idx, dist)  # this rank's share of the batch (all of it on one process)
        with run.precision.autocast():
            out, loss = run.train_model(to_device(collate([examples[i] for i in part], fields), run.device))
        task_loss = out.loss  # the task loss alone: the total adds encoder terms (MZU disagreement, FHE policy)
        if dist.enabled:  # DDP averages the ranks' gradients: weighted by each rank's share, that is the batch mean's
            task_loss, loss = task_loss * (weight / dist.world), loss * weight
        run.optimizer.zero_grad(set_to_none=True)
        run.precision.backward(loss)
        run.precision.step(run.optimizer, params, t.grad_clip)  # clip, then step
        pending.add(task_loss, loss / dist.world)  # summed over ranks at the next flush
        state.tokens += sum(len(examples[i][f]) for i in idx for f in fields)  # the whole batch's real positions
        state.batch += 1
        state.step += 1
        log_now = bool(log_every) and state.step % log_every == 0
        saving = state.batch % t.checkpoint_every == 0
        stopping = checkpoint.stop_requested()  # Ctrl-C or SIGTERM: save at this batch boundary and stop
        if dist.enabled:  # several ranks agree on it where they synchronise anyway: checkpoints and logging steps
            stopping = distributed.any_rank(stopping, dist) if log_now or saving else False
        if log_now or saving or stopping:
            pending.flush(run, state)
        if log_now:
            run.logger.log({"train_loss_step": state.losses[-1]}, step=state.step)
            bar.set_postfix(loss=f"{state.losses[-1]:.3f}")
        if saving or stopping:
            state.epoch_seconds += time.perf_counter() - started
            state.epoch_cpu_seconds += timing.cpu_seconds() - cpu_started
            started, cpu_started = time.perf_counter(), timing.cpu_seconds()
            run.save_last(state)
        if stopping:
            raise RunInterrupted(f"interrupted at epoch {epoch + 1}, batch {state.batch}; checkpoint saved: run the same command to resume ({run.run_dir})")
    pending.flush(run, state)
    seconds = state.epoch_seconds + time.perf_counter() - started
    cpu = state.epoch_cpu_seconds + timing.cpu_seconds() - cpu_started
    state.train_seconds += seconds
    state.epoch_seconds = state.epoch_cpu_seconds = 0.0
    return seconds, cpu


@dataclass
class Evaluation:
    predictions: list  # the head's predictions, in record order
    order: list[int]  # the index of each one's record in the split
    scores: dict  # the task's metrics
    loss: float  # mean loss
    stats: dict  # the encoder's statistics, averaged over examples
    seconds: float  # predicting (scoring excluded)


def evaluate(run: Run, split: str, mc_dropout: bool = False, progress: PredictionProgress | None = None) -> Evaluation:
    """Predict ``split`` and score it (``mc_dropout``: with the trainer's Monte Carlo dropout, at test;
    ``progress``: save the pass as it goes, resume a saved one)."""
    t = run.cfg.trainer
    mc = (t.mc_dropout_samples, t.mc_dropout_combine) if mc_dropout else (0, "vote")
    started = time.perf_counter()
    bar = f"{split}{' (MC dropout)' if mc_dropout and t.mc_dropout_samples else ''}" if split == "test" and t.progress and run.dist.main else None
    part = predict(run.model, run.splits[split], run.data.fields, t.eval_batch_size, run.device, t.max_eval_batches, *mc,
                   autocast=run.precision.autocast, rank=run.dist.rank, world=run.dist.world, progress=progress, bar=bar)
    preds, order, loss, stats = gather_predictions(distributed.all_gather(part, run.dist))  # each rank predicted a share
    seconds = time.perf_counter() - started + (progress.earlier_seconds if progress else 0.0)
    scores = score(run.cfg.task, preds, [run.data.raw[split][i] for i in order])
    return Evaluation(preds, order, scores, loss, stats, seconds)


# Encoder statistics that cost a computation of their own (MZU's and the DT-GRU's
# ``candidate_cosine``): an encoder that has them declares ``eval_statistics = False`` and
# computes them in eval while it is True. The loop sets it for the dev passes, which no recorded
# time includes, and for one more pass over the test split after the timed one
# (``test_statistics``); every other caller (the cost benchmark, re-scoring) leaves it off, so
# no measured time includes them. They use no random numbers and no gradients: a run's numbers
# are the same without them (False here: tests show it).
EVAL_STATISTICS = True


@contextlib.contextmanager
def eval_statistics(model: torch.nn.Module):
    """The block's eval passes compute the encoders' ``eval_statistics``; yields whether any module has them."""
    modules = [m for m in model.modules() if hasattr(m, "eval_statistics")] if EVAL_STATISTICS else []
    for m in modules:
        m.eval_statistics = True
    try:
        yield bool(modules)
    finally:
        for m in modules:
            m.eval_statistics = False


def test_statistics(run: Run, test: Evaluation) -> dict:
    """The test pass's statistics, with those only an ``eval_statistics`` pass computes, from a
    second, untimed pass over the test split (plain eval, no Monte Carlo dropout); the timed pass's
    own statistics are kept as they are."""
    with eval_statistics(run.model) as any_module:
        if not any_module:
            return test.stats
        t = run.cfg.trainer
        part = predict(run.model, run.splits["test"], run.data.fields, t.eval_batch_size, run.device, t.max_eval_batches,
                       autocast=run.precision.autocast, rank=run.dist.rank, world=run.dist.world)
        extra = gather_predictions(distributed.all_gather(part, run.dist))[3]
    return {**test.stats, **{k: v for k, v in extra.items() if k not in test.stats}}


def end_epoch(run: Run, state: TrainState, seconds: float, dev: Evaluation) -> None:
    """Add the epoch to the history and the logs, keep the best weights, decide whether to stop."""
    task, t = run.cfg.task, run.cfg.trainer
    dev_scores, dev_loss = dev.scores, dev.loss
    select, lower_is_better = task.select_metric, run.lower_is_better()  # min: e.g. bits per character
    value = dev_scores[select]
    improved = state.best is None or (value < state.best if lower_is_better else value > state.best)
    losses, state.losses = state.losses, []
    window = max(1, len(losses) // 5)  # first and last fifth of the epoch: did the loss fall?
    entry = {"epoch": state.epoch + 1, "train_seconds": seconds, "train_loss": sum(losses) / max(len(losses), 1),
             "train_loss_start": sum(losses[:window]) / window, "train_loss_end": sum(losses[-window:]) / window,
             "dev_loss": dev_loss, **{f"dev_{k}": v for k, v in dev_scores.items()}, **dev.stats}
    state.history.append(entry)
    run.logger.log(entry, step=state.step)
    # Both losses: a ranker's dev loss is 0 by construction (dev batches hold no sampled pairs).
    run.say(f"epoch {state.epoch + 1}: dev {select} {value:.4f} (train loss {entry['train_loss']:.4f}, dev loss {dev_loss:.4f})"
            f"{' *best*' if improved else ''}; {seconds:.1f}s")
    if improved:
        state.best, state.best_epoch, state.best_dev = value, state.epoch + 1, dev_scores
        if run.dist.main:
            checkpoint.save(run.run_dir / checkpoint.BEST, **checkpoint.bundle(run.model, run.cfg, run.data))  # self-contained: rnnbench.load
    # Epochs before the first one that beats the majority-class baseline are not counted.
    state.bad_epochs = patience.bad_epochs_after(state.bad_epochs, improved, run.started(state))
    # An encoder may change its objective after a dev score (FHE Table 3 enforces its sparsity penalty once the
    # dev accuracy is reached): the best epoch is then chosen among the epochs trained with the new objective.
    if run.model.encoder.on_dev_score(value):
        state.best, state.bad_epochs = (float("inf") if lower_is_better else float("-inf")), 0
    state.epoch += 1
    state.batch = 0
    state.stopped = patience.should_stop(state.bad_epochs, t.patience)


def apply_patience_rule(run: Run, state: TrainState) -> None:
    """A resumed state decided by the rule: one saved before the rule existed may have counted
    (and stopped on) epochs before the run beat the majority-class baseline. It goes on from
    where it stopped, as if trained under the rule from the start (batch order and RNG state
    are saved: the result is the same)."""
    if run.started(state) or not (state.bad_epochs or state.stopped):
        return
    if state.stopped:
        run.say(f"epoch {state.epoch}: early stopping ended this run before its dev score beat the majority-class baseline "
                f"({run.baseline:.4f}); it goes on (patience counts from the first epoch that beats it)")
    state.bad_epochs, state.stopped = 0, False


def apply_patience(run: Run, state: TrainState) -> None:
    """A resumed state decided by this run's patience. A run's own checkpoint decides the same
    (its patience is part of its identity); a checkpoint that stopped under a shorter patience,
    carried into a longer one's folder (scripts/patience_check.py), goes on from where it stopped:
    nothing before the stop reads the patience, so the result is the longer run's from the start."""
    if state.stopped and not patience.should_stop(state.bad_epochs, run.cfg.trainer.patience):
        run.say(f"epoch {state.epoch}: stopped {state.bad_epochs} epochs after its best under a shorter patience; "
                f"it goes on under patience {run.cfg.trainer.patience}")
        state.stopped = False


def test_best(run: Run) -> Evaluation:
    """Test once, with the best dev epoch's weights; write the predictions file."""
    raw_test = run.data.raw["test"]
    distributed.barrier(run.dist)  # rank 0 has written best.pt
    run.model.load_state_dict(checkpoint.load(run.run_dir / checkpoint.BEST, run.device)["model"])
    torch.manual_seed(run.cfg.seed + 1_000_003)  # MC dropout draws do not depend on training history
    progress = _test_progress(run)
    test = evaluate(run, "test", mc_dropout=True, progress=progress)
    if run.dist.main:
        write_lines_atomic(
            run.run_dir / PREDICTIONS,
            [{"id": raw_test[i]["id"], **run.model.head.prediction_entry(p, raw_test[i], run.data.label_names)} for i, p in zip(test.order, test.predictions)],
        )
    if progress is not None:
        progress.clear()  # after the predictions file: a crash between the two costs a pass, never a result
    return test


def _test_progress(run: Run) -> PredictionProgress | None:
    """A long test pass (Monte Carlo dropout's, hours on a CPU) is saved as it goes; one process
    only (ranks' RNG streams would each need saving). The key names what the pass computes."""
    t = run.cfg.trainer
    if run.dist.enabled or not t.mc_dropout_samples:
        return None
    key = f"test|{len(run.splits['test'])}|{t.eval_batch_size}|{t.max_eval_batches}|{t.mc_dropout_samples}|{t.mc_dropout_combine}|{_weights_digest(run.model)}"
    return PredictionProgress(run.run_dir / PARTIAL_TEST, key, say=run.say)


def resume(run: Run) -> TrainState:
    """The state to go on from: ``last.pt``'s, or a fresh one. Rank 0 reads it first (and
    moves a damaged one aside), then the other ranks read what it kept."""
    dist, device = run.dist, run.device
    saved = checkpoint.load_for_resume(run.run_dir, device, run.say) if dist.main else None
    if distributed.broadcast(saved is not None, dist) and not dist.main:
        saved = checkpoint.load(run.run_dir / checkpoint.LAST, device)
    if saved is None:
        return TrainState()
    run.model.load_state_dict(saved["model"])
    run.optimizer.load_state_dict(saved["optimizer"])
    ranks = saved.get("rng_ranks") or []
    checkpoint.set_rng_state(ranks[dist.rank] if len(ranks) == dist.world else saved["rng"])
    run.precision.load_state_dict(saved.get("scaler"))
    state = TrainState.from_dict(saved["state"])
    run.say(f"resuming from epoch {state.epoch + 1}, batch {state.batch}")
    return state


def _weights_digest(model: torch.nn.Module) -> str:
    digest = hashlib.sha256()
    for name, tensor in model.state_dict().items():
        digest.update(name.encode())
        digest.update(tensor.detach().cpu().contiguous().view(torch.uint8).numpy().tobytes())
    return digest.hexdigest()[:16]


def fit(cfg: DictConfig, run_dir: Path, say=print, data: TaskData | None = None, identity: str | None = None) -> dict:
    """Train one run in ``run_dir`` (resuming if it holds a checkpoint); return its record.

    ``data`` lets a caller that runs many configs on one task prepare it once (tests);
    ``identity``: the run's identity where the caller computed it for ``run_dir`` (the record keeps it).
    """
    t = cfg.trainer
    if t.num_threads:
        torch.set_num_threads(t.num_threads)
    dist = distributed.current()
    say = say if dist.main else (lambda _: None)
    device = _device(str(t.device), dist)
    dispatch.reset_used()  # the record says what each recurrence kernel ran
    memory_scope = reset_peak_memory(device)  # this run's peak, not the largest of the process's earlier runs
    check_names(cfg.task.metrics)  # a typo in a metric name fails now, not after the first epoch
    torch.manual_seed(cfg.seed)
    data = data or prepare(cfg)
    torch.manual_seed(cfg.seed)  # model init does not depend on how data was prepared
    model = build_model(cfg, data).to(device)
    model.encoder.use_kernels(t.kernel_impl)  # what every recurrence kernel of the model runs
    precision = Precision(t.precision, device)
    if precision.enabled:
        keep_encoder_float32(model.encoder, device.type)  # the recurrence stays in float32
    trainable = [p for p in model.parameters() if p.requires_grad]
    if not trainable:  # e.g. encoder=none under a head with no weights of its own: training would change nothing
        raise ConfigError(f"nothing to train: task={cfg.task.name} with encoder={cfg.encoder.name} has no trainable parameters "
                          "(frozen embeddings, no encoder weights, a head without weights); use an encoder with weights or embedding.freeze=false")
    optimizer = build_optimizer(cfg, trainable)
    splits = truncated_batch(data.splits, data.fields, t.truncate)
    baseline = patience.task_baseline(cfg.task, data.raw["dev"])
    start_loss = patience.start_bound(t.get("start_below_prior"), baseline, data.raw["train"])
    run = Run(cfg, run_dir, data, splits, model, model, optimizer, device, precision, dist, logger=NullLogger(), say=say,
              baseline=baseline, start_loss=start_loss)
    n_params = model.encoder.num_parameters()
    say(f"{cfg.task.name} / {cfg.encoder.name} / seed {cfg.seed}: {len(splits['train'])} train, {len(splits['dev'])} dev, {len(splits['test'])} test; "
        f"vocab {len(data.vocab)}; encoder parameters {n_params:,}; run folder {run_dir}")

    if start_loss is not None:
        say(f"patience counts from the first epoch whose dev {cfg.task.select_metric} beats the majority class ({baseline:.4f}) "
            f"with a training loss under {start_loss:.4f} ({float(t.start_below_prior):g} x the prior's loss)")
    state = resume(run)  # a damaged last.pt is moved aside: restart
    apply_patience_rule(run, state)
    apply_patience(run, state)
    run.train_model = distributed.wrap(model, dist, device)
    if dist.main:
        run.logger = make_logger(cfg, run_dir, run_dir.name)
    while not state.finished(t.epochs):
        seconds, cpu_seconds = train_epoch(run, state)
        load = timing.load_average()  # at the end of the epoch's training, before the dev pass
        with eval_statistics(run.model):
            dev = evaluate(run, "dev")
        end_epoch(run, state, seconds, dev)
        state.history[-1].update({timing.CPU_SECONDS: cpu_seconds, timing.LOAD: load})
        run.save_last(state)
        if distributed.any_rank(checkpoint.stop_requested(), dist):
            raise RunInterrupted(f"interrupted after epoch {state.epoch}; checkpoint saved: run the same command to resume ({run_dir})")
        if state.stopped:
            say(f"early stop: no dev improvement for {t.patience} epochs")
    status = patience.outcome(run.dev_curve(state), baseline, len(state.history), t.epochs, run.lower_is_better())
    if status != patience.TRAINED:
        say(f"did not train: no dev {cfg.task.select_metric} beat the majority-class baseline {baseline:.4f} in {len(state.history)} epochs")

    test = test_best(run)
    test_stats = test_statistics(run, test)
    run.logger.log({f"test_{k}": v for k, v in test.scores.items()}, step=state.step)
    run.logger.finish()
    select = cfg.task.select_metric
    say(f"best epoch {state.best_epoch}: dev {select} {state.best:.4f}; test {select} {test.scores[select]:.4f}")
    return build_record(
        cfg, run_dir, identity=identity, device=device, encoder_parameters=n_params, model_parameters=sum(p.numel() for p in model.parameters()),
        best_epoch=state.best_epoch, best_dev=state.best_dev, history=state.history, tokens=state.tokens, train_seconds=state.train_seconds,
        status=status, majority_baseline=baseline, test_scores=test.scores, test_stats=test_stats, test_seconds=test.seconds, test_predicted=len(test.order), test_examples=len(splits["test"]),
        data={"train": len(splits["train"]), "dev": len(splits["dev"]), "test": len(splits["test"]), "vocab": len(data.vocab), "found_in_embeddings": data.found_in_embeddings},
        metric_implementations={k: v for k, v in metric_implementations().items() if k in cfg.task.metrics},
        kernel_implementations=dispatch.implementations_used(), world_size=dist.world, peak_memory_scope=memory_scope,
        # Several ranks: each one's final weights, which DDP keeps equal (a test compares them).
        extra={"rank_weights": distributed.all_gather(_weights_digest(model), dist)} if dist.enabled else None,
    )
