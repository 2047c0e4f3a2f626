"""What every ``solve_cbmai`` method returns, and the signature they share.

Each method is a private module registered in :data:`allocopt.cbmai.solve.METHODS` that defines ``OPTIONS``
(its keyword options with their defaults) and::

    solve(problem, subset, *, singular_tol, feasibility_tol, **options) -> MethodSolution

which solves the standard form (3) restricted to the columns ``subset``. :func:`~allocopt.cbmai.solve_cbmai`
validates the inputs, times the call and builds the certified :class:`~allocopt.cbmai.CBMAIResult` from it.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

__all__ = ["MethodSolution"]


class MethodSolution(NamedTuple):
    """The raw answer of one method on the restricted LP.

    Attributes
    ----------
    status : {"optimal", "infeasible"}
    x : ndarray or None
        The optimal point over the columns of ``subset`` (None when infeasible).
    duals : ndarray or None
        An optimal dual ``lambda`` (None when infeasible).
    message : str
    positions : ndarray of int or None
        Positions in ``subset`` of an optimal basis whose dual is ``duals`` when the method knows one
        (enumeration); None lets :func:`solve_cbmai` complete a basis from the support.
    """

    status: str
    x: np.ndarray | None
    duals: np.ndarray | None
    message: str
    positions: np.ndarray | None = None
