"""compare_policies: rules paired by common random numbers. Expected values come from separate identify /
identify_fixed_budget runs with the same root entropy, combined in the test."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from allocopt import TopKProblem
from allocopt.algorithms import KKTTS, Uniform, compare_policies, identify, identify_fixed_budget
from allocopt.exceptions import AllocoptError

PROBLEM = TopKProblem([1.0, 0.7, 0.4, 0.1], k=2, variance=0.25)


def test_paired_differences_equal_separate_runs_with_the_same_entropy():
    comparison = compare_policies(PROBLEM, {"ts": KKTTS(), "uni": Uniform()}, delta=(0.1, 0.01),
                                  n_runs={"ts": 30, "uni": 20}, rng=17)
    ts = identify(PROBLEM, KKTTS(), delta=(0.1, 0.01), n_runs=30, rng=17)
    uni = identify(PROBLEM, Uniform(), delta=(0.1, 0.01), n_runs=20, rng=17)
    assert np.array_equal(comparison.results["ts"].stopping_times, ts.stopping_times)
    assert np.array_equal(comparison.results["uni"].stopping_times, uni.stopping_times)
    rows = comparison.paired_differences()
    assert [(row.policy, row.reference, row.checkpoint, row.n_pairs) for row in rows] == [
        ("uni", "ts", 0.1, 20), ("uni", "ts", 0.01, 20)]
    for column, row in enumerate(rows):
        difference = uni.stopping_times[:, column].astype(float) - ts.stopping_times[:20, column]
        assert row.mean == pytest.approx(difference.mean(), rel=1e-15)
        assert row.standard_error == pytest.approx(difference.std(ddof=1) / math.sqrt(20), rel=1e-12)


def test_fixed_budget_comparison_pairs_the_error_indicators():
    comparison = compare_policies(PROBLEM, ["uniform", "kkt-ts"], budgets=[20, 60], n_runs=25, rng=3,
                                  reference="kkt-ts")
    uni = identify_fixed_budget(PROBLEM, "uniform", [20, 60], n_runs=25, rng=3)
    ts = identify_fixed_budget(PROBLEM, "kkt-ts", [20, 60], n_runs=25, rng=3)
    rows = comparison.paired_differences()
    for column, row in enumerate(rows):
        difference = (~uni.correct[:, column]).astype(float) - (~ts.correct[:, column])
        assert row.policy == "uniform" and row.checkpoint == [20, 60][column]
        assert row.mean == pytest.approx(difference.mean(), abs=1e-15)
    assert "| uniform | 25 | 60 |" in comparison.format_table()


def test_table_and_strict_json():
    comparison = compare_policies(PROBLEM, ["kkt-ts", "uniform"], delta=0.1, n_runs=5, rng=0)
    payload = json.loads(json.dumps(comparison.to_dict(), allow_nan=False))
    assert set(payload["results"]) == {"kkt-ts", "uniform"}
    assert payload["status"] == "completed" and payload["success"] is True
    assert comparison.format_table().count("\n") == 3


def test_an_incomplete_rule_makes_the_comparison_incomplete():
    comparison = compare_policies(PROBLEM, ["uniform"], delta=1e-9, n_runs=2, rng=0, max_samples=8)
    assert comparison.status == "incomplete" and not comparison.success
    assert "uniform (sample_cap_reached)" in comparison.message


@pytest.mark.parametrize("kwargs, match", [
    (dict(policies=[]), "'policies'"),
    (dict(policies=["uniform", "uniform"]), "distinct labels"),
    (dict(policies="uniform"), "'policies'"),
    (dict(policies=["uniform", "no-such-rule"]), "'policy'"),
    (dict(policies=["uniform", "kkt-ts"], n_runs={"uniform": 3}), "'n_runs'"),
    (dict(policies=["uniform", "kkt-ts"], reference="ttts"), "'reference'"),
])
def test_bad_input_is_named(kwargs, match):
    with pytest.raises(AllocoptError, match=match):
        compare_policies(PROBLEM, delta=0.1, rng=0, **kwargs)


def test_plots_draw_one_series_per_rule():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from allocopt.algorithms.plotting import (plot_allocations, plot_error_rates, plot_fixed_budget,
                                              plot_sample_complexity)

    confidence = compare_policies(PROBLEM, ["kkt-ts", "uniform"], delta=(0.1, 0.01), n_runs=6, rng=1)
    budget = compare_policies(PROBLEM, ["kkt-ts", "uniform"], budgets=[8, 30], n_runs=6, rng=1)
    fig, axes = plt.subplots(1, 4)
    assert len(plot_sample_complexity(confidence, ax=axes[0]).containers) == 2
    assert len(plot_error_rates(confidence, ax=axes[1]).containers) == 2
    plot_fixed_budget(budget, ax=axes[2], log=False)
    assert len(axes[2].get_lines()) == 2
    plot_allocations({"kkt-ts": np.full(4, 0.25)}, np.array([0.2, 0.3, 0.3, 0.2]), ax=axes[3])
    assert len(axes[3].patches) == 4
    with pytest.raises(AllocoptError, match="'comparison' parameter of plot_fixed_budget must be a fixed-budget"):
        plot_fixed_budget(confidence)
    with pytest.raises(AllocoptError, match="'comparison' parameter of plot_error_rates must be a fixed-confidence"):
        plot_error_rates(budget)
    plt.close(fig)
