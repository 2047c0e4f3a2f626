r"""Other families at scale: the binding forest of a Gaussian surrogate as the active set's first forest.

For a one-parameter exponential family with variance function :math:`\phi V_1`, both pair costs agree to
second order in the gap with the Gaussian cost of the same means and per-arm variances
:math:`\sigma_a^2 = \phi_a V_1(\theta_a)`:

.. math::
    C_{ij}(\psi),\ B_{ij}(\psi) \approx \frac{(\theta_i - \theta_j)^2}{2(\sigma_i^2/\psi_i + \sigma_j^2/\psi_j)},

since :math:`d(\theta, x) = (\theta - x)^2/(2\phi V_1(\theta)) + O(|\theta - x|^3)`. On the instances where the
active set is slow (nearly every pair within a few percent of binding, as on a staircase of means), the gaps
are small and the surrogate is close; its optimal binding forest is located in :math:`O(K)` per coupling by
the Gaussian transport route (:func:`allocopt.topk._gaussian_transport.transport_forest`: a staircase in
sorted order, the monotone binding graph of Wang, Yang, You 2022, Proposition 3.2).

That forest is only a start. The exact solver (:mod:`allocopt.topk._exact`) solves the KKT system of the
*true* family on it to machine precision, checks every multiplier and every pair exactly, pivots from it when
the check fails and goes on to its general path when the pivots do not close it: nothing here decides
optimality, and the allocation handed over is only the first point of the forest passes.

Where the surrogate's forest is not the true one, it differs from it at a few corners of the staircase: the
true family's multiplier of such a corner cell is negative. :func:`corner_turns` turns all of them at once (each
corner cell leaves and the cell the other way round it enters), which the active set uses as a multiple pivot
while it reduces the number of defects (negative multipliers and violated pairs), before its single pivots.

Those corners are where the surrogate's staircase is systematically off. At the KKT point of a forest,
:math:`n_a = \sum_b \nu_{ab}\, \partial_a C_{ab}` at every group; for Gaussian arms the ratio
:math:`\partial_i C_{ij} / \partial_j C_{ij}` at a binding pair is a product of one factor per arm, so the
multipliers are a transport flow between node masses and the optimal staircase is the north-west corner
coupling of those masses (:mod:`allocopt.topk._gaussian_transport`). For the other families the ratio depends on
the pair (through the pair's infimum point), the per-arm variances of any Gaussian surrogate cannot match it on
every pair, and the errors accumulate along the staircase: its corners drift by one cell over runs of rows.
:func:`north_west_staircase` walks the north-west corner rule with the true family's gradients of each cell at a
given allocation instead (a transport with gains); the exact solver alternates it with the forest solve, whose
fixed point is the optimum's staircase (at the optimal allocation the walk retraces the optimal multipliers).
"""

from __future__ import annotations

import dataclasses

import numpy as np

from ..families import Gaussian
from ._gaussian_transport import TransportForest, transport_forest
from ._graph import connected_components
from ._groups import Reduced

__all__ = ["surrogate_variance", "surrogate_forest", "corner_turns", "north_west_staircase"]

# cells evaluated on each side of the previous forest's cells of a row before the walk (a cell the walk
# reaches outside that band is evaluated when it is reached, with the next _AHEAD cells of its row)
_BAND = 8
_AHEAD = 32


def surrogate_variance(reduced: Reduced) -> np.ndarray:
    r"""Per-group variance :math:`\sigma_g^2 = \phi_g V_1(\theta_g)` of the Gaussian surrogate: the family's
    variance at each group's mean (Bernoulli :math:`\theta(1-\theta)`, Poisson :math:`\theta`, exponential
    :math:`\theta^2`, Gaussian :math:`\sigma^2` itself).

    Examples
    --------
    >>> import numpy as np
    >>> from allocopt import TopKProblem
    >>> from allocopt.topk._groups import reduce_problem
    >>> reduced = reduce_problem(TopKProblem([0.8, 0.5, 0.2], 1, family="bernoulli"), "confidence")
    >>> bool(np.allclose(surrogate_variance(reduced), reduced.theta * (1 - reduced.theta)))
    True
    """
    return reduced.dispersion * reduced.family.unit_variance(reduced.theta)


def surrogate_forest(reduced: Reduced, psi_start: np.ndarray | None = None) -> TransportForest | None:
    r"""The optimal binding forest of the Gaussian surrogate of ``reduced`` (module docstring), with its
    allocation, located by the transport route on the same tie-merged groups (so its pairs are positions in
    ``reduced.top_groups`` / ``reduced.bottom_groups``); ``None`` when the route steps aside (no positive
    staircase start, or squares and quotients out of the floating-point range) or a variance is not a
    positive finite number. ``psi_start`` (group allocation) selects the first staircase, as in
    :func:`~allocopt.topk._gaussian_transport.transport_forest`.

    Examples
    --------
    Bernoulli arms on a staircase of means (a tight top cluster above a spread bottom one): the surrogate's
    forest is the true family's optimal binding forest, which the exact solver certifies with no pivot.

    >>> import numpy as np
    >>> from allocopt import TopKProblem
    >>> from allocopt.topk._groups import reduce_problem
    >>> from allocopt.topk._forest import solve_forest
    >>> rng = np.random.default_rng(0)
    >>> theta = np.concatenate([0.51 + 0.01 * rng.uniform(size=20), 0.5 - 0.1 * rng.uniform(size=20)])
    >>> reduced = reduce_problem(TopKProblem(theta, 20, family="bernoulli"), "confidence")
    >>> located = surrogate_forest(reduced)
    >>> located.rows.shape[0] + located.layout.n_components == reduced.n_groups  # a forest covering every group
    True
    >>> solution = solve_forest(reduced, located.layout, located.psi)  # the true Bernoulli KKT system
    >>> bool(solution.converged and np.all(solution.nu > 0))
    True
    """
    variance = surrogate_variance(reduced)
    if not np.all(np.isfinite(variance) & (variance > 0)):
        return None
    family = Gaussian(variance)
    surrogate = dataclasses.replace(reduced, family=family, eta=family.unit_natural(reduced.theta),
                                    dispersion=variance)
    return transport_forest(surrogate, psi_start)


def corner_turns(reduced: Reduced, rows: np.ndarray, cols: np.ndarray, leaving: np.ndarray,
                 violated_rows: np.ndarray, violated_cols: np.ndarray,
                 violated_costs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    r"""The forest ``(rows, cols)`` (positions in ``top_groups`` / ``bottom_groups``, both by decreasing mean)
    with every edge marked ``leaving`` turned round its corner: the edge :math:`(r, c)` leaves and, of the
    cells the other way round it, :math:`(r - 1, c + 1)` and :math:`(r + 1, c - 1)`, those that join two
    different trees enter, the violated ones first (most violated first, from the listed pairs
    ``violated_rows``, ``violated_cols`` of cost ``violated_costs``), then the others by position. The result
    is again a forest; whether it covers every group with both sides in each tree is left to the layout.

    Examples
    --------
    Two top and two bottom groups: the zigzag (0, 0), (1, 0), (1, 1) with its corner (1, 0) turned becomes
    (0, 0), (0, 1), (1, 1):

    >>> import numpy as np
    >>> from allocopt import TopKProblem
    >>> from allocopt.topk._groups import reduce_problem
    >>> reduced = reduce_problem(TopKProblem([0.9, 0.8, 0.3, 0.2], 2, family="bernoulli"), "confidence")
    >>> none = np.array([], dtype=int)
    >>> rows, cols = corner_turns(reduced, np.array([0, 1, 1]), np.array([0, 0, 1]),
    ...                           np.array([False, True, False]), none, none, np.array([]))
    >>> sorted(zip(rows.tolist(), cols.tolist()))
    [(0, 0), (0, 1), (1, 1)]
    """
    kept_rows, kept_cols = rows[~leaving], cols[~leaving]
    labels = connected_components(reduced.n_groups, reduced.top_groups[kept_rows],
                                  reduced.bottom_groups[kept_cols]).labels
    cost_of = {(int(r), int(c)): float(cost) for r, c, cost in zip(violated_rows, violated_cols, violated_costs)}
    candidates = []
    for r, c in zip(rows[leaving].tolist(), cols[leaving].tolist()):
        for row, col in ((r - 1, c + 1), (r + 1, c - 1)):
            if 0 <= row < reduced.n_top and 0 <= col < reduced.n_bottom:
                candidates.append((cost_of.get((row, col), np.inf), row, col))
    candidates.sort()
    # union-find over the trees that remain
    tree = list(range(int(labels.max()) + 1 if labels.size else 0))

    def find(node: int) -> int:
        while tree[node] != node:
            tree[node] = tree[tree[node]]
            node = tree[node]
        return node

    entering_rows, entering_cols = [], []
    for _, row, col in candidates:
        a = find(int(labels[reduced.top_groups[row]]))
        b = find(int(labels[reduced.bottom_groups[col]]))
        if a != b:
            tree[a] = b
            entering_rows.append(row)
            entering_cols.append(col)
    return (np.concatenate([kept_rows, np.asarray(entering_rows, dtype=kept_rows.dtype)]),
            np.concatenate([kept_cols, np.asarray(entering_cols, dtype=kept_cols.dtype)]))


def north_west_staircase(reduced: Reduced, psi: np.ndarray, rows: np.ndarray,
                         cols: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    r"""The staircase of the north-west corner rule with the true family's gradients at ``psi`` (module
    docstring): from the cell :math:`(0, 0)` (both sides by decreasing mean), each group :math:`a` has the
    remaining demand :math:`R_a` (initially its multiplicity :math:`n_a`); at the cell :math:`(r, c)` the
    multiplier :math:`\nu = \min(R_r / \partial_r C_{rc},\ R_c / \partial_c C_{rc})` meets the smaller of the
    two demands, the other one decreases by :math:`\nu` times its gradient, and the walk moves past the group
    whose demand is met (down a row or right a column; along the last row or column when the other side is
    exhausted), to the cell :math:`(n_I - 1, n_J - 1)`. The result is a spanning staircase of
    :math:`n_I + n_J - 1` cells (positions in ``top_groups`` / ``bottom_groups``); ``None`` when a gradient is
    not a positive finite number.

    The gradients are evaluated at once on a band of ``_BAND`` cells either side of each row's cells in the
    forest ``(rows, cols)`` (the previous staircase: the walk stays near it), and where the walk leaves the
    band, ``_AHEAD`` cells of the row at a time from the cell it reaches.

    Examples
    --------
    Gaussian arms (the gradient ratio of a pair is a product of per-arm factors): at the optimal allocation,
    which the solver finds on Theorem 3.4's double star here, the walk retraces the double star, from any
    forest to band it by.

    >>> import numpy as np
    >>> from allocopt import TopKProblem, solve_topk
    >>> from allocopt.topk._groups import reduce_problem
    >>> problem = TopKProblem([0.9, 0.8, 0.7, 0.3, 0.2, 0.1], 3)
    >>> result = solve_topk(problem)
    >>> result.forest.double_star
    True
    >>> reduced = reduce_problem(problem, "confidence")
    >>> psi = result.psi[np.argsort(reduced.arm_group)]  # (distinct means: one arm per group)
    >>> rows, cols = north_west_staircase(reduced, psi, np.array([0, 1, 1, 2, 2]), np.array([0, 0, 1, 1, 2]))
    >>> sorted(zip(rows.tolist(), cols.tolist()))
    [(0, 0), (1, 0), (2, 0), (2, 1), (2, 2)]
    """
    n_top, n_bottom = reduced.n_top, reduced.n_bottom
    # the band: every row's columns from its first forest cell less _BAND to its last plus _BAND
    first = np.full(n_top, n_bottom)
    last = np.full(n_top, -1)
    np.minimum.at(first, rows, cols)
    np.maximum.at(last, rows, cols)
    first = np.clip(first - _BAND, 0, n_bottom - 1)
    last = np.clip(np.maximum(last, first) + _BAND, 0, n_bottom - 1)
    width = last - first + 1
    offset = np.concatenate([[0], np.cumsum(width)])
    band_rows = np.repeat(np.arange(n_top), width)
    band_cols = np.arange(offset[-1]) - np.repeat(offset[:-1] - first, width)
    terms = reduced.terms(psi, band_rows, band_cols)
    grad_top, grad_bottom = terms.grad_top.tolist(), terms.grad_bottom.tolist()
    first_list, last_list, offset_list = first.tolist(), last.tolist(), offset.tolist()
    remaining_top = reduced.multiplicity[reduced.top_groups].tolist()
    remaining_bottom = reduced.multiplicity[reduced.bottom_groups].tolist()
    ahead: dict[int, tuple[int, list[float], list[float]]] = {}  # cells evaluated outside the band, by row
    walk_rows, walk_cols = [0], [0]
    row = col = 0
    while row < n_top - 1 or col < n_bottom - 1:
        if first_list[row] <= col <= last_list[row]:
            cell = offset_list[row] + col - first_list[row]
            top_gradient, bottom_gradient = grad_top[cell], grad_bottom[cell]
        else:
            # outside the band: the row's next _AHEAD cells (the walk only moves right along a row)
            if row not in ahead or not ahead[row][0] <= col < ahead[row][0] + len(ahead[row][1]):
                ahead_cols = np.arange(col, min(col + _AHEAD, n_bottom))
                outside = reduced.terms(psi, np.full(ahead_cols.shape[0], row), ahead_cols)
                ahead[row] = (col, outside.grad_top.tolist(), outside.grad_bottom.tolist())
            start, ahead_top, ahead_bottom = ahead[row]
            top_gradient, bottom_gradient = ahead_top[col - start], ahead_bottom[col - start]
        if not (0.0 < top_gradient < np.inf and 0.0 < bottom_gradient < np.inf):
            return None
        top_multiplier = remaining_top[row] / top_gradient
        bottom_multiplier = remaining_bottom[col] / bottom_gradient
        if col == n_bottom - 1 or (row < n_top - 1 and top_multiplier < bottom_multiplier):
            remaining_bottom[col] -= top_multiplier * bottom_gradient  # the top group's demand is met
            row += 1
        else:
            remaining_top[row] -= bottom_multiplier * top_gradient
            col += 1
        walk_rows.append(row)
        walk_cols.append(col)
    return np.asarray(walk_rows), np.asarray(walk_cols)
