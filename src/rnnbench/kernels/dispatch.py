"""The one dispatcher of every kernel op: implementation names, the fallback policy, shape checks.

Every op (``gated_scan``, ``multi_lstm``, ``residual_lstm``, ``fhe_upper``,
``mzu_transition``) takes ``impl=`` with one of the same names:

- ``"reference"``: the op's plain per-step loop (``<op>/reference.py``), the specification.
- ``"torch"``: a fast path in torch operations, any device (not every op has one).
- ``"cpu"``: compiled C (``<op>/cpu.py`` and its ``cpu.c``), CPU tensors only.
- ``"triton"``: Triton kernels (``<op>/triton.py``), CUDA tensors (CPU tensors under
  ``TRITON_INTERPRET=1``, which is how the tests run them).

``impl=None`` (the default of every op) means the process-wide default, set with
``set_default_impl`` (for direct library use); that default is ``"auto"``: "triton" on CUDA,
"cpu" elsewhere. A run passes its ``trainer.kernel_impl`` to its encoder instead
(``Encoder.use_kernels``), which hands it to every op as ``impl=Preferred(name)``.

Fallback, the same for every op, with a warning once per (op, wanted, used):

- "cpu" without a C compiler -> the op's "torch" path, else "reference";
- "triton" without Triton installed -> "torch", else "reference";
- an implementation the op does not have (MZU has no Triton kernel), asked for by the
  process-wide default or a ``Preferred`` name -> "torch", else "reference" ("auto" picks
  it without a warning).

Asked for by name in ``impl=``, an implementation the op does not have, or "cpu" on
CUDA tensors, is an error. ``implementations_used()`` says what actually ran since
``reset_used()``, for the run record; ``autotuned_configs()`` which config Triton's autotuner
chose for each kernel (scripts/bench_cost.py records both).
"""
from __future__ import annotations

import functools
import warnings

import torch

from rnnbench.errors import RnnbenchError

IMPLS = ("reference", "torch", "cpu", "triton")
CHOICES = ("auto", *IMPLS)


class KernelError(RnnbenchError, ValueError):
    """A kernel op called with an implementation it cannot run or with mismatched shapes."""


_default = "auto"
_used: dict[str, list[str]] = {}


class Preferred(str):
    """An implementation name chosen for a whole model (a run's ``trainer.kernel_impl``), given
    as ``impl=``: an op that lacks it falls back as under the process-wide default, where a plain
    name in ``impl=`` is an error."""

    def __new__(cls, name: str):
        if name not in CHOICES:
            raise KernelError(f"kernel implementation {name!r} is unknown: use one of {', '.join(CHOICES)}")
        return super().__new__(cls, name)


def set_default_impl(name: str) -> None:
    """Make ``name`` ("auto", "reference", "torch", "cpu" or "triton") what every op runs
    when called without ``impl=``."""
    global _default
    if name not in CHOICES:
        raise KernelError(f"kernel implementation {name!r} is unknown: use one of {', '.join(CHOICES)}")
    _default = name


def get_default_impl() -> str:
    return _default


def implementations_used() -> dict[str, str]:
    """{op: implementation} of every op that ran since the last ``reset_used()`` (several
    implementations of one op, in the order they first ran, joined by ",")."""
    return {op: ",".join(impls) for op, impls in _used.items()}


def reset_used() -> None:
    _used.clear()


def autotuned_configs() -> dict[str, dict[str, str]]:
    """{kernel: {autotuning key: chosen config}} of every Triton kernel of these ops that has run
    in this process: what Triton's autotuner picked (its cache; a kernel with one config, as under
    TRITON_INTERPRET=1, gives that config as ``best_config`` under the key "only config"). Kernels
    are named ``<op>.<kernel function>``; the key is the autotuner's (its key arguments, then the
    tensor arguments' dtypes). Empty where Triton never ran."""
    import sys

    try:
        from triton.runtime.autotuner import Autotuner
    except ModuleNotFoundError:
        return {}
    out: dict[str, dict[str, str]] = {}
    for module_name, module in sorted(sys.modules.items()):
        parts = module_name.split(".")
        if parts[:2] != ["rnnbench", "kernels"] or parts[-1] != "triton" or len(parts) != 4:
            continue
        for attribute, kernel in sorted(vars(module).items()):
            if not isinstance(kernel, Autotuner):
                continue
            chosen = {_key_text(key): _config_text(config) for key, config in getattr(kernel, "cache", {}).items()}
            if not chosen and getattr(kernel, "best_config", None) is not None:
                chosen = {"only config": _config_text(kernel.best_config)}
            if chosen:
                out[f"{parts[2]}.{attribute}"] = chosen
    return out


def _key_text(key) -> str:
    return ", ".join(str(k).removeprefix("torch.") for k in (key if isinstance(key, tuple) else (key,)))


def _config_text(config) -> str:
    """``BLOCK_D=128, num_warps=2, num_stages=3``: the config's block sizes and launch options."""
    launch = {name: getattr(config, name, None) for name in ("num_warps", "num_stages")}
    return ", ".join(f"{k}={v}" for k, v in {**config.kwargs, **launch}.items() if v is not None)


def resolve(op: str, provided: tuple[str, ...], tensor: torch.Tensor, impl: str | None = None) -> str:
    """The implementation of ``op`` (which has ``provided``) to run on ``tensor``'s device,
    by the policy of the module docstring; records it for ``implementations_used``."""
    explicit = impl is not None and not isinstance(impl, Preferred)
    wanted = _default if impl is None else str(impl)
    if wanted not in CHOICES:
        raise KernelError(f"{op}: unknown impl {wanted!r} (known: {', '.join(CHOICES)})")
    automatic = wanted == "auto"
    if automatic:
        wanted = "triton" if tensor.is_cuda else "cpu"
    if wanted not in provided:
        if explicit and not automatic:
            raise KernelError(f"{op} has no {wanted!r} implementation (it has: {', '.join(provided)})")
        chosen = _fallback(provided)
        if not automatic:
            _warn_once(op, wanted, chosen, f"{op} has no {wanted!r} implementation")
        wanted = chosen
    if wanted == "cpu":
        if tensor.device.type != "cpu":
            raise KernelError(f"{op} impl='cpu' needs CPU tensors, got {tensor.device}: use impl='auto' or 'triton'")
        if not c_compiler_available():
            wanted = _warn_once(op, "cpu", _fallback(provided), "no C compiler found (install one or set CC)")
    elif wanted == "triton" and not triton_available():
        wanted = _warn_once(op, "triton", _fallback(provided), "Triton is not installed (pip install 'rnnbench[kernels]')")
    used = _used.setdefault(op, [])
    if wanted not in used:
        used.append(wanted)
    return wanted


def _fallback(provided: tuple[str, ...]) -> str:
    return "torch" if "torch" in provided else "reference"


@functools.cache
def _warn_once(op: str, wanted: str, used: str, why: str) -> str:
    warnings.warn(f"{op}: {why}, so impl={wanted!r} runs as impl={used!r}", stacklevel=4)
    return used


@functools.cache
def c_compiler_available() -> bool:
    from rnnbench.kernels import cbuild

    return cbuild.compiler() is not None


@functools.cache
def triton_available() -> bool:
    try:
        import triton  # noqa: F401
    except ModuleNotFoundError:
        return False
    return True


def check_shapes(op: str, **named) -> dict[str, int]:
    """Refuse mismatched shapes before a kernel indexes raw memory by them.

    Each keyword is ``name=(tensor or None, "B T D")``: one symbol per dimension, a symbol
    standing for the same size wherever it appears; a number stands for itself and a
    number before a symbol (``4H``) for that multiple of it. Absent (None) tensors are not
    checked. Returns the sizes bound to the symbols."""
    sizes: dict[str, int] = {}
    checks: list[tuple[int, str, int]] = []  # (factor, symbol, size) of each dimension
    ok = True
    for tensor, pattern in named.values():
        if tensor is None:
            continue
        symbols = pattern.split()
        if tensor.dim() != len(symbols):
            ok = False
            break
        for symbol, size in zip(symbols, tensor.shape):
            digits = len(symbol) - len(symbol.lstrip("0123456789"))
            factor, name = int(symbol[:digits] or 1), symbol[digits:]
            if not name:
                ok = ok and size == factor
            elif factor == 1:
                ok = ok and sizes.setdefault(name, size) == size
            else:
                checks.append((factor, name, size))
    for factor, name, size in checks if ok else ():
        if size % factor or sizes.setdefault(name, size // factor) * factor != size:
            ok = False
    if not ok:
        want = ", ".join(f"{name} [{', '.join(pattern.split())}]" for name, (_, pattern) in named.items())
        got = {name: None if t is None else tuple(t.shape) for name, (t, _) in named.items()}
        raise KernelError(f"{op} expects {want}; got {got}")
    return sizes
