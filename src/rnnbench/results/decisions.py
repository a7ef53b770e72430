"""Every paper claim decided once, from the committed evidence: each table's claims evaluated on its
rows (``claims.evaluate``, through the gates), then all decided together (Holm within each paper's
family of accuracy or cost claims, Benjamini-Hochberg across all: ``verdicts.decide``). The ledger
(results/claims.md), the report's claim pages and the command line read ``decided``; a table page
reads its claims ``alone``, each at 95% before the correction, and says where the decided verdicts are."""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from rnnbench.encoders.build import known_encoders
from rnnbench.results import claims as claims_mod
from rnnbench.results import evidence, floors, verdicts
from rnnbench.results.tables import REGISTRY, paper_table

# Evidence of the same table measured on another device, decided beside the main evidence
# (the paper's cost claims are about a GPU; `make gpu-check` writes <table>_cuda.csv on one).
DEVICE_EVIDENCE = {"cuda": "on the GPU"}

@dataclass
class Section:
    """One table's claims decided on one body of evidence (its CSV, or another device's)."""

    table: str
    registry: dict
    rows: list[dict]
    results: list[claims_mod.ClaimResult]
    title: str
    device: str = ""  # "" for the table's own evidence, else the device key ("cuda")
    hardware: str = ""


def natural_key(table: str) -> tuple:
    """rcrn_table2 before rcrn_table10: the papers' own order of their tables."""
    return tuple(int(part) if part.isdigit() else part for part in re.split(r"(\d+)", table))


def is_accuracy(claim: dict) -> bool:
    return claim.get("quantity", "test") == "test"


def device_of(result: claims_mod.ClaimResult, rows: list[dict]) -> str:
    """"GPU" where every paired run of the claim's rows ran on one, else "CPU"."""
    compared = {claims_mod.split_row(n) for n in result.compared or (result.claim["better"], result.claim["worse"])}
    runs = [r for r in rows if (r["encoder"], r["variant"]) in compared and r.get("reported") == "yes"]
    return "GPU" if runs and all(str(r.get("device", "")).startswith("cuda") for r in runs) else "CPU"


def family_of(section: Section, result: claims_mod.ClaimResult) -> str:
    kind = "accuracy" if is_accuracy(result.claim) else f"cost on the {device_of(result, section.rows)}"
    return f"{section.registry['paper'].upper()} {kind}"


def table_results(name: str, claims: list[dict], rows: list[dict], items: list[dict] | evidence.ItemScores, missing_status: str | None,
                  built: set[str], sizes: dict | None = None, floor_map: dict | None = None) -> list[claims_mod.ClaimResult]:
    """Each claim's evidence on one table's rows; a table without rows gives ``missing_status``
    (a size claim is still counted from ``sizes``, the configs' parameter counts). ``floor_map``:
    the majority-class scores the floor gate reads (``floors.read_floors``)."""
    results = []
    for claim in claims:
        if missing_status:
            result = claims_mod.evaluate(name, claim, [], [], counts=sizes) if sizes and claim.get("quantity") == "parameters" else None
            if result is None or not result.counted:
                result = claims_mod.ClaimResult(name, claim, claims_mod.paper_values(name, claim), (None, None), verdict=missing_status)
        else:
            result = claims_mod.evaluate(name, claim, rows, items, counts=sizes, floors=floor_map)
        unbuilt = [claims_mod.split_row(claim[s])[0] for s in ("better", "worse") if claims_mod.split_row(claim[s])[0] not in built]
        if unbuilt and result.verdict in (verdicts.NOT_RUN, verdicts.DATA_MISSING):
            result.note = f"{', '.join(f'`{u}`' for u in unbuilt)} not built yet"
        results.append(result)
    return results


def decide(sections: list[Section]) -> None:
    """Every claim of every section decided together: Holm within each family, BH across all."""
    owner = {id(r): s for s in sections for r in s.results}
    verdicts.decide([r for s in sections for r in s.results], lambda r: family_of(owner[id(r)], r))


def paper_name(registry: dict) -> str:
    return registry["paper"].upper()


def decided(results_dir: Path, status_of_table=None) -> list[Section]:
    """Every registry table with claims, in the papers' order, on its own evidence and on any
    other device's (``<table>_cuda.csv``), decided together: the one decision the ledger, the
    report and the command line read. ``status_of_table(name)`` says why a table without evidence
    has none ("not run" or "data missing": ``campaign.data_status``); by default "not run"."""
    sections = []
    built = set(known_encoders())
    floor_map = floors.read_floors(results_dir)
    for path in sorted(REGISTRY.glob("*.yaml"), key=lambda p: natural_key(p.stem)):
        name = path.stem
        table_claims = claims_mod.load_claims(name)
        if not table_claims:
            continue
        registry = paper_table(name)
        csv_path = results_dir / f"{name}.csv"
        rows = evidence.read_csv(csv_path) if csv_path.exists() else []
        items = evidence.read_item_scores(evidence.items_path(csv_path))  # grouped once for all the table's claims
        missing_status = (status_of_table(name) if status_of_table else verdicts.NOT_RUN) if not rows else None
        link = f"[{name}]({name}.md)" if (results_dir / f"{name}.md").exists() else name
        sizes = evidence.read_parameter_counts(evidence.parameters_path(csv_path))
        results = table_results(name, table_claims, rows, items, missing_status, built, sizes, floor_map)
        title = f"{paper_name(registry)} Table {registry['table']}: {registry['caption']} ({link})"
        sections.append(Section(name, registry, rows, results, title))
        for device, where in DEVICE_EVIDENCE.items():
            device_csv = results_dir / f"{name}_{device}.csv"
            if not device_csv.exists():
                continue
            device_rows = evidence.read_csv(device_csv)
            hardware = ", ".join(sorted({r["hardware"] for r in device_rows}))
            device_results = table_results(name, table_claims, device_rows, [], None, built)
            sections.append(Section(name, registry, device_rows, device_results,
                                    f"The same claims {where} ({hardware}; [{name}_{device}]({name}_{device}.md))", device, hardware))
    decide(sections)
    return sections


def alone(table: str, rows: list[dict], items, confidence: float = 0.95, counts: dict | None = None,
          floor_map: dict | None = None) -> list[claims_mod.ClaimResult]:
    """The table's claims each evaluated alone on its rows, before the correction for multiplicity
    (what a table page shows beside the ledger's decided verdicts)."""
    return [claims_mod.evaluate(table, c, rows, items, confidence, counts, floor_map) for c in claims_mod.load_claims(table)]


def one_family(table: str, rows: list[dict], items, floor_map: dict | None = None) -> list[claims_mod.ClaimResult]:
    """A table of your own (``rnnbench compare``): its claims, one per encoder against the baseline,
    decided together as one family (Holm over the pairs)."""
    results = alone(table, rows, items, floor_map=floor_map)
    verdicts.decide(results)
    return results
