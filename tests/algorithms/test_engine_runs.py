"""Runs of the engine: scalar-versus-batched conformance of every registered rule, reproducibility across
n_jobs, chunk sizes and joblib backends, user-defined rules, results and input errors."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass

import joblib
import numpy as np
import pytest
from scipy import stats

from allocopt import TopKProblem
from allocopt.testing.families import reference_family
from allocopt.algorithms import (POLICIES, KKTTS, Pull, RuleContext, TrackAndStop, Uniform, identify,
                                 identify_fixed_budget)
from allocopt.exceptions import InvalidArgumentError

SMALL = TopKProblem([1.0, 0.8, 0.5, 0.3, 0.0], k=2, variance=0.25)
FAMILY_PROBLEMS = {
    "gaussian-heteroscedastic": TopKProblem([1.0, 0.8, 0.5, 0.3, 0.0], k=2, variance=[0.25, 0.5, 0.3, 1.0, 0.2]),
    "bernoulli": TopKProblem([0.8, 0.7, 0.4, 0.3, 0.2], k=2, family="bernoulli"),
    "poisson": TopKProblem([3.0, 2.5, 1.0, 0.8, 0.3], k=2, family="poisson"),
    "exponential": TopKProblem([3.0, 2.5, 1.0, 0.8, 0.3], k=2, family="exponential"),
    "gamma": TopKProblem([3.0, 2.5, 1.0, 0.8, 0.3], k=2, family=reference_family("gamma")),
}


def _same(a, b):
    assert np.array_equal(a.stopping_times, b.stopping_times)
    assert np.array_equal(a.recommendations, b.recommendations)
    assert np.array_equal(a.pulls, b.pulls)
    assert np.array_equal(a.stopped, b.stopped)
    for name in a.diagnostics:
        assert np.array_equal(a.diagnostics[name], b.diagnostics[name])


# rules that solve an allocation problem at every step are slow: a short horizon, and the non-Gaussian
# families of the slowest one only in the slow suite
_SOLVING = {"track-and-stop": 60, "fwga-ts": 18, "dt-ts": 40}
# rules of the other settings have their own conformance tests: fixed budget only (test_elimination.py,
# test_optmai.py) and
# PAC or its fixed-budget conversion (test_adaptive_topk.py)
OTHER_SETTINGS = {"nsar", "sar", "successive-rejects", "sequential-halving", "adaptive-topk", "adaptive-topk-budget",
                  "clucb-pac", "clucb-pac-budget", "optmai"}


def _defined(name, family):
    """A rule runs on the families it is defined for (its ``families`` attribute, all by default)."""
    families = getattr(POLICIES[name](), "families", None)
    return families is None or FAMILY_PROBLEMS[family].family.name in families


CONFORMANCE_CASES = [
    pytest.param(name, family, marks=[pytest.mark.slow] if name == "fwga-ts" and family != "gaussian-heteroscedastic"
                 else [])
    for name in sorted(set(POLICIES) - OTHER_SETTINGS) for family in sorted(FAMILY_PROBLEMS) if _defined(name, family)
]


def _problem_for(name, family):
    """The family's instance, with k = 1 for best-arm rules (``max_k = 1``)."""
    problem = FAMILY_PROBLEMS[family]
    max_k = getattr(POLICIES[name](), "max_k", None)
    if max_k is not None and problem.k > max_k:
        return TopKProblem(problem.theta, max_k, family=problem.family)
    return problem


@pytest.mark.parametrize("name, family", CONFORMANCE_CASES)
def test_every_registered_rule_chooses_the_same_arms_scalar_and_batched(name, family):
    problem = _problem_for(name, family)
    cap = _SOLVING.get(name, 150)
    n_runs = {"track-and-stop": 3, "fwga-ts": 2, "dt-ts": 3}.get(name, 6)
    batched = identify(problem, name, delta=(0.1, 0.01), n_runs=n_runs, rng=3, max_samples=cap, chunk_size=2)
    scalar = identify(problem, name, delta=(0.1, 0.01), n_runs=n_runs, rng=3, max_samples=cap, chunk_size=3,
                      batched=False)
    _same(batched, scalar)


@pytest.mark.parametrize("rule", [TrackAndStop(tracking="c", update=3), TrackAndStop(update="geometric"),
                                  TrackAndStop(solver="kkt-tracking", solver_options={"iterations": 20}),
                                  KKTTS(kind="budget")])
def test_rule_variants_scalar_and_batched(rule):
    batched = identify(SMALL, rule, delta=0.05, n_runs=4, rng=8, max_samples=80)
    scalar = identify(SMALL, rule, delta=0.05, n_runs=4, rng=8, max_samples=80, batched=False)
    _same(batched, scalar)


def test_results_do_not_depend_on_n_jobs_chunk_size_or_backend():
    reference = identify(SMALL, "kkt-ts", n_runs=12, rng=21, chunk_size=12, n_jobs=1)
    _same(reference, identify(SMALL, "kkt-ts", n_runs=12, rng=21, chunk_size=5, n_jobs=2))
    with joblib.parallel_config(backend="threading"):
        _same(reference, identify(SMALL, "kkt-ts", n_runs=12, rng=21, chunk_size=3, n_jobs=2))
    _same(reference, identify(SMALL, "kkt-ts", n_runs=12, rng=21, chunk_size=1, batched=False))


def test_results_on_a_dask_local_cluster_match():
    distributed = pytest.importorskip("dask.distributed")
    reference = identify(SMALL, "uniform", delta=0.1, n_runs=6, rng=4, chunk_size=6)
    with distributed.LocalCluster(n_workers=1, threads_per_worker=2, processes=False, dashboard_address=None) as cluster:
        with distributed.Client(cluster), joblib.parallel_config(backend="dask"):
            result = identify(SMALL, "uniform", delta=0.1, n_runs=6, rng=4, chunk_size=2)
    _same(reference, result)


def test_common_random_numbers_pair_the_rules():
    # replication i's first K rewards (the initial pulls) are the same under every rule, so with k = 1 and two
    # arms whose initial gap already exceeds the threshold both rules stop at t = K with the same recommendation
    problem = TopKProblem([10.0, 0.0], k=1, variance=0.01)
    a = identify(problem, "uniform", delta=0.1, n_runs=5, rng=2)
    b = identify(problem, "kkt-ts", delta=0.1, n_runs=5, rng=2)
    assert np.all(a.stopping_times == 2) and np.array_equal(a.recommendations, b.recommendations)


@dataclass(frozen=True)
class GreedyGap:
    """A user-defined rule: pull the less-pulled arm of the pair attaining the Chernoff statistic."""

    name = "greedy-gap"

    def uniforms_per_step(self, context):
        return 0

    def init_state(self, context, n_runs):
        return {}

    def select(self, context, view, state, uniforms):
        i, j = view.pair_top, view.pair_bottom
        return int(i) if view.counts[i] <= view.counts[j] else int(j)


@dataclass(frozen=True)
class BlockRoundRobin:
    """A user-defined block rule: pull the least-pulled arm 3 times (ties to the lowest index, deterministic)."""

    name = "block-round-robin"
    max_k = 1

    def uniforms_per_step(self, context):
        return 0

    def init_state(self, context, n_runs):
        return {}

    def select(self, context, view, state, uniforms):
        return Pull(int(np.argmin(view.counts)), 3)


def test_a_user_defined_rule_runs_in_identify_and_identify_fixed_budget():
    result = identify(SMALL, GreedyGap(), delta=(0.1, 0.01), n_runs=10, rng=1)
    assert result.policy == "greedy-gap" and result.stopping_times.shape == (10, 2)
    assert result.correct.mean() >= 0.8
    budget = identify_fixed_budget(SMALL, GreedyGap(), [5, 50, 400], n_runs=10, rng=1)
    assert budget.error_rate.shape == (3,) and budget.error_rate[-1] <= budget.error_rate[0]


def test_block_pulls_respect_the_budgets_and_the_cap():
    problem = TopKProblem([1.0, 0.5, 0.0], k=1, variance=0.25)
    budget = identify_fixed_budget(problem, BlockRoundRobin(), [4, 10, 31], n_runs=3, rng=0)
    assert np.all(budget.pulls.sum(axis=1) == 31)
    capped = identify(problem, BlockRoundRobin(), delta=1e-9, n_runs=2, rng=0, max_samples=20)
    assert np.all(capped.pulls.sum(axis=1) == 20) and not capped.stopped.any()
    assert capped.status == "sample_cap_reached" and not capped.success
    with pytest.raises(InvalidArgumentError, match="'policy' parameter of identify.*k <= 1"):
        identify(SMALL, BlockRoundRobin(), n_runs=1)


def test_summary_and_strict_json():
    result = identify(SMALL, "kkt-ts", n_runs=30, rng=5)
    rows = result.summary()
    assert [row.delta for row in rows] == [0.1, 0.01, 0.001]
    times = result.stopping_times[:, 1].astype(float)
    assert rows[1].mean_stopping_time == pytest.approx(times.mean())
    assert rows[1].standard_error == pytest.approx(times.std(ddof=1) / math.sqrt(30))
    errors = int((~result.correct[:, 1]).sum())
    high = 1.0 if errors == 30 else stats.beta.ppf(0.975, errors + 1, 30 - errors)  # Clopper-Pearson
    assert rows[1].error_high == pytest.approx(high)
    # T* kl(delta, 1-delta) with kl the Bernoulli divergence, T* = 1/Gamma* from the exact solver
    import allocopt

    t_star = 1.0 / allocopt.solve_topk(SMALL).value
    kl = 0.01 * math.log(0.01 / 0.99) + 0.99 * math.log(0.99 / 0.01)
    assert rows[1].lower_bound == pytest.approx(t_star * kl)
    assert rows[1].ratio == pytest.approx(times.mean() / (t_star * math.log(100)))
    payload = result.to_dict()
    json.dumps(payload, allow_nan=False)
    assert payload["status"] == "completed" and payload["success"] is True
    assert result.elapsed == result.time > 0
    assert "E[tau]" in result.format_summary()


def test_pulls_are_counts_at_the_last_stop():
    result = identify(SMALL, "uniform", n_runs=8, rng=9)
    assert np.array_equal(result.pulls.sum(axis=1), result.stopping_times[:, -1])
    assert np.all(np.diff(result.stopping_times, axis=1) >= 0)


def test_fixed_budget_from_one_anytime_run_matches_separate_runs():
    budgets = [10, 60, 200]
    joint = identify_fixed_budget(SMALL, KKTTS(kind="budget"), budgets, n_runs=20, rng=6)
    for column, budget in enumerate(budgets):
        alone = identify_fixed_budget(SMALL, KKTTS(kind="budget"), budget, n_runs=20, rng=6)
        assert np.array_equal(alone.recommendations[:, 0], joint.recommendations[:, column])
    json.dumps(joint.to_dict(), allow_nan=False)
    assert joint.summary()[0].budget == 10


@pytest.mark.parametrize("kwargs, match", [
    (dict(policy="kkt"), "'policy' parameter of identify.*'fwga-ts'.*'kkt-ts'.*'track-and-stop'.*'uniform'"),
    (dict(delta=1.0), "'delta' parameter of identify.*open interval \\(0, 1\\).*1.0"),
    (dict(delta=(0.1, 0.0)), "'delta' parameter of identify"),
    (dict(n_runs=0), "'n_runs' parameter of identify.*Got 0"),
    (dict(max_samples=4), "'max_samples' parameter of identify.*>= 5.*Got 4"),
    (dict(threshold="tight"), "'threshold' parameter of identify"),
])
def test_bad_input_is_named(kwargs, match):
    arguments = dict(policy="uniform")
    arguments.update(kwargs)
    policy = arguments.pop("policy")
    with pytest.raises(InvalidArgumentError, match=match):
        identify(SMALL, policy, **arguments)


def test_bad_budget_and_rule_options_are_named():
    with pytest.raises(InvalidArgumentError, match="'budgets' parameter of identify_fixed_budget.*>= 5.*Got \\[3, 10\\]"):
        identify_fixed_budget(SMALL, "uniform", [3, 10], n_runs=2)
    with pytest.raises(InvalidArgumentError, match="'n_runs' parameter of identify_fixed_budget"):
        identify_fixed_budget(SMALL, "uniform", [10], n_runs=0)
    with pytest.raises(InvalidArgumentError, match="'tracking' parameter of TrackAndStop"):
        TrackAndStop(tracking="x")
    with pytest.raises(InvalidArgumentError, match="'update' parameter of TrackAndStop"):
        TrackAndStop(update=0)
    with pytest.raises(InvalidArgumentError, match="'kind' parameter of KKTTS"):
        KKTTS(kind="fast")
    with pytest.raises(InvalidArgumentError, match="'problem' parameter of identify"):
        identify([1, 0], "uniform")


def test_track_and_stop_counts_fallbacks_at_boundary_ties():
    # bernoulli arms with equal means: empirical means tie across the boundary often, the solver is skipped
    problem = TopKProblem([0.5, 0.5 - 1e-9, 0.2], k=1, family="bernoulli")
    result = identify(problem, TrackAndStop(update="every"), delta=0.1, n_runs=3, rng=1, max_samples=30)
    assert result.diagnostics["solver_fallbacks"].sum() > 0
    assert np.all(result.diagnostics["solver_fallbacks"] <= result.diagnostics["solver_calls"])


class _PythonTrackAndStop(TrackAndStop):
    """Track-and-Stop without its compiled step: every step batched in Python (solve_topk_batch on all runs)."""

    def compiled_step(self, context):
        return None


@pytest.mark.twin
@pytest.mark.parametrize("problem", [
    TopKProblem([0.6, 0.5, 0.5, 0.4], 1, family="bernoulli"),  # tied means, k = 1
    TopKProblem([0.6, 0.6, 0.5, 0.3], 3, family="bernoulli"),  # k = K - 1
    TopKProblem([0.99, 0.97, 0.5, 0.02, 0.01], 2, family="bernoulli"),  # empirical means clipped at 0 and 1
    TopKProblem([0.3, 0.2, 0.1, 0.05], 2, family="poisson"),  # empirical means of 0 clipped
    TopKProblem([5.0, 4.0, 3.5, 3.0, 1.0, 0.2], 3, family="exponential"),
    FAMILY_PROBLEMS["gamma"],  # a dispersion other than one
], ids=["bernoulli-ties", "bernoulli-k=K-1", "bernoulli-edges", "poisson", "exponential", "gamma"])
def test_track_and_stop_compiled_on_other_families_is_the_batched_python_step(problem):
    # the compiled step (the batch's double star on distinct means or tie groups, deferring the rest to Python)
    # against the Python step that solves every run's row with solve_topk_batch: the same arrays, bit for bit
    compiled = identify(problem, TrackAndStop(), delta=(0.1, 0.01), n_runs=12, rng=7, max_samples=20000)
    python = identify(problem, _PythonTrackAndStop(), delta=(0.1, 0.01), n_runs=12, rng=7, max_samples=20000)
    _same(compiled, python)
    dispersion = np.broadcast_to(np.asarray(problem.dispersion, dtype=float), (problem.n_arms,)).copy()
    assert TrackAndStop().compiled_step(RuleContext(problem.n_arms, problem.k, problem.family, dispersion,
                                                    delta=0.1)) is not None


@pytest.mark.twin
@pytest.mark.parametrize("options", [{"tracking": "c"}, {"update": "geometric"}, {"tracking": "c", "update": 3}],
                         ids=["c-tracking", "geometric", "c-tracking-every-3"])
@pytest.mark.parametrize("problem", [
    TopKProblem([1.0, 0.8, 0.5, 0.2], 2, variance=0.25),
    TopKProblem([0.6, 0.5, 0.5, 0.4], 1, family="bernoulli"),  # tied means, k = 1
    TopKProblem([0.3, 0.2, 0.1, 0.05], 2, family="poisson"),  # empirical means of 0 clipped
    FAMILY_PROBLEMS["gamma"],  # a dispersion other than one
], ids=["gaussian", "bernoulli-ties", "poisson", "gamma"])
def test_track_and_stop_options_compiled_are_the_batched_python_step(problem, options):
    # C-tracking's running sum of projected allocations, and solves at a geometric or periodic schedule, in the
    # compiled step (before, they ran in Python): the same arrays and solver counts as the Python step
    rule, python_rule = TrackAndStop(**options), _PythonTrackAndStop(**options)
    dispersion = np.broadcast_to(np.asarray(problem.dispersion, dtype=float), (problem.n_arms,)).copy()
    assert rule.compiled_step(RuleContext(problem.n_arms, problem.k, problem.family, dispersion, delta=0.1)) is not None
    compiled = identify(problem, rule, delta=(0.1, 0.01), n_runs=6, rng=7, max_samples=20000)
    python = identify(problem, python_rule, delta=(0.1, 0.01), n_runs=6, rng=7, max_samples=20000)
    _same(compiled, python)
    for name in ("solver_calls", "solver_fallbacks"):
        assert np.array_equal(compiled.diagnostics[name], python.diagnostics[name]), name
