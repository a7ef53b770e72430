"""SemEval-2014 Task 4 (Pontiki et al. 2014), aspect terms: restaurants and laptops.

The official XML: ``<sentences><sentence id><text>...</text><aspectTerms>
<aspectTerm term polarity from to/>...</aspectTerms>[<aspectCategories>...]</sentence>``
(only the restaurant files carry aspect categories, ignored here). Files, under
``semeval2014_absa/``: ``Restaurants_Train_v2.xml``, ``Restaurants_Test_Gold.xml``,
``Laptop_Train_v2.xml``, ``Laptops_Test_Gold.xml``.

One record per aspect term (a sentence with n aspect terms gives n records;
sentences without aspect terms give none):

    {"id": "<split>-<sentence id>-<k>", "tokens": [sentence tokens],
     "aspect": [aspect term tokens], "label": int, "hds": bool}

Text and terms are tokenised with rnnbench's Treebank tokenizer. ``hds`` marks the
MZU paper's hard subset (after Xue & Li 2018): the sentence's aspect terms carry
more than one distinct polarity (among the labels kept). Each such sentence then
appears once per aspect, as in the paper.

Options:
  domain          restaurants | laptops.
  keep_conflict   true (default): four labels positive, negative, neutral, conflict,
                  as the MZU paper describes the data ("four sentiment labels") and as
                  Xue & Li's (2018) ATSA data, whose TD-LSTM/ATAE-LSTM/GCAE numbers it
                  cites, keeps them. false: conflict terms are dropped (most other ABSA
                  papers); ``hds`` is then computed over the remaining terms.
  dev_fraction    0.1 (ours): SemEval-2014 has no dev set and neither the MZU paper nor
                  Xue & Li describe one. This fraction of the train *sentences* (with all
                  their aspect terms, so no sentence is in both) is held out at random
                  with ``dev_seed``; the test set is used once.
  dev_seed        13.
Counts (aspect terms, all four labels): restaurants train 3,693 / test 1,134,
laptops train 2,358 / test 654; HDS test: restaurants 245, laptops 108.
"""
from __future__ import annotations

from pathlib import Path
from xml.parsers import expat

from rnnbench.data.base import Reader, Records, Splits, hold_out
from rnnbench.data.tokenize import treebank_tokenize
from rnnbench.errors import ConfigError, DataFormatError

POLARITIES = ["positive", "negative", "neutral", "conflict"]
FILES = {
    "restaurants": ("semeval2014_absa/Restaurants_Train_v2.xml", "semeval2014_absa/Restaurants_Test_Gold.xml"),
    "laptops": ("semeval2014_absa/Laptop_Train_v2.xml", "semeval2014_absa/Laptops_Test_Gold.xml"),
}


class _Sentence:
    __slots__ = ("id", "line", "text", "terms")

    def __init__(self, sentence_id: str, line: int):
        self.id, self.line, self.text = sentence_id, line, None
        self.terms: list[tuple[str, str, int]] = []  # (term, polarity, line)


def parse_sentences(path: Path) -> list[_Sentence]:
    """The sentences of a SemEval-2014 XML file, with their aspect terms and line numbers.

    expat (not ElementTree) so that every problem can name its line."""
    sentences: list[_Sentence] = []
    current: list[_Sentence] = []
    text_parts: list[str] | None = None
    parser = expat.ParserCreate()

    def fail(problem: str) -> None:
        raise DataFormatError(path, parser.CurrentLineNumber, problem)

    def start(tag: str, attrs: dict) -> None:
        nonlocal text_parts
        if tag == "sentence":
            if "id" not in attrs:
                fail("<sentence> without an id")
            current[:] = [_Sentence(attrs["id"], parser.CurrentLineNumber)]
        elif tag == "text":
            text_parts = []
        elif tag == "aspectTerm":
            if not current:
                fail("<aspectTerm> outside a <sentence>")
            missing = [key for key in ("term", "polarity") if key not in attrs]
            if missing:
                fail(f"<aspectTerm> without {' and '.join(missing)}")
            if attrs["polarity"] not in POLARITIES:
                fail(f"polarity {attrs['polarity']!r} is not one of {', '.join(POLARITIES)}")
            current[0].terms.append((attrs["term"], attrs["polarity"], parser.CurrentLineNumber))

    def end(tag: str) -> None:
        nonlocal text_parts
        if tag == "text" and current and text_parts is not None:
            current[0].text = "".join(text_parts)
            text_parts = None
        elif tag == "sentence":
            sentence = current.pop()
            if sentence.text is None:
                raise DataFormatError(path, sentence.line, f"sentence {sentence.id!r} has no <text>")
            sentences.append(sentence)

    def characters(data: str) -> None:
        if text_parts is not None:
            text_parts.append(data)

    parser.StartElementHandler = start
    parser.EndElementHandler = end
    parser.CharacterDataHandler = characters
    try:
        parser.Parse(path.read_bytes(), True)
    except expat.ExpatError as exc:
        raise DataFormatError(path, exc.lineno, f"malformed XML: {expat.ErrorString(exc.code)}") from None
    return sentences


class SemEvalABSAReader(Reader):
    """SemEval-2014 Task 4 aspect terms; see the module docstring for the options."""

    source = "http://alt.qcri.org/semeval2014/task4/ (META-SHARE: Restaurants/Laptop(s) train v2 and test gold XML, in semeval2014_absa/)"

    def __init__(self, domain: str = "restaurants", keep_conflict: bool = True, dev_fraction: float = 0.1, dev_seed: int = 13):
        if domain not in FILES:
            raise ConfigError(f"task.reader.domain must be one of {', '.join(FILES)}; got {domain!r}")
        self.domain = domain
        self.keep_conflict = keep_conflict
        self.dev_fraction = dev_fraction
        self.dev_seed = dev_seed

    @property
    def name(self) -> str:
        return f"semeval14_{self.domain}"

    @property
    def files(self) -> tuple[str, ...]:
        return FILES[self.domain]

    @property
    def label_names(self) -> list[str]:
        return POLARITIES if self.keep_conflict else POLARITIES[:3]

    def _groups(self, path: Path, split: str) -> list[Records]:
        """The records of each sentence with at least one kept aspect term, sentence by sentence."""
        groups = []
        for sentence in parse_sentences(path):
            # k: the term's position in the sentence, so ids do not depend on what is dropped.
            terms = [(k, *t) for k, t in enumerate(sentence.terms) if t[1] in self.label_names]
            if not terms:
                continue
            tokens = treebank_tokenize(sentence.text)
            if not tokens:
                raise DataFormatError(path, sentence.line, f"sentence {sentence.id!r} has an empty text")
            hard = len({polarity for _, _, polarity, _ in terms}) > 1
            group = []
            for k, term, polarity, line in terms:
                aspect = treebank_tokenize(term)
                if not aspect:
                    raise DataFormatError(path, line, "empty aspect term")
                group.append({"id": f"{split}-{sentence.id}-{k}", "tokens": tokens, "aspect": aspect,
                              "label": self.label_names.index(polarity), "hds": hard})
            groups.append(group)
        return groups

    def read_files(self, root: Path) -> Splits:
        train_path, test_path = (root / f for f in self.files)
        train = self._groups(train_path, "train")
        test = [r for group in self._groups(test_path, "test") for r in group]
        split = hold_out(train, test, round(len(train) * self.dev_fraction), self.dev_seed, f"SemEval-2014 {self.domain} train")
        return {"train": [r for g in split["train"] for r in g], "dev": [r for g in split["dev"] for r in g], "test": test}
