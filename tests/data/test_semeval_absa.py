"""SemEvalABSAReader on the official XML: one record per aspect term, the conflict label, the HDS flag
(also through the Arrow cache and the metric subsets), the sentence-level dev split, errors, real data."""
from __future__ import annotations

from pathlib import Path

import pytest

from rnnbench.compose import compose_config
from rnnbench.data.prepare import load_splits
from rnnbench.data.semeval_absa import POLARITIES, SemEvalABSAReader
from rnnbench.errors import ConfigError, DataFormatError, DatasetMissingError
from rnnbench.metrics import score

# The quirks of the real files: an entity in a term, a sentence without aspect terms, aspect categories
# (restaurant files only), the conflict label, a term occurring twice, a non-ASCII letter, multi-word terms.
TRAIN = """<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<sentences>
    <sentence id="3121">
        <text>But the staff was so horrible to us.</text>
        <aspectTerms>
            <aspectTerm term="staff" polarity="negative" from="8" to="13"/>
        </aspectTerms>
        <aspectCategories>
            <aspectCategory category="service" polarity="negative"/>
        </aspectCategories>
    </sentence>
    <sentence id="812">
        <text>I bought a HP Pavilion laptop.</text>
    </sentence>
    <sentence id="1316">
        <text>The "sales" team was rude, the crème brûlée was great, the sales team never called.</text>
        <aspectTerms>
            <aspectTerm term="&quot;sales&quot; team" polarity="negative" from="4" to="16"/>
            <aspectTerm term="crème brûlée" polarity="positive" from="31" to="43"/>
            <aspectTerm term="sales team" polarity="negative" from="62" to="72"/>
        </aspectTerms>
    </sentence>
    <sentence id="7">
        <text>The pizza was good but pricey, and the wine list was good.</text>
        <aspectTerms>
            <aspectTerm term="pizza" polarity="conflict" from="4" to="9"/>
            <aspectTerm term="wine list" polarity="positive" from="39" to="48"/>
        </aspectTerms>
    </sentence>
    <sentence id="8">
        <text>Service was fine.</text>
        <aspectTerms>
            <aspectTerm term="Service" polarity="neutral" from="0" to="7"/>
        </aspectTerms>
    </sentence>
</sentences>
"""
TEST = """<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<sentences>
    <sentence id="90">
        <text>The appetizers are ok, but the service is slow.</text>
        <aspectTerms>
            <aspectTerm term="appetizers" polarity="neutral" from="4" to="14"/>
            <aspectTerm term="service" polarity="negative" from="31" to="38"/>
        </aspectTerms>
    </sentence>
    <sentence id="91">
        <text>Great food and great staff.</text>
        <aspectTerms>
            <aspectTerm term="food" polarity="positive" from="6" to="10"/>
            <aspectTerm term="staff" polarity="positive" from="21" to="26"/>
        </aspectTerms>
    </sentence>
</sentences>
"""


def write_absa(root: Path, train: str = TRAIN, test: str = TEST, domain: str = "restaurants") -> Path:
    folder = root / "semeval2014_absa"
    folder.mkdir(parents=True, exist_ok=True)
    names = ("Restaurants_Train_v2.xml", "Restaurants_Test_Gold.xml") if domain == "restaurants" else ("Laptop_Train_v2.xml", "Laptops_Test_Gold.xml")
    (folder / names[0]).write_text(train, encoding="utf-8")
    (folder / names[1]).write_text(test, encoding="utf-8")
    return root


def by_id(records):
    return {r["id"]: r for r in records}


def test_one_record_per_aspect_term_four_labels(tmp_path):
    splits = SemEvalABSAReader(dev_fraction=0.0).load(write_absa(tmp_path))
    assert SemEvalABSAReader().label_names == ["positive", "negative", "neutral", "conflict"]
    assert splits["dev"] == []
    train = by_id(splits["train"])
    assert sorted(train) == ["train-1316-0", "train-1316-1", "train-1316-2", "train-3121-0", "train-7-0", "train-7-1", "train-8-0"]
    assert train["train-3121-0"] == {
        "id": "train-3121-0", "tokens": ["But", "the", "staff", "was", "so", "horrible", "to", "us", "."],
        "aspect": ["staff"], "label": POLARITIES.index("negative"), "hds": False,
    }
    # The entity is decoded and the quotes tokenised as in the sentence (Treebank quotes).
    assert train["train-1316-0"]["aspect"] == ["``", "sales", "''", "team"]
    assert train["train-1316-0"]["tokens"][:6] == ["The", "``", "sales", "''", "team", "was"]
    assert train["train-1316-1"]["aspect"] == ["crème", "brûlée"]
    assert train["train-7-0"]["label"] == POLARITIES.index("conflict")
    # HDS: the sentence's terms carry different polarities (conflict counts as one).
    assert {i: r["hds"] for i, r in train.items()} == {
        "train-1316-0": True, "train-1316-1": True, "train-1316-2": True, "train-3121-0": False,
        "train-7-0": True, "train-7-1": True, "train-8-0": False,
    }
    test = by_id(splits["test"])
    assert [test[f"test-90-{k}"]["hds"] for k in (0, 1)] == [True, True]
    assert [test[f"test-91-{k}"]["hds"] for k in (0, 1)] == [False, False]


def test_without_conflict(tmp_path):
    reader = SemEvalABSAReader(keep_conflict=False, dev_fraction=0.0)
    assert reader.label_names == ["positive", "negative", "neutral"]
    train = by_id(reader.load(write_absa(tmp_path))["train"])
    # The conflict term is gone; its sentence's remaining term is alone, so no longer hard.
    # ids keep the term's position in the sentence, whatever is dropped.
    assert "train-7-0" not in train and train["train-7-1"]["aspect"] == ["wine", "list"]
    assert train["train-7-1"]["hds"] is False
    assert len(train) == 6


def test_dev_split_holds_out_whole_sentences(tmp_path):
    root = write_absa(tmp_path)
    first = SemEvalABSAReader(dev_fraction=0.5).load(root)
    assert first == SemEvalABSAReader(dev_fraction=0.5).load(root)

    def sentences(records):
        return {r["id"].rsplit("-", 1)[0] for r in records}

    assert len(sentences(first["dev"])) == 2 and len(sentences(first["train"])) == 2  # 4 sentences with terms
    assert not sentences(first["dev"]) & sentences(first["train"])
    assert len(first["train"]) + len(first["dev"]) == 7
    others = [sentences(SemEvalABSAReader(dev_fraction=0.5, dev_seed=s).load(root)["dev"]) for s in range(6)]
    assert any(s != sentences(first["dev"]) for s in others)


def test_hds_flag_survives_the_arrow_cache_and_selects_the_metric_subset(tmp_path):
    root = write_absa(tmp_path / "data")
    reader = SemEvalABSAReader(dev_fraction=0.25)  # every split non-empty, as the cache needs
    load_splits(reader, root, tmp_path / "cache")  # parses and writes the Arrow cache
    test = load_splits(reader, root, tmp_path / "cache")["test"]  # read back from it
    assert (tmp_path / "cache" / "records").is_dir()
    assert [type(r["hds"]) for r in test] == [bool] * 4
    records = sorted(test, key=lambda r: r["id"])  # 90-0 neutral, 90-1 negative (hard); 91-0, 91-1 positive
    predictions = [POLARITIES.index(p) for p in ("neutral", "positive", "positive", "negative")]
    subsets = compose_config(["task=absa_restaurant"]).task.metric_subsets  # {hds: {hds: true}} as the task gives it
    assert score(["accuracy"], predictions, records, subsets) == {"accuracy": 0.5, "accuracy_hds": 0.5}
    predictions = [POLARITIES.index(p) for p in ("neutral", "negative", "negative", "negative")]
    assert score(["accuracy"], predictions, records, subsets) == {"accuracy": 0.5, "accuracy_hds": 1.0}


@pytest.mark.parametrize(
    "bad, line, problem",
    [
        (('polarity="neutral" from="0"', 'polarity="mixed" from="0"'), 33, "polarity 'mixed'"),
        (('<aspectTerm term="Service" ', '<aspectTerm '), 33, "without term"),
        (("<text>Service was fine.</text>", ""), 30, "sentence '8' has no <text>"),
        (("</sentences>", "</sentence>"), 36, "malformed XML"),
    ],
)
def test_malformed_xml_names_file_and_line(tmp_path, bad, line, problem):
    root = write_absa(tmp_path, train=TRAIN.replace(*bad))
    with pytest.raises(DataFormatError) as info:
        SemEvalABSAReader().load(root)
    assert f"Restaurants_Train_v2.xml:{line}" in str(info.value) and problem in str(info.value)


def test_options_and_missing_files(tmp_path):
    with pytest.raises(ConfigError, match="domain"):
        SemEvalABSAReader(domain="hotels")
    with pytest.raises(DatasetMissingError) as info:
        SemEvalABSAReader(domain="laptops").load(write_absa(tmp_path))
    assert "semeval2014_absa/Laptop_Train_v2.xml" in str(info.value) and "Laptops_Test_Gold.xml" in str(info.value)
    assert len(SemEvalABSAReader(domain="laptops", dev_fraction=0.0).load(write_absa(tmp_path, domain="laptops"))["train"]) == 7


@pytest.mark.parametrize(
    "domain, train_terms, test_terms, test_hds, test_terms_3, test_hds_3",
    [("restaurants", 3693, 1134, 245, 1120, 228), ("laptops", 2358, 654, 108, 638, 103)],
)
def test_real_data_counts(real_data, domain, train_terms, test_terms, test_hds, test_terms_3, test_hds_3):
    splits = SemEvalABSAReader(domain=domain).load(real_data)
    assert len(splits["train"]) + len(splits["dev"]) == train_terms
    assert len(splits["test"]) == test_terms and sum(r["hds"] for r in splits["test"]) == test_hds
    assert 0.08 < len(splits["dev"]) / train_terms < 0.12
    three = SemEvalABSAReader(domain=domain, keep_conflict=False).load(real_data)
    assert len(three["test"]) == test_terms_3 and sum(r["hds"] for r in three["test"]) == test_hds_3
    assert {r["label"] for r in three["test"]} == {0, 1, 2}
