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
from .._validation import as_bool, as_int
from ..exceptions import AllocoptError
from ..simulate import binomial_confidence_interval, check_n_jobs, monte_carlo, worker_count
from ..topk.problem import TopKProblem
from .chunks import (DEFAULT_MAX_SAMPLES, ChunkPlan, EngineRun, budget_plan, check_max_samples,  # noqa: F401
                     check_problem, check_rule, confidence_plan, correct_recommendations, plan_chunk,
                     records_from_rows)
from .engine.protocol import policy_name
from .results import FixedBudgetResult, IdentificationResult

__all__ = ["identify", "identify_fixed_budget", "DEFAULT_MAX_SAMPLES"]

# the names other modules import from here (the checks live with the chunks they guard)
_check_problem, _check_rule, _correct = check_problem, check_rule, correct_recommendations


def _chunk_size(n_runs: int, n_jobs: int | None, chunk_size: int | None, func: str) -> int:
    if chunk_size is not None:
        return as_int(chunk_size, func, "chunk_size", low=1)
    workers = worker_count(n_jobs, n_runs)
    n_chunks = workers * math.ceil(n_runs / (workers * 2048))
    return max(1, math.ceil(n_runs / n_chunks))


def _run_plan(plan: ChunkPlan, *, entropy: int, n_runs: int, n_jobs: int | None, progress: bool,
              chunk_size: int | None):
    """Replications ``0 .. n_runs - 1`` of ``plan`` in chunks through monte_carlo: their
    :class:`~allocopt.algorithms.chunks.ChunkRecords`."""
    started = time.perf_counter()
    size = _chunk_size(n_runs, n_jobs, chunk_size, plan.func)
    mc = monte_carlo(plan_chunk, n_runs, rng=entropy, chunk_size=size, n_jobs=n_jobs, vectorized=True,
                     progress=progress, args=(plan,))
    return records_from_rows(plan, mc.outcomes, start=0, entropy=entropy, started=started)


def _run(problem, rule, *, entropy, n_runs, context, checkpoints, mode, threshold, max_samples, n_jobs, progress,
         chunk_size, batched, func, statistic=None):
    """One engine run per replication (``statistic`` replaces the engine's stopping statistic, see
    :func:`allocopt.algorithms.engine.run.run_replications`): the outcomes ``times``, ``recommendations``,
    ``stopped``, ``pulls`` and the diagnostics."""
    plan = ChunkPlan(problem, rule, "confidence" if mode == "confidence" else "budget", mode,
                     (EngineRun(context, checkpoints, threshold, max_samples),), batched, func, statistic)
    records = _run_plan(plan, entropy=entropy, n_runs=n_runs, n_jobs=n_jobs, progress=progress,
                        chunk_size=chunk_size)
    outcomes = {"times": records.stopping_times, "recommendations": records.recommendations,
                "stopped": records.stopped, "pulls": records.run_pulls[:, -1]}
    return outcomes, {name: values[:, -1] for name, values in records.diagnostics.items()}


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
    plan = confidence_plan(problem, policy, delta=delta, threshold=threshold, max_samples=max_samples,
                           batched=batched, func=func)
    problem, rule = plan.problem, plan.rule
    n_runs = as_int(n_runs, func, "n_runs", low=1)
    n_jobs = check_n_jobs(n_jobs, func)
    progress = as_bool(progress, func, "progress")
    entropy = root_entropy(rng, func)
    records = _run_plan(plan, entropy=entropy, n_runs=n_runs, n_jobs=n_jobs, progress=progress,
                        chunk_size=chunk_size)
    stopped = records.stopped
    all_stopped = bool(stopped.all())
    name = policy_name(rule)
    beta = plan.runs[0].threshold
    message = (f"{n_runs} runs of {name}, all stopped" if all_stopped else
               f"{n_runs} runs of {name}: {int((~stopped).any(axis=1).sum())} reached max_samples = "
               f"{records.max_samples} before stopping at every delta")
    return IdentificationResult(
        status="completed" if all_stopped else "sample_cap_reached", message=message, method=name,
        time=time.perf_counter() - started, policy=name, deltas=plan.checkpoints,
        threshold=getattr(beta, "name", "custom"), stopping_times=records.stopping_times,
        recommendations=records.recommendations, correct=records.correct, stopped=stopped,
        pulls=records.run_pulls[:, -1], diagnostics={key: values[:, -1] for key, values in records.diagnostics.items()},
        characteristic_time=_characteristic_time(problem), entropy=entropy, max_samples=records.max_samples,
        n_runs=n_runs, replication_steps=records.replication_steps)


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
    plan = budget_plan(problem, policy, budgets=budgets, batched=batched, func=func)
    n_runs = as_int(n_runs, func, "n_runs", low=1)
    n_jobs = check_n_jobs(n_jobs, func)
    progress = as_bool(progress, func, "progress")
    entropy = root_entropy(rng, func)
    records = _run_plan(plan, entropy=entropy, n_runs=n_runs, n_jobs=n_jobs, progress=progress,
                        chunk_size=chunk_size)
    budget_array = plan.checkpoints
    errors = n_runs - records.correct.sum(axis=0)
    intervals = np.array([binomial_confidence_interval(int(count), n_runs) for count in errors])
    name = policy_name(plan.rule)
    return FixedBudgetResult(
        status="completed", message=f"{n_runs} runs of {name} at {budget_array.size} budgets", method=name,
        time=time.perf_counter() - started, policy=name, budgets=budget_array, recommendations=records.recommendations,
        correct=records.correct, error_rate=errors / n_runs, error_low=intervals[:, 0], error_high=intervals[:, 1],
        pulls=records.run_pulls[:, -1], diagnostics={key: values[:, -1] for key, values in records.diagnostics.items()},
        entropy=entropy, n_runs=n_runs)
