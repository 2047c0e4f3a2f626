"""Instances shared by the top-k tests: every family, both kinds, ties inside the top or bottom set, k = 1
and k = K - 1, near-ties at the boundary and Bernoulli means near 0 and 1. The means are chosen here (they
are not from a paper); the reference values they are compared with are computed in the tests."""

from __future__ import annotations

from allocopt import TopKProblem

SUITE = {
    # name: (constructor arguments, hard) -- "hard" instances have tiny or widely spread allocations, where the
    # paper's first-order methods are checked for honest certificates only, not for accuracy
    "gaussian": (dict(theta=[1.0, 0.7, 0.45, 0.3, 0.1, -0.2], k=2, family="gaussian", variance=0.25), False),
    "gaussian-ties": (dict(theta=[1.0, 0.8, 0.8, 0.4, 0.2, 0.2, -0.1], k=3, family="gaussian"), False),
    "gaussian-k1": (dict(theta=[1.0, 0.6, 0.5, 0.2, -0.3], k=1, family="gaussian", variance=2.0), False),
    "gaussian-kK-1": (dict(theta=[1.0, 0.9, 0.6, 0.5, 0.2], k=4, family="gaussian"), False),
    "gaussian-heteroscedastic": (dict(theta=[1.0, 0.7, 0.45, 0.3, 0.1, -0.2], k=3, family="gaussian",
                                      variance=[0.5, 0.1, 1.0, 0.3, 2.0, 0.25]), False),
    "bernoulli": (dict(theta=[0.9, 0.7, 0.55, 0.4, 0.3, 0.1], k=2, family="bernoulli"), False),
    "bernoulli-ties": (dict(theta=[0.8, 0.6, 0.6, 0.4, 0.4, 0.4, 0.2], k=3, family="bernoulli"), False),
    "bernoulli-k1": (dict(theta=[0.7, 0.5, 0.45, 0.3, 0.1], k=1, family="bernoulli"), False),
    "bernoulli-kK-1": (dict(theta=[0.9, 0.8, 0.6, 0.5, 0.3], k=4, family="bernoulli"), False),
    "bernoulli-extreme": (dict(theta=[1 - 1e-6, 0.999, 0.5, 2e-6, 1e-6], k=2, family="bernoulli"), True),
    "poisson": (dict(theta=[5.0, 3.5, 2.8, 2.0, 1.5, 0.5], k=3, family="poisson"), False),
    "poisson-ties": (dict(theta=[4.0, 4.0, 3.0, 2.0, 2.0, 1.0], k=3, family="poisson"), False),
    "poisson-k1": (dict(theta=[3.0, 2.0, 1.5, 0.5], k=1, family="poisson"), False),
    "poisson-kK-1": (dict(theta=[3.0, 2.5, 2.0, 0.5], k=3, family="poisson"), False),
    "exponential": (dict(theta=[5.0, 3.5, 2.8, 2.0, 1.5, 0.5], k=2, family="exponential"), False),
    "exponential-ties": (dict(theta=[4.0, 3.0, 3.0, 1.0, 1.0, 0.5], k=3, family="exponential"), False),
    "exponential-k1": (dict(theta=[3.0, 2.0, 1.5, 0.5], k=1, family="exponential"), False),
    "exponential-kK-1": (dict(theta=[3.0, 2.5, 2.0, 0.5], k=3, family="exponential"), False),
    "gaussian-near-tie": (dict(theta=[1.0, 0.5 + 1e-6, 0.5, 0.0], k=2, family="gaussian"), True),
}


def make(name: str) -> TopKProblem:
    return TopKProblem(**SUITE[name][0])
