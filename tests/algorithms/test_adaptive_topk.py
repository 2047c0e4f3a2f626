"""AdaptiveTopK (PAC) and its fixed-budget conversion, and the pac_identify runner. Round lengths are recomputed
with mpmath; decisions are worked out by hand in the comments; aggregate regrets are recomputed from eq. (1) of
Chen, Chen, Zhang, Zhou (2017) written out in the test."""

from __future__ import annotations

import json

import mpmath
import numpy as np
import pytest

from allocopt import TopKProblem
from allocopt.algorithms import (AdaptiveTopK, AdaptiveTopKFixedBudget, adaptive_topk_round_pulls, identify,
                                 identify_fixed_budget, pac_identify)
from allocopt.algorithms.engine.protocol import RuleContext, RunView
from allocopt.exceptions import AllocoptError
from allocopt.families import get_family
from allocopt.testing.kernels import compiled_recommend, compiled_select, compiled_stop

BERNOULLI = TopKProblem([0.9, 0.8, 0.75, 0.5, 0.45, 0.4, 0.2, 0.1], k=3, family="bernoulli")
GAUSSIAN = TopKProblem([1.0, 0.8, 0.5, 0.3, 0.0, -0.2], k=2, variance=[0.25, 0.5, 0.3, 1.0, 0.2, 0.4])


@pytest.mark.parametrize("n_arms, delta, round_index", [(1000, 0.01, 1), (6, 0.1, 3), (50, 0.5, 7), (2, 0.9, 2)])
def test_round_pulls_are_the_stated_count(n_arms, delta, round_index):
    with mpmath.workdps(40):
        expected = int(mpmath.ceil(mpmath.mpf(4) ** round_index
                                   * mpmath.log(2 * n_arms * round_index**2 / mpmath.mpf(delta))))
    assert int(adaptive_topk_round_pulls(n_arms, delta, round_index)) == expected
    # Gaussian arms: four times the variance as a factor (1 for rewards in [0, 1])
    assert int(adaptive_topk_round_pulls(n_arms, delta, round_index, 4 * 0.25)) == expected


MEANS = np.array([0.95, 0.6, 0.5, 0.3, 0.2, 0.0])


def _state_after_three_rounds(rule, epsilon):
    """Six Bernoulli arms, K = 2, delta = 0.1, every arm pulled N_3 times with the empirical means MEANS."""
    context = RuleContext(6, 2, get_family("bernoulli"), np.ones(6), delta=0.1, epsilon=epsilon)
    n_3 = int(adaptive_topk_round_pulls(6, 0.1, 3))
    counts = np.full(6, n_3)
    sums = MEANS * n_3
    view = RunView(6 * n_3, counts, sums, sums / counts, np.nan, None, None, -1, -1)
    state = {name: values[0] for name, values in rule.init_state(context, 1).items()}
    batch_view = RunView(np.array([6 * n_3]), counts[None], sums[None], (sums / counts)[None], None, None, None,
                         None, None)
    batch_state = rule.init_state(context, 1)
    return context, view, state, batch_view, batch_state, n_3


def test_accept_and_reject_thresholds_on_a_hand_made_state():
    # Rounds 1-3 are complete (counts N_3 >= N_1, N_2). With K - |A| = 2: a = 0.5 (3rd largest), b = 0.6 (2nd).
    # round 1, threshold 2 * 2^-1 = 1: no gap exceeds it;
    # round 2, threshold 0.5: gaps 0.45, 0.1 | 0.1, 0.3, 0.4, 0.6: arm 5 (0.6 > 0.5) rejected, then nothing;
    # round 3, threshold 0.25: arm 0 (0.45) accepted, arms 4 (0.4) and 3 (0.3) rejected; K - |A| = 1 then
    # gives a = 0.5, b = 0.6 for S = {1, 2}: gaps 0.1, 0.1: the round ends. The outer loop goes on since
    # 2 * 2^-3 * 1 = 0.25 > epsilon K = 0.02; round 4 brings arms 1 and 2 to N_4.
    rule = AdaptiveTopK()
    context, view, state, batch_view, batch_state, n_3 = _state_after_three_rounds(rule, epsilon=0.01)
    action = rule.select(context, view, state, np.array([0.3]))
    batch_state["priority"][0] = state["priority"]  # (the first step draws the run's order in Python)
    _, _, compiled_counts = compiled_select(rule, context, view, batch_state, np.array([0.3]))
    n_4 = int(adaptive_topk_round_pulls(6, 0.1, 4))
    for accepted, active, counts in ((state["accepted"], state["active"], action.counts),
                                     (batch_state["accepted"][0], batch_state["active"][0], compiled_counts)):
        assert accepted.tolist() == [True, False, False, False, False, False]
        assert active.tolist() == [False, True, True, False, False, False]
        assert counts.tolist() == [0, n_4 - n_3, n_4 - n_3, 0, 0, 0]
    assert int(state["round"][0]) == 3 and int(batch_state["round"][0, 0]) == 3
    assert not rule.stop(context, view, state)


def test_the_outer_loop_ends_when_the_regret_bound_is_met():
    # epsilon = 0.3, K = 2: after round 3 one arm is left to accept and 2 * 2^-3 * 1 = 0.25 <= 0.6: the rule
    # stops (before round 2: 2 * 2^-2 * 2 = 1 > 0.6) and completes A = {0} with the best undecided arm, 1
    rule = AdaptiveTopK()
    context, view, state, batch_view, batch_state, _ = _state_after_three_rounds(rule, epsilon=0.3)
    assert rule.stop(context, view, state)
    assert compiled_stop(rule, context, view, batch_state)
    assert rule.recommend(context, view, state).tolist() == [0, 1]
    assert compiled_recommend(rule, context, view, batch_state).tolist() == [0, 1]
    assert not state["accepted"].any()  # stop and recommend look ahead on a copy of the state


@pytest.mark.parametrize("problem", [BERNOULLI, GAUSSIAN], ids=["bernoulli", "gaussian"])
def test_pac_runs_scalar_and_batched_and_chunked_agree(problem):
    kwargs = dict(epsilon=0.05, delta=0.1, n_runs=6, rng=9)
    batched = pac_identify(problem, "adaptive-topk", chunk_size=6, **kwargs)
    scalar = pac_identify(problem, "adaptive-topk", chunk_size=4, batched=False, **kwargs)
    for name in ("samples", "recommendations", "pulls", "aggregate_regret", "stopped"):
        assert np.array_equal(getattr(batched, name), getattr(scalar, name)), name


def test_aggregate_regret_is_eq_1_of_the_paper():
    theta = np.array([0.9, 0.88, 0.86, 0.84, 0.82, 0.5, 0.48, 0.3, 0.2, 0.1])
    problem = TopKProblem(theta, k=4, family="bernoulli")
    result = pac_identify(problem, AdaptiveTopK(), epsilon=0.04, delta=0.2, n_runs=12, rng=2)
    best = sorted(theta.tolist(), reverse=True)[:4]
    for recommendation, regret in zip(result.recommendations, result.aggregate_regret):
        assert len(set(recommendation.tolist())) == 4
        expected = (sum(best) - sum(theta[arm] for arm in recommendation)) / 4
        assert regret == pytest.approx(expected, abs=1e-15)
    assert np.array_equal(result.correct, result.aggregate_regret <= 0.04)
    assert np.array_equal(result.samples, result.pulls.sum(axis=1))
    assert result.status == "completed" and result.stopped.all()
    summary = result.summary()
    assert summary.failure_rate == 1 - result.correct.mean()
    assert summary.mean_samples == pytest.approx(result.samples.mean())
    assert summary.samples_low <= summary.mean_samples <= summary.samples_high
    json.dumps(result.to_dict(), allow_nan=False)
    assert "E[samples]" in result.format_summary()


def test_a_sample_cap_is_reported():
    result = pac_identify(BERNOULLI, "adaptive-topk", epsilon=0.01, delta=0.1, n_runs=3, rng=0, max_samples=500)
    assert result.status == "sample_cap_reached" and not result.stopped.any()
    assert np.all(result.samples == 500)


@pytest.mark.parametrize("block_cut", ["water-fill", "arm-order"])
@pytest.mark.parametrize("problem", [BERNOULLI, GAUSSIAN], ids=["bernoulli", "gaussian"])
def test_fixed_budget_form_scalar_and_batched_agree(problem, block_cut):
    budgets = [30, 400, 3000]
    rule = AdaptiveTopKFixedBudget(delta=0.05, block_cut=block_cut)
    batched = identify_fixed_budget(problem, rule, budgets, n_runs=6, rng=4)
    scalar = identify_fixed_budget(problem, rule, budgets, n_runs=6, rng=4, batched=False, chunk_size=2)
    assert np.array_equal(batched.recommendations, scalar.recommendations)
    assert np.array_equal(batched.pulls, scalar.pulls)


@pytest.mark.parametrize("block_cut", ["water-fill", "arm-order"])
def test_fixed_budget_form_is_anytime(block_cut):
    # Bernoulli reward sums are integers, so cutting a round's block at a budget changes no sum: one run serves
    # every budget exactly as separate runs do
    budgets = [50, 700, 4000]
    rule = AdaptiveTopKFixedBudget(block_cut=block_cut)
    joint = identify_fixed_budget(BERNOULLI, rule, budgets, n_runs=8, rng=3)
    for column, budget in enumerate(budgets):
        alone = identify_fixed_budget(BERNOULLI, rule, [budget], n_runs=8, rng=3)
        assert np.array_equal(alone.recommendations[:, 0], joint.recommendations[:, column])
        assert np.array_equal(alone.pulls.sum(axis=1), np.full(8, budget))


# Six Gaussian arms of variance 1/4 (4 sigma^2 = 1), K = 2, delta = 0.1: N_1 = ceil(4 ln(2 * 6 / 0.1)) =
# ceil(19.15) = 20, so round 1 ends at 6 * 20 = 120 pulls; budgets 40 and 100 end inside it.
CUT = TopKProblem([1.0, 0.9, 0.8, 0.7, 0.6, 0.5], k=2, variance=0.25)


def _stream_means(entropy: int, replication: int, counts) -> np.ndarray:
    """Empirical means of the first counts[a] rewards of each arm, drawn from its stream's definition
    (SeedSequence(entropy, spawn_key=(replication, 0, arm)), reward theta + sigma * standard normal)."""
    means = []
    for arm, count in enumerate(counts):
        generator = np.random.default_rng(np.random.SeedSequence(entropy, spawn_key=(replication, 0, arm)))
        rewards = CUT.theta[arm] + 0.5 * generator.standard_normal(int(count))
        means.append(np.cumsum(rewards)[-1] / count)
    return np.array(means)


@pytest.mark.parametrize("block_cut, counts_at", [
    # water-fill: after the initial pull each, 34 pulls are 5 passes of 6 and 4 more (arms 0-3); 94 pulls are 15
    # passes and 4 more
    ("water-fill", {40: [7, 7, 7, 7, 6, 6], 100: [17, 17, 17, 17, 16, 16]}),
    # arm order: every arm asks N_1 - 1 = 19; 34 pulls are arm 0's 19 and 15 of arm 1's; 94 are 19 each for
    # arms 0-3 and 18 of arm 4's
    ("arm-order", {40: [20, 16, 1, 1, 1, 1], 100: [20, 20, 20, 20, 19, 1]}),
])
def test_a_round_cut_at_a_budget(block_cut, counts_at):
    assert int(adaptive_topk_round_pulls(6, 0.1, 1)) == 20
    budgets = sorted(counts_at)
    rule = AdaptiveTopKFixedBudget(delta=0.1, block_cut=block_cut)
    for batched in (True, False):
        result = identify_fixed_budget(CUT, rule, budgets, n_runs=5, rng=11, batched=batched)
        assert np.array_equal(result.pulls, np.tile(counts_at[budgets[-1]], (5, 1)))
        for column, budget in enumerate(budgets):
            for replication in range(5):
                # nothing is decided inside round 1: the recommendation is the empirical top-2 (the means are
                # continuous, so there are no ties)
                means = _stream_means(result.entropy, replication, counts_at[budget])
                expected = sorted(np.argsort(-means)[:2].tolist())
                assert result.recommendations[replication, column].tolist() == expected


def test_the_recommendation_inside_a_round_on_a_hand_made_state():
    # after round 3 of the hand-made state arm 0 is accepted and arms 1 and 2 are undecided (see the test above);
    # the budget ends inside round 4 with arm 1 one pull ahead of arm 2 (a water-filled cut) and arm 2 now the
    # better of the two, empirical means 0.55 and 0.58: the recommendation is A = {0} and arm 2
    rule = AdaptiveTopKFixedBudget(delta=0.1)
    context = RuleContext(6, 2, get_family("bernoulli"), np.ones(6), delta=0.1)
    n_3, n_4 = (int(adaptive_topk_round_pulls(6, 0.1, r)) for r in (3, 4))
    counts = np.array([n_3, n_3 + 5, n_3 + 4, n_3, n_3, n_3])
    assert n_4 > n_3 + 5  # round 4 is not complete
    sums = np.array([0.95, 0.55, 0.58, 0.3, 0.2, 0.0]) * counts
    batch_state = rule.init_state(context, 1)
    batch_state["priority"][:] = np.arange(6.0)
    batch_state["round"][:] = 3
    batch_state["accepted"][:] = [True, False, False, False, False, False]
    batch_state["active"][:] = [False, True, True, False, False, False]
    state = {name: values[0] for name, values in batch_state.items()}
    view = RunView(int(counts.sum()), counts, sums, sums / counts, np.nan, None, None, -1, -1)
    assert rule.recommend(context, view, state).tolist() == [0, 2]
    assert compiled_recommend(rule, context, view, batch_state).tolist() == [0, 2]


def test_bad_input_errors():
    with pytest.raises(AllocoptError, match="'epsilon' parameter of pac_identify.*> 0"):
        pac_identify(BERNOULLI, "adaptive-topk", epsilon=0.0, delta=0.1, n_runs=2)
    with pytest.raises(AllocoptError, match="'epsilon' parameter of pac_identify"):
        pac_identify(BERNOULLI, "adaptive-topk", epsilon=-0.1, delta=0.1, n_runs=2)
    for delta in (0.0, 1.0, 1.5):
        with pytest.raises(AllocoptError, match="'delta' parameter of pac_identify.*\\(0, 1\\)"):
            pac_identify(BERNOULLI, "adaptive-topk", epsilon=0.1, delta=delta, n_runs=2)
    with pytest.raises(AllocoptError, match="'k' parameter"):  # K outside 1..n-1 cannot make a problem
        TopKProblem(BERNOULLI.theta, k=8, family="bernoulli")
    with pytest.raises(AllocoptError, match="'policy' parameter of pac_identify.*stopping"):
        pac_identify(BERNOULLI, "uniform", epsilon=0.1, delta=0.1, n_runs=2)
    with pytest.raises(AllocoptError, match="pac_identify"):
        identify(BERNOULLI, "adaptive-topk", delta=0.1, n_runs=2)
    with pytest.raises(AllocoptError, match="bernoulli.*gaussian"):
        pac_identify(TopKProblem([3.0, 2.0, 1.0], k=1, family="poisson"), "adaptive-topk", epsilon=0.1,
                     delta=0.1, n_runs=2)
    with pytest.raises(AllocoptError, match="'delta' parameter of AdaptiveTopKFixedBudget"):
        AdaptiveTopKFixedBudget(delta=1.5)
    with pytest.raises(AllocoptError, match="'block_cut' parameter of AdaptiveTopKFixedBudget.*'water-fill'.*"
                                            "'arm-order'.*sideways"):
        AdaptiveTopKFixedBudget(block_cut="sideways")
    with pytest.raises(AllocoptError, match="'block_cut' parameter of AdaptiveTopK\\b"):
        AdaptiveTopK(block_cut=None)


def test_no_arm_is_decided_before_the_end_of_round_two_so_water_fill_is_uniform_allocation_there():
    # Round r decides an arm only when its empirical gap exceeds 2 * 2^-r; in round 1 that is 1, which no gap of
    # means in [0, 1] exceeds. With n = 100 arms and delta = 0.01 round 2 ends at N_2 = ceil(16 ln(800 / 0.01))
    # pulls per arm (mpmath below: 181), so every budget below 18,100 pulls comes before the first decision.
    with mpmath.workdps(40):
        second_round = int(mpmath.ceil(16 * mpmath.log(mpmath.mpf(800) / mpmath.mpf("0.01"))))
    assert second_round == 181
    theta = np.linspace(0.95, 0.05, 100)
    problem = TopKProblem(theta, k=10, family="bernoulli")
    rule = AdaptiveTopKFixedBudget(delta=0.01, block_cut="water-fill")
    for budget in (100 * 150, 100 * second_round - 1):
        adaptive = identify_fixed_budget(problem, rule, budgets=[budget], n_runs=3, rng=11)
        uniform = identify_fixed_budget(problem, "uniform", budgets=[budget], n_runs=3, rng=11)
        # water-fill: the counts (the pulls at the budget) differ by at most one, as round robin's do
        assert (adaptive.pulls.max(axis=1) - adaptive.pulls.min(axis=1) <= 1).all()
        assert (adaptive.pulls.sum(axis=1) == budget).all()
        # at 150 pulls per arm both rules have read the same 150 rewards of every arm (common random numbers):
        # the same empirical top-k
        if budget == 100 * 150:
            assert (adaptive.pulls == 150).all() and (uniform.pulls == 150).all()
            assert np.array_equal(adaptive.recommendations, uniform.recommendations)
