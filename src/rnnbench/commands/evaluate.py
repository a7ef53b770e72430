"""``rnnbench evaluate RUN [--split S] [OVERRIDE ...]`` and ``python evaluate.py run=RUN``:
re-score a finished run's best checkpoint on a split, without training (rnnbench.inference)."""
from __future__ import annotations

import sys

HELP = """Re-score a finished run's best checkpoint on a split, without training: its test split gives
exactly the recorded test scores. Overrides change only how the data is read (task.reader.*),
where it is (paths.*) and how the model is scored (trainer.mc_dropout_samples,
trainer.max_eval_batches, ...); encoder, embedding and head keys are refused.

  rnnbench evaluate runs/picking/bilstm/s1-0123abcd4567
  rnnbench evaluate runs/picking/bilstm/s1-0123abcd4567 --split dev
  rnnbench evaluate RUN task.reader.test_length=400          longer test sequences (picking)
  rnnbench evaluate RUN trainer.mc_dropout_samples=60        MC dropout at test time

Writes eval-<split>-<hash of the overrides>.json (metrics, the run's recorded scores beside them)
and .predictions.jsonl in the run folder; the run's own files are never touched."""


def add_parser(verbs, verb: str, summary: str) -> None:
    import argparse

    parser = verbs.add_parser(verb, help=summary, description=HELP, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("run_folder", metavar="RUN", help="a finished run's folder (runs/<task>/<encoder>/s<seed>-<identity>)")
    parser.add_argument("--split", default="test", help="train, dev or test (default: test)")
    parser.add_argument("overrides", nargs="*", metavar="OVERRIDE", help="key=value: task.reader.*, paths.* or an evaluation setting")
    parser.set_defaults(run=_run, extras="overrides")


def _run(args) -> int:
    split = args.split
    overrides = []
    for item in args.overrides:  # evaluate.py's split=dev is accepted too
        if item.startswith("split="):
            split = item.partition("=")[2]
        else:
            overrides.append(item)
    return evaluate_and_report(args.run_folder, split, overrides)


def evaluate_and_report(run: str, split: str, overrides: list[str]) -> int:
    """Score, print the scores (and the run's recorded ones) and where they were written; 0, or
    the error's exit status after its one line."""
    from rnnbench.errors import RnnbenchError
    from rnnbench.inference import evaluate_run

    try:
        evaluation, path = evaluate_run(run, split, overrides)
    except RnnbenchError as exc:
        print(f"error: {exc}", file=sys.stderr, flush=True)
        return exc.exit_code
    scores = ", ".join(f"{k} {v:.4f}" if isinstance(v, float) else f"{k} {v}" for k, v in evaluation["metrics"].items())
    recorded = evaluation.get("recorded")
    print(f"{split}: {scores} ({evaluation['examples_scored']} examples)"
          + (f"; recorded by the run: {recorded}" if recorded and not evaluation["overrides"] else ""))
    print(f"wrote {path} and {evaluation['predictions']}")
    return 0
