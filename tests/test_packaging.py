"""A non-editable install finds its configs in the package, never in a repository around it."""
from __future__ import annotations

import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

from rnnbench.conf_dir import conf_dir
from tests.helpers import REPO


def test_a_checkout_reads_its_own_conf():
    assert conf_dir() == REPO / "conf"


@pytest.mark.slow
def test_a_wheel_installed_in_a_fresh_venv_composes_configs_from_outside_the_repository(tmp_path):
    # Build from a copy of the sources, so that nothing (build/) is written into the checkout.
    src = tmp_path / "src"
    files = subprocess.run(["git", "ls-files", "-co", "--exclude-standard"], cwd=REPO, capture_output=True, text=True, check=True).stdout.split()
    for name in files:
        if name.startswith(("runs/", "results/", "tests/")) or not (REPO / name).is_file():
            continue
        (src / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(REPO / name, src / name)
    wheels = tmp_path / "wheels"
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(wheels), str(src)],
                   check=True, capture_output=True, timeout=300)
    (wheel,) = wheels.glob("rnnbench-*.whl")
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    python = venv / "bin" / "python"
    site = Path(subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                               capture_output=True, text=True, check=True).stdout.strip())
    (site / "_deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")  # torch, hydra...: this venv's, without its editable rnnbench
    subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps", "-q", "--target", str(site), str(wheel)], check=True, timeout=300)
    probe = ("import rnnbench; from rnnbench.conf_dir import conf_dir; from rnnbench.compose import compose_config;"
             "from rnnbench.encoders.build import known_encoders;"
             "cfg = compose_config(['task=trec', 'encoder=rcrn', 'trainer=smoke']);"
             "from rnnbench.campaign.sweep_rule import load;"  # a sweep's declaration is package data
             "print(rnnbench.__file__, conf_dir(), cfg.task.name, cfg.encoder.name, cfg.trainer.max_batches, len(known_encoders()),"
             " len(load('fhe_table4_sparsity').cells))")
    out = subprocess.run([str(python), "-c", probe], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    module, confs, task, encoder, max_batches, encoders, sweep_cells = out.stdout.split()
    assert sweep_cells == "6"
    assert Path(module).is_relative_to(site) and Path(confs) == site / "rnnbench" / "conf"
    assert (task, encoder, max_batches) == ("trec", "rcrn", "3") and int(encoders) == len(list((REPO / "conf" / "encoder").glob("*.yaml")))
    # The rnnbench command ships in the wheel and reads the packaged configs; a table's campaign is
    # the library (in the wheel); the verbs that run a checkout's scripts (RCRN Table 10's benchmark)
    # say, in one line, that an installed package has none.
    listed = subprocess.run([str(python), "-m", "rnnbench", "list", "encoders"], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert listed.returncode == 0, listed.stderr
    assert listed.stdout.splitlines()[-1] == f"{int(encoders)} encoders"
    table = subprocess.run([str(python), "-m", "rnnbench", "table", "rcrn_table5", "--plan"], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert table.returncode == 0 and "rcrn_table5" in table.stdout and "run(s) to run" in table.stdout, table.stderr
    bench = subprocess.run([str(python), "-m", "rnnbench", "table", "rcrn_table10"], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert bench.returncode == 2 and bench.stderr.count("\n") == 1 and "an installed package has no scripts/" in bench.stderr
