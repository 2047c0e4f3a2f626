r"""Gaussian arms at scale: the optimal binding forest located through the optimal-transport dual.

For Gaussian arms (one variance per arm allowed) the pair cost is :math:`C_{ij}(\psi) = \Delta_{ij}^2 /
(2(\sigma_i^2/\psi_i + \sigma_j^2/\psi_j))`, and the budget cost is the same (:math:`B_{ij} = C_{ij}`). On the
tie-merged groups (multiplicity :math:`n_a`) the homogeneous problem
:math:`T^* = \min\{\sum_a n_a \psi_a : C_{ij}(\psi) \ge 1\}` becomes, in :math:`x_a = \sigma_a^2/\psi_a`,

.. math::
    T^* = \min_{x > 0} \sum_a \frac{c_a}{x_a} \quad \text{s.t.} \quad x_i + x_j \le d_{ij} :=
    \tfrac12(\theta_i - \theta_j)^2 \quad (i \in I, j \in J), \qquad c_a = n_a \sigma_a^2,

a separable convex objective under pairwise additive constraints. With multipliers :math:`\lambda_{ij} \ge 0`
and node totals :math:`\Lambda_a = \sum_b \lambda_{ab}`, minimising the Lagrangian over :math:`x` gives
:math:`x_a = \sqrt{c_a/\Lambda_a}`, and the dual is

.. math::
    T^* = \max_{\Lambda \ge 0} \; \sum_a 2\sqrt{c_a \Lambda_a} - \mathrm{OT}_d(\Lambda_I, \Lambda_J),

where :math:`\mathrm{OT}_d` is the optimal transport cost between the top masses and the bottom masses (equal
totals) for the cost :math:`d_{ij}`. The cost is a convex function of :math:`\theta_i - \theta_j`, so with both
sides sorted by increasing mean the matrix :math:`d` is a Monge array (a classical property of convex costs on
the line), and the north-west corner rule (the comonotone coupling) is optimal for any masses: the transport
problem is solved in :math:`O(K)` after one sort, and its support is a *staircase*, a monotone path through the
sorted pair grid with at most :math:`K - 1` cells (the monotone binding graph of Wang, Yang, You 2022,
Proposition 3.2). The Kantorovich potentials of a staircase (:math:`u_i + v_j = d_{ij}` on its cells, fixed up
to the shift :math:`u + s, v - s`) satisfy :math:`u_i + v_j \le d_{ij}` on every pair, again by the Monge
property, so every staircase gives feasible points :math:`x`.

Method (simplicial decomposition of the primal with the transport problem as its linear oracle):

1. a few feasible points :math:`V_1, \ldots, V_m` (staircase potentials, or their aggregate) span a restricted
   problem :math:`\min \sum_a c_a/x_a` over :math:`x = \sum_k \beta_k V_k + s g` (:math:`\beta` in the simplex,
   :math:`g = +1` on top groups and :math:`-1` on bottom groups), solved by an active-set Newton method in
   :math:`m + 1` variables (:math:`O(K m^2)` per step);
2. at its solution :math:`x`, the masses :math:`\Lambda_a = c_a/x_a^2` (the negative gradient) are coupled by
   the north-west corner rule; the duality gap :math:`\sum_{\text{cells}} \lambda_{ij}(d_{ij} - x_i - x_j)` (the
   Frank-Wolfe gap: :math:`\mathrm{OT}_d(\Lambda) - \Lambda \cdot x`) certifies the point to the working
   precision, and otherwise the coupling's staircase potentials enter the restricted problem;
3. the answer is the support of the final coupling, restricted to the pairs that bind (cells of zero mass at
   a non-binding pair are cut: the optimal binding graph is then a forest of consecutive blocks, like the two
   components of Wang, Yang, You 2022, Example 1), with the allocation :math:`\psi_a = \sigma_a^2 / x_a`.

The exact solver (:mod:`allocopt.topk._exact`) solves the KKT system on that forest to machine precision,
checks it exactly and certifies it with the shared certificate, pivoting or falling back on its general path
when it does not pass: nothing here decides optimality.

The walks along a staircase (its potentials, the north-west corner rule, the cells' masses) are compiled with
numba on first use; the pure Python functions are kept as their twins (the tests compare them bit for bit).


Other families at scale: the binding forest of a Gaussian surrogate as the active set's first forest.

For a one-parameter exponential family with variance function :math:`\phi V_1`, both pair costs agree to
second order in the gap with the Gaussian cost of the same means and per-arm variances
:math:`\sigma_a^2 = \phi_a V_1(\theta_a)`:

.. math::
    C_{ij}(\psi),\ B_{ij}(\psi) \approx \frac{(\theta_i - \theta_j)^2}{2(\sigma_i^2/\psi_i + \sigma_j^2/\psi_j)},

since :math:`d(\theta, x) = (\theta - x)^2/(2\phi V_1(\theta)) + O(|\theta - x|^3)`. On the instances where the
active set is slow (nearly every pair within a few percent of binding, as on a staircase of means), the gaps
are small and the surrogate is close; its optimal binding forest is located in :math:`O(K)` per coupling by
the Gaussian transport route (:func:`allocopt.topk._exact.starts.transport_forest`: a staircase in
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
coupling of those masses (:mod:`allocopt.topk._exact.starts`). For the other families the ratio depends on
the pair (through the pair's infimum point), the per-arm variances of any Gaussian surrogate cannot match it on
every pair, and the errors accumulate along the staircase: its corners drift by one cell over runs of rows.
:func:`north_west_staircase` walks the north-west corner rule with the true family's gradients of each cell at a
given allocation instead (a transport with gains); the exact solver alternates it with the forest solve, whose
fixed point is the optimum's staircase (at the optimal allocation the walk retraces the optimal multipliers).
"""

from __future__ import annotations

import dataclasses
from typing import Any, Mapping, NamedTuple

import numpy as np

from ..._numba import compile_once, compiled_enabled
from ...families import Gaussian
from .._graph import connected_components
from .forest import ForestLayout
from .groups import Reduced

__all__ = ["TransportForest", "transport_forest", "staircase_potentials", "north_west_moves", "staircase_masses", "staircase_tree", "transport_kernels", "surrogate_variance", "surrogate_forest", "corner_turns", "north_west_staircase"]

# the restricted problem's Newton iteration stops when the predicted decrease is below this (relative)
_NEWTON_DECREASE = 1e-15


# the duality gap (relative to T) at which the decomposition stops
_TRANSPORT_GAP = 1e-13


# feasible points kept in the restricted problem before they are aggregated into one
_BUNDLE = 12


# a corner cell is cut when its mass is below -_ZERO_MASS times the mass carried so far, and a cut cell (or the
# cell the other way round its corner) is joined again when its pair is violated by more than _BINDING times
# its distance d_ij (the exact check of the solver rejects violations of 1e-10 relative)
_ZERO_MASS = 1e-12


_BINDING = 1e-12


class TransportForest(NamedTuple):
    """The forest located by :func:`transport_forest`.

    Attributes
    ----------
    rows, cols : ndarray of int
        The forest's pairs, as positions in ``reduced.top_groups`` / ``reduced.bottom_groups``.
    psi : ndarray
        Group allocation :math:`\\sigma_a^2/x_a` of the homogeneous problem (pair costs at least one).
    value : float
        :math:`T = \\sum_a c_a / x_a` at the final point (an upper bound on :math:`T^*`).
    relative_gap : float
        The transport duality gap over :math:`T` at the final point.
    iterations : int
        Linear-oracle calls (north-west corner couplings).
    converged : bool
        Whether the relative gap reached the working precision.
    layout : ForestLayout
        The forest's breadth-first layout (built along the staircase in O(K)).
    """

    rows: np.ndarray
    cols: np.ndarray
    psi: np.ndarray
    value: float
    relative_gap: float
    iterations: int
    converged: bool
    layout: ForestLayout


def staircase_potentials(theta_top, theta_bottom, down):
    """Potentials :math:`(a, b)` with :math:`a_i + b_j = d_{ij}` on the staircase's cells, rooted at the cell of
    smallest distance :math:`d_{i^\\circ j^\\circ}` (:math:`a_{i^\\circ} = 0`, :math:`b_{j^\\circ} = d_{i^\\circ j^\\circ}`).

    ``theta_top`` (p,) and ``theta_bottom`` (q,) increase; the staircase starts at cell (0, 0) and its move
    ``m`` goes down (to the next top group) when ``down[m]`` and right (to the next bottom group) otherwise. The
    increments along the path are differences of squares formed from differences of means (no cancellation):
    :math:`d_{i+1,j} - d_{ij} = (\\theta_{i+1} - \\theta_i)((\\theta_{i+1} - \\theta_j) + (\\theta_i - \\theta_j))/2`.
    The walk goes outward from the root in both directions, so each potential is a sum of increments of one
    sign growing away from the boundary: the potentials of the groups nearest the boundary, whose distances
    can be many orders below the others (power-law gaps), keep their relative precision instead of being the
    small difference of large sums accumulated from the staircase's first cell.

    Examples
    --------
    The double star of two top and two bottom groups (right along the first row, then down the last column):

    >>> import numpy as np
    >>> a, b = staircase_potentials(np.array([0.6, 0.8]), np.array([0.0, 0.4]), np.array([False, True]))
    >>> np.allclose([a[0] + b[0], a[0] + b[1], a[1] + b[1]], [0.18, 0.02, 0.08])
    True
    """
    p, q = theta_top.shape[0], theta_bottom.shape[0]
    n_moves = down.shape[0]
    # the root: the cell of smallest distance (the first one on ties)
    root = 0
    root_i = 0
    root_j = 0
    smallest = abs(theta_top[0] - theta_bottom[0])
    i = 0
    j = 0
    for m in range(n_moves):
        if down[m]:
            i += 1
        else:
            j += 1
        gap = abs(theta_top[i] - theta_bottom[j])
        if gap < smallest:
            smallest, root, root_i, root_j = gap, m + 1, i, j
    a = np.empty(p)
    b = np.empty(q)
    a[root_i] = 0.0
    b[root_j] = 0.5 * smallest * smallest
    # forward from the root: a move down enters top group i + 1 (paired with bottom j), a move right enters j + 1
    i = root_i
    j = root_j
    for m in range(root, n_moves):
        if down[m]:
            a[i + 1] = a[i] + 0.5 * (theta_top[i + 1] - theta_top[i]) * (
                (theta_top[i + 1] - theta_bottom[j]) + (theta_top[i] - theta_bottom[j]))
            i += 1
        else:
            b[j + 1] = b[j] + 0.5 * (theta_bottom[j + 1] - theta_bottom[j]) * (
                (theta_bottom[j + 1] - theta_top[i]) + (theta_bottom[j] - theta_top[i]))
            j += 1
    # backward from the root: undoing move m - 1 leaves top group i (or bottom group j) for its predecessor
    i = root_i
    j = root_j
    for m in range(root - 1, -1, -1):
        if down[m]:
            a[i - 1] = a[i] - 0.5 * (theta_top[i] - theta_top[i - 1]) * (
                (theta_top[i] - theta_bottom[j]) + (theta_top[i - 1] - theta_bottom[j]))
            i -= 1
        else:
            b[j - 1] = b[j] - 0.5 * (theta_bottom[j] - theta_bottom[j - 1]) * (
                (theta_bottom[j] - theta_top[i]) + (theta_bottom[j - 1] - theta_top[i]))
            j -= 1
    return a, b


def north_west_moves(mass_top, mass_bottom):
    """The staircase of the north-west corner coupling of the masses (moves as in :func:`staircase_potentials`):
    down when the current top group's cumulative mass is at most the current bottom group's."""
    p, q = mass_top.shape[0], mass_bottom.shape[0]
    down = np.empty(p + q - 2, dtype=np.bool_)
    cumulative_top = mass_top[0]
    cumulative_bottom = mass_bottom[0]
    i = 0
    j = 0
    for m in range(p + q - 2):
        if i == p - 1:
            move = False
        elif j == q - 1:
            move = True
        else:
            move = cumulative_top <= cumulative_bottom
        down[m] = move
        if move:
            i += 1
            cumulative_top += mass_top[i]
        else:
            j += 1
            cumulative_bottom += mass_bottom[j]
    return down


def staircase_masses(mass_top, mass_bottom, down):
    """The cells (top, bottom positions) of the staircase and the mass each carries when the staircase
    transports ``mass_top`` to ``mass_bottom`` (equal totals): the cumulative mass through a cell is the
    cumulative mass of the group whose last cell it is (the total at the last cell)."""
    p, q = mass_top.shape[0], mass_bottom.shape[0]
    n = p + q - 1
    mass = np.empty(n)
    rows = np.empty(n, dtype=np.int64)
    cols = np.empty(n, dtype=np.int64)
    cumulative_top = mass_top[0]
    cumulative_bottom = mass_bottom[0]
    i = 0
    j = 0
    previous = 0.0
    for m in range(n):
        rows[m] = i
        cols[m] = j
        if m == n - 1:
            through = 0.5 * (cumulative_top + cumulative_bottom)
        elif down[m]:
            through = cumulative_top
        else:
            through = cumulative_bottom
        mass[m] = through - previous
        previous = through
        if m < n - 1:
            if down[m]:
                i += 1
                cumulative_top += mass_top[i]
            else:
                j += 1
                cumulative_bottom += mass_bottom[j]
    return rows, cols, mass


def staircase_tree(down, cut):
    """Parent pointers of the forest made of the staircase's cells minus the ``cut`` ones, over the nodes
    ``0 .. p-1`` (top groups by increasing mean) and ``p .. p+q-1`` (bottom groups): ``parent[v]`` (-1 at a
    root), ``parent_cell[v]`` (the cell joining ``v`` to its parent), ``depth[v]`` and ``block[v]`` (the tree).
    Walking the staircase, each cell brings one new node (the group its move enters); its parent is the
    cell's other group, and a cut cell's new node is the root of the next tree. Each tree is then re-rooted
    at the middle of its longest chain from the first root (the depth, hence the number of levels the forest
    solve visits, about halves)."""
    n = down.shape[0] + 2  # cells + 1: p + q nodes
    p = 1
    for m in range(down.shape[0]):
        if down[m]:
            p += 1
    parent = np.full(n, -1, dtype=np.int64)
    parent_cell = np.full(n, -1, dtype=np.int64)
    depth = np.zeros(n, dtype=np.int64)
    block = np.zeros(n, dtype=np.int64)
    # cell 0 joins top 0 (a root) and bottom 0
    parent[p] = 0
    parent_cell[p] = 0
    depth[p] = 1
    i = 0
    j = 0
    current = 0
    for m in range(1, n - 1):
        if down[m - 1]:
            i += 1
            new, other = i, p + j
        else:
            j += 1
            new, other = p + j, i
        if cut[m]:
            current += 1
            block[new] = current
        else:
            parent[new] = other
            parent_cell[new] = m
            depth[new] = depth[other] + 1
            block[new] = current
    n_blocks = current + 1
    # the deepest node of each tree, and its ancestor at half its depth becomes the root
    deepest = np.full(n_blocks, -1, dtype=np.int64)
    for v in range(n):
        if deepest[block[v]] < 0 or depth[v] > depth[deepest[block[v]]]:
            deepest[block[v]] = v
    for t in range(n_blocks):
        middle = deepest[t]
        for _ in range(depth[middle] // 2):
            middle = parent[middle]
        previous = -1
        previous_cell = -1
        node = middle
        while node >= 0:  # reverse the chain from the new root up to the old one
            following = parent[node]
            following_cell = parent_cell[node]
            parent[node] = previous
            parent_cell[node] = previous_cell
            previous = node
            previous_cell = following_cell
            node = following
    # depths from the new roots: climb to a node of known depth, then fill the chain
    known = np.zeros(n, dtype=np.bool_)
    chain = np.empty(n, dtype=np.int64)
    for v in range(n):
        if parent[v] < 0:
            depth[v] = 0
            known[v] = True
    for v in range(n):
        length = 0
        node = v
        while not known[node]:
            chain[length] = node
            length += 1
            node = parent[node]
        for position in range(length - 1, -1, -1):
            depth[chain[position]] = depth[parent[chain[position]]] + 1
            known[chain[position]] = True
    return parent, parent_cell, depth, block


_PURE: dict[str, Any] = {"potentials": staircase_potentials, "moves": north_west_moves, "masses": staircase_masses,
         "tree": staircase_tree}


# the scan calls the families' compiled weighted_pair by its module name: compiled first
_KERNELS = compile_once(globals(), kernels={name: function.__name__ for name, function in _PURE.items()})


def transport_kernels(compiled: bool | None = None) -> Mapping[str, Any]:
    """The staircase walks: compiled with numba (on first use), or the pure Python twins (``compiled=False``, or
    ``None`` with the package's compiled kernels switched off: :func:`allocopt._numba.compiled_enabled`)."""
    if not (compiled_enabled() if compiled is None else compiled):
        return _PURE
    return _KERNELS()


class _Sorted(NamedTuple):
    """The groups of each side by increasing mean, their means, weights :math:`c_a = n_a\\sigma_a^2` (top then
    bottom) and the shift direction :math:`g`."""

    top: np.ndarray
    bottom: np.ndarray
    theta_top: np.ndarray
    theta_bottom: np.ndarray
    weight: np.ndarray
    shift: np.ndarray


def _sorted(reduced: Reduced) -> _Sorted:
    top, bottom = reduced.top_groups[::-1], reduced.bottom_groups[::-1]
    order = np.concatenate([top, bottom])
    weight = reduced.multiplicity[order] * reduced.dispersion[order]
    shift = np.concatenate([np.ones(top.shape[0]), -np.ones(bottom.shape[0])])
    return _Sorted(top, bottom, reduced.theta[top], reduced.theta[bottom], weight, shift)


def _objective(weight: np.ndarray, x: np.ndarray) -> float:
    return float(np.sum(weight / x))


def _best_shift(point: np.ndarray, weight: np.ndarray, shift: np.ndarray) -> float | None:
    """The shift :math:`s` minimising :math:`\\sum_a c_a/(x_a + s g_a)` over the interval where every term is
    positive (None if it is empty): the root of the balance :math:`\\sum_I c/x^2 = \\sum_J c/x^2`, decreasing
    in :math:`s`, by Newton's method safeguarded by bisection."""
    top = shift > 0
    low, high = -float(np.min(point[top])), float(np.min(point[~top]))
    if not low < high:
        return None
    s = 0.5 * (low + high)
    for _ in range(200):
        x = point + s * shift
        derivative = -float(np.sum(weight / x ** 2 * shift))
        curvature = float(np.sum(2.0 * weight / x ** 3))
        if derivative < 0:
            low = s
        else:
            high = s
        following = s - derivative / curvature
        if not low < following < high:
            following = 0.5 * (low + high)
        if following == s or high - low <= 4 * np.finfo(float).eps * max(abs(low), abs(high)):
            break
        s = following
    return s


def _restricted(points: np.ndarray, weight: np.ndarray, shift: np.ndarray, beta: np.ndarray, s: float):
    """Minimise :math:`\\sum_a c_a/x_a` over :math:`x = P\\beta + s g` (:math:`\\beta` in the simplex, ``points``
    the columns of P) from a start with :math:`x > 0`: Newton steps on the free weights and the shift under
    :math:`\\sum\\beta = 1`, a ratio test on the weights and on :math:`x > 0`, Armijo backtracking; a weight
    that reaches zero is fixed, and released when its reduced gradient turns negative."""
    m = points.shape[1]
    free = beta > 0
    x = points @ beta + s * shift
    value = _objective(weight, x)
    columns = np.column_stack([points, shift])
    for _ in range(200):
        gradient_x = -weight / x ** 2
        gradient = columns.T @ gradient_x
        hessian = columns.T @ (columns * (2.0 * weight / x ** 3)[:, None])
        index = np.append(np.flatnonzero(free), m)
        n = index.shape[0]
        # the Newton system under sum(beta) = 1, with the variables scaled to a unit Hessian diagonal (the
        # shift's curvature is many orders above the weights')
        scale = 1.0 / np.sqrt(np.maximum(np.diag(hessian)[index], np.finfo(float).tiny))
        system = np.zeros((n + 1, n + 1))
        system[:n, :n] = hessian[np.ix_(index, index)] * np.outer(scale, scale)
        system[: n - 1, n] = scale[:-1]
        system[n, : n - 1] = scale[:-1]
        right = np.append(-gradient[index] * scale, 0.0)
        try:
            step = np.linalg.solve(system, right)[:n] * scale
        except np.linalg.LinAlgError:
            step = np.linalg.lstsq(system, right, rcond=None)[0][:n] * scale
        decrease = -float(gradient[index] @ step)
        if not decrease > _NEWTON_DECREASE * value:
            level = float(np.mean(gradient[index[:-1]]))
            release = np.flatnonzero(~free & (gradient[:m] < level - 1e-12 * abs(level)))
            if release.size == 0:
                break
            free[release[np.argmin(gradient[release])]] = True
            continue
        change = np.zeros(m)
        change[index[:-1]] = step[:-1]
        move = points @ change + step[-1] * shift
        longest = 1.0
        falling = change < 0
        if falling.any():
            longest = min(longest, float(np.min(beta[falling] / -change[falling])))
        shrinking = move < 0
        if shrinking.any():
            longest = min(longest, 0.99 * float(np.min(x[shrinking] / -move[shrinking])))
        length = longest
        while length > 1e-12:
            trial = x + length * move
            if np.all(trial > 0) and _objective(weight, trial) <= value - 1e-4 * length * decrease:
                break
            length *= 0.5
        else:
            break
        following = np.maximum(beta + length * change, 0.0)
        if length == longest and falling.any():
            following[falling & (following <= 1e-15)] = 0.0
        trial = points @ following + (s + length * float(step[-1])) * shift
        if not np.all(trial > 0):
            break
        beta, s, x = following, s + length * float(step[-1]), trial
        free &= beta > 0
        value = _objective(weight, x)
    return beta, s, x, value


def transport_forest(reduced: Reduced, psi_start: np.ndarray | None = None, max_iterations: int = 100,
                     compiled: bool | None = None) -> TransportForest | None:
    """Locate the optimal binding forest of a Gaussian instance (module docstring); ``None`` when no staircase
    gives a positive start, or when the instance's scale takes the route's squares and quotients out of the
    floating-point range (means or variances near 1e-150 or 1e154: the exact solver's general path, which works
    in scaled terms, handles those). ``psi_start`` (group allocation) selects the first staircase: the north-west
    corner coupling of its masses :math:`c_a (\\psi_a/\\sigma_a^2)^2` (Theorem 3.4's double star, which always
    has a positive solution, when it has none).

    Examples
    --------
    Wang, Yang, You (2022), Example 1: :math:`\\Gamma^* \\approx 0.0568` and two binding components, the first
    top arm with the first bottom arm, the second with the other two (one corner of the staircase is cut):

    >>> import numpy as np
    >>> from allocopt import TopKProblem
    >>> from allocopt.topk._exact.groups import reduce_problem
    >>> reduced = reduce_problem(TopKProblem([0.51, 0.5, 0.0, -0.01, -0.092], 2, variance=0.25), "confidence")
    >>> located = transport_forest(reduced)
    >>> round(1 / located.value, 4), located.layout.n_components
    (0.0568, 2)
    >>> np.round(reduced.expand_allocation(located.psi), 4)
    array([0.2185, 0.2371, 0.2185, 0.2026, 0.1232])
    """
    try:
        with np.errstate(over="raise", divide="raise", invalid="raise", under="ignore"):
            return _locate(reduced, psi_start, max_iterations, compiled)
    except FloatingPointError:
        return None


def _locate(reduced: Reduced, psi_start: np.ndarray | None, max_iterations: int,
            compiled: bool | None) -> TransportForest | None:
    """The body of :func:`transport_forest`."""
    kernels = transport_kernels(compiled)
    groups = _sorted(reduced)
    p = groups.top.shape[0]
    weight, shift = groups.weight, groups.shift
    starts = []
    if psi_start is not None:
        order = np.concatenate([groups.top, groups.bottom])
        mass = weight * (psi_start[order] / reduced.dispersion[order]) ** 2
        starts.append(kernels["moves"](mass[:p] / mass[:p].sum(), mass[p:] / mass[p:].sum()))
    # the double star: the first row (i_k with every bottom group), then the last column (j_1 with every top)
    starts.append(np.arange(p + groups.bottom.shape[0] - 2) >= groups.bottom.shape[0] - 1)
    point, s = None, None
    for down in starts:
        a, b = kernels["potentials"](groups.theta_top, groups.theta_bottom, down)
        point = np.concatenate([a, b])
        s = _best_shift(point, weight, shift)
        if s is not None:
            break
    if s is None or point is None:
        return None
    points, beta = point[:, None], np.ones(1)
    keys = [down.tobytes()]  # the staircase of each column of points (None for an aggregate)
    iterations, converged, gap = 0, False, np.inf
    while True:
        beta, s, x, value = _restricted(points, weight, shift, beta, s)
        mass = weight / x ** 2
        down = kernels["moves"](mass[:p], mass[p:])
        iterations += 1
        rows, cols, flow = kernels["masses"](mass[:p], mass[p:], down)
        slack = 0.5 * (groups.theta_top[rows] - groups.theta_bottom[cols]) ** 2 - x[rows] - x[p + cols]
        gap = float(flow @ slack) / value
        key = down.tobytes()
        # the oracle's staircase already spans the restricted problem: no progress is left at this precision
        converged = gap <= _TRANSPORT_GAP or key in keys
        if converged or iterations >= max_iterations:
            break
        a, b = kernels["potentials"](groups.theta_top, groups.theta_bottom, down)
        used = beta > 0  # columns of zero weight leave
        points, beta, keys = points[:, used], beta[used], [item for item, use in zip(keys, used) if use]
        if points.shape[1] >= _BUNDLE:  # the current point replaces the others (it is feasible: a convex combination)
            points, beta, keys = (points @ beta)[:, None], np.ones(1), [None]
        points = np.column_stack([points, np.concatenate([a, b])])
        beta = np.append(beta, 0.0)
        keys.append(key)
    blocks = _finish(kernels, groups, down)
    if blocks is None:
        return None
    psi = np.empty(reduced.n_groups)
    order = np.concatenate([groups.top, groups.bottom])
    psi[order] = reduced.dispersion[order] / blocks.x
    layout = _layout(kernels, groups, blocks)
    return TransportForest(rows=layout.rows, cols=layout.cols, psi=psi, value=value, relative_gap=gap,
                           iterations=iterations, converged=converged, layout=layout)


def _layout(kernels, groups: _Sorted, blocks: "_Blocks") -> ForestLayout:
    """The forest's layout in the exact solver's terms: edges as positions in ``top_groups`` /
    ``bottom_groups`` (decreasing means), nodes as group indices, levels by depth."""
    p, q = groups.top.shape[0], groups.bottom.shape[0]
    parent, parent_cell, depth, block = kernels["tree"](blocks.down, blocks.cut)
    kept = np.flatnonzero(~blocks.cut)
    edge_of_cell = np.full(blocks.cut.shape[0], -1)
    edge_of_cell[kept] = np.arange(kept.shape[0])
    group = np.concatenate([groups.top, groups.bottom])  # group of each node
    n_groups = group.shape[0]
    group_parent = np.full(n_groups, -1)
    group_parent_edge = np.full(n_groups, -1)
    child = parent >= 0
    group_parent[group[child]] = group[parent[child]]
    group_parent_edge[group[child]] = edge_of_cell[parent_cell[child]]
    component = np.empty(n_groups, dtype=np.int64)
    component[group] = block
    group_depth = np.empty(n_groups, dtype=np.int64)
    group_depth[group] = depth
    order_by_depth = np.argsort(group_depth, kind="stable")
    levels = np.split(order_by_depth, np.flatnonzero(np.diff(group_depth[order_by_depth])) + 1)
    roots = np.empty(int(block.max()) + 1, dtype=np.int64)
    roots[block[~child]] = group[~child]
    rows, cols = p - 1 - blocks.rows[kept], q - 1 - blocks.cols[kept]
    return ForestLayout(rows=rows, cols=cols, edge_top=groups.top[blocks.rows[kept]],
                        edge_bottom=groups.bottom[blocks.cols[kept]], order=order_by_depth, levels=levels,
                        parent=group_parent, parent_edge=group_parent_edge, component=component, roots=roots)


class _Blocks(NamedTuple):
    """A staircase with some corner cells cut: its cells, which are cut, the solution :math:`x` (top then
    bottom) of its blocks' KKT systems, and the staircase's moves."""

    rows: np.ndarray
    cols: np.ndarray
    cut: np.ndarray
    x: np.ndarray
    down: np.ndarray


def _block_shifts(point, weight, shift, block, n_blocks):
    """Each block's shift (the balance of :func:`_best_shift` on every block at once); None if a block has no
    interval where its terms are positive."""
    top = shift > 0
    low = np.full(n_blocks, -np.inf)
    high = np.full(n_blocks, np.inf)
    np.maximum.at(low, block[top], -point[top])
    np.minimum.at(high, block[~top], point[~top])
    if not np.all(low < high):
        return None
    s = 0.5 * (low + high)
    for _ in range(200):
        x = point + s[block] * shift
        derivative = -np.bincount(block, weights=weight / x ** 2 * shift, minlength=n_blocks)
        curvature = np.bincount(block, weights=2.0 * weight / x ** 3, minlength=n_blocks)
        low = np.where(derivative < 0, s, low)
        high = np.where(derivative < 0, high, s)
        following = s - derivative / curvature
        outside = ~((low < following) & (following < high))
        following[outside] = 0.5 * (low[outside] + high[outside])
        done = (following == s) | (high - low <= 4 * np.finfo(float).eps * np.maximum(np.abs(low), np.abs(high)))
        s = following
        if np.all(done):
            break
    return s


def _finish(kernels, groups: _Sorted, down) -> _Blocks | None:
    """The exact forest on (or next to) the staircase ``down``: solve every block (the potentials along the
    staircase, one shift per block from its balance) and compute the cells' masses; a corner cell of negative
    mass is cut; a cut corner whose opposite cell (the other way around the corner) is violated is turned
    that way and joined again; a cut cell that is violated itself is joined again. Repeated until none of
    these remains (the cuts are the zero-mass corners of a degenerate optimum, the turns the corners the
    oracle's staircase took the wrong way round at a nearly degenerate one)."""
    p, q = groups.theta_top.shape[0], groups.theta_bottom.shape[0]
    weight, shift = groups.weight, groups.shift
    down = down.copy()
    cut = np.zeros(p + q - 1, dtype=bool)
    blocks = None
    for _ in range(64):
        a, b = kernels["potentials"](groups.theta_top, groups.theta_bottom, down)
        point = np.concatenate([a, b])
        rows, cols, _ = kernels["masses"](np.ones(p), np.ones(q), down)
        # a corner cell is entered by one kind of move and left by the other (only a corner can be cut: cutting
        # a cell inside a straight run would leave its group without a pair)
        corner = np.zeros(rows.shape[0], dtype=bool)
        corner[1:-1] = down[:-1] != down[1:]
        block_of_cell = np.cumsum(cut)
        block = np.empty(point.shape[0], dtype=np.int64)
        block[rows[~cut]] = block_of_cell[~cut]
        block[p + cols[~cut]] = block_of_cell[~cut]
        shifts = _block_shifts(point, weight, shift, block, int(block_of_cell[-1]) + 1)
        if shifts is None:
            return None
        x = point + shifts[block] * shift
        blocks = _Blocks(rows, cols, cut.copy(), x, down.copy())
        mass = weight / x ** 2
        flow = kernels["masses"](mass[:p], mass[p:], down)[2]
        through = np.cumsum(mass[:p])[rows]
        negative = corner & ~cut & (flow < -_ZERO_MASS * through)
        distance = 0.5 * (groups.theta_top[rows] - groups.theta_bottom[cols]) ** 2
        violated = cut & (distance - x[rows] - x[p + cols] < -_BINDING * distance)
        # the opposite cell of a cut corner: (i - 1, j + 1) when entered by a down move, else (i + 1, j - 1)
        cells = np.flatnonzero(cut)
        entered_down = down[cells - 1]
        other_rows = rows[cells] + np.where(entered_down, -1, 1)
        other_cols = cols[cells] + np.where(entered_down, 1, -1)
        other_distance = 0.5 * (groups.theta_top[other_rows] - groups.theta_bottom[other_cols]) ** 2
        turn = cells[other_distance - x[other_rows] - x[p + other_cols] < -_BINDING * other_distance]
        if not (negative.any() or violated.any() or turn.size):
            break
        cut = (cut | negative) & ~violated
        cut[turn] = False
        down[turn - 1], down[turn] = down[turn].copy(), down[turn - 1].copy()
    return blocks


# ------------------------------------------------------- other families: the Gaussian surrogate's forest
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
    >>> from allocopt.topk._exact.groups import reduce_problem
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
    :func:`~allocopt.topk._exact.starts.transport_forest`.

    Examples
    --------
    Bernoulli arms on a staircase of means (a tight top cluster above a spread bottom one): the surrogate's
    forest is the true family's optimal binding forest, which the exact solver certifies with no pivot.

    >>> import numpy as np
    >>> from allocopt import TopKProblem
    >>> from allocopt.topk._exact.groups import reduce_problem
    >>> from allocopt.topk._exact.forest import solve_forest
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
    >>> from allocopt.topk._exact.groups import reduce_problem
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
    >>> from allocopt.topk._exact.groups import reduce_problem
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
