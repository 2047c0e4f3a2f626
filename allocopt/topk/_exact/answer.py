r"""The exact solver's answer: tie groups expanded to arms (allocation and multipliers), the shared certificate, and
the best allocation seen when no forest passes the checks."""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from ...exceptions import SolverError
from ..certificate import certify
from ..multipliers import PairMultipliers
from ..problem import TopKProblem
from ..result import BindingForest, TopKResult, build_result
from .barrier import BarrierRound
from .checks import _FEASIBILITY, Checker
from .groups import Reduced, spread_edge
from .star import double_star_edges

__all__ = ["expand_multipliers", "forest_result", "barrier_result", "best_seen", "is_double_star", "forest_signature"]

# from this many groups on, the certificate's refined bound is computed only when the linearised one falls short
_LAZY_REFINEMENT_GROUPS = 20_000


class _Members(NamedTuple):
    """The members of some groups: ``order[starts[g]:starts[g] + counts[g]]`` are the positions (in the arms
    given) of the members of the g-th group."""

    order: np.ndarray
    starts: np.ndarray
    counts: np.ndarray


def _members(arms: np.ndarray, arm_group: np.ndarray, groups: np.ndarray) -> _Members:
    """Positions (in ``arms``) of the members of each of ``groups``."""
    group_of = arm_group[arms]
    order = np.argsort(group_of, kind="stable")
    sorted_groups = group_of[order]
    starts = np.searchsorted(sorted_groups, groups)
    counts = np.searchsorted(sorted_groups, groups, side="right") - starts
    return _Members(order, starts, counts)


def expand_multipliers(problem: TopKProblem, reduced: Reduced, layout, nu: np.ndarray) -> PairMultipliers:
    """Arm-level multipliers: a group pair's multiplier spread over its member pairs by
    :func:`~allocopt.topk._exact.groups.spread_edge` (every member of the top group carries 1/n_g of it, every
    member of the bottom group 1/n_h, on at most n_g + n_h - 1 member pairs: massive ties would otherwise expand
    a forest into tens of millions of pairs); the pairs of single arms first, then the others edge by edge."""
    top_order, top_starts, top_counts = _members(problem.top, reduced.arm_group, layout.edge_top)
    bottom_order, bottom_starts, bottom_counts = _members(problem.bottom, reduced.arm_group, layout.edge_bottom)
    single = (top_counts == 1) & (bottom_counts == 1)
    tied = np.flatnonzero(~single)
    size = int(np.sum(top_counts[tied] + bottom_counts[tied] - 1))
    top_slot, bottom_slot, spread = np.empty(size, dtype=int), np.empty(size, dtype=int), np.empty(size)
    position = 0
    for edge in tied.tolist():
        position = spread_edge(int(top_counts[edge]), int(bottom_counts[edge]), int(top_starts[edge]),
                               int(bottom_starts[edge]), nu[edge], top_slot, bottom_slot, spread, position)
    top_slot, bottom_slot, spread = top_slot[:position], bottom_slot[:position], spread[:position]
    return PairMultipliers.from_triplets(np.concatenate([top_order[top_starts[single]], top_order[top_slot]]),
                                         np.concatenate([bottom_order[bottom_starts[single]],
                                                         bottom_order[bottom_slot]]),
                                         np.concatenate([nu[single], spread]), (problem.k, problem.n_arms - problem.k))


def barrier_result(problem: TopKProblem, reduced: Reduced, kind: str, rows, cols, point, tol: float,
                    started: float, pivots: int) -> TopKResult:
    """The barrier point itself as the answer, certified with its dual estimates tau / slack (Gamma from the
    envelope minimum above ``CONFIRM_PAIRS``, as for a forest answer: see :func:`_result`)."""
    psi = reduced.expand_allocation(point.psi)
    edges = _EdgeGroups(edge_top=reduced.top_groups[rows], edge_bottom=reduced.bottom_groups[cols])
    mu = expand_multipliers(problem, reduced, edges, point.nu)
    minimum = Checker(reduced).certified_minimum(point.psi)
    value = None if minimum is None else minimum / float(reduced.multiplicity @ point.psi)
    return build_result(problem, kind, "exact", psi, mu, iterations=pivots, started=started, tol=tol,
                        certificate=certify(problem, psi, mu, kind, value=value), status="not_certified",
                        message=(f"exact: no forest passed the exact check after {pivots} pivot(s); returning "
                                 "the best allocation seen, the interior-point allocation (duality gap "
                                 f"{point.relative_gap:.1e})"),
                        extras={"pivots": pivots, "groups": reduced.n_groups})


@dataclass(frozen=True)
class _EdgeGroups:
    """Group indices of the ends of a list of pairs (the part of a forest layout the expansion needs)."""

    edge_top: np.ndarray
    edge_bottom: np.ndarray


def forest_result(problem: TopKProblem, reduced: Reduced, kind: str, layout, solution, tol: float, started: float,
            pivots: int, message: str, scan=None) -> TopKResult:
    """Expand groups to arms and certify (with the all-pairs minimum of the final scan when there is one:
    tied arms have the costs of their groups, so it is Gamma of the expanded allocation up to the scale)."""
    psi_groups = solution.psi
    psi = reduced.expand_allocation(psi_groups)
    # Gamma of the answer on the homogeneous scale: the final scan's minimum when it evaluated every pair, the
    # envelope minimum less its allowance when there are too many pairs for that (None: certify scans them all)
    if scan is not None and scan.every_pair and scan.minimum >= 1.0 - _FEASIBILITY:
        minimum = scan.minimum
    else:
        minimum = Checker(reduced).certified_minimum(psi_groups)
    value = (None if minimum is None
             else min(minimum, float(np.min(solution.edge_costs))) / float(reduced.multiplicity @ psi_groups))
    nu = np.maximum(solution.nu, 0.0)
    mu = expand_multipliers(problem, reduced, layout, nu)
    status = None if solution.converged else "not_certified"
    # on large forests the refined bound (sparse Newton steps over every group) costs minutes; it is computed
    # only when the linearised bound does not certify the answer at tol already
    lazy = reduced.n_groups >= _LAZY_REFINEMENT_GROUPS
    certificate = certify(problem, psi, mu, kind, value=value, refine=not lazy)
    if lazy and not certificate.gap <= tol * certificate.value:
        certificate = certify(problem, psi, mu, kind, value=value)
    return build_result(problem, kind, "exact", psi, mu, iterations=pivots, started=started, tol=tol,
                        status=status, message=message, certificate=certificate,
                        forest=BindingForest(kind=kind, double_star=is_double_star(reduced, layout),
                                             arm_group=reduced.arm_group, top_groups=reduced.top_groups,
                                             layout=layout, psi=solution.psi),
                        extras={"pivots": pivots, "components": layout.n_components, "groups": reduced.n_groups,
                                "edge_residual": solution.edge_residual,
                                "balance_residual": solution.balance_residual})


def best_seen(problem: TopKProblem, reduced: Reduced, kind: str, search,
               barrier_rounds: list[BarrierRound], tol: float, started: float,
               answer: TopKResult | None) -> TopKResult:
    r"""The fallback when no forest was certified optimal: of every allocation the solver computed (the
    forest solutions of the search, best by validity and best by value, and the barrier points), the one of
    largest :math:`\Gamma`, with its own certificate (whose status says whether it is optimal after all); a
    ``SolverError`` when no forest solution was found at all. ``answer`` is the final forest's result, if any (it
    competes too). No fallback is worse than an allocation already seen."""
    if answer is None and search.best is None:
        # no forest solution at all: the barrier points alone are not trusted as an answer (on the instances
        # where this happens, means spread over hundreds of decades, they are far from the optimum)
        raise SolverError(
            f"solve_topk(method='exact') found no forest whose KKT system it could solve on {problem!r} "
            f"(kind {kind!r}); the CVXPY oracle (method='cvxpy') gives a certified bound instead.")
    candidates = [] if answer is None else [answer]
    fallback_message = (f"exact: no forest passed the exact check after {search.pivots} pivot(s); returning "
                        "the best allocation seen, a ")
    forests = [search.best] if search.best_valued is search.best else [search.best, search.best_valued]
    for found in (item for item in forests if item is not None):
        candidates.append(forest_result(problem, reduced, kind, found.layout, found.solution, tol, started,
                                  search.pivots, fallback_message + f"forest solution ({found.origin})", found.scan))
    for previous_round in barrier_rounds:
        candidates.append(barrier_result(problem, reduced, kind, previous_round.rows, previous_round.cols,
                                          previous_round.point, tol, started, search.pivots))
    # the first of the largest value: the final forest, then the forests, then the barrier points
    return max(candidates, key=lambda result: result.value)


def is_double_star(reduced: Reduced, layout) -> bool:
    """Whether the forest is Theorem 3.4's double star of the reduced problem."""
    rows, cols = double_star_edges(reduced.n_top, reduced.n_groups)
    return (layout.rows.shape[0] == rows.shape[0]
            and forest_signature(layout.rows, layout.cols) == forest_signature(rows, cols))


def forest_signature(rows, cols):
    order = np.lexsort((cols, rows))
    return (rows[order].tobytes(), cols[order].tobytes())
