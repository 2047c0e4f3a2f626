"""The gamma family with known shape alpha in the top-k layer.

Its divergence is alpha times the exponential family's, d(x, y) = alpha (x/y - 1 - log(x/y)), so every pair
cost C_ij and B_ij is alpha times the exponential one at the same means and allocation: Gamma* (both kinds) is
alpha times the exponential family's and the optimal allocation is the same. The exponential solve is the
independent reference (a different family object, the same means)."""

from __future__ import annotations

import numpy as np
import pytest

from allocopt import TopKProblem, check_topk, solve_topk
from allocopt.families import Exponential, Gamma

THETA = [2.0, 1.5, 1.2, 1.0, 0.7, 0.5]
SHAPE = 3.0


@pytest.mark.parametrize("kind", ["confidence", "budget"])
@pytest.mark.parametrize("method, psi_tol", [("exact", 1e-12), ("cvxpy", 1e-4), ("fwga", 1e-12),
                                             ("kkt-tracking", 1e-12)])
def test_every_method_scales_the_exponential_optimum_by_the_shape(method, psi_tol, kind):
    gamma = solve_topk(TopKProblem(THETA, 2, family=Gamma(SHAPE)), method=method, kind=kind)
    exponential = solve_topk(TopKProblem(THETA, 2, family=Exponential()), method=method, kind=kind)
    assert gamma.status == exponential.status
    assert gamma.value == pytest.approx(SHAPE * exponential.value, rel=1e-9 if method == "cvxpy" else 1e-13)
    np.testing.assert_allclose(gamma.psi, exponential.psi, atol=psi_tol)
    if method == "exact":
        assert gamma.status == "optimal" and gamma.gap <= 1e-12 * gamma.value


@pytest.mark.parametrize("kind", ["confidence", "budget"])
def test_costs_are_the_shape_times_the_exponential_costs(kind):
    psi = np.array([0.1, 0.2, 0.3, 0.15, 0.15, 0.1])
    gamma = TopKProblem(THETA, 3, family=Gamma(SHAPE)).costs(psi, kind=kind)
    exponential = TopKProblem(THETA, 3, family=Exponential()).costs(psi, kind=kind)
    np.testing.assert_allclose(gamma, SHAPE * exponential, rtol=1e-14)


def test_check_topk_certifies_the_gamma_optimum():
    problem = TopKProblem(THETA, 2, family=Gamma(SHAPE))
    report = check_topk(problem, solve_topk(problem).psi)
    assert report.passed
