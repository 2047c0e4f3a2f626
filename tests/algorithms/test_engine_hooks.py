"""The engine's hooks for rules with their own stopping rule and recommendation, multi-arm block pulls and a
caller-supplied stopping statistic. Expected values are computed in the tests from the reward streams'
definition (``SeedSequence(entropy, spawn_key=(i, 0, a))``), never from the engine."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pytest

from allocopt import TopKProblem
from allocopt.algorithms import BatchPullEach, PullEach, identify, identify_fixed_budget
from allocopt.algorithms.engine.run import run_replications
from allocopt.algorithms.engine.protocol import RuleContext
from allocopt.algorithms.engine.rewards import reward_generator
from allocopt.algorithms.engine.stopping import GLRStatistic
from allocopt.exceptions import AllocoptError

PROBLEM = TopKProblem([0.9, 0.7, 0.5, 0.3, 0.1], k=2, variance=0.25)


def stream_rewards(entropy: int, replication: int, arm: int, count: int, problem: TopKProblem) -> np.ndarray:
    """The first ``count`` rewards of one arm, drawn one at a time from its own generator (the definition)."""
    generator = reward_generator(entropy, replication, arm)
    sigma = np.sqrt(problem.dispersion[arm])
    return np.array([problem.theta[arm] + sigma * generator.standard_normal() for _ in range(count)])


@dataclass(frozen=True)
class RoundsThenStop:
    """Pull every arm ``per_round`` times per step; stop after ``rounds`` steps; recommend the k largest sums."""

    rounds: int = 3
    per_round: int = 4
    name = "rounds-then-stop"
    stopping = "rule"
    uses_glr = False

    def uniforms_per_step(self, context):
        return 0

    def init_state(self, context, n_runs):
        return {"round": np.zeros((n_runs, 1), dtype=np.int64)}

    def select(self, context, view, state, uniforms):
        state["round"][0] += 1
        return PullEach(np.full(context.n_arms, self.per_round, dtype=np.int64))

    def select_batch(self, context, view, state, uniforms):
        state["round"][:, 0] += 1
        return BatchPullEach(np.full((view.counts.shape[0], context.n_arms), self.per_round, dtype=np.int64))

    def stop(self, context, view, state):
        return bool(state["round"][0] >= self.rounds)

    def stop_batch(self, context, view, state):
        return state["round"][:, 0] >= self.rounds

    def recommend(self, context, view, state):
        return np.sort(np.argsort(-view.sums, kind="stable")[:context.k])

    def recommend_batch(self, context, view, state):
        return np.sort(np.argsort(-view.sums, axis=1, kind="stable")[:, :context.k], axis=1)


def test_a_rule_with_its_own_stopping_and_recommendation():
    rule = RoundsThenStop()
    result = identify(PROBLEM, rule, delta=(0.1, 0.01), n_runs=6, rng=11)
    n_arms = PROBLEM.n_arms
    # one initial pull per arm, then `rounds` blocks of `per_round` pulls of every arm
    expected_time = n_arms * (1 + rule.rounds * rule.per_round)
    assert np.all(result.stopping_times == expected_time)
    assert np.all(result.pulls == 1 + rule.rounds * rule.per_round)
    for replication in range(6):
        sums = np.array([stream_rewards(result.entropy, replication, arm, 1 + rule.rounds * rule.per_round,
                                        PROBLEM).sum() for arm in range(n_arms)])
        expected = np.sort(np.argsort(-sums, kind="stable")[:PROBLEM.k])
        assert np.array_equal(result.recommendations[replication, 0], expected)
        assert np.array_equal(result.recommendations[replication, 1], expected)


def test_own_stopping_rule_scalar_and_batched_agree():
    batched = identify(PROBLEM, RoundsThenStop(rounds=5, per_round=3), delta=0.05, n_runs=7, rng=4)
    scalar = identify(PROBLEM, RoundsThenStop(rounds=5, per_round=3), delta=0.05, n_runs=7, rng=4, batched=False)
    assert np.array_equal(batched.stopping_times, scalar.stopping_times)
    assert np.array_equal(batched.recommendations, scalar.recommendations)
    assert np.array_equal(batched.pulls, scalar.pulls)


def test_block_sums_equal_the_streams_and_do_not_depend_on_chunking():
    one = identify(PROBLEM, RoundsThenStop(rounds=2, per_round=7), delta=0.1, n_runs=5, rng=3, chunk_size=1)
    all_ = identify(PROBLEM, RoundsThenStop(rounds=2, per_round=7), delta=0.1, n_runs=5, rng=3, chunk_size=5)
    assert np.array_equal(one.recommendations, all_.recommendations)


@pytest.mark.parametrize("budget", [5, 13, 27, 38])
def test_multi_arm_blocks_are_cut_in_arm_order_at_a_budget(budget):
    # every step asks for 4 pulls of each of the 5 arms; a budget cuts the step after `budget - t` pulls,
    # taken in arm order: arm a gets min(4, max(0, remaining - 4 a)) pulls
    result = identify_fixed_budget(PROBLEM, RoundsThenStop(rounds=100, per_round=4), [budget], n_runs=3, rng=0)
    expected = np.ones(5, dtype=np.int64)
    remaining = budget - 5
    while remaining > 0:
        step = np.minimum(4, np.maximum(0, remaining - 4 * np.arange(5)))
        expected += step
        remaining -= step.sum()
    assert np.all(result.pulls == expected)
    assert result.pulls.sum(axis=1).tolist() == [budget] * 3


def test_a_recommendation_hook_serves_fixed_budget_checkpoints():
    result = identify_fixed_budget(PROBLEM, RoundsThenStop(rounds=100, per_round=2), [15, 25], n_runs=4, rng=5)
    for replication in range(4):
        # at budget 25: one initial pull + (25 - 5)/(2*5) = 2 blocks of two pulls per arm = 5 pulls per arm
        sums = np.array([stream_rewards(result.entropy, replication, arm, 5, PROBLEM).sum() for arm in range(5)])
        expected = np.sort(np.argsort(-sums, kind="stable")[:2])
        assert np.array_equal(result.recommendations[replication, 1], expected)


def test_a_caller_supplied_statistic_replaces_the_chernoff_statistic():
    # statistic: the number of pulls so far; threshold: the checkpoint itself, so checkpoint c is reached at
    # the first t > c, i.e. t = c + 1 under one pull per step
    def pulls_so_far(family, dispersion, counts, sums, means, k):
        from allocopt.algorithms.engine.statistics import top_k_order

        top, bottom = top_k_order(means, k)
        shape = means.shape[:-1]
        return GLRStatistic(counts.sum(axis=-1).astype(float), top, bottom, np.full(shape, -1),
                            np.full(shape, -1))

    context = RuleContext(PROBLEM.n_arms, PROBLEM.k, PROBLEM.family, np.asarray(PROBLEM.dispersion))
    from allocopt.algorithms import Uniform

    records = run_replications(PROBLEM, Uniform(), 7, [0, 1, 2], checkpoints=np.array([10.0, 20.0]),
                               threshold=lambda t, c: c, max_samples=100, context=context,
                               statistic=pulls_so_far)
    assert np.all(records.times == np.array([11, 21]))
    assert records.stopped.all()


@dataclass(frozen=True)
class BadEach:
    name = "bad-each"
    uses_glr = False

    def uniforms_per_step(self, context):
        return 0

    def init_state(self, context, n_runs):
        return {}

    def select(self, context, view, state, uniforms):
        return PullEach(np.zeros(context.n_arms, dtype=np.int64))


def test_an_empty_multi_arm_block_is_refused_by_name():
    with pytest.raises(AllocoptError, match="'policy'.*PullEach"):
        identify(PROBLEM, BadEach(), delta=0.1, n_runs=1, rng=0)
