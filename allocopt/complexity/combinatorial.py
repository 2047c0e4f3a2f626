r"""Combinatorial pure exploration (CPE): gaps and hardness for a decision class given as a list of subsets.

Source: Jiang, Li, Qiao (2017), *Practical Algorithms for Best-K Identification in Multi-Armed Bandits*,
Section 4.2, after Chen, Lin, King, Lyu, Chen (2014, "CLK+14"). A decision class :math:`\mathcal M \subseteq 2^{[N]}` is
a collection of feasible subsets of arms; the goal is :math:`\mathrm{OPT} = \arg\max_{M \in \mathcal M} \mu(M)` with
:math:`\mu(M) = \sum_{i \in M}\mu_i`.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

from .._validation import as_int, describe, fail
from ..exceptions import InvalidInstanceError
from ._inputs import FloatOrArray, as_means, as_subset_size, instance_label
from .top_m import _sum_inverse_squares

__all__ = ["cpe_gaps", "cpe_h", "top_k_decision_class", "top_k_width"]

ArrayLike = Any


def _incidence(decision_class: Any, n_arms: int, func: str) -> np.ndarray:
    """Boolean matrix (number of distinct subsets, n_arms); duplicates of the same subset are merged."""
    requirement = (f"a non-empty sequence of subsets of the arms, each an iterable of distinct indices in "
                   f"0..{n_arms - 1}")
    if isinstance(decision_class, (str, bytes)) or not isinstance(decision_class, Iterable):
        fail(func, "decision_class", requirement, decision_class)
    rows = []
    for position, subset in enumerate(decision_class):
        if isinstance(subset, (str, bytes)) or not isinstance(subset, Iterable):
            fail(func, "decision_class", f"{requirement}; entry {position} is not an iterable of indices", subset)
        indices = [as_int(index, func, f"decision_class[{position}]", low=0, high=n_arms - 1) for index in subset]
        if len(set(indices)) != len(indices):
            fail(func, "decision_class", f"{requirement}; entry {position} repeats an arm", subset)
        row = np.zeros(n_arms, dtype=bool)
        row[indices] = True
        rows.append(row)
    if not rows:
        fail(func, "decision_class", requirement, decision_class)
    return np.unique(np.array(rows), axis=0)


def cpe_gaps(means: ArrayLike, decision_class: Sequence[Iterable[int]]) -> np.ndarray:
    r"""CPE gaps :math:`\Delta_i` of every arm for a decision class (Jiang, Li, Qiao 2017, Section 4.2).

    .. math::

        \Delta_i = \begin{cases} \mu(\mathrm{OPT}) - \max_{M \in \mathcal M,\, i \notin M} \mu(M) &
        i \in \mathrm{OPT},\\ \mu(\mathrm{OPT}) - \max_{M \in \mathcal M,\, i \in M} \mu(M) &
        i \notin \mathrm{OPT}. \end{cases}

    A maximum over no subset is :math:`-\infty`, so an arm that every feasible subset treats like ``OPT`` does
    (in all of them, or in none) gets :math:`\Delta_i = +\infty` and contributes nothing to :func:`cpe_h`. For
    the top-:math:`K` class (:func:`top_k_decision_class`) the gaps are the Best-:math:`K` gaps of
    :func:`allocopt.complexity.gaps`.

    Parameters
    ----------
    means : array_like, shape (..., N)
        Means of the ``N`` arms (any order); leading axes index instances.
    decision_class : sequence of iterables of int
        The feasible subsets, as 0-based arm indices. ``OPT`` must be unique.

    Returns
    -------
    numpy.ndarray, shape (..., N)

    Examples
    --------
    >>> cpe_gaps([0.9, 0.6, 0.5, 0.1], [(0, 1), (0, 2), (1, 2)])  # OPT = {0, 1}; no subset holds arm 3
    array([0.4, 0.1, 0.1, inf])
    """
    func = "cpe_gaps"
    array = as_means(means, func, min_arms=1)
    incidence = _incidence(decision_class, array.shape[-1], func)
    values = array @ incidence.T.astype(float)  # (..., S): mu(M) for every subset
    ordered = np.sort(values, axis=-1)
    if incidence.shape[0] > 1 and np.any(ordered[..., -1] == ordered[..., -2]):
        tied_mask = ordered[..., -1] == ordered[..., -2]
        index = tuple(int(i) for i in np.argwhere(np.atleast_1d(tied_mask))[0]) if array.ndim > 1 else ()
        row_values = values[index] if index else values
        winners = np.flatnonzero(row_values == row_values.max())
        tied = sorted(tuple(np.flatnonzero(incidence[s]).tolist()) for s in winners)
        raise InvalidInstanceError(
            f"The 'means' parameter of {func} must give a unique best subset OPT; subsets {tied} tie with total "
            f"mean {float(row_values.max())!r}{instance_label(index)}. Got {describe(array)} instead."
        )
    best = np.argmax(values, axis=-1)
    in_opt = incidence[best]  # (..., N)
    best_value = np.max(values, axis=-1, keepdims=True)
    masked = values[..., :, np.newaxis]  # (..., S, 1)
    best_with = np.max(np.where(incidence, masked, -np.inf), axis=-2)  # best subset containing each arm
    best_without = np.max(np.where(~incidence, masked, -np.inf), axis=-2)  # best subset avoiding each arm
    return best_value - np.where(in_opt, best_without, best_with)


def cpe_h(means: ArrayLike, decision_class: Sequence[Iterable[int]]) -> FloatOrArray:
    r"""CPE hardness :math:`H = \sum_i \Delta_i^{-2}` of the gaps :func:`cpe_gaps` (Jiang, Li, Qiao 2017, Sec. 4.2).

    The generalised lil'CLUCB takes :math:`O(\mathrm{width}(\mathcal M)^2\sigma^2\sum_i \Delta_i^{-2}(\log\delta^{-1}
    + \log N + \log\log\Delta_i^{-1}))` samples (Theorem 4.2); CLUCB :math:`O(\mathrm{width}(\mathcal M)^2\sigma^2
    H\log(NH/\delta))`. For the top-:math:`K` class it equals :func:`allocopt.complexity.h1`.

    Examples
    --------
    >>> round(float(cpe_h([0.9, 0.6, 0.5, 0.1], [(0, 1), (0, 2), (1, 2)])), 6)  # 0.4**-2 + 2 * 0.1**-2
    206.25
    """
    return _sum_inverse_squares(cpe_gaps(means, decision_class))


def top_k_decision_class(n_arms: int, k: int) -> tuple[tuple[int, ...], ...]:
    r"""The Best-:math:`K` decision class: all :math:`\binom{N}{K}` subsets of size ``k`` (0-based indices).

    A uniform matroid's bases. Their number grows quickly; meant for small instances and checks.

    Examples
    --------
    >>> top_k_decision_class(3, 2)
    ((0, 1), (0, 2), (1, 2))
    """
    n_arms = as_int(n_arms, "top_k_decision_class", "n_arms", low=2)
    k = as_subset_size(k, n_arms, "top_k_decision_class", "k")
    return tuple(itertools.combinations(range(n_arms), k))


def top_k_width(n_arms: int, k: int) -> int:
    r"""Width of the Best-:math:`K` decision class: 2.

    The width of a decision class (CLK+14, Section 3.1) is the smallest, over its exchange classes, of the largest
    exchange :math:`|b^+| + |b^-|`. For the subsets of size :math:`K` of :math:`N` arms (:math:`1 \le K < N`) the
    single swaps (one arm in, one arm out) form an exchange class, and no exchange of size 1 keeps the size
    :math:`K`, so the width is exactly 2 (Jiang, Li, Qiao 2017, Section 4.2: a matroid has width at most 2). It enters
    Theorem 4.2's bound squared.

    Examples
    --------
    >>> top_k_width(10, 3)
    2
    """
    n_arms = as_int(n_arms, "top_k_width", "n_arms", low=2)
    as_subset_size(k, n_arms, "top_k_width", "k")
    return 2
