"""The Gaussian surrogate start of the exact solver for the other families (allocopt.topk._exact.starts).

Reference values: the exact solver's general path (double star, pivots, barrier) with the surrogate start
switched off, the CVXPY oracle (an independent convex model and solver) on the smallest instances, the
variance functions of the families written out here (Bernoulli theta(1 - theta), Poisson theta, exponential
theta^2), and the shared certificate.
"""

from __future__ import annotations

import numpy as np
import pytest

from allocopt import TopKProblem, solve_topk
from allocopt.testing.topk_classes import TOPK_INSTANCE_CLASSES, topk_instance_class
from allocopt.topk._exact import search as _exact
from allocopt.topk._exact.forest import layout_forest, solve_forest
from allocopt.topk._exact.groups import reduce_problem
from allocopt.topk._exact.starts import north_west_staircase, surrogate_forest, surrogate_variance

FAMILIES = ("bernoulli", "poisson", "exponential")
CLASSES = [name for name in TOPK_INSTANCE_CLASSES if name != "heteroscedastic"]  # (Gaussian only)


def general_path(monkeypatch, problem, kind):
    """The exact solver with the surrogate start switched off (its double star, pivots and barrier)."""
    with monkeypatch.context() as patch:
        patch.setattr(_exact, "surrogate_forest", lambda *arguments, **options: None)
        return solve_topk(problem, kind=kind)


def test_surrogate_variance_is_the_variance_function_at_the_means():
    variance_function = {"bernoulli": lambda x: x * (1 - x), "poisson": lambda x: x, "exponential": lambda x: x ** 2}
    for family, function in variance_function.items():
        reduced = reduce_problem(TopKProblem([0.9, 0.6, 0.3, 0.3, 0.05], 2, family=family), "confidence")
        assert reduced.n_groups == 4  # the tied pair is one group
        np.testing.assert_allclose(surrogate_variance(reduced), function(reduced.theta), rtol=1e-15)


@pytest.mark.parametrize("kind", ["confidence", "budget"])
@pytest.mark.parametrize("n_arms", [20, 100])
@pytest.mark.parametrize("family", FAMILIES)
@pytest.mark.parametrize("name", CLASSES)
def test_every_class_against_the_general_path(monkeypatch, name, family, n_arms, kind):
    problem = topk_instance_class(name, n_arms, family, seed=1)
    reference = general_path(monkeypatch, problem, kind)
    assert reference.status == "optimal", reference.message
    reduced = reduce_problem(problem, kind)
    located = surrogate_forest(reduced)
    assert located is not None and located.layout.rows.shape[0] + located.layout.n_components == reduced.n_groups
    result = solve_topk(problem, kind=kind)
    assert result.status == "optimal" and result.gap <= 1e-9 * result.value, result.message
    assert result.value == pytest.approx(reference.value, rel=1e-12)
    np.testing.assert_allclose(result.psi, reference.psi, rtol=1e-8, atol=1e-15)


@pytest.mark.parametrize("kind", ["confidence", "budget"])
@pytest.mark.parametrize("family", FAMILIES)
def test_small_staircases_against_the_oracle(family, kind):
    # the oracle bounds bracket the answer, whichever start gave it
    for seed in range(2):
        problem = topk_instance_class("staircase", 12, family, seed=seed)
        exact = solve_topk(problem, kind=kind)
        oracle = solve_topk(problem, method="cvxpy", kind=kind, tol=1e-6, max_rescalings=0)
        assert exact.status == "optimal" and exact.gap <= 1e-9 * exact.value, exact.message
        assert exact.value <= oracle.upper_bound * (1 + 1e-12) and oracle.value <= exact.upper_bound * (1 + 1e-12)


@pytest.mark.parametrize("kind", ["confidence", "budget"])
def test_the_surrogate_forest_is_optimal_on_a_bernoulli_staircase(kind):
    # the staircase the double star is far from: the surrogate's forest passes the exact check with no pivot
    problem = topk_instance_class("staircase", 300, "bernoulli", seed=0)
    result = solve_topk(problem, kind=kind)
    assert result.status == "optimal" and result.message.startswith("exact: Gaussian surrogate, 0 pivot(s)"), \
        result.message
    reduced = reduce_problem(problem, kind)
    located = surrogate_forest(reduced)
    solution = solve_forest(reduced, located.layout, located.psi)  # the true family's KKT system on it
    assert solution.converged and np.all(solution.nu > 0)


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["confidence", "budget"])
@pytest.mark.parametrize("family", FAMILIES)
def test_power_law_gaps_are_certified_from_the_surrogate_at_ten_thousand_arms(family, kind):
    problem = topk_instance_class("power-law gaps", 10_000, family)
    result = solve_topk(problem, kind=kind)
    assert result.status == "optimal" and result.gap <= 1e-9 * result.value, result.message
    assert result.message.startswith("exact: Gaussian surrogate"), result.message


@pytest.mark.parametrize("family, kind", [("poisson", "confidence"), ("exponential", "budget")])
def test_the_north_west_walk_reaches_the_optimal_staircase(family, kind):
    # skewed families: the surrogate's staircase is off at a few dozen corners (its variances at the means cannot
    # match every pair's gradient ratio); alternating the walk with the forest solve reaches the optimal forest,
    # the one the exact solver certifies (its certificate, gap <= 1e-9, is computed independently of the start)
    problem = topk_instance_class("staircase", 2000, family)
    result = solve_topk(problem, kind=kind)
    assert result.status == "optimal" and result.gap <= 1e-9 * result.value, result.message
    assert result.forest.layout.n_components == 1  # one tree: every multiplier positive, so no other forest
    optimal = set(zip(result.forest.layout.rows.tolist(), result.forest.layout.cols.tolist()))
    reduced = reduce_problem(problem, kind)
    located = surrogate_forest(reduced)
    solution = solve_forest(reduced, located.layout, located.psi)
    assert np.any(solution.nu < 0)  # the surrogate's forest is not optimal ...
    surrogate = set(zip(located.rows.tolist(), located.cols.tolist()))
    # ... and single pivots, which add one cell each, would need at least this many pivots
    assert len(optimal - surrogate) >= 10
    rows, cols, layout = located.rows, located.cols, located.layout
    for _ in range(5):
        rows, cols = north_west_staircase(reduced, solution.psi, rows, cols)
        layout = layout_forest(reduced, rows, cols)
        solution = solve_forest(reduced, layout, solution.psi)
        if set(zip(rows.tolist(), cols.tolist())) == optimal:
            break
    assert set(zip(rows.tolist(), cols.tolist())) == optimal
    assert solution.converged and np.all(solution.nu > 0)
    # the solver itself reaches it in fewer pivots than single pivots from the surrogate's forest could
    assert result.iterations < len(optimal - surrogate)
