"""The package's layers (docs/architecture.md): every import, at the top of a module or inside a
function, points down the layers or stays in its own folder, and no modules import each other in
a circle. What the lower floors may not know of the upper ones (results/ never reads a config the
campaign composes, training never asks the report) stays true because this test reads the code."""
from __future__ import annotations

import ast
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
PACKAGE = REPO / "src" / "rnnbench"

# Bottom to top: a unit may import its own folder and any unit of a lower layer, never a higher one.
LAYERS = [
    {"errors", "progress", "versions", "conf_dir", "nn", "kernels", "cli", "sweep", "options"},  # the ground
    {"data"},
    {"metrics"},
    {"encoders"},
    {"heads"},
    {"config", "compose", "compose_cache"},  # the config schema and composition (kept on disk)
    {"results"},  # the results library: records, evidence, statistics, claims, tables; reads no config it composes
    {"training"},  # the loop, checkpoints, the sanity checks
    {"run", "inference"},
    {"campaign"},  # a table's experiments, protocol, runs, sanity gate, the written table
    {"site"},  # the report
    {"commands"},  # one module per verb
    {"__init__", "__main__"},
]
LAYER = {unit: i for i, units in enumerate(LAYERS) for unit in units}


def _module_files() -> dict[str, Path]:
    files = {".".join(["rnnbench", *path.relative_to(PACKAGE).with_suffix("").parts]): path for path in PACKAGE.rglob("*.py")}
    return {name.removesuffix(".__init__"): path for name, path in files.items()}


MODULES = _module_files()


def unit_of(module: str) -> str:
    """The folder or top-level module a module belongs to (``rnnbench.results.claims`` -> ``results``)."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def imports_of(module: str, path: Path) -> list[tuple[str, int]]:
    """(imported module, line) for every import of rnnbench in ``path``, function bodies included;
    ``from rnnbench.x import y`` names ``rnnbench.x.y`` where y is a module, else ``rnnbench.x``."""
    out = []
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            out += [(a.name, node.lineno) for a in node.names if a.name.startswith("rnnbench")]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, *([base] if base else [])])
            if not base.startswith("rnnbench"):
                continue
            for alias in node.names:
                name = f"{base}.{alias.name}"
                out.append((name if name in MODULES else base, node.lineno))
    return out


def test_every_module_is_in_a_layer():
    missing = sorted({unit_of(m) for m in MODULES} - set(LAYER))
    assert not missing, f"folders or modules in no layer of tests/test_layers.py (add them where they belong): {missing}"


def test_no_import_runs_back_up_a_layer():
    back = []
    for module, path in MODULES.items():
        for target, line in imports_of(module, path):
            here, there = unit_of(module), unit_of(target)
            if here != there and LAYER[there] > LAYER[here]:
                back.append(f"{path.relative_to(REPO)}:{line}: {module} ({here}) imports {target} ({there}), a higher layer")
    assert not back, "imports that run back up (move the shared code down, or the caller up):\n" + "\n".join(back)


def test_no_modules_import_each_other_in_a_circle():
    graph = {m: {t for t, _ in imports_of(m, p) if t in MODULES and t != m} for m, p in MODULES.items()}
    # A package's __init__ re-exporting its submodules is not a circle of code: leave those arrows out.
    graph = {m: {t for t in ts if not (t.startswith(m + ".") and MODULES[m].name == "__init__.py")} for m, ts in graph.items()}
    index, low, stack, on_stack, circles = {}, {}, [], set(), []

    def visit(node):  # Tarjan's strongly connected components
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in graph[node]:
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                circles.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    assert not circles, f"modules that import each other in a circle: {circles}"


def test_the_rule_sees_a_function_body_import_that_runs_back_up(tmp_path):
    lower = tmp_path / "low.py"
    lower.write_text("def f():\n    from rnnbench.campaign import runner\n    return runner\n")
    (target, _), = imports_of("rnnbench.results.low", lower)
    assert target == "rnnbench.campaign.runner" and LAYER[unit_of(target)] > LAYER[unit_of("rnnbench.results.low")]
