"""RCRN Table 10 for every encoder: training and inference time against sequence length.

    python scripts/bench_cost.py [--lengths 16 32 64 128 256] [--repeats 5] [--threads 1]
                                 [--encoders ...] [--device cpu|cuda] [--out results]
                                 [--profile | --no-profile]   (make table-rcrn-10)

The paper's setting (RCRN §4.4): the IMDb classification model at hidden size 200 and
batch size 32, sequence lengths 16 to 256, seconds per epoch of training and of
inference. Here every encoder is built as training builds it (conf/encoder/<name>.yaml,
``encoder.hidden_size=200``) inside the IMDb task model (conf/task/imdb.yaml: frozen
300-d embeddings, max/mean/min pooling, a dense layer, softmax over 2 classes), and
timed on random token batches of 32 sequences, all of the given length:

- a training step: forward, loss (with the encoder's own terms: MZU's zone disagreement,
  FHE's REINFORCE policy loss), backward, gradient clipping at 5, an Adam step;
- an inference batch: the forward pass in eval mode without gradients, and decoding.

Before the timed rounds of each length, every encoder's training step and inference batch
are warmed at that length: at least 3 calls each, and more (up to 10) while the last call
took over 1.5x the fastest, so Triton's autotuning and compiles (on the first call at a new
shape, or a new specialisation of a kernel's integer arguments) fall outside the timed
rounds; Triton compiles during the timed rounds are counted and reported. Then encoders run
round-robin, ``--repeats`` rounds; each round times every encoder once at each phase,
starting at the next encoder each round, so a busy machine slows them alike. Each time is
also a ratio to ``3l_bilstm`` in the same round; the table gives medians over rounds.

Rows beside the encoders: PyPI's ``sru`` (one bidirectional layer, the same width) as an
outside reference, and the baseline's fast paths: ``3l_bilstm_padded`` and
``bilstm_padded`` run the same stack as one ``nn.LSTM`` call (every layer, both
directions) on the padded batch, cuDNN's fastest path on a GPU (exact here, where every
sequence has the batch's length; on ragged batches its backward direction would read
padding), and ``3l_bilstm_packed`` and ``bilstm_packed`` the same call on the batch packed
by length (cuDNN's standard algorithm). The encoders ``3l_bilstm`` and ``bilstm`` run as
training runs them: one ``nn.LSTM`` op per layer and direction over the padded batch, the
backward direction reversed within each length. The table also gives every encoder's ratio
to ``3l_bilstm_padded``.

Recorded with the times: the kernel implementation each encoder ran (the kernel
dispatcher's choice per op), the config Triton's autotuner chose for each kernel, the
warm-up calls, and (``--profile``, the default on CUDA) a profile of one training step and
one inference batch per encoder at the longest length: kernels launched, GPU busy time
against the timed step, the kernels that took longest.

Writes ``<out>/rcrn_table10.md`` (``rcrn_table10_cuda.md`` with ``--device cuda``), the
evidence CSV ``<out>/rcrn_table10.csv`` (``rnnbench.results.evidence`` format: one row per
encoder, column and round, the round as ``seed``, so ``make claims`` decides the paper's
cost claims paired by round) and ``<out>/plots/rcrn_table10.png``. The CSV is written whole
by one process, so its rows of one ``seed`` were timed together; each also carries
``log_ratio_to_baseline`` (ln of the row's time of its column's phase over ``3l_bilstm``'s in
that round: a time claim's effect, rows A and B giving A's minus B's), the training step's
process CPU seconds in epoch units (``cpu_seconds_per_epoch``) and the 1-minute load average
after the round (``load_average``). Our seconds per epoch
are a training step's time times the 782 steps of an IMDb epoch (25,000 reviews at batch
32, each cut or padded to the length; data loading excluded): an estimate in the paper's
unit, not a measured epoch.
"""
from __future__ import annotations

import argparse
import csv
import datetime
import io
import json
import math
import os
import platform
import statistics
import sys
import time
import warnings
from pathlib import Path
from types import SimpleNamespace

import torch

from rnnbench.results.run_record import git_commit, hardware
from rnnbench.results.tables import registry_key

REPO = Path(__file__).resolve().parents[1]
# The table this script measures: the one whose registry file names it (`measured_by`).
TABLE = next(table for table, script in registry_key("measured_by").items() if Path(str(script)).name == Path(__file__).name)
BATCH, INPUT, HIDDEN, CLASSES, VOCAB = 32, 300, 200, 2, 10_000
LENGTHS = (16, 32, 64, 128, 256)
IMDB_EXAMPLES = 25_000  # IMDb's training (and test) reviews
STEPS_PER_EPOCH = math.ceil(IMDB_EXAMPLES / BATCH)  # 782
BASELINE = "3l_bilstm"
SRU = "sru"
# The baseline's fast paths (see the module docstring): name -> (encoder config it stands beside, layers, packed).
WHOLE_STACK = {"3l_bilstm_padded": ("3l_bilstm", 3, False), "3l_bilstm_packed": ("3l_bilstm", 3, True),
               "bilstm_padded": ("bilstm", 1, False), "bilstm_packed": ("bilstm", 1, True)}
FAST_BASELINE = "3l_bilstm_padded"  # the baseline at its fastest: the cost targets are ratios to it
# An encoder with a kernel variant that is off by default switched on, timed beside it (CUDA only):
# RCRN with multi_lstm's step loops as one persistent Triton launch per pass.
KERNEL_VARIANTS = {"rcrn_persistent": "rcrn"}
ENCODERS = ("bilstm", "3l_bilstm", *WHOLE_STACK, "rcrn", *KERNEL_VARIANTS, "dcu", "sim_dcu", "mzu_cap", "fhe", SRU)
OUTSIDE = (SRU, *WHOLE_STACK, *KERNEL_VARIANTS)  # rows that are not an encoder config of conf/encoder/
# Warm-up of each (encoder, length, phase): at least WARM_MIN calls, then more while the last call took
# over SETTLED x the fastest, up to WARM_MAX calls.
WARM_MIN, WARM_MAX, SETTLED = 3, 10, 1.5
LR, CLIP = 1e-3, 5.0
TRAIN, INFER = "train", "infer"
CPU_TRAIN, LOAD = "cpu_train", "load"  # a training step's process CPU seconds; the load average after each round
# The registry's column names (src/rnnbench/results/paper_numbers/rcrn_table10.yaml).
COLUMN = {TRAIN: "IMDb/train_s_per_epoch/len{}", INFER: "IMDb/infer_s_per_epoch/len{}"}
PARAMETERS_COLUMN = "parameters"


class CudaUnavailable(Exception):
    pass


# --- models ----------------------------------------------------------------------------

def _config(name: str):
    from omegaconf import open_dict

    from rnnbench.compose import compose_config

    base = "bilstm" if name == SRU else WHOLE_STACK[name][0] if name in WHOLE_STACK else KERNEL_VARIANTS.get(name, name)
    cfg = compose_config(["task=imdb", f"encoder={base}", "embedding=random",
                          f"embedding.dim={INPUT}", f"trainer.batch_size={BATCH}", f"trainer.lr={LR}"])
    with open_dict(cfg):
        cfg.encoder.hidden_size = HIDDEN
    return cfg


class OutsideEncoder(torch.nn.Module):
    """A module timed in an encoder's place: the encoder contract without the encoder's own losses."""

    causal = False

    def feedback(self, log_likelihood):
        return None

    def policy_loss(self, enc, log_likelihood):
        return None

    def num_parameters(self) -> int:
        return sum(p.numel() for p in self.parameters() if p.requires_grad)


class WholeStackLSTM(OutsideEncoder):
    """A stacked BiLSTM as one ``nn.LSTM`` call (every layer, both directions): on the padded batch
    (cuDNN's fastest path; the benchmark's sequences all have the batch's length, so it reads no
    padding) or packed by length. The parameters of the ``3l_bilstm`` / ``bilstm`` encoder."""

    def __init__(self, input_size: int, hidden: int, layers: int, packed: bool):
        super().__init__()
        from rnnbench.encoders.lstm import set_forget_bias

        self.input_size, self.output_size, self.packed = input_size, 2 * hidden, packed
        self.lstm = torch.nn.LSTM(input_size, hidden, num_layers=layers, bidirectional=True, batch_first=True)
        set_forget_bias(self.lstm, 1.0)  # as the encoder configs start

    def forward(self, x, mask, context=None):
        from rnnbench.encoders.base import EncoderOutput
        from rnnbench.nn.rnn import run_packed

        out = run_packed(self.lstm, x, mask.sum(dim=1)) if self.packed else self.lstm(x)[0]
        return EncoderOutput(out * mask.unsqueeze(-1))


class SRUEncoder(OutsideEncoder):
    """PyPI's ``sru`` (one bidirectional layer of HIDDEN units) behind the encoder contract."""

    def __init__(self, input_size: int, hidden: int):
        super().__init__()
        import sru

        self.input_size, self.output_size = input_size, 2 * hidden
        self.sru = sru.SRU(input_size, hidden, num_layers=1, bidirectional=True)

    def forward(self, x, mask, context=None):
        from rnnbench.encoders.base import EncoderOutput

        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message="Running SRU on CPU")
            out, _ = self.sru(x.transpose(0, 1).contiguous(), mask_pad=~mask.t())
        return EncoderOutput(out.transpose(0, 1) * mask.unsqueeze(-1))


def build(name: str, device: str):
    """(task model, optimiser) of ``name`` in the IMDb model, seeded identically."""
    from rnnbench.data.vocab import Vocab
    from rnnbench.training.model import build_model

    cfg = _config(name)
    data = SimpleNamespace(vocab=Vocab([f"w{i}" for i in range(VOCAB - 2)], lowercase=False), label_names=["neg", "pos"],
                           vectors=None, fields=["tokens"])
    torch.manual_seed(0)
    model = build_model(cfg, data)
    if name == SRU:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model.encoder = SRUEncoder(INPUT, HIDDEN)
    elif name in WHOLE_STACK:
        _, layers, packed = WHOLE_STACK[name]
        model.encoder = WholeStackLSTM(INPUT, HIDDEN, layers, packed)
    elif name in KERNEL_VARIANTS:
        from rnnbench.kernels.multi_lstm import persistent

        encoder_forward = model.encoder.forward

        def forward(*args, **kwargs):
            with persistent.enabled():
                return encoder_forward(*args, **kwargs)

        model.encoder.forward = forward
    model = model.to(device)
    optimizer = torch.optim.Adam([p for p in model.parameters() if p.requires_grad], lr=LR)
    return model, optimizer


def batch_of(length: int, device: str) -> dict:
    g = torch.Generator().manual_seed(length)
    tokens = torch.randint(2, VOCAB, (BATCH, length), generator=g)
    return {"tokens": tokens.to(device), "tokens_mask": torch.ones(BATCH, length, dtype=torch.bool, device=device),
            "label": torch.randint(0, CLASSES, (BATCH,), generator=g).to(device), "id": [str(i) for i in range(BATCH)]}


def train_step(model, optimizer, batch) -> None:
    model.train()
    optimizer.zero_grad(set_to_none=True)
    _, loss = model(batch)
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), CLIP)
    optimizer.step()


@torch.no_grad()
def infer_batch(model, batch) -> None:
    model.eval()
    out, _ = model(batch)
    model.head.decode(out, batch)


def outside_reference_fails(device: str) -> str | None:
    """Why PyPI's ``sru`` cannot run a training step and an inference batch here, or None.
    Its CUDA kernels are compiled on first use, which fails on some CUDA and torch versions."""
    try:
        model, optimizer = build(SRU, device)
        batch = batch_of(LENGTHS[0], device)
        train_step(model, optimizer, batch)
        infer_batch(model, batch)
        if device == "cuda":
            torch.cuda.synchronize()
    except Exception as exc:  # noqa: BLE001 - any failure of the outside package is reported, not raised
        return f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else 'no message'}"
    return None


# --- measuring -------------------------------------------------------------------------

class Record:
    """What the timed calls ran, beside their times: per encoder the kernel dispatcher's implementations
    ({op: impl}), the warm-up calls' seconds per (encoder, length, phase), the Triton configs the
    autotuner chose (kernel -> key -> (config, the encoder whose warm-up chose it)), the Triton compiles
    inside the timed rounds per length (None where this Triton has no compile hook) and the profiles
    per (encoder, phase)."""

    def __init__(self):
        self.implementations: dict[str, dict[str, str]] = {}
        self.warm: dict[tuple[str, int, str], list[float]] = {}
        self.tuned: dict[str, dict[str, tuple[str, str]]] = {}
        self.compiles: dict[int, int | None] = {}
        self.profiles: dict[tuple[str, str], dict] = {}

    def ran(self, name: str, implementations: dict[str, str]) -> None:
        mine = self.implementations.setdefault(name, {})
        for op, impls in implementations.items():
            known = mine.get(op, "").split(",") if op in mine else []
            mine[op] = ",".join(dict.fromkeys([*known, *impls.split(",")]))

    def tuned_during(self, name: str, before: dict, after: dict) -> None:
        for kernel, keys in after.items():
            for key, config in keys.items():
                if key not in before.get(kernel, {}) and key not in self.tuned.get(kernel, {}):
                    self.tuned.setdefault(kernel, {})[key] = (config, name)


class TritonCompiles:
    """Counts Triton kernel compilations while active, through Triton's ``jit_post_compile_hook``
    (chained to any hook already set). ``count`` is None where Triton or the hook is absent."""

    def __enter__(self):
        self.count, self._runtime = None, None
        try:
            from triton import knobs

            self._runtime = knobs.runtime
            self._previous = self._runtime.jit_post_compile_hook
        except (ImportError, AttributeError):
            return self
        self.count = 0

        def hook(*args, **kwargs):
            self.count += 1
            return self._previous(*args, **kwargs) if self._previous else None

        self._runtime.jit_post_compile_hook = hook
        return self

    def __exit__(self, *exc):
        if self.count is not None:
            self._runtime.jit_post_compile_hook = self._previous
        return False


def _timed(device: str, fn, *args) -> tuple[float, float]:
    """(wall seconds, process CPU seconds) of one call, the GPU's queue drained before and after."""
    from rnnbench.results import timing

    if device == "cuda":
        torch.cuda.synchronize()
    start, cpu_start = time.perf_counter(), timing.cpu_seconds()
    fn(*args)
    if device == "cuda":
        torch.cuda.synchronize()
    return time.perf_counter() - start, timing.cpu_seconds() - cpu_start


def warm(call) -> list[float]:
    """Seconds of each warm-up call of ``call``: WARM_MIN calls, then more while the last took over
    SETTLED x the fastest (a compile or autotuning still going on), up to WARM_MAX."""
    seconds: list[float] = []
    while len(seconds) < WARM_MIN or (len(seconds) < WARM_MAX and seconds[-1] > SETTLED * min(seconds)):
        seconds.append(call())
    return seconds


def measure(models: dict, length: int, repeats: int, device: str, say=print, record: Record | None = None) -> dict:
    """{phase: {encoder: seconds per round}} at ``length``: every encoder's phases warmed (``warm``),
    then ``repeats`` rounds; also each training step's process CPU seconds (``CPU_TRAIN``, same shape)
    and the machine's 1-minute load average after each round (``LOAD``: one value per round; None where
    the system has none). ``record`` (a ``Record``) gets what ran."""
    from rnnbench.kernels import dispatch
    from rnnbench.results import timing

    record = Record() if record is None else record
    batch = batch_of(length, device)
    names = list(models)
    times = {phase: {name: [] for name in names} for phase in (TRAIN, INFER, CPU_TRAIN)}
    times[LOAD] = []

    for name in names:
        model, optimizer = models[name]
        dispatch.reset_used()
        tuned_before = dispatch.autotuned_configs()
        record.warm[name, length, TRAIN] = warm(lambda: _timed(device, train_step, model, optimizer, batch)[0])
        record.warm[name, length, INFER] = warm(lambda: _timed(device, infer_batch, model, batch)[0])
        record.ran(name, dispatch.implementations_used())
        record.tuned_during(name, tuned_before, dispatch.autotuned_configs())
    calls = sum(len(record.warm[name, length, phase]) for name in names for phase in (TRAIN, INFER))
    say(f"length {length}: warmed ({calls} calls)", flush=True)

    with TritonCompiles() as compiles:
        for round_ in range(repeats):
            for name in names[round_ % len(names):] + names[: round_ % len(names)]:
                model, optimizer = models[name]
                t_train, cpu_train = _timed(device, train_step, model, optimizer, batch)
                t_infer, _ = _timed(device, infer_batch, model, batch)
                times[TRAIN][name].append(t_train)
                times[INFER][name].append(t_infer)
                times[CPU_TRAIN][name].append(cpu_train)
            times[LOAD].append(timing.load_average())
            say(f"length {length}: round {round_ + 1}/{repeats} done", flush=True)
    record.compiles[length] = compiles.count
    return times


def profile_call(call, device: str) -> dict:
    """One call under torch's profiler: on CUDA the GPU's work items (kernels, copies, memsets)
    and the time they kept it busy; on the CPU the top-level aten operations and their time.
    ``top``: the three names that took longest, with their counts."""
    from torch.autograd import DeviceType
    from torch.profiler import ProfilerActivity, profile

    cuda = device == "cuda"
    activities = [ProfilerActivity.CPU, ProfilerActivity.CUDA] if cuda else [ProfilerActivity.CPU]
    if cuda:
        torch.cuda.synchronize()
    with profile(activities=activities) as prof:
        call()
        if cuda:
            torch.cuda.synchronize()
    events = prof.events()
    if cuda:
        work = [e for e in events if e.device_type == DeviceType.CUDA]
    else:
        work = [e for e in events if e.name.startswith("aten::") and e.cpu_parent is None]
    by_name: dict[str, list[float]] = {}
    for e in work:
        by_name.setdefault(e.name, []).append(e.time_range.elapsed_us() / 1e3)
    top = sorted(by_name.items(), key=lambda kv: -sum(kv[1]))[:3]
    return {"items": len(work), "busy_ms": sum(sum(v) for v in by_name.values()),
            "top": [(name, len(v), sum(v)) for name, v in top]}


def profile_all(models: dict, length: int, device: str, record: Record) -> None:
    """``record.profiles``: one warm training step and inference batch of every encoder at ``length``."""
    batch = batch_of(length, device)
    for name, (model, optimizer) in models.items():
        record.profiles[name, TRAIN] = profile_call(lambda: train_step(model, optimizer, batch), device)
        record.profiles[name, INFER] = profile_call(lambda: infer_batch(model, batch), device)


def ratios(times: dict[str, list[float]], name: str, base: str = BASELINE) -> list[float]:
    return [t / b for t, b in zip(times[name], times[base])]


# --- the machine and the paper ---------------------------------------------------------

def machine(threads: int, device: str) -> dict:
    cpu = hardware(torch.device("cpu")).get("cpu") or platform.processor() or platform.machine()
    info = {"cpu": cpu, "cores": os.cpu_count(), "threads": threads, "torch": torch.__version__,
            "python": platform.python_version(), "os": f"{platform.system()} {platform.release()}", "device": device}
    try:
        import sru

        info["sru"] = sru.__version__
    except ImportError:
        pass
    try:
        import triton

        info["triton"] = triton.__version__
    except ImportError:
        pass
    if device == "cuda":
        info["gpu"] = torch.cuda.get_device_name()
        info["cudnn"] = torch.backends.cudnn.version()
        info["cuda"] = torch.version.cuda
        info["driver"] = driver_version()
    return info


def driver_version() -> str:
    """The NVIDIA driver's version (nvidia-smi), else the CUDA driver API version torch reports, else "unknown"."""
    import subprocess

    try:
        done = subprocess.run(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
                              capture_output=True, text=True, timeout=30)
        if done.returncode == 0 and done.stdout.strip():
            return done.stdout.strip().splitlines()[0]
    except (OSError, subprocess.SubprocessError):
        pass
    try:
        api = torch._C._cuda_getDriverVersion()  # e.g. 13000: the CUDA version the driver supports
        return f"supports CUDA {api // 1000}.{api % 1000 // 10}"
    except (AttributeError, RuntimeError):
        return "unknown"


def paper_rows() -> list[dict]:
    from rnnbench.results.tables import paper_table

    return paper_table(TABLE)["rows"]


def paper_ratio_rows() -> list[tuple[str, dict[str, float]]]:
    """Each paper row's ratio to the paper's 3-layer BiLSTM of the same kind (cuDNN rows to
    the cuDNN one, the others to the plain one), per phase and length."""
    rows = paper_rows()
    base = {cudnn: next(r for r in rows if r["encoder"] == BASELINE and ("CUDNN" in r["model"]) == cudnn) for cudnn in (False, True)}
    out = []
    for row in rows:
        ref = base["CUDNN" in row["model"]]
        values = {f"{phase} {n}": row["values"][COLUMN[phase].format(n)] / ref["values"][COLUMN[phase].format(n)]
                  for phase in (TRAIN, INFER) for n in LENGTHS}
        out.append((row["model"], values))
    return out


# --- outputs ---------------------------------------------------------------------------

def evidence_rows(results: dict, parameters: dict[str, int], versions: dict[str, str], info: dict, commit: str) -> list[dict]:
    """Rows in the evidence format (rnnbench.results.evidence.FIELDS): per encoder, registry
    column and round (``seed``). Both the training and the inference column of a length carry
    the round's two quantities; ``parameters`` rows carry the encoder's parameter count."""
    rows = []
    hardware = info.get("gpu") or info["cpu"]
    for length, times in results.items():
        for name in times[TRAIN]:
            for r, (t_train, t_infer) in enumerate(zip(times[TRAIN][name], times[INFER][name]), start=1):
                for phase in (TRAIN, INFER):
                    row = _row(name, COLUMN[phase].format(length), r, t_train * STEPS_PER_EPOCH, t_infer / BATCH,
                               parameters[name], versions[name], info, hardware, commit, f"cost-{name}-len{length}-r{r}")
                    rows.append({**row, **_round_conditions(times, phase, name, r - 1)})
    rounds = min(len(v) for times in results.values() for v in times[TRAIN].values())
    longest = max(results)
    for name in parameters:
        for r in range(1, rounds + 1):
            t = results[longest]
            rows.append(_row(name, PARAMETERS_COLUMN, r, t[TRAIN][name][r - 1] * STEPS_PER_EPOCH, t[INFER][name][r - 1] / BATCH,
                             parameters[name], versions[name], info, hardware, commit, f"cost-{name}-len{longest}-r{r}"))
    return rows


def _row(name, column, seed, seconds_per_epoch, per_example, parameters, versions, info, hardware, commit, run) -> dict:
    return {"model": name, "encoder": name, "variant": "", "dataset": column, "metric": "seconds", "seed": seed, "lr": LR,
            "phase": "final", "reported": "yes", "dev": "", "test": "", "selected_epoch": 0, "epoch_cap": 0, "epochs_run": 0,
            "seconds_per_epoch": seconds_per_epoch, "inference_seconds_per_example": per_example, "parameters": parameters,
            "threads": info["threads"], "commit": commit, "versions": versions, "device": info["device"], "hardware": hardware,
            "dev_curve": "", "run": run}


def _round_conditions(times: dict, phase: str, name: str, i: int) -> dict:
    """The optional evidence columns of round ``i``: the training step's CPU seconds in epoch units,
    the load average after the round, and ``log_ratio_to_baseline``: ln(this encoder's time of the
    column's phase / the baseline's, in the same round), the quantity a time claim is judged on (two
    rows' log ratio in one round is the difference of theirs)."""
    out = {}
    if times.get(CPU_TRAIN, {}).get(name):
        out["cpu_seconds_per_epoch"] = times[CPU_TRAIN][name][i] * STEPS_PER_EPOCH
    if times.get(LOAD) and times[LOAD][i] is not None:
        out["load_average"] = times[LOAD][i]
    if BASELINE in times[phase]:
        out["log_ratio_to_baseline"] = math.log(times[phase][name][i] / times[phase][BASELINE][i])
    return out


def write_evidence(path: Path, rows: list[dict]) -> None:
    from rnnbench.results.evidence import write_csv

    write_csv(path, rows)


def _median(values):
    return statistics.median(values)


def markdown(results: dict, parameters: dict[str, int], info: dict, args, seconds: float, load: tuple[str, str],
             record: Record | None = None) -> str:
    lengths = list(results)
    names = list(parameters)
    cuda = info["device"] == "cuda"
    title = "RCRN Table 10, every encoder: training and inference time against sequence length" + (" (CUDA)" if cuda else " (CPU)")
    lines = [f"# {title}", "",
             f"Generated by `{args.command}` ({datetime.date.today().isoformat()}, {seconds / 60:.1f} minutes); do not edit.", "",
             f"Setting (RCRN §4.4): the IMDb classification model (frozen {INPUT}-d embeddings, max/mean/min pooling, a dense "
             f"layer of 200, softmax over 2 classes) around each encoder at hidden size {HIDDEN} (per direction), batch {BATCH}, "
             f"every sequence of the given length (random tokens). A **training step** is forward, loss (with the encoder's own "
             f"terms), backward, gradient clipping and an Adam step; an **inference batch** is the forward pass in eval mode "
             f"without gradients, and decoding. At each length every encoder's two phases are warmed first (at least "
             f"{WARM_MIN} calls each, more while a call is still settling: see the last section), then encoders run "
             f"round-robin in one process, {args.repeats} rounds at each length; each cell is the median over rounds of the ratio to `{BASELINE}` "
             f"timed in the same round (×), with the median milliseconds beside it.", ""]
    for phase, what in ((TRAIN, "Training step"), (INFER, "Inference batch")):
        lines += [f"## {what}: ratio to `{BASELINE}` (median ms)", "",
                  "| encoder | parameters | " + " | ".join(f"len {n}" for n in lengths) + " |",
                  "|---|---:|" + "---:|" * len(lengths)]
        for name in names:
            cells = [f"{_median(ratios(results[n][phase], name)):.2f}× ({_median(results[n][phase][name]) * 1e3:.1f})" for n in lengths]
            lines.append(f"| `{name}` | {parameters[name]:,} | " + " | ".join(cells) + " |")
        lines.append("")
    if FAST_BASELINE in names:
        lines += [f"## Against the baseline's fastest path: ratio to `{FAST_BASELINE}`", "",
                  f"`{FAST_BASELINE}` is the 3-layer BiLSTM as one `nn.LSTM` call on the padded batch"
                  + (" (cuDNN's fastest path)" if cuda else "") + "; each cell is the median over rounds of the ratio "
                  "to it in the same round.", "",
                  "| encoder | phase | " + " | ".join(f"len {n}" for n in lengths) + " |", "|---|---|" + "---:|" * len(lengths)]
        for phase in (TRAIN, INFER):
            for name in names:
                lines.append(f"| `{name}` | {phase} | "
                             + " | ".join(f"{_median(ratios(results[n][phase], name, FAST_BASELINE)):.2f}×" for n in lengths) + " |")
        lines.append("")
    lines += ["## Seconds per epoch: ours (estimated) beside the paper's", "",
              f"Ours: the median training step × {STEPS_PER_EPOCH} steps (an IMDb epoch: {IMDB_EXAMPLES:,} reviews at batch "
              f"{BATCH}), and the median inference batch × {STEPS_PER_EPOCH} batches, on the machine this table names; data loading excluded. "
              "The paper's: a GTX 1070 GPU.", "",
              "| row | phase | " + " | ".join(f"len {n}" for n in lengths) + " |", "|---|---|" + "---:|" * len(lengths)]
    for phase in (TRAIN, INFER):
        for name in names:
            lines.append(f"| `{name}` (ours) | {phase} | "
                         + " | ".join(f"{_median(results[n][phase][name]) * STEPS_PER_EPOCH:.0f}" for n in lengths) + " |")
        for row in paper_rows():
            lines.append(f"| {row['model']} (paper) | {phase} | "
                         + " | ".join(str(row["values"].get(COLUMN[phase].format(n), "–")) for n in lengths) + " |")
    lines += ["", "## The paper's ratios", "",
              "Each paper row over the paper's 3-layer BiLSTM of the same kind (cuDNN rows over the cuDNN one, the others over "
              "the plain one), from its Table 10. Our `bilstm`, `3l_bilstm` and the LSTMs inside `rcrn` run `nn.LSTM`: "
              + ("cuDNN on this GPU." if cuda else "on the CPU, the paper's plain rows are the closer kind; our `rcrn` is the "
                 "fused one (its listener a gated scan, as the paper's CUDA-optimized RCRN)."), "",
              "| paper row | phase | " + " | ".join(f"len {n}" for n in lengths) + " |", "|---|---|" + "---:|" * len(lengths)]
    ratio_rows = paper_ratio_rows()
    for phase in (TRAIN, INFER):
        for model, values in ratio_rows:
            lines.append(f"| {model} | {phase} | " + " | ".join(f"{values[f'{phase} {n}']:.2f}×" if f"{phase} {n}" in values
                                                                  else "–" for n in lengths) + " |")
    machine_line = (f"{info['cpu']}, {info['cores']} logical CPUs, {info['threads']} torch thread(s); torch {info['torch']}, "
                    f"Python {info['python']}, {info['os']}"
                    + (f"; GPU {info['gpu']}, driver {info['driver']}, CUDA {info['cuda']}, cuDNN {info['cudnn']}" if cuda else "")
                    + (f"; Triton {info['triton']}" if "triton" in info else "")
                    + (f"; sru {info['sru']}" if "sru" in info else ""))
    lines += ["", "## Machine and notes", "",
              f"- Machine: {machine_line}.",
              f"- Load average {load[0]} before the run and {load[1]} after: the machine is shared with background training "
              "runs, so absolute times vary from round to round; ratios within a round are steadier, and every figure is a median.",
              (f"- `{SRU}`: PyPI's `sru` package (one bidirectional layer of {HIDDEN}), an outside reference"
               + (" (its CPU path: the CUDA kernels are not built here)." if not cuda else ".") if SRU in names else
               f"- `{SRU}` (PyPI's `sru`, the outside reference) is left out: it could not run a training step here "
               f"({getattr(args, 'left_out', {}).get(SRU, 'not asked for')})."),
              f"- `3l_bilstm` and `bilstm` run as training runs them (one `nn.LSTM` op per layer and direction over the padded "
              f"batch, the backward direction reversed within each length: exact on ragged batches); `*_padded` run the same "
              f"stack as one `nn.LSTM` call on the padded batch (every sequence here has the batch's length, so it reads no "
              f"padding), `*_packed` the same call on the batch packed by length.",
              "- `dcu` runs one direction (the paper's), at hidden 200; `sim_dcu` and `mzu_cap` and `fhe` at hidden 200 too "
              "(`fhe` one direction with unconditional gates: the IMDb head passes no context).",
              *([f"- `{name}`: `{base}` with its BiLSTMs' step loops as one persistent Triton launch per pass "
                 "(`kernels/multi_lstm/persistent.py`, off by default), the same parameters and outputs."
                 for name, base in KERNEL_VARIANTS.items() if name in names]),
              f"- Evidence: [{TABLE}{'_cuda' if cuda else ''}.csv]({TABLE}{'_cuda' if cuda else ''}.csv) (one row per encoder, "
              f"column and round, the round as `seed`; seconds per epoch and per example as above; per round also "
              f"`log_ratio_to_baseline`, the log of the row's time over `{BASELINE}`'s in the same round, the training step's "
              "CPU seconds and the load average after the round); every row was timed in this one process, and `make claims` "
              "decides the registry's cost claims from it on the log ratio, paired by round.",
              f"- Plot: [plots/{TABLE}{'_cuda' if cuda else ''}.png](plots/{TABLE}{'_cuda' if cuda else ''}.png) (median ms against length, log scales).",
              ""]
    if record is not None:
        lines += timing_section(record, results, names, cuda)
    return "\n".join(lines)


def timing_section(record: Record, results: dict, names: list[str], cuda: bool) -> list[str]:
    """The warm-up, the kernels each encoder ran, the autotuned configs, the compiles inside the timed
    rounds and the profiles: what the times above are times of."""
    lengths = list(results)
    compiles = [record.compiles.get(n) for n in lengths]
    if any(c is None for c in compiles):
        compiled = "not counted (this Triton has no compile hook)"
    else:
        compiled = (f"**{sum(compiles)}**, by length " + ", ".join(f"{n}: {c}" for n, c in zip(lengths, compiles))
                    + (": those rounds include compile time" if sum(compiles) else ""))
    lines = ["## How it was timed: warm-up, kernels, profiles", "",
             f"- Warm-up: at each length, before its timed rounds, each encoder's training step and inference batch ran at "
             f"least {WARM_MIN} times, and again (up to {WARM_MAX}) while the last call took over {SETTLED}× the fastest: "
             "Triton's autotuning and compiles happen there.",
             f"- Triton kernels compiled during the timed rounds: {compiled}.", "",
             "| encoder | kernel implementations (dispatcher) | warm-up calls, train/infer, by length | first warm-up call, train ms, by length |",
             "|---|---|---|---|"]
    for name in names:
        impls = ", ".join(f"{op}: {impl}" for op, impl in record.implementations.get(name, {}).items()) or "none (torch modules only)"
        calls = " · ".join(f"{len(record.warm.get((name, n, TRAIN), []))}/{len(record.warm.get((name, n, INFER), []))}" for n in lengths)
        first = " · ".join(f"{record.warm[name, n, TRAIN][0] * 1e3:.0f}" if record.warm.get((name, n, TRAIN)) else "–" for n in lengths)
        lines.append(f"| `{name}` | {impls} | {calls} | {first} |")
    lines += ["", "Triton configs the autotuner chose (key: the kernel's key arguments, then its tensors' dtypes):", ""]
    if record.tuned:
        lines += ["| kernel | key | config | first chosen in the warm-up of |", "|---|---|---|---|"]
        for kernel, keys in sorted(record.tuned.items()):
            lines += [f"| `{kernel}` | {key} | {config} | `{name}` |" for key, (config, name) in keys.items()]
    else:
        lines.append("- none: no Triton kernel ran.")
    if record.profiles:
        longest = max(lengths)
        what = "GPU work items (kernels, copies, memsets)" if cuda else "top-level aten operations"
        lines += ["", f"Profile of one warm call per encoder and phase at length {longest} (torch.profiler): {what}, the time they "
                  "took, and that time's share of the call's median timed time above (on a GPU, well under 100% means it waits on "
                  "launches and the host, not on arithmetic or memory); the three that took longest, with their counts.", "",
                  "| encoder | phase | items | busy ms | median timed ms | busy share | longest |", "|---|---|---:|---:|---:|---:|---|"]
        for (name, phase), p in record.profiles.items():
            timed_ms = _median(results[longest][phase][name]) * 1e3
            top = "; ".join(f"{_short(kernel)} ×{count} ({ms:.2f} ms)" for kernel, count, ms in p["top"])
            lines.append(f"| `{name}` | {phase} | {p['items']} | {p['busy_ms']:.2f} | {timed_ms:.2f} | "
                         f"{p['busy_ms'] / timed_ms:.0%} | {top} |")
    lines.append("")
    return lines


def _short(kernel: str, width: int = 60) -> str:
    kernel = kernel.replace("|", "/")
    return f"`{kernel if len(kernel) <= width else kernel[: width - 1] + '…'}`"


def plot(path: Path, results: dict, names: list[str], title: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from rnnbench.results import palette  # one colour per encoder in every figure

    lengths = list(results)
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2))
    for ax, phase, what in ((axes[0], TRAIN, "training step"), (axes[1], INFER, "inference batch")):
        for name in names:
            ax.plot(lengths, [_median(results[n][phase][name]) * 1e3 for n in lengths], marker="o",
                    linewidth=2.4 if name == BASELINE else 1.4, label=name, color=palette.colour(name))
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xticks(lengths, [str(n) for n in lengths])
        ax.set_xlabel("sequence length")
        ax.set_ylabel(f"ms per {what} (batch {BATCH}, median)")
        ax.grid(True, which="both", alpha=0.3)
    axes[1].legend(fontsize=8)
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110, metadata={"Software": None})
    plt.close(fig)


def _load() -> str:
    return f"{os.getloadavg()[0]:.1f}" if hasattr(os, "getloadavg") else "unknown"


def run(args, say=print) -> dict[str, Path]:
    from rnnbench.results.identity import component_versions

    if args.device == "cuda" and not torch.cuda.is_available():
        kind = "a CPU-only build" if torch.version.cuda is None else f"built for CUDA {torch.version.cuda}, but no GPU is visible"
        raise CudaUnavailable(f"--device cuda: CUDA is not available here (torch {torch.__version__}, {kind}); "
                              "run on a machine with a GPU, or use --device cpu")
    torch.set_num_threads(args.threads)
    started, load_before = time.perf_counter(), _load()
    names = list(dict.fromkeys([BASELINE, *args.encoders]))
    args.left_out = {}
    for name in KERNEL_VARIANTS:
        if name in names and args.device != "cuda":
            names.remove(name)  # the variant's kernels run on CUDA only: here it would time its base encoder again
            args.left_out[name] = "a CUDA kernel variant"
    if SRU in names and (reason := outside_reference_fails(args.device)):
        names.remove(SRU)  # an outside package that cannot run here is a note, not a failed table
        args.left_out[SRU] = reason
        say(f"left out {SRU}: {reason}")
    models = {name: build(name, args.device) for name in names}
    parameters = {name: models[name][0].encoder.num_parameters() for name in names}
    versions = {}
    for name in names:
        v = component_versions(_config(name))
        if name == SRU:
            encoder = "sru.SRU:" + getattr(sys.modules.get("sru"), "__version__", "?")
        elif name in WHOLE_STACK:
            _, layers, packed = WHOLE_STACK[name]
            encoder = f"torch.nn.LSTM:{layers} layers, bidirectional, {'packed' if packed else 'padded'}"
        elif name in KERNEL_VARIANTS:
            encoder = f"{v['encoder']} (multi_lstm: persistent Triton kernels)"
        else:
            encoder = v["encoder"]
        versions[name] = json.dumps({"encoder": encoder} if name == SRU else {"encoder": encoder, "head": v["head"]}, sort_keys=True)
    record = Record()
    results = {n: measure(models, n, args.repeats, args.device, say, record) for n in args.lengths}
    if args.profile if args.profile is not None else args.device == "cuda":
        say(f"profiling one call per encoder and phase at length {max(args.lengths)}", flush=True)
        profile_all(models, max(args.lengths), args.device, record)
    info = machine(args.threads, args.device)
    suffix = "_cuda" if args.device == "cuda" else ""
    out = Path(args.out)
    paths = {"md": out / f"{TABLE}{suffix}.md", "csv": out / f"{TABLE}{suffix}.csv", "png": out / "plots" / f"{TABLE}{suffix}.png"}
    write_evidence(paths["csv"], evidence_rows(results, parameters, versions, info, git_commit(REPO)))
    plot(paths["png"], results, names, f"RCRN Table 10 setting, every encoder ({info.get('gpu') or info['cpu']}, "
                                       f"{args.threads} thread(s), torch {info['torch']})")
    paths["md"].write_text(markdown(results, parameters, info, args, time.perf_counter() - started, (load_before, _load()), record))
    return paths


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--lengths", type=int, nargs="+", default=list(LENGTHS))
    parser.add_argument("--repeats", type=int, default=5, help="timed rounds per length, after the warm-up (default 5)")
    parser.add_argument("--threads", type=int, default=1, help="torch threads (default 1: the experiments' setting)")
    parser.add_argument("--encoders", nargs="+", default=list(ENCODERS), help=f"default: {' '.join(ENCODERS)}")
    parser.add_argument("--device", choices=["cpu", "cuda"], default="cpu", help="cuda: the GPU variant (cuDNN baseline), its own table")
    parser.add_argument("--out", default=str(REPO / "results"), help="folder of the table, its CSV and plots/")
    parser.add_argument("--profile", action=argparse.BooleanOptionalAction, default=None,
                        help="profile one call per encoder and phase at the longest length (default: on CUDA only)")
    args = parser.parse_args(argv)
    args.command = " ".join(["python scripts/bench_cost.py", *(sys.argv[1:] if argv is None else argv)])
    if args.repeats < 2:
        parser.error("--repeats must be at least 2 (the claims' intervals pair rounds)")
    unknown = [e for e in args.encoders if e not in OUTSIDE and not (REPO / "conf" / "encoder" / f"{e}.yaml").exists()]
    if unknown:
        parser.error(f"--encoders: unknown {', '.join(unknown)} (conf/encoder/ has no such config, and it is none of "
                     f"{', '.join(OUTSIDE)})")
    try:
        paths = run(args)
    except CudaUnavailable as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    for path in paths.values():
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
