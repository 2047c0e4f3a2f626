"""The exact solver: certified to 1e-9 of Gamma* everywhere, checked by check_topk, tied arms equal, warm starts,
and a property test against the CVXPY oracle on 500 random small instances of every family (the first 100 of each
in the default suite, all 500 with the slow tests).

Reference values: the oracle (an independent convex model and solver) and the shared weak-duality
certificate; Example 1 of Wang, Yang, You (2022) for the two-component structure.
"""

from __future__ import annotations

import numpy as np
import pytest

from allocopt import InvalidArgumentError, TopKProblem, check_topk, solve_topk
from allocopt.families import FAMILIES
from allocopt.testing.families import reference_family

from topk_instances import SUITE, make


@pytest.mark.parametrize("kind", ["confidence", "budget"])
@pytest.mark.parametrize("name", sorted(SUITE))
def test_exact_is_certified_to_1e_9_and_passes_check_topk(name, kind):
    problem = make(name)
    result = solve_topk(problem, kind=kind)  # "exact" is the default method
    assert result.method == "exact" and result.status == "optimal"
    assert result.gap <= 1e-9 * result.value
    report = check_topk(problem, result.psi, kind=kind)
    assert report.passed, report.summary()
    # tied arms (merged into groups) get exactly equal allocations
    values, inverse = np.unique(problem.theta, return_inverse=True)
    for group in range(values.size):
        members = np.flatnonzero(inverse.ravel() == group)
        if problem.family.is_heteroscedastic:
            members = members[problem.dispersion[members] == problem.dispersion[members[0]]]
        assert np.ptp(result.psi[members]) == 0.0


def test_example_1_two_components_exactly():
    problem = TopKProblem([0.51, 0.5, 0, -0.01, -0.092], 2, variance=0.25)
    result = solve_topk(problem)
    report = check_topk(problem, result.psi, tol=1e-10)
    assert report.component_indices(one_based=True) == [((1,), (3,)), ((2,), (4, 5))]
    assert max(abs(component.balance_residual) for component in report.components) < 1e-12
    assert result.relative_gap < 1e-13
    assert set(zip(*np.nonzero(result.mu))) == {(0, 0), (1, 1), (1, 2)}  # forest edges (1,3), (2,4), (2,5)


def test_staircase_instances_need_pivots_or_the_barrier_and_are_still_exact(rng):
    # two tight clusters (as in Example 1) make the binding forest a staircase far from the double star
    for _ in range(5):
        theta = np.concatenate([1 + 0.02 * rng.normal(size=8), 0.02 * rng.normal(size=8)])
        problem = TopKProblem(theta, 8)
        result = solve_topk(problem)
        assert result.status == "optimal" and result.relative_gap <= 1e-9
        assert "double star, 0 pivot" not in result.message
        oracle = solve_topk(problem, method="cvxpy")
        assert oracle.value <= result.value * (1 + 1e-12) and result.value <= oracle.upper_bound * (1 + 1e-12)


@pytest.mark.parametrize("name", ["gaussian", "bernoulli-ties", "poisson-k1", "exponential-kK-1"])
def test_warm_start_gives_the_same_certified_answer(name, rng):
    problem = make(name)
    previous = solve_topk(problem)
    for _ in range(10):
        theta = problem.theta * (1 + 1e-3 * rng.normal(size=problem.n_arms))
        if problem.family.name == "bernoulli":
            theta = np.clip(theta, 0.01, 0.99)
        try:
            perturbed = TopKProblem(theta, problem.k, family=problem.family)
        except InvalidArgumentError:  # a perturbation that creates a boundary tie: skip it
            continue
        cold = solve_topk(perturbed)
        warm = solve_topk(perturbed, warm_start=previous)
        assert warm.status == "optimal" and warm.relative_gap <= 1e-9
        assert np.abs(warm.psi - cold.psi).max() <= 1e-9
        previous = warm


def test_warm_start_across_a_change_of_the_top_set():
    first = solve_topk(TopKProblem([1.0, 0.61, 0.6, 0.2], 2))
    second = solve_topk(TopKProblem([1.0, 0.6, 0.61, 0.2], 2), warm_start=first)  # arms 1 and 2 swap sides
    assert second.status == "optimal" and second.relative_gap <= 1e-9


def test_warm_start_is_validated():
    result = solve_topk(make("gaussian"))
    with pytest.raises(InvalidArgumentError, match="'warm_start' parameter of solve_topk\\(method='exact'\\) must "
                                                   "be a result for a problem with the same K = 5 and k = 1. Got a result with K = 6, k = 2"):
        solve_topk(make("gaussian-k1"), warm_start=result)
    with pytest.raises(InvalidArgumentError, match="must be a TopKResult. Got dict instead"):
        solve_topk(make("gaussian"), warm_start={})


def _random_instance(rng: np.random.Generator, family: str) -> TopKProblem:
    """A small random instance: K in 2..8, k in 1..K-1, occasional ties inside a side and near-ties at the
    boundary, Bernoulli means occasionally within 1e-4 of 0 or 1, Gaussian variances occasionally per arm."""
    while True:
        n_arms = int(rng.integers(2, 9))
        k = int(rng.integers(1, n_arms))
        if family == "gaussian":
            theta = rng.normal(0.0, 1.0, n_arms)
        elif family == "bernoulli":
            theta = rng.uniform(0.02, 0.98, n_arms)
            if rng.random() < 0.1:
                theta[rng.integers(n_arms)] = rng.choice([1e-4, 1 - 1e-4])
        else:
            theta = rng.uniform(0.2, 5.0, n_arms)
        if rng.random() < 0.2 and n_arms >= 3:  # a tie inside one side
            order = np.argsort(-theta)
            side = order[:k] if rng.random() < 0.5 and k >= 2 else order[k:]
            if side.size >= 2:
                theta[side[1]] = theta[side[0]]
        if rng.random() < 0.1:  # a near-tie at the boundary
            order = np.argsort(-theta)
            theta[order[k]] = theta[order[k - 1]] * (1 - 1e-3) if theta[order[k - 1]] > 0 else theta[order[k - 1]] - 1e-3
        variance = None
        if family == "gaussian":
            variance = rng.uniform(0.2, 2.0, n_arms) if rng.random() < 0.3 else float(rng.uniform(0.1, 2.0))
        try:
            if family != "gaussian":
                return TopKProblem(theta, k, family=reference_family(family))
            return TopKProblem(theta, k, family=family, variance=variance)
        except InvalidArgumentError:
            continue


CHUNKS = 10
PER_FAMILY = 500
DEFAULT_CHUNKS = 2  # chunks (of 50 instances and oracle solves each) in the default suite; the rest are slow


@pytest.mark.parametrize("chunk", [chunk if chunk < DEFAULT_CHUNKS else pytest.param(chunk, marks=pytest.mark.slow)
                                   for chunk in range(CHUNKS)])
@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_property_exact_against_the_oracle(family, chunk):
    rng = np.random.default_rng([20261121, sorted(FAMILIES).index(family), chunk])
    for _ in range(PER_FAMILY // CHUNKS):
        problem = _random_instance(rng, family)
        kind = "budget" if rng.random() < 0.5 else "confidence"
        exact = solve_topk(problem, kind=kind)
        # the oracle at a looser certification target (one solve instead of rescaling rounds): its bounds
        # are as honest, only less tight
        oracle = solve_topk(problem, method="cvxpy", kind=kind, tol=1e-6, max_rescalings=0)
        assert exact.status == "optimal" and exact.gap <= 1e-9 * exact.value, (problem, kind, exact.message)
        # both certificates are honest and consistent: each value is below the other's upper bound
        assert exact.value <= oracle.upper_bound * (1 + 1e-12) and oracle.value <= exact.upper_bound * (1 + 1e-12)
        assert exact.value >= oracle.value * (1 - 1e-12)  # the exact value is never below the oracle's


@pytest.mark.parametrize("family", ["gaussian", "bernoulli", "poisson", "exponential"])
@pytest.mark.parametrize("gap", [1e-6, 1e-10, "one float"])
def test_near_ties_at_the_boundary_are_certified(family, gap):
    # the near-tie requirement (gap 1e-6) and beyond, down to adjacent doubles: Gamma* ~ gap^2
    low = 0.5 if family in ("gaussian", "bernoulli") else 2.0
    high = float(np.nextafter(low, np.inf)) if gap == "one float" else low + gap
    theta = [0.9 if family == "bernoulli" else 3.0, high, low, 0.2 if family == "bernoulli" else 1.0]
    problem = TopKProblem(theta, 2, family=family)
    for kind in ("confidence", "budget"):
        result = solve_topk(problem, kind=kind)
        assert result.status == "optimal" and result.gap <= 1e-9 * result.value, result.message
        assert result.value > 0


def test_spanning_forest_from_one_dominant_pair_is_a_valid_forest():
    # one pair (neither end i_k nor j_1) carrying all the weight, as when a barrier pair sits at rounding-level
    # slack: completing it joins i_k and j_1 to each other once, never twice, and the layout accepts it
    from allocopt.topk._exact.forest import spanning_forest as _spanning_forest
    from allocopt.topk._exact.forest import layout_forest
    from allocopt.topk._exact.groups import reduce_problem

    problem = TopKProblem([0.9, 0.8, 0.7, 0.3, 0.2, 0.1], 3)
    reduced = reduce_problem(problem, "confidence")
    rows, cols = _spanning_forest(reduced, np.array([0]), np.array([2]), np.array([1e9]))
    pairs = set(zip(rows.tolist(), cols.tolist()))
    assert len(pairs) == rows.size  # no edge twice
    # the dominant pair's tree, and the star of i_k and j_1 holding every other group
    assert pairs == {(0, 2), (1, 0), (2, 0), (2, 1)}
    layout = layout_forest(reduced, rows, cols)
    assert layout is not None and layout.n_components == 2


def _group_value(reduced, psi_groups):
    """Gamma of a group allocation expanded to the arms: the smallest cost over every group pair (tied arms
    have their group's costs), on the simplex scale - evaluated densely here, independently of the scan."""
    top, bottom = reduced.top_groups, reduced.bottom_groups
    rows, cols = np.meshgrid(np.arange(top.size), np.arange(bottom.size), indexing="ij")
    costs = reduced.terms(psi_groups, rows.ravel(), cols.ravel()).cost
    return float(costs.min()) / float(reduced.multiplicity @ psi_groups)


def _record_every_allocation(monkeypatch, seen):
    """Record Gamma (dense, independent of the solver's scans) of every forest solution and every barrier point
    the exact solver computes."""
    from allocopt.topk._exact import barrier, search

    original_forest, original_barrier = search.solve_forest, barrier.barrier_path

    def recording_forest(reduced, *args, **kwargs):
        solution = original_forest(reduced, *args, **kwargs)
        if np.all(np.isfinite(solution.psi)) and np.all(solution.psi > 0):
            seen.append(_group_value(reduced, solution.psi))
        return solution

    def recording_barrier(reduced, *args, **kwargs):
        point = original_barrier(reduced, *args, **kwargs)
        seen.append(_group_value(reduced, point.psi))
        return point

    monkeypatch.setattr(search, "solve_forest", recording_forest)
    monkeypatch.setattr(barrier, "barrier_path", recording_barrier)


def test_uncertified_fallback_is_never_worse_than_an_allocation_seen(monkeypatch):
    # force every search to fail (as if no forest could be certified): the answer must be at least as good as
    # every barrier point and every forest solution the solver computed, with an honest certificate
    from allocopt.testing.topk_classes import topk_instance_class
    from allocopt.topk._exact import search as _exact

    problem = topk_instance_class("staircase", 40, seed=2)
    assert "closed form" not in solve_topk(problem).message  # the double star is not optimal here
    seen: list[float] = []
    _record_every_allocation(monkeypatch, seen)
    original_run = _exact._Search.run

    def failing_run(self, *args, **kwargs):
        original_run(self, *args, **kwargs)
        return None

    monkeypatch.setattr(_exact._Search, "run", failing_run)
    result = solve_topk(problem)
    assert "best allocation seen" in result.message and len(seen) >= 4
    assert (result.status == "optimal") == (result.gap <= 1e-9 * result.value)  # the certificate decides
    assert result.value >= max(seen) * (1 - 1e-12)
    oracle = solve_topk(problem, method="cvxpy", tol=1e-6, max_rescalings=0)
    assert result.value <= oracle.upper_bound * (1 + 1e-12) and oracle.value <= result.upper_bound * (1 + 1e-12)


@pytest.mark.parametrize("family", ["gaussian", "bernoulli"])
def test_fallback_at_tol_zero_returns_the_best_allocation_seen(monkeypatch, family):
    # tol = 0 can never be certified (the certified gap carries a rounding allowance), so the fallback fires
    # on every instance that reaches the active set: the answer is the largest Gamma among every forest
    # solution and barrier point computed, and it is the optimum (the CVXPY oracle's bounds bracket it)
    from allocopt.testing.topk_classes import topk_instance_class

    problem = topk_instance_class("staircase", 40, family, seed=2)
    # the transport route's first forest (Gaussian arms) and the Gaussian surrogate's (Bernoulli arms) are the
    # optimum: the general path is tested
    from allocopt.topk._exact import search as _exact

    monkeypatch.setattr(_exact, "transport_forest", lambda *arguments, **options: None)
    monkeypatch.setattr(_exact, "surrogate_forest", lambda *arguments, **options: None)
    seen: list[float] = []
    _record_every_allocation(monkeypatch, seen)
    result = solve_topk(problem, tol=0.0)
    assert result.status == "not_certified" and len(seen) >= 2
    assert result.value >= max(seen) * (1 - 1e-12)
    oracle = solve_topk(problem, method="cvxpy", tol=1e-6, max_rescalings=0)
    assert oracle.value <= result.value * (1 + 1e-12) and result.value <= oracle.upper_bound * (1 + 1e-12)


def test_without_any_forest_solution_the_solver_refuses(monkeypatch):
    # every forest rejected (no forest solution at all): the barrier points alone are not returned as an
    # answer; the refusal names the oracle to use instead
    from allocopt import SolverError
    from allocopt.testing.topk_classes import topk_instance_class
    from allocopt.topk._exact import search as _exact

    problem = topk_instance_class("staircase", 40, seed=2)
    monkeypatch.setattr(_exact, "transport_forest", lambda *args, **kwargs: None)  # (Gaussian arms' first start)
    monkeypatch.setattr(_exact, "layout_forest", lambda *args, **kwargs: None)
    monkeypatch.setattr(_exact, "layout_double_star", lambda *args, **kwargs: None)
    with pytest.raises(SolverError, match="method='cvxpy'"):
        solve_topk(problem)


def test_massive_ties_keep_few_multiplier_pairs_and_certify():
    # two levels of 20 tied arms on each side: 4 groups, so at most 3 group pairs, each spread over at most
    # n_g + n_h - 1 = 19 member pairs (not 100); the certificate recomputes every arm's sum from them
    from allocopt.testing.topk_classes import topk_instance_class

    for family in ("gaussian", "bernoulli"):
        problem = topk_instance_class("massive ties", 40, family)
        result = solve_topk(problem)
        assert result.status == "optimal" and result.gap <= 1e-9 * result.value
        assert result.multipliers.size <= 3 * 19
        oracle = solve_topk(problem, method="cvxpy", tol=1e-6, max_rescalings=0)
        assert result.value >= oracle.value * (1 - 1e-12) and result.value <= oracle.upper_bound * (1 + 1e-12)


@pytest.mark.slow
@pytest.mark.parametrize("name, n_arms, family, kind", [("staircase", 300, "gaussian", "confidence"),
                                                        ("massive ties", 3000, "exponential", "budget")])
def test_instances_whose_fallback_returned_the_double_star_are_certified(name, n_arms, family, kind):
    # two instances on which the exact solver once fell back to the double star (28% below the optimum,
    # resp. a relative gap of 0.67): the barrier's forest is now repaired and certified; the double star's
    # own value (Theorem 3.4's allocation, computed on the forest directly) is a lower bound it must reach
    from allocopt.testing.topk_classes import topk_instance_class
    from allocopt.topk._exact.forest import layout_double_star, solve_forest
    from allocopt.topk._exact.groups import reduce_problem

    problem = topk_instance_class(name, n_arms, family)
    result = solve_topk(problem, kind=kind)
    assert result.status == "optimal" and result.gap <= 1e-9 * result.value
    reduced = reduce_problem(problem, kind)
    star = solve_forest(reduced, layout_double_star(reduced), np.ones(reduced.n_groups))
    assert result.value >= _group_value(reduced, star.psi) * (1 - 1e-12)
