"""Randomness conventions shared by every layer.

* Randomness enters only through an explicit ``rng`` argument: ``None`` (fresh OS entropy), an integer seed,
  a :class:`numpy.random.SeedSequence` or a :class:`numpy.random.Generator`.
* Replication ``i`` of a Monte Carlo experiment uses ``SeedSequence(entropy, spawn_key=(i,))``, so its
  stream does not depend on how replications are chunked or on the number of workers.
* Ties are broken uniformly at random (:func:`argmin_random_tie`, :func:`argmax_random_tie`), never by the
  first index that ``numpy.argmin`` would return.
"""

from __future__ import annotations

from typing import Any, Union

import numpy as np

from ._validation import fail

__all__ = [
    "RandomLike",
    "as_generator",
    "root_entropy",
    "replication_generator",
    "argmin_random_tie",
    "argmax_random_tie",
    "random_candidate",
]

RandomLike = Union[None, int, np.integer, np.random.SeedSequence, np.random.Generator]


def as_generator(rng: RandomLike, func: str = "allocopt", name: str = "rng") -> np.random.Generator:
    """A :class:`numpy.random.Generator` from any accepted ``rng`` value (a Generator is returned as is)."""
    if isinstance(rng, np.random.Generator):
        return rng
    if rng is None or isinstance(rng, np.random.SeedSequence):
        return np.random.default_rng(rng)
    if isinstance(rng, (int, np.integer)) and not isinstance(rng, bool) and rng >= 0:
        return np.random.default_rng(int(rng))
    fail(func, name, "None, a nonnegative integer, a numpy SeedSequence or a numpy Generator", rng)


def root_entropy(rng: RandomLike, func: str = "allocopt", name: str = "rng") -> int:
    """The entropy from which per-replication seed sequences are spawned.

    An integer or SeedSequence gives a reproducible entropy; a Generator contributes one draw (so calling
    twice with the same Generator gives different experiments, as a Generator should); ``None`` draws from
    the operating system.
    """
    if isinstance(rng, np.random.SeedSequence):
        entropy: Any = rng.entropy if rng.entropy is not None else np.random.SeedSequence().entropy
        if isinstance(entropy, (int, np.integer)):
            return int(entropy)
        # a sequence of 32-bit words, read as one integer the way SeedSequence reads an integer entropy
        words = [int(word) for word in entropy]
        return sum((word << (32 * position) for position, word in enumerate(words)), 0)
    if isinstance(rng, np.random.Generator):
        return int(rng.integers(0, 2**63 - 1))
    if rng is None:
        return int(np.random.SeedSequence().entropy)  # type: ignore[arg-type]  # fresh entropy is an int
    if isinstance(rng, (int, np.integer)) and not isinstance(rng, bool) and rng >= 0:
        return int(rng)
    fail(func, name, "None, a nonnegative integer, a numpy SeedSequence or a numpy Generator", rng)


def replication_generator(entropy: int, index: int) -> np.random.Generator:
    """The generator of replication ``index``: ``SeedSequence(entropy, spawn_key=(index,))``."""
    return np.random.default_rng(np.random.SeedSequence(entropy, spawn_key=(int(index),)))


def _random_tie(values: np.ndarray, rng: np.random.Generator, best: float, tol: float) -> int:
    candidates = np.flatnonzero(np.abs(values - best) <= tol)
    if candidates.size == 1:
        return int(candidates[0])
    return int(candidates[rng.integers(candidates.size)])


def argmin_random_tie(values: np.ndarray, rng: np.random.Generator, tol: float = 0.0) -> int:
    """Index of a minimum of a one-dimensional array, uniformly at random among entries within ``tol`` of it."""
    values = np.asarray(values, dtype=float).ravel()
    return _random_tie(values, rng, float(values.min()), tol)


def argmax_random_tie(values: np.ndarray, rng: np.random.Generator, tol: float = 0.0) -> int:
    """Index of a maximum of a one-dimensional array, uniformly at random among entries within ``tol`` of it."""
    values = np.asarray(values, dtype=float).ravel()
    return _random_tie(values, rng, float(values.max()), tol)


def random_candidate(candidates: np.ndarray, uniforms: np.ndarray) -> np.ndarray:
    """Batched uniform tie-breaking: in each row of ``candidates``, one of its ``True`` entries, uniformly at random.

    Row ``r`` (all axes but the last) takes its ``floor(u_r c_r)``-th ``True`` entry (0-based), where ``c_r`` is
    the number of ``True`` entries and ``u_r = uniforms[r]`` is uniform on [0, 1): each candidate is then chosen
    with probability ``1/c_r``. A row without candidates gives index 0. The vectorised counterpart of
    :func:`argmin_random_tie` for algorithms that break ties over many runs at once; drawing the ``uniforms``
    from each run's own generator keeps every run reproducible on its own.

    Examples
    --------
    >>> import numpy as np
    >>> candidates = np.array([[True, False, True, True], [False, True, False, False]])
    >>> random_candidate(candidates, np.array([0.5, 0.99])).tolist()  # floor(0.5 * 3) = 1: the second candidate
    [2, 1]
    """
    candidates = np.asarray(candidates, dtype=bool)
    count = candidates.sum(axis=-1)
    if np.all(count == 1):  # no tie anywhere (the usual case in the engine's hot path): the only True entry
        return np.argmax(candidates, axis=-1)
    pick = np.minimum((np.asarray(uniforms, dtype=float) * count).astype(np.int64), np.maximum(count - 1, 0))
    return np.argmax(np.cumsum(candidates, axis=-1) > pick[..., None], axis=-1)
