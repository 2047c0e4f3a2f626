"""The all-pairs scan on blocks of consecutive means (allocopt.topk._scan._scan_blocks) against the full cost
matrix evaluated here (TopKProblem.pair_terms on the whole grid of positions at once, no pruning): the same
exact minimum and exactly the pairs below the threshold, for every instance class, both families and both
kinds, at allocations where the block bounds prune (near the heuristic allocation) and where they do not (the
scan then falls back to row chunks)."""

from __future__ import annotations

import numpy as np
import pytest

from allocopt.testing.topk_classes import TOPK_INSTANCE_CLASSES, topk_instance_class
from allocopt.topk import _scan as _allpairs

CASES = [(name, family) for name in TOPK_INSTANCE_CLASSES
         for family in (("gaussian",) if name == "heteroscedastic" else ("gaussian", "bernoulli"))]


def _block_scan(problem, psi, kind, threshold, size):
    weights = psi / problem.dispersion
    top, bottom = problem.top, problem.bottom

    def evaluate(rows, cols):
        return problem.pair_terms(psi, rows, cols, kind=kind).cost

    return _allpairs._scan_blocks(evaluate, problem.family, problem.theta[top], problem.theta[bottom],
                                  weights[top], weights[bottom], threshold, limit=10**9, chunk_pairs=4096,
                                  size=size)


def _every_cost(problem, psi, kind):
    """Every pair's cost, by the same per-pair arithmetic as the scan's evaluations (positions broadcast)."""
    rows, cols = np.arange(problem.k)[:, None], np.arange(problem.n_arms - problem.k)[None, :]
    return problem.pair_terms(psi, rows, cols, kind=kind).cost


@pytest.mark.parametrize("kind", ["confidence", "budget"])
@pytest.mark.parametrize("name, family", CASES)
def test_block_scan_lists_exactly_the_pairs_below_the_threshold(name, family, kind):
    rng = np.random.default_rng(7)
    problem = topk_instance_class(name, 240, family, seed=2)
    heuristic = problem.heuristic_allocation(kind)
    for psi in (heuristic, heuristic * rng.uniform(0.3, 3.0, problem.n_arms)):
        costs = _every_cost(problem, psi, kind)
        minimum = costs.min()
        for factor in (None, 1.0, 1.001, 1.3, 4.0):
            threshold = None if factor is None else factor * minimum
            for size in (5, 16, 64):
                scan = _block_scan(problem, psi, kind, threshold, size)
                assert scan.minimum == minimum
                assert costs[scan.argmin_row, scan.argmin_col] == minimum
                expected = set() if threshold is None else set(zip(*np.nonzero(costs < threshold)))
                assert set(zip(scan.rows.tolist(), scan.cols.tolist())) == expected
                np.testing.assert_array_equal(scan.costs, costs[scan.rows, scan.cols])


def test_scan_pairs_takes_the_blocks_above_block_pairs(monkeypatch):
    problem = topk_instance_class("linspace", 200, "bernoulli")
    psi = problem.heuristic_allocation()
    costs = _every_cost(problem, psi, "confidence")
    calls = []
    original = _allpairs._scan_blocks
    monkeypatch.setattr(_allpairs, "_scan_blocks", lambda *args: calls.append(1) or original(*args))
    monkeypatch.setattr(_allpairs, "BLOCK_PAIRS", problem.k * (problem.n_arms - problem.k) - 1)
    value, scan = problem.minimum_cost(psi, "confidence", threshold=1.5 * costs.min())
    assert calls and value == costs.min()
    assert set(zip(scan.rows.tolist(), scan.cols.tolist())) == set(zip(*np.nonzero(costs < 1.5 * costs.min())))


@pytest.mark.parametrize("kind", ["confidence", "budget"])
@pytest.mark.parametrize("name, family", [("massive ties", "gaussian"), ("massive ties", "bernoulli"),
                                          ("staircase", "bernoulli"), ("two clusters", "gaussian")])
def test_binding_pairs_are_the_definition_on_the_full_cost_matrix(name, family, kind):
    """allocopt.topk.structure.binding_pairs (two scans, no cost matrix) against its definition evaluated here on
    the whole grid: the pairs with C_ij <= (1 + tol) Gamma(psi), in row-major order, their costs and the minimum;
    at the optimum (many ties bind at once) and at a perturbed allocation, with tolerances 0 to 0.5."""
    from allocopt.topk import solve_topk
    from allocopt.topk.structure import binding_pairs

    problem = topk_instance_class(name, 120, family, seed=3)
    optimum = solve_topk(problem, kind=kind).psi
    perturbed = optimum * np.random.default_rng(5).uniform(0.8, 1.25, problem.n_arms)
    for psi in (optimum, perturbed / perturbed.sum()):
        costs = _every_cost(problem, psi, kind)
        for tol in (0.0, 1e-9, 1e-3, 0.5):
            pairs = binding_pairs(problem, psi, tol, kind)
            rows, cols = np.nonzero(costs <= costs.min() * (1.0 + tol))
            assert pairs.value == costs.min()
            np.testing.assert_array_equal(pairs.rows, rows)
            np.testing.assert_array_equal(pairs.cols, cols)
            np.testing.assert_array_equal(pairs.costs, costs[rows, cols])
