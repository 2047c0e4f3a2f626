r"""The exact top-k solver (``solve_topk(problem, method="exact")``).

The homogeneous problem :math:`T^* = \min\{\sum_a \psi_a : C_{ij}(\psi) \ge 1\}` is solved by an active set
of *binding forests*:

1. tied arms are merged into groups with multiplicities (:mod:`allocopt.topk._groups`), which makes tied
   arms' allocations equal by construction;
2. the first forest is the previous solution's binding forest (``warm_start=``) or Theorem 3.4's double star
   (:math:`i_k` joined to every bottom group, :math:`j_1` to every top group);
3. on a forest the KKT system is solved to machine precision (:mod:`allocopt.topk._forest`);
4. the solution is checked exactly: multipliers :math:`\nu \ge 0` on the forest, and every pair's cost at
   least 1 (:mod:`allocopt.topk._allpairs`, vectorised over blocks of pairs, pruned by a closed-form lower
   bound). Both hold exactly at the optimum (Theorem 3.5), so the forest is final;
5. otherwise one pivot: the edge with the most negative multiplier leaves (splitting its tree), or the most
   violated pair enters (joining two trees, or closing a cycle whose leaving edge is chosen by the linearised
   ratio test on the multipliers), and step 3 repeats;
6. if the pivots cycle or run long, a log-barrier interior-point method (:mod:`allocopt.topk._barrier`) over
   all pairs (or, for large instances, over candidate pairs) locates the binding forest, which is then
   polished exactly as in step 3 and checked as in step 4.

The result is certified by the shared certifier with the forest multipliers; its status is ``"optimal"``
only when the certified relative gap is at most ``tol`` (default :math:`10^{-9}`).
"""

from __future__ import annotations

import time

import numpy as np

from .._validation import as_float, as_int
from ..exceptions import InvalidArgumentError, SolverError
from ._barrier import barrier_path
from ._forest import layout_double_star, layout_forest, solve_forest
from ._groups import Reduced, reduce_problem
from .problem import TopKProblem
from .certificate import certify
from .multipliers import PairMultipliers
from .result import TopKResult, build_result

__all__ = ["solve", "OPTIONS"]

OPTIONS = {"tol": 1e-9, "warm_start": None, "max_pivots": None, "barrier_pairs": 1_000_000}

# relative tolerances of the internal checks (costs are 1 on the forest): rounding-level violations of
# degenerate binding pairs are not pivoted on; the final certificate accounts for them exactly
_FEASIBILITY = 1e-10
_NEGATIVE_MULTIPLIER = 1e-12


def _double_star(reduced: Reduced) -> tuple[np.ndarray, np.ndarray]:
    n_top, n_bottom = reduced.n_top, reduced.n_bottom
    rows = np.concatenate([np.full(n_bottom, n_top - 1), np.arange(n_top - 1)])
    cols = np.concatenate([np.arange(n_bottom), np.zeros(n_top - 1, dtype=int)])
    return rows, cols


def _group_positions(reduced: Reduced):
    """Position of each group in top_groups / bottom_groups (-1 on the other side)."""
    top_position = np.full(reduced.n_groups, -1)
    bottom_position = np.full(reduced.n_groups, -1)
    top_position[reduced.top_groups] = np.arange(reduced.n_top)
    bottom_position[reduced.bottom_groups] = np.arange(reduced.n_bottom)
    return top_position, bottom_position


def _warm_forest(problem: TopKProblem, reduced: Reduced, warm: TopKResult):
    """The previous result's binding forest and allocation, mapped to the groups (None if unusable)."""
    if not isinstance(warm, TopKResult):
        raise InvalidArgumentError(
            f"The 'warm_start' parameter of solve_topk(method='exact') must be a TopKResult. "
            f"Got {type(warm).__name__} instead.")
    if warm.problem.n_arms != problem.n_arms or warm.problem.k != problem.k:
        raise InvalidArgumentError(
            "The 'warm_start' parameter of solve_topk(method='exact') must be a result for a problem with the "
            f"same K = {problem.n_arms} and k = {problem.k}. Got a result with K = {warm.problem.n_arms}, "
            f"k = {warm.problem.k} instead.")
    forest = warm.extras.get("forest")
    psi = np.bincount(reduced.arm_group, weights=warm.psi, minlength=reduced.n_groups) / reduced.multiplicity
    if forest is not None and forest["double_star"] and np.all(psi > 0):
        # the previous answer was a double star: the new instance's double star, from the previous allocation
        rows, cols = _double_star(reduced)
        return rows, cols, psi, layout_double_star(reduced)
    if (forest is not None and forest["kind"] == reduced.kind and np.array_equal(forest["arm_group"], reduced.arm_group)
            and np.array_equal(forest["top_groups"], reduced.top_groups)):
        # same tie groups in the same order: the previous forest and its layout carry over as they are
        return forest["layout"].rows, forest["layout"].cols, forest["psi"], forest["layout"]
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
    return rows, cols, psi, None


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
    return rows, cols


class _Checker:
    """Exact check of a forest solution: multipliers and all-pairs feasibility."""

    def __init__(self, reduced: Reduced):
        self.reduced = reduced
        self.theta_top = reduced.theta[reduced.top_groups]
        self.theta_bottom = reduced.theta[reduced.bottom_groups]

    def scan(self, psi: np.ndarray):
        from ._allpairs import scan_pairs

        reduced = self.reduced
        weights = psi / reduced.dispersion

        def evaluate(rows, cols):
            return reduced.terms(psi, rows, cols).cost

        return scan_pairs(evaluate, reduced.family, self.theta_top, self.theta_bottom,
                          weights[reduced.top_groups], weights[reduced.bottom_groups], 1.0 - _FEASIBILITY,
                          limit=4096)


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


def solve(problem: TopKProblem, kind: str, tol: float = 1e-9, warm_start: TopKResult | None = None,
          max_pivots: int | None = None, barrier_pairs: int = 1_000_000) -> TopKResult:
    """Solve exactly (see the module docstring)."""
    func = "solve_topk(method='exact')"
    tol = as_float(tol, func, "tol", low=0.0)
    barrier_pairs = as_int(barrier_pairs, func, "barrier_pairs", low=1)
    started = time.perf_counter()
    reduced = reduce_problem(problem, kind)
    if max_pivots is None:
        max_pivots = 2 * reduced.n_groups + 20
    max_pivots = as_int(max_pivots, func, "max_pivots", low=0)
    search = _Search(reduced)

    starts = []
    if warm_start is not None:
        warm = _warm_forest(problem, reduced, warm_start)
        if warm is not None:
            # a nearby instance's forest is usually right or a few pivots away; pivots cost far less than a
            # barrier round
            starts.append(("warm start", warm[0], warm[1], warm[2], min(max_pivots, 12), warm[3]))
    rows, cols = _double_star(reduced)
    heuristic = problem.heuristic_allocation()
    psi = np.bincount(reduced.arm_group, weights=heuristic, minlength=reduced.n_groups) / reduced.multiplicity
    starts.append(("double star", rows, cols, psi, 2, layout_double_star(reduced)))
    found = None
    for origin, rows, cols, psi, budget, layout in starts:
        found = search.run(origin, rows, cols, psi, budget, layout=layout)
        if found is not None:
            break
    point = None
    for round_index in range(3):
        if found is not None:
            break
        rows, cols, psi, point = _barrier_forest(reduced, search.checker, search.best_psi(), barrier_pairs,
                                                 round_index, point)
        # a few pivots repair a nearly right forest; otherwise the next, more accurate barrier round is cheaper
        budget = max_pivots if round_index == 2 else min(max_pivots, 10 + reduced.n_groups // 10)
        found = search.run("barrier", rows, cols, psi, budget)
    if found is None:
        if search.best is None:
            raise SolverError(
                f"solve_topk(method='exact') found no forest whose KKT system it could solve on {problem!r} "
                f"(kind {kind!r}); the CVXPY oracle (method='cvxpy') gives a certified bound instead.")
        found = search.best
        message = (f"exact: not certified after {search.pivots} pivot(s); returning the best forest found "
                   f"({found[0]})")
    else:
        message = (f"exact: {found[0]}, {search.pivots} pivot(s); forest of {found[1].n_components} tree(s)")
    origin, layout, solution, scan = found
    return _result(problem, reduced, kind, layout, solution, tol, started, search.pivots, message, scan)


class _Search:
    """Active-set search over forests: solve, check, pivot; remembers the best valid forest solution."""

    def __init__(self, reduced: Reduced):
        self.reduced = reduced
        self.checker = _Checker(reduced)
        self.pivots = 0
        self.best = None  # (origin, layout, solution, scan)
        self.best_score = np.inf

    def best_psi(self) -> np.ndarray:
        if self.best is not None:
            return self.best[2].psi
        return np.ones(self.reduced.n_groups)

    # Means spread over hundreds of decades give optimal allocations down to ~1e-300, and the trial points of
    # the forest passes then overflow or underflow transiently (squares of 1/psi, brackets of the balance).
    # Every forest solution is checked for finite positive allocations and finite multipliers before use, and
    # the answer is certified independently, so those intermediate infinities are handled, not hidden.
    @np.errstate(all="ignore")
    def run(self, origin: str, rows, cols, psi, budget: int, layout=None):
        """Pivot from the given forest (with its ``layout`` when known) at most ``budget`` times; the optimal
        (origin, layout, solution, scan) or None."""
        reduced = self.reduced
        seen = set()
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
            # the best forest so far, kept as the fallback answer (its certificate says how good it is)
            score = (max(0.0, 1.0 - scan.minimum) + float(np.max(np.maximum(-solution.nu, 0.0)) / scale)
                     + (0.0 if solution.converged else 1.0))
            if score < self.best_score:
                self.best, self.best_score = (origin, layout, solution, scan), score
            if not solution.converged:
                return None
            if not negative.any() and scan.costs.size == 0:
                return origin, layout, solution, scan
            signature = _forest_signature(rows, cols)
            if attempt == budget or signature in seen:
                return None
            seen.add(signature)
            self.pivots += 1
            rows, cols = _pivot(reduced, layout, solution, scan, negative, rows, cols, psi)
            layout = None
        return None


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
                    previous=None):
    """Binding forest located by the barrier method over all pairs or over candidate pairs; ``previous`` is the
    previous round's (rows, cols, point), whose path is continued when the pairs are the same."""
    n_pairs = reduced.n_top * reduced.n_bottom
    if previous is not None and n_pairs <= barrier_pairs:
        rows, cols, resume = previous
    elif n_pairs <= barrier_pairs:
        rows, cols = np.divmod(np.arange(n_pairs), reduced.n_bottom)
    else:
        # candidates: every pair within a factor of the smallest cost at the current allocation, limited
        scan_limit = barrier_pairs
        from ._allpairs import scan_pairs

        weights = psi / reduced.dispersion
        costs_at = lambda r, c: reduced.terms(psi, r, c).cost  # noqa: E731
        minimum = scan_pairs(costs_at, reduced.family, checker.theta_top, checker.theta_bottom,
                             weights[reduced.top_groups], weights[reduced.bottom_groups], None).minimum
        scan = scan_pairs(costs_at, reduced.family, checker.theta_top, checker.theta_bottom,
                          weights[reduced.top_groups], weights[reduced.bottom_groups], 4.0 * minimum,
                          limit=scan_limit)
        double_rows, double_cols = _double_star(reduced)
        pairs = np.unique(np.stack([np.concatenate([scan.rows, double_rows]),
                                    np.concatenate([scan.cols, double_cols])], axis=1), axis=0)
        rows, cols = pairs[:, 0], pairs[:, 1]
    # identification needs the multipliers of non-binding pairs (tau / slack) below those of binding ones;
    # binding multipliers can spread over three orders of magnitude and some pairs can be within 1e-4 of
    # binding, hence a duality gap of 1e-8 first and tighter rounds if needed
    resume = previous[2] if previous is not None and n_pairs <= barrier_pairs else None
    point = barrier_path(reduced, rows, cols, psi, target_gap=10.0 ** (-8 - 2 * round_index), resume=resume)
    weights = point.nu / point.nu.max()
    active = weights >= 1e-5
    forest_rows, forest_cols = _spanning_forest(reduced, rows[active], cols[active], weights[active])
    return forest_rows, forest_cols, point.psi, (rows, cols, point)


def _members(arms: np.ndarray, arm_group: np.ndarray, groups: np.ndarray):
    """Positions (in ``arms``) of the members of each of ``groups``: (flat positions, start offsets, counts)."""
    group_of = arm_group[arms]
    order = np.argsort(group_of, kind="stable")
    sorted_groups = group_of[order]
    starts = np.searchsorted(sorted_groups, groups)
    counts = np.searchsorted(sorted_groups, groups, side="right") - starts
    return order, starts, counts


def _expand_multipliers(problem: TopKProblem, reduced: Reduced, layout, nu: np.ndarray) -> PairMultipliers:
    """Arm-level multipliers: a group pair's multiplier split evenly over its member pairs."""
    top_order, top_starts, top_counts = _members(problem.top, reduced.arm_group, layout.edge_top)
    bottom_order, bottom_starts, bottom_counts = _members(problem.bottom, reduced.arm_group, layout.edge_bottom)
    sizes = top_counts * bottom_counts
    edge_of = np.repeat(np.arange(sizes.size), sizes)
    offset = np.arange(edge_of.size) - np.repeat(np.cumsum(sizes) - sizes, sizes)
    top_index = top_order[top_starts[edge_of] + offset // bottom_counts[edge_of]]
    bottom_index = bottom_order[bottom_starts[edge_of] + offset % bottom_counts[edge_of]]
    return PairMultipliers.from_triplets(top_index, bottom_index, nu[edge_of] / sizes[edge_of],
                                         (problem.k, problem.n_arms - problem.k))


def _result(problem: TopKProblem, reduced: Reduced, kind: str, layout, solution, tol: float, started: float,
            pivots: int, message: str, scan=None) -> TopKResult:
    """Expand groups to arms and certify (with the all-pairs minimum of the final scan when there is one:
    tied arms have the costs of their groups, so it is Gamma of the expanded allocation up to the scale)."""
    psi_groups = solution.psi
    psi = reduced.expand_allocation(psi_groups)
    value = None
    if scan is not None and scan.minimum >= 1.0 - _FEASIBILITY:
        total = float(reduced.multiplicity @ psi_groups)
        value = min(scan.minimum, float(np.min(solution.edge_costs))) / total
    nu = np.maximum(solution.nu, 0.0)
    mu = _expand_multipliers(problem, reduced, layout, nu)
    status = None if solution.converged else "not_certified"
    certificate = certify(problem, psi, mu, kind, value=value)
    return build_result(problem, kind, "exact", psi, mu, iterations=pivots, started=started, tol=tol,
                        status=status, message=message, certificate=certificate,
                        extras={"pivots": pivots,
                                "forest": {"kind": kind, "arm_group": reduced.arm_group,
                                           "double_star": _is_double_star(reduced, layout),
                                           "top_groups": reduced.top_groups, "layout": layout,
                                           "psi": solution.psi},
                                "components": layout.n_components, "groups": reduced.n_groups,
                                "edge_residual": solution.edge_residual,
                                "balance_residual": solution.balance_residual})
