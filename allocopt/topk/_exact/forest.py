r"""Exact solution of the KKT system on a forest of binding pairs.

Given a forest :math:`E` of (top group, bottom group) pairs covering every group, each tree having a top and
a bottom group, find :math:`\psi > 0` and :math:`\nu` with

.. math::
    C_e(\psi) = 1 \quad (e \in E), \qquad \sum_{e \ni v} \nu_e\, \partial_v C_e(\psi) = n_v \quad (\text{every group } v),

the KKT system of the homogeneous problem restricted to :math:`E` (Wang, Yang, You 2022, eq. (65); multiplicities :math:`n_v`
from tie merging). On a tree with :math:`n` nodes there are :math:`2n - 1` equations and unknowns: the edge
equations leave one degree of freedom per tree, the leaves' stationarity equations give the multipliers by
peeling towards a root, and the root's equation is the *balance* (Proposition A.2).

Method: calibrated surrogate. In the variables :math:`u = 1/\psi`, :math:`1/C_e` is a convex function
homogeneous of degree one in :math:`u`; at the current point it is matched in value and gradient by
:math:`a_e u_i + b_e u_j` with :math:`a_e = \partial_i C_e\,\psi_i^2/C_e^2`, :math:`b_e = \partial_j C_e\,\psi_j^2/C_e^2`
(exactly, for Gaussian arms). With the surrogate edge equations :math:`a_e u_i + b_e u_j = 1`, every
:math:`u_v` on a tree is affine in the root's value :math:`s`, the surrogate stationarity
:math:`\sum_{e \ni v}\nu_e c_{e,v} = n_v/u_v^2` peels explicitly, and the root's residual is a scalar function
of :math:`s` that runs from :math:`+\infty` to :math:`-\infty` on the interval where every :math:`u_v > 0`;
a bracketed Newton iteration solves it to machine precision, for all trees at once. Re-calibrating at the
new point and repeating converges to the exact solution (a fixed point satisfies the true equations, since
the surrogate matches values and gradients there); Gaussian arms need one pass.

Everything is vectorised over the nodes of one tree level; the Python loop runs over levels (two for a
double star). Forests deeper than ``DEEP_FOREST`` levels sweep in compiled loops instead
(:mod:`allocopt.topk._exact.forest`, the same arithmetic bit for bit).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from .._graph import SMALL_GRAPH, connected_components
from ..._numba import compile_once
from ..pairs import PairTerms
from .groups import Reduced
from .gaussian_star import _FEASIBILITY, _NEGATIVE_MULTIPLIER, MAX_NEWTON, _balance_rows
from .star import double_star_edges

__all__ = ["group_positions", "ForestLayout", "ForestSolution", "layout_forest", "layout_double_star", "solve_forest", "exact_multipliers", "spanning_forest", "gaussian_forest", "ForestBatch", "DEEP_FOREST",
           "affine_propagation", "peel", "null_vector"]

_EPS = np.finfo(float).eps


@dataclass(frozen=True)
class ForestLayout:
    """Breadth-first structure of a forest over the groups.

    Attributes
    ----------
    rows, cols : ndarray of int
        The edges, as positions in ``top_groups`` / ``bottom_groups``.
    edge_top, edge_bottom : ndarray of int
        Group indices of each edge's ends.
    order : ndarray of int
        Groups in breadth-first order (roots first, by component).
    levels : list of ndarray
        ``order`` split by depth; ``levels[0]`` are the roots.
    parent, parent_edge : ndarray of int
        Parent group and the edge to it (-1 for roots), indexed by group.
    component : ndarray of int
        Tree of each group; ``roots[component[v]]`` is its root.
    roots : ndarray of int
    """

    rows: np.ndarray
    cols: np.ndarray
    edge_top: np.ndarray
    edge_bottom: np.ndarray
    order: np.ndarray
    levels: list
    parent: np.ndarray
    parent_edge: np.ndarray
    component: np.ndarray
    roots: np.ndarray

    @property
    def n_components(self) -> int:
        return self.roots.shape[0]


def _bfs_small(n_groups: int, edge_top: np.ndarray, edge_bottom: np.ndarray, roots: np.ndarray):
    """Parents and parent edges by breadth-first search from ``roots`` (Python, small graphs)."""
    neighbours: list[list[tuple[int, int]]] = [[] for _ in range(n_groups)]
    for edge, (a, b) in enumerate(zip(edge_top.tolist(), edge_bottom.tolist())):
        neighbours[a].append((b, edge))
        neighbours[b].append((a, edge))
    parent = np.full(n_groups, -1)
    parent_edge = np.full(n_groups, -1)
    visited = np.zeros(n_groups, dtype=bool)
    frontier = [int(root) for root in roots]
    visited[frontier] = True
    while frontier:
        following = []
        for node in frontier:
            for other, edge in neighbours[node]:
                if not visited[other]:
                    visited[other] = True
                    parent[other], parent_edge[other] = node, edge
                    following.append(other)
        frontier = following
    return parent, parent_edge


SMALL_FOREST = SMALL_GRAPH


def layout_forest(reduced: Reduced, rows: np.ndarray, cols: np.ndarray) -> ForestLayout | None:
    """Breadth-first layout of the edge set, or ``None`` if it is not a forest covering every group with a top
    and a bottom group in each tree."""
    n_groups = reduced.n_groups
    rows, cols = np.asarray(rows, dtype=int), np.asarray(cols, dtype=int)
    edge_top, edge_bottom = reduced.top_groups[rows], reduced.bottom_groups[cols]
    small = n_groups <= SMALL_FOREST
    n_components, component = connected_components(n_groups, edge_top, edge_bottom)
    if rows.shape[0] != n_groups - n_components:
        return None  # cycles (or duplicated edges)
    is_top = np.zeros(n_groups, dtype=bool)
    is_top[reduced.top_groups] = True
    has_top = np.bincount(component, weights=is_top, minlength=n_components) > 0
    has_bottom = np.bincount(component, weights=~is_top, minlength=n_components) > 0
    if not (np.all(has_top) and np.all(has_bottom)):
        return None
    # root of each tree: its group of largest degree (short trees, e.g. the hubs of a double star)
    degree = np.bincount(edge_top, minlength=n_groups) + np.bincount(edge_bottom, minlength=n_groups)
    by_degree = np.lexsort((np.arange(n_groups), -degree))
    roots = np.full(n_components, -1)
    for group in by_degree:
        if roots[component[group]] < 0:
            roots[component[group]] = group
    if small:
        parent, parent_edge = _bfs_small(n_groups, edge_top, edge_bottom, roots)
    else:
        from scipy.sparse import coo_matrix
        from scipy.sparse.csgraph import breadth_first_order

        adjacency = coo_matrix((np.arange(1, rows.shape[0] + 1, dtype=float), (edge_top, edge_bottom)),
                               shape=(n_groups, n_groups)).tocsr()
        adjacency = adjacency + adjacency.T
        parent = np.full(n_groups, -1)
        for root in roots:
            nodes, predecessors = breadth_first_order(adjacency, int(root), directed=False,
                                                      return_predecessors=True)
            parent[nodes[1:]] = predecessors[nodes[1:]]
        parent_edge = np.full(n_groups, -1)
        child = np.flatnonzero(parent >= 0)
        parent_edge[child] = np.asarray(adjacency[child, parent[child]]).ravel().astype(int) - 1
    order, levels = tree_levels(parent)
    return ForestLayout(rows=rows, cols=cols, edge_top=edge_top, edge_bottom=edge_bottom, order=order,
                        levels=levels, parent=parent, parent_edge=parent_edge, component=component, roots=roots)


def tree_levels(parent: np.ndarray) -> tuple[np.ndarray, list]:
    """The nodes in breadth-first order (by depth, stably) and split by depth (``levels[0]``: the roots), from
    the parent of every node (-1 at the roots)."""
    # pointer jumping: depth[v] is the distance from v to ancestor[v], which jumps twice as far each pass, so a
    # forest of depth D takes log2(D) + 1 passes (a path of 10^4 nodes: 15, not 10^4)
    ancestor = parent.copy()
    depth = (ancestor >= 0).astype(int)
    climbing = np.flatnonzero(ancestor >= 0)
    while climbing.size:
        above = ancestor[climbing]
        depth[climbing] += depth[above]
        ancestor[climbing] = ancestor[above]
        climbing = climbing[ancestor[climbing] >= 0]
    order = np.argsort(depth, kind="stable")
    boundaries = np.flatnonzero(np.diff(depth[order])) + 1
    return order, np.split(order, boundaries)


def layout_tree(n_nodes: int, edge_top: np.ndarray, edge_bottom: np.ndarray, root: int) -> ForestLayout | None:
    """Breadth-first layout of one tree over the nodes ``0 .. n_nodes-1`` (edges ``(edge_top[e], edge_bottom[e])``)
    from ``root``, or ``None`` when the edges do not connect every node. There are no tie groups here: ``rows``
    and ``cols`` are the edge indices."""
    edge_top, edge_bottom = np.asarray(edge_top, dtype=int), np.asarray(edge_bottom, dtype=int)
    roots = np.array([root])
    parent, parent_edge = _bfs_small(n_nodes, edge_top, edge_bottom, roots)
    if np.count_nonzero(parent < 0) != 1:
        return None
    order, levels = tree_levels(parent)
    return ForestLayout(rows=np.arange(edge_top.shape[0]), cols=np.arange(edge_top.shape[0]), edge_top=edge_top,
                        edge_bottom=edge_bottom, order=order, levels=levels, parent=parent, parent_edge=parent_edge,
                        component=np.zeros(n_nodes, dtype=int), roots=roots)


def layout_double_star(reduced: Reduced) -> ForestLayout:
    """The layout of Theorem 3.4's double star, built directly (root i_k, then every bottom group, then the
    other top groups under j_1); edges are (i_k, j) for every bottom j, then (i, j_1) for the other tops."""
    n_top, n_bottom = reduced.n_top, reduced.n_bottom
    rows, cols = double_star_edges(n_top, reduced.n_groups)
    edge_top, edge_bottom = reduced.top_groups[rows], reduced.bottom_groups[cols]
    root = reduced.top_groups[-1]
    hub = reduced.bottom_groups[0]
    n_groups = reduced.n_groups
    parent = np.full(n_groups, -1)
    parent_edge = np.full(n_groups, -1)
    parent[reduced.bottom_groups] = root
    parent_edge[reduced.bottom_groups] = np.arange(n_bottom)
    others = reduced.top_groups[:-1]
    parent[others] = hub
    parent_edge[others] = n_bottom + np.arange(n_top - 1)
    levels = [np.array([root]), reduced.bottom_groups.copy()] + ([others] if others.size else [])
    return ForestLayout(rows=rows, cols=cols, edge_top=edge_top, edge_bottom=edge_bottom,
                        order=np.concatenate(levels), levels=levels, parent=parent, parent_edge=parent_edge,
                        component=np.zeros(n_groups, dtype=int), roots=np.array([root]))


def group_positions(reduced: Reduced):
    """Position of each group in top_groups / bottom_groups (-1 on the other side)."""
    top_position = np.full(reduced.n_groups, -1)
    bottom_position = np.full(reduced.n_groups, -1)
    top_position[reduced.top_groups] = np.arange(reduced.n_top)
    bottom_position[reduced.bottom_groups] = np.arange(reduced.n_bottom)
    return top_position, bottom_position


def spanning_forest(reduced: Reduced, rows, cols, weights):
    """Maximum-weight spanning forest of the given pairs (weights > 0), completed so that every group is
    covered: an uncovered top group is joined to j_1, an uncovered bottom group to i_k."""
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import minimum_spanning_tree

    n_groups = reduced.n_groups
    top, bottom = reduced.top_groups[rows], reduced.bottom_groups[cols]
    graph = coo_matrix((1.0 / np.maximum(weights, 1e-300), (top, bottom)), shape=(n_groups, n_groups))
    tree = minimum_spanning_tree(graph).tocoo()
    top_position, bottom_position = group_positions(reduced)
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


@dataclass(frozen=True)
class ForestSolution:
    """Solution of the forest KKT system.

    ``psi`` is on the homogeneous scale (every forest edge has cost 1), ``nu`` the exact multipliers (edge
    order of the layout), ``edge_residual`` the largest :math:`|C_e - 1|` and ``balance_residual`` the largest
    relative residual of the roots' stationarity equations.
    """

    psi: np.ndarray
    nu: np.ndarray
    edge_residual: float
    balance_residual: float
    passes: int
    converged: bool
    edge_costs: np.ndarray


class _Surrogate(NamedTuple):
    """The forest's pair terms at psi and the surrogate coefficients a (top end) and b (bottom end) of its
    edges (module docstring)."""

    terms: PairTerms
    a: np.ndarray
    b: np.ndarray


class _Affine(NamedTuple):
    """u_v = alpha_v + beta_v s (s the value at v's root), and v's coefficient in its parent edge."""

    alpha: np.ndarray
    beta: np.ndarray
    own: np.ndarray


class _Peeled(NamedTuple):
    """Multiplier of each node's parent edge (indexed by node), and the roots' residuals and their scales."""

    multiplier: np.ndarray
    root_residual: np.ndarray
    root_scale: np.ndarray


def _edge_coefficients(reduced: Reduced, layout: ForestLayout, psi: np.ndarray) -> _Surrogate:
    terms = reduced.terms(psi, layout.rows, layout.cols)
    cost = terms.cost
    a = terms.grad_top * psi[layout.edge_top] ** 2 / cost**2
    b = terms.grad_bottom * psi[layout.edge_bottom] ** 2 / cost**2
    return _Surrogate(terms, a, b)


def _coefficient_of(layout: ForestLayout, a: np.ndarray, b: np.ndarray, nodes: np.ndarray, edges: np.ndarray):
    """Surrogate coefficient of ``nodes`` in ``edges`` (a for the top end, b for the bottom end)."""
    return np.where(layout.edge_top[edges] == nodes, a[edges], b[edges])


def _affine_propagation(layout: ForestLayout, a: np.ndarray, b: np.ndarray, n_groups: int) -> _Affine:
    """u_v = alpha_v + beta_v s_(tree of v) from the surrogate edge equations, level by level."""
    if len(layout.levels) > DEEP_FOREST:
        return _Affine(*affine_propagation(layout, a, b, n_groups))
    alpha, beta = np.zeros(n_groups), np.zeros(n_groups)
    beta[layout.roots] = 1.0
    own = np.ones(n_groups)  # coefficient of v in its parent edge
    for level in layout.levels[1:]:
        edges = layout.parent_edge[level]
        parents = layout.parent[level]
        own_coefficient = _coefficient_of(layout, a, b, level, edges)
        parent_coefficient = _coefficient_of(layout, a, b, parents, edges)
        alpha[level] = (1.0 - parent_coefficient * alpha[parents]) / own_coefficient
        beta[level] = -parent_coefficient * beta[parents] / own_coefficient
        own[level] = own_coefficient
    return _Affine(alpha, beta, own)


def _peel(layout: ForestLayout, coefficient_parent_side: np.ndarray, own: np.ndarray, demand: np.ndarray,
          n_groups: int) -> _Peeled:
    """Peel the stationarity equations from the leaves: the multiplier of each node's parent edge (indexed by
    node), the roots' residuals and their scales.

    Node v's equation: sum over its edges e of nu_e * coef(e, v) = demand_v.
    """
    if len(layout.levels) > DEEP_FOREST:
        multiplier, inflow = peel(layout, coefficient_parent_side, own, demand, n_groups)
    else:
        inflow = np.zeros(n_groups)
        multiplier = np.zeros(n_groups)
        for level in reversed(layout.levels[1:]):
            parents = layout.parent[level]
            multiplier[level] = (demand[level] - inflow[level]) / own[level]
            inflow += np.bincount(parents, weights=multiplier[level] * coefficient_parent_side[level],
                                  minlength=n_groups)
    roots = layout.roots
    return _Peeled(multiplier, demand[roots] - inflow[roots], demand[roots] + np.abs(inflow[roots]))


def _parent_side_coefficients(layout: ForestLayout, a: np.ndarray, b: np.ndarray, n_groups: int) -> np.ndarray:
    """For each non-root node v: the coefficient of v's parent in v's parent edge."""
    result = np.zeros(n_groups)
    child = layout.order[layout.parent[layout.order] >= 0]
    result[child] = _coefficient_of(layout, a, b, layout.parent[child], layout.parent_edge[child])
    return result


def edge_end_coefficients(layout: ForestLayout, coefficient_top: np.ndarray, coefficient_bottom: np.ndarray,
                          n_nodes: int) -> tuple[np.ndarray, np.ndarray]:
    """For each non-root node v: the coefficient of v (``own``) and of its parent (``parent_side``) in v's parent
    edge, from the coefficients of the top and bottom ends of every edge (``own`` 1 and ``parent_side`` 0 at the
    roots)."""
    own = np.ones(n_nodes)
    parent_side = np.zeros(n_nodes)
    child = layout.order[layout.parent[layout.order] >= 0]
    edges = layout.parent_edge[child]
    child_is_top = layout.edge_top[edges] == child
    own[child] = np.where(child_is_top, coefficient_top[edges], coefficient_bottom[edges])
    parent_side[child] = np.where(child_is_top, coefficient_bottom[edges], coefficient_top[edges])
    return own, parent_side


def tree_null_vector(layout: ForestLayout, own: np.ndarray, parent_side: np.ndarray, n_nodes: int,
                     log_scale: bool = False) -> np.ndarray:
    r"""The left null vector :math:`z` of each tree's KKT matrix (nodes x edges, entry :math:`c_{e,v}`), from
    :math:`z_{\rm root} = 1` and :math:`z_v c_{e,v} + z_{\rm parent} c_{e,\rm parent} = 0` on every edge:
    :math:`z_v = z_{\rm parent}\,(-c_{e,\rm parent}/c_{e,v})` level by level (``own`` :math:`= c_{e,v}`,
    ``parent_side`` :math:`= c_{e,\rm parent}` of v's parent edge :math:`e`; see :func:`edge_end_coefficients`).

    Peeling is linear in the demands: a node's demand reaches its parent's equation multiplied by
    ``-parent_side / own``, so the root's residual is :math:`\sum_v z_v\,\mathrm{demand}_v`, and the balance of
    Proposition A.2 (Wang, Yang, You 2022) is :math:`\sum_v z_v n_v = 0`.

    Two arithmetics, for two uses. The forest solver (default) needs the signed, unnormalised :math:`z_v` of
    every tree at once in its Newton residual, each a product of depth(v) ratios (relative error at most
    depth(v) ulps). The checks of an arbitrary allocation (``log_scale=True``, positive coefficients) get
    :math:`\log|z_v|` as sums of :math:`\log c_{e,\rm parent} - \log c_{e,v}` (signs alternate with depth
    across the bipartite tree), which cannot overflow however far apart the allocation's entries are (the
    product form overflows beyond ratios of about :math:`10^{308}` along a path); the exponential of such a
    sum carries an error of :math:`|\log z_v|` ulps, which is why the solver keeps the product.
    """
    if not log_scale and len(layout.levels) > DEEP_FOREST:
        return null_vector(layout, own, parent_side, n_nodes)
    values = np.zeros(n_nodes) if log_scale else np.ones(n_nodes)
    for level in layout.levels[1:]:
        if log_scale:
            values[level] = values[layout.parent[level]] + (np.log(parent_side[level]) - np.log(own[level]))
        else:
            values[level] = values[layout.parent[level]] * (-parent_side[level] / own[level])
    return values


def _solve_balance(layout: ForestLayout, multiplicity: np.ndarray, alpha: np.ndarray, beta: np.ndarray,
                   own: np.ndarray, parent_side: np.ndarray, start: np.ndarray, n_groups: int) -> np.ndarray:
    """Roots' values s (one per tree) solving the surrogate balance, by bracketed Newton.

    The root residual is R(s) = sum_v w_v n_v / (alpha_v + beta_v s)^2 over the tree (see
    :func:`tree_null_vector`); it decreases from +inf to -inf on the interval where every u_v > 0.
    """
    component = layout.component
    n_components = layout.n_components
    weights = tree_null_vector(layout, own, parent_side, n_groups) * multiplicity
    # bracket: every u_v = alpha_v + beta_v s > 0
    lower = np.full(n_components, 0.0)
    upper = np.full(n_components, np.inf)
    positive, negative = beta > 0, beta < 0
    np.maximum.at(lower, component[positive], -alpha[positive] / beta[positive])
    np.minimum.at(upper, component[negative], -alpha[negative] / beta[negative])
    s = np.clip(start, lower, upper)
    finite = np.isfinite(upper)
    inside = (s > lower) & (s < upper)
    s = np.where(inside, s, np.where(finite, 0.5 * (lower + upper), np.maximum(2.0 * lower, lower + 1.0)))
    for _ in range(200):
        u = alpha + beta * s[component]
        terms = weights / u**2
        residual = np.bincount(component, weights=terms, minlength=n_components)
        scale = np.bincount(component, weights=np.abs(terms), minlength=n_components)
        derivative = np.bincount(component, weights=-2.0 * terms * beta / u, minlength=n_components)
        lower = np.where(residual > 0, s, lower)
        upper = np.where(residual < 0, s, upper)
        done = (np.abs(residual) <= 4 * _EPS * scale) | (upper - lower <= 4 * _EPS * np.abs(s))
        if np.all(done):
            break
        with np.errstate(divide="ignore", invalid="ignore"):
            newton = s - residual / derivative
        bisection = np.where(np.isfinite(upper), 0.5 * (lower + upper), 2.0 * s)
        acceptable = np.isfinite(newton) & (newton > lower) & (newton < upper)
        s = np.where(done, s, np.where(acceptable, newton, bisection))
    return s


def exact_multipliers(reduced: Reduced, layout: ForestLayout, psi: np.ndarray, terms=None):
    """Multipliers from the exact gradients by peeling (edge order of the layout) and the roots' relative
    residuals (the exact balance). ``terms`` may pass the forest's pair terms at ``psi`` or at any multiple of
    it (the gradients do not depend on the scale)."""
    n_groups = reduced.n_groups
    if terms is None:
        terms = reduced.terms(psi, layout.rows, layout.cols)
    own, parent_side = edge_end_coefficients(layout, terms.grad_top, terms.grad_bottom, n_groups)
    multiplier, residual, scale = _peel(layout, parent_side, own, reduced.multiplicity, n_groups)
    child = layout.order[layout.parent[layout.order] >= 0]
    nu = np.zeros(layout.rows.shape[0])
    nu[layout.parent_edge[child]] = multiplier[child]
    return nu, np.abs(residual) / scale


def _surrogate_pass(reduced: Reduced, layout: ForestLayout, psi: np.ndarray, stop_below: float = -1.0):
    """One calibrated-surrogate pass: the exact solution of the forest system for the surrogate calibrated at
    ``psi``, and the largest |C_e - 1| at ``psi``. Returns ``(None, residual)`` without solving when that
    residual is at most ``stop_below``."""
    n_groups = reduced.n_groups
    terms, a, b = _edge_coefficients(reduced, layout, psi)
    residual = float(np.max(np.abs(terms.cost - 1.0)))
    if residual <= stop_below:
        return None, residual
    alpha, beta, own = _affine_propagation(layout, a, b, n_groups)
    parent_side = _parent_side_coefficients(layout, a, b, n_groups)
    s = _solve_balance(layout, reduced.multiplicity, alpha, beta, own, parent_side, 1.0 / psi[layout.roots],
                       n_groups)
    return 1.0 / (alpha + beta * s[layout.component]), residual


def solve_forest(reduced: Reduced, layout: ForestLayout, psi_start: np.ndarray, max_passes: int = 60,
                 memory: int = 3) -> ForestSolution:
    r"""Solve the forest KKT system from ``psi_start`` (any positive allocation) by calibrated surrogates.

    The passes define a fixed-point map :math:`\log\psi \mapsto \log G(\psi)`, exact in one pass for
    Gaussian arms and linearly convergent otherwise; Anderson acceleration (``memory`` previous passes,
    accepted only when it reduces the fixed-point residual) makes the convergence superlinear. It stops when
    a pass moves :math:`\psi` by less than :math:`10^{-13}` relatively, or when the moves stagnate at the
    precision the instance allows (near ties limit it). For Gaussian arms it stops as soon as the forest
    costs equal one to rounding.
    """
    exact_surrogate = reduced.family.harmonic_costs(reduced.kind)  # 1/C is linear in 1/psi: one pass is exact
    history_x, history_f = [], []
    changes = []
    passes = 0
    x = np.log(np.asarray(psi_start, dtype=float))
    for passes in range(1, max_passes + 1):
        mapped, _ = _surrogate_pass(reduced, layout, np.exp(x))
        if exact_surrogate:
            x = np.log(mapped)
            terms = reduced.terms(mapped, layout.rows, layout.cols)
            if np.max(np.abs(terms.cost - 1.0)) <= 64 * _EPS:
                break
            continue  # re-calibrate at the answer: removes the cancellation of u_child = (1 - c u_parent)/c_child
        fx = np.log(mapped) - x
        change = float(np.max(np.abs(fx)))
        changes.append(change)
        if change <= 1e-13 or (len(changes) >= 4 and change <= 1e-9 and change >= 0.5 * min(changes[-4:-1])):
            x = np.log(mapped)
            break
        history_x.append(x.copy())
        history_f.append(fx.copy())
        history_x, history_f = history_x[-(memory + 1):], history_f[-(memory + 1):]
        candidate = x + fx  # plain fixed-point step
        slow = len(changes) >= 2 and change > 0.05 * changes[-2]
        if slow and len(history_f) >= 2:
            differences_f = np.stack([history_f[i + 1] - history_f[i] for i in range(len(history_f) - 1)], axis=1)
            differences_x = np.stack([history_x[i + 1] - history_x[i] for i in range(len(history_x) - 1)], axis=1)
            gamma, *_ = np.linalg.lstsq(differences_f, fx, rcond=None)
            accelerated = x + fx - (differences_x + differences_f) @ gamma
            if np.all(np.isfinite(accelerated)):
                trial, _ = _surrogate_pass(reduced, layout, np.exp(accelerated))
                if np.max(np.abs(np.log(trial) - accelerated)) < change:
                    candidate = accelerated
        x = candidate
    psi = np.exp(x)
    if not exact_surrogate or passes == max_passes:
        terms = reduced.terms(psi, layout.rows, layout.cols)
    # the smallest forest cost becomes exactly one (costs are 1-homogeneous, gradients 0-homogeneous)
    scale = float(np.min(terms.cost))
    psi = psi / scale
    costs = terms.cost / scale
    edge_residual = float(np.max(np.abs(costs - 1.0)))
    nu, balance = exact_multipliers(reduced, layout, psi, terms)
    converged = edge_residual <= 1e-11 and float(np.max(balance)) <= 1e-8
    return ForestSolution(psi=psi, nu=nu, edge_residual=edge_residual, balance_residual=float(np.max(balance)),
                          passes=passes, converged=converged, edge_costs=costs)


# ------------------------------------------------------------------------ the level sweeps, compiled
# from this many levels on, the forest solver sweeps with the compiled loops (below it the numpy level sweeps
# cost less than a compiled call's set-up, and no compilation is needed)
DEEP_FOREST = 24


def affine_propagation(layout, a, b, n_groups):
    """:func:`allocopt.topk._exact.forest._affine_propagation` as one compiled loop: ``(alpha, beta, own)``."""
    return _kernels()["affine"](layout.order, layout.parent, layout.parent_edge, layout.edge_top, a, b,
                                layout.roots, n_groups)


def peel(layout, coefficient_parent_side, own, demand, n_groups):
    """:func:`allocopt.topk._exact.forest._peel` as one compiled loop: ``(multiplier, inflow)``."""
    return _kernels()["peel"](layout.order, layout.parent, coefficient_parent_side, own, demand, n_groups)


def null_vector(layout, own, parent_side, n_nodes):
    """:func:`allocopt.topk._exact.forest.tree_null_vector` (product form) as one compiled loop."""
    return _kernels()["null"](layout.order, layout.parent, own, parent_side, n_nodes)


def _affine(order, parent, parent_edge, edge_top, a, b, roots, n_groups):
    alpha = np.zeros(n_groups)
    beta = np.zeros(n_groups)
    own = np.ones(n_groups)
    for root in roots:
        beta[root] = 1.0
    for position in range(order.shape[0]):
        node = order[position]
        up = parent[node]
        if up < 0:
            continue
        edge = parent_edge[node]
        if edge_top[edge] == node:
            own_coefficient = a[edge]
            parent_coefficient = b[edge]
        else:
            own_coefficient = b[edge]
            parent_coefficient = a[edge]
        alpha[node] = (1.0 - parent_coefficient * alpha[up]) / own_coefficient
        beta[node] = -parent_coefficient * beta[up] / own_coefficient
        own[node] = own_coefficient
    return alpha, beta, own


def _peel_loop(order, parent, coefficient_parent_side, own, demand, n_groups):
    inflow = np.zeros(n_groups)
    multiplier = np.zeros(n_groups)
    n = order.shape[0]
    # level boundaries of the breadth-first order (sorted by depth)
    depth = np.zeros(n_groups, dtype=np.int64)
    for position in range(n):
        node = order[position]
        if parent[node] >= 0:
            depth[node] = depth[parent[node]] + 1
    end = n
    while end > 0:
        start = end - 1
        while start > 0 and depth[order[start - 1]] == depth[order[end - 1]]:
            start -= 1
        if depth[order[start]] == 0:
            break
        for position in range(start, end):
            node = order[position]
            multiplier[node] = (demand[node] - inflow[node]) / own[node]
        for position in range(start, end):
            node = order[position]
            inflow[parent[node]] += multiplier[node] * coefficient_parent_side[node]
        end = start
    return multiplier, inflow


def _null(order, parent, own, parent_side, n_nodes):
    values = np.ones(n_nodes)
    for position in range(order.shape[0]):
        node = order[position]
        up = parent[node]
        if up >= 0:
            values[node] = values[up] * (-parent_side[node] / own[node])
    return values


_kernels = compile_once(globals(), kernels={"affine": "_affine", "peel": "_peel_loop", "null": "_null"})


# ------------------------------------------------ Gaussian batches on one forest (solve_topk_batch's pivots)
class ForestBatch(NamedTuple):
    r"""Solutions of many Gaussian instances on one binding forest (each row sorted as for
    :func:`gaussian_double_star`).

    Attributes
    ----------
    psi : ndarray, shape (R, K)
        Allocations, normalised to the simplex.
    value, bound : ndarray, shape (R,)
        :math:`\Gamma(\psi)` over all pairs and the upper bound :math:`U(\mu, \psi)` of the certificate.
    multipliers : ndarray, shape (R, E)
        Normalised multipliers of the forest's edges, in the order given.
    nonnegative, feasible : ndarray of bool, shape (R,)
        Multipliers nonnegative (beyond rounding) and every pair at least the forest's smallest edge cost.
    accepted : ndarray of bool, shape (R,)
        Both, with a positive value and a finite bound: the forest is optimal for the row.
    weakest : ndarray of int, shape (R,)
        The pair of smallest cost, as ``top * (K - k) + (bottom - k)`` (the pair that enters when the row is
        infeasible).
    """

    psi: np.ndarray
    value: np.ndarray
    bound: np.ndarray
    multipliers: np.ndarray
    nonnegative: np.ndarray
    feasible: np.ndarray
    accepted: np.ndarray
    weakest: np.ndarray


def _trees(n_arms: int, k: int, edge_top: np.ndarray, edge_bottom: np.ndarray) -> tuple | None:
    """The trees of :func:`gaussian_forest`'s edges: the number of trees, each arm's tree, parent and edge to
    its parent (rooted at each tree's first arm), the arms ordered root first, and whether each arm is on its
    root's side of the top-k boundary; ``None`` when the edges are not a forest whose every tree has a top and a
    bottom arm."""
    n_components, component = connected_components(n_arms, edge_top, edge_bottom)
    if edge_top.shape[0] != n_arms - n_components:
        return None  # cycles or repeated edges
    is_top = np.arange(n_arms) < k
    if not (np.all(np.bincount(component, weights=is_top, minlength=n_components) > 0)
            and np.all(np.bincount(component, weights=~is_top, minlength=n_components) > 0)):
        return None
    roots = np.array([np.flatnonzero(component == tree)[0] for tree in range(n_components)])
    parent, parent_edge = _bfs_small(n_arms, edge_top, edge_bottom, roots)
    order, _ = tree_levels(parent)
    # the root's side of each tree: the arms on the same side of the top-k boundary as their root
    plus = is_top == is_top[roots[component]]
    return n_components, component, parent, parent_edge, order, plus


def gaussian_forest(theta: np.ndarray, variance: np.ndarray, k: int, edge_top: np.ndarray,
                    edge_bottom: np.ndarray, max_newton: int = MAX_NEWTON) -> ForestBatch | None:
    r"""The KKT solution of every row on one binding forest, in closed form up to one balance per tree.

    On a tree the edge equations :math:`x_i + x_j = \Delta_{ij}^2/2` (homogeneous scale, :math:`x_a =
    \sigma_a^2/\psi_a`) make every :math:`x_a` affine in the root's: :math:`x_a = u + \beta_a` on the root's
    side of the tree's bipartition and :math:`x_a = -u + \beta_a` on the other side, with
    :math:`\beta_{\text{child}} = \Delta_e^2/2 - \beta_{\text{parent}}` down the tree. Stationarity at the
    root is the balance of Proposition 3.3 between the two sides, :math:`\sum_+ \sigma_a^2/x_a^2 =
    \sum_- \sigma_a^2/x_a^2`; with :math:`L = \max_+ (-\beta_a)`, :math:`U = \min_- \beta_a` (the range of
    :math:`u` where every :math:`x_a > 0`), :math:`s = u - L` and :math:`t = U - u` it is the double star's
    balance (:func:`_balance_rows`) with offsets :math:`\beta_a + L` and :math:`\beta_a - U` and
    :math:`s + t = U - L`. The double star (:func:`gaussian_double_star`) is the tree whose offsets are formed
    without any cancellation; this general form serves the forests a few pivots away from it (the exact
    solver's pivots on rows whose double star fails its check). The multipliers follow by peeling the leaves
    up to each root, the certificate as for the double star.

    Parameters
    ----------
    theta, variance : ndarray
        As for :func:`gaussian_double_star` (rows sorted, top arms then bottom arms).
    k : int
    edge_top, edge_bottom : ndarray of int
        The forest's edges as sorted positions (``edge_top < k <= edge_bottom``), covering every arm, each tree
        with a top and a bottom arm.

    Returns
    -------
    ForestBatch or None
        ``None`` when the edges are not such a forest.

    Examples
    --------
    On the double star it is the double star's closed form (Wang, Yang, You (2022), Example 1: variance 1/4,
    k = 2, :math:`\Gamma^* \approx 0.0568`; there the multiplier of :math:`(i_k, j_1)` is zero, Theorem 3.4's
    condition (14) with equality):

    >>> from allocopt.topk._exact.gaussian_star import gaussian_double_star
    >>> theta = np.array([[0.51, 0.5, 0.0, -0.01, -0.092]])
    >>> rows, cols = double_star_edges(2, 5)
    >>> forest = gaussian_forest(theta, np.array([0.25]), 2, rows, 2 + cols)
    >>> star = gaussian_double_star(theta, np.array([0.25]), 2)
    >>> bool(np.allclose(forest.psi, star.psi, rtol=0, atol=1e-15)), round(float(forest.value[0]), 4)
    (True, 0.0568)
    """

    n_rows, n_arms = theta.shape
    edge_top, edge_bottom = np.asarray(edge_top, dtype=int), np.asarray(edge_bottom, dtype=int)
    trees = _trees(n_arms, k, edge_top, edge_bottom)
    if trees is None:
        return None
    n_components, component, parent, parent_edge, order, plus = trees
    is_top = np.arange(n_arms) < k
    variance = np.broadcast_to(variance, theta.shape)
    scale = theta[:, k - 1:k] - theta[:, k:k + 1]  # the instance with boundary gap 1 and theta_{j_1} = 0
    theta = (theta - theta[:, k:k + 1]) / scale
    variance = variance / scale / scale
    edge_difference = theta[:, edge_top] - theta[:, edge_bottom]
    half_square = 0.5 * edge_difference * edge_difference
    beta = np.zeros((n_rows, n_arms))
    for node in order.tolist():
        if parent[node] >= 0:
            beta[:, node] = half_square[:, parent_edge[node]] - beta[:, parent[node]]
    x = np.empty((n_rows, n_arms))
    _solve_trees(x, beta, variance, component, plus, n_components, max_newton)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):  # rows with x <= 0 are rejected below
        psi = variance / x
        psi = psi / psi.sum(axis=1, keepdims=True)
        weight = psi / variance
        w_top, w_bottom = weight[:, :k, None], weight[:, None, k:]
        difference = theta[:, :k, None] - theta[:, None, k:]
        costs = (0.5 * difference * difference * (w_top * w_bottom) / (w_top + w_bottom)).reshape(n_rows, -1)
        value = costs.min(axis=1)
        weakest = costs.argmin(axis=1)
        # the forest's edges: costs and the derivatives dC/dpsi at both ends
        edge_total = weight[:, edge_top] + weight[:, edge_bottom]
        ratio = edge_difference / edge_total
        edge_costs = 0.5 * edge_difference * ratio * weight[:, edge_top] * weight[:, edge_bottom]
        top_factor, bottom_factor = ratio * weight[:, edge_bottom], ratio * weight[:, edge_top]
        grad_top = top_factor * top_factor * (0.5 / variance[:, edge_top])
        grad_bottom = bottom_factor * bottom_factor * (0.5 / variance[:, edge_bottom])
        nu = _peel_rows(order, parent, parent_edge, is_top, grad_top, grad_bottom)
        nonnegative = np.all(nu >= -_NEGATIVE_MULTIPLIER * nu.max(axis=1, keepdims=True), axis=1)
        nu = np.maximum(nu, 0.0)
        mu = nu / nu.sum(axis=1, keepdims=True)
        sums = np.zeros((n_rows, n_arms))
        np.add.at(sums.T, edge_top, (mu * grad_top).T)
        np.add.at(sums.T, edge_bottom, (mu * grad_bottom).T)
        bound = sums.max(axis=1)
        feasible = value >= (1.0 - _FEASIBILITY) * edge_costs.min(axis=1)
        accepted = nonnegative & feasible & (value > 0) & np.isfinite(bound) & np.all(x > 0, axis=1)
    return ForestBatch(psi=psi, value=value, bound=bound, multipliers=mu, nonnegative=nonnegative,
                       feasible=feasible, accepted=accepted, weakest=weakest)


def _peel_rows(order: np.ndarray, parent: np.ndarray, parent_edge: np.ndarray, is_top: np.ndarray,
               grad_top: np.ndarray, grad_bottom: np.ndarray) -> np.ndarray:
    """The forest's multipliers by peeling (:func:`gaussian_forest`): every non-root arm's stationarity equation,
    leaves first, gives the multiplier of the edge to its parent."""
    n_rows, n_edges = grad_top.shape
    inflow = np.zeros((n_rows, is_top.shape[0]))
    nu = np.empty((n_rows, n_edges))
    for node in order[::-1].tolist():
        edge = parent_edge[node]
        if edge < 0:
            continue
        own, far = (grad_top, grad_bottom) if is_top[node] else (grad_bottom, grad_top)
        nu[:, edge] = (1.0 - inflow[:, node]) / own[:, edge]
        inflow[:, parent[node]] += nu[:, edge] * far[:, edge]
    return nu


@np.errstate(divide="ignore", invalid="ignore", over="ignore")  # rows without a positive solution: NaN, rejected
def _solve_trees(x, beta, variance, component, plus, n_components, max_newton):
    """Each tree's balance (see :func:`gaussian_forest`), writing every arm's :math:`x_a` into ``x``."""
    for tree in range(n_components):
        members = component == tree
        side, other = np.flatnonzero(members & plus), np.flatnonzero(members & ~plus)
        lower = (-beta[:, side]).max(axis=1, keepdims=True)
        upper = beta[:, other].min(axis=1, keepdims=True)
        a = upper - lower
        offset = np.concatenate([beta[:, side] + lower, beta[:, other] - upper], axis=1)
        columns = np.concatenate([side, other])
        y = _balance_rows(offset, variance[:, columns], side.shape[0], a, None, max_newton)
        with np.errstate(over="ignore"):
            s = a / (1.0 + np.exp(-y))
            t = a / (1.0 + np.exp(y))
        x[:, side] = offset[:, :side.shape[0]] + s
        x[:, other] = offset[:, side.shape[0]:] + t
