r"""Structure of an allocation: the binding-pair graph and the optimality conditions it must satisfy.

Binding graph (Wang, Yang, You 2022, Section 3.1). For an allocation :math:`\psi`, the bipartite graph
:math:`G(\psi)` has the top arms and the bottom arms as nodes and an edge :math:`(i, j)` when
:math:`C_{ij}(\psi) = \Gamma(\psi)`; numerically, when :math:`C_{ij}(\psi) \le (1 + \mathrm{tol})\Gamma(\psi)`.

Necessary conditions at an optimum :math:`\psi^*`:

* Proposition 3.1 - every arm is in a binding pair;
* Proposition 3.2 - allocations grow towards the top-k boundary: :math:`\theta_i \ge \theta_{i'}` in :math:`I`
  implies :math:`\psi_i \le \psi_{i'}`, and :math:`\theta_j \le \theta_{j'}` in :math:`J` implies
  :math:`\psi_j \le \psi_{j'}` (for a common family; not asserted for heteroscedastic Gaussian arms);
* Proposition 3.3 / A.2 - balance on each connected component. The KKT equations (65) restricted to a
  component, :math:`\sum_{e \ni a} \mu_e\, \partial_a C_e(\psi) = \Gamma` for its nodes :math:`a`, have a
  matrix :math:`M` (nodes x edges). On a tree component (:math:`n` nodes, :math:`n-1` edges) :math:`M` has a
  left null vector :math:`z`, obtained along the tree from :math:`z_a \partial_a C_e + z_b \partial_b C_e = 0`
  for every edge :math:`e = (a, b)`, and the equations are solvable iff :math:`\sum_a z_a = 0`. allocopt
  reports the *balance residual* :math:`\sum_a z_a / \sum_a |z_a|` with :math:`z > 0` on top arms. For
  Gaussian arms :math:`\partial_i C_{ij} = 2C_{ij}^2\sigma_i^2/(\Delta_{ij}^2\psi_i^2)`, so
  :math:`z_a \propto \pm\psi_a^2/\sigma_a^2` and the residual is the sum-of-squares balance of Proposition 3.3,
  :math:`(\sum_{I_l}\psi_i^2/\sigma_i^2 - \sum_{J_l}\psi_j^2/\sigma_j^2) / \sum_{I_l \cup J_l}\psi_a^2/\sigma_a^2`,
  which allocopt evaluates directly whenever the family declares harmonic pair costs
  (:meth:`~allocopt.families.ExponentialFamily.harmonic_costs`; it holds on every component, tree or not).

Sufficient condition, Theorem 3.4 (double star). With :math:`i_k` the worst top arm and :math:`j_1` the best
bottom arm: if all pairs :math:`(i_k, j)` and :math:`(i, j_1)` bind, the double star balances, and the
multipliers obtained by peeling its leaves are nonnegative - condition (14), which for Gaussian arms reads
:math:`\psi_{i_k}^2/\sigma_{i_k}^2 > \sum_{j \ne j_1}\psi_j^2/\sigma_j^2` - then :math:`\psi` is optimal.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np

from ._exact.forest import ForestLayout, _peel, edge_end_coefficients, layout_tree, tree_null_vector
from ._graph import connected_components
from .multipliers import PairMultipliers
from .problem import TopKProblem

__all__ = [
    "Component",
    "DoubleStarVerdict",
    "BindingPairs",
    "binding_pairs",
    "binding_graph",
    "graph_components",
    "gaussian_condition",
    "balance_residual",
    "null_vector_balance",
    "monotonicity_violations",
    "double_star_verdict",
]


@dataclass(frozen=True)
class Component:
    """A connected component of the binding graph, in the caller's arm indices.

    Attributes
    ----------
    top, bottom : tuple of int
        Top and bottom arms of the component (sorted).
    edges : tuple of (int, int)
        Its binding pairs ``(top arm, bottom arm)``.
    is_tree : bool
        Whether it has exactly ``n - 1`` edges for ``n`` nodes.
    balance_residual : float
        Normalised balance residual (module docstring). For a non-Gaussian component with cycles it is
        computed from a left null vector of the component's KKT matrix when one exists (tied arms) and is
        ``nan`` when none exists (no balance equation constrains the component).
    """

    top: tuple[int, ...]
    bottom: tuple[int, ...]
    edges: tuple[tuple[int, int], ...]
    is_tree: bool
    balance_residual: float


@dataclass(frozen=True)
class DoubleStarVerdict:
    r"""The verdict of Theorem 3.4 on an allocation.

    Attributes
    ----------
    holds : bool
        All conditions of the theorem hold within the tolerance, so the allocation is optimal.
    reason : str
        Which condition fails (or that all hold).
    worst_top, best_bottom : int or None
        :math:`i_k` and :math:`j_1` (caller's indices), ``None`` when they are not unique (tied means).
    center_multiplier : float
        :math:`\mu_{i_k j_1}` from peeling the double star (condition (14) is its positivity); ``nan`` when
        the double star is not binding.
    balance_residual : float
        Balance residual of the double star as one tree.
    gaussian_condition : float or None
        For harmonic pair costs (:meth:`~allocopt.families.ExponentialFamily.harmonic_costs`: Gaussian arms),
        :math:`\psi_{i_k}^2/\sigma_{i_k}^2 - \sum_{j \ne j_1}\psi_j^2/\sigma_j^2`; ``None`` otherwise.
    """

    holds: bool
    reason: str
    worst_top: int | None
    best_bottom: int | None
    center_multiplier: float
    balance_residual: float
    gaussian_condition: float | None


class BindingPairs(NamedTuple):
    r"""The near-binding pairs of an allocation: their positions ``(rows, cols)`` in ``top`` / ``bottom`` order,
    their costs (aligned with ``rows`` and ``cols``) and :math:`\Gamma(\psi)`, the minimum over all pairs."""

    rows: np.ndarray
    cols: np.ndarray
    costs: np.ndarray
    value: float


def binding_pairs(problem: TopKProblem, psi: np.ndarray, tol: float, kind: str = "confidence") -> BindingPairs:
    r"""The pairs with cost :math:`\le (1 + \mathrm{tol})\Gamma(\psi)` (see :class:`BindingPairs`), in row-major
    order.

    Two scans of all :math:`k(K-k)` pairs without the cost matrix (:meth:`TopKProblem.minimum_cost`): the first
    finds :math:`\Gamma(\psi)`, the second lists the pairs below the threshold, evaluating only the pairs whose
    closed-form lower bound is below it; memory grows with the number of near-binding pairs, not with
    :math:`k(K-k)`.

    Examples
    --------
    >>> import numpy as np
    >>> from allocopt import TopKProblem
    >>> problem = TopKProblem([0.9, 0.8, 0.3, 0.1], 2, variance=0.25)
    >>> pairs = binding_pairs(problem, np.full(4, 0.25), tol=1e-9)  # (0.8 - 0.3)^2 / (2 (0.25/0.25 + 0.25/0.25)) is the least
    >>> pairs.rows.tolist(), pairs.cols.tolist(), pairs.value
    ([1], [0], 0.0625)
    """
    value = problem.minimum_cost(psi, kind)[0]
    threshold = float(np.nextafter(value * (1.0 + tol), np.inf))  # the scan lists the pairs strictly below it
    everything = problem.k * (problem.n_arms - problem.k)
    scan = problem.minimum_cost(psi, kind, threshold=threshold, limit=everything)[1]
    order = np.lexsort((scan.cols, scan.rows))
    return BindingPairs(scan.rows[order], scan.cols[order], scan.costs[order], float(value))


def binding_graph(problem: TopKProblem, psi: np.ndarray, tol: float, kind: str = "confidence",
                  mu: "np.ndarray | PairMultipliers | None" = None, pairs: BindingPairs | None = None):
    """The binding-pair bipartite graph as a :class:`networkx.Graph` over the caller's arm indices.

    Nodes carry ``side`` ("top"/"bottom"), ``theta`` and ``psi``; edges carry ``cost``,
    ``relative_excess`` (:math:`C_{ij}/\\Gamma - 1`) and, when ``mu`` (dense (k, K-k) or
    :class:`~allocopt.topk.multipliers.PairMultipliers`) is given, ``mu``. ``pairs`` may pass the
    :func:`binding_pairs` of the same allocation and tolerance, computed once by the caller.
    """
    import networkx as nx

    rows, cols, costs, value = binding_pairs(problem, psi, tol, kind) if pairs is None else pairs
    edge_mu = None if mu is None else _multipliers_on(mu, rows, cols)
    graph = nx.Graph()
    for position, arm in enumerate(problem.top):
        graph.add_node(int(arm), side="top", rank=position, theta=float(problem.theta[arm]), psi=float(psi[arm]))
    for position, arm in enumerate(problem.bottom):
        graph.add_node(int(arm), side="bottom", rank=position, theta=float(problem.theta[arm]), psi=float(psi[arm]))
    for index, (row, col, cost) in enumerate(zip(rows.tolist(), cols.tolist(), costs.tolist())):
        attributes: dict[str, Any] = {"cost": cost, "relative_excess": cost / value - 1.0 if value > 0 else 0.0}
        if edge_mu is not None:
            attributes["mu"] = float(edge_mu[index])
        graph.add_edge(int(problem.top[row]), int(problem.bottom[col]), **attributes)
    return graph


def _multipliers_on(mu: Any, rows: np.ndarray, cols: np.ndarray) -> np.ndarray:
    """The multipliers of the pairs ``(rows, cols)`` from a dense matrix or a
    :class:`~allocopt.topk.multipliers.PairMultipliers` (zero where it has none)."""
    if not isinstance(mu, PairMultipliers):
        return np.asarray(mu, dtype=float)[rows, cols]
    width = mu.shape[1]
    keys = mu.rows.astype(np.int64) * width + mu.cols
    order = np.argsort(keys)
    wanted = rows.astype(np.int64) * width + cols
    values = np.zeros(wanted.size)
    if keys.size:
        position = np.minimum(np.searchsorted(keys[order], wanted), keys.size - 1)
        hit = keys[order][position] == wanted
        values[hit] = mu.values[order][position[hit]]
    return values


def _edge_gradients(problem: TopKProblem, psi: np.ndarray, edges, kind: str):
    """Partial derivatives (d_top C_e, d_bottom C_e) of the given (top arm, bottom arm) edges."""
    position = np.empty(problem.n_arms, dtype=int)
    position[problem.top] = np.arange(problem.k)
    position[problem.bottom] = np.arange(problem.n_arms - problem.k)
    tops = np.array([edge[0] for edge in edges], dtype=int)
    bottoms = np.array([edge[1] for edge in edges], dtype=int)
    terms = problem.pair_terms(psi, position[tops], position[bottoms], kind=kind)
    return terms.grad_top, terms.grad_bottom


def balance_residual(problem: TopKProblem, psi: np.ndarray, top: tuple[int, ...], bottom: tuple[int, ...],
                     edges: tuple[tuple[int, int], ...], kind: str = "confidence") -> float:
    """Normalised balance residual of one component (see the module docstring)."""
    if problem.family.harmonic_costs(kind):  # z = +-psi^2/phi on every component, tree or not
        weighted = psi**2 / problem.dispersion
        top_sum, bottom_sum = weighted[list(top)].sum(), weighted[list(bottom)].sum()
        total = top_sum + bottom_sum
        return float((top_sum - bottom_sum) / total) if total > 0 else 0.0
    grad_top, grad_bottom = _edge_gradients(problem, psi, edges, kind)
    return null_vector_balance(top, bottom, edges, grad_top, grad_bottom)


def null_vector_balance(top: tuple[int, ...], bottom: tuple[int, ...], edges: tuple[tuple[int, int], ...],
                        grad_top: np.ndarray, grad_bottom: np.ndarray) -> float:
    """Balance residual ``sum(z) / sum(|z|)`` from a left null vector ``z`` (positive on top arms) of the
    component's KKT matrix, given the partial derivatives of its edges (module docstring). Valid for every
    family; for Gaussian arms it equals the sum-of-squares balance."""
    n_nodes = len(top) + len(bottom)
    if np.any(grad_top <= 0) or np.any(grad_bottom <= 0):
        return float("nan")
    if len(edges) != n_nodes - 1:
        return _cyclic_balance_residual(top, bottom, edges, grad_top, grad_bottom)
    # log|z| along the tree from the first top arm (the forest solver's null vector, in logarithms)
    layout = _local_tree(top, bottom, edges, root=top[0])
    if layout is None:
        return float("nan")
    own, parent_side = edge_end_coefficients(layout, np.asarray(grad_top, dtype=float),
                                             np.asarray(grad_bottom, dtype=float), n_nodes)
    logs = tree_null_vector(layout, own, parent_side, n_nodes, log_scale=True)
    magnitudes = np.exp(logs - logs.max())
    signed = np.concatenate([magnitudes[: len(top)], -magnitudes[len(top):]])
    return float(signed.sum() / magnitudes.sum())


def _local_tree(top: tuple[int, ...], bottom: tuple[int, ...], edges: tuple[tuple[int, int], ...],
                root: int) -> ForestLayout | None:
    """The layout of a component's tree over local indices (``top + bottom`` order) from the arm ``root``, or
    ``None`` when its edges do not connect it."""
    index = {node: position for position, node in enumerate(top + bottom)}
    edge_top = np.array([index[i] for i, _ in edges], dtype=int)
    edge_bottom = np.array([index[j] for _, j in edges], dtype=int)
    return layout_tree(len(index), edge_top, edge_bottom, index[root])


def _cyclic_balance_residual(top, bottom, edges, grad_top, grad_bottom, max_nodes: int = 2000) -> float:
    """Balance residual of a component with cycles: ``z.1 / |z|_1`` for a left null vector ``z`` of its KKT
    matrix when one exists (for instance tied twins make the matrix rank deficient), ``nan`` when the matrix
    has full row rank (then no balance equation constrains the component) or the component is too large for
    a dense singular value decomposition."""
    nodes = list(top) + list(bottom)
    if len(nodes) > max_nodes:
        return float("nan")
    index = {node: position for position, node in enumerate(nodes)}
    matrix = np.zeros((len(nodes), len(edges)))
    for column, ((i, j), g_i, g_j) in enumerate(zip(edges, grad_top, grad_bottom)):
        matrix[index[i], column] = g_i
        matrix[index[j], column] = g_j
    left, singular, _ = np.linalg.svd(matrix / np.abs(matrix).max(axis=0), full_matrices=True)
    rank = int(np.sum(singular > singular.max() * len(nodes) * 1e-10))
    if rank == len(nodes):
        return float("nan")
    vector = left[:, -1]
    vector = vector if vector[: len(top)].sum() >= 0 else -vector
    return float(vector.sum() / np.abs(vector).sum())


def graph_components(problem: TopKProblem, psi: np.ndarray, graph, kind: str = "confidence") -> tuple[Component, ...]:
    """Connected components of the binding graph (a graph of :func:`binding_graph`, over the arms
    ``0 .. K-1``) with their balance residuals, ordered by smallest arm."""
    is_top = np.zeros(problem.n_arms, dtype=bool)
    is_top[problem.top] = True
    pairs = np.array([(a, b) if is_top[a] else (b, a) for a, b in graph.edges()], dtype=int).reshape(-1, 2)
    count, labels = connected_components(problem.n_arms, pairs[:, 0], pairs[:, 1])  # components by smallest arm
    # nodes and edges grouped by component (labels number the components by smallest arm)
    node_order = np.argsort(labels, kind="stable")
    node_bounds = np.searchsorted(labels[node_order], np.arange(count + 1))
    edge_labels = labels[pairs[:, 0]]
    edge_order = np.argsort(edge_labels, kind="stable")
    edge_bounds = np.searchsorted(edge_labels[edge_order], np.arange(count + 1))
    components = []
    for label in range(count):
        nodes = node_order[node_bounds[label]:node_bounds[label + 1]]
        top = tuple(int(arm) for arm in nodes[is_top[nodes]])
        bottom = tuple(int(arm) for arm in nodes[~is_top[nodes]])
        edges = tuple(sorted((int(a), int(b)) for a, b in pairs[edge_order[edge_bounds[label]:edge_bounds[label + 1]]]))
        if not top or not bottom:
            residual = float("nan")
        else:
            residual = balance_residual(problem, psi, top, bottom, edges, kind)
        components.append(Component(top, bottom, edges, len(edges) == len(nodes) - 1, residual))
    return tuple(components)


def monotonicity_violations(problem: TopKProblem, psi: np.ndarray, tol: float) -> tuple[tuple[int, int], ...] | None:
    """Violations of Proposition 3.2 by more than ``tol * max(psi)``; ``None`` when it does not apply
    (heteroscedastic Gaussian arms).

    Within the top set (sorted by decreasing mean) allocations must be non-decreasing; within the bottom set
    non-increasing. For every arm ``b`` that some better-ranked arm ``a`` of its set (strictly larger mean)
    violates it with, the pair ``(a, b)`` with the most offending ``a`` (the largest allocation above ``b`` in
    the top set, the smallest in the bottom set): at most one pair per arm, found by running extremes along the
    sorted order in :math:`O(K)` memory and time (the proposition holds iff the list is empty).

    Examples
    --------
    >>> from allocopt import TopKProblem
    >>> problem = TopKProblem([4.0, 3.0, 2.0, 1.0, 0.0], 3)
    >>> monotonicity_violations(problem, np.array([0.3, 0.1, 0.2, 0.2, 0.2]), 1e-9)
    ((0, 1), (0, 2))
    """
    if problem.family.is_heteroscedastic and np.ptp(problem.dispersion) > 0:
        return None
    slack = tol * float(np.max(psi))
    violations: list[tuple[int, int]] = []
    for order, better_gets_less in ((problem.top, True), (problem.bottom, False)):
        theta = problem.theta[order]  # decreasing
        # sign so that the better arm's allocation may not exceed the worse arm's: +psi in the top set, -psi below
        allocation = psi[order] if better_gets_less else -psi[order]
        positions = np.arange(order.shape[0])
        running = np.maximum.accumulate(allocation)
        running_arm = np.maximum.accumulate(np.where(allocation == running, positions, 0))
        # the arms of strictly larger mean than position b are those before its tie group's first position
        first_tied = np.searchsorted(-theta, -theta, side="left")
        has_better = first_tied > 0
        previous = np.maximum(first_tied - 1, 0)
        bad = has_better & (running[previous] > allocation + slack)
        for b in np.flatnonzero(bad):
            violations.append((int(order[running_arm[previous[b]]]), int(order[b])))
    return tuple(violations)


def gaussian_condition(problem: TopKProblem, psi: np.ndarray) -> float:
    r"""The Gaussian form of Theorem 3.4's condition (14),
    :math:`\psi_{i_k}^2/\sigma_{i_k}^2 - \sum_{j \ne j_1}\psi_j^2/\sigma_j^2` (positive when it holds)."""
    weighted = psi**2 / problem.dispersion
    return float(weighted[problem.top[-1]] - weighted[problem.bottom[1:]].sum())


def double_star_verdict(problem: TopKProblem, psi: np.ndarray, tol: float, kind: str = "confidence",
                        value: float | None = None) -> DoubleStarVerdict:
    """Check the conditions of Theorem 3.4 at ``psi`` (see the module docstring); ``value`` may pass
    :math:`\\Gamma(\\psi)` when the caller has it (it is found by a scan of all pairs otherwise)."""
    theta = problem.theta
    worst_top, best_bottom = int(problem.top[-1]), int(problem.bottom[0])
    tied_top = np.sum(theta[problem.top] == theta[worst_top]) > 1
    tied_bottom = np.sum(theta[problem.bottom] == theta[best_bottom]) > 1
    gaussian = gaussian_condition(problem, psi) if problem.family.harmonic_costs(kind) else None
    if tied_top or tied_bottom:
        return DoubleStarVerdict(False, "the worst top arm or the best bottom arm is not unique (tied means), "
                                 "so the tied twin's pairs bind too and the binding graph is not a double star",
                                 None, None, float("nan"), float("nan"), gaussian)
    if value is None:
        value = problem.minimum_cost(psi, kind)[0]
    threshold = value * (1.0 + tol)
    n_top, n_bottom = problem.k, problem.n_arms - problem.k
    star_rows = np.concatenate([np.full(n_bottom, n_top - 1), np.arange(n_top)])  # (i_k, j) and (i, j_1)
    star_cols = np.concatenate([np.arange(n_bottom), np.zeros(n_top, dtype=int)])
    if not np.all(problem.pair_terms(psi, star_rows, star_cols, kind=kind).cost <= threshold):
        return DoubleStarVerdict(False, "not every pair (i_k, j) and (i, j_1) is binding", worst_top, best_bottom,
                                 float("nan"), float("nan"), gaussian)
    edges = tuple([(int(i), best_bottom) for i in problem.top] + [(worst_top, int(j)) for j in problem.bottom[1:]])
    grad_top, grad_bottom = _edge_gradients(problem, psi, edges, kind)
    top, bottom = tuple(int(i) for i in problem.top), tuple(int(j) for j in problem.bottom)
    # peel from j_1 (the forest solver's peeling): the leaves j != j_1 of i_k (each leaf equation gives its edge's
    # multiplier), then i_k's equation gives the centre edge (i_k, j_1) and the leaves i != i_k of j_1 theirs;
    # j_1's equation is the balance, checked separately
    layout = _local_tree(top, bottom, edges, root=best_bottom)
    assert layout is not None  # the double star connects every arm
    own, parent_side = edge_end_coefficients(layout, grad_top, grad_bottom, problem.n_arms)
    multiplier = _peel(layout, parent_side, own, np.full(problem.n_arms, value), problem.n_arms).multiplier
    center = multiplier[problem.k - 1]  # i_k's parent edge, (i_k, j_1), in local (top + bottom) indices
    balance = balance_residual(problem, psi, top, bottom, edges, kind)
    if not abs(balance) <= tol:
        return DoubleStarVerdict(False, f"the double star does not balance (residual {balance:.3g})", worst_top,
                                 best_bottom, float(center), balance, gaussian)
    if not center > 0:
        return DoubleStarVerdict(False, "condition (14) fails: the peeled multiplier of (i_k, j_1) is not positive",
                                 worst_top, best_bottom, float(center), balance, gaussian)
    return DoubleStarVerdict(True, "all conditions of Theorem 3.4 hold: the allocation is optimal", worst_top,
                             best_bottom, float(center), balance, gaussian)
