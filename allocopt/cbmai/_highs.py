"""The CBMAI LP through :func:`scipy.optimize.linprog` (``method="highs"``), on an equilibrated copy.

HiGHS is handed the equilibrated standard form of :mod:`allocopt.cbmai._scaling` (powers of two, undone exactly
on ``x`` and ``lambda``). linprog minimises, so the program solved is ``min {-mu'^T x' : A' x' = b', x' >= 0}``;
its equality marginals are ``d(min objective)/d b' = -lambda'``, and the dual of the maximisation is recovered
with the sign flipped and then checked by :func:`~allocopt.cbmai.certificate.orient_duals`.

Every answer is judged by the certificate of :mod:`allocopt.cbmai.certificate` before it is accepted: an optimum
must snap to a primal and dual feasible basis, an infeasibility verdict must be proven by a Farkas ray. When an
attempt fails (columns that still span many decades after equilibration can make the simplex method declare a
feasible LP infeasible, or stop with ``model_status Unknown``), the next is tried: simplex then interior point
with tight tolerances, then both with HiGHS's defaults, then both on the form as given. When none is certified
the method says so
(``"not_certified"``) and :func:`~allocopt.cbmai.solve_cbmai` falls back to the enumeration.
"""

from __future__ import annotations

from functools import cache
from typing import Any

import numpy as np

from .._quiet import silenced_output
from ._methods import MethodSolution
from ._scaling import Equilibration, equilibrate
from .bases import extended_system
from .certificate import certify_infeasible, certify_optimal, orient_duals
from .problem import CBMAIProblem

__all__ = ["OPTIONS", "solve", "Equilibration", "equilibrate"]

OPTIONS: dict[str, Any] = {"verbose": False}
"""``verbose``: let HiGHS print its log (default False: nothing is written to stdout or stderr)."""

_TIGHT = {"primal_feasibility_tolerance": 1e-10, "dual_feasibility_tolerance": 1e-10}
_ATTEMPTS: tuple[tuple[bool, str, dict[str, float]], ...] = (
    (True, "highs", _TIGHT), (True, "highs-ipm", _TIGHT), (True, "highs-ds", {}), (True, "highs-ipm", {}),
    (False, "highs-ipm", _TIGHT), (False, "highs-ds", _TIGHT))
"""``(equilibrated, method, options)``: on the equilibrated form, simplex then interior point with tight
tolerances, then both with HiGHS's defaults; last, both on the form as given (whose rows the equilibration can
leave spanning many decades in a column)."""


def solve(problem: CBMAIProblem, subset: np.ndarray, *, singular_tol: float, feasibility_tol: float,
          verbose: bool = False) -> MethodSolution:
    """``solve_cbmai(method="highs")``: the first answer of the attempts above that the certificate accepts."""
    from scipy.optimize import linprog

    system = extended_system(problem, subset)
    columns, rhs, objective = system.columns[:, :system.n_free], system.rhs, system.objective[:system.n_free]
    scaling = equilibrate(columns, rhs)
    unit = Equilibration(np.ones(rhs.size), np.ones(objective.size))
    infeasibility = cache(lambda: certify_infeasible(system))
    notes: list[str] = []
    for equilibrated, name, tolerances in _ATTEMPTS:
        used = scaling if equilibrated else unit
        scaled_matrix, scaled_rhs, scaled_objective = used.apply(columns, rhs, objective)
        with silenced_output(not verbose):
            attempt = linprog(-scaled_objective, A_eq=scaled_matrix, b_eq=scaled_rhs, bounds=(0, None),
                              method=name, options=dict(tolerances, disp=bool(verbose)))
        label = (f"linprog({name!r}{', tight tolerances' if tolerances else ''}, "
                 f"{'equilibrated' if equilibrated else 'unscaled'} form)")
        if attempt.status == 0:
            x = np.asarray(attempt.x, dtype=float) * used.columns
            duals = -np.asarray(attempt.eqlin.marginals, dtype=float) * used.rows
            duals = orient_duals(duals, columns, rhs, objective, float(objective @ x))
            verdict = certify_optimal(system, x, duals, singular_tol=singular_tol, feasibility_tol=feasibility_tol)
            if verdict.certified:
                return MethodSolution("optimal", verdict.x, verdict.duals,
                                      "; ".join(notes + [f"{label}: {attempt.message}"]), verdict.positions)
            notes.append(f"{label} reported an optimum that failed the certificate: {verdict.reason}")
        elif attempt.status == 2:
            verdict = infeasibility()  # the same check whichever attempt says so: run once
            if verdict.certified:
                return MethodSolution("infeasible", None, None, "; ".join(notes + [f"{label}: {attempt.message}"]),
                                      farkas_ray=verdict.farkas_ray)
            notes.append(f"{label} reported infeasibility that failed the certificate: {verdict.reason}")
        else:
            notes.append(f"{label}: {attempt.message}")
    return MethodSolution("not_certified", None, None, "HiGHS gave no certified answer: " + "; ".join(notes))
