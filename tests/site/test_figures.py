"""The figures a reader reads: small multiples, legends outside the data, the paper's row names,
one colour per encoder in every figure, and the paired-difference plot of a claim."""
from __future__ import annotations

from pathlib import Path

import matplotlib
import pytest

from rnnbench.results import evidence, figures, palette
from rnnbench.results.tables import model_name, paper_table

REPO = Path(__file__).resolve().parents[2]


def table(name: str):
    rows = evidence.read_csv(REPO / "results" / f"{name}.csv")
    registry = paper_table(name)
    names = {(r["encoder"], r["variant"]): model_name(registry, r["encoder"], r["variant"] or None) for r in rows}
    columns = list(dict.fromkeys(r["dataset"] for r in rows))
    return rows, columns, names


def legend_texts(fig) -> list[str]:
    return [t.get_text() for legend in fig.legends for t in legend.get_texts()]


def test_a_many_column_table_is_drawn_as_small_multiples_not_a_strip():
    rows, columns, names = table("rcrn_table1")
    fig = figures.learning_curves(rows, columns, "RCRN Table 1", names)
    width, height = fig.get_size_inches() * 90
    panels = [ax for ax in fig.axes if ax.has_data()]
    assert len(panels) == len({r["dataset"] for r in rows if r["reported"] == "yes" and r["dev_curve"]}) >= 10
    assert width < 1400 and height > 500  # the committed strip was 4950 x 360 pixels
    matplotlib.pyplot.close(fig)


def test_the_legend_lies_outside_every_panel():
    rows, columns, names = table("mzu_table6")
    fig = figures.learning_curves(rows, columns, "MZU Table 6", names)
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    legend = fig.legends[0].get_window_extent(renderer)
    assert not any(legend.overlaps(ax.get_window_extent(renderer)) for ax in fig.axes if ax.has_data())
    matplotlib.pyplot.close(fig)


def test_rows_are_named_as_the_paper_names_them():
    rows, columns, names = table("mzu_table6")
    fig = figures.learning_curves(rows, columns, "MZU Table 6", names)
    texts = legend_texts(fig)
    assert "GRU (With-DT)" in texts  # the paper's name for `dt_gru`
    assert not any(t.startswith(("mzu_cap", "dt_gru")) for t in texts)  # never the internal keys
    matplotlib.pyplot.close(fig)


def test_one_encoder_has_one_colour_in_every_figure():
    colours = {}
    # tables drawn as one panel per column with one legend for the figure (a one-column table of more
    # than MANY_ROWS rows, such as RCRN Table 4 once its rung-2 rows are reported, gets a panel per row)
    for name in ("rcrn_table1", "rcrn_table8", "dcu_table1"):
        rows, columns, names = table(name)
        fig = figures.learning_curves(rows, columns, name, names)
        assert fig.legends, f"{name} is drawn without a figure legend"
        for line, text in zip(fig.legends[0].get_lines(), legend_texts(fig)):
            encoder = next(e for (e, v), n in names.items() if n == text)
            colours.setdefault(encoder, set()).add(matplotlib.colors.to_hex(line.get_color()))
        matplotlib.pyplot.close(fig)
    assert colours["bilstm"] == {palette.colour("bilstm").lower()}
    assert all(len(c) == 1 for c in colours.values())


def test_many_rows_of_one_encoder_get_a_panel_each():
    rows, columns, names = table("lstm_odyssey_table1")
    fig = figures.learning_curves(rows, columns, "LSTM Table 1", names)
    titles = [ax.get_title().replace("\n", " ") for ax in fig.axes if ax.has_data()]
    assert "Baseline 2-LSTM" in titles and len(titles) == len({(r["encoder"], r["variant"]) for r in rows if r["reported"] == "yes"})
    matplotlib.pyplot.close(fig)


def test_the_paired_difference_plot_marks_seeds_interval_zero_and_the_claim(tmp_path):
    fig = figures.paired_differences([0.5, -0.2, 1.1], [1, 2, 3], (0.47, -0.9, 1.8), "RCRN − BiLSTM: TREC accuracy", claimed=0.4)
    ax = fig.axes[0]
    assert len(ax.collections[0].get_offsets()) == 3
    assert {round(line.get_xdata()[0], 2) for line in ax.lines if len(set(line.get_xdata())) == 1} == {0.0, 0.4}
    path = figures.save(fig, tmp_path / "claim.svg")
    text = path.read_text()
    assert "<svg" in text and "RCRN − BiLSTM" in text and "Date" not in text
    assert "95% interval" in text  # the interval's level is printed beside it
    held = figures.save(figures.paired_differences([0.5, 0.5], [1, 2], (0.5, 0.1, 0.9), "a − b", level="99.83%"), tmp_path / "h.svg")
    assert "99.83% interval" in held.read_text()
    assert figures.paired_differences([], [], None, "nothing") is None


def test_svg_output_is_the_same_bytes_each_time(tmp_path):
    first = figures.save(figures.paired_differences([1.0, 2.0], [1, 2], (1.5, 0.0, 3.0), "a − b"), tmp_path / "1.svg")
    second = figures.save(figures.paired_differences([1.0, 2.0], [1, 2], (1.5, 0.0, 3.0), "a − b"), tmp_path / "2.svg")
    assert first.read_bytes() == second.read_bytes()


@pytest.mark.parametrize("encoder", ["bilstm", "an_encoder_added_later"])
def test_the_palette_is_stable(encoder):
    assert palette.colour(encoder) == palette.colour(encoder)
    assert palette.colour(encoder).startswith("#")


def test_coinciding_seeds_are_drawn_at_different_heights():
    from rnnbench.results.figures import _stagger

    levels = _stagger([-3.2, -1.4, -0.6, -0.4, -0.6])  # RCRN Table 5's seeds 3 and 5 coincide
    assert {levels[2], levels[4]} == {0, 1} and levels[0] == levels[1] == levels[3] == 1  # lone dots on the line
    assert len(set(_stagger([0.0, 0.0, 0.0]))) == 3
