"""UGapE's options (issue 31): KL confidence bounds (Wang, Yang, You 2022, Appendix C.3, after Kaufmann and
Kalyanakrishnan 2013), the pull choice by interval width, and the two readings of the stopping rule. The bounds are
recomputed here by mpmath root finding, the gap indices by brute force."""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest

from allocopt import TopKProblem
from allocopt._numba import compiled_kernels
from allocopt.algorithms import UGapE, identify, identify_fixed_budget
from allocopt.exceptions import InvalidArgumentError
from allocopt.families import Bernoulli
from allocopt.testing import check_rule
from allocopt.testing.kernels import compiled_select, compiled_stop
from test_lucb_family import brute_force_gap_indices, context_for, make_view

MEANS, COUNTS = [0.19, 0.85, 0.54, 0.31, 0.43], [27, 6, 5, 11, 5]


def bernoulli_kl_bound(mean, count, beta, upper):
    """max (upper) or min {q : count kl(mean, q) <= beta} by mpmath's bisection on the divergence, 50 digits."""
    with mpmath.workdps(50):
        m = mpmath.mpf(mean)

        def excess(q):
            divergence = (m * mpmath.log(m / q) if m > 0 else 0) + ((1 - m) * mpmath.log((1 - m) / (1 - q))
                                                                    if m < 1 else 0)
            return count * divergence - beta

        end = mpmath.mpf(1) - mpmath.mpf(10) ** -40 if upper else mpmath.mpf(10) ** -40
        if excess(end) <= 0:
            return float(end)
        return float(mpmath.findroot(excess, (m, end), solver="bisect", tol=mpmath.mpf(10) ** -45))


def _state(means=MEANS, counts=COUNTS, k=2, delta=0.1):
    view = make_view(means, counts, k)
    context = context_for(means, k, family=Bernoulli(), delta=delta)
    beta = math.log((math.log(view.t) + 1) / delta)  # the heuristic rate log((log t + 1)/delta)
    upper = [bernoulli_kl_bound(m, n, beta, True) for m, n in zip(means, counts)]
    lower = [bernoulli_kl_bound(m, n, beta, False) for m, n in zip(means, counts)]
    return view, context, upper, lower


def test_kl_bounds_gap_indices_and_choice_against_an_independent_computation():
    view, context, upper, lower = _state()
    rule = UGapE()
    gaps = rule.indices(context, view)
    assert np.allclose(gaps.upper, upper, rtol=0, atol=1e-13)
    assert np.allclose(gaps.lower, lower, rtol=0, atol=1e-13)
    index = brute_force_gap_indices(upper, lower, 2)
    assert np.allclose(gaps.gap_index, index, rtol=0, atol=1e-12)
    chosen = sorted(np.argsort(index, kind="stable")[:2].tolist())
    assert gaps.chosen.tolist() == chosen
    others = [a for a in range(5) if a not in chosen]
    u = max(others, key=lambda a: upper[a])
    l = min(chosen, key=lambda a: lower[a])
    width = {a: upper[a] - lower[a] for a in (u, l)}
    expected = max(width, key=width.get)
    assert rule.select(context, view, {}, np.array([0.5, 0.5, 0.5])) == expected
    # a state where the choice matters: Hoeffding's bounds pull the other arm
    assert UGapE(bounds="hoeffding").select(context, view, {}, np.array([0.5, 0.5, 0.5])) != expected
    state = {name: values[:1] for name, values in rule.init_state(context, 1).items()}
    arm, times, _ = compiled_select(rule, context, view, state, np.array([0.5, 0.5, 0.5]))
    assert (arm, times) == (expected, 1)
    assert np.array_equal(state["indices_upper"][0], gaps.upper)  # bit for bit: the same bisection
    assert np.array_equal(state["indices_lower"][0], gaps.lower)


def test_the_two_stopping_readings_on_a_state_where_they_differ():
    # arm 0 is certified above the (k = 2)-th upper bound of the others, arm 1 is not yet
    means, counts = [0.9, 0.6, 0.5, 0.1], [400, 60, 60, 400]
    view, context, upper, lower = _state(means, counts, k=2)
    index = brute_force_gap_indices(upper, lower, 2)
    chosen = sorted(np.argsort(index, kind="stable")[:2].tolist())
    assert min(index) < 0 < max(index[a] for a in chosen)
    for stop_on, expected in (("boxes", False), ("min-gap-index", True)):
        rule = UGapE(stop_on=stop_on)
        assert rule.stop(context, view, {}) is expected
        state = {name: values[:1] for name, values in rule.init_state(context, 1).items()}
        assert compiled_stop(rule, context, view, state) is expected
        assert rule.recommend(context, view, {}).tolist() == chosen


BERNOULLI = TopKProblem([0.9, 0.8, 0.5, 0.3, 0.1], k=2, family="bernoulli")


def test_bernoulli_runs_are_correct_and_kl_bounds_need_fewer_samples():
    kl = identify(BERNOULLI, UGapE(), delta=0.1, n_runs=20, rng=8)
    hoeffding = identify(BERNOULLI, UGapE(bounds="hoeffding"), delta=0.1, n_runs=20, rng=8)
    assert kl.correct.all() and hoeffding.correct.all()
    assert kl.stopped.all()
    # the KL interval lies inside Hoeffding's at every state (Pinsker), so every run stops no later
    assert (kl.stopping_times <= hoeffding.stopping_times).mean() > 0.7
    assert kl.stopping_times.mean() < hoeffding.stopping_times.mean()


@pytest.mark.parametrize("rule", [UGapE(stop_on="min-gap-index"), UGapE()])
def test_compiled_kl_runs_equal_the_python_specification(rule):
    with compiled_kernels(False):
        python = identify(BERNOULLI, rule, delta=0.1, n_runs=3, rng=4, max_samples=200)
    compiled = identify(BERNOULLI, rule, delta=0.1, n_runs=3, rng=4, max_samples=200)
    assert np.array_equal(python.stopping_times, compiled.stopping_times)
    assert np.array_equal(python.pulls, compiled.pulls)
    assert np.array_equal(python.recommendations, compiled.recommendations)


@pytest.mark.slow
@pytest.mark.parametrize("rule", [UGapE(), UGapE(stop_on="min-gap-index"), UGapE(bounds="hoeffding")])
def test_ugape_options_conform_on_bernoulli_arms(rule):
    check_rule(rule, [TopKProblem([0.9, 0.5, 0.1], 1, family="bernoulli")])  # short runs: the Python bisection


def test_kl_bounds_on_gaussian_arms_are_hoeffding_s_to_the_bit():
    problem = TopKProblem([1.0, 0.8, 0.5, 0.4, 0.0], k=2, variance=0.25)
    kl = identify(problem, UGapE(), delta=0.05, n_runs=6, rng=2)
    hoeffding = identify(problem, UGapE(bounds="hoeffding"), delta=0.05, n_runs=6, rng=2)
    assert np.array_equal(kl.stopping_times, hoeffding.stopping_times) and np.array_equal(kl.pulls, hoeffding.pulls)


def test_kl_bounds_open_ugape_to_families_without_a_sub_gaussian_radius():
    problem = TopKProblem([3.0, 1.5, 1.0, 0.5], k=1, family="poisson")
    result = identify(problem, UGapE(), delta=0.1, n_runs=4, rng=1)
    assert result.correct.all() and result.stopped.all()
    with pytest.raises(InvalidArgumentError, match="defined for the poisson family"):
        identify(problem, UGapE(bounds="hoeffding"), delta=0.1, n_runs=1, rng=0)


def test_bad_options_are_named():
    with pytest.raises(InvalidArgumentError, match="'bounds' parameter of UGapE"):
        UGapE(bounds="bernstein")
    with pytest.raises(InvalidArgumentError, match="'stop_on' parameter of UGapE"):
        UGapE(stop_on="gap")
    with pytest.raises(InvalidArgumentError, match="'bounds' parameter of UGapE.*budget mode"):
        UGapE("budget", a=1.0, complexity=10.0, bounds="kl")
    with pytest.raises(InvalidArgumentError, match="'stop_on' parameter of UGapE.*budget mode"):
        UGapE("budget", a=1.0, complexity=10.0, stop_on="min-gap-index")
    budget = UGapE("budget", a=1.0, complexity=10.0, bounds="hoeffding")
    assert budget.bound_kind == "hoeffding" and UGapE("budget", a=1.0, complexity=10.0).bound_kind == "hoeffding"
    assert identify_fixed_budget(BERNOULLI, budget, [50], n_runs=2, rng=0).recommendations.shape == (2, 1, 2)
