"""The compiled CLUCB-PAC loop against the engine's numpy loop, its twin: the same records (stopping times or
budgets, recommendations, stop or cap, counts, steps) bit for bit, for the PAC form and the fixed-budget form, on
problems with ties (Bernoulli rewards of equal means), near-ties, k = 1 and k = n - 1, Gaussian arms of unequal
variances, with the sample cap reached, the fixed-budget form's answer frozen before the last budget, and every
refill path of the loop taken (reward buffers, uniforms, the table of the logarithm)."""

from __future__ import annotations

import numpy as np
import pytest

from allocopt import TopKProblem
from allocopt.algorithms import CLUCBPAC, CLUCBPACFixedBudget, identify_fixed_budget, pac_identify
from allocopt.algorithms import _compiled_clucb_pac, _compiled_lucb
from allocopt.algorithms._compiled import AVAILABLE, compiled_kernels
from allocopt.algorithms.clucb_pac import clucb_level
from allocopt.algorithms.engine import run_replications
from allocopt.algorithms.protocol import RuleContext

pytestmark = pytest.mark.skipif(not AVAILABLE, reason="numba is not installed")


def records(problem: TopKProblem, rule, *, compiled: bool, budgets=None, epsilon: float = 0.05,
            delta: float = 0.05, n_runs: int = 5, max_samples: int = 10**6, entropy: int = 11):
    context = RuleContext(problem.n_arms, problem.k, problem.family, np.asarray(problem.dispersion), delta=delta,
                          epsilon=epsilon)
    with compiled_kernels(compiled):
        if budgets is None:  # the PAC form, one confidence level
            return run_replications(problem, rule, entropy, np.arange(3, 3 + n_runs), checkpoints=np.array([delta]),
                                    max_samples=max_samples, context=context)
        budgets = np.asarray(budgets, dtype=np.int64)
        return run_replications(problem, rule, entropy, np.arange(3, 3 + n_runs), checkpoints=budgets,
                                mode="budget", max_samples=int(budgets[-1]), context=context)


def assert_same(problem: TopKProblem, rule, **options):
    fast = records(problem, rule, compiled=True, **options)
    slow = records(problem, rule, compiled=False, **options)
    for name in ("times", "recommendations", "stopped", "pulls"):
        assert np.array_equal(getattr(fast, name), getattr(slow, name)), (rule, name)
    assert (fast.steps, fast.replication_steps) == (slow.steps, slow.replication_steps)
    return fast


def problems():
    yield TopKProblem([0.7, 0.5, 0.5, 0.3, 0.3], 1, family="bernoulli")  # ties in the means, k = 1
    yield TopKProblem([0.7, 0.6, 0.6, 0.6, 0.4], 4, family="bernoulli")  # k = n - 1, ties below the boundary
    yield TopKProblem([0.6, 0.5, 0.5, 0.5, 0.2, 0.2, 0.2, 0.1], 4, family="bernoulli")  # many ties
    yield TopKProblem([0.5, 0.5 + 1e-15, 0.3, 0.3 - 1e-15, 0.0], 2, variance=0.25)  # near-ties
    yield TopKProblem([1.0, 0.8, 0.5, 0.2, 0.0, -0.1, -0.3], 3, variance=[0.25, 1.0, 0.5, 0.25, 2.0, 0.25, 1.0])


@pytest.mark.parametrize("index", range(5))
def test_pac_form_gives_the_numpy_loops_records(index):
    problem = list(problems())[index]
    assert_same(problem, CLUCBPAC(), epsilon=0.05, max_samples=2500)
    assert_same(problem, CLUCBPAC(), epsilon=0.005, delta=0.2, n_runs=3, max_samples=1200)


@pytest.mark.parametrize("index", range(5))
def test_fixed_budget_form_gives_the_numpy_loops_records(index):
    problem = list(problems())[index]
    n = problem.n_arms
    assert_same(problem, CLUCBPACFixedBudget(epsilon=0.02, delta=0.05), budgets=[n, n + 1, 10 * n, 400 * n])
    assert_same(problem, CLUCBPACFixedBudget(epsilon=0.3, delta=0.1), budgets=[3 * n, 300 * n], n_runs=3)


@pytest.mark.parametrize("cap", [300, 301])
def test_the_cap_stops_the_pac_form_as_the_engine_does(cap):
    problem = TopKProblem([0.5, 0.5, 0.49, 0.0], 2, variance=0.25)  # no run meets the PAC rule before the cap
    fast = assert_same(problem, CLUCBPAC(), epsilon=1e-4, max_samples=cap)
    assert not fast.stopped.any() and np.all(fast.pulls.sum(axis=1) == cap)  # t reaches the cap exactly


def test_the_fixed_budget_answer_freezes_where_the_pac_rule_holds():
    # an easy instance and a loose epsilon: the PAC form stops early; the fixed-budget form follows the same steps
    # (same rewards and uniforms) up to there, freezes that answer and spends the rest on the largest radii
    problem = TopKProblem([0.9, 0.8, 0.2, 0.1, 0.1], 2, family="bernoulli")
    with compiled_kernels(True):
        pac = pac_identify(problem, CLUCBPAC(), epsilon=0.2, delta=0.1, n_runs=6, rng=8)
    assert pac.samples.max() < 2000  # every run froze before the last budget below
    rule = CLUCBPACFixedBudget(epsilon=0.2, delta=0.1)
    fast = identify_fixed_budget(problem, rule, [pac.samples.min(), 2000], n_runs=6, rng=8)
    with compiled_kernels(False):
        slow = identify_fixed_budget(problem, rule, [pac.samples.min(), 2000], n_runs=6, rng=8)
    assert np.array_equal(fast.recommendations, slow.recommendations) and np.array_equal(fast.pulls, slow.pulls)
    assert np.array_equal(fast.recommendations[:, -1], pac.recommendations)  # the answer at the PAC stop


def test_through_identify_fixed_budget_and_pac_identify_in_chunks():
    problem = TopKProblem(np.linspace(0.2, 0.8, 12), 4, family="bernoulli")
    rule = CLUCBPACFixedBudget(epsilon=0.01, delta=0.05)
    budgets = [30, 120, 600, 1500]
    fast = identify_fixed_budget(problem, rule, budgets, n_runs=7, rng=5, chunk_size=3)
    with compiled_kernels(False):
        slow = identify_fixed_budget(problem, rule, budgets, n_runs=7, rng=5, chunk_size=4)
    assert np.array_equal(fast.recommendations, slow.recommendations) and np.array_equal(fast.pulls, slow.pulls)
    # a loose epsilon (the runs stop after 4000-5300 samples, not 10000-11000 as at 0.05): what is tested here is the
    # chunking, which the instance's difficulty does not change
    fast_pac = pac_identify(problem, CLUCBPAC(), epsilon=0.15, delta=0.05, n_runs=5, rng=6, chunk_size=2)
    with compiled_kernels(False):
        slow_pac = pac_identify(problem, CLUCBPAC(), epsilon=0.15, delta=0.05, n_runs=5, rng=6)
    assert np.array_equal(fast_pac.samples, slow_pac.samples)
    assert np.array_equal(fast_pac.recommendations, slow_pac.recommendations)


def test_every_refill_path_is_taken_and_changes_nothing(monkeypatch):
    # a few uniforms per refill and a table of the logarithm that starts at 2 entries; some arm is pulled more than
    # the 256 rewards an arm's buffer holds
    monkeypatch.setattr(_compiled_clucb_pac, "UNIFORM_STEPS", 3)
    monkeypatch.setattr(_compiled_clucb_pac, "FIRST_TABLE_SIZE", 2)
    monkeypatch.setattr(_compiled_lucb, "_TABLES", {})
    problem = TopKProblem([0.5, 0.3, 0.25, 0.0], 1, variance=0.25)
    fast = assert_same(problem, CLUCBPAC(), epsilon=0.01, n_runs=3, delta=0.01, max_samples=3000)
    assert fast.pulls.max() > 256
    assert_same(problem, CLUCBPACFixedBudget(epsilon=0.01, delta=0.01), budgets=[10, 700, 3000], n_runs=3)


def test_the_table_of_the_logarithm_holds_clucb_level():
    plan = _compiled_clucb_pac.ClucbPlan(False, 0.1, np.full(3, 0.5), lambda t: clucb_level(t, 3, 0.05), (3, 0.05))
    table = _compiled_clucb_pac._level_table(plan, 5000)
    t = np.array([1, 2, 77, 4096, 5000])
    assert table.shape[0] > 5000 and np.isnan(table[0])
    assert np.array_equal(table[t], np.log(4.0 * 3 * t.astype(float) ** 3 / 0.05))  # Chen et al. 2014, Theorem 1


def test_a_subclass_takes_the_numpy_loop():
    class Variant(CLUCBPACFixedBudget):
        pass

    context = RuleContext(4, 2, TopKProblem([0.9, 0.8, 0.2, 0.1], 2, family="bernoulli").family, np.ones(4))
    empty = np.zeros((1, 4), dtype=np.int64)
    assert Variant().compiled_rows(context, "budget", np.array([10]), 10, empty, empty * 1.0,
                                   np.zeros(1, dtype=np.int64), None, []) is None
    assert CLUCBPAC().compiled_rows(context, "budget", np.array([10]), 10, empty, empty * 1.0,
                                    np.zeros(1, dtype=np.int64), None, []) is None


# ------------------------------------------------------------------------------ the certified step (many arms)
@pytest.fixture
def certified_counts(monkeypatch):
    """The certified steps and all steps of every compiled batch run inside the test."""
    from allocopt.algorithms import clucb_pac

    totals = {"certified": 0, "steps": 0}
    run = clucb_pac.run_clucb_rows

    def counting(*args, **kwargs):
        outcome = run(*args, **kwargs)
        totals["certified"] += int(outcome.certified_steps.sum())
        totals["steps"] += int(outcome.selects.sum())
        return outcome

    monkeypatch.setattr(clucb_pac, "run_clucb_rows", counting)
    return totals


def many_arms():
    generator = np.random.default_rng(2017)
    # two groups of equal Bernoulli means (ties in the adjusted weights at the boundary, as in TWOGROUP)
    yield TopKProblem(np.where(np.arange(80) < 20, 0.6, 0.4), 20, family="bernoulli")
    # spread Bernoulli means, the boundary in the middle (every arm in the symmetric difference, as at k = n/2)
    yield TopKProblem(generator.uniform(0.05, 0.95, 80), 40, family="bernoulli")
    # Gaussian arms of one variance (the certified step), means with near-ties
    yield TopKProblem(np.repeat(generator.normal(0.0, 0.3, 30), 2) + np.tile([0.0, 1e-12], 30), 7, variance=0.5)


@pytest.mark.parametrize("index", range(3))
def test_the_certified_step_gives_the_numpy_loops_records(index, certified_counts):
    problem = list(many_arms())[index]
    n = problem.n_arms
    assert_same(problem, CLUCBPACFixedBudget(epsilon=0.01, delta=0.01), budgets=[n, 2 * n, 10 * n, 40 * n],
                n_runs=4)
    assert_same(problem, CLUCBPAC(), epsilon=0.05, delta=0.05, n_runs=3, max_samples=30 * n)
    # both paths were taken: most steps certified, and full steps beyond each run's first
    assert certified_counts["steps"] / 2 < certified_counts["certified"] < certified_counts["steps"] - 7


def test_the_certified_step_where_the_pac_rule_holds(certified_counts):
    # a loose epsilon: the rule holds within the budget, so the bound on the gap gives way to the exact sums and the
    # fixed-budget form freezes its answer
    problem = TopKProblem(np.linspace(0.1, 0.9, 50), 10, family="bernoulli")
    with compiled_kernels(True):
        pac = pac_identify(problem, CLUCBPAC(), epsilon=0.3, delta=0.1, n_runs=4, rng=8)
    assert pac.samples.max() < 12000 and certified_counts["certified"] > 0
    assert_same(problem, CLUCBPACFixedBudget(epsilon=0.3, delta=0.1), budgets=[100, 12000], n_runs=4)
    assert_same(problem, CLUCBPAC(), epsilon=0.3, delta=0.1, n_runs=4, max_samples=12000)


def test_unequal_variances_take_only_full_steps(certified_counts):
    variance = np.linspace(0.2, 0.6, 40)  # the largest radius is not the smallest count
    problem = TopKProblem(np.linspace(0.0, 1.0, 40), 10, variance=variance)
    assert_same(problem, CLUCBPACFixedBudget(epsilon=0.01, delta=0.01), budgets=[40, 400, 1600], n_runs=3)
    assert certified_counts["certified"] == 0 < certified_counts["steps"]


def test_the_tree_of_counts_selects_among_the_smallest_counts():
    generator = np.random.default_rng(5)
    for n_arms in (1, 2, 5, 8, 37):
        leaves = 1 << max(n_arms - 1, 1).bit_length()
        smallest, multiplicity = np.zeros(2 * leaves, dtype=np.int64), np.zeros(2 * leaves, dtype=np.int64)
        listed = generator.random(n_arms) < 0.6
        listed[0] = True
        counts = generator.integers(3, 6, n_arms)
        _compiled_clucb_pac._segment_build(listed, counts, smallest, multiplicity)
        for _ in range(40):
            arm = int(generator.integers(n_arms))  # a change of one arm: its count grows, or it enters or leaves
            if generator.random() < 0.5:
                counts[arm] += 1
            else:
                listed[arm] = not listed[arm] or not listed.any()
            value = counts[arm] if listed[arm] else _compiled_clucb_pac._ABSENT
            _compiled_lucb._tree_set(smallest, multiplicity, leaves, arm, value)
            if not listed.any():
                continue
            # independently: the listed arms of the smallest listed count, in increasing order
            tied = np.flatnonzero(listed & (counts == counts[listed].min()))
            assert (smallest[1], multiplicity[1]) == (counts[listed].min(), tied.size)
            for rank in range(tied.size):  # a uniform u with floor(u c) = rank
                uniform = (rank + 0.5) / tied.size
                assert _compiled_lucb._tree_pick(smallest, multiplicity, leaves, uniform) == tied[rank]
