r"""The compiled step of the LUCB-family rules (:mod:`allocopt.algorithms.rules.lucb`): LUCB, KL-LUCB (every family
with compiled KL bounds), lil'LUCB, LUCB++, lil'RandLUCB and lil'CLUCB in the engine's compiled loop.

The rules read, at every step, every arm's mean and count, split the arms into the empirical top-k :math:`\hat I_t`
and the others, and pull one or two arms: with :math:`K = 1024` arms an O(K) step would cost more than the rule's
arithmetic, so the step keeps, for each replication, incremental structures that a pull updates in O(log K):

* **the same sets.** The empirical top-k is the first k arms of the order by decreasing mean with ties to the
  smaller index (a stable sort, as :func:`allocopt.algorithms.engine.statistics.top_k_order`). The order is kept and only
  the pulled arm moves (one insertion step per position: a pull changes one mean by :math:`O(1/N_a)`). lil'CLUCB
  keeps a second such order of the revised means for :math:`\tilde M_t`.
* **the same extremes, in O(log K).** :math:`\min_{\hat I_t} L_a` and :math:`\max_{\text{Low}} U_a` (and lil'CLUCB's
  largest radius over :math:`M_t \triangle \tilde M_t`) are the roots of minimum trees over the arms (leaves
  :math:`L_a`, :math:`-U_a`, :math:`-u_a`, or :math:`+\infty` outside the set) that also count the leaves attaining
  the minimum; the tie-break descends to the :math:`\lfloor uc \rfloor`-th of them in arm order. A LIL radius depends
  only on the arm's count and side, so a pull updates at most four leaves; the Hoeffding and KL radii move with
  :math:`\beta(t)`, so LUCB and KL-LUCB recompute every bound and find the extremes in one scan.
* **the same numbers.** The LIL radius is ``table[count] * sigma`` from the tables of
  :func:`allocopt.algorithms.engine.confidence_bounds.lil_radii_of_counts`; the Hoeffding radius
  :math:`\sqrt{((2\sigma_a^2)\beta_t)/N_a}` in the order of :func:`~allocopt.algorithms.engine.confidence_bounds.subgaussian_radius`
  with :math:`\beta_t` read from a table of :func:`~allocopt.algorithms.engine.confidence_bounds.exploration_rate`; the
  other families' KL bounds by :func:`~allocopt.algorithms.engine.confidence_bounds.kl_bound`'s bisection.

The rule's ``stop`` (called first at every step) brings the structures up to date with the arms the previous step
pulled and decides; ``select`` reads them. Tables too short for the next step are grown before it (``GROW``).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ..._numba import kernel
from ..engine import _kl_bounds as _bounds
from ..engine.loop import EACH, GROW
from ..engine.confidence_bounds import _lil_table, exploration_rate
from ...complexity.lil import lil_radius

__all__ = ["LucbParams", "LucbState", "lucb_state", "lucb_stop", "lucb_step", "grow_lucb", "radius_table",
           "rate_table", "PAIR", "RANDOMISED", "CHANGE", "LIL", "HOEFFDING", "GAUSSIAN_KL", "FAMILY_KL"]

# how the rule pulls (lucb.py: _BoundCrossing.select, LilRandLUCB.select, LilCLUCB.select)
PAIR, RANDOMISED, CHANGE = 0, 1, 2
# its radius: LIL tables over the counts, Hoeffding with a rate over t, the Gaussian KL bound (the same radius
# computed as sqrt(2 sigma^2 (beta / N)), in the order of confidence_bounds.kl_bound) or another family's KL bound
# (by _kl_bounds.kl_bound's bisection)
LIL, HOEFFDING, GAUSSIAN_KL, FAMILY_KL = 0, 1, 2, 3
FIRST_TABLE_SIZE = 1024
"""Entries of a new rate table, or of a radius table beyond the shared LIL tables (doubled as needed)."""


class LucbParams(NamedTuple):
    """What the compiled LUCB step reads: how it pulls (``kind``), its radius (and the KL bounds' family number for
    :data:`FAMILY_KL`), k, sigma and the radius' scale per arm (2 sigma^2, or for :data:`FAMILY_KL` the KL bounds'
    :func:`~allocopt.algorithms.engine._kl_bounds.bound_scale`), the LIL tables (top and bottom; unused entries for
    the other radii), the rate table, the rule's table parameters (``omega_top``, ``omega_bottom``, ``eps``,
    ``form``, ``exploration``, ``delta``) and the trees' leaf count."""

    kind: int
    radius: int
    kl_code: int
    k: int
    sigma: np.ndarray
    scale: np.ndarray
    top_table: np.ndarray
    bottom_table: np.ndarray
    rates: np.ndarray
    leaves: int
    omega_top: float
    omega_bottom: float
    eps: float
    form: str
    exploration: str
    delta: float


class LucbState(NamedTuple):
    """The per-replication structures of the compiled step (see the module docstring)."""

    initialised: np.ndarray  # (R, 1) bool
    means: np.ndarray  # (R, K)
    count_values: np.ndarray  # (R, K) the counts as floats
    order: np.ndarray  # (R, K) arms by decreasing mean
    rank: np.ndarray  # (R, K) its inverse
    in_top: np.ndarray  # (R, K) bool
    revised: np.ndarray  # (R, K)
    revised_order: np.ndarray  # (R, K) lil'CLUCB
    revised_rank: np.ndarray  # (R, K)
    radii: np.ndarray  # (R, K)
    low_values: np.ndarray  # (R, 2 leaves)
    low_counts: np.ndarray  # (R, 2 leaves)
    high_values: np.ndarray  # (R, 2 leaves)
    high_counts: np.ndarray  # (R, 2 leaves)
    mismatches: np.ndarray  # (R, 1) lil'CLUCB: |M_t (+) M~_t|
    last: np.ndarray  # (R, 2) the arms the previous step pulled (-1: none)
    extremes: np.ndarray  # (R, 6) the scan's lowest, its count and arm, the highest, its count and arm


def lucb_state(n_rows: int, n_arms: int) -> dict[str, np.ndarray]:
    """The arrays of :class:`LucbState` for ``n_rows`` replications (trees over a power of two >= K leaves)."""
    leaves = 1 << max(0, n_arms - 1).bit_length()
    empty = np.empty
    return {"initialised": np.zeros((n_rows, 1), dtype=np.bool_), "means": empty((n_rows, n_arms)),
            "count_values": empty((n_rows, n_arms)), "order": empty((n_rows, n_arms), dtype=np.int64),
            "rank": empty((n_rows, n_arms), dtype=np.int64), "in_top": np.zeros((n_rows, n_arms), dtype=np.bool_),
            "revised": empty((n_rows, n_arms)), "revised_order": empty((n_rows, n_arms), dtype=np.int64),
            "revised_rank": empty((n_rows, n_arms), dtype=np.int64), "radii": empty((n_rows, n_arms)),
            "low_values": empty((n_rows, 2 * leaves)), "low_counts": empty((n_rows, 2 * leaves), dtype=np.int64),
            "high_values": empty((n_rows, 2 * leaves)), "high_counts": empty((n_rows, 2 * leaves), dtype=np.int64),
            "mismatches": np.zeros((n_rows, 1), dtype=np.int64), "last": np.full((n_rows, 2), -1, dtype=np.int64),
            "extremes": empty((n_rows, 6))}


# ---------------------------------------------------------------------------------------- structures
@kernel
def before(values, first, second):
    """Whether arm ``first`` comes before ``second`` in the order by decreasing value, ties to the smaller index."""
    return values[first] > values[second] or (values[first] == values[second] and first < second)


@kernel
def sort_order(values, order, rank):
    """Insertion sort of the arms into ``order`` (and ``rank``, its inverse) by :func:`before`."""
    n_arms = values.shape[0]
    for arm in range(n_arms):
        position = arm
        while position > 0 and before(values, arm, order[position - 1]):
            order[position] = order[position - 1]
            position -= 1
        order[position] = arm
    for position in range(n_arms):
        rank[order[position]] = position


@kernel
def reposition(values, order, rank, arm):
    """Move ``arm`` (whose value changed; the others are in order) to its place; returns its old position."""
    start = rank[arm]
    position = start
    n_arms = values.shape[0]
    while position > 0 and before(values, arm, order[position - 1]):
        other = order[position - 1]
        order[position] = other
        rank[other] = position
        position -= 1
    while position < n_arms - 1 and before(values, order[position + 1], arm):
        other = order[position + 1]
        order[position] = other
        rank[other] = position
        position += 1
    order[position] = arm
    rank[arm] = position
    return start


@kernel
def lil_radius_of(arm, count, in_top, params):
    """The arm's LIL radius, ``table[count] * sigma`` from the top or the bottom table."""
    if in_top:
        return params.top_table[count] * params.sigma[arm]
    return params.bottom_table[count] * params.sigma[arm]


@kernel
def revised_value(mean, radius, in_top):
    """The LCB in the empirical top-k, the UCB elsewhere."""
    if in_top:
        return mean - radius
    return mean + radius


@kernel
def tree_combine(values, counts, node):
    """Node ``node`` of a minimum tree from its children: the smaller value and how many leaves attain it."""
    left = 2 * node
    right = left + 1
    if values[left] < values[right]:
        values[node], counts[node] = values[left], counts[left]
    elif values[right] < values[left]:
        values[node], counts[node] = values[right], counts[right]
    else:
        values[node], counts[node] = values[left], counts[left] + counts[right]


@kernel
def tree_set(values, counts, size, arm, value):
    """Set leaf ``arm`` of a minimum tree over ``size`` leaves (a power of two) and update its ancestors."""
    node = size + arm
    values[node] = value
    counts[node] = 1
    node //= 2
    while node >= 1:
        tree_combine(values, counts, node)
        node //= 2


@kernel
def tree_pick(values, counts, size, uniform):
    """Of the leaves attaining the minimum (``counts[1]`` of them), the ``floor(u c)``-th in leaf order, as
    :func:`allocopt._rng.random_candidate` picks among candidates in increasing arm order."""
    target = values[1]
    total = counts[1]
    pick = 0 if total == 1 else min(int(uniform * total), total - 1)
    node = 1
    while node < size:
        left = 2 * node
        if values[left] == target:
            if pick < counts[left]:
                node = left
                continue
            pick -= counts[left]
        node = left + 1
    return node - size


@kernel
def scan_pick(values, in_top, side, extreme, total, first, uniform):
    """The ``floor(u c)``-th arm, in increasing order, of the ``total`` arms on ``side`` (in the top-k or not)
    whose value is ``extreme``; ``first`` is the first of them."""
    if total == 1:
        return first
    pick = min(int(uniform * total), total - 1)
    for arm in range(values.shape[0]):
        if in_top[arm] == side and values[arm] == extreme:
            if pick == 0:
                return arm
            pick -= 1
    return first


@kernel
def initialise(row, counts, sums, state, params):
    """The structures of a replication from its counts and sums (at its first step)."""
    size, k, n_arms = params.leaves, params.k, counts.shape[0]
    means, count_values, in_top = state.means[row], state.count_values[row], state.in_top[row]
    order, rank, revised, radii = state.order[row], state.rank[row], state.revised[row], state.radii[row]
    low, low_counts = state.low_values[row], state.low_counts[row]
    high, high_counts = state.high_values[row], state.high_counts[row]
    for arm in range(n_arms):
        means[arm] = sums[arm] / counts[arm]
        count_values[arm] = counts[arm]
    sort_order(means, order, rank)
    for arm in range(n_arms):
        in_top[arm] = rank[arm] < k
    for node in range(2 * size):  # padding leaves never attain a minimum
        low[node], low_counts[node] = np.inf, 1
        high[node], high_counts[node] = np.inf, 1
    if params.kind == CHANGE:  # lil'CLUCB: the revised means' order; a tree of -radius over M_t (+) M~_t
        for arm in range(n_arms):
            radii[arm] = params.top_table[counts[arm]] * params.sigma[arm]
            revised[arm] = revised_value(means[arm], radii[arm], in_top[arm])
        sort_order(revised, state.revised_order[row], state.revised_rank[row])
        state.mismatches[row, 0] = 0
        for arm in range(n_arms):
            if in_top[arm] != (state.revised_rank[row, arm] < k):
                low[size + arm] = -radii[arm]
                state.mismatches[row, 0] += 1
    elif params.radius == LIL:  # trees of the LCB over the top and of -UCB over the others
        for arm in range(n_arms):
            member = in_top[arm]
            revised[arm] = revised_value(means[arm], lil_radius_of(arm, counts[arm], member, params), member)
            if member:
                low[size + arm] = revised[arm]
            else:
                high[size + arm] = -revised[arm]
    if params.radius == LIL:
        for node in range(size - 1, 0, -1):
            tree_combine(low, low_counts, node)
            tree_combine(high, high_counts, node)
    state.initialised[row, 0] = True


@kernel
def update_arm(row, arm, counts, sums, state, params):
    """The structures after a pull of ``arm`` (its new count and sum)."""
    size, k = params.leaves, params.k
    means, in_top, order, rank = state.means[row], state.in_top[row], state.order[row], state.rank[row]
    state.count_values[row, arm] = counts[arm]
    means[arm] = sums[arm] / counts[arm]
    old = reposition(means, order, rank, arm)
    new = rank[arm]
    changed = np.empty(4, dtype=np.int64)
    changed[0] = arm
    n_changed = 1
    if old >= k > new:  # the arm entered the top-k; the one now at place k left it
        changed[1] = order[k]
        n_changed = 2
    elif new >= k > old:  # it left; the one now at place k - 1 entered
        changed[1] = order[k - 1]
        n_changed = 2
    for index in range(n_changed):
        in_top[changed[index]] = rank[changed[index]] < k
    low, low_counts = state.low_values[row], state.low_counts[row]
    if params.kind == CHANGE:
        revised, revised_order, revised_rank = state.revised[row], state.revised_order[row], state.revised_rank[row]
        radii = state.radii[row]
        radii[arm] = params.top_table[counts[arm]] * params.sigma[arm]
        n_moved = n_changed
        for index in range(n_moved):
            moved = changed[index]
            revised[moved] = revised_value(means[moved], radii[moved], in_top[moved])
            old = reposition(revised, revised_order, revised_rank, moved)
            new = revised_rank[moved]
            if old >= k > new:  # M~_t changed: these two arms may now (mis)match M_t
                changed[n_changed] = revised_order[k]
                n_changed += 1
            elif new >= k > old:
                changed[n_changed] = revised_order[k - 1]
                n_changed += 1
        for index in range(n_changed):  # M_t (+) M~_t and the tree over it, at the arms touched
            moved = changed[index]
            was = low[size + moved] != np.inf
            mismatched = in_top[moved] != (revised_rank[moved] < k)
            state.mismatches[row, 0] += int(mismatched) - int(was)
            tree_set(low, low_counts, size, moved, -radii[moved] if mismatched else np.inf)
    elif params.radius == LIL:
        high, high_counts = state.high_values[row], state.high_counts[row]
        for index in range(n_changed):
            moved = changed[index]
            member = in_top[moved]
            value = revised_value(means[moved], lil_radius_of(moved, counts[moved], member, params), member)
            state.revised[row, moved] = value
            tree_set(low, low_counts, size, moved, value if member else np.inf)
            tree_set(high, high_counts, size, moved, np.inf if member else -value)


@kernel
def scan_bounds(row, t, state, params):
    """Hoeffding and KL radii: every bound at the rate beta(t), and the extremes of each side (into ``extremes``)."""
    n_arms = state.means.shape[1]
    means, count_values, in_top = state.means[row], state.count_values[row], state.in_top[row]
    radii, revised = state.radii[row], state.revised[row]
    rate = params.rates[t]
    if params.radius == HOEFFDING:
        for arm in range(n_arms):
            radii[arm] = np.sqrt(params.scale[arm] * rate / count_values[arm])
    elif params.radius == GAUSSIAN_KL:
        for arm in range(n_arms):
            radii[arm] = np.sqrt(params.scale[arm] * (rate / count_values[arm]))
    lowest, n_lowest, h_arm = np.inf, 0, -1
    highest, n_highest, l_arm = -np.inf, 0, -1
    for arm in range(n_arms):  # one scan instead of the trees
        if params.radius == FAMILY_KL:  # the lower bound on the top-k, the upper bound elsewhere
            value = _bounds.kl_bound(params.kl_code, means[arm], rate / count_values[arm], not in_top[arm],
                                     params.scale[arm])
        else:
            value = revised_value(means[arm], radii[arm], in_top[arm])
        revised[arm] = value
        if in_top[arm]:
            if value < lowest:
                lowest, n_lowest, h_arm = value, 1, arm
            elif value == lowest:
                n_lowest += 1
        elif value > highest:
            highest, n_highest, l_arm = value, 1, arm
        elif value == highest:
            n_highest += 1
    extremes = state.extremes[row]
    extremes[0], extremes[1], extremes[2] = lowest, n_lowest, h_arm
    extremes[3], extremes[4], extremes[5] = highest, n_highest, l_arm
    return lowest >= highest


def lucb_stop(row, view, state, params):
    """The rule's stopping condition at the current step, after bringing the structures up to date."""
    if not state.initialised[row, 0]:
        initialise(row, view.counts, view.sums, state, params)
    else:
        for index in range(2):
            arm = state.last[row, index]
            if arm >= 0 and state.count_values[row, arm] != view.counts[arm]:
                update_arm(row, arm, view.counts, view.sums, state, params)
    state.last[row, 0], state.last[row, 1] = -1, -1
    if params.kind == CHANGE:  # lil'CLUCB: M~_t = M_t
        return state.mismatches[row, 0] == 0
    if params.radius != LIL:
        return scan_bounds(row, view.t, state, params)
    return state.low_values[row, 1] >= -state.high_values[row, 1]


def lucb_step(row, view, state, params, uniforms, each):
    """The arms to pull: h_t and l_t (both, or one of them by lil'RandLUCB's coin), or lil'CLUCB's arm of largest
    radius in M_t (+) M~_t."""
    counts, size = view.counts, params.leaves
    if params.radius == LIL:  # the next step's counts must be in the radius tables
        largest = 0
        for arm in range(counts.shape[0]):
            largest = max(largest, counts[arm])
        if largest + 2 >= min(params.top_table.shape[0], params.bottom_table.shape[0]):
            each[0] = largest + 2
            return GROW, 0
    elif view.t + 2 >= params.rates.shape[0]:
        each[0] = view.t + 2
        return GROW, 0
    second = -1
    if params.kind == CHANGE:
        first = tree_pick(state.low_values[row], state.low_counts[row], size, uniforms[0])
    else:
        if params.radius != LIL:
            extremes = state.extremes[row]
            h_arm = scan_pick(state.revised[row], state.in_top[row], True, extremes[0], int(extremes[1]),
                              int(extremes[2]), uniforms[0])
            l_arm = scan_pick(state.revised[row], state.in_top[row], False, extremes[3], int(extremes[4]),
                              int(extremes[5]), uniforms[1])
        else:
            h_arm = tree_pick(state.low_values[row], state.low_counts[row], size, uniforms[0])
            l_arm = tree_pick(state.high_values[row], state.high_counts[row], size, uniforms[1])
        if params.kind == RANDOMISED:  # h with probability N_l / (N_h + N_l)
            probability_h = counts[l_arm] / (counts[h_arm] + counts[l_arm])
            first = h_arm if uniforms[2] < probability_h else l_arm
        else:  # both (the engine cuts a block at the cap in arm order: the smaller arm first)
            first, second = min(h_arm, l_arm), max(h_arm, l_arm)
    state.last[row, 0], state.last[row, 1] = first, second
    if second < 0:
        return first, 1
    each[:] = 0
    each[first] = 1
    each[second] = 1
    return EACH, 0


# ----------------------------------------------------------------------------------------------- tables
_TABLES: dict[tuple, np.ndarray] = {}
_TABLE_KEYS = 64


def _cached(key: tuple, table: np.ndarray) -> np.ndarray:
    if len(_TABLES) >= _TABLE_KEYS:
        _TABLES.clear()
    _TABLES[key] = table
    return table


def radius_table(omega: float, eps: float, form: str, largest: int) -> np.ndarray:
    r""":math:`U(n, \omega)` with :math:`\sigma = 1` for :math:`n = 0, 1, \dots` (entry 0 NaN) beyond ``largest``.

    The table of :func:`~allocopt.algorithms.engine.confidence_bounds.lil_radii_of_counts` up to its size limit, then
    :func:`allocopt.complexity.lil_radius` on the counts directly (the numbers ``lil_radii_of_counts`` computes
    there). Raises :class:`~allocopt.exceptions.InvalidArgumentError` where the radius is not real.

    Examples
    --------
    >>> table = radius_table(0.005, 0.0, "experiments", 10)
    >>> bool(table[7] == lil_radius(np.array([7]), 0.005, 0.0, 1.0, form="experiments")[0])
    True
    """
    table = _lil_table(omega, eps, form, largest)
    if table is not None:
        return table
    key = ("lil", float(omega), float(eps), form)
    table = _TABLES.get(key)
    if table is None or table.shape[0] <= largest:
        size = max(FIRST_TABLE_SIZE, 1 << int(largest).bit_length())
        values = lil_radius(np.arange(1, size), omega, eps, 1.0, form=form)  # type: ignore[arg-type]
        table = _cached(key, np.concatenate([[np.nan], np.asarray(values, dtype=float)]))
    return table


def rate_table(exploration: str, delta: float, n_arms: int, largest: int) -> np.ndarray:
    r""":math:`\beta(t, \delta)` of :func:`~allocopt.algorithms.engine.confidence_bounds.exploration_rate` for
    :math:`t = 0, 1, \dots` (entry 0 NaN) beyond ``largest``, evaluated by that function on the whole range.

    Examples
    --------
    >>> table = rate_table("kalyanakrishnan", 0.01, 4, 100)
    >>> bool(table[37] == exploration_rate("kalyanakrishnan", np.array([37]), 0.01, 4)[0])
    True
    """
    key = ("rate", exploration, float(delta), int(n_arms))
    table = _TABLES.get(key)
    if table is None or table.shape[0] <= largest:
        size = max(FIRST_TABLE_SIZE, 1 << int(largest).bit_length())
        values = exploration_rate(exploration, np.arange(1, size), delta, n_arms)
        table = _cached(key, np.concatenate([[np.nan], np.asarray(values, dtype=float)]))
    return table


def grow_lucb(params: LucbParams, largest: int) -> LucbParams:
    """The parameters with tables beyond ``largest``."""
    if params.radius == LIL:
        return params._replace(top_table=radius_table(params.omega_top, params.eps, params.form, largest),
                               bottom_table=radius_table(params.omega_bottom, params.eps, params.form, largest))
    return params._replace(rates=rate_table(params.exploration, params.delta, params.sigma.shape[0], largest))
