"""The CBMAI LP through :func:`scipy.optimize.linprog` (``method="highs"``).

linprog minimises, so the program solved is ``min {-mu^T x : A x = b, x >= 0}``. Its equality marginals are
``d(min objective)/d b = -lambda``; the dual of the maximisation is recovered with the sign flipped and then
checked by :func:`~allocopt.cbmai.certificate.orient_duals`.
"""

from __future__ import annotations

import numpy as np

from ..exceptions import SolverError
from .certificate import orient_duals

__all__ = ["solve_with_highs"]


def solve_with_highs(matrix: np.ndarray, rhs: np.ndarray, objective: np.ndarray
                     ) -> tuple[str, np.ndarray | None, np.ndarray | None, str]:
    """Solve the standard form; returns ``(status, x, duals, message)`` with status "optimal" or "infeasible"."""
    from scipy.optimize import linprog

    result = linprog(-objective, A_eq=matrix, b_eq=rhs, bounds=(0, None), method="highs")
    if result.status == 2:
        return "infeasible", None, None, str(result.message)
    if result.status != 0:
        raise SolverError(f"solve_cbmai(method='highs'): linprog did not solve the LP: {result.message}")
    x = np.asarray(result.x, dtype=float)
    duals = orient_duals(-np.asarray(result.eqlin.marginals, dtype=float), matrix, rhs, objective,
                         float(objective @ x))
    return "optimal", x, duals, str(result.message)
