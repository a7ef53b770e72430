"""Replay a row's sanity check and log its memorisation step by step: what precedes a loss jump.

    python scripts/replay_memorisation.py mzu_table1 mzu_cap --steps 130
    python scripts/replay_memorisation.py mzu_table1 mzu_cap --steps 125 --set encoder.routing_iterations=1

The row is built and checked as `scripts/sanity.py` checks it (``rnnbench.training.sanity.check_model``:
the same model, subset, seed and optimizer, so the same numbers); every memorisation step prints
the training loss, the gradient's norm before clipping and the three parameter groups that carry
most of it (a group: the parameters sharing the last part of their name, e.g. every
``zone_weight``). ``--steps`` replaces the check's step budget; the replay still stops at the
check's target accuracy. Nothing is cached and results/sanity.md is not touched: a replay is a
diagnostic, not a verdict.
"""
from __future__ import annotations

import argparse
import collections
import sys
import time

import torch
from hydra.errors import HydraException

from rnnbench.training import sanity
from rnnbench.errors import RnnbenchError
from rnnbench.campaign import sanity_gate as gate


def gradient_groups(model: torch.nn.Module) -> tuple[float, list[tuple[str, float]]]:
    """The gradient's total norm and each parameter group's, largest first."""
    squares: dict[str, float] = collections.defaultdict(float)
    for name, parameter in model.named_parameters():
        if parameter.grad is not None:
            squares[name.rsplit(".", 1)[-1]] += float(parameter.grad.detach().pow(2).sum())
    groups = sorted(((group, value ** 0.5) for group, value in squares.items()), key=lambda kv: -kv[1])
    return sum(squares.values()) ** 0.5, groups


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("experiment", help="an experiment config (conf/experiment/<name>.yaml), or 'default' for the default task")
    parser.add_argument("encoder", help="an encoder config (conf/encoder/<name>.yaml)")
    parser.add_argument("--steps", type=int, default=None, help="memorisation steps (default: the check's budget at the row's rate)")
    parser.add_argument("--set", dest="overrides", action="append", default=[], help="an extra Hydra override (repeatable)")
    args = parser.parse_args(argv)
    if args.steps is not None and args.steps < 1:
        parser.error(f"--steps must be at least 1, got {args.steps}")

    experiment = None if args.experiment == "default" else args.experiment
    row = gate.Row(gate.DEFAULT_TABLE if experiment is None else experiment, experiment, args.encoder)
    try:
        cfg = gate.row_config(row, list(args.overrides))
        data = gate.DataCache().get(cfg)
    except HydraException as exc:  # an unknown experiment, encoder or override
        print(f"error: {str(exc).splitlines()[0]} (conf/: `python scripts/sanity.py --plan` lists the rows)", file=sys.stderr)
        return 2
    except RnnbenchError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(f"{row.name}: lr {cfg.trainer.lr:g} ({cfg.trainer.optimizer}), clip {cfg.trainer.grad_clip}, "
          f"seed {cfg.seed}; overrides: {' '.join(args.overrides) or 'none'}", flush=True)
    started = time.process_time()

    def on_step(step: int, loss: float, model: torch.nn.Module) -> None:
        total, groups = gradient_groups(model)
        top = " ".join(f"{group} {value:.3g}" for group, value in groups[:3])
        print(f"step {step}: loss {loss:.4f}, gradient norm {total:.3g} ({top}); "
              f"{time.process_time() - started:.0f} CPU s", flush=True)

    verdict = sanity.check_model(cfg, data, say=lambda line: print(line, flush=True), on_step=on_step, budget=args.steps)
    memorised = verdict.checks[-1]
    print(f"memorisation: {memorised.shown}; curve (step, accuracy, loss): "
          + ", ".join(f"({p[0]}, {p[1]:.2f}, {p[2]:.3g})" for p in memorised.detail.get("curve", [])))
    return 0


if __name__ == "__main__":
    sys.exit(main())
