"""The C builder: every kernel's C source compiles without a warning, and builds are cached."""
from __future__ import annotations

import subprocess

import pytest

from rnnbench.kernels import cbuild
from rnnbench.kernels.gated_scan import cpu as gated_scan_cpu
from rnnbench.kernels.multi_lstm import cpu as multi_lstm_cpu
from rnnbench.kernels.mzu_transition import cpu as mzu_cpu

PIECES = {"gated_scan": gated_scan_cpu, "multi_lstm": multi_lstm_cpu, "mzu_transition": mzu_cpu}


@pytest.fixture(scope="module")
def cc():
    compiler = cbuild.compiler()
    assert compiler, "no C compiler (set CC): the CPU implementations would fall back"
    return compiler


@pytest.mark.parametrize("op", PIECES)
def test_sources_compile_without_a_warning(op, cc, tmp_path):
    """Built as ``cbuild.build`` builds it (-Wall -Wextra among the flags), plus -Werror."""
    piece = PIECES[op]
    assert {"-Wall", "-Wextra"} <= set(piece.C_FLAGS)
    command = cbuild.command(cc, piece.C_SOURCE, tmp_path / "piece.so", (*piece.C_FLAGS, "-Werror"), (), getattr(piece, "C_LIBS", ()))
    result = subprocess.run(command, capture_output=True, text=True)
    assert result.returncode == 0 and not result.stderr, result.stderr[-3000:]


def test_a_warning_fails_the_check(cc, tmp_path):
    """The check above can fail: an unused variable is a warning under the builder's flags."""
    source = tmp_path / "bad.c"
    source.write_text('#include "prelude.h"\nint f(int a) { int unused; return a; }\n')
    command = cbuild.command(cc, source, tmp_path / "bad.so", (*cbuild.BASE_FLAGS, "-Werror"))
    result = subprocess.run(command, capture_output=True, text=True)
    assert result.returncode != 0 and "unused" in result.stderr


def test_sources_ship_as_package_data():
    from importlib import resources

    kernels = resources.files("rnnbench.kernels")
    assert kernels.joinpath("prelude.h").is_file()
    for op in PIECES:
        assert kernels.joinpath(op, "cpu.c").is_file()


def test_a_build_is_cached_per_source(tmp_path, monkeypatch):
    monkeypatch.setenv("RNNBENCH_CACHE", str(tmp_path))
    source = tmp_path / "one.c"
    source.write_text('#include "prelude.h"\nfloat one(float a) { return exp_f32(a); }\n')
    cbuild.build("one", source)
    (first,) = (tmp_path / "kernels").glob("one_*.so")
    cbuild.build("one", source)
    assert list((tmp_path / "kernels").glob("one_*.so")) == [first]
    source.write_text('#include "prelude.h"\nfloat one(float a) { return exp_f32(-a); }\n')
    cbuild.build("one", source)
    assert len(list((tmp_path / "kernels").glob("one_*.so"))) == 2


def test_no_compiler_is_named(monkeypatch, tmp_path):
    monkeypatch.setenv("CC", str(tmp_path / "no-such-cc"))
    with pytest.raises(RuntimeError, match="no C compiler"):
        cbuild.build("one", tmp_path / "one.c")
