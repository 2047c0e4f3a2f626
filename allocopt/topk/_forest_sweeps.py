r"""The forest solver's level sweeps compiled, for deep forests (bit for bit the numpy sweeps of
:mod:`allocopt.topk._forest`).

The forest solver propagates along the trees level by level: from the roots down for the affine values
:math:`u_v = \alpha_v + \beta_v s` and the left null vector, from the leaves up for the multipliers. numpy
vectorises each level, so a forest of depth :math:`D` costs :math:`D` Python iterations per sweep; the binding
trees of two tight clusters are paths of thousands of nodes. Here each sweep is one compiled loop over the
breadth-first order.

Bit for bit. Each node's update is the same elementwise arithmetic in the same order as in the numpy sweep. The
only sum is a node's inflow from its children, which all sit in one level: ``np.bincount`` adds them to a zero in
their order within the level, and so does the loop below, which visits the levels from the deepest up and each
level in its own order.

Examples
--------
>>> import numpy as np
>>> from allocopt import TopKProblem
>>> from allocopt.topk._groups import reduce_problem
>>> from allocopt.topk._forest import layout_forest, _affine_propagation
>>> reduced = reduce_problem(TopKProblem([0.9, 0.8, 0.3, 0.2], 2, family="bernoulli"), "confidence")
>>> layout = layout_forest(reduced, np.array([0, 1, 1]), np.array([0, 0, 1]))  # the path 0-2-1-3
>>> a, b = np.array([0.5, 0.25, 2.0]), np.array([1.5, 0.75, 0.5])
>>> numpy_sweep = _affine_propagation(layout, a, b, 4)
>>> compiled = affine_propagation(layout, a, b, 4)
>>> all(np.array_equal(x, y) for x, y in zip(numpy_sweep, compiled))
True
"""

from __future__ import annotations

import numpy as np

from .._numba import compile_once

__all__ = ["affine_propagation", "peel", "null_vector", "DEEP_FOREST"]

# from this many levels on, the forest solver sweeps with the compiled loops (below it the numpy level sweeps
# cost less than a compiled call's set-up, and no compilation is needed)
DEEP_FOREST = 24


def affine_propagation(layout, a, b, n_groups):
    """:func:`allocopt.topk._forest._affine_propagation` as one compiled loop: ``(alpha, beta, own)``."""
    return _kernels()["affine"](layout.order, layout.parent, layout.parent_edge, layout.edge_top, a, b,
                                layout.roots, n_groups)


def peel(layout, coefficient_parent_side, own, demand, n_groups):
    """:func:`allocopt.topk._forest._peel` as one compiled loop: ``(multiplier, inflow)``."""
    return _kernels()["peel"](layout.order, layout.parent, coefficient_parent_side, own, demand, n_groups)


def null_vector(layout, own, parent_side, n_nodes):
    """:func:`allocopt.topk._forest.tree_null_vector` (product form) as one compiled loop."""
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


def _peel(order, parent, coefficient_parent_side, own, demand, n_groups):
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


_kernels = compile_once(globals(), kernels={"affine": "_affine", "peel": "_peel", "null": "_null"})
