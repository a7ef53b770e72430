"""scripts/bench_cost.py (make table-rcrn-10): the cost table, its evidence CSV in the ledger's
format (so the registry's cost claims get verdicts), the plot, and a clean refusal of
--device cuda without CUDA."""
from __future__ import annotations

import math
import time

import pytest
import torch
import yaml

from rnnbench.results import evidence, ledger
from rnnbench.results.claims import evaluate, load_claims
from rnnbench.results.tables import REGISTRY
from tests.helpers import load_script

pytestmark = pytest.mark.usefixtures("one_thread")


@pytest.fixture(scope="module")
def bench():
    return load_script("bench_cost")


def _section(md: str, title: str) -> str:
    return md.split(title, 1)[1].split("\n## ", 1)[0]


@pytest.mark.slow  # times three encoders at two lengths
def test_a_short_run_writes_the_table_the_evidence_and_the_plot(bench, tmp_path, capsys):
    out = tmp_path / "results"
    assert bench.main(["--lengths", "16", "32", "--repeats", "2", "--encoders", "bilstm", "rcrn", "sru", "--out", str(out)]) == 0
    md = (out / "rcrn_table10.md").read_text()
    training = _section(md, "## Training step")
    for name in ("3l_bilstm", "bilstm", "rcrn", "sru"):
        assert f"| `{name}` |" in training
    assert "| `3l_bilstm` | 2,729,600 | 1.00× (" in training  # the baseline over itself, in the same rounds
    assert "| RCRN (CUDNN +CUDA optimized) | train | 1.00× | 0.93× |" in md  # the paper's 10/10 and 13/14
    assert "torch thread(s); torch " in md and "Load average" in md and "shared with background training runs" in md
    assert "2 rounds at each length" in md

    header = (out / "rcrn_table10.csv").read_text().splitlines()[0]
    assert header.startswith(",".join(evidence.FIELDS) + ",") and "log_ratio_to_baseline" in header
    rows = evidence.read_csv(out / "rcrn_table10.csv")
    timed = [r for r in rows if r["dataset"] != "parameters"]
    assert all(r["cpu_seconds_per_epoch"] > 0 and r["log_ratio_to_baseline"] != "" for r in timed)
    assert all(r["log_ratio_to_baseline"] == 0.0 for r in timed if r["encoder"] == "3l_bilstm")
    assert len(rows) == 4 * 2 * 2 * 2 + 4 * 2  # encoders x lengths x rounds x (train, infer) + parameters rows
    registry = yaml.safe_load((REGISTRY / "rcrn_table10.yaml").read_text())
    columns = {c for row in registry["rows"] for c in row["values"]} | {"parameters"}
    assert {r["dataset"] for r in rows} <= columns
    one = next(r for r in rows if r["encoder"] == "rcrn" and r["dataset"] == "IMDb/train_s_per_epoch/len16" and r["seed"] == 1)
    assert one["reported"] == "yes" and one["seconds_per_epoch"] > 0 and 0 < one["inference_seconds_per_example"] < one["seconds_per_epoch"]
    assert one["parameters"] == 2_409_600 and one["threads"] == "1"

    # every claim on the lengths measured (and on parameters) gets a verdict from this CSV
    decided = {c["id"]: evaluate("rcrn_table10", c, rows, []).verdict for c in load_claims("rcrn_table10")}
    for claim_id, verdict in decided.items():
        measured = claim_id.endswith(("len16", "len32")) or "params" in claim_id
        assert (verdict != "not run") == measured, (claim_id, verdict)
    assert decided["rcrn-params-equal-3l-bilstm"] == "contradicted"  # 2,409,600 against 2,729,600 at input 300
    assert "RCRN Table 10" in ledger.build(out)

    png = (out / "plots" / "rcrn_table10.png").read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    assert "wrote" in capsys.readouterr().out


def test_the_evidence_decides_a_clear_difference_paired_by_round(bench):
    """Synthetic times: bilstm takes half of 3l_bilstm's time in every round -> reproduced;
    rcrn 10% slower in every round -> contradicted. Units: an IMDb epoch of 782 steps."""
    rounds = [0.10, 0.12, 0.11, 0.13]
    times = {bench.TRAIN: {"3l_bilstm": rounds, "bilstm": [t / 2 for t in rounds], "rcrn": [t * 1.1 for t in rounds]},
             bench.INFER: {"3l_bilstm": rounds, "bilstm": [t / 2 for t in rounds], "rcrn": [t * 1.1 for t in rounds]}}
    info = {"cpu": "cpu", "threads": 1, "device": "cpu"}
    rows = bench.evidence_rows({16: times}, {"3l_bilstm": 3, "bilstm": 1, "rcrn": 3}, {n: "{}" for n in times[bench.TRAIN]}, info, "c")
    row = next(r for r in rows if r["encoder"] == "bilstm" and r["dataset"] == "IMDb/infer_s_per_epoch/len16" and r["seed"] == 2)
    assert row["seconds_per_epoch"] == pytest.approx(0.06 * 782) and row["inference_seconds_per_example"] == pytest.approx(0.06 / 32)
    claims = {c["id"]: c for c in load_claims("rcrn_table10")}
    assert evaluate("rcrn_table10", claims["bilstm-faster-than-3l-bilstm-train-len16"], rows, []).verdict == "reproduced"
    assert evaluate("rcrn_table10", claims["bilstm-faster-than-3l-bilstm-infer-len16"], rows, []).verdict == "reproduced"
    assert evaluate("rcrn_table10", claims["rcrn-faster-than-3l-bilstm-train-len16"], rows, []).verdict == "contradicted"
    assert evaluate("rcrn_table10", claims["rcrn-params-equal-3l-bilstm"], rows, []).verdict == "reproduced"


def test_each_round_carries_its_log_ratio_to_the_baseline_and_the_conditions_it_was_timed_under(bench):
    """A time claim's effect is the log ratio of two rows in one round: each row carries ln(its time /
    3l_bilstm's) of its column's phase, so rows A and B of one round give A's minus B's."""
    times = {bench.TRAIN: {"3l_bilstm": [0.10, 0.20], "rcrn": [0.05, 0.30]},
             bench.INFER: {"3l_bilstm": [0.04, 0.04], "rcrn": [0.01, 0.02]},
             bench.CPU_TRAIN: {"3l_bilstm": [0.09, 0.10], "rcrn": [0.05, 0.06]}, bench.LOAD: [1.5, None]}
    rows = bench.evidence_rows({16: times}, {"3l_bilstm": 3, "rcrn": 3}, {"3l_bilstm": "{}", "rcrn": "{}"},
                               {"cpu": "cpu", "threads": 1, "device": "cpu"}, "c")
    cell = {(r["encoder"], r["dataset"].split("/")[1], r["seed"]): r for r in rows if r["dataset"] != "parameters"}
    assert cell["rcrn", "train_s_per_epoch", 2]["log_ratio_to_baseline"] == pytest.approx(math.log(1.5))
    assert cell["rcrn", "infer_s_per_epoch", 1]["log_ratio_to_baseline"] == pytest.approx(math.log(0.25))
    assert cell["3l_bilstm", "train_s_per_epoch", 1]["log_ratio_to_baseline"] == 0.0
    assert cell["rcrn", "train_s_per_epoch", 1]["cpu_seconds_per_epoch"] == pytest.approx(0.05 * 782)
    assert cell["rcrn", "infer_s_per_epoch", 1]["load_average"] == 1.5 and "load_average" not in cell["rcrn", "infer_s_per_epoch", 2]


def test_cuda_is_refused_in_one_line_without_a_gpu(bench, monkeypatch, tmp_path, capsys):
    monkeypatch.setattr(bench.torch.cuda, "is_available", lambda: False)
    assert bench.main(["--device", "cuda", "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: --device cuda: CUDA is not available here") and err.count("\n") == 1
    assert not any(tmp_path.iterdir())


def test_bad_arguments_are_refused(bench):
    with pytest.raises(SystemExit):
        bench.main(["--encoders", "nosuch"])
    with pytest.raises(SystemExit):
        bench.main(["--repeats", "1"])


def test_an_outside_reference_that_cannot_run_is_left_out_with_its_reason(bench, tmp_path, monkeypatch):
    # seen on an H100 (torch 2.11, CUDA 13): sru's JIT-built CUDA kernels failed with "Caught an unknown exception!"
    real_build = bench.build

    def build(name, device):
        if name == bench.SRU:
            raise RuntimeError("Caught an unknown exception!\nmore lines")
        return real_build(name, device)

    monkeypatch.setattr(bench, "build", build)
    out = tmp_path / "results"
    assert bench.main(["--lengths", "16", "--repeats", "2", "--encoders", "bilstm", "sru", "--out", str(out)]) == 0
    md = (out / "rcrn_table10.md").read_text()
    assert "| `sru` |" not in md
    assert "`sru` (PyPI's `sru`, the outside reference) is left out: it could not run a training step here " \
           "(RuntimeError: Caught an unknown exception!)" in md
    assert {r["encoder"] for r in evidence.read_csv(out / "rcrn_table10.csv")} == {"3l_bilstm", "bilstm"}


def test_gpu_evidence_decides_the_claims_again_in_its_own_section(bench, tmp_path):
    # the paper's cost claims are about a GPU: results/rcrn_table10_cuda.csv gets verdicts of its own,
    # beside (not instead of) the CPU table's, and counted on their own line
    def rows(device: str, rcrn_ms: float) -> list[dict]:
        results = {16: {bench.TRAIN: {"3l_bilstm": [0.010, 0.011, 0.010], "rcrn": [rcrn_ms / 1e3] * 3},
                        bench.INFER: {"3l_bilstm": [0.004] * 3, "rcrn": [0.004] * 3}}}
        info = {"device": device, "threads": 1, "cpu": "Test CPU", **({"gpu": "Test GPU"} if device == "cuda" else {})}
        versions = {n: "{}" for n in ("3l_bilstm", "rcrn")}
        return bench.evidence_rows(results, {"3l_bilstm": 2_729_600, "rcrn": 2_409_600}, versions, info, "abc")

    evidence.write_csv(tmp_path / "rcrn_table10.csv", rows("cpu", 30.0))   # slower than the stack on the CPU
    evidence.write_csv(tmp_path / "rcrn_table10_cuda.csv", rows("cuda", 5.0))  # faster on the GPU
    md = ledger.build(tmp_path)
    cpu, gpu = md.split("### The same claims on the GPU (Test GPU; [rcrn_table10_cuda](rcrn_table10_cuda.md))")
    claim = "slightly faster than the 3-layer BiLSTM (cuDNN) in training time on IMDb at sequence length 16 "
    assert "**contradicted**" in next(line for line in cpu.splitlines() if claim in line)
    assert "**reproduced**" in next(line for line in gpu.split("\n## ")[0].splitlines() if claim in line)
    # seconds per example are too small to read at two decimals: the ledger shows ours in ms
    infer = next(line for line in gpu.splitlines() if "in inference time on IMDb at sequence length 16 (`rcrn`" in line)
    assert "inference_seconds_per_example; ours in ms)" in infer and "| 0.12 / 0.12 |" in infer  # 4 ms per batch of 32
    main_count = next(line for line in md.splitlines() if line.startswith("**") and " claims. " in line)
    device_line = next(line for line in md.splitlines() if line.startswith("Decided again on evidence from another device"))
    assert "(rcrn_table10_cuda)" in device_line
    n_claims = len(load_claims("rcrn_table10"))
    assert device_line.split(": ")[1].startswith(f"{n_claims} verdicts")
    assert int(main_count.strip("*").split(" claims")[0]) == sum(len(load_claims(p.stem)) for p in REGISTRY.glob("*.yaml"))


# --- warm-up, the baseline's fast paths, what ran ----------------------------------------------

def test_every_phase_is_warmed_at_every_length_before_it_is_timed(bench, monkeypatch):
    """A call that is slow the first two times at a (encoder, length, phase), as a Triton kernel autotuned on its
    first call and compiled again for a new specialisation on a later one, is never among the timed calls."""
    calls: dict[tuple, int] = {}

    def slow_at_first(key):
        calls[key] = calls.get(key, 0) + 1
        if calls[key] <= 2:
            time.sleep(0.05)

    monkeypatch.setattr(bench, "batch_of", lambda length, device: length)
    monkeypatch.setattr(bench, "train_step", lambda model, optimizer, length: slow_at_first((model, length, "train")))
    monkeypatch.setattr(bench, "infer_batch", lambda model, length: slow_at_first((model, length, "infer")))
    models = {"a": ("a", None), "b": ("b", None)}
    record = bench.Record()
    for length in (16, 32):
        times = bench.measure(models, length, 2, "cpu", say=lambda *a, **k: None, record=record)
        timed = [t for phase in (bench.TRAIN, bench.INFER) for name in models for t in times[phase][name]]
        assert len(timed) == 8 and max(timed) < 0.04
    assert all(len(record.warm[name, n, phase]) == bench.WARM_MIN for name in models for n in (16, 32) for phase in ("train", "infer"))
    assert record.compiles == {16: record.compiles[16], 32: record.compiles[32]}


def test_the_warm_up_goes_on_while_a_call_is_still_settling(bench):
    def calls(seconds):
        it = iter(seconds)
        return lambda: next(it)

    assert bench.warm(calls([1.0, 0.1, 0.1, 9.9])) == [1.0, 0.1, 0.1]
    assert bench.warm(calls([1.0, 0.1, 0.5, 0.1, 9.9])) == [1.0, 0.1, 0.5, 0.1]  # a compile on the third call
    assert len(bench.warm(calls([0.1] + [0.5] * 20))) == bench.WARM_MAX  # never settles: stops at the most


def test_the_baseline_fast_paths_compute_the_encoders_function_with_its_parameters(bench):
    """3l_bilstm_padded / _packed (one nn.LSTM call) equal the 3l_bilstm encoder (one op per layer and direction) given
    its weights, on the benchmark's full-length batches; the same for bilstm."""
    torch.manual_seed(0)
    x, mask = torch.randn(3, 7, bench.INPUT), torch.ones(3, 7, dtype=torch.bool)
    for encoder, layers in (("3l_bilstm", 3), ("bilstm", 1)):
        reference = bench.build(encoder, "cpu")[0].encoder.eval()
        for packed in (False, True):
            fast = bench.build(f"{encoder}_{'packed' if packed else 'padded'}", "cpu")[0].encoder.eval()
            assert fast.num_parameters() == reference.num_parameters()
            with torch.no_grad():
                for i in range(layers):
                    for suffix in ("", "_reverse"):
                        for weight in ("weight_ih", "weight_hh", "bias_ih", "bias_hh"):
                            getattr(fast.lstm, f"{weight}_l{i}{suffix}").copy_(getattr(reference.layers[i].rnn, f"{weight}_l0{suffix}"))
                assert torch.allclose(fast(x, mask).states, reference(x, mask).states, atol=1e-5)


def test_triton_compiles_are_counted_while_active_and_the_hook_is_put_back(bench):
    knobs = pytest.importorskip("triton").knobs
    seen = []
    knobs.runtime.jit_post_compile_hook = previous = lambda **kwargs: seen.append(kwargs)
    try:
        with bench.TritonCompiles() as compiles:
            knobs.runtime.jit_post_compile_hook(key="k", repr="kernel")
            knobs.runtime.jit_post_compile_hook(key="k2", repr="kernel")
        assert compiles.count == 2 and len(seen) == 2  # counted, and the hook already there still called
        assert knobs.runtime.jit_post_compile_hook is previous
    finally:
        knobs.runtime.jit_post_compile_hook = None


def test_the_table_says_how_it_was_timed(bench):
    record = bench.Record()
    results = {16: {bench.TRAIN: {"rcrn": [0.010, 0.012]}, bench.INFER: {"rcrn": [0.004, 0.004]}}}
    record.warm = {("rcrn", 16, "train"): [2.5, 0.011, 0.010, 0.010], ("rcrn", 16, "infer"): [0.9, 0.004, 0.004]}
    record.ran("rcrn", {"multi_lstm": "triton", "gated_scan": "triton"})
    record.ran("rcrn", {"gated_scan": "triton"})
    record.tuned_during("rcrn", {}, {"gated_scan._forward_kernel": {"400, True, True, False, float32": "BLOCK_D=128, num_warps=2"}})
    record.tuned_during("fhe", {}, {"gated_scan._forward_kernel": {"400, True, True, False, float32": "BLOCK_D=64, num_warps=1"}})
    record.compiles = {16: 1}
    record.profiles["rcrn", "train"] = {"items": 1200, "busy_ms": 4.4, "top": [("bmm_kernel|x", 512, 2.0), ("_forward_kernel", 256, 1.0)]}
    text = "\n".join(bench.timing_section(record, results, ["rcrn"], cuda=True))
    assert "Triton kernels compiled during the timed rounds: **1**, by length 16: 1: those rounds include compile time" in text
    assert "| `rcrn` | multi_lstm: triton, gated_scan: triton | 4/3 | 2500 |" in text
    assert "| `gated_scan._forward_kernel` | 400, True, True, False, float32 | BLOCK_D=128, num_warps=2 | `rcrn` |" in text
    assert "BLOCK_D=64" not in text  # the key was chosen once, during rcrn's warm-up
    assert "| `rcrn` | train | 1200 | 4.40 | 11.00 | 40% | `bmm_kernel/x` ×512 (2.00 ms); `_forward_kernel` ×256 (1.00 ms) |" in text
    record.compiles = {16: None}
    assert "not counted (this Triton has no compile hook)" in "\n".join(bench.timing_section(record, results, ["rcrn"], cuda=True))


def test_the_kernel_variant_row_runs_its_encoder_with_the_variant_on_and_only_on_cuda(bench, monkeypatch):
    """`rcrn_persistent` is `rcrn` (same parameters, same outputs) with multi_lstm's persistent kernels switched
    on for its calls; on the CPU it is left out (it would time `rcrn` again)."""
    from rnnbench.encoders.rcrn import RCRN
    from rnnbench.kernels.multi_lstm import persistent

    seen = []
    birnns = RCRN._birnns
    monkeypatch.setattr(RCRN, "_birnns", lambda self, x, mask: seen.append(persistent.ENABLED) or birnns(self, x, mask))
    batch = bench.batch_of(8, "cpu")
    (variant, _), (plain, _) = bench.build("rcrn_persistent", "cpu"), bench.build("rcrn", "cpu")
    assert variant.encoder.num_parameters() == plain.encoder.num_parameters()
    with torch.no_grad():
        variant.eval(), plain.eval()
        assert torch.equal(variant(batch)[0].logits, plain(batch)[0].logits)  # on the CPU the variant changes nothing
    assert seen[0] is True and seen[-1] is False and not persistent.ENABLED
    assert "rcrn_persistent" in bench.ENCODERS and "rcrn_persistent" in bench.OUTSIDE
