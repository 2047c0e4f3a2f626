"""Pair multipliers stored sparsely.

An optimal multiplier vector lives on a forest (at most K - 1 of the k(K-k) pairs), so results and
certificates keep ``(rows, cols, values)`` triplets; :meth:`PairMultipliers.dense` builds the k x (K-k)
matrix when it is asked for.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = ["PairMultipliers"]


@dataclass(frozen=True)
class PairMultipliers:
    """Nonnegative multipliers on (top, bottom) pairs, normalised to sum one (all zero if none is positive).

    Attributes
    ----------
    rows, cols : ndarray of int
        Positions in ``problem.top`` and ``problem.bottom`` of the pairs with a positive multiplier.
    values : ndarray
        Their multipliers.
    shape : tuple of int
        ``(k, K - k)``.
    """

    rows: np.ndarray
    cols: np.ndarray
    values: np.ndarray
    shape: tuple[int, int]

    @classmethod
    def from_triplets(cls, rows, cols, values, shape) -> "PairMultipliers":
        rows, cols = np.asarray(rows, dtype=int).ravel(), np.asarray(cols, dtype=int).ravel()
        values = np.asarray(values, dtype=float).ravel()
        positive = values > 0
        rows, cols, values = rows[positive], cols[positive], values[positive]
        total = values.sum()
        if total > 0:
            values = values / total
        for array in (rows, cols, values):
            array.setflags(write=False)
        return cls(rows, cols, values, (int(shape[0]), int(shape[1])))

    @classmethod
    def from_any(cls, mu: Any, shape: tuple[int, int] | None = None) -> "PairMultipliers":
        """From a dense matrix, a scipy sparse matrix or another :class:`PairMultipliers`."""
        if isinstance(mu, PairMultipliers):
            return mu
        if hasattr(mu, "tocoo"):
            coo = mu.tocoo()
            return cls.from_triplets(coo.row, coo.col, coo.data, coo.shape)
        dense = np.asarray(mu, dtype=float)
        rows, cols = np.nonzero(dense > 0)
        return cls.from_triplets(rows, cols, dense[rows, cols], dense.shape if shape is None else shape)

    def dense(self) -> np.ndarray:
        """The k x (K-k) matrix."""
        matrix = np.zeros(self.shape)
        matrix[self.rows, self.cols] = self.values
        return matrix

    def above(self, threshold: float) -> "PairMultipliers":
        """The multipliers larger than ``threshold`` times the largest, renormalised."""
        if self.values.size == 0:
            return self
        keep = self.values > threshold * self.values.max()
        return PairMultipliers.from_triplets(self.rows[keep], self.cols[keep], self.values[keep], self.shape)

    @property
    def size(self) -> int:
        return int(self.values.size)
