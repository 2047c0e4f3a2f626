r"""Compiled (numba) empirical top-k of a batch of rows, the twin of the numpy
:func:`allocopt.algorithms.statistics.top_k_order_numpy`.

Both return, per row, the set of the first k entries of a stable sort by decreasing value (an arm is in the top-k
when fewer than k arms have a larger value or an equal value and a smaller index), each part in increasing arm
order. Only comparisons are made, so the twins agree exactly; the tests compare them on many random rows with
ties (Bernoulli means of small counts tie often), k = 1 and k = K - 1.

Why compiled: the engine and the LUCB-family rules take the empirical top-k of every active run at every step.
The numpy form sorts each row and, on rows with a tie across the boundary (frequent with Bernoulli rewards),
runs a stable ``argsort`` of the whole batch; with thousands of runs of 50 arms that was the largest single cost
of AT-LUCB's steps. The row kernel is the one the compiled Chernoff statistic already uses
(:func:`allocopt.algorithms._compiled._split_top_k`, one implementation): it keeps the k best entries by
insertion, O(K k) in the worst case, so :func:`allocopt.algorithms.statistics.top_k_order` uses it when k is small
or K is (see :data:`COMPILED_TOP_K_LIMIT`) and the numpy sort otherwise.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from .._numba import compile_once
from . import _compiled

__all__ = ["TopKSplit", "compiled_top_k_order", "COMPILED_TOP_K_LIMIT"]

COMPILED_TOP_K_LIMIT = 64
"""Largest k for which :func:`~allocopt.algorithms.statistics.top_k_order` uses the compiled kernel (the insertion
of the k best stays short); the choice changes speed, never the result."""


class TopKSplit(NamedTuple):
    """The empirical top-k and the other arms of each row, each in increasing arm order: shapes (R, k), (R, K-k)."""

    top: np.ndarray
    bottom: np.ndarray


def _top_k_rows(values, k, top, bottom):
    n_rows, n_arms = values.shape
    best_values = np.empty(k)
    best_arms = np.empty(k, dtype=np.int64)
    member = np.empty(n_arms, dtype=np.bool_)
    for row in range(n_rows):
        _split_top_k(values[row], k, top[row], bottom[row], best_values, best_arms, member)


# _compiled._split_top_k compiled first, called by its global name
_COMPILED = compile_once(globals(), needs=(_compiled._kernels,), shared=((_compiled, ("_split_top_k",)),),
                         kernels={"rows": "_top_k_rows"})


def _kernel():
    return _COMPILED()["rows"]


def compiled_top_k_order(values: np.ndarray, k: int) -> TopKSplit:
    """The empirical top-k of each row of ``values`` (shape (R, K), float64) with the compiled kernel.

    Examples
    --------
    >>> split = compiled_top_k_order(np.array([[0.1, 0.9, 0.5, 0.7], [0.5, 0.5, 0.5, 0.2]]), 2)
    >>> split.top.tolist(), split.bottom.tolist()
    ([[1, 3], [0, 1]], [[0, 2], [2, 3]])
    """
    values = np.ascontiguousarray(values, dtype=np.float64)
    n_rows, n_arms = values.shape
    top = np.empty((n_rows, k), dtype=np.int64)
    bottom = np.empty((n_rows, n_arms - k), dtype=np.int64)
    _kernel()(values, int(k), top, bottom)
    return TopKSplit(top, bottom)
