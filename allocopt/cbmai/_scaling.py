"""Exact equilibration of the CBMAI standard form for the external solvers (HiGHS through scipy, PuLP).

A cost row whose entries span many decades defeats a solver's absolute tolerances (a point feasible only in
units of the row's largest cost, ``model_status Unknown``, a feasible LP declared infeasible), so the solvers
are handed ``A' = R A C``, ``b' = R b``, ``mu' = C mu`` with diagonal ``R`` and ``C`` made of powers of two
(exact, no rounding), chosen by alternating geometric-mean scaling of the rows and the columns: every row and
column then has entries of geometric-mean magnitude 1, and the bound is part of its row's scale. Solutions map
back exactly: ``x = C x'`` and ``lambda = R lambda'`` (and a Farkas ray ``y = R y'``).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

__all__ = ["Equilibration", "equilibrate"]

_PASSES = 8


class Equilibration(NamedTuple):
    """Diagonal scalings (powers of two) of rows and columns: ``A' = diag(rows) A diag(columns)``."""

    rows: np.ndarray
    columns: np.ndarray

    def apply(self, matrix: np.ndarray, rhs: np.ndarray, objective: np.ndarray
              ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(R A C, R b, C mu)``."""
        return (matrix * self.rows[:, None] * self.columns[None, :], rhs * self.rows, objective * self.columns)


def _geometric_scale(magnitudes: np.ndarray, axis: int) -> np.ndarray:
    """``1 / sqrt(max * min)`` over the nonzero entries along ``axis`` (1 where there are none), rounded to a
    power of two."""
    nonzero = magnitudes > 0
    largest = np.max(np.where(nonzero, magnitudes, 0.0), axis=axis)
    smallest = np.min(np.where(nonzero, magnitudes, np.inf), axis=axis)
    empty = ~np.any(nonzero, axis=axis)
    geometric = np.sqrt(np.where(empty, 1.0, largest) * np.where(empty, 1.0, smallest))
    return np.ldexp(1.0, -np.frexp(geometric)[1] + 1)


def equilibrate(matrix: np.ndarray, rhs: np.ndarray) -> Equilibration:
    """Row and column scalings of ``[A | b]`` (the right-hand side enters the row scales, not the columns).

    Examples
    --------
    >>> import numpy as np
    >>> scaling = equilibrate(np.array([[1e6, 2e-6, 1.0], [1.0, 1.0, 0.0]]), np.array([1e-6, 1.0]))
    >>> bool(np.all(np.log2(np.concatenate(scaling)) % 1 == 0))  # powers of two: the scaling is exact
    True
    """
    rows = np.ones(matrix.shape[0])
    columns = np.ones(matrix.shape[1])
    magnitude = np.abs(matrix)
    for _ in range(_PASSES):
        scaled = magnitude * rows[:, None] * columns[None, :]
        with_rhs = np.concatenate([scaled, (np.abs(rhs) * rows)[:, None]], axis=1)
        rows = rows * _geometric_scale(with_rhs, axis=1)
        scaled = magnitude * rows[:, None] * columns[None, :]
        columns = columns * _geometric_scale(scaled, axis=0)
    return Equilibration(rows, columns)
