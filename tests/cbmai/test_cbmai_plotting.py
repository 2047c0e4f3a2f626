"""Plots of the CBMAI layer (Agg backend): they draw what they say and return the Axes."""

from __future__ import annotations

import numpy as np
import pytest

import allocopt
from allocopt.algorithms import ErrorRate
from allocopt.cbmai.plotting import plot_arm_gaps, plot_error_rates, plot_iv_scores

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def test_figure_1_marks_every_distinct_score_on_the_bound():
    # The instance of examples/cbmai_figure_1.py: arms 1 and 2 share their best basis (rho_1 = rho_2 = 1.15),
    # arms 3, 4, 5 have their own crossings (0.9385, 1.025, 0.6857): four labels.
    problem = allocopt.CBMAIProblem([0.9, 1.4, 1.0, 0.5, 0.4], [[0.5, 1.5, 1.8, 0.3, 0.8]], [1.0])
    fig, ax = plt.subplots()
    assert plot_iv_scores(problem, ax=ax) is ax
    labels = sorted(text.get_text() for text in ax.texts if "rho" in text.get_text())
    assert labels == [r"$\rho_{1}$ = $\rho_{2}$", r"$\rho_{3}$", r"$\rho_{4}$", r"$\rho_{5}$"]
    heights = sorted(round(text.xy[1], 4) for text in ax.texts if "rho" in text.get_text())
    assert heights == [0.6857, 0.9385, 1.025, 1.15]
    plt.close(fig)


def test_figure_1_needs_one_constraint():
    problem = allocopt.CBMAIProblem([1.0, 0.5], [[0.5, 0.2], [0.1, 0.3]], [1.0, 1.0])
    with pytest.raises(allocopt.InvalidArgumentError, match="one cost"):
        plot_iv_scores(problem)


def test_error_rate_plot_and_gap_plot_return_their_axes():
    rates = [ErrorRate(status="completed", method="sfsr", time=0.0, error_rate=rate, n_errors=int(rate * 100),
                       n_runs=100, ci_low=max(rate - 0.05, 0.0), ci_high=rate + 0.05, confidence=0.95,
                       interval="clopper-pearson", budget=budget, target=(0, 1), entropy=0)
             for rate, budget in ((0.5, 100), (0.2, 200), (0.0, 400))]
    fig, ax = plt.subplots()
    assert plot_error_rates({"SFSR": rates}, ax=ax) is ax
    line = ax.get_lines()[0]
    np.testing.assert_allclose(line.get_xdata(), [100, 200, 400])
    assert line.get_ydata()[-1] == pytest.approx(0.05)  # a zero rate is drawn at its upper end on a log axis
    plt.close(fig)
    hardness = allocopt.cbmai_hardness(allocopt.CBMAIProblem([1.0, 0.6, 0.3], [[0.5, 0.2, 0.4]], [1.0]))
    fig, ax = plt.subplots()
    assert plot_arm_gaps(hardness, ax=ax) is ax
    assert len(ax.patches) == int(np.sum(hardness.sorted_gaps > 0))
    plt.close(fig)
