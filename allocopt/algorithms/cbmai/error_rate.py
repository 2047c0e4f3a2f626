"""Error rate of a CBMAI identification algorithm over many independent simulated runs.

A run is wrong when its returned support differs (as a set) from the optimal support ``I*`` of the true
LP, or from ``[]`` when the true LP is infeasible (the paper's strict criterion, Section 2).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any, ClassVar, Union

import numpy as np

from ..._result import Result
from ..._rng import RandomLike
from ..._validation import as_bool, as_choice, as_float, as_int, fail
from ...cbmai.problem import CBMAIProblem, as_arm_subset
from ...cbmai.solve import solve_cbmai
from ...exceptions import InvalidInstanceError, SolverError
from ...simulate import INTERVAL_METHODS, binomial_confidence_interval, check_n_jobs, monte_carlo
from ._common import check_budget, check_noise, check_problem
from .sfsr import sfsr_batch
from .uslp import uslp_batch

__all__ = ["CBMAI_ALGORITHMS", "ErrorRate", "cbmai_error_rate"]

CBMAI_ALGORITHMS = ("sfsr", "sfsr-l", "uslp")

AlgorithmLike = Union[str, Callable[..., Any]]


@dataclass(frozen=True, kw_only=True)
class ErrorRate(Result):
    """Estimated probability that an algorithm returns a wrong support.

    The core fields (:class:`~allocopt._result.Result`) come first.

    Attributes
    ----------
    status : {"completed"}
        Every run finished (a failing run raises instead).
    success : bool
    message : str
        The estimate and its interval in words.
    method : str
        The algorithm (also :attr:`algorithm`).
    time : float
        Wall-clock seconds of the simulation. ``elapsed`` is a deprecated alias.
    error_rate : float
        ``n_errors / n_runs``.
    n_errors, n_runs : int
    ci_low, ci_high : float
        Two-sided confidence interval at level :attr:`confidence` (method :attr:`interval`).
    confidence : float
    interval : str
        "clopper-pearson" (exact, the default) or "wilson".
    budget : int
    target : tuple of int
        The support counted as correct (``I*``, or ``()`` for an infeasible instance).
    entropy : int
        Root entropy of the replications (replication ``i`` used ``SeedSequence(entropy, spawn_key=(i,))``).
    """

    SUCCESS_STATUSES: ClassVar[frozenset[str]] = frozenset({"completed"})

    error_rate: float
    n_errors: int
    n_runs: int
    ci_low: float
    ci_high: float
    confidence: float
    interval: str
    budget: int
    target: tuple[int, ...]
    entropy: int

    @property
    def algorithm(self) -> str:
        """The algorithm that ran: the same as :attr:`method`."""
        return self.method

    @property
    def elapsed(self) -> float:
        """Deprecated alias of :attr:`time` (removed in the next release)."""
        warnings.warn("ErrorRate.elapsed is deprecated; use ErrorRate.time", DeprecationWarning, stacklevel=2)
        return self.time


def _vectorised_supports(generators: Sequence[np.random.Generator], problem: CBMAIProblem, budget: int,
                         algorithm: str, sigma_r: float, sigma_c: float, strict: bool) -> np.ndarray:
    if algorithm == "uslp":
        batch = uslp_batch(problem, budget, generators, sigma_r=sigma_r, sigma_c=sigma_c)
    else:
        score = "iv" if algorithm == "sfsr" else "lagrangian"
        batch = sfsr_batch(problem, budget, generators, sigma_r=sigma_r, sigma_c=sigma_c, score=score,
                           strict=strict)
    return batch.supports


def _callable_support(generator: np.random.Generator, algorithm: Callable[..., Any], problem: CBMAIProblem,
                      budget: int, width: int, options: dict[str, Any]) -> np.ndarray:
    run = algorithm(problem, budget, rng=generator, **options)
    requirement = (f"a callable returning an object whose 'support' is a collection of at most L+1 = {width} "
                   f"distinct column indices in 0..{problem.n_columns - 1}; it returned")
    try:
        support = tuple(sorted(int(column) for column in run.support))
    except (AttributeError, TypeError, ValueError):
        fail("cbmai_error_rate", "algorithm", requirement, run)
    if (len(support) > width or len(set(support)) != len(support)
            or any(not 0 <= column < problem.n_columns for column in support)):
        fail("cbmai_error_rate", "algorithm", requirement, run.support)
    row = np.full(width, -1, dtype=np.int64)
    row[:len(support)] = support
    return row


def _target_support(problem: CBMAIProblem, target: Any, func: str) -> tuple[int, ...]:
    if target is not None:
        return tuple(int(column) for column in as_arm_subset(target, problem, func, "target", allow_empty=True))
    result = solve_cbmai(problem)
    if result.status == "infeasible":
        return ()
    if result.status != "optimal":
        raise SolverError(f"{func}: the LP of the instance could not be certified, so the correct support is "
                          f"unknown ({result.message}); give it as 'target'")
    report = result.assumption_1
    if report is not None and not report.holds:
        raise InvalidInstanceError(
            f"The 'problem' parameter of {func} must satisfy Assumption 1 (or be infeasible) so that the correct "
            f"support is defined, or a 'target' support must be given. Got an instance with: "
            f"{'; '.join(report.failures)}.")
    return result.support


def _replication(problem: CBMAIProblem, algorithm: AlgorithmLike, budget: int, sigma_r: float, sigma_c: float,
                 strict: bool, options: dict[str, Any], func: str) -> tuple[str, int, Callable[..., Any], bool]:
    """The algorithm's name, the checked budget, the function that runs replications and whether it runs a chunk
    of them at once (the built-in algorithms) or one (a caller's callable)."""
    if callable(algorithm):
        budget = check_budget(problem, budget, func, minimum=1)
        replicate = partial(_callable_support, algorithm=algorithm, problem=problem, budget=budget,
                            width=problem.n_costs + 1, options=dict(options, sigma_r=sigma_r, sigma_c=sigma_c))
        return getattr(algorithm, "__name__", repr(algorithm)), budget, replicate, False
    name = as_choice(algorithm, func, "algorithm", CBMAI_ALGORITHMS)
    if options:
        fail(func, "options", f"empty for the built-in algorithm {name!r}", sorted(options))
    strict = as_bool(strict, func, "strict")
    minimum = problem.n_unknown if name == "uslp" else problem.n_unknown + 1
    budget = check_budget(problem, budget, func, minimum=minimum)
    replicate = partial(_vectorised_supports, problem=problem, budget=budget, algorithm=name, sigma_r=sigma_r,
                        sigma_c=sigma_c, strict=strict)
    return name, budget, replicate, True


def cbmai_error_rate(
    problem: CBMAIProblem,
    algorithm: AlgorithmLike,
    budget: int,
    n_runs: int,
    rng: RandomLike = None,
    *,
    sigma_r: float = 1.0,
    sigma_c: float = 0.5,
    strict: bool = False,
    target: Sequence[int] | None = None,
    confidence: float = 0.95,
    interval: str = "clopper-pearson",
    n_jobs: int | None = None,
    chunk_size: int | None = None,
    progress: bool = False,
    **options: Any,
) -> ErrorRate:
    """Run ``n_runs`` independent simulated runs and estimate the probability of a wrong support.

    Parameters
    ----------
    problem : CBMAIProblem
        True means (Assumption 1 must hold, or the LP must be infeasible, unless ``target`` is given).
    algorithm : {"sfsr", "sfsr-l", "uslp"} or callable
        A built-in algorithm (runs are vectorised in chunks) or any callable
        ``algorithm(problem, budget, sigma_r=..., sigma_c=..., rng=generator, **options)`` returning an object
        with ``.support`` (such as :func:`sfsr` or :func:`uslp`), run one replication at a time.
    budget : int
        ``N``.
    n_runs : int
        Number of independent runs.
    rng : None, int, SeedSequence or Generator
        Run ``i`` uses ``SeedSequence(entropy, spawn_key=(i,))``: the result does not depend on ``n_jobs``
        or ``chunk_size``, and run ``i`` equals ``sfsr(..., rng=that generator)``.
    sigma_r, sigma_c : float
        Noise of the simulated rewards and costs (passed to a callable ``algorithm`` too).
    strict : bool
        Strict IV variant for the built-in "sfsr".
    target : sequence of int, optional
        The support counted as correct (default: the optimal support of ``problem``).
    confidence : float, default 0.95
    interval : {"clopper-pearson", "wilson"}
        Confidence interval for the error rate (Clopper-Pearson is exact and conservative).
    n_jobs, chunk_size, progress
        Passed to :func:`allocopt.simulate.monte_carlo` (the joblib backend is chosen by the caller with
        ``joblib.parallel_config``).
    **options
        Extra keyword arguments of a callable ``algorithm``.

    Returns
    -------
    ErrorRate

    Examples
    --------
    >>> import allocopt
    >>> from allocopt.algorithms import cbmai_error_rate
    >>> problem = allocopt.CBMAIProblem([0.9, 0.5, 0.2, 0.1], [[1.5, 0.5, 0.2, 0.9]], [1.0])
    >>> rate = cbmai_error_rate(problem, "sfsr", budget=400, n_runs=200, rng=3)
    >>> rate.target, 0.0 <= rate.ci_low <= rate.error_rate <= rate.ci_high <= 1.0
    ((0, 1), True)
    """
    func = "cbmai_error_rate"
    problem = check_problem(problem, func)
    n_runs = as_int(n_runs, func, "n_runs", low=1)
    n_jobs = check_n_jobs(n_jobs, func)
    confidence = as_float(confidence, func, "confidence", low=0.0, high=1.0, low_open=True, high_open=True)
    interval = as_choice(interval, func, "interval", INTERVAL_METHODS)
    sigma_r, sigma_c = check_noise(sigma_r, sigma_c, func)
    name, budget, replicate, vectorized = _replication(problem, algorithm, budget, sigma_r, sigma_c, strict,
                                                       options, func)
    correct = _target_support(problem, target, func)
    width = problem.n_costs + 1
    expected = np.full(width, -1, dtype=np.int64)
    expected[:len(correct)] = correct
    if len(correct) > width:
        fail(func, "target", f"a set of at most L+1 = {width} columns", target)
    simulation = monte_carlo(replicate, n_runs, rng=rng, chunk_size=chunk_size, n_jobs=n_jobs,
                             vectorized=vectorized, progress=progress)
    supports = np.asarray(simulation.outcomes)
    n_errors = int(np.sum(np.any(supports != expected, axis=-1)))
    low, high = binomial_confidence_interval(n_errors, n_runs, confidence, interval)
    message = (f"{n_errors} wrong supports in {n_runs} runs; {confidence:.0%} {interval} interval "
               f"[{low:.4g}, {high:.4g}]")
    return ErrorRate(status="completed", message=message, method=name, time=simulation.time,
                     error_rate=n_errors / n_runs, n_errors=n_errors, n_runs=n_runs, ci_low=low, ci_high=high,
                     confidence=confidence, interval=interval, budget=budget, target=correct,
                     entropy=simulation.entropy)

