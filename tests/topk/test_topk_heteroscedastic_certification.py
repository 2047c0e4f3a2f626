"""The exact solver certifies heteroscedastic Gaussian instances whose variances span ten decades (issue 28).

The generator draws K up to 200 standard normal means and variances log-uniform over [1e-5, 1e5]. On such
instances the binding pairs' multipliers spread over as many decades as the variances, which defeated the barrier
rounds' choice of the binding forest (a non-binding pair joined two binding trees, whose forest system then had no
positive solution); the later rounds now follow a barrier path weighted by the previous round's multipliers, on
which every binding pair's slack is of the order of the barrier parameter. The judge of a reported value is the heteroscedastic Gaussian cost of the spec,
(theta_i - theta_j)^2 / (2 (s2_i/psi_i + s2_j/psi_j)), evaluated in mpmath.
"""

from __future__ import annotations

import json
import pathlib

import mpmath as mp
import numpy as np
import pytest

from allocopt import TopKProblem, solve_topk

DATA = json.loads((pathlib.Path(__file__).parent / "data" / "issue28_topk.json").read_text())
mp.mp.dps = 40


def heteroscedastic_instances(seed: int, count: int, largest: int = 200):
    """(theta, k, variance) of the generator (module docstring)."""
    rng = np.random.default_rng(seed)
    for _ in range(count):
        size = int(rng.integers(3, largest + 1))
        k = int(rng.integers(1, size))
        yield rng.normal(size=size), k, 10.0 ** rng.uniform(-5, 5, size)


def _mp_value(theta, variance, k, psi) -> mp.mpf:
    order = np.argsort(-np.asarray(theta), kind="stable")
    return min((mp.mpf(theta[i]) - mp.mpf(theta[j])) ** 2
               / (2 * (mp.mpf(variance[i]) / mp.mpf(psi[i]) + mp.mpf(variance[j]) / mp.mpf(psi[j])))
               for i in order[:k] for j in order[k:])


def test_the_barrier_forest_of_spread_variances_is_certified():
    case = DATA["heteroscedastic_barrier_forest"]
    result = solve_topk(TopKProblem(case["theta"], case["k"], variance=case["variance"]))
    assert result.status == "optimal", result.message
    value = _mp_value(case["theta"], case["variance"], case["k"], result.psi)
    assert abs(mp.mpf(result.value) - value) <= 1e-13 * value


@pytest.mark.slow
def test_the_generator_is_certified():
    statuses = []
    for theta, k, variance in heteroscedastic_instances(6, 120):
        result = solve_topk(TopKProblem(theta, k, variance=variance))
        value = _mp_value(theta, variance, k, result.psi)
        assert abs(mp.mpf(result.value) - value) <= 1e-12 * value
        statuses.append(result.status)
    # measured at seed 6: 11 of the first 200 not certified before (7 with the slack-shrink rule alone), 0 after
    assert statuses.count("not_certified") == 0
