"""``rnnbench predict RUN TEXT [TEXT ...]``: a finished run's prediction for raw text.

The text is tokenised with the task's own tokenizer (``Reader.tokenize``), numericalised
with the run's vocabulary and scored by its best checkpoint (``rnnbench.load``): the label,
and each label's probability for heads with class scores (a ranking head gives a score).
"""
from __future__ import annotations

import argparse
import json

from rnnbench.errors import ConfigError

HELP = """A finished run's prediction for new text: the label and each label's probability. The text is
tokenised with the task's own tokenizer; words the run's vocabulary never saw are named.

  rnnbench predict runs/trec/bilstm/s1-0123abcd4567 "Who wrote Hamlet?"
  rnnbench predict RUN "A man plays a guitar." --hypothesis "A person makes music."      a pair (SNLI, SciTail)
  rnnbench predict RUN "What is the capital of France?" "Paris is the capital of France."  WikiQA, TrecQA: a score
  rnnbench predict RUN "The battery life is great." --field aspect="battery life"        aspect sentiment
  rnnbench predict RUN PASSAGE --field question=QUESTION --option A --option B --option C --option D   RACE
  rnnbench predict RUN "3 1 4 1 5 9 2 6" --field question=5                              the picking task

TEXT arguments fill the task's text fields in their order (`--fields` lists them); --hypothesis,
--option and --field name=value name one. Heads that generate or point into text (span, pointer
and language-model tasks) score only known splits: use rnnbench evaluate."""


def add_parser(verbs, verb: str, summary: str) -> None:
    parser = verbs.add_parser(verb, help=summary, description=HELP, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("run_folder", metavar="RUN", help="a finished run's folder (runs/<task>/<encoder>/s<seed>-<identity>)")
    parser.add_argument("texts", nargs="*", metavar="TEXT", help="raw text, one per text field of the task, in order")
    parser.add_argument("--hypothesis", help="the second text of an entailment pair (SNLI, SciTail)")
    parser.add_argument("--option", dest="options", action="append", default=[], metavar="TEXT",
                        help="an answer option of a multiple-choice task, in order (repeat for each)")
    parser.add_argument("--field", dest="fields", action="append", default=[], metavar="NAME=VALUE",
                        help="any field by name (repeatable), e.g. --field question=5 (picking)")
    parser.add_argument("--top", type=int, default=10, help="how many labels to list, most probable first (default 10; 0: all)")
    parser.add_argument("--json", action="store_true", help="one JSON object: prediction, probabilities, tokens")
    parser.add_argument("--device", default="cpu", help="cpu (default) or cuda")
    parser.add_argument("--show-fields", action="store_true", help="list the fields the run's model reads, and stop")
    parser.set_defaults(run=run, extras="texts")


def input_of(task: str, fields: list[str], extra_inputs: tuple[str, ...], texts: list[str], hypothesis: str | None = None,
             options: list[str] = (), named: list[str] = ()) -> dict:
    """The record to predict from the command line's texts: named fields first, then the TEXT
    arguments fill the text fields still empty, in order. One error line for a field the task
    does not have, too many or too few texts, or a wrong number of options."""
    known = ", ".join([*fields, *extra_inputs])
    record: dict = {}

    def put(name: str, value: str, how: str) -> None:
        if name not in fields and name not in extra_inputs:
            raise ConfigError(f"{how}: task {task} has no field {name!r} (its fields: {known})")
        if name in record:
            raise ConfigError(f"{how}: field {name!r} given twice")
        record[name] = value

    for item in named:
        name, sep, value = item.partition("=")
        if not sep or not name:
            raise ConfigError(f"--field {item!r}: give NAME=VALUE, e.g. --field question=5 (the fields: {known})")
        put(name.strip(), value, f"--field {name.strip()}")
    if hypothesis is not None:
        put("hypothesis", hypothesis, "--hypothesis")
    if options:
        slots = [f for f in fields if f.startswith("option_")]
        if not slots:
            raise ConfigError(f"--option: task {task} is not multiple-choice (its fields: {known})")
        if len(options) != len(slots):
            raise ConfigError(f"--option: task {task} chooses among {len(slots)} options; got {len(options)}")
        for slot, text in zip(slots, options):
            put(slot, text, "--option")
    empty = [f for f in fields if f not in record]
    if len(texts) > len(empty):
        raise ConfigError(f"{len(texts)} texts given, but task {task} reads {len(fields)} "
                          f"({', '.join(fields)}){' and ' + ', '.join(f for f in fields if f in record) + ' came by name' if record else ''}")
    record.update(zip(empty, texts))
    lacking = [f for f in fields if f not in record]
    if lacking:
        how = " or ".join(filter(None, ["a TEXT argument", "--hypothesis" if lacking == ["hypothesis"] else "",
                                        f"--field {lacking[0]}=..."]))
        raise ConfigError(f"task {task} reads {', '.join(fields)}: give the {', '.join(lacking)} too ({how})")
    for name in extra_inputs:
        if name not in record:
            raise ConfigError(f"task {task} also needs {name!r}: --field {name}=VALUE")
    return record


def run(args) -> int:
    from rnnbench.inference import NoClassProbabilities, load

    loaded = load(args.run_folder, device=args.device)
    extra = tuple(getattr(loaded.reader, "inputs", ()))
    if args.show_fields:
        print(f"task {loaded.task} reads the text fields {', '.join(loaded.fields)}"
              + (f" and {', '.join(extra)}" if extra else "") + f"; labels: {', '.join(loaded.label_names) or 'none'}")
        return 0
    if not args.texts and not args.fields and args.hypothesis is None and not args.options:
        raise ConfigError(f"give the text to predict: rnnbench predict {args.run_folder} \"some text\" (task {loaded.task} reads "
                          f"{', '.join(loaded.fields)})")
    record = loaded.record_of(input_of(loaded.task, loaded.fields, extra, args.texts, args.hypothesis, args.options, args.fields))
    try:
        result = loaded.predict(record, probabilities=True)
        prediction, probabilities = result["label"], result["probabilities"]
    except NoClassProbabilities:
        prediction, probabilities = loaded.predict(record), None
    tokens = {f: record[f] for f in loaded.fields}
    if args.json:
        print(json.dumps({"run": str(loaded.run_dir), "task": loaded.task, "prediction": prediction,
                          "probabilities": probabilities, "tokens": tokens}))
        return 0
    for name, words in tokens.items():
        unknown = loaded.unknown_words(words)
        note = f"   ({len(unknown)} of {len(words)} not in the run's vocabulary: {' '.join(unknown[:8])}{' ...' if len(unknown) > 8 else ''})" if unknown else ""
        print(f"{name}: {' '.join(words)}{note}")
    if probabilities is None:
        print(f"score: {prediction:.4f}" if isinstance(prediction, float) else f"prediction: {prediction}")
        return 0
    print(f"prediction: {prediction}")
    ranked = sorted(probabilities.items(), key=lambda kv: -kv[1])
    shown = ranked if args.top <= 0 else ranked[:args.top]
    width = max(len(name) for name, _ in shown)
    for name, p in shown:
        print(f"  {name:<{width}}  {p:.4f}")
    if len(shown) < len(ranked):
        print(f"  ... {len(ranked) - len(shown)} more (--top 0 lists all)")
    return 0
