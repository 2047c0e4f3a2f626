r"""``check_topk``: the KKT certificate of an allocation and its structure report.

Given an allocation :math:`\psi` (from any source), :func:`check_topk`

1. finds the near-binding pairs :math:`E = \{(i, j) : C_{ij}(\psi) \le (1 + \mathrm{tol})\Gamma(\psi)\}`;
2. solves the KKT system (18) in its equivalent form (65) for the multipliers, with HiGHS, as the linear
   program (column-equilibrated, so that near-ties do not defeat it)

   .. math::
       \min_{\mu \ge 0,\ \sum_E \mu = 1} \ \max_a \Big|\sum_{e \in E,\, e \ni a} \mu_e\,\partial_a C_e(\psi)
       - \Gamma(\psi)\Big| / \Gamma(\psi),

   whose value is the *KKT residual* (zero exactly at an optimum, Theorem 3.5);
3. certifies :math:`\psi` with these multipliers through the shared certifier (weak duality, see
   :mod:`allocopt.topk.certificate`): a gap that bounds :math:`\Gamma^* - \Gamma(\psi)` whatever the residual.
   When neither these nor the caller's multipliers certify :math:`\psi` within the tolerance (an allocation
   away from the optimum, whose near-binding pairs cannot satisfy (65)), the multipliers :math:`\mu^*` of the
   exact solver's optimum are used: their refined bound :math:`g(\mu^*) = \Gamma^*`, so the gap is the true
   distance to the optimum. Every allocation is graded, and the costs are evaluated on the instance scaled
   into the middle of the floating-point range (:meth:`~allocopt.topk.TopKProblem.cost_normalisation`);
4. analyses the binding graph (:mod:`allocopt.topk.structure`): components with their balance residuals,
   Propositions 3.1 and 3.2, and the Theorem 3.4 double-star verdict.
"""

from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, ClassVar, NamedTuple

import numpy as np
from numpy.typing import ArrayLike

from .._json import jsonable
from .._result import Result, omit_from_dict
from .._validation import as_float, as_float_matrix, check_in_simplex, fail
from ..exceptions import InvalidArgumentError, SolverError
from .certificate import REFINEMENT_THRESHOLD, Certificate, certify
from .multipliers import PairMultipliers
from .problem import TopKProblem, restored_cost, scaled_bound
from .structure import (BindingPairs, Component, DoubleStarVerdict, binding_graph, binding_pairs, double_star_verdict,
                        gaussian_condition, graph_components, monotonicity_violations)

__all__ = ["TopKCertificate", "check_topk", "CHECK_STATUSES"]

CHECK_STATUSES = ("passed", "not_certified", "structure_violated")


@dataclass(frozen=True, kw_only=True)
class TopKCertificate(Result):
    r"""Report of :func:`check_topk`.

    It carries the core of every allocopt result (:mod:`allocopt._result`) and is built by keyword. Statuses:
    ``"passed"`` (the only success: see :attr:`passed`), ``"not_certified"`` (the certified relative gap
    exceeds ``tol``) and ``"structure_violated"`` (the gap is within ``tol`` but a structural condition fails:
    an arm in no near-binding pair, an unbalanced component or a monotonicity violation); the message names
    what failed. ``method`` is where the multipliers come from (as :attr:`multiplier_source`), ``time`` the
    wall-clock seconds of the check.

    Attributes
    ----------
    psi : ndarray, shape (K,)
        The allocation checked.
    value : float
        :math:`\Gamma(\psi)`.
    kind : str
        ``"confidence"`` or ``"budget"``.
    tol : float
        Relative tolerance defining near-binding pairs and the pass criteria.
    multipliers : PairMultipliers
        Multipliers solving the KKT system over the near-binding pairs, stored sparsely (:attr:`mu` is the dense
        matrix, built when asked for).
    kkt_residual : float
        Relative residual of equations (65) with these multipliers.
    gap, upper_bound : float
        Certified optimality gap :math:`\ge \Gamma^* - \Gamma(\psi)` and the bound :math:`\ge \Gamma^*`.
    graph : networkx.Graph
        The binding graph over the caller's arm indices (edges carry ``cost``, ``relative_excess``, ``mu``).
    components : tuple of Component
        Its connected components with their balance residuals.
    every_arm_binding : bool
        Proposition 3.1: every arm is in a near-binding pair.
    non_binding_arms : tuple of int
        Arms in no near-binding pair.
    monotone : bool or None
        Proposition 3.2 holds within ``tol``; ``None`` when it does not apply (heteroscedastic arms).
    monotonicity_violations : tuple of (int, int)
        Offending ``(better-ranked arm, worse-ranked arm)`` pairs.
    double_star : DoubleStarVerdict
        Theorem 3.4.
    method : str
        Where :attr:`mu` comes from: ``"kkt-lp"`` (the linear program of the module docstring), ``"given"``
        (the ``mu`` passed to :func:`check_topk`, kept because it certifies a smaller gap or the linear
        program failed) or ``"optimum"`` (the exact solver's multipliers of the instance, used when neither of
        the others certifies the allocation within ``tol``: their refined bound is :math:`\Gamma^*` itself).
    certificate : Certificate
        The shared certifier's numbers for :attr:`mu` (:mod:`allocopt.topk.certificate`).
    """

    SUCCESS_STATUSES: ClassVar[frozenset[str]] = frozenset({"passed"})

    psi: np.ndarray
    value: float
    kind: str
    tol: float
    multipliers: PairMultipliers = omit_from_dict(repr=False)
    kkt_residual: float
    gap: float
    upper_bound: float
    graph: Any = omit_from_dict(repr=False)
    components: tuple[Component, ...]
    every_arm_binding: bool
    non_binding_arms: tuple[int, ...]
    monotone: bool | None
    monotonicity_violations: tuple[tuple[int, int], ...]
    double_star: DoubleStarVerdict
    certificate: Certificate = field(repr=False)

    @cached_property
    def mu(self) -> np.ndarray:
        """Dense k x (K-k) multipliers, zero off the near-binding pairs (read-only)."""
        dense = self.multipliers.dense()
        dense.setflags(write=False)
        return dense

    @property
    def multiplier_source(self) -> str:
        """Where :attr:`mu` comes from (the core ``method``): ``"kkt-lp"``, ``"given"`` or ``"optimum"``."""
        return self.method

    @property
    def relative_gap(self) -> float:
        """``gap / value``."""
        return _relative_gap(self.gap, self.value)

    @property
    def balanced(self) -> bool:
        """Every component's balance residual is within ``tol`` (components with no balance equation pass)."""
        return _balanced(self.components, self.tol)

    @property
    def passed(self) -> bool:
        """The allocation is certified optimal within ``tol`` and satisfies the structural conditions:
        certified relative gap <= tol, every arm binding, balanced components and (where it applies)
        monotonicity (the core ``success``, status ``"passed"``)."""
        return self.success

    def component_indices(self, one_based: bool = False) -> list[tuple[tuple[int, ...], tuple[int, ...]]]:
        """Components as ``(top arms, bottom arms)`` tuples (optionally 1-based, as in the paper)."""
        shift = 1 if one_based else 0
        return [(tuple(a + shift for a in c.top), tuple(b + shift for b in c.bottom)) for c in self.components]

    def summary(self) -> str:
        """A human-readable multi-line report."""
        lines = [
            f"KKT check: Gamma(psi) = {self.value:.10g}   certified gap with the KKT multipliers = {self.gap:.3g} "
            f"(relative {self.relative_gap:.3g})",
            f"KKT residual (65) = {self.kkt_residual:.3g}   near-binding tolerance = {self.tol:g}"
            + ("" if self.multiplier_source == "kkt-lp" else "   (multipliers: the given ones)"),
            f"components of the binding graph ({len(self.components)}):",
        ]
        for component in self.components:
            lines.append(f"  top {list(component.top)}  bottom {list(component.bottom)}  "
                         f"balance residual {component.balance_residual:.3g}"
                         + ("" if component.is_tree else "  (has cycles)"))
        lines.append(f"every arm binding (Prop. 3.1): {self.every_arm_binding}"
                     + (f"  non-binding: {list(self.non_binding_arms)}" if self.non_binding_arms else ""))
        monotone = "not applicable (heteroscedastic)" if self.monotone is None else str(self.monotone)
        lines.append(f"monotone (Prop. 3.2): {monotone}")
        lines.append(f"double star (Thm. 3.4): {self.double_star.holds} - {self.double_star.reason}")
        lines.append(f"passed: {self.passed}")
        return "\n".join(lines)

    def to_dict(self) -> dict[str, Any]:
        """A strict-JSON summary (non-finite numbers as ``"Infinity"``, ``"-Infinity"``, ``"NaN"``)."""
        return jsonable({
            **self.core_dict(),
            "value": self.value, "gap": self.gap, "relative_gap": self.relative_gap,
            "kkt_residual": self.kkt_residual, "tol": self.tol, "multiplier_source": self.multiplier_source,
            "components": [{"top": list(c.top), "bottom": list(c.bottom), "balance_residual": c.balance_residual,
                            "is_tree": c.is_tree} for c in self.components],
            "every_arm_binding": self.every_arm_binding, "monotone": self.monotone,
            "double_star": {"holds": self.double_star.holds, "reason": self.double_star.reason},
            "passed": self.passed,
        })


def _relative_gap(gap: float, value: float) -> float:
    return gap / value if value > 0 else np.inf


def _balanced(components: tuple[Component, ...], tol: float) -> bool:
    return all(not abs(component.balance_residual) > tol for component in components)


def _check_status(relative_gap: float, tol: float, non_binding: tuple[int, ...], components: tuple[Component, ...],
                  violations: tuple[tuple[int, int], ...] | None) -> tuple[str, str]:
    """The status of a check and its message (what failed, or that everything holds)."""
    if not relative_gap <= tol:
        return "not_certified", f"the certified relative gap {relative_gap:.3g} exceeds tol = {tol:g}"
    failures = []
    if non_binding:
        failures.append(f"arms {list(non_binding)} are in no near-binding pair (Prop. 3.1)")
    if not _balanced(components, tol):
        failures.append("a component of the binding graph does not balance (Prop. 3.3)")
    if violations:
        failures.append(f"{len(violations)} monotonicity violation(s) (Prop. 3.2)")
    if failures:
        return "structure_violated", "; ".join(failures)
    return "passed", "certified optimal within tol; every structural condition holds"


class _Multipliers(NamedTuple):
    """Multipliers on a set of pairs and the KKT residual they achieve (``None`` weights: no solution)."""

    weights: np.ndarray | None
    residual: float
    message: str


class _Candidate(NamedTuple):
    """Multipliers of one source with their certificate and KKT residual (and a note for the report's message)."""

    source: str
    certificate: Certificate
    multipliers: PairMultipliers
    residual: float
    note: str = ""


class _PairMultipliers(NamedTuple):
    """Multipliers on the pairs ``(rows[e], cols[e])`` (positions in ``top`` / ``bottom``)."""

    rows: np.ndarray
    cols: np.ndarray
    multipliers: _Multipliers


def _gradient_matrix(problem: TopKProblem, psi: np.ndarray, rows: np.ndarray, cols: np.ndarray, value: float,
                     kind: str):
    r"""The sparse ``(K, |E|)`` matrix :math:`G_{a e} = \partial_a C_e(\psi) / \Gamma(\psi)`."""
    from scipy.sparse import coo_matrix

    terms = problem.pair_terms(psi, rows, cols, kind=kind)
    n_edges = rows.shape[0]
    edge_index = np.arange(n_edges)
    with np.errstate(over="ignore"):  # a gradient over a subnormal Gamma: infinite entries, caught by the callers
        relative = np.concatenate([terms.grad_top, terms.grad_bottom]) / value
    return coo_matrix((relative,
                       (np.concatenate([problem.top[rows], problem.bottom[cols]]),
                        np.concatenate([edge_index, edge_index]))),
                      shape=(problem.n_arms, n_edges)).tocsr()


def _residual(gradients, weights: np.ndarray) -> float:
    r""":math:`\max_a |(G\mu)_a - 1|` over every arm."""
    return float(np.abs(gradients @ weights - 1.0).max())


def _solve_kkt_multipliers(problem: TopKProblem, psi: np.ndarray, rows: np.ndarray, cols: np.ndarray,
                           value: float, kind: str) -> _Multipliers:
    r"""The LP of the module docstring over the given pairs, column-equilibrated.

    Near-ties make the columns of :math:`G` span dozens of orders of magnitude (a pair whose cost is
    :math:`\Gamma` only because its arms are one ulp apart has gradients of order 1, while a pair with a
    large gap and a tiny allocation has gradients of order :math:`1/\Gamma`), which the LP solver cannot
    handle. The LP is therefore solved in the variables :math:`\nu_e = \mu_e \max_a |G_{ae}|`, which make
    every column of the constraint matrix of unit size. The normalisation :math:`\sum_e \mu_e = 1` is left
    out of the LP: on pairs with :math:`C_e = \Gamma`, Euler's identity
    :math:`\sum_a \psi_a \partial_a C_e = C_e` (the costs are homogeneous of degree one in :math:`\psi`)
    gives :math:`\sum_e \mu_e = \sum_a \psi_a (G\mu)_a`, so a small residual forces the sum near one; the
    weights are then normalised and the residual recomputed with them. The rows are the arms covered by the
    pairs (an arm in no pair has residual 1 whatever the multipliers; it is counted in the reported residual).
    """
    from scipy.optimize import linprog
    from scipy.sparse import csr_matrix, diags, hstack, vstack

    gradients = _gradient_matrix(problem, psi, rows, cols, value, kind)
    if not np.all(np.isfinite(gradients.data)):
        return _Multipliers(None, np.inf, "the pair gradients are not finite")
    covered = np.unique(np.concatenate([problem.top[rows], problem.bottom[cols]]))
    column_scale = np.asarray(abs(gradients).max(axis=0).todense(), dtype=float).ravel()
    column_scale[~(column_scale > 0)] = 1.0  # (at least 1 on near-binding pairs, by Euler's identity)
    scaled = gradients[covered] @ diags(1.0 / column_scale, format="csr")
    ones = csr_matrix(np.ones((covered.shape[0], 1)))
    constraints = vstack([hstack([scaled, -ones]), hstack([-scaled, -ones])]).tocsr()
    bounds_rhs = np.concatenate([np.ones(covered.shape[0]), -np.ones(covered.shape[0])])
    objective = np.zeros(rows.shape[0] + 1)
    objective[-1] = 1.0
    solution = linprog(objective, A_ub=constraints, b_ub=bounds_rhs, bounds=(0, None), method="highs")
    if solution.x is None or solution.status != 0:
        return _Multipliers(None, np.inf, f"the KKT linear program failed: {solution.message}")
    weights = np.maximum(solution.x[:-1], 0.0) / column_scale
    total = weights.sum()
    if not (np.isfinite(total) and total > 0):
        return _Multipliers(None, np.inf, "the KKT linear program returned zero multipliers")
    weights = weights / total
    return _Multipliers(weights, _residual(gradients, weights), "")


def _given_multipliers(problem: TopKProblem, psi: np.ndarray, mu: PairMultipliers, value: float,
                       kind: str) -> _PairMultipliers:
    """The pairs carrying ``mu`` (normalised) and the KKT residual of ``mu`` on them."""
    rows, cols, weights = mu.rows, mu.cols, mu.values
    gradients = _gradient_matrix(problem, psi, rows, cols, value, kind)
    residual = _residual(gradients, weights) if np.all(np.isfinite(gradients.data)) else np.inf
    return _PairMultipliers(rows, cols, _Multipliers(weights, residual, ""))


def _checked_multipliers(mu: Any, shape: tuple[int, int], func: str) -> PairMultipliers:
    """``mu`` (dense, or :class:`PairMultipliers` of ``shape``) as pair multipliers: nonnegative, not all zero."""
    if isinstance(mu, PairMultipliers):
        if mu.shape != shape:
            fail(func, "mu", f"pair multipliers of shape {shape}", mu.shape)
        if np.any(~np.isfinite(mu.values)) or np.any(mu.values < 0) or not np.any(mu.values > 0):
            fail(func, "mu", "nonnegative finite multipliers, not all zero", mu.values)
        return mu
    dense = as_float_matrix(mu, func, "mu", shape=shape)
    if np.any(dense < 0) or not np.any(dense > 0):
        fail(func, "mu", f"nonnegative multipliers of shape {shape}, not all zero", dense)
    return PairMultipliers.from_any(dense)


def _best_candidate(problem: TopKProblem, psi: np.ndarray, candidates: dict[str, _PairMultipliers], value: float,
                    kind: str, refine: bool) -> _Candidate:
    """The candidate multipliers with the smallest certified gap (the first one on ties)."""
    shape = (problem.k, problem.n_arms - problem.k)
    best: _Candidate | None = None
    for source, pairs in candidates.items():
        multipliers = PairMultipliers.from_triplets(pairs.rows, pairs.cols, pairs.multipliers.weights, shape)
        certificate = certify(problem, psi, multipliers, kind, value=value, refine=refine)
        if best is None or certificate.gap < best.certificate.gap:
            best = _Candidate(source, certificate, multipliers, pairs.multipliers.residual)
    assert best is not None  # (candidates is not empty)
    return best


def check_topk(problem: TopKProblem, psi: ArrayLike, tol: float = 1e-6, kind: str = "confidence",
               mu: ArrayLike | None = None) -> TopKCertificate:
    r"""Certify an allocation and report the structure of its binding pairs.

    Parameters
    ----------
    problem : TopKProblem
        The instance.
    psi : array_like, shape (K,)
        An allocation in the simplex (entries >= 0 summing to one within 1e-9).
    tol : float, default 1e-6
        Relative tolerance: pairs with :math:`C_{ij} \le (1 + \mathrm{tol})\Gamma(\psi)` are near-binding,
        and the report *passes* when the certified relative gap, the balance residuals and the
        monotonicity violations are within it. Use a tolerance matched to the accuracy of ``psi`` (about
        ``1e-3`` for the paper's iterative methods at their default iteration counts).
    kind : {"confidence", "budget"}
    mu : array_like, shape (k, K-k), or PairMultipliers, optional
        Candidate multipliers (nonnegative, not all zero; for example ``solve_topk(...).multipliers``, or the
        dense ``solve_topk(...).mu``, rows in ``problem.top`` order). The report uses them instead of the linear program's when they certify a
        smaller gap or when the linear program fails, so that a solver's certificate is never lost to an
        ill-conditioned check; :attr:`TopKCertificate.multiplier_source` says which were used.

    Returns
    -------
    TopKCertificate

    Examples
    --------
    >>> from allocopt import TopKProblem, check_topk, solve_topk
    >>> problem = TopKProblem([0.51, 0.5, 0, -0.01, -0.092], k=2, variance=0.25)
    >>> report = check_topk(problem, solve_topk(problem).psi)
    >>> report.component_indices(one_based=True)
    [((1,), (3,)), ((2,), (4, 5))]
    """
    started = time.perf_counter()
    func = "check_topk"
    if not isinstance(problem, TopKProblem):
        raise InvalidArgumentError(
            f"The 'problem' parameter of {func} must be a TopKProblem. Got {type(problem).__name__} instead.")
    allocation = np.maximum(check_in_simplex(psi, func, "psi", length=problem.n_arms), 0.0)
    tol = as_float(tol, func, "tol", low=0.0, high=1.0, low_open=True)
    kind = problem.check_kind(kind, func)
    shape = (problem.k, problem.n_arms - problem.k)
    given = None if mu is None else _checked_multipliers(mu, shape, func)
    # the check runs on the instance with costs scaled into the middle of the floating-point range (allocations,
    # multipliers and relative quantities are the same), and the costs of the report are scaled back
    scaled, exponent = problem.cost_normalisation()
    pairs = binding_pairs(scaled, allocation, tol, kind)
    if not pairs.value > 0:
        raise InvalidArgumentError(
            f"The 'psi' parameter of {func} must give every pair a positive cost (Gamma(psi) > 0), which needs "
            f"positive allocation on the arms of some pair of each kind. Got Gamma(psi) = {pairs.value!r}.")
    value = restored_cost(pairs.value, exponent, problem, func)
    best = _certified_multipliers(scaled, allocation, pairs, tol, kind, given)
    certificate = _scaled_certificate(best.certificate, exponent, value)
    graph = binding_graph(scaled, allocation, tol, kind, mu=best.multipliers, pairs=pairs)
    components = graph_components(scaled, allocation, graph, kind)
    if scaled is not problem:  # the caller's means and costs on the graph
        for arm, attributes in graph.nodes(data=True):
            attributes["theta"] = float(problem.theta[arm])
        for _, _, attributes in graph.edges(data=True):
            attributes["cost"] = float(scaled_bound(attributes["cost"], exponent))
    non_binding = tuple(sorted(int(node) for node, degree in graph.degree() if degree == 0))
    violations = monotonicity_violations(problem, allocation, tol)
    status, message = _check_status(_relative_gap(certificate.gap, value), tol, non_binding, components, violations)
    if best.note:
        message = f"{message} ({best.note})"
    double_star = double_star_verdict(scaled, allocation, tol, kind, value=pairs.value)
    if double_star.gaussian_condition is not None:  # (of the caller's variances, not the scaled ones)
        double_star = dataclasses.replace(double_star, gaussian_condition=gaussian_condition(problem, allocation))
    return TopKCertificate(
        status=status, message=message, method=best.source, time=time.perf_counter() - started,
        psi=allocation, value=value, kind=kind, tol=tol, multipliers=best.multipliers, kkt_residual=best.residual,
        gap=certificate.gap, upper_bound=certificate.upper_bound, graph=graph, components=components,
        every_arm_binding=not non_binding, non_binding_arms=non_binding,
        monotone=None if violations is None else not violations,
        monotonicity_violations=() if violations is None else violations,
        double_star=double_star, certificate=certificate)


def _certified_multipliers(problem: TopKProblem, psi: np.ndarray, pairs: BindingPairs, tol: float, kind: str,
                           given: PairMultipliers | None) -> _Candidate:
    r"""The multipliers of smallest certified gap: those of the KKT linear program over the near-binding pairs,
    the caller's, and, when neither certifies ``psi`` within ``tol`` (the linear program fails or returns zero
    multipliers on allocations away from an optimum, whose near-binding pairs cannot satisfy (65)), the
    multipliers of the exact solver's optimum of the instance: with the dual refinement they certify
    :math:`g(\mu^*) = \Gamma^*`, so the gap is the true :math:`\Gamma^* - \Gamma(\psi)` up to rounding, whatever
    ``psi`` is."""
    rows, cols, value = pairs.rows, pairs.cols, pairs.value
    solved = _solve_kkt_multipliers(problem, psi, rows, cols, value, kind)
    candidates: dict[str, _PairMultipliers] = {}
    if solved.weights is not None:
        candidates["kkt-lp"] = _PairMultipliers(rows, cols, solved)
    if given is not None:
        candidates["given"] = _given_multipliers(problem, psi, given, value, kind)
    best = None
    if candidates:
        best = _best_candidate(problem, psi, candidates, value, kind, refine=False)
        if best.certificate.upper_bound - value > REFINEMENT_THRESHOLD * abs(value):
            # no candidate certifies without the (sparse Newton) refinement: refine them all
            best = _best_candidate(problem, psi, candidates, value, kind, refine=True)
        if best.certificate.relative_gap <= tol:
            return best
    optimum = _optimum_multipliers(problem, psi, value, kind)
    if optimum is None:
        if best is None:
            raise SolverError(f"check_topk: {solved.message}, and the exact solver found no optimum to take "
                              "multipliers from; pass the solver's multipliers as mu= to certify with them")
        return best
    if best is None or optimum.certificate.gap < best.certificate.gap:
        note = ("multipliers of the instance's optimum: " + solved.message) if solved.weights is None else ""
        return optimum._replace(note=note)
    return best


def _optimum_multipliers(problem: TopKProblem, psi: np.ndarray, value: float, kind: str) -> _Candidate | None:
    """The candidate ``"optimum"``: the exact solver's multipliers of the instance, with the refined certificate
    of ``psi``; ``None`` when the solver fails."""
    from .solve import solve_topk

    try:
        optimum = solve_topk(problem, kind=kind)
    except SolverError:
        return None
    multipliers = optimum.multipliers
    weights = multipliers.values / multipliers.values.sum()
    pairs = _given_multipliers(problem, psi, PairMultipliers(multipliers.rows, multipliers.cols, weights,
                                                            multipliers.shape), value, kind)
    return _best_candidate(problem, psi, {"optimum": pairs}, value, kind, refine=True)


def _scaled_certificate(certificate: Certificate, exponent: int, value: float) -> Certificate:
    """``certificate`` of the instance whose costs are ``2**-exponent`` times the caller's, for the caller's
    instance (its value ``value``; bounds rounded up)."""
    if exponent == 0:
        return certificate
    return Certificate(value, float(scaled_bound(certificate.upper_bound, exponent)),
                       float(scaled_bound(certificate.gap, exponent)), certificate.stationarity,
                       certificate.complementarity)
