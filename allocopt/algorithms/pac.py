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
from .._validation import as_bool, as_float, as_int, as_positive_float, fail
from ..complexity.eps_top_k import aggregate_regret, h_t_eps
from ..topk.problem import TopKProblem
from ..simulate import check_n_jobs
from .identify import _check_problem, _check_rule, _run, check_max_samples
from .engine.protocol import RuleContext, get_policy, policy_name, rule_traits
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
    problem = _check_problem(problem, func)
    rule = get_policy(policy, func)
    _check_rule(rule, problem, func)
    if rule_traits(rule).stopping != "rule":
        fail(func, "policy", "a PAC rule with its own stopping rule (stopping = 'rule'), such as 'adaptive-topk'",
             policy_name(rule))
    epsilon = as_positive_float(epsilon, func, "epsilon")
    delta = as_float(delta, func, "delta", low=0.0, high=1.0, low_open=True, high_open=True,
                     requirement="a confidence parameter in the open interval (0, 1)")
    n_runs = as_int(n_runs, func, "n_runs", low=1)
    n_jobs = check_n_jobs(n_jobs, func)
    max_samples = check_max_samples(rule, problem, max_samples, func)
    batched = as_bool(batched, func, "batched")
    progress = as_bool(progress, func, "progress")
    entropy = root_entropy(rng, func)
    context = RuleContext(problem.n_arms, problem.k, problem.family, np.asarray(problem.dispersion), delta=delta,
                          epsilon=epsilon)
    outcomes, diagnostics = _run(problem, rule, entropy=entropy, n_runs=n_runs, context=context,
                                 checkpoints=np.array([delta]), mode="confidence", threshold=None,
                                 max_samples=max_samples, n_jobs=n_jobs, progress=progress, chunk_size=chunk_size,
                                 batched=batched, func=func)
    samples = outcomes["times"][:, 0]
    recommendations = outcomes["recommendations"][:, 0, :]
    stopped = outcomes["stopped"][:, 0]
    regret = np.asarray(aggregate_regret(problem.theta, recommendations), dtype=float).reshape(n_runs)
    all_stopped = bool(stopped.all())
    name = policy_name(rule)
    message = (f"{n_runs} runs of {name}, all ended by their own rule" if all_stopped else
               f"{n_runs} runs of {name}: {int((~stopped).sum())} reached max_samples = {max_samples} first")
    return PACResult(
        status="completed" if all_stopped else "sample_cap_reached", message=message, method=name,
        time=time.perf_counter() - started, policy=name, epsilon=epsilon, delta=delta, samples=samples,
        recommendations=recommendations, aggregate_regret=regret, correct=regret <= epsilon, stopped=stopped,
        pulls=outcomes["pulls"], diagnostics=diagnostics,
        hardness=float(h_t_eps(problem.theta, problem.k, epsilon).value), entropy=entropy,
        max_samples=max_samples, n_runs=n_runs, replication_steps=int(outcomes["steps"].sum()))
