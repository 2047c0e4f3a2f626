"""NSAR, SAR, Successive Rejects and Sequential Halving. Schedules are recomputed in the tests with exact
rationals (p = 1) or mpmath at 50 digits; decisions are checked on hand-made states whose gaps are worked out in
the comments."""

from __future__ import annotations

import math
from fractions import Fraction

import mpmath
import numpy as np
import pytest

from allocopt import TopKProblem
from allocopt.algorithms import (NSAR, SAR, SequentialHalving, SuccessiveRejects, identify, identify_fixed_budget,
                                 nsar_schedule, sequential_halving_schedule, successive_rejects_schedule)
from allocopt.algorithms.engine.protocol import RuleContext, RunView
from allocopt.exceptions import AllocoptError
from allocopt.families import get_family
from allocopt.testing.kernels import compiled_select

FAMILY_PROBLEMS = {
    "gaussian-heteroscedastic": TopKProblem([1.0, 0.8, 0.5, 0.3, 0.0, -0.2], k=2,
                                            variance=[0.25, 0.5, 0.3, 1.0, 0.2, 0.4]),
    "bernoulli": TopKProblem([0.8, 0.7, 0.4, 0.3, 0.2, 0.2], k=3, family="bernoulli"),
    "poisson": TopKProblem([3.0, 2.5, 1.0, 0.8, 0.3, 0.2], k=2, family="poisson"),
    "exponential": TopKProblem([3.0, 2.5, 1.0, 0.8, 0.3, 0.2], k=1, family="exponential"),
}


def _exact_nsar_schedule(n_arms, budget, p):
    """n_r = ceil((T - K) / (C_p (K - r + 1)^p)) with C_p = 2^-p + sum_{r=2}^K r^-p, at 50 digits."""
    with mpmath.workdps(50):
        p = mpmath.mpf(p)
        c_p = mpmath.mpf(2) ** -p + mpmath.fsum(mpmath.mpf(r) ** -p for r in range(2, n_arms + 1))
        return [int(mpmath.ceil((budget - n_arms) / (c_p * mpmath.mpf(n_arms - r + 1) ** p)))
                for r in range(1, n_arms)]


@pytest.mark.parametrize("n_arms, budget, p", [(3, 20, 1.0), (5, 6, 0.7), (10, 137, 1.3), (50, 1251, 0.85),
                                               (50, 8676, 1.2), (7, 10**6, 2.0), (2, 3, 0.5)])
def test_nsar_round_lengths_match_the_definition_and_fit_in_the_budget(n_arms, budget, p):
    schedule = nsar_schedule(n_arms, budget, p)
    assert schedule.tolist() == _exact_nsar_schedule(n_arms, budget, p)
    assert schedule[0] >= 1 and np.all(np.diff(schedule) >= 0)
    # round r samples K - r + 1 arms up to n_r: in all n_1 + ... + n_{K-1} + n_{K-1} pulls
    assert int(schedule.sum() + schedule[-1]) <= budget


@pytest.mark.parametrize("n_arms, budget", [(3, 20), (4, 100), (50, 1251), (50, 3333), (17, 18)])
def test_sar_schedule_is_successive_rejects_schedule(n_arms, budget):
    # Audibert and Bubeck (2010): logbar(K) = 1/2 + sum_{i=2}^K 1/i, n_k = ceil((T - K) / (logbar(K) (K + 1 - k)))
    logbar = Fraction(1, 2) + sum(Fraction(1, i) for i in range(2, n_arms + 1))
    expected = [math.ceil(Fraction(budget - n_arms) / (logbar * (n_arms + 1 - k))) for k in range(1, n_arms)]
    assert successive_rejects_schedule(n_arms, budget).tolist() == expected
    assert nsar_schedule(n_arms, budget, 1.0).tolist() == expected
    assert SAR().p == 1.0 and SAR().name == "sar"


def test_sequential_halving_schedule_from_its_definition():
    # K = 50, M = 2: sizes 50, 25, 13, 7, 4 then 2 arms left: L = ceil(log2 25) = 5 rounds, t_r = floor(T/(|S_r| L))
    sizes = [50, 25, 13, 7, 4]
    assert sequential_halving_schedule(50, 2, 1000).tolist() == [1000 // (size * 5) for size in sizes]
    # K = 4, M = 3: one round, keep max(3, 2) = 3 arms
    assert sequential_halving_schedule(4, 3, 10).tolist() == [10 // 4]
    total = sum(size * pulls for size, pulls in zip(sizes, sequential_halving_schedule(50, 2, 1000)))
    assert total <= 1000


def _one_round(rule, means_times_16, k, budget=100):
    """A hand-made state after the first round of K = 4 arms with 16 pulls each (n_1 = 16 at T = 100 for SAR:
    C_1 = 19/12, ceil(96 / (19/12 * 4)) = ceil(15.16) = 16; n_2 = ceil(96 / (19/12 * 3)) = ceil(20.2) = 21)."""
    context = RuleContext(4, k, get_family("bernoulli"), np.ones(4), budget=budget)
    counts = np.full(4, 16)
    sums = np.asarray(means_times_16, dtype=float)
    view = RunView(64, counts, sums, sums / counts, np.nan, None, None, -1, -1)
    state = {name: values[0] for name, values in rule.init_state(context, 1).items()}
    state["priority"][:] = [2.0, 0.0, 3.0, 1.0]  # the run's random order of the arms (for ties)
    action = rule.select(context, view, state, np.array([0.5]))
    # the compiled step on the same state decides the same way
    fresh = {name: values[0] for name, values in rule.init_state(context, 1).items()}
    fresh["priority"][:] = [2.0, 0.0, 3.0, 1.0]
    batch_state = {name: values[None].copy() for name, values in fresh.items()}
    _, _, compiled_counts = compiled_select(rule, context, view, batch_state, np.array([0.5]))
    assert np.array_equal(compiled_counts, action.counts)
    assert np.array_equal(batch_state["active"][0], state["active"])
    assert np.array_equal(batch_state["accepted"][0], state["accepted"])
    return state, action


def test_nsar_accepts_the_arm_of_largest_gap_above_the_boundary():
    # means 14, 8, 7, 2 (/16), M = 2: sigma(M+1) = 7, sigma(M) = 8; gaps 14-7 = 7, 8-7 = 1, 8-7 = 1, 8-2 = 6:
    # arm 0 has the largest gap and 14 > 7: accepted; round 2 brings arms 1-3 to n_2 = 21 pulls
    state, action = _one_round(SAR(), [14, 8, 7, 2], k=2)
    assert state["accepted"].tolist() == [True, False, False, False]
    assert state["active"].tolist() == [False, True, True, True]
    assert action.counts.tolist() == [0, 5, 5, 5]


def test_nsar_rejects_the_arm_of_largest_gap_below_the_boundary():
    # means 10, 9, 8, 0: sigma(3) = 8, sigma(2) = 9; gaps 2, 1, 1, 9: arm 3, and 0 > 8 is false: rejected
    state, _ = _one_round(SAR(), [10, 9, 8, 0], k=2)
    assert not state["accepted"].any()
    assert state["active"].tolist() == [True, True, True, False]


def test_nsar_breaks_a_tie_of_gaps_by_the_runs_random_order():
    # means 12, 8, 6, 2 with M = 2: sigma(3) = 6, sigma(2) = 8; gaps 6, 2, 2, 6: arms 0 and 3 tie; the run's
    # order ranks arm 3 (priority 1) before arm 0 (priority 2): arm 3 is rejected
    state, _ = _one_round(SAR(), [12, 8, 6, 2], k=2)
    assert state["active"].tolist() == [True, True, True, False] and not state["accepted"].any()


def test_nsar_accepts_against_a_low_boundary():
    # K = 4, M = 3, means 15, 14, 13, 1: sigma(4) = 1, sigma(3) = 13; gaps 15-1 = 14, 14-1 = 13, 13-1 = 12 and
    # arm 3's 13-1 = 12: arm 0 has the largest and 15 > 1: accepted (then m = 2 of 3 active arms: rounds go on)
    state, _ = _one_round(SAR(), [15, 14, 13, 1], k=3)
    assert state["accepted"].tolist() == [True, False, False, False]


def test_successive_rejects_rejects_the_lowest_mean_and_sequential_halving_keeps_the_best_half():
    state, _ = _one_round(SuccessiveRejects(), [10, 3, 8, 3], k=1)
    # arms 1 and 3 tie at the lowest mean 3/16; the run's order puts arm 1 (priority 0) before arm 3 (priority 1)
    assert state["active"].tolist() == [True, False, True, True]
    # Sequential Halving, K = 4, M = 1: L = 2 rounds, t_1 = floor(100 / 8) = 12 < 16 pulls: round 1 is over;
    # keep max(1, 2) = 2 arms of largest mean: arms 0 and 2
    state, _ = _one_round(SequentialHalving(), [10, 3, 8, 3], k=1)
    assert state["active"].tolist() == [True, False, True, False]


@pytest.mark.parametrize("rule", [NSAR(p=0.7), SAR(), NSAR(p=1.3), SuccessiveRejects(), SequentialHalving()],
                         ids=lambda rule: rule.name)
@pytest.mark.parametrize("family", sorted(FAMILY_PROBLEMS))
def test_scalar_and_batched_runs_agree(rule, family):
    problem = FAMILY_PROBLEMS[family]
    budgets = [40, 97, 300]
    batched = identify_fixed_budget(problem, rule, budgets, n_runs=7, rng=5, chunk_size=4)
    scalar = identify_fixed_budget(problem, rule, budgets, n_runs=7, rng=5, chunk_size=3, batched=False)
    assert np.array_equal(batched.recommendations, scalar.recommendations)
    assert np.array_equal(batched.pulls, scalar.pulls)
    assert np.all(batched.pulls.sum(axis=1) == budgets[-1])


def test_nsar_pulls_follow_the_schedule():
    # one run, K = 6, T = 300: the arm deactivated in round r has exactly n_r pulls (the last two n_{K-1}); the
    # T - (n_1 + ... + n_{K-1} + n_{K-1}) pulls left over are spread ceil(left/K) per arm, cut in arm order
    # (no run of this seed decides its last arms early, which would leave more pulls over)
    problem = FAMILY_PROBLEMS["bernoulli"]
    schedule = _exact_nsar_schedule(6, 300, 1.3)
    left = 300 - (sum(schedule) + schedule[-1])
    share = -(-left // 6)
    filler = np.array([min(share, max(0, left - share * arm)) for arm in range(6)])
    result = identify_fixed_budget(problem, NSAR(p=1.3), [300], n_runs=5, rng=1)
    for pulls in result.pulls:
        assert sorted((pulls - filler).tolist()) == sorted(schedule + [schedule[-1]])


def test_elimination_finds_the_top_arms_of_an_easy_instance():
    problem = TopKProblem([0.9, 0.85, 0.2, 0.15, 0.1, 0.05], k=2, family="bernoulli")
    for rule in (NSAR(p=0.85), SAR(), SuccessiveRejects(), SequentialHalving()):
        assert identify_fixed_budget(problem, rule, [600], n_runs=20, rng=3).error_rate[0] == 0.0


def test_bad_input_errors():
    with pytest.raises(AllocoptError, match="'p' parameter of NSAR.*> 0"):
        NSAR(p=0.0)
    with pytest.raises(AllocoptError, match="'p' parameter of NSAR"):
        NSAR(p=-1.0)
    problem = FAMILY_PROBLEMS["bernoulli"]
    with pytest.raises(AllocoptError, match="'budget'.*K \\+ 1 = 7"):
        identify_fixed_budget(problem, "nsar", [6], n_runs=2, rng=0)
    with pytest.raises(AllocoptError, match="'budget'.*K L = 18"):  # K = 6, M = 1: L = ceil(log2 6) = 3 rounds
        identify_fixed_budget(FAMILY_PROBLEMS["exponential"], "sequential-halving", [10], n_runs=2, rng=0)
    with pytest.raises(AllocoptError, match="'budget'.*K L = 6"):  # K = 6, M = 3: L = 1 round
        sequential_halving_schedule(6, 3, 5)
    with pytest.raises(AllocoptError, match="fixed-budget rule"):
        identify(problem, "sar", delta=0.1, n_runs=2, rng=0)
