"""The LUCB family against its definitions, computed independently in the tests: KL bounds (brentq on the
divergences written out), LIL radii (Jiang, Li, Qiao 2017, Lemma 2.1 and Section 5 written out), exploration
rates, and each rule's picked arms and stopping rule on hand-made states; bad input errors."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.optimize import brentq

from allocopt import TopKProblem
from allocopt._numba import compiled_kernels
from allocopt.algorithms import (ATLUCB, KLLUCB, LUCB, POLICIES, KLElimination, LilCLUCB, LilLUCB, LilRandLUCB,
                                 LUCBPlusPlus, PullEach, RuleContext, RunView, UGapE, identify,
                                 identify_fixed_budget)
from allocopt.algorithms.engine.confidence_bounds import exploration_rate, kl_bound, lil_radii, lil_radii_of_counts
from allocopt.exceptions import AllocoptError, InvalidArgumentError
from allocopt.families import Bernoulli, Exponential, Gaussian, Poisson
from allocopt.algorithms.engine import _kl_bounds
from allocopt.algorithms.rules._lucb_step import lucb_state
from allocopt.testing.families import reference_family
from allocopt.testing.kernels import compiled_select


# ------------------------------------------------------------------------------------------ references
def d_bernoulli(x: float, y: float) -> float:
    def term(a, b):
        return 0.0 if a == 0 else a * math.log(a / b)
    return term(x, y) + term(1 - x, 1 - y)


def d_poisson(x: float, y: float) -> float:
    return y - x + (0.0 if x == 0 else x * math.log(x / y))


def d_exponential(x: float, y: float) -> float:
    return x / y - 1 - math.log(x / y)


def reference_bound(d, mean: float, level: float, upper: bool, low: float, high: float) -> float:
    """brentq on d(mean, q) = level over [mean, high] (upper) or [low, mean] (lower), or the domain's end."""
    mean, level = float(mean), float(level)
    end = high if upper else low
    try:
        if d(mean, end) <= level:
            return end
    except (ValueError, ZeroDivisionError):  # d infinite at the end
        pass
    inner, outer = (mean, high) if upper else (low, mean)
    if upper:
        return brentq(lambda q: d(mean, q) - level, inner, outer, xtol=1e-15, rtol=1e-15, maxiter=1000)
    return brentq(lambda q: d(mean, q) - level, max(inner, 1e-300), outer, xtol=1e-300, rtol=1e-15, maxiter=1000)


KL_CASES = [
    (Bernoulli(), d_bernoulli, [0.0, 0.05, 0.5, 0.93, 1.0], 0.0, 1.0 - 1e-16),
    (Poisson(), d_poisson, [0.0, 0.2, 3.0, 40.0], 0.0, 1e4),
    (Exponential(), d_exponential, [0.01, 1.0, 7.0], 1e-300, 1e30),
]


@pytest.mark.parametrize("family, d, means, low, high", KL_CASES, ids=["bernoulli", "poisson", "exponential"])
@pytest.mark.parametrize("level", [1e-4, 0.3, 5.0])
def test_kl_bounds_solve_the_divergence_equation(family, d, means, low, high, level):
    means = np.array(means)
    upper = kl_bound(family, means, level, True)
    lower = kl_bound(family, means, level, False)
    for mean, got_upper, got_lower in zip(means, upper, lower):
        expected_upper = reference_bound(d, mean, level, True, low, high)
        expected_lower = reference_bound(d, mean, level, False, low, high)
        assert got_upper == pytest.approx(expected_upper, rel=1e-9, abs=1e-12)
        assert got_lower == pytest.approx(expected_lower, rel=1e-9, abs=1e-12)
        assert got_lower <= mean <= got_upper


def test_bernoulli_bounds_at_the_ends_of_the_domain():
    # mean 0: lower bound 0; upper bound solves -log(1 - q) = level, q = 1 - exp(-level)
    assert kl_bound(Bernoulli(), 0.0, 0.5, False) == 0.0
    assert float(kl_bound(Bernoulli(), 0.0, 0.5, True)) == pytest.approx(1 - math.exp(-0.5), rel=1e-12)
    # mean 1: upper bound 1, lower bound 1 - (1 - exp(-level)) = exp(-level)
    assert kl_bound(Bernoulli(), 1.0, 0.5, True) == 1.0
    assert float(kl_bound(Bernoulli(), 1.0, 0.5, False)) == pytest.approx(math.exp(-0.5), rel=1e-12)


def test_poisson_bound_at_mean_zero_is_the_level():
    # d(0, q) = q for the Poisson family: the upper bound is the level itself, the lower bound 0
    assert float(kl_bound(Poisson(), 0.0, 0.7, True)) == pytest.approx(0.7, rel=1e-12)
    assert kl_bound(Poisson(), 0.0, 0.7, False) == 0.0


def test_gaussian_bounds_are_the_closed_form_with_per_arm_variances():
    means, level, variance = np.array([0.3, -1.0]), np.array([0.5, 2.0]), np.array([0.25, 4.0])
    # (q - m)^2 / (2 sigma^2) = level  =>  q = m +- sqrt(2 sigma^2 level)
    expected = means + np.array([math.sqrt(2 * 0.25 * 0.5), math.sqrt(2 * 4.0 * 2.0)])
    assert np.allclose(kl_bound(Gaussian(variance), means, level, True, variance), expected, rtol=1e-15)


def test_kl_bounds_of_one_run_equal_those_of_a_batch():
    rng = np.random.default_rng(0)
    means, level = rng.uniform(0, 1, (7, 5)), rng.uniform(0.01, 3, (7, 5))
    upper = rng.uniform(size=(7, 5)) < 0.5
    batch = kl_bound(Bernoulli(), means, level, upper)
    for row in range(7):
        assert np.array_equal(kl_bound(Bernoulli(), means[row], level[row], upper[row]), batch[row])


COMPILED_BOUND_CASES = {
    # means at and near the ends of each domain and far outside ordinary magnitudes
    "gaussian": (Gaussian(0.5), [-1e6, -0.3, 0.0, 2.0, 1e6]),
    "bernoulli": (Bernoulli(), [0.0, 1e-12, 0.05, 0.5, 0.93, 1.0 - 1e-12, 1.0]),
    "poisson": (Poisson(), [0.0, 1e-12, 0.2, 3.0, 40.0, 1e6]),
    "exponential": (Exponential(), [1e-12, 0.01, 1.0, 7.0, 1e12]),
    "gamma": (reference_family("gamma"), [1e-12, 0.01, 1.0, 7.0, 1e12]),  # the exponential divergence / 4
}


@pytest.mark.twin
@pytest.mark.parametrize("name", list(COMPILED_BOUND_CASES))
def test_compiled_kl_bounds_are_the_numpy_bounds(name):
    # the step kernels' scalar bounds (KL-LUCB, KL-Elimination, UGapE) against kl_bound, the rules' specification;
    # to a tolerance (a last-ulp difference in a logarithm can move one bisection decision near the root)
    family, means = COMPILED_BOUND_CASES[name]
    means = np.array(means)
    _kl_bounds.compile_bounds()
    code = _kl_bounds.bound_code(family)
    assert _kl_bounds.KL_BOUND_FAMILIES[code] == ("exponential" if name == "gamma" else name)
    dispersion = np.broadcast_to(family.dispersion, means.shape)
    scale = _kl_bounds.bound_scale(code, dispersion)
    for level in (0.0, 1e-12, 1e-4, 0.3, 5.0, 600.0):
        for upper in (True, False):
            expected = kl_bound(family, means, level, upper, dispersion)
            got = np.array([_kl_bounds.kl_bound(code, mean, level, upper, factor)
                            for mean, factor in zip(means, scale)])
            np.testing.assert_allclose(got, expected, rtol=1e-12, atol=0.0, err_msg=f"level {level}, upper {upper}")


KL_RULE_PROBLEMS = {
    # the families whose KL bounds the step kernels compute besides Bernoulli arms: small Poisson means (near the
    # domain's end), exponential arms, and gamma arms of dispersion 1/4 (the exponential divergence scaled)
    "poisson": TopKProblem([4.0, 1.5, 0.6, 0.05], 2, family="poisson"),
    "exponential": TopKProblem([3.0, 1.0, 0.6, 0.3], 1, family="exponential"),
    "gamma": TopKProblem([3.0, 2.5, 1.0, 0.8, 0.3], 2, family=reference_family("gamma")),
}


@pytest.mark.twin
@pytest.mark.parametrize("rule", ["kl-lucb", "kl-elimination", "ugape"])
@pytest.mark.parametrize("name", list(KL_RULE_PROBLEMS))
def test_compiled_kl_rules_are_their_python_steps_on_other_families(rule, name):
    # before, these families ran the rules' Python steps: the compiled bounds were Gaussian and Bernoulli only
    problem = KL_RULE_PROBLEMS[name]
    assert POLICIES[rule]().compiled_step(context_for(problem.theta, problem.k, problem.family, delta=0.1)) is not None
    with compiled_kernels(False):
        python = identify(problem, rule, delta=0.1, n_runs=3, rng=5, max_samples=1500, n_jobs=1)
    compiled = identify(problem, rule, delta=0.1, n_runs=3, rng=5, max_samples=1500, n_jobs=1)
    for field in ("stopping_times", "recommendations", "pulls", "stopped"):
        assert np.array_equal(getattr(python, field), getattr(compiled, field)), field


def test_exploration_rates_written_out():
    t, delta, n_arms = 250.0, 0.05, 8
    assert float(exploration_rate("heuristic", t, delta, n_arms)) == pytest.approx(math.log((math.log(t) + 1) / delta))
    assert float(exploration_rate("kalyanakrishnan", t, delta, n_arms)) == pytest.approx(
        math.log(5 * n_arms * t**4 / (4 * delta)))
    level = math.log(405.5 * n_arms * t**1.1 / delta)
    assert float(exploration_rate("kaufmann", t, delta, n_arms)) == pytest.approx(level + math.log(level))
    assert float(exploration_rate("gabillon", t, delta, n_arms)) == pytest.approx(
        math.log(4 * n_arms * (t - 1) ** 3 / delta))


@pytest.mark.parametrize("eps", [0.0, 0.01, 0.5])
def test_lil_radii_are_lemma_2_1_in_the_experiments_form(eps):
    counts, sigma, omega = np.array([1, 3, 40, 1000]), np.array([0.5, 1.0, 0.5, 2.0]), 0.001
    got = lil_radii(counts, omega, eps, sigma)
    expected = [(1 + math.sqrt(eps)) * math.sqrt(2 * s**2 * (1 + eps) / n * math.log(math.log((1 + eps) * n + 2)
                                                                                      / omega))
                for n, s in zip(counts, sigma)]
    assert np.allclose(got, expected, rtol=1e-14)


@pytest.mark.parametrize("form, eps", [("experiments", 0.0), ("experiments", 0.01), ("paper", 0.5)])
def test_lil_radii_from_the_table_are_the_direct_radii_bit_for_bit(form, eps):
    # the direct elementwise evaluation of lil_radii is the reference, on counts from 1 to beyond the first table
    # size (so the table doubles), in a batch shape, with per-arm sigma
    generator = np.random.default_rng(4)
    counts = np.concatenate([np.arange(1, 300), generator.integers(1, 5000, 697), [1023, 1024, 1025, 70000]])
    counts = counts.reshape(-1, 4).astype(np.int64)
    sigma = np.array([0.5, 1.0, 0.25, 2.0])
    for omega in (1e-6, 0.01 / 3):
        assert np.array_equal(lil_radii_of_counts(counts, omega, eps, sigma, form),
                              lil_radii(counts, omega, eps, sigma, form))
        assert np.array_equal(lil_radii_of_counts(counts[:5], omega, eps, sigma, form),
                              lil_radii(counts[:5], omega, eps, sigma, form))


def test_lil_radii_of_counts_falls_back_to_the_direct_call_and_its_errors():
    floats = np.array([1.5, 2.0])  # not integers: computed directly
    assert np.array_equal(lil_radii_of_counts(floats, 0.01, 0.0, 0.5), lil_radii(floats, 0.01, 0.0, 0.5))
    with pytest.raises(InvalidArgumentError, match="omega"):  # omega above log(1 + eps): no real radius at t = 1
        lil_radii_of_counts(np.array([1, 5]), 0.5, 0.1, 0.5, "paper")


# --------------------------------------------------------------------------------------- hand-made states
def make_view(means, counts, k):
    means, counts = np.asarray(means, dtype=float), np.asarray(counts, dtype=np.int64)
    order = np.argsort(-means, kind="stable")
    top, bottom = np.sort(order[:k]), np.sort(order[k:])
    return RunView(int(counts.sum()), counts, means * counts, means, np.nan, top, bottom, -1, -1)


def context_for(means, k, family=None, delta=0.01, budget=None):
    family = family or Gaussian(0.25)
    return RuleContext(len(means), k, family, np.asarray(family.arm_dispersion(len(means))), delta=delta,
                       budget=budget)


def lil(n, omega, eps=0.0, sigma=0.5):
    return (1 + math.sqrt(eps)) * math.sqrt(2 * sigma**2 * (1 + eps) / n * math.log(math.log((1 + eps) * n + 2)
                                                                                     / omega))


STATE_MEANS = [0.9, 0.6, 0.55, 0.2, 0.1]
STATE_COUNTS = [30, 12, 9, 20, 4]


def expected_lil_split_arms(delta, k=2):
    """h and l of lil'RandLUCB/LUCB++ on STATE, from Algorithm 1 written out."""
    n_arms = len(STATE_MEANS)
    view = make_view(STATE_MEANS, STATE_COUNTS, k)
    lcb = {i: STATE_MEANS[i] - lil(STATE_COUNTS[i], delta / (2 * (n_arms - k))) for i in view.top}
    ucb = {j: STATE_MEANS[j] + lil(STATE_COUNTS[j], delta / (2 * k)) for j in view.bottom}
    h, l = min(lcb, key=lcb.get), max(ucb, key=ucb.get)
    return h, l, lcb[h] >= ucb[l]


def test_lil_rand_lucb_pulls_h_with_probability_n_l_over_n_h_plus_n_l():
    view, context = make_view(STATE_MEANS, STATE_COUNTS, 2), context_for(STATE_MEANS, 2)
    h, l, separated = expected_lil_split_arms(0.01)
    assert (h, l) == (1, 2) and not separated  # the state is a live one: arm 1 weakest of High, arm 2 best of Low
    probability = STATE_COUNTS[l] / (STATE_COUNTS[h] + STATE_COUNTS[l])  # 9 / 21
    rule = LilRandLUCB()
    assert not rule.stop(context, view, {})
    below, above = np.nextafter(probability, 0), probability
    assert rule.select(context, view, {}, np.array([0.3, 0.3, below])) == h
    assert rule.select(context, view, {}, np.array([0.3, 0.3, above])) == l
    # the frequency over a grid of uniforms is the probability, and the compiled step agrees
    grid = (np.arange(4000) + 0.5) / 4000
    arms = np.array([compiled_select(rule, context, view, lucb_state(1, context.n_arms), np.array([u, u, u]))[0]
                     for u in grid[::40]])
    assert np.array_equal(arms, [rule.select(context, view, {}, np.array([u, u, u])) for u in grid[::40]])
    arms = np.array([rule.select(context, view, {}, np.array([u, u, u])) for u in grid])
    assert np.mean(arms == h) == pytest.approx(probability, abs=1 / 4000)


def test_lucb_plus_plus_pulls_both_critical_arms_and_stops_when_the_bounds_separate():
    view, context = make_view(STATE_MEANS, STATE_COUNTS, 2), context_for(STATE_MEANS, 2)
    h, l, _ = expected_lil_split_arms(0.01)
    action = LUCBPlusPlus().select(context, view, {}, np.array([0.5, 0.5]))
    assert isinstance(action, PullEach) and np.flatnonzero(action.counts).tolist() == sorted([h, l])
    # far apart with many pulls: LCB_h >= UCB_l
    far = make_view([1.0, 0.9, 0.0, -0.1, -0.2], [4000] * 5, 2)
    assert LUCBPlusPlus().stop(context, far, {})


def test_lil_lucb_uses_delta_over_n_on_every_arm():
    view, context = make_view(STATE_MEANS, STATE_COUNTS, 2), context_for(STATE_MEANS, 2)
    revised = LilLUCB().revised(context, view)
    in_top = np.isin(np.arange(5), view.top)
    expected = [m - lil(n, 0.01 / 5) if top else m + lil(n, 0.01 / 5)
                for m, n, top in zip(STATE_MEANS, STATE_COUNTS, in_top)]
    assert np.allclose(revised, expected, rtol=1e-14)


def test_lil_clucb_revised_means_and_the_arm_of_largest_radius_in_the_symmetric_difference():
    means, counts = [0.9, 0.62, 0.6, 0.58, 0.1], [50, 3, 40, 6, 50]
    view, context = make_view(means, counts, 2), context_for(means, 2)
    radius = [lil(n, 0.01 / 5) for n in counts]
    m_t = {0, 1}
    revised = [means[i] - radius[i] if i in m_t else means[i] + radius[i] for i in range(5)]
    m_tilde = set(np.argsort(-np.array(revised), kind="stable")[:2].tolist())
    difference = m_t ^ m_tilde
    assert difference  # a live state
    expected = max(difference, key=lambda arm: radius[arm])
    rule = LilCLUCB()
    assert np.allclose(rule.revised(context, view), revised, rtol=1e-14)
    assert not rule.stop(context, view, {})
    assert rule.select(context, view, {}, np.array([0.5])) == expected
    assert expected == 1  # the revised top-2 is {0, 3}: arm 3 (6 pulls) and arm 1 (3 pulls) differ; arm 1 is wider
    stopped = make_view([0.9, 0.8, 0.1, 0.0, -0.1], [5000] * 5, 2)
    assert rule.stop(context, stopped, {})


def test_faithful_versions_choose_delta_from_the_theorems():
    eps, nu, n_arms = 0.01, 0.01, 10
    c = (2 + eps) / eps * (1 / math.log(1 + eps)) ** (1 + eps)  # Lemma 2.1
    assert LilRandLUCB(version="faithful").algorithm_delta(nu, n_arms) == pytest.approx(nu / c)  # Theorem 3.1
    expected = (nu * n_arms**eps / c) ** (1 / (1 + eps))  # Theorem 4.1: c delta^(1+eps) / N^eps = nu
    assert LilCLUCB(version="faithful").algorithm_delta(nu, n_arms) == pytest.approx(expected)
    assert LilRandLUCB().algorithm_delta(nu, n_arms) == nu  # heuristic: delta = nu, eps = 0
    assert LilRandLUCB().epsilon == 0.0 and LilRandLUCB(version="faithful").epsilon == 0.01


def test_lucb_bounds_picks_and_stop_on_a_hand_made_state():
    means, counts = [0.8, 0.5, 0.45, 0.1], [10, 16, 25, 8]
    view = make_view(means, counts, 2)
    family = Gaussian([0.25, 0.25, 1.0, 0.25])
    context = context_for(means, 2, family=family, delta=0.1)
    beta = math.log((math.log(view.t) + 1) / 0.1)
    sigma2 = [0.25, 0.25, 1.0, 0.25]
    radius = [math.sqrt(2 * s * beta / n) for s, n in zip(sigma2, counts)]
    lcb = {i: means[i] - radius[i] for i in (0, 1)}
    ucb = {j: means[j] + radius[j] for j in (2, 3)}
    h, l = min(lcb, key=lcb.get), max(ucb, key=ucb.get)
    action = LUCB().select(context, view, {}, np.array([0.2, 0.7]))
    assert np.flatnonzero(action.counts).tolist() == sorted([h, l]) and action.counts.sum() == 2
    assert not lcb[h] >= ucb[l]  # a live state
    assert not LUCB().stop(context, view, {})
    separated = make_view([0.8, 0.7, 0.2, 0.1], [4000] * 4, 2)
    assert LUCB().stop(context, separated, {})


def test_kl_lucb_picks_on_a_bernoulli_state():
    means, counts = [0.9, 0.7, 0.65, 0.2], [20, 20, 20, 20]
    view, context = make_view(means, counts, 2), context_for(means, 2, family=Bernoulli(), delta=0.05)
    level = math.log((math.log(80) + 1) / 0.05) / 20
    lcb = {i: reference_bound(d_bernoulli, means[i], level, False, 0.0, 1.0) for i in (0, 1)}
    ucb = {j: reference_bound(d_bernoulli, means[j], level, True, 0.0, 1.0 - 1e-16) for j in (2, 3)}
    h, l = min(lcb, key=lcb.get), max(ucb, key=ucb.get)
    assert (h, l) == (1, 2)
    action = KLLUCB().select(context, view, {}, np.array([0.5, 0.5]))
    assert np.flatnonzero(action.counts).tolist() == [1, 2]


def test_ties_between_critical_arms_are_broken_by_the_uniforms():
    # two top arms with identical statistics: the uniform decides which one is h (floor(u * 2)-th candidate)
    means, counts = [0.7, 0.7, 0.1, 0.0], [10, 10, 10, 10]
    view, context = make_view(means, counts, 2), context_for(means, 2)
    picked = {int(np.flatnonzero(LUCB().select(context, view, {}, np.array([u, 0.0])).counts)[0]) for u in (0.1, 0.9)}
    assert picked == {0, 1}


def brute_force_gap_indices(upper, lower, k):
    n = len(upper)
    index = []
    for a in range(n):
        others = sorted((upper[i] for i in range(n) if i != a), reverse=True)
        index.append(others[k - 1] - lower[a])
    return index


def test_ugape_gap_indices_choice_and_stop_on_a_hand_made_state():
    means, counts = [0.8, 0.62, 0.55, 0.5, 0.1], [40, 10, 30, 5, 20]
    view, context = make_view(means, counts, 2), context_for(means, 2, delta=0.1)
    beta = math.log((math.log(view.t) + 1) / 0.1)
    radius = [math.sqrt(2 * 0.25 * beta / n) for n in counts]
    upper = [m + r for m, r in zip(means, radius)]
    lower = [m - r for m, r in zip(means, radius)]
    index = brute_force_gap_indices(upper, lower, 2)
    chosen = sorted(np.argsort(index, kind="stable")[:2].tolist())
    u = max((a for a in range(5) if a not in chosen), key=lambda a: upper[a])
    l = min(chosen, key=lambda a: lower[a])
    expected = u if radius[u] > radius[l] else l
    rule = UGapE()
    gaps = rule.indices(context, view)
    assert np.allclose(gaps.gap_index, index, rtol=1e-13)
    assert gaps.chosen.tolist() == chosen
    assert rule.select(context, view, {}, np.array([0.5, 0.5, 0.5])) == expected
    assert rule.stop(context, view, {}) == (max(index[a] for a in chosen) < 0)
    assert rule.recommend(context, view, {}).tolist() == chosen


def test_ugape_budget_radius_and_best_set_over_the_run():
    means, counts = [0.8, 0.6, 0.5, 0.1], [10, 10, 10, 10]
    context = context_for(means, 2, budget=100)
    rule = UGapE("budget", a=2.0, complexity=50.0)
    view = make_view(means, counts, 2)
    # b sqrt(a (n - K) / (4 H) / N) with b = 2 sigma = 1
    assert np.allclose(rule.radius(context, view), math.sqrt(2.0 * 96 / 200 / 10))
    state = rule.init_state(context, 1)
    row = {name: values[0] for name, values in state.items()}
    rule.select(context, view, row, np.array([0.5, 0.5, 0.5]))
    first = rule.indices(context, view)
    assert row["best_index"][0] == first.chosen_index and row["best_set"].tolist() == first.chosen.tolist()
    # a later, less certain state does not replace the best set
    worse = make_view([0.3, 0.6, 0.5, 0.55], [11, 10, 10, 10], 2)
    assert rule.recommend(context, worse, row).tolist() == first.chosen.tolist()


def test_kl_elimination_eliminates_the_worst_arm_and_pulls_the_survivors():
    means, counts = [0.9, 0.8, 0.7, 0.05], [200, 200, 200, 200]
    view, context = make_view(means, counts, 2), context_for(means, 2, family=Bernoulli(), delta=0.05)
    level = math.log((math.log(800) + 1) / 0.05) / 200
    # l = the weakest of the top-2 by lower bound; a_W = arm 3; eliminated iff U_3 <= L_l
    lower_1 = reference_bound(d_bernoulli, 0.8, level, False, 0.0, 1.0)
    upper_3 = reference_bound(d_bernoulli, 0.05, level, True, 0.0, 1.0 - 1e-16)
    upper_2 = reference_bound(d_bernoulli, 0.7, level, True, 0.0, 1.0 - 1e-16)
    assert upper_3 <= lower_1 and upper_2 > lower_1
    rule = KLElimination()
    state = {name: values[0] for name, values in rule.init_state(context, 1).items()}
    assert not rule.stop(context, view, state)
    assert state["eliminated"].tolist() == [False, False, False, True]
    action = rule.select(context, view, state, np.array([0.5, 0.5]))
    assert action.counts.tolist() == [1, 1, 1, 0]
    # once only k arms survive the run stops and recommends them
    state["eliminated"][2] = True
    later = make_view(means, [201, 201, 201, 200], 2)
    assert rule.stop(context, later, state)
    assert rule.recommend(context, later, state).tolist() == [0, 1]


def test_kl_racing_accepts_a_separated_best_arm():
    means, counts = [0.95, 0.5, 0.45, 0.4], [300, 300, 300, 300]
    view, context = make_view(means, counts, 2), context_for(means, 2, family=Bernoulli(), delta=0.05)
    rule = KLElimination(racing=True)
    state = {name: values[0] for name, values in rule.init_state(context, 1).items()}
    rule.stop(context, view, state)
    assert state["accepted"].tolist() == [True, False, False, False]
    assert rule.recommend(context, view, state).tolist() == [0, 1]


def test_at_lucb_stage_is_the_first_level_where_term_fails():
    means, counts = [0.9, 0.8, 0.3, 0.2], [400, 400, 400, 400]
    view, context = make_view(means, counts, 2), context_for(means, 2)
    rule = ATLUCB(delta1=0.5, alpha=0.5)

    def term(s):
        log_inverse = math.log(1 / 0.5) + (s - 1) * math.log(1 / 0.5)
        radius = [math.sqrt(2 * 0.25 * (math.log(5 * 4 * view.t**4 / 4) + log_inverse) / n) for n in counts]
        return max(means[j] + radius[j] for j in (2, 3)) - min(means[i] - radius[i] for i in (0, 1)) < 0

    assert term(1)
    expected = next(s for s in range(2, 10**4) if not term(s))
    state = {name: values[0] for name, values in rule.init_state(context, 1).items()}
    current = rule.advance(context, view, state)
    assert int(current.stage) == expected and current.answer.tolist() == [True, True, False, False]
    # the stage does not move when TERM fails at the current level, and J(t) stays put after stage 1
    state["stage"][0], state["answer"][:] = expected, [True, False, True, False]
    again = rule.advance(context, view, state)
    assert int(again.stage) == expected and again.answer.tolist() == [True, False, True, False]


def test_at_lucb_fixed_confidence_stops_when_j_is_certified_at_delta():
    problem = TopKProblem([0.9, 0.1, 0.0], k=1, variance=0.25)
    result = identify(problem, ATLUCB(), delta=0.1, n_runs=4, rng=0)
    assert result.stopped.all() and result.correct.all()


# -------------------------------------------------------------------------------------------- bad input
SUBGAUSSIAN = ["lucb", "lil-lucb", "lucb++", "lil-rand-lucb", "lil-clucb", UGapE(bounds="hoeffding"), "at-lucb"]


@pytest.mark.parametrize("name", SUBGAUSSIAN)
@pytest.mark.parametrize("family", ["poisson", "exponential", "gamma"])
def test_rules_with_sub_gaussian_radii_refuse_other_families(name, family):
    from allocopt.testing.families import reference_family

    problem = TopKProblem([3.0, 2.0, 1.0], k=1, family=reference_family(family))
    with pytest.raises(InvalidArgumentError, match=f"defined for the {family} family .*gaussian, bernoulli arms only"):
        identify(problem, name, delta=0.1, n_runs=1, rng=0)


@pytest.mark.parametrize("name", ["lucb", "kl-lucb", "kl-elimination", "lil-rand-lucb", "lil-clucb", "ugape",
                                  "at-lucb", "lucb++", "lil-lucb"])
@pytest.mark.parametrize("delta", [0.0, 1.0, -0.5])
def test_delta_outside_the_open_unit_interval_is_refused(name, delta):
    with pytest.raises(InvalidArgumentError, match="'delta'"):
        identify(TopKProblem([1.0, 0.5, 0.0], k=1), name, delta=delta, n_runs=1, rng=0)


@pytest.mark.parametrize("rule_class", [LilRandLUCB, LilCLUCB, LilLUCB, LUCBPlusPlus])
def test_unknown_version_and_eps_with_the_heuristic_version(rule_class):
    with pytest.raises(InvalidArgumentError, match="'version'.*'faithful', 'heuristic'"):
        rule_class(version="theory")
    with pytest.raises(InvalidArgumentError, match="'eps'"):
        rule_class(version="heuristic", eps=0.1)
    with pytest.raises(InvalidArgumentError, match="'eps'"):
        rule_class(version="faithful", eps=1.5)


def test_ugape_budget_form_needs_a_and_h():
    with pytest.raises(InvalidArgumentError, match="'a' parameter of UGapE"):
        UGapE("budget", complexity=10.0)
    with pytest.raises(InvalidArgumentError, match="'complexity' parameter of UGapE"):
        UGapE("budget", a=1.0)
    with pytest.raises(InvalidArgumentError, match="'a'"):
        UGapE("budget", a=-1.0, complexity=10.0)
    with pytest.raises(InvalidArgumentError, match="'mode'"):
        UGapE("anytime")


def test_forms_run_only_in_their_setting():
    problem = TopKProblem([1.0, 0.5, 0.0], k=1)
    with pytest.raises(InvalidArgumentError, match="identify_fixed_budget"):
        identify(problem, UGapE("budget", a=1.0, complexity=10.0), delta=0.1, n_runs=1, rng=0)
    for rule in (UGapE(), LUCB(), KLElimination(), LilRandLUCB()):
        with pytest.raises(InvalidArgumentError, match="fixed confidence"):
            identify_fixed_budget(problem, rule, [20], n_runs=1, rng=0)


def test_k_must_be_below_the_number_of_arms():
    with pytest.raises(AllocoptError):
        identify(TopKProblem([1.0, 0.5], k=2), "lucb", delta=0.1, n_runs=1, rng=0)


@pytest.mark.parametrize("kwargs", [{"delta1": 1.0}, {"alpha": 0.0}, {"epsilon": -1.0}])
def test_at_lucb_parameters(kwargs):
    with pytest.raises(InvalidArgumentError):
        ATLUCB(**kwargs)


def test_unknown_exploration_rate_is_named():
    with pytest.raises(InvalidArgumentError, match="'exploration'.*'heuristic'"):
        LUCB(exploration="fast")


def test_every_rule_of_the_family_is_registered_under_its_contract_name():
    for name in ["lucb", "kl-lucb", "kl-elimination", "ugape", "lil-lucb", "lucb++", "lil-rand-lucb", "lil-clucb",
                 "at-lucb"]:
        assert POLICIES[name]().name == name


# ----------------------------------------------------------------------------------------- whole runs
def test_fixed_budget_rules_scalar_and_batched_agree():
    problem = TopKProblem([1.0, 0.8, 0.5, 0.3, 0.0], k=2, variance=[0.25, 0.5, 0.3, 1.0, 0.2])
    for rule in (ATLUCB(), UGapE("budget", a=1.0, complexity=30.0)):
        batched = identify_fixed_budget(problem, rule, [12, 40, 90], n_runs=5, rng=2, chunk_size=2)
        scalar = identify_fixed_budget(problem, rule, [12, 40, 90], n_runs=5, rng=2, chunk_size=3, batched=False)
        assert np.array_equal(batched.recommendations, scalar.recommendations)
        assert np.array_equal(batched.pulls, scalar.pulls)


@pytest.mark.parametrize("name", ["lil-rand-lucb", "lil-clucb", "lucb++", "lil-lucb", "lucb", "kl-lucb", "ugape",
                                  "kl-elimination"])
def test_rules_are_correct_on_an_easy_one_sparse_instance(name):
    # Jiang, Li, Qiao (2017), Section 5.1: 1-sparse, variance 1/4, confidence 0.01
    problem = TopKProblem([0.5, 0.5, 0.0, 0.0, 0.0, 0.0], k=2, variance=0.25)
    result = identify(problem, name, delta=0.01, n_runs=20, rng=5)
    assert result.stopped.all() and result.correct.all()
