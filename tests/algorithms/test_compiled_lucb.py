"""The compiled LUCB-family loop against the engine's numpy loop, its twin: the same records (stopping times,
recommendations, stop or cap, counts, steps) bit for bit, for every rule and version, on problems with ties
(Bernoulli rewards of equal means), near-ties, k = 1 and k = K - 1, with the sample cap reached at odd and even
distances, and with every refill path of the loop taken (reward buffers, uniforms, radius and rate tables).
The kept order of the arms is checked against the definition written out here: arm a is ahead of arm b when its
value is larger, or equal with a smaller index."""

from __future__ import annotations

import numpy as np
import pytest

from allocopt import TopKProblem
from allocopt.algorithms import KLLUCB, LUCB, LilCLUCB, LilLUCB, LilRandLUCB, LUCBPlusPlus, identify
from allocopt.algorithms import _compiled_lucb, confidence_bounds
from allocopt.algorithms._compiled import AVAILABLE, compiled_kernels
from allocopt.algorithms.confidence_bounds import exploration_rate
from allocopt.algorithms.engine import run_replications
from allocopt.algorithms.protocol import RuleContext
from allocopt.complexity import lil_radius

pytestmark = pytest.mark.skipif(not AVAILABLE, reason="numba is not installed")

RULES = [LUCB(), LUCB(exploration="kalyanakrishnan"), LilLUCB(), LilLUCB(version="faithful"), LUCBPlusPlus(),
         LUCBPlusPlus(version="faithful", eps=0.05), LilRandLUCB(), LilRandLUCB(version="faithful"), LilCLUCB(),
         LilCLUCB(version="faithful", form="paper")]


def records(problem: TopKProblem, rule, *, compiled: bool, delta: float = 0.05, n_runs: int = 6,
            max_samples: int = 10**6, entropy: int = 11):
    context = RuleContext(problem.n_arms, problem.k, problem.family, np.asarray(problem.dispersion), delta=delta)
    with compiled_kernels(compiled):
        return run_replications(problem, rule, entropy, np.arange(3, 3 + n_runs), checkpoints=np.array([delta]),
                                max_samples=max_samples, context=context)


def assert_same(problem: TopKProblem, rule, **options) -> int:
    fast = records(problem, rule, compiled=True, **options)
    slow = records(problem, rule, compiled=False, **options)
    for name in ("times", "recommendations", "stopped", "pulls"):
        assert np.array_equal(getattr(fast, name), getattr(slow, name)), (rule, name)
    assert (fast.steps, fast.replication_steps) == (slow.steps, slow.replication_steps)
    return int(fast.times.max())


def problems():
    yield TopKProblem([0.7, 0.5, 0.5, 0.3, 0.3], 1, family="bernoulli")  # ties in the means, k = 1
    yield TopKProblem([0.7, 0.6, 0.6, 0.6, 0.4], 4, family="bernoulli")  # k = K - 1, tied at the boundary
    yield TopKProblem([0.5, 0.5 + 1e-15, 0.3, 0.3 - 1e-15, 0.0], 2, variance=0.25)  # near-ties
    yield TopKProblem([1.0, 0.8, 0.5, 0.2, 0.0, -0.1, -0.3], 3, variance=[0.25, 1.0, 0.5, 0.25, 2.0, 0.25, 1.0])


@pytest.mark.parametrize("rule", RULES, ids=lambda rule: f"{rule.name}-{getattr(rule, 'version', None) or rule.exploration}")
def test_compiled_loop_gives_the_numpy_loops_records(rule):
    for problem in problems():
        assert_same(problem, rule, n_runs=4, max_samples=1500)


@pytest.mark.parametrize("cap", [40, 41])
def test_the_cap_clips_a_pair_of_pulls_as_the_engine_does(cap):
    problem = TopKProblem([0.5, 0.5, 0.49, 0.0], 2, variance=0.25)  # no rule stops before the cap
    for rule in (LUCB(), LilLUCB(), LilRandLUCB(), LilCLUCB()):
        fast = records(problem, rule, compiled=True, max_samples=cap)
        assert not fast.stopped.any() and np.all(fast.pulls.sum(axis=1) == cap)  # t reaches the cap exactly
        assert_same(problem, rule, max_samples=cap)


def test_every_refill_path_is_taken_and_changes_nothing(monkeypatch):
    # few uniforms per refill, rate tables that start at 2 entries, and no per-process LIL tables: the numpy
    # loop then takes the direct LIL call and the compiled loop grows its own radius tables from a few entries;
    # some arm is pulled more than the 256 rewards an arm's buffer holds
    monkeypatch.setattr(_compiled_lucb, "UNIFORM_STEPS", 3)
    monkeypatch.setattr(_compiled_lucb, "FIRST_TABLE_SIZE", 2)
    monkeypatch.setattr(_compiled_lucb, "_TABLES", {})
    monkeypatch.setattr(_compiled_lucb, "_lil_table", lambda omega, eps, form, largest: None)
    monkeypatch.setattr(confidence_bounds, "_lil_table", lambda omega, eps, form, largest: None)
    problem = TopKProblem([0.5, 0.3, 0.25, 0.0], 1, variance=0.25)
    for rule in (LUCB(exploration="kalyanakrishnan"), LilRandLUCB(), LilCLUCB(version="faithful")):
        fast = records(problem, rule, compiled=True, n_runs=3, delta=0.01, max_samples=2000)
        assert fast.pulls.max() > 256
        assert_same(problem, rule, n_runs=3, delta=0.01, max_samples=2000)


def test_identify_outcomes_do_not_depend_on_the_loop_or_the_jobs():
    problem = TopKProblem([0.5, 0.5, 0.0, 0.0, 0.0, 0.0], 2, variance=0.25)
    fast = identify(problem, LilRandLUCB(version="faithful"), delta=0.01, n_runs=4, rng=2017, n_jobs=2)
    with compiled_kernels(False):
        slow = identify(problem, LilRandLUCB(version="faithful"), delta=0.01, n_runs=4, rng=2017, n_jobs=1)
    for name in ("stopping_times", "recommendations", "stopped", "pulls", "correct"):
        assert np.array_equal(getattr(fast, name), getattr(slow, name))
    assert fast.replication_steps == slow.replication_steps


@pytest.mark.parametrize("exploration", ["heuristic", "kaufmann"])
def test_kl_lucb_on_gaussian_arms_runs_compiled_with_the_numpy_loops_records(exploration):
    # the Gaussian KL bound is mean +- sqrt(2 sigma^2 (beta / N)): the compiled loop computes that radius in that
    # order, so the records equal the numpy loop's (kl_bound) bit for bit; other families keep the numpy loop
    rule = KLLUCB(exploration=exploration)
    gaussian = [problem for problem in problems() if problem.family.name == "gaussian"]
    gaussian.append(TopKProblem([0.2, 0.1, 0.1, 0.0], 3, variance=0.25))  # k = K - 1, tied below the boundary
    for problem in gaussian:
        context = RuleContext(problem.n_arms, problem.k, problem.family, np.asarray(problem.dispersion), delta=0.05)
        assert rule.compiled_plan(context) is not None
        assert_same(problem, rule, n_runs=4, max_samples=1500)
    poisson = TopKProblem([0.7, 0.5, 0.3], 1, family="poisson")
    context = RuleContext(3, 1, poisson.family, np.ones(3), delta=0.05)
    assert rule.compiled_plan(context) is None


@pytest.mark.parametrize("exploration", ["heuristic", "kaufmann"])
def test_kl_lucb_on_bernoulli_arms_runs_compiled_with_the_numpy_loops_records(exploration):
    # the Bernoulli KL bounds by kl_bound's bisection in the compiled loop: the records equal the numpy loop's bit
    # for bit, with empirical means of 0 and 1 (the first pulls), ties in the means, k = 1 and k = K - 1, and
    # Figure 4's instance of the experiments (theta = 0.9, ..., 0.1, k = 3)
    rule = KLLUCB(exploration=exploration)
    bernoulli = [problem for problem in problems() if problem.family.name == "bernoulli"]
    bernoulli.append(TopKProblem(np.round(np.arange(9, 0, -1) / 10.0, 12), 3, family="bernoulli"))
    for problem in bernoulli:
        context = RuleContext(problem.n_arms, problem.k, problem.family, np.asarray(problem.dispersion), delta=0.05)
        assert rule.compiled_plan(context) is not None
        assert_same(problem, rule, n_runs=6, max_samples=3000)


def test_subclasses_and_callable_rates_take_the_numpy_loop():
    class Coin(LilRandLUCB):
        def select_batch(self, context, view, state, uniforms):
            return np.zeros(view.counts.shape[0], dtype=np.int64)  # a different rule: always arm 0

    context = RuleContext(4, 2, TopKProblem([1.0, 0.5, 0.2, 0.0], 2).family, np.ones(4), delta=0.1)
    assert Coin().compiled_plan(context) is None
    assert LUCB(exploration=lambda t, delta, n_arms: np.log(1.0 / delta) + 0.0 * t).compiled_plan(context) is None
    assert LilRandLUCB().compiled_plan(context) is not None


def ahead(values: np.ndarray) -> np.ndarray:
    """The order by the definition: a before b when values[a] > values[b], or equal and a < b."""
    return np.array(sorted(range(values.size), key=lambda arm: (-values[arm], arm)))


def test_kept_order_is_the_sorted_order_after_every_change():
    _compiled_lucb._kernel()  # the helpers are the compiled ones from here on
    generator = np.random.default_rng(5)
    for n_arms in (2, 5, 40):
        values = generator.integers(0, 4, n_arms) / 4.0  # many ties
        order, rank = np.empty(n_arms, dtype=np.int64), np.empty(n_arms, dtype=np.int64)
        _compiled_lucb._sort_order(values, order, rank)
        assert np.array_equal(order, ahead(values)) and np.array_equal(rank[order], np.arange(n_arms))
        for _ in range(300):
            arm = int(generator.integers(n_arms))
            values[arm] = generator.integers(0, 4) / 4.0 + (1e-16 if generator.random() < 0.2 else 0.0)
            _compiled_lucb._reposition(values, order, rank, arm)
            assert np.array_equal(order, ahead(values)) and np.array_equal(rank[order], np.arange(n_arms))


def test_tables_hold_the_direct_calls_numbers():
    counts = np.array([1, 2, 3, 1000, 1023, 1024, 5000])
    table = _compiled_lucb.radius_table(0.002, 0.01, "experiments", 5000)
    assert np.array_equal(table[counts], lil_radius(counts, 0.002, 0.01, 1.0, form="experiments"))
    times = np.array([[7, 300], [1024, 4099]])  # the engine's t: one per run, shape (R,)
    rates = _compiled_lucb.rate_table("kalyanakrishnan", 0.01, 8, 4099)
    for row in times:
        assert np.array_equal(rates[row], exploration_rate("kalyanakrishnan", row, 0.01, 8))


def test_minimum_tree_counts_ties_and_picks_as_random_candidate():
    _compiled_lucb._kernel()
    generator = np.random.default_rng(8)
    for n_arms in (1, 3, 8, 37):
        size = 1 << max(0, n_arms - 1).bit_length()
        values, counts = np.full(2 * size, np.inf), np.ones(2 * size, dtype=np.int64)
        leaves = generator.integers(0, 3, n_arms) / 2.0
        leaves[generator.random(n_arms) < 0.3] = np.inf  # arms outside the set the tree ranges over
        leaves[0] = min(leaves[0], 1.0)  # at least one finite leaf
        for _ in range(3):
            for arm in range(n_arms):
                _compiled_lucb._tree_set(values, counts, size, arm, leaves[arm])
            candidates = np.flatnonzero(leaves == leaves.min())  # in increasing arm order
            assert values[1] == leaves.min() and counts[1] == candidates.size
            for uniform in (0.0, 0.3, 0.5, 0.999999):
                expected = candidates[min(int(uniform * candidates.size), candidates.size - 1)]
                assert _compiled_lucb._tree_pick(values, counts, size, uniform) == expected
            leaves[generator.integers(n_arms)] = generator.integers(0, 3) / 2.0


def test_tie_breaks_are_those_of_random_candidate():
    # Bernoulli arms with equal means over short runs: bounds (and lil'CLUCB's radii) tie often at small counts,
    # and which of the tied arms is taken shows in the counts of some of the 40 runs
    problem = TopKProblem([0.6, 0.6, 0.5, 0.5, 0.5, 0.4], 2, family="bernoulli")
    for rule in (LUCB(), LilLUCB(), LilRandLUCB(), LilCLUCB()):
        assert_same(problem, rule, n_runs=40, max_samples=300)
