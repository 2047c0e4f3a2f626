r"""The exact top-k solver (``solve_topk(problem, method="exact")``).

The homogeneous problem :math:`T^* = \min\{\sum_a \psi_a : C_{ij}(\psi) \ge 1\}` is solved by an active set
of *binding forests*:

1. tied arms are merged into groups with multiplicities (:mod:`allocopt.topk._groups`), which makes tied
   arms' allocations equal by construction;
2. the first forest is the previous solution's binding forest (``warm_start=``), for Gaussian arms the forest
   located through the optimal-transport dual (:mod:`allocopt.topk._gaussian_transport`: a staircase in sorted
   order, Proposition 3.2), for the other families the forest so located for a Gaussian surrogate with the
   family's variance at the means (:mod:`allocopt.topk._surrogate_start`), or Theorem 3.4's double star
   (:math:`i_k` joined to every bottom group, :math:`j_1` to every top group);
3. on a forest the KKT system is solved to machine precision (:mod:`allocopt.topk._forest`);
4. the solution is checked exactly: multipliers :math:`\nu \ge 0` on the forest, and every pair's cost at
   least 1 (:mod:`allocopt.topk._allpairs`, vectorised over blocks of pairs, pruned by a closed-form lower
   bound; above ``ENVELOPE_PAIRS`` group pairs first on the pairs that meet on the two lower envelopes,
   :mod:`allocopt.topk._envelope`, the same minimum in :math:`O(K \log K)`, and a forest that passes is
   confirmed by the scan over every pair up to ``CONFIRM_PAIRS`` pairs; above, the certificate's value is the
   envelope minimum less a rounding allowance, ``ENVELOPE_ROUNDING``). Both hold exactly at the optimum
   (Theorem 3.5), so the forest is final;
5. otherwise one pivot: the edge with the most negative multiplier leaves (splitting its tree), or the most
   violated pair enters (joining two trees, or closing a cycle whose leaving edge is chosen by the linearised
   ratio test on the multipliers), and step 3 repeats; from the Gaussian surrogate's staircase, multiple pivots
   come first while they make progress (:mod:`allocopt.topk._surrogate_start`: the north-west corner walk with
   the true family's gradients at the forest solution, then turns of the corners of negative multiplier);
6. if the pivots cycle or run long, a log-barrier interior-point method (:mod:`allocopt.topk._barrier`) over
   all pairs (or, for large instances, over candidate pairs grown by column generation: a few partners per
   group, the path continued on the grown set) locates the binding forest, which is then polished exactly as
   in step 3 and checked as in step 4.

The result is certified by the shared certifier with the forest multipliers; its status is ``"optimal"``
only when the certified relative gap is at most ``tol`` (default :math:`10^{-9}`).
"""

from __future__ import annotations

import dataclasses
import functools
import time
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from .._validation import as_float, as_int
from ..exceptions import InvalidArgumentError, SolverError
from ._allpairs import PairScan
from ._barrier import BarrierPoint, barrier_path
from ._compiled_star import star_instance_kernel
from ._batch_gaussian import double_star_edges, gaussian_double_star_instance
from ._gaussian_transport import transport_forest, transport_kernels
from ._surrogate_start import corner_turns, north_west_staircase, surrogate_forest
from ._envelope import envelope_code, envelope_pairs
from ._forest import BindingForest, ForestLayout, ForestSolution, layout_double_star, layout_forest, solve_forest
from ._groups import Reduced, reduce_problem
from .problem import TopKProblem
from .certificate import ROUNDING_ALLOWANCE, certify, scalar_certified_gap
from .multipliers import PairMultipliers
from .result import TopKResult, _ResultTemplate, build_result

__all__ = ["solve", "OPTIONS"]

OPTIONS = {"tol": 1e-9, "warm_start": None, "max_pivots": None, "barrier_pairs": 50_000}

# relative tolerances of the internal checks (costs are 1 on the forest): rounding-level violations of
# degenerate binding pairs are not pivoted on; the final certificate accounts for them exactly
_FEASIBILITY = 1e-10
_NEGATIVE_MULTIPLIER = 1e-12
# the closed-form double star evaluates the full cost matrix at once: above this many pairs the chunked scans
# of the active set are cheaper
FAST_PATH_PAIRS = 1 << 18
# from this many groups on, the certificate's refined bound is computed only when the linearised one falls short
_LAZY_REFINEMENT_GROUPS = 20_000
# Gaussian arms: above this many pairs the exact checks scan with the compiled kernel
_COMPILED_SCAN_PAIRS = 1 << 20
# barrier rounds after the first: the binding pairs are those whose slack is at most this factor times the median
# slack of the n_groups - 1 smallest (see _small_slacks)
_SLACK_SPREAD = 1e4
# duality gap of the barrier during column generation (the pair set only has to contain the binding pairs)
_GENERATION_GAP = 1e-4
# ... and while more pairs than groups are violated (the point then only guides the choice of the next pairs)
_FIRST_GENERATION_GAP = 1e-2
# pivots tried from the double star before the barrier (noisy means are often 3-6 pivots away from it); two
# above 10^6 pairs, where each pivot's all-pairs scan costs about as much as a barrier round
_DOUBLE_STAR_PIVOTS = 8
# column generation: the cheapest partners of every group in the first candidate set, and the most violated
# partners of every group added per round
_PARTNERS = 4
_PARTNERS_ADDED = 16
# other families: pivots tried from the Gaussian surrogate's forest, which comes before the double star from
# this many group pairs on (after it below)
_SURROGATE_PIVOTS = 8
_SURROGATE_FIRST = 10_000
# above this many group pairs the pivots' all-pairs checks run on the lower envelopes (below it the pruned scan
# is about as fast: 1 ms at 128 x 128 pairs)
ENVELOPE_PAIRS = 1 << 15
# pivots tried from the Gaussian surrogate's forest when the checks run on the envelopes: each pivot then costs a
# forest solve and an O(K log K) check, far less than a barrier round
_ENVELOPE_SURROGATE_PIVOTS = 100
# above this many group pairs (K about 4000 at k = K/2) a forest that passes the envelope check is not
# confirmed by the scan over every pair (2.5e7 logarithmic costs at K = 10^4, a second or more; 2.5e9 at 10^5,
# minutes), and the certificate's value is the envelope minimum less ENVELOPE_ROUNDING (relative): each of the
# envelopes' decisions between two arms errs only where their values agree to rounding (a few ulps, relative),
# and over the log2 K levels of merging the envelopes' error stays below 1e-13 relative; the allowance is ten
# times that
CONFIRM_PAIRS = 1 << 22
ENVELOPE_ROUNDING = 1e-12


class _Start(NamedTuple):
    """A forest to start the active-set search from: its pairs (positions in ``top_groups`` /
    ``bottom_groups``), the group allocation to start the forest passes at, the pivot budget, the layout
    when it is known and whether the first pivots turn corners (``_Search.run``)."""

    origin: str
    rows: np.ndarray
    cols: np.ndarray
    psi: np.ndarray
    budget: int
    layout: ForestLayout | None
    turns: bool = False


class _Found(NamedTuple):
    """A forest solution met by the search: where the search started, the forest, its KKT solution and the
    all-pairs scan at its allocation."""

    origin: str
    layout: ForestLayout
    solution: ForestSolution
    scan: PairScan


class _BarrierRound(NamedTuple):
    """The pairs the barrier ran on and the point it reached (continued by the next round)."""

    rows: np.ndarray
    cols: np.ndarray
    point: BarrierPoint


class _BarrierForest(NamedTuple):
    """The binding forest located by a barrier round, the allocation to start its passes at, and the round."""

    rows: np.ndarray
    cols: np.ndarray
    psi: np.ndarray
    round: _BarrierRound


def _double_star(reduced: Reduced) -> tuple[np.ndarray, np.ndarray]:
    """Theorem 3.4's double star of the reduced problem (the groups take the places of the arms)."""
    return double_star_edges(reduced.n_top, reduced.n_groups)


def _group_positions(reduced: Reduced):
    """Position of each group in top_groups / bottom_groups (-1 on the other side)."""
    top_position = np.full(reduced.n_groups, -1)
    bottom_position = np.full(reduced.n_groups, -1)
    top_position[reduced.top_groups] = np.arange(reduced.n_top)
    bottom_position[reduced.bottom_groups] = np.arange(reduced.n_bottom)
    return top_position, bottom_position


def _warm_forest(problem: TopKProblem, reduced: Reduced, warm: TopKResult, budget: int) -> _Start | None:
    """The previous result's binding forest and allocation, mapped to the groups, as a start with the given
    pivot budget (None if unusable)."""
    if not isinstance(warm, TopKResult):
        raise InvalidArgumentError(
            f"The 'warm_start' parameter of solve_topk(method='exact') must be a TopKResult. "
            f"Got {type(warm).__name__} instead.")
    if warm.problem.n_arms != problem.n_arms or warm.problem.k != problem.k:
        raise InvalidArgumentError(
            "The 'warm_start' parameter of solve_topk(method='exact') must be a result for a problem with the "
            f"same K = {problem.n_arms} and k = {problem.k}. Got a result with K = {warm.problem.n_arms}, "
            f"k = {warm.problem.k} instead.")
    forest = warm.forest
    psi = np.bincount(reduced.arm_group, weights=warm.psi, minlength=reduced.n_groups) / reduced.multiplicity
    if forest is not None and forest.double_star and np.all(psi > 0):
        # the previous answer was a double star: the new instance's double star, from the previous allocation
        rows, cols = _double_star(reduced)
        return _Start("warm start", rows, cols, psi, budget, layout_double_star(reduced))
    if forest is not None and forest.carries_over(reduced):
        # same tie groups in the same order: the previous forest and its layout carry over as they are
        assert forest.layout is not None and forest.psi is not None  # (carries_over checks them)
        return _Start("warm start", forest.layout.rows, forest.layout.cols, forest.psi, budget, forest.layout)
    rows, cols = warm.multipliers.rows, warm.multipliers.cols
    arm_top, arm_bottom = warm.problem.top[rows], warm.problem.bottom[cols]
    top_position, bottom_position = _group_positions(reduced)
    group_top, group_bottom = reduced.arm_group[arm_top], reduced.arm_group[arm_bottom]
    new_rows, new_cols = top_position[group_top], bottom_position[group_bottom]
    usable = (new_rows >= 0) & (new_cols >= 0)  # the top set may have changed
    weights = warm.multipliers.values[usable]
    if not np.any(usable) or np.any(psi <= 0):
        return None
    pairs, inverse = np.unique(np.stack([new_rows[usable], new_cols[usable]], axis=1), axis=0, return_inverse=True)
    weights = np.bincount(inverse.ravel(), weights=weights, minlength=pairs.shape[0])
    rows, cols = pairs[:, 0], pairs[:, 1]
    if rows.shape[0] != reduced.n_groups - 1:  # not a spanning tree as it is: its heaviest spanning forest
        rows, cols = _spanning_forest(reduced, rows, cols, weights)
    return _Start("warm start", rows, cols, psi, budget, None)


def _spanning_forest(reduced: Reduced, rows, cols, weights):
    """Maximum-weight spanning forest of the given pairs (weights > 0), completed so that every group is
    covered: an uncovered top group is joined to j_1, an uncovered bottom group to i_k."""
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import minimum_spanning_tree

    n_groups = reduced.n_groups
    top, bottom = reduced.top_groups[rows], reduced.bottom_groups[cols]
    graph = coo_matrix((1.0 / np.maximum(weights, 1e-300), (top, bottom)), shape=(n_groups, n_groups))
    tree = minimum_spanning_tree(graph).tocoo()
    top_position, bottom_position = _group_positions(reduced)
    edge_top = np.where(top_position[tree.row] >= 0, tree.row, tree.col)
    edge_bottom = np.where(top_position[tree.row] >= 0, tree.col, tree.row)
    rows, cols = top_position[edge_top], bottom_position[edge_bottom]
    covered = np.zeros(n_groups, dtype=bool)
    covered[edge_top] = True
    covered[edge_bottom] = True
    missing_top = np.flatnonzero(~covered[reduced.top_groups])
    missing_bottom = np.flatnonzero(~covered[reduced.bottom_groups])
    rows = np.concatenate([rows, missing_top, np.full(missing_bottom.size, reduced.n_top - 1)])
    cols = np.concatenate([cols, np.zeros(missing_top.size, dtype=int), missing_bottom])
    # when i_k and j_1 are both uncovered, each is joined to the other: keep that edge once
    pairs = np.unique(np.stack([rows, cols], axis=1), axis=0)
    return pairs[:, 0], pairs[:, 1]


class _Checker:
    """Exact check of a forest solution: multipliers and all-pairs feasibility."""

    def __init__(self, reduced: Reduced):
        self.reduced = reduced
        self.theta_top = reduced.theta[reduced.top_groups]
        self.theta_bottom = reduced.theta[reduced.bottom_groups]
        # Gaussian arms above BLOCK_PAIRS pairs: the compiled scan (the family's costs bit for bit)
        self.compiled = (reduced.family.harmonic_costs(reduced.kind)
                         and reduced.n_top * reduced.n_bottom > _COMPILED_SCAN_PAIRS)
        # other families above ENVELOPE_PAIRS pairs: the pivots' checks evaluate only the pairs that meet on the
        # two lower envelopes (allocopt.topk._envelope: the same minimum, in O(K log K)); Gaussian arms keep the
        # scans (closed-form costs, compiled above _COMPILED_SCAN_PAIRS), whose transport start rarely pivots
        self.envelope = (envelope_code(reduced) if reduced.n_top * reduced.n_bottom > ENVELOPE_PAIRS
                         and not reduced.family.harmonic_costs(reduced.kind) else None)
        # the envelope checks are confirmed by the scan over every pair up to CONFIRM_PAIRS pairs
        self.confirmed = self.envelope is None or reduced.n_top * reduced.n_bottom <= CONFIRM_PAIRS

    def _envelope_costs(self, psi: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The pairs that meet on the lower envelopes at ``psi`` and their costs (the smallest of which is the
        minimum over all pairs)."""
        rows, cols = envelope_pairs(self.reduced, psi, self.envelope)
        return rows, cols, self.reduced.terms(psi, rows, cols).cost

    def certified_minimum(self, psi: np.ndarray) -> float | None:
        """The all-pairs minimum a certificate may use where no scan over every pair confirms the checks
        (above ``CONFIRM_PAIRS`` pairs): the envelope minimum at ``psi``, computed afresh, less its rounding
        allowance ``ENVELOPE_ROUNDING``; None where the certificate evaluates every pair."""
        if self.confirmed:
            return None
        return float(self._envelope_costs(psi)[2].min()) * (1.0 - ENVELOPE_ROUNDING)

    def _envelope_scan(self, psi: np.ndarray, threshold: float, limit: int) -> PairScan:
        """The exact minimum over all pairs from the pairs that meet on the lower envelopes, listing those of
        them below ``threshold`` (a subset of all the pairs below it, which always holds the smallest)."""
        from ._allpairs import _listed

        rows, cols, costs = self._envelope_costs(psi)
        best = int(np.argmin(costs))
        below = costs < threshold
        listed = _listed(float(costs[best]), int(rows[best]), int(cols[best]), [rows[below]], [cols[below]],
                         [costs[below]], limit)
        return dataclasses.replace(listed, every_pair=False)

    def _compiled_scan(self, psi: np.ndarray, threshold, limit: int):
        """The all-pairs scan by :func:`~allocopt.topk._gaussian_transport.harmonic_scan` (the same minimum and
        listed pairs as ``scan_pairs``); None when more pairs lie below the threshold than it keeps."""
        from ._allpairs import _listed

        reduced = self.reduced
        top, bottom = reduced.top_groups, reduced.bottom_groups
        capacity = 2 * limit + 65_536
        best, row, col, count, rows, cols, costs = transport_kernels()["scan"](
            self.theta_top, self.theta_bottom, psi[top] * (1.0 / reduced.dispersion[top]),
            psi[bottom] * (1.0 / reduced.dispersion[bottom]), -np.inf if threshold is None else float(threshold),
            capacity)
        if count > capacity:
            return None
        return _listed(float(best), int(row), int(col), [rows[:count]], [cols[:count]], [costs[:count]], limit)

    def scan(self, psi: np.ndarray, every_pair: bool = False):
        """The check at a forest solution: the exact minimum over all pairs and the pairs below 1 (on the
        envelopes above ``ENVELOPE_PAIRS`` pairs unless ``every_pair``)."""
        from ._allpairs import scan_pairs

        if self.envelope is not None and not every_pair:
            return self._envelope_scan(psi, 1.0 - _FEASIBILITY, 4096)
        if self.compiled:
            found = self._compiled_scan(psi, 1.0 - _FEASIBILITY, 4096)
            if found is not None:
                return found
        reduced = self.reduced
        weights = psi / reduced.dispersion

        def evaluate(rows, cols):
            return reduced.terms(psi, rows, cols).cost

        return scan_pairs(evaluate, reduced.family, self.theta_top, self.theta_bottom,
                          weights[reduced.top_groups], weights[reduced.bottom_groups], 1.0 - _FEASIBILITY,
                          limit=4096)

    def scan_below(self, psi: np.ndarray, threshold, limit: int = 1_000_000):
        """All-pairs scan at ``psi`` listing the pairs of cost below ``threshold`` (None: the exact minimum only)."""
        from ._allpairs import scan_pairs

        if self.compiled:
            found = self._compiled_scan(psi, threshold, limit)
            if found is not None:
                return found
        reduced = self.reduced
        weights = psi / reduced.dispersion
        return scan_pairs(lambda rows, cols: reduced.terms(psi, rows, cols).cost, reduced.family, self.theta_top,
                          self.theta_bottom, weights[reduced.top_groups], weights[reduced.bottom_groups], threshold,
                          limit=limit)


def _cycle_pivot(layout, nu, reduced: Reduced, psi, row, col) -> int:
    """The edge (index in the layout) that leaves when the pair (row, col) enters a tree already containing both
    of its ends: along the cycle closed by the entering pair, the multiplier changes that keep every node's
    stationarity equation alternate in sign; the first decreasing multiplier to reach zero (the linearised
    ratio test) leaves."""
    start, end = reduced.top_groups[row], reduced.bottom_groups[col]
    # path from start and end up to their lowest common ancestor
    def ancestors(node):
        chain = [node]
        while layout.parent[chain[-1]] >= 0:
            chain.append(int(layout.parent[chain[-1]]))
        return chain

    first, second = ancestors(start), ancestors(end)
    common = set(first) & set(second)
    first = first[: next(i for i, node in enumerate(first) if node in common) + 1]
    second = second[: next(i for i, node in enumerate(second) if node in common) + 1]
    # walk the cycle start -> ... -> lca -> ... -> end -> start, edges with the node they are entered from
    path_nodes = first + second[::-1][1:]
    edges = [int(layout.parent_edge[node]) for node in first[:-1]] + \
            [int(layout.parent_edge[node]) for node in second[:-1]][::-1]
    terms = reduced.terms(psi, layout.rows[edges], layout.cols[edges])
    entering = reduced.terms(psi, np.array([row]), np.array([col]))
    # changes of the multipliers around the cycle that keep every node's stationarity equation: at a node,
    # delta_in * dC_in/dpsi_node + delta_out * dC_out/dpsi_node = 0; the entering edge starts with +1
    def gradient_at(edge_terms, index, node, edge):
        return edge_terms.grad_top[index] if layout.edge_top[edge] == node else edge_terms.grad_bottom[index]

    delta = np.zeros(len(edges))
    previous = 1.0
    previous_gradient = entering.grad_top[0]  # entering edge seen from its top end `start`
    for position, (node, edge) in enumerate(zip(path_nodes[:-1], edges)):
        delta[position] = -previous * previous_gradient / gradient_at(terms, position, node, edge)
        other = path_nodes[position + 1]
        previous, previous_gradient = delta[position], gradient_at(terms, position, other, edge)
    decreasing = delta < 0
    if not np.any(decreasing):
        leaving = int(np.argmin(nu[edges]))
    else:
        # the ratio test over the decreasing multipliers only (the others never reach zero); a ratio beyond the
        # floating-point range means the same, so its overflow to inf is the right value
        ratios = np.full(len(edges), np.inf)
        with np.errstate(over="ignore"):
            ratios[decreasing] = nu[edges][decreasing] / -delta[decreasing]
        leaving = int(np.argmin(ratios))
    return edges[leaving]


def _is_double_star(reduced: Reduced, layout) -> bool:
    """Whether the forest is Theorem 3.4's double star of the reduced problem."""
    rows, cols = _double_star(reduced)
    return (layout.rows.shape[0] == rows.shape[0]
            and _forest_signature(layout.rows, layout.cols) == _forest_signature(rows, cols))


def _forest_signature(rows, cols):
    order = np.lexsort((cols, rows))
    return (rows[order].tobytes(), cols[order].tobytes())


# the double star's forest record of each kind (immutable, so shared by every result that carries it)
_DOUBLE_STAR_FORESTS = {kind: BindingForest(kind=kind, double_star=True) for kind in ("confidence", "budget")}
# the fields that every answer of each fast path shares, by kind (both return only certified answers)
_CLOSED_FORM_TEMPLATES = {
    kind: _ResultTemplate(method="exact", kind=kind, iterations=0, forest=_DOUBLE_STAR_FORESTS[kind],
                          status="optimal", message="exact: double star (closed form), 0 pivot(s); forest of 1 tree(s)")
    for kind in ("confidence", "budget")}
_COMPILED_STAR_TEMPLATES = {
    kind: _ResultTemplate(method="exact", kind=kind, iterations=0, forest=_DOUBLE_STAR_FORESTS[kind],
                          status="optimal", message="exact: double star (compiled), 0 pivot(s); forest of 1 tree(s)")
    for kind in ("confidence", "budget")}


@functools.lru_cache(maxsize=64)
def _star_edges(k: int, n_arms: int) -> tuple[np.ndarray, np.ndarray]:
    rows, cols = double_star_edges(k, n_arms)
    rows.setflags(write=False)
    cols.setflags(write=False)
    return rows, cols


def _double_star_fast_path(problem: TopKProblem, kind: str, tol: float, started: float,
                           warm_start: TopKResult | None) -> TopKResult | None:
    """Gaussian arms: Theorem 3.4's double star in closed form (:mod:`allocopt.topk._batch_gaussian`), checked
    exactly, certified, and returned; ``None`` when the double star is not optimal or its certificate misses
    ``tol`` (the active set takes over).
    Costs and gradients are the same for both kinds (:math:`B_{ij} = C_{ij}` for Gaussian arms)."""
    dispersion = problem.dispersion
    k, n_arms = problem.k, problem.n_arms
    start = None
    if warm_start is not None:  # the previous allocation's split y = log(x_{i_k} / x_{j_1}), x = sigma^2 / psi
        previous = warm_start.psi
        i_k, j_1 = problem.top[-1], problem.bottom[0]
        if previous[i_k] > 0 and previous[j_1] > 0:
            start = float(np.log(previous[j_1] / previous[i_k] * dispersion[i_k] / dispersion[j_1]))
    star = gaussian_double_star_instance(problem.theta, problem.order, dispersion, k, start)
    if not star.accepted:
        return None
    psi, value, bound = star.psi, star.value, star.bound
    gap = scalar_certified_gap(bound, value, ROUNDING_ALLOWANCE, 1)  # certified_gap(bound, value) on two floats
    if not (value > 0 and gap <= tol * value):  # (variances over many decades: the active set polishes it)
        return None
    rows, cols = _star_edges(k, n_arms)
    mu = star.multipliers
    if not star.smallest_multiplier > 0:  # a multiplier exactly zero (Theorem 3.4's condition (14) with equality)
        positive = mu > 0
        rows, cols, mu = rows[positive], cols[positive], mu[positive]
    mu.setflags(write=False)
    multipliers = PairMultipliers(rows, cols, mu, (k, n_arms - k))
    return _CLOSED_FORM_TEMPLATES[kind].build(
        psi, value=value, multipliers=multipliers, upper_bound=bound, gap=gap, stationarity=star.stationarity,
        complementarity=star.complementarity, time=time.perf_counter() - started, problem=problem,
        extras={"pivots": 0, "components": 1})


def _compiled_star_fast_path(problem: TopKProblem, kind: str, tol: float, started: float,
                             warm_start: TopKResult | None) -> TopKResult | None:
    """Families with a compiled pair kernel (:meth:`~allocopt.families.ExponentialFamily.compiled_pair`) and
    distinct means: Theorem 3.4's double star solved by the compiled kernel of
    :mod:`allocopt.topk._compiled_star`, its certificate evaluated there by a separate kernel (what
    :func:`~allocopt.topk.certificate.certify` computes, with the same evaluation-error allowance added here),
    and returned only when certified optimal; ``None`` otherwise (the active set takes over)."""
    code = problem.family._compiled_pair_code(kind)
    if code is None:
        return None
    top, bottom = problem.top, problem.bottom
    k, n_arms = problem.k, problem.n_arms
    dispersion = problem.dispersion
    start = 0.0
    if warm_start is not None:  # the previous allocation's log(w_{j_1} / w_{i_k}), w = psi / phi
        previous = warm_start.psi
        i_k, j_1 = top[-1], bottom[0]
        if previous[i_k] > 0 and previous[j_1] > 0:
            start = float(np.log(previous[j_1] / dispersion[j_1] * dispersion[i_k] / previous[i_k]))
            start = start if np.isfinite(start) else 0.0
    # distinct means only (the kernel declines ties: the general path merges tied arms into groups)
    psi, mu, keep = np.empty(n_arms), np.empty(n_arms - 1), np.empty(n_arms - 1, dtype=bool)
    accepted, value, bound, gap, stationarity, complementarity, balance_residual, n_kept = star_instance_kernel()(
        code, problem.theta, top, bottom, dispersion, start, 100, _NEGATIVE_MULTIPLIER, problem.evaluation_error(kind),
        psi, mu, keep)
    if not (accepted == 1.0 and value > 0 and gap <= tol * value):
        return None
    rows, cols = _star_edges(k, n_arms)
    if n_kept < n_arms - 1:  # a multiplier zero to rounding (Theorem 3.4's condition (14) with equality)
        rows, cols, mu = rows[keep], cols[keep], mu[:int(n_kept)]  # the kept multipliers come first
    mu.setflags(write=False)
    return _COMPILED_STAR_TEMPLATES[kind].build(
        psi, value=value, multipliers=PairMultipliers(rows, cols, mu, (k, n_arms - k)), upper_bound=bound, gap=gap,
        stationarity=stationarity, complementarity=complementarity, time=time.perf_counter() - started,
        problem=problem, extras={"pivots": 0, "components": 1, "balance_residual": balance_residual})


def solve(problem: TopKProblem, kind: str, tol: float = 1e-9, warm_start: TopKResult | None = None,
          max_pivots: int | None = None, barrier_pairs: int = 50_000) -> TopKResult:
    """Solve exactly (see the module docstring). A warm-started solve that does not certify its answer is
    repeated cold, and the better certified of the two is returned (the message says so): a warm start only
    saves time, it never costs the certificate."""
    func = "solve_topk(method='exact')"
    if not (type(tol) is float and 0.0 <= tol < np.inf):  # the common case checked without the general helper
        tol = as_float(tol, func, "tol", low=0.0)
    if not (type(barrier_pairs) is int and barrier_pairs >= 1):
        barrier_pairs = as_int(barrier_pairs, func, "barrier_pairs", low=1)
    started = time.perf_counter()
    if max_pivots is not None:
        max_pivots = as_int(max_pivots, func, "max_pivots", low=0)
    if warm_start is None:
        return _solve(problem, kind, tol, None, max_pivots, barrier_pairs, started)
    warm = _solve(problem, kind, tol, warm_start, max_pivots, barrier_pairs, started)
    if warm.status == "optimal":
        return warm
    cold = _solve(problem, kind, tol, None, max_pivots, barrier_pairs, started)
    note = f"the warm-started solve was {warm.status} (relative gap {warm.relative_gap:.3g}): solved cold"
    best = cold if cold.status == "optimal" or cold.relative_gap <= warm.relative_gap else warm
    return dataclasses.replace(best, message=f"{best.message} ({note})", time=time.perf_counter() - started)


def _solve(problem: TopKProblem, kind: str, tol: float, warm_start: TopKResult | None, max_pivots: int | None,
           barrier_pairs: int, started: float) -> TopKResult:
    """:func:`solve` from one start (``warm_start`` or none), on checked options."""
    # harmonic costs (Gaussian arms): the double star of Theorem 3.4 has a closed-form solution
    # other families with a compiled pair kernel: the double star by a compiled Newton solve, certified
    if problem.n_pairs <= FAST_PATH_PAIRS and (
            warm_start is None or (isinstance(warm_start, TopKResult) and warm_start.forest is not None
                                   and warm_start.forest.double_star and warm_start.problem.n_arms == problem.n_arms
                                   and warm_start.problem.k == problem.k)):
        if problem.family.harmonic_costs(kind):
            fast = _double_star_fast_path(problem, kind, tol, started, warm_start)
        else:
            fast = _compiled_star_fast_path(problem, kind, tol, started, warm_start)
        if fast is not None:
            return fast
    reduced = reduce_problem(problem, kind)
    if max_pivots is None:
        max_pivots = 2 * reduced.n_groups + 20
    search = _Search(reduced)

    starts = []
    if warm_start is not None:
        # a nearby instance's forest is usually right or a few pivots away; pivots cost far less than a
        # barrier round
        warm = _warm_forest(problem, reduced, warm_start, min(max_pivots, 12))
        if warm is not None:
            starts.append(warm)
    rows, cols = _double_star(reduced)
    heuristic = problem.heuristic_allocation()
    psi = np.bincount(reduced.arm_group, weights=heuristic, minlength=reduced.n_groups) / reduced.multiplicity
    if problem.family.harmonic_costs(kind):
        # Gaussian arms: the binding forest located through the transport dual (a staircase in sorted order)
        transport = transport_forest(reduced, psi)
        if transport is not None:
            starts.append(_Start("transport", transport.rows, transport.cols, transport.psi,
                                 min(max_pivots, _DOUBLE_STAR_PIVOTS), transport.layout))
    else:
        # other families: the binding forest of the Gaussian surrogate (variance function at the means); after
        # the double star on small instances, whose answers stay those of the double star's pivots
        surrogate = surrogate_forest(reduced, psi)
        if surrogate is not None:
            budget = _SURROGATE_PIVOTS if search.checker.envelope is None else _ENVELOPE_SURROGATE_PIVOTS
            starts.append(_Start("Gaussian surrogate", surrogate.rows, surrogate.cols, surrogate.psi,
                                 min(max_pivots, budget), surrogate.layout, True))
    # a few pivots from the double star cost far less than a barrier round (one forest solve and one check each;
    # two above 10^6 pairs when each check is an all-pairs scan)
    cheap_checks = reduced.n_top * reduced.n_bottom <= 1_000_000 or search.checker.envelope is not None
    star_budget = min(max_pivots, _DOUBLE_STAR_PIVOTS if cheap_checks else 2)
    star = _Start("double star", rows, cols, psi, star_budget, layout_double_star(reduced))
    if starts and starts[-1].origin == "Gaussian surrogate" and reduced.n_top * reduced.n_bottom < _SURROGATE_FIRST:
        starts.insert(len(starts) - 1, star)
    else:
        starts.append(star)
    found = None
    for start in starts:
        found = search.run(start.origin, start.rows, start.cols, start.psi, start.budget, layout=start.layout,
                           turns=start.turns)
        if found is not None:
            break
    barrier_round = None
    barrier_rounds: list[_BarrierRound] = []
    for round_index in range(3):
        if found is not None:
            break
        located = _barrier_forest(reduced, search.checker, search.best_psi(), barrier_pairs, round_index,
                                  barrier_round)
        barrier_round = located.round
        barrier_rounds.append(barrier_round)
        # a few pivots repair a nearly right forest; otherwise the next, more accurate barrier round is cheaper
        budget = max_pivots if round_index == 2 else min(max_pivots, 10 + reduced.n_groups // 10)
        found = search.run("barrier", located.rows, located.cols, located.psi, budget)
    if found is not None:
        message = (f"exact: {found.origin}, {search.pivots} pivot(s); forest of {found.layout.n_components} "
                   "tree(s)")
        answer = _result(problem, reduced, kind, found.layout, found.solution, tol, started, search.pivots,
                         message, found.scan)
        if answer.status == "optimal":
            return answer
        return _best_seen(problem, reduced, kind, search, barrier_rounds, tol, started, answer)
    return _best_seen(problem, reduced, kind, search, barrier_rounds, tol, started, None)


def _best_seen(problem: TopKProblem, reduced: Reduced, kind: str, search: "_Search",
               barrier_rounds: list[_BarrierRound], tol: float, started: float,
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
        candidates.append(_result(problem, reduced, kind, found.layout, found.solution, tol, started,
                                  search.pivots, fallback_message + f"forest solution ({found.origin})", found.scan))
    for previous_round in barrier_rounds:
        candidates.append(_barrier_result(problem, reduced, kind, previous_round.rows, previous_round.cols,
                                          previous_round.point, tol, started, search.pivots))
    # the first of the largest value: the final forest, then the forests, then the barrier points
    return max(candidates, key=lambda result: result.value)


class _Search:
    """Active-set search over forests: solve, check, pivot; remembers the best valid forest solution."""

    def __init__(self, reduced: Reduced):
        self.reduced = reduced
        self.checker = _Checker(reduced)
        self.pivots = 0
        self.best: _Found | None = None
        self.best_score = np.inf
        # the forest solution of largest Gamma (on the simplex scale) met so far
        self.best_valued: _Found | None = None
        self.best_value = -np.inf

    def best_psi(self) -> np.ndarray:
        if self.best is not None:
            return self.best.solution.psi
        return np.ones(self.reduced.n_groups)

    # Means spread over hundreds of decades give optimal allocations down to ~1e-300, and the trial points of
    # the forest passes then overflow or underflow transiently (squares of 1/psi, brackets of the balance).
    # Every forest solution is checked for finite positive allocations and finite multipliers before use, and
    # the answer is certified independently, so those intermediate infinities are handled, not hidden.
    @np.errstate(all="ignore")
    def run(self, origin: str, rows, cols, psi, budget: int, layout: ForestLayout | None = None,
            turns: bool = False) -> _Found | None:
        """Pivot from the given forest (with its ``layout`` when known) at most ``budget`` times; the optimal
        forest solution found, or None. With ``turns`` (a staircase start), the first pivots are multiple ones
        while they reduce the number of defects (negative multipliers plus violated pairs): first the north-west
        corner walk with the true gradients at the forest's solution
        (:func:`~allocopt.topk._surrogate_start.north_west_staircase`), then turns of every corner of negative
        multiplier at once (:func:`~allocopt.topk._surrogate_start.corner_turns`); single pivots follow from the
        forest of fewest defects."""
        reduced = self.reduced
        seen = set()
        fewest = None  # the multiple pivots' forest of fewest defects, and its solution
        moves: tuple[str, ...] = ("walk", "turn") if turns else ()
        previous_value = np.inf  # the value of the previous forest solution while it is feasible
        for attempt in range(budget + 1):
            if layout is None:
                layout = layout_forest(reduced, rows, cols)
            if layout is None:
                return None
            solution = solve_forest(reduced, layout, psi)
            if not (np.all(np.isfinite(solution.psi)) and np.all(solution.psi > 0) and np.all(np.isfinite(solution.nu))):
                return None
            psi = solution.psi
            scale = np.max(np.abs(solution.nu))
            negative = solution.nu < -_NEGATIVE_MULTIPLIER * scale
            scan = self.checker.scan(psi)
            if (self.checker.envelope is not None and self.checker.confirmed and scan.costs.size == 0
                    and not negative.any()):
                # the envelopes propose, every pair confirms (where that takes seconds, not minutes): an answer's
                # certificate rests on the minimum over all pairs evaluated one by one
                scan = self.checker.scan(psi, every_pair=True)
            # the best forest so far, kept as the fallback answer (its certificate says how good it is)
            score = (max(0.0, 1.0 - scan.minimum) + float(np.max(np.maximum(-solution.nu, 0.0)) / scale)
                     + (0.0 if solution.converged else 1.0))
            if score < self.best_score:
                self.best, self.best_score = _Found(origin, layout, solution, scan), score
            value = min(scan.minimum, float(np.min(solution.edge_costs))) / float(reduced.multiplicity @ psi)
            if value > self.best_value:
                self.best_valued, self.best_value = _Found(origin, layout, solution, scan), value
            if not solution.converged:
                return None
            if not negative.any() and scan.costs.size == 0:
                return _Found(origin, layout, solution, scan)
            signature = _forest_signature(rows, cols)
            if attempt == budget or signature in seen:
                return None
            seen.add(signature)
            self.pivots += 1
            if moves:
                # multiple pivots while they make progress: fewer defects than the forest of fewest so far, or (for
                # the walk, which alternates with the forest solves towards its fixed point) a feasible forest of
                # smaller value than the previous one; without progress, the next move from the forest of fewest
                # defects
                defects = int(np.count_nonzero(negative)) + scan.costs.size
                value = float(reduced.multiplicity @ psi) if scan.costs.size == 0 else np.inf
                if fewest is None or defects < fewest[0]:
                    fewest = (defects, rows, cols, layout, solution, scan, negative, psi)
                elif not (moves[0] == "walk" and value < previous_value):
                    moves = moves[1:]
                    _, rows, cols, layout, solution, scan, negative, psi = fewest
                previous_value = value
                moved = None
                while moves and moved is None:
                    moved = self._multiple_pivot(moves[0], layout, solution, scan, negative, seen)
                    if moved is None:  # the move does not apply here: the next one, from the forest of fewest
                        moves = moves[1:]
                        _, rows, cols, layout, solution, scan, negative, psi = fewest
                if moved is not None:
                    rows, cols, layout = moved
                    continue
            rows, cols = _pivot(reduced, layout, solution, scan, negative, rows, cols, psi)
            layout = None
        return None

    def _multiple_pivot(self, move: str, layout: ForestLayout, solution: ForestSolution, scan: PairScan,
                        negative: np.ndarray, seen: set) -> tuple[np.ndarray, np.ndarray, ForestLayout] | None:
        """The forest (pairs and layout) that the multiple pivot ``move`` ("walk": the north-west corner walk at
        the solution's allocation; "turn": the turns of the corners of negative multiplier) leads to from the
        forest ``layout``; None when there are no negative multipliers, the move leaves the forest as it is or
        leads to a forest already seen, or the result does not lay out as a forest."""
        reduced = self.reduced
        if not negative.any():
            return None
        if move == "walk":
            moved = north_west_staircase(reduced, solution.psi, layout.rows, layout.cols)
        else:
            moved = corner_turns(reduced, layout.rows, layout.cols, negative, scan.rows, scan.cols, scan.costs)
        if moved is None or _forest_signature(*moved) in seen:
            return None
        moved_layout = layout_forest(reduced, *moved)
        return None if moved_layout is None else (moved[0], moved[1], moved_layout)


def _pivot(reduced: Reduced, layout, solution, scan, negative, rows, cols, psi):
    """One active-set pivot: the most negative multiplier leaves, or the most violated pair enters."""
    if negative.any():
        keep = np.ones(rows.shape[0], dtype=bool)
        keep[int(np.argmin(solution.nu))] = False
        return rows[keep], cols[keep]
    entering = int(np.argmin(scan.costs))
    row, col = int(scan.rows[entering]), int(scan.cols[entering])
    top_group, bottom_group = reduced.top_groups[row], reduced.bottom_groups[col]
    if layout.component[top_group] == layout.component[bottom_group]:
        leaving = _cycle_pivot(layout, solution.nu, reduced, psi, row, col)
        keep = np.ones(rows.shape[0], dtype=bool)
        keep[leaving] = False
        rows, cols = rows[keep], cols[keep]
    return np.append(rows, row), np.append(cols, col)


@np.errstate(all="ignore")  # see _Search.run: the points it returns are checked the same way
def _barrier_forest(reduced: Reduced, checker: _Checker, psi: np.ndarray, barrier_pairs: int, round_index: int,
                    previous: _BarrierRound | None = None) -> _BarrierForest:
    """Binding forest located by the barrier method over all pairs or, above ``barrier_pairs`` pairs, over
    candidate pairs grown by column generation; ``psi`` selects the first candidates (pairs of small cost at a
    good allocation) and starts the column generation's path (the path over all pairs starts from the uniform
    allocation); ``previous`` is the previous round, whose path is continued."""
    n_pairs = reduced.n_top * reduced.n_bottom
    target_gap = 10.0 ** (-8 - 2 * round_index)
    start = np.ones(reduced.n_groups)
    resume = previous.point if previous is not None else None
    if previous is not None:
        rows, cols = previous.rows, previous.cols
    elif n_pairs <= barrier_pairs:
        rows, cols = np.divmod(np.arange(n_pairs), reduced.n_bottom)
    else:
        rows, cols = _candidate_pairs(reduced, checker, psi, barrier_pairs)
    if previous is None and rows.shape[0] < n_pairs:
        # column generation at a loose duality gap: the barrier point is feasible for the candidates (costs
        # >= 1 on the homogeneous scale); the most violated pairs outside them (a few per group) are added and
        # the path continues from that point, until no pair is violated; then it is followed to the target
        # (at a looser gap while many pairs are violated: the point is only a guide to the next pairs)
        point = barrier_path(reduced, rows, cols, psi, target_gap=_FIRST_GENERATION_GAP)
        for _ in range(50):
            violated = checker.scan_below(point.psi, 1.0, limit=max(64 * reduced.n_groups, 4096))
            if violated.costs.size == 0 and point.relative_gap <= _GENERATION_GAP:
                break
            gap = _FIRST_GENERATION_GAP if violated.costs.size > reduced.n_groups else _GENERATION_GAP
            rows, cols = _grown(reduced, rows, cols, violated, _PARTNERS_ADDED)
            point = barrier_path(reduced, rows, cols, point.psi, target_gap=gap, resume=point)
        resume = point
    weights = None
    if previous is not None:  # (module docstring of _barrier: binding pairs' slacks of order tau)
        estimate = np.maximum(previous.point.nu, 1e-12 * float(np.max(previous.point.nu)))
        weights = estimate / float(np.mean(estimate))
    point = barrier_path(reduced, rows, cols, start, target_gap=target_gap, resume=resume, weights=weights)
    # a forest has at most n_groups - 1 edges: the multipliers are compared with the (n_groups - 1)-th largest,
    # so that one pair at rounding-level slack (a huge tau / slack) cannot hide all the others
    edges = min(reduced.n_groups - 1, point.nu.size)
    reference = np.partition(point.nu, point.nu.size - edges)[point.nu.size - edges]
    nu_weights = point.nu / reference
    active = nu_weights >= 1e-5
    if weights is not None:
        active &= _small_slacks(reduced, rows, cols, point, edges)
    forest_rows, forest_cols = _spanning_forest(reduced, rows[active], cols[active], nu_weights[active])
    return _BarrierForest(forest_rows, forest_cols, point.psi, _BarrierRound(rows, cols, point))


def _small_slacks(reduced: Reduced, rows, cols, point: BarrierPoint, edges: int) -> np.ndarray:
    r"""The pairs of a point on a path weighted by the previous round's multipliers whose slack is at most
    ``_SLACK_SPREAD`` times the median slack of the ``edges`` smallest. On that path every binding pair's slack is
    of order :math:`\tau` (its weight estimates its multiplier) while a non-binding pair keeps its slack at the
    optimum. On the unweighted path (the first round) the slack of a binding pair is :math:`\tau/\nu_p`, and on
    heteroscedastic Gaussian instances whose variances span ten decades the binding pairs' multipliers span as
    many: their slacks mix with those of non-binding pairs, and the forest chosen by the multipliers alone joined
    two binding trees by a non-binding pair, whose forest system had no positive solution."""
    slack = reduced.terms(point.psi, rows, cols).cost - 1.0
    smallest = np.partition(slack, edges - 1)[:edges]
    return slack <= _SLACK_SPREAD * float(np.median(smallest))


def _candidate_pairs(reduced: Reduced, checker: _Checker, psi: np.ndarray, limit: int):
    """The double star and, for every group, its ``_PARTNERS`` cheapest partners at ``psi`` among the pairs
    within a factor 2 of the smallest cost (at most ``limit`` pairs listed)."""
    minimum = checker.scan_below(psi, None).minimum
    scan = checker.scan_below(psi, 2.0 * minimum, limit=limit)
    double_rows, double_cols = _double_star(reduced)
    return _grown(reduced, double_rows, double_cols, scan, _PARTNERS)


def _grown(reduced: Reduced, rows, cols, scan: PairScan, partners: int):
    """The pairs (rows, cols) and, of the pairs listed by ``scan``, the ``partners`` cheapest of every top group
    and of every bottom group (a few per group: the binding forest has at most two edges per group on
    average, and a global cut of the cheapest pairs would give some groups hundreds and others none)."""
    keep = np.zeros(scan.costs.shape[0], dtype=bool)
    for side in (scan.rows, scan.cols):
        order = np.lexsort((scan.costs, side))
        ranked = side[order]
        first = np.searchsorted(ranked, ranked)  # position of each group's cheapest pair in the sorted order
        keep[order[np.arange(order.shape[0]) - first < partners]] = True
    pairs = np.unique(np.stack([np.concatenate([rows, scan.rows[keep]]),
                                np.concatenate([cols, scan.cols[keep]])], axis=1), axis=0)
    return pairs[:, 0], pairs[:, 1]


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


def _expand_multipliers(problem: TopKProblem, reduced: Reduced, layout, nu: np.ndarray) -> PairMultipliers:
    """Arm-level multipliers: a group pair's multiplier spread over its member pairs so that every member of
    the top group carries 1/n_g of it and every member of the bottom group 1/n_h (the arm sums of the
    certificate are then the group's, by symmetry). The north-west corner rule of this transport problem
    uses at most n_g + n_h - 1 member pairs, not n_g n_h (massive ties would otherwise expand a forest into
    tens of millions of pairs)."""
    top_order, top_starts, top_counts = _members(problem.top, reduced.arm_group, layout.edge_top)
    bottom_order, bottom_starts, bottom_counts = _members(problem.bottom, reduced.arm_group, layout.edge_bottom)
    single = (top_counts == 1) & (bottom_counts == 1)
    top_index = [top_order[top_starts[single]]]
    bottom_index = [bottom_order[bottom_starts[single]]]
    values = [nu[single]]
    for edge in np.flatnonzero(~single).tolist():
        n_top, n_bottom = int(top_counts[edge]), int(bottom_counts[edge])
        # breakpoints of the supplies (i n_h) and demands (j n_g) on [0, n_g n_h]; each segment is one pair
        breaks = np.union1d(np.arange(n_top + 1) * n_bottom, np.arange(n_bottom + 1) * n_top)
        lower, length = breaks[:-1], np.diff(breaks)
        top_index.append(top_order[top_starts[edge] + lower // n_bottom])
        bottom_index.append(bottom_order[bottom_starts[edge] + lower // n_top])
        values.append(nu[edge] * length / (n_top * n_bottom))
    return PairMultipliers.from_triplets(np.concatenate(top_index), np.concatenate(bottom_index),
                                         np.concatenate(values), (problem.k, problem.n_arms - problem.k))


def _barrier_result(problem: TopKProblem, reduced: Reduced, kind: str, rows, cols, point, tol: float,
                    started: float, pivots: int) -> TopKResult:
    """The barrier point itself as the answer, certified with its dual estimates tau / slack (Gamma from the
    envelope minimum above ``CONFIRM_PAIRS``, as for a forest answer: see :func:`_result`)."""
    psi = reduced.expand_allocation(point.psi)
    edges = _EdgeGroups(edge_top=reduced.top_groups[rows], edge_bottom=reduced.bottom_groups[cols])
    mu = _expand_multipliers(problem, reduced, edges, point.nu)
    minimum = _Checker(reduced).certified_minimum(point.psi)
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


def _result(problem: TopKProblem, reduced: Reduced, kind: str, layout, solution, tol: float, started: float,
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
        minimum = _Checker(reduced).certified_minimum(psi_groups)
    value = (None if minimum is None
             else min(minimum, float(np.min(solution.edge_costs))) / float(reduced.multiplicity @ psi_groups))
    nu = np.maximum(solution.nu, 0.0)
    mu = _expand_multipliers(problem, reduced, layout, nu)
    status = None if solution.converged else "not_certified"
    # on large forests the refined bound (sparse Newton steps over every group) costs minutes; it is computed
    # only when the linearised bound does not certify the answer at tol already
    lazy = reduced.n_groups >= _LAZY_REFINEMENT_GROUPS
    certificate = certify(problem, psi, mu, kind, value=value, refine=not lazy)
    if lazy and not certificate.gap <= tol * certificate.value:
        certificate = certify(problem, psi, mu, kind, value=value)
    return build_result(problem, kind, "exact", psi, mu, iterations=pivots, started=started, tol=tol,
                        status=status, message=message, certificate=certificate,
                        forest=BindingForest(kind=kind, double_star=_is_double_star(reduced, layout),
                                             arm_group=reduced.arm_group, top_groups=reduced.top_groups,
                                             layout=layout, psi=solution.psi),
                        extras={"pivots": pivots, "components": layout.n_components, "groups": reduced.n_groups,
                                "edge_residual": solution.edge_residual,
                                "balance_residual": solution.balance_residual})
