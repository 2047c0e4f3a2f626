"""The CBMAI LP through PuLP: the only module of allocopt that imports :mod:`pulp`.

The model is built with the PuLP 3.3 API that survives into PuLP 4 (``prob.add_variable``,
``LpConstraint`` objects, ``prob.constraints()`` as a list), so no deprecation warning is raised by the
modelling calls. The solver is always chosen explicitly:

* ``"highs"``: PuLP's HiGHS interface (through ``highspy``, a dependency of allocopt);
* ``"cbc"``: ``COIN_CMD`` when a CBC executable is on the PATH, else PuLP's bundled ``PULP_CBC_CMD``, which
  PuLP 3.3 deprecates; its ``DeprecationWarning`` is suppressed here and nowhere else. CBC runs as a separate
  process whose solution PuLP reads back from a text file with 8 significant digits; the certificate replaces
  that point by the exact vertex of its basis.

The solver is given the equilibrated standard form of :mod:`allocopt.cbmai._scaling` first and the form as
given second; the first answer the certificate of :mod:`allocopt.cbmai.certificate` accepts is returned (an
optimum must snap to a primal and dual feasible basis, infeasibility must be proven by a Farkas ray). The
multipliers PuLP reports (``constraint.pi``) follow each solver's own sign convention (the HiGHS interface flips
the sign of a maximisation, CBC does not), so they are oriented by
:func:`~allocopt.cbmai.certificate.orient_duals` before they guide the certificate.

Nothing reaches stdout or stderr unless ``verbose=True``: PuLP's ``msg`` follows ``verbose``, and HiGHS, which
prints a banner from compiled code when its first model is built whatever the options, runs inside
:func:`~allocopt._quiet.silenced_output`.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from functools import cache
from typing import Any

import numpy as np

from .._quiet import silenced_output
from ..exceptions import MissingDependencyError
from ._methods import MethodSolution
from ._scaling import equilibrate
from .bases import ExtendedSystem, extended_system
from .certificate import Verdict, certify_infeasible, certify_optimal, orient_duals
from .problem import CBMAIProblem

__all__ = ["OPTIONS", "solve", "PULP_SOLVERS", "solve_with_pulp", "available_pulp_solvers"]

PULP_SOLVERS = ("highs", "cbc")

OPTIONS: dict[str, Any] = {"solver": None, "verbose": False}
"""``solver``: "highs" or "cbc" (default None: HiGHS when PuLP can run it, else CBC); ``verbose``: let the solver
print its log (default False: nothing is written to stdout or stderr)."""


def _import_pulp():
    try:
        import pulp
    except ImportError as error:  # pragma: no cover - pulp is a dependency
        raise MissingDependencyError("solve_cbmai(method='pulp') needs PuLP: pip install pulp") from error
    return pulp


_HIGHS_TOLERANCES = {"primal_feasibility_tolerance": 1e-10, "dual_feasibility_tolerance": 1e-10}
"""HiGHS's feasibility tolerances (its defaults, 1e-7, let a weight of -1e-8 on an arm with a huge cost pass)."""

_CBC_TOLERANCES = ["primalTolerance 1e-10", "dualTolerance 1e-10"]
"""The same for CBC (command-line options; its defaults, 1e-7, let it call infeasible LPs optimal)."""


def _make_solver(pulp, name: str, verbose: bool = False):
    if name == "highs":
        solver = pulp.HiGHS(msg=verbose, **_HIGHS_TOLERANCES)
        return solver if solver.available() else None
    coin = pulp.COIN_CMD(msg=verbose, options=_CBC_TOLERANCES)
    if coin.available():
        return coin
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", category=DeprecationWarning, module=r"pulp(\..*)?")
        bundled = pulp.PULP_CBC_CMD(msg=verbose, options=_CBC_TOLERANCES)
    return bundled if bundled.available() else None


def available_pulp_solvers() -> tuple[str, ...]:
    """The names in :data:`PULP_SOLVERS` that PuLP can run on this machine."""
    pulp = _import_pulp()
    with silenced_output():
        return tuple(name for name in PULP_SOLVERS if _make_solver(pulp, name) is not None)


def _backend(pulp, solver: str | None, verbose: bool):
    """``(name, solver object)`` for ``solver`` (None: the first available of :data:`PULP_SOLVERS`)."""
    names = PULP_SOLVERS if solver is None else (solver,)
    for name in names:
        backend = _make_solver(pulp, name, verbose)
        if backend is not None:
            return name, backend
    raise MissingDependencyError(f"solve_cbmai(method='pulp'): no PuLP solver among {names} is available")


def solve_with_pulp(matrix: np.ndarray, rhs: np.ndarray, objective: np.ndarray, solver: str | None = None, *,
                    verbose: bool = False) -> tuple[str, np.ndarray | None, np.ndarray | None, str]:
    """Solve ``max {mu^T x : A x = b, x >= 0}`` with PuLP, silently unless ``verbose``.

    Returns ``(label, x, multipliers, message)``: PuLP's status label ("Optimal", "Infeasible", ...), and for an
    optimum the point and the constraint multipliers as the solver reports them (sign convention of the solver).
    ``solver=None`` picks "highs" when available, else "cbc".
    """
    pulp = _import_pulp()
    with silenced_output(not verbose):
        chosen, backend = _backend(pulp, solver, verbose)
        model = pulp.LpProblem("cbmai", pulp.LpMaximize)
        variables = [model.add_variable(f"x{j}", lowBound=0) for j in range(matrix.shape[1])]
        model += pulp.LpAffineExpression([(var, float(coef)) for var, coef in zip(variables, objective)])
        for row in range(matrix.shape[0]):
            terms = [(variables[j], float(matrix[row, j])) for j in np.flatnonzero(matrix[row])]
            model.addConstraint(pulp.LpConstraint(pulp.LpAffineExpression(terms), sense=pulp.LpConstraintEQ,
                                                  rhs=float(rhs[row]), name=f"row{row}"))
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", category=DeprecationWarning, module=r"pulp(\..*)?")
            status = model.solve(backend)
    label = pulp.LpStatus[status]
    message = f"PuLP with {chosen} ({type(backend).__name__}): {label}"
    if status != pulp.LpStatusOptimal:
        return label, None, None, message
    x = np.array([var.varValue if var.varValue is not None else 0.0 for var in variables], dtype=float)
    multipliers = np.array([constraint.pi for constraint in model.constraints()], dtype=float)
    return label, x, multipliers, message


def _attempt(system: ExtendedSystem, scaled: bool, solver: str | None, verbose: bool,
             tolerances: dict[str, float], infeasibility: Callable[[], Verdict]) -> tuple[MethodSolution | None, str]:
    """One solve (on the equilibrated form when ``scaled``); the certified answer, or None and a note."""
    columns, rhs, objective = system.columns[:, :system.n_free], system.rhs, system.objective[:system.n_free]
    scaling = equilibrate(columns, rhs) if scaled else None
    data = scaling.apply(columns, rhs, objective) if scaling is not None else (columns, rhs, objective)
    label, x, multipliers, message = solve_with_pulp(*data, solver, verbose=verbose)
    message += " (equilibrated form)" if scaled else " (unscaled form)"
    if x is not None and multipliers is not None:
        if scaling is not None:
            x, multipliers = x * scaling.columns, multipliers * scaling.rows
        duals = orient_duals(multipliers, columns, rhs, objective, float(objective @ x))
        verdict = certify_optimal(system, x, duals, singular_tol=tolerances["singular_tol"],
                                  feasibility_tol=tolerances["feasibility_tol"])
        if verdict.certified:
            return MethodSolution("optimal", verdict.x, verdict.duals, message, verdict.positions), ""
        return None, f"{message}, an optimum that failed the certificate: {verdict.reason}"
    if label == "Infeasible":
        verdict = infeasibility()
        if verdict.certified:
            return MethodSolution("infeasible", None, None, message, farkas_ray=verdict.farkas_ray), ""
        return None, f"{message}, infeasibility that failed the certificate: {verdict.reason}"
    return None, message


def solve(problem: CBMAIProblem, subset: np.ndarray, *, singular_tol: float, feasibility_tol: float,
          solver: str | None = None, verbose: bool = False) -> MethodSolution:
    """``solve_cbmai(method="pulp")``: the equilibrated then the unscaled form, the first certified answer."""
    system = extended_system(problem, subset)
    tolerances = {"singular_tol": singular_tol, "feasibility_tol": feasibility_tol}
    infeasibility = cache(lambda: certify_infeasible(system))
    notes: list[str] = []
    for scaled in (True, False):
        solution, note = _attempt(system, scaled, solver, verbose, tolerances, infeasibility)
        if solution is not None:
            return solution._replace(message="; ".join(notes + [solution.message]))
        notes.append(note)
    return MethodSolution("not_certified", None, None, "PuLP gave no certified answer: " + "; ".join(notes))
