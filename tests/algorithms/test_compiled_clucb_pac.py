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
    fast_pac = pac_identify(problem, CLUCBPAC(), epsilon=0.05, delta=0.05, n_runs=5, rng=6, chunk_size=2)
    with compiled_kernels(False):
        slow_pac = pac_identify(problem, CLUCBPAC(), epsilon=0.05, delta=0.05, n_runs=5, rng=6)
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
