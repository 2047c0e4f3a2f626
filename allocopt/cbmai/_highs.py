"""The CBMAI LP through :func:`scipy.optimize.linprog` (``method="highs"``), on an equilibrated copy.

A cost row whose entries span many decades defeats HiGHS's absolute tolerances (``model_status Unknown``, or a
point that is feasible only in units of the largest cost), so the standard form is equilibrated first:
``A' = R A C``, ``b' = R b``, ``mu' = C mu`` with diagonal ``R`` and ``C`` made of powers of two (exact), chosen
by alternating geometric-mean scaling of the rows and the columns (each row and column then has entries of
geometric-mean magnitude 1), and the bound is part of its row's scale. The solution is mapped back exactly:
``x = C x'`` and ``lambda = R lambda'``.

When the simplex method does not report an optimum (columns that still span many decades after
equilibration can make it declare a feasible LP infeasible, or stop with ``model_status Unknown``), the
interior-point method is asked, then both with HiGHS's default tolerances; the first optimum that polishes to a
certified vertex (:func:`~allocopt.cbmai.bases.polish_vertex`), or whose point is feasible relative to the
magnitudes of its rows, is kept (the caller
polishes it to a vertex and certifies it), else an infeasibility verdict, else a :class:`SolverError`.

linprog minimises, so the program solved is ``min {-mu'^T x' : A' x' = b', x' >= 0}``. Its equality marginals are
``d(min objective)/d b' = -lambda'``; the dual of the maximisation is recovered with the sign flipped and then
checked by :func:`~allocopt.cbmai.certificate.orient_duals`.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from ..exceptions import SolverError
from .bases import polish_vertex, weighted_values
from ._methods import MethodSolution
from .certificate import orient_duals
from .problem import CBMAIProblem

__all__ = ["OPTIONS", "solve", "Equilibration", "equilibrate", "solve_with_highs"]

OPTIONS: dict[str, Any] = {}
"""HiGHS is run with its own fallbacks (simplex, interior point, tight then default tolerances): no options."""

_PASSES = 8


class Equilibration(NamedTuple):
    """Diagonal scalings (powers of two) of rows and columns: ``A' = diag(rows) A diag(columns)``."""

    rows: np.ndarray
    columns: np.ndarray


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
    """Row and column scalings of ``[A | b]`` (the right-hand side enters the row scales, not the columns)."""
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


def _relatively_feasible(matrix: np.ndarray, rhs: np.ndarray, x: np.ndarray, tol: float = 1e-7) -> bool:
    """``A x = b`` within ``tol`` of ``|A| |x| + |b|`` in every row, and ``x >= 0`` on the scale of its rows."""
    involved = np.abs(matrix) @ np.abs(x) + np.abs(rhs)
    residual_ok = np.all(np.abs(matrix @ x - rhs) <= tol * involved)
    return bool(residual_ok and np.all(weighted_values(matrix, rhs, x) >= -tol))


def _attempts(tight: dict) -> tuple[tuple[str, dict], ...]:
    """Simplex then interior point with tight tolerances, then both with HiGHS's defaults."""
    return (("highs", tight), ("highs-ipm", tight), ("highs-ds", {}), ("highs-ipm", {}))


def solve_with_highs(matrix: np.ndarray, rhs: np.ndarray, objective: np.ndarray
                     ) -> tuple[str, np.ndarray | None, np.ndarray | None, str]:
    """Solve the standard form; returns ``(status, x, duals, message)`` with status "optimal" or "infeasible"."""
    from scipy.optimize import linprog

    scaling = equilibrate(matrix, rhs)
    scaled_matrix = matrix * scaling.rows[:, None] * scaling.columns[None, :]
    scaled_rhs = rhs * scaling.rows
    scaled_objective = objective * scaling.columns
    tight = {"primal_feasibility_tolerance": 1e-10, "dual_feasibility_tolerance": 1e-10}
    result: Any = None  # the most informative failed attempt (infeasibility first)
    for method, options in _attempts(tight):  # a column spanning many decades can still defeat one method
        attempt = linprog(-scaled_objective, A_eq=scaled_matrix, b_eq=scaled_rhs, bounds=(0, None),
                          method=method, options=options)
        if attempt.status == 0:
            x = np.asarray(attempt.x, dtype=float) * scaling.columns
            duals = -np.asarray(attempt.eqlin.marginals, dtype=float) * scaling.rows
            duals = orient_duals(duals, matrix, rhs, objective, float(objective @ x))
            x, duals, polished = polish_vertex(matrix, rhs, objective, x, duals, 1e-9)
            if polished:
                return "optimal", x, duals, f"{attempt.message}; polished to the vertex of its L+1 largest coordinates"
            if _relatively_feasible(matrix, rhs, x):
                return "optimal", x, duals, str(attempt.message)
            attempt.status, attempt.message = 4, f"{attempt.message} (point infeasible relative to its rows)"
        if result is None or (attempt.status == 2 and result.status != 2):
            result = attempt
    if result.status == 2:
        return "infeasible", None, None, str(result.message)
    raise SolverError(f"solve_cbmai(method='highs'): linprog did not solve the equilibrated LP: {result.message}")


def solve(problem: CBMAIProblem, subset: np.ndarray, *, singular_tol: float, feasibility_tol: float
          ) -> MethodSolution:
    """``solve_cbmai(method="highs")``: :func:`solve_with_highs` on the columns ``subset`` (the enumeration
    tolerances do not apply)."""
    matrix, rhs, objective = problem.standard_form()
    status, x, duals, message = solve_with_highs(matrix[:, subset], rhs, objective[subset])
    return MethodSolution(status, x, duals, message)
