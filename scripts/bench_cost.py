"""RCRN Table 10 for every encoder: training and inference time against sequence length.

    python scripts/bench_cost.py [--lengths 16 32 64 128 256] [--repeats 5] [--threads 1]
                                 [--encoders ...] [--device cpu|cuda] [--out results]   (make table-rcrn-10)

The paper's setting (RCRN §4.4): the IMDb classification model at hidden size 200 and
batch size 32, sequence lengths 16 to 256, seconds per epoch of training and of
inference. Here every encoder is built as training builds it (conf/encoder/<name>.yaml,
``encoder.hidden_size=200``) inside the IMDb task model (conf/task/imdb.yaml: frozen
300-d embeddings, max/mean/min pooling, a dense layer, softmax over 2 classes), and
timed on random token batches of 32 sequences, all of the given length:

- a training step: forward, loss (with the encoder's own terms: MZU's zone disagreement,
  FHE's REINFORCE policy loss), backward, gradient clipping at 5, an Adam step;
- an inference batch: the forward pass in eval mode without gradients, and decoding.

Encoders run round-robin: a warm-up round, then ``--repeats`` rounds; each round times
every encoder once at each phase, starting at the next encoder each round, so a busy
machine slows them alike. Each time is also a ratio to ``3l_bilstm`` in the same round;
the table gives medians over rounds. PyPI's ``sru`` (one bidirectional layer, the same
width) stands in as an outside reference.

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

REPO = Path(__file__).resolve().parents[1]
TABLE = "rcrn_table10"
BATCH, INPUT, HIDDEN, CLASSES, VOCAB = 32, 300, 200, 2, 10_000
LENGTHS = (16, 32, 64, 128, 256)
IMDB_EXAMPLES = 25_000  # IMDb's training (and test) reviews
STEPS_PER_EPOCH = math.ceil(IMDB_EXAMPLES / BATCH)  # 782
BASELINE = "3l_bilstm"
SRU = "sru"
ENCODERS = ("bilstm", "3l_bilstm", "rcrn", "dcu", "sim_dcu", "mzu_cap", "fhe", SRU)
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

    cfg = compose_config(["task=imdb", f"encoder={'bilstm' if name == SRU else name}", "embedding=random",
                          f"embedding.dim={INPUT}", f"trainer.batch_size={BATCH}", f"trainer.lr={LR}"])
    with open_dict(cfg):
        cfg.encoder.hidden_size = HIDDEN
    return cfg


class SRUEncoder(torch.nn.Module):
    """PyPI's ``sru`` (one bidirectional layer of HIDDEN units) behind the encoder contract."""

    causal = False

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

    def feedback(self, log_likelihood):
        return None

    def policy_loss(self, enc, log_likelihood):
        return None

    def num_parameters(self) -> int:
        return sum(p.numel() for p in self.parameters() if p.requires_grad)


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

def measure(models: dict, length: int, repeats: int, device: str, say=print) -> dict:
    """{phase: {encoder: seconds per round}} at ``length``: a warm-up round, then ``repeats`` rounds;
    also each training step's process CPU seconds (``CPU_TRAIN``, same shape) and the machine's
    1-minute load average after each round (``LOAD``: one value per round; None where the system has none)."""
    from rnnbench.results import timing

    batch = batch_of(length, device)
    names = list(models)
    times = {phase: {name: [] for name in names} for phase in (TRAIN, INFER, CPU_TRAIN)}
    times[LOAD] = []

    def timed(fn, *args) -> tuple[float, float]:
        if device == "cuda":
            torch.cuda.synchronize()
        start, cpu_start = time.perf_counter(), timing.cpu_seconds()
        fn(*args)
        if device == "cuda":
            torch.cuda.synchronize()
        return time.perf_counter() - start, timing.cpu_seconds() - cpu_start

    for round_ in range(repeats + 1):
        for name in names[round_ % len(names):] + names[: round_ % len(names)]:
            model, optimizer = models[name]
            t_train, cpu_train = timed(train_step, model, optimizer, batch)
            t_infer, _ = timed(infer_batch, model, batch)
            if round_:  # round 0 warms up (allocations, kernel choice, caches)
                times[TRAIN][name].append(t_train)
                times[INFER][name].append(t_infer)
                times[CPU_TRAIN][name].append(cpu_train)
        if round_:
            times[LOAD].append(timing.load_average())
        say(f"length {length}: round {round_}/{repeats}{' (warm-up)' if not round_ else ''} done", flush=True)
    return times


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
    if device == "cuda":
        info["gpu"] = torch.cuda.get_device_name()
        info["cudnn"] = torch.backends.cudnn.version()
    return info


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


def markdown(results: dict, parameters: dict[str, int], info: dict, args, seconds: float, load: tuple[str, str]) -> str:
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
             f"without gradients, and decoding. Encoders run round-robin in one process: a warm-up round, then "
             f"{args.repeats} rounds at each length; each cell is the median over rounds of the ratio to `{BASELINE}` "
             f"timed in the same round (×), with the median milliseconds beside it.", ""]
    for phase, what in ((TRAIN, "Training step"), (INFER, "Inference batch")):
        lines += [f"## {what}: ratio to `{BASELINE}` (median ms)", "",
                  "| encoder | parameters | " + " | ".join(f"len {n}" for n in lengths) + " |",
                  "|---|---:|" + "---:|" * len(lengths)]
        for name in names:
            cells = [f"{_median(ratios(results[n][phase], name)):.2f}× ({_median(results[n][phase][name]) * 1e3:.1f})" for n in lengths]
            lines.append(f"| `{name}` | {parameters[name]:,} | " + " | ".join(cells) + " |")
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
            lines.append(f"| {model} | {phase} | " + " | ".join(f"{values[f'{phase} {n}']:.2f}×" for n in lengths) + " |")
    machine_line = (f"{info['cpu']}, {info['cores']} logical CPUs, {info['threads']} torch thread(s); torch {info['torch']}, "
                    f"Python {info['python']}, {info['os']}" + (f"; GPU {info['gpu']}, cuDNN {info['cudnn']}" if cuda else "")
                    + (f"; sru {info['sru']}" if "sru" in info else ""))
    lines += ["", "## Machine and notes", "",
              f"- Machine: {machine_line}.",
              f"- Load average {load[0]} before the run and {load[1]} after: the machine is shared with background training "
              "runs, so absolute times vary from round to round; ratios within a round are steadier, and every figure is a median.",
              (f"- `{SRU}`: PyPI's `sru` package (one bidirectional layer of {HIDDEN}), an outside reference"
               + (" (its CPU path: the CUDA kernels are not built here)." if not cuda else ".") if SRU in names else
               f"- `{SRU}` (PyPI's `sru`, the outside reference) is left out: it could not run a training step here "
               f"({getattr(args, 'left_out', {}).get(SRU, 'not asked for')})."),
              "- `dcu` runs one direction (the paper's), at hidden 200; `sim_dcu` and `mzu_cap` and `fhe` at hidden 200 too "
              "(`fhe` one direction with unconditional gates: the IMDb head passes no context).",
              f"- Evidence: [{TABLE}{'_cuda' if cuda else ''}.csv]({TABLE}{'_cuda' if cuda else ''}.csv) (one row per encoder, "
              f"column and round, the round as `seed`; seconds per epoch and per example as above; per round also "
              f"`log_ratio_to_baseline`, the log of the row's time over `{BASELINE}`'s in the same round, the training step's "
              "CPU seconds and the load average after the round); every row was timed in this one process, and `make claims` "
              "decides the registry's cost claims from it on the log ratio, paired by round.",
              f"- Plot: [plots/{TABLE}{'_cuda' if cuda else ''}.png](plots/{TABLE}{'_cuda' if cuda else ''}.png) (median ms against length, log scales).",
              ""]
    return "\n".join(lines)


def plot(path: Path, results: dict, names: list[str], title: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    lengths = list(results)
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2))
    for ax, phase, what in ((axes[0], TRAIN, "training step"), (axes[1], INFER, "inference batch")):
        for name in names:
            ax.plot(lengths, [_median(results[n][phase][name]) * 1e3 for n in lengths], marker="o",
                    linewidth=2.4 if name == BASELINE else 1.4, label=name)
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
    if SRU in names and (reason := outside_reference_fails(args.device)):
        names.remove(SRU)  # an outside package that cannot run here is a note, not a failed table
        args.left_out[SRU] = reason
        say(f"left out {SRU}: {reason}")
    models = {name: build(name, args.device) for name in names}
    parameters = {name: models[name][0].encoder.num_parameters() for name in names}
    versions = {}
    for name in names:
        v = component_versions(_config(name))
        versions[name] = json.dumps({"encoder": "sru.SRU:" + getattr(sys.modules.get("sru"), "__version__", "?")} if name == SRU
                                    else {k: v[k] for k in ("encoder", "head")}, sort_keys=True)
    results = {n: measure(models, n, args.repeats, args.device, say) for n in args.lengths}
    info = machine(args.threads, args.device)
    suffix = "_cuda" if args.device == "cuda" else ""
    out = Path(args.out)
    paths = {"md": out / f"{TABLE}{suffix}.md", "csv": out / f"{TABLE}{suffix}.csv", "png": out / "plots" / f"{TABLE}{suffix}.png"}
    write_evidence(paths["csv"], evidence_rows(results, parameters, versions, info, git_commit(REPO)))
    plot(paths["png"], results, names, f"RCRN Table 10 setting, every encoder ({info.get('gpu') or info['cpu']}, "
                                       f"{args.threads} thread(s), torch {info['torch']})")
    paths["md"].write_text(markdown(results, parameters, info, args, time.perf_counter() - started, (load_before, _load())))
    return paths


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--lengths", type=int, nargs="+", default=list(LENGTHS))
    parser.add_argument("--repeats", type=int, default=5, help="timed rounds per length, after one warm-up round (default 5)")
    parser.add_argument("--threads", type=int, default=1, help="torch threads (default 1: the experiments' setting)")
    parser.add_argument("--encoders", nargs="+", default=list(ENCODERS), help=f"default: {' '.join(ENCODERS)}")
    parser.add_argument("--device", choices=["cpu", "cuda"], default="cpu", help="cuda: the GPU variant (cuDNN baseline), its own table")
    parser.add_argument("--out", default=str(REPO / "results"), help="folder of the table, its CSV and plots/")
    args = parser.parse_args(argv)
    args.command = " ".join(["python scripts/bench_cost.py", *(sys.argv[1:] if argv is None else argv)])
    if args.repeats < 2:
        parser.error("--repeats must be at least 2 (the claims' intervals pair rounds)")
    unknown = [e for e in args.encoders if e != SRU and not (REPO / "conf" / "encoder" / f"{e}.yaml").exists()]
    if unknown:
        parser.error(f"--encoders: unknown {', '.join(unknown)} (conf/encoder/ has no such config)")
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
