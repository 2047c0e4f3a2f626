"""The barrier's Newton step: the Schur-complement solves (dense Cholesky and sparse LU) against the full
Hessian assembled here and solved densely by numpy."""

from __future__ import annotations

import numpy as np
import pytest

from allocopt import TopKProblem
from allocopt.topk import _barrier
from allocopt.topk._groups import reduce_problem


@pytest.mark.parametrize("fraction", [0.0, 1.0])  # 0: always the sparse path, 1: always dense
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
    step = _barrier._newton_step(reduced, terms, rows, cols, slack, tau, gradient)
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
