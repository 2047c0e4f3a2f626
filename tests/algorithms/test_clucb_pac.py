"""CLUCB-PAC (Chen, Lin, King, Lyu, Chen 2014) and its fixed-budget form: the radius, one step on a hand-made state
computed independently in the test, the PAC stopping rule, the frozen answer of the fixed-budget form, scalar
against batched runs, and bad input."""

from __future__ import annotations

import math

import numpy as np
import pytest

from allocopt import TopKProblem
from allocopt.algorithms import (CLUCBPAC, CLUCBPACFixedBudget, RuleContext, identify_fixed_budget, pac_identify)
from allocopt.algorithms.engine.protocol import RunView
from allocopt.exceptions import AllocoptError, InvalidArgumentError
from allocopt.families import get_family
from allocopt.testing.kernels import compiled_select

BERNOULLI = TopKProblem([0.9, 0.8, 0.7, 0.3, 0.2, 0.1], k=3, family="bernoulli")
GAUSSIAN = TopKProblem([1.0, 0.8, 0.5, 0.3, 0.0], k=2, variance=[0.25, 0.5, 0.3, 1.0, 0.2])


def _view(means, counts, k):
    means = np.asarray(means, dtype=float)
    counts = np.asarray(counts, dtype=np.int64)
    order = sorted(range(len(means)), key=lambda arm: (-means[arm], arm))  # ties to the smaller index
    top = np.array(sorted(order[:k]))
    bottom = np.array(sorted(order[k:]))
    return RunView(int(counts.sum()), counts, means * counts, means, math.nan, top, bottom, -1, -1)


def _context(n_arms, k, epsilon=None, delta=None, family="bernoulli"):
    return RuleContext(n_arms=n_arms, k=k, family=get_family(family), dispersion=np.ones(n_arms), delta=delta,
                       epsilon=epsilon)


def _by_hand(means, counts, k, delta):
    """Steps 1-5 of CLUCB written out with Python floats (sigma = 1/2 for rewards in [0, 1])."""
    n, t = len(means), sum(counts)
    radius = [0.5 * math.sqrt(2 * math.log(4 * n * t**3 / delta) / c) for c in counts]
    empirical = set(sorted(range(n), key=lambda arm: (-means[arm], arm))[:k])
    adjusted = [means[a] - radius[a] if a in empirical else means[a] + radius[a] for a in range(n)]
    revised = set(sorted(range(n), key=lambda arm: (-adjusted[arm], arm))[:k])
    gap = sum(adjusted[a] for a in revised - empirical) - sum(adjusted[a] for a in empirical - revised)
    difference = revised ^ empirical
    largest = max((radius[a] for a in difference), default=None)
    return gap, sorted(a for a in difference if radius[a] == largest)


def test_radius_is_theorem_1_of_chen_et_al_2014():
    from allocopt.algorithms.rules.clucb_pac import clucb_radius

    counts = np.array([[3, 10, 40], [7, 7, 1]])
    t = np.array([53, 15])
    expected = [[0.5 * math.sqrt(2 * math.log(4 * 3 * tt**3 / 0.01) / c) for c in row] for row, tt in zip(counts, t)]
    np.testing.assert_allclose(clucb_radius(counts, t, 3, 0.01, 0.25), expected, rtol=1e-14)


@pytest.mark.parametrize("means, counts, expected_arms", [
    # the worst empirical top arm (2) has few pulls: it is the arm of largest radius in the symmetric difference
    ([0.8, 0.75, 0.6, 0.55, 0.2], [40, 40, 6, 30, 30], [2]),
    # a far arm with few pulls enters the adjusted top-k and has the largest radius
    ([0.8, 0.75, 0.6, 0.55, 0.5], [60, 60, 60, 60, 5], [4]),
])
def test_one_step_on_a_hand_made_state(means, counts, expected_arms):
    gap, arms = _by_hand(means, counts, 3, 0.01)
    assert arms == expected_arms
    context = _context(5, 3, epsilon=0.01, delta=0.01)
    view = _view(means, counts, 3)
    rule = CLUCBPAC()
    assert rule.stop(context, view, {}) is (gap <= 3 * 0.01)
    assert rule.select(context, view, {}, np.array([0.3])) == expected_arms[0]
    # the compiled step (the stop first, as the loop calls it) chooses the same arm
    assert compiled_select(rule, context, view, {}, np.array([0.3]))[0] == expected_arms[0]


def test_ties_in_the_radius_are_broken_by_the_uniform():
    means, counts = [0.8, 0.75, 0.6, 0.55, 0.5], [50, 50, 8, 8, 8]
    gap, arms = _by_hand(means, counts, 3, 0.01)
    assert gap > 0.03 and arms == [2, 3, 4]  # all three have 8 pulls: equal radii
    context, view = _context(5, 3, epsilon=0.01, delta=0.01), _view(means, counts, 3)
    # random_candidate takes the floor(u c)-th of the c tied arms
    chosen = {CLUCBPAC().select(context, view, {}, np.array([u])) for u in (0.1, 0.5, 0.9)}
    assert chosen == set(arms)


def test_the_pac_rule_stops_at_k_epsilon():
    # well-separated means with many pulls: the adjusted top-k equals the empirical one, the gap is 0
    means, counts = [0.9, 0.8, 0.2, 0.1], [4000] * 4
    gap, _ = _by_hand(means, counts, 2, 0.05)
    assert gap == 0.0
    assert CLUCBPAC().stop(_context(4, 2, epsilon=1e-9, delta=0.05), _view(means, counts, 2), {})
    # close means with few pulls: the gap exceeds k epsilon for a small epsilon but not for a large one
    means, counts = [0.6, 0.55, 0.5, 0.45], [30] * 4
    gap, _ = _by_hand(means, counts, 2, 0.05)
    assert gap > 0
    view = _view(means, counts, 2)
    assert not CLUCBPAC().stop(_context(4, 2, epsilon=gap / 2 * 0.99, delta=0.05), view, {})
    assert CLUCBPAC().stop(_context(4, 2, epsilon=gap / 2 * 1.01, delta=0.05), view, {})


@pytest.mark.parametrize("problem", [BERNOULLI, GAUSSIAN], ids=["bernoulli", "gaussian"])
def test_pac_runs_are_correct_and_scalar_equals_batched(problem):
    kwargs = dict(epsilon=0.05, delta=0.05, n_runs=6, rng=4)
    batched = pac_identify(problem, "clucb-pac", chunk_size=4, **kwargs)
    scalar = pac_identify(problem, CLUCBPAC(), chunk_size=3, batched=False, **kwargs)
    assert np.array_equal(batched.samples, scalar.samples)
    assert np.array_equal(batched.recommendations, scalar.recommendations)
    assert batched.correct.all()  # easy instances at delta = 0.05 (the guarantee: P(regret > eps) <= delta)


@pytest.mark.parametrize("problem", [BERNOULLI, GAUSSIAN], ids=["bernoulli", "gaussian"])
def test_fixed_budget_form_scalar_equals_batched_and_is_anytime(problem):
    budgets = [40, 150, 600]
    rule = CLUCBPACFixedBudget(epsilon=0.02, delta=0.05)
    batched = identify_fixed_budget(problem, rule, budgets, n_runs=6, rng=5, chunk_size=4)
    scalar = identify_fixed_budget(problem, rule, budgets, n_runs=6, rng=5, chunk_size=3, batched=False)
    assert np.array_equal(batched.recommendations, scalar.recommendations)
    for index, budget in enumerate(budgets):  # one run serves every budget: the same as a run at that budget
        alone = identify_fixed_budget(problem, rule, [budget], n_runs=6, rng=5)
        assert np.array_equal(alone.recommendations[:, 0], batched.recommendations[:, index])


def test_fixed_budget_form_keeps_the_answer_of_its_stop():
    rule = CLUCBPACFixedBudget(epsilon=0.01, delta=0.05)
    context = _context(4, 2)
    state = rule.init_state(context, 1)
    row = {name: value[0] for name, value in state.items()}
    stopping_view = _view([0.9, 0.8, 0.2, 0.1], [4000] * 4, 2)  # the PAC rule holds: answer {0, 1}
    rule.select(context, stopping_view, row, np.array([0.5]))
    assert bool(row["stopped"][0]) and row["answer"].tolist() == [0, 1]
    later = _view([0.9, 0.1, 0.85, 0.2], [4000] * 4, 2)  # the empirical top-k has changed since
    assert later.top.tolist() == [0, 2]
    assert rule.recommend(context, later, row).tolist() == [0, 1]
    fresh = rule.init_state(context, 1)
    assert rule.recommend(context, later, {name: value[0] for name, value in fresh.items()}).tolist() == [0, 2]


def test_bad_input():
    with pytest.raises(InvalidArgumentError, match="epsilon"):
        CLUCBPACFixedBudget(epsilon=0.0)
    with pytest.raises(InvalidArgumentError, match="delta"):
        CLUCBPACFixedBudget(delta=1.0)
    with pytest.raises(AllocoptError, match="poisson"):
        pac_identify(TopKProblem([3.0, 2.0, 1.0], k=1, family="poisson"), "clucb-pac", epsilon=0.1, delta=0.1,
                     n_runs=2, rng=0)
    with pytest.raises(AllocoptError, match="epsilon"):
        CLUCBPAC().init_state(_context(4, 2, delta=0.1), 1)
