"""Euclidean projection onto the probability simplex."""

from __future__ import annotations

import numpy as np

from .._numba import kernel

__all__ = ["project_to_simplex", "project_into_simplex"]


def project_to_simplex(vector: np.ndarray) -> np.ndarray:
    r"""The point of :math:`\Sigma_K = \{x \ge 0, \sum x = 1\}` closest to ``vector`` in Euclidean norm, along the
    last axis (leading axes are independent vectors).

    Sort-based algorithm: with :math:`u` sorted decreasingly and :math:`\rho` the largest index with
    :math:`u_\rho > (\sum_{r \le \rho} u_r - 1)/\rho`, the projection is :math:`\max(v - \tau, 0)` with
    :math:`\tau = (\sum_{r \le \rho} u_r - 1)/\rho`. Cost :math:`O(K \log K)` per vector.

    Examples
    --------
    >>> project_to_simplex(np.array([[2.0, 0.0], [0.5, 0.5]])).tolist()
    [[1.0, 0.0], [0.5, 0.5]]
    """
    vector = np.asarray(vector, dtype=float)
    n_arms = vector.shape[-1]
    ordered = -np.sort(-vector, axis=-1)
    excess = np.cumsum(ordered, axis=-1) - 1.0
    positions = np.arange(1, n_arms + 1)
    rho = n_arms - 1 - np.argmax((ordered * positions > excess)[..., ::-1], axis=-1)  # last index where it holds
    shift = np.take_along_axis(excess, rho[..., None], axis=-1) / (rho[..., None] + 1)
    return np.maximum(vector - shift, 0.0)


@kernel
def project_into_simplex(vector, ordered, out):
    """:func:`project_to_simplex` of one vector into ``out``, compiled (``ordered``: a work array of the same length):
    the same operations in the same order, the cumulative sums added left to right as numpy's ``cumsum`` adds them,
    so the two agree bit for bit (tested)."""
    n_arms = vector.shape[0]
    for index in range(n_arms):
        ordered[index] = -vector[index]
    ordered.sort()
    running, rho, excess = 0.0, -1, 0.0
    for index in range(n_arms):
        ordered[index] = -ordered[index]
        running += ordered[index]
        if ordered[index] * (index + 1) > running - 1.0:  # rho: the last index where it holds
            rho, excess = index, running - 1.0
    if rho < 0:  # it holds nowhere (NaN entries): numpy's argmax of no True gives the last index
        rho, excess = n_arms - 1, running - 1.0
    shift = excess / (rho + 1)
    for index in range(n_arms):
        value = vector[index] - shift
        out[index] = 0.0 if value < 0.0 else value
