"""``solve_cbmai(method="enumerate")``: evaluate every basis and keep the best feasible one.

The dual is ``lambda = A_B^{-T} mu_B`` of the first optimal basis (lexicographic order) that is dual feasible,
a deterministic choice when the dual is not unique.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ._methods import MethodSolution
from .bases import evaluate_subset, select_optimal_bases
from .problem import CBMAIProblem

__all__ = ["OPTIONS", "solve"]

OPTIONS: dict[str, Any] = {}
"""The enumeration takes no options (its tolerances are arguments of every method)."""


def solve(problem: CBMAIProblem, subset: np.ndarray, *, singular_tol: float, feasibility_tol: float
          ) -> MethodSolution:
    """Best feasible basis of ``subset`` (plus pinned slacks); ``positions`` index the extended columns."""
    table = evaluate_subset(problem, subset, singular_tol, feasibility_tol)
    columns, layout, evaluated = table.columns, table.layout, table.evaluated
    pinned = table.pinned if table.pinned.any() else None
    chosen = select_optimal_bases(columns, table.objective, evaluated, layout, dual_tol=feasibility_tol,
                                  pinned=pinned)
    if chosen.index < 0:
        return MethodSolution("infeasible", None, None, f"none of the {layout.n_bases} bases is feasible",
                              exhaustive=True)
    positions = layout.combos[int(chosen.index)]
    x = np.zeros(table.column_ids.size)
    x[positions] = evaluated.x[int(chosen.index)]  # from the minors: accurate in every row's own units
    message = (f"{layout.n_bases} bases enumerated, {int(evaluated.feasible.sum())} feasible, "
               f"{int(chosen.n_candidates)} optimal")
    if pinned is not None:
        message += f" (slacks {table.column_ids[table.pinned].tolist()} outside 'arms' enter bases at zero)"
    return MethodSolution("optimal", x[:table.n_free], np.asarray(chosen.duals), message, positions,
                          exhaustive=True)
