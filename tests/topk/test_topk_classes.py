"""Every instance class of allocopt.testing.topk_classes: the exact solver against the CVXPY oracle at small
K (every family, both kinds), and certified at K = 10^4 (slow suite, every family, both kinds): the Gaussian
classes by the transport route, the others from the Gaussian surrogate's start, staircases and two clusters
through the north-west walks with the true gradients (docs/topk_benchmark.md, written by
benchmarks/topk_solvers.py, has the figures).

Reference values: the oracle (an independent convex model and solver) and the shared weak-duality
certificate (each certificate's value must lie below the other's upper bound).
"""

from __future__ import annotations

import pytest

from allocopt import solve_topk
from allocopt.exceptions import AllocoptError
from allocopt.testing.topk_classes import TOPK_INSTANCE_CLASSES, topk_instance_class

FAMILIES = ("gaussian", "bernoulli", "poisson", "exponential")
CASES = [(name, family) for name in TOPK_INSTANCE_CLASSES
         for family in (("gaussian",) if name == "heteroscedastic" else FAMILIES)]


@pytest.mark.parametrize("kind", ["confidence", "budget"])
@pytest.mark.parametrize("n_arms", [8, 15])
@pytest.mark.parametrize("name, family", CASES)
def test_every_class_against_the_oracle(name, family, n_arms, kind):
    for seed in range(2):
        problem = topk_instance_class(name, n_arms, family, seed=seed)
        exact = solve_topk(problem, kind=kind)
        oracle = solve_topk(problem, method="cvxpy", kind=kind, tol=1e-6, max_rescalings=0)
        assert exact.status == "optimal" and exact.gap <= 1e-9 * exact.value, (name, family, exact.message)
        assert exact.value <= oracle.upper_bound * (1 + 1e-12) and oracle.value <= exact.upper_bound * (1 + 1e-12)
        assert exact.value >= oracle.value * (1 - 1e-12)


def test_bad_class_or_family_is_named():
    with pytest.raises(AllocoptError, match="'name' parameter of topk_instance_class"):
        topk_instance_class("zigzag", 6)
    with pytest.raises(AllocoptError, match="'family' parameter of topk_instance_class"):
        topk_instance_class("heteroscedastic", 6, family="bernoulli")


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["confidence", "budget"])
@pytest.mark.parametrize("name, family", CASES)
def test_every_class_is_certified_at_scale(name, family, kind):
    problem = topk_instance_class(name, 10_000, family)
    result = solve_topk(problem, kind=kind)
    assert result.status == "optimal" and result.gap <= 1e-9 * result.value, result.message
