r"""PAC identification: epsilon-top-k arms with probability at least 1 - delta, measured by the aggregate regret.

A PAC rule (for example :class:`~allocopt.algorithms.AdaptiveTopK`) ends by its own rule (``stopping =
"rule"``) and reads :math:`\epsilon` and :math:`\delta` from its context. The runner records, for every run,
the pulls it made, its recommendation and that recommendation's aggregate regret
:math:`R_T = (\sum_{i \le k}\theta_{[i]} - \sum_{i \in T}\theta_i)/k` (Chen, Chen, Zhang, Zhou 2017, eq. (1));
a run is correct when :math:`R_T \le \epsilon`. Replications use the common random numbers and chunking of
:func:`~allocopt.algorithms.identify`, so the outcomes do not depend on ``n_jobs``, the chunk size or batching.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from .._rng import RandomLike, root_entropy
from .._validation import as_bool, as_int
from ..complexity.eps_top_k import h_t_eps
from ..topk.problem import TopKProblem
from ..simulate import check_n_jobs
from .chunks import pac_plan
from .identify import _run_plan
from .engine.protocol import policy_name
from .results import PACResult

__all__ = ["pac_identify"]


def pac_identify(problem: TopKProblem, policy: Any, *, epsilon: float, delta: float, n_runs: int,
                 rng: RandomLike = None, max_samples: int | None = None, n_jobs: int | None = None,
                 progress: bool = False, chunk_size: int | None = None, batched: bool = True) -> PACResult:
    r"""Run a PAC rule for :math:`\epsilon`-top-k identification over ``n_runs`` replications.

    Parameters
    ----------
    problem : TopKProblem
        True means, k (the number of arms to choose, in 1..K-1) and family.
    policy : str or sampling rule
        A rule with its own stopping rule that reads ``context.epsilon`` and ``context.delta``:
        ``"adaptive-topk"`` or :class:`~allocopt.algorithms.AdaptiveTopK`.
    epsilon : float
        Tolerance on the aggregate regret, > 0.
    delta : float
        Confidence parameter in (0, 1).
    n_runs : int
    rng : None, int, SeedSequence or Generator
    max_samples : int, optional
        Sample cap per run (at least K); default :data:`~allocopt.algorithms.identify.DEFAULT_MAX_SAMPLES`.
    n_jobs, progress, chunk_size, batched
        As in :func:`~allocopt.algorithms.identify`.

    Returns
    -------
    PACResult
        ``samples`` (n_runs,), ``recommendations`` (n_runs, k), ``aggregate_regret`` (n_runs,), ``correct``
        (regret <= epsilon) and ``summary()`` with confidence intervals.

    Examples
    --------
    >>> from allocopt import TopKProblem
    >>> problem = TopKProblem([0.9, 0.85, 0.5, 0.1, 0.05], k=2, family="bernoulli")
    >>> result = pac_identify(problem, "adaptive-topk", epsilon=0.1, delta=0.05, n_runs=20, rng=0)
    >>> result.samples.shape, result.recommendations.shape, bool(result.correct.all())
    ((20,), (20, 2), True)
    """
    func = "pac_identify"
    started = time.perf_counter()
    plan = pac_plan(problem, policy, epsilon=epsilon, delta=delta, max_samples=max_samples, batched=batched,
                    func=func)
    problem, epsilon, delta = plan.problem, float(plan.epsilon or 0.0), float(plan.checkpoints[0])
    n_runs = as_int(n_runs, func, "n_runs", low=1)
    n_jobs = check_n_jobs(n_jobs, func)
    progress = as_bool(progress, func, "progress")
    entropy = root_entropy(rng, func)
    records = _run_plan(plan, entropy=entropy, n_runs=n_runs, n_jobs=n_jobs, progress=progress,
                        chunk_size=chunk_size)
    stopped = records.stopped[:, 0]
    all_stopped = bool(stopped.all())
    name = policy_name(plan.rule)
    message = (f"{n_runs} runs of {name}, all ended by their own rule" if all_stopped else
               f"{n_runs} runs of {name}: {int((~stopped).sum())} reached max_samples = {records.max_samples} first")
    regret = records.aggregate_regret[:, 0]
    return PACResult(
        status="completed" if all_stopped else "sample_cap_reached", message=message, method=name,
        time=time.perf_counter() - started, policy=name, epsilon=epsilon, delta=delta,
        samples=records.stopping_times[:, 0], recommendations=records.recommendations[:, 0, :],
        aggregate_regret=regret, correct=records.correct[:, 0], stopped=stopped, pulls=records.run_pulls[:, -1],
        diagnostics={key: values[:, -1] for key, values in records.diagnostics.items()},
        hardness=float(h_t_eps(problem.theta, problem.k, epsilon).value), entropy=entropy,
        max_samples=records.max_samples, n_runs=n_runs, replication_steps=records.replication_steps)
