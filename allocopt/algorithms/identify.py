r"""Runners: fixed-confidence and fixed-budget identification experiments over many replications.

Replications go through :func:`allocopt.simulate.monte_carlo` in chunks (vectorised within a chunk); the
outcome of replication ``i`` depends only on the root entropy and ``i`` (common random numbers, see
:mod:`allocopt.algorithms.engine.rewards`), never on ``n_jobs``, the chunk size, the joblib backend or batching.
"""

from __future__ import annotations

import math
import time
from typing import Any

import numpy as np

from .._rng import RandomLike, root_entropy
from .._validation import as_bool, as_float_vector, as_int, fail
from ..exceptions import AllocoptError
from ..simulate import binomial_confidence_interval, check_n_jobs, monte_carlo, worker_count
from ..topk.problem import TopKProblem
from .engine.run import RunRecords, run_replications
from .engine.protocol import RuleContext, get_policy, policy_name, rule_traits
from .results import FixedBudgetResult, IdentificationResult
from .engine.stopping import get_threshold

__all__ = ["identify", "identify_fixed_budget", "DEFAULT_MAX_SAMPLES"]

DEFAULT_MAX_SAMPLES = 10**6


def _check_problem(problem, func: str) -> TopKProblem:
    if not isinstance(problem, TopKProblem):
        fail(func, "problem", "a TopKProblem (true means, k and family)", problem)
    return problem


def _check_rule(rule, problem: TopKProblem, func: str) -> None:
    traits = rule_traits(rule)
    max_k = traits.max_k
    if max_k is not None and problem.k > max_k:
        fail(func, "policy", f"a rule that supports k = {problem.k} ({policy_name(rule)} needs k <= {max_k})", rule)
    families = traits.families
    if families is not None and problem.family.name not in families:
        fail(func, "policy", f"a rule defined for the {problem.family.name} family ({policy_name(rule)} is defined "
             f"for {', '.join(families)} arms only)", rule)


def check_max_samples(rule, problem: TopKProblem, max_samples: int | None, func: str) -> int:
    """The sample cap: at least the rule's initial pulls of every arm (default :data:`DEFAULT_MAX_SAMPLES`)."""
    initial = int(rule_traits(rule).initial_pulls) * problem.n_arms
    if max_samples is None:
        max_samples = max(DEFAULT_MAX_SAMPLES, initial)
    return as_int(max_samples, func, "max_samples", low=initial,
                  requirement=f"an integer >= {initial} (the initial pulls of the K = {problem.n_arms} arms)")


def _chunk_size(n_runs: int, n_jobs: int | None, chunk_size: int | None, func: str) -> int:
    if chunk_size is not None:
        return as_int(chunk_size, func, "chunk_size", low=1)
    workers = worker_count(n_jobs, n_runs)
    n_chunks = workers * math.ceil(n_runs / (workers * 2048))
    return max(1, math.ceil(n_runs / n_chunks))


def _records_dtype(n_check: int, k: int, n_arms: int, diagnostic_names: tuple[str, ...]) -> np.dtype:
    fields = [("times", np.int64, (n_check,)), ("recommendations", np.int64, (n_check, k)),
              ("stopped", np.bool_, (n_check,)), ("pulls", np.int64, (n_arms,)), ("steps", np.int64)]
    fields += [(f"diagnostic_{name}", np.float64) for name in diagnostic_names]
    return np.dtype(fields)


def _chunk(generators, problem, rule, context, checkpoints, mode, threshold, max_samples, batched, func,
           diagnostic_names, statistic=None):
    """A monte_carlo chunk: the replication indices come from the generators' seed sequences."""
    seeds = [generator.bit_generator.seed_seq for generator in generators]
    entropy = int(seeds[0].entropy)
    replications = [int(seed.spawn_key[0]) for seed in seeds]
    records: RunRecords = run_replications(problem, rule, entropy, replications, checkpoints=checkpoints, mode=mode,
                                           threshold=threshold, max_samples=max_samples, context=context,
                                           batched=batched, func=func, statistic=statistic)
    out = np.zeros(len(replications), dtype=_records_dtype(checkpoints.shape[0], problem.k, problem.n_arms,
                                                           diagnostic_names))
    out["times"], out["recommendations"], out["stopped"], out["pulls"] = (
        records.times, records.recommendations, records.stopped, records.pulls)
    out["steps"] = records.replication_steps // max(1, len(replications))
    out["steps"][0] += records.replication_steps - out["steps"].sum()
    for name in diagnostic_names:
        if name in records.diagnostics:
            out[f"diagnostic_{name}"] = records.diagnostics[name]
    return out


def _run(problem, rule, *, entropy, n_runs, context, checkpoints, mode, threshold, max_samples, n_jobs, progress,
         chunk_size, batched, func, statistic=None):
    """Run the replications in chunks through monte_carlo; returns the structured outcomes and diagnostics.

    ``statistic`` replaces the engine's stopping statistic (see
    :func:`allocopt.algorithms.engine.run.run_replications`)."""
    names = rule_traits(rule).diagnostic_names
    size = _chunk_size(n_runs, n_jobs, chunk_size, func)
    mc = monte_carlo(_chunk, n_runs, rng=entropy, chunk_size=size, n_jobs=n_jobs, vectorized=True,
                     progress=progress, args=(problem, rule, context, checkpoints, mode, threshold, max_samples,
                                              batched, func, names, statistic))
    outcomes = mc.outcomes
    diagnostics = {name: outcomes[f"diagnostic_{name}"] for name in names}
    return outcomes, diagnostics


def _correct(recommendations: np.ndarray, problem: TopKProblem) -> np.ndarray:
    truth = np.sort(problem.top)
    return np.all(np.sort(recommendations, axis=-1) == truth, axis=-1)


def _characteristic_time(problem: TopKProblem) -> float:
    from ..topk.solve import solve_topk

    try:
        result = solve_topk(problem, method="exact")
    except AllocoptError:
        return math.nan
    return float(result.characteristic_time)


def identify(problem: TopKProblem, policy: Any, *, delta: Any = (0.1, 0.01, 0.001), n_runs: int = 1,
             rng: RandomLike = None, max_samples: int | None = None, threshold: Any = "heuristic",
             n_jobs: int | None = None, progress: bool = False, chunk_size: int | None = None,
             batched: bool = True) -> IdentificationResult:
    r"""Fixed-confidence top-k identification: run ``policy`` with the Chernoff stopping rule.

    Every run pulls each arm once, then follows the sampling rule; at each step it computes the Chernoff
    statistic :math:`Z_t` (:mod:`allocopt.algorithms.engine.stopping`) and records, for every confidence level
    :math:`\delta` whose threshold :math:`\beta(t, \delta)` is crossed for the first time, the stopping time
    and the empirical top-k. A run continues until every delta has stopped (so one run serves all deltas;
    delta-dependent rules and rules with their own stopping rule run one delta at a time) or ``max_samples``
    is reached.

    Parameters
    ----------
    problem : TopKProblem
        True means, k and family.
    policy : str or sampling rule
        A registered name (``"kkt-ts"``, ``"track-and-stop"``, ``"fwga-ts"``, ``"uniform"``, ...) or an object
        following :mod:`allocopt.algorithms.engine.protocol`.
    delta : float or sequence of float, default (0.1, 0.01, 0.001)
        Confidence levels in (0, 1).
    n_runs : int, default 1
    rng : None, int, SeedSequence or Generator
        Root of the replications' random streams.
    max_samples : int, optional
        Sample cap per run (at least K); default :data:`DEFAULT_MAX_SAMPLES`.
    threshold : {"heuristic", "theoretical"} or callable
        :math:`\beta(t, \delta)`; see :mod:`allocopt.algorithms.engine.stopping`.
    n_jobs : int, optional
        joblib workers (None defers to ``joblib.parallel_config``).
    progress : bool
        tqdm bar over chunks.
    chunk_size : int, optional
        Replications per chunk (vectorised together). Does not change the outcomes.
    batched : bool, default True
        Use the rule's ``select_batch``; False runs its scalar ``select`` one replication at a time (same
        outcomes, slower).

    Returns
    -------
    IdentificationResult

    Examples
    --------
    >>> from allocopt import TopKProblem
    >>> problem = TopKProblem([1.0, 0.8, 0.2, 0.0], k=2, variance=0.25)
    >>> result = identify(problem, "kkt-ts", delta=(0.1, 0.01), n_runs=50, rng=0)
    >>> result.stopping_times.shape, result.recommendations.shape
    ((50, 2), (50, 2, 2))
    >>> bool(result.correct.mean() > 0.9), result.status
    (True, 'completed')
    """
    func = "identify"
    started = time.perf_counter()
    problem = _check_problem(problem, func)
    rule = get_policy(policy, func)
    _check_rule(rule, problem, func)
    deltas = as_float_vector(delta, func, "delta") if np.ndim(delta) else as_float_vector([delta], func, "delta")
    if np.any((deltas <= 0) | (deltas >= 1)):
        fail(func, "delta", "a confidence level or a sequence of confidence levels in the open interval (0, 1)",
             delta)
    n_runs = as_int(n_runs, func, "n_runs", low=1)
    n_jobs = check_n_jobs(n_jobs, func)
    max_samples = check_max_samples(rule, problem, max_samples, func)
    beta = get_threshold(threshold, func, problem.k, problem.n_arms, deltas)
    batched = as_bool(batched, func, "batched")
    progress = as_bool(progress, func, "progress")
    entropy = root_entropy(rng, func)
    base = RuleContext(problem.n_arms, problem.k, problem.family, np.asarray(problem.dispersion))
    common = dict(entropy=entropy, n_runs=n_runs, mode="confidence", threshold=beta, max_samples=max_samples,
                  n_jobs=n_jobs, progress=progress, chunk_size=chunk_size, batched=batched, func=func)
    if rule_traits(rule).delta_dependent or rule_traits(rule).stopping == "rule":
        parts = [_run(problem, rule, context=RuleContext(base.n_arms, base.k, base.family, base.dispersion,
                                                         delta=float(level)),
                      checkpoints=np.array([level]), **common) for level in deltas]
        outcomes = parts[-1][0]
        times = np.concatenate([part[0]["times"] for part in parts], axis=1)
        recommendations = np.concatenate([part[0]["recommendations"] for part in parts], axis=1)
        stopped = np.concatenate([part[0]["stopped"] for part in parts], axis=1)
        diagnostics = parts[-1][1]
        steps = int(sum(part[0]["steps"].sum() for part in parts))
    else:
        outcomes, diagnostics = _run(problem, rule, context=base, checkpoints=deltas, **common)
        times, recommendations, stopped = outcomes["times"], outcomes["recommendations"], outcomes["stopped"]
        steps = int(outcomes["steps"].sum())
    correct = _correct(recommendations, problem)
    all_stopped = bool(stopped.all())
    name = policy_name(rule)
    message = (f"{n_runs} runs of {name}, all stopped" if all_stopped else
               f"{n_runs} runs of {name}: {int((~stopped).any(axis=1).sum())} reached max_samples = {max_samples} "
               f"before stopping at every delta")
    return IdentificationResult(
        status="completed" if all_stopped else "sample_cap_reached", message=message, method=name,
        time=time.perf_counter() - started, policy=name, deltas=deltas, threshold=getattr(beta, "name", "custom"),
        stopping_times=times, recommendations=recommendations, correct=correct, stopped=stopped,
        pulls=outcomes["pulls"], diagnostics=diagnostics, characteristic_time=_characteristic_time(problem),
        entropy=entropy, max_samples=max_samples, n_runs=n_runs, replication_steps=steps)


def identify_fixed_budget(problem: TopKProblem, policy: Any, budgets: Any, *, n_runs: int = 1,
                          rng: RandomLike = None, n_jobs: int | None = None, progress: bool = False,
                          chunk_size: int | None = None, batched: bool = True) -> FixedBudgetResult:
    r"""Fixed-budget top-k identification: the error rate of ``policy``'s empirical top-k at every budget.

    An anytime rule (the default of the protocol) serves every budget from one run: the empirical top-k is
    recorded when the run's sample count reaches each budget. A rule with ``anytime = False`` runs once per
    budget with the budget in its context. Block pulls are cut so that no budget is exceeded.

    Parameters
    ----------
    problem : TopKProblem
    policy : str or sampling rule
        For KKT-TS in this setting use ``KKTTS(kind="budget")`` (costs :math:`B_{ij}`).
    budgets : int or sequence of int
        Budgets, each at least K (the initial pulls).
    n_runs, rng, n_jobs, progress, chunk_size, batched
        As in :func:`identify`.

    Returns
    -------
    FixedBudgetResult

    Examples
    --------
    >>> from allocopt import TopKProblem
    >>> from allocopt.algorithms import KKTTS
    >>> problem = TopKProblem([1.0, 0.8, 0.2, 0.0], k=2, variance=0.25)
    >>> result = identify_fixed_budget(problem, KKTTS(kind="budget"), [8, 40, 200], n_runs=100, rng=0)
    >>> bool(result.error_rate[0] >= result.error_rate[-1])
    True
    """
    func = "identify_fixed_budget"
    started = time.perf_counter()
    problem = _check_problem(problem, func)
    rule = get_policy(policy, func)
    _check_rule(rule, problem, func)
    n_runs = as_int(n_runs, func, "n_runs", low=1)
    n_jobs = check_n_jobs(n_jobs, func)
    initial = int(rule_traits(rule).initial_pulls) * problem.n_arms
    requirement = f"an integer or a sequence of integers >= {initial} (the initial pulls of the K = {problem.n_arms} arms)"
    values = np.atleast_1d(np.asarray(budgets, dtype=object))
    try:
        checked = [as_int(value, func, "budgets", low=initial, requirement=requirement) for value in values]
    except AllocoptError:
        fail(func, "budgets", requirement, budgets)
    if not checked:
        fail(func, "budgets", requirement, budgets)
    budget_array = np.unique(np.asarray(checked, dtype=np.int64))
    batched = as_bool(batched, func, "batched")
    progress = as_bool(progress, func, "progress")
    entropy = root_entropy(rng, func)
    base = RuleContext(problem.n_arms, problem.k, problem.family, np.asarray(problem.dispersion))
    common = dict(entropy=entropy, n_runs=n_runs, mode="budget", threshold=None, n_jobs=n_jobs, progress=progress,
                  chunk_size=chunk_size, batched=batched, func=func)
    if rule_traits(rule).anytime:
        outcomes, diagnostics = _run(problem, rule, context=base, checkpoints=budget_array,
                                     max_samples=int(budget_array[-1]), **common)
        recommendations = outcomes["recommendations"]
    else:
        parts = [_run(problem, rule, context=RuleContext(base.n_arms, base.k, base.family, base.dispersion,
                                                         budget=int(budget)),
                      checkpoints=np.array([budget]), max_samples=int(budget), **common) for budget in budget_array]
        recommendations = np.concatenate([part[0]["recommendations"] for part in parts], axis=1)
        outcomes, diagnostics = parts[-1]
    correct = _correct(recommendations, problem)
    errors = n_runs - correct.sum(axis=0)
    intervals = np.array([binomial_confidence_interval(int(count), n_runs) for count in errors])
    name = policy_name(rule)
    return FixedBudgetResult(
        status="completed", message=f"{n_runs} runs of {name} at {budget_array.size} budgets", method=name,
        time=time.perf_counter() - started, policy=name, budgets=budget_array, recommendations=recommendations,
        correct=correct, error_rate=errors / n_runs, error_low=intervals[:, 0], error_high=intervals[:, 1],
        pulls=outcomes["pulls"], diagnostics=diagnostics, entropy=entropy, n_runs=n_runs)
