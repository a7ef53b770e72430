"""trainer.precision: bf16 autocast on the CPU trains close to float32; the recurrence stays in float32; fp16 needs CUDA."""
from __future__ import annotations

import math

import pytest
import torch

from rnnbench.compose import compose_config
from rnnbench.config import validate
from rnnbench.encoders.build import build_encoder
from rnnbench.errors import ConfigError
from rnnbench.run import train
from rnnbench.training.precision import Precision, keep_encoder_float32
from tests.helpers import smoke_config

TINY = ["task.reader.train_size=200", "task.reader.dev_size=40", "task.reader.test_size=40", "encoder.hidden_size=16",
        "trainer.max_batches=null", "trainer.max_eval_batches=null", "trainer.batch_size=20", "trainer.epochs=2"]


def test_bf16_on_the_cpu_trains_close_to_float32(tmp_path):
    full = train(smoke_config(tmp_path / "32", *TINY), say=lambda _: None)
    half = train(smoke_config(tmp_path / "bf16", *TINY, "trainer.precision=bf16"), say=lambda _: None)
    assert half["identity"] != full["identity"] and half["config"]["trainer"]["precision"] == "bf16"
    for a, b in zip(full["history"], half["history"]):
        assert math.isfinite(b["train_loss"]) and math.isfinite(b["dev_loss"])
        assert b["train_loss"] == pytest.approx(a["train_loss"], rel=0.02)
        assert b["dev_loss"] == pytest.approx(a["dev_loss"], rel=0.02)
        assert b["train_loss"] != a["train_loss"]  # autocast did run


@pytest.mark.parametrize("encoder", ["bilstm", "rcrn", "mzu_sat"])
def test_the_encoder_runs_in_float32_under_autocast(encoder):
    torch.manual_seed(0)
    enc = build_encoder(compose_config([f"encoder={encoder}", "encoder.hidden_size=8"]).encoder, 6).eval()
    x, mask = torch.randn(2, 5, 6), torch.tensor([[1, 1, 1, 1, 1], [1, 1, 1, 0, 0]], dtype=torch.bool)
    expected = enc(x, mask, None).states
    keep_encoder_float32(enc, "cpu")
    with torch.autocast("cpu", dtype=torch.bfloat16):
        got = enc(x.bfloat16(), mask, None).states
    assert got.dtype == torch.float32
    torch.testing.assert_close(got, enc(x.bfloat16().float(), mask, None).states)  # only the input's rounding differs
    assert (got - expected).abs().max() < 0.05


def test_fp16_on_the_cpu_is_refused_in_one_line(tmp_path):
    with pytest.raises(ConfigError, match=r"^trainer.precision=fp16 needs CUDA .*use trainer.precision=bf16"):
        validate(compose_config(["trainer.precision=fp16", "trainer.device=cpu", f"paths.runs_dir={tmp_path}"]))
    with pytest.raises(ConfigError, match="needs CUDA"):
        Precision("fp16", torch.device("cpu"))
    with pytest.raises(ConfigError, match=r"trainer.precision=16: must be one of 32, bf16, fp16"):
        validate(compose_config(["trainer.precision=16", f"paths.runs_dir={tmp_path}"]))
