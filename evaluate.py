"""Re-score a finished run on any split, without training: `python evaluate.py run=<run folder>`.

    python evaluate.py run=runs/picking/fhe/s1-0123abcd4567                      # its test split
    python evaluate.py run=<folder> split=dev
    python evaluate.py run=<folder> task.reader.test_length=400                   # longer test sequences (picking)
    python evaluate.py run=<folder> trainer.mc_dropout_samples=60                 # MC dropout at test time

Overrides change only how the data is read (``task.reader.*``), where it is
(``paths.*``) and how the model is scored (``trainer.mc_dropout_samples``,
``trainer.mc_dropout_combine``, ``trainer.eval_batch_size``, ``trainer.max_eval_batches``,
``trainer.truncate``, ``trainer.num_threads``, ``trainer.device``, ``trainer.kernel_impl``);
encoder, embedding and head keys are refused (they would describe another model).

Writes ``eval-<split>-<hash of the overrides>.json`` (metrics, the run's own recorded
scores of that split beside them, the config used) and ``.predictions.jsonl`` in the run
folder; the run's own files are never touched. A bad input is one line on stderr
(``error: ...``) and exit status 2. The same as ``rnnbench evaluate RUN [--split S] [overrides]``.
"""
from __future__ import annotations

import sys


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or any(a in ("-h", "--help") for a in args):
        print(__doc__.strip())
        return 0 if args else 2
    run, split, overrides = None, "test", []
    for arg in args:
        if arg.startswith("run="):
            run = arg.partition("=")[2]
        elif arg.startswith("split="):
            split = arg.partition("=")[2]
        else:
            overrides.append(arg)
    if not run:
        print("error: give the run folder: python evaluate.py run=runs/<task>/<encoder>/s<seed>-<identity> [split=test] [overrides]",
              file=sys.stderr)
        return 2
    from rnnbench.commands.evaluate import evaluate_and_report

    return evaluate_and_report(run, split, overrides)


if __name__ == "__main__":
    sys.exit(main())
