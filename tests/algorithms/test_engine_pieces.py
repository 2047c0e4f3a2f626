"""The engine's pieces against their definitions, computed independently in each test.

References: Wang, Yang, You (2022), eq. (22) (Chernoff statistic), Algorithm 2 (KKT-TS); Garivier and Kaufmann
(2016), D-tracking and C-tracking; conjugate posteriors (moments from scipy.stats).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from allocopt.testing.families import reference_family
from allocopt import TopKProblem
from allocopt.algorithms import KKTTS, RuleContext, RunView, TrackAndStop
from allocopt.algorithms.engine._pair_kernels import pair_cost_grid, pull_probability, sort_arms
from allocopt.algorithms.engine.rewards import RewardStreams, draw_rewards, reward_generator
from allocopt._rng import random_candidate
from allocopt.algorithms.engine.statistics import posterior_sample
from allocopt.algorithms.engine.stopping import HeuristicThreshold, TheoreticalThreshold, glr_statistic
from allocopt.algorithms.rules.track_and_stop import c_tracking_epsilon, project_shrunk_simplex
from allocopt.families import get_family
from tolerance import assert_within

FAMILY_CASES = [
    ("gaussian", np.array([1.0, 0.7, 0.4, 0.2, -0.1, -0.3]), np.array([0.25, 0.5, 1.0, 0.3, 0.25, 2.0])),
    ("bernoulli", np.array([0.9, 0.7, 0.55, 0.4, 0.3, 0.1]), None),
    ("poisson", np.array([4.0, 3.0, 2.5, 1.0, 0.6, 0.2]), None),
    ("exponential", np.array([4.0, 3.0, 2.5, 1.0, 0.6, 0.2]), None),
    ("gamma", np.array([4.0, 3.0, 2.5, 1.0, 0.6, 0.2]), None),
]


def _family(name, variance):
    return reference_family(name) if name == "gamma" else get_family(name, variance=variance)


def _view(counts, sums, family, dispersion, k):
    means = sums / counts
    glr = glr_statistic(family, dispersion, counts, means, k)
    return RunView(int(counts.sum(axis=-1)) if counts.ndim == 1 else counts.sum(axis=-1), counts, sums, means,
                   glr.value, glr.top, glr.bottom, glr.pair_top, glr.pair_bottom)


@pytest.mark.twin
@pytest.mark.parametrize("name, theta, variance", FAMILY_CASES)
@pytest.mark.parametrize("k", [1, 3, 5])
def test_glr_statistic_equals_topk_costs_at_the_empirical_allocation(name, theta, variance, k, rng):
    family = _family(name, variance)
    dispersion = family.arm_dispersion(theta.size, "test")
    for _ in range(5):
        counts = rng.integers(1, 60, size=theta.size)
        means = theta * rng.uniform(0.8, 1.2, size=theta.size) if name != "gaussian" else theta + rng.normal(0, 0.3, theta.size)
        means = np.clip(means, 0.01, 0.99) if name == "bernoulli" else means
        statistic = glr_statistic(family, dispersion, counts, means, k)
        # independent: the top-k layer's cost matrix at psi = N/t, times t (eq. (22))
        problem = TopKProblem(means, k, family=family)
        t = counts.sum()
        expected = t * problem.costs(counts / t).min()
        assert statistic.value == pytest.approx(expected, rel=1e-10)
        assert set(statistic.top.tolist()) == set(problem.top.tolist())
        # and by brute force over the pairs with the family's divergence; the infimum point is the mean weighted
        # by N_a / phi_a (the count-weighted mean of eq. (22) when the dispersions are equal)
        w = counts / dispersion
        brute = min(counts[i] * family.kl(means[i], m)[i] + counts[j] * family.kl(means[j], m)[j]
                    for i in problem.top for j in problem.bottom
                    for m in [np.full(theta.size, (w[i] * means[i] + w[j] * means[j]) / (w[i] + w[j]))])
        assert statistic.value == pytest.approx(brute, rel=1e-9)
        # batched form (compiled where the family has a kernel): the same numbers row by row, to the pair
        # kernels' error bound (bit for bit where numpy's log is the C library's; tests/tolerance.py)
        batch = glr_statistic(family, dispersion, np.stack([counts, counts]), np.stack([means, means]), k)
        assert_within(batch.value, np.array([statistic.value] * 2), 2 * family.pair_error_bound("confidence", means))


def test_glr_statistic_is_zero_at_a_boundary_tie_and_for_degenerate_bernoulli_means():
    family = get_family("bernoulli")
    counts = np.array([5, 5, 5])
    assert glr_statistic(family, np.ones(3), counts, np.array([1.0, 0.0, 0.0]), 2).value == 0.0
    assert glr_statistic(family, np.ones(3), counts, np.array([0.6, 0.6, 0.2]), 1).value == 0.0


def test_thresholds_match_their_formulas():
    assert HeuristicThreshold()(100.0, 0.01) == pytest.approx(math.log((math.log(100) + 1) / 0.01))
    threshold = TheoreticalThreshold(alpha=1.5, constant=7.0)
    assert threshold(100.0, 0.01) == pytest.approx(math.log(7.0 * 100**1.5 / 0.01))
    assert TheoreticalThreshold().for_problem(2, 5).constant == 6.0


@pytest.mark.parametrize("name, theta, variance", FAMILY_CASES)
def test_posterior_samples_have_the_conjugate_posterior_moments(name, theta, variance):
    family = _family(name, variance)
    dispersion = family.arm_dispersion(theta.size, "test")
    counts = np.array([1, 3, 10, 40, 7, 2])
    sums = {"gaussian": theta * counts, "bernoulli": np.array([1, 2, 6, 15, 2, 0], float),
            "poisson": np.array([3, 10, 25, 41, 4, 0], float), "exponential": np.array([2.0, 8.0, 24.0, 41.0, 5.0, 0.3]),
            "gamma": np.array([2.0, 8.0, 24.0, 41.0, 5.0, 0.3])}[name]
    n = 50_000
    uniforms = (np.random.default_rng(5).random((n, theta.size)) + 2.0**-54)
    samples = posterior_sample(family, dispersion, np.broadcast_to(counts, (n, theta.size)),
                               np.broadcast_to(sums, (n, theta.size)), uniforms)
    if name == "gaussian":
        reference = [stats.norm(sums[a] / counts[a], math.sqrt(dispersion[a] / counts[a])) for a in range(theta.size)]
    elif name == "bernoulli":  # Beta(1 + successes, 1 + failures)
        reference = [stats.beta(1 + sums[a], 1 + counts[a] - sums[a]) for a in range(theta.size)]
    elif name == "poisson":  # Gamma(shape 1 + sum, rate N)
        reference = [stats.gamma(1 + sums[a], scale=1 / counts[a]) for a in range(theta.size)]
    elif name == "exponential":  # rate ~ Gamma(1 + N, rate = sum), mean = 1/rate ~ inverse gamma
        reference = [stats.invgamma(1 + counts[a], scale=sums[a]) for a in range(theta.size)]
    else:  # gamma of shape alpha: rate beta ~ Gamma(1 + alpha N, rate = sum), mean alpha/beta ~ inverse gamma
        alpha = family.shape
        reference = [stats.invgamma(1 + alpha * counts[a], scale=alpha * sums[a]) for a in range(theta.size)]
    for arm, distribution in enumerate(reference):
        mean, variance_ = distribution.mean(), distribution.var()
        if not np.isfinite(variance_):  # inverse gamma with shape <= 2: compare medians instead
            assert np.median(samples[:, arm]) == pytest.approx(distribution.median(), rel=0.02)
            continue
        assert abs(samples[:, arm].mean() - mean) < 5 * math.sqrt(variance_ / n)
        assert samples[:, arm].var() == pytest.approx(variance_, rel=0.05)


def test_random_candidate_is_uniform_over_ties():
    mask = np.array([False, True, False, True, True])
    uniforms = (np.arange(3000) + 0.5) / 3000
    chosen = random_candidate(np.broadcast_to(mask, (3000, 5)), uniforms)
    assert sorted(set(chosen.tolist())) == [1, 3, 4]
    assert np.bincount(chosen, minlength=5)[[1, 3, 4]].tolist() == [1000, 1000, 1000]


@pytest.mark.parametrize("name, theta, variance", FAMILY_CASES)
@pytest.mark.parametrize("kind", ["confidence", "budget"])
def test_kkt_ts_picks_the_minimal_pair_and_its_pull_probability(name, theta, variance, kind, rng):
    family = _family(name, variance)
    dispersion = family.arm_dispersion(theta.size, "test")
    k = 2
    context = RuleContext(theta.size, k, family, dispersion)
    rule = KKTTS(kind=kind)
    for _ in range(20):
        counts = rng.integers(1, 30, size=theta.size)
        sums = np.array([draw_rewards(family, theta[a], dispersion[a], counts[a], rng).sum() for a in range(theta.size)])
        uniforms = rng.random(theta.size + 2)
        arm = rule.select(context, _view(counts, sums, family, dispersion, k), {}, uniforms)
        # independent: theta~ by the posterior quantile functions of scipy.stats
        u = uniforms[: theta.size]
        if name == "gaussian":
            sample = stats.norm.ppf(u, sums / counts, np.sqrt(dispersion / counts))
        elif name == "bernoulli":
            sample = stats.beta.ppf(u, 1 + sums, 1 + counts - sums)
        elif name == "poisson":
            sample = stats.gamma.ppf(u, 1 + sums, scale=1 / counts)
        elif name == "exponential":
            sample = sums / stats.gamma.ppf(u, 1 + counts)
        else:  # gamma of shape alpha: mean alpha / beta, beta ~ Gamma(1 + alpha N, rate = sum)
            sample = family.shape * sums / stats.gamma.ppf(u, 1 + family.shape * counts)
        problem = TopKProblem(sample, k, family=family)
        psi = counts / counts.sum()
        costs = problem.costs(psi, kind=kind)
        h_top, _ = problem.sampling_functions(psi, kind=kind)
        row, col = np.unravel_index(np.argmin(costs), costs.shape)
        i, j = problem.top[row], problem.bottom[col]
        expected = i if uniforms[-1] < h_top[row, col] else j
        assert arm == expected
        assert arm in (i, j)


def test_kkt_ts_pull_frequencies_follow_h(rng):
    family = get_family("gaussian", variance=0.25)
    dispersion = np.full(4, 0.25)
    context = RuleContext(4, 1, family, dispersion)
    counts, sums = np.array([40, 10, 20, 5]), np.array([40.0, 7.0, 10.0, 1.0])
    view = _view(counts, sums, family, dispersion, 1)
    # fix the posterior sample (posterior medians: u = 1/2) and vary the coin
    n = 4000
    uniforms = np.column_stack([np.full((n, 4), 0.5), np.full(n, 0.5), (np.arange(n) + 0.5) / n])
    arms = np.array([KKTTS().select(context, view, {}, row) for row in uniforms])
    problem = TopKProblem(sums / counts, 1, variance=0.25)
    costs = problem.costs(counts / counts.sum())
    col = int(np.argmin(costs[0]))
    h = counts[problem.bottom[col]] / (counts[0] + counts[problem.bottom[col]])  # psi_j/(psi_i+psi_j), equal variances
    assert set(arms.tolist()) == {0, int(problem.bottom[col])}
    assert (arms == 0).mean() == pytest.approx(h, abs=1 / n)


@pytest.mark.parametrize("name, theta, variance", FAMILY_CASES)
def test_gaussian_closed_form_and_general_kernel_agree_with_the_topk_layer(name, theta, variance, rng):
    family = _family(name, variance)
    dispersion = family.arm_dispersion(theta.size, "test")
    counts = rng.integers(1, 50, size=theta.size)
    arms = sort_arms(theta, counts / dispersion, 2)
    cost, grad_top = pair_cost_grid(family, "confidence", arms)
    problem = TopKProblem(theta, 2, family=family)
    psi = counts / counts.sum()
    np.testing.assert_allclose(cost / counts.sum(), problem.costs(psi), rtol=1e-12)
    h = pull_probability(family, cost, grad_top, arms.weight_top, arms.weight_bottom)
    np.testing.assert_allclose(h, problem.sampling_functions(psi)[0], rtol=1e-12)


def test_d_tracking_forced_exploration_and_tracking(rng):
    family = get_family("gaussian", variance=1.0)
    n_arms = 5
    context = RuleContext(n_arms, 2, family, np.ones(n_arms))
    rule = TrackAndStop(tracking="d", update=10**9)  # one solve at the first step, then the fixed psi
    counts = np.array([30, 2, 40, 2, 3])
    t = int(counts.sum())  # 77: sqrt(77) - 5/2 = 6.27, so arms 1, 3, 4 are under-sampled
    forced = np.flatnonzero(counts < math.sqrt(t) - n_arms / 2)
    assert forced.tolist() == [1, 3, 4]
    least = forced[counts[forced] == counts[forced].min()]  # argmin over the forced set: arms 1 and 3
    state = rule.init_state(context, 1)
    sums = counts * np.array([1.0, 0.8, 0.5, 0.2, 0.0])
    view = _view(counts, sums, family, np.ones(n_arms), 2)
    chosen = {rule.select(context, view, {key: value[0] for key, value in state.items()}, np.array([u]))
              for u in (0.1, 0.9)}
    assert chosen == set(least.tolist())
    # no forced arm: argmax_a t psi_a - N_a with the solver's allocation
    counts = np.array([20, 25, 22, 18, 15])
    t = int(counts.sum())
    state = {key: value[0] for key, value in rule.init_state(context, 1).items()}
    view = _view(counts, counts * np.array([1.0, 0.8, 0.5, 0.2, 0.0]), family, np.ones(n_arms), 2)
    arm = rule.select(context, view, state, np.array([0.3]))
    psi = TopKProblem(view.means, 2).heuristic_allocation()  # not used: the rule's own psi is below
    psi = state["psi"]
    assert arm == int(np.argmax(t * psi - counts))
    assert psi == pytest.approx(__import__("allocopt").solve_topk(TopKProblem(view.means, 2)).psi, abs=1e-9)


def test_c_tracking_projection_is_the_euclidean_projection_on_the_shrunk_simplex(rng):
    import cvxpy as cp

    for _ in range(10):
        psi = rng.dirichlet(np.full(6, 0.3))
        epsilon = float(c_tracking_epsilon(6, rng.integers(1, 200)))
        v = cp.Variable(6)
        cp.Problem(cp.Minimize(cp.sum_squares(v - psi)), [v >= epsilon, cp.sum(v) == 1]).solve(solver=cp.CLARABEL)
        projected = project_shrunk_simplex(psi, epsilon)
        np.testing.assert_allclose(projected, v.value, atol=1e-6)
        assert projected.min() >= epsilon - 1e-15 and projected.sum() == pytest.approx(1.0)
    assert c_tracking_epsilon(4, 9) == pytest.approx(0.5 / math.sqrt(16 + 9))


def test_c_tracking_pulls_argmax_of_cumulative_projected_allocations_minus_counts():
    family = get_family("gaussian", variance=1.0)
    context = RuleContext(3, 1, family, np.ones(3))
    rule = TrackAndStop(tracking="c")
    state = {key: value[0] for key, value in rule.init_state(context, 1).items()}
    counts = np.array([1, 1, 1])
    sums = np.array([1.0, 0.5, 0.0])
    view = _view(counts, sums, family, np.ones(3), 1)
    arm = rule.select(context, view, state, np.array([0.5]))
    import allocopt

    psi = allocopt.solve_topk(TopKProblem(sums, 1)).psi
    expected_cumulative = project_shrunk_simplex(psi, 0.5 / math.sqrt(9 + 3))
    np.testing.assert_allclose(state["cumulative"], expected_cumulative, rtol=1e-9)
    assert arm == int(np.argmax(expected_cumulative - counts))


def test_rewards_do_not_depend_on_the_block_size():
    family = get_family("poisson")
    theta = np.array([2.0, 0.5])
    small = RewardStreams(family, theta, np.ones(2), 11, [3, 7], block=3)
    large = RewardStreams(family, theta, np.ones(2), 11, [3, 7], block=500)
    pulls = [np.array([0, 1]), np.array([1, 1]), np.array([0, 0])] * 10
    a = [small.next(np.array([0, 1]), arms) for arms in pulls]
    b = [large.next(np.array([0, 1]), arms) for arms in pulls]
    assert np.array_equal(np.array(a), np.array(b))
    # the n-th pull of arm a in replication i is the n-th draw of its own stream (i, 0, a)
    direct = draw_rewards(family, 2.0, 1.0, 40, reward_generator(11, 7, 0))
    column = [value for arms, row in zip(pulls, a) if arms[1] == 0 for value in [row[1]]]
    assert np.array_equal(np.array(column), direct[: len(column)])
    block = small.next_block(0, 1, 25)
    assert np.array_equal(block, large.next_block(0, 1, 25))


def test_top_k_order_matches_a_stable_sort_row_by_row_with_ties(rng):
    from allocopt.algorithms.engine.statistics import top_k_order

    values = rng.integers(0, 4, size=(200, 7)).astype(float)  # many ties, some across the boundary
    for k in (1, 3, 6):
        top, bottom = top_k_order(values, k)
        for row in range(values.shape[0]):
            order = np.argsort(-values[row], kind="stable")  # independent: numpy's stable sort
            assert top[row].tolist() == sorted(order[:k].tolist())
            assert bottom[row].tolist() == sorted(order[k:].tolist())
            single_top, single_bottom = top_k_order(values[row], k)
            assert np.array_equal(single_top, top[row]) and np.array_equal(single_bottom, bottom[row])
