"""A generic Monte Carlo harness: independent replications in chunks, optionally in parallel with joblib.

Reproducibility contract
    Replication ``i`` draws all of its randomness from ``SeedSequence(entropy, spawn_key=(i,))`` (see
    :func:`allocopt._rng.replication_generator`). Its outcome therefore depends only on ``entropy`` and
    ``i``: not on the chunk size, the number of workers or the joblib backend.

Parallelism
    Chunks are dispatched with :class:`joblib.Parallel`. allocopt never picks a backend: the caller does, with
    ``joblib.parallel_config(backend=..., n_jobs=...)`` (loky by default; dask, ray or threading work the same
    way). ``n_jobs=None`` defers to that configuration (one worker when nothing is configured). Whatever is asked
    for, one call starts at most one worker per chunk and, on the local backends (loky, multiprocessing,
    threading), at most one per CPU (:func:`worker_count`): ``n_jobs=1000`` on a two-core machine runs two.

Vectorised replications
    A replication function either handles one replication (``replicate(generator) -> outcome``) or, with
    ``vectorized=True``, a whole chunk (``replicate(generators) -> outcomes`` with one entry per generator, in
    order), which lets an algorithm batch its numpy work across replications while each replication keeps
    its own generator.

Examples
--------
>>> import numpy as np
>>> from allocopt.simulate import monte_carlo
>>> def mean_of_ten(generator):
...     return generator.standard_normal(10).mean()
>>> a = monte_carlo(mean_of_ten, 100, rng=7, chunk_size=8)
>>> b = monte_carlo(mean_of_ten, 100, rng=7, chunk_size=33)
>>> bool(np.array_equal(a.outcomes, b.outcomes)), a.outcomes.shape
(True, (100,))
"""

from __future__ import annotations

import math
import time
import warnings
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, NamedTuple

import numpy as np

from ._result import Result
from ._rng import RandomLike, replication_generator, root_entropy
from ._validation import as_bool, as_choice, as_float, as_int, fail
from .exceptions import MissingDependencyError

__all__ = ["MonteCarloResult", "monte_carlo", "check_n_jobs", "worker_count", "parallel_results", "chunk_bounds", "binomial_confidence_interval", "INTERVAL_METHODS",
           "PairedMean", "paired_mean_difference"]

INTERVAL_METHODS = ("clopper-pearson", "wilson")


@dataclass(frozen=True, kw_only=True)
class MonteCarloResult(Result):
    """Outcomes of independent replications, in replication order, on the shared result core.

    Attributes
    ----------
    status : str
        ``"completed"`` (every replication ran; the only status, so :attr:`success` is True).
    message, method, time
        The core fields: a sentence with the counts, ``"monte_carlo"``, wall-clock seconds (``elapsed`` is a
        deprecated alias).
    outcomes : ndarray or list
        One entry per replication: a numpy array stacked along axis 0 when every chunk returned an array,
        otherwise a list. :meth:`to_dict` converts it like every other field, so it is strict JSON when the
        outcomes are numbers, arrays, dictionaries or dataclasses of those.
    entropy : int
        Root entropy; replication ``i`` used ``SeedSequence(entropy, spawn_key=(i,))``.
    n_replications, chunk_size, n_chunks : int
    """

    SUCCESS_STATUSES: ClassVar[frozenset[str]] = frozenset({"completed"})

    outcomes: Any
    entropy: int
    n_replications: int
    chunk_size: int
    n_chunks: int

    @property
    def elapsed(self) -> float:
        """Deprecated alias of :attr:`time` (removed in the next release)."""
        warnings.warn("MonteCarloResult.elapsed is deprecated; use MonteCarloResult.time", DeprecationWarning,
                      stacklevel=2)
        return self.time


N_JOBS_REQUIREMENT = ("None or a nonzero integer (joblib's convention: 1, 2, ... workers, -1 every CPU, -2 every CPU "
                      "but one, ...)")


def check_n_jobs(n_jobs: Any, func: str) -> int | None:
    """``n_jobs`` validated: None, or a nonzero integer (booleans refused).

    Examples
    --------
    >>> check_n_jobs(-1, "f"), check_n_jobs(None, "f")
    (-1, None)
    >>> check_n_jobs(0, "f")
    Traceback (most recent call last):
    ...
    allocopt.exceptions.InvalidArgumentError: The 'n_jobs' parameter of f must be None or a nonzero integer (joblib's convention: 1, 2, ... workers, -1 every CPU, -2 every CPU but one, ...). Got 0 instead.
    """
    if n_jobs is None:
        return None
    value = as_int(n_jobs, func, "n_jobs", requirement=N_JOBS_REQUIREMENT)
    if value == 0:
        fail(func, "n_jobs", N_JOBS_REQUIREMENT, n_jobs)
    return value


def _local_backend() -> bool:
    """Whether joblib's active backend runs its workers on this machine (loky, multiprocessing, threading)."""
    from joblib._parallel_backends import (LokyBackend, MultiprocessingBackend, SequentialBackend,
                                           ThreadingBackend)
    from joblib.parallel import get_active_backend

    backend, _ = get_active_backend()
    return isinstance(backend, (LokyBackend, MultiprocessingBackend, SequentialBackend, ThreadingBackend))


def parallel_results(parallel: Any, tasks: Iterable[Any]) -> Iterator[Any]:
    """``parallel(tasks)`` for a :class:`joblib.Parallel` that returns a generator, with SIGINT ignored while the
    call starts its workers and dispatches the first tasks.

    A Ctrl-C at a terminal sends SIGINT to every process of the foreground group, the worker processes too: a worker
    still importing printed its own ``KeyboardInterrupt`` traceback. A process started while SIGINT is ignored keeps
    ignoring it (Python then installs no ``KeyboardInterrupt`` handler), so Ctrl-C interrupts this process only,
    which stops its workers. The signal is ignored for the few milliseconds of the call (the workers start and
    import in the background), in the main thread only (elsewhere the call runs as it is).

    Examples
    --------
    >>> from joblib import Parallel, delayed
    >>> list(parallel_results(Parallel(n_jobs=1, return_as="generator"), (delayed(abs)(x) for x in (-1, 2))))
    [1, 2]
    """
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread():
        return parallel(tasks)
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        return parallel(tasks)
    finally:
        signal.signal(signal.SIGINT, previous)


def worker_count(n_jobs: int | None, n_chunks: int) -> int:
    """The workers one call starts: joblib's effective count for ``n_jobs`` (None: the configured default), at
    most ``n_chunks`` and, on a local backend, at most the CPUs joblib sees (:func:`joblib.cpu_count`).

    Examples
    --------
    >>> worker_count(1000, 3) <= 3, worker_count(None, 10)
    (True, 1)
    """
    from joblib import cpu_count, effective_n_jobs

    workers = max(1, int(effective_n_jobs(n_jobs)))
    if _local_backend():
        workers = min(workers, max(1, int(cpu_count())))
    return max(1, min(workers, int(n_chunks)))


def chunk_bounds(n_replications: int, chunk_size: int) -> list[tuple[int, int]]:
    """``[(start, stop), ...]`` covering ``0 .. n_replications-1`` in chunks of ``chunk_size``."""
    return [(start, min(start + chunk_size, n_replications)) for start in range(0, n_replications, chunk_size)]


def _run_chunk(replicate: Callable[..., Any], entropy: int, start: int, stop: int, vectorized: bool,
               args: tuple, kwargs: dict) -> Any:
    generators = [replication_generator(entropy, index) for index in range(start, stop)]
    if vectorized:
        outcomes = replicate(generators, *args, **kwargs)
        if len(outcomes) != len(generators):
            fail("monte_carlo", "replicate", f"a function returning one outcome per generator with "
                 f"vectorized=True (a chunk of {len(generators)} generators)", f"{len(outcomes)} outcomes")
        return outcomes
    outcomes = [replicate(generator, *args, **kwargs) for generator in generators]
    if outcomes and all(isinstance(item, (np.ndarray, np.generic, int, float, bool)) for item in outcomes):
        return np.asarray(outcomes)
    return outcomes


def _progress_bar(total: int):
    try:
        from tqdm.auto import tqdm
    except ImportError as error:
        raise MissingDependencyError("progress=True needs tqdm: pip install 'allocopt[progress]'") from error
    return tqdm(total=total, unit="chunk")


def monte_carlo(
    replicate: Callable[..., Any],
    n_replications: int,
    *,
    rng: RandomLike = None,
    chunk_size: int | None = None,
    n_jobs: int | None = None,
    vectorized: bool = False,
    progress: bool = False,
    args: Sequence[Any] = (),
    kwargs: dict[str, Any] | None = None,
) -> MonteCarloResult:
    """Run ``n_replications`` independent replications of ``replicate``.

    Parameters
    ----------
    replicate : callable
        ``replicate(generator, *args, **kwargs)`` returns the outcome of one replication; with
        ``vectorized=True``, ``replicate(generators, *args, **kwargs)`` returns a sequence (or an array whose
        first axis has) one outcome per generator. It must be picklable for process-based backends (a
        module-level function or a :func:`functools.partial` of one).
    n_replications : int
        At least 1.
    rng : None, int, SeedSequence or Generator
        Source of the root entropy (see :func:`allocopt._rng.root_entropy`).
    chunk_size : int, optional
        Replications per task. Default: enough for about four chunks per worker, at most 256. The outcomes
        do not depend on it.
    n_jobs : int, optional
        Workers, as :class:`joblib.Parallel` counts them (None defers to ``joblib.parallel_config``), capped at the
        number of chunks and, on a local backend, the number of CPUs (:func:`worker_count`).
    vectorized : bool, default False
        See above.
    progress : bool, default False
        Show a tqdm bar counting completed chunks (needs ``tqdm``).
    args, kwargs
        Extra arguments for ``replicate``.

    Returns
    -------
    MonteCarloResult
    """
    func = "monte_carlo"
    if not callable(replicate):
        fail(func, "replicate", "callable", replicate)
    n_replications = as_int(n_replications, func, "n_replications", low=1)
    vectorized = as_bool(vectorized, func, "vectorized")
    progress = as_bool(progress, func, "progress")
    n_jobs = check_n_jobs(n_jobs, func)
    entropy = root_entropy(rng, func)
    if chunk_size is None:
        workers = worker_count(n_jobs, n_replications)
        chunk_size = max(1, min(256, math.ceil(n_replications / (4 * workers))))
    else:
        chunk_size = as_int(chunk_size, func, "chunk_size", low=1)
    bounds = chunk_bounds(n_replications, chunk_size)
    kwargs = dict(kwargs or {})
    start_time = time.perf_counter()
    from joblib import Parallel, delayed

    tasks = (delayed(_run_chunk)(replicate, entropy, start, stop, vectorized, tuple(args), kwargs)
             for start, stop in bounds)
    bar = _progress_bar(len(bounds)) if progress else None
    chunks = []
    try:
        for outcome in parallel_results(Parallel(n_jobs=worker_count(n_jobs, len(bounds)), return_as="generator"),
                                        tasks):
            chunks.append(outcome)
            if bar is not None:
                bar.update(1)
    finally:
        if bar is not None:
            bar.close()
    if all(isinstance(chunk, np.ndarray) for chunk in chunks):
        outcomes: Any = np.concatenate(chunks, axis=0)
    else:
        outcomes = [item for chunk in chunks for item in chunk]
    return MonteCarloResult(status="completed", method="monte_carlo",
                            message=f"{n_replications} replications in {len(bounds)} chunks of at most {chunk_size}",
                            time=time.perf_counter() - start_time, outcomes=outcomes, entropy=entropy,
                            n_replications=n_replications, chunk_size=chunk_size, n_chunks=len(bounds))


def binomial_confidence_interval(successes: int, trials: int, confidence: float = 0.95,
                                 method: str = "clopper-pearson") -> tuple[float, float]:
    """Two-sided confidence interval for a binomial proportion.

    Parameters
    ----------
    successes, trials : int
        ``0 <= successes <= trials``, ``trials >= 1``.
    confidence : float, default 0.95
    method : {"clopper-pearson", "wilson"}
        * Clopper-Pearson (exact): ``[B(a/2; k, n-k+1), B(1-a/2; k+1, n-k)]`` with ``B`` the beta quantile
          (0 and 1 at the ends); coverage is at least the nominal level.
        * Wilson score: ``(k + z^2/2 +- z sqrt(k(n-k)/n + z^2/4)) / (n + z^2)``.

    Examples
    --------
    >>> low, high = binomial_confidence_interval(0, 5000)
    >>> low, round(high, 6)  # the "rule of three": about 3/n
    (0.0, 0.000738)
    """
    func = "binomial_confidence_interval"
    trials = as_int(trials, func, "trials", low=1)
    successes = as_int(successes, func, "successes", low=0, high=trials)
    confidence = as_float(confidence, func, "confidence", low=0.0, high=1.0, low_open=True, high_open=True)
    method = as_choice(method, func, "method", INTERVAL_METHODS)
    alpha = 1.0 - confidence
    if method == "clopper-pearson":
        from scipy.stats import beta

        low = 0.0 if successes == 0 else float(beta.ppf(alpha / 2, successes, trials - successes + 1))
        high = 1.0 if successes == trials else float(beta.ppf(1 - alpha / 2, successes + 1, trials - successes))
        return low, high
    from scipy.stats import norm

    z = float(norm.ppf(1 - alpha / 2))
    center = successes + z * z / 2
    half = z * math.sqrt(successes * (trials - successes) / trials + z * z / 4)
    return max(0.0, (center - half) / (trials + z * z)), min(1.0, (center + half) / (trials + z * z))


class PairedMean(NamedTuple):
    """The mean of paired differences, its standard error and the number of pairs (:func:`paired_mean_difference`)."""

    mean: float
    standard_error: float
    n_pairs: int

    def interval(self, z: float = 1.96) -> tuple[float, float]:
        """The normal interval ``mean -+ z standard_error`` (95% for the default ``z``)."""
        return self.mean - z * self.standard_error, self.mean + z * self.standard_error


def paired_mean_difference(first: Any, second: Any) -> PairedMean:
    r"""Mean of the paired differences :math:`D_r = x_r - y_r` of two equally long samples, with its standard error
    :math:`s_D/\sqrt{n}` (:math:`s_D` the sample standard deviation, ``nan`` for a single pair).

    Runs that read the same random numbers (common random numbers) are paired, so the standard error of the
    difference is that of :math:`D`, often far below that of two independent means. Boolean samples (error
    indicators) are read as 0/1.

    Examples
    --------
    >>> difference = paired_mean_difference([3, 5, 4, 6], [1, 4, 4, 3])
    >>> difference.mean, round(difference.standard_error, 6), difference.n_pairs
    (1.5, 0.645497, 4)
    >>> low, high = difference.interval()
    >>> round(low, 4), round(high, 4)
    (0.2348, 2.7652)
    """
    func = "paired_mean_difference"
    first_values = np.asarray(first, dtype=float)
    second_values = np.asarray(second, dtype=float)
    if first_values.ndim != 1 or first_values.shape != second_values.shape or first_values.size == 0:
        fail(func, "second", f"a sample of the shape of 'first', {first_values.shape}, one-dimensional and non-empty",
             second_values.shape)
    difference = first_values - second_values
    n_pairs = int(difference.size)
    spread = float(difference.std(ddof=1)) / math.sqrt(n_pairs) if n_pairs > 1 else math.nan
    return PairedMean(mean=float(difference.mean()), standard_error=spread, n_pairs=n_pairs)

