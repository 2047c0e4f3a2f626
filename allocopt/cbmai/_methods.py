"""What every ``solve_cbmai`` method returns, and the signature they share.

Each method is a private module registered in :data:`allocopt.cbmai.solve.METHODS` that defines ``OPTIONS``
(its keyword options with their defaults) and::

    solve(problem, subset, *, singular_tol, feasibility_tol, **options) -> MethodSolution

which solves the standard form (3) restricted to the columns ``subset``. :func:`~allocopt.cbmai.solve_cbmai`
validates the inputs, times the call, judges the answer with the one certificate of
:mod:`allocopt.cbmai.certificate` (falling back to the enumeration when it fails) and builds the
:class:`~allocopt.cbmai.CBMAIResult` from it.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

__all__ = ["MethodSolution"]


class MethodSolution(NamedTuple):
    """The raw answer of one method on the restricted LP.

    Attributes
    ----------
    status : {"optimal", "infeasible", "not_certified"}
        "not_certified" when the method has no answer it can stand by (the message says why).
    x : ndarray or None
        The optimal point over the columns of ``subset`` (None unless optimal).
    duals : ndarray or None
        An optimal dual ``lambda`` (None unless optimal; a hint for the certificate).
    message : str
    positions : ndarray of int or None
        An optimal basis, as positions in the extended columns of
        :func:`~allocopt.cbmai.bases.extended_system` (``subset`` then the pinned slacks), when the method knows
        one; the certificate tries it first.
    farkas_ray : ndarray or None
        A Farkas ray of an infeasible LP, when the method has one (the certificate checks it).
    exhaustive : bool
        The verdict rests on every basis (the enumeration): an infeasibility verdict then needs no ray.
    """

    status: str
    x: np.ndarray | None
    duals: np.ndarray | None
    message: str
    positions: np.ndarray | None = None
    farkas_ray: np.ndarray | None = None
    exhaustive: bool = False
