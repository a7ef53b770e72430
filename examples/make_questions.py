"""Write examples/questions.csv: questions labelled with the kind of answer they ask for.

    python examples/make_questions.py            # rewrites examples/questions.csv (the same bytes every time)

The file is generated, not collected: every question is a template of this script filled
with the script's own phrases, drawn with a fixed seed. Four labels (person, place, number,
time). The question word alone does not decide the label: "what is the price of ..." asks for
a number, "what is the location of ..." for a place, "what is the date of ..." for a time, and
"which teacher ..." for a person, so an encoder has to read past the first word; and a phrase
may carry another label's words ("where was the book the doctor wrote written?" asks for a
place), so the words alone do not decide it either. A tenth of the labels are replaced by
another label at random (``NOISE``), so no model scores 100%: the comparison has something to
measure. docs/compare.md compares encoders on it.
"""
from __future__ import annotations

import csv
import random
import sys
from pathlib import Path

OUT = Path(__file__).resolve().parent / "questions.csv"
SIZE = 1000  # questions in the file
NOISE = 0.1  # the share of labels replaced by another label
SEED = 7

# Some phrases carry another label's words (a person, a place, a year, a price): the label is the
# question's, not theirs.
SLOTS = {
    "book": ["the red notebook", "the winter letters", "a quiet harbour", "the last garden", "the silver road",
             "the long summer", "the paper boat", "the blue door", "the book the doctor wrote",
             "the letters from the town hall", "the story of the first election", "the guide to the price of bread"],
    "place": ["the old bridge", "the central station", "the city museum", "the north tower", "the harbour market",
              "the stone church", "the new theatre", "the town hall", "the tower where the writer lived",
              "the bridge the engineer designed", "the museum built in the last year", "the hall of many doors"],
    "city": ["the capital", "this town", "the river city", "the island town", "the mountain village", "the old port",
             "the town where the singer was born", "the city of the great flood"],
    "event": ["the first festival", "the great flood", "the bridge opening", "the harbour fire", "the music fair",
              "the long strike", "the spring market", "the last election", "the festival in the capital",
              "the fair the teacher started", "the strike at the company", "the market of a hundred tables"],
    "thing": ["the ticket", "the bicycle", "a loaf of bread", "the old map", "the blue lamp", "a train pass",
              "the wooden chair", "a cup of coffee", "the map that the painter drew", "the lamp from the station",
              "the ticket to the festival", "the chair the architect made"],
    "group": ["the choir", "the football club", "the company", "the school", "the library", "the bakery",
              "the hospital", "the newspaper", "the club founded by a doctor", "the school near the harbour",
              "the company of the old port", "the choir that sang at the election"],
    "role": ["teacher", "engineer", "painter", "doctor", "writer", "farmer", "singer", "architect"],
    "things": ["windows", "students", "books", "trees", "bridges", "chairs", "rooms", "doors"],
}
TEMPLATES = {
    "person": ["who wrote {book}?", "who founded {group}?", "which {role} designed {place}?",
               "what is the name of the {role} who built {place}?", "who was the first {role} in {city}?",
               "which {role} wrote {book}?"],
    "place": ["where is {place}?", "in which city is {place}?", "where did {event} take place?",
              "what is the location of {group}?", "which country hosted {event}?", "where was {book} written?"],
    "number": ["how many {things} are in {place}?", "how much does {thing} cost?", "what is the price of {thing}?",
               "what is the population of {city}?", "how tall is {place}?", "how many {role}s work at {group}?"],
    "time": ["when did {event} happen?", "what year was {group} founded?", "when was {book} written?",
             "what is the date of {event}?", "how long ago was {event}?", "in which year did {event} take place?"],
}
OPENINGS = ["", "", "", "do you know ", "tell me ", "please tell me "]  # most questions start plainly


def question(rng: random.Random, label: str) -> str:
    template = rng.choice(TEMPLATES[label])
    text = template.format(**{slot: rng.choice(words) for slot, words in SLOTS.items()})
    text = rng.choice(OPENINGS) + text
    return text[0].upper() + text[1:]


def rows(size: int = SIZE, noise: float = NOISE, seed: int = SEED) -> list[dict[str, str]]:
    """``size`` questions with their labels, a share ``noise`` of the labels replaced at random."""
    rng = random.Random(seed)
    labels = sorted(TEMPLATES)
    out = []
    for i in range(size):
        label = labels[i % len(labels)]
        text = question(rng, label)
        if rng.random() < noise:
            label = rng.choice([other for other in labels if other != label])
        out.append({"text": text, "label": label})
    rng.shuffle(out)
    return out


def write(path: Path = OUT, size: int = SIZE) -> Path:
    with open(path, "w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, ["text", "label"], lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows(size))
    return path


if __name__ == "__main__":
    print(f"wrote {write(Path(sys.argv[1]) if len(sys.argv) > 1 else OUT)}")
