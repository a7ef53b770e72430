"""Load a finished run and use it: predict on new inputs, or re-score it on any split.

- ``bundle(model, cfg, data)`` (``training.checkpoint``): what a run's ``best.pt`` holds, so a checkpoint is
  self-contained: the weights, the resolved config (a plain dict), the vocabulary (its
  ``itos`` list, lower-casing, the text fields it numericalises and, for a run with a
  character encoder, the character vocabulary) and the label names.
- ``load(run_folder, device="cpu")`` (also ``rnnbench.load``): a ``LoadedRun`` with the
  model in eval mode, its vocabulary, config and label names, and ``predict(inputs)``: raw
  text tokenised with the task's own tokenizer, label names or probabilities
  (``rnnbench predict``).
- ``evaluate_run(run_folder, split, overrides)`` (``python evaluate.py``): re-scores the
  run's best checkpoint on a split, with reader settings (``task.reader.*``) and evaluation
  settings (``trainer.mc_dropout_samples``, ...) changed, without training. It writes
  ``eval-<split>-<hash of the overrides>.json`` and ``.predictions.jsonl`` in the run
  folder and never touches the run's own files.

A run whose ``best.pt`` holds only weights (runs older than the bundle) gets its
vocabulary rebuilt from its record's config (the training split read again, exactly as
``prepare`` built it; no embedding file is read).
"""
from __future__ import annotations

import difflib
import hashlib
import json
import time
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from types import SimpleNamespace

import torch
from omegaconf import DictConfig, OmegaConf

from rnnbench.config import Config, PathsConf, check_device, check_ranges
from rnnbench.data.batching import collate, numericalise, to_device
from rnnbench.data.prepare import build_reader, empty_split_error, load_splits, prepare, without_empty_texts
from rnnbench.data.vocab import CharVocab, Vocab
from rnnbench.errors import ConfigError, DamagedFileError, RnnbenchError
from rnnbench.results.record_format import config_without_retired_keys
from rnnbench.results.records import DONE, RECORD, write_json_atomic, write_lines_atomic
from rnnbench.results.run_record import git_commit, hardware
from rnnbench.training import checkpoint
from rnnbench.training.checkpoint import BEST, FORMAT, bundle, is_bundle  # noqa: F401 - what best.pt holds, read here
from rnnbench.training.evaluate import predict, score
from rnnbench.training.model import build_model

SPLITS = ("train", "dev", "test")
EVAL_PREFIX = "eval-"

# What an evaluation may change: how the data is read and how the model is scored. Anything
# else would describe another model (or nothing evaluation uses).
ALLOWED_PREFIXES = ("task.reader.", "paths.")
ALLOWED_KEYS = ("trainer.mc_dropout_samples", "trainer.mc_dropout_combine", "trainer.eval_batch_size",
                "trainer.max_eval_batches", "trainer.truncate", "trainer.num_threads", "trainer.device",
                "trainer.kernel_impl")
MODEL_PREFIXES = ("encoder", "embedding", "task.head", "task.name", "task.min_freq", "seed")
# Settings that change neither predictions nor scores: left out of the evaluation's hash.
NOT_HASHED_PREFIXES = ("paths.", "trainer.device", "trainer.num_threads", "trainer.eval_batch_size")


class NotAFinishedRun(RnnbenchError):
    """The folder given is not a run that finished (no record, no ``done`` marker or no best.pt)."""


class EvaluationOverrideRefused(ConfigError):
    """An override that would change the trained model, or that evaluation does not use."""


class UnknownSplit(ConfigError):
    """A split other than train, dev and test."""


def _weights_of(saved: dict, path: Path) -> dict:
    """The state dict of a bundle, of ``{"model": state_dict}`` or of a bare state dict."""
    if isinstance(saved.get("model"), dict):
        return saved["model"]
    if saved and all(isinstance(v, torch.Tensor) for v in saved.values()):
        return saved
    raise DamagedFileError(path, "holds no model weights (neither a bundle, {'model': state_dict} nor a state dict)")


# --- reading a finished run ------------------------------------------------------------

def _record_of(run_dir: Path) -> dict:
    if not run_dir.is_dir():
        raise NotAFinishedRun(f"{run_dir}: no such folder; give a run folder (runs/<task>/<encoder>/s<seed>-<identity>)")
    missing = [name for name in (RECORD, DONE, BEST) if not (run_dir / name).exists()]
    if missing:
        raise NotAFinishedRun(f"{run_dir}: not a finished run (no {', '.join(missing)}); give a run folder that holds "
                              f"record.json, done and best.pt (finish it first: run its train.py command again)")
    try:
        record = json.loads((run_dir / RECORD).read_text())
    except ValueError as exc:
        raise NotAFinishedRun(f"{run_dir / RECORD}: not valid JSON ({exc}); run its train.py command again to redo it") from None
    if not isinstance(record, dict) or not isinstance(record.get("config"), dict):
        raise NotAFinishedRun(f"{run_dir / RECORD}: a record without its config; run its train.py command again to redo it")
    return record


def _config_of(config: dict) -> DictConfig:
    """The recorded config under the current schema (keys added since get their defaults)."""
    try:
        return OmegaConf.merge(OmegaConf.structured(Config), config_without_retired_keys(config))
    except Exception:  # noqa: BLE001 - a key the schema no longer has: keep the record as it is
        return OmegaConf.create(config)


def _current_paths(cfg: DictConfig) -> DictConfig:
    """``cfg`` with its paths taken from this environment (RNNBENCH_DATA, ...), not from the
    machine the run trained on."""
    paths = OmegaConf.to_container(OmegaConf.create({"paths": OmegaConf.structured(PathsConf)}), resolve=True)["paths"]
    cfg = cfg.copy()
    with _open(cfg):
        for key, value in paths.items():
            cfg.paths[key] = value
    return cfg


class _open:
    def __init__(self, cfg):
        self.cfg = cfg

    def __enter__(self):
        self.flag = OmegaConf.is_struct(self.cfg)
        OmegaConf.set_struct(self.cfg, False)

    def __exit__(self, *exc):
        OmegaConf.set_struct(self.cfg, self.flag)


@dataclass
class _Saved:
    weights: dict
    config: DictConfig
    vocab: object
    fields: list[str]
    label_names: list[str]
    checkpoint: str  # "bundle" or "weights only" (vocabulary rebuilt)
    record: dict = field(default_factory=dict)


def _read_run(run_dir: Path) -> _Saved:
    record = _record_of(run_dir)
    path = run_dir / checkpoint.BEST
    saved = checkpoint.load(path, "cpu")
    weights = _weights_of(saved, path)
    if is_bundle(saved):
        cfg = _current_paths(_config_of(saved["config"]))
        v = saved["vocab"]
        chars = v.get("chars")
        chars = CharVocab.from_itos(list(chars["itos"]), int(chars["max_word_length"])) if chars else None
        vocab = Vocab(list(v["itos"]), lowercase=bool(v["lowercase"]), chars=chars)
        return _Saved(weights, cfg, vocab, list(v["fields"]), list(saved["label_names"]), "bundle", record)
    cfg = _current_paths(_config_of(record["config"]))
    vocab, fields, label_names = _rebuild_vocab(cfg)
    return _Saved(weights, cfg, vocab, fields, label_names, "weights only (vocabulary rebuilt from the record's config)", record)


def _rebuild_vocab(cfg: DictConfig):
    """The vocabulary ``prepare(cfg)`` built for the run, without reading its embedding file."""
    cfg = cfg.copy()
    with _open(cfg):
        cfg.embedding.kind = "random"  # the vocabulary does not depend on the vectors; skip reading them
    data = prepare(cfg)
    return data.vocab, list(data.fields), list(data.label_names)


def _build(saved: _Saved, device: torch.device | str):
    data = SimpleNamespace(vocab=saved.vocab, label_names=saved.label_names, vectors=None, fields=saved.fields)
    model = build_model(saved.config, data)
    model.load_state_dict(saved.weights)
    return model.to(device).eval()


# --- rnnbench.load ---------------------------------------------------------------------

class PredictInputError(ConfigError):
    """An input ``predict`` cannot score: empty text, a field the model does not read, a label it does not know."""


class NoClassProbabilities(PredictInputError):
    """``probabilities=True`` for a head that gives a score (a ranking head), not class scores."""


@dataclass
class LoadedRun:
    """A trained model ready for inference (``rnnbench.load``)."""

    model: torch.nn.Module  # eval mode
    vocab: object  # rnnbench.data.vocab.Vocab
    config: DictConfig
    label_names: list[str]
    fields: list[str]  # the text fields the vocabulary numericalises
    device: torch.device
    run_dir: Path
    checkpoint: str

    @cached_property
    def reader(self):
        """The task's reader, built from the run's config (no file is read): its tokenizer and inputs."""
        return build_reader(self.config.task.reader)

    @property
    def task(self) -> str:
        return str(self.config.task.name)

    def tokenize(self, text: str) -> list[str]:
        """``text`` in the task's own tokens (``Reader.tokenize``: Treebank words for the word-level tasks)."""
        return self.reader.tokenize(text)

    def record_of(self, given: str | dict) -> dict:
        """A record shaped like the task reader's from a raw string (a one-text task) or a dict whose
        text fields are strings (tokenised here) or token lists; refuses what the model cannot score."""
        if isinstance(given, str):
            if len(self.fields) != 1:
                raise PredictInputError(f"predict: task {self.task} reads {len(self.fields)} texts ({', '.join(self.fields)}); "
                                        f"give a dict with one text per field, e.g. {{{', '.join(repr(f) + ': ...' for f in self.fields)}}}")
            given = {self.fields[0]: given}
        if not isinstance(given, dict):
            raise PredictInputError(f"predict: an input is a string or a dict of fields, not {type(given).__name__}")
        record = dict(given)
        for name in self.fields:
            if name not in record:
                raise PredictInputError(f"predict: the inputs lack the text field {name!r}; task {self.task} reads "
                                        f"{', '.join(self.fields)}")
            value = record[name]
            tokens = self.tokenize(value) if isinstance(value, str) else value
            if not isinstance(tokens, (list, tuple)) or not all(isinstance(t, str) for t in tokens):
                raise PredictInputError(f"predict: field {name!r} must be a string or a list of tokens, not {type(value).__name__}")
            if not tokens:
                raise PredictInputError(f"predict: field {name!r} is empty; give some text to classify")
            record[name] = list(tokens)
        for name in getattr(self.reader, "inputs", ()):
            value = record.get(name)
            if isinstance(value, str) and value.strip().lstrip("-").isdigit():
                value = record[name] = int(value)
            if not isinstance(value, int) or isinstance(value, bool):
                raise PredictInputError(f"predict: task {self.task} also needs {name!r}, a whole number "
                                        f"(rnnbench predict RUN TEXT --field {name}=3){'' if value is None else f'; got {value!r}'}")
        if self.label_names:
            record["label"] = self._label_id(record.get("label", 0))
        return record

    def _label_id(self, label) -> int:
        """A gold label given with the input (it does not change the prediction) as the head's class id."""
        if isinstance(label, str):
            if label not in self.label_names:
                raise PredictInputError(f"predict: label {label!r} is not one of task {self.task}'s labels "
                                        f"({', '.join(self.label_names[:12])}{', ...' if len(self.label_names) > 12 else ''})")
            return self.label_names.index(label)
        if isinstance(label, int) and 0 <= label < len(self.label_names):
            return label
        raise PredictInputError(f"predict: label {label!r} is neither a label name nor a class id below {len(self.label_names)}")

    @torch.no_grad()
    def predict(self, inputs, probabilities: bool = False, batch_size: int | None = None):
        """Predictions for raw text: a string (one-text tasks), a dict of fields, or a list of either.

        Strings are tokenised with the task's own tokenizer (``tokenize``); token lists are used as
        they are, so reader-shaped records still work. One input gives one prediction, a list a
        list. A classifier's prediction is the label's name; with ``probabilities=True`` it is
        ``{"label": name, "probabilities": {name: p, ...}}`` (the softmax of the class scores,
        without MC dropout), for heads with class scores. A ranking head gives the pair's score.
        Empty text, a missing field, an unknown label: one ``PredictInputError`` line."""
        if not getattr(self.model.head, "predicts_from_text", True):
            raise PredictInputError(f"predict: task {self.task}'s head ({type(self.model.head).__name__}) needs the gold answer "
                                    "of each example (it generates or points into text); score it on a split with rnnbench evaluate")
        single = isinstance(inputs, (str, dict))
        given = [inputs] if single else list(inputs)
        if not given:
            return []
        records = [self.record_of(x) for x in given]
        items = numericalise(records, self.vocab, self.fields)
        size = batch_size or int(self.config.trainer.get("eval_batch_size") or 200)
        self.model.eval()
        out: list = []
        for start in range(0, len(items), size):
            batch = to_device(collate(items[start:start + size], self.fields), self.device)
            head_out, _ = self.model(batch)
            decoded = self.model.head.decode(head_out, batch)
            if not probabilities:
                out += [self.label_names[p] if isinstance(p, int) and 0 <= p < len(self.label_names) else p for p in decoded]
                continue
            if head_out.logits is None or head_out.logits.shape[-1] != len(self.label_names):
                raise NoClassProbabilities(f"predict: task {self.task}'s head ({type(self.model.head).__name__}) gives a score, "
                                        "not class probabilities; call predict without probabilities=True")
            probs = torch.softmax(head_out.logits.float(), dim=-1).cpu().tolist()
            out += [{"label": self.label_names[p], "probabilities": dict(zip(self.label_names, row))} for p, row in zip(decoded, probs)]
        return out[0] if single else out

    def unknown_words(self, tokens: list[str]) -> list[str]:
        """The tokens the run's vocabulary does not know (they all read as one unknown-word vector)."""
        encoded = self.vocab.encode(tokens)
        return [t for t, i in zip(tokens, encoded) if i == 1]


def load(run_folder: str | Path, device: str | torch.device = "cpu") -> LoadedRun:
    """A finished run's best model on ``device`` (eval mode), with its vocabulary, config and label names."""
    run_dir = Path(run_folder)
    saved = _read_run(run_dir)
    device = torch.device(device)
    if device.type == "cuda" and not torch.cuda.is_available():
        raise ConfigError(f"device={device}: CUDA is not available here; use device='cpu'")
    model = _build(saved, device)
    return LoadedRun(model, saved.vocab, saved.config, saved.label_names, saved.fields, device, run_dir, saved.checkpoint)


# --- evaluate.py -----------------------------------------------------------------------

def parse_overrides(overrides: list[str], cfg: DictConfig) -> dict[str, object]:
    """``["task.reader.length=400", ...]`` -> {key: value}; refuses keys that change the model,
    keys evaluation does not use and keys the run's config does not have (one line each)."""
    parsed: dict[str, object] = {}
    for item in overrides:
        key, sep, _ = item.partition("=")
        key = key.strip().lstrip("+")
        if not sep or not key:
            raise EvaluationOverrideRefused(f"{item!r}: an override is key=value (e.g. task.reader.length=400)")
        if any(key == p or key.startswith(p + ".") for p in MODEL_PREFIXES):
            raise EvaluationOverrideRefused(f"{key}: changes the trained model, which evaluation cannot do; "
                                            f"train a run with it (python train.py ... {item}) and evaluate that run")
        if not (key.startswith(ALLOWED_PREFIXES) or key in ALLOWED_KEYS):
            raise EvaluationOverrideRefused(f"{key}: not an evaluation setting; evaluation changes only task.reader.*, "
                                            f"paths.* and {', '.join(ALLOWED_KEYS)}")
        parent, _, leaf = key.rpartition(".")
        node = OmegaConf.select(cfg, parent) if parent else cfg
        if node is None or leaf not in node:
            known = list(node.keys()) if node is not None else []
            close = difflib.get_close_matches(leaf, [str(k) for k in known], n=1)
            hint = f"did you mean {parent}.{close[0]}?" if close else f"its keys: {', '.join(map(str, known)) or 'none'}"
            raise EvaluationOverrideRefused(f"{key}: the run's config has no such key ({hint})")
        value = OmegaConf.from_dotlist([f"{key}={item.partition('=')[2]}"])
        parsed[key] = OmegaConf.select(value, key)
    return parsed


def apply_overrides(cfg: DictConfig, parsed: dict[str, object]) -> DictConfig:
    cfg = cfg.copy()
    with _open(cfg):
        for key, value in parsed.items():
            OmegaConf.update(cfg, key, value, merge=False)
    check_ranges(cfg)
    check_device(cfg)
    if str(cfg.trainer.mc_dropout_combine) not in ("vote", "mean"):
        raise EvaluationOverrideRefused(f"trainer.mc_dropout_combine={cfg.trainer.mc_dropout_combine}: must be vote or mean")
    return cfg


def overrides_hash(parsed: dict[str, object]) -> str:
    """A short hash of the overrides that change predictions or scores (paths, device, threads
    and batch size left out); the same overrides always name the same evaluation file."""
    kept = {k: v for k, v in parsed.items() if not k.startswith(NOT_HASHED_PREFIXES)}
    return hashlib.sha256(json.dumps(kept, sort_keys=True, default=str).encode()).hexdigest()[:10]


def evaluation_paths(run_dir: Path, split: str, parsed: dict[str, object]) -> tuple[Path, Path]:
    stem = f"{EVAL_PREFIX}{split}-{overrides_hash(parsed)}"
    return run_dir / f"{stem}.json", run_dir / f"{stem}.predictions.jsonl"


def existing_evaluation(run_folder: str | Path, split: str, overrides: list[str]) -> dict | None:
    """evaluate.py's record of ``split`` under ``overrides`` if it was made already (reads the
    run's record only, not its checkpoint)."""
    run_dir = Path(run_folder)
    path, _ = evaluation_paths(run_dir, split, parse_overrides(list(overrides), _config_of(_record_of(run_dir)["config"])))
    return json.loads(path.read_text()) if path.exists() else None


def _split_records(cfg: DictConfig, saved: _Saved, split: str):
    """The raw and numericalised records of ``split`` read with ``cfg``'s reader, encoded with the run's vocabulary."""
    reader = build_reader(cfg.task.reader)
    raw = load_splits(reader, cfg.paths.data_dir, cfg.paths.cache_dir)
    if not raw.get(split):
        raise empty_split_error(cfg.task.name, reader, Path(cfg.paths.data_dir), split)
    names = list(reader.label_names)
    if names != list(saved.label_names):
        raise ConfigError(f"the reader's labels ({', '.join(names[:12])}) differ from the run's ({', '.join(saved.label_names[:12])}); "
                          "an override changed the label set: evaluate with the run's task")
    raw = without_empty_texts({"train": raw.get("train", []), split: raw[split]}, saved.fields)
    records = raw[split]
    encoded = numericalise(records, saved.vocab, saved.fields)
    limit = cfg.trainer.get("truncate")
    if limit is not None:
        encoded = [{**r, **{f: r[f][:limit] for f in saved.fields}} for r in encoded]
    return records, encoded


def evaluate_run(run_folder: str | Path, split: str = "test", overrides: list[str] | None = None, say=print) -> tuple[dict, Path]:
    """Re-score a finished run's best checkpoint on ``split``; returns (evaluation record, its path).

    With no overrides, the test split gives exactly the run's recorded test metrics: the same
    records, batches, threads and MC-dropout seed as the training loop's test pass."""
    if split not in SPLITS:
        raise UnknownSplit(f"split={split}: unknown split; use one of {', '.join(SPLITS)}")
    run_dir = Path(run_folder)
    saved = _read_run(run_dir)
    parsed = parse_overrides(list(overrides or []), saved.config)
    cfg = apply_overrides(saved.config, parsed)
    t = cfg.trainer
    if t.get("num_threads"):
        torch.set_num_threads(int(t.num_threads))
    device = torch.device("cuda" if str(t.device) == "auto" and torch.cuda.is_available() else
                          ("cpu" if str(t.device) == "auto" else str(t.device)))
    raw, records = _split_records(cfg, saved, split)
    model = _build(saved, device)
    model.encoder.use_kernels(t.get("kernel_impl", "auto"))  # the run's kernels, or the override's
    say(f"{run_dir}: {split} split, {len(records)} examples{' (' + ', '.join(f'{k}={v}' for k, v in parsed.items()) + ')' if parsed else ''}"
        f"; checkpoint: {saved.checkpoint}")
    torch.manual_seed(int(cfg.seed) + 1_000_003)  # the training loop's test pass draws MC dropout from here
    started = time.perf_counter()
    preds, order, loss, enc_stats = predict(model, records, saved.fields, int(t.eval_batch_size), device, t.max_eval_batches,
                                            int(t.mc_dropout_samples), str(t.mc_dropout_combine))
    seconds = time.perf_counter() - started
    scores = score(cfg.task, preds, [raw[i] for i in order])
    record_path, predictions_path = evaluation_paths(run_dir, split, parsed)
    write_lines_atomic(predictions_path, [{"id": raw[i]["id"], **model.head.prediction_entry(p, raw[i], saved.label_names)}
                                          for i, p in zip(order, preds)])
    recorded = saved.record.get(split) if split in ("dev", "test") else None
    evaluation = {
        "kind": "evaluation",
        "run_dir": str(run_dir),
        "identity": saved.record.get("identity"),
        "task": saved.record.get("task"), "encoder": saved.record.get("encoder"), "seed": saved.record.get("seed"),
        "split": split,
        "overrides": parsed,
        "overrides_hash": overrides_hash(parsed),
        "checkpoint": saved.checkpoint,
        "metrics": scores,
        "loss": loss,
        "stats": enc_stats,
        "examples": len(records),
        "examples_scored": len(order),
        "partial": len(order) < len(records),
        "mc_dropout_samples": int(t.mc_dropout_samples),
        "mc_dropout_combine": str(t.mc_dropout_combine),
        # the run's own scores of this split (dev: the best epoch's, without MC dropout), for comparison
        "recorded": recorded,
        "seconds": seconds,
        "inference_seconds_per_example": seconds / max(len(order), 1),
        "predictions": predictions_path.name,
        "config": OmegaConf.to_container(cfg, resolve=True, enum_to_str=True),
        "git_commit": git_commit(),
        "hardware": hardware(device),
        "created": time.strftime("%Y-%m-%dT%H:%M:%S"),
    }
    write_json_atomic(record_path, evaluation)
    return evaluation, record_path
