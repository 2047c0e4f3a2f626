"""Every instance class of allocopt.testing.topk_classes: the exact solver against the CVXPY oracle at small
K (both families, both kinds), and certified at scale (slow suite, both kinds): K = 10^4 for every Gaussian
class (the transport route) and every Bernoulli class but one (from the Gaussian surrogate start, a few dozen
pivots on staircases), K = 10^3 for two Bernoulli clusters, which at K = 10^4 still take longer than a minute
(docs/topk_benchmark.md, written by benchmarks/topk_solvers.py, has the figures).

Reference values: the oracle (an independent convex model and solver) and the shared weak-duality
certificate (each certificate's value must lie below the other's upper bound).
"""

from __future__ import annotations

import pytest

from allocopt import solve_topk
from allocopt.exceptions import AllocoptError
from allocopt.testing.topk_classes import TOPK_INSTANCE_CLASSES, topk_instance_class

CASES = [(name, family) for name in TOPK_INSTANCE_CLASSES
         for family in (("gaussian",) if name == "heteroscedastic" else ("gaussian", "bernoulli"))]


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


SCALE = {"linspace": 10_000, "uniform": 10_000, "massive ties": 10_000, "heteroscedastic": 10_000,
         "staircase": 10_000, "two clusters": 1_000, "power-law gaps": 10_000}


def test_bad_class_or_family_is_named():
    with pytest.raises(AllocoptError, match="'name' parameter of topk_instance_class"):
        topk_instance_class("zigzag", 6)
    with pytest.raises(AllocoptError, match="'family' parameter of topk_instance_class"):
        topk_instance_class("heteroscedastic", 6, family="bernoulli")


def test_every_class_has_a_scale():
    assert set(SCALE) == set(TOPK_INSTANCE_CLASSES)


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["confidence", "budget"])
@pytest.mark.parametrize("name, family", CASES)
def test_every_class_is_certified_at_scale(name, family, kind):
    problem = topk_instance_class(name, 10_000 if family == "gaussian" else SCALE[name], family)
    result = solve_topk(problem, kind=kind)
    assert result.status == "optimal" and result.gap <= 1e-9 * result.value, result.message
