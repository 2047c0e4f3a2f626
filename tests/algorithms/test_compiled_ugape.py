"""The compiled UGapEc loop against the engine's numpy loop, its twin: the same records (stopping times,
recommendations, stop or cap, counts, steps) bit for bit, on Gaussian problems with equal means (ties of the gap
indices and of the bounds, broken by the step's uniforms), k = 1 and k = K - 1, unequal variances, Bernoulli
rewards, epsilon > 0, the Gabillon et al. exploration rate, the sample cap reached, and every hand-back of the loop
taken (reward buffers, uniforms, the rate table); and the cases it leaves to the numpy loop."""

from __future__ import annotations

import numpy as np
import pytest

from allocopt import TopKProblem
from allocopt.algorithms import UGapE, _compiled_lucb, _compiled_ugape
from allocopt.algorithms._compiled import AVAILABLE, compiled_kernels
from allocopt.algorithms.engine import run_replications
from allocopt.algorithms.protocol import RuleContext
from twin_problems import GAUSSIAN_PROBLEMS, assert_same_records

pytestmark = pytest.mark.skipif(not AVAILABLE, reason="numba is not installed")

PROBLEMS = {
    **GAUSSIAN_PROBLEMS,
    "bernoulli, equal means": TopKProblem([0.9, 0.7, 0.5, 0.5, 0.2], 2, family="bernoulli"),
}


def records(problem: TopKProblem, *, compiled: bool, rule=None, delta: float = 0.05, max_samples: int = 4000,
            n_runs: int = 6):
    context = RuleContext(problem.n_arms, problem.k, problem.family, np.asarray(problem.dispersion), delta=delta)
    with compiled_kernels(compiled):
        return run_replications(problem, rule or UGapE(), 9, np.arange(1, 1 + n_runs), checkpoints=np.array([delta]),
                                max_samples=max_samples, context=context)


def assert_same(problem: TopKProblem, **options) -> None:
    fast = records(problem, compiled=True, **options)
    slow = records(problem, compiled=False, **options)
    assert_same_records(fast, slow)


@pytest.mark.parametrize("name", sorted(PROBLEMS))
def test_the_compiled_loop_keeps_the_numpy_loop_records(name):
    assert_same(PROBLEMS[name])


def test_epsilon_the_gabillon_rate_and_the_sample_cap():
    problem = PROBLEMS["equal means, unequal variances"]
    rule = UGapE(epsilon=0.05, exploration="gabillon")
    slow = records(problem, compiled=False, rule=rule, max_samples=300)
    assert not slow.stopped.all()  # the premise: some runs reach the cap of 300 pulls
    assert_same(problem, rule=rule, max_samples=300)
    assert_same(problem, rule=UGapE(epsilon=0.3))


def test_every_hand_back_of_the_loop(count_hand_backs, monkeypatch):
    # 2 steps of uniforms per refill and a rate table of 16 pulls: the rows leave the compiled code for more
    # uniforms and a longer table many times, and for reward buffers (the engine's buffers of a few hundred rewards)
    monkeypatch.setattr(_compiled_ugape, "UNIFORM_STEPS", 2)
    monkeypatch.setattr(_compiled_lucb, "FIRST_TABLE_SIZE", 16)
    monkeypatch.setattr(_compiled_lucb, "_TABLES", {})
    hand_backs = count_hand_backs(_compiled_ugape, "rate_table", "rate")
    assert_same(PROBLEMS["k = 1"], delta=0.001, max_samples=20_000)
    assert min(hand_backs.values()) >= 2, hand_backs


def test_the_loop_is_used_only_where_it_applies():
    # UGapEc with a named rate: the compiled loop; a callable rate, UGapEb, a subclass or several levels: None
    problem = PROBLEMS["k = 1"]
    context = RuleContext(4, 1, problem.family, np.asarray(problem.dispersion), delta=0.1)
    counts, sums, t = np.ones((1, 4), dtype=np.int64), np.zeros((1, 4)), np.full(1, 4, dtype=np.int64)

    def hook(rule, mode="confidence", checkpoints=(0.1,)):
        return rule.compiled_rows(context, mode, np.array(checkpoints), 10, counts, sums, t, None, None)

    assert hook(UGapE(exploration=lambda pulls, delta, n_arms: np.log(1.0 / delta) + 0.0 * pulls)) is None
    assert hook(UGapE("budget", a=1.0, complexity=10.0), mode="budget") is None
    assert hook(UGapE(), checkpoints=(0.1, 0.01)) is None

    class Subclass(UGapE):
        pass

    assert hook(Subclass()) is None
