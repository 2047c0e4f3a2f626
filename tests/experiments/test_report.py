"""The report: markdown tables, CSV tables and figures that read at a glance (one colour and marker per rule in
every figure, stopping times that span decades on a log axis, titles not clipped)."""

from __future__ import annotations

import sys

import numpy as np
import pytest
from experiment_helpers import fill_synthetic, tiny

from allocopt.exceptions import MissingDependencyError
from allocopt.experiments import RULE_STYLES, Store, load_spec, report_figures, rule_styles, write_report

matplotlib = pytest.importorskip("matplotlib")


def synthetic_store(folder, spec, scales=None, separate=()):
    """A store of ``spec`` filled with made-up records (nothing is simulated)."""
    with Store.lock(folder):
        store = Store.for_run(folder, load_spec(spec))
    fill_synthetic(store, np.random.default_rng(5), scales=scales, separate=separate)
    return store


SPEC = tiny(n_runs=40, chunk_size=20, rules=[{"name": "kkt-ts"}, {"name": "uniform"}, {"name": "ugape"},
                                            {"name": "lucb", "label": "LUCB (Kalyanakrishnan)",
                                             "options": {"exploration": "kalyanakrishnan"}}])


def markers_and_colours(figure, label):
    """The (colour, marker) of every line of ``label`` in a figure (errorbar lines carry the label)."""
    found = set()
    for axis in figure.axes:
        for line in axis.get_lines():
            if line.get_label() == label:
                found.add((matplotlib.colors.to_hex(line.get_color()), line.get_marker()))
    for legend in figure.legends:
        for handle, text in zip(legend.legend_handles, legend.get_texts()):
            if text.get_text() == label:
                found.add((matplotlib.colors.to_hex(handle.get_color()), handle.get_marker()))
    return found


def test_every_rule_keeps_one_colour_and_marker_in_every_figure(tmp_path):
    store = synthetic_store(tmp_path / "store", SPEC)
    figures = report_figures(store)
    assert set(figures) == {"stopping_times.png", "error_rates.png"}
    styles = rule_styles([(rule["label"] if "label" in rule else rule["name"], rule["name"])
                          for rule in SPEC["rules"]])
    # a registered name keeps its style; a label of a rule whose name no other rule has takes that name's style
    assert styles["kkt-ts"] == RULE_STYLES["kkt-ts"] and styles["LUCB (Kalyanakrishnan)"] == RULE_STYLES["lucb"]
    assert len(set(styles.values())) == 4
    for label, style in styles.items():
        for figure in figures.values():
            assert markers_and_colours(figure, label) == {(style.colour, style.marker)}, (label, figure)


def test_stopping_times_that_span_decades_are_drawn_on_a_log_axis(tmp_path):
    # uniform about 100 times slower than kkt-ts: one panel spans two decades
    wide = synthetic_store(tmp_path / "wide", tiny(n_runs=20, chunk_size=20), scales={"uniform": 100000.0})
    axis = report_figures(wide)["stopping_times.png"].axes[0]
    assert axis.get_yscale() == "log"
    # within a factor of about 3 (ratio 3 between the deltas 0.1 and 0.001): a linear axis
    narrow = synthetic_store(tmp_path / "narrow", tiny(n_runs=20, chunk_size=20,
                                                       fixed_confidence={"delta": [0.1, 0.05]}))
    assert report_figures(narrow)["stopping_times.png"].axes[0].get_yscale() == "linear"


def test_titles_are_not_clipped(tmp_path):
    long = tiny(n_runs=20, chunk_size=20, name="an experiment with a rather long name " * 3)
    long["instances"][0]["name"] = "an instance whose name goes on and on " * 2
    figures = report_figures(synthetic_store(tmp_path / "store", long))
    for figure in figures.values():
        figure.canvas.draw()
        renderer = figure.canvas.get_renderer()
        box = figure.bbox
        texts = [figure._suptitle] + [axis.title for axis in figure.axes]
        for text in texts:
            extent = text.get_window_extent(renderer)
            assert box.x0 - 1 <= extent.x0 and extent.x1 <= box.x1 + 1 and extent.y1 <= box.y1 + 1, text.get_text()


def test_the_report_files(tmp_path):
    store = synthetic_store(tmp_path / "store", SPEC)
    report = write_report(store, tmp_path / "report")
    assert report.status == "completed"
    names = sorted(path.split("/")[-1] for path in report.files)
    assert names == ["error_rates.png", "paired_differences.csv", "report.md", "stopping_times.png", "summary.csv"]
    for name in ("error_rates.png", "stopping_times.png"):
        image = matplotlib.image.imread(tmp_path / "report" / name)
        assert image.ndim == 3 and image.shape[0] > 300 and image.shape[1] > 600
    text = (tmp_path / "report" / "report.md").read_text()
    assert text.startswith("# tiny\n")
    assert "| rule | runs | delta | E[tau] | s.e. | error rate | 95% interval | stopped |" in text
    assert "## Paired differences against kkt-ts" in text and "| gauss4 | uniform | 0.1 |" in text
    assert "bytes per record" in text and "![Mean stopping times](stopping_times.png)" in text


def test_an_incomplete_store_is_reported_as_incomplete(tmp_path):
    spec = tiny(n_runs=40, chunk_size=10)
    spec["instances"] = spec["instances"][:1]
    store = synthetic_store(tmp_path / "store", spec)
    for path in list(store.stored().values())[:3]:
        path.unlink()
    report = write_report(store, tmp_path / "report")
    assert report.status == "incomplete" and report.stored == report.chunks - 3
    assert "(incomplete: the tables cover the chunks stored)" in (tmp_path / "report" / "report.md").read_text()


def test_fixed_budget_and_grouped_instances(tmp_path):
    spec = tiny(n_runs=20, chunk_size=20, rules=[{"name": "sar"}, {"name": "uniform"}])
    del spec["fixed_confidence"], spec["max_samples"]
    spec["fixed_budget"] = {"budgets": [100, 500, 5000]}
    spec["instances"] = [dict(spec["instances"][1], name=f"bern N={n}",
                              theta=list(np.linspace(0.9, 0.1, n)), group="bern", x=n) for n in (4, 8, 16, 64)]
    spec["report"] = {"x_label": "N (arms)"}
    store = synthetic_store(tmp_path / "store", spec)
    figures = report_figures(store)
    assert set(figures) == {"error_rates.png"}  # a stopping time is the budget here
    axes = figures["error_rates.png"].axes
    assert [axis.get_title() for axis in axes] == ["bern, budget = 100", "bern, budget = 500", "bern, budget = 5000"]
    assert axes[0].get_xlabel() == "N (arms)" and axes[0].get_xscale() == "log"
    report = write_report(store, tmp_path / "report")
    assert "| rule | runs | budget | error rate | 95% interval |" in (tmp_path / "report" / "report.md").read_text()
    assert report.status == "completed"


def test_without_matplotlib_the_report_names_the_extra(tmp_path, monkeypatch):
    store = synthetic_store(tmp_path / "store", tiny(n_runs=20, chunk_size=20))
    monkeypatch.setitem(sys.modules, "matplotlib.pyplot", None)
    with pytest.raises(MissingDependencyError, match=r'pip install "allocopt\[plot\]"'):
        write_report(store, tmp_path / "report")
    assert not (tmp_path / "report").exists()


def test_the_report_averages_each_group_over_its_instances(tmp_path):
    grouped = tiny(n_runs=40, chunk_size=20, rules=[{"name": "kkt-ts"}, {"name": "uniform"}],
                   instances=[{"name": f"draw {seed}", "theta": [1.0, 0.5 + 0.1 * seed, 0.0], "k": 1,
                               "variance": 0.25, "group": "draws", "x": seed} for seed in (1, 2, 3)])
    store = synthetic_store(tmp_path / "store", grouped)
    write_report(store, tmp_path / "report")
    text = (tmp_path / "report" / "report.md").read_text()
    assert "## Across the instances of each group, against kkt-ts" in text
    assert "| draws | uniform | 1 | 3 |" in text
