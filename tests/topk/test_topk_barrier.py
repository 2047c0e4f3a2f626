"""The barrier's Newton step: the dense Schur-complement solve (Cholesky) and the sparse factorisation of the
whole matrix against the full Hessian assembled here and solved densely by numpy."""

from __future__ import annotations

import numpy as np
import pytest

from allocopt import TopKProblem
from allocopt.topk._exact import barrier as _barrier
from allocopt.topk._exact.groups import reduce_problem


@pytest.mark.parametrize("fraction", [0.0, 1.0])  # 0: always the dense path, 1: sparse (candidate pairs)
def test_newton_step_matches_the_full_hessian_solve(monkeypatch, fraction):
    rng = np.random.default_rng(4)
    n_arms = 600
    problem = TopKProblem(rng.uniform(0.0, 1.0, n_arms), n_arms // 2, variance=0.25)
    reduced = reduce_problem(problem, "confidence")
    # a sparse candidate set: the double star and 2% of the other pairs
    n_top, n_bottom = reduced.n_top, reduced.n_bottom
    flat = np.unique(np.concatenate([
        (n_top - 1) * n_bottom + np.arange(n_bottom), np.arange(n_top) * n_bottom,
        rng.choice(n_top * n_bottom, size=n_top * n_bottom // 50, replace=False)]))
    rows, cols = np.divmod(flat, n_bottom)
    psi = rng.uniform(0.5, 2.0, reduced.n_groups)
    terms = reduced.terms(psi, rows, cols, second_order=True)
    psi = psi * (2.0 / terms.cost.min())  # strictly feasible: every cost at least 2
    terms = reduced.terms(psi, rows, cols, second_order=True)
    slack, tau = terms.cost - 1.0, 0.3
    gradient = rng.normal(size=reduced.n_groups)
    monkeypatch.setattr(_barrier, "_SPARSE_FRACTION", fraction)
    ordering: dict = {}
    step = _barrier._newton_step(reduced, terms, rows, cols, slack, tau, gradient, ordering)
    # a second step on the same pairs, with the sparse factorisation's order kept from the first
    again = _barrier._newton_step(reduced, terms, rows, cols, slack, tau, gradient, ordering)
    assert ("order" in ordering) == (fraction == 1.0)  # premise: the sparse path kept its order
    # the full Hessian tau sum_p [g g^T / s^2 - hess / s], assembled pair by pair
    top, bottom = reduced.top_groups[rows], reduced.bottom_groups[cols]
    outer, curvature = tau / slack**2, tau / slack
    hessian = np.zeros((reduced.n_groups, reduced.n_groups))
    np.add.at(hessian, (top, top), outer * terms.grad_top**2 - curvature * terms.hess_top)
    np.add.at(hessian, (bottom, bottom), outer * terms.grad_bottom**2 - curvature * terms.hess_bottom)
    cross = outer * terms.grad_top * terms.grad_bottom - curvature * terms.hess_cross
    np.add.at(hessian, (top, bottom), cross)
    np.add.at(hessian, (bottom, top), cross)
    reference = np.linalg.solve(hessian, -gradient)
    np.testing.assert_allclose(step, reference, rtol=1e-8, atol=1e-10 * np.abs(reference).max())
    np.testing.assert_allclose(again, reference, rtol=1e-8, atol=1e-10 * np.abs(reference).max())


def test_column_generation_adds_the_cheapest_partners_of_every_group():
    from allocopt.topk._scan import PairScan
    from allocopt.topk._exact.barrier import grown as _grown

    rng = np.random.default_rng(11)
    problem = TopKProblem(rng.uniform(0.0, 1.0, 40), 20, variance=0.25)
    reduced = reduce_problem(problem, "confidence")
    listed = rng.choice(20 * 20, size=150, replace=False)
    rows, cols = np.divmod(listed, 20)
    costs = rng.uniform(0.1, 1.0, listed.size)
    scan = PairScan(float(costs.min()), 0, 0, rows, cols, costs)
    kept_rows, kept_cols = _grown(reduced, np.array([0]), np.array([0]), scan, 3)
    # expected here by sorting each group's listed pairs: its 3 cheapest, of every top and every bottom group
    expected = {(0, 0)}
    for side in (rows, cols):
        for group in np.unique(side):
            mine = np.flatnonzero(side == group)
            for index in mine[np.argsort(costs[mine])][:3]:
                expected.add((int(rows[index]), int(cols[index])))
    assert set(zip(kept_rows.tolist(), kept_cols.tolist())) == expected


@pytest.mark.parametrize("family", ["gaussian", "bernoulli"])
def test_the_path_continues_on_a_grown_set_of_pairs(family):
    from allocopt.testing.topk_classes import topk_instance_class

    problem = topk_instance_class("staircase", 60, family, seed=3)
    reduced = reduce_problem(problem, "confidence")
    rows, cols = np.divmod(np.arange(reduced.n_top * reduced.n_bottom), reduced.n_bottom)
    star = (rows == reduced.n_top - 1) | (cols == 0)  # the double star only
    point = _barrier.barrier_path(reduced, rows[star], cols[star], np.ones(reduced.n_groups), target_gap=1e-2)
    # every pair at that point, evaluated here: some are violated (cost below one)
    costs = reduced.terms(point.psi, rows, cols).cost
    assert costs.min() < 1.0
    grown = star | (costs < 1.0)
    resumed = _barrier.barrier_path(reduced, rows[grown], cols[grown], point.psi, target_gap=1e-4, resume=point)
    # strictly feasible for every pair of the grown set, at the duality gap asked for
    assert np.all(resumed.psi > 0) and reduced.terms(resumed.psi, rows[grown], cols[grown]).cost.min() > 1.0
    assert resumed.relative_gap <= 1e-4 and resumed.nu.shape == (int(grown.sum()),)
    # the grown problem has fewer constraints than the one over all pairs (its path computed here to 1e-8), so
    # its near-optimal value (within the duality gap, allowing for approximate centring) lies below that one's
    full = _barrier.barrier_path(reduced, rows, cols, np.ones(reduced.n_groups), target_gap=1e-8)
    assert float(reduced.multiplicity @ resumed.psi) <= float(reduced.multiplicity @ full.psi) * (1 + 1e-3)
