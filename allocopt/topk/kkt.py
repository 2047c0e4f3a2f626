r"""``check_topk``: the KKT certificate of an allocation and its structure report.

Given an allocation :math:`\psi` (from any source), :func:`check_topk`

1. finds the near-binding pairs :math:`E = \{(i, j) : C_{ij}(\psi) \le (1 + \mathrm{tol})\Gamma(\psi)\}`;
2. solves the KKT system (18) in its equivalent form (65) for the multipliers, in CVXPY, as the linear program

   .. math::
       \min_{\mu \ge 0,\ \sum_E \mu = 1} \ \max_a \Big|\sum_{e \in E,\, e \ni a} \mu_e\,\partial_a C_e(\psi)
       - \Gamma(\psi)\Big| / \Gamma(\psi),

   whose value is the *KKT residual* (zero exactly at an optimum, Theorem 3.5);
3. certifies :math:`\psi` with these multipliers through the shared certifier (weak duality, see
   :mod:`allocopt.topk.certificate`): a gap that bounds :math:`\Gamma^* - \Gamma(\psi)` whatever the residual;
4. analyses the binding graph (:mod:`allocopt.topk.structure`): components with their balance residuals,
   Propositions 3.1 and 3.2, and the Theorem 3.4 double-star verdict.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .._validation import as_float, check_in_simplex
from ..exceptions import InvalidArgumentError, SolverError
from .certificate import Certificate, certify
from .problem import TopKProblem
from .structure import (Component, DoubleStarVerdict, binding_graph, binding_pairs, double_star_verdict,
                        graph_components, monotonicity_violations)

__all__ = ["TopKCertificate", "check_topk"]


@dataclass(frozen=True)
class TopKCertificate:
    r"""Report of :func:`check_topk`.

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
    mu : ndarray, shape (k, K-k)
        Multipliers solving the KKT system over the near-binding pairs (zero elsewhere).
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
    """

    psi: np.ndarray
    value: float
    kind: str
    tol: float
    mu: np.ndarray
    kkt_residual: float
    gap: float
    upper_bound: float
    graph: Any = field(repr=False)
    components: tuple[Component, ...]
    every_arm_binding: bool
    non_binding_arms: tuple[int, ...]
    monotone: bool | None
    monotonicity_violations: tuple[tuple[int, int], ...]
    double_star: DoubleStarVerdict
    certificate: Certificate = field(repr=False)

    @property
    def relative_gap(self) -> float:
        """``gap / value``."""
        return self.gap / self.value if self.value > 0 else np.inf

    @property
    def balanced(self) -> bool:
        """Every component's balance residual is within ``tol`` (components with no balance equation pass)."""
        return all(not abs(component.balance_residual) > self.tol for component in self.components)

    @property
    def passed(self) -> bool:
        """The allocation is certified optimal within ``tol`` and satisfies the structural conditions:
        certified relative gap <= tol, every arm binding, balanced components and (where it applies)
        monotonicity."""
        return (self.relative_gap <= self.tol and self.every_arm_binding and self.balanced
                and self.monotone is not False)

    def component_indices(self, one_based: bool = False) -> list[tuple[tuple[int, ...], tuple[int, ...]]]:
        """Components as ``(top arms, bottom arms)`` tuples (optionally 1-based, as in the paper)."""
        shift = 1 if one_based else 0
        return [(tuple(a + shift for a in c.top), tuple(b + shift for b in c.bottom)) for c in self.components]

    def summary(self) -> str:
        """A human-readable multi-line report."""
        lines = [
            f"KKT check: Gamma(psi) = {self.value:.10g}   certified gap with the KKT multipliers = {self.gap:.3g} "
            f"(relative {self.relative_gap:.3g})",
            f"KKT residual (65) = {self.kkt_residual:.3g}   near-binding tolerance = {self.tol:g}",
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
        """A JSON-friendly summary."""
        return {
            "value": self.value, "gap": self.gap, "relative_gap": self.relative_gap,
            "kkt_residual": self.kkt_residual, "tol": self.tol,
            "components": [{"top": list(c.top), "bottom": list(c.bottom), "balance_residual": c.balance_residual,
                            "is_tree": c.is_tree} for c in self.components],
            "every_arm_binding": self.every_arm_binding, "monotone": self.monotone,
            "double_star": {"holds": self.double_star.holds, "reason": self.double_star.reason},
            "passed": self.passed,
        }


def _solve_kkt_multipliers(problem: TopKProblem, psi: np.ndarray, rows: np.ndarray, cols: np.ndarray,
                           value: float, kind: str) -> tuple[np.ndarray, float]:
    """The LP of the module docstring over the given pairs; returns (mu on those pairs, residual)."""
    import cvxpy as cp
    from scipy.sparse import coo_matrix

    terms = problem.pair_terms(psi, rows, cols, kind=kind)
    n_edges = rows.shape[0]
    top, bottom = problem.top[rows], problem.bottom[cols]
    edge_index = np.arange(n_edges)
    gradients = coo_matrix((np.concatenate([terms.grad_top, terms.grad_bottom]) / value,
                            (np.concatenate([top, bottom]), np.concatenate([edge_index, edge_index]))),
                           shape=(problem.n_arms, n_edges)).tocsr()
    mu = cp.Variable(n_edges, nonneg=True)
    residual = cp.Variable()
    stationarity = gradients @ mu - 1.0
    model = cp.Problem(cp.Minimize(residual), [cp.sum(mu) == 1.0, stationarity <= residual, -stationarity <= residual])
    solver = cp.HIGHS if cp.HIGHS in cp.installed_solvers() else cp.CLARABEL
    try:
        model.solve(solver=solver)
    except cp.error.SolverError as error:
        raise SolverError(f"check_topk: the KKT linear program failed: {error}") from error
    if mu.value is None:
        raise SolverError(f"check_topk: the KKT linear program returned status {model.status!r}")
    weights = np.maximum(np.asarray(mu.value, dtype=float), 0.0)
    weights = weights / weights.sum()
    achieved = float(np.abs(gradients @ weights - 1.0).max())
    return weights, achieved


def check_topk(problem: TopKProblem, psi: Any, tol: float = 1e-6, kind: str = "confidence") -> TopKCertificate:
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
    func = "check_topk"
    if not isinstance(problem, TopKProblem):
        raise InvalidArgumentError(
            f"The 'problem' parameter of {func} must be a TopKProblem. Got {type(problem).__name__} instead.")
    psi = check_in_simplex(psi, func, "psi", length=problem.n_arms)
    psi = np.maximum(psi, 0.0)
    tol = as_float(tol, func, "tol", low=0.0, high=1.0, low_open=True)
    kind = problem.check_kind(kind, func)

    rows, cols, costs, value = binding_pairs(problem, psi, tol, kind)
    if not value > 0:
        raise InvalidArgumentError(
            f"The 'psi' parameter of {func} must give every pair a positive cost (Gamma(psi) > 0), which needs "
            f"positive allocation on the arms of some pair of each kind. Got Gamma(psi) = {value!r}.")
    weights, residual = _solve_kkt_multipliers(problem, psi, rows, cols, value, kind)
    mu = np.zeros((problem.k, problem.n_arms - problem.k))
    mu[rows, cols] = weights
    certificate = certify(problem, psi, mu, kind, value=value)
    graph = binding_graph(problem, psi, tol, kind, mu=mu)
    components = graph_components(problem, psi, graph, kind)
    non_binding = tuple(sorted(int(node) for node, degree in graph.degree() if degree == 0))
    violations = monotonicity_violations(problem, psi, tol)
    return TopKCertificate(
        psi=psi, value=value, kind=kind, tol=tol, mu=mu, kkt_residual=residual, gap=certificate.gap,
        upper_bound=certificate.upper_bound, graph=graph, components=components,
        every_arm_binding=not non_binding, non_binding_arms=non_binding,
        monotone=None if violations is None else not violations,
        monotonicity_violations=() if violations is None else violations,
        double_star=double_star_verdict(problem, psi, tol, kind), certificate=certificate)
