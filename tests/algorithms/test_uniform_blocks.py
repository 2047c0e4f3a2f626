"""Uniform allocation pulls a round per step in fixed budget: its outcomes equal, bit for bit, those of the
sequential rule (one least-pulled arm per step, the floor(u c)-th of the c tied arms with the step's uniform),
written out here independently of allocopt's Uniform."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pytest

from allocopt import TopKProblem
from allocopt.algorithms import RuleContext, Uniform, identify, identify_fixed_budget
from allocopt.families import get_family


@dataclass(frozen=True)
class SequentialUniform:
    """One pull per step: the floor(u c)-th (0-based, arm order) of the c least-pulled arms; anytime."""

    name = "sequential-uniform"
    uses_glr = False

    def uniforms_per_step(self, context):
        return 1

    def init_state(self, context, n_runs):
        return {}

    def select(self, context, view, state, uniforms):
        least = np.flatnonzero(view.counts == view.counts.min())
        return int(least[min(int(uniforms[0] * least.size), least.size - 1)])


THETA = np.array([0.9, 0.1, 0.55, 0.5, 0.45, 0.3, 0.52])  # K = 7, arms in no particular order


@pytest.mark.parametrize("family, k", [("gaussian", 1), ("bernoulli", 3), ("gaussian", 6)])
@pytest.mark.parametrize("batched", [True, False])
def test_fixed_budget_blocks_equal_the_sequential_rule(family, k, batched):
    problem = TopKProblem(THETA, k=k, family=family) if family == "bernoulli" else TopKProblem(THETA, k=k, variance=1.0)
    budgets = [7, 8, 13, 14, 15, 40, 71]  # K, K + 1, within the second round, at round ends, K + 64
    blocks = identify_fixed_budget(problem, Uniform(), budgets, n_runs=40, rng=11, batched=batched)
    sequential = identify_fixed_budget(problem, SequentialUniform(), budgets, n_runs=40, rng=11, batched=False)
    assert np.array_equal(blocks.recommendations, sequential.recommendations)
    assert np.array_equal(blocks.pulls, sequential.pulls)
    assert not np.all(blocks.correct)  # small budgets: some runs wrong, so the recommendations are not trivial
    for budget in budgets:  # each budget alone: the counts differ by at most one, as round robin gives
        alone = identify_fixed_budget(problem, Uniform(), budget, n_runs=5, rng=11)
        assert np.all(alone.pulls.sum(axis=1) == budget) and np.all(np.ptp(alone.pulls, axis=1) <= 1)


def test_fixed_confidence_is_still_one_pull_per_step():
    problem = TopKProblem([1.0, 0.5, 0.45, 0.0], k=1, variance=0.25)
    blocks = identify(problem, Uniform(), delta=(0.1, 0.01), n_runs=10, rng=5)
    sequential = identify(problem, SequentialUniform(), delta=(0.1, 0.01), n_runs=10, rng=5)
    assert np.array_equal(blocks.stopping_times, sequential.stopping_times)
    assert np.array_equal(blocks.recommendations, sequential.recommendations)
    assert np.any(blocks.stopping_times % 4 != 0)  # stops inside a round: no rounding to whole rounds


def test_block_of_a_partial_round_follows_the_sequential_picks():
    # counts (2, 2, 2, 2), 3 pulls left: u = 0.5 -> floor(2.0) = arm 2; then arms 0, 1, 3: u = 0.1 -> arm 0;
    # then arms 1, 3: u = 0.99 -> floor(1.98) = arm 3
    context = RuleContext(4, 1, get_family("gaussian"), np.ones(4), budget=11)
    block = Uniform().block(context, np.array([[2, 2, 2, 2]]), np.array([8]), np.array([[0.5, 0.1, 0.99, 0.7]]))
    assert block.tolist() == [[1, 0, 1, 1]]
    # unequal counts: the least-pulled arms first (arm 1), then every arm is tied: u = 0.3 -> floor(1.2) = arm 1
    block = Uniform().block(context, np.array([[3, 2, 3, 3]]), np.array([9]), np.array([[0.9, 0.3, 0.5, 0.5]]))
    assert block.tolist() == [[0, 2, 0, 0]]
