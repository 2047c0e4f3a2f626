"""The compiled loop of uniform sampling stopped by the Chernoff statistic against the engine's numpy loop, its
twin: the same records (stopping times, recommendations, stop or cap, counts, steps) bit for bit, on Gaussian
problems with equal means (ties of the empirical top-k boundary and of the pair costs), k = 1 and k = K - 1,
unequal variances, several confidence levels, both built-in thresholds, the sample cap reached, and every
hand-back of the loop taken (reward buffers, uniforms, the threshold table); and the cases it leaves to the
numpy loop."""

from __future__ import annotations

import numpy as np
import pytest

from allocopt import TopKProblem
from allocopt.families import Bernoulli
from allocopt.algorithms import Uniform, _compiled_uniform
from allocopt.algorithms._compiled import AVAILABLE, compiled_kernels
from allocopt.algorithms.engine import run_replications
from allocopt.algorithms.protocol import RuleContext
from allocopt.algorithms.stopping import HeuristicThreshold, TheoreticalThreshold
from twin_problems import GAUSSIAN_PROBLEMS, assert_same_records

pytestmark = pytest.mark.skipif(not AVAILABLE, reason="numba is not installed")

PROBLEMS = {
    **GAUSSIAN_PROBLEMS,
    # Bernoulli arms: the statistic of the compiled pair kernel, means of 0 and 1 and ties in the first pulls
    "bernoulli, theta = 0.9, ..., 0.1, k = 3": TopKProblem(np.round(np.arange(9, 0, -1) / 10.0, 12), 3,
                                                          family="bernoulli"),
    "bernoulli, tied means, k = 3": TopKProblem([0.8, 0.6, 0.6, 0.3, 0.3], 3, family="bernoulli"),
}


def records(problem: TopKProblem, *, compiled: bool, deltas=(0.1, 0.01), threshold=None, max_samples: int = 3000,
            n_runs: int = 6, rule=None):
    context = RuleContext(problem.n_arms, problem.k, problem.family, np.asarray(problem.dispersion))
    with compiled_kernels(compiled):
        return run_replications(problem, rule or Uniform(), 7, np.arange(2, 2 + n_runs),
                                checkpoints=np.asarray(deltas, dtype=float),
                                threshold=threshold or HeuristicThreshold(), max_samples=max_samples, context=context)


def assert_same(problem: TopKProblem, **options) -> None:
    fast = records(problem, compiled=True, **options)
    slow = records(problem, compiled=False, **options)
    assert_same_records(fast, slow)


@pytest.mark.parametrize("name", sorted(PROBLEMS))
def test_the_compiled_loop_keeps_the_numpy_loop_records(name):
    assert_same(PROBLEMS[name])


def test_the_theoretical_threshold_and_the_sample_cap():
    # alpha = 1.2 and C = 3: a larger threshold, so that the cap of 400 pulls stops some levels first
    problem = PROBLEMS["equal means, unequal variances"]
    slow = records(problem, compiled=False, threshold=TheoreticalThreshold(1.2, 3.0), max_samples=400)
    assert not slow.stopped.all()  # the premise: the cap is reached at some level
    assert_same(problem, threshold=TheoreticalThreshold(1.2, 3.0), max_samples=400)


def test_every_hand_back_of_the_loop(count_hand_backs, monkeypatch):
    # 5 uniforms per refill and a threshold table of 16 pulls: the rows leave the compiled code for more uniforms
    # and a longer table many times, and for reward buffers (the engine's buffers of a few hundred rewards)
    monkeypatch.setattr(_compiled_uniform, "UNIFORM_STEPS", 5)
    monkeypatch.setattr(_compiled_uniform, "FIRST_TABLE_SIZE", 16)
    hand_backs = count_hand_backs(_compiled_uniform, "threshold_table")
    assert_same(PROBLEMS["k = 1"], deltas=(0.1, 0.01, 0.001), max_samples=20_000)
    assert min(hand_backs.values()) >= 2, hand_backs


def test_the_loop_is_used_only_where_it_applies():
    # Gaussian arms (or a family with a compiled pair kernel) with a built-in threshold: the hook runs the compiled
    # loop; a callable threshold, a family without a compiled pair kernel, a subclass or a fixed budget: None
    problem = PROBLEMS["k = 1"]
    context = RuleContext(4, 1, problem.family, np.asarray(problem.dispersion))
    counts, sums, t = np.ones((1, 4), dtype=np.int64), np.zeros((1, 4)), np.full(1, 4, dtype=np.int64)

    def hook(rule, threshold, rule_context):
        return rule.compiled_glr_rows(rule_context, np.array([0.1]), threshold, 10, counts, sums, t, None, None)

    assert hook(Uniform(), lambda pulls, delta: np.log(1.0 / delta) + 0.0 * pulls, context) is None

    class Subclass(Uniform):
        pass

    assert hook(Subclass(), HeuristicThreshold(), context) is None
    class CustomBernoulli(Bernoulli):  # a family without a compiled pair kernel
        def unit_confidence_pair(self, theta_top, theta_bottom, share_top, share_bottom):
            return super().unit_confidence_pair(theta_top, theta_bottom, share_top, share_bottom)

    assert hook(Uniform(), HeuristicThreshold(), RuleContext(4, 1, CustomBernoulli(), np.ones(4))) is None
    budget = RuleContext(4, 1, problem.family, np.asarray(problem.dispersion), budget=100)
    assert hook(Uniform(), HeuristicThreshold(), budget) is None


def test_the_threshold_table_is_the_threshold_elementwise():
    # beta(t, delta) = log((log t + 1) / delta) for t = 1..T-1, each entry as numpy computes it alone
    table = _compiled_uniform.threshold_table(HeuristicThreshold(), np.array([0.1, 0.001]), 100)
    pulls = np.array([1.0, 2.0, 99.0, float(table.shape[0] - 1)])
    for column, delta in enumerate((0.1, 0.001)):
        expected = np.array([np.log((np.log(value) + 1.0) / delta) for value in pulls])
        assert np.array_equal(table[pulls.astype(int), column], expected)
    assert np.isnan(table[0]).all() and table.shape[0] > 100
