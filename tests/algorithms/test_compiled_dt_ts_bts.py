"""The compiled loops of DT-TS and BTS stopped by the Chernoff statistic against the engine's numpy loop, their twin:
the same records (stopping times, recommendations, stop or cap, counts, steps) and DT-TS's solver diagnostics, bit for
bit, on Gaussian problems with k = 1 and k = K - 1, unequal variances, several confidence levels, both built-in
thresholds, the sample cap reached, every hand-back of the loops taken (reward buffers, uniforms, the threshold
table), any number of DT-TS lanes, and posterior samples tied across the top-k boundary (DT-TS's fallback to its
previous allocation, BTS's sum-of-squares fallback) with tied arg maxes; and the cases they leave to the numpy
loop. The numpy loop runs with ``compiled_kernels(False)``: its KKT-Tracking is the numpy
:func:`allocopt.topk._tracking.kkt_tracking_batch`, independent of the compiled kernels under test."""

from __future__ import annotations

import numpy as np
import pytest

from allocopt import TopKProblem
from allocopt.algorithms import BTS, DTTS, _compiled_bts, _compiled_dt_ts, rewards
from allocopt.algorithms._compiled import AVAILABLE, compiled_kernels
from allocopt.algorithms.engine import run_replications
from allocopt.algorithms.protocol import RuleContext
from allocopt.algorithms.stopping import HeuristicThreshold, TheoreticalThreshold
from twin_problems import GAUSSIAN_PROBLEMS, assert_same_records

pytestmark = pytest.mark.skipif(not AVAILABLE, reason="numba is not installed")

PROBLEMS = GAUSSIAN_PROBLEMS
RULES = {"dt-ts": DTTS, "bts": BTS}


def records(problem: TopKProblem, rule, *, compiled: bool, deltas=(0.1, 0.01), threshold=None,
            max_samples: int = 2000, n_runs: int = 4):
    context = RuleContext(problem.n_arms, problem.k, problem.family, np.asarray(problem.dispersion))
    with compiled_kernels(compiled):
        return run_replications(problem, rule, 7, np.arange(2, 2 + n_runs), checkpoints=np.asarray(deltas, dtype=float),
                                threshold=threshold or HeuristicThreshold(), max_samples=max_samples, context=context)


def assert_same(problem: TopKProblem, rule, **options):
    fast = records(problem, rule, compiled=True, **options)
    slow = records(problem, rule, compiled=False, **options)
    assert_same_records(fast, slow)
    assert sorted(fast.diagnostics) == sorted(slow.diagnostics)
    for name in slow.diagnostics:
        assert np.array_equal(fast.diagnostics[name], slow.diagnostics[name]), name
    return slow


@pytest.mark.parametrize("rule", sorted(RULES))
@pytest.mark.parametrize("name", sorted(PROBLEMS))
def test_the_compiled_loops_keep_the_numpy_loop_records(rule, name):
    # DT-TS's numpy twin solves 100 KKT-Tracking iterations in numpy at every step: 2 runs of it, 4 of BTS
    slow = assert_same(PROBLEMS[name], RULES[rule](), n_runs=2 if rule == "dt-ts" else 4)
    if rule == "dt-ts":  # one solve per step
        assert np.array_equal(slow.diagnostics["solver_calls"], slow.pulls.sum(axis=1) - PROBLEMS[name].n_arms)


@pytest.mark.parametrize("rule", sorted(RULES))
def test_the_theoretical_threshold_and_the_sample_cap(rule):
    # alpha = 1.2 and C = 3: a larger threshold, so that the cap of 400 pulls stops some levels first
    problem = PROBLEMS["equal means, unequal variances"]
    slow = assert_same(problem, RULES[rule](), threshold=TheoreticalThreshold(1.2, 3.0), max_samples=400)
    assert not slow.stopped.all()  # the premise: the cap is reached at some level


@pytest.mark.parametrize("lanes", [1, 3, 8])
def test_dt_ts_records_do_not_depend_on_the_lanes(monkeypatch, lanes):
    # 7 rows: with 3 or 8 lanes some lanes are empty or are refilled with new rows while the others run
    monkeypatch.setattr(_compiled_dt_ts, "LANES", lanes)
    assert_same(PROBLEMS["equal means, unequal variances"], DTTS(), n_runs=7)


@pytest.mark.parametrize("rule", sorted(RULES))
def test_every_hand_back_of_the_loops(count_hand_backs, monkeypatch, rule):
    # 3 steps of uniforms per refill, a threshold table of 16 pulls and reward buffers of 8 rewards (the buffer
    # holds at most BUFFER_VALUES rewards for all rows and arms, and at least 8 per stream): the rows leave the
    # compiled code for more uniforms, a longer table and more rewards many times within a few hundred pulls
    module = {"dt-ts": _compiled_dt_ts, "bts": _compiled_bts}[rule]
    monkeypatch.setattr(module, "UNIFORM_STEPS", 3)
    monkeypatch.setattr(rewards, "BUFFER_VALUES", 8)
    monkeypatch.setattr(_compiled_loop_table_module(), "FIRST_TABLE_SIZE", 16)
    hand_backs = count_hand_backs(_compiled_dt_ts, "threshold_table")
    assert_same(PROBLEMS["k = 1"], RULES[rule](), deltas=(0.1,), max_samples=3000, n_runs=2)
    assert min(hand_backs.values()) >= 2, hand_backs


def _compiled_loop_table_module():
    from allocopt.algorithms import _compiled_uniform

    return _compiled_uniform  # threshold_table's FIRST_TABLE_SIZE


class _MedianEveryThirdStep:
    """A policy stream whose uniforms are a real generator's, except that every third step's K posterior uniforms
    are 1/2 (after the engine adds half an ulp): the posterior sample is then the vector of empirical means."""

    def __init__(self, seed: int, per_step: int):
        self.generator = np.random.default_rng(seed)
        self.per_step = per_step
        self.drawn = 0

    def random(self, size: int) -> np.ndarray:
        values = self.generator.random(size)
        index = self.drawn + np.arange(size)
        median = ((index // self.per_step) % 3 == 0) & (index % self.per_step < self.per_step - 1)
        values[median] = 0.5 - 2.0 ** -54  # + _HALF_ULP = 0.5 exactly, and ndtri(0.5) = 0
        self.drawn += size
        return values


@pytest.mark.parametrize("rule", sorted(RULES))
def test_samples_tied_across_the_boundary_and_tied_arg_maxes(monkeypatch, rule):
    # Rewards 1, 0.5, 0.5, 0 every time (arm 1's mean 0.6 is rewarded 0.5; k = 2): the empirical means tie across the
    # boundary at every step, so the statistic is 0 and every run reaches the cap; at every third step the posterior
    # sample is the means, tied across the boundary: DT-TS keeps its previous allocation (a fallback), BTS's ratios
    # are 0/0 and it compares the sums of squares of the counts. The first steps' lags t psi - N are all tied
    # (psi uniform, equal counts)
    problem = TopKProblem([1.0, 0.6, 0.5, 0.0], 2, variance=0.25)
    monkeypatch.setattr(rewards, "draw_rewards", lambda family, mean, dispersion, size, generator:
                        np.full(size, 0.5 if mean == 0.6 else float(mean)))
    monkeypatch.setattr(rewards, "policy_generator",
                        lambda entropy, replication: _MedianEveryThirdStep(int(replication), problem.n_arms + 1))
    slow = assert_same(problem, RULES[rule](), max_samples=600, n_runs=4)
    assert not slow.stopped.any()  # the premise: the cap, at every level
    if rule == "dt-ts":  # the premise: fallbacks at every third step, solves at the others
        calls, fallbacks = slow.diagnostics["solver_calls"], slow.diagnostics["solver_fallbacks"]
        assert np.array_equal(fallbacks, (calls + 2) // 3)


def test_the_loops_are_used_only_where_they_apply():
    # Gaussian arms with a built-in threshold: the hooks run the compiled loops; a callable threshold, another
    # family, a subclass, DT-TS's exact solver or a fixed budget: None, the engine's numpy loop
    problem = PROBLEMS["k = 1"]
    context = RuleContext(4, 1, problem.family, np.asarray(problem.dispersion))
    counts, sums, t = np.ones((1, 4), dtype=np.int64), np.zeros((1, 4)), np.full(1, 4, dtype=np.int64)

    def hook(rule, threshold, rule_context):
        return rule.compiled_glr_rows(rule_context, np.array([0.1]), threshold, 10, counts, sums, t, None, None)

    class SubDTTS(DTTS):
        pass

    class SubBTS(BTS):
        pass

    bernoulli = TopKProblem([0.9, 0.5, 0.4, 0.1], 1, family="bernoulli")
    budget = RuleContext(4, 1, problem.family, np.asarray(problem.dispersion), budget=100)
    for rule, subclass in ((DTTS(), SubDTTS()), (BTS(), SubBTS())):
        assert hook(rule, lambda pulls, delta: np.log(1.0 / delta) + 0.0 * pulls, context) is None
        assert hook(subclass, HeuristicThreshold(), context) is None
        assert hook(rule, HeuristicThreshold(), RuleContext(4, 1, bernoulli.family, np.ones(4))) is None
        assert hook(rule, HeuristicThreshold(), budget) is None
    assert hook(DTTS(solver="exact"), HeuristicThreshold(), context) is None


def test_numpy_sum_is_numpy_s_sum():
    # numpy's pairwise summation: lengths below 8, one block of 8 to 128 with a rest, and split blocks; values of
    # widely different magnitudes and signs, so that another order of additions gives other numbers
    rng = np.random.default_rng(5)
    from allocopt.algorithms._compiled_bts import _kernel

    _kernel()
    for length in (0, 1, 4, 7, 8, 15, 16, 19, 100, 128, 129, 300, 1000):
        values = np.exp(rng.normal(size=(20, length)) * 10.0) * rng.choice([-1.0, 1.0], size=(20, length))
        for row in values:
            assert _compiled_bts.numpy_sum(row, 0, length) == row.sum(), length
        assert np.array_equal(values.sum(axis=1), [_compiled_bts.numpy_sum(row, 0, length) for row in values])
