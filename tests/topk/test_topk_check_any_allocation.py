"""check_topk grades any allocation, in O(K) memory (issue 28, parts 2 and 5).

The judges: the pair costs evaluated by mpmath from the spec's formulas (the value must be Gamma(psi), and by weak
duality the certified upper bound must be at least Gamma of any allocation, here the exact solver's, evaluated by
mpmath), a brute-force enumeration of the pairs that violate Proposition 3.2 (Wang, Yang, You 2022), and
tracemalloc's count of the memory the check allocates.
"""

from __future__ import annotations

import json
import pathlib
import tracemalloc

import mpmath as mp
import numpy as np
import pytest

from allocopt import TopKProblem, check_topk, solve_topk
from allocopt.topk.structure import monotonicity_violations

from chernoff_judge import divergence

DATA = json.loads((pathlib.Path(__file__).parent / "data" / "issue28_topk.json").read_text())
mp.mp.dps = 50


def _poisson_value(problem: TopKProblem, psi) -> mp.mpf:
    """Gamma(psi) for Poisson arms (confidence costs) in mpmath."""
    def cost(i, j):
        theta_i, theta_j, psi_i, psi_j = (mp.mpf(float(x)) for x in (problem.theta[i], problem.theta[j], psi[i], psi[j]))
        point = (psi_i * theta_i + psi_j * theta_j) / (psi_i + psi_j)
        return psi_i * divergence("poisson", theta_i, point) + psi_j * divergence("poisson", theta_j, point)

    return min(cost(i, j) for i in problem.top for j in problem.bottom)


def test_an_allocation_whose_kkt_program_has_only_zero_multipliers_is_graded():
    # it raised "the KKT linear program returned zero multipliers; pass the solver's multipliers as mu="
    case = DATA["check_topk_lp_zero_multipliers"]
    problem = TopKProblem(case["theta"], case["k"], family=case["family"])
    psi = np.array(case["psi"]) / np.sum(case["psi"])
    report = check_topk(problem, psi, kind=case["kind"])
    value = _poisson_value(problem, psi)
    assert abs(mp.mpf(report.value) - value) <= 1e-13 * value
    optimum = solve_topk(problem, kind=case["kind"])
    # weak duality: the certified bound covers Gamma of every allocation, the optimum's included
    assert mp.mpf(report.value) + mp.mpf(report.gap) >= _poisson_value(problem, optimum.psi)
    assert report.multiplier_source == "optimum" and report.status == "not_certified"
    assert report.gap > 0 and np.isfinite(report.gap)


@pytest.mark.parametrize("family", ["gaussian", "bernoulli", "poisson", "exponential"])
def test_perturbed_optima_are_graded_with_a_covering_gap(family):
    rng = np.random.default_rng(528)
    means = {"gaussian": lambda n: rng.normal(size=n), "bernoulli": lambda n: rng.uniform(0.05, 0.95, n)}
    for _ in range(6):
        size = int(rng.integers(3, 16))
        theta = means.get(family, lambda n: rng.uniform(0.5, 5.0, n))(size)
        problem = TopKProblem(theta, int(rng.integers(1, size)), family=family)
        optimum = solve_topk(problem)
        for spread in (1e-6, 1e-3, 1e-1):
            psi = optimum.psi * np.exp(spread * rng.normal(size=size))
            psi /= psi.sum()
            report = check_topk(problem, psi)
            # (Gamma* - Gamma(psi) <= gap, with Gamma* within the solver's certified gap of its value)
            assert report.value + report.gap >= optimum.value - optimum.gap
            assert report.value == pytest.approx(problem.value(psi), rel=1e-14)


def _brute_force_violations(problem: TopKProblem, psi: np.ndarray, tol: float) -> set[int]:
    """The arms b for which some better-ranked arm a of the same side (strictly larger mean) breaks Proposition
    3.2 by more than tol * max(psi), by enumerating every pair."""
    slack = tol * psi.max()
    violated = set()
    for side, better_gets_less in ((problem.top, True), (problem.bottom, False)):
        for a in side:
            for b in side:
                if problem.theta[a] > problem.theta[b] and (
                        psi[a] > psi[b] + slack if better_gets_less else psi[a] + slack < psi[b]):
                    violated.add(int(b))
    return violated


def test_monotonicity_violations_match_the_enumeration_of_every_pair():
    rng = np.random.default_rng(32)
    for _ in range(400):
        size = int(rng.integers(2, 12))
        k = int(rng.integers(1, size))
        theta = rng.integers(0, 4, size).astype(float)  # ties inside each side
        theta[np.argsort(-theta, kind="stable")[:k]] += 10.0
        problem = TopKProblem(theta, k)
        psi = rng.integers(1, 4, size).astype(float)
        psi /= psi.sum()
        tol = float(rng.choice([1e-12, 0.3]))
        found = monotonicity_violations(problem, psi, tol)
        assert {b for _, b in found} == _brute_force_violations(problem, psi, tol)
        for a, b in found:  # each reported pair is itself a violation, on one side
            assert problem.theta[a] > problem.theta[b] and (a in problem.top) == (b in problem.top)


def test_the_monotonicity_check_runs_in_linear_memory():
    # the pairwise version built (K - k) x (K - k) boolean arrays: 9e8 bytes here
    size, k = 30_000, 10
    problem = TopKProblem(np.linspace(1.0, 0.0, size), k)
    psi = np.random.default_rng(5).uniform(0.5, 1.0, size)
    psi /= psi.sum()
    tracemalloc.start()
    try:
        violations = monotonicity_violations(problem, psi, 1e-6)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert len(violations) > 0
    assert peak < 20 * size * 8  # a few arrays of K numbers


@pytest.mark.slow
def test_check_topk_at_thirty_thousand_arms_stays_below_a_gigabyte():
    size = 30_000
    problem = TopKProblem(np.random.default_rng(3).normal(size=size), 10)
    result = solve_topk(problem)
    tracemalloc.start()
    try:
        report = check_topk(problem, result.psi, mu=result.multipliers)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert report.passed
    assert peak < 1 << 30


def test_a_check_on_rescaled_costs_reports_the_callers_means_and_costs():
    # Gaussian means near 1e100 are checked on means scaled by 2**-333 (costs by 2**-666) and scaled back
    problem = TopKProblem([3e100, 2e100, 1e100, 0.5e100], 2)
    result = solve_topk(problem)
    report = check_topk(problem, result.psi)
    assert report.passed
    assert [data["theta"] for _, data in report.graph.nodes(data=True)] == problem.theta.tolist()
    # (the cost of a pair at psi, (theta_i - theta_j)^2 / (2 (1/psi_i + 1/psi_j)), evaluated here)
    for top, bottom, data in report.graph.edges(data=True):
        i, j = (top, bottom) if problem.theta[top] > problem.theta[bottom] else (bottom, top)
        expected = (problem.theta[i] - problem.theta[j]) ** 2 / (2 * (1 / result.psi[i] + 1 / result.psi[j]))
        assert data["cost"] == pytest.approx(expected, rel=1e-13)
    assert report.value == pytest.approx(result.value, rel=1e-14)
