"""The compiled AT-LUCB step against its numpy twin (ATLUCB.advance, ATLUCB.revised and critical_arms), against
the definition of Jun and Nowak (2016, Algorithm 2) written out in the test, and through the runners' outcomes."""

from __future__ import annotations

import math

import numpy as np
import pytest

from allocopt import TopKProblem
from allocopt.algorithms import ATLUCB, identify, identify_fixed_budget
from allocopt.algorithms._compiled import AVAILABLE, compiled_kernels
from allocopt.algorithms._compiled_at_lucb import compiled_at_lucb_step
from allocopt.algorithms.lucb import critical_arms
from allocopt.algorithms.protocol import RuleContext, RunView
from allocopt.algorithms.statistics import top_k_order_numpy
from allocopt.families import get_family

pytestmark = pytest.mark.skipif(not AVAILABLE, reason="numba is not installed")


def random_state(generator: np.random.Generator, n_rows: int, n_arms: int, k: int, kind: str):
    """Counts, means, t, the empirical split, S(t-1) and J(t-1) of a batch.

    ``ties``: Bernoulli means of few pulls with equal counts (tied bounds on both sides of the split);
    ``near``: means one ulp apart; ``separated``: many pulls of well separated means (TERM holds, the stage moves).
    """
    if kind == "ties":
        counts = np.full((n_rows, n_arms), int(generator.integers(1, 5)), dtype=np.int64)
        means = generator.integers(0, 3, (n_rows, n_arms)) / 2.0
    elif kind == "near":
        counts = generator.integers(1, 40, (n_rows, n_arms))
        base = generator.random((n_rows, 1))
        means = np.where(generator.random((n_rows, n_arms)) < 0.5, base, np.nextafter(base, 2.0))
        counts[:, : n_arms // 2] = counts[:, :1]  # equal counts on some arms: exact ties of the bounds
    else:
        counts = generator.integers(2000, 40000, (n_rows, n_arms))
        means = np.sort(generator.random((n_rows, n_arms)), axis=1)[:, ::-1].copy()
        means[:, :k] += 0.5
    top, bottom = top_k_order_numpy(means, k)
    previous = generator.integers(1, 30, n_rows)
    answer = np.zeros((n_rows, n_arms), dtype=bool)
    for row in range(n_rows):
        answer[row, generator.choice(n_arms, k, replace=False)] = True
    return counts, means, counts.sum(axis=1), top, bottom, previous, answer


def numpy_twin(rule: ATLUCB, context: RuleContext, view: RunView, previous, answer, uniforms):
    state = {"stage": previous[:, None].copy(), "answer": answer.copy()}
    current = rule.advance(context, view, state)
    revised = rule.revised(context, view, current.stage)
    h, l = critical_arms(revised, view.top, view.bottom, uniforms[:, 0], uniforms[:, 1])
    return current.stage, current.answer, h, l


@pytest.mark.parametrize("n_arms", [2, 3, 7, 50])
@pytest.mark.parametrize("kind", ["ties", "near", "separated"])
def test_compiled_step_equals_the_numpy_twin_bit_for_bit(n_arms, kind):
    generator = np.random.default_rng([n_arms, len(kind)])
    family = get_family("bernoulli")
    dispersion = np.ones(n_arms)
    variance = np.full(n_arms, 0.25)  # Bernoulli rewards are 1/2-sub-Gaussian
    for k in sorted({1, n_arms // 2 or 1, n_arms - 1}):
        context = RuleContext(n_arms=n_arms, k=k, family=family, dispersion=dispersion)
        for rule in (ATLUCB(), ATLUCB(delta1=0.1, alpha=0.5), ATLUCB(epsilon=0.05)):
            counts, means, t, top, bottom, previous, answer = random_state(generator, 80, n_arms, k, kind)
            view = RunView(t, counts, counts * means, means, np.full(80, np.nan), top, bottom, None, None)
            uniforms = generator.random((80, 2))
            stage, mask, h, l = numpy_twin(rule, context, view, previous, answer, uniforms)
            compiled = compiled_at_lucb_step(means, counts, t, variance, top, bottom, previous, answer,
                                             delta1=rule.delta1, alpha=rule.alpha, epsilon=rule.epsilon,
                                             uniforms=uniforms)
            assert np.array_equal(compiled.stage, stage) and np.array_equal(compiled.answer, mask)
            assert np.array_equal(compiled.h, h) and np.array_equal(compiled.l, l)
            without_arms = compiled_at_lucb_step(means, counts, t, variance, top, bottom, previous, answer,
                                                 delta1=rule.delta1, alpha=rule.alpha, epsilon=rule.epsilon)
            assert np.array_equal(without_arms.stage, stage) and np.array_equal(without_arms.answer, mask)
            assert np.all(without_arms.h == -1) and np.all(without_arms.l == -1)
            if kind == "separated":
                assert np.any(stage > previous)  # the stage search was exercised


def test_compiled_step_follows_the_definition():
    """S(t): S(t-1) when TERM fails there, else the first later stage where it fails, found here by a linear scan
    over s with the bounds written out (Jun and Nowak 2016, Algorithm 2; LUCB1's radius
    sqrt(2 sigma^2 log(5 K t^4 / (4 delta_s)) / N_a)); h and l the extreme bounds, ties by floor(u c)."""
    generator = np.random.default_rng(7)
    n_arms, k, delta1, alpha = 6, 2, 0.5, 0.5
    counts, means, t, top, bottom, previous, answer = random_state(generator, 40, n_arms, k, "separated")
    counts //= 20  # 100 to 2000 pulls: TERM holds at S(t-1) in some rows, and fails a few hundred stages later
    t = counts.sum(axis=1)
    previous[::2] = 1  # S(t-1) = 1: J(t) is refreshed even where TERM fails
    uniforms = generator.random((40, 2))
    compiled = compiled_at_lucb_step(means, counts, t, np.full(n_arms, 0.25), top, bottom, previous, answer,
                                     delta1=delta1, alpha=alpha, epsilon=0.0, uniforms=uniforms)

    def bounds(row, s):
        log_inverse_delta = -math.log(delta1) - (s - 1) * math.log(alpha)  # delta_s = delta1 alpha^(s-1)
        level = math.log(5 * n_arms * float(t[row]) ** 4 / 4) + log_inverse_delta
        radius = [math.sqrt(2 * 0.25 * level / counts[row, a])
                  for a in range(n_arms)]
        return ([means[row, a] - radius[a] for a in top[row]], [means[row, a] + radius[a] for a in bottom[row]])

    def term(row, s):
        lower, upper = bounds(row, s)
        return max(upper) - min(lower) < 0.0

    moved = 0
    for row in range(40):
        s = int(previous[row])
        terminated = term(row, s)
        if terminated:
            s += 1
            while term(row, s):
                s += 1
            moved += 1
        assert compiled.stage[row] == s
        expected_answer = np.isin(np.arange(n_arms), top[row]) if terminated or s == 1 else answer[row]
        assert np.array_equal(compiled.answer[row], expected_answer)
        lower, upper = bounds(row, s)
        # the closed forms above round differently from the rule's, so compare the chosen arms' bounds up to 1e-12
        assert lower[list(top[row]).index(compiled.h[row])] <= min(lower) + 1e-12
        assert upper[list(bottom[row]).index(compiled.l[row])] >= max(upper) - 1e-12
    assert moved > 0


@pytest.mark.parametrize("k", [1, 2, 5])
def test_runner_outcomes_equal_with_and_without_the_kernel(k):
    theta = np.array([0.7, 0.68, 0.6, 0.6, 0.55, 0.5])  # a tie inside Low, Bernoulli rewards: frequent tied bounds
    problem = TopKProblem(theta, k=k, family="bernoulli")
    easy = TopKProblem([0.95, 0.75, 0.3, 0.3, 0.2, 0.02], k=k, family="bernoulli")  # gaps >= 0.18: runs stop early
    results = {}
    for enabled in (False, True):
        with compiled_kernels(enabled):
            budget = identify_fixed_budget(problem, ATLUCB(), [40, 150, 400], n_runs=30, rng=3)
            confidence = identify(easy, ATLUCB(delta1=0.3, alpha=0.9), delta=0.2, n_runs=12, rng=4,
                                  max_samples=20000)
        results[enabled] = (budget, confidence)
    (budget_numpy, confidence_numpy), (budget_compiled, confidence_compiled) = results[False], results[True]
    assert np.array_equal(budget_numpy.recommendations, budget_compiled.recommendations)
    assert np.array_equal(confidence_numpy.stopping_times, confidence_compiled.stopping_times)
    assert np.array_equal(confidence_numpy.recommendations, confidence_compiled.recommendations)
    assert np.array_equal(confidence_numpy.stopped, confidence_compiled.stopped)
    assert confidence_numpy.stopped.any()  # the rule's own stopping (stop_batch) was exercised
