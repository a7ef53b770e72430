"""Helpers shared by tests: composing configs into a temporary runs folder, running train.py,
importing a script of scripts/."""
from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

from rnnbench.compose import compose_config

REPO = Path(__file__).resolve().parent.parent


def smoke_config(tmp_path: Path, *overrides: str):
    return compose_config(["trainer=smoke", f"paths.runs_dir={tmp_path / 'runs'}", *overrides])


def _train_py_env(env_extra: dict | None = None) -> dict:
    return {**os.environ, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "WANDB_MODE": "disabled", **(env_extra or {})}


def run_train_py(args: list[str], env_extra: dict | None = None, timeout: int = 600) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(REPO / "train.py"), *args], cwd=REPO, env=_train_py_env(env_extra),
                          capture_output=True, text=True, timeout=timeout)


def spawn_train_py(args: list[str], env_extra: dict | None = None, **popen) -> subprocess.Popen:
    """``train.py`` started in the background (tests that kill or interrupt it)."""
    return subprocess.Popen([sys.executable, str(REPO / "train.py"), *args], cwd=REPO, env=_train_py_env(env_extra), **popen)


def parameters_without_gradient(module) -> list[str]:
    """Names of trainable parameters that a backward pass left without a nonzero gradient."""
    import torch

    return [n for n, p in module.named_parameters() if p.requires_grad and (p.grad is None or not torch.any(p.grad != 0))]


def assert_scores_independent_of_batching(model, batch_of, examples, rtol=1e-4, atol=1e-5):
    """Each example's logits are the same batched with the others (longer ones pad it) as alone."""
    import torch

    with torch.no_grad():
        together = model(batch_of(examples))[0].logits
        for i, example in enumerate(examples):
            alone = model(batch_of([example]))[0].logits
            torch.testing.assert_close(together[i], alone[0], rtol=rtol, atol=atol)


def load_script(name: str):
    """``scripts/<name>.py`` imported as a module (the scripts are not a package)."""
    spec = importlib.util.spec_from_file_location(name, REPO / "scripts" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


_COMPILE_FOR_A_GPU = """
import importlib, sys, json
import triton
from triton.backends.compiler import GPUTarget
module, kernels, flags, pointers, dtypes = json.loads(sys.argv[1])
module = importlib.import_module(module)
for name in kernels:
    fn = getattr(module, name).fn
    consts = {arg: value for arg, value in flags.items() if arg in fn.arg_names}
    for dtype in dtypes:
        signature = {arg: "constexpr" if arg in consts else pointers.get(arg) or (f"*{dtype}" if arg.endswith("_ptr") else "i64")
                     for arg in fn.arg_names}
        constexprs = {(fn.arg_names.index(arg),): value for arg, value in consts.items()}
        triton.compile(triton.compiler.ASTSource(fn, signature, constexprs), target=GPUTarget("cuda", 80, 32))
"""


def compile_for_a_gpu(tmp_path: Path, module: str, kernels: list[str], flags: dict, pointers: dict[str, str],
                      dtypes: tuple[str, ...] = ("fp32",)) -> subprocess.CompletedProcess:
    """Compile Triton kernels of ``module`` for a CUDA target (sm_80; no GPU needed) in a process without
    TRITON_INTERPRET: the interpreter does not type-check like the compiler. ``flags``: the constexpr
    arguments; ``pointers``: a pointer argument's type where it is not the data ``dtypes`` (each compiled)."""
    import json

    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    env["TRITON_CACHE_DIR"] = str(tmp_path)
    return subprocess.run([sys.executable, "-c", _COMPILE_FOR_A_GPU, json.dumps([module, kernels, flags, pointers, list(dtypes)])],
                          env=env, capture_output=True, text=True, timeout=300)
