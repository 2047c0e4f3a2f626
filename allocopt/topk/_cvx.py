r"""The top-k allocation problem modelled in CVXPY: an independent verification oracle.

Two equivalent convex models are offered (``formulation=``):

* ``"epigraph"`` - problem (17) (or (11) for budget costs) of Wang, Yang, You (2022):
  :math:`\max \phi` s.t. :math:`\phi \le C_{ij}(\psi)` for all pairs, :math:`\psi \in \Sigma_K`;
* ``"homogeneous"`` (default) - :math:`T^* = \min \{\sum_a \psi_a : C_{ij}(\psi) \ge 1\}`,
  :math:`\psi^* = \psi/\sum\psi`, whose optimal value is :math:`T^*` itself.

Exact conic representation. With :math:`w = \psi/\phi` (dispersion), :math:`S = w_i + w_j`,
:math:`M = w_i\theta_i + w_j\theta_j` and any per-pair centre :math:`c`, the Bregman identity
:math:`\sum_a w_a d(\theta_a, c) - S\, d(M/S, c) = \sum_a w_a d(\theta_a, M/S)` gives

.. math::
    C_{ij} = w_i\, d(\theta_i, c) + w_j\, d(\theta_j, c) - S\, d(M/S, c),

linear minus the perspective of :math:`d(\cdot, c)`. Each family supplies that perspective
(:meth:`~allocopt.families.ExponentialFamily.conic_confidence_perspective`), for the built-in families

* gaussian: :math:`(M - Sc)^2 / (2S)` (a rotated second-order cone),
* bernoulli: ``rel_entr(M, S c) + rel_entr(S - M, S (1 - c))``,
* poisson: ``rel_entr(M, S c) + S c - M``,
* exponential: ``rel_entr(S, M / c) + M / c - S``.

Budget costs use the natural parameters: with :math:`N = w_i\eta_i + w_j\eta_j`, a centre :math:`x_c` with
natural parameter :math:`\eta_c` and :math:`D = N - S\eta_c`,
:math:`B_{ij} = w_i d(x_c, \theta_i) + w_j d(x_c, \theta_j) - S\tilde A(N/S)` with the centred log-partition
:math:`\tilde A(\eta) = A(\eta) - A(\eta_c) - x_c(\eta - \eta_c)`, whose perspective is
:math:`x_c(S e^{D/S} - S - D)` (poisson), :math:`S\log(1 - x_c + x_c e^{D/S}) - x_c D` (bernoulli, two
exponential cones) and ``N/eta_c - S + rel_entr(S, N/eta_c)`` (exponential), each supplied by its family
(:meth:`~allocopt.families.ExponentialFamily.conic_budget_perspective`); a family with
:math:`B_{ij} = C_{ij}` (``budget_equals_confidence``, Gaussian arms) uses its confidence perspective for both
kinds. When the costs are harmonic (:meth:`~allocopt.families.ExponentialFamily.harmonic_costs`, Gaussian
arms), the constraint of the homogeneous model is linear in ``inv_pos(psi)``:
:math:`\phi_i/\psi_i + \phi_j/\psi_j \le (\theta_i - \theta_j)^2/2`.

Scaling. Each pair is centred at its infimum point for a reference allocation (the cone variables are then
second order in the distance to it), the costs are multiplied by :math:`T_0 = 1/\Gamma(\psi_{\rm ref})` and
each arm's variable by :math:`\psi_{{\rm ref}, a}`, so that the model's values are of order one whatever the
size of :math:`\Gamma^*`. The reference starts at :meth:`TopKProblem.heuristic_allocation` and becomes the
previous solution in up to ``max_rescalings`` further rounds while the certificate misses ``tol``; a last
round uses the other model. Clarabel runs at gap tolerance 1e-12 and feasibility 1e-9, with fallbacks (its
defaults, the other model, equal-weight centres, the plain model (17)) if it breaks down. Measured accuracy:
docs/topk.md.

The multipliers :math:`\mu` are the constraint duals, normalised; the result is certified by the shared
certifier, not by the solver's own report.
"""

from __future__ import annotations

import time
import warnings
from typing import Any, NamedTuple

import numpy as np

from .._validation import as_bool, as_choice, as_float, as_int, fail
from ..exceptions import AllocoptError, MissingDependencyError, SolverError
from .problem import TopKProblem
from .certificate import Certificate, certify
from .result import TopKResult, build_result

__all__ = ["solve", "OPTIONS", "FORMULATIONS", "build_model", "CvxModel", "ConicCost"]

FORMULATIONS = ("homogeneous", "epigraph")
# Clarabel's defaults are 1e-8. The scaled models reach duality gaps near 1e-12; asking the primal residual
# for more than 1e-9 makes Clarabel take one step too many and lose accuracy (measured, docs/topk.md).
CLARABEL_TOLERANCES = {"tol_gap_abs": 1e-12, "tol_gap_rel": 1e-12, "tol_feas": 1e-9, "tol_ktratio": 1e-8,
                       "max_iter": 300}
OPTIONS = {"formulation": "homogeneous", "scale": True, "solver": "CLARABEL", "solver_options": None,
           "tol": 1e-8, "max_rescalings": 2}


class ConicCost(NamedTuple):
    """A pair cost as CVXPY expressions: ``coef_top * w_top + coef_bottom * w_bottom - perspective``, with the
    extra constraints that define the perspective's epigraph variables."""

    coef_top: Any
    coef_bottom: Any
    perspective: Any
    constraints: list


class CvxModel(NamedTuple):
    """A CVXPY model of the top-k problem: the problem, the (scaled) allocation variable, the cost constraint
    whose duals are the pair multipliers, and the epigraph variable phi (``None`` for the homogeneous model)."""

    problem: Any
    allocation: Any
    cost_constraint: Any
    phi: Any


class _Solved(NamedTuple):
    """A model the solver solved, with the scale it was built with."""

    model: CvxModel
    formulation: str
    factor: float
    arm_scale: np.ndarray | None


class _Candidate(NamedTuple):
    """The certified answer of one rescaling round."""

    psi: np.ndarray
    mu: np.ndarray
    certificate: Certificate
    solver_status: str
    factor: float
    round_index: int
    formulation: str


def _import_cvxpy():
    try:
        import cvxpy as cp
    except ImportError as error:  # pragma: no cover - cvxpy is a core dependency
        raise MissingDependencyError("solve_topk(method='cvxpy') needs cvxpy: pip install cvxpy") from error
    return cp


def _perspective(cp, family, kind, w_top, w_bottom, theta_top, theta_bottom, eta_top, eta_bottom,
                 centre) -> ConicCost:
    """The linear coefficients on w_top and w_bottom, the convex perspective expression (the family's) and the
    extra constraints, so that cost = coef_top * w_top + coef_bottom * w_bottom - perspective. ``centre`` is the
    per-pair centring point (a mean; for budget costs its natural parameter is used)."""
    total = w_top + w_bottom
    if kind == "confidence" or family.budget_equals_confidence:
        coef_top, coef_bottom = family.unit_kl(theta_top, centre), family.unit_kl(theta_bottom, centre)
        moment = cp.multiply(theta_top, w_top) + cp.multiply(theta_bottom, w_bottom)
        perspective = family.conic_confidence_perspective(cp, total, moment, centre)
    else:
        coef_top, coef_bottom = family.unit_kl(centre, theta_top), family.unit_kl(centre, theta_bottom)
        natural_moment = cp.multiply(eta_top, w_top) + cp.multiply(eta_bottom, w_bottom)
        perspective = family.conic_budget_perspective(cp, total, natural_moment, centre, family.unit_natural(centre))
    return ConicCost(coef_top, coef_bottom, perspective.expression, list(perspective.constraints))


def build_model(problem: TopKProblem, kind: str, formulation: str = "homogeneous", scale: float = 1.0,
                arm_scale: np.ndarray | None = None, reference: np.ndarray | None = None) -> CvxModel:
    """Build the CVXPY problem (a :class:`CvxModel`).

    The costs are
    multiplied by ``scale``; the allocation is ``arm_scale * allocation_variable``. Each pair's divergence
    is centred at its infimum point for the ``reference`` allocation (default :meth:`TopKProblem.heuristic_allocation`).
    """
    cp = _import_cvxpy()
    n_arms, k = problem.n_arms, problem.k
    rows, cols = np.divmod(np.arange(problem.n_pairs), n_arms - k)
    top, bottom = problem.top[rows], problem.bottom[cols]
    theta, eta = problem.theta, problem.unit_natural
    allocation = cp.Variable(n_arms, nonneg=True)
    arm_scale = np.ones(n_arms) if arm_scale is None else arm_scale
    weights = cp.multiply(arm_scale / problem.dispersion, allocation)
    w_top, w_bottom = weights[top], weights[bottom]
    if formulation == "homogeneous" and problem.family.harmonic_costs(kind):
        # C_ij >= 1/scale  <=>  phi_i/psi_i + phi_j/psi_j <= scale (theta_i - theta_j)^2 / 2, linear in 1/psi
        inverse = cp.inv_pos(allocation)
        coefficients = problem.dispersion / arm_scale
        bound = 0.5 * scale * (theta[top] - theta[bottom]) ** 2
        cost_constraint = (cp.multiply(coefficients[top] / bound, inverse[top])
                           + cp.multiply(coefficients[bottom] / bound, inverse[bottom])) <= 1.0
        model = cp.Problem(cp.Minimize(arm_scale @ allocation), [cost_constraint])
        return CvxModel(model, allocation, cost_constraint, None)
    if reference is None:
        reference = problem.heuristic_allocation()
    centre = problem.pair_terms(reference, rows, cols, kind=kind).point
    conic = _perspective(cp, problem.family, kind, w_top, w_bottom, theta[top], theta[bottom], eta[top], eta[bottom],
                         centre)
    constraints = conic.constraints
    cost = scale * (cp.multiply(conic.coef_top, w_top) + cp.multiply(conic.coef_bottom, w_bottom) - conic.perspective)
    if formulation == "homogeneous":
        cost_constraint = cost >= 1.0
        model = cp.Problem(cp.Minimize(arm_scale @ allocation), [cost_constraint] + constraints)
        return CvxModel(model, allocation, cost_constraint, None)
    phi = cp.Variable()
    cost_constraint = cost >= phi
    model = cp.Problem(cp.Maximize(phi), [cost_constraint, arm_scale @ allocation == 1.0] + constraints)
    return CvxModel(model, allocation, cost_constraint, phi)


def solve(problem: TopKProblem, kind: str, formulation: str = "homogeneous", scale: bool = True,
          solver: str = "CLARABEL", solver_options: dict | None = None, tol: float = 1e-8,
          max_rescalings: int = 2) -> TopKResult:
    """Solve with CVXPY (see the module docstring)."""
    cp = _import_cvxpy()
    func = "solve_topk(method='cvxpy')"
    formulation = as_choice(formulation, func, "formulation", FORMULATIONS)
    scale = as_bool(scale, func, "scale")
    installed = cp.installed_solvers()
    if not isinstance(solver, str) or solver.upper() not in installed:
        fail(func, "solver", "an installed CVXPY solver: " + ", ".join(sorted(installed)), solver)
    solver = solver.upper()
    if solver_options is not None and not isinstance(solver_options, dict):
        fail(func, "solver_options", "a dict of solver keyword arguments", solver_options)
    tol = as_float(tol, func, "tol", low=0.0)
    max_rescalings = as_int(max_rescalings, func, "max_rescalings", low=0)
    started = time.perf_counter()

    tight = dict(CLARABEL_TOLERANCES) if (solver == "CLARABEL" and scale) else {}
    tight.update(solver_options or {})
    loose = dict(solver_options or {})
    other = "epigraph" if formulation == "homogeneous" else "homogeneous"
    # rounds of rescaling with the requested model, then one round with the other model if the certificate
    # still misses tol; within a round, fallbacks when the solver breaks down (default tolerances, the other
    # model, centring every pair at its equal-weight point)
    plan = [formulation] * (max_rescalings + 1) + [other] if scale else [formulation]
    reference = problem.heuristic_allocation()
    best: _Candidate | None = None
    total_iterations = 0
    failures = []
    for round_index, primary in enumerate(plan):
        secondary = other if primary == formulation else formulation
        # (model, solver options, scaled, centred at the reference allocation's points)
        attempts = [(primary, tight, scale, True)] + ([(primary, loose, scale, True)] if loose != tight else [])
        if scale:
            attempts += [(secondary, tight, True, True), (primary, tight, True, False), (secondary, tight, True, False),
                         ("epigraph", loose, False, False)]  # last resort: the plain model (17)
        solved: _Solved | None = None
        for model_name, options, scaled, centred in attempts:
            factor, arm_scale = 1.0, None
            if scaled:
                # T_0 = 1/Gamma(reference) >= T*, and per-arm scales making every model variable of order one
                with np.errstate(divide="ignore"):
                    factor = 1.0 / problem.pair_terms(reference, kind=kind).cost.min()
                arm_scale = reference * problem.n_arms
            centres = reference if centred else problem.dispersion / problem.dispersion.sum()
            try:
                built = build_model(problem, kind, model_name, factor, arm_scale, centres)
                with warnings.catch_warnings(), np.errstate(all="ignore"):
                    warnings.filterwarnings("ignore", message="Solution may be inaccurate")
                    built.problem.solve(solver=solver, **options)
            except AllocoptError:  # (a ValueError too: a family without a conic model, refused by name)
                raise
            except (cp.error.SolverError, ValueError) as error:  # (ValueError: CVXPY's "data contains NaN or Inf")
                failures.append(f"{model_name}: {error}".splitlines()[0])
                continue
            if built.problem.status in ("optimal", "optimal_inaccurate") and built.allocation.value is not None:
                solved = _Solved(built, model_name, factor, arm_scale)
                break
            failures.append(f"{model_name}: status {built.problem.status}")
        if solved is None:
            break
        model = solved.model.problem
        stats = model.solver_stats
        total_iterations += int(stats.num_iters) if stats is not None and stats.num_iters is not None else 0
        raw = np.maximum(np.asarray(solved.model.allocation.value, dtype=float), 0.0)
        raw = raw * (1.0 if solved.arm_scale is None else solved.arm_scale)
        psi = raw / raw.sum()
        duals = np.maximum(np.asarray(solved.model.cost_constraint.dual_value, dtype=float).ravel(), 0.0)
        mu = duals.reshape(problem.k, problem.n_arms - problem.k)
        certificate = certify(problem, psi, mu, kind)
        if best is None or certificate.relative_gap < best.certificate.relative_gap:
            best = _Candidate(psi, mu, certificate, model.status, solved.factor, round_index, solved.formulation)
        if certificate.relative_gap <= tol:
            break
        # rescale around the current solution (floored so that no arm's scale collapses to zero)
        reference = np.maximum(psi, 1e-3 * reference)
        reference = reference / reference.sum()
    if best is None:
        raise SolverError(f"CVXPY solver {solver} failed on {problem!r}: " + "; ".join(failures))
    status = "inaccurate" if best.solver_status == "optimal_inaccurate" else None
    return build_result(problem, kind, "cvxpy", best.psi, best.mu, iterations=total_iterations, started=started,
                        tol=tol, status=status, certificate=best.certificate,
                        message=f"CVXPY {best.formulation} model, solver {solver}, status {best.solver_status}, "
                                f"scale T0 = {best.factor:.6g}, {best.round_index} rescaling(s)",
                        extras={"formulation": best.formulation, "solver": solver, "scale": best.factor,
                                "solver_status": best.solver_status, "rescalings": best.round_index})
