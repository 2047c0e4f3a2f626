"""Euclidean projection onto the probability simplex."""

from __future__ import annotations

import numpy as np

__all__ = ["project_to_simplex"]


def project_to_simplex(vector: np.ndarray) -> np.ndarray:
    r"""The point of :math:`\Sigma_K = \{x \ge 0, \sum x = 1\}` closest to ``vector`` in Euclidean norm.

    Sort-based algorithm: with :math:`u` sorted decreasingly and :math:`\rho` the largest index with
    :math:`u_\rho > (\sum_{r \le \rho} u_r - 1)/\rho`, the projection is :math:`\max(v - \tau, 0)` with
    :math:`\tau = (\sum_{r \le \rho} u_r - 1)/\rho`. Cost :math:`O(K \log K)`.
    """
    vector = np.asarray(vector, dtype=float)
    ordered = np.sort(vector)[::-1]
    excess = np.cumsum(ordered) - 1.0
    positions = np.arange(1, vector.shape[0] + 1)
    rho = np.flatnonzero(ordered * positions > excess)[-1]
    shift = excess[rho] / (rho + 1)
    return np.maximum(vector - shift, 0.0)
