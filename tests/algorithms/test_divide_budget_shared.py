"""Uniform allocation of seed 003's experiment (``DivideBudget`` in examples/adaptive_topk_experiment.py): its
recommendations at every budget from one read of each reward stream are those of the engine's runs, one per budget.

The engine runs the rule once per budget (it needs the budget); the shared form reads every (run, arm) stream
once and takes prefixes. Both read the same common-random-number streams, so every record must be equal, element
for element: on Bernoulli arms with equal means (ties broken by the run's random order), on Gaussian arms of
different variances (sums that are not integers, so the order of the additions matters), and at budgets that are
not multiples of n (the extra pulls go to the arms first in the random order) or below 2n (arms with no block), and past the length of a reward buffer (the reads that do not fit).
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest

from allocopt import TopKProblem
from allocopt.algorithms import identify_fixed_budget
from allocopt.exceptions import AllocoptError

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "adaptive_topk_experiment.py"


@pytest.fixture(scope="module")
def divide_budget():
    spec = importlib.util.spec_from_file_location("adaptive_topk_experiment", EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.DivideBudget


PROBLEMS = {
    "bernoulli ties": TopKProblem([0.5, 0.5, 0.5, 0.3, 0.3, 0.2, 0.5], k=4, family="bernoulli"),
    "gaussian": TopKProblem([0.3, 0.1, 0.25, -0.2, 0.0], k=2, variance=[0.25, 1.0, 2.0, 0.5, 0.1]),
}


@pytest.mark.parametrize("name", sorted(PROBLEMS))
def test_shared_reads_give_the_per_budget_records(divide_budget, name):
    problem = PROBLEMS[name]
    n = problem.n_arms
    # up to 300 pulls per arm: more than a reward buffer holds (256), so some reads go past it
    budgets = np.array([n + 1, n + 3, 2 * n, 3 * n + 2, 5 * n, 9 * n + 1, 300 * n + 4])
    engine = identify_fixed_budget(problem, divide_budget(), budgets, n_runs=9, rng=11, n_jobs=1)
    shared = divide_budget.shared_recommendations(problem, budgets, 9, 11)
    assert shared.shape == engine.recommendations.shape == (9, budgets.size, problem.k)
    assert np.array_equal(shared, engine.recommendations)


def test_shared_reads_need_budgets_above_n(divide_budget):
    with pytest.raises(AllocoptError, match="budgets"):
        divide_budget.shared_recommendations(PROBLEMS["gaussian"], [5, 20], 2, 0)
