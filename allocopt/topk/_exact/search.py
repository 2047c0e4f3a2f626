r"""The exact solver's active set: the first forests (a warm start, the Gaussian transport forest or the Gaussian
surrogate's, Theorem 3.4's double star), then solve, check, pivot (single pivots, or multiple ones from a staircase
start); barrier rounds locate the forest when the pivots do not reach it (module :mod:`allocopt.topk._exact`)."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ...exceptions import InvalidArgumentError
from ..problem import TopKProblem
from ..result import TopKResult
from .answer import best_seen, forest_result, forest_signature
from .barrier import BarrierRound, barrier_forest
from .._scan import PairScan
from .checks import Checker
from .forest import (ForestLayout, ForestSolution, group_positions, layout_double_star, layout_forest, solve_forest,
                     spanning_forest)
from .groups import Reduced, reduce_problem
from .starts import corner_turns, north_west_staircase, surrogate_forest, transport_forest
from .star import double_star_edges

__all__ = ["active_set"]

_NEGATIVE_MULTIPLIER = 1e-12


# pivots tried from the double star before the barrier (noisy means are often 3-6 pivots away from it); two
# above 10^6 pairs, where each pivot's all-pairs scan costs about as much as a barrier round
_DOUBLE_STAR_PIVOTS = 8


# other families: pivots tried from the Gaussian surrogate's forest, which comes before the double star from
# this many group pairs on (after it below)
_SURROGATE_PIVOTS = 8


_SURROGATE_FIRST = 10_000


# pivots tried from the Gaussian surrogate's forest when the checks run on the envelopes: each pivot then costs a
# forest solve and an O(K log K) check, far less than a barrier round
_ENVELOPE_SURROGATE_PIVOTS = 100


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
        rows, cols = double_star_edges(reduced.n_top, reduced.n_groups)
        return _Start("warm start", rows, cols, psi, budget, layout_double_star(reduced))
    if forest is not None and forest.carries_over(reduced):
        # same tie groups in the same order: the previous forest and its layout carry over as they are
        assert forest.layout is not None and forest.psi is not None  # (carries_over checks them)
        return _Start("warm start", forest.layout.rows, forest.layout.cols, forest.psi, budget, forest.layout)
    rows, cols = warm.multipliers.rows, warm.multipliers.cols
    arm_top, arm_bottom = warm.problem.top[rows], warm.problem.bottom[cols]
    top_position, bottom_position = group_positions(reduced)
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
        rows, cols = spanning_forest(reduced, rows, cols, weights)
    return _Start("warm start", rows, cols, psi, budget, None)


class _Search:
    """Active-set search over forests: solve, check, pivot; remembers the best valid forest solution."""

    def __init__(self, reduced: Reduced):
        self.reduced = reduced
        self.checker = Checker(reduced)
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
        (:func:`~allocopt.topk._exact.starts.north_west_staircase`), then turns of every corner of negative
        multiplier at once (:func:`~allocopt.topk._exact.starts.corner_turns`); single pivots follow from the
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
            signature = forest_signature(rows, cols)
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
        if moved is None or forest_signature(*moved) in seen:
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


def active_set(problem: TopKProblem, kind: str, tol: float, warm_start: TopKResult | None,
               max_pivots: int | None, barrier_pairs: int, started: float) -> TopKResult:
    """The active-set path of the exact solver (module docstring of :mod:`allocopt.topk._exact`) from one start
    (``warm_start`` or none), on checked options: the answer of the first forest that passes the checks, or the
    best allocation seen."""
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
    rows, cols = double_star_edges(reduced.n_top, reduced.n_groups)
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
    barrier_rounds: list[BarrierRound] = []
    for round_index in range(3):
        if found is not None:
            break
        located = barrier_forest(reduced, search.checker, search.best_psi(), barrier_pairs, round_index,
                                  barrier_round)
        barrier_round = located.round
        barrier_rounds.append(barrier_round)
        # a few pivots repair a nearly right forest; otherwise the next, more accurate barrier round is cheaper
        budget = max_pivots if round_index == 2 else min(max_pivots, 10 + reduced.n_groups // 10)
        found = search.run("barrier", located.rows, located.cols, located.psi, budget)
    if found is not None:
        message = (f"exact: {found.origin}, {search.pivots} pivot(s); forest of {found.layout.n_components} "
                   "tree(s)")
        answer = forest_result(problem, reduced, kind, found.layout, found.solution, tol, started, search.pivots,
                         message, found.scan)
        if answer.status == "optimal":
            return answer
        return best_seen(problem, reduced, kind, search, barrier_rounds, tol, started, answer)
    return best_seen(problem, reduced, kind, search, barrier_rounds, tol, started, None)
