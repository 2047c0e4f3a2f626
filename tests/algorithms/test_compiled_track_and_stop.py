"""The compiled loop of Track-and-Stop (Gaussian arms, D-tracking, the exact solver at every step) against the engine's
numpy loop, its twin: the same records (stopping times, recommendations, stop or cap, counts, steps) and the solver
diagnostics (fallbacks, calls), bit for bit, on Gaussian problems with k = 1 and k = K - 1, unequal variances, tied
means, several confidence levels, both built-in thresholds, the sample cap reached, forced exploration, several batch
sizes, every hand-back of the loop taken (reward buffers, uniforms, the threshold table, and the rows whose double
star is not accepted, solved by the numpy solver), empirical means tied across the top-k boundary (invalid instances:
fallbacks) and uncertified double stars (a tolerance of 0: fallbacks); and the cases it leaves to the numpy loop.
The numpy loop runs with ``compiled_kernels(False)``: its double star is the numpy twin
(:func:`allocopt.topk._batch_gaussian._double_star_numpy`), independent of the compiled kernels under test."""

from __future__ import annotations

import numpy as np
import pytest

from allocopt import TopKProblem
from allocopt.algorithms import _compiled_track_and_stop, _compiled_uniform, rewards, track_and_stop
from allocopt.algorithms._compiled import AVAILABLE, compiled_kernels
from allocopt.algorithms.engine import run_replications
from allocopt.algorithms.protocol import RuleContext
from allocopt.algorithms.stopping import HeuristicThreshold, TheoreticalThreshold
from allocopt.algorithms.track_and_stop import TrackAndStop
from allocopt.topk.certificate import certified_gap
from twin_problems import GAUSSIAN_PROBLEMS, assert_same_records

pytestmark = pytest.mark.skipif(not AVAILABLE, reason="numba is not installed")

PROBLEMS = {
    **GAUSSIAN_PROBLEMS,
    # top and bottom arms in two tight clusters: the double star of these means fails its check (the test below
    # shows it), so that rows near them are handed back to the numpy solver; with the levels CLUSTERED_DELTAS the runs
    # last long enough for the clusters to form in the empirical means
    "clustered": TopKProblem([1.0, 0.98, 0.0, -0.02, -0.1], 2, variance=0.25),
}
CLUSTERED_DELTAS = (0.01, 1e-30)


def records(problem: TopKProblem, rule, *, compiled: bool, deltas=(0.1, 0.01), threshold=None,
            max_samples: int = 1000, n_runs: int = 4):
    context = RuleContext(problem.n_arms, problem.k, problem.family, np.asarray(problem.dispersion))
    with compiled_kernels(compiled):
        return run_replications(problem, rule, 7, np.arange(2, 2 + n_runs), checkpoints=np.asarray(deltas, dtype=float),
                                threshold=threshold or HeuristicThreshold(), max_samples=max_samples, context=context)


def assert_same(problem: TopKProblem, rule=None, **options):
    """The compiled and the numpy loop's records, compared; returns the numpy loop's records and the compiled loop's
    count of rows handed back to the numpy solver."""
    rule = rule or TrackAndStop()
    solve, hand_backs = track_and_stop.solve_allocations, [0]
    loop, loops = _compiled_track_and_stop.run_track_and_stop_rows, [0]

    def counted(context, means, *args):  # called by the compiled loop only for the rows it hands back
        hand_backs[0] += means.shape[0]
        return solve(context, means, *args)

    def counted_loop(*args):
        loops[0] += 1
        return loop(*args)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(track_and_stop, "solve_allocations", counted)
        patch.setattr(_compiled_track_and_stop, "run_track_and_stop_rows", counted_loop)
        fast = records(problem, rule, compiled=True, **options)
    assert loops[0] == 1  # the batch ran in the compiled loop
    slow = records(problem, rule, compiled=False, **options)
    assert_same_records(fast, slow)
    assert sorted(fast.diagnostics) == sorted(slow.diagnostics) == ["solver_calls", "solver_fallbacks"]
    for name in slow.diagnostics:
        assert np.array_equal(fast.diagnostics[name], slow.diagnostics[name]), name
    # one solve per step of the rule: the pulls after the initial one of each arm
    assert np.array_equal(slow.diagnostics["solver_calls"], slow.pulls.sum(axis=1) - problem.n_arms)
    return slow, hand_backs[0]


def test_the_clustered_instance_fails_the_double_star_check():
    # the premise of the hand-back tests: solve_topk_batch does not accept the double star of these means
    from allocopt.topk._exact.gaussian_star import gaussian_double_star

    theta = np.asarray(PROBLEMS["clustered"].theta)
    assert not gaussian_double_star(theta[None, :], np.array([0.25]), 2).accepted[0]


@pytest.mark.parametrize("name", sorted(PROBLEMS))
def test_the_compiled_loop_keeps_the_numpy_loop_records(name):
    slow, hand_backs = assert_same(PROBLEMS[name], **({"deltas": CLUSTERED_DELTAS} if name == "clustered" else {}))
    if name == "clustered":  # the premise: some rows' double stars are not accepted
        assert hand_backs > 0


@pytest.mark.parametrize("n_runs", [1, 5])
def test_batch_sizes_and_hand_backs_to_the_numpy_solver(n_runs):
    # the rows handed back at one call of the kernel are solved together; a row's answer does not depend on them
    slow, hand_backs = assert_same(PROBLEMS["clustered"], n_runs=n_runs, deltas=CLUSTERED_DELTAS, max_samples=1500)
    assert hand_backs > 0


def test_the_theoretical_threshold_and_the_sample_cap():
    # alpha = 1.2 and C = 3: a larger threshold, so that the cap of 400 pulls stops some levels first
    slow, _ = assert_same(PROBLEMS["equal means, unequal variances"], threshold=TheoreticalThreshold(1.2, 3.0),
                          max_samples=400)
    assert not slow.stopped.all()  # the premise: the cap is reached at some level


def test_forced_exploration(monkeypatch):
    # an arm far below the others has a small optimal share, so its count falls below sqrt(t) - K/2 and it is pulled
    # first (D-tracking's forced exploration)
    problem = TopKProblem([1.0, 0.9, 0.8, 0.7, -3.0], 2, variance=0.25)
    forced_steps = [0]
    select = TrackAndStop.select_batch

    def counting(self, context, view, state, uniforms):
        forced_steps[0] += int((view.counts < (np.sqrt(view.t) - context.n_arms / 2)[:, None]).any(axis=1).sum())
        return select(self, context, view, state, uniforms)

    monkeypatch.setattr(TrackAndStop, "select_batch", counting)
    assert_same(problem, n_runs=3, max_samples=1000)
    assert forced_steps[0] > 0  # the premise, counted in the numpy loop


def test_every_hand_back_of_the_loop(count_hand_backs, monkeypatch):
    # 3 uniforms per refill and a threshold table of 16 pulls: the rows leave the compiled code for more uniforms and
    # a longer table many times, for reward buffers (buffers of 16 rewards instead of the engine's few hundred: the
    # block size changes no reward), and for the numpy solver (the clustered instance)
    monkeypatch.setattr(_compiled_track_and_stop, "UNIFORM_STEPS", 3)
    monkeypatch.setattr(rewards.RewardStreams.__init__, "__defaults__", (16,))
    monkeypatch.setattr(_compiled_uniform, "FIRST_TABLE_SIZE", 16)
    counts = count_hand_backs(_compiled_track_and_stop, "threshold_table")
    _, hand_backs = assert_same(PROBLEMS["clustered"], deltas=CLUSTERED_DELTAS, max_samples=3000, n_runs=3)
    assert min(counts.values()) >= 2 and hand_backs >= 2, (counts, hand_backs)


def _constant_rewards(monkeypatch, reward_of_mean):
    monkeypatch.setattr(rewards, "draw_rewards", lambda family, mean, dispersion, size, generator:
                        np.full(size, reward_of_mean(float(mean))))


def test_means_tied_across_the_boundary_and_tied_arg_maxes(monkeypatch):
    # Rewards 1, 0.5, 0.5, 0 every time (arm 1's mean 0.6 is rewarded 0.5; k = 2): the empirical means tie across the
    # boundary at every step, an invalid instance for the solver, so every solve falls back to the uniform allocation
    # and the statistic is 0 (every run reaches the cap); t psi_a - N_a ties whenever the counts are equal
    problem = TopKProblem([1.0, 0.6, 0.5, 0.0], 2, variance=0.25)
    _constant_rewards(monkeypatch, lambda mean: 0.5 if mean == 0.6 else mean)
    slow, hand_backs = assert_same(problem, max_samples=300)
    assert not slow.stopped.any()  # the premises: the cap at every level, a fallback at every solve
    assert np.array_equal(slow.diagnostics["solver_fallbacks"], slow.diagnostics["solver_calls"])
    assert hand_backs == 0


def test_means_tied_inside_the_bottom_arms_with_unequal_variances(monkeypatch):
    # Rewards equal to the means: the empirical means are the means at every step, two bottom arms tied with unequal
    # variances (the solver's stable order of the arms decides which variance goes where); the clustered means of
    # equal variances: every step is handed back to the numpy solver (their double star fails its check)
    _constant_rewards(monkeypatch, lambda mean: mean)
    slow, hand_backs = assert_same(TopKProblem([1.0, 0.6, 0.5, 0.5, 0.0], 2, variance=[0.25, 1.0, 0.5, 0.3, 2.0]),
                                   max_samples=400)
    assert hand_backs == 0 and slow.diagnostics["solver_fallbacks"].sum() == 0
    slow, hand_backs = assert_same(PROBLEMS["clustered"], max_samples=500)
    assert hand_backs == slow.diagnostics["solver_calls"].sum() > 0


@pytest.mark.twin
def test_uncertified_double_stars_fall_back():
    # a certified gap includes the rounding allowance 16 eps (|bound| + |value|), about 32 eps = 7.1e-15 relative to
    # the value, so with tol = 0 no solve is certified ("not_certified"): every solve falls back, in both loops
    slow, _ = assert_same(PROBLEMS["k = K - 1"], TrackAndStop(solver_options={"tol": 0.0}), max_samples=600)
    assert np.array_equal(slow.diagnostics["solver_fallbacks"], slow.diagnostics["solver_calls"])


@pytest.mark.twin
def test_double_stars_at_the_edge_of_the_tolerance_fall_back_in_part():
    # with tol = 7.6e-15 the solves whose bound exceeds the value by more than about 2 eps (relative) are not
    # certified, the others are: a decision on the last ulps of the double star's value, which numpy reaches with
    # its own exp and log and the compiled loop with the C library's (they differ on some CPUs, tests/tolerance.py),
    # so each loop is checked on its own
    rule = TrackAndStop(solver_options={"tol": 7.6e-15})
    for compiled in (True, False):
        run = records(PROBLEMS["k = K - 1"], rule, compiled=compiled, max_samples=600)
        assert 0 < run.diagnostics["solver_fallbacks"].sum() < run.diagnostics["solver_calls"].sum()


def test_the_compiled_gap_is_the_certificate_s():
    rng = np.random.default_rng(11)
    _compiled_track_and_stop._kernel()
    bound, value = np.exp(rng.normal(size=200)), np.exp(rng.normal(size=200))
    bound[:50] = value[:50] * (1.0 + 1e-12 * rng.random(50))  # near-equal, as at an optimum
    expected = certified_gap(bound, value)
    compiled = [_compiled_track_and_stop.scalar_certified_gap(b, v, 16 * np.finfo(float).eps, 1)
                for b, v in zip(bound, value)]
    assert np.array_equal(compiled, expected)


def test_the_loop_is_used_only_where_it_applies():
    # Gaussian arms, D-tracking, the exact solver with at most a tol, at every step, a built-in threshold: the hook
    # runs the compiled loop; anything else: None, the engine's numpy loop
    problem = PROBLEMS["k = 1"]
    context = RuleContext(4, 1, problem.family, np.asarray(problem.dispersion))
    counts, sums, t = np.ones((1, 4), dtype=np.int64), np.zeros((1, 4)), np.full(1, 4, dtype=np.int64)

    def hook(rule, threshold=HeuristicThreshold(), rule_context=context):
        return rule.compiled_glr_rows(rule_context, np.array([0.1]), threshold, 10, counts, sums, t, None, None)

    class SubTrackAndStop(TrackAndStop):
        pass

    bernoulli = TopKProblem([0.9, 0.5, 0.4, 0.1], 1, family="bernoulli")
    budget = RuleContext(4, 1, problem.family, np.asarray(problem.dispersion), budget=100)
    assert hook(TrackAndStop(), lambda pulls, delta: np.log(1.0 / delta) + 0.0 * pulls) is None
    assert hook(SubTrackAndStop()) is None
    assert hook(TrackAndStop(), rule_context=RuleContext(4, 1, bernoulli.family, np.ones(4))) is None
    assert hook(TrackAndStop(), rule_context=budget) is None
    for rule in (TrackAndStop(tracking="c"), TrackAndStop(update="geometric"), TrackAndStop(update=3),
                 TrackAndStop(solver="fwga"), TrackAndStop(solver_options={"tol": 1e-9, "warm_start": None})):
        assert hook(rule) is None
