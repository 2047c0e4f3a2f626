"""The compiled loop of KL-Elimination and KL-Racing against the engine's numpy loop, its twin: the same records
(stopping times, recommendations, stop or cap, counts, rounds) bit for bit, on Gaussian problems with equal means
(ties of a_B, a_W and of J, broken by the rounds' uniforms), k = 1 and k = K - 1, unequal variances, on Bernoulli
problems (the KL bounds by bisection, empirical means of 0 and 1, ties of the discrete means), the
Kalyanakrishnan exploration rate, the sample cap reached in the middle of a round, and every hand-back of the loop
taken (reward buffers, uniforms, the rate table); and the cases it leaves to the numpy loop."""

from __future__ import annotations

import numpy as np
import pytest

from allocopt import TopKProblem
from allocopt.algorithms import (KLElimination, _compiled_kl_bounds, _compiled_kl_racing,
                                 _compiled_lucb)
from allocopt.algorithms._compiled import AVAILABLE, compiled_kernels
from allocopt.algorithms.engine import run_replications
from allocopt.algorithms.protocol import RuleContext
from twin_problems import GAUSSIAN_PROBLEMS, assert_same_records

pytestmark = pytest.mark.skipif(not AVAILABLE, reason="numba is not installed")

PROBLEMS = {
    **GAUSSIAN_PROBLEMS,
    # Bernoulli arms: the bisection bounds, empirical means of 0 and 1 (bounds at the domain's ends), tied means
    "bernoulli, theta = 0.9, ..., 0.1, k = 3": TopKProblem(np.round(np.arange(9, 0, -1) / 10.0, 12), 3,
                                                          family="bernoulli"),
    "bernoulli, means near the ends, k = 2": TopKProblem([0.99, 0.97, 0.5, 0.03, 0.01], 2, family="bernoulli"),
}


def records(problem: TopKProblem, *, compiled: bool, rule=None, delta: float = 0.05, max_samples: int = 4000,
            n_runs: int = 6):
    context = RuleContext(problem.n_arms, problem.k, problem.family, np.asarray(problem.dispersion), delta=delta)
    with compiled_kernels(compiled):
        return run_replications(problem, rule or KLElimination(), 9, np.arange(1, 1 + n_runs), checkpoints=np.array([delta]),
                                max_samples=max_samples, context=context)


def assert_same(problem: TopKProblem, **options) -> None:
    fast = records(problem, compiled=True, **options)
    slow = records(problem, compiled=False, **options)
    assert_same_records(fast, slow)


@pytest.mark.parametrize("racing", [False, True])
@pytest.mark.parametrize("name", sorted(PROBLEMS))
def test_the_compiled_loop_keeps_the_numpy_loop_records(name, racing):
    assert_same(PROBLEMS[name], rule=KLElimination(racing=racing))


def test_the_kalyanakrishnan_rate_and_the_sample_cap():
    # a cap of 333 pulls: 5 survivors never divide the pulls left, so the last round is cut in arm order
    problem = PROBLEMS["equal means, unequal variances"]
    for rule in (KLElimination(exploration="kalyanakrishnan"), KLElimination(racing=True)):
        slow = records(problem, compiled=False, rule=rule, max_samples=333)
        assert not slow.stopped.all()  # the premise: some runs reach the cap
        assert_same(problem, rule=rule, max_samples=333)


def test_every_hand_back_of_the_loop(count_hand_backs, monkeypatch):
    # 2 rounds of uniforms per refill and a rate table of 16 pulls: the rows leave the compiled code for more
    # uniforms and a longer table many times, and for reward buffers (the engine's buffers of a few hundred rewards)
    monkeypatch.setattr(_compiled_kl_racing, "UNIFORM_STEPS", 2)
    monkeypatch.setattr(_compiled_lucb, "FIRST_TABLE_SIZE", 16)
    monkeypatch.setattr(_compiled_lucb, "_TABLES", {})
    hand_backs = count_hand_backs(_compiled_kl_racing, "rate_table", "rate")
    assert_same(PROBLEMS["k = 1"], delta=0.001, max_samples=20_000)
    assert min(hand_backs.values()) >= 2, hand_backs


def test_the_loop_is_used_only_where_it_applies():
    # Gaussian or Bernoulli arms with a named rate at one level: the compiled loop; a callable rate, another family,
    # a subclass or several levels: None
    problem = PROBLEMS["k = 1"]
    context = RuleContext(4, 1, problem.family, np.asarray(problem.dispersion), delta=0.1)
    counts, sums, t = np.ones((1, 4), dtype=np.int64), np.zeros((1, 4)), np.full(1, 4, dtype=np.int64)

    def hook(rule, checkpoints=(0.1,), rule_context=context):
        return rule.compiled_rows(rule_context, "confidence", np.array(checkpoints), 10, counts, sums, t, None, None)

    assert hook(KLElimination(exploration=lambda pulls, delta, n_arms: np.log(1.0 / delta) + 0.0 * pulls)) is None
    assert hook(KLElimination(), checkpoints=(0.1, 0.01)) is None
    poisson = TopKProblem([0.9, 0.5, 0.4, 0.1], 1, family="poisson")
    assert hook(KLElimination(), rule_context=RuleContext(4, 1, poisson.family, np.ones(4), delta=0.1)) is None

    class Subclass(KLElimination):
        pass

    assert hook(Subclass()) is None


@pytest.mark.parametrize("upper", [True, False])
def test_the_compiled_bernoulli_bound_is_kl_bound_bit_for_bit(upper):
    # the loop's Bernoulli bound (bisection stopped at its fixed point) against kl_bound's 62 numpy steps, on means
    # at the domain's ends, next to them and inside, at levels from 1e-9 to 50
    from allocopt.algorithms.confidence_bounds import kl_bound
    from allocopt.families import Bernoulli

    _compiled_kl_bounds.compile_bounds()
    bound = _compiled_kl_bounds.kl_bound
    means = np.concatenate([[0.0, 1.0, 1e-300, 1e-12, 1.0 - 2.0**-53, 0.5], np.random.default_rng(5).random(40),
                            np.arange(1, 40) / 40.0])
    levels = np.array([1e-9, 1e-4, 0.03, 0.7, 5.0, 50.0])
    mean_grid, level_grid = np.meshgrid(means, levels)
    expected = kl_bound(Bernoulli(), mean_grid, level_grid, upper)
    compiled = np.array([[bound(1, mean, level, upper, 0.0) for mean in means] for level in levels])
    assert np.array_equal(compiled, expected)
